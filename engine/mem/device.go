package mem

import (
	"errors"
	"fmt"
)

// Kind is the kind of memory a buffer lives in.
type Kind uint8

const (
	// KindHost is pageable host memory: the Go heap, the C heap, mapped
	// files. The zero Kind, so a zero Device is the host.
	KindHost Kind = iota
	// KindPinned is page-locked host memory (cudaHostAlloc): host
	// addressable, and read and written by devices directly.
	KindPinned
	// KindDevice is an accelerator's own memory: its addresses are not
	// host addresses, so Go never dereferences them.
	KindDevice
)

// String returns "host", "pinned" or "device".
func (k Kind) String() string {
	switch k {
	case KindHost:
		return "host"
	case KindPinned:
		return "pinned"
	case KindDevice:
		return "device"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// HostAccessible reports whether the host can read and write memory of
// kind k through an ordinary pointer (host and pinned memory).
func (k Kind) HostAccessible() bool { return k == KindHost || k == KindPinned }

// Device is where memory lives: its kind and, for device memory, the
// ordinal of the device (as CUDA numbers them; DLPack's device_id). The
// zero Device is host memory.
type Device struct {
	Kind    Kind
	Ordinal int
}

// CPU is host memory.
var CPU = Device{}

// String returns "host", "pinned" or "device:N".
func (d Device) String() string {
	if d.Kind == KindDevice {
		return fmt.Sprintf("device:%d", d.Ordinal)
	}
	return d.Kind.String()
}

// Stream is an opaque handle of an ordered queue of device work (a CUDA
// stream, cudaStream_t). Work on device memory is ordered on a stream: an
// allocator's buffer is usable in the order of the stream it was allocated
// on, and a collective runs in the order of its stream. NoStream means
// "synchronous": host memory ignores streams.
type Stream uintptr

// NoStream is the stream of synchronous (host) work.
const NoStream Stream = 0

// Event is an opaque handle of a marker in a stream's work (a CUDA event,
// cudaEvent_t): it completes once the work queued on its stream before it
// was recorded has completed, and another stream can be made to wait for
// it without the host waiting. A device backend's batch records one after
// its last work, so that a consumer orders its own stream after the batch.
// NoEvent means there is nothing to wait for.
type Event uintptr

// NoEvent is the event of work that is complete (host work).
const NoEvent Event = 0

// Buffer is a run of bytes of some kind of memory. Host and pinned buffers
// carry a Go slice over their memory (Bytes), so host code reads them
// without unsafe code and at no cost; a device buffer carries only its
// device address (DevicePtr), which Go code passes on and never
// dereferences. The zero Buffer is an empty host buffer.
type Buffer struct {
	dev  Device
	data []byte  // host-accessible kinds
	ptr  uintptr // KindDevice
	n    int
}

// HostBuffer returns b as a host buffer (no copy).
func HostBuffer(b []byte) Buffer { return Buffer{data: b, n: len(b)} }

// PinnedBuffer returns b, page-locked host memory, as a pinned buffer (no
// copy).
func PinnedBuffer(b []byte) Buffer { return Buffer{dev: Device{Kind: KindPinned}, data: b, n: len(b)} }

// DeviceBuffer returns the n bytes at address ptr of device ordinal as a
// buffer. Nothing is checked: the address is the device's.
func DeviceBuffer(ptr uintptr, n, ordinal int) Buffer {
	return Buffer{dev: Device{Kind: KindDevice, Ordinal: ordinal}, ptr: ptr, n: n}
}

// Device returns where b lives.
func (b Buffer) Device() Device { return b.dev }

// Len returns b's size in bytes.
func (b Buffer) Len() int { return b.n }

// Bytes returns b's memory as a slice when the host can address it (host
// and pinned buffers), nil for a device buffer.
func (b Buffer) Bytes() []byte { return b.data }

// DevicePtr returns the device address of a device buffer, 0 for host and
// pinned buffers (use Bytes).
func (b Buffer) DevicePtr() uintptr { return b.ptr }

// HostBytes returns b's memory as a slice, or an error naming what (e.g.
// "message from rank 2") when b is device memory, which the host cannot
// read in place.
func (b Buffer) HostBytes(what string) ([]byte, error) {
	if !b.dev.Kind.HostAccessible() {
		return nil, fmt.Errorf("mem: %s is %s memory, which the host cannot read in place", what, b.dev)
	}
	return b.data, nil
}

// BufferAllocator hands out buffers of one kind of memory, ordered on
// streams: the shape of an external allocator handed in through a C API
// ({malloc_fn, free_fn, ctx, kind}, as WholeGraph's: the C layer wraps the
// two functions, turning host addresses into Bytes and device addresses
// into DevicePtr), of a device memory pool, or of a host Allocator (see
// Kinded).
//
// AllocBuffer returns a buffer of exactly n bytes (n may be 0: an empty
// buffer), usable in stream s's order; FreeBuffer gives back a buffer
// returned by AllocBuffer once the work queued on s before it no longer
// needs the memory. Implementations must be safe for concurrent use.
type BufferAllocator interface {
	Device() Device
	AllocBuffer(n int, s Stream) (Buffer, error)
	FreeBuffer(b Buffer, s Stream)
}

// Kinded returns a host Allocator as a BufferAllocator of host-accessible
// memory d (CPU, or Device{Kind: KindPinned} for an allocator of pinned
// memory); streams are ignored.
func Kinded(a Allocator, d Device) (BufferAllocator, error) {
	if a == nil {
		return nil, errors.New("mem: Kinded: allocator is nil")
	}
	if !d.Kind.HostAccessible() {
		return nil, fmt.Errorf("mem: Kinded: a host Allocator cannot hand out %s memory", d)
	}
	return kinded{a: a, dev: d}, nil
}

type kinded struct {
	a   Allocator
	dev Device
}

func (k kinded) Device() Device { return k.dev }

func (k kinded) AllocBuffer(n int, _ Stream) (Buffer, error) {
	b, err := k.a.Alloc(n)
	if err != nil {
		return Buffer{}, err
	}
	return Buffer{dev: k.dev, data: b, n: len(b)}, nil
}

func (k kinded) FreeBuffer(b Buffer, _ Stream) { k.a.Free(b.data) }

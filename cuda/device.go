package cuda

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/mem"
)

// Ptr is a device address.
type Ptr uint64

// Device is what the backend needs from a GPU: device memory, page-locked
// host memory the kernels read in place, streams and events. Its methods
// are safe for concurrent use; the work itself is queued on Streams.
type Device interface {
	// Ordinal is the device's number (its memory's mem.Device ordinal).
	Ordinal() int
	// MemInfo returns the device's free and total memory in bytes.
	MemInfo() (free, total int64, err error)
	// Alloc returns at least bytes of device memory (bytes >= 0).
	Alloc(bytes int64) (Ptr, error)
	// Free releases memory from Alloc.
	Free(p Ptr) error
	// AllocHost returns bytes of page-locked host memory that kernels read
	// and write in place (its device address in HostMem.Ptr).
	AllocHost(bytes int64) (HostMem, error)
	// FreeHost releases memory from AllocHost.
	FreeHost(h HostMem) error
	// RegisterHost page-locks b in place and returns its device address:
	// kernels read it over the bus (zero-copy). b must be off the Go heap
	// (mem.OffHeap: a file mapping, C memory); Go-heap memory is refused,
	// never handed to the driver. Registering the same slice again counts
	// a reference. An error (Go-heap memory, a device or memory that
	// cannot be registered) leaves b unregistered: callers copy into
	// AllocHost memory instead.
	RegisterHost(b []byte) (Ptr, error)
	// UnregisterHost drops one registration of b.
	UnregisterHost(b []byte) error
	// NewStream returns a new stream of the device.
	NewStream() (Stream, error)
	// NewEvent returns a new event of the device.
	NewEvent() (Event, error)
	// WaitOn and Quiesce order a consumer's stream (device.Device).
	device.Device
	// Close releases the device's resources.
	Close() error
}

// Stream is an ordered queue of work on a device. Every kernel parameter
// is one 8-byte word (a Ptr, an int64 or a uint64 as uint64). Copies
// between host and device are asynchronous: the host memory of a CopyIn
// must stay unchanged, and that of a CopyOut is written, until Sync
// returns (page-locked memory makes them truly asynchronous; the driver
// waits for pageable memory). A Stream is used by one goroutine at a time.
type Stream interface {
	// Handle is the stream as other libraries see it (a CUstream).
	Handle() mem.Stream
	CopyIn(dst Ptr, src []byte) error
	CopyOut(dst []byte, src Ptr) error
	CopyDev(dst, src Ptr, bytes int64) error
	Memset(dst Ptr, b byte, bytes int64) error
	// Launch runs kernel on a one-dimensional grid of grid blocks of block
	// threads.
	Launch(kernel string, grid, block int, args ...uint64) error
	// Wait makes the stream's later work wait for the event of handle e
	// (the host does not wait; mem.NoEvent: nothing to wait for).
	Wait(e mem.Event) error
	// Sync waits on the host for the work queued so far and reports its
	// errors.
	Sync() error
	Close() error
}

// Event marks a point in a stream's work.
type Event interface {
	// Handle is the event as other libraries see it (a CUevent).
	Handle() mem.Event
	// RecordOn records the event on the stream of handle s (a stream of
	// this device's context: one of ours, or a consumer's such as
	// PyTorch's).
	RecordOn(s mem.Stream) error
	// Done reports whether the work before the last record has completed
	// (without waiting).
	Done() (bool, error)
	// Sync waits on the host for it.
	Sync() error
	Close() error
}

// HostMem is page-locked host memory: Bytes for the host, Ptr for kernels.
type HostMem struct {
	Bytes []byte
	Ptr   Ptr
}

// int64Bytes views s as bytes (no copy).
func int64Bytes(s []int64) []byte { return mem.Bytes(s) }

func float32Bytes(s []float32) []byte { return mem.Bytes(s) }

func int32Bytes(s []int32) []byte { return mem.Bytes(s) }

func uint64Bytes(s []uint64) []byte { return mem.Bytes(s) }

// int64s views page-locked bytes as int64 words (8-byte aligned memory).
func int64s(b []byte) []int64 { return mem.Int64s(b) }

// uint64s views b as uint64 words.
func uint64s(b []byte) []uint64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// Pool hands out device memory from size classes (powers of two from 256
// bytes) and keeps what is given back for reuse, so that sampling a batch
// allocates from the driver only until the pool has warmed up (DSP found
// cudaMalloc/cudaFree per batch a main cost). Memory returns to the device
// only on Close.
//
// A pool follows one stream's order (its owner's; nil: every use is
// synchronous): a block given back with Put is reused by later work on
// that stream, which the stream orders after the work before; a block
// given back after work of another stream (PutAfter, a consumer releasing
// a batch after its own kernels read it) is reused only after that work,
// which the pool's stream is made to wait for. Safe for concurrent use.
type Pool struct {
	dev Device
	st  Stream

	mu      sync.Mutex
	free    map[int64][]Ptr     // by class size
	pending map[int64][]pending // given back after another stream's work
	size    map[Ptr]int64       // class size of every block handed out
	events  []Event             // spare events
	made    []Event             // every event made (closed by Close)
	held    int64
	closed  bool
}

type pending struct {
	ptr Ptr
	ev  Event
}

// NewPool returns an empty pool over dev whose blocks follow st's order
// (st nil: every user of the pool waits for its work itself).
func NewPool(dev Device, st Stream) *Pool {
	return &Pool{dev: dev, st: st, free: map[int64][]Ptr{}, pending: map[int64][]pending{}, size: map[Ptr]int64{}}
}

func classOf(bytes int64) int64 {
	c := int64(256)
	for c < bytes {
		c <<= 1
	}
	return c
}

// Held returns the bytes the pool obtained from the device.
func (p *Pool) Held() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// Get returns a block of at least bytes, usable in the order of the pool's
// stream.
func (p *Pool) Get(bytes int64) (Ptr, error) {
	if bytes < 0 {
		return 0, fmt.Errorf("cuda: pool: negative size %d", bytes)
	}
	c := classOf(bytes)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, errors.New("cuda: pool: closed")
	}
	if l := p.free[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.size[ptr] = c
		return ptr, nil
	}
	if l := p.pending[c]; len(l) > 0 && p.st != nil {
		b := l[len(l)-1]
		if err := p.st.Wait(b.ev.Handle()); err != nil {
			return 0, err
		}
		p.pending[c] = l[:len(l)-1]
		p.events = append(p.events, b.ev)
		p.size[b.ptr] = c
		return b.ptr, nil
	}
	ptr, err := p.dev.Alloc(c)
	if err != nil {
		return 0, fmt.Errorf("cuda: allocating %d bytes of device memory: %w", c, err)
	}
	p.held += c
	p.size[ptr] = c
	return ptr, nil
}

// Put gives a block from Get back, for work ordered after the work queued
// so far on the pool's stream.
func (p *Pool) Put(ptr Ptr) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.size[ptr]
	if !ok {
		return fmt.Errorf("cuda: pool: %#x was not handed out by this pool", uint64(ptr))
	}
	delete(p.size, ptr)
	p.free[c] = append(p.free[c], ptr)
	return nil
}

// PutAfter gives a block back once the work queued so far on stream s has
// completed: s is a stream other than the pool's (mem.NoStream or the
// pool's own stream: Put).
func (p *Pool) PutAfter(ptr Ptr, s mem.Stream) error {
	if s == mem.NoStream || p.st == nil || s == p.st.Handle() {
		return p.Put(ptr)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.size[ptr]
	if !ok {
		return fmt.Errorf("cuda: pool: %#x was not handed out by this pool", uint64(ptr))
	}
	ev, err := p.eventLocked()
	if err != nil {
		return err
	}
	if err := ev.RecordOn(s); err != nil {
		p.events = append(p.events, ev)
		return err
	}
	delete(p.size, ptr)
	p.pending[c] = append(p.pending[c], pending{ptr, ev})
	return nil
}

// Event returns a spare event of the pool's device (for a batch to record
// and give back with PutEvent).
func (p *Pool) Event() (Event, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("cuda: pool: closed")
	}
	return p.eventLocked()
}

func (p *Pool) eventLocked() (Event, error) {
	if n := len(p.events); n > 0 {
		ev := p.events[n-1]
		p.events = p.events[:n-1]
		return ev, nil
	}
	ev, err := p.dev.NewEvent()
	if err != nil {
		return nil, err
	}
	p.made = append(p.made, ev)
	return ev, nil
}

// PutEvent gives back an event from Event (a no-op once closed).
func (p *Pool) PutEvent(ev Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.events = append(p.events, ev)
	}
}

// Close frees every block (handed out or not) on the device, and the
// events. Blocks given back later are ignored.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, l := range p.free {
		for _, ptr := range l {
			errs = append(errs, p.dev.Free(ptr))
		}
	}
	for _, l := range p.pending {
		for _, b := range l {
			errs = append(errs, p.dev.Free(b.ptr))
		}
	}
	for ptr := range p.size {
		errs = append(errs, p.dev.Free(ptr))
	}
	for _, ev := range p.made {
		errs = append(errs, ev.Close())
	}
	p.free, p.pending, p.size, p.events, p.made, p.held = map[int64][]Ptr{}, map[int64][]pending{}, map[Ptr]int64{}, nil, nil, 0
	p.closed = true
	return errors.Join(errs...)
}

// Allocator returns the pool as a mem.BufferAllocator of device memory
// (device ordinal ordinal): the allocator of a device batch's tensors.
func (p *Pool) Allocator(ordinal int) mem.BufferAllocator { return poolAllocator{p, ordinal} }

type poolAllocator struct {
	p       *Pool
	ordinal int
}

func (a poolAllocator) Device() mem.Device {
	return mem.Device{Kind: mem.KindDevice, Ordinal: a.ordinal}
}

// AllocBuffer returns n bytes usable in the order of the pool's stream
// (callers on another stream s make s wait for the pool's work first).
func (a poolAllocator) AllocBuffer(n int, _ mem.Stream) (mem.Buffer, error) {
	ptr, err := a.p.Get(int64(n))
	if err != nil {
		return mem.Buffer{}, err
	}
	return mem.DeviceBuffer(uintptr(ptr), n, a.ordinal), nil
}

// FreeBuffer gives b back after the work queued on s (see PutAfter). A
// buffer this pool did not hand out (or a pool closed since) is ignored.
func (a poolAllocator) FreeBuffer(b mem.Buffer, s mem.Stream) {
	_ = a.p.PutAfter(Ptr(b.DevicePtr()), s)
}

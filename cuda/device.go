package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// Ptr is a device address.
type Ptr uint64

// Device is what the Sampler needs from a GPU: device memory, copies, and
// launches of the kernels in cuda/kernels by name. Every kernel parameter is
// one 8-byte word (a Ptr, an int64 or a uint64 as uint64). Operations are
// ordered as issued; CopyOut returns once the data is on the host (it waits
// for the work issued before it). A Device is used by one goroutine at a
// time.
type Device interface {
	// Alloc returns at least bytes of device memory (bytes >= 0).
	Alloc(bytes int64) (Ptr, error)
	// Free releases memory from Alloc.
	Free(p Ptr) error
	// CopyIn copies src to device address dst.
	CopyIn(dst Ptr, src []byte) error
	// CopyOut copies len(dst) bytes from device address src to dst.
	CopyOut(dst []byte, src Ptr) error
	// CopyDev copies bytes between device addresses.
	CopyDev(dst, src Ptr, bytes int64) error
	// Memset sets bytes bytes at dst to b.
	Memset(dst Ptr, b byte, bytes int64) error
	// Launch runs kernel on a one-dimensional grid of grid blocks of block
	// threads.
	Launch(kernel string, grid, block int, args ...uint64) error
	// Close releases the device's resources.
	Close() error
}

// int64Bytes views s as bytes (no copy).
func int64Bytes(s []int64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*8)
}

func float32Bytes(s []float32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*4)
}

func int32Bytes(s []int32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*4)
}

func uint64Bytes(s []uint64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*8)
}

// Pool hands out device memory from size classes (powers of two from 256
// bytes) and keeps what is given back for reuse, so that sampling a batch
// allocates from the driver only until the pool has warmed up (DSP found
// cudaMalloc/cudaFree per batch a main cost). Memory returns to the device
// only on Close. A Pool is used by one goroutine at a time.
type Pool struct {
	dev  Device
	free map[int64][]Ptr // by class size
	size map[Ptr]int64   // class size of every block handed out
	// Held is the bytes obtained from the device.
	Held int64
}

// NewPool returns an empty pool over dev.
func NewPool(dev Device) *Pool {
	return &Pool{dev: dev, free: map[int64][]Ptr{}, size: map[Ptr]int64{}}
}

func classOf(bytes int64) int64 {
	c := int64(256)
	for c < bytes {
		c <<= 1
	}
	return c
}

// Get returns a block of at least bytes.
func (p *Pool) Get(bytes int64) (Ptr, error) {
	if bytes < 0 {
		return 0, fmt.Errorf("cuda: pool: negative size %d", bytes)
	}
	c := classOf(bytes)
	if l := p.free[c]; len(l) > 0 {
		ptr := l[len(l)-1]
		p.free[c] = l[:len(l)-1]
		p.size[ptr] = c
		return ptr, nil
	}
	ptr, err := p.dev.Alloc(c)
	if err != nil {
		return 0, fmt.Errorf("cuda: allocating %d bytes of device memory: %w", c, err)
	}
	p.Held += c
	p.size[ptr] = c
	return ptr, nil
}

// Put gives a block from Get back to the pool.
func (p *Pool) Put(ptr Ptr) error {
	c, ok := p.size[ptr]
	if !ok {
		return fmt.Errorf("cuda: pool: %#x was not handed out by this pool", uint64(ptr))
	}
	delete(p.size, ptr)
	p.free[c] = append(p.free[c], ptr)
	return nil
}

// Close frees every block (handed out or not) on the device.
func (p *Pool) Close() error {
	var errs []error
	for _, l := range p.free {
		for _, ptr := range l {
			errs = append(errs, p.dev.Free(ptr))
		}
	}
	for ptr := range p.size {
		errs = append(errs, p.dev.Free(ptr))
	}
	p.free, p.size, p.Held = map[int64][]Ptr{}, map[Ptr]int64{}, 0
	return errors.Join(errs...)
}

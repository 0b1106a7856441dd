package mem

import (
	"fmt"
	"sync"
	"unsafe"
)

// Allocator hands out byte buffers and takes them back.
//
// Alloc returns a buffer of exactly n bytes (n may be 0, in which case the
// buffer may be nil). Free releases a buffer returned by Alloc; freeing nil is
// a no-op. Implementations must be safe for concurrent use.
type Allocator interface {
	Alloc(n int) ([]byte, error)
	Free(b []byte)
}

// Heap allocates on the Go heap. It is the default inside the engine and in
// Go tests; the C API replaces it with a C allocator.
type Heap struct{}

var _ Allocator = Heap{}

// Alloc implements Allocator.
func (Heap) Alloc(n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("mem: negative allocation size %d", n)
	}
	if n == 0 {
		return nil, nil
	}
	// Allocate as []uint64 so that the buffer is 8-byte aligned for int64 views.
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n), nil
}

// Free implements Allocator.
func (Heap) Free([]byte) {}

// Checked wraps an Allocator and counts outstanding buffers and bytes, so a
// test can assert that everything handed out was given back.
type Checked struct {
	Inner Allocator
	mu    sync.Mutex
	live  map[*byte]int
	bytes int64
}

var _ Allocator = (*Checked)(nil)

// NewChecked returns a Checked allocator over inner (Heap if nil).
func NewChecked(inner Allocator) *Checked {
	if inner == nil {
		inner = Heap{}
	}
	return &Checked{Inner: inner, live: map[*byte]int{}}
}

// Alloc implements Allocator.
func (c *Checked) Alloc(n int) ([]byte, error) {
	b, err := c.Inner.Alloc(n)
	if err != nil || len(b) == 0 {
		return b, err
	}
	c.mu.Lock()
	c.live[&b[0]] = len(b)
	c.bytes += int64(len(b))
	c.mu.Unlock()
	return b, nil
}

// Free implements Allocator. It panics on a buffer it did not hand out, since
// that is a bug in the engine.
func (c *Checked) Free(b []byte) {
	if len(b) == 0 {
		return
	}
	c.mu.Lock()
	n, ok := c.live[&b[0]]
	if !ok {
		c.mu.Unlock()
		panic("mem: Free of a buffer not allocated here (or freed twice)")
	}
	delete(c.live, &b[0])
	c.bytes -= int64(n)
	c.mu.Unlock()
	c.Inner.Free(b)
}

// Outstanding reports the number of live buffers and their total size.
func (c *Checked) Outstanding() (buffers int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.live), c.bytes
}

// Int64s views b as a []int64. len(b) must be a multiple of 8 and b must be
// 8-byte aligned (every Allocator here guarantees it).
func Int64s(b []byte) []int64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// Float32s views b as a []float32.
func Float32s(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// Bytes views an int64 slice as bytes.
func Bytes[T int64 | int32 | float32 | uint16 | uint64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// AllocInt64 allocates n int64 values through a.
func AllocInt64(a Allocator, n int) ([]byte, []int64, error) {
	b, err := a.Alloc(n * 8)
	if err != nil {
		return nil, nil, err
	}
	return b, Int64s(b), nil
}

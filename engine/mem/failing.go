package mem

import (
	"errors"
	"fmt"
	"sync"
)

// Failing wraps an Allocator so that a test can make one allocation fail,
// SQLite's way of trying every allocation failure: Arm(k) makes the k-th
// allocation from then on (k >= 1) fail, once, with an error wrapping Err
// (the caller's errs.ErrNoMem: this layer cannot import errs); Allocs counts the allocations since the last Arm,
// so that a first run with Arm(0) (never fail) tells how many k to sweep.
type Failing struct {
	Inner Allocator
	Err   error
	mu    sync.Mutex
	k, n  int
	fired bool
}

var _ Allocator = (*Failing)(nil)

// NewFailing returns a Failing allocator over inner (Heap if nil) whose
// failure wraps err, armed to fail nothing.
func NewFailing(inner Allocator, err error) *Failing {
	if inner == nil {
		inner = Heap{}
	}
	if err == nil {
		err = errors.New("out of memory")
	}
	return &Failing{Inner: inner, Err: err}
}

// Arm resets the count and makes the k-th allocation from now fail (k <= 0:
// none).
func (f *Failing) Arm(k int) {
	f.mu.Lock()
	f.k, f.n, f.fired = k, 0, false
	f.mu.Unlock()
}

// Allocs returns the number of allocations since the last Arm, and whether
// the armed one failed.
func (f *Failing) Allocs() (n int, fired bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.fired
}

// Alloc implements Allocator.
func (f *Failing) Alloc(n int) ([]byte, error) {
	f.mu.Lock()
	f.n++
	fail := f.k > 0 && f.n == f.k
	if fail {
		f.fired = true
	}
	f.mu.Unlock()
	if fail {
		return nil, fmt.Errorf("mem: allocation %d (%d bytes) failed on purpose: %w", f.k, n, f.Err)
	}
	return f.Inner.Alloc(n)
}

// Free implements Allocator.
func (f *Failing) Free(b []byte) { f.Inner.Free(b) }

// Package gctest helps the tests that catch a Go pointer store into C
// memory (the cuda package's kernel launches, the C API's gf_comm
// exchange): such a store runs the garbage collector's write barrier on the
// word it overwrites, and a marking collector takes that word for a Go
// pointer. The tests fill C memory with a word the collector rejects
// (BadPointer) and run the code under test while collections run back to
// back (Collect). Only tests import it; it imports nothing of the engine,
// and is not internal so that the cuda and capi tests can use it.
package gctest

import (
	"runtime"
	"sync"
	"unsafe"
)

// BadPointer returns a Go heap address that the collector rejects as a
// pointer ("found bad pointer in Go heap") while keep is alive: inside the
// unused tail of the span of a large object whose size is not a whole
// number of pages (the span's limit is the object's end).
func BadPointer() (bad uintptr, keep []byte) {
	keep = make([]byte, 1<<20+64)
	return uintptr(unsafe.Pointer(unsafe.SliceData(keep))) + uintptr(len(keep)) + 8, keep
}

// Collect runs collections back to back on a goroutine of its own until
// stop is called, which returns once the last one has ended.
func Collect() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				runtime.GC()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

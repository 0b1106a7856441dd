package mem

import (
	"sync"
	"unsafe"
)

// Off-heap memory. Go gives no public way to ask whether an address is on
// its heap, and the engine must never hand Go-heap memory to C or to a
// device driver to keep (a driver registering it in place, a library
// reading it after the call). So the code that obtains memory elsewhere
// says so: a memory map of a file (feature.RegisterMapping), a caller's
// array handed in through the C API. Memory nobody marked is taken to be
// the Go heap.

// offHeapRange is one marked range [lo, hi).
type offHeapRange struct{ lo, hi uintptr }

var (
	offHeapMu sync.RWMutex
	offHeap   = map[*offHeapRange]struct{}{} // ranges may overlap (one array marked twice)
)

// MarkOffHeap records that b is memory outside the Go heap (a file mapping,
// C memory) that stays valid until the returned function is called; call
// it before the memory is unmapped or freed. Marking the same memory twice
// is allowed (each mark is undone by its own function); unmarking twice does
// nothing. Empty b marks nothing.
func MarkOffHeap(b []byte) (unmark func()) {
	if len(b) == 0 {
		return func() {}
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	r := &offHeapRange{lo: lo, hi: lo + uintptr(len(b))}
	offHeapMu.Lock()
	offHeap[r] = struct{}{}
	offHeapMu.Unlock()
	return func() {
		offHeapMu.Lock()
		delete(offHeap, r)
		offHeapMu.Unlock()
	}
}

// OffHeap reports whether b lies entirely inside one range marked by
// MarkOffHeap (and not yet unmarked). Empty b is not off the heap.
func OffHeap(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	offHeapMu.RLock()
	defer offHeapMu.RUnlock()
	for r := range offHeap {
		if r.lo <= lo && hi <= r.hi {
			return true
		}
	}
	return false
}

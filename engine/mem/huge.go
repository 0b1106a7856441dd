package mem

import "unsafe"

// hugePage is the size of the huge pages AdviseHuge asks for (x86-64 and
// arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// AdviseHuge asks the operating system to back the whole huge pages inside
// s with huge pages, for arrays read at random (a graph's neighbour lists,
// a node table): with 4 KiB pages nearly every random read of a large array
// is also a TLB miss, which costs more than the cache miss itself inside a
// virtual machine. Memory not yet touched gets huge pages when first
// touched; memory already in use is collapsed into them in place. It is
// advice only: the contents are unchanged, and where the system cannot or
// will not (another OS, transparent huge pages disabled, no free huge
// page), nothing happens. Arrays smaller than a huge page are left alone.
func AdviseHuge[T any](s []T) {
	if len(s) == 0 {
		return
	}
	var zero T
	n := uintptr(len(s)) * unsafe.Sizeof(zero)
	if n < hugePage {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + n) &^ (hugePage - 1)
	if hi <= lo {
		return
	}
	adviseHuge(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s)), lo-start)), hi-lo))
}

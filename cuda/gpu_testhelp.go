//go:build cuda && gftest

package cuda

/*
#cgo CFLAGS: -I${SRCDIR}/../tests/c
#include "scribble.h"
*/
import "C"

// This file gives the cuda package's Go tests (which cannot use cgo in
// _test.go files) the C they need. It builds only with the tag gftest (the
// GPU test binary, cuda/tools/build.sh --test), so the shipped library
// carries none of it.

// scribbleMalloc leaves n freed blocks of size bytes holding the word w at
// the head of the calling OS thread's malloc free lists
// (tests/c/scribble.h): the thread must be locked for its next allocations
// to get them.
func scribbleMalloc(size int, w uintptr, n int) {
	C.gf_scribble_malloc(C.size_t(size), C.uintptr_t(w), C.int(n))
}

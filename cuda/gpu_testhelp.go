//go:build cuda && gftest

package cuda

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// gf_scribble_malloc allocates n blocks of size bytes, fills each with the
// word w, and frees them (the last first), so that the calling thread's next
// n allocations of that size get them back, still holding w where the
// allocator's free-list links did not overwrite it: C memory a caller treats
// as uninitialised then holds that word.
static void gf_scribble_malloc(size_t size, uintptr_t w, int n) {
	void *p[16];
	if (n > 16) n = 16;
	for (int i = 0; i < n; i++) {
		p[i] = malloc(size);
		for (size_t j = 0; p[i] && j + sizeof w <= size; j += sizeof w) memcpy((char *)p[i] + j, &w, sizeof w);
		__asm__ volatile("" : : "r"(p[i]) : "memory"); // the stores are not dead
	}
	for (int i = n - 1; i >= 0; i--) free(p[i]);
}
*/
import "C"

// This file gives the cuda package's Go tests (which cannot use cgo in
// _test.go files) the C they need. It builds only with the tag gftest (the
// GPU test binary, cuda/tools/build.sh --test), so the shipped library
// carries none of it.

// scribbleMalloc leaves n freed blocks of size bytes holding the word w at
// the head of the calling OS thread's malloc free lists (gf_scribble_malloc):
// the thread must be locked for the next allocations to get them.
func scribbleMalloc(size int, w uintptr, n int) {
	C.gf_scribble_malloc(C.size_t(size), C.uintptr_t(w), C.int(n))
}

//go:build cuda && gftest

package cuda

/*
#cgo CFLAGS: -I${SRCDIR}/../tests/c
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include "scribble.h"

// The fake driver's record of host registrations (cuda/fakedriver), looked
// up at run time: the real driver has none (-2 then).
static int gf_test_registrations(int64_t *total, int64_t *live) {
	int (*f)(int64_t *, int64_t *) = (int (*)(int64_t *, int64_t *))dlsym(RTLD_DEFAULT, "gf_fakecuda_registrations");
	return f ? f(total, live) : -2;
}
static int gf_test_is_registered(uintptr_t p, size_t n) {
	int (*f)(uintptr_t, size_t) = (int (*)(uintptr_t, size_t))dlsym(RTLD_DEFAULT, "gf_fakecuda_is_registered");
	return f ? f(p, n) : -2;
}
*/
import "C"

import "unsafe"

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

// fakeRegistrations returns the fake driver's count of host registrations
// (cuMemHostRegister) since cuInit and of those live now; ok is false on
// the real driver, which keeps no such count for us.
func fakeRegistrations() (total, live int64, ok bool) {
	var t, l C.int64_t
	if C.gf_test_registrations(&t, &l) != 0 {
		return 0, 0, false
	}
	return int64(t), int64(l), true
}

// fakeRegistered reports whether the fake driver holds b's range
// registered now (its address goes to C as a number, never read); ok is
// false on the real driver.
func fakeRegistered(b []byte) (registered, ok bool) {
	r := C.gf_test_is_registered(C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), C.size_t(len(b)))
	return r == 1, r >= 0
}

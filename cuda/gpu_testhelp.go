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
static int gf_test_fail_push(int n, int code) {
	int (*f)(const char *, int, int, int) = (int (*)(const char *, int, int, int))dlsym(RTLD_DEFAULT, "gf_fakecuda_fail");
	return f ? f("cuCtxPushCurrent", 0, n, code) : -2;
}
// The fake's counters of device dev (gf_fakecuda_stats_t, 11 int64s).
static int gf_test_stats(int dev, int64_t *out) {
	int (*f)(int, int64_t *) = (int (*)(int, int64_t *))dlsym(RTLD_DEFAULT, "gf_fakecuda_stats");
	return f ? f(dev, out) : -2;
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

// fakeFailPush makes the fake driver's next n context pushes fail with
// CUresult code; false on the real driver.
func fakeFailPush(n, code int) bool { return C.gf_test_fail_push(C.int(n), C.int(code)) == 0 }

// fakeStats returns the fake driver's counters of device dev
// (gf_fakecuda_stats_t: live allocations and bytes, memory, live modules,
// loads, live streams, live events, live contexts, the primary refcount,
// launches, live host ranges); false on the real driver.
func fakeStats(dev int) ([11]int64, bool) {
	var out [11]C.int64_t
	if C.gf_test_stats(C.int(dev), &out[0]) != 0 {
		return [11]int64{}, false
	}
	var r [11]int64
	for i, v := range out {
		r[i] = int64(v)
	}
	return r, true
}

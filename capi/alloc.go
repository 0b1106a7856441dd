package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/mem"
)

// loaderAlloc is the memory of a loader's output tensors: the library's
// own (cAlloc; host nil) or the host's gf_allocator (bufpool.c's gf__host,
// which the loader holds one reference to until it is closed). Buffers of
// either kind are freed by gf__buf_free, which knows their kind.
type loaderAlloc struct{ host *C.gf__host }

var _ mem.Allocator = loaderAlloc{}

func (a loaderAlloc) Alloc(n int) ([]byte, error) {
	if a.host == nil {
		return cAlloc{}.Alloc(n)
	}
	if n < 0 {
		return nil, errorf(gfEInternal, "negative allocation of %d bytes", n)
	}
	if n == 0 {
		return nil, nil
	}
	p := C.gf__buf_alloc_host(a.host, C.size_t(n))
	if p == nil {
		return nil, errorf(gfENoMem, "the host allocator (options->allocator) returned NULL for %d bytes", n+64)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

func (a loaderAlloc) Free(b []byte) { cAlloc{}.Free(b) }

// readAllocator copies the host's gf_allocator p (the argument arg) into a
// gf__host, after checking it; NULL is the library's memory. The caller
// releases it when the loader is not opened (see releaseLoaderAlloc).
func readAllocator(p *C.gf_allocator, arg string) (loaderAlloc, error) {
	if p == nil {
		return loaderAlloc{}, nil
	}
	a, err := readOptions(p, arg, allocatorLayout)
	if err != nil {
		return loaderAlloc{}, err
	}
	switch {
	case a.reserved != 0:
		return loaderAlloc{}, errorf(gfEInval, "%s->reserved = %d (want 0)", arg, uint32(a.reserved))
	case a.alloc == nil:
		return loaderAlloc{}, errorf(gfEInval, "%s->alloc is NULL", arg)
	case a.free == nil:
		return loaderAlloc{}, errorf(gfEInval, "%s->free is NULL", arg)
	}
	// a by value and the flag in C memory: C never reads or writes Go memory
	// (memcheck loses track of Go's stacks as the runtime moves them).
	closed := (*C.int)(C.malloc(C.size_t(unsafe.Sizeof(C.int(0)))))
	if closed == nil {
		return loaderAlloc{}, errorf(gfENoMem, "out of memory copying %s", arg)
	}
	defer C.free(unsafe.Pointer(closed))
	h := C.gf__host_new(*a, closed)
	if *closed != 0 {
		return loaderAlloc{}, errorf(gfEInval, "%s is a gf_host_pool's allocator whose pool was closed", arg)
	}
	if h == nil {
		return loaderAlloc{}, errorf(gfENoMem, "out of memory copying %s", arg)
	}
	return loaderAlloc{host: h}, nil
}

// release drops the loader's reference to its host allocator (if any).
func (a loaderAlloc) release() {
	if a.host != nil {
		C.gf__host_release(a.host)
	}
}

// loaderAllocs holds the host allocator of each open loader handle, released
// by gf_loader_close.
var loaderAllocs = struct {
	sync.Mutex
	m map[uint64]loaderAlloc
}{m: map[uint64]loaderAlloc{}}

// putLoader registers l (whose outputs come from a) under a new handle in
// *out.
func putLoader(out *C.uintptr_t, l *core.Loader, a loaderAlloc) {
	h := newHandle(kindLoader, l)
	if a.host != nil {
		loaderAllocs.Lock()
		loaderAllocs.m[h] = a
		loaderAllocs.Unlock()
	}
	C.gf__buf_pool_use(1) // batches reuse the buffers of dropped ones while loaders are open
	putHandle(out, h)
}

// releaseLoaderAlloc releases the host allocator of loader handle h (closed).
func releaseLoaderAlloc(h C.uintptr_t) {
	loaderAllocs.Lock()
	a, ok := loaderAllocs.m[uint64(h)]
	delete(loaderAllocs.m, uint64(h))
	loaderAllocs.Unlock()
	if ok {
		a.release()
	}
}

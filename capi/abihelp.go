//go:build gftest

package main

/*
#include <stdlib.h>
#include <string.h>
#include "graphferry.h"
*/
import "C"

import (
	"unsafe"
)

// Helpers for abi_test.go (tests cannot use cgo; build tag gftest, see
// testhelp.go): option structs of any
// struct_size, in C memory, as a program built against another version of
// the header would pass them.

// testSampleOptionsBytes makes sample options for fanouts in a C buffer of
// today's size filled with fill, then writes today's fields that fit within
// fieldBytes bytes; struct_size is set to structSize. It returns the options
// and a function freeing them.
func testSampleOptionsBytes(fanouts []int32, seed uint64, structSize, fieldBytes uintptr, fill byte) (unsafe.Pointer, func()) {
	n := unsafe.Sizeof(C.gf_sample_options{})
	p := C.malloc(C.size_t(n))
	C.memset(p, C.int(fill), C.size_t(n))
	fp := C.malloc(C.size_t(4 * len(fanouts)))
	copy(unsafe.Slice((*int32)(fp), len(fanouts)), fanouts)
	var o C.gf_sample_options
	o.num_hops = C.int32_t(len(fanouts))
	o.fanouts = (*C.int32_t)(fp)
	o.seed = C.uint64_t(seed)
	C.memcpy(p, unsafe.Pointer(&o), C.size_t(fieldBytes))
	(*C.gf_sample_options)(p).struct_size = C.uint32_t(structSize)
	return p, func() { C.free(fp); C.free(p) }
}

// testSampleWith samples seeds with the options made by
// testSampleOptionsBytes and returns the batch's nodes.
func testSampleWith(g uint64, seeds []int64, opts unsafe.Pointer) ([]int64, int) {
	s := newCTensor(seeds, dlInt, 64)
	defer s.free()
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	if rc := gfgo_sample(C.uintptr_t(g), s.t, (*C.gf_sample_options)(opts), out); rc != gfOK {
		return nil, int(rc)
	}
	defer gfgo_batch_close(*out)
	return takeInt64(*out, C.GF_FIELD_NODES, 0), gfOK
}

// testGraphOptionsSize calls gf_graph_from_csc with graph options whose
// struct_size is structSize (other fields zero).
func testGraphOptionsSize(indptr, indices []int64, structSize uint32) int {
	a, b := newCTensor(indptr, dlInt, 64), newCTensor(indices, dlInt, 64)
	defer a.free()
	defer b.free()
	o := (*C.gf_graph_options)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gf_graph_options{})+64)))
	defer C.free(unsafe.Pointer(o))
	o.struct_size = C.uint32_t(structSize)
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	rc := gfgo_graph_from_compressed(0, a.t, b.t, nil, o, out)
	if rc == gfOK {
		gfgo_graph_close(*out)
	}
	return int(rc)
}

// Sizes of the options structs, for the tests.
var (
	sizeofSampleOptions = unsafe.Sizeof(C.gf_sample_options{})
	sizeofGraphOptions  = unsafe.Sizeof(C.gf_graph_options{})
	// sizeofSample010 is sizeof(gf_sample_options) of 0.1.0's first layout.
	sizeofSample010 = sampleOptionsLayout.firstSize
)

// testGraphOpen calls gf_graph_open's export and closes what it opened.
func testGraphOpen(path string) int {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	rc := gfgo_graph_open(cs, nil, out)
	if rc == gfOK {
		gfgo_graph_close(*out)
	}
	return int(rc)
}

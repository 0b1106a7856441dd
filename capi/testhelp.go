//go:build gftest

package main

/*
#cgo CFLAGS: -DGF_GFTEST
#include <stdlib.h>
#include <string.h>
#include "graphferry.h"
#include "shim.h"

static const char *gf__test_errmsg(void) { return gf_errmsg(); }
*/
import "C"

import (
	"unsafe"
)

// This file lets the Go tests (which cannot use cgo in _test.go files) call
// the exports the way a C caller does: arguments are built in C memory and
// handles are passed as integers.
//
// It, abihelp.go and the capi tests build only with the tag gftest
// (make test-go runs `go test -tags gftest ./...`), so that no test helper,
// Go or C, is linked into the shipped library (tests/c/check_exports.sh
// checks it). The tag also defines GF_GFTEST for the package's C files, which
// compiles the C helpers only the tests use (gf__buf_pool_stats).

// cTensor is a 1-D integer DLTensor (int64 or int32) in C memory.
type cTensor struct {
	t     *C.DLTensor
	shape *C.int64_t
	data  unsafe.Pointer
}

func newCTensor(vals []int64, code, bits uint8) *cTensor {
	c := &cTensor{}
	c.t = (*C.DLTensor)(C.calloc(1, C.size_t(unsafe.Sizeof(C.DLTensor{}))))
	c.shape = (*C.int64_t)(C.malloc(8))
	*c.shape = C.int64_t(len(vals))
	n := len(vals) * int(bits) / 8
	if n > 0 {
		c.data = C.malloc(C.size_t(n))
		switch bits {
		case 64:
			copy(unsafe.Slice((*int64)(c.data), len(vals)), vals)
		case 32:
			dst := unsafe.Slice((*int32)(c.data), len(vals))
			for i, v := range vals {
				dst[i] = int32(v)
			}
		}
	}
	c.t.data = c.data
	c.t.device.device_type = C.kDLCPU
	c.t.ndim = 1
	c.t.dtype.code = C.uint8_t(code)
	c.t.dtype.bits = C.uint8_t(bits)
	c.t.dtype.lanes = 1
	c.t.shape = c.shape
	return c
}

func (c *cTensor) free() {
	C.free(c.data)
	C.free(unsafe.Pointer(c.shape))
	C.free(unsafe.Pointer(c.t))
}

func lastError() string { return C.GoString(C.gf__test_errmsg()) }

// testGraphFromCSC calls gfgo_graph_from_compressed as gf_graph_from_csc
// does (graphferry.c), with int64 or int32 (bits) arrays.
func testGraphFromCSC(indptr, indices []int64, bits uint8) (uint64, int) {
	a, b := newCTensor(indptr, dlInt, bits), newCTensor(indices, dlInt, bits)
	defer a.free()
	defer b.free()
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	rc := gfgo_graph_from_compressed(0, a.t, b.t, nil, nil, out)
	return uint64(*out), int(rc)
}

// testSample samples seeds with the given fan-outs and returns the batch's
// nodes, and per hop its indptr, indices and edge ids.
func testSample(g uint64, seeds []int64, fanouts []int32, replace bool, seed uint64) (nodes []int64, blocks [][3][]int64, rc int) {
	s := newCTensor(seeds, dlInt, 64)
	defer s.free()
	o := (*C.gf_sample_options)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gf_sample_options{}))))
	defer C.free(unsafe.Pointer(o))
	o.struct_size = C.uint32_t(unsafe.Sizeof(*o))
	o.num_hops = C.int32_t(len(fanouts))
	var fp unsafe.Pointer
	if len(fanouts) > 0 {
		fp = C.malloc(C.size_t(4 * len(fanouts)))
		defer C.free(fp)
		copy(unsafe.Slice((*int32)(fp), len(fanouts)), fanouts)
	}
	o.fanouts = (*C.int32_t)(fp)
	if replace {
		o.replace = 1
	}
	o.seed = C.uint64_t(seed)
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	if rc := gfgo_sample(C.uintptr_t(g), s.t, o, out); rc != gfOK {
		return nil, nil, int(rc)
	}
	b := *out
	defer gfgo_batch_close(b)
	nodes = takeInt64(b, C.GF_FIELD_NODES, 0)
	for h := range fanouts {
		blocks = append(blocks, [3][]int64{
			takeInt64(b, C.GF_FIELD_INDPTR, h),
			takeInt64(b, C.GF_FIELD_INDICES, h),
			takeInt64(b, C.GF_FIELD_EDGE_IDS, h),
		})
	}
	return nodes, blocks, gfOK
}

func takeInt64(b C.uintptr_t, field, layer int) []int64 {
	out := (**C.DLManagedTensor)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(out))
	if gfgo_batch_take(b, C.int32_t(field), C.int32_t(layer), out) != gfOK {
		return nil
	}
	m := *out
	n := int(*m.dl_tensor.shape)
	vals := make([]int64, n)
	if n > 0 {
		copy(vals, unsafe.Slice((*int64)(m.dl_tensor.data), n))
	}
	C.gf__call_deleter(m)
	return vals
}

func testGraphClose(g uint64) { gfgo_graph_close(C.uintptr_t(g)) }

func testGraphNumNodes(g uint64) (int64, int) {
	out := (*C.int64_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	rc := gfgo_graph_count(C.uintptr_t(g), 0, out)
	return int64(*out), int(rc)
}

// testArrowStructs allocates zeroed Arrow C Data Interface structs in C
// memory, as a C caller would.
func testArrowStructs() (unsafe.Pointer, unsafe.Pointer, func()) {
	s := C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ArrowSchema{})))
	a := C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ArrowArray{})))
	return s, a, func() { C.free(s); C.free(a) }
}

// testGraphFromArrow calls gfgo_graph_from_arrow (gf_graph_from_arrow's Go
// side) with no options; it reports the status and whether the array and
// schema were released.
func testGraphFromArrow(schema, array unsafe.Pointer) (g uint64, rc int, released bool) {
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	s, a := (*C.struct_ArrowSchema)(schema), (*C.struct_ArrowArray)(array)
	rc = int(gfgo_graph_from_arrow(s, a, nil, out))
	return uint64(*out), rc, s.release == nil && a.release == nil
}

// Buffer pool (bufpool.c), for the tests.

func testBufAlloc(n int) unsafe.Pointer { return C.gf__buf_alloc(C.size_t(n)) }

func testBufFree(p unsafe.Pointer) { C.gf__buf_free(p) }

func testPoolUse(delta int) { C.gf__buf_pool_use(C.int(delta)) }

// testPoolStats returns the pooled buffers, their bytes and the pool's users.
func testPoolStats() (count, bytes, users int64) {
	var c, b, u C.int64_t
	C.gf__buf_pool_stats(&c, &b, &u)
	return int64(c), int64(b), int64(u)
}

// rawTensor is a DLTensor of any fields in C memory (the fuzzers'):
// data holds len(bytes) bytes, shape ndim entries (NULL when ndim <= 0 or
// shape is nil).
type rawTensor struct {
	t           *C.DLTensor
	shape, data unsafe.Pointer
}

func newRawTensor(bytes []byte, code, bits, lanes uint8, device int32, shape []int64, ndim int32, byteOffset uint64, nullData bool) *rawTensor {
	r := &rawTensor{t: (*C.DLTensor)(C.calloc(1, C.size_t(unsafe.Sizeof(C.DLTensor{}))))}
	if len(shape) > 0 {
		r.shape = C.malloc(C.size_t(8 * len(shape)))
		copy(unsafe.Slice((*int64)(r.shape), len(shape)), shape)
	}
	if !nullData {
		r.data = C.malloc(C.size_t(len(bytes) + 1))
		copy(unsafe.Slice((*byte)(r.data), len(bytes)), bytes)
	}
	r.t.data = r.data
	r.t.device.device_type = C.DLDeviceType(device)
	r.t.ndim = C.int32_t(ndim)
	r.t.dtype.code = C.uint8_t(code)
	r.t.dtype.bits = C.uint8_t(bits)
	r.t.dtype.lanes = C.uint16_t(lanes)
	r.t.shape = (*C.int64_t)(r.shape)
	r.t.byte_offset = C.uint64_t(byteOffset)
	return r
}

func (r *rawTensor) free() {
	C.free(r.data)
	C.free(r.shape)
	C.free(unsafe.Pointer(r.t))
}

// testPartOpen calls gfgo_part_open as gf_part_open does.
func testPartOpen(dir string, rank int) (uint64, int) {
	d := C.CString(dir)
	defer C.free(unsafe.Pointer(d))
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	rc := gfgo_part_open(d, C.int32_t(rank), 0, out)
	return uint64(*out), int(rc)
}

func testPartClose(p uint64) { gfgo_part_close(C.uintptr_t(p)) }

// testPartSetTime calls gf_part_set_node_time (comm NULL) or
// gf_part_set_edge_time with t.
func testPartSetTime(p uint64, t *rawTensor, edge bool) int {
	if edge {
		return int(gfgo_part_set_edge_time(C.uintptr_t(p), t.t))
	}
	return int(gfgo_part_set_node_time(C.uintptr_t(p), t.t, nil))
}

// testPartOwned returns the number of the part's owned nodes.
func testPartOwned(p uint64) (int64, int) {
	out := (**C.DLManagedTensor)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(out))
	if rc := gfgo_part_owned_nodes(C.uintptr_t(p), out); rc != gfOK {
		return 0, int(rc)
	}
	n := int64(*(*out).dl_tensor.shape)
	C.gf__call_deleter(*out)
	return n, gfOK
}

// subgraphFuzz are the fields a fuzzer sets in gf_subgraph_loader_options
// and its gf_loader_options.
type subgraphFuzz struct {
	Kind, Weighting, EdgeOrder, Threads, QueueCapacity int32
	Budget, WalkLength, BatchSize                      int64
	Shuffle                                            bool
	Seed                                               uint64
	PartOffsets, PartNodes                             *rawTensor
	Feature                                            string
}

// testSubgraphLoaderOpen calls gfgo_subgraph_loader_open with o, as
// gf_subgraph_loader_open does.
func testSubgraphLoaderOpen(g uint64, items *rawTensor, o subgraphFuzz) (uint64, int) {
	lo := (*C.gf_loader_options)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gf_loader_options{}))))
	defer C.free(unsafe.Pointer(lo))
	lo.struct_size = C.uint32_t(unsafe.Sizeof(*lo))
	lo.batch_size = C.int64_t(o.BatchSize)
	lo.shuffle = cBool(o.Shuffle)
	lo.shuffle_seed = C.uint64_t(o.Seed)
	lo.queue_capacity = C.int32_t(o.QueueCapacity)
	if o.Feature != "" {
		names := (**C.char)(C.malloc(C.size_t(unsafe.Sizeof(uintptr(0)))))
		defer C.free(unsafe.Pointer(names))
		*names = C.CString(o.Feature)
		defer C.free(unsafe.Pointer(*names))
		lo.num_feature_names = 1
		lo.feature_names = names
	}
	so := (*C.gf_subgraph_loader_options)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gf_subgraph_loader_options{}))))
	defer C.free(unsafe.Pointer(so))
	so.struct_size = C.uint32_t(unsafe.Sizeof(*so))
	so.kind = C.int32_t(o.Kind)
	so.loader = lo
	so.weighting = C.int32_t(o.Weighting)
	so.edge_order = C.int32_t(o.EdgeOrder)
	so.budget = C.int64_t(o.Budget)
	so.walk_length = C.int64_t(o.WalkLength)
	so.num_threads = C.int32_t(o.Threads)
	if o.PartOffsets != nil {
		so.part_offsets = o.PartOffsets.t
	}
	if o.PartNodes != nil {
		so.part_nodes = o.PartNodes.t
	}
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	var it *C.DLTensor
	if items != nil {
		it = items.t
	}
	rc := gfgo_subgraph_loader_open(C.uintptr_t(g), it, so, out)
	return uint64(*out), int(rc)
}

// testLoaderEpoch starts epoch e of loader l and takes up to max batches:
// the batches taken and the status that ended it (GF_DONE at the end).
func testLoaderEpoch(l uint64, e uint64, max int) (int, int) {
	if rc := gfgo_loader_start(C.uintptr_t(l), C.uint64_t(e)); rc != gfOK {
		return 0, int(rc)
	}
	out := (*C.uintptr_t)(C.malloc(8))
	defer C.free(unsafe.Pointer(out))
	for n := 0; n < max; n++ {
		if rc := gfgo_loader_next(C.uintptr_t(l), out); rc != gfOK {
			return n, int(rc)
		}
		gfgo_batch_close(*out)
	}
	return max, gfOK
}

func testLoaderClose(l uint64) { gfgo_loader_close(C.uintptr_t(l)) }

// Cancel tokens (graphferry.c), called as a C caller calls them.

func testCancelNew() (unsafe.Pointer, int) {
	var t *C.gf_cancel
	rc := C.gf_cancel_new(&t)
	return unsafe.Pointer(t), int(rc)
}

func testCancelRequest(t unsafe.Pointer) int { return int(C.gf_cancel_request((*C.gf_cancel)(t))) }

func testCancelIsRequested(t unsafe.Pointer) (int32, int) {
	var v C.int32_t = -1
	rc := C.gf_cancel_is_requested((*C.gf_cancel)(t), &v)
	return int32(v), int(rc)
}

func testCancelBind(t unsafe.Pointer) int { return int(C.gf_cancel_bind((*C.gf_cancel)(t))) }

func testCancelFree(t unsafe.Pointer) { C.gf_cancel_free((*C.gf_cancel)(t)) }

// testNotAToken is C memory the size of a token that is not one.
func testNotAToken() (unsafe.Pointer, func()) {
	p := C.calloc(1, 16)
	return p, func() { C.free(p) }
}

// testWalk walks length steps from seeds on graph g (a cancellable call)
// and frees what it returns.
func testWalk(g uint64, seeds []int64, length int32) int {
	s := newCTensor(seeds, dlInt, 64)
	defer s.free()
	o := (*C.gf_walk_options)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gf_walk_options{}))))
	defer C.free(unsafe.Pointer(o))
	o.struct_size = C.uint32_t(unsafe.Sizeof(*o))
	o.length = C.int32_t(length)
	out := (**C.DLManagedTensor)(C.calloc(1, C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(out))
	rc := gfgo_random_walk(C.uintptr_t(g), s.t, o, out, nil)
	if rc == gfOK {
		C.gf__call_deleter(*out)
	} else if *out != nil {
		return -1 // an output set on failure
	}
	return int(rc)
}

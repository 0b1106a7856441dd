package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Device outputs (mode 2, include/graphferry.h "Device outputs"): loaders
// whose batches the CUDA library samples and gathers on a GPU. This file is
// the part both builds share: the options, the batches' device tensors as
// DLPack tensors and the return of their memory; cuda_on.go (build tag
// cuda) opens the device loaders through openDeviceLoader, which the CPU
// build leaves nil.

// dlCUDA is DLPack's kDLCUDA.
const dlCUDA = 2

// deviceOptions is what gf_loader_options says of the device.
type deviceOptions struct {
	on      bool
	ordinal int
	stream  mem.Stream // the consumer's, or mem.NoStream
	hot     cache.Size // the hot tier; zero: none
	hotOn   bool
	// topology is GF_TOPOLOGY_*, reserve the bytes the auto choices
	// leave free.
	topology int
	reserve  int64
}

// openDeviceLoader opens a device loader (cuda_on.go); nil in the CPU
// library.
var openDeviceLoader func(g *core.Graph, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator, d deviceOptions) (*core.Loader, *devState, error)

// readDeviceOptions reads the device fields of o (already read with
// readOptions); fn is the function, for whether it serves device outputs
// (gf_loader_open only).
func readDeviceOptions(o *C.gf_loader_options, arg string, allowDevice bool) (deviceOptions, error) {
	var d deviceOptions
	typ, id := int(o.device.device_type), int(o.device.device_id)
	switch typ {
	case 0, dlCPU:
		switch {
		case o.stream != nil:
			return d, errorf(gfEInval, "%s->stream is set but %s->device is the host (device_type %d): a consumer stream needs device_type kDLCUDA (2)", arg, arg, typ)
		case o.device_cache_bytes != 0 || o.device_reserve_bytes != 0 || o.device_topology != 0:
			return d, errorf(gfEInval, "%s->device_cache_bytes = %d, device_reserve_bytes = %d and device_topology = %d apply to device_type kDLCUDA (2) only (device_type is %d)",
				arg, int64(o.device_cache_bytes), int64(o.device_reserve_bytes), int32(o.device_topology), typ)
		}
		return d, nil
	case dlCUDA:
	default:
		return d, errorf(gfENotSup, "%s->device.device_type = %d is not supported (kDLCPU = 1: host memory, kDLCUDA = 2: a CUDA device)", arg, typ)
	}
	if !allowDevice {
		return d, errorf(gfENotSup, "%s->device is kDLCUDA: device outputs are offered by gf_loader_open only (this loader samples on the host)", arg)
	}
	if id < 0 {
		return d, errorf(gfEInval, "%s->device.device_id = %d (want a CUDA device ordinal >= 0)", arg, id)
	}
	d = deviceOptions{on: true, ordinal: id, stream: mem.Stream(uintptr(o.stream))}
	cacheBytes, reserve := int64(o.device_cache_bytes), int64(o.device_reserve_bytes)
	switch {
	case reserve < 0:
		return d, errorf(gfEInval, "%s->device_reserve_bytes = %d (want >= 0)", arg, reserve)
	case cacheBytes > 0:
		d.hot, d.hotOn = cache.Size{Bytes: cacheBytes}, true
	case cacheBytes == -1:
		d.hot, d.hotOn = cache.Size{Auto: true, Reserve: reserve}, true
	case cacheBytes < -1:
		return d, errorf(gfEInval, "%s->device_cache_bytes = %d (want bytes > 0, 0: no hot tier, or -1: auto)", arg, cacheBytes)
	}
	d.reserve, d.topology = reserve, int(o.device_topology)
	if d.topology < C.GF_TOPOLOGY_AUTO || d.topology > C.GF_TOPOLOGY_PINNED {
		return d, errorf(gfEInval, "%s->device_topology = %d (want GF_TOPOLOGY_AUTO 0, GF_TOPOLOGY_DEVICE 1 or GF_TOPOLOGY_PINNED 2)", arg, d.topology)
	}
	if openDeviceLoader == nil {
		return d, errorf(gfENotSup, "%s->device is kDLCUDA (device %d), but this is the CPU library (libgraphferry.so): device outputs come from the CUDA library, libgraphferry_cuda.so (make lib-cuda; from Python, set GRAPHFERRY_BACKEND=cuda before importing graphferry)", arg, id)
	}
	return d, nil
}

// devState is a device loader's side of its batches' device tensors: the
// device allocators (one per sampler fork) that memory goes back to, how
// many tensors taken out are alive, and the loader's device teardown,
// deferred while some are.
type devState struct {
	id       uint64
	ordinal  int
	consumer mem.Stream
	// waitOn makes stream s wait for event e of the device.
	waitOn func(s mem.Stream, e mem.Event) error
	// teardown releases the device (sampler, tiers, pools, context) once
	// the loader is closed and no batch of it is open nor taken tensor
	// alive (outstanding counts both).
	teardown func() error

	mu          sync.Mutex
	allocs      []mem.BufferAllocator
	outstanding int
	closed      bool
}

var devStates = struct {
	sync.Mutex
	next     uint64
	m        map[uint64]*devState // by id
	byLoader map[uint64]*devState // by loader handle
}{m: map[uint64]*devState{}, byLoader: map[uint64]*devState{}}

// newDevState registers a device loader's state.
func newDevState(ordinal int, consumer mem.Stream, waitOn func(mem.Stream, mem.Event) error, teardown func() error) *devState {
	devStates.Lock()
	defer devStates.Unlock()
	devStates.next++
	st := &devState{id: devStates.next, ordinal: ordinal, consumer: consumer, waitOn: waitOn, teardown: teardown}
	devStates.m[st.id] = st
	return st
}

// loaderDev returns the device state of loader handle h (nil: a host
// loader).
func loaderDev(h C.uintptr_t) *devState {
	devStates.Lock()
	defer devStates.Unlock()
	return devStates.byLoader[uint64(h)]
}

// allocIndex returns a's index in st.allocs (adding it).
func (st *devState) allocIndex(a mem.BufferAllocator) uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i, b := range st.allocs {
		if b == a {
			return uint64(i)
		}
	}
	st.allocs = append(st.allocs, a)
	return uint64(len(st.allocs) - 1)
}

// drainDevice gives back the device memory of every device tensor whose
// deleter ran since the last drain (C's queue, graphferry.c), each after
// its consumer's stream, and tears down the closed loaders whose last
// tensor that was.
func drainDevice() error {
	var errs []error
	for r := C.gf__dev_drain(); r != nil; {
		next := r.next
		devStates.Lock()
		st := devStates.m[uint64(r.owner)]
		devStates.Unlock()
		if st != nil {
			st.mu.Lock()
			if i := int(r.alloc); i < len(st.allocs) {
				st.allocs[i].FreeBuffer(mem.DeviceBuffer(uintptr(r.ptr), 0, st.ordinal), mem.Stream(uintptr(r.stream)))
			}
			st.mu.Unlock()
			errs = append(errs, st.drop())
		}
		C.free(unsafe.Pointer(r))
		r = next
	}
	return errors.Join(errs...)
}

// finish forgets st and tears its device down.
func (st *devState) finish() error {
	devStates.Lock()
	delete(devStates.m, st.id)
	devStates.Unlock()
	return st.teardown()
}

// Close is the loader's closer (core.Graph.OpenLoaderWith), called after
// its pipeline closed: the device is torn down now, or by the drain that
// takes back the last tensor taken out.
func (st *devState) Close() error {
	err := drainDevice()
	st.mu.Lock()
	st.closed = true
	last := st.outstanding == 0
	st.mu.Unlock()
	if last {
		err = errors.Join(err, st.finish())
	}
	return err
}

// takeDevice moves device tensor t of batch o out as a DLPack tensor of
// kDLCUDA whose deleter queues its memory for the drain.
func (o *batchObj) takeDevice(t *mem.Tensor, out **C.DLManagedTensor) error {
	if o.dev == nil {
		return errorf(gfEInternal, "a device tensor in a batch of a host loader")
	}
	code, bits := dtypeToDL(t.DType)
	if bits == 0 {
		return errorf(gfEInternal, "cannot export dtype %s", t.DType)
	}
	idx := o.dev.allocIndex(o.b.DeviceAllocator())
	m := C.gf__make_dev_tensor(C.uintptr_t(t.DevicePtr), C.uint8_t(code), C.uint8_t(bits), C.int32_t(len(t.Shape)),
		C.int32_t(t.Device.Ordinal), C.uint64_t(o.dev.id), C.uint64_t(idx), C.uintptr_t(o.consumer))
	if m == nil {
		return errorf(gfENoMem, "out of memory allocating a DLPack tensor")
	}
	if len(t.Shape) > 0 {
		copy(unsafe.Slice((*int64)(unsafe.Pointer(m.dl_tensor.shape)), len(t.Shape)), t.Shape)
	}
	o.dev.hold()
	t.DevicePtr = 0 // the batch no longer frees it
	*out = m
	return nil
}

// takeOut is take for any tensor of batch o.
func (o *batchObj) takeOut(t *mem.Tensor, out **C.DLManagedTensor) error {
	if t.Device.Kind == mem.KindDevice {
		return o.takeDevice(t, out)
	}
	return take(t, out)
}

// release releases the batch, its device memory after the consumer's
// stream.
func (o *batchObj) release() {
	if o.consumer != mem.NoStream {
		o.b.ReleaseAfter(o.consumer)
	} else {
		o.b.Release()
	}
	if o.dev != nil {
		_ = drainDevice()
		_ = o.dev.drop()
	}
}

// hold counts one more user of st's device memory (an open batch, a taken
// tensor): the device is torn down once the loader is closed and the last
// user is gone.
func (st *devState) hold() {
	st.mu.Lock()
	st.outstanding++
	st.mu.Unlock()
}

// drop ends one user of hold, tearing the device down when it was the last
// of a closed loader.
func (st *devState) drop() error {
	st.mu.Lock()
	st.outstanding--
	last := st.closed && st.outstanding == 0
	st.mu.Unlock()
	if last {
		return st.finish()
	}
	return nil
}

//export gfgo_batch_wait_stream
func gfgo_batch_wait_stream(h C.uintptr_t, streamPtr unsafe.Pointer) C.int {
	stream := uintptr(streamPtr) // a CUstream: a handle, never dereferenced
	return call("gf_batch_wait_stream", func() error {
		o, err := lookup[*batchObj](kindBatch, h)
		if err != nil {
			return err
		}
		if o.dev == nil {
			return nil // a host batch: nothing to wait for
		}
		if stream == 0 {
			return errorf(gfEInval, "stream is NULL (the batch is on CUDA device %d: pass the consumer's CUstream)", o.dev.ordinal)
		}
		if err := o.dev.waitOn(mem.Stream(stream), o.b.Ready()); err != nil {
			return err
		}
		o.consumer = mem.Stream(stream)
		return nil
	})
}

package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/mem"
)

// Device outputs (mode 2, include/graphferry.h "Device outputs"): loaders
// whose batches a device backend (the CUDA library's) samples and gathers
// on a GPU. The engine assembles them (core.Graph.OpenLoaderOn,
// engine/device) and owns their device memory's lifetime
// (device.Session); this file only marshals: the options, the batches'
// device tensors as DLPack tensors and the deleters' queue.

// dlCUDA is DLPack's kDLCUDA.
const dlCUDA = 2

// readDeviceOptions reads the device fields of o (already read with
// readOptions); fn is the function, for whether it serves device outputs
// (gf_loader_open only).
func readDeviceOptions(o *C.gf_loader_options, arg string, allowDevice bool) (*device.Options, error) {
	typ, id := int(o.device.device_type), int(o.device.device_id)
	switch typ {
	case 0, dlCPU:
		switch {
		case o.stream != nil:
			return nil, errorf(gfEInval, "%s->stream is set but %s->device is the host (device_type %d): a consumer stream needs device_type kDLCUDA (2)", arg, arg, typ)
		case o.device_cache_bytes != 0 || o.device_reserve_bytes != 0 || o.device_topology != 0:
			return nil, errorf(gfEInval, "%s->device_cache_bytes = %d, device_reserve_bytes = %d and device_topology = %d apply to device_type kDLCUDA (2) only (device_type is %d)",
				arg, int64(o.device_cache_bytes), int64(o.device_reserve_bytes), int32(o.device_topology), typ)
		}
		return nil, nil
	case dlCUDA:
	default:
		return nil, errorf(gfENotSup, "%s->device.device_type = %d is not supported (kDLCPU = 1: host memory, kDLCUDA = 2: a CUDA device)", arg, typ)
	}
	if !allowDevice {
		return nil, errorf(gfENotSup, "%s->device is kDLCUDA: device outputs are offered by gf_loader_open only (this loader samples on the host)", arg)
	}
	if id < 0 {
		return nil, errorf(gfEInval, "%s->device.device_id = %d (want a CUDA device ordinal >= 0)", arg, id)
	}
	d := &device.Options{Ordinal: id, Stream: mem.Stream(uintptr(o.stream))}
	cacheBytes, reserve := int64(o.device_cache_bytes), int64(o.device_reserve_bytes)
	switch {
	case reserve < 0:
		return nil, errorf(gfEInval, "%s->device_reserve_bytes = %d (want >= 0)", arg, reserve)
	case cacheBytes > 0:
		d.Hot, d.HotOn = cache.Size{Bytes: cacheBytes}, true
	case cacheBytes == -1:
		d.Hot, d.HotOn = cache.Size{Auto: true, Reserve: reserve}, true
	case cacheBytes < -1:
		return nil, errorf(gfEInval, "%s->device_cache_bytes = %d (want bytes > 0, 0: no hot tier, or -1: auto)", arg, cacheBytes)
	}
	topology := int(o.device_topology)
	if topology < C.GF_TOPOLOGY_AUTO || topology > C.GF_TOPOLOGY_PINNED {
		return nil, errorf(gfEInval, "%s->device_topology = %d (want GF_TOPOLOGY_AUTO 0, GF_TOPOLOGY_DEVICE 1 or GF_TOPOLOGY_PINNED 2)", arg, topology)
	}
	d.Reserve, d.Topology = reserve, [...]device.Placement{C.GF_TOPOLOGY_AUTO: device.PlaceAuto, C.GF_TOPOLOGY_DEVICE: device.PlaceDevice, C.GF_TOPOLOGY_PINNED: device.PlacePinned}[topology]
	if !device.Available() {
		return nil, errorf(gfENotSup, "%s->device is kDLCUDA (device %d), but this is the CPU library (libgraphferry.so): device outputs come from the CUDA library, libgraphferry_cuda.so (make lib-cuda; from Python, set GRAPHFERRY_BACKEND=cuda before importing graphferry)", arg, id)
	}
	return d, nil
}

// drainDevice gives back, on this thread, the device memory of every
// taken device tensor whose deleter ran since the last drain (C's queue,
// graphferry.c), each after its consumer's stream (device.Session.Give).
func drainDevice() error {
	var errs []error
	here := int64(C.gf__thread_id())
	for r := C.gf__dev_drain(); r != nil; {
		next := r.next
		if s := device.Find(uint64(r.owner)); s != nil {
			errs = append(errs, s.Give(here, device.Freed{Alloc: int(r.alloc), Ptr: uintptr(r.ptr), Stream: mem.Stream(uintptr(r.stream)), Thread: int64(r.thread)}))
		}
		C.free(unsafe.Pointer(r))
		r = next
	}
	return errors.Join(errs...)
}

// takeOut moves tensor t of batch o out as a DLPack tensor: a device
// tensor as one of kDLCUDA whose deleter queues its memory for the drain.
func (o *batchObj) takeOut(t *mem.Tensor, out **C.DLManagedTensor) error {
	if t.Device.Kind != mem.KindDevice {
		return take(t, out)
	}
	if o.dev == nil {
		return errorf(gfEInternal, "a device tensor in a batch of a host loader")
	}
	code, bits := dtypeToDL(t.DType)
	if bits == 0 {
		return errorf(gfEInternal, "cannot export dtype %s", t.DType)
	}
	alloc := o.dev.AllocIndex(o.b.DeviceAllocator())
	m := C.gf__make_dev_tensor(C.uintptr_t(t.DevicePtr), C.uint8_t(code), C.uint8_t(bits), C.int32_t(len(t.Shape)),
		C.int32_t(t.Device.Ordinal), C.uint64_t(o.dev.ID()), C.uint64_t(alloc), C.uintptr_t(o.consumer))
	if m == nil {
		return errorf(gfENoMem, "out of memory allocating a DLPack tensor")
	}
	if len(t.Shape) > 0 {
		copy(unsafe.Slice((*int64)(unsafe.Pointer(m.dl_tensor.shape)), len(t.Shape)), t.Shape)
	}
	o.dev.Take(o.b, t)
	*out = m
	return nil
}

// release releases the batch, its device memory after the consumer's
// stream.
func (o *batchObj) release() {
	if o.dev == nil {
		o.b.Release()
		return
	}
	_ = drainDevice()
	_ = o.dev.Release(o.b, o.consumer)
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
			return errorf(gfEInval, "stream is NULL (the batch is on CUDA device %d: pass the consumer's CUstream)", o.dev.Ordinal())
		}
		if err := o.dev.WaitOn(mem.Stream(stream), o.b); err != nil {
			return err
		}
		o.consumer = mem.Stream(stream)
		return nil
	})
}

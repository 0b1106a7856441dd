package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"math"
	"syscall"
	"unsafe"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
)

func unsafePointer(p *C.char) unsafe.Pointer { return unsafe.Pointer(p) }

// cAlloc allocates outside the Go heap (gf__buf_alloc, see bufpool.c), so
// that buffers can be handed to C and freed by a plain C deleter. Buffers
// are 64-byte aligned, which suits every dtype.
type cAlloc struct{}

var _ mem.Allocator = cAlloc{}

func (cAlloc) Alloc(n int) ([]byte, error) {
	if n < 0 {
		return nil, errorf(gfEInternal, "negative allocation of %d bytes", n)
	}
	if n == 0 {
		return nil, nil
	}
	p := C.gf__buf_alloc(C.size_t(n))
	if p == nil {
		return nil, errorf(gfENoMem, "out of memory allocating %d bytes", n)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

func (cAlloc) Free(b []byte) {
	if len(b) > 0 {
		C.gf__buf_free(unsafe.Pointer(&b[0]))
	}
}

// dlpack type codes.
const (
	dlInt   = 0
	dlUInt  = 1
	dlFloat = 2
	dlBf    = 4
	dlBool  = 6
	dlCPU   = 1
)

// dlTypes maps each engine dtype to its DLPack (code, bits).
var dlTypes = map[mem.DType][2]uint8{
	mem.Float32:  {dlFloat, 32},
	mem.Float16:  {dlFloat, 16},
	mem.BFloat16: {dlBf, 16},
	mem.Float64:  {dlFloat, 64},
	mem.Int64:    {dlInt, 64},
	mem.Int32:    {dlInt, 32},
	mem.Int8:     {dlInt, 8},
	mem.Uint8:    {dlUInt, 8},
	mem.Bool:     {dlBool, 8},
}

func dtypeFromDL(code, bits, lanes int) (mem.DType, bool) {
	if lanes != 1 {
		return mem.Invalid, false
	}
	for d, cb := range dlTypes {
		if int(cb[0]) == code && int(cb[1]) == bits {
			return d, true
		}
	}
	return mem.Invalid, false
}

func dtypeToDL(d mem.DType) (code, bits uint8) {
	cb, ok := dlTypes[d]
	if !ok {
		return 255, 0
	}
	return cb[0], cb[1]
}

// maxNDim bounds the number of dimensions accepted from callers.
const maxNDim = 8

// viewTensor validates a caller's DLTensor and returns a mem.Tensor whose
// Data aliases the caller's memory (valid only while the caller keeps it),
// to be copied: every page of its bytes is read once first, so that bytes
// that are not readable memory of this process (a byte_offset past the
// buffer) are an error here, not a fault in the copy. arg names the
// argument in error messages.
func viewTensor(t *C.DLTensor, arg string) (mem.Tensor, error) { return view(t, arg, false) }

// viewHeldTensor is viewTensor for a tensor that the library holds instead
// of copying (node data): only its first and last pages are read (it may
// be a large mapping of a file, paged in when rows are gathered, where
// reads are guarded), and it must lie in mapped memory throughout.
func viewHeldTensor(t *C.DLTensor, arg string) (mem.Tensor, error) { return view(t, arg, true) }

func view(t *C.DLTensor, arg string, held bool) (mem.Tensor, error) {
	if t == nil {
		return mem.Tensor{}, errorf(gfEInval, "%s is NULL", arg)
	}
	if int(t.device.device_type) != dlCPU {
		return mem.Tensor{}, errorf(gfEType, "%s is on device type %d; this build accepts CPU tensors only (kDLCPU = 1)", arg, int(t.device.device_type))
	}
	dt, ok := dtypeFromDL(int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes))
	if !ok {
		return mem.Tensor{}, errorf(gfEType, "%s has unsupported DLPack dtype (code %d, bits %d, lanes %d)", arg, int(t.dtype.code), int(t.dtype.bits), int(t.dtype.lanes))
	}
	nd := int(t.ndim)
	if nd < 0 || nd > maxNDim {
		return mem.Tensor{}, errorf(gfEInval, "%s has ndim = %d (want 0..%d)", arg, nd, maxNDim)
	}
	if nd > 0 && t.shape == nil {
		return mem.Tensor{}, errorf(gfEInval, "%s has ndim = %d but a NULL shape", arg, nd)
	}
	shape := make([]int64, nd)
	if nd > 0 {
		copy(shape, unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), nd))
	}
	n := int64(1)
	for i, s := range shape {
		if s < 0 {
			return mem.Tensor{}, errorf(gfEInval, "%s has shape[%d] = %d (negative)", arg, i, s)
		}
		if s > 0 && n > math.MaxInt64/int64(dt.Size())/s {
			return mem.Tensor{}, errorf(gfEInval, "%s is too large (shape %v)", arg, shape)
		}
		n *= s
	}
	if t.strides != nil && nd > 0 {
		strides := unsafe.Slice((*int64)(unsafe.Pointer(t.strides)), nd)
		want := int64(1)
		for i := nd - 1; i >= 0; i-- {
			if shape[i] != 1 && strides[i] != want {
				return mem.Tensor{}, errorf(gfEType, "%s is not C-contiguous (shape %v, strides %v); make it contiguous first", arg, shape, strides)
			}
			want *= shape[i]
		}
	}
	nbytes := n * int64(dt.Size())
	if nbytes == 0 {
		return mem.Tensor{DType: dt, Shape: shape}, nil
	}
	if t.data == nil {
		return mem.Tensor{}, errorf(gfEInval, "%s has a NULL data pointer and %d elements", arg, n)
	}
	start := uintptr(t.data) + uintptr(t.byte_offset)
	if start < uintptr(t.data) || start+uintptr(nbytes) < start {
		return mem.Tensor{}, errorf(gfEInval, "%s: byte_offset = %d and %d bytes run past the end of the address space", arg, uint64(t.byte_offset), nbytes)
	}
	data := unsafe.Slice((*byte)(unsafe.Add(t.data, uintptr(t.byte_offset))), int(nbytes))
	if !readable(data, held) {
		return mem.Tensor{}, errorf(gfEInval, "%s: its %d bytes at data + byte_offset (byte_offset = %d) are not all readable memory of this process: byte_offset points past the buffer, or data is not a buffer", arg, nbytes, uint64(t.byte_offset))
	}
	return mem.Tensor{DType: dt, Shape: shape, Data: data}, nil
}

// readable says whether b, a caller's memory, can be read: every page of
// it read once (a fault recovered: feature.Guard), or, when held, its
// first and last bytes read and the rest mapped (msync answers ENOMEM for
// a range with a hole, without reading a page).
func readable(b []byte, held bool) bool {
	page := syscall.Getpagesize()
	var sink byte
	err := feature.Guard(func() {
		if held {
			sink = b[0] ^ b[len(b)-1]
			return
		}
		first := page - int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))%page // the next page's start
		sink = b[0]
		for i := first; i < len(b); i += page {
			sink ^= b[i]
		}
	})
	_ = sink
	if err != nil || !held {
		return err == nil
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := p &^ uintptr(page-1)
	_, _, e := syscall.Syscall(syscall.SYS_MSYNC, lo, p+uintptr(len(b))-lo, syscall.MS_ASYNC)
	return e != syscall.ENOMEM
}

// indexArray copies a caller's 1-D int64 or int32 DLTensor into a new Go
// slice of int64. A NULL tensor gives (nil, nil) when optional.
func indexArray(t *C.DLTensor, arg string, optional bool) ([]int64, error) {
	if t == nil && optional {
		return nil, nil
	}
	v, err := viewTensor(t, arg)
	if err != nil {
		return nil, err
	}
	if len(v.Shape) != 1 {
		return nil, errorf(gfEInval, "%s must be 1-D (got shape %v)", arg, v.Shape)
	}
	out := make([]int64, v.Shape[0])
	switch v.DType {
	case mem.Int64:
		copy(out, mem.Int64s(v.Data))
	case mem.Int32:
		if len(v.Data) > 0 {
			in := unsafe.Slice((*int32)(unsafe.Pointer(&v.Data[0])), len(out))
			for i, x := range in {
				out[i] = int64(x)
			}
		}
	default:
		return nil, errorf(gfEType, "%s must be int64 or int32 (got %s)", arg, v.DType)
	}
	return out, nil
}

// exportTensor wraps t, whose Data was allocated by cAlloc (or is nil), in a
// DLManagedTensor that owns it. On failure t.Data is left to the caller.
func exportTensor(t mem.Tensor) (*C.DLManagedTensor, error) {
	code, bits := dtypeToDL(t.DType)
	if bits == 0 {
		return nil, errorf(gfEInternal, "cannot export dtype %s", t.DType)
	}
	var data unsafe.Pointer
	if len(t.Data) > 0 {
		data = unsafe.Pointer(&t.Data[0])
	}
	m := C.gf__make_tensor(data, C.uint8_t(code), C.uint8_t(bits), C.int32_t(len(t.Shape)))
	if m == nil {
		return nil, errorf(gfENoMem, "out of memory allocating a DLPack tensor")
	}
	if len(t.Shape) > 0 {
		// The shape lives in the tensor's C allocation; Go fills it.
		copy(unsafe.Slice((*int64)(unsafe.Pointer(m.dl_tensor.shape)), len(t.Shape)), t.Shape)
	}
	return m, nil
}

func goString(p *C.char, arg string) (string, error) {
	if p == nil {
		return "", errorf(gfEInval, "%s is NULL", arg)
	}
	s := C.GoString(p)
	if s == "" {
		return "", errorf(gfEInval, "%s is empty", arg)
	}
	return s, nil
}

// exportOut hands t to *out as a DLPack tensor (freeing t on failure).
func exportOut(t mem.Tensor, out **C.DLManagedTensor) error {
	m, err := exportTensor(t)
	if err != nil {
		cAlloc{}.Free(t.Data)
		return err
	}
	*out = m
	return nil
}

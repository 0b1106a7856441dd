package main

/*
#include <stdlib.h>
#include "graphferry.h"
#include "shim.h"

// What one call of a gf_batch_callback answers, in C memory.
typedef struct gf__callback_answer {
  DLManagedTensor *output;
  char message[1024];
} gf__callback_answer;

// Calls the caller's function (Go cannot call a C function pointer) with
// the input ids (C memory) as an int64 [n] DLTensor; the table is passed by
// pointer to its copy in C memory, never by value (see comm.go).
static int gf__batch_callback_run(const gf_batch_callback *c, uint64_t key, int64_t *ids, int64_t n,
                                  int64_t max_output, gf__callback_answer *a) {
  int64_t shape[1] = {n};
  DLTensor in = {0};
  in.data = n > 0 ? ids : NULL;
  in.device.device_type = kDLCPU;
  in.ndim = 1;
  in.dtype.code = kDLInt;
  in.dtype.bits = 64;
  in.dtype.lanes = 1;
  in.shape = shape;
  a->output = NULL;
  a->message[0] = 0;
  int rc = c->fn(c->user, key, &in, max_output, &a->output, a->message, sizeof(a->message));
  a->message[sizeof(a->message) - 1] = 0;
  return rc;
}
*/
import "C"

import (
	"context"
	"runtime"
	"unsafe"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// cBatchCallback is a pipeline.BatchFunc over a caller's gf_batch_callback.
// The ids cross in C memory both ways: copied into a malloc'd input, and
// out of the caller's DLPack output, whose deleter is then called.
type cBatchCallback struct {
	c   *C.gf_batch_callback // a copy of the caller's table in C memory (cTable)
	arg string               // the table's name in messages
}

// batchCallback reads and checks the gf_batch_callback at c (nil: none).
func batchCallback(c *C.gf_batch_callback, arg string) (pipeline.BatchFunc, error) {
	if c == nil {
		return nil, nil
	}
	c, err := readOptions(c, arg, batchCallbackLayout)
	if err != nil {
		return nil, err
	}
	if c.fn == nil {
		return nil, errorf(gfEInval, "%s->fn is NULL", arg)
	}
	x := &cBatchCallback{arg: arg}
	if x.c, err = cTable(x, c); err != nil {
		return nil, err
	}
	return x.call, nil
}

// call is one call of the caller's function for the batch of key.
func (x *cBatchCallback) call(_ context.Context, key uint64, ids []int64, maxOut int) ([]int64, error) {
	a := (*C.gf__callback_answer)(C.malloc(C.sizeof_gf__callback_answer))
	if a == nil {
		return nil, errs.Errorf(errs.ErrNoMem, "%s: out of memory for its answer", x.arg)
	}
	defer C.free(unsafe.Pointer(a))
	var in *C.int64_t
	if len(ids) > 0 {
		in = (*C.int64_t)(C.malloc(C.size_t(8 * len(ids))))
		if in == nil {
			return nil, errs.Errorf(errs.ErrNoMem, "%s: out of memory for %d input ids", x.arg, len(ids))
		}
		defer C.free(unsafe.Pointer(in))
		copy(unsafe.Slice((*int64)(unsafe.Pointer(in)), len(ids)), ids)
	}
	rc := C.gf__batch_callback_run(x.c, C.uint64_t(key), in, C.int64_t(len(ids)), C.int64_t(maxOut), a)
	runtime.KeepAlive(x)
	defer C.gf__call_deleter(a.output) // NULL: no-op
	if rc != 0 {
		code := rc
		if code < gfEInval || code > gfECanceled {
			code = gfEInval
		}
		msg := C.GoString(&a.message[0])
		if msg == "" {
			msg = "(no message)"
		}
		if code != rc {
			return nil, errorf(code, "%s returned %d: %s", x.arg, int(rc), msg)
		}
		return nil, errorf(code, "%s", msg)
	}
	if a.output == nil {
		return []int64{}, nil
	}
	t := &a.output.dl_tensor
	what := x.arg + "'s output"
	if t.ndim == 1 && t.shape != nil {
		if m := int64(*t.shape); m > int64(maxOut) {
			return nil, errorf(gfEInval, "%s has %d ids (at most %d)", what, m, maxOut)
		}
	}
	return indexArray(t, what, false)
}

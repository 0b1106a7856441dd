//go:build gftest

package main

/*
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "graphferry.h"

// A gf_batch_callback for the Go tests whose answer its mode (*user) picks:
// the good ones and the garbage a caller's function may hand back.
enum {
  GF__CB_ECHO,       // the input ids, int64
  GF__CB_ECHO32,     // the input ids, int32
  GF__CB_NONE,       // *output left NULL
  GF__CB_FAIL,       // GF_ENOTSUP with a message naming the key
  GF__CB_FAIL_ODD,   // 42 (not a status) with a message
  GF__CB_FAIL_MUTE,  // GF_EINVAL without a message
  GF__CB_FLOAT,      // float64 output
  GF__CB_2D,         // int64 [1, n] output
  GF__CB_HUGE,       // shape[0] = max_output + 1, NULL data
  GF__CB_NULL_DATA,  // int64 [1] with NULL data
  GF__CB_DEVICE,     // on kDLCUDA
  GF__CB_STRIDED,    // int64 [n] with stride 2
  GF__CB_MODES
};
static int gf__cb_modes[GF__CB_MODES];
static int gf__cb_deleted; // deleter calls

typedef struct {
  DLManagedTensor m;
  int64_t shape[2];
  int64_t strides[2];
} gf__cb_tensor;

static void gf__cb_delete(DLManagedTensor *self) {
  free(self->dl_tensor.data);
  free(self);
  gf__cb_deleted++;
}

static DLManagedTensor *gf__cb_make(const DLTensor *in, int bits) {
  gf__cb_tensor *t = calloc(1, sizeof *t);
  int64_t n = in->shape[0];
  t->shape[0] = n;
  t->m.dl_tensor.shape = t->shape;
  t->m.dl_tensor.ndim = 1;
  t->m.dl_tensor.device.device_type = kDLCPU;
  t->m.dl_tensor.dtype.code = kDLInt;
  t->m.dl_tensor.dtype.bits = (uint8_t)bits;
  t->m.dl_tensor.dtype.lanes = 1;
  t->m.deleter = gf__cb_delete;
  if (n > 0) {
    t->m.dl_tensor.data = malloc((size_t)(2 * n) * 8);
    for (int64_t i = 0; i < n; i++) {
      int64_t v = ((const int64_t *)in->data)[i];
      if (bits == 32) ((int32_t *)t->m.dl_tensor.data)[i] = (int32_t)v;
      else ((int64_t *)t->m.dl_tensor.data)[i] = v;
    }
  }
  return &t->m;
}

static int gf__cb_test(void *user, uint64_t key, const DLTensor *in, int64_t max_output,
                       DLManagedTensor **out, char *message, size_t size) {
  int mode = *(int *)user;
  DLManagedTensor *m = NULL;
  switch (mode) {
  case GF__CB_ECHO: *out = gf__cb_make(in, 64); return 0;
  case GF__CB_ECHO32: *out = gf__cb_make(in, 32); return 0;
  case GF__CB_NONE: return 0;
  case GF__CB_FAIL:
    *out = gf__cb_make(in, 64); // released by the library anyway
    snprintf(message, size, "no edges for batch %llu", (unsigned long long)key);
    return GF_ENOTSUP;
  case GF__CB_FAIL_ODD: snprintf(message, size, "odd failure"); return 42;
  case GF__CB_FAIL_MUTE: return GF_EINVAL;
  case GF__CB_FLOAT: m = gf__cb_make(in, 64); m->dl_tensor.dtype.code = kDLFloat; break;
  case GF__CB_2D:
    m = gf__cb_make(in, 64);
    ((gf__cb_tensor *)m)->shape[1] = m->dl_tensor.shape[0];
    ((gf__cb_tensor *)m)->shape[0] = 1;
    m->dl_tensor.ndim = 2;
    break;
  case GF__CB_HUGE:
    m = gf__cb_make(in, 64);
    free(m->dl_tensor.data);
    m->dl_tensor.data = NULL;
    m->dl_tensor.shape[0] = max_output + 1;
    break;
  case GF__CB_NULL_DATA:
    m = gf__cb_make(in, 64);
    free(m->dl_tensor.data);
    m->dl_tensor.data = NULL;
    m->dl_tensor.shape[0] = 1;
    break;
  case GF__CB_DEVICE: m = gf__cb_make(in, 64); m->dl_tensor.device.device_type = kDLCUDA; break;
  case GF__CB_STRIDED:
    m = gf__cb_make(in, 64);
    ((gf__cb_tensor *)m)->strides[0] = 2;
    m->dl_tensor.strides = ((gf__cb_tensor *)m)->strides;
    break;
  }
  *out = m;
  return 0;
}

static gf_batch_callback *gf__cb_table(int mode, uint32_t struct_size, int null_fn) {
  gf_batch_callback *c = calloc(1, sizeof *c);
  gf__cb_modes[mode] = mode;
  c->struct_size = struct_size;
  c->user = &gf__cb_modes[mode];
  c->fn = null_fn ? NULL : gf__cb_test;
  return c;
}
static int gf__cb_deleted_count(void) { return gf__cb_deleted; }
*/
import "C"

import "unsafe"

// The modes of the test callback (gf__cb_test).
const (
	cbEcho     = C.GF__CB_ECHO
	cbEcho32   = C.GF__CB_ECHO32
	cbNone     = C.GF__CB_NONE
	cbFail     = C.GF__CB_FAIL
	cbFailOdd  = C.GF__CB_FAIL_ODD
	cbFailMute = C.GF__CB_FAIL_MUTE
	cbFloat    = C.GF__CB_FLOAT
	cb2D       = C.GF__CB_2D
	cbHuge     = C.GF__CB_HUGE
	cbNullData = C.GF__CB_NULL_DATA
	cbDevice   = C.GF__CB_DEVICE
	cbStrided  = C.GF__CB_STRIDED
)

// testCallback is a gf_batch_callback table (C memory, never freed: a
// test's) of the test callback in mode; structSize 0 means sizeof.
func testCallback(mode int, structSize uint32, nullFn bool) *C.gf_batch_callback {
	if structSize == 0 {
		structSize = uint32(unsafe.Sizeof(C.gf_batch_callback{}))
	}
	n := 0
	if nullFn {
		n = 1
	}
	return C.gf__cb_table(C.int(mode), C.uint32_t(structSize), C.int(n))
}

// testCallbackDeleted counts the deleter calls of the test callback's outputs.
func testCallbackDeleted() int { return int(C.gf__cb_deleted_count()) }

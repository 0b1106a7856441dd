// graphferry.c defines the public gf_* functions of include/graphferry.h
// that do more than forward to a Go export: the work that must not enter Go
// (the fork guard of guard.h: a child process must never run Go code; the
// thread-local error message, status strings, cancel tokens, DLPack
// deleters and the *_versioned wrappers) and the few that forward with
// extra arguments. Every other public function's shim, pure forwarding
// after the fork guard, is generated from the header (boundary_gen.c,
// python/tools/cgen.py). Because the public prototypes are defined against
// the header, the C compiler checks the header's signatures.

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphferry.h"
#include "guard.h"
#include "shim.h"
#include "_cgo_export.h"

// ---------------------------------------------------------------------------
// Thread-local error message

static __thread char *gf__err = NULL;

// The message of a thread that exits is freed by the destructor of a
// thread-specific key holding the same pointer (a program that runs calls
// on short-lived threads, as one interrupting a loader from another thread
// does, would otherwise leak one message per thread).
static pthread_key_t gf__err_key;
static int gf__err_key_ok = 0;
static pthread_once_t gf__err_once = PTHREAD_ONCE_INIT;

static void gf__err_key_init(void) {
  gf__err_key_ok = pthread_key_create(&gf__err_key, free) == 0;
}

// gf__put_error makes msg (malloc'd) the thread's message.
static void gf__put_error(char *msg) {
  pthread_once(&gf__err_once, gf__err_key_init);
  if (gf__err_key_ok && pthread_setspecific(gf__err_key, msg) != 0) {
    free(msg);  // keep the previous message, still owned by the key
    return;
  }
  free(gf__err);
  gf__err = msg;
}

void gf__set_error(const char *msg) {
  size_t n = strlen(msg);
  char *copy = (char *)malloc(n + 1);
  if (copy == NULL) {
    return;  // keep the previous message rather than lose both
  }
  memcpy(copy, msg, n + 1);
  gf__put_error(copy);
}

// gf__errorf sets the thread's message from a format.
static void gf__errorf(const char *format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  gf__set_error(buf);
}

// gf__rename_error replaces the function name `from` that starts the
// thread's message with `to`, for public functions that forward to another
// one's export (gf_batch_take_versioned to gf_batch_take's, ...), so that
// messages start with the name of the function the caller called.
static void gf__rename_error(const char *from, const char *to) {
  size_t n = strlen(from);
  if (gf__err == NULL || strncmp(gf__err, from, n) != 0 || gf__err[n] != ':') {
    return;
  }
  size_t rest = strlen(gf__err + n), m = strlen(to);
  char *msg = (char *)malloc(m + rest + 1);
  if (msg == NULL) {
    return;
  }
  memcpy(msg, to, m);
  memcpy(msg + m, gf__err + n, rest + 1);
  gf__put_error(msg);
}

const char *gf_errmsg(void) {
  GF_GUARD_RETURN(gf__fork_msg);
  return gf__err ? gf__err : "";
}

// ---------------------------------------------------------------------------
// Versions, statuses, memory

int gf_version_number(void) { return GF_VERSION_NUMBER; }

const char *gf_version(void) { return GF_VERSION_STRING; }

// GF_BUILD_ID is defined by capi/build.sh (the checkout's source id).
#define GF__STR2(x) #x
#define GF__STR(x) GF__STR2(x)
#ifdef GF_BUILD_ID
static const char gf__build_id[] = "gfbuild:" GF__STR(GF_BUILD_ID);
#else
static const char gf__build_id[] = "gfbuild:unknown";
#endif

const char *gf_build_id(void) { return gf__build_id + 8; }

const char *gf_status_str(int status) {
  switch (status) {
    case GF_OK: return "ok";
    case GF_EINVAL: return "invalid argument";
    case GF_ETYPE: return "wrong dtype, device or layout";
    case GF_ENOMEM: return "out of memory";
    case GF_EBADHANDLE: return "bad handle";
    case GF_ESTATE: return "not allowed in the current state";
    case GF_EIO: return "input/output error";
    case GF_ENOTSUP: return "not supported";
    case GF_EFORK: return "called in a forked child process";
    case GF_EINTERNAL: return "internal error";
    case GF_ECANCELED: return "cancelled";
    case GF_DONE: return "done";
    case GF_NOT_READY: return "not ready";
  }
  return "unknown status";
}

void gf_free(void *ptr) { free(ptr); }

// ---------------------------------------------------------------------------
// Cancel tokens: plain C (an atomic flag), so that cancelling never enters
// Go and is safe from a signal handler; the engine reads the calling
// thread's token at the start of a cancellable call (gf__cancel_current,
// from Go: a C->Go call runs on the caller's thread) and polls its flag.

struct gf_cancel {
  int32_t magic;
  int32_t flag;  // accessed with __atomic builtins
};

enum { GF__CANCEL_MAGIC = 0x67666378 };

static __thread gf_cancel *gf__cancel_tls = NULL;

int gf_cancel_new(gf_cancel **out) {
  if (out == NULL) {
    gf__errorf("gf_cancel_new: out is NULL");
    return GF_EINVAL;
  }
  *out = NULL;
  gf_cancel *t = (gf_cancel *)malloc(sizeof *t);
  if (t == NULL) {
    gf__errorf("gf_cancel_new: out of memory");
    return GF_ENOMEM;
  }
  t->magic = GF__CANCEL_MAGIC;
  __atomic_store_n(&t->flag, 0, __ATOMIC_SEQ_CST);
  *out = t;
  return GF_OK;
}

int gf_cancel_request(gf_cancel *token) {
  if (token == NULL || token->magic != GF__CANCEL_MAGIC) {
    return GF_EINVAL;  // no message: this may run in a signal handler
  }
  __atomic_store_n(&token->flag, 1, __ATOMIC_SEQ_CST);
  return GF_OK;
}

int gf_cancel_is_requested(const gf_cancel *token, int32_t *out) {
  if (token == NULL || token->magic != GF__CANCEL_MAGIC) {
    return GF_EINVAL;
  }
  if (out == NULL) {
    return GF_EINVAL;
  }
  *out = __atomic_load_n(&token->flag, __ATOMIC_SEQ_CST);
  return GF_OK;
}

int gf_cancel_bind(gf_cancel *token) {
  if (token != NULL && token->magic != GF__CANCEL_MAGIC) {
    gf__errorf("gf_cancel_bind: token is not a gf_cancel token (freed?)");
    return GF_EINVAL;
  }
  gf__cancel_tls = token;
  return GF_OK;
}

void gf_cancel_free(gf_cancel *token) {
  if (token == NULL) {
    return;
  }
  if (gf__cancel_tls == token) {
    gf__cancel_tls = NULL;
  }
  token->magic = 0;
  free(token);
}

void *gf__cancel_current(void) { return gf__cancel_tls; }

int32_t gf__cancel_flag(void *token) {
  return __atomic_load_n(&((gf_cancel *)token)->flag, __ATOMIC_SEQ_CST);
}

// ---------------------------------------------------------------------------
// DLPack tensors made by graphferry: one malloc holds the DLManagedTensor and
// its shape; manager_ctx is the data buffer (from gf__buf_alloc, possibly
// NULL).

typedef struct {
  DLManagedTensor m;
  int64_t shape[];
} gf__tensor;

static void gf__tensor_deleter(DLManagedTensor *self) {
  if (self == NULL) {
    return;
  }
  gf__buf_free(self->manager_ctx);
  free(self);
}

// The caller (Go) writes the ndim entries of the returned tensor's shape:
// C never reads the shape out of Go memory (valgrind's memcheck loses track
// of Go's memory as the runtime moves goroutine stacks, and would report
// such reads at random; see include/graphferry-valgrind.supp).
DLManagedTensor *gf__make_tensor(void *data, uint8_t code, uint8_t bits,
                                 int32_t ndim) {
  gf__tensor *t =
      (gf__tensor *)calloc(1, sizeof(gf__tensor) + (size_t)ndim * sizeof(int64_t));
  if (t == NULL) {
    return NULL;
  }
  t->m.dl_tensor.data = data;
  t->m.dl_tensor.device.device_type = kDLCPU;
  t->m.dl_tensor.device.device_id = 0;
  t->m.dl_tensor.ndim = ndim;
  t->m.dl_tensor.dtype.code = code;
  t->m.dl_tensor.dtype.bits = bits;
  t->m.dl_tensor.dtype.lanes = 1;
  t->m.dl_tensor.shape = t->shape;
  t->m.dl_tensor.strides = NULL;
  t->m.dl_tensor.byte_offset = 0;
  t->m.manager_ctx = data;
  t->m.deleter = gf__tensor_deleter;
  return &t->m;
}

// Device tensors (mode 2, the CUDA library): data is device memory of a
// loader's pool, which Go must give back; a deleter, plain C that may run
// on any thread at any time (also after gf_loader_close), only queues the
// tensor's return record (allocated with it, so that deleting cannot fail)
// under a mutex. Go drains the queue on its next device call
// (capi/device.go: gf_loader_next, gf_batch_close, gf_loader_close, ...)
// and gives each block back after the consumer's stream.
static pthread_mutex_t gf__devret_mu = PTHREAD_MUTEX_INITIALIZER;
static gf__devret *gf__devret_head = NULL;

static void gf__dev_return(gf__devret *r) {
  if (r == NULL) {
    return;
  }
  pthread_mutex_lock(&gf__devret_mu);
  r->next = gf__devret_head;
  gf__devret_head = r;
  pthread_mutex_unlock(&gf__devret_mu);
}

gf__devret *gf__dev_drain(void) {
  pthread_mutex_lock(&gf__devret_mu);
  gf__devret *r = gf__devret_head;
  gf__devret_head = NULL;
  pthread_mutex_unlock(&gf__devret_mu);
  return r;
}

static void gf__dev_deleter(DLManagedTensor *self) {
  if (self == NULL) {
    return;
  }
  gf__dev_return((gf__devret *)self->manager_ctx);
  free(self);
}

static void gf__dev_vdeleter(DLManagedTensorVersioned *self) {
  if (self == NULL) {
    return;
  }
  gf__dev_return((gf__devret *)self->manager_ctx);
  free(self);
}

// gf__thread_id names the calling thread (a per-thread stream, handle 2,
// is that thread's own).
int64_t gf__thread_id(void) { return (int64_t)(uintptr_t)pthread_self(); }

// gf__make_dev_tensor is gf__make_tensor for device memory at ptr of CUDA
// device device_id, taken on the calling thread; Go writes the shape.
DLManagedTensor *gf__make_dev_tensor(uintptr_t ptr, uint8_t code, uint8_t bits, int32_t ndim, int32_t device_id,
                                     uint64_t owner, uint64_t alloc, uintptr_t stream) {
  gf__devret *r = (gf__devret *)calloc(1, sizeof(gf__devret));
  if (r == NULL) {
    return NULL;
  }
  DLManagedTensor *t = gf__make_tensor((void *)ptr, code, bits, ndim);
  if (t == NULL) {
    free(r);
    return NULL;
  }
  r->owner = owner;
  r->alloc = alloc;
  r->ptr = ptr;
  r->stream = stream;
  r->thread = gf__thread_id();
  t->dl_tensor.device.device_type = kDLCUDA;
  t->dl_tensor.device.device_id = device_id;
  t->manager_ctx = r;
  t->deleter = gf__dev_deleter;
  return t;
}

// Versioned tensors made by graphferry: the same layout with the DLPack 1.x
// header. The shape array has room for GF__MAX_NDIM dimensions, so that the
// struct can be allocated before a field is taken out of a batch (taking
// cannot be undone, so nothing may fail after it).
#define GF__MAX_NDIM 8

typedef struct {
  DLManagedTensorVersioned m;
  int64_t shape[GF__MAX_NDIM];
} gf__vtensor;

static void gf__vtensor_deleter(DLManagedTensorVersioned *self) {
  if (self == NULL) {
    return;
  }
  gf__buf_free(self->manager_ctx);
  free(self);
}

// gf__vtensor_new allocates an empty versioned tensor, or sets the message
// of fn and returns NULL.
static gf__vtensor *gf__vtensor_new(const char *fn) {
  gf__vtensor *v = (gf__vtensor *)calloc(1, sizeof(gf__vtensor));
  if (v == NULL) {
    gf__errorf("%s: out of memory allocating a DLPack tensor", fn);
  }
  return v;
}

// gf__vtensor_fill moves legacy tensor t, made by gf__make_tensor, into v:
// v takes over t's data, t's header is freed. Tensors of more than
// GF__MAX_NDIM dimensions cannot occur (the Go side accepts no more, see
// maxNDim); should one, both are freed and NULL is returned.
static DLManagedTensorVersioned *gf__vtensor_fill(gf__vtensor *v, DLManagedTensor *t) {
  if (t->dl_tensor.ndim < 0 || t->dl_tensor.ndim > GF__MAX_NDIM) {
    gf__errorf("graphferry: internal error: a tensor of %d dimensions", (int)t->dl_tensor.ndim);
    t->deleter(t);
    free(v);
    return NULL;
  }
  v->m.version.major = DLPACK_MAJOR_VERSION;
  v->m.version.minor = DLPACK_MINOR_VERSION;
  v->m.manager_ctx = t->manager_ctx;
  v->m.deleter = t->deleter == gf__dev_deleter ? gf__dev_vdeleter : gf__vtensor_deleter;
  // The memory was made for this tensor and nothing else refers to it.
  v->m.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
  v->m.dl_tensor = t->dl_tensor;
  memcpy(v->shape, t->dl_tensor.shape, (size_t)t->dl_tensor.ndim * sizeof(int64_t));
  v->m.dl_tensor.shape = t->dl_tensor.ndim > 0 ? v->shape : NULL;
  free(t);  // the header only: the data now belongs to v
  return &v->m;
}

// gf__versioned_begin starts a *_versioned function that takes a tensor out
// of the engine: it checks out_tensor and allocates the versioned header
// first, since nothing may fail after the take (it cannot be undone).
static int gf__versioned_begin(const char *fn, DLManagedTensorVersioned **out_tensor, gf__vtensor **v) {
  if (out_tensor == NULL) {
    gf__errorf("%s: out_tensor is NULL", fn);
    return GF_EINVAL;
  }
  *out_tensor = NULL;
  *v = gf__vtensor_new(fn);
  return *v != NULL ? GF_OK : GF_ENOMEM;
}

// gf__versioned_finish ends it: rc and t are the legacy call's result; on
// failure the header is freed and the message names fn instead of base.
static int gf__versioned_finish(const char *fn, const char *base, gf__vtensor *v, int rc, DLManagedTensor *t,
                                DLManagedTensorVersioned **out_tensor) {
  if (rc != GF_OK) {
    free(v);
    gf__rename_error(base, fn);
    return rc;
  }
  *out_tensor = gf__vtensor_fill(v, t);
  return *out_tensor != NULL ? GF_OK : GF_EINTERNAL;
}

void gf__call_deleter(DLManagedTensor *t) {
  if (t != NULL && t->deleter != NULL) {
    t->deleter(t);
  }
}

void gf__release_arrow(struct ArrowSchema *schema, struct ArrowArray *array) {
  if (array != NULL && array->release != NULL) {
    array->release(array);
  }
  if (schema != NULL && schema->release != NULL) {
    schema->release(schema);
  }
}

// ---------------------------------------------------------------------------
// Graphs

int gf_graph_from_csc(const DLTensor *indptr, const DLTensor *indices,
                      const DLTensor *edge_ids, const gf_graph_options *options,
                      gf_graph **out_graph) {
  GF_GUARD();
  return gfgo_graph_from_compressed(0, (DLTensor *)indptr, (DLTensor *)indices,
                                    (DLTensor *)edge_ids,
                                    (gf_graph_options *)options,
                                    (uintptr_t *)out_graph);
}

int gf_graph_from_csr(const DLTensor *indptr, const DLTensor *indices,
                      const DLTensor *edge_ids, const gf_graph_options *options,
                      gf_graph **out_graph) {
  GF_GUARD();
  return gfgo_graph_from_compressed(1, (DLTensor *)indptr, (DLTensor *)indices,
                                    (DLTensor *)edge_ids,
                                    (gf_graph_options *)options,
                                    (uintptr_t *)out_graph);
}

int gf_graph_num_nodes(const gf_graph *graph, int64_t *out) {
  GF_GUARD();
  return gfgo_graph_count((uintptr_t)graph, 0, out);
}

int gf_graph_num_edges(const gf_graph *graph, int64_t *out) {
  GF_GUARD();
  return gfgo_graph_count((uintptr_t)graph, 1, out);
}

int gf_graph_num_patches(const gf_graph *graph, int32_t *out) {
  GF_GUARD();
  int64_t n = 0;
  int rc = gfgo_graph_count((uintptr_t)graph, 2, out ? &n : NULL);
  if (rc == GF_OK) {
    *out = (int32_t)n;
  }
  return rc;
}

int gf_graph_get_node_data_versioned(gf_graph *graph, const char *name,
                                     DLManagedTensorVersioned **out_tensor) {
  static const char fn[] = "gf_graph_get_node_data_versioned";
  GF_GUARD();
  gf__vtensor *v = NULL;
  int rc = gf__versioned_begin(fn, out_tensor, &v);
  if (rc != GF_OK) {
    return rc;
  }
  DLManagedTensor *t = NULL;
  rc = gfgo_graph_get_node_data((uintptr_t)graph, (char *)name, &t);
  return gf__versioned_finish(fn, "gf_graph_get_node_data", v, rc, t, out_tensor);
}

// A legacy DLManagedTensor standing for a caller's versioned one, so that
// gf_graph_set_node_data_versioned can hand it to the one implementation:
// its deleter frees the adapter and calls the versioned tensor's deleter.
typedef struct {
  DLManagedTensor m;
  DLManagedTensorVersioned *v;
} gf__adapter;

static void gf__adapter_deleter(DLManagedTensor *self) {
  if (self == NULL) {
    return;
  }
  DLManagedTensorVersioned *v = ((gf__adapter *)self)->v;
  free(self);
  if (v != NULL && v->deleter != NULL) {
    v->deleter(v);
  }
}

int gf_graph_set_node_data_versioned(gf_graph *graph, const char *name,
                                     DLManagedTensorVersioned *tensor) {
  static const char fn[] = "gf_graph_set_node_data_versioned";
  GF_GUARD();
  if (tensor == NULL) {
    gf__errorf("%s: tensor is NULL", fn);
    return GF_EINVAL;
  }
  // Per DLPack, nothing but version may be read under another major version.
  if (tensor->version.major != DLPACK_MAJOR_VERSION) {
    gf__errorf("%s: tensor has DLPack version %u.%u; graphferry reads major version %d",
               fn, (unsigned)tensor->version.major, (unsigned)tensor->version.minor,
               DLPACK_MAJOR_VERSION);
    return GF_ETYPE;
  }
  gf__adapter *a = (gf__adapter *)calloc(1, sizeof(gf__adapter));
  if (a == NULL) {
    gf__errorf("%s: out of memory", fn);
    return GF_ENOMEM;
  }
  a->m.dl_tensor = tensor->dl_tensor;
  a->m.manager_ctx = tensor;
  a->m.deleter = gf__adapter_deleter;
  a->v = tensor;
  int rc = gfgo_graph_set_node_data((uintptr_t)graph, (char *)name, &a->m);
  if (rc != GF_OK) {
    free(a);  // the caller keeps tensor
    gf__rename_error("gf_graph_set_node_data", fn);
  }
  return rc;
}

// The 0.3.0 dataset writers: their _into forms with the default options.
int gf_dataset_convert_npy(const char *src_dir, const char *dst_dir) {
  return gf_dataset_convert_npy_into(src_dir, dst_dir, NULL);
}

int gf_dataset_generate(const char *preset, const char *dst_dir, uint64_t seed, int32_t num_threads) {
  return gf_dataset_generate_into(preset, dst_dir, seed, num_threads, NULL);
}

// ---------------------------------------------------------------------------
// Sampling and batches

int gf_batch_take_versioned(gf_batch *batch, int32_t field, int32_t layer,
                            DLManagedTensorVersioned **out_tensor) {
  static const char fn[] = "gf_batch_take_versioned";
  GF_GUARD();
  gf__vtensor *v = NULL;
  int rc = gf__versioned_begin(fn, out_tensor, &v);
  if (rc != GF_OK) {
    return rc;
  }
  DLManagedTensor *t = NULL;
  rc = gfgo_batch_take((uintptr_t)batch, field, layer, &t);
  return gf__versioned_finish(fn, "gf_batch_take", v, rc, t, out_tensor);
}

int gf_batch_take_node_data_versioned(gf_batch *batch, const char *name,
                                      DLManagedTensorVersioned **out_tensor) {
  static const char fn[] = "gf_batch_take_node_data_versioned";
  GF_GUARD();
  gf__vtensor *v = NULL;
  int rc = gf__versioned_begin(fn, out_tensor, &v);
  if (rc != GF_OK) {
    return rc;
  }
  DLManagedTensor *t = NULL;
  rc = gfgo_batch_take_node_data((uintptr_t)batch, (char *)name, &t);
  return gf__versioned_finish(fn, "gf_batch_take_node_data", v, rc, t, out_tensor);
}

int gf_tensor_to_versioned(DLManagedTensor *tensor,
                           DLManagedTensorVersioned **out_tensor) {
  static const char fn[] = "gf_tensor_to_versioned";
  GF_GUARD();
  if (out_tensor == NULL) {
    gf__errorf("%s: out_tensor is NULL", fn);
    return GF_EINVAL;
  }
  *out_tensor = NULL;
  if (tensor == NULL) {
    gf__errorf("%s: tensor is NULL", fn);
    return GF_EINVAL;
  }
  // Only our own tensors: their layout (and ndim bound) is known, and their
  // data is ours to re-wrap.
  if ((tensor->deleter != gf__tensor_deleter && tensor->deleter != gf__dev_deleter) ||
      tensor->dl_tensor.ndim < 0 || tensor->dl_tensor.ndim > GF__MAX_NDIM) {
    gf__errorf("%s: tensor was not made by graphferry (its deleter is not graphferry's)", fn);
    return GF_EINVAL;
  }
  gf__vtensor *v = gf__vtensor_new(fn);
  if (v == NULL) {
    return GF_ENOMEM;
  }
  *out_tensor = gf__vtensor_fill(v, tensor);
  return GF_OK;  // ndim was checked above
}

// ---------------------------------------------------------------------------
// Loaders


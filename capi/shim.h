// shim.h declares the C helpers of graphferry.c that the Go side calls.
// Internal to capi; not part of the public interface.
#ifndef GRAPHFERRY_SHIM_H
#define GRAPHFERRY_SHIM_H

#include "graphferry.h"

void gf__set_error(const char *msg);
DLManagedTensor *gf__make_tensor(void *data, uint8_t code, uint8_t bits,
                                 int32_t ndim);
void gf__call_deleter(DLManagedTensor *t);
// Device tensors (the CUDA library's loaders, see graphferry.c): made with
// their return record; a deleter queues the record, gf__dev_drain hands the
// queue to Go, which gives the memory back and frees each record.
typedef struct gf__devret {
  struct gf__devret *next;
  uint64_t owner;    // the loader's device state (capi/device.go)
  uint64_t alloc;    // index of the batch's device allocator in it
  uintptr_t ptr;     // the device memory
  uintptr_t stream;  // the consumer's stream to order the reuse after (0: none)
  int64_t thread;    // the taking thread (gf__thread_id), whose stream 2 (per-thread) is meant
} gf__devret;
DLManagedTensor *gf__make_dev_tensor(uintptr_t ptr, uint8_t code, uint8_t bits, int32_t ndim, int32_t device_id,
                                     uint64_t owner, uint64_t alloc, uintptr_t stream);
gf__devret *gf__dev_drain(void);
int64_t gf__thread_id(void);
void gf__release_arrow(struct ArrowSchema *schema, struct ArrowArray *array);

// bufpool.c: buffers of exported tensors (see there).
void *gf__buf_alloc(size_t n);
void gf__buf_free(void *data);
void gf__buf_pool_use(int delta);
// The pools the buffers come from (the default one, gf_host_pool's).
typedef struct gf__pool gf__pool;
// Host allocators (gf_allocator), reference-counted by their loader and
// their live buffers; NULL when out of memory or (*closed_pool set) a for
// host pool's allocator whose pool was closed.
typedef struct gf__host gf__host;
gf__host *gf__host_new(gf_allocator a, int *closed_pool);
void gf__host_release(gf__host *h);
void *gf__buf_alloc_host(gf__host *h, size_t n);
#ifdef GF_GFTEST
void gf__buf_pool_stats(int64_t *count, int64_t *bytes, int64_t *users);
#endif

// Cancel tokens (graphferry.c): the calling thread's token (NULL: none) and
// its flag.
void *gf__cancel_current(void);
int32_t gf__cancel_flag(void *token);

#endif

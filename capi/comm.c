// comm.c: the exchange blocks of the header's "Communicators" section (its
// public functions' shims are generated: boundary_gen.c).

#include "graphferry.h"
#include "shim.h"

#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// Exchange blocks (capi/comm.go's cExchanger.Exchange): one malloc holding a
// reference count and the two DLPack tensors of all_to_all_dl, then the
// message pointers and sizes and the messages (sent, then received). Go
// holds one reference from gf__xblock_new until it has read the answer (or
// its callback returned, when Go stopped waiting for it); each tensor handed
// to all_to_all_dl holds one more, let go by its deleter, which the host
// calls on any thread, possibly after its transport gave up on the
// exchange. The last reference frees the block. Nothing here can fail once
// the block exists.

typedef struct {
  int64_t refs;
  DLManagedTensor t[2];  // all_to_all_dl's send and recv
  int64_t shape[2];
  int64_t pad;  // the messages' table 16-byte aligned
} gf__xblock;

#ifdef GF_GFTEST
static int64_t gf__xblocks_live;
int64_t gf__xblock_live(void) { return __atomic_load_n(&gf__xblocks_live, __ATOMIC_SEQ_CST); }
size_t gf__xblock_header(void) { return sizeof(gf__xblock); }
#endif

void *gf__xblock_new(size_t n) {
  gf__xblock *b = (gf__xblock *)malloc(sizeof(gf__xblock) + n);
  if (b == NULL) {
    return NULL;
  }
  b->refs = 1;
#ifdef GF_GFTEST
  __atomic_add_fetch(&gf__xblocks_live, 1, __ATOMIC_SEQ_CST);
#endif
  return b + 1;
}

static void gf__xblock_unref(gf__xblock *b) {
  if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0) {
#ifdef GF_GFTEST
    __atomic_sub_fetch(&gf__xblocks_live, 1, __ATOMIC_SEQ_CST);
#endif
    free(b);
  }
}

void gf__xblock_release(void *p) { gf__xblock_unref((gf__xblock *)p - 1); }

static void gf__xblock_deleter(DLManagedTensor *self) {
  if (self != NULL) {
    gf__xblock_unref((gf__xblock *)self->manager_ctx);
  }
}

// gf__comm_all_to_all runs c's all_to_all_dl when it has one, else its
// all_to_all, over the block p of n ranks: 2n message pointers (send, recv;
// for all_to_all), 2n sizes, then send_total bytes to send and the bytes to
// receive. The tensors view the messages in place: no copy.
int gf__comm_all_to_all(const gf_comm *c, void *p, int32_t n, int64_t send_total, int64_t recv_total) {
  void **ptrs = (void **)p;
  int64_t *sizes = (int64_t *)(ptrs + 2 * (size_t)n);
  uint8_t *data = (uint8_t *)(sizes + 2 * (size_t)n);
  if (c->all_to_all_dl == NULL) {
    return c->all_to_all(c->user, (const void *const *)ptrs, sizes, (void *const *)(ptrs + n), sizes + n);
  }
  gf__xblock *b = (gf__xblock *)p - 1;
  for (int k = 0; k < 2; k++) {
    DLManagedTensor *t = &b->t[k];
    memset(t, 0, sizeof *t);
    b->shape[k] = k == 0 ? send_total : recv_total;
    t->dl_tensor.data = k == 0 ? data : data + send_total;
    t->dl_tensor.device.device_type = kDLCPU;
    t->dl_tensor.ndim = 1;
    t->dl_tensor.dtype.code = kDLUInt;
    t->dl_tensor.dtype.bits = 8;
    t->dl_tensor.dtype.lanes = 1;
    t->dl_tensor.shape = &b->shape[k];
    t->manager_ctx = b;
    t->deleter = gf__xblock_deleter;
  }
  __atomic_add_fetch(&b->refs, 2, __ATOMIC_ACQ_REL);
  return c->all_to_all_dl(c->user, &b->t[0], sizes, &b->t[1], sizes + n);
}

/*
 * test_alloc.c: loaders whose output tensors come from the host's allocator
 * (gf_loader_options.allocator, gf_allocator), as a GPU consumer's
 * page-locked memory would. A counting allocator records every block:
 *
 *   - every byte of every tensor a loader hands out (topology, ids, node
 *     data, labels) lies in a block of the host's, and the batches equal a
 *     loader's on the library's own memory;
 *   - every block is freed exactly once, with the size it was asked for,
 *     whether the caller takes the tensors out and drops them after the
 *     loader is closed, or leaves them to gf_batch_close, or the loader is
 *     closed with batches in flight;
 *   - an allocator that fails after k blocks makes gf_loader_next fail with
 *     GF_ENOMEM naming the host allocator, and leaks nothing;
 *   - bad allocators are refused at gf_loader_open (struct_size, reserved,
 *     NULL functions);
 *   - gf_sample with options->allocator: for every k, an allocator that
 *     fails after k blocks makes the call fail with GF_ENOMEM naming the
 *     host allocator and no batch, every block freed, and the graph then
 *     samples as before; a loader refuses a sample allocator;
 *   - a host pool (gf_host_pool_open's allocator): every tensor in a mapping
 *     reported once by gf_host_pool_new_chunks; fenced, a freed buffer that
 *     a reader still holds (a pending copy's stand-in) keeps its bytes until
 *     the fence started after its free passed, while poisoned buffers show
 *     any early reuse; its limit fails a batch with GF_ENOMEM; bad calls and
 *     a closed pool are refused; every buffer comes back once.
 *
 *     test_alloc [DATASET_DIR]    (default: the shipped Cora)
 */
#include "gftest.h"

typedef struct {
  gf_sample_options so;
  gf_loader_options lo;
  int32_t fanouts[2];
  const char *feats[1];
  const char *labels[1];
} options;

static void options_init(options *o, const gf_allocator *a) {
  memset(o, 0, sizeof *o);
  o->fanouts[0] = 10;
  o->fanouts[1] = 5;
  o->so.struct_size = sizeof o->so;
  o->so.num_hops = 2;
  o->so.fanouts = o->fanouts;
  o->so.seed = 7;
  o->so.num_threads = 2;
  o->feats[0] = "feat";
  o->labels[0] = "label";
  o->lo.struct_size = sizeof o->lo;
  o->lo.sample = &o->so;
  o->lo.batch_size = 64;
  o->lo.shuffle = 1;
  o->lo.shuffle_seed = 3;
  o->lo.num_feature_names = 1;
  o->lo.feature_names = o->feats;
  o->lo.num_label_names = 1;
  o->lo.label_names = o->labels;
  o->lo.allocator = a;
}

/* The fields a batch of a two-hop loader has, with the layer each needs. */
static const struct {
  int32_t field, layer;
} FIELDS[] = {
    {GF_FIELD_NODES, 0},   {GF_FIELD_HOP_COUNTS, 0}, {GF_FIELD_SEEDS, 0}, {GF_FIELD_INDPTR, 0},
    {GF_FIELD_INDICES, 0}, {GF_FIELD_EDGE_IDS, 0},   {GF_FIELD_INDPTR, 1}, {GF_FIELD_INDICES, 1},
    {GF_FIELD_EDGE_IDS, 1},
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

/* take_all takes every field and the node data of b out (b is closed). */
static int take_all(gf_batch *b, DLManagedTensor **out) {
  int n = 0;
  for (size_t i = 0; i < NFIELDS; i++) {
    out[n] = NULL;
    CHECK(gf_batch_take(b, FIELDS[i].field, FIELDS[i].layer, &out[n]) == GF_OK && out[n] != NULL, "take field %d/%d",
          FIELDS[i].field, FIELDS[i].layer);
    if (out[n]) n++;
  }
  out[n] = NULL;
  CHECK(gf_batch_take_node_data(b, "feat", &out[n]) == GF_OK && out[n] != NULL, "take feat");
  if (out[n]) n++;
  out[n] = NULL;
  CHECK(gf_batch_take_node_data(b, "label", &out[n]) == GF_OK && out[n] != NULL, "take label");
  if (out[n]) n++;
  gf_batch_close(b);
  return n;
}

/* An epoch with the host's memory equals one with the library's, every byte
   handed out lies in the host's blocks, and every block comes back once,
   also for tensors dropped after the loader and the graph were closed. */
static void test_every_byte_from_the_host(const char *dir) {
  gft_counting c;
  gft_counting_init(&c);
  gf_allocator a = gft_allocator_of(&c);
  gf_graph *g = NULL;
  if (gf_graph_open(dir, NULL, &g) != GF_OK) {
    CHECK(0, "gf_graph_open(%s)", dir);
    return;
  }
  int64_t n = 0;
  gf_graph_num_nodes(g, &n);
  int64_t *seeds = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  for (int64_t i = 0; i < n; i++) seeds[i] = i;
  int64_t shape = n > 640 ? 640 : n;
  DLTensor st = gft_i64(seeds, &shape);
  options host, own;
  options_init(&host, &a);
  options_init(&own, NULL);
  gf_loader *lh = NULL, *lo = NULL;
  CHECK(gf_loader_open(g, &st, &host.lo, &lh) == GF_OK, "open (host memory)");
  CHECK(gf_loader_open(g, &st, &own.lo, &lo) == GF_OK, "open (own memory)");
  if (!lh || !lo) {
    free(seeds);
    return;
  }
  CHECK(gf_loader_start(lh, 0) == GF_OK && gf_loader_start(lo, 0) == GF_OK, "start");
  enum { KEEP = 4 };
  DLManagedTensor *kept[KEEP][NFIELDS + 2];
  int nkept[KEEP] = {0};
  int batches = 0, tensors = 0;
  for (;;) {
    gf_batch *bh = NULL, *bo = NULL;
    int rh = gf_loader_next(lh, &bh), ro = gf_loader_next(lo, &bo);
    CHECK(rh == ro, "next: %d vs %d", rh, ro);
    if (rh != GF_OK || ro != GF_OK) {
      CHECK(rh == GF_DONE, "end of epoch: %d", rh);
      if (bh) gf_batch_close(bh);
      if (bo) gf_batch_close(bo);
      break;
    }
    DLManagedTensor *th[NFIELDS + 2], *to[NFIELDS + 2];
    int k = take_all(bh, th), m = take_all(bo, to);
    CHECK(k == m && k == (int)NFIELDS + 2, "tensors %d vs %d", k, m);
    for (int i = 0; i < k && i < m; i++) {
      const DLTensor *t = &th[i]->dl_tensor;
      size_t bytes = gft_tensor_bytes(t);
      CHECK(bytes == 0 || gft_owned(&c, (const char *)t->data + t->byte_offset, bytes),
            "tensor %d of batch %d not in a host block", i, batches);
      CHECK(gft_same_tensor(th[i], to[i]), "tensor %d of batch %d differs from the library-memory loader's", i, batches);
      tensors++;
      gft_drop(to[i]);
    }
    if (batches < KEEP) {  /* dropped after everything is closed */
      memcpy(kept[batches], th, sizeof th);
      nkept[batches] = k;
    } else {
      for (int i = 0; i < k; i++) gft_drop(th[i]);
    }
    batches++;
  }
  CHECK(batches >= 10 && tensors == batches * (int)(NFIELDS + 2), "%d batches, %d tensors", batches, tensors);
  /* The next epoch is stopped with batches in flight: closing frees them. */
  CHECK(gf_loader_start(lh, 1) == GF_OK, "start epoch 1");
  gf_batch *b = NULL;
  CHECK(gf_loader_next(lh, &b) == GF_OK && b != NULL, "next of epoch 1");
  gf_batch_close(b); /* left to gf_batch_close: its tensors are never taken */
  gf_loader_close(lh);
  gf_loader_close(lo);
  gf_graph_close(g);
  pthread_mutex_lock(&c.mu);
  long live_kept = c.n;
  pthread_mutex_unlock(&c.mu);
  CHECK(live_kept > 0, "the kept tensors' blocks are still live after the loader was closed");
  for (int i = 0; i < KEEP; i++) {
    for (int j = 0; j < nkept[i]; j++) gft_drop(kept[i][j]);
  }
  gft_check_all_freed(&c);
  free(seeds);
}

/* open_node_loader opens test_failing_allocator's loader on allocator a. */
typedef struct {
  gf_graph *g;
  DLTensor seeds;
} node_ctx;

static int open_node_loader(void *ctx, const gf_allocator *a, gf_loader **out) {
  node_ctx *x = (node_ctx *)ctx;
  options o;
  options_init(&o, a);
  o.lo.queue_capacity = 1;
  return gf_loader_open(x->g, &x->seeds, &o.lo, out);
}

/* An allocator that fails after k blocks: gf_loader_next fails clearly, and
   nothing is leaked, for several k (a failure at each point of a batch). */
static void test_failing_allocator(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t seeds[256];
  for (int i = 0; i < 256; i++) seeds[i] = i * 3;
  int64_t shape = 256;
  node_ctx ctx = {g, gft_i64(seeds, &shape)};
  int failed_runs = gft_failing_allocator_runs(open_node_loader, &ctx, 40, 3);
  CHECK(failed_runs >= 10, "the allocator failed in %d runs", failed_runs);
  gf_graph_close(g);
}

/* Bad allocators are refused with messages naming the field. */
static void test_bad_allocators(const char *dir) {
  gf_graph *g = NULL;
  if (gf_graph_open(dir, NULL, &g) != GF_OK) {
    CHECK(0, "gf_graph_open(%s)", dir);
    return;
  }
  int64_t seeds[4] = {0, 1, 2, 3}, shape = 4;
  DLTensor st = gft_i64(seeds, &shape);
  gft_counting c;
  gft_counting_init(&c);
  gf_allocator a = gft_allocator_of(&c);
  options o;
  options_init(&o, &a);
  gf_loader *l = NULL;
  a.alloc = NULL;
  CHECK_ERR(gf_loader_open(g, &st, &o.lo, &l), GF_EINVAL, "options->allocator->alloc is NULL");
  CHECK(l == NULL, "no loader on failure");
  a = gft_allocator_of(&c);
  a.free = NULL;
  CHECK_ERR(gf_loader_open(g, &st, &o.lo, &l), GF_EINVAL, "options->allocator->free is NULL");
  a = gft_allocator_of(&c);
  a.reserved = 1;
  CHECK_ERR(gf_loader_open(g, &st, &o.lo, &l), GF_EINVAL, "options->allocator->reserved = 1");
  a = gft_allocator_of(&c);
  a.struct_size = 3;
  CHECK_ERR(gf_loader_open(g, &st, &o.lo, &l), GF_EINVAL, "options->allocator->struct_size = 3");
  /* A loader options struct of an older size has no allocator: the
     library's memory, whatever follows it. */
  a = gft_allocator_of(&c);
  o.lo.struct_size = 80;
  CHECK(gf_loader_open(g, &st, &o.lo, &l) == GF_OK, "open with the older struct_size");
  if (l) {
    gf_batch *b = NULL;
    CHECK(gf_loader_start(l, 0) == GF_OK && gf_loader_next(l, &b) == GF_OK, "next");
    if (b) gf_batch_close(b);
    gf_loader_close(l);
  }
  CHECK(c.allocs == 0, "an allocator beyond struct_size is not used: %ld allocs", c.allocs);
  gf_graph_close(g);
}

/* gf_sample on a host allocator failing after k blocks, for every k up to
   the blocks a batch takes and one more: GF_ENOMEM naming the host
   allocator and no batch when it failed, a batch whose tensors all lie in
   its blocks otherwise; never a block leaked or freed wrongly; the graph
   samples the same batch afterwards. */
static void test_sample_failing_allocator(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t seeds[300];
  for (int i = 0; i < 300; i++) seeds[i] = i * 7;
  int64_t shape = 300;
  DLTensor st = gft_i64(seeds, &shape);
  options o;
  options_init(&o, NULL);
  /* The library's memory: the reference batch. */
  gf_batch *ref = NULL;
  CHECK(gf_sample(g, &st, &o.so, &ref) == GF_OK && ref != NULL, "gf_sample: %s", gf_errmsg());
  if (!ref) {
    gf_graph_close(g);
    return;
  }
  DLManagedTensor *want = NULL;
  CHECK(gf_batch_take(ref, GF_FIELD_NODES, 0, &want) == GF_OK, "take nodes");
  gf_batch_close(ref);
  long blocks = -1;
  int failed_runs = 0;
  static gft_counting c; /* large: off the stack (valgrind's is small) */
  for (long k = -1; k <= blocks; k++) { /* k = -1: never fails, counts the blocks */
    gft_counting_init(&c);
    gf_allocator a = gft_allocator_of(&c);
    o.so.allocator = &a;
    c.fail_after = k;
    gf_batch *b = NULL;
    int rc = gf_sample(g, &st, &o.so, &b);
    if (c.failures > 0) {
      failed_runs++;
      CHECK(rc == GF_ENOMEM && strstr(gf_errmsg(), "host allocator") != NULL, "k=%ld: gf_sample returned %d: %s", k,
            rc, gf_errmsg());
      CHECK(b == NULL, "k=%ld: no batch on failure", k);
    } else {
      CHECK(rc == GF_OK && b != NULL, "k=%ld: gf_sample returned %d: %s", k, rc, gf_errmsg());
      DLManagedTensor *nodes = NULL;
      if (b && gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes && want) {
        const DLTensor *t = &nodes->dl_tensor, *w = &want->dl_tensor;
        CHECK(t->shape[0] == w->shape[0] && memcmp(t->data, w->data, (size_t)w->shape[0] * 8) == 0,
              "k=%ld: the nodes equal the library memory's", k);
        CHECK(gft_owned(&c, t->data, (size_t)t->shape[0] * 8), "k=%ld: the nodes lie in a host block", k);
      }
      if (b) gf_batch_close(b); /* the blocks left in the batch */
      if (nodes) nodes->deleter(nodes); /* the block taken out */
      if (blocks < 0) {
        blocks = c.allocs;
        CHECK(blocks >= 4, "a two-hop batch takes %ld host blocks", blocks);
      }
    }
    CHECK(c.n == 0 && c.allocs == c.frees, "k=%ld: %d blocks leaked (%ld allocs, %ld frees)", k, c.n, c.allocs,
          c.frees);
    CHECK(c.bad_frees == 0 && c.misaligned == 0, "k=%ld: %ld bad frees, %ld misaligned", k, c.bad_frees,
          c.misaligned);
    pthread_mutex_destroy(&c.mu);
  }
  CHECK(failed_runs == blocks, "the allocator failed in %d of %ld runs", failed_runs, blocks);
  /* Usable afterwards, on the library's memory. */
  o.so.allocator = NULL;
  gf_batch *b = NULL;
  CHECK(gf_sample(g, &st, &o.so, &b) == GF_OK && b != NULL, "gf_sample after the sweep: %s", gf_errmsg());
  if (b) gf_batch_close(b);
  /* A sample allocator behind an older struct_size is not read; a loader
     refuses one. */
  gft_counting_init(&c);
  gf_allocator a = gft_allocator_of(&c);
  o.so.allocator = &a;
  o.so.struct_size = 96;
  CHECK(gf_sample(g, &st, &o.so, &b) == GF_OK && b != NULL, "gf_sample with struct_size 96: %s", gf_errmsg());
  if (b) gf_batch_close(b);
  CHECK(c.allocs == 0, "an allocator beyond struct_size is not used: %ld allocs", c.allocs);
  o.so.struct_size = sizeof o.so;
  gf_loader *l = NULL;
  CHECK_ERR(gf_loader_open(g, &st, &o.lo, &l), GF_EINVAL, "options->sample->allocator is set");
  CHECK(l == NULL, "no loader");
  pthread_mutex_destroy(&c.mu);
  if (want) want->deleter(want);
  gf_graph_close(g);
}

/* in_chunks: whether [p, p+n) lies in one of the reported chunks. */
static int in_chunks(void **ptrs, size_t *lens, int64_t nchunks, const void *p, size_t n) {
  for (int64_t i = 0; i < nchunks; i++) {
    const char *s = (const char *)ptrs[i];
    if ((const char *)p >= s && (const char *)p + n <= s + lens[i]) return 1;
  }
  return 0;
}

static void test_host_pool(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t seeds[640];
  for (int i = 0; i < 640; i++) seeds[i] = i;
  int64_t shape = 640;
  DLTensor st = gft_i64(seeds, &shape);
  gf_host_pool_options po = {sizeof po, GF_HOST_POOL_FENCED | GF_HOST_POOL_POISON, 0};
  gf_host_pool *pool = NULL;
  gf_allocator a;
  CHECK(gf_host_pool_open(&po, &pool, &a) == GF_OK && pool != NULL, "gf_host_pool_open: %s", gf_errmsg());
  if (!pool) return;
  options o;
  options_init(&o, &a);
  o.lo.shuffle = 0;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &st, &o.lo, &l) == GF_OK && l != NULL, "open on the pool: %s", gf_errmsg());
  if (!l) return;
  static void *ptrs[4096];
  static size_t lens[4096];
  int64_t nchunks = 0, got = 0;
  uint64_t fence = 0, first_fence = 0;
  gf_host_pool_statistics ps;
  memset(&ps, 0, sizeof ps);
  ps.struct_size = sizeof ps;
  /* Batch 0's nodes: a reader keeps reading them after the tensor is gone
     (a copy queued on a stream), a fence started after the drop is never
     passed during the epoch. */
  DLManagedTensor *nodes = NULL;
  int64_t saved[64];
  const int64_t *reader = NULL;
  int batches = 0;
  CHECK(gf_loader_start(l, 0) == GF_OK, "start");
  for (;;) {
    gf_batch *b = NULL;
    int rc = gf_loader_next(l, &b);
    if (rc != GF_OK) {
      CHECK(rc == GF_DONE, "next: %d %s", rc, gf_errmsg());
      break;
    }
    CHECK(gf_host_pool_new_chunks(pool, ptrs + nchunks, lens + nchunks, 4096 - nchunks, &got) == GF_OK, "chunks");
    nchunks += got;
    DLManagedTensor *t[NFIELDS + 2];
    int k = take_all(b, t);
    for (int i = 0; i < k; i++) {
      const DLTensor *d = &t[i]->dl_tensor;
      size_t n = gft_tensor_bytes(d);
      CHECK(n == 0 || in_chunks(ptrs, lens, nchunks, (const char *)d->data + d->byte_offset, n),
            "tensor %d of batch %d is not in a reported chunk", i, batches);
    }
    if (batches == 0) {
      nodes = t[0];
      reader = (const int64_t *)nodes->dl_tensor.data;
      memcpy(saved, reader, sizeof saved);
      nodes->deleter(nodes); /* the tensor is gone; the reader is not */
      CHECK(gf_host_pool_fence(pool, 0, &first_fence) == GF_OK && first_fence == 1, "first fence %llu",
            (unsigned long long)first_fence);
    }
    for (int i = batches == 0 ? 1 : 0; i < k; i++) gft_drop(t[i]);
    if (batches > 0) {
      CHECK(memcmp(saved, reader, sizeof saved) == 0, "batch %d: a buffer was reused before its fence passed", batches);
    }
    batches++;
  }
  CHECK(batches >= 10, "%d batches", batches);
  CHECK(gf_host_pool_stats(pool, &ps) == GF_OK && ps.waiting > 0, "buffers wait for the fence: %lld",
        (long long)ps.waiting);
  /* Passing the first fence releases batch 0's buffers: poisoned. */
  CHECK(gf_host_pool_fence(pool, first_fence, &fence) == GF_OK && fence == 2, "fence %llu", (unsigned long long)fence);
  CHECK(reader[0] == (int64_t)0xA5A5A5A5A5A5A5A5LL, "the released buffer is poisoned");
  CHECK(gf_host_pool_fence(pool, fence, NULL) == GF_OK, "pass the second fence");
  CHECK(gf_host_pool_stats(pool, &ps) == GF_OK && ps.waiting == 0 && ps.live_buffers == 0, "%lld waiting, %lld live",
        (long long)ps.waiting, (long long)ps.live_buffers);
  CHECK(ps.allocs == ps.frees && ps.allocs > 0 && ps.bad_frees == 0, "%lld allocs, %lld frees, %lld bad",
        (long long)ps.allocs, (long long)ps.frees, (long long)ps.bad_frees);
  CHECK(ps.chunks == nchunks, "every chunk reported once: %lld held, %lld reported", (long long)ps.chunks,
        (long long)nchunks);
  /* Bad calls. */
  CHECK_ERR(gf_host_pool_fence(pool, 99, NULL), GF_EINVAL, "passed = 99, a fence not started yet");
  CHECK_ERR(gf_host_pool_fence(NULL, 0, NULL), GF_EINVAL, "pool is NULL");
  CHECK_ERR(gf_host_pool_new_chunks(pool, NULL, NULL, 1, &got), GF_EINVAL, "ptrs or lens is NULL");
  gf_host_pool_statistics bad;
  memset(&bad, 0, sizeof bad);
  bad.struct_size = 3;
  CHECK_ERR(gf_host_pool_stats(pool, &bad), GF_EINVAL, "out->struct_size = 3");
  gf_host_pool_options bo = {sizeof bo, 64, 0};
  gf_host_pool *p2 = NULL;
  gf_allocator a2;
  CHECK_ERR(gf_host_pool_open(&bo, &p2, &a2), GF_EINVAL, "unknown bits");
  bo.struct_size = 7;
  CHECK_ERR(gf_host_pool_open(&bo, &p2, &a2), GF_EINVAL, "options->struct_size = 7");
  /* Closed under an open loader: the loader goes on; a new one refuses it. */
  CHECK(gf_host_pool_close(pool) == GF_OK, "close");
  CHECK_ERR(gf_host_pool_stats(pool, &ps), GF_EBADHANDLE, "not an open gf_host_pool");
  CHECK_ERR(gf_host_pool_close(pool), GF_EBADHANDLE, "not an open gf_host_pool");
  gf_loader *l2 = NULL;
  CHECK_ERR(gf_loader_open(g, &st, &o.lo, &l2), GF_EINVAL, "whose pool was closed");
  CHECK(gf_loader_start(l, 1) == GF_OK, "start epoch 1");
  gf_batch *b = NULL;
  CHECK(gf_loader_next(l, &b) == GF_OK && b != NULL, "a batch from the closed pool: %s", gf_errmsg());
  DLManagedTensor *late = NULL;
  if (b) {
    CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &late) == GF_OK, "take");
    gf_batch_close(b);
  }
  gf_loader_close(l);
  if (late) late->deleter(late); /* the pool's last buffer: the pool goes with it */
  /* A limit: the first buffer passes it. */
  gf_host_pool_options lo = {sizeof lo, GF_HOST_POOL_LIMIT, 100};
  CHECK(gf_host_pool_open(&lo, &p2, &a2) == GF_OK, "open with a limit");
  options_init(&o, &a2);
  CHECK(gf_loader_open(g, &st, &o.lo, &l2) == GF_OK && l2 != NULL, "open on the limited pool");
  if (l2) {
    CHECK(gf_loader_start(l2, 0) == GF_OK, "start");
    b = NULL;
    CHECK_ERR(gf_loader_next(l2, &b), GF_ENOMEM, "host allocator");
    CHECK(gf_host_pool_stats(p2, &ps) == GF_OK && ps.failures > 0 && ps.last_failure_errno == 0 &&
              ps.live_buffers == 0,
          "%lld failures", (long long)ps.failures);
    gf_loader_close(l2);
  }
  CHECK(gf_host_pool_close(p2) == GF_OK, "close the limited pool");
  gf_graph_close(g);
}

int main(int argc, char **argv) {
  const char *dir = gft_arg(argc, argv, 1, GFT_CORA);
  test_every_byte_from_the_host(dir);
  test_failing_allocator(dir);
  test_bad_allocators(dir);
  test_sample_failing_allocator(dir);
  test_host_pool(dir);
  return gft_summary("test_alloc");
}

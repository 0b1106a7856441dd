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
 *     samples as before; a loader refuses a sample allocator.
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

int main(int argc, char **argv) {
  const char *dir = gft_arg(argc, argv, 1, GFT_CORA);
  test_every_byte_from_the_host(dir);
  test_failing_allocator(dir);
  test_bad_allocators(dir);
  test_sample_failing_allocator(dir);
  return gft_summary("test_alloc");
}

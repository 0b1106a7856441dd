/*
 * test_capi.c: a C program that includes only the public header and links
 * libgraphferry.so. It builds a small graph, samples it, checks every
 * sampled edge against the graph, runs a loader over two epochs, and goes
 * through the error paths, checking that each returns the documented status
 * with a message naming the argument and leaves the handles usable.
 *
 * Prints "test_capi: N passed, N failed" and exits non-zero on any failure.
 */
#include "gftest.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* Graph: 6 nodes, in-neighbour CSC. */
static int64_t indptr[] = {0, 2, 5, 6, 8, 8, 10};
static int64_t indices[] = {1, 2, 0, 3, 4, 0, 1, 5, 2, 3};

static int edge_exists(int64_t u, int64_t v, int64_t eid) {
  if (eid < indptr[v] || eid >= indptr[v + 1]) return 0;
  return indices[eid] == u;
}

static void check_batch(gf_batch *b, int hops, int64_t nseeds, const int64_t *seeds) {
  int32_t nh = -1;
  CHECK(gf_batch_num_hops(b, &nh) == GF_OK && nh == hops, "num_hops %d", nh);
  DLManagedTensor *nodes = NULL;
  CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes, "take nodes");
  if (!nodes) return;
  CHECK(nodes->dl_tensor.ndim == 1 && nodes->dl_tensor.dtype.code == kDLInt &&
            nodes->dl_tensor.dtype.bits == 64 && nodes->dl_tensor.device.device_type == kDLCPU,
        "nodes tensor metadata");
  const int64_t *n = (const int64_t *)nodes->dl_tensor.data;
  int64_t nn = nodes->dl_tensor.shape[0];
  for (int64_t i = 0; i < nseeds; i++) {
    CHECK(i < nn && n[i] == seeds[i], "seed %lld first", (long long)i);
  }
  for (int h = 0; h < hops; h++) {
    int64_t nd = 0, ns = 0, off = -1;
    CHECK(gf_batch_block_shape(b, h, &nd, &ns, &off) == GF_OK, "block shape");
    DLManagedTensor *ip = NULL, *ix = NULL, *ei = NULL;
    CHECK(gf_batch_take(b, GF_FIELD_INDPTR, h, &ip) == GF_OK, "take indptr");
    CHECK(gf_batch_take(b, GF_FIELD_INDICES, h, &ix) == GF_OK, "take indices");
    CHECK(gf_batch_take(b, GF_FIELD_EDGE_IDS, h, &ei) == GF_OK, "take edge ids");
    if (!ip || !ix || !ei) return;
    CHECK(ip->dl_tensor.shape[0] == nd + 1, "indptr length");
    const int64_t *p = (const int64_t *)ip->dl_tensor.data;
    const int64_t *x = (const int64_t *)ix->dl_tensor.data;
    const int64_t *e = (const int64_t *)ei->dl_tensor.data;
    for (int64_t d = 0; d < nd; d++) {
      int64_t v = n[off + d];
      for (int64_t k = p[d]; k < p[d + 1]; k++) {
        CHECK(x[k] >= 0 && x[k] < ns && ns <= nn, "index in range");
        CHECK(edge_exists(n[x[k]], v, e[k]), "edge %lld -> %lld (id %lld) exists",
              (long long)n[x[k]], (long long)v, (long long)e[k]);
      }
      /* fan-out 2 without replacement: min(2, degree) neighbours */
      int64_t deg = indptr[v + 1] - indptr[v];
      int64_t want = deg < 2 ? deg : 2;
      CHECK(p[d + 1] - p[d] == want, "node %lld got %lld neighbours, want %lld",
            (long long)v, (long long)(p[d + 1] - p[d]), (long long)want);
    }
    /* taking twice is a state error and leaves the batch usable */
    DLManagedTensor *again = NULL;
    CHECK_ERR(gf_batch_take(b, GF_FIELD_INDPTR, h, &again), GF_ESTATE, "already taken");
    ip->deleter(ip);
    ix->deleter(ix);
    ei->deleter(ei);
  }
  nodes->deleter(nodes);
}

/* ---------------------------------------------------------------------- */
/* Option structs from older headers                                      */

/* gf_sample_options as 0.1.0's first header declared it: what a program
   compiled against that header passes (struct_size = sizeof = 40 on LP64,
   the last 4 bytes padding). */
typedef struct {
  uint32_t struct_size;
  int32_t num_hops;
  const int32_t *fanouts;
  int32_t replace;
  int32_t frontier;
  uint64_t seed;
  int32_t num_threads;
} sample_options_0_1_0;

/* gf_loader_options of an early 0.1.0 draft, with the sample options
   embedded by value: a different layout, which must be refused. */
typedef struct {
  uint32_t struct_size;
  sample_options_0_1_0 sample;
  int64_t batch_size;
  int32_t shuffle;
  int32_t drop_last;
  uint64_t shuffle_seed;
  int32_t queue_capacity;
  int32_t num_feature_names;
  const char *const *feature_names;
  int32_t num_label_names;
  const char *const *label_names;
} loader_options_draft;

static void test_struct_sizes(gf_graph *g, const DLTensor *seeds, const gf_sample_options *today) {
  gf_batch *b = NULL;
  int64_t want_n = 0, got_n = 0;
  CHECK(gf_sample(g, seeds, today, &b) == GF_OK, "sample with today's options");
  int64_t *want = b ? gft_take_i64(b, GF_FIELD_NODES, 0, &want_n) : NULL;
  gf_batch_close(b);
  b = NULL;

  /* The old struct ends exactly where a PROT_NONE page begins: reading one
     byte past struct_size would crash this test. */
  long page = sysconf(_SC_PAGESIZE);
  char *mem = (char *)mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(mem != MAP_FAILED, "mmap");
  if (mem == MAP_FAILED) return;
  CHECK(mprotect(mem + page, (size_t)page, PROT_NONE) == 0, "mprotect");
  sample_options_0_1_0 old;
  memset(&old, 0, sizeof old);
  old.num_hops = today->num_hops;
  old.fanouts = today->fanouts;
  old.replace = today->replace;
  old.frontier = today->frontier;
  old.seed = today->seed;
  old.num_threads = today->num_threads;
  /* sizeof (the old program's struct_size) and the end of its last field */
  size_t sizes[2] = {sizeof(sample_options_0_1_0),
                     offsetof(sample_options_0_1_0, num_threads) + sizeof(int32_t)};
  for (int i = 0; i < 2; i++) {
    char *at = mem + page - sizes[i];
    old.struct_size = (uint32_t)sizes[i];
    memcpy(at, &old, sizes[i]);
    if (i == 0) memset(at + sizes[1], 0x5a, sizes[0] - sizes[1]); /* garbage padding */
    CHECK(gf_sample(g, seeds, (const gf_sample_options *)(void *)at, &b) == GF_OK,
          "sample with a %zu-byte gf_sample_options", sizes[i]);
    int64_t *got = b ? gft_take_i64(b, GF_FIELD_NODES, 0, &got_n) : NULL;
    CHECK(got && want && got_n == want_n &&
              memcmp(got, want, (size_t)want_n * sizeof(int64_t)) == 0,
          "a %zu-byte gf_sample_options samples as today's", sizes[i]);
    free(got);
    gf_batch_close(b);
    b = NULL;
  }
  /* the loader takes old sample options too */
  old.struct_size = (uint32_t)sizes[0];
  memcpy(mem + page - sizes[0], &old, sizes[0]);
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = (const gf_sample_options *)(void *)(mem + page - sizes[0]);
  lo.batch_size = 2;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, seeds, &lo, &l) == GF_OK && l, "loader with 0.1.0 sample options");
  gf_loader_close(l);
  munmap(mem, (size_t)page * 2);
  free(want);

  /* sizes outside [first layout, today] are refused, naming the range */
  gf_sample_options bad = *today;
  bad.struct_size = (uint32_t)sizes[1] - 1;
  CHECK_ERR(gf_sample(g, seeds, &bad, &b), GF_EINVAL, "accepted range [36, ");
  struct {
    gf_sample_options o;
    char more[16];
  } big;
  memset(&big, 0, sizeof big);
  big.o = *today;
  big.o.struct_size = sizeof big;
  CHECK_ERR(gf_sample(g, seeds, &big.o, &b), GF_EINVAL, "struct_size");
  CHECK(b == NULL, "no batch after a refused struct_size");
  loader_options_draft draft;
  memset(&draft, 0, sizeof draft);
  draft.struct_size = sizeof draft;
  draft.batch_size = 2;
  CHECK_ERR(gf_loader_open(g, seeds, (const gf_loader_options *)(void *)&draft, &l),
            GF_EINVAL, "gf_loader_options");
  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = offsetof(gf_graph_options, flags) + sizeof go.flags;
  gf_graph *g2 = NULL;
  int64_t ip[] = {0, 1, 1}, ix[] = {1};
  int64_t sip = 3, six = 1;
  DLTensor tip = gft_i64(ip, &sip), tix = gft_i64(ix, &six);
  CHECK(gf_graph_from_csc(&tip, &tix, NULL, &go, &g2) == GF_OK, "graph options without padding");
  gf_graph_close(g2);
}

/* ---------------------------------------------------------------------- */
/* DLPack 1.x tensors                                                     */

static int versioned_deleted = 0;
static void count_deleter(DLManagedTensorVersioned *self) {
  (void)self;
  versioned_deleted++;
}

static int is_ours(const DLManagedTensorVersioned *v) {
  return v != NULL && v->version.major == 1 && v->version.minor == 1 &&
         v->flags == DLPACK_FLAG_BITMASK_IS_COPIED && v->deleter != NULL &&
         v->dl_tensor.device.device_type == kDLCPU;
}

static void test_versioned(gf_graph *g, const DLTensor *seeds, const gf_sample_options *so,
                           const gf_loader_options *lo, const DLTensor *all) {
  gf_batch *b = NULL;
  CHECK(gf_sample(g, seeds, so, &b) == GF_OK, "sample");
  DLManagedTensorVersioned *nodes = NULL, *again = NULL;
  CHECK(gf_batch_take_versioned(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && is_ours(nodes),
        "take nodes versioned");
  if (nodes) {
    CHECK(nodes->dl_tensor.ndim == 1 && nodes->dl_tensor.dtype.code == kDLInt &&
              nodes->dl_tensor.dtype.bits == 64 && nodes->dl_tensor.strides == NULL,
          "versioned nodes metadata");
    const int64_t *n = (const int64_t *)nodes->dl_tensor.data;
    const int64_t *s = (const int64_t *)seeds->data;
    CHECK(n[0] == s[0] && n[1] == s[1], "seeds first in versioned nodes");
    nodes->deleter(nodes);
  }
  /* a field taken either way is taken for both; messages name the caller */
  CHECK_ERR(gf_batch_take_versioned(b, GF_FIELD_NODES, 0, &again), GF_ESTATE,
            "gf_batch_take_versioned: field");
  CHECK(again == NULL, "NULL after a failed take");
  DLManagedTensor *legacy = NULL;
  CHECK_ERR(gf_batch_take(b, GF_FIELD_NODES, 0, &legacy), GF_ESTATE, "already taken");
  CHECK_ERR(gf_batch_take_versioned(b, 99, 0, &again), GF_EINVAL, "gf_batch_take_versioned: field = 99");
  CHECK_ERR(gf_batch_take_versioned(b, GF_FIELD_SEEDS, 0, NULL), GF_EINVAL, "out_tensor");
  CHECK_ERR(gf_batch_take_versioned(NULL, GF_FIELD_SEEDS, 0, &again), GF_EBADHANDLE, "NULL");
  /* legacy -> versioned, same memory */
  CHECK(gf_batch_take(b, GF_FIELD_INDPTR, 0, &legacy) == GF_OK, "take indptr");
  if (legacy) {
    void *data = legacy->dl_tensor.data;
    int64_t len = legacy->dl_tensor.shape[0];
    DLManagedTensorVersioned *v = NULL;
    CHECK(gf_tensor_to_versioned(legacy, &v) == GF_OK && is_ours(v), "to versioned");
    if (v) {
      CHECK(v->dl_tensor.data == data && v->dl_tensor.shape[0] == len, "no copy");
      v->deleter(v);
    }
  }
  gf_batch_close(b);

  /* a tensor graphferry did not make is refused and left alone */
  static int64_t mine[3] = {1, 2, 3};
  int64_t three = 3;
  DLManagedTensor foreign;
  memset(&foreign, 0, sizeof foreign);
  foreign.dl_tensor = gft_i64(mine, &three);
  DLManagedTensorVersioned *fv = NULL;
  CHECK_ERR(gf_tensor_to_versioned(&foreign, &fv), GF_EINVAL, "not made by graphferry");
  CHECK_ERR(gf_tensor_to_versioned(NULL, &fv), GF_EINVAL, "tensor is NULL");

  /* node data, both directions */
  DLManagedTensorVersioned *feat = NULL;
  CHECK(gf_graph_get_node_data_versioned(g, "feat", &feat) == GF_OK && is_ours(feat),
        "get node data versioned");
  CHECK_ERR(gf_graph_get_node_data_versioned(g, "nope", &fv), GF_EINVAL,
            "gf_graph_get_node_data_versioned: no node data named \"nope\"");
  if (feat) {
    CHECK(feat->dl_tensor.ndim == 2 && feat->dl_tensor.shape[0] == 6 && feat->dl_tensor.shape[1] == 2 &&
              ((float *)feat->dl_tensor.data)[10] == 5.0f,
          "versioned node data contents");
    feat->deleter(feat);
  }
  static float vals[6] = {0, 10, 20, 30, 40, 50};
  static int64_t vshape[1] = {6};
  /* static: graphferry keeps it (and calls its deleter) until g closes */
  static DLManagedTensorVersioned in;
  memset(&in, 0, sizeof in);
  in.version.major = 2; /* a future, incompatible DLPack */
  in.deleter = count_deleter;
  in.dl_tensor.data = vals;
  in.dl_tensor.device.device_type = kDLCPU;
  in.dl_tensor.ndim = 1;
  in.dl_tensor.dtype.code = kDLFloat;
  in.dl_tensor.dtype.bits = 32;
  in.dl_tensor.dtype.lanes = 1;
  in.dl_tensor.shape = vshape;
  CHECK_ERR(gf_graph_set_node_data_versioned(g, "score", &in), GF_ETYPE, "version 2.0");
  in.version.major = 1;
  in.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  static int64_t bad_shape[1] = {5};
  in.dl_tensor.shape = bad_shape;
  CHECK_ERR(gf_graph_set_node_data_versioned(g, "score", &in), GF_EINVAL,
            "gf_graph_set_node_data_versioned: tensor has shape[0] = 5");
  CHECK(versioned_deleted == 0, "a refused tensor stays the caller's");
  in.dl_tensor.shape = vshape;
  CHECK(gf_graph_set_node_data_versioned(g, "score", &in) == GF_OK, "set node data versioned");
  /* a loader gathers it, as versioned node data of the batch */
  gf_loader_options l2 = *lo;
  const char *labels[] = {"score"};
  l2.num_label_names = 1;
  l2.label_names = labels;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, all, &l2, &l) == GF_OK, "loader with versioned node data");
  CHECK(gf_loader_start(l, 0) == GF_OK, "start");
  gf_batch *lb = NULL;
  CHECK(gf_loader_next(l, &lb) == GF_OK, "next");
  DLManagedTensorVersioned *sc = NULL, *sd = NULL;
  CHECK(gf_batch_take_node_data_versioned(lb, "score", &sc) == GF_OK && is_ours(sc),
        "take node data versioned");
  CHECK(gf_batch_take_versioned(lb, GF_FIELD_SEEDS, 0, &sd) == GF_OK && is_ours(sd), "take seeds");
  if (sc && sd) {
    for (int64_t i = 0; i < sd->dl_tensor.shape[0]; i++) {
      int64_t v = ((int64_t *)sd->dl_tensor.data)[i];
      CHECK(((float *)sc->dl_tensor.data)[i] == vals[v], "score of seed %lld", (long long)v);
    }
  }
  if (sc) sc->deleter(sc);
  if (sd) sd->deleter(sd);
  CHECK_ERR(gf_batch_take_node_data_versioned(lb, "score", &sc), GF_ESTATE,
            "gf_batch_take_node_data_versioned: node data");
  gf_batch_close(lb);
  gf_loader_close(l);
}

/* gf_loader_stats: exact batch and byte counts per epoch and in total, a
 * growing struct_size, and the error paths. */
static void test_loader_stats(gf_graph *g, const DLTensor *seeds, const gf_loader_options *lo) {
  gf_loader *l = NULL;
  /* gf_loader_options.coo: an unknown edge list is refused; GF_COO_INDUCED
   * batches hold every edge among their nodes (gf_graph_induced_subgraph's) */
  gf_loader_options cooo = *lo;
  cooo.coo = 9;
  CHECK_ERR(gf_loader_open(g, seeds, &cooo, &l), GF_EINVAL, "options->coo = 9");
  CHECK(l == NULL, "coo = 9: no loader");
  cooo.coo = GF_COO_INDUCED;
  CHECK(gf_loader_open(g, seeds, &cooo, &l) == GF_OK && l, "coo induced: open");
  gf_batch *ib = NULL;
  if (l && gf_loader_start(l, 0) == GF_OK && gf_loader_next(l, &ib) == GF_OK && ib) {
    DLManagedTensor *nodes = NULL, *eids = NULL, *src = NULL, *dst = NULL, *want = NULL;
    if (gf_batch_take(ib, GF_FIELD_NODES, 0, &nodes) == GF_OK &&
        gf_batch_take(ib, GF_FIELD_COO_EDGE_IDS, 0, &eids) == GF_OK &&
        gf_graph_induced_subgraph(g, &nodes->dl_tensor, &src, &dst, &want) == GF_OK) {
      int64_t n = eids->dl_tensor.shape[0];
      CHECK(n == want->dl_tensor.shape[0] &&
                memcmp(eids->dl_tensor.data, want->dl_tensor.data, (size_t)n * sizeof(int64_t)) == 0,
            "coo induced: the induced subgraph's edges (%lld)", (long long)n);
    }
    DLManagedTensor *all[] = {nodes, eids, src, dst, want};
    for (int i = 0; i < 5; i++)
      if (all[i]) all[i]->deleter(all[i]);
    gf_batch_close(ib);
  }
  gf_loader_close(l);
  l = NULL;
  CHECK(gf_loader_open(g, seeds, lo, &l) == GF_OK && l, "stats: loader open");
  gf_loader_statistics st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK(gf_loader_stats(l, &st) == GF_OK && st.epochs == 0 && st.workers >= 1 &&
            st.total.consumer.batches == 0,
        "stats before the first epoch");
  int64_t want_bytes = 0;
  for (uint64_t epoch = 0; epoch < 2; epoch++) {
    CHECK(gf_loader_start(l, epoch) == GF_OK, "stats: start");
    gf_batch *b = NULL;
    int64_t bytes = 0, batches = 0;
    while (gf_loader_next(l, &b) == GF_OK) {
      DLManagedTensor *x = NULL;
      CHECK(gf_batch_take_node_data(b, "feat", &x) == GF_OK, "stats: take feat");
      if (x) {
        bytes += x->dl_tensor.shape[0] * x->dl_tensor.shape[1] * 4;
        x->deleter(x);
      }
      batches++;
      gf_batch_close(b);
    }
    want_bytes += bytes;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    CHECK(gf_loader_stats(l, &st) == GF_OK, "stats");
    CHECK(st.epoch == epoch && st.epochs == (int64_t)epoch + 1, "stats: epoch %llu", (unsigned long long)epoch);
    CHECK(st.current.sampler.batches == batches && st.current.loader.batches == batches &&
              st.current.consumer.batches == batches,
          "stats: %lld batches per stage", (long long)batches);
    CHECK(st.total.consumer.batches == batches * (int64_t)(epoch + 1), "stats: total batches");
    CHECK(st.current.bytes_host == bytes && st.total.bytes_host == want_bytes &&
              st.current.bytes_pinned == 0 && st.current.bytes_device == 0,
          "stats: bytes per tier");
    CHECK(st.current.rows_hot == 0 && st.current.rows_cold * 8 == bytes, "stats: rows (no cache)");
    CHECK(st.current.sampler.busy_ns > 0 && st.current.loader.busy_ns > 0 && st.current.wall_ns > 0 &&
              st.total.wall_ns >= st.current.wall_ns,
          "stats: times");
  }
  /* an older, shorter struct is refused below the first layout; a longer
     one than today's too; NULL out and a bad handle are errors */
  st.struct_size = 8;
  CHECK_ERR(gf_loader_stats(l, &st), GF_EINVAL, "struct_size");
  st.struct_size = sizeof st + 8;
  CHECK_ERR(gf_loader_stats(l, &st), GF_EINVAL, "struct_size");
  CHECK_ERR(gf_loader_stats(l, NULL), GF_EINVAL, "out");

  /* a hot tier: same features, hits counted */
  for (int32_t policy = GF_CACHE_IN_DEGREE; policy <= GF_CACHE_PRESAMPLING; policy++) {
    gf_cache_options co;
    memset(&co, 0, sizeof co);
    co.struct_size = sizeof co;
    co.policy = policy;
    co.fraction = 0.5;
    int64_t rows = -1;
    CHECK(gf_loader_set_cache(l, &co, &rows) == GF_OK && rows == 3, "set cache: %lld rows", (long long)rows);
    CHECK(gf_loader_start(l, 5) == GF_OK, "start after set cache");
    gf_batch *b = NULL;
    int64_t nrows = 0;
    while (gf_loader_next(l, &b) == GF_OK) {
      DLManagedTensor *x = NULL, *nodes = NULL;
      CHECK(gf_batch_take_node_data(b, "feat", &x) == GF_OK, "cache: take feat");
      CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK, "cache: take nodes");
      if (x && nodes) {
        for (int64_t i = 0; i < nodes->dl_tensor.shape[0]; i++) {
          int64_t v = ((int64_t *)nodes->dl_tensor.data)[i];
          CHECK(((float *)x->dl_tensor.data)[2 * i] == (float)v, "cached feature row of node %lld", (long long)v);
        }
        nrows += nodes->dl_tensor.shape[0];
      }
      if (x) x->deleter(x);
      if (nodes) nodes->deleter(nodes);
      gf_batch_close(b);
    }
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    CHECK(gf_loader_stats(l, &st) == GF_OK && st.current.rows_hot > 0 &&
              st.current.rows_hot + st.current.rows_cold == nrows,
          "cache: %lld hot + %lld cold rows of %lld", (long long)st.current.rows_hot,
          (long long)st.current.rows_cold, (long long)nrows);
  }
  gf_cache_options bad;
  memset(&bad, 0, sizeof bad);
  bad.struct_size = sizeof bad;
  bad.policy = 9;
  CHECK_ERR(gf_loader_set_cache(l, &bad, NULL), GF_EINVAL, "policy");
  bad.policy = GF_CACHE_IN_DEGREE;
  bad.fraction = 2;
  CHECK_ERR(gf_loader_set_cache(l, &bad, NULL), GF_EINVAL, "fraction");
  CHECK_ERR(gf_loader_set_cache(l, NULL, NULL), GF_EINVAL, "options");
  bad.struct_size = 4;
  CHECK_ERR(gf_loader_set_cache(l, &bad, NULL), GF_EINVAL, "struct_size");
  gf_loader_close(l);
  st.struct_size = sizeof st;
  CHECK_ERR(gf_loader_stats(l, &st), GF_EBADHANDLE, "");
  CHECK_ERR(gf_loader_stats(NULL, &st), GF_EBADHANDLE, "");
}

static void test_induced_subgraph(gf_graph *g);
static void test_subgraph_loader(gf_graph *g);
static void test_forked_child(gf_graph *g, const DLTensor *seeds, const gf_loader_options *lo);
static void test_huge_values(gf_graph *g, const DLTensor *indptr_t, const DLTensor *indices_t,
                             const DLTensor *seeds, const gf_loader_options *lo);
static void test_hetero(void);
static void test_typed_fields(void);

void test_edge_sampler(void); /* appended below */
void test_dataset_partition(void); /* appended below */


/* Fan-out 0 samples no neighbour in its hop: the block keeps its dst nodes
   (as its src nodes too) and has no edge; the next hop samples as usual. */
static void test_fanout_zero(gf_graph *g, const DLTensor *seeds, const gf_sample_options *base) {
  int32_t fan[] = {0, 2};
  gf_sample_options so = *base;
  so.num_hops = 2;
  so.fanouts = fan;
  so.frontier = GF_FRONTIER_ALL;
  gf_batch *b = NULL;
  CHECK(gf_sample(g, seeds, &so, &b) == GF_OK && b, "sample with fan-out 0: %s", gf_errmsg());
  if (!b) return;
  int64_t nseeds = seeds->shape[0];
  int64_t nd = -1, ns = -1, off = -1;
  CHECK(gf_batch_block_shape(b, 0, &nd, &ns, &off) == GF_OK && nd == nseeds && ns == nseeds && off == 0,
        "fan-out 0 block: %lld dst, %lld src, offset %lld", (long long)nd, (long long)ns, (long long)off);
  DLManagedTensor *ip = NULL, *ix = NULL, *hc = NULL;
  CHECK(gf_batch_take(b, GF_FIELD_INDPTR, 0, &ip) == GF_OK && ip, "take indptr of the fan-out 0 hop");
  CHECK(gf_batch_take(b, GF_FIELD_INDICES, 0, &ix) == GF_OK && ix, "take indices of the fan-out 0 hop");
  CHECK(gf_batch_take(b, GF_FIELD_HOP_COUNTS, 0, &hc) == GF_OK && hc, "take hop counts");
  if (ip) {
    const int64_t *p = (const int64_t *)ip->dl_tensor.data;
    for (int64_t d = 0; d <= nd; d++) CHECK(p[d] == 0, "fan-out 0 indptr[%lld] = %lld", (long long)d, (long long)p[d]);
    ip->deleter(ip);
  }
  if (ix) {
    CHECK(ix->dl_tensor.shape[0] == 0, "fan-out 0 hop has no edge");
    ix->deleter(ix);
  }
  if (hc) {
    const int64_t *h = (const int64_t *)hc->dl_tensor.data;
    CHECK(h[0] == nseeds && h[1] == 0, "hop counts %lld, %lld", (long long)h[0], (long long)h[1]);
    hc->deleter(hc);
  }
  CHECK(gf_batch_block_shape(b, 1, &nd, &ns, &off) == GF_OK && nd == nseeds && ns >= nseeds,
        "the hop after fan-out 0 samples from the seeds");
  gf_batch_close(b);
}

int main(void) {
  CHECK(gf_version_number() / 1000000 == GF_VERSION_MAJOR, "major version");
  CHECK(strcmp(gf_version(), GF_VERSION_STRING) == 0, "version string");
  CHECK(strcmp(gf_status_str(GF_EINVAL), "invalid argument") == 0, "status str");
  CHECK(strcmp(gf_status_str(12345), "unknown status") == 0, "unknown status");

  int64_t sp = 7, si = 10;
  DLTensor tp = gft_i64(indptr, &sp), ti = gft_i64(indices, &si);
  gf_graph *g = NULL;
  CHECK(gf_graph_from_csc(&tp, &ti, NULL, NULL, &g) == GF_OK && g, "from_csc");
  int64_t nn = 0, ne = 0;
  CHECK(gf_graph_num_nodes(g, &nn) == GF_OK && nn == 6, "num nodes");
  CHECK(gf_graph_num_edges(g, &ne) == GF_OK && ne == 10, "num edges");

  /* node data: float32 [6, 2] features and int64 labels */
  static float feat[12] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5};
  static int64_t fshape[2] = {6, 2};
  DLManagedTensor fm = gft_managed(gft_tensor(feat, 2, fshape, kDLFloat, 32));
  CHECK(gf_graph_set_node_data(g, "feat", &fm) == GF_OK, "set feat");

  /* synchronous sample */
  int64_t seeds[] = {3, 0};
  int64_t ss = 2;
  DLTensor ts = gft_i64(seeds, &ss);
  int32_t fanouts[] = {2, 2};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 2;
  so.fanouts = fanouts;
  so.frontier = GF_FRONTIER_ALL;
  so.seed = 42;
  gf_batch *b = NULL;
  CHECK(gf_sample(g, &ts, &so, &b) == GF_OK && b, "sample");
  if (b) check_batch(b, 2, 2, seeds);
  gf_batch_close(b);
  gf_batch_close(b); /* double close is a no-op */
  gf_batch_close(NULL);

  /* loader over all nodes, two epochs */
  int64_t all[] = {0, 1, 2, 3, 4, 5};
  int64_t sa = 6;
  DLTensor tall = gft_i64(all, &sa);
  const char *fnames[] = {"feat"};
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = &so;
  lo.batch_size = 4;
  lo.shuffle = 1;
  lo.shuffle_seed = 7;
  lo.num_feature_names = 1;
  lo.feature_names = fnames;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &tall, &lo, &l) == GF_OK && l, "loader open");
  int64_t nb = 0;
  CHECK(gf_loader_num_batches(l, &nb) == GF_OK && nb == 2, "num batches %lld", (long long)nb);
  gf_batch *lb = NULL;
  CHECK_ERR(gf_loader_next(l, &lb), GF_ESTATE, "gf_loader_start");
  for (uint64_t epoch = 0; epoch < 2; epoch++) {
    CHECK(gf_loader_start(l, epoch) == GF_OK, "start");
    int seen[6] = {0};
    int count = 0;
    int rc;
    while ((rc = gf_loader_next(l, &lb)) == GF_OK) {
      count++;
      DLManagedTensor *s = NULL, *x = NULL, *nodes = NULL;
      CHECK(gf_batch_take(lb, GF_FIELD_SEEDS, 0, &s) == GF_OK, "take seeds");
      CHECK(gf_batch_take(lb, GF_FIELD_NODES, 0, &nodes) == GF_OK, "take nodes");
      CHECK(gf_batch_take_node_data(lb, "feat", &x) == GF_OK, "take feat");
      if (s && x && nodes) {
        for (int64_t i = 0; i < s->dl_tensor.shape[0]; i++) {
          seen[((int64_t *)s->dl_tensor.data)[i]]++;
        }
        CHECK(x->dl_tensor.ndim == 2 && x->dl_tensor.shape[0] == nodes->dl_tensor.shape[0] &&
                  x->dl_tensor.shape[1] == 2,
              "feature shape");
        for (int64_t i = 0; i < nodes->dl_tensor.shape[0]; i++) {
          int64_t v = ((int64_t *)nodes->dl_tensor.data)[i];
          CHECK(((float *)x->dl_tensor.data)[2 * i] == (float)v, "feature row of node %lld", (long long)v);
        }
      }
      if (s) s->deleter(s);
      if (x) x->deleter(x);
      if (nodes) nodes->deleter(nodes);
      gf_batch_close(lb);
    }
    CHECK(rc == GF_DONE && lb == NULL, "epoch ends with GF_DONE (rc %d)", rc);
    CHECK(count == 2, "two batches per epoch");
    for (int v = 0; v < 6; v++) CHECK(seen[v] == 1, "seed %d seen once", v);
  }
  /* leave mid-epoch: close must stop the threads */
  CHECK(gf_loader_start(l, 2) == GF_OK, "start 3");
  CHECK(gf_loader_next(l, &lb) == GF_OK, "one batch");
  gf_batch_close(lb);
  gf_loader_close(l);
  gf_loader_close(l);

  /* ------------------------------------------------------------------ */
  /* Error paths: each names the problem and leaves g usable.           */
  gf_graph *bad = (gf_graph *)0x1;
  int64_t bad_indptr[] = {0, 3, 2, 4};
  int64_t sbi = 4, sbx = 4;
  int64_t idx4[] = {0, 1, 2, 0};
  DLTensor tbp = gft_i64(bad_indptr, &sbi), tbx = gft_i64(idx4, &sbx);
  CHECK_ERR(gf_graph_from_csc(&tbp, &tbx, NULL, NULL, &bad), GF_EINVAL, "indptr");
  CHECK(bad == NULL, "out set to NULL on failure");
  int64_t range_idx[] = {0, 1, 9, 0};
  int64_t ok_indptr[] = {0, 1, 2, 4};
  DLTensor tok = gft_i64(ok_indptr, &sbi), tri = gft_i64(range_idx, &sbx);
  CHECK_ERR(gf_graph_from_csc(&tok, &tri, NULL, NULL, &bad), GF_EINVAL, "9");
  CHECK_ERR(gf_graph_from_csc(NULL, &tri, NULL, NULL, &bad), GF_EINVAL, "indptr is NULL");
  CHECK_ERR(gf_graph_from_csc(&tok, &tri, NULL, NULL, NULL), GF_EINVAL, "out_graph");
  DLTensor tf = tok;
  tf.dtype.code = kDLFloat;
  CHECK_ERR(gf_graph_from_csc(&tf, &ti, NULL, NULL, &bad), GF_ETYPE, "indptr");
  DLTensor tdev = tok;
  tdev.device.device_type = kDLCUDA;
  CHECK_ERR(gf_graph_from_csc(&tdev, &ti, NULL, NULL, &bad), GF_ETYPE, "CPU");
  int64_t shape2[2] = {2, 2};
  DLTensor t2d = tok;
  t2d.ndim = 2;
  t2d.shape = shape2;
  CHECK_ERR(gf_graph_from_csc(&t2d, &ti, NULL, NULL, &bad), GF_EINVAL, "1-D");
  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = 3;
  CHECK_ERR(gf_graph_from_csc(&tp, &ti, NULL, &go, &bad), GF_EINVAL, "struct_size");

  /* sampling errors */
  int64_t oor[] = {0, 99};
  DLTensor toor = gft_i64(oor, &ss);
  CHECK_ERR(gf_sample(g, &toor, &so, &b), GF_EINVAL, "99");
  CHECK(b == NULL, "out batch NULL on failure");
  gf_sample_options bo = so;
  bo.num_hops = 0;
  CHECK_ERR(gf_sample(g, &ts, &bo, &b), GF_EINVAL, "num_hops");
  int32_t neg[] = {2, -3};
  bo = so;
  bo.fanouts = neg;
  CHECK_ERR(gf_sample(g, &ts, &bo, &b), GF_EINVAL, "-3");
  int32_t below[] = {0, -2}; /* 0 is valid: no neighbours for that hop */
  bo.fanouts = below;
  CHECK_ERR(gf_sample(g, &ts, &bo, &b), GF_EINVAL, "fanouts[1] = -2");
  CHECK_ERR(gf_sample(NULL, &ts, &so, &b), GF_EBADHANDLE, "NULL");
  CHECK_ERR(gf_sample((gf_graph *)0x12345, &ts, &so, &b), GF_EBADHANDLE, "not a graph handle");
  CHECK_ERR(gf_sample(g, &ts, NULL, &b), GF_EINVAL, "options");
  const char *missing[] = {"nope"};
  gf_loader_options lb2 = lo;
  lb2.feature_names = missing;
  CHECK_ERR(gf_loader_open(g, &tall, &lb2, &l), GF_EINVAL, "nope");
  lb2 = lo;
  lb2.batch_size = 0;
  CHECK_ERR(gf_loader_open(g, &tall, &lb2, &l), GF_EINVAL, "batch_size");
  DLManagedTensor wrong = fm;
  int64_t wshape[2] = {5, 2};
  wrong.dl_tensor.shape = wshape;
  CHECK_ERR(gf_graph_set_node_data(g, "feat", &wrong), GF_EINVAL, "shape[0]");

  /* ------------------------------------------------------------------ */
  /* Schemes: edge weights, biased, layer-wise, exclusion, random walks. */
  /* weights by edge id: edge 3 (0 -> 1) and edge 6 (1 -> 3) get weight 0 */
  static float wts[10] = {1, 2, 1, 0, 1, 1, 0, 1, 2, 1};
  int64_t sw = 10;
  DLTensor tw = gft_vec(wts, &sw, kDLFloat, 32);
  gf_sample_options bs = so;
  bs.biased = 1;
  CHECK_ERR(gf_sample(g, &ts, &bs, &b), GF_EINVAL, "weights");
  int64_t sw_short = 5;
  DLTensor tws = tw;
  tws.shape = &sw_short;
  CHECK_ERR(gf_graph_set_edge_weights(g, &tws), GF_EINVAL, "edge id");
  static float negw[10] = {1, 2, 1, -1, 1, 1, 0, 1, 2, 1};
  DLTensor twn = tw;
  twn.data = negw;
  CHECK_ERR(gf_graph_set_edge_weights(g, &twn), GF_EINVAL, "weights[3]");
  /* per-node weights: node 2 weighs 0, so no edge out of node 2 is taken */
  static double nodew[6] = {1, 1, 0, 1, 1, 1};
  int64_t s6w = 6, s3w = 3;
  DLTensor tnw = tw;
  tnw.data = nodew;
  tnw.dtype.bits = 64;
  tnw.shape = &s3w;
  CHECK_ERR(gf_graph_set_source_weights(g, &tnw), GF_EINVAL, "node id");
  tnw.shape = &s6w;
  CHECK(gf_graph_set_source_weights(g, &tnw) == GF_OK, "set source weights");
  {
    int64_t every[] = {0, 1, 2, 3, 4, 5};
    DLTensor tev = gft_i64(every, &s6w);
    gf_sample_options one = so;
    one.num_hops = 1;
    one.biased = 1;
    CHECK(gf_sample(g, &tev, &one, &b) == GF_OK, "biased by source weight");
    DLManagedTensor *nodes = NULL, *ix = NULL;
    if (b && gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK &&
        gf_batch_take(b, GF_FIELD_INDICES, 0, &ix) == GF_OK) {
      for (int64_t k = 0; k < ix->dl_tensor.shape[0]; k++) {
        int64_t u = ((int64_t *)nodes->dl_tensor.data)[((int64_t *)ix->dl_tensor.data)[k]];
        CHECK(u != 2, "source of weight 0 sampled");
      }
    }
    if (nodes) nodes->deleter(nodes);
    if (ix) ix->deleter(ix);
    gf_batch_close(b);
  }
  CHECK(gf_graph_set_edge_weights(g, &tw) == GF_OK, "set edge weights");
  int64_t all_seeds[] = {0, 1, 2, 3, 4, 5};
  int64_t s6 = 6;
  DLTensor tall6 = gft_i64(all_seeds, &s6);
  for (int rep = 0; rep < 20; rep++) {
    bs.seed = (uint64_t)rep;
    bs.num_hops = 1;
    CHECK(gf_sample(g, &tall6, &bs, &b) == GF_OK, "biased sample");
    DLManagedTensor *e = NULL;
    if (b && gf_batch_take(b, GF_FIELD_EDGE_IDS, 0, &e) == GF_OK) {
      for (int64_t k = 0; k < e->dl_tensor.shape[0]; k++) {
        int64_t id = ((int64_t *)e->dl_tensor.data)[k];
        CHECK(id != 3 && id != 6, "zero-weight edge %lld sampled", (long long)id);
      }
      e->deleter(e);
    }
    gf_batch_close(b);
  }
  /* exclusion: edges 0 and 2 never appear */
  int64_t excl[] = {0, 2};
  int64_t s2 = 2;
  DLTensor tex = gft_i64(excl, &s2);
  gf_sample_options es = so;
  es.num_hops = 1;
  es.exclude_edges = &tex;
  CHECK(gf_sample(g, &tall6, &es, &b) == GF_OK, "sample with exclusion");
  DLManagedTensor *ee = NULL;
  if (b && gf_batch_take(b, GF_FIELD_EDGE_IDS, 0, &ee) == GF_OK) {
    for (int64_t k = 0; k < ee->dl_tensor.shape[0]; k++) {
      int64_t id = ((int64_t *)ee->dl_tensor.data)[k];
      CHECK(id != 0 && id != 2, "excluded edge %lld sampled", (long long)id);
    }
    ee->deleter(ee);
  }
  gf_batch_close(b);
  /* layer-wise: 3 draws for the whole layer */
  gf_sample_options ls = so;
  ls.scheme = GF_SCHEME_LAYER_WISE;
  int32_t three[] = {3, 3};
  ls.fanouts = three;
  CHECK(gf_sample(g, &ts, &ls, &b) == GF_OK, "layer-wise sample");
  if (b) {
    int64_t nd = 0;
    gf_batch_block_shape(b, 0, &nd, NULL, NULL);
    DLManagedTensor *ip = NULL;
    if (gf_batch_take(b, GF_FIELD_INDPTR, 0, &ip) == GF_OK) {
      int64_t edges = ((int64_t *)ip->dl_tensor.data)[nd];
      CHECK(edges <= 3, "layer-wise hop 0 took %lld edges, at most 3", (long long)edges);
      ip->deleter(ip);
    }
  }
  gf_batch_close(b);
  ls.scheme = 7;
  CHECK_ERR(gf_sample(g, &ts, &ls, &b), GF_EINVAL, "scheme");
  /* LABOR: the same call samples the same; fan-out -1 keeps every edge, as
     node-wise does; replace and layer_dependency without LABOR are refused */
  gf_sample_options lab = so;
  lab.scheme = GF_SCHEME_LABOR;
  lab.layer_dependency = 1;
  lab.fanouts = three;
  gf_batch *b2 = NULL;
  CHECK(gf_sample(g, &ts, &lab, &b) == GF_OK && gf_sample(g, &ts, &lab, &b2) == GF_OK, "labor sample");
  if (b && b2) {
    int64_t n1 = 0, n2 = 0;
    int64_t *x1 = gft_take_i64(b, GF_FIELD_NODES, 0, &n1), *x2 = gft_take_i64(b2, GF_FIELD_NODES, 0, &n2);
    CHECK(x1 && x2 && n1 == n2 && memcmp(x1, x2, (size_t)n1 * sizeof(int64_t)) == 0, "labor is reproducible");
    free(x1);
    free(x2);
  }
  gf_batch_close(b);
  gf_batch_close(b2);
  b = b2 = NULL;
  int32_t all2[] = {-1, -1};
  lab.fanouts = all2;
  gf_sample_options nw = lab;
  nw.scheme = GF_SCHEME_NODE_WISE;
  nw.layer_dependency = 0;
  CHECK(gf_sample(g, &ts, &lab, &b) == GF_OK && gf_sample(g, &ts, &nw, &b2) == GF_OK, "labor fan-out -1");
  if (b && b2) {
    int64_t n1 = 0, n2 = 0;
    int64_t *x1 = gft_take_i64(b, GF_FIELD_NODES, 0, &n1), *x2 = gft_take_i64(b2, GF_FIELD_NODES, 0, &n2);
    CHECK(x1 && x2 && n1 == n2 && memcmp(x1, x2, (size_t)n1 * sizeof(int64_t)) == 0, "labor -1 takes all, as node-wise");
    free(x1);
    free(x2);
  }
  gf_batch_close(b);
  gf_batch_close(b2);
  b = b2 = NULL;
  lab.replace = 1;
  CHECK_ERR(gf_sample(g, &ts, &lab, &b), GF_EINVAL, "Replace is not valid");
  nw.layer_dependency = 1;
  CHECK_ERR(gf_sample(g, &ts, &nw, &b), GF_EINVAL, "LayerDependency needs");
  /* a loader open on g: weights cannot change under it */
  CHECK(gf_loader_open(g, &tall, &lo, &l) == GF_OK, "loader open again");
  CHECK_ERR(gf_graph_set_edge_weights(g, &tw), GF_ESTATE, "loader");
  gf_loader_close(l);

  /* random walks */
  gf_walk_options wo;
  memset(&wo, 0, sizeof wo);
  wo.struct_size = sizeof wo;
  wo.length = 4;
  wo.seed = 3;
  DLManagedTensor *tr = NULL, *te = NULL;
  CHECK(gf_random_walk(g, &tall6, &wo, &tr, &te) == GF_OK && tr && te, "random walk");
  if (tr && te) {
    CHECK(tr->dl_tensor.ndim == 2 && tr->dl_tensor.shape[0] == 6 && tr->dl_tensor.shape[1] == 5, "trace shape");
    CHECK(te->dl_tensor.ndim == 2 && te->dl_tensor.shape[1] == 4, "edge-id shape");
    const int64_t *t = (const int64_t *)tr->dl_tensor.data;
    const int64_t *ei = (const int64_t *)te->dl_tensor.data;
    for (int i = 0; i < 6; i++) {
      CHECK(t[i * 5] == all_seeds[i], "walk %d starts at its seed", i);
      for (int st = 0; st < 4; st++) {
        int64_t v = t[i * 5 + st], u = t[i * 5 + st + 1], e = ei[i * 4 + st];
        if (u < 0) {
          CHECK(e == -1, "no edge after a stop");
          continue;
        }
        CHECK(edge_exists(u, v, e), "walk step %lld -> %lld by edge %lld", (long long)u, (long long)v, (long long)e);
      }
    }
    tr->deleter(tr);
    te->deleter(te);
  }
  wo.restart_prob = 1.5;
  CHECK_ERR(gf_random_walk(g, &tall6, &wo, &tr, NULL), GF_EINVAL, "restart_prob");
  wo.restart_prob = 0;
  wo.length = -1;
  CHECK_ERR(gf_random_walk(g, &tall6, &wo, &tr, NULL), GF_EINVAL, "length");
  wo.length = 2;
  CHECK_ERR(gf_random_walk(g, &tall6, &wo, NULL, NULL), GF_EINVAL, "out_traces");
  CHECK_ERR(gf_random_walk(g, &toor, &wo, &tr, NULL), GF_EINVAL, "99");

  /* synthetic datasets */
  {
    char dir[256];
    CHECK(gft_tmpdir(dir, sizeof dir, "test_gen") != NULL, "mkdtemp");
    CHECK_ERR(gf_dataset_generate("nope", dir, 0, 0), GF_EINVAL, "tiny");
    CHECK_ERR(gf_dataset_generate(NULL, dir, 0, 0), GF_EINVAL, "preset");
    CHECK(gf_dataset_generate("tiny", dir, 5, 0) == GF_OK, "generate tiny");
    gf_graph *tg = NULL;
    CHECK(gf_graph_open(dir, NULL, &tg) == GF_OK && tg, "open generated");
    int64_t tn = 0, te = 0;
    CHECK(gf_graph_num_nodes(tg, &tn) == GF_OK && tn == 1024, "tiny has 1024 nodes");
    CHECK(gf_graph_num_edges(tg, &te) == GF_OK && te > tn, "tiny has edges");
    DLManagedTensor *feat = NULL;
    CHECK(gf_graph_get_node_data(tg, "feat", &feat) == GF_OK && feat && feat->dl_tensor.ndim == 2,
          "generated features");
    if (feat) feat->deleter(feat);
    CHECK(gf_sample(tg, &ts, &so, &b) == GF_OK, "sample the generated graph");
    gf_batch_close(b);
    gf_graph_close(tg);
    CHECK(gft_rmtree(dir) == 0, "cleanup");
  }

  test_struct_sizes(g, &ts, &so);
  test_versioned(g, &ts, &so, &lo, &tall);
  test_loader_stats(g, &tall, &lo);

  test_fanout_zero(g, &ts, &so);
  test_huge_values(g, &tp, &ti, &tall, &lo);
  test_forked_child(g, &tall, &lo);
  CHECK(versioned_deleted == 0, "the graph keeps the versioned tensor while open");

  /* after all of that, g still samples correctly */
  CHECK(gf_sample(g, &ts, &so, &b) == GF_OK, "sample after errors");
  if (b) check_batch(b, 2, 2, seeds);
  gf_batch_close(b);

  test_induced_subgraph(g);
  test_subgraph_loader(g);

  /* use after close is detected */
  gf_graph_close(g);
  CHECK(versioned_deleted == 1, "closing the graph called the versioned tensor's deleter once");
  CHECK_ERR(gf_graph_num_nodes(g, &nn), GF_EBADHANDLE, "already closed");
  gf_graph_close(g);

  /* a forked child gets GF_EFORK instead of hanging */
  pid_t pid = fork();
  if (pid == 0) {
    gf_graph *cg = NULL;
    int rc = gf_graph_from_csc(&tp, &ti, NULL, NULL, &cg);
    _exit(rc == GF_EFORK && strstr(gf_errmsg(), "fork") ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child gets GF_EFORK");

  test_edge_sampler();
  test_dataset_partition();
  test_hetero();
  test_typed_fields();

  return gft_summary("test_capi");
}

/* gf_graph_induced_subgraph on the 6-node graph: the edges among {3, 1, 0},
 * grouped by target in that order, each target's in the CSC's order. */
static void test_induced_subgraph(gf_graph *g) {
  int64_t nodes[] = {3, 1, 0}, nshape = 3;
  DLTensor tn = gft_i64(nodes, &nshape);
  DLManagedTensor *src = NULL, *dst = NULL, *eid = NULL;
  CHECK(gf_graph_induced_subgraph(g, &tn, &src, &dst, &eid) == GF_OK && src && dst && eid, "induced subgraph");
  if (src && dst && eid) {
    static const int64_t want_src[] = {1, 2, 0, 1}, want_dst[] = {0, 1, 1, 2}, want_eid[] = {6, 2, 3, 0};
    CHECK(src->dl_tensor.ndim == 1 && src->dl_tensor.shape[0] == 4, "induced: 4 edges");
    CHECK(dst->dl_tensor.shape[0] == 4 && eid->dl_tensor.shape[0] == 4, "induced: one dst and id per edge");
    if (src->dl_tensor.shape[0] == 4) {
      const int64_t *s = src->dl_tensor.data, *d = dst->dl_tensor.data, *e = eid->dl_tensor.data;
      for (int i = 0; i < 4; i++) {
        CHECK(s[i] == want_src[i] && d[i] == want_dst[i] && e[i] == want_eid[i],
              "induced edge %d: (%lld, %lld, id %lld)", i, (long long)s[i], (long long)d[i], (long long)e[i]);
      }
    }
    src->deleter(src);
    dst->deleter(dst);
    eid->deleter(eid);
  }
  /* edge ids are optional */
  src = dst = NULL;
  CHECK(gf_graph_induced_subgraph(g, &tn, &src, &dst, NULL) == GF_OK && src && dst, "induced without ids");
  if (src) src->deleter(src);
  if (dst) dst->deleter(dst);
  /* a node without edges among the others: an empty result */
  int64_t lone[] = {4}, lshape = 1;
  DLTensor tl = gft_i64(lone, &lshape);
  src = dst = NULL;
  CHECK(gf_graph_induced_subgraph(g, &tl, &src, &dst, NULL) == GF_OK && src && src->dl_tensor.shape[0] == 0,
        "induced: no edges");
  if (src) src->deleter(src);
  if (dst) dst->deleter(dst);
  /* errors leave the outputs NULL */
  int64_t dup[] = {1, 2, 1}, dshape = 3;
  DLTensor td = gft_i64(dup, &dshape);
  src = dst = eid = NULL;
  CHECK_ERR(gf_graph_induced_subgraph(g, &td, &src, &dst, &eid), GF_EINVAL, "repeats");
  CHECK(src == NULL && dst == NULL && eid == NULL, "outputs NULL after an error");
  int64_t oor[] = {0, 6}, oshape = 2;
  DLTensor to = gft_i64(oor, &oshape);
  CHECK_ERR(gf_graph_induced_subgraph(g, &to, &src, &dst, NULL), GF_EINVAL, "6");
  CHECK_ERR(gf_graph_induced_subgraph(g, NULL, &src, &dst, NULL), GF_EINVAL, "nodes");
  CHECK_ERR(gf_graph_induced_subgraph(g, &tn, NULL, &dst, NULL), GF_EINVAL, "out_src");
  CHECK_ERR(gf_graph_induced_subgraph(g, &tn, &src, NULL, NULL), GF_EINVAL, "out_dst");
  CHECK_ERR(gf_graph_induced_subgraph(NULL, &tn, &src, &dst, NULL), GF_EBADHANDLE, "graph");
}

/* A drawn node set (GF_SUBGRAPH_DRAWN): nodes 3, 1, 0 (3 twice) for every
 * batch; or, with *user set, a refusal. */
static void drawn_deleter(DLManagedTensor *self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
}

static int draw_nodes(void *user, uint64_t key, const DLTensor *in, int64_t max_output, DLManagedTensor **out,
                      char *message, size_t size) {
  (void)in;
  if (*(int *)user) {
    snprintf(message, size, "no draw for batch %llu", (unsigned long long)key);
    return GF_ENOTSUP;
  }
  if (max_output < 4) return GF_EINTERNAL;
  DLManagedTensor *m = (DLManagedTensor *)calloc(1, sizeof *m);
  int64_t *shape = (int64_t *)malloc(sizeof(int64_t)), *ids = (int64_t *)malloc(4 * sizeof(int64_t));
  shape[0] = 4;
  ids[0] = 3, ids[1] = 1, ids[2] = 3, ids[3] = 0;
  m->dl_tensor = gft_i64(ids, shape);
  m->deleter = drawn_deleter;
  *out = m;
  return GF_OK;
}

/* gf_subgraph_loader_open on the 6-node graph: parts {3, 1, 0} and
 * {2, 4, 5}; the batch of part 0 is the subgraph test_induced_subgraph
 * checks, its edges by destination then id; a drawn batch is sorted and
 * the same from the same seed; the options are checked, by name. */
static void test_subgraph_loader(gf_graph *g) {
  int64_t items[] = {0, 1}, ishape = 2, offsets[] = {0, 3, 6}, oshape = 3, pnodes[] = {3, 1, 0, 2, 4, 5}, pshape = 6;
  DLTensor ti = gft_i64(items, &ishape), toff = gft_i64(offsets, &oshape), tpn = gft_i64(pnodes, &pshape);
  gf_loader_options lo = {.struct_size = sizeof lo, .batch_size = 1, .shuffle_seed = 7};
  gf_subgraph_loader_options so = {.struct_size = sizeof so, .kind = GF_SUBGRAPH_PARTS, .loader = &lo,
                                   .edge_order = GF_SUBGRAPH_ORDER_DST_EID, .part_offsets = &toff, .part_nodes = &tpn};
  gf_loader *l = NULL;
  CHECK(gf_subgraph_loader_open(g, &ti, &so, &l) == GF_OK && l, "subgraph loader: open (parts)");
  int64_t nb = 0;
  if (l && gf_loader_num_batches(l, &nb) == GF_OK && gf_loader_start(l, 0) == GF_OK) {
    CHECK(nb == 2, "subgraph loader: one batch a part (%lld)", (long long)nb);
    gf_batch *b = NULL;
    CHECK(gf_loader_next(l, &b) == GF_OK && b, "subgraph loader: a batch");
    if (b) {
      int32_t hops = -1;
      CHECK(gf_batch_num_hops(b, &hops) == GF_OK && hops == 0, "subgraph batch: no blocks (%d)", hops);
      DLManagedTensor *nodes = NULL, *index = NULL, *eids = NULL;
      CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes && nodes->dl_tensor.shape[0] == 3,
            "subgraph batch: part 0's 3 nodes");
      CHECK(gf_batch_take(b, GF_FIELD_COO_INDEX, 0, &index) == GF_OK && index && index->dl_tensor.shape[1] == 4,
            "subgraph batch: 4 edges");
      CHECK(gf_batch_take(b, GF_FIELD_COO_EDGE_IDS, 0, &eids) == GF_OK && eids, "subgraph batch: edge ids");
      if (nodes && index && eids && index->dl_tensor.shape[1] == 4 && nodes->dl_tensor.shape[0] == 3) {
        static const int64_t want_nodes[] = {3, 1, 0}, want_src[] = {1, 2, 0, 1}, want_dst[] = {0, 1, 1, 2},
                             want_eid[] = {6, 2, 3, 0};
        const int64_t *v = nodes->dl_tensor.data, *ix = index->dl_tensor.data, *e = eids->dl_tensor.data;
        for (int i = 0; i < 3; i++) CHECK(v[i] == want_nodes[i], "subgraph node %d: %lld", i, (long long)v[i]);
        for (int i = 0; i < 4; i++) {
          CHECK(ix[i] == want_src[i] && ix[4 + i] == want_dst[i] && e[i] == want_eid[i],
                "subgraph edge %d: (%lld, %lld, id %lld)", i, (long long)ix[i], (long long)ix[4 + i], (long long)e[i]);
        }
      }
      if (nodes) nodes->deleter(nodes);
      if (index) index->deleter(index);
      if (eids) eids->deleter(eids);
      gf_batch_close(b);
    }
  }
  gf_loader_close(l);

  /* gf_loader_start_ordered: the caller's order of the items (part 1 first);
   * bad orders refused with the loader unchanged */
  l = NULL;
  CHECK(gf_subgraph_loader_open(g, &ti, &so, &l) == GF_OK && l, "subgraph loader: reopen (parts)");
  if (l) {
    int64_t order[] = {1, 0}, oshape2 = 2, twice[] = {0, 0}, out_of[] = {0, 2}, one = 1;
    float fl[] = {1, 0};
    DLTensor tord = gft_i64(order, &oshape2), ttwice = gft_i64(twice, &oshape2), tout = gft_i64(out_of, &oshape2);
    DLTensor tshort = gft_i64(order, &one), tfl = gft_vec(fl, &oshape2, kDLFloat, 32);
    CHECK_ERR(gf_loader_start_ordered(l, 0, 0, NULL), GF_EINVAL, "order is NULL");
    CHECK_ERR(gf_loader_start_ordered(l, 0, 0, &ttwice), GF_EINVAL, "order[1] = 0 repeats");
    CHECK_ERR(gf_loader_start_ordered(l, 0, 0, &tout), GF_EINVAL, "order[1] = 2 is out of range");
    CHECK_ERR(gf_loader_start_ordered(l, 0, 0, &tshort), GF_EINVAL, "1 positions for 2 items");
    CHECK_ERR(gf_loader_start_ordered(l, 0, 0, &tfl), GF_ETYPE, "order must be int64 or int32");
    CHECK_ERR(gf_loader_start_ordered(l, 0, 3, &tord), GF_EINVAL, "first_batch = 3");
    CHECK_ERR(gf_loader_start_ordered(NULL, 0, 0, &tord), GF_EBADHANDLE, "");
    gf_batch *b = NULL;
    DLManagedTensor *nodes = NULL;
    CHECK(gf_loader_start_ordered(l, 0, 0, &tord) == GF_OK && gf_loader_next(l, &b) == GF_OK && b,
          "start_ordered: a batch");
    if (b && gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes) {
      const int64_t *v = nodes->dl_tensor.data;
      CHECK(nodes->dl_tensor.shape[0] == 3 && v[0] == 2 && v[1] == 4 && v[2] == 5, "start_ordered: part 1 first");
      nodes->deleter(nodes);
    }
    if (b) gf_batch_close(b);
    gf_loader_close(l);
  }

  /* drawn node sets: sorted, and the same from the same seed */
  int64_t first[6] = {0}, nfirst = -1;
  for (int round = 0; round < 2; round++) {
    gf_subgraph_loader_options ds = {.struct_size = sizeof ds, .kind = GF_SUBGRAPH_EDGES, .loader = &lo,
                                     .weighting = GF_SUBGRAPH_WEIGHT_INVERSE_DEGREE, .budget = 3};
    l = NULL;
    CHECK(gf_subgraph_loader_open(g, &ti, &ds, &l) == GF_OK && l, "subgraph loader: open (edges)");
    gf_batch *b = NULL;
    if (l && gf_loader_start(l, 3) == GF_OK && gf_loader_next(l, &b) == GF_OK && b) {
      DLManagedTensor *nodes = NULL;
      if (gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes) {
        int64_t n = nodes->dl_tensor.shape[0];
        const int64_t *v = nodes->dl_tensor.data;
        CHECK(n >= 2 && n <= 6, "edge draw: 2 to 6 ends (%lld)", (long long)n);
        for (int64_t i = 1; i < n; i++) CHECK(v[i - 1] < v[i], "edge draw: sorted, distinct");
        if (round == 0) {
          nfirst = n;
          for (int64_t i = 0; i < n && i < 6; i++) first[i] = v[i];
        } else {
          CHECK(n == nfirst && memcmp(first, v, (size_t)n * sizeof *v) == 0, "edge draw: the same from the same seed");
        }
        nodes->deleter(nodes);
      }
      gf_batch_close(b);
    }
    gf_loader_close(l);
  }

  /* GF_SUBGRAPH_KHOP: every neighbour of seeds 3 and 1, two hops, made
   * induced: the sample's nodes, seeds first, and the edges among them */
  {
    int32_t fan[] = {-1, -1};
    gf_sample_options ks = {.struct_size = sizeof ks, .num_hops = 2, .fanouts = fan, .frontier = GF_FRONTIER_ALL};
    int64_t kseeds[] = {3, 1}, kshape = 2;
    DLTensor tk = gft_i64(kseeds, &kshape);
    gf_loader_options klo = lo;
    klo.sample = &ks;
    klo.batch_size = 2;
    gf_subgraph_loader_options kh = {.struct_size = sizeof kh, .kind = GF_SUBGRAPH_KHOP, .loader = &klo};
    l = NULL;
    CHECK(gf_subgraph_loader_open(g, &tk, &kh, &l) == GF_OK && l, "subgraph loader: open (khop)");
    gf_batch *b = NULL;
    if (l && gf_loader_start(l, 0) == GF_OK && gf_loader_next(l, &b) == GF_OK && b) {
      DLManagedTensor *seeds = NULL, *nodes = NULL, *index = NULL;
      CHECK(gf_batch_take(b, GF_FIELD_SEEDS, 0, &seeds) == GF_OK && seeds && seeds->dl_tensor.shape[0] == 2,
            "khop batch: its seeds");
      CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes && nodes->dl_tensor.shape[0] >= 2,
            "khop batch: its nodes");
      CHECK(gf_batch_take(b, GF_FIELD_COO_INDEX, 0, &index) == GF_OK && index, "khop batch: its edges");
      if (seeds && nodes && nodes->dl_tensor.shape[0] >= 2) {
        const int64_t *sd = seeds->dl_tensor.data, *v = nodes->dl_tensor.data;
        CHECK(sd[0] == 3 && sd[1] == 1 && v[0] == 3 && v[1] == 1, "khop batch: seeds first");
      }
      if (index && nodes) {
        int64_t e = index->dl_tensor.shape[1], n = nodes->dl_tensor.shape[0];
        const int64_t *ix = index->dl_tensor.data;
        for (int64_t i = 0; i < 2 * e; i++) CHECK(ix[i] >= 0 && ix[i] < n, "khop edge end in range");
      }
      if (seeds) seeds->deleter(seeds);
      if (nodes) nodes->deleter(nodes);
      if (index) index->deleter(index);
      gf_batch_close(b);
    }
    gf_loader_close(l);
    l = NULL;
    kh.loader = &lo; /* no sample */
    CHECK_ERR(gf_subgraph_loader_open(g, &tk, &kh, &l), GF_EINVAL, "GF_SUBGRAPH_KHOP samples with it");
    int64_t krep[] = {3, 3};
    DLTensor tkr = gft_i64(krep, &kshape);
    kh.loader = &klo;
    CHECK_ERR(gf_subgraph_loader_open(g, &tkr, &kh, &l), GF_EINVAL, "repeats");
  }

  /* A drawn node set: the callback's distinct nodes, induced; its refusal
   * fails its batch with its status and message. */
  {
    int refuse = 0;
    gf_batch_callback draw = {sizeof draw, &refuse, draw_nodes};
    gf_subgraph_loader_options dr = so;
    dr.kind = GF_SUBGRAPH_DRAWN;
    dr.part_offsets = dr.part_nodes = NULL;
    dr.draw_callback = &draw;
    CHECK(gf_subgraph_loader_open(g, &ti, &dr, &l) == GF_OK && l, "subgraph loader: open (drawn)");
    gf_batch *b = NULL;
    CHECK(l && gf_loader_start(l, 0) == GF_OK && gf_loader_next(l, &b) == GF_OK && b, "drawn: a batch");
    DLManagedTensor *nodes = NULL;
    if (b && gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes) {
      const int64_t *v = (const int64_t *)nodes->dl_tensor.data;
      CHECK(nodes->dl_tensor.shape[0] == 3 && v[0] == 0 && v[1] == 1 && v[2] == 3, "drawn: the distinct nodes, sorted");
      nodes->deleter(nodes);
    }
    gf_batch_close(b);
    refuse = 1;
    CHECK(gf_loader_start(l, 1) == GF_OK, "drawn: start again");
    CHECK_ERR(gf_loader_next(l, &b), GF_ENOTSUP, "no draw for batch");
    gf_loader_close(l);
    l = NULL;
    dr.draw_callback = NULL;
    CHECK_ERR(gf_subgraph_loader_open(g, &ti, &dr, &l), GF_EINVAL, "draw_callback is for GF_SUBGRAPH_DRAWN only");
    gf_subgraph_loader_options parts = so;
    parts.draw_callback = &draw;
    CHECK_ERR(gf_subgraph_loader_open(g, &ti, &parts, &l), GF_EINVAL, "draw_callback is for GF_SUBGRAPH_DRAWN only");
    gf_batch_callback nofn = {sizeof nofn, NULL, NULL};
    dr.draw_callback = &nofn;
    CHECK_ERR(gf_subgraph_loader_open(g, &ti, &dr, &l), GF_EINVAL, "draw_callback->fn is NULL");
    /* 0.3.0's layout (without draw_callback) is still read */
    parts = so;
    parts.struct_size = (uint32_t)(offsetof(gf_subgraph_loader_options, edge_feature_names) + sizeof(void *));
    CHECK(gf_subgraph_loader_open(g, &ti, &parts, &l) == GF_OK && l, "subgraph loader: 0.3.0's struct_size");
    gf_loader_close(l);
  }

  /* errors name the argument and leave *out NULL */
  l = (gf_loader *)&lo;
  CHECK_ERR(gf_subgraph_loader_open(g, NULL, &so, &l), GF_EINVAL, "items");
  CHECK(l == NULL, "subgraph loader: out NULL after an error");
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, NULL, &l), GF_EINVAL, "options");
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &so, NULL), GF_EINVAL, "out_loader");
  CHECK_ERR(gf_subgraph_loader_open(NULL, &ti, &so, &l), GF_EBADHANDLE, "graph");
  gf_subgraph_loader_options bad = so;
  bad.struct_size = 8;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "struct_size");
  bad = so;
  bad.kind = 9;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "kind");
  bad = so;
  bad.kind = GF_SUBGRAPH_NODES;
  bad.weighting = GF_SUBGRAPH_WEIGHT_DEGREE_SUM;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "does not weigh nodes");
  bad = so;
  bad.edge_order = 5;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "edge_order");
  bad = so;
  bad.kind = GF_SUBGRAPH_WALKS;
  bad.budget = -1;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "budget");
  bad = so;
  bad.loader = NULL;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "options->loader");
  gf_sample_options sample = {.struct_size = sizeof sample};
  gf_loader_options lbad = lo;
  lbad.sample = &sample;
  bad = so;
  bad.loader = &lbad;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "sample must be NULL");
  const char *label[] = {"label"};
  lbad = lo;
  lbad.num_label_names = 1;
  lbad.label_names = label;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "no seeds");
  lbad = lo;
  lbad.batch_size = 0;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "batch_size");
  int64_t far[] = {0, 2}, fshape = 2;
  DLTensor tf = gft_i64(far, &fshape);
  CHECK_ERR(gf_subgraph_loader_open(g, &tf, &so, &l), GF_EINVAL, "not a part id");
  bad = so;
  bad.part_offsets = NULL;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "part_offsets");
  bad = so;
  bad.kind = GF_SUBGRAPH_WALKS;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "GF_SUBGRAPH_PARTS only");
  int64_t rep[] = {3, 3, 0, 2, 4, 5};
  DLTensor trep = gft_i64(rep, &pshape);
  bad = so;
  bad.part_nodes = &trep;
  CHECK_ERR(gf_subgraph_loader_open(g, &ti, &bad, &l), GF_EINVAL, "in two parts");
  CHECK(l == NULL, "subgraph loader: still NULL");
}

/* ---------------------------------------------------------------------------
 * Edge-level sampling */

static int64_t *take_link(gf_batch *b, int32_t field, int64_t *n, DLManagedTensor **keep) {
  *keep = NULL;
  *n = -1;
  if (gf_batch_take_link(b, field, keep) != GF_OK || *keep == NULL) return NULL;
  *n = (*keep)->dl_tensor.shape[0];
  return (int64_t *)(*keep)->dl_tensor.data;
}

void test_edge_sampler(void) {
  int64_t sp = 7, si = 10;
  DLTensor tp = gft_i64(indptr, &sp), ti = gft_i64(indices, &si);
  gf_graph *g = NULL;
  CHECK(gf_graph_from_csc(&tp, &ti, NULL, NULL, &g) == GF_OK && g, "from_csc");
  int32_t fan[] = {-1};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 1;
  so.fanouts = fan;
  so.seed = 3;
  gf_edge_sampler_options eo;
  memset(&eo, 0, sizeof eo);
  eo.struct_size = sizeof eo;
  eo.sample = &so;
  eo.mode = GF_LINK_DGL;
  eo.negative = GF_NEG_PER_SOURCE_UNIFORM;
  eo.amount = 2;
  eo.exclude = GF_EXCLUDE_SELF;
  gf_edge_sampler *es = NULL;
  CHECK(gf_edge_sampler_open(g, &eo, &es) == GF_OK && es, "edge sampler open");

  /* edge id = CSC position here: edge e ends at the v with indptr[v] <= e */
  int64_t eids[] = {0, 4}, ne = 2;
  DLTensor te = gft_i64(eids, &ne);
  gf_batch *b = NULL;
  CHECK(gf_edge_sampler_sample(es, &te, NULL, 7, &b) == GF_OK && b, "sample edges");
  DLManagedTensor *ts, *tps, *tpd, *tns, *tei;
  int64_t n_seeds, n_ps, n_pd, n_ns, n_ei;
  CHECK(gf_batch_take(b, GF_FIELD_SEEDS, 0, &ts) == GF_OK, "take seeds");
  int64_t *seeds = (int64_t *)ts->dl_tensor.data;
  n_seeds = ts->dl_tensor.shape[0];
  int64_t *ps = take_link(b, GF_LINK_POS_SRC, &n_ps, &tps);
  int64_t *pd = take_link(b, GF_LINK_POS_DST, &n_pd, &tpd);
  int64_t *ns = take_link(b, GF_LINK_NEG_SRC, &n_ns, &tns);
  CHECK(ps && pd && n_ps == 2 && n_pd == 2 && ns && n_ns == 4, "pair lengths %lld %lld %lld",
        (long long)n_ps, (long long)n_pd, (long long)n_ns);
  for (int i = 0; ps && pd && i < 2; i++) {
    int64_t e = eids[i], v = 0;
    while (indptr[v + 1] <= e) v++;
    CHECK(ps[i] < n_seeds && pd[i] < n_seeds && seeds[ps[i]] == indices[e] && seeds[pd[i]] == v,
          "pair %d is edge %lld", i, (long long)e);
  }
  CHECK(gf_batch_take(b, GF_FIELD_EDGE_IDS, 0, &tei) == GF_OK, "take edge ids");
  n_ei = tei->dl_tensor.shape[0];
  for (int64_t k = 0; k < n_ei; k++) {
    int64_t e = ((int64_t *)tei->dl_tensor.data)[k];
    CHECK(e != 0 && e != 4, "seed edge %lld was excluded", (long long)e);
  }
  DLManagedTensor *again = NULL;
  CHECK_ERR(gf_batch_take_link(b, GF_LINK_POS_SRC, &again), GF_ESTATE, "already taken");
  CHECK_ERR(gf_batch_take_link(b, 99, &again), GF_EINVAL, "GF_LINK_");
  gft_drop(ts), gft_drop(tps), gft_drop(tpd), gft_drop(tns), gft_drop(tei);
  gf_batch_close(b);

  /* the same key gives the same batch */
  gf_batch *b1 = NULL, *b2 = NULL;
  CHECK(gf_edge_sampler_sample(es, &te, NULL, 9, &b1) == GF_OK, "sample key 9");
  CHECK(gf_edge_sampler_sample(es, &te, NULL, 9, &b2) == GF_OK, "sample key 9 again");
  int64_t n1, n2;
  DLManagedTensor *k1, *k2;
  int64_t *d1 = take_link(b1, GF_LINK_NEG_DST, &n1, &k1), *d2 = take_link(b2, GF_LINK_NEG_DST, &n2, &k2);
  CHECK(d1 && d2 && n1 == n2 && memcmp(d1, d2, (size_t)n1 * 8) == 0, "same negatives for the same key");
  gft_drop(k1), gft_drop(k2);
  gf_batch_close(b1);
  gf_batch_close(b2);

  /* errors name the problem */
  gf_batch *bad = NULL;
  CHECK_ERR(gf_edge_sampler_sample(es, &te, &te, 0, &bad), GF_EINVAL, "seeds_dst");
  int64_t out_of_range[] = {10};
  int64_t one = 1;
  DLTensor tr = gft_i64(out_of_range, &one);
  CHECK_ERR(gf_edge_sampler_sample(es, &tr, NULL, 0, &bad), GF_EINVAL, "10");
  CHECK(bad == NULL, "no batch on failure");
  gf_edge_sampler_close(es);
  CHECK_ERR(gf_edge_sampler_sample(es, &te, NULL, 0, &bad), GF_EBADHANDLE, "edge sampler");
  gf_edge_sampler_close(es);
  eo.mode = 7;
  gf_edge_sampler *es2 = NULL;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_EINVAL, "mode");
  eo.mode = GF_LINK_DGL;
  eo.amount = 1.5;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_EINVAL, "amount");
  CHECK_ERR(gf_edge_sampler_open(g, NULL, &es2), GF_EINVAL, "options");

  /* GlobalUniform's flags: DGL's exclude_self_loops=False and replace=True;
     unknown bits, or flags on another negative sampler, are refused; the
     first layout (ending at reverse_half) reads them as 0 */
  eo.amount = 2;
  eo.negative = GF_NEG_GLOBAL_UNIFORM;
  eo.negative_flags = GF_NEG_KEEP_SELF_LOOPS | GF_NEG_REPLACE;
  CHECK(gf_edge_sampler_open(g, &eo, &es2) == GF_OK && es2, "GlobalUniform with flags");
  CHECK(gf_edge_sampler_sample(es2, &te, NULL, 1, &b) == GF_OK, "GlobalUniform with flags samples");
  gf_batch_close(b);
  gf_edge_sampler_close(es2);
  eo.negative_flags = 4;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_EINVAL, "negative_flags");
  eo.negative = GF_NEG_PER_SOURCE_UNIFORM;
  eo.negative_flags = GF_NEG_REPLACE;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_EINVAL, "not GF_NEG_GLOBAL_UNIFORM");
  eo.struct_size = (uint32_t)(offsetof(gf_edge_sampler_options, reverse_half) + sizeof eo.reverse_half);
  CHECK(gf_edge_sampler_open(g, &eo, &es2) == GF_OK, "the first layout: negative_flags unread");
  gf_edge_sampler_close(es2);
  eo.struct_size = sizeof eo;
  eo.negative_flags = 0;

  /* PyG triplet: dst_neg_index is [B, amount] */
  eo.mode = GF_LINK_PYG;
  eo.negative = GF_NEG_TRIPLET;
  eo.amount = 3;
  eo.exclude = GF_EXCLUDE_NONE;
  CHECK(gf_edge_sampler_open(g, &eo, &es2) == GF_OK, "PyG edge sampler");
  int64_t src[] = {1, 5}, dst[] = {0, 3};
  DLTensor tsrc = gft_i64(src, &ne), tdst = gft_i64(dst, &ne);
  CHECK(gf_edge_sampler_sample(es2, &tsrc, &tdst, 0, &b) == GF_OK, "sample pairs");
  DLManagedTensor *tn = NULL;
  CHECK(gf_batch_take_link(b, GF_LINK_DST_NEG_INDEX, &tn) == GF_OK && tn && tn->dl_tensor.ndim == 2 &&
            tn->dl_tensor.shape[0] == 2 && tn->dl_tensor.shape[1] == 3,
        "dst_neg_index shape");
  gft_drop(tn);
  gf_batch_close(b);
  CHECK_ERR(gf_edge_sampler_sample(es2, &tsrc, NULL, 0, &bad), GF_EINVAL, "seeds_dst is NULL");
  gf_edge_sampler_close(es2);

  /* PyG's weighted negatives: only nodes of positive weight are drawn */
  float wv[6] = {0, 0, 0, 0, 0, 1}, ws[3] = {1, 1, 1};
  int64_t nw = 6, nw_short = 3;
  DLTensor tw = {.data = wv, .device = {kDLCPU, 0}, .ndim = 1, .dtype = {kDLFloat, 32, 1}, .shape = &nw};
  eo.negative_weights = &tw;
  CHECK(gf_edge_sampler_open(g, &eo, &es2) == GF_OK, "weighted PyG edge sampler");
  CHECK(gf_edge_sampler_sample(es2, &tsrc, &tdst, 0, &b) == GF_OK, "weighted sample");
  DLManagedTensor *tnn = NULL, *tseeds = NULL;
  CHECK(gf_batch_take_link(b, GF_LINK_DST_NEG_INDEX, &tnn) == GF_OK, "weighted dst_neg_index");
  CHECK(gf_batch_take(b, GF_FIELD_SEEDS, 0, &tseeds) == GF_OK, "weighted seeds");
  for (int64_t i = 0; tnn && tseeds && i < 6; i++) {
    int64_t pos = ((int64_t *)tnn->dl_tensor.data)[i];
    CHECK(((int64_t *)tseeds->dl_tensor.data)[pos] == 5, "negative %lld is node 5", (long long)i);
  }
  gft_drop(tnn), gft_drop(tseeds);
  gf_batch_close(b);
  gf_edge_sampler_close(es2);
  tw.shape = &nw_short;
  tw.data = ws;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_EINVAL, "3 weights for a graph of");
  tw.shape = &nw;
  tw.data = wv;
  tw.dtype.code = kDLInt;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_ETYPE, "float32 or float64");
  tw.dtype.code = kDLFloat;
  eo.negative = GF_NEG_NONE;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_EINVAL, "GF_NEG_NONE");
  eo.negative = GF_NEG_TRIPLET;
  eo.mode = GF_LINK_DGL;
  eo.negative = GF_NEG_PER_SOURCE_UNIFORM;
  CHECK_ERR(gf_edge_sampler_open(g, &eo, &es2), GF_EINVAL, "GF_LINK_PYG only");
  eo.negative_weights = NULL;

  /* PyG's temporal link sampling: one time per pair, disjoint */
  int64_t etimes[10] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, ne_t = 10;
  DLTensor tet = gft_i64(etimes, &ne_t);
  CHECK(gf_graph_set_edge_time(g, &tet) == GF_OK, "edge times");
  gf_sample_options ts_opt = so;
  ts_opt.frontier = GF_FRONTIER_NEW;
  ts_opt.disjoint = 1;
  ts_opt.temporal = GF_TEMPORAL_EDGE;
  eo.sample = &ts_opt;
  eo.negative = GF_NEG_NONE;
  eo.mode = GF_LINK_PYG;
  eo.exclude = GF_EXCLUDE_NONE;
  CHECK(gf_edge_sampler_open(g, &eo, &es2) == GF_OK, "temporal PyG edge sampler");
  int64_t ptimes[] = {1, 9};
  DLTensor tpt = gft_i64(ptimes, &ne);
  CHECK(gf_edge_sampler_sample_timed(es2, &tsrc, &tdst, &tpt, 0, &b) == GF_OK, "timed sample");
  DLManagedTensor *tbt = NULL, *teid = NULL;
  CHECK(gf_batch_take(b, GF_FIELD_BATCH, 0, &tbt) == GF_OK && tbt->dl_tensor.shape[0] >= 4, "disjoint batch");
  CHECK(gf_batch_take(b, GF_FIELD_EDGE_IDS, 0, &teid) == GF_OK, "timed edge ids");
  int64_t *bt = (int64_t *)tbt->dl_tensor.data;
  CHECK(bt[0] == 0 && bt[1] == 1 && bt[2] == 0 && bt[3] == 1, "each seed's pair");
  gft_drop(tbt), gft_drop(teid);
  gf_batch_close(b);
  CHECK_ERR(gf_edge_sampler_sample_timed(es2, &tsrc, &tdst, NULL, 0, &bad), GF_EINVAL, "seed_times");
  CHECK_ERR(gf_edge_sampler_sample(es2, &tsrc, &tdst, 0, &bad), GF_EINVAL, "one time per seed pair");
  gf_edge_sampler_close(es2);
  eo.sample = &so;
  CHECK(gf_edge_sampler_open(g, &eo, &es2) == GF_OK, "untimed PyG edge sampler");
  CHECK_ERR(gf_edge_sampler_sample_timed(es2, &tsrc, &tdst, &tpt, 0, &bad), GF_EINVAL, "not temporal");
  gf_edge_sampler_close(es2);

  /* a node batch is not an edge batch */
  CHECK(gf_sample(g, &tsrc, &so, &b) == GF_OK, "node sample");
  CHECK_ERR(gf_batch_take_link(b, GF_LINK_POS_SRC, &tn), GF_EINVAL, "not an edge batch");
  gf_batch_close(b);
  gf_graph_close(g);
}

/* Offline partitioning: gf_dataset_partition of a generated dataset with an
   engine assignment and a given one, the progress calls, that each rank's
   folder opens, and the error paths. */
static void count_progress(void *user, int64_t done, int64_t total) {
  int64_t *seen = user;
  if (done == seen[0] + 1 && total == 3) {
    seen[0] = done;
  } else {
    seen[1]++; /* out of order */
  }
}

void test_dataset_partition(void) {
  char root[200];
  if (!gft_tmpdir(root, sizeof root, "partition")) {
    CHECK(0, "mkdtemp");
    return;
  }
  char src[256], dst[256], part[300];
  snprintf(src, sizeof src, "%s/src", root);
  snprintf(dst, sizeof dst, "%s/out", root);
  CHECK(gf_dataset_generate("tiny", src, 7, 1) == GF_OK, "generate tiny");
  gf_graph *sg = NULL;
  int64_t n = 0;
  CHECK(gf_graph_open(src, NULL, &sg) == GF_OK && gf_graph_num_nodes(sg, &n) == GF_OK && n > 3,
        "open source");
  gf_graph_close(sg);

  int64_t seen[2] = {0, 0};
  gf_partition_options po;
  memset(&po, 0, sizeof po);
  po.struct_size = sizeof po;
  po.method = GF_PARTITION_RANDOM;
  po.num_parts = 3;
  po.layout = GF_LAYOUT_HYBRID;
  po.seed = 5;
  po.progress = count_progress;
  po.progress_user = seen;
  CHECK(gf_dataset_partition(src, dst, &po) == GF_OK, "partition random hybrid: %s", gf_errmsg());
  CHECK(seen[0] == 3 && seen[1] == 0, "progress 1, 2, 3 of 3 (got %lld, %lld bad)", (long long)seen[0],
        (long long)seen[1]);
  int64_t total = 0;
  for (int r = 0; r < 3; r++) {
    snprintf(part, sizeof part, "%s/part-%d", dst, r);
    gf_graph *pg = NULL;
    int64_t pn = 0;
    CHECK(gf_graph_open(part, NULL, &pg) == GF_OK && gf_graph_num_nodes(pg, &pn) == GF_OK,
          "open %s", part);
    CHECK(pn == n, "hybrid: every node on rank %d", r);
    total += pn;
    gf_graph_close(pg);
  }
  CHECK(total == 3 * n, "hybrid node count");
  snprintf(part, sizeof part, "%s/partition.json", dst);
  CHECK(access(part, R_OK) == 0, "partition.json written");

  /* a given assignment (int32), self-reliant */
  int32_t *assign = calloc((size_t)n, sizeof *assign);
  for (int64_t v = 0; v < n; v++) assign[v] = (int32_t)(v % 2);
  DLTensor ta = gft_vec(assign, &n, kDLInt, 32);
  gf_partition_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = sizeof go;
  go.method = GF_PARTITION_GIVEN;
  go.num_parts = 2;
  go.layout = GF_LAYOUT_SELF_RELIANT;
  go.num_hops = 1;
  go.assignment = &ta;
  go.method_name = "alternate";
  /* dst holds the partition above: refused, then replaced when asked (issue 34) */
  CHECK_ERR(gf_dataset_partition(src, dst, &go), GF_EINVAL, "holds a dataset or a partition");
  go.overwrite = 1;
  CHECK(gf_dataset_partition(src, dst, &go) == GF_OK, "partition given: %s", gf_errmsg());
  snprintf(part, sizeof part, "%s/part-2", dst);
  CHECK(access(part, F_OK) != 0, "the earlier run's part-2 is gone");
  go.overwrite = 0;
  /* the source folder, inside it, above it (issue 34) */
  CHECK_ERR(gf_dataset_partition(src, src, &go), GF_EINVAL, "is the source folder");
  snprintf(part, sizeof part, "%s/parts", src);
  CHECK_ERR(gf_dataset_partition(src, part, &go), GF_EINVAL, "is inside the source folder");
  CHECK_ERR(gf_dataset_partition(src, root, &go), GF_EINVAL, "holds the source folder");
  /* the dataset writers: a used folder refused, replaced when asked */
  gf_output_options oo;
  memset(&oo, 0, sizeof oo);
  oo.struct_size = sizeof oo;
  CHECK_ERR(gf_dataset_generate("tiny", src, 7, 1), GF_EINVAL, "the output folder");
  CHECK_ERR(gf_dataset_generate_into("tiny", src, 7, 1, &oo), GF_EINVAL, "holds a dataset or a partition");
  oo.overwrite = 1;
  CHECK(gf_dataset_generate_into("tiny", src, 7, 1, &oo) == GF_OK, "generate over: %s", gf_errmsg());
  oo.struct_size = 3;
  CHECK_ERR(gf_dataset_generate_into("tiny", src, 7, 1, &oo), GF_EINVAL, "options->struct_size = 3");
  CHECK_ERR(gf_dataset_convert_npy_into(src, src, &oo), GF_EINVAL, "options->struct_size = 3");
  oo.struct_size = sizeof oo;
  oo.overwrite = 0;
  CHECK_ERR(gf_dataset_convert_npy(root, src), GF_EINVAL, "inside the source folder");
  CHECK_ERR(gf_dataset_convert_npy_into(src, dst, &oo), GF_EINVAL, "holds a dataset or a partition");

  /* the streaming method under a memory limit (issue 35): refused up front
   * when the assignment cannot fit, written when it can; a negative limit
   * is refused by name */
  gf_partition_options ldg = go;
  ldg.method = GF_PARTITION_LDG;
  ldg.assignment = NULL;
  ldg.method_name = NULL;
  ldg.overwrite = 1;
  ldg.memory_limit_bytes = 100;
  CHECK_ERR(gf_dataset_partition(src, dst, &ldg), GF_EINVAL, "memory limit of 100 bytes is below");
  ldg.memory_limit_bytes = -1;
  CHECK_ERR(gf_dataset_partition(src, dst, &ldg), GF_EINVAL, "options->memory_limit_bytes = -1");
  ldg.memory_limit_bytes = (int64_t)1 << 30;
  CHECK(gf_dataset_partition(src, dst, &ldg) == GF_OK, "partition ldg: %s", gf_errmsg());

  /* errors */
  gf_partition_options bad = go;
  CHECK_ERR(gf_dataset_partition(src, dst, NULL), GF_EINVAL, "options is NULL");
  CHECK_ERR(gf_dataset_partition(NULL, dst, &go), GF_EINVAL, "src_dir");
  CHECK_ERR(gf_dataset_partition(src, NULL, &go), GF_EINVAL, "dst_dir");
  bad.struct_size = 0;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "struct_size");
  bad = go;
  bad.num_parts = 0;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "num_parts = 0");
  bad.num_parts = GF_MAX_PARTS + 1;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "num_parts = 65537");
  bad = go;
  bad.layout = 9;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "options->layout = 9");
  bad = go;
  bad.method = 9;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "options->method = 9");
  bad = go;
  bad.num_hops = -1;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "num_hops");
  bad = go;
  bad.assignment = NULL;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "assignment is NULL");
  bad = go;
  bad.method = GF_PARTITION_RANGE;
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "not GF_PARTITION_GIVEN");
  bad = go;
  bad.num_parts = 1; /* assignment holds rank 1 */
  CHECK_ERR(gf_dataset_partition(src, dst, &bad), GF_EINVAL, "out of range");
  int64_t short_n = n - 1;
  ta.shape = &short_n;
  CHECK_ERR(gf_dataset_partition(src, dst, &go), GF_EINVAL, "entries");
  ta.shape = &n;
  ta.dtype.code = kDLFloat;
  CHECK_ERR(gf_dataset_partition(src, dst, &go), GF_ETYPE, "assignment");
  CHECK_ERR(gf_dataset_partition(root, dst, &po), GF_EIO, "graphferry.json");
  free(assign);

  CHECK(gft_rmtree(root) == 0, "clean up");
}

/* ---------------------------------------------------------------------- */
/* Typed graphs, per-relation fan-outs, disjoint and temporal sampling    */

/* gf_sample_options as the header before the typed fields declared it
   (ending with layer_dependency, sizeof 64 on LP64). */
typedef struct {
  uint32_t struct_size;
  int32_t num_hops;
  const int32_t *fanouts;
  int32_t replace;
  int32_t frontier;
  uint64_t seed;
  int32_t num_threads;
  int32_t scheme;
  int32_t biased;
  int32_t layer_without_replacement;
  const DLTensor *exclude_edges;
  int32_t layer_dependency;
} sample_options_layer_dependency;

/* Types A = {0, 1}, B = {2, 3, 4}; relations 0: A->B (edges 0..3),
   1: B->B (4..6), 2: B->A (7..9), given relation by relation. */
static int64_t h_src[] = {0, 1, 0, 1, 3, 4, 2, 2, 3, 4};
static int64_t h_dst[] = {2, 2, 3, 4, 2, 2, 3, 0, 0, 1};
static int64_t h_rel(int64_t e) { return e < 4 ? 0 : e < 7 ? 1 : 2; }

static void test_hetero(void) {
  int64_t ne = 10;
  DLTensor ts = gft_i64(h_src, &ne), td = gft_i64(h_dst, &ne);
  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = sizeof go;
  go.num_patches = 2;
  go.partition = GF_PARTITION_RANDOM;
  go.seed = 3;
  go.num_nodes = 5;
  gf_graph *g = NULL;
  CHECK(gf_graph_from_coo(&ts, &td, &go, &g) == GF_OK && g, "typed graph from coo");
  if (!g) return;
  int32_t nt = -1, nr = -1;
  CHECK(gf_graph_num_types(g, &nt, &nr) == GF_OK && nt == 0 && nr == 0, "untyped: 0, 0");

  int64_t noff[] = {0, 2, 5}, eoff[] = {0, 4, 7, 10};
  int32_t rs[] = {0, 1, 1}, rd[] = {1, 1, 0};
  /* argument checks */
  CHECK_ERR(gf_graph_set_types(g, 2, NULL, 3, eoff, rs, rd), GF_EINVAL, "node_offsets is NULL");
  CHECK_ERR(gf_graph_set_types(g, 0, noff, 3, eoff, rs, rd), GF_EINVAL, "num_node_types = 0");
  CHECK_ERR(gf_graph_set_types(g, 2, noff, -1, eoff, rs, rd), GF_EINVAL, "num_relations = -1");
  int64_t bad_noff[] = {0, 2, 4};
  CHECK_ERR(gf_graph_set_types(g, 2, bad_noff, 3, eoff, rs, rd), GF_EINVAL, "node_offsets[2] = 4");
  int64_t bad_eoff[] = {0, 5, 4, 10};
  CHECK_ERR(gf_graph_set_types(g, 2, noff, 3, bad_eoff, rs, rd), GF_EINVAL, "edge_offsets[2] = 4 is less than");
  int32_t bad_rd[] = {1, 1, 2};
  CHECK_ERR(gf_graph_set_types(g, 2, noff, 3, eoff, rs, bad_rd), GF_EINVAL, "relation_dst_type[2] = 2 is out of range");
  int32_t wrong_rd[] = {1, 0, 0};
  CHECK_ERR(gf_graph_set_types(g, 2, noff, 3, eoff, rs, wrong_rd), GF_EINVAL, "destination type is 0");
  CHECK_ERR(gf_graph_set_types(NULL, 2, noff, 3, eoff, rs, rd), GF_EBADHANDLE, "");
  CHECK(gf_graph_num_types(g, &nt, &nr) == GF_OK && nt == 0, "a refused gf_graph_set_types leaves the graph untyped");
  CHECK(gf_graph_set_types(g, 2, noff, 3, eoff, rs, rd) == GF_OK, "set types");
  CHECK(gf_graph_num_types(g, &nt, &nr) == GF_OK && nt == 2 && nr == 3, "2 node types, 3 relations");
  CHECK_ERR(gf_graph_num_types(g, NULL, &nr), GF_EINVAL, "NULL");

  /* per-relation fan-outs: seeds 2 (type B) and 0 (type A) */
  int64_t seeds[] = {2, 0};
  int64_t ns = 2;
  DLTensor tseeds = gft_i64(seeds, &ns);
  int32_t rf[] = {1, 2, 0, /* hop 1 */ 0, 0, -1};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 2;
  so.num_relations = 3;
  so.relation_fanouts = rf;
  so.seed = 7;
  gf_batch *b = NULL;
  CHECK(gf_sample(g, &tseeds, &so, &b) == GF_OK && b, "sample with relation fan-outs, fanouts NULL");
  if (b) {
    int64_t n0 = 0, np = 0, nn = 0;
    int64_t *e0 = gft_take_i64(b, GF_FIELD_EDGE_IDS, 0, &n0);
    int64_t *ip = gft_take_i64(b, GF_FIELD_INDPTR, 0, &np);
    int64_t *nodes = gft_take_i64(b, GF_FIELD_NODES, 0, &nn);
    /* seed 2 (B): 1 edge of relation 0 of {0, 1}, then 2 of relation 1 =
       {4, 5}; seed 0 (A): nothing (relation 2 has fan-out 0 in hop 0). */
    CHECK(e0 && ip && np == 3 && ip[1] == 3 && ip[2] == 3, "hop 0 counts per destination");
    if (e0 && n0 == 3) {
      CHECK(h_rel(e0[0]) == 0 && e0[1] == 4 && e0[2] == 5, "relation order, fan-out per relation");
    }
    CHECK(nodes && nn >= 2 && nodes[0] == 2 && nodes[1] == 0, "seeds first");
    free(e0);
    free(ip);
    free(nodes);
    DLManagedTensor *t = NULL;
    CHECK_ERR(gf_batch_take(b, GF_FIELD_BATCH, 0, &t), GF_EINVAL, "not disjoint");
    gf_batch_close(b);
    b = NULL;
  }
  gf_sample_options bad = so;
  bad.num_relations = 2;
  CHECK_ERR(gf_sample(g, &tseeds, &bad, &b), GF_EINVAL, "the graph has 3 relations");
  bad = so;
  rf[4] = -2;
  CHECK_ERR(gf_sample(g, &tseeds, &bad, &b), GF_EINVAL, "relation_fanouts[4] (hop 1, relation 1) = -2");
  rf[4] = 0;
  bad.num_relations = 0;
  CHECK_ERR(gf_sample(g, &tseeds, &bad, &b), GF_EINVAL, "num_relations = 0 is out of range");
  bad = so;
  bad.relation_fanouts = NULL;
  CHECK_ERR(gf_sample(g, &tseeds, &bad, &b), GF_EINVAL, "relation_fanouts is NULL");
  bad = so;
  bad.scheme = GF_SCHEME_LAYER_WISE;
  CHECK_ERR(gf_sample(g, &tseeds, &bad, &b), GF_EINVAL, "LayerWise");
  CHECK(b == NULL, "no batch on error");

  /* An older struct_size (ending with layer_dependency) never reads the new
     fields, even with garbage in its padding. */
  int32_t fan[] = {2, 2};
  sample_options_layer_dependency old;
  memset(&old, 0x5a, sizeof old);
  old.struct_size = sizeof old;
  old.num_hops = 2;
  old.fanouts = fan;
  old.replace = 0;
  old.frontier = GF_FRONTIER_ALL;
  old.seed = 1;
  old.num_threads = 1;
  old.scheme = GF_SCHEME_NODE_WISE;
  old.biased = 0;
  old.layer_without_replacement = 0;
  old.exclude_edges = NULL;
  old.layer_dependency = 0;
  CHECK(gf_sample(g, &tseeds, (const gf_sample_options *)(void *)&old, &b) == GF_OK,
        "a %zu-byte gf_sample_options (up to layer_dependency) with garbage padding", sizeof old);
  gf_batch_close(b);
  b = NULL;

  /* disjoint + temporal (node times), repeated seeds */
  int64_t ntime[] = {5, 1, 9, 3, 7};
  int64_t nn5 = 5;
  DLTensor tnt = gft_i64(ntime, &nn5);
  CHECK(gf_graph_set_node_time(g, &tnt) == GF_OK, "set node time");
  int64_t short_shape = 4;
  DLTensor tshort = gft_i64(ntime, &short_shape);
  CHECK_ERR(gf_graph_set_node_time(g, &tshort), GF_EINVAL, "node times have 4 entries");
  CHECK_ERR(gf_graph_set_node_time(g, NULL), GF_EINVAL, "time is NULL");
  DLTensor tf = tnt;
  tf.dtype.code = kDLFloat;
  CHECK_ERR(gf_graph_set_edge_time(g, &tf), GF_ETYPE, "int64");
  int64_t etime[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  DLTensor tet = gft_i64(etime, &ne);
  CHECK(gf_graph_set_edge_time(g, &tet) == GF_OK, "set edge time");

  int64_t dseeds[] = {2, 2, 0};
  int64_t dtimes[] = {4, 9, 100};
  int64_t nd = 3;
  DLTensor tds = gft_i64(dseeds, &nd), tdt = gft_i64(dtimes, &nd);
  int32_t dfan[] = {-1, -1};
  gf_sample_options ds;
  memset(&ds, 0, sizeof ds);
  ds.struct_size = sizeof ds;
  ds.num_hops = 2;
  ds.fanouts = dfan;
  ds.frontier = GF_FRONTIER_NEW;
  ds.disjoint = 1;
  ds.temporal = GF_TEMPORAL_NODE;
  ds.seed_times = &tdt;
  CHECK(gf_sample(g, &tds, &ds, &b) == GF_OK && b, "disjoint temporal sample");
  if (b) {
    int64_t nn = 0, nb = 0;
    int64_t *nodes = gft_take_i64(b, GF_FIELD_NODES, 0, &nn);
    int64_t *batch = gft_take_i64(b, GF_FIELD_BATCH, 0, &nb);
    CHECK(nodes && batch && nb == nn && nn >= 3, "GF_FIELD_BATCH has one entry per node");
    if (nodes && batch && nb == nn) {
      CHECK(batch[0] == 0 && batch[1] == 1 && batch[2] == 2 && nodes[0] == 2 && nodes[1] == 2,
            "seeds first, each its own subgraph");
      for (int64_t i = 3; i < nn; i++) {
        CHECK(ntime[nodes[i]] <= dtimes[batch[i]], "node %lld (time %lld) within its seed time %lld",
              (long long)nodes[i], (long long)ntime[nodes[i]], (long long)dtimes[batch[i]]);
      }
    }
    free(nodes);
    free(batch);
    gf_batch_close(b);
    b = NULL;
  }
  bad = ds;
  bad.seed_times = NULL;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "seed_times is NULL");
  bad = ds;
  int64_t two = 2;
  DLTensor tdt2 = gft_i64(dtimes, &two);
  bad.seed_times = &tdt2;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "2 entries for 3 seeds");
  bad = ds;
  bad.temporal = 5;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "temporal = 5");
  bad = ds;
  bad.temporal_strategy = 3;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "temporal_strategy = 3");
  bad = ds;
  bad.disjoint = 0;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "Temporal needs Request.Disjoint");
  bad.temporal = GF_TEMPORAL_NONE;
  bad.seed_times = NULL;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "duplicates");
  bad = ds;
  bad.temporal = GF_TEMPORAL_NONE;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "seed_times is set");
  bad = ds;
  bad.frontier = GF_FRONTIER_ALL;
  CHECK_ERR(gf_sample(g, &tds, &bad, &b), GF_EINVAL, "FrontierNew");
  CHECK(b == NULL, "no batch on error");

  /* a temporal disjoint loader with seed times; types pinned while open */
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = &ds;
  lo.batch_size = 2;
  gf_loader *l = NULL;
  CHECK_ERR(gf_loader_open(g, &tds, &lo, &l), GF_EINVAL, "seed_times is NULL");
  lo.seed_times = &tdt2;
  CHECK_ERR(gf_loader_open(g, &tds, &lo, &l), GF_EINVAL, "2 entries for 3 seeds");
  lo.seed_times = &tdt;
  CHECK(gf_loader_open(g, &tds, &lo, &l) == GF_OK && l, "temporal loader");
  CHECK_ERR(gf_graph_set_types(g, 2, noff, 3, eoff, rs, rd), GF_ESTATE, "loader");
  CHECK_ERR(gf_graph_set_node_time(g, &tnt), GF_ESTATE, "loader");
  int64_t seen = 0;
  if (l && gf_loader_start(l, 0) == GF_OK) {
    for (;;) {
      gf_batch *lb = NULL;
      int rc = gf_loader_next(l, &lb);
      if (rc != GF_OK) {
        CHECK(rc == GF_DONE, "loader ends with GF_DONE (rc %d)", rc);
        break;
      }
      int64_t nb = 0, nn = 0;
      int64_t *batch = gft_take_i64(lb, GF_FIELD_BATCH, 0, &nb);
      int64_t *nodes = gft_take_i64(lb, GF_FIELD_NODES, 0, &nn);
      int64_t hn = 0;
      int64_t *hc = gft_take_i64(lb, GF_FIELD_HOP_COUNTS, 0, &hn);
      CHECK(batch && nodes && nb == nn && hc, "loader batches are disjoint");
      if (hc) seen += hc[0];
      free(batch);
      free(nodes);
      free(hc);
      gf_batch_close(lb);
    }
  }
  CHECK(seen == 3, "every seed once per epoch (%lld)", (long long)seen);
  gf_loader_close(l);
  /* an older gf_loader_options (up to label_names) still opens */
  lo.struct_size = offsetof(gf_loader_options, seed_times);
  lo.sample = &so;
  CHECK(gf_loader_open(g, &tseeds, &lo, &l) == GF_OK && l, "a %u-byte gf_loader_options", lo.struct_size);
  gf_loader_close(l);
  gf_graph_close(g);
}

/* check_typed_batch checks the GF_FIELD_TYPED_* fields of a one-hop batch
   of the typed h_src/h_dst graph (A = {0, 1}, B = {2, 3, 4}) with every
   relation's fan-out -1 and frontier "all", seeds 2 (B) and 0 (A). */
static void check_typed_batch(gf_batch *b, const char *what) {
  int64_t nn = 0, n_order = 0, n_tn = 0, n_off = 0, n_hc = 0, n_sh = 0, n_eo = 0, n_src = 0, n_dst = 0, n_eid = 0,
          n_ip = 0;
  int64_t *nodes = gft_take_i64(b, GF_FIELD_NODES, 0, &nn);
  int64_t *tn = gft_take_i64(b, GF_FIELD_TYPED_NODES, 0, &n_tn);
  int64_t *order = gft_take_i64(b, GF_FIELD_TYPED_ORDER, 0, &n_order);
  int64_t *off = gft_take_i64(b, GF_FIELD_TYPED_NODE_OFFSETS, 0, &n_off);
  int64_t *hc = gft_take_i64(b, GF_FIELD_TYPED_HOP_COUNTS, 0, &n_hc);
  int64_t *sh = gft_take_i64(b, GF_FIELD_TYPED_BLOCK_SHAPE, 0, &n_sh);
  int64_t *eo = gft_take_i64(b, GF_FIELD_TYPED_EDGE_OFFSETS, 0, &n_eo);
  int64_t *src = gft_take_i64(b, GF_FIELD_TYPED_SRC, 0, &n_src);
  int64_t *dst = gft_take_i64(b, GF_FIELD_TYPED_DST, 0, &n_dst);
  int64_t *eid = gft_take_i64(b, GF_FIELD_TYPED_EDGE_IDS, 0, &n_eid);
  int64_t *ip = gft_take_i64(b, GF_FIELD_TYPED_INDPTR, 0, &n_ip);
  CHECK(nodes && tn && order && off && hc && sh && eo && src && dst && eid && ip, "%s: every typed field", what);
  if (nodes && tn && order && off && hc && sh && eo && src && dst && eid && ip) {
    static const int64_t noff[] = {0, 2, 5}, eoff[] = {0, 4, 7, 10};
    static const int rsrc[] = {0, 1, 1};
    CHECK(nn == 5 && n_tn == 5 && n_order == 5 && n_off == 3 && off[0] == 0 && off[1] == 2 && off[2] == 5,
          "%s: 2 nodes of A then 3 of B", what);
    for (int64_t p = 0; p < n_tn && n_tn == nn; p++) {
      int ty = p < off[1] ? 0 : 1;
      CHECK(order[p] >= 0 && order[p] < nn && nodes[order[p]] == tn[p] + noff[ty], "%s: typed node %lld", what,
            (long long)p);
    }
    CHECK(tn[0] == 0 && tn[2] == 0, "%s: each type's seed first", what);
    CHECK(n_hc == 4 && hc[0] == 1 && hc[1] == 1 && hc[2] == 1 && hc[3] == 2, "%s: hop counts per type", what);
    CHECK(n_sh == 6 && sh[0] == 1 && sh[1] == 1 && sh[2] == 2 && sh[3] == 3 && sh[4] == 0 && sh[5] == 0,
          "%s: block shape per type", what);
    CHECK(n_eo == 4 && eo[0] == 0 && eo[1] == 2 && eo[2] == 4 && eo[3] == 6, "%s: 2 edges per relation", what);
    CHECK(n_src == 6 && n_dst == 6 && n_eid == 6, "%s: 6 edges", what);
    for (int64_t e = 0; e < 6 && n_src == 6 && n_eo == 4; e++) {
      int r = e < eo[1] ? 0 : e < eo[2] ? 1 : 2;
      int64_t global = eid[e] + eoff[r];
      int64_t s = tn[off[rsrc[r]] + src[e]] + noff[rsrc[r]];
      CHECK(dst[e] == 0 && global >= eoff[r] && global < eoff[r + 1] && h_src[global] == s,
            "%s: typed edge %lld (relation %d, edge %lld)", what, (long long)e, r, (long long)global);
    }
    CHECK(eid[0] == 0 && eid[1] == 1 && eid[4] == 0 && eid[5] == 1, "%s: each relation's edges in CSC order", what);
    CHECK(n_ip == 6 && ip[0] == 0 && ip[1] == 2 && ip[2] == 0 && ip[3] == 2 && ip[4] == 0 && ip[5] == 2,
          "%s: a CSC per relation over its destination type", what);
  }
  free(nodes), free(tn), free(order), free(off), free(hc), free(sh), free(eo), free(src), free(dst), free(eid), free(ip);
}

/* The typed views of a typed graph's batches (GF_FIELD_TYPED_*), from
   gf_sample and from a loader's sampler threads; refused for an untyped
   graph's batch. */
static void test_typed_fields(void) {
  int64_t ne = 10;
  DLTensor ts = gft_i64(h_src, &ne), td = gft_i64(h_dst, &ne);
  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = sizeof go;
  go.num_patches = 2;
  go.partition = GF_PARTITION_RANDOM;
  go.seed = 5;
  go.num_nodes = 5;
  gf_graph *g = NULL;
  CHECK(gf_graph_from_coo(&ts, &td, &go, &g) == GF_OK && g, "typed fields: graph");
  if (!g) return;
  int64_t seeds[] = {2, 0}, ns = 2;
  DLTensor tseeds = gft_i64(seeds, &ns);
  int32_t fan[] = {-1};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 1;
  so.fanouts = fan;
  so.seed = 3;
  gf_batch *b = NULL;
  DLManagedTensor *t = NULL;
  CHECK(gf_sample(g, &tseeds, &so, &b) == GF_OK && b, "untyped sample");
  if (b) {
    CHECK_ERR(gf_batch_take(b, GF_FIELD_TYPED_NODES, 0, &t), GF_EINVAL, "not of a typed graph");
    CHECK_ERR(gf_batch_take(b, GF_FIELD_TYPED_SRC, 0, &t), GF_EINVAL, "not of a typed graph");
    CHECK(t == NULL, "no tensor on error");
    gf_batch_close(b);
    b = NULL;
  }
  int64_t noff[] = {0, 2, 5}, eoff[] = {0, 4, 7, 10};
  int32_t rs[] = {0, 1, 1}, rd[] = {1, 1, 0};
  CHECK(gf_graph_set_types(g, 2, noff, 3, eoff, rs, rd) == GF_OK, "typed fields: set types");
  int32_t rf[] = {-1, -1, -1};
  so.fanouts = NULL;
  so.num_relations = 3;
  so.relation_fanouts = rf;
  CHECK(gf_sample(g, &tseeds, &so, &b) == GF_OK && b, "typed sample");
  if (b) {
    CHECK_ERR(gf_batch_take(b, GF_FIELD_TYPED_SRC, 1, &t), GF_EINVAL, "layer = 1 is out of range");
    CHECK_ERR(gf_batch_take(b, GF_FIELD_TYPED_NODES, 1, &t), GF_EINVAL, "not per hop");
    CHECK_ERR(gf_batch_take(b, GF_FIELD_TYPED_INDPTR + 1, 0, &t), GF_EINVAL, "not a GF_FIELD_* value");
    check_typed_batch(b, "gf_sample");
    CHECK_ERR(gf_batch_take(b, GF_FIELD_TYPED_ORDER, 0, &t), GF_ESTATE, "already taken");
    gf_batch_close(b);
    b = NULL;
  }
  /* an untyped request on a typed graph has the views too */
  so.num_relations = 0;
  so.relation_fanouts = NULL;
  so.fanouts = fan;
  CHECK(gf_sample(g, &tseeds, &so, &b) == GF_OK && b, "untyped request on a typed graph");
  if (b) {
    check_typed_batch(b, "fanouts on a typed graph");
    gf_batch_close(b);
    b = NULL;
  }
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = &so;
  lo.batch_size = 2;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &tseeds, &lo, &l) == GF_OK && l, "typed fields: loader");
  if (l && gf_loader_start(l, 0) == GF_OK) {
    CHECK(gf_loader_next(l, &b) == GF_OK && b, "typed fields: loader batch");
    if (b) {
      check_typed_batch(b, "loader");
      gf_batch_close(b);
    }
  }
  gf_loader_close(l);
  gf_graph_close(g);
}

/* ---------------------------------------------------------------------- */
/* A process forked while the library runs: every C file of the library  */
/* that defines public functions refuses the child with GF_EFORK before   */
/* it looks at the arguments (arguments that would otherwise be refused   */
/* with another status show that the guard comes first), void functions  */
/* return, DLPack deleters still free, and gf_errmsg() says why.          */

static int forked_msg(void) { return strstr(gf_errmsg(), "forked after it was loaded") != NULL; }

#define CHECK_FORK(rc, fn) CHECK((rc) == GF_EFORK && forked_msg(), "%s in a forked child: got %d", (fn), (rc))

/* The child's checks; the parent's handles g, l (mid-epoch) and tensor x. */
static void forked_child_checks(gf_graph *g, gf_loader *l, const DLTensor *seeds, const gf_loader_options *lo,
                                DLManagedTensor *x) {
  int64_t n = -1;
  /* graphferry.c */
  CHECK_FORK(gf_graph_num_nodes(g, &n), "gf_graph_num_nodes");
  CHECK(n == -1, "gf_graph_num_nodes wrote nothing in a forked child");
  gf_batch *b = NULL;
  CHECK_FORK(gf_loader_next(l, &b), "gf_loader_next");
  CHECK_FORK(gf_sample(NULL, seeds, NULL, &b), "gf_sample with a NULL graph");
  CHECK(b == NULL, "no batch in a forked child");
  /* comm.c: a NULL comm would be GF_EINVAL */
  gf_loader *cl = NULL;
  CHECK_FORK(gf_loader_open_comm(g, seeds, lo, NULL, &cl), "gf_loader_open_comm");
  /* dist_rank.c: a missing folder would be GF_EIO */
  gf_part *p = NULL;
  CHECK_FORK(gf_part_open("/nonexistent/graphferry-part", 0, 0, &p), "gf_part_open");
  /* link.c: NULL options would be GF_EINVAL */
  gf_edge_sampler *es = NULL;
  CHECK_FORK(gf_edge_sampler_open(g, NULL, &es), "gf_edge_sampler_open");
  /* partition.c: NULL directories would be GF_EINVAL */
  CHECK_FORK(gf_dataset_partition(NULL, NULL, NULL), "gf_dataset_partition");
  /* stats.c */
  gf_loader_statistics st;
  memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  CHECK_FORK(gf_loader_stats(l, &st), "gf_loader_stats");
  /* subgraph.c: NULL outputs would be GF_EINVAL */
  CHECK_FORK(gf_graph_induced_subgraph(g, seeds, NULL, NULL, NULL), "gf_graph_induced_subgraph");
  /* void functions return without entering Go; the handles stay the
     parent's */
  gf_loader_close(l);
  gf_graph_close(g);
  gf_part_close(p);
  gf_edge_sampler_close(es);
  CHECK_FORK(gf_graph_num_nodes(g, &n), "gf_graph_num_nodes after gf_graph_close");
  /* a tensor taken before the fork is released by its deleter (plain C) */
  x->deleter(x);
  CHECK(forked_msg(), "gf_errmsg() in a forked child: %s", gf_errmsg());
}

static void test_forked_child(gf_graph *g, const DLTensor *seeds, const gf_loader_options *lo) {
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, seeds, lo, &l) == GF_OK && l, "fork: loader open");
  if (!l) return;
  gf_batch *b = NULL;
  DLManagedTensor *x = NULL;
  CHECK(gf_loader_start(l, 0) == GF_OK && gf_loader_next(l, &b) == GF_OK && b, "fork: a batch");
  CHECK(gf_graph_get_node_data(g, "feat", &x) == GF_OK && x, "fork: node data");
  gf_batch_close(b);
  int fds[2];
  CHECK(pipe(fds) == 0, "pipe");
  fflush(NULL);
  pid_t pid = fork(); /* the loader's threads are running */
  if (pid == 0) {
    alarm(30); /* a hang in the child fails the test instead of hanging it */
    close(fds[0]);
    gft_passed = gft_failed = 0;
    if (x) forked_child_checks(g, l, seeds, lo, x);
    int counts[2] = {gft_passed, gft_failed};
    _exit(write(fds[1], counts, sizeof counts) == (ssize_t)sizeof counts ? 0 : 3);
  }
  close(fds[1]);
  int counts[2] = {0, 0};
  ssize_t got = pid > 0 ? read(fds[0], counts, sizeof counts) : -1;
  close(fds[0]);
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "fork");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the forked child ended normally (status %#x)", status);
  CHECK(got == (ssize_t)sizeof counts && counts[0] + counts[1] > 0, "the forked child ran its checks (%d passed)", counts[0]);
  gft_passed += counts[0];
  gft_failed += counts[1];
  /* the parent is unaffected */
  int64_t n = 0;
  CHECK(gf_graph_num_nodes(g, &n) == GF_OK && n == 6, "the parent's graph after the fork");
  CHECK(gf_loader_next(l, &b) == GF_OK && b, "the parent's loader after the fork");
  gf_batch_close(b);
  if (x) x->deleter(x);
  gf_loader_close(l);
}

/* Huge values through the C API (issue 34): INT_MAX patches, loader and
   sampler threads, queue capacity, a walk of 10^9 steps from one seed, a
   byte_offset past the tensor's buffer, a NaN cache fraction. Each is the
   documented status with a message naming the value, under an address
   space limit of 2 GiB beyond what the process maps (RLIMIT_AS, which the
   library's memory checks read): they killed the process for memory or
   aborted it in the Go runtime, or were accepted. The graph stays usable. */
static void test_huge_values(gf_graph *g, const DLTensor *indptr_t, const DLTensor *indices_t,
                             const DLTensor *seeds, const gf_loader_options *lo) {
  struct rlimit old;
  CHECK(getrlimit(RLIMIT_AS, &old) == 0, "getrlimit");
  long vsize_pages = 0;
  FILE *statm = fopen("/proc/self/statm", "r");
  if (statm) {
    if (fscanf(statm, "%ld", &vsize_pages) != 1) vsize_pages = 0;
    fclose(statm);
  }
  struct rlimit lim = old;
  rlim_t want = (rlim_t)vsize_pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)2 << 30);
  if (old.rlim_cur == RLIM_INFINITY || old.rlim_cur > want) lim.rlim_cur = want;
  CHECK(setrlimit(RLIMIT_AS, &lim) == 0, "setrlimit");

  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = sizeof go;
  go.num_patches = INT_MAX;
  gf_graph *hg = (gf_graph *)0x1;
  CHECK_ERR(gf_graph_from_csc(indptr_t, indices_t, NULL, &go, &hg), GF_ENOMEM, "NumPatches=2147483647");
  CHECK(hg == NULL, "no graph");

  gf_sample_options so = *lo->sample;
  so.num_threads = INT_MAX;
  gf_batch *b = (gf_batch *)0x1;
  CHECK_ERR(gf_sample(g, seeds, &so, &b), GF_EINVAL, "threads = 2147483647 is more than");
  CHECK(b == NULL, "no batch");
  gf_loader_options hl = *lo;
  hl.sample = &so;
  gf_loader *l = (gf_loader *)0x1;
  CHECK_ERR(gf_loader_open(g, seeds, &hl, &l), GF_EINVAL, "threads = 2147483647 is more than");
  CHECK(l == NULL, "no loader");

  /* A queue holds at most the epoch's batches: INT_MAX is that many. */
  hl = *lo;
  hl.queue_capacity = INT_MAX;
  CHECK(gf_loader_open(g, seeds, &hl, &l) == GF_OK, "loader with queue_capacity INT_MAX: %s", gf_errmsg());
  int64_t nb = 0, got = 0;
  CHECK(gf_loader_num_batches(l, &nb) == GF_OK && gf_loader_start(l, 0) == GF_OK, "start");
  gf_batch *lb = NULL;
  while (gf_loader_next(l, &lb) == GF_OK) {
    got++;
    gf_batch_close(lb);
  }
  CHECK(got == nb && nb > 0, "a whole epoch (%lld of %lld batches)", (long long)got, (long long)nb);

  gf_cache_options co;
  memset(&co, 0, sizeof co);
  co.struct_size = sizeof co;
  co.policy = GF_CACHE_IN_DEGREE;
  co.fraction = NAN;
  CHECK_ERR(gf_loader_set_cache(l, &co, NULL), GF_EINVAL, "fraction = NaN is not in (0, 1]");
  co.fraction = INFINITY;
  CHECK_ERR(gf_loader_set_cache(l, &co, NULL), GF_EINVAL, "fraction = +Inf is not in (0, 1]");
  gf_loader_close(l);

  gf_walk_options wo;
  memset(&wo, 0, sizeof wo);
  wo.struct_size = sizeof wo;
  wo.length = 1000000000;
  int64_t one = 0, n1 = 1;
  DLTensor t1 = gft_i64(&one, &n1);
  DLManagedTensor *tr = (DLManagedTensor *)0x1;
  CHECK_ERR(gf_random_walk(g, &t1, &wo, &tr, NULL), GF_ENOMEM, "1 walks of length 1000000000");
  CHECK(tr == NULL, "no traces");
  wo.length = 3;
  wo.num_threads = INT_MAX;
  CHECK_ERR(gf_random_walk(g, &t1, &wo, &tr, NULL), GF_EINVAL, "threads = 2147483647 is more than");

  static float small[12];
  static int64_t sshape[2] = {6, 2};
  DLTensor past = gft_tensor(small, 2, sshape, kDLFloat, 32);
  past.byte_offset = (uint64_t)1 << 40;
  DLManagedTensor pm = gft_managed(past);
  CHECK_ERR(gf_graph_set_node_data(g, "past", &pm), GF_EINVAL, "byte_offset = 1099511627776");
  past.byte_offset = UINT64_MAX - 8;
  pm = gft_managed(past);
  CHECK_ERR(gf_graph_set_node_data(g, "past", &pm), GF_EINVAL, "byte_offset");
  DLManagedTensor *out = NULL;
  CHECK_ERR(gf_graph_get_node_data(g, "past", &out), GF_EINVAL, "no node data named");

  CHECK(setrlimit(RLIMIT_AS, &old) == 0, "restore the limit");
}

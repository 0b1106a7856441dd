/*
 * abi_0_1_0.c: a program built against the header of the previous release
 * (tests/c/abi/0.1.0/graphferry.h, kept verbatim) and run against the
 * library of this checkout. It holds graphferry to its ABI promise: the
 * major version is unchanged, functions keep their signatures, and every
 * option struct is read at the size the old header gave it (struct_size =
 * sizeof of 0.1.0's layout; later fields take their defaults).
 *
 * It uses nothing but that header: no tests/c/gftest.h, which follows the
 * current header.
 *
 *   abi_0_1_0 CORA_DIR     prints "abi_0_1_0: N passed, N failed"
 */
#include "graphferry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0, failed = 0;

#define CHECK(cond, what)                                                          \
  do {                                                                             \
    if (cond) {                                                                    \
      passed++;                                                                    \
    } else {                                                                       \
      failed++;                                                                    \
      fprintf(stderr, "FAIL %s:%d: %s (gf_errmsg: %s)\n", __FILE__, __LINE__, what, \
              gf_errmsg() ? gf_errmsg() : "");                                     \
    }                                                                              \
  } while (0)

static DLTensor int64_vector(int64_t *data, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLInt;
  t.dtype.bits = 64;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

static void release(DLManagedTensor *t) {
  if (t && t->deleter) t->deleter(t);
}

/* Takes NODES and hop 0's INDPTR of a batch; checks that the seeds come
   first and that every destination has at most `fanout` sources. Returns
   the number of nodes (or -1). */
static int64_t check_batch(gf_batch *b, const int64_t *seeds, int64_t nseeds, int32_t fanout) {
  DLManagedTensor *nodes = NULL, *indptr = NULL;
  int64_t n = -1;
  CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && nodes, "take nodes");
  CHECK(gf_batch_take(b, GF_FIELD_INDPTR, 0, &indptr) == GF_OK && indptr, "take indptr");
  if (nodes && indptr) {
    const int64_t *v = (const int64_t *)nodes->dl_tensor.data;
    const int64_t *p = (const int64_t *)indptr->dl_tensor.data;
    n = nodes->dl_tensor.shape[0];
    int ok = n >= nseeds;
    for (int64_t i = 0; ok && seeds && i < nseeds; i++) ok = v[i] == seeds[i];
    CHECK(ok, "seeds first among the batch's nodes");
    ok = 1;
    for (int64_t d = 0; d + 1 < indptr->dl_tensor.shape[0]; d++) ok &= p[d + 1] - p[d] <= fanout;
    CHECK(ok, "at most fanout sources per destination");
  }
  release(nodes);
  release(indptr);
  return n;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORA_DIR\n", argv[0]);
    return 2;
  }
  /* Versions: same major, a library at least as new as the header. */
  CHECK(gf_version_number() / 1000000 == GF_VERSION_MAJOR, "major version unchanged");
  CHECK(gf_version_number() >= GF_VERSION_NUMBER, "library at least as new as the old header");
  CHECK(gf_version() && strlen(gf_version()) > 0, "gf_version");
  CHECK(gf_build_id() != NULL, "gf_build_id");

  /* Graph options at the old sizeof. */
  gf_graph_options gopt;
  memset(&gopt, 0, sizeof gopt);
  gopt.struct_size = sizeof gopt;
  gopt.num_patches = 2;
  gopt.partition = GF_PARTITION_RANDOM;
  gopt.seed = 7;
  gf_graph *g = NULL;
  CHECK(gf_graph_open(argv[1], &gopt, &g) == GF_OK && g, "gf_graph_open with 0.1.0's gf_graph_options");
  if (!g) {
    printf("abi_0_1_0: %d passed, %d failed\n", passed, failed + 1);
    return 1;
  }
  int64_t nn = 0, ne = 0;
  int32_t np = 0;
  CHECK(gf_graph_num_nodes(g, &nn) == GF_OK && nn == 2708, "Cora's nodes");
  CHECK(gf_graph_num_edges(g, &ne) == GF_OK && ne > 0, "edges");
  CHECK(gf_graph_num_patches(g, &np) == GF_OK && np == 2, "patches from the options");

  /* Sampling with 0.1.0's gf_sample_options: equal seeds, equal samples. */
  int64_t seeds[8] = {0, 1, 2, 3, 100, 200, 300, 400}, shape8 = 8;
  DLTensor st = int64_vector(seeds, &shape8);
  int32_t fanouts[2] = {5, 3};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 2;
  so.fanouts = fanouts;
  so.frontier = GF_FRONTIER_ALL;
  so.seed = 42;
  so.num_threads = 1;
  int64_t counts[2] = {-1, -2};
  for (int run = 0; run < 2; run++) {
    gf_batch *b = NULL;
    CHECK(gf_sample(g, &st, &so, &b) == GF_OK && b, "gf_sample with 0.1.0's gf_sample_options");
    if (!b) continue;
    int32_t hops = 0;
    CHECK(gf_batch_num_hops(b, &hops) == GF_OK && hops == 2, "two hops");
    counts[run] = check_batch(b, seeds, 8, 5); /* hop 0 is the outer block or the inner */
    gf_batch_close(b);
  }
  CHECK(counts[0] > 8 && counts[0] == counts[1], "the same sample twice");

  /* Random walks with 0.1.0's gf_walk_options. */
  gf_walk_options wo;
  memset(&wo, 0, sizeof wo);
  wo.struct_size = sizeof wo;
  wo.length = 4;
  wo.num_threads = 1;
  wo.seed = 3;
  DLManagedTensor *traces = NULL, *eids = NULL;
  CHECK(gf_random_walk(g, &st, &wo, &traces, &eids) == GF_OK && traces && eids, "gf_random_walk");
  if (traces) {
    CHECK(traces->dl_tensor.ndim == 2 && traces->dl_tensor.shape[0] == 8 && traces->dl_tensor.shape[1] == 5,
          "traces [8, 5]");
    CHECK(((const int64_t *)traces->dl_tensor.data)[0] == seeds[0], "walk starts at its seed");
  }
  release(traces);
  release(eids);

  /* A loader with 0.1.0's gf_loader_options, features and labels, a hot
     tier with 0.1.0's gf_cache_options, and 0.1.0's gf_loader_statistics. */
  int64_t train[140], shape140 = 140;
  for (int i = 0; i < 140; i++) train[i] = i;
  DLTensor tt = int64_vector(train, &shape140);
  const char *feat[] = {"feat"}, *label[] = {"label"};
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = &so;
  lo.batch_size = 32;
  lo.shuffle = 1;
  lo.shuffle_seed = 5;
  lo.num_feature_names = 1;
  lo.feature_names = feat;
  lo.num_label_names = 1;
  lo.label_names = label;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &tt, &lo, &l) == GF_OK && l, "gf_loader_open with 0.1.0's gf_loader_options");
  if (l) {
    int64_t nb = 0;
    CHECK(gf_loader_num_batches(l, &nb) == GF_OK && nb == 5, "5 batches of 32 over 140 seeds");
    gf_cache_options co;
    memset(&co, 0, sizeof co);
    co.struct_size = sizeof co;
    co.policy = GF_CACHE_IN_DEGREE;
    co.fraction = 0.25;
    int64_t hot = -1;
    CHECK(gf_loader_set_cache(l, &co, &hot) == GF_OK && hot > 0, "gf_loader_set_cache with 0.1.0's options");
    for (uint64_t epoch = 0; epoch < 2; epoch++) {
      CHECK(gf_loader_start(l, epoch) == GF_OK, "gf_loader_start");
      int64_t batches = 0, seen = 0;
      gf_batch *b = NULL;
      int rc;
      while ((rc = gf_loader_next(l, &b)) == GF_OK) {
        DLManagedTensor *x = NULL, *y = NULL, *s = NULL;
        CHECK(gf_batch_take(b, GF_FIELD_SEEDS, 0, &s) == GF_OK && s, "take seeds");
        CHECK(gf_batch_take_node_data(b, "feat", &x) == GF_OK && x, "take feat");
        CHECK(gf_batch_take_node_data(b, "label", &y) == GF_OK && y, "take label");
        if (s && x && y) {
          CHECK(x->dl_tensor.ndim == 2 && x->dl_tensor.shape[1] == 1433, "Cora's 1433 features");
          CHECK(y->dl_tensor.shape[0] == s->dl_tensor.shape[0], "a label per seed");
          seen += s->dl_tensor.shape[0];
        }
        release(x);
        release(y);
        release(s);
        gf_batch_close(b);
        batches++;
      }
      CHECK(rc == GF_DONE, "the epoch ends with GF_DONE");
      CHECK(batches == 5 && seen == 140, "every seed once per epoch");
    }
    gf_loader_statistics stats;
    memset(&stats, 0, sizeof stats);
    stats.struct_size = sizeof stats;
    CHECK(gf_loader_stats(l, &stats) == GF_OK, "gf_loader_stats with 0.1.0's gf_loader_statistics");
    CHECK(stats.epochs == 2 && stats.total.consumer.batches == 10, "statistics of two epochs");
    CHECK(stats.total.rows_hot > 0, "the hot tier was read");
    gf_loader_close(l);
  }

  /* Errors still name the problem. */
  gf_sample_options bad = so;
  bad.struct_size = 3;
  gf_batch *none = NULL;
  CHECK(gf_sample(g, &st, &bad, &none) == GF_EINVAL && none == NULL, "bad struct_size refused");
  CHECK(gf_errmsg() && strstr(gf_errmsg(), "struct_size"), "the message names struct_size");

  gf_graph_close(g);
  printf("abi_0_1_0: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}

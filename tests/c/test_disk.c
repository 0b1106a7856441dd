/*
 * test_disk.c: the disk tier, the memory plan and resumable epochs through
 * the C API:
 *
 *   - gf_graph_open with feature_tier GF_TIER_DISK (each cache policy)
 *     gives the batches of the memory-mapped graph, node data included;
 *     gf_loader_stats counts the CPU cache's rows and the disk's
 *     (current_tiers), and a caller with the older 312-byte struct still
 *     gets the first layout's fields;
 *   - gf_graph_memory_plan and gf_graph_memory_report say where features
 *     are read from: mapped under a large budget, on disk under a small
 *     one; bad options are refused, naming the field;
 *   - gf_loader_position and gf_loader_start_at: an epoch interrupted after
 *     k batches resumes on a fresh loader (another thread count, another
 *     patch count) with exactly the batches it had not delivered;
 *   - gf_dataset_write_csc: a generated dataset with CSC files opens with
 *     its topology mapped (the plan says so), the same graph; a second
 *     call and a NULL dir are refused.
 *
 *     test_disk [DATASET_DIR]    (default: the shipped Cora)
 */
#include "gftest.h"

typedef struct {
  gf_sample_options so;
  gf_loader_options lo;
  int32_t fanouts[2];
  const char *feats[1];
} options;

static void options_init(options *o, int32_t threads) {
  memset(o, 0, sizeof *o);
  o->fanouts[0] = 5;
  o->fanouts[1] = 5;
  o->so.struct_size = sizeof o->so;
  o->so.num_hops = 2;
  o->so.fanouts = o->fanouts;
  o->so.seed = 21;
  o->so.num_threads = threads;
  o->feats[0] = "feat";
  o->lo.struct_size = sizeof o->lo;
  o->lo.sample = &o->so;
  o->lo.batch_size = 256;
  o->lo.shuffle = 1;
  o->lo.shuffle_seed = 8;
  o->lo.num_feature_names = 1;
  o->lo.feature_names = o->feats;
}

static gf_graph *open_with(const char *dir, int32_t patches, int32_t tier, int32_t policy, int64_t budget) {
  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = sizeof go;
  go.num_patches = patches;
  go.partition = patches > 1 ? GF_PARTITION_RANDOM : GF_PARTITION_RANGE;
  go.seed = 3;
  go.feature_tier = tier;
  go.cache_policy = policy;
  go.cache_bytes = tier == GF_TIER_DISK ? 256 << 10 : 0;
  go.memory_budget = budget;
  gf_graph *g = NULL;
  int rc = gf_graph_open(dir, &go, &g);
  CHECK(rc == GF_OK, "gf_graph_open(%s, tier %d): %s", dir, tier, gf_errmsg());
  return g;
}

/* A batch as the test compares it: its nodes and its feature rows. */
typedef struct {
  int64_t n;
  int64_t *nodes;
  DLManagedTensor *feat;
} batch;

static void batch_free(batch *b) {
  free(b->nodes);
  gft_drop(b->feat);
}

/* epoch_from reads epoch e of a loader on g from batch first on (start_at)
   into out, at most max batches; returns how many. */
static int epoch_from(gf_graph *g, int32_t threads, uint64_t e, int64_t first, batch *out, int max,
                      gf_loader_statistics *st) {
  options o;
  options_init(&o, threads);
  int64_t seeds[1024], shape[1] = {1024};
  for (int i = 0; i < 1024; i++) seeds[i] = (int64_t)i * 2;
  DLTensor s = gft_i64(seeds, shape);
  gf_loader *l = NULL;
  if (gf_loader_open(g, &s, &o.lo, &l) != GF_OK) {
    CHECK(0, "gf_loader_open: %s", gf_errmsg());
    return 0;
  }
  CHECK(gf_loader_start_at(l, e, first) == GF_OK, "gf_loader_start_at(%llu, %lld): %s", (unsigned long long)e,
        (long long)first, gf_errmsg());
  int n = 0;
  gf_batch *b = NULL;
  while (n < max && gf_loader_next(l, &b) == GF_OK && b != NULL) {
    out[n].nodes = gft_take_i64(b, GF_FIELD_NODES, 0, &out[n].n);
    out[n].feat = NULL;
    CHECK(gf_batch_take_node_data(b, "feat", &out[n].feat) == GF_OK, "take feat");
    gf_batch_close(b);
    n++;
  }
  if (st != NULL) {
    memset(st, 0, sizeof *st);
    st->struct_size = sizeof *st;
    CHECK(gf_loader_stats(l, st) == GF_OK, "gf_loader_stats");
  }
  gf_loader_close(l);
  return n;
}

static int same_batch(const batch *a, const batch *b) {
  return a->n == b->n && memcmp(a->nodes, b->nodes, (size_t)a->n * sizeof(int64_t)) == 0 &&
         gft_same_tensor(a->feat, b->feat);
}

static void test_disk_tier(const char *dir) {
  gf_graph *mapped = open_with(dir, 1, GF_TIER_MEMORY, 0, 0);
  if (mapped == NULL) return;
  batch want[16];
  int nw = epoch_from(mapped, 2, 1, 0, want, 16, NULL);
  CHECK(nw >= 3, "%d batches", nw);
  gf_memory_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.struct_size = sizeof plan;
  CHECK(gf_graph_memory_plan(mapped, &plan) == GF_OK && plan.feature_tier == GF_TIER_MEMORY, "mapped plan");
  int32_t policies[3] = {GF_CACHE_S3FIFO, GF_CACHE_SIEVE, GF_CACHE_LRU};
  for (int p = 0; p < 3; p++) {
    gf_graph *g = open_with(dir, 1, GF_TIER_DISK, policies[p], 0);
    if (g == NULL) continue;
    memset(&plan, 0, sizeof plan);
    plan.struct_size = sizeof plan;
    CHECK(gf_graph_memory_plan(g, &plan) == GF_OK, "gf_graph_memory_plan: %s", gf_errmsg());
    CHECK(plan.feature_tier == GF_TIER_DISK && plan.cache_policy == policies[p] && plan.cache_bytes > 0 &&
              plan.feature_bytes > 0 && plan.topology_bytes > 0,
          "disk plan (policy %d, cache %lld)", policies[p], (long long)plan.cache_bytes);
    batch got[16];
    gf_loader_statistics st;
    int ng = epoch_from(g, 2, 1, 0, got, 16, &st);
    CHECK(ng == nw, "%d batches, want %d", ng, nw);
    for (int i = 0; i < ng && i < nw; i++) CHECK(same_batch(&got[i], &want[i]), "policy %d, batch %d", policies[p], i);
    CHECK(st.current_tiers.rows_disk > 0 && st.current_tiers.rows_cache > 0 && st.current_tiers.disk_requests > 0 &&
              st.current_tiers.bytes_disk_read >= st.current_tiers.bytes_disk,
          "tier counters: cache %lld, disk %lld", (long long)st.current_tiers.rows_cache,
          (long long)st.current_tiers.rows_disk);
    CHECK(st.current.rows_cold == st.current_tiers.rows_cache + st.current_tiers.rows_disk, "cold rows split");
    for (int i = 0; i < ng; i++) batch_free(&got[i]);
    char *report = NULL;
    CHECK(gf_graph_memory_report(g, &report) == GF_OK && report != NULL && strstr(report, "on disk") != NULL,
          "report: %s", report ? report : "(null)");
    gf_free(report);
    gf_graph_close(g);
  }
  /* An older caller's statistics struct (before the tiers). */
  {
    options o;
    options_init(&o, 1);
    int64_t seeds[4] = {0, 1, 2, 3}, shape[1] = {4};
    DLTensor s = gft_i64(seeds, shape);
    gf_loader *l = NULL;
    CHECK(gf_loader_open(mapped, &s, &o.lo, &l) == GF_OK, "open");
    gf_loader_statistics st;
    memset(&st, 0x5a, sizeof st);
    st.struct_size = (uint32_t)offsetof(gf_loader_statistics, current_tiers);
    CHECK(gf_loader_stats(l, &st) == GF_OK, "stats with the older struct_size: %s", gf_errmsg());
    CHECK(st.current_tiers.rows_cache == 0x5a5a5a5a5a5a5a5aLL, "nothing written past the older struct");
    int64_t delivered = -1;
    uint64_t e = 9;
    int32_t started = 7;
    CHECK(gf_loader_position(l, &e, &delivered, &started) == GF_OK && e == 0 && delivered == 0 && started == 0,
          "position before the first start");
    CHECK_ERR(gf_loader_position(l, NULL, &delivered, NULL), GF_EINVAL, "out_epoch");
    CHECK_ERR(gf_loader_start_at(l, 0, 2), GF_EINVAL, "first_batch = 2");
    CHECK_ERR(gf_loader_start_at(l, 0, -1), GF_EINVAL, "first_batch = -1");
    gf_loader_close(l);
  }
  for (int i = 0; i < nw; i++) batch_free(&want[i]);
  /* Budgets: a large one maps, a small one puts features on disk. */
  gf_graph *big = open_with(dir, 1, GF_TIER_AUTO, 0, (int64_t)1 << 40);
  gf_graph *small = open_with(dir, 1, GF_TIER_AUTO, 0, plan.topology_bytes + plan.node_column_bytes + plan.sampling_bytes + 4096);
  if (big != NULL && small != NULL) {
    memset(&plan, 0, sizeof plan);
    plan.struct_size = sizeof plan;
    CHECK(gf_graph_memory_plan(big, &plan) == GF_OK && plan.feature_tier == GF_TIER_MEMORY, "large budget maps");
    memset(&plan, 0, sizeof plan);
    plan.struct_size = sizeof plan;
    CHECK(gf_graph_memory_plan(small, &plan) == GF_OK && plan.feature_tier == GF_TIER_DISK && plan.cache_bytes <= 4096,
          "small budget: disk, cache %lld", (long long)plan.cache_bytes);
    plan.struct_size = 8;
    CHECK_ERR(gf_graph_memory_plan(small, &plan), GF_EINVAL, "struct_size");
    CHECK_ERR(gf_graph_memory_report(small, NULL), GF_EINVAL, "out_report");
  }
  gf_graph_close(big);
  gf_graph_close(small);
  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = sizeof go;
  go.feature_tier = 7;
  gf_graph *bad = NULL;
  CHECK_ERR(gf_graph_open(dir, &go, &bad), GF_EINVAL, "feature_tier = 7");
  go.feature_tier = 0;
  go.cache_policy = 3;
  CHECK_ERR(gf_graph_open(dir, &go, &bad), GF_EINVAL, "cache_policy = 3");
  go.cache_policy = 0;
  go.memory_budget = -1;
  CHECK_ERR(gf_graph_open(dir, &go, &bad), GF_EINVAL, "memory_budget = -1");
  /* Older callers' struct sizes still open (the new fields read as 0). */
  go.memory_budget = 0;
  go.struct_size = 48;
  CHECK(gf_graph_open(dir, &go, &bad) == GF_OK, "struct_size 48: %s", gf_errmsg());
  gf_graph_close(bad);
  gf_graph_close(mapped);
}

/* An epoch interrupted after k batches resumes on a fresh loader with
   another thread count and another patch count, on the disk tier. */
static void test_resume(const char *dir) {
  gf_graph *g = open_with(dir, 1, GF_TIER_MEMORY, 0, 0);
  gf_graph *g3 = open_with(dir, 3, GF_TIER_DISK, GF_CACHE_LRU, 0);
  if (g == NULL || g3 == NULL) return;
  batch full[16];
  int n = epoch_from(g, 1, 4, 0, full, 16, NULL);
  for (int k = 0; k <= n; k += 2) {
    /* The interrupted run: k batches, then its position. */
    options o;
    options_init(&o, 2);
    int64_t seeds[1024], shape[1] = {1024};
    for (int i = 0; i < 1024; i++) seeds[i] = (int64_t)i * 2;
    DLTensor s = gft_i64(seeds, shape);
    gf_loader *l = NULL;
    CHECK(gf_loader_open(g, &s, &o.lo, &l) == GF_OK, "open");
    CHECK(gf_loader_start(l, 4) == GF_OK, "start");
    for (int i = 0; i < k; i++) {
      gf_batch *b = NULL;
      CHECK(gf_loader_next(l, &b) == GF_OK && b != NULL, "next");
      gf_batch_close(b);
    }
    uint64_t e = 0;
    int64_t delivered = -1;
    int32_t started = 0;
    CHECK(gf_loader_position(l, &e, &delivered, &started) == GF_OK && e == 4 && delivered == k && started == 1,
          "position after %d batches: epoch %llu, %lld", k, (unsigned long long)e, (long long)delivered);
    gf_loader_close(l);
    batch rest[16];
    int m = epoch_from(g3, 1, e, delivered, rest, 16, NULL);
    CHECK(m == n - k, "resumed at %d: %d batches, want %d", k, m, n - k);
    for (int i = 0; i < m && k + i < n; i++) CHECK(same_batch(&rest[i], &full[k + i]), "resumed at %d: batch %d", k, k + i);
    for (int i = 0; i < m; i++) batch_free(&rest[i]);
  }
  for (int i = 0; i < n; i++) batch_free(&full[i]);
  gf_graph_close(g);
  gf_graph_close(g3);
}

static void test_write_csc(void) {
  char dir[256];
  CHECK(gft_tmpdir(dir, sizeof dir, "test_csc") != NULL, "mkdtemp");
  CHECK(gf_dataset_generate("tiny", dir, 5, 1) == GF_OK, "generate tiny: %s", gf_errmsg());
  int64_t e0 = 0, e1 = 0;
  gf_graph *g = NULL;
  CHECK(gf_graph_open(dir, NULL, &g) == GF_OK && gf_graph_num_edges(g, &e0) == GF_OK, "open tiny");
  gf_graph_close(g);
  CHECK_ERR(gf_dataset_write_csc(NULL), GF_EINVAL, "dir");
  CHECK(gf_dataset_write_csc(dir) == GF_OK, "gf_dataset_write_csc: %s", gf_errmsg());
  CHECK_ERR(gf_dataset_write_csc(dir), GF_EINVAL, "CSC files already");
  g = NULL;
  CHECK(gf_graph_open(dir, NULL, &g) == GF_OK && gf_graph_num_edges(g, &e1) == GF_OK, "open with CSC files");
  CHECK(e0 == e1 && e0 > 0, "edges %lld, then %lld", (long long)e0, (long long)e1);
  char *report = NULL;
  CHECK(gf_graph_memory_report(g, &report) == GF_OK && report != NULL &&
            strstr(report, "mapped from the dataset's CSC files") != NULL,
        "the plan says the topology is mapped: %s", report ? report : gf_errmsg());
  gf_free(report);
  gf_graph_close(g);
}

int main(int argc, char **argv) {
  const char *dir = gft_arg(argc, argv, 1, GFT_CORA);
  test_disk_tier(dir);
  test_resume(dir);
  test_write_csc();
  return gft_summary("test_disk");
}

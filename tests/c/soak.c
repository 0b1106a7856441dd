/*
 * soak.c: the soak of tests/python/test_soak.py through the C API, for
 * valgrind's memcheck (make test-valgrind). Each round opens a dataset,
 * reads node data and its names, samples once, opens a loader gathering
 * features and labels, takes a few batches of an epoch, starts the next
 * epoch and stops it mid-way, closes the loader before the last batch taken
 * from it, and closes the graph while a batch of it is still open (its
 * memory must outlive the graph, as the header promises). Every tensor is
 * released through its DLPack deleter.
 *
 *     soak [DATASET_DIR [ROUNDS]]    (default: the shipped Cora, 20 rounds)
 *
 * Exits 0 when every call returned what the header documents and, with 200
 * rounds or more, the process's resident memory and open file descriptors
 * stayed flat after a warm-up (tolerances as in test_soak.py: none for
 * descriptors, 32 MiB of resident memory between the median of rounds
 * [50, 100) and that of the last 50). Under memcheck (a few rounds: it is
 * about 100 times slower) any C allocation not freed (definite leak) and any
 * invalid read or write in C code is an error: include/graphferry-valgrind.supp
 * suppresses the false reports inside the Go runtime.
 */
#include "gftest.h"

/* release calls the tensor's deleter after reading its first and last
   elements (so that memcheck sees any read past the buffer). */
static double release(DLManagedTensor *t) {
  double sum = 0;
  if (t == NULL) return 0;
  size_t bytes = gft_tensor_bytes(&t->dl_tensor);
  if (bytes > 0) {
    const unsigned char *p = (const unsigned char *)t->dl_tensor.data + t->dl_tensor.byte_offset;
    sum = p[0] + p[bytes - 1];
  }
  t->deleter(t);
  return sum;
}

/* take_batch moves every field of b out and releases it, then closes b. */
static void take_batch(gf_batch *b, int with_data) {
  int32_t hops = 0;
  CHECK(gf_batch_num_hops(b, &hops) == GF_OK && hops == 2, "num_hops %d", hops);
  DLManagedTensor *t = NULL;
  CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &t) == GF_OK, "take nodes");
  release(t);
  for (int32_t h = 0; h < hops; h++) {
    t = NULL;
    CHECK(gf_batch_take(b, GF_FIELD_INDPTR, h, &t) == GF_OK, "take indptr");
    release(t);
    /* INDICES and EDGE_IDS are left for gf_batch_close to free */
  }
  if (with_data) {
    t = NULL;
    CHECK(gf_batch_take_node_data(b, "feat", &t) == GF_OK, "take feat");
    release(t);
    /* "label" is left for gf_batch_close */
  }
  gf_batch_close(b);
}

static void soak_round(const char *dir, int round) {
  gf_graph *g = NULL;
  if (gf_graph_open(dir, NULL, &g) != GF_OK) {
    CHECK(0, "gf_graph_open(%s)", dir);
    return;
  }
  int64_t n = 0;
  CHECK(gf_graph_num_nodes(g, &n) == GF_OK && n > 0, "num_nodes");

  char *names = NULL;
  CHECK(gf_graph_node_data_names(g, &names) == GF_OK && strstr(names, "feat") != NULL, "names");
  gf_free(names);
  DLManagedTensor *label = NULL;
  CHECK(gf_graph_get_node_data(g, "label", &label) == GF_OK, "get label");
  release(label);
  DLManagedTensor *missing = NULL;
  CHECK(gf_graph_get_node_data(g, "no such data", &missing) == GF_EINVAL && missing == NULL,
         "unknown node data refused");

  int64_t seeds[64];
  int64_t nseeds = n < 64 ? n : 64;
  for (int64_t i = 0; i < nseeds; i++) seeds[i] = (i * 41 + round) % n;
  /* distinct: 41 and n (Cora: 2708) are coprime and nseeds < n */
  int64_t shape = nseeds;
  DLTensor st = gft_i64(seeds, &shape);

  int32_t fanouts[2] = {10, 5};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 2;
  so.fanouts = fanouts;
  so.seed = (uint64_t)round;
  so.num_threads = 2;

  gf_batch *b = NULL;
  CHECK(gf_sample(g, &st, &so, &b) == GF_OK, "gf_sample");
  if (b) take_batch(b, 0);

  const char *feats[] = {"feat"};
  const char *labels[] = {"label"};
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = &so;
  lo.batch_size = 8;
  lo.shuffle = 1;
  lo.shuffle_seed = (uint64_t)round;
  lo.num_feature_names = 1;
  lo.feature_names = feats;
  lo.num_label_names = 1;
  lo.label_names = labels;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &st, &lo, &l) == GF_OK, "gf_loader_open");
  if (l == NULL) {
    gf_graph_close(g);
    return;
  }
  gf_batch *kept = NULL;
  for (uint64_t epoch = 0; epoch < 2; epoch++) {
    CHECK(gf_loader_start(l, epoch) == GF_OK, "gf_loader_start");
    for (int i = 0; i < 3; i++) { /* of 8 batches: break mid-epoch */
      gf_batch *lb = NULL;
      CHECK(gf_loader_next(l, &lb) == GF_OK && lb != NULL, "gf_loader_next");
      if (lb == NULL) break;
      if (epoch == 1 && i == 2) {
        kept = lb; /* outlives its loader and its graph */
      } else {
        take_batch(lb, 1);
      }
    }
  }
  gf_loader_close(l); /* the second epoch is still running */
  gf_graph_close(g);
  if (kept) take_batch(kept, 1);
}

/* resident_bytes: this process's resident memory (Linux /proc). */
static long long resident_bytes(void) {
  long long size = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f == NULL) return -1;
  if (fscanf(f, "%lld %lld", &size, &resident) != 2) resident = -1;
  fclose(f);
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* open_fds: this process's open file descriptors (Linux /proc). */
static long long open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return -1;
  long long n = -1; /* the descriptor of d itself */
  while (readdir(d) != NULL) n++;
  closedir(d);
  return n - 2; /* . and .. */
}

static int cmp_ll(const void *a, const void *b) {
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

static long long median(long long *xs, int n) {
  qsort(xs, (size_t)n, sizeof *xs, cmp_ll);
  return xs[n / 2];
}

#define WARMUP 50
#define MIN_FLAT_ROUNDS 200
#define RSS_TOLERANCE (32LL << 20)

int main(int argc, char **argv) {
  if (argc > 3) {
    fprintf(stderr, "usage: %s [DATASET_DIR [ROUNDS]] (default %s, 20 rounds)\n", argv[0], GFT_CORA);
    return 2;
  }
  const char *dir = gft_arg(argc, argv, 1, GFT_CORA);
  int rounds = atoi(gft_arg(argc, argv, 2, "20"));
  if (rounds <= 0) {
    fprintf(stderr, "soak: ROUNDS must be positive\n");
    return 2;
  }
  long long *rss = calloc((size_t)rounds, sizeof *rss);
  long long *fds = calloc((size_t)rounds, sizeof *fds);
  if (rss == NULL || fds == NULL) return 2;
  for (int r = 0; r < rounds; r++) {
    soak_round(dir, r);
    rss[r] = resident_bytes();
    fds[r] = open_fds();
  }
  printf("soak: %d rounds\n", rounds);
  if (rounds >= MIN_FLAT_ROUNDS) {
    long long r0 = median(rss + WARMUP, WARMUP), r1 = median(rss + rounds - WARMUP, WARMUP);
    long long f0 = median(fds + WARMUP, WARMUP), f1 = median(fds + rounds - WARMUP, WARMUP);
    printf("soak: resident memory %lld MiB after warm-up, %lld MiB at the end; "
           "open file descriptors %lld, then %lld\n", r0 >> 20, r1 >> 20, f0, f1);
    CHECK(r0 > 0 && r1 - r0 <= RSS_TOLERANCE, "resident memory grew by %lld KiB", (r1 - r0) >> 10);
    CHECK(f0 >= 0 && f1 == f0, "open file descriptors grew from %lld to %lld", f0, f1);
  }
  free(rss);
  free(fds);
  return gft_summary("soak");
}

/*
 * test_comm.c: a host-provided communicator (gf_comm) over threads.
 *
 * RANKS threads each open the shipped Cora with one patch per rank and a
 * distributed loader (gf_loader_open_comm) whose gf_comm callbacks exchange
 * through shared memory and a barrier, as MPI or torch.distributed would
 * between processes. Each rank's batches must equal the single-process
 * loader's batches r, r+RANKS, ... (padded round-robin), field by field.
 * Again with send and recv (control messages through per-pair queues): the
 * library then runs several sampler workers per rank whose exchanges a
 * coordinator orders over the one channel, and the batches must not change.
 * Then the failure paths: a callback that fails makes gf_loader_next return
 * GF_EIO with the host's message, and invalid tables are refused.
 * Then rank parts: the dataset partitioned into a temporary folder, every
 * rank opens only its part (gf_part_open, gf_loader_open_part) and must get
 * the same batches, node data fetched from the other ranks included.
 * Last, edge loaders (gf_edge_loader_open_comm, gf_edge_loader_open_part:
 * DGL's, the seed edges excluded): the same, against gf_edge_loader_open,
 * on a typed graph too (gf_graph_set_types: one node type, one relation),
 * and their argument checks.
 *
 * Usage: test_comm [DATASET_DIR] (default: the shipped Cora). C99 + pthreads;
 * public header only.
 */
#include "gftest.h"

#include <pthread.h>

enum { MAX_RANKS = 4, MAX_BATCHES = 64, NUM_SEEDS = 300, BATCH = 32, EPOCHS = 2 };

static const char *dataset;
static int64_t seeds[NUM_SEEDS];
static int64_t seeds_shape[1] = {NUM_SEEDS};

static DLTensor seeds_tensor(void) { return gft_i64(seeds, seeds_shape); }

/* ---------------------------------------------------------------------- */
/* The threads' communicator: a mailbox of pointers and sizes, a barrier. */

typedef struct {
  int size;
  pthread_barrier_t bar;
  int64_t sizes[MAX_RANKS][MAX_RANKS]; /* sizes[from][to] */
  const void *data[MAX_RANKS][MAX_RANKS];
  /* Control messages: q[from][to], FIFO. */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  gft_fifo q[MAX_RANKS][MAX_RANKS];
} mailbox;

typedef struct {
  mailbox *box;
  int rank;
} rank_ctx;

static int box_exchange_sizes(void *user, const int64_t *send, int64_t *recv) {
  rank_ctx *c = (rank_ctx *)user;
  mailbox *m = c->box;
  for (int j = 0; j < m->size; j++) m->sizes[c->rank][j] = send[j];
  pthread_barrier_wait(&m->bar);
  for (int j = 0; j < m->size; j++) recv[j] = m->sizes[j][c->rank];
  pthread_barrier_wait(&m->bar); /* nobody overwrites sizes before all read */
  return 0;
}

static int box_all_to_all(void *user, const void *const *send, const int64_t *send_sizes,
                          void *const *recv, const int64_t *recv_sizes) {
  rank_ctx *c = (rank_ctx *)user;
  mailbox *m = c->box;
  (void)send_sizes;
  for (int j = 0; j < m->size; j++) m->data[c->rank][j] = send[j];
  pthread_barrier_wait(&m->bar);
  for (int j = 0; j < m->size; j++) {
    if (recv_sizes[j] > 0) memcpy(recv[j], m->data[j][c->rank], (size_t)recv_sizes[j]);
  }
  pthread_barrier_wait(&m->bar); /* senders keep their buffers until all copied */
  return 0;
}

/* all_to_all_dl over the mailbox: the messages lie back to back in the
   library's two tensors, which are let go once every rank has copied. */
static int box_all_to_all_dl(void *user, DLManagedTensor *send, const int64_t *send_sizes,
                             DLManagedTensor *recv, const int64_t *recv_sizes) {
  const void *sp[MAX_RANKS];
  void *rp[MAX_RANKS];
  const char *s = (const char *)send->dl_tensor.data;
  char *d = (char *)recv->dl_tensor.data;
  for (int j = 0; j < ((rank_ctx *)user)->box->size; j++) {
    sp[j] = s;
    rp[j] = d;
    s += send_sizes[j];
    d += recv_sizes[j];
  }
  int rc = box_all_to_all(user, sp, send_sizes, rp, recv_sizes);
  send->deleter(send);
  recv->deleter(recv);
  return rc;
}

static int box_send(void *user, int32_t to, const void *data, int64_t n) {
  rank_ctx *c = (rank_ctx *)user;
  mailbox *m = c->box;
  if (to < 0 || to >= m->size) return 1;
  pthread_mutex_lock(&m->mu);
  int rc = gft_fifo_push(&m->q[c->rank][to], data, n);
  pthread_cond_broadcast(&m->cv);
  pthread_mutex_unlock(&m->mu);
  return rc;
}

static int box_recv(void *user, int32_t from, void *buf, int64_t capacity, int64_t *size) {
  rank_ctx *c = (rank_ctx *)user;
  mailbox *m = c->box;
  pthread_mutex_lock(&m->mu);
  gft_msg *e;
  while ((e = gft_fifo_pop(&m->q[from][c->rank])) == NULL) pthread_cond_wait(&m->cv, &m->mu);
  pthread_mutex_unlock(&m->mu);
  return gft_msg_deliver(e, buf, capacity, size);
}

/* ---------------------------------------------------------------------- */
/* Batches as digests: FNV-1a over every field.                           */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

static uint64_t fold(uint64_t h, DLManagedTensor *m) {
  if (m == NULL) return fnv(h, "-", 1);
  h = fnv(h, m->dl_tensor.data, gft_tensor_bytes(&m->dl_tensor));
  m->deleter(m);
  return h;
}

static uint64_t digest(gf_batch *b) {
  uint64_t h = 14695981039346656037ull;
  int32_t hops = 0;
  CHECK(gf_batch_num_hops(b, &hops) == GF_OK, "gf_batch_num_hops");
  int fields[] = {GF_FIELD_NODES, GF_FIELD_HOP_COUNTS, GF_FIELD_SEEDS, GF_FIELD_INPUT_INDEX};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    DLManagedTensor *m = NULL;
    CHECK(gf_batch_take(b, fields[i], 0, &m) == GF_OK, "gf_batch_take(%d)", fields[i]);
    h = fold(h, m);
  }
  for (int32_t l = 0; l < hops; l++) {
    for (int f = GF_FIELD_INDPTR; f <= GF_FIELD_EDGE_IDS; f++) {
      DLManagedTensor *m = NULL;
      CHECK(gf_batch_take(b, f, l, &m) == GF_OK, "gf_batch_take(%d, %d)", f, (int)l);
      h = fold(h, m);
    }
  }
  const char *names[] = {"feat", "label"};
  for (int i = 0; i < 2; i++) {
    DLManagedTensor *m = NULL;
    CHECK(gf_batch_take_node_data(b, names[i], &m) == GF_OK, "take %s", names[i]);
    h = fold(h, m);
  }
  gf_batch_close(b);
  return h;
}

static const int32_t fanouts[] = {5, 3};
static const char *feats[] = {"feat"};
static const char *labels[] = {"label"};

static int coordinated = 0; /* the ranks' tables have send and recv */
static int dlpack = 0;      /* and all_to_all_dl in place of all_to_all */

static void options(gf_sample_options *so, gf_loader_options *lo) {
  memset(so, 0, sizeof *so);
  so->struct_size = sizeof *so;
  so->num_hops = 2;
  so->fanouts = fanouts;
  so->seed = 42;
  so->num_threads = coordinated ? 3 : 1; /* 3 workers with a coordinator */
  memset(lo, 0, sizeof *lo);
  lo->struct_size = sizeof *lo;
  lo->sample = so;
  lo->batch_size = BATCH;
  lo->shuffle = 1;
  lo->shuffle_seed = 9;
  lo->num_feature_names = 1;
  lo->feature_names = feats;
  lo->num_label_names = 1;
  lo->label_names = labels;
}

static int typed_graphs = 0; /* open_graph makes the graph typed (one node type, one relation) */

static gf_graph *open_graph(int patches) {
  gf_graph_options go;
  memset(&go, 0, sizeof go);
  go.struct_size = sizeof go;
  go.num_patches = patches;
  go.partition = GF_PARTITION_RANDOM;
  go.seed = 3;
  gf_graph *g = NULL;
  CHECK(gf_graph_open(dataset, &go, &g) == GF_OK, "gf_graph_open(%s, %d patches)", dataset, patches);
  if (g != NULL && typed_graphs) {
    int64_t n = 0, e = 0;
    CHECK(gf_graph_num_nodes(g, &n) == GF_OK && gf_graph_num_edges(g, &e) == GF_OK, "graph size");
    int64_t node_offsets[2] = {0, n}, edge_offsets[2] = {0, e};
    int32_t rel_src[1] = {0}, rel_dst[1] = {0};
    CHECK(gf_graph_set_types(g, 1, node_offsets, 1, edge_offsets, rel_src, rel_dst) == GF_OK, "gf_graph_set_types: %s",
          gf_errmsg());
  }
  return g;
}

/* Reads epochs of l into out[epoch][i], each batch's digest_of; returns
   the batches per epoch. */
static int read_epochs_with(gf_loader *l, uint64_t out[EPOCHS][MAX_BATCHES], uint64_t (*digest_of)(gf_batch *)) {
  int n = 0;
  for (int e = 0; e < EPOCHS; e++) {
    CHECK(gf_loader_start(l, (uint64_t)e) == GF_OK, "gf_loader_start");
    int i = 0;
    for (;;) {
      gf_batch *b = NULL;
      int rc = gf_loader_next(l, &b);
      if (rc == GF_DONE) break;
      CHECK(rc == GF_OK, "gf_loader_next = %d: %s", rc, gf_errmsg());
      if (rc != GF_OK || i == MAX_BATCHES) return -1;
      out[e][i++] = digest_of(b);
    }
    n = i;
  }
  return n;
}

static int read_epochs(gf_loader *l, uint64_t out[EPOCHS][MAX_BATCHES]) { return read_epochs_with(l, out, digest); }

/* ---------------------------------------------------------------------- */

typedef struct {
  rank_ctx ctx;
  uint64_t got[EPOCHS][MAX_BATCHES];
  int n;
} rank_run;

/* Runs ranks threads, rank r main_fn(&runs[r]), over a new mailbox (never
   freed: a coordinator's receiving thread may still be waiting on the queues
   when the loaders have closed, which the header allows), and joins them. */
static void run_ranks(int ranks, void *(*main_fn)(void *), rank_run *runs) {
  mailbox *boxp = (mailbox *)calloc(1, sizeof(mailbox));
  boxp->size = ranks;
  pthread_barrier_init(&boxp->bar, NULL, (unsigned)ranks);
  pthread_mutex_init(&boxp->mu, NULL);
  pthread_cond_init(&boxp->cv, NULL);
  pthread_t th[MAX_RANKS];
  for (int r = 0; r < ranks; r++) {
    memset(&runs[r], 0, sizeof runs[r]);
    runs[r].ctx.box = boxp;
    runs[r].ctx.rank = r;
    pthread_create(&th[r], NULL, main_fn, &runs[r]);
  }
  for (int r = 0; r < ranks; r++) pthread_join(th[r], NULL);
}

/* Checks that rank r read the single-process batches (k * ranks + r) %
   total of ref, ceil(total / ranks) of them per epoch. */
static void check_shares(const char *what, int ranks, int total, const rank_run *runs,
                         uint64_t ref[EPOCHS][MAX_BATCHES]) {
  int per_rank = (total + ranks - 1) / ranks;
  for (int r = 0; r < ranks; r++) {
    CHECK(runs[r].n == per_rank, "%s, %d ranks%s: rank %d read %d batches per epoch, want %d", what, ranks,
          coordinated ? " (coordinated)" : "", r, runs[r].n, per_rank);
    if (runs[r].n != per_rank) continue;
    for (int e = 0; e < EPOCHS; e++) {
      for (int k = 0; k < per_rank; k++) {
        int want = (k * ranks + r) % total;
        CHECK(runs[r].got[e][k] == ref[e][want], "%s, %d ranks: rank %d epoch %d batch %d differs from single-process batch %d",
              what, ranks, r, e, k, want);
      }
    }
  }
}

/* Rank r's table over the mailbox (with send and recv when coordinated). */
static void rank_comm(rank_run *r, gf_comm *c) {
  memset(c, 0, sizeof *c);
  c->struct_size = sizeof *c;
  c->rank = r->ctx.rank;
  c->size = r->ctx.box->size;
  c->user = &r->ctx;
  c->exchange_sizes = box_exchange_sizes;
  c->all_to_all = dlpack ? NULL : box_all_to_all;
  c->all_to_all_dl = dlpack ? box_all_to_all_dl : NULL;
  if (coordinated) {
    c->send = box_send;
    c->recv = box_recv;
  }
}

static void *rank_main(void *arg) {
  rank_run *r = (rank_run *)arg;
  r->n = -1;
  gf_graph *g = open_graph(r->ctx.box->size);
  if (g == NULL) return NULL;
  gf_comm c;
  rank_comm(r, &c);
  gf_sample_options so;
  gf_loader_options lo;
  options(&so, &lo);
  DLTensor st = seeds_tensor();
  gf_loader *l = NULL;
  CHECK(gf_loader_open_comm(g, &st, &lo, &c, &l) == GF_OK, "gf_loader_open_comm rank %d", c.rank);
  gf_graph_close(g); /* the loader holds the graph */
  if (l == NULL) return NULL;
  r->n = read_epochs(l, r->got);
  gf_loader_close(l);
  return NULL;
}

static void test_ranks_equal_single_process(int ranks) {
  gf_sample_options so;
  gf_loader_options lo;
  options(&so, &lo);
  DLTensor st = seeds_tensor();
  gf_graph *g = open_graph(1);
  if (g == NULL) return;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &st, &lo, &l) == GF_OK, "gf_loader_open");
  static uint64_t ref[EPOCHS][MAX_BATCHES];
  int total = l ? read_epochs(l, ref) : -1;
  gf_loader_close(l);
  gf_graph_close(g);
  CHECK(total == (NUM_SEEDS + BATCH - 1) / BATCH, "reference batches = %d", total);
  if (total <= 0) return;

  static rank_run runs[MAX_RANKS];
  run_ranks(ranks, rank_main, runs);
  check_shares("loader", ranks, total, runs, ref);
}

/* ---------------------------------------------------------------------- */
/* Failures                                                               */

static int failing_sizes(void *user, const int64_t *send, int64_t *recv) {
  (void)user;
  (void)send;
  (void)recv;
  return 7;
}
static int never_called(void *user, const void *const *send, const int64_t *ss, void *const *recv,
                        const int64_t *rs) {
  (void)user, (void)send, (void)ss, (void)recv, (void)rs;
  return 0;
}
static const char *failing_msg(void *user) {
  (void)user;
  return "peer rank 1 is gone";
}

/* Rank 0 of 2 whose first exchange fails with failing_msg's message. */
static void failing_comm(gf_comm *c) {
  memset(c, 0, sizeof *c);
  c->struct_size = sizeof *c;
  c->rank = 0;
  c->size = 2;
  c->exchange_sizes = failing_sizes;
  c->all_to_all = never_called;
  c->errmsg = failing_msg;
}

static void test_failures(void) {
  gf_sample_options so;
  gf_loader_options lo;
  options(&so, &lo);
  DLTensor st = seeds_tensor();
  gf_graph *g = open_graph(2);
  if (g == NULL) return;
  gf_comm c;
  failing_comm(&c);
  gf_loader *l = NULL;

  /* Invalid tables. */
  CHECK(gf_loader_open_comm(g, &st, &lo, NULL, &l) == GF_EINVAL && l == NULL, "NULL comm");
  CHECK(strstr(gf_errmsg(), "gf_loader_open_comm: comm is NULL") != NULL, "message: %s", gf_errmsg());
  gf_comm bad = c;
  bad.struct_size = 8;
  CHECK(gf_loader_open_comm(g, &st, &lo, &bad, &l) == GF_EINVAL, "struct_size");
  CHECK(strstr(gf_errmsg(), "struct_size") != NULL, "message: %s", gf_errmsg());
  bad = c;
  bad.all_to_all = NULL;
  CHECK(gf_loader_open_comm(g, &st, &lo, &bad, &l) == GF_EINVAL, "NULL all_to_all");
  bad = c;
  bad.send = box_send; /* without recv */
  CHECK(gf_loader_open_comm(g, &st, &lo, &bad, &l) == GF_EINVAL, "send without recv");
  CHECK(strstr(gf_errmsg(), "both set or both NULL") != NULL, "message: %s", gf_errmsg());
  bad = c;
  bad.rank = 2;
  CHECK(gf_loader_open_comm(g, &st, &lo, &bad, &l) == GF_EINVAL, "rank out of range");
  CHECK(strstr(gf_errmsg(), "comm->rank = 2") != NULL, "message: %s", gf_errmsg());
  bad = c;
  bad.size = 3;
  CHECK(gf_loader_open_comm(g, &st, &lo, &bad, &l) == GF_EINVAL, "size != patches");
  CHECK(strstr(gf_errmsg(), "2 patches but the communicator 3 ranks") != NULL, "message: %s", gf_errmsg());

  /* A host failure reaches gf_loader_next as GF_EIO with the host's message. */
  CHECK(gf_loader_open_comm(g, &st, &lo, &c, &l) == GF_OK, "gf_loader_open_comm");
  if (l != NULL) {
    CHECK(gf_loader_start(l, 0) == GF_OK, "start");
    gf_batch *b = NULL;
    int rc = gf_loader_next(l, &b);
    CHECK(rc == GF_EIO && b == NULL, "next after a host failure = %d", rc);
    CHECK(strstr(gf_errmsg(), "gf_comm.exchange_sizes returned 7: peer rank 1 is gone") != NULL, "message: %s",
          gf_errmsg());
    CHECK(strstr(gf_errmsg(), "rank 0 of 2") != NULL, "message: %s", gf_errmsg());
    gf_loader_close(l);
  }
  gf_graph_close(g);
}

/* ---------------------------------------------------------------------- */
/* Rank parts: every rank opens only its own folder of a partition.       */

static char part_dir[256];

static void *rank_main_part(void *arg) {
  rank_run *r = (rank_run *)arg;
  r->n = -1;
  gf_part *p = NULL;
  CHECK(gf_part_open(part_dir, r->ctx.rank, 0, &p) == GF_OK, "gf_part_open rank %d: %s", r->ctx.rank, gf_errmsg());
  if (p == NULL) return NULL;
  gf_comm c;
  rank_comm(r, &c);
  gf_sample_options so;
  gf_loader_options lo;
  options(&so, &lo);
  DLTensor st = seeds_tensor();
  gf_loader *l = NULL;
  CHECK(gf_loader_open_part(p, &st, &lo, &c, &l) == GF_OK, "gf_loader_open_part rank %d: %s", c.rank, gf_errmsg());
  gf_part_close(p); /* the loader keeps what it needs */
  if (l == NULL) return NULL;
  r->n = read_epochs(l, r->got);
  gf_loader_close(l);
  return NULL;
}

/* Every rank gives its own nodes' times (gf_part_set_node_time with the
   communicator, a collective); r->n is its status. With r->ctx.rank == 1
   and times_short set, rank 1 gives one time too few: every rank fails. */
static int times_short;

static void *rank_main_times(void *arg) {
  rank_run *r = (rank_run *)arg;
  r->n = -1;
  gf_part *p = NULL;
  CHECK(gf_part_open(part_dir, r->ctx.rank, 0, &p) == GF_OK, "gf_part_open rank %d: %s", r->ctx.rank, gf_errmsg());
  if (p == NULL) return NULL;
  gf_comm c;
  rank_comm(r, &c);
  DLManagedTensor *owned = NULL;
  CHECK(gf_part_owned_nodes(p, &owned) == GF_OK, "owned nodes");
  if (owned != NULL) {
    int64_t shape[1] = {owned->dl_tensor.shape[0] - (times_short && r->ctx.rank == 1)};
    DLTensor t = gft_i64((int64_t *)owned->dl_tensor.data, shape); /* any int64 will do: the ids */
    r->n = gf_part_set_node_time(p, &t, &c);
    if (r->n != GF_OK) {
      CHECK(strstr(gf_errmsg(), "times") != NULL, "rank %d message: %s", r->ctx.rank, gf_errmsg());
    }
    owned->deleter(owned);
  }
  gf_part_close(p);
  return NULL;
}

/* The ranks' times assembled by a collective; a rank of the wrong length
   fails every rank's call, none left waiting. */
static void test_part_times(void) {
  gf_partition_options po;
  memset(&po, 0, sizeof po);
  po.struct_size = sizeof po;
  po.num_parts = 2;
  po.overwrite = 1; /* part_dir holds the previous test's partition */
  CHECK(gf_dataset_partition(dataset, part_dir, &po) == GF_OK, "gf_dataset_partition: %s", gf_errmsg());
  static rank_run runs[MAX_RANKS];
  times_short = 0;
  run_ranks(2, rank_main_times, runs);
  CHECK(runs[0].n == GF_OK && runs[1].n == GF_OK, "shared node times: %d %d", runs[0].n, runs[1].n);
  times_short = 1;
  run_ranks(2, rank_main_times, runs);
  CHECK(runs[0].n == GF_EINVAL && runs[1].n == GF_EINVAL, "one rank short: %d %d", runs[0].n, runs[1].n);
}

/* Partitions the dataset into part_dir with layout and checks that every
   rank's batches, node data fetched from the other ranks included, are the
   single-process loader's batches r, r+ranks, ... */
static void test_parts_equal_single_process(int ranks, int layout) {
  gf_sample_options so;
  gf_loader_options lo;
  options(&so, &lo);
  DLTensor st = seeds_tensor();
  gf_graph *g = open_graph(1);
  if (g == NULL) return;
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &st, &lo, &l) == GF_OK, "gf_loader_open");
  static uint64_t ref[EPOCHS][MAX_BATCHES];
  int total = l ? read_epochs(l, ref) : -1;
  gf_loader_close(l);
  gf_graph_close(g);
  if (total <= 0) return;

  gf_partition_options po;
  memset(&po, 0, sizeof po);
  po.struct_size = sizeof po;
  po.method = GF_PARTITION_RANDOM;
  po.num_parts = ranks;
  po.layout = layout;
  po.seed = 5;
  po.overwrite = 1; /* part_dir holds the previous test's partition */
  CHECK(gf_dataset_partition(dataset, part_dir, &po) == GF_OK, "gf_dataset_partition: %s", gf_errmsg());

  static rank_run runs[MAX_RANKS];
  run_ranks(ranks, rank_main_part, runs);
  check_shares(layout == GF_LAYOUT_DSP ? "dsp parts" : "hybrid parts", ranks, total, runs, ref);
}

/* The argument checks of the part functions. */
static void test_part_errors(void) {
  gf_partition_options po;
  memset(&po, 0, sizeof po);
  po.struct_size = sizeof po;
  po.num_parts = 2;
  po.overwrite = 1; /* part_dir holds the previous test's partition */
  CHECK(gf_dataset_partition(dataset, part_dir, &po) == GF_OK, "gf_dataset_partition: %s", gf_errmsg());
  gf_part *p = (gf_part *)1;
  CHECK(gf_part_open(NULL, 0, 0, &p) == GF_EINVAL && p == NULL, "NULL dir");
  CHECK(gf_part_open(part_dir, 0, 0, NULL) == GF_EINVAL, "NULL out_part");
  CHECK(gf_part_open(part_dir, 2, 0, &p) == GF_EINVAL, "rank 2 of 2");
  CHECK(strstr(gf_errmsg(), "rank = 2 is outside [0, 2)") != NULL, "message: %s", gf_errmsg());
  CHECK(gf_part_open(part_dir, 0, 8, &p) == GF_EINVAL, "unknown flags");
  CHECK(gf_part_open(dataset, 0, 0, &p) == GF_EIO, "a dataset that is not a partition: %s", gf_errmsg());
  CHECK(gf_part_open(part_dir, 1, GF_PART_VERIFY, &p) == GF_OK, "gf_part_open: %s", gf_errmsg());
  if (p == NULL) return;
  gf_part_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = 4;
  CHECK(gf_part_get_info(p, &info) == GF_EINVAL, "struct_size 4");
  info.struct_size = sizeof info;
  CHECK(gf_part_get_info(p, &info) == GF_OK && info.rank == 1 && info.num_parts == 2 && info.layout == GF_LAYOUT_DSP &&
            info.num_nodes == 2708 && info.num_owned > 0 && info.num_owned < 2708,
        "gf_part_get_info: rank %d of %d, %lld owned", info.rank, info.num_parts, (long long)info.num_owned);
  DLManagedTensor *owned = NULL, *feat = NULL;
  CHECK(gf_part_owned_nodes(p, &owned) == GF_OK && owned->dl_tensor.shape[0] == info.num_owned, "owned nodes");
  CHECK(gf_part_get_node_data(p, "feat", &feat) == GF_OK && feat->dl_tensor.shape[0] == info.num_owned, "owned feat");
  if (feat) feat->deleter(feat);
  CHECK(gf_part_get_node_data(p, "nope", &feat) == GF_EINVAL && feat == NULL, "unknown name");
  if (owned) owned->deleter(owned);
  CHECK(gf_part_owned_nodes(p, NULL) == GF_EINVAL, "NULL out_tensor");
  CHECK(gf_part_owned_nodes(NULL, &owned) == GF_EBADHANDLE, "NULL part");
  CHECK(gf_part_get_node_data(p, NULL, &feat) == GF_EINVAL, "NULL name");
  CHECK(gf_part_get_node_data(p, "feat", NULL) == GF_EINVAL, "NULL out_tensor");
  CHECK(gf_part_get_node_data(NULL, "feat", &feat) == GF_EBADHANDLE, "NULL part");
  char *names = NULL;
  CHECK(gf_part_node_data_names(p, &names) == GF_OK && names != NULL && strstr(names, "feat\n") != NULL &&
            strstr(names, "train_mask") != NULL,
        "gf_part_node_data_names: %s", names ? names : "(null)");
  gf_free(names);
  CHECK(gf_part_node_data_names(p, NULL) == GF_EINVAL, "NULL out_names");
  gf_graph *as_graph = (gf_graph *)p;
  int64_t n = 0;
  CHECK(gf_graph_num_nodes(as_graph, &n) == GF_EBADHANDLE, "a part is not a graph");

  /* Times: the whole vector without a communicator; checked arguments. */
  static int64_t times[2708];
  int64_t times_shape[1] = {2708}, short_shape[1] = {5};
  DLTensor tt = gft_i64(times, times_shape), tshort = gft_i64(times, short_shape);
  CHECK(gf_part_set_node_time(p, &tt, NULL) == GF_OK, "gf_part_set_node_time: %s", gf_errmsg());
  CHECK(gf_part_set_node_time(p, &tshort, NULL) == GF_EINVAL, "5 node times");
  CHECK(strstr(gf_errmsg(), "node times have 5 entries, want one per node of the whole graph (2708)") != NULL,
        "message: %s", gf_errmsg());
  CHECK(gf_part_set_node_time(p, NULL, NULL) == GF_EINVAL, "NULL time");
  DLTensor tf = tt;
  tf.dtype.code = kDLFloat;
  CHECK(gf_part_set_node_time(p, &tf, NULL) == GF_ETYPE, "float times");
  CHECK(gf_part_set_node_time(NULL, &tt, NULL) == GF_EBADHANDLE, "NULL part");
  CHECK(gf_part_set_edge_time(p, &tshort) == GF_EINVAL, "5 edge times");
  CHECK(strstr(gf_errmsg(), "edge times have 5 entries") != NULL, "message: %s", gf_errmsg());
  CHECK(gf_part_set_edge_time(p, NULL) == GF_EINVAL, "NULL edge time");
  CHECK(gf_part_set_edge_time(NULL, &tt) == GF_EBADHANDLE, "NULL part");

  gf_sample_options so;
  gf_loader_options lo;
  options(&so, &lo);
  DLTensor st = seeds_tensor();
  gf_comm c;
  memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.rank = 0; /* not the part's rank */
  c.size = 2;
  c.exchange_sizes = failing_sizes;
  c.all_to_all = never_called;
  gf_loader *l = NULL;
  CHECK(gf_loader_open_part(p, &st, &lo, &c, &l) == GF_EINVAL && l == NULL, "comm rank 0 on part 1");
  CHECK(strstr(gf_errmsg(), "this is part 1 of 2") != NULL, "message: %s", gf_errmsg());
  CHECK(gf_loader_open_part(p, &st, &lo, NULL, &l) == GF_EINVAL, "NULL comm");
  CHECK(gf_loader_open_part(NULL, &st, &lo, &c, &l) == GF_EBADHANDLE, "NULL part");
  int64_t owned_shape[1] = {info.num_owned};
  DLTensor towned = gft_i64(times, owned_shape);
  CHECK(gf_part_set_node_time(p, &towned, &c) == GF_EINVAL, "comm rank 0 on part 1");
  CHECK(strstr(gf_errmsg(), "this is part 1 of 2") != NULL, "message: %s", gf_errmsg());
  gf_part_close(p);
  gf_part_close(p); /* twice: ignored */
  gf_part_close(NULL);
  CHECK(gf_part_get_info(p, &info) == GF_EBADHANDLE, "closed part");
}

/* ---------------------------------------------------------------------- */
/* Edge loaders: gf_edge_loader_open_comm and gf_edge_loader_open_part.    */

static int64_t seed_edges[NUM_SEEDS];

/* An edge batch's digest: digest()'s fields and its pair fields. */
static uint64_t edge_digest(gf_batch *b) {
  uint64_t h = 14695981039346656037ull;
  int last = typed_graphs ? GF_LINK_NEG_OFFSETS : GF_LINK_EDGE_IDS; /* a typed batch's relation offsets too */
  for (int f = GF_LINK_POS_SRC; f <= last; f++) {
    DLManagedTensor *m = NULL;
    CHECK(gf_batch_take_link(b, f, &m) == GF_OK, "gf_batch_take_link(%d)", f);
    h = fold(h, m);
  }
  if (typed_graphs) { /* the typed view */
    DLManagedTensor *m = NULL;
    CHECK(gf_batch_take(b, GF_FIELD_TYPED_NODES, 0, &m) == GF_OK, "gf_batch_take(GF_FIELD_TYPED_NODES): %s",
          gf_errmsg());
    h = fold(h, m);
  }
  return h ^ digest(b); /* closes b */
}

typedef struct {
  gf_sample_options so;
  gf_loader_options lo;
  gf_edge_sampler_options es;
  gf_edge_loader_options el;
} edge_options;

static int edge_negative = GF_NEG_PER_SOURCE_UNIFORM; /* edge_options_init's negatives */

/* DGL's edge loader: 2 per-source negatives (or edge_negative's), the seed
   edges excluded. */
static void edge_options_init(edge_options *o) {
  options(&o->so, &o->lo);
  memset(&o->es, 0, sizeof o->es);
  o->es.struct_size = sizeof o->es;
  o->es.sample = &o->so;
  o->es.mode = GF_LINK_DGL;
  o->es.negative = edge_negative;
  o->es.amount = 2;
  o->es.exclude = GF_EXCLUDE_SELF;
  memset(&o->el, 0, sizeof o->el);
  o->el.struct_size = sizeof o->el;
  o->el.sampler = &o->es;
  o->el.loader = &o->lo;
}

static int read_edge_epochs(gf_loader *l, uint64_t out[EPOCHS][MAX_BATCHES]) {
  return read_epochs_with(l, out, edge_digest);
}

static int edge_on_parts = 0; /* rank_main_edge opens its part (else a replicated graph) */

static void *rank_main_edge(void *arg) {
  rank_run *r = (rank_run *)arg;
  r->n = -1;
  gf_comm c;
  rank_comm(r, &c);
  edge_options o;
  edge_options_init(&o);
  int64_t shape[1] = {NUM_SEEDS};
  DLTensor st = gft_i64(seed_edges, shape);
  gf_loader *l = NULL;
  if (edge_on_parts) {
    gf_part *p = NULL;
    CHECK(gf_part_open(part_dir, r->ctx.rank, 0, &p) == GF_OK, "gf_part_open rank %d: %s", r->ctx.rank, gf_errmsg());
    if (p == NULL) return NULL;
    CHECK(gf_edge_loader_open_part(p, &st, NULL, &o.el, &c, &l) == GF_OK, "gf_edge_loader_open_part rank %d: %s",
          c.rank, gf_errmsg());
    gf_part_close(p);
  } else {
    gf_graph *g = open_graph(r->ctx.box->size);
    if (g == NULL) return NULL;
    CHECK(gf_edge_loader_open_comm(g, &st, NULL, &o.el, &c, &l) == GF_OK, "gf_edge_loader_open_comm rank %d: %s",
          c.rank, gf_errmsg());
    gf_graph_close(g);
  }
  if (l == NULL) return NULL;
  r->n = read_edge_epochs(l, r->got);
  gf_loader_close(l);
  return NULL;
}

/* Every rank's edge batches are the single-process edge loader's batches
   r, r+ranks, ... (on a replicated graph, or on the parts in part_dir). */
static void test_edge_ranks_equal_single_process(int ranks, int parts, int layout) {
  edge_options o;
  edge_options_init(&o);
  int64_t shape[1] = {NUM_SEEDS};
  DLTensor st = gft_i64(seed_edges, shape);
  gf_graph *g = open_graph(1);
  if (g == NULL) return;
  gf_loader *l = NULL;
  CHECK(gf_edge_loader_open(g, &st, NULL, &o.el, &l) == GF_OK, "gf_edge_loader_open: %s", gf_errmsg());
  static uint64_t ref[EPOCHS][MAX_BATCHES];
  int total = l ? read_edge_epochs(l, ref) : -1;
  gf_loader_close(l);
  gf_graph_close(g);
  CHECK(total == (NUM_SEEDS + BATCH - 1) / BATCH, "reference edge batches = %d", total);
  if (total <= 0) return;
  if (parts) {
    gf_partition_options po;
    memset(&po, 0, sizeof po);
    po.struct_size = sizeof po;
    po.method = GF_PARTITION_RANDOM;
    po.num_parts = ranks;
    po.layout = layout;
    po.seed = 5;
    po.overwrite = 1; /* part_dir holds the previous test's partition */
    CHECK(gf_dataset_partition(dataset, part_dir, &po) == GF_OK, "gf_dataset_partition: %s", gf_errmsg());
  }
  edge_on_parts = parts;
  static rank_run runs[MAX_RANKS];
  run_ranks(ranks, rank_main_edge, runs);
  check_shares(!parts ? "edge loader" : layout == GF_LAYOUT_DSP ? "edge loader, dsp parts" : "edge loader, hybrid parts",
               ranks, total, runs, ref);
}

/* The argument checks of the edge loaders over a communicator, before any
   exchange. */
static void test_edge_errors(void) {
  edge_options o;
  edge_options_init(&o);
  int64_t shape[1] = {NUM_SEEDS};
  DLTensor st = gft_i64(seed_edges, shape);
  gf_graph *g = open_graph(2);
  if (g == NULL) return;
  gf_comm c;
  failing_comm(&c);
  gf_loader *l = (gf_loader *)1;
  CHECK(gf_edge_loader_open_comm(g, &st, NULL, &o.el, NULL, &l) == GF_EINVAL && l == NULL, "NULL comm");
  CHECK(strstr(gf_errmsg(), "gf_edge_loader_open_comm: comm is NULL") != NULL, "message: %s", gf_errmsg());
  CHECK(gf_edge_loader_open_comm(g, &st, NULL, NULL, &c, &l) == GF_EINVAL, "NULL options");
  CHECK(gf_edge_loader_open_comm(g, &st, NULL, &o.el, &c, NULL) == GF_EINVAL, "NULL out_loader");
  CHECK(gf_edge_loader_open_comm(NULL, &st, NULL, &o.el, &c, &l) == GF_EBADHANDLE, "NULL graph");
  CHECK(gf_edge_loader_open_comm(g, &st, &st, &o.el, &c, &l) == GF_EINVAL, "seeds_dst in DGL mode");
  CHECK(strstr(gf_errmsg(), "seeds_dst must be NULL") != NULL, "message: %s", gf_errmsg());
  gf_comm bad = c;
  bad.size = 3;
  CHECK(gf_edge_loader_open_comm(g, &st, NULL, &o.el, &bad, &l) == GF_EINVAL, "size != patches");
  CHECK(strstr(gf_errmsg(), "2 patches but the communicator 3 ranks") != NULL, "message: %s", gf_errmsg());
  int64_t bad_edges[2] = {1, 10556};
  int64_t bad_shape[1] = {2};
  DLTensor bt = gft_i64(bad_edges, bad_shape);
  CHECK(gf_edge_loader_open_comm(g, &bt, NULL, &o.el, &c, &l) == GF_EINVAL, "an edge id that is not an edge");
  CHECK(strstr(gf_errmsg(), "ids[1] = 10556") != NULL, "message: %s", gf_errmsg());
  /* A host failure reaches gf_loader_next as GF_EIO with the host's message. */
  CHECK(gf_edge_loader_open_comm(g, &st, NULL, &o.el, &c, &l) == GF_OK, "gf_edge_loader_open_comm: %s", gf_errmsg());
  if (l != NULL) {
    CHECK(gf_loader_start(l, 0) == GF_OK, "start");
    gf_batch *b = NULL;
    CHECK(gf_loader_next(l, &b) == GF_EIO && b == NULL, "next after a host failure");
    CHECK(strstr(gf_errmsg(), "peer rank 1 is gone") != NULL, "message: %s", gf_errmsg());
    gf_loader_close(l);
  }
  gf_graph_close(g);

  /* Parts: what a part does not serve is GF_ENOTSUP, before any exchange. */
  const int layouts[] = {GF_LAYOUT_DSP, GF_LAYOUT_SELF_RELIANT};
  for (int i = 0; i < 2; i++) {
    int layout = layouts[i];
    gf_partition_options po;
    memset(&po, 0, sizeof po);
    po.struct_size = sizeof po;
    po.num_parts = 2;
    po.layout = layout;
    po.num_hops = 2;
    po.overwrite = 1; /* part_dir holds the previous test's partition */
    CHECK(gf_dataset_partition(dataset, part_dir, &po) == GF_OK, "gf_dataset_partition: %s", gf_errmsg());
    gf_part *p = NULL;
    CHECK(gf_part_open(part_dir, 0, 0, &p) == GF_OK, "gf_part_open: %s", gf_errmsg());
    if (p == NULL) return;
    if (layout == GF_LAYOUT_SELF_RELIANT) {
      CHECK(gf_edge_loader_open_part(p, &st, NULL, &o.el, &c, &l) == GF_ENOTSUP, "self-reliant: %s", gf_errmsg());
    } else {
      /* GlobalUniform is served on dsp: the open reaches its exchange,
         which this communicator fails. */
      o.es.negative = GF_NEG_GLOBAL_UNIFORM;
      CHECK(gf_edge_loader_open_part(p, &st, NULL, &o.el, &c, &l) == GF_EIO && l == NULL, "GlobalUniform on dsp: %s",
            gf_errmsg());
      CHECK(strstr(gf_errmsg(), "peer rank 1 is gone") != NULL, "message: %s", gf_errmsg());
      o.es.negative = GF_NEG_PER_SOURCE_UNIFORM;
      c.rank = 1;
      CHECK(gf_edge_loader_open_part(p, &st, NULL, &o.el, &c, &l) == GF_EINVAL, "comm rank 1 on part 0");
      CHECK(strstr(gf_errmsg(), "this is part 0 of 2") != NULL, "message: %s", gf_errmsg());
      c.rank = 0;
      CHECK(gf_edge_loader_open_part(NULL, &st, NULL, &o.el, &c, &l) == GF_EBADHANDLE, "NULL part");
      CHECK(gf_edge_loader_open_part(p, &st, NULL, &o.el, NULL, &l) == GF_EINVAL, "NULL comm");
    }
    gf_part_close(p);
  }
}

int main(int argc, char **argv) {
  if (argc > 2) {
    fprintf(stderr, "usage: %s [DATASET_DIR] (default %s)\n", argv[0], GFT_CORA);
    return 2;
  }
  dataset = gft_arg(argc, argv, 1, GFT_CORA);
  for (int i = 0; i < NUM_SEEDS; i++) seeds[i] = (int64_t)((i * 37 + 5) % 2708);
  for (int ranks = 1; ranks <= MAX_RANKS; ranks++) test_ranks_equal_single_process(ranks);
  coordinated = 1;
  for (int ranks = 2; ranks <= MAX_RANKS; ranks++) test_ranks_equal_single_process(ranks);
  dlpack = 1; /* the messages as DLPack tensors */
  test_ranks_equal_single_process(3);
  coordinated = 0;
  test_ranks_equal_single_process(2);
  dlpack = 0;
  test_failures();
  if (gft_tmpdir(part_dir, sizeof part_dir, "test_comm") == NULL) {
    fprintf(stderr, "mkdtemp failed\n");
    return 1;
  }
  test_part_errors();
  test_part_times();
  test_parts_equal_single_process(2, GF_LAYOUT_DSP);
  test_parts_equal_single_process(3, GF_LAYOUT_HYBRID);
  coordinated = 1;
  test_parts_equal_single_process(3, GF_LAYOUT_DSP);
  coordinated = 0;
  for (int i = 0; i < NUM_SEEDS; i++) seed_edges[i] = (int64_t)((i * 37 + 5) % 10556);
  test_edge_errors();
  test_edge_ranks_equal_single_process(2, 0, 0);
  test_edge_ranks_equal_single_process(3, 1, GF_LAYOUT_DSP);
  coordinated = 1;
  test_edge_ranks_equal_single_process(3, 0, 0);
  test_edge_ranks_equal_single_process(2, 1, GF_LAYOUT_HYBRID);
  /* GlobalUniform on dsp parts: the owners are asked which candidate
     pairs are edges, once per batch. */
  edge_negative = GF_NEG_GLOBAL_UNIFORM;
  test_edge_ranks_equal_single_process(2, 1, GF_LAYOUT_DSP);
  edge_negative = GF_NEG_PER_SOURCE_UNIFORM;
  coordinated = 0;
  /* A typed graph replicated in every rank: the one-process typed edge
     batches (relation offsets, typed view). */
  typed_graphs = 1;
  test_edge_ranks_equal_single_process(2, 0, 0);
  typed_graphs = 0;
  CHECK(gft_rmtree(part_dir) == 0, "remove %s", part_dir);
  return gft_summary("test_comm");
}

/*
 * test_threads.c: gf_graph_close while other threads use the graph.
 *
 * Several threads loop gf_sample, gf_random_walk and gf_graph_get_node_data
 * on one graph, and others run loaders opened from it, while the main
 * thread closes the graph. The header's promise: every call either succeeds
 * (with correct data) or fails with a status and a message naming the
 * function; nothing crashes; loaders opened before the close keep working
 * until they are closed; the graph's memory (here the caller's node data,
 * whose deleter poisons it, or a memory-mapped dataset file) is released
 * once, after the last call and loader that use it.
 *
 * Two graphs are used in turn: one built in memory whose node data is the
 * caller's buffer (the graph reads it in place), and one opened from a
 * generated dataset directory whose features are memory-mapped.
 *
 * C99 + pthreads; includes only the public header and links only the
 * library. Prints "test_threads: N passed, N failed" and exits non-zero on
 * any failure.
 */
#include "gftest.h"

#include <pthread.h>

enum { N = 4096, DIM = 16, CALLERS = 3, LOADERS = 2, ROUNDS = 16, DATASET_ROUNDS = 8 };

/* ---------------------------------------------------------------------- */
/* Node data owned by the caller: the deleter poisons it before freeing.  */

static int deleter_calls = 0; /* under deleter_mu */
static pthread_mutex_t deleter_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct {
  DLManagedTensor m;
  int64_t shape[2];
  float *rows;
} owned_feat;

static void poison_and_free(DLManagedTensor *self) {
  owned_feat *f = (owned_feat *)self->manager_ctx;
  memset(f->rows, 0xff, sizeof(float) * N * DIM);
  free(f->rows);
  free(f);
  pthread_mutex_lock(&deleter_mu);
  deleter_calls++;
  pthread_mutex_unlock(&deleter_mu);
}

static float feat_value(int64_t v, int c) { return (float)v + (float)c / 64.0f; }

static DLManagedTensor *new_features(void) {
  owned_feat *f = calloc(1, sizeof *f);
  f->rows = malloc(sizeof(float) * N * DIM);
  for (int64_t v = 0; v < N; v++)
    for (int c = 0; c < DIM; c++) f->rows[v * DIM + c] = feat_value(v, c);
  f->shape[0] = N;
  f->shape[1] = DIM;
  f->m.dl_tensor = gft_tensor(f->rows, 2, f->shape, kDLFloat, 32);
  f->m.manager_ctx = f;
  f->m.deleter = poison_and_free;
  return &f->m;
}

/* A graph where node v has in-edges from v+1, 7v+3 and v+13 (mod N). */
static gf_graph *memory_graph(void) {
  static int64_t indptr[N + 1], indices[3 * N];
  for (int64_t v = 0; v < N; v++) {
    indptr[v] = 3 * v;
    indices[3 * v] = (v + 1) % N;
    indices[3 * v + 1] = (7 * v + 3) % N;
    indices[3 * v + 2] = (v + 13) % N;
  }
  indptr[N] = 3 * N;
  int64_t sp = N + 1, si = 3 * N;
  DLTensor tp = gft_i64(indptr, &sp), ti = gft_i64(indices, &si);
  gf_graph *g = NULL;
  CHECK(gf_graph_from_csc(&tp, &ti, NULL, NULL, &g) == GF_OK && g, "graph from csc");
  if (!g) return NULL;
  DLManagedTensor *feat = new_features();
  int rc = gf_graph_set_node_data(g, "feat", feat);
  CHECK(rc == GF_OK, "set node data");
  if (rc != GF_OK) feat->deleter(feat);
  return g;
}

/* ---------------------------------------------------------------------- */
/* The shared state of one round.                                         */

typedef struct {
  gf_graph *g;
  int64_t num_nodes;
  /* The node data "feat" as read before the threads start: what every
     successful gf_graph_get_node_data must return. */
  void *want;
  size_t want_bytes;

  pthread_mutex_t mu;
  pthread_cond_t cv;
  int ready;   /* workers that finished a first call (or loader epoch) */
  int closing; /* set just before gf_graph_close */
  int closed;  /* set just after it */
} round_state;

static void mark_ready(round_state *s) {
  pthread_mutex_lock(&s->mu);
  s->ready++;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

static int flag(round_state *s, const int *f) {
  pthread_mutex_lock(&s->mu);
  int c = *f;
  pthread_mutex_unlock(&s->mu);
  return c;
}

static void set_flag(round_state *s, int *f) {
  pthread_mutex_lock(&s->mu);
  *f = 1;
  pthread_mutex_unlock(&s->mu);
}

/* A failed call must give an error status and a message naming fn. */
static void check_failure(int rc, const char *fn) {
  const char *msg = gf_errmsg();
  CHECK(rc != GF_OK && rc != GF_DONE && msg && strncmp(msg, fn, strlen(fn)) == 0,
        "%s failed with status %d and message \"%s\"", fn, rc, msg ? msg : "(null)");
}

/* Each caller loops on one function until the closed graph refuses it.
   The loop is bounded so that a missing refusal fails instead of hanging. */
enum { CALL_SAMPLE, CALL_WALK, CALL_GET };

typedef struct {
  round_state *s;
  int what;
  int calls;
} caller_arg;

static void *caller(void *p) {
  caller_arg *a = p;
  round_state *s = a->s;
  int32_t fanouts[] = {3, 2};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 2;
  so.fanouts = fanouts;
  so.num_threads = 1;
  gf_walk_options wo;
  memset(&wo, 0, sizeof wo);
  wo.struct_size = sizeof wo;
  wo.length = 4;
  wo.num_threads = 1;
  int64_t seeds[8];
  int64_t ns = 8;
  DLTensor ts = gft_i64(seeds, &ns);
  const int limit = 1000000;
  for (int i = 0; i < limit; i++) {
    for (int k = 0; k < 8; k++) seeds[k] = (i * 8 + k * 97) % s->num_nodes;
    int rc;
    const char *fn;
    if (a->what == CALL_SAMPLE) {
      fn = "gf_sample";
      gf_batch *b = NULL;
      rc = gf_sample(s->g, &ts, &so, &b);
      gf_batch_close(b);
    } else if (a->what == CALL_WALK) {
      fn = "gf_random_walk";
      DLManagedTensor *tr = NULL;
      rc = gf_random_walk(s->g, &ts, &wo, &tr, NULL);
      if (tr) tr->deleter(tr);
    } else {
      fn = "gf_graph_get_node_data";
      DLManagedTensor *x = NULL;
      rc = gf_graph_get_node_data(s->g, "feat", &x);
      if (rc == GF_OK) {
        size_t bytes = gft_tensor_bytes(&x->dl_tensor);
        int same = bytes == s->want_bytes && memcmp(x->dl_tensor.data, s->want, bytes) == 0;
        if (!same) CHECK(0, "node data read by call %d differs from the data set", i);
        x->deleter(x);
      }
    }
    a->calls++;
    if (i == 0) mark_ready(s);
    if (rc != GF_OK) {
      check_failure(rc, fn);
      CHECK(flag(s, &s->closing), "%s failed before the graph was closed", fn);
      return NULL;
    }
  }
  CHECK(0, "calls on a closed graph kept succeeding");
  return NULL;
}

/* A loader thread runs epochs until it sees the graph closed, then one more
   full epoch, then closes its loader. */
typedef struct {
  round_state *s;
  gf_loader *l;
  int epochs;
} loader_arg;

static int run_epoch(loader_arg *a, uint64_t epoch) {
  int rc = gf_loader_start(a->l, epoch);
  CHECK(rc == GF_OK, "gf_loader_start");
  if (rc != GF_OK) return 0;
  gf_batch *b = NULL;
  int count = 0;
  while ((rc = gf_loader_next(a->l, &b)) == GF_OK) {
    DLManagedTensor *nodes = NULL, *x = NULL;
    int ok = gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK &&
             gf_batch_take_node_data(b, "feat", &x) == GF_OK;
    CHECK(ok, "take nodes and feat");
    if (ok) {
      const int64_t *nv = nodes->dl_tensor.data;
      const char *rows = x->dl_tensor.data;
      size_t row = (size_t)x->dl_tensor.shape[1] * x->dl_tensor.dtype.bits / 8;
      for (int64_t i = 0; i < nodes->dl_tensor.shape[0]; i++) {
        if (memcmp(rows + i * row, (const char *)a->s->want + nv[i] * row, row) != 0) {
          CHECK(0, "loader row of node %lld differs from the data set", (long long)nv[i]);
          break;
        }
      }
    }
    if (nodes) nodes->deleter(nodes);
    if (x) x->deleter(x);
    gf_batch_close(b);
    count++;
  }
  CHECK(rc == GF_DONE && count > 0, "epoch %llu ends with GF_DONE after %d batches (rc %d)",
        (unsigned long long)epoch, count, rc);
  return rc == GF_DONE;
}

static void *loader_thread(void *p) {
  loader_arg *a = p;
  for (uint64_t e = 0;; e++) {
    int closed = flag(a->s, &a->s->closed);
    int ok = run_epoch(a, e);
    a->epochs++;
    if (e == 0) mark_ready(a->s);
    if (!ok || closed) break;
  }
  gf_loader_close(a->l);
  return NULL;
}

/* ---------------------------------------------------------------------- */

/* run_round runs the threads on g and closes it; with_loaders also runs
   loaders, which then hold the graph past the close. */
static void run_round(gf_graph *g, int round, int with_loaders) {
  int loaders = with_loaders ? LOADERS : 0;
  round_state s;
  memset(&s, 0, sizeof s);
  pthread_mutex_init(&s.mu, NULL);
  pthread_cond_init(&s.cv, NULL);
  s.g = g;
  CHECK(gf_graph_num_nodes(g, &s.num_nodes) == GF_OK, "num nodes");
  DLManagedTensor *x = NULL;
  CHECK(gf_graph_get_node_data(g, "feat", &x) == GF_OK, "first get_node_data");
  if (!x) return;
  CHECK(x->dl_tensor.ndim == 2, "feat is 2-D");
  s.want_bytes = gft_tensor_bytes(&x->dl_tensor);
  s.want = malloc(s.want_bytes);
  memcpy(s.want, x->dl_tensor.data, s.want_bytes);
  x->deleter(x);

  /* Loaders are opened before the close; they hold the graph. */
  int32_t fanouts[] = {4, 2};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 2;
  so.fanouts = fanouts;
  so.num_threads = 1;
  so.seed = (uint64_t)round;
  static int64_t seeds[256];
  for (int i = 0; i < 256; i++) seeds[i] = (i * 37) % s.num_nodes;
  int64_t ns = 256;
  DLTensor ts = gft_i64(seeds, &ns);
  const char *names[] = {"feat"};
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = &so;
  lo.batch_size = 64;
  lo.shuffle = 1;
  lo.num_feature_names = 1;
  lo.feature_names = names;

  pthread_t th[CALLERS * 3 + LOADERS];
  caller_arg ca[CALLERS * 3];
  loader_arg la[LOADERS];
  int nth = 0;
  for (int i = 0; i < loaders; i++) {
    memset(&la[i], 0, sizeof la[i]);
    la[i].s = &s;
    CHECK(gf_loader_open(g, &ts, &lo, &la[i].l) == GF_OK, "loader open");
  }
  for (int i = 0; i < CALLERS * 3; i++) {
    ca[i].s = &s;
    ca[i].what = i % 3;
    ca[i].calls = 0;
    pthread_create(&th[nth++], NULL, caller, &ca[i]);
  }
  for (int i = 0; i < loaders; i++) pthread_create(&th[nth++], NULL, loader_thread, &la[i]);

  /* Close once every thread is under way. */
  pthread_mutex_lock(&s.mu);
  while (s.ready < nth) pthread_cond_wait(&s.cv, &s.mu);
  pthread_mutex_unlock(&s.mu);
  set_flag(&s, &s.closing);
  gf_graph_close(g);
  set_flag(&s, &s.closed);
  for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);

  for (int i = 0; i < loaders; i++)
    CHECK(la[i].epochs >= 2, "loader %d ran %d epochs (one after the close)", i, la[i].epochs);
  /* The handle is gone: calls now give GF_EBADHANDLE. */
  gf_batch *b = NULL;
  CHECK(gf_sample(g, &ts, &so, &b) == GF_EBADHANDLE && b == NULL, "sample after close");
  free(s.want);
  pthread_cond_destroy(&s.cv);
  pthread_mutex_destroy(&s.mu);
}

int main(void) {
  /* The caller's node data: released once per graph, after the last user. */
  for (int r = 0; r < ROUNDS; r++) {
    gf_graph *g = memory_graph();
    if (!g) break;
    run_round(g, r, r % 2);
    pthread_mutex_lock(&deleter_mu);
    int calls = deleter_calls;
    pthread_mutex_unlock(&deleter_mu);
    CHECK(calls == r + 1, "round %d: the node data's deleter ran %d times in all (want %d)", r, calls, r + 1);
  }

  /* A dataset whose features are memory-mapped, unmapped with the graph. */
  char dir[256];
  CHECK(gft_tmpdir(dir, sizeof dir, "threads") != NULL, "mkdtemp");
  int rc = gf_dataset_generate("tiny", dir, 3, 1);
  CHECK(rc == GF_OK, "generate the tiny dataset");
  for (int r = 0; rc == GF_OK && r < DATASET_ROUNDS; r++) {
    gf_graph *g = NULL;
    CHECK(gf_graph_open(dir, NULL, &g) == GF_OK && g, "open the dataset");
    if (!g) break;
    run_round(g, r, r % 2);
  }
  gft_rmtree(dir);

  return gft_summary("test_threads");
}

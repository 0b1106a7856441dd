/*
 * test_edge_loader.c: edge loaders (gf_edge_loader_open), edge data
 * (gf_graph_set_edge_data, gf_batch_take_edge_data) and a graph's edges
 * (gf_graph_edges):
 *
 *   - an edge loader on the host's allocator: every byte of every tensor it
 *     hands out (topology, pair fields, node and edge data) lies in a block
 *     of the host's, its batches equal an edge loader's on the library's
 *     memory, batch i of epoch e is gf_edge_sampler_sample's batch of its
 *     seeds with key (e << 32) | i, the gathered edge rows are the graph's
 *     rows of the batch's edge ids, and every block is freed exactly once
 *     (also for tensors dropped after the loader and the graph were
 *     closed, and batches in flight at close); an allocator that fails
 *     makes gf_loader_next fail with GF_ENOMEM and leaks nothing;
 *   - gf_graph_edges gives back the edges a graph was built from, COO and
 *     CSC, typed (per relation) and not, whatever the patches; bad
 *     arguments are refused, naming them;
 *   - gf_edge_loader_open refuses bad arguments, naming them;
 *   - gf_sample_keyed with a loader batch's seeds and key (epoch << 32) | i
 *     gives that batch, and with key 0 gf_sample's;
 *   - an exclude callback (gf_batch_callback) that names a batch's own seed
 *     edges gives GF_EXCLUDE_SELF's batches, called once per batch with its
 *     key; its error fails that batch with its status and message; a bad
 *     table is refused at open, naming it;
 *   - an edge loader with GF_COO_SUBGRAPH gives subgraph batches: the
 *     induced edges less the excluded ones, by source, no blocks.
 *
 *     test_edge_loader [DATASET_DIR]    (default: the shipped Cora)
 */
#include "gftest.h"

typedef struct {
  gf_sample_options so;
  gf_edge_sampler_options es;
  gf_loader_options lo;
  gf_edge_loader_options el;
  int32_t fanouts[2];
  const char *feats[1];
  const char *edge_feats[1];
} options;

static void options_init(options *o, const gf_allocator *a) {
  memset(o, 0, sizeof *o);
  o->fanouts[0] = 6;
  o->fanouts[1] = 3;
  o->so.struct_size = sizeof o->so;
  o->so.num_hops = 2;
  o->so.fanouts = o->fanouts;
  o->so.seed = 11;
  o->so.num_threads = 2;
  o->es.struct_size = sizeof o->es;
  o->es.sample = &o->so;
  o->es.mode = GF_LINK_DGL;
  o->es.negative = GF_NEG_PER_SOURCE_UNIFORM;
  o->es.amount = 2;
  o->es.exclude = GF_EXCLUDE_SELF;
  o->feats[0] = "feat";
  o->edge_feats[0] = "w";
  o->lo.struct_size = sizeof o->lo;
  o->lo.batch_size = 128;
  o->lo.shuffle = 1;
  o->lo.shuffle_seed = 5;
  o->lo.num_feature_names = 1;
  o->lo.feature_names = o->feats;
  o->lo.allocator = a;
  o->el.struct_size = sizeof o->el;
  o->el.sampler = &o->es;
  o->el.loader = &o->lo;
  o->el.num_edge_feature_names = 1;
  o->el.edge_feature_names = o->edge_feats;
  o->el.coo = 1;
}

/* The edge data "w": row e = (e, -e), float32, freed by its deleter. */
static int w_deleted = 0;

static void w_deleter(DLManagedTensor *self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
  __atomic_add_fetch(&w_deleted, 1, __ATOMIC_SEQ_CST);
}

static int set_edge_rows(gf_graph *g, int64_t num_edges) {
  DLManagedTensor *m = (DLManagedTensor *)calloc(1, sizeof *m);
  int64_t *shape = (int64_t *)malloc(2 * sizeof(int64_t));
  float *w = (float *)malloc((size_t)(num_edges > 0 ? num_edges : 1) * 2 * sizeof(float));
  for (int64_t e = 0; e < num_edges; e++) {
    w[2 * e] = (float)e;
    w[2 * e + 1] = -(float)e;
  }
  shape[0] = num_edges;
  shape[1] = 2;
  m->dl_tensor = gft_tensor(w, 2, shape, kDLFloat, 32);
  m->deleter = w_deleter;
  int rc = gf_graph_set_edge_data(g, "w", m);
  if (rc != GF_OK) w_deleter(m);
  return rc;
}

/* A batch's fields, pair fields, node data and edge data, taken out. */
enum { NTOP = 9, NLINK = GF_LINK_NEG_OFFSETS + 1, NCOO = 2, NALL = NTOP + NLINK + 2 + NCOO };
static const struct {
  int32_t field, layer;
} TOP[NTOP] = {
    {GF_FIELD_NODES, 0},   {GF_FIELD_HOP_COUNTS, 0}, {GF_FIELD_SEEDS, 0}, {GF_FIELD_INDPTR, 0},
    {GF_FIELD_INDICES, 0}, {GF_FIELD_EDGE_IDS, 0},   {GF_FIELD_INDPTR, 1}, {GF_FIELD_INDICES, 1},
    {GF_FIELD_EDGE_IDS, 1},
};

/* take_all takes everything out of b (b is closed); out[NTOP + f] is pair
   field f, then "feat", "w" and the edge list. Returns how many it took. */
static int take_all(gf_batch *b, DLManagedTensor **out) {
  int n = 0;
  for (int i = 0; i < NTOP; i++, n++) {
    out[n] = NULL;
    CHECK(gf_batch_take(b, TOP[i].field, TOP[i].layer, &out[n]) == GF_OK && out[n], "take field %d/%d", TOP[i].field,
          TOP[i].layer);
  }
  for (int f = 0; f < NLINK; f++, n++) {
    out[n] = NULL;
    CHECK(gf_batch_take_link(b, f, &out[n]) == GF_OK && out[n], "take link field %d", f);
  }
  out[n] = NULL;
  CHECK(gf_batch_take_node_data(b, "feat", &out[n]) == GF_OK && out[n], "take feat");
  n++;
  out[n] = NULL;
  CHECK(gf_batch_take_edge_data(b, "w", &out[n]) == GF_OK && out[n], "take edge data w");
  n++;
  for (int32_t f = GF_FIELD_COO_INDEX; f <= GF_FIELD_COO_EDGE_IDS; f++, n++) {
    out[n] = NULL;
    CHECK(gf_batch_take(b, f, 0, &out[n]) == GF_OK && out[n], "take edge list field %d", f);
  }
  gf_batch_close(b);
  return n;
}

static const int64_t *i64s(const DLManagedTensor *t) { return (const int64_t *)t->dl_tensor.data; }

/* check_edge_rows: the rows of "w" are those of the batch's edge ids,
   layer 0's then layer 1's. */
static void check_edge_rows(DLManagedTensor **t, int batch) {
  const DLTensor *w = &t[NTOP + NLINK + 1]->dl_tensor;
  int64_t n0 = t[5]->dl_tensor.shape[0], n1 = t[8]->dl_tensor.shape[0];
  CHECK(w->ndim == 2 && w->shape[0] == n0 + n1 && w->shape[1] == 2, "batch %d: edge data shape", batch);
  if (w->ndim != 2 || w->shape[0] != n0 + n1) return;
  const float *rows = (const float *)w->data;
  int bad = 0;
  for (int64_t i = 0; i < n0 + n1; i++) {
    int64_t e = i < n0 ? i64s(t[5])[i] : i64s(t[8])[i - n0];
    bad += rows[2 * i] != (float)e || rows[2 * i + 1] != -(float)e;
  }
  CHECK(bad == 0 && n0 + n1 > 0, "batch %d: %d edge rows differ from the graph's", batch, bad);
}

/* check_coo: the edge list holds the blocks' edges, layer 0's then layer
   1's: sources, destinations (CSC rows) and ids. */
static void check_coo(DLManagedTensor **t, int batch) {
  int64_t at = 0, bad = 0, n = t[NALL - 1]->dl_tensor.shape[0];
  const int64_t *row = i64s(t[NALL - 2]), *col = row + n, *ids = i64s(t[NALL - 1]);
  CHECK(t[NALL - 2]->dl_tensor.ndim == 2 && t[NALL - 2]->dl_tensor.shape[0] == 2 && t[NALL - 2]->dl_tensor.shape[1] == n,
        "batch %d: the edge list's index is [2, E]", batch);
  for (int layer = 0; layer < 2; layer++) {
    const DLManagedTensor *indptr = t[3 + 3 * layer], *indices = t[4 + 3 * layer], *eids = t[5 + 3 * layer];
    int64_t nd = indptr->dl_tensor.shape[0] - 1;
    for (int64_t v = 0; v < nd; v++) {
      for (int64_t p = i64s(indptr)[v]; p < i64s(indptr)[v + 1] && at < n; p++, at++) {
        bad += row[at] != i64s(indices)[p] || col[at] != v || ids[at] != i64s(eids)[p];
      }
    }
  }
  CHECK(bad == 0 && at == n && n > 0, "batch %d: the edge list is not the blocks' edges (%lld bad)", batch, (long long)bad);
}

/* check_sampler_batch: the loader's batch is the edge sampler's of its
   seeds (seeds[input_id]) with key (epoch << 32) | index, but for
   GF_LINK_INPUT_ID (the sampler's counts its own seeds). */
static void check_sampler_batch(gf_graph *g, options *o, const int64_t *seeds, DLManagedTensor **t, uint64_t key,
                                int batch) {
  gf_edge_sampler *s = NULL;
  CHECK(gf_edge_sampler_open(g, &o->es, &s) == GF_OK, "edge sampler");
  if (!s) return;
  const DLTensor *in = &t[NTOP + GF_LINK_INPUT_ID]->dl_tensor;
  int64_t n = in->shape[0];
  int64_t *eids = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  for (int64_t i = 0; i < n; i++) eids[i] = seeds[((const int64_t *)in->data)[i]];
  DLTensor et = gft_i64(eids, &n);
  gf_batch *b = NULL;
  CHECK(gf_edge_sampler_sample(s, &et, NULL, key, &b) == GF_OK, "sample");
  if (b) {
    for (int i = 0; i < NTOP; i++) {
      DLManagedTensor *x = NULL;
      gf_batch_take(b, TOP[i].field, TOP[i].layer, &x);
      CHECK(gft_same_tensor(x, t[i]), "batch %d: field %d/%d differs from the edge sampler's", batch, TOP[i].field,
            TOP[i].layer);
      gft_drop(x);
    }
    for (int f = 0; f < NLINK; f++) {
      DLManagedTensor *x = NULL;
      gf_batch_take_link(b, f, &x);
      CHECK(f == GF_LINK_INPUT_ID || gft_same_tensor(x, t[NTOP + f]), "batch %d: link field %d differs", batch, f);
      gft_drop(x);
    }
    gf_batch_close(b);
  }
  free(eids);
  gf_edge_sampler_close(s);
}

/* An epoch with the host's memory equals one with the library's, every
   byte handed out lies in the host's blocks, every block comes back once. */
static void test_every_byte_from_the_host(const char *dir) {
  gft_counting c;
  gft_counting_init(&c);
  gf_allocator a = gft_allocator_of(&c);
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t ne = 0;
  gf_graph_num_edges(g, &ne);
  w_deleted = 0;
  CHECK(set_edge_rows(g, ne) == GF_OK, "gf_graph_set_edge_data");
  int64_t n = ne < 2000 ? ne : 2000;
  int64_t *seeds = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  for (int64_t i = 0; i < n; i++) seeds[i] = (i * 7) % ne;
  DLTensor st = gft_i64(seeds, &n);
  options host, own;
  options_init(&host, &a);
  options_init(&own, NULL);
  gf_loader *lh = NULL, *lo = NULL;
  CHECK(gf_edge_loader_open(g, &st, NULL, &host.el, &lh) == GF_OK, "open (host memory)");
  CHECK(gf_edge_loader_open(g, &st, NULL, &own.el, &lo) == GF_OK, "open (own memory)");
  if (!lh || !lo) {
    free(seeds);
    return;
  }
  int64_t nb = 0;
  CHECK(gf_loader_num_batches(lh, &nb) == GF_OK && nb == (n + 127) / 128, "%lld batches", (long long)nb);
  const uint64_t epoch = 2;
  CHECK(gf_loader_start(lh, epoch) == GF_OK && gf_loader_start(lo, epoch) == GF_OK, "start");
  enum { KEEP = 3 };
  DLManagedTensor *kept[KEEP][NALL];
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
    DLManagedTensor *th[NALL], *to[NALL];
    int k = take_all(bh, th), m = take_all(bo, to);
    CHECK(k == m && k == NALL, "tensors %d vs %d", k, m);
    for (int i = 0; i < k && i < m; i++) {
      const DLTensor *t = &th[i]->dl_tensor;
      size_t bytes = gft_tensor_bytes(t);
      CHECK(bytes == 0 || gft_owned(&c, (const char *)t->data + t->byte_offset, bytes),
            "tensor %d of batch %d not in a host block", i, batches);
      CHECK(gft_same_tensor(th[i], to[i]), "tensor %d of batch %d differs from the library-memory loader's", i, batches);
      tensors++;
    }
    check_edge_rows(th, batches);
    check_coo(th, batches);
    if (batches < 2) check_sampler_batch(g, &own, seeds, to, (epoch << 32) | (uint64_t)batches, batches);
    for (int i = 0; i < m; i++) gft_drop(to[i]);
    if (batches < KEEP) { /* dropped after everything is closed */
      memcpy(kept[batches], th, sizeof th);
      nkept[batches] = k;
    } else {
      for (int i = 0; i < k; i++) gft_drop(th[i]);
    }
    batches++;
  }
  CHECK(batches == nb && tensors == batches * NALL, "%d batches, %d tensors", batches, tensors);
  /* The next epoch is stopped with batches in flight: closing frees them. */
  CHECK(gf_loader_start(lh, epoch + 1) == GF_OK, "start the next epoch");
  gf_batch *b = NULL;
  CHECK(gf_loader_next(lh, &b) == GF_OK && b != NULL, "next of the next epoch");
  gf_batch_close(b); /* left to gf_batch_close: its tensors are never taken */
  gf_loader_statistics stats;
  memset(&stats, 0, sizeof stats);
  stats.struct_size = sizeof stats;
  CHECK(gf_loader_stats(lh, &stats) == GF_OK, "gf_loader_stats on an edge loader");
  gf_loader_close(lh);
  gf_loader_close(lo);
  CHECK(w_deleted == 0, "edge data kept while the graph is open");
  gf_graph_close(g);
  CHECK(w_deleted == 1, "the edge data's deleter ran once with the graph's memory (%d)", w_deleted);
  CHECK(c.n > 0, "the kept tensors' blocks are still live after the loader was closed");
  for (int i = 0; i < KEEP; i++) {
    for (int j = 0; j < nkept[i]; j++) gft_drop(kept[i][j]);
  }
  gft_check_all_freed(&c);
  free(seeds);
}

/* open_edge_loader opens test_failing_allocator's loader on allocator a. */
typedef struct {
  gf_graph *g;
  DLTensor seeds;
} edge_ctx;

static int open_edge_loader(void *ctx, const gf_allocator *a, gf_loader **out) {
  edge_ctx *x = (edge_ctx *)ctx;
  options o;
  options_init(&o, a);
  o.el.num_edge_feature_names = 0;
  o.lo.queue_capacity = 1;
  return gf_edge_loader_open(x->g, &x->seeds, NULL, &o.el, out);
}

/* An allocator that fails after k blocks: gf_loader_next fails with
   GF_ENOMEM naming the host allocator, and nothing leaks. */
static void test_failing_allocator(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t seeds[300];
  for (int i = 0; i < 300; i++) seeds[i] = i * 5;
  int64_t shape = 300;
  edge_ctx ctx = {g, gft_i64(seeds, &shape)};
  int failed_runs = gft_failing_allocator_runs(open_edge_loader, &ctx, 60, 7);
  CHECK(failed_runs >= 5, "the allocator failed in %d runs", failed_runs);
  gf_graph_close(g);
}

/* edges_of returns the three tensors of gf_graph_edges as malloc'd copies. */
static int edges_of(gf_graph *g, int32_t format, int32_t rel, int64_t **first, int64_t *nf, int64_t **second,
                    int64_t **eids, int64_t *ne) {
  DLManagedTensor *a = NULL, *b = NULL, *c = NULL;
  int rc = gf_graph_edges(g, format, rel, &a, &b, &c);
  if (rc != GF_OK) return rc;
  *nf = a->dl_tensor.shape[0];
  *ne = c->dl_tensor.shape[0];
  *first = (int64_t *)malloc((size_t)(*nf + 1) * 8);
  *second = (int64_t *)malloc((size_t)(*ne + 1) * 8);
  *eids = (int64_t *)malloc((size_t)(*ne + 1) * 8);
  memcpy(*first, a->dl_tensor.data, (size_t)*nf * 8);
  memcpy(*second, b->dl_tensor.data, (size_t)*ne * 8);
  memcpy(*eids, c->dl_tensor.data, (size_t)*ne * 8);
  CHECK(b->dl_tensor.shape[0] == *ne, "second and edge ids agree in length");
  gft_drop(a);
  gft_drop(b);
  gft_drop(c);
  return GF_OK;
}

/* check_csc: the CSC (indptr over n destinations) holds exactly the COO's
   edges. */
static void check_csc(const int64_t *src, const int64_t *dst, int64_t m, const int64_t *indptr, int64_t nptr,
                      const int64_t *ind, const int64_t *eid, int64_t ne, const char *what) {
  int bad = nptr < 1 || ne != m || indptr[0] != 0 || indptr[nptr - 1] != m;
  for (int64_t v = 0; !bad && v + 1 < nptr; v++) {
    for (int64_t k = indptr[v]; k < indptr[v + 1]; k++) {
      int64_t e = eid[k];
      bad += e < 0 || e >= m || src[e] != ind[k] || dst[e] != v;
    }
  }
  CHECK(!bad, "%s: the CSC is not the COO's edges", what);
}

/* gf_graph_edges gives back the edges the graph was built from. */
static void test_graph_edges(void) {
  enum { N = 40, E = 300 };
  int64_t src[E], dst[E];
  uint64_t x = 99;
  for (int i = 0; i < E; i++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    src[i] = (int64_t)((x >> 33) % N);
    dst[i] = (int64_t)((x >> 13) % N);
  }
  int64_t e = E;
  DLTensor ts = gft_i64(src, &e), td = gft_i64(dst, &e);
  for (int patches = 1; patches <= 3; patches += 2) {
    gf_graph_options go;
    memset(&go, 0, sizeof go);
    go.struct_size = sizeof go;
    go.num_patches = patches;
    go.partition = GF_PARTITION_RANDOM;
    go.seed = 4;
    go.num_nodes = N;
    gf_graph *g = NULL;
    CHECK(gf_graph_from_coo(&ts, &td, &go, &g) == GF_OK, "from_coo (%d patches)", patches);
    if (!g) continue;
    int64_t *f = NULL, *s = NULL, *ids = NULL, nf = 0, ne = 0;
    CHECK(edges_of(g, GF_EDGES_COO, -1, &f, &nf, &s, &ids, &ne) == GF_OK, "COO");
    if (f) {
      int bad = nf != E || ne != E;
      for (int i = 0; !bad && i < E; i++) bad += f[i] != src[i] || s[i] != dst[i] || ids[i] != i;
      CHECK(!bad, "%d patches: COO equals the edges the graph was built from", patches);
      free(f), free(s), free(ids);
    }
    CHECK(edges_of(g, GF_EDGES_CSC, -1, &f, &nf, &s, &ids, &ne) == GF_OK, "CSC");
    if (f) {
      CHECK(nf == N + 1, "indptr over the nodes");
      check_csc(src, dst, E, f, nf, s, ids, ne, "untyped");
      free(f), free(s), free(ids);
    }
    DLManagedTensor *a = NULL, *b = NULL;
    CHECK_ERR(gf_graph_edges(g, 7, -1, &a, &b, NULL), GF_EINVAL, "format = 7");
    CHECK_ERR(gf_graph_edges(g, GF_EDGES_COO, 0, &a, &b, NULL), GF_EINVAL, "not typed");
    CHECK_ERR(gf_graph_edges(g, GF_EDGES_COO, -2, &a, &b, NULL), GF_EINVAL, "relation = -2");
    CHECK_ERR(gf_graph_edges(g, GF_EDGES_COO, -1, NULL, &b, NULL), GF_EINVAL, "out_first is NULL");
    CHECK_ERR(gf_graph_edges(g, GF_EDGES_COO, -1, &a, NULL, NULL), GF_EINVAL, "out_second is NULL");
    CHECK(a == NULL && b == NULL, "no tensor on failure");
    CHECK(gf_graph_edges(g, GF_EDGES_COO, -1, &a, &b, NULL) == GF_OK && a && b, "edge ids not wanted");
    gft_drop(a);
    gft_drop(b);
    gf_graph_close(g);
    CHECK_ERR(gf_graph_edges(g, GF_EDGES_COO, -1, &a, &b, NULL), GF_EBADHANDLE, "gf_graph_edges");
  }
  /* Typed: author (10) -writes-> paper (30), paper -cites-> paper. */
  int64_t counts[2] = {10, 30};
  int32_t rsrc[2] = {0, 1}, rdst[2] = {1, 1};
  int64_t ws[50], wd[50], cs[80], cd[80];
  for (int i = 0; i < 50; i++) ws[i] = (i * 7) % 10, wd[i] = (i * 11) % 30;
  for (int i = 0; i < 80; i++) cs[i] = (i * 13) % 30, cd[i] = (i * 17 + 3) % 30;
  int64_t nw = 50, nc = 80;
  DLTensor s0 = gft_i64(ws, &nw), d0 = gft_i64(wd, &nw), s1 = gft_i64(cs, &nc), d1 = gft_i64(cd, &nc);
  const DLTensor *srcs[2] = {&s0, &s1}, *dsts[2] = {&d0, &d1};
  gf_graph *g = NULL;
  CHECK(gf_graph_from_typed_coo(2, counts, 2, rsrc, rdst, srcs, dsts, NULL, &g) == GF_OK, "typed COO");
  if (!g) return;
  const int64_t *ls[2] = {ws, cs}, *ld[2] = {wd, cd}, lens[2] = {50, 80};
  for (int r = 0; r < 2; r++) {
    int64_t *f = NULL, *s = NULL, *ids = NULL, nf = 0, ne = 0;
    CHECK(edges_of(g, GF_EDGES_COO, r, &f, &nf, &s, &ids, &ne) == GF_OK, "relation %d COO", r);
    if (f) {
      int bad = nf != lens[r];
      for (int i = 0; !bad && i < lens[r]; i++) bad += f[i] != ls[r][i] || s[i] != ld[r][i] || ids[i] != i;
      CHECK(!bad, "relation %d: type-local COO equals its edge list", r);
      free(f), free(s), free(ids);
    }
    CHECK(edges_of(g, GF_EDGES_CSC, r, &f, &nf, &s, &ids, &ne) == GF_OK, "relation %d CSC", r);
    if (f) {
      CHECK(nf == 31, "indptr over the papers");
      check_csc(ls[r], ld[r], lens[r], f, nf, s, ids, ne, "typed");
      free(f), free(s), free(ids);
    }
  }
  int64_t *f = NULL, *s = NULL, *ids = NULL, nf = 0, ne = 0;
  CHECK(edges_of(g, GF_EDGES_COO, -1, &f, &nf, &s, &ids, &ne) == GF_OK, "global COO");
  if (f) {
    int bad = nf != 130;
    for (int i = 0; !bad && i < 130; i++) {
      int r = i >= 50, j = r ? i - 50 : i;
      bad += f[i] != ls[r][j] + (r ? 10 : 0) || s[i] != ld[r][j] + 10 || ids[i] != i;
    }
    CHECK(!bad, "global COO: global ids (authors [0, 10), papers [10, 40))");
    free(f), free(s), free(ids);
  }
  DLManagedTensor *a = NULL, *b = NULL;
  CHECK_ERR(gf_graph_edges(g, GF_EDGES_CSC, 2, &a, &b, NULL), GF_EINVAL, "relation = 2 is out of range");
  gf_graph_close(g);
}

/* gf_edge_loader_open refuses bad arguments, naming them. */
static void test_open_errors(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t ne = 0;
  gf_graph_num_edges(g, &ne);
  int64_t seeds[3] = {0, 1, ne}, n = 3, two = 2;
  DLTensor st = gft_i64(seeds, &n), st2 = gft_i64(seeds, &two);
  options o;
  options_init(&o, NULL);
  o.el.coo = 0;
  o.el.num_edge_feature_names = 0;
  gf_loader *l = NULL;
  CHECK_ERR(gf_edge_loader_open(g, &st, NULL, NULL, &l), GF_EINVAL, "options is NULL");
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, NULL), GF_EINVAL, "out_loader is NULL");
  CHECK_ERR(gf_edge_loader_open(g, NULL, NULL, &o.el, &l), GF_EINVAL, "seeds");
  CHECK_ERR(gf_edge_loader_open(g, &st, NULL, &o.el, &l), GF_EINVAL, "seed edge ids[2]");
  CHECK(l == NULL, "no loader on failure");
  CHECK_ERR(gf_edge_loader_open(g, &st2, &st2, &o.el, &l), GF_EINVAL, "seeds_dst must be NULL");
  o.el.struct_size = 3;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "options->struct_size = 3");
  o.el.struct_size = sizeof o.el;
  o.el.sampler = NULL;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "options->sampler is NULL");
  o.el.sampler = &o.es;
  o.el.loader = NULL;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "options->loader is NULL");
  o.el.loader = &o.lo;
  gf_sample_options other = o.so;
  o.lo.sample = &other;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "options->loader->sample");
  o.lo.sample = &o.so; /* the sampler's own: accepted */
  o.lo.batch_size = 0;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "options->loader->batch_size = 0");
  o.lo.batch_size = 4;
  o.es.amount = 1.5;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "options->sampler->amount");
  o.es.amount = 2;
  o.el.num_edge_feature_names = 1;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "no edge data");
  o.el.num_edge_feature_names = 0;
  o.es.mode = GF_LINK_PYG;
  o.es.negative = GF_NEG_BINARY;
  o.es.exclude = GF_EXCLUDE_NONE;
  CHECK_ERR(gf_edge_loader_open(g, &st2, NULL, &o.el, &l), GF_EINVAL, "seeds_dst is NULL");
  int64_t nn = 0;
  gf_graph_num_nodes(g, &nn);
  int64_t bad_dst[2] = {0, nn};
  DLTensor bd = gft_i64(bad_dst, &two);
  CHECK_ERR(gf_edge_loader_open(g, &st2, &bd, &o.el, &l), GF_EINVAL, "destinations[1]");
  CHECK(gf_edge_loader_open(g, &st2, &st2, &o.el, &l) == GF_OK && l, "a PyG edge loader");
  gf_batch *b = NULL;
  CHECK_ERR(gf_loader_next(l, &b), GF_ESTATE, "gf_loader_start");
  CHECK(gf_loader_start(l, 0) == GF_OK && gf_loader_next(l, &b) == GF_OK && b, "next");
  DLManagedTensor *t = NULL;
  CHECK_ERR(gf_batch_take_edge_data(b, "w", &t), GF_EINVAL, "no edge data named");
  CHECK_ERR(gf_batch_take_link(b, NLINK, &t), GF_EINVAL, "not a GF_LINK_* value");
  CHECK_ERR(gf_batch_take(b, GF_FIELD_COO_INDEX, 0, &t), GF_EINVAL, "options->coo");
  CHECK(gf_batch_take_link(b, GF_LINK_POS_SRC, &t) == GF_OK, "take a pair field");
  gft_drop(t);
  CHECK_ERR(gf_batch_take_link(b, GF_LINK_POS_SRC, &t), GF_ESTATE, "already taken");
  gf_batch_close(b);
  gf_loader_close(l);
  /* A node batch has no pair fields. */
  CHECK(gf_sample(g, &st2, &o.so, &b) == GF_OK, "a node batch");
  CHECK_ERR(gf_batch_take_link(b, GF_LINK_POS_SRC, &t), GF_EINVAL, "not an edge batch");
  gf_batch_close(b);
  CHECK_ERR(set_edge_rows(g, ne - 1), GF_EINVAL, "one row per edge id");
  gf_graph_close(g);
}

/* same_batch: the nodes and first block of a and b are equal (a and b are
   closed). */
static int same_batch(gf_batch *a, gf_batch *b) {
  int same = 1;
  const int32_t fields[][2] = {{GF_FIELD_NODES, 0}, {GF_FIELD_INDPTR, 0}, {GF_FIELD_INDICES, 0}, {GF_FIELD_EDGE_IDS, 0}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    int64_t na = 0, nb = 0;
    int64_t *x = gft_take_i64(a, fields[i][0], fields[i][1], &na), *y = gft_take_i64(b, fields[i][0], fields[i][1], &nb);
    same = same && x && y && na == nb && memcmp(x, y, (size_t)na * sizeof(int64_t)) == 0;
    free(x);
    free(y);
  }
  gf_batch_close(a);
  gf_batch_close(b);
  return same;
}

/* gf_sample_keyed reproduces a loader's batch from its seeds and key. */
static void test_sample_keyed(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  options o;
  options_init(&o, NULL);
  o.lo.sample = &o.so;
  o.lo.batch_size = 50;
  o.lo.num_feature_names = 0;
  int64_t seeds[200], n = 200;
  for (int i = 0; i < 200; i++) seeds[i] = i * 3;
  DLTensor st = gft_i64(seeds, &n);
  gf_loader *l = NULL;
  CHECK(gf_loader_open(g, &st, &o.lo, &l) == GF_OK && l, "node loader");
  if (!l) return;
  const uint64_t epoch = 3;
  gf_batch *b0 = NULL, *b = NULL;
  CHECK(gf_loader_start(l, epoch) == GF_OK, "start");
  CHECK(gf_loader_next(l, &b0) == GF_OK && gf_loader_next(l, &b) == GF_OK && b, "batch 1");
  gf_batch_close(b0);
  if (!b) return;
  int64_t nseeds = 0;
  DLManagedTensor *seed_t = NULL;
  CHECK(gf_batch_take(b, GF_FIELD_SEEDS, 0, &seed_t) == GF_OK, "take seeds");
  nseeds = seed_t->dl_tensor.shape[0];
  DLTensor bs = gft_i64((int64_t *)seed_t->dl_tensor.data, &nseeds);
  gf_batch *k = NULL, *k0 = NULL, *plain = NULL, *plain2 = NULL;
  CHECK(gf_sample_keyed(g, &bs, &o.so, (epoch << 32) | 1, &k) == GF_OK, "keyed");
  CHECK(same_batch(b, k), "gf_sample_keyed with the batch's key gives the loader's batch");
  CHECK(gf_sample_keyed(g, &bs, &o.so, 0, &k0) == GF_OK && gf_sample(g, &bs, &o.so, &plain) == GF_OK, "key 0");
  CHECK(same_batch(k0, plain), "key 0 is gf_sample");
  CHECK(gf_sample(g, &bs, &o.so, &plain) == GF_OK && gf_sample_keyed(g, &bs, &o.so, 1, &plain2) == GF_OK, "key 1");
  CHECK(!same_batch(plain, plain2), "another key, other streams");
  CHECK_ERR(gf_sample_keyed(g, &bs, &o.so, 5, NULL), GF_EINVAL, "gf_sample_keyed: out_batch is NULL");
  gft_drop(seed_t);
  gf_loader_close(l);
  gf_graph_close(g);
}

/* An exclude callback: the batch's own seed edges (GF_EXCLUDE_SELF's), or,
   for the batch whose index is *user (>= 0), a failure. Counts its calls
   and the batch indices it saw (a bit each). */
static int cb_calls = 0;
static uint64_t cb_seen = 0;

static void cb_deleter(DLManagedTensor *self) {
  free(self->dl_tensor.data);
  free(self->dl_tensor.shape);
  free(self);
}

static int cb_exclude(void *user, uint64_t key, const DLTensor *in, int64_t max_output, DLManagedTensor **out,
                      char *message, size_t size) {
  __atomic_add_fetch(&cb_calls, 1, __ATOMIC_SEQ_CST);
  uint32_t index = (uint32_t)key;
  if (index < 64) __atomic_fetch_or(&cb_seen, (uint64_t)1 << index, __ATOMIC_SEQ_CST);
  if (*(int *)user == (int)index) {
    snprintf(message, size, "refused batch %u", index);
    return GF_ENOTSUP;
  }
  int64_t n = in->shape[0];
  if (in->ndim != 1 || in->dtype.code != kDLInt || in->dtype.bits != 64 || n > max_output) return GF_EINTERNAL;
  DLManagedTensor *m = (DLManagedTensor *)calloc(1, sizeof *m);
  int64_t *shape = (int64_t *)malloc(sizeof(int64_t));
  int64_t *ids = (int64_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  shape[0] = n;
  if (n > 0) memcpy(ids, in->data, (size_t)n * sizeof(int64_t));
  m->dl_tensor = gft_i64(ids, shape);
  m->deleter = cb_deleter;
  *out = m;
  return GF_OK;
}

static void test_exclude_callback(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t seeds[600], n = 600, two = 2;
  for (int i = 0; i < 600; i++) seeds[i] = i * 7;
  DLTensor st = gft_i64(seeds, &n);
  options self, cb;
  options_init(&self, NULL);
  options_init(&cb, NULL);
  for (options *o = &self; o; o = o == &self ? &cb : NULL) {
    o->el.coo = 0;
    o->el.num_edge_feature_names = 0;
    o->lo.num_feature_names = 0;
  }
  int fail_at = -1;
  gf_batch_callback table = {sizeof table, &fail_at, cb_exclude};
  cb.es.exclude = GF_EXCLUDE_NONE;
  cb.es.exclude_callback = &table;
  gf_loader *a = NULL, *b = NULL;
  CHECK(gf_edge_loader_open(g, &st, NULL, &self.el, &a) == GF_OK && a, "GF_EXCLUDE_SELF loader");
  CHECK(gf_edge_loader_open(g, &st, NULL, &cb.el, &b) == GF_OK && b, "exclude callback loader");
  if (!a || !b) return;
  int64_t batches = 0;
  gf_loader_num_batches(b, &batches);
  CHECK(gf_loader_start(a, 2) == GF_OK && gf_loader_start(b, 2) == GF_OK, "start");
  for (int i = 0;; i++) {
    gf_batch *x = NULL, *y = NULL;
    int ra = gf_loader_next(a, &x), rb = gf_loader_next(b, &y);
    CHECK(ra == rb, "batch %d: both loaders answer alike", i);
    if (ra != GF_OK || rb != GF_OK) break;
    CHECK(same_batch(x, y), "batch %d: the callback's exclusion is GF_EXCLUDE_SELF's", i);
  }
  CHECK(cb_calls == batches && cb_seen == ((uint64_t)1 << batches) - 1, "one call per batch, with its key (%d calls)",
        cb_calls);
  gf_loader_close(a);
  /* An error of the callback fails its batch, with its status and message. */
  fail_at = 2;
  CHECK(gf_loader_start(b, 3) == GF_OK, "start again");
  gf_batch *x = NULL;
  CHECK(gf_loader_next(b, &x) == GF_OK && x, "batch 0");
  gf_batch_close(x);
  CHECK(gf_loader_next(b, &x) == GF_OK && x, "batch 1");
  gf_batch_close(x);
  CHECK_ERR(gf_loader_next(b, &x), GF_ENOTSUP, "refused batch 2");
  CHECK(strstr(gf_errmsg(), "epoch 3") != NULL, "the message names the batch: %s", gf_errmsg());
  gf_loader_close(b);
  gf_edge_sampler *s = NULL;
  CHECK(gf_edge_sampler_open(g, &cb.es, &s) == GF_OK && s, "edge sampler with the callback");
  DLTensor s2 = gft_i64(seeds, &two);
  CHECK_ERR(gf_edge_sampler_sample(s, &s2, NULL, 2, &x), GF_ENOTSUP, "refused batch 2");
  CHECK(x == NULL, "no batch on failure");
  CHECK(gf_edge_sampler_sample(s, &s2, NULL, 1, &x) == GF_OK && x, "another key");
  gf_batch_close(x);
  gf_edge_sampler_close(s);
  /* A bad table is refused at open, naming it. */
  gf_loader *l = NULL;
  table.fn = NULL;
  CHECK_ERR(gf_edge_loader_open(g, &st, NULL, &cb.el, &l), GF_EINVAL, "options->sampler->exclude_callback->fn is NULL");
  CHECK_ERR(gf_edge_sampler_open(g, &cb.es, &s), GF_EINVAL, "options->exclude_callback->fn is NULL");
  table.fn = cb_exclude;
  table.struct_size = 2;
  CHECK_ERR(gf_edge_loader_open(g, &st, NULL, &cb.el, &l), GF_EINVAL, "exclude_callback->struct_size = 2");
  table.struct_size = sizeof table;
  cb.es.mode = GF_LINK_PYG;
  cb.es.negative = GF_NEG_BINARY;
  CHECK_ERR(gf_edge_loader_open(g, &st, &st, &cb.el, &l), GF_EINVAL, "exclude_callback applies to GF_LINK_DGL only");
  CHECK(l == NULL, "no loader on failure");
  gf_graph_close(g);
}

/* A node loader opened with gf_loader_options.coo carries the edge list too
   (PyG's NeighborLoader asks for it), the blocks' edges as check_coo reads
   them; one opened without it answers GF_EINVAL for the edge list. */
static void test_node_loader_edge_list(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  options o;
  options_init(&o, NULL);
  o.lo.sample = &o.so;
  o.lo.batch_size = 64;
  o.lo.num_feature_names = 0;
  int64_t seeds[300], n = 300;
  for (int i = 0; i < 300; i++) seeds[i] = i * 2;
  DLTensor st = gft_i64(seeds, &n);
  for (int coo = 0; coo <= 1; coo++) {
    o.lo.coo = coo;
    gf_loader *l = NULL;
    CHECK(gf_loader_open(g, &st, &o.lo, &l) == GF_OK && l, "node loader (coo = %d)", coo);
    if (!l) continue;
    CHECK(gf_loader_start(l, 0) == GF_OK, "start");
    gf_batch *b = NULL;
    int batches = 0;
    while (gf_loader_next(l, &b) == GF_OK && b) {
      DLManagedTensor *t[NALL] = {0};
      for (int i = 3; i < NTOP; i++) {
        CHECK(gf_batch_take(b, TOP[i].field, TOP[i].layer, &t[i]) == GF_OK, "take field %d/%d", TOP[i].field,
              TOP[i].layer);
      }
      if (coo) {
        CHECK(gf_batch_take(b, GF_FIELD_COO_INDEX, 0, &t[NALL - 2]) == GF_OK &&
                  gf_batch_take(b, GF_FIELD_COO_EDGE_IDS, 0, &t[NALL - 1]) == GF_OK,
              "batch %d: the edge list", batches);
        if (t[NALL - 2] && t[NALL - 1]) check_coo(t, batches);
      } else {
        CHECK_ERR(gf_batch_take(b, GF_FIELD_COO_INDEX, 0, &t[NALL - 2]), GF_EINVAL, "options->coo");
      }
      for (int i = 0; i < NALL; i++) {
        if (t[i]) gft_drop(t[i]);
      }
      gf_batch_close(b);
      b = NULL;
      batches++;
    }
    CHECK(batches == 5, "5 batches of 300 seeds (got %d)", batches);
    gf_loader_close(l);
  }
  gf_graph_close(g);
}

/* An edge loader opened with gf_loader_options.coo = GF_COO_SUBGRAPH (DGL's
   ShaDowKHopSampler inside as_edge_prediction_sampler): each batch has no
   blocks, its hop counts kept; its edge list is every edge of the graph
   among its nodes but its excluded ones (GF_EXCLUDE_SELF: its seed edges),
   by source position then edge id, and its edge data are their rows. An
   unknown coo value is refused, naming it. */
static void test_subgraph_edge_list(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (!g) return;
  int64_t nn = 0, ne = 0;
  gf_graph_num_nodes(g, &nn);
  gf_graph_num_edges(g, &ne);
  int64_t *gs = NULL, *gd = NULL, *gid = NULL, m = 0, me = 0;
  CHECK(edges_of(g, GF_EDGES_COO, -1, &gs, &m, &gd, &gid, &me) == GF_OK && m == ne, "the graph's edges");
  CHECK(set_edge_rows(g, ne) == GF_OK, "edge rows");
  options o;
  options_init(&o, NULL);
  o.el.coo = 0;
  o.lo.coo = 5;
  o.lo.batch_size = 100;
  int64_t seeds[400], n = 400;
  for (int i = 0; i < 400; i++) seeds[i] = (int64_t)i * 13 % ne;
  DLTensor st = gft_i64(seeds, &n);
  gf_loader *l = NULL;
  CHECK_ERR(gf_edge_loader_open(g, &st, NULL, &o.el, &l), GF_EINVAL, "options->loader->coo = 5");
  CHECK(l == NULL, "coo = 5: no loader");
  o.lo.coo = GF_COO_SUBGRAPH;
  CHECK(gf_edge_loader_open(g, &st, NULL, &o.el, &l) == GF_OK && l, "subgraph edge loader");
  int64_t *pos = (int64_t *)malloc((size_t)nn * sizeof(int64_t));
  char *seed_edge = (char *)calloc((size_t)ne, 1);
  gf_batch *b = NULL;
  int batches = 0;
  if (l && gf_loader_start(l, 0) == GF_OK) {
    while (gf_loader_next(l, &b) == GF_OK && b) {
      int32_t hops = -1;
      CHECK(gf_batch_num_hops(b, &hops) == GF_OK && hops == 0, "batch %d: no blocks (%d)", batches, hops);
      int64_t nv = 0, nh = 0, nk = 0, nx = 0;
      int64_t *nodes = gft_take_i64(b, GF_FIELD_NODES, 0, &nv), *hc = gft_take_i64(b, GF_FIELD_HOP_COUNTS, 0, &nh);
      int64_t *ids = gft_take_i64(b, GF_FIELD_COO_EDGE_IDS, 0, &nx);
      DLManagedTensor *k = NULL, *w = NULL, *c = NULL;
      CHECK(gf_batch_take(b, GF_FIELD_COO_INDEX, 0, &c) == GF_OK && c, "edge list");
      CHECK(gf_batch_take_link(b, GF_LINK_EDGE_IDS, &k) == GF_OK && k, "seed edge ids");
      CHECK(gf_batch_take_edge_data(b, "w", &w) == GF_OK && w, "edge data");
      gf_batch_close(b);
      b = NULL;
      if (!nodes || !hc || !c || !ids || !k || !w) break;
      const int64_t *idx = i64s(c);
      nk = k->dl_tensor.shape[0];
      CHECK(nh == 3 && hc[0] + hc[1] + hc[2] == nv, "batch %d: hop counts kept", batches);
      for (int64_t v = 0; v < nn; v++) pos[v] = -1;
      for (int64_t i = 0; i < nv; i++) pos[nodes[i]] = i;
      for (int64_t i = 0; i < nk; i++) seed_edge[i64s(k)[i]] = 1;
      int64_t want = 0;
      for (int64_t e = 0; e < ne; e++) want += pos[gs[e]] >= 0 && pos[gd[e]] >= 0 && !seed_edge[gid[e]];
      int bad = c->dl_tensor.ndim != 2 || c->dl_tensor.shape[0] != 2 || c->dl_tensor.shape[1] != nx || nx != want;
      const float *rows = (const float *)w->dl_tensor.data;
      for (int64_t i = 0; !bad && i < nx; i++) {
        int64_t e = ids[i], s = idx[i], d = idx[nx + i];
        bad += seed_edge[e] || gs[e] != nodes[s] || gd[e] != nodes[d] || gid[e] != e;
        bad += i > 0 && (idx[i - 1] > s || (idx[i - 1] == s && ids[i - 1] >= e));
        bad += rows[2 * i] != (float)e || rows[2 * i + 1] != -(float)e;
      }
      CHECK(!bad && want > 0, "batch %d: the induced edges (%lld of %lld) less the seed edges, by source", batches,
            (long long)nx, (long long)want);
      for (int64_t i = 0; i < nk; i++) seed_edge[i64s(k)[i]] = 0;
      free(nodes);
      free(hc);
      free(ids);
      gft_drop(c);
      gft_drop(k);
      gft_drop(w);
      batches++;
    }
  }
  CHECK(batches == 4, "4 batches of 400 seed edges (got %d)", batches);
  if (l) gf_loader_close(l);
  free(pos);
  free(seed_edge);
  free(gs);
  free(gd);
  free(gid);
  gf_graph_close(g);
}

int main(int argc, char **argv) {
  const char *dir = gft_arg(argc, argv, 1, GFT_CORA);
  test_every_byte_from_the_host(dir);
  test_failing_allocator(dir);
  test_graph_edges();
  test_open_errors(dir);
  test_sample_keyed(dir);
  test_exclude_callback(dir);
  test_node_loader_edge_list(dir);
  test_subgraph_edge_list(dir);
  return gft_summary("test_edge_loader");
}

/*
 * test_typed.c: the typed-graph constructors of include/graphferry.h from C
 * (gf_graph_from_typed_coo, gf_graph_open_typed_arrow, a typed dataset
 * through gf_dataset_generate and gf_graph_open): what they build, and every
 * argument they refuse, with the documented status and a message naming it.
 *
 * Usage: test_typed [typed_edges.arrow] (default tests/data/typed_edges.arrow,
 * relative to the repository root). Prints "test_typed: N passed, N failed" and exits
 * non-zero on any failure.
 */
#include "gftest.h"

/* Users 0..2, items 0..1; relation 0 (user -> item), relation 1 (item ->
 * user). */
static int64_t counts[] = {3, 2};
static int32_t rel_src[] = {0, 1};
static int32_t rel_dst[] = {1, 0};
static int64_t buys_src[] = {0, 2, 1}, buys_dst[] = {1, 1, 1};
static int32_t rev_src[] = {1, 0, 1}, rev_dst[] = {0, 0, 2};
static int64_t n3[] = {3};

/* Checks a graph of 5 nodes and 6 edges in which node 0 (user 0) has the
 * in-edges of relation 1 from items 1 and 0 (global 4 and 3). */
static void check_small(gf_graph *g) {
  int64_t n = -1, e = -1;
  CHECK(gf_graph_num_nodes(g, &n) == GF_OK && n == 5, "num_nodes %lld", (long long)n);
  CHECK(gf_graph_num_edges(g, &e) == GF_OK && e == 6, "num_edges %lld", (long long)e);
  int32_t nt = -1, nr = -1;
  CHECK(gf_graph_num_types(g, &nt, &nr) == GF_OK && nt == 2 && nr == 2, "num_types %d %d", nt, nr);
}

static void test_typed_coo(void) {
  DLTensor s0 = gft_vec(buys_src, n3, kDLInt, 64), d0 = gft_vec(buys_dst, n3, kDLInt, 64);
  DLTensor s1 = gft_vec(rev_src, n3, kDLInt, 32), d1 = gft_vec(rev_dst, n3, kDLInt, 32);
  const DLTensor *src[] = {&s0, &s1}, *dst[] = {&d0, &d1};
  gf_graph *g = NULL;
  CHECK(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, dst, NULL, &g) == GF_OK && g,
        "gf_graph_from_typed_coo");
  if (g) check_small(g);
  gf_graph_close(g);

  /* Partitioned into patches, with the node count given. */
  gf_graph_options opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = sizeof opt;
  opt.num_patches = 2;
  opt.partition = GF_PARTITION_RANDOM;
  opt.seed = 3;
  opt.num_nodes = 5;
  g = NULL;
  CHECK(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, dst, &opt, &g) == GF_OK && g,
        "gf_graph_from_typed_coo with 2 patches");
  if (g) check_small(g);
  gf_graph_close(g);


  /* Errors. */
  g = (gf_graph *)1;
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, dst, NULL, NULL), GF_EINVAL,
            "out_graph is NULL");
  CHECK_ERR(gf_graph_from_typed_coo(0, counts, 2, rel_src, rel_dst, src, dst, NULL, &g), GF_EINVAL,
            "num_node_types = 0");
  CHECK(g == NULL, "out_graph set to NULL on failure");
  CHECK_ERR(gf_graph_from_typed_coo(2, NULL, 2, rel_src, rel_dst, src, dst, NULL, &g), GF_EINVAL,
            "node_counts is NULL");
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 0, rel_src, rel_dst, src, dst, NULL, &g), GF_EINVAL,
            "num_relations = 0 must be in [1,");
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, NULL, rel_dst, src, dst, NULL, &g), GF_EINVAL,
            "relation_src_type is NULL");
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, NULL, dst, NULL, &g), GF_EINVAL,
            "src is NULL");
  int64_t neg[] = {3, -2};
  CHECK_ERR(gf_graph_from_typed_coo(2, neg, 2, rel_src, rel_dst, src, dst, NULL, &g), GF_EINVAL,
            "node_counts[1] = -2");
  int32_t bad_type[] = {0, 2};
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, bad_type, rel_dst, src, dst, NULL, &g), GF_EINVAL,
            "relation_src_type[1] = 2 is outside [0, num_node_types = 2)");
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, bad_type, src, dst, NULL, &g), GF_EINVAL,
            "relation_dst_type[1] = 2");
  const DLTensor *null_src[] = {&s0, NULL};
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, null_src, dst, NULL, &g), GF_EINVAL,
            "src[1]");
  int64_t n2[] = {2};
  DLTensor short_dst = gft_vec(buys_dst, n2, kDLInt, 64);
  const DLTensor *short_dsts[] = {&short_dst, &d1};
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, short_dsts, NULL, &g), GF_EINVAL,
            "3 sources but 2 destinations");
  int64_t far_src[] = {0, 3, 1};
  DLTensor sfar = gft_vec(far_src, n3, kDLInt, 64);
  const DLTensor *far_srcs[] = {&sfar, &s1};
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, far_srcs, dst, NULL, &g), GF_EINVAL,
            "source 3 is outside [0, 3)");
  int64_t far_dst[] = {1, 2, 1};
  DLTensor dfar = gft_vec(far_dst, n3, kDLInt, 64);
  const DLTensor *far_dsts[] = {&dfar, &d1};
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, far_dsts, NULL, &g), GF_EINVAL,
            "destination 2 is outside [0, 2)");
  float fl[] = {0, 1, 2};
  DLTensor sf = gft_vec(fl, n3, kDLFloat, 32);
  const DLTensor *float_srcs[] = {&sf, &s1};
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, float_srcs, dst, NULL, &g), GF_ETYPE,
            "src[0]");
  memset(&opt, 0, sizeof opt);
  opt.struct_size = sizeof opt;
  opt.flags = GF_GRAPH_REMOVE_DUPLICATES;
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, dst, &opt, &g), GF_EINVAL,
            "would renumber the edges");
  opt.flags = 0;
  opt.num_nodes = 6;
  CHECK_ERR(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, dst, &opt, &g), GF_EINVAL,
            "options->num_nodes = 6, but node_counts sum to 5");
  CHECK(g == NULL, "out_graph NULL after every failure");
}

static const char types_json[] =
    "{\"node_types\":[{\"name\":\"user\",\"num_nodes\":3},{\"name\":\"item\",\"num_nodes\":2}],"
    "\"edge_types\":[{\"src\":\"user\",\"rel\":\"buys\",\"dst\":\"item\"},"
    "{\"src\":\"item\",\"rel\":\"rev_buys\",\"dst\":\"user\"}]}";

static void test_typed_arrow(const char *path) {
  gf_graph *g = NULL;
  CHECK(gf_graph_open_typed_arrow(path, NULL, NULL, &g) == GF_OK && g, "open %s", path);
  if (g) check_small(g);
  gf_graph_close(g);
  g = NULL;
  CHECK(gf_graph_open_typed_arrow(path, types_json, NULL, &g) == GF_OK && g, "open with types_json");
  gf_graph_close(g);

  /* gf_graph_open refuses it: its ids are type-local. */
  g = (gf_graph *)1;
  CHECK_ERR(gf_graph_open(path, NULL, &g), GF_EINVAL, "is a typed edge table");
  CHECK(g == NULL, "gf_graph_open sets out_graph to NULL");

  g = (gf_graph *)1;
  CHECK_ERR(gf_graph_open_typed_arrow(NULL, NULL, NULL, &g), GF_EINVAL, "path is NULL");
  CHECK(g == NULL, "out_graph set to NULL on failure");
  CHECK_ERR(gf_graph_open_typed_arrow(path, NULL, NULL, NULL), GF_EINVAL, "out_graph is NULL");
  CHECK_ERR(gf_graph_open_typed_arrow(path, "", NULL, &g), GF_EINVAL, "types_json is empty");
  CHECK_ERR(gf_graph_open_typed_arrow(path, "{", NULL, &g), GF_EINVAL, "type metadata");
  CHECK_ERR(gf_graph_open_typed_arrow(path, "{\"node_typez\":[]}", NULL, &g), GF_EINVAL,
            "unknown field \"node_typez\"");
  CHECK_ERR(gf_graph_open_typed_arrow(
                path,
                "{\"node_types\":[{\"name\":\"user\",\"num_nodes\":3}],"
                "\"edge_types\":[{\"src\":\"user\",\"rel\":\"buys\",\"dst\":\"item\"}]}",
                NULL, &g),
            GF_EINVAL, "edge_types[0].dst = \"item\" is not a node type");
  CHECK_ERR(gf_graph_open_typed_arrow(
                path,
                "{\"node_types\":[{\"name\":\"user\",\"num_nodes\":2},{\"name\":\"item\",\"num_nodes\":2}],"
                "\"edge_types\":[{\"src\":\"user\",\"rel\":\"buys\",\"dst\":\"item\"},"
                "{\"src\":\"item\",\"rel\":\"rev_buys\",\"dst\":\"user\"}]}",
                NULL, &g),
            GF_EINVAL, "source 2 is outside [0, 2) (the \"user\" nodes)");
  CHECK_ERR(gf_graph_open_typed_arrow("/nonexistent/typed.arrow", NULL, NULL, &g), GF_EIO,
            "/nonexistent/typed.arrow");
  gf_graph_options opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = sizeof opt;
  opt.num_nodes = 5;
  CHECK_ERR(gf_graph_open_typed_arrow(path, NULL, &opt, &g), GF_EINVAL, "do not apply to a typed edge table");
  CHECK(g == NULL, "out_graph NULL after every failure");
}

/* A typed loader over a host allocator that fails after k blocks (issue 23:
   the heterogeneous loader's allocation-failure sweep through the C API). */
typedef struct {
  gf_graph *g;
  DLTensor seeds;
} typed_ctx;

static int open_typed_loader(void *ctx, const gf_allocator *a, gf_loader **out) {
  typed_ctx *x = (typed_ctx *)ctx;
  static const int32_t fanouts[2] = {4, 3};
  gf_sample_options so;
  memset(&so, 0, sizeof so);
  so.struct_size = sizeof so;
  so.num_hops = 2;
  so.fanouts = fanouts;
  so.seed = 5;
  so.num_threads = 2;
  gf_loader_options lo;
  memset(&lo, 0, sizeof lo);
  lo.struct_size = sizeof lo;
  lo.sample = &so;
  lo.batch_size = 32;
  lo.queue_capacity = 1;
  lo.allocator = a;
  return gf_loader_open(x->g, &x->seeds, &lo, out);
}

static void test_typed_failing_allocator(gf_graph *g) {
  int64_t seeds[192];
  for (int i = 0; i < 192; i++) seeds[i] = i;
  int64_t shape = 192;
  typed_ctx ctx = {g, gft_i64(seeds, &shape)};
  int failed_runs = gft_failing_allocator_runs(open_typed_loader, &ctx, 60, 5);
  printf("test_typed: typed loader, failing host allocator: failed in %d runs of k < 60 step 5\n", failed_runs);
  CHECK(failed_runs >= 10, "the allocator failed in only %d runs", failed_runs);
}

/* Type names: gf_graph_set_types_json and gf_graph_types_json on the small
 * graph (types named by index until named), every argument refused with a
 * message naming it, and per-type node data keyed by the name given. */
static void test_type_names(void) {
  DLTensor s0 = gft_vec(buys_src, n3, kDLInt, 64), d0 = gft_vec(buys_dst, n3, kDLInt, 64);
  DLTensor s1 = gft_vec(rev_src, n3, kDLInt, 32), d1 = gft_vec(rev_dst, n3, kDLInt, 32);
  const DLTensor *src[] = {&s0, &s1}, *dst[] = {&d0, &d1};
  gf_graph *g = NULL;
  CHECK(gf_graph_from_typed_coo(2, counts, 2, rel_src, rel_dst, src, dst, NULL, &g) == GF_OK && g,
        "gf_graph_from_typed_coo");
  if (!g) return;
  char *json = NULL;
  CHECK(gf_graph_types_json(g, &json) == GF_OK && json &&
            strcmp(json, "{\"node_types\":[{\"name\":\"0\",\"num_nodes\":3},{\"name\":\"1\",\"num_nodes\":2}],"
                         "\"edge_types\":[{\"src\":\"0\",\"rel\":\"0\",\"dst\":\"1\",\"num_edges\":3},"
                         "{\"src\":\"1\",\"rel\":\"1\",\"dst\":\"0\",\"num_edges\":3}]}") == 0,
        "types named by index: %s", json ? json : "(null)");
  gf_free(json);
  static const char named[] =
      "{\"node_types\": [{\"name\": \"user\", \"num_nodes\": 3}, {\"name\": \"item\", \"num_nodes\": 2}],"
      " \"edge_types\": [{\"src\": \"user\", \"rel\": \"buys\", \"dst\": \"item\", \"num_edges\": 3},"
      " {\"src\": \"item\", \"rel\": \"rev_buys\", \"dst\": \"user\", \"num_edges\": 3}]}";
  CHECK_ERR(gf_graph_set_types_json(NULL, named), GF_EBADHANDLE, "");
  CHECK_ERR(gf_graph_set_types_json(g, NULL), GF_EINVAL, "types_json is NULL");
  CHECK_ERR(gf_graph_set_types_json(g, ""), GF_EINVAL, "types_json is empty");
  CHECK_ERR(gf_graph_set_types_json(g, "{\"node_types\": ["), GF_EINVAL, "types_json: type metadata");
  CHECK_ERR(gf_graph_set_types_json(g, "{\"node_types\": [{\"name\": \"user\", \"num_nodes\": 5}], \"edge_types\": []}"),
            GF_EINVAL, "edge_types is empty");
  CHECK_ERR(gf_graph_set_types_json(g, "{\"node_types\": [{\"name\": \"user\", \"num_nodes\": 3}, {\"name\": \"user\", "
                                       "\"num_nodes\": 2}], \"edge_types\": [{\"src\": \"user\", \"rel\": \"r\", "
                                       "\"dst\": \"user\", \"num_edges\": 6}]}"),
            GF_EINVAL, "node_types[1].name = \"user\" appears twice");
  CHECK_ERR(gf_graph_set_types_json(g, "{\"node_types\": [{\"name\": \"us/er\", \"num_nodes\": 5}], \"edge_types\": "
                                       "[{\"src\": \"us/er\", \"rel\": \"r\", \"dst\": \"us/er\", \"num_edges\": 6}]}"),
            GF_EINVAL, "holds \"/\"");
  CHECK_ERR(gf_graph_set_types_json(g, "{\"node_types\": [{\"name\": \"user\", \"num_nodes\": 5}], \"edge_types\": "
                                       "[{\"src\": \"user\", \"rel\": \"r\", \"dst\": \"item\", \"num_edges\": 6}]}"),
            GF_EINVAL, "edge_types[0].dst = \"item\" is not a node type");
  CHECK_ERR(gf_graph_set_types_json(g, "{\"node_types\": [{\"name\": \"user\", \"num_nodes\": 4}, {\"name\": \"item\", "
                                       "\"num_nodes\": 2}], \"edge_types\": [{\"src\": \"user\", \"rel\": \"r\", "
                                       "\"dst\": \"item\", \"num_edges\": 6}]}"),
            GF_EINVAL, "want the number of nodes (5)");
  CHECK_ERR(gf_graph_set_types_json(g, "{\"node_types\": [], \"edge_types\": [], \"extra\": 1}"), GF_EINVAL,
            "unknown field \"extra\"");
  CHECK_ERR(gf_graph_types_json(g, NULL), GF_EINVAL, "out_json is NULL");
  json = NULL;
  CHECK(gf_graph_types_json(g, &json) == GF_OK && json && strstr(json, "{\"name\":\"0\",\"num_nodes\":3}"),
        "a refused call keeps the types: %s", json ? json : "(null)");
  gf_free(json);
  CHECK(gf_graph_set_types_json(g, named) == GF_OK, "set named types: %s", gf_errmsg());
  json = NULL;
  CHECK(gf_graph_types_json(g, &json) == GF_OK && json &&
            strstr(json, "{\"src\":\"item\",\"rel\":\"rev_buys\",\"dst\":\"user\",\"num_edges\":3}"),
        "named: %s", json ? json : "(null)");
  gf_free(json);

  /* Per-type data of the type named: two rows for the items. */
  int64_t x[] = {7, 8}, two[] = {2};
  DLManagedTensor m = gft_managed(gft_i64(x, two));
  CHECK(gf_graph_set_node_data(g, "item/x", &m) == GF_OK, "item/x: %s", gf_errmsg());
  DLManagedTensor m3 = gft_managed(gft_i64(x, two));
  CHECK_ERR(gf_graph_set_node_data(g, "user/x", &m3), GF_EINVAL, "or one per node of type \"user\" (3)");
  CHECK_ERR(gf_graph_set_node_data(g, "1/x", &m3), GF_EINVAL, "node types \"user\", \"item\"");
  CHECK_ERR(gf_graph_set_types_json(g, named), GF_ESTATE, "per-type node data \"item/x\" is held");
  DLManagedTensor *t = NULL;
  CHECK(gf_graph_get_node_data(g, "item/x", &t) == GF_OK && t && t->dl_tensor.shape[0] == 2 &&
            ((int64_t *)t->dl_tensor.data)[1] == 8,
        "item/x read back");
  if (t) t->deleter(t);
  gf_graph_close(g);

  /* An untyped graph has no types to name. */
  int64_t indptr[] = {0, 1, 1}, indices[] = {1}, n1[] = {1}, n2[] = {3};
  DLTensor ip = gft_i64(indptr, n2), ix = gft_i64(indices, n1);
  gf_graph *u = NULL;
  CHECK(gf_graph_from_csc(&ip, &ix, NULL, NULL, &u) == GF_OK && u, "untyped graph: %s", gf_errmsg());
  if (u) {
    CHECK_ERR(gf_graph_set_types_json(u, named), GF_EINVAL, "node_offsets[2] = 5, want the number of nodes (2)");
    json = NULL;
    CHECK(gf_graph_types_json(u, &json) == GF_OK && json && strcmp(json, "{\"node_types\":[],\"edge_types\":[]}") == 0,
          "untyped: %s", json ? json : "(null)");
    gf_free(json);
  }
  gf_graph_close(u);
}

static void test_typed_dataset(void) {
  char dir[200];
  if (!gft_tmpdir(dir, sizeof dir, "typed")) {
    CHECK(0, "mkdtemp");
    return;
  }
  char path[256];
  snprintf(path, sizeof path, "%s/ds", dir);
  CHECK(gf_dataset_generate("hetero-tiny", path, 0, 2) == GF_OK, "generate hetero-tiny");
  gf_graph *g = NULL;
  gf_graph_options opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = sizeof opt;
  opt.flags = GF_GRAPH_VERIFY_CHECKSUMS;
  CHECK(gf_graph_open(path, &opt, &g) == GF_OK && g, "open the typed dataset");
  if (g) {
    int32_t nt = -1, nr = -1;
    CHECK(gf_graph_num_types(g, &nt, &nr) == GF_OK && nt == 4 && nr == 7, "num_types %d %d", nt, nr);
    char *names = NULL;
    CHECK(gf_graph_node_data_names(g, &names) == GF_OK && names && strstr(names, "paper/feat\n") &&
              strstr(names, "author/feat\n"),
          "per-type node data listed: %s", names ? names : "(null)");
    gf_free(names);
    char *json = NULL;
    CHECK(gf_graph_types_json(g, &json) == GF_OK && json && strstr(json, "{\"name\":\"paper\",") &&
              strstr(json, "\"rel\":\"writes\""),
          "the dataset's type names: %s", json ? json : "(null)");
    gf_free(json);
    test_typed_failing_allocator(g);
    DLManagedTensor *t = NULL;
    CHECK(gf_graph_get_node_data(g, "paper/feat", &t) == GF_OK && t, "get paper/feat");
    if (t) {
      CHECK(t->dl_tensor.ndim == 2 && t->dl_tensor.shape[1] == 16 && t->dl_tensor.shape[0] > 0 &&
                t->dl_tensor.shape[0] < 947,
            "paper/feat is [num papers, 16]");
      t->deleter(t);
    }
  }
  gf_graph_close(g);
  CHECK(gft_rmtree(dir) == 0, "cleanup");
}

int main(int argc, char **argv) {
  const char *path = gft_arg(argc, argv, 1, "tests/data/typed_edges.arrow");
  test_typed_coo();
  test_typed_arrow(path);
  test_type_names();
  test_typed_dataset();
  return gft_summary("test_typed");
}

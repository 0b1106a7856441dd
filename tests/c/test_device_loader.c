/* Device outputs of gf_loader_open (mode 2, include/graphferry.h "Device
 * outputs"): gf_loader_options.device, .stream, .device_cache_bytes and
 * gf_batch_wait_stream. One source, two programs:
 *
 *   test_device_loader cpu DATASET    linked with libgraphferry.so: the CPU
 *                                     library refuses a device (GF_ENOTSUP)
 *   test_device_loader cuda DATASET   linked with libgraphferry_cuda.so and
 *                                     the driver (-lcuda): run over the fake
 *                                     driver (cuda/fakedriver) here, a GPU
 *                                     elsewhere
 *
 * The cuda mode compares every batch of device loaders (with and without a
 * hot tier, the stream given in the options or per batch) with a host
 * loader of the same options, reading the device tensors with the driver
 * on the consumer's stream; checks the DLPack device, the stream contract's
 * errors, that device tensors outlive gf_loader_close, and (on the fake)
 * that every device allocation is freed once the last tensor is deleted. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphferry.h"
#include "gftest.h"

#ifdef GFT_CUDA
#include <cuda.h>

#include "fakecuda.h" /* gf_fakecuda_stats_t; the function is looked up, absent on a GPU */
#endif

#define BATCH 64
#define NSEEDS 300

static int64_t seeds_buf[NSEEDS];
static int64_t seeds_shape = NSEEDS;
static int32_t fanouts[2] = {5, 3};
static const char *feat_names[] = {"feat"};
static const char *label_names[] = {"lbl"};

static void options(gf_loader_options *lo, gf_sample_options *so) {
  memset(so, 0, sizeof *so);
  so->struct_size = sizeof *so;
  so->num_hops = 2;
  so->fanouts = fanouts;
  so->seed = 7;
  memset(lo, 0, sizeof *lo);
  lo->struct_size = sizeof *lo;
  lo->sample = so;
  lo->batch_size = BATCH;
  lo->shuffle = 1;
  lo->shuffle_seed = 3;
  lo->num_feature_names = 1;
  lo->feature_names = feat_names;
  lo->num_label_names = 1;
  lo->label_names = label_names;
}

static void free_lbl(DLManagedTensor *self) { free(self->manager_ctx); }

static gf_graph *open_graph(const char *dir) {
  gf_graph *g = gft_open(dir);
  if (g == NULL) return NULL;
  int64_t n = 0;
  CHECK(gf_graph_num_nodes(g, &n) == GF_OK && n > NSEEDS, "graph of %lld nodes", (long long)n);
  /* int64 labels: 3 * v + 1 */
  int64_t *lbl = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  for (int64_t v = 0; v < n; v++) lbl[v] = 3 * v + 1;
  static int64_t shape;
  shape = n;
  static DLManagedTensor m;
  m.dl_tensor = gft_i64(lbl, &shape);
  m.manager_ctx = lbl;
  m.deleter = free_lbl;
  CHECK(gf_graph_set_node_data(g, "lbl", &m) == GF_OK, "set lbl: %s", gf_errmsg());
  for (int i = 0; i < NSEEDS; i++) seeds_buf[i] = (int64_t)((i * 7919) % n);
  return g;
}

/* Options every build refuses the same way, and the CPU library's refusal. */
static void test_refusals(gf_graph *g, int cuda) {
  DLTensor seeds = gft_i64(seeds_buf, &seeds_shape);
  gf_loader_options lo;
  gf_sample_options so;
  gf_loader *l = NULL;

  options(&lo, &so);
  lo.stream = (void *)0x1;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "options->stream is set but options->device is the host");
  options(&lo, &so);
  lo.device_cache_bytes = 4096;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "apply to device_type kDLCUDA (2) only");
  options(&lo, &so);
  lo.device_topology = GF_TOPOLOGY_PINNED;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "apply to device_type kDLCUDA (2) only");
  options(&lo, &so);
  lo.device.device_type = kDLMetal;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_ENOTSUP, "device.device_type = 8 is not supported");
  options(&lo, &so);
  lo.device.device_type = kDLCPU; /* the host, said explicitly */
  CHECK(gf_loader_open(g, &seeds, &lo, &l) == GF_OK && l, "kDLCPU is the host: %s", gf_errmsg());
  gf_loader_close(l);
  l = NULL;
  /* the size before the device fields (88) still opens a host loader */
  options(&lo, &so);
  lo.struct_size = offsetof(gf_loader_options, device);
  CHECK(gf_loader_open(g, &seeds, &lo, &l) == GF_OK && l, "struct_size 88: %s", gf_errmsg());
  gf_loader_close(l);
  l = NULL;

  options(&lo, &so);
  lo.device.device_type = kDLCUDA;
  if (!cuda) {
    CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_ENOTSUP, "this is the CPU library (libgraphferry.so)");
    CHECK(strstr(gf_errmsg(), "GRAPHFERRY_BACKEND=cuda") != NULL, "the message says how: %s", gf_errmsg());
    CHECK(l == NULL, "no loader");
    return;
  }
  lo.device.device_id = -1;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "device.device_id = -1");
  lo.device.device_id = 9;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "CUDA device 9");
  lo.device.device_id = 0;
  lo.device_cache_bytes = -2;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "device_cache_bytes = -2");
  lo.device_cache_bytes = 0;
  lo.device_reserve_bytes = -1;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "device_reserve_bytes = -1");
  lo.device_reserve_bytes = 0;
  lo.device_topology = 3;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_EINVAL, "device_topology = 3");
  lo.device_topology = GF_TOPOLOGY_AUTO;
  so.scheme = GF_SCHEME_LAYER_WISE;
  CHECK_ERR(gf_loader_open(g, &seeds, &lo, &l), GF_ENOTSUP, "node-wise only");
  CHECK(l == NULL, "no loader");
}

#ifdef GFT_CUDA
#define CU(call) CHECK((call) == CUDA_SUCCESS, "%s", #call)

static CUstream consumer;

/* read copies tensor t (host or device) to a malloc'd host buffer, reading
   a device tensor on the consumer's stream. */
static void *read_tensor(const DLTensor *t, size_t *bytes) {
  *bytes = gft_tensor_bytes(t);
  void *out = malloc(*bytes ? *bytes : 1);
  if (*bytes == 0) return out;
  if (t->device.device_type == kDLCUDA) {
    CU(cuMemcpyDtoHAsync(out, (CUdeviceptr)(uintptr_t)t->data + t->byte_offset, *bytes, consumer));
    CU(cuStreamSynchronize(consumer));
  } else {
    memcpy(out, (const char *)t->data + t->byte_offset, *bytes);
  }
  return out;
}

/* same_take takes field/name out of both batches and compares them; the
   device one must be on the device (device_fields) or on the host. */
static void compare(DLManagedTensor *a, DLManagedTensor *b, int on_device, const char *what, int64_t idx) {
  CHECK(a && b, "batch %lld: %s taken", (long long)idx, what);
  if (!a || !b) return;
  CHECK(b->dl_tensor.device.device_type == (on_device ? kDLCUDA : kDLCPU) && b->dl_tensor.device.device_id == 0,
        "batch %lld: %s on device type %d", (long long)idx, what, (int)b->dl_tensor.device.device_type);
  CHECK(a->dl_tensor.ndim == b->dl_tensor.ndim && a->dl_tensor.dtype.code == b->dl_tensor.dtype.code &&
            a->dl_tensor.dtype.bits == b->dl_tensor.dtype.bits,
        "batch %lld: %s type", (long long)idx, what);
  size_t na = 0, nb = 0;
  void *x = read_tensor(&a->dl_tensor, &na), *y = read_tensor(&b->dl_tensor, &nb);
  CHECK(na == nb && memcmp(x, y, na) == 0, "batch %lld: %s differ (%zu vs %zu bytes)", (long long)idx, what, na, nb);
  free(x);
  free(y);
}

/* run_epochs compares two epochs of a device loader (device options from
   dev) with a host loader; stream_in_options: lo.stream is the consumer,
   else each batch is given to gf_batch_wait_stream; versioned: take with
   the DLPack 1.x functions. */
static void run_epochs(gf_graph *g, int64_t cache_bytes, int32_t topology, int stream_in_options, int versioned) {
  DLTensor seeds = gft_i64(seeds_buf, &seeds_shape);
  gf_loader_options lo, dlo;
  gf_sample_options so, dso;
  options(&lo, &so);
  options(&dlo, &dso);
  dlo.device.device_type = kDLCUDA;
  dlo.device_cache_bytes = cache_bytes;
  dlo.device_topology = topology;
  if (cache_bytes == -1) dlo.device_reserve_bytes = 1 << 20;
  if (stream_in_options) dlo.stream = consumer;
  gf_loader *host = NULL, *dev = NULL;
  CHECK(gf_loader_open(g, &seeds, &lo, &host) == GF_OK, "host loader: %s", gf_errmsg());
  CHECK(gf_loader_open(g, &seeds, &dlo, &dev) == GF_OK, "device loader: %s", gf_errmsg());
  if (!host || !dev) {
    gf_loader_close(host);
    gf_loader_close(dev);
    return;
  }
  for (uint64_t epoch = 0; epoch < 2; epoch++) {
    CHECK(gf_loader_start(host, epoch) == GF_OK && gf_loader_start(dev, epoch) == GF_OK, "start");
    for (int64_t i = 0;; i++) {
      gf_batch *a = NULL, *b = NULL;
      int ra = gf_loader_next(host, &a), rb = gf_loader_next(dev, &b);
      CHECK(ra == rb, "epoch %llu batch %lld: next %d vs %d (%s)", (unsigned long long)epoch, (long long)i, ra, rb,
            gf_errmsg());
      if (ra != GF_OK || rb != GF_OK) {
        gf_batch_close(a);
        gf_batch_close(b);
        break;
      }
      if (!stream_in_options) {
        CHECK(gf_batch_wait_stream(a, NULL) == GF_OK, "a host batch has nothing to wait for");
        if (i == 0) CHECK_ERR(gf_batch_wait_stream(b, NULL), GF_EINVAL, "stream is NULL");
        CHECK(gf_batch_wait_stream(b, consumer) == GF_OK, "wait: %s", gf_errmsg());
      }
      int32_t hops = 0;
      CHECK(gf_batch_num_hops(b, &hops) == GF_OK && hops == 2, "hops");
      struct {
        int32_t field, layer, dev;
        const char *name;
      } fields[] = {{GF_FIELD_NODES, 0, 1, "nodes"},     {GF_FIELD_SEEDS, 0, 1, "seeds"},
                    {GF_FIELD_INPUT_INDEX, 0, 1, "input index"}, {GF_FIELD_HOP_COUNTS, 0, 0, "hop counts"},
                    {GF_FIELD_INDPTR, 0, 1, "indptr 0"}, {GF_FIELD_INDICES, 1, 1, "indices 1"},
                    {GF_FIELD_EDGE_IDS, 1, 1, "edge ids 1"}};
      for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
        if (versioned) {
          DLManagedTensorVersioned *x = NULL, *y = NULL;
          CHECK(gf_batch_take_versioned(a, fields[f].field, fields[f].layer, &x) == GF_OK &&
                    gf_batch_take_versioned(b, fields[f].field, fields[f].layer, &y) == GF_OK,
                "take_versioned %s: %s", fields[f].name, gf_errmsg());
          if (x && y) {
            DLManagedTensor mx = gft_managed(x->dl_tensor), my = gft_managed(y->dl_tensor);
            compare(&mx, &my, fields[f].dev, fields[f].name, i);
          }
          if (x) x->deleter(x);
          if (y) y->deleter(y);
        } else {
          DLManagedTensor *x = NULL, *y = NULL;
          gf_batch_take(a, fields[f].field, fields[f].layer, &x);
          gf_batch_take(b, fields[f].field, fields[f].layer, &y);
          compare(x, y, fields[f].dev, fields[f].name, i);
          gft_drop(x);
          gft_drop(y);
        }
      }
      for (int d = 0; d < 2; d++) {
        const char *name = d ? "lbl" : "feat";
        DLManagedTensor *x = NULL, *y = NULL;
        gf_batch_take_node_data(a, name, &x);
        CHECK(gf_batch_take_node_data(b, name, &y) == GF_OK, "take %s: %s", name, gf_errmsg());
        compare(x, y, 1, name, i);
        gft_drop(x);
        gft_drop(y);
      }
      /* the blocks not taken are freed by gf_batch_close */
      gf_batch_close(a);
      gf_batch_close(b);
    }
  }
  gf_loader_close(host);
  gf_loader_close(dev);
}

/* A device tensor taken out stays valid after gf_loader_close; the
   loader's device memory is freed after its deleter, at the next call. */
static void test_outlives_close(gf_graph *g) {
  DLTensor seeds = gft_i64(seeds_buf, &seeds_shape);
  gf_fakecuda_stats_t before, held, after;
  int (*stats)(int, gf_fakecuda_stats_t *) = (int (*)(int, gf_fakecuda_stats_t *))dlsym(RTLD_DEFAULT, "gf_fakecuda_stats");
  if (stats) stats(0, &before);
  gf_loader_options lo;
  gf_sample_options so;
  options(&lo, &so);
  lo.device.device_type = kDLCUDA;
  lo.stream = consumer;
  gf_loader *l = NULL;
  gf_batch *b = NULL;
  DLManagedTensor *feat = NULL, *nodes = NULL;
  CHECK(gf_loader_open(g, &seeds, &lo, &l) == GF_OK, "open: %s", gf_errmsg());
  CHECK(gf_loader_start(l, 0) == GF_OK && gf_loader_next(l, &b) == GF_OK, "next: %s", gf_errmsg());
  gf_loader_close(l);
  /* the batch stays valid after gf_loader_close: its device tensors too */
  CHECK(gf_batch_take(b, GF_FIELD_NODES, 0, &nodes) == GF_OK && gf_batch_take_node_data(b, "feat", &feat) == GF_OK,
        "take after close: %s", gf_errmsg());
  gf_batch_close(b);
  if (!feat || !nodes) return;
  size_t n = 0;
  int64_t *ids = (int64_t *)read_tensor(&nodes->dl_tensor, &n);
  CHECK(n == (size_t)nodes->dl_tensor.shape[0] * 8 && ids[0] >= 0, "nodes readable after gf_loader_close");
  free(ids);
  float *f = (float *)read_tensor(&feat->dl_tensor, &n);
  CHECK(n == (size_t)feat->dl_tensor.shape[0] * (size_t)feat->dl_tensor.shape[1] * 4, "feat readable after close");
  free(f);
  if (stats) {
    stats(0, &held);
    CHECK(held.live_allocs > before.live_allocs, "the closed loader keeps its device memory (%lld > %lld)",
          (long long)held.live_allocs, (long long)before.live_allocs);
  }
  nodes->deleter(nodes);
  feat->deleter(feat);
  /* the next call that opens a loader drains the returns: a host one */
  gf_loader_options ho;
  options(&ho, &so);
  CHECK(gf_loader_open(g, &seeds, &ho, &l) == GF_OK, "host open");
  gf_loader_close(l);
  if (stats) {
    stats(0, &after);
    CHECK(after.live_allocs == before.live_allocs, "device memory freed after the last tensor: %lld live, %lld before",
          (long long)after.live_allocs, (long long)before.live_allocs);
  }
}
#endif

int main(int argc, char **argv) {
  const char *mode = gft_arg(argc, argv, 1, "cpu");
  gf_graph *g = open_graph(gft_arg(argc, argv, 2, GFT_CORA));
  if (g == NULL) return 1;
  int cuda = strcmp(mode, "cuda") == 0;
  test_refusals(g, cuda);
#ifdef GFT_CUDA
  if (cuda) {
    CUcontext ctx;
    CUdevice d;
    CU(cuInit(0));
    CU(cuDeviceGet(&d, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, d));
    CU(cuCtxSetCurrent(ctx));
    CU(cuStreamCreate(&consumer, CU_STREAM_NON_BLOCKING));
    /* every row and the topology read from pinned host memory: feat.bin
     * (mapped) registered in place, the topology (on the Go heap) copied */
    run_epochs(g, 0, GF_TOPOLOGY_PINNED, 1, 0);
    /* 4 MiB of hot rows, the topology on the device; the stream per batch; DLPack 1.x */
    run_epochs(g, 4 << 20, GF_TOPOLOGY_DEVICE, 0, 1);
    /* both auto */
    run_epochs(g, -1, GF_TOPOLOGY_AUTO, 1, 0);
    test_outlives_close(g);
    CU(cuStreamDestroy(consumer));
    CU(cuDevicePrimaryCtxRelease(d));
  }
#else
  CHECK(!cuda, "built without GFT_CUDA: run the cpu mode");
#endif
  gf_graph_close(g);
  return gft_summary(cuda ? "test_device_loader cuda" : "test_device_loader cpu");
}

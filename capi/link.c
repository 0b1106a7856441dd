// link.c: the C shims of the edge-level sampling and loading functions (the
// "Edge-level sampling" section of include/graphferry.h) and of edge data,
// kept apart from graphferry.c; the same pattern: fork guard, then the Go
// export.

#include "graphferry.h"
#include "guard.h"
#include "_cgo_export.h"

int gf_edge_sampler_open(gf_graph *graph, const gf_edge_sampler_options *options,
                         gf_edge_sampler **out_sampler) {
  GF_GUARD();
  return gfgo_edge_sampler_open((uintptr_t)graph, (gf_edge_sampler_options *)options,
                                (uintptr_t *)out_sampler);
}

int gf_edge_sampler_sample(gf_edge_sampler *sampler, const DLTensor *seeds,
                           const DLTensor *seeds_dst, uint64_t batch_key,
                           gf_batch **out_batch) {
  GF_GUARD();
  return gfgo_edge_sampler_sample((uintptr_t)sampler, (DLTensor *)seeds, (DLTensor *)seeds_dst,
                                  batch_key, (uintptr_t *)out_batch);
}

int gf_edge_sampler_sample_timed(gf_edge_sampler *sampler, const DLTensor *seeds,
                                 const DLTensor *seeds_dst, const DLTensor *seed_times,
                                 uint64_t batch_key, gf_batch **out_batch) {
  GF_GUARD();
  return gfgo_edge_sampler_sample_timed((uintptr_t)sampler, (DLTensor *)seeds, (DLTensor *)seeds_dst,
                                        (DLTensor *)seed_times, batch_key, (uintptr_t *)out_batch);
}

void gf_edge_sampler_close(gf_edge_sampler *sampler) {
  GF_GUARD_VOID();
  gfgo_edge_sampler_close((uintptr_t)sampler);
}

int gf_batch_take_link(gf_batch *batch, int32_t field, DLManagedTensor **out_tensor) {
  GF_GUARD();
  return gfgo_batch_take_link((uintptr_t)batch, field, out_tensor);
}

int gf_edge_loader_open(gf_graph *graph, const DLTensor *seeds, const DLTensor *seeds_dst,
                        const gf_edge_loader_options *options, gf_loader **out_loader) {
  GF_GUARD();
  return gfgo_edge_loader_open((uintptr_t)graph, (DLTensor *)seeds, (DLTensor *)seeds_dst,
                               (gf_edge_loader_options *)options, (uintptr_t *)out_loader);
}

int gf_graph_set_edge_data(gf_graph *graph, const char *name, DLManagedTensor *tensor) {
  GF_GUARD();
  return gfgo_graph_set_edge_data((uintptr_t)graph, (char *)name, tensor);
}

int gf_batch_take_edge_data(gf_batch *batch, const char *name, DLManagedTensor **out_tensor) {
  GF_GUARD();
  return gfgo_batch_take_edge_data((uintptr_t)batch, (char *)name, out_tensor);
}

int gf_edge_loader_open_comm(gf_graph *graph, const DLTensor *seeds, const DLTensor *seeds_dst,
                             const gf_edge_loader_options *options, const gf_comm *comm,
                             gf_loader **out_loader) {
  GF_GUARD();
  return gfgo_edge_loader_open_comm((uintptr_t)graph, (DLTensor *)seeds, (DLTensor *)seeds_dst,
                                    (gf_edge_loader_options *)options, (gf_comm *)comm,
                                    (uintptr_t *)out_loader);
}

int gf_edge_loader_open_part(gf_part *part, const DLTensor *seeds, const DLTensor *seeds_dst,
                             const gf_edge_loader_options *options, const gf_comm *comm,
                             gf_loader **out_loader) {
  GF_GUARD();
  return gfgo_edge_loader_open_part((uintptr_t)part, (DLTensor *)seeds, (DLTensor *)seeds_dst,
                                    (gf_edge_loader_options *)options, (gf_comm *)comm,
                                    (uintptr_t *)out_loader);
}

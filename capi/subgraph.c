// subgraph.c: the C shims of gf_graph_induced_subgraph and gf_graph_edges
// (see graphferry.c for what a shim does), apart so that the section stays
// in its own files.

#include "graphferry.h"
#include "guard.h"
#include "shim.h"
#include "_cgo_export.h"

int gf_graph_induced_subgraph(gf_graph *graph, const DLTensor *nodes,
                              DLManagedTensor **out_src,
                              DLManagedTensor **out_dst,
                              DLManagedTensor **out_edge_ids) {
  GF_GUARD();
  return gfgo_graph_induced_subgraph((uintptr_t)graph, (DLTensor *)nodes,
                                     out_src, out_dst, out_edge_ids);
}

int gf_graph_edges(gf_graph *graph, int32_t format, int32_t relation,
                   DLManagedTensor **out_first, DLManagedTensor **out_second,
                   DLManagedTensor **out_edge_ids) {
  GF_GUARD();
  return gfgo_graph_edges((uintptr_t)graph, format, relation, out_first, out_second,
                          out_edge_ids);
}

int gf_subgraph_loader_open(gf_graph *graph, const DLTensor *items,
                            const gf_subgraph_loader_options *options,
                            gf_loader **out_loader) {
  GF_GUARD();
  return gfgo_subgraph_loader_open((uintptr_t)graph, (DLTensor *)items,
                                   (gf_subgraph_loader_options *)options,
                                   (uintptr_t *)out_loader);
}

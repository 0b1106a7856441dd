// subgraph.c: the C shim of gf_graph_induced_subgraph (see graphferry.c for
// what a shim does), apart so that the section stays in its own files.

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

// comm.c: the public functions of the header's "Communicators" section, as
// thin shims over the Go exports (see graphferry.c for why shims).

#include "graphferry.h"
#include "guard.h"
#include "shim.h"
#include "_cgo_export.h"

int gf_loader_open_comm(gf_graph *graph, const DLTensor *seeds,
                        const gf_loader_options *options, const gf_comm *comm,
                        gf_loader **out_loader) {
  GF_GUARD();
  return gfgo_loader_open_comm((uintptr_t)graph, (DLTensor *)seeds,
                               (gf_loader_options *)options, (gf_comm *)comm,
                               (uintptr_t *)out_loader);
}

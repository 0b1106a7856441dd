// stats.c: the C shim of gf_loader_stats, kept beside stats.go (see
// graphferry.c for why every gf_* function is a C shim over a Go export).

#include "graphferry.h"
#include "guard.h"
#include "shim.h"
#include "_cgo_export.h"

int gf_loader_stats(const gf_loader *loader, gf_loader_statistics *out) {
  GF_GUARD();
  return gfgo_loader_stats((uintptr_t)loader, out);
}

int gf_loader_set_cache(gf_loader *loader, const gf_cache_options *options,
                        int64_t *out_rows) {
  GF_GUARD();
  return gfgo_loader_set_cache((uintptr_t)loader, (gf_cache_options *)options,
                               out_rows);
}

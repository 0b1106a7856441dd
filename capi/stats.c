// stats.c: the C shim of gf_loader_stats, kept beside stats.go (see
// graphferry.c for why every gf_* function is a C shim over a Go export).

#include "graphferry.h"
#include "shim.h"
#include "_cgo_export.h"

extern volatile int gf__forked;  // graphferry.c

int gf_loader_stats(const gf_loader *loader, gf_loader_statistics *out) {
  if (gf__forked) {  // as GF_GUARD: a forked child never enters Go
    return GF_EFORK;
  }
  return gfgo_loader_stats((uintptr_t)loader, out);
}

int gf_loader_set_cache(gf_loader *loader, const gf_cache_options *options,
                        int64_t *out_rows) {
  if (gf__forked) {
    return GF_EFORK;
  }
  return gfgo_loader_set_cache((uintptr_t)loader, (gf_cache_options *)options,
                               out_rows);
}

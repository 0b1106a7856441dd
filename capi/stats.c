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

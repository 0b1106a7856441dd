//go:build cuda

/*
 * The CUDA library's hooks (see cuda_on.go), exported with default
 * visibility: cgo's own export wrappers are compiled with the package's
 * -fvisibility=hidden, so, like the gf_* shims of graphferry.c, these are the
 * symbols a caller (graphferry/_backend.py, tests/gpu) resolves. Like them,
 * they refuse to run in a process forked after the library was loaded (the
 * Go runtime's threads do not survive fork()): GF_GUARD_REPORT (guard.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "guard.h"
#include "_cgo_export.h"

__attribute__((visibility("default"))) int gfcuda_check(int32_t ordinal, char *report, size_t cap) {
  GF_GUARD_REPORT(report, cap);
  return gfcudago_check(ordinal, report, cap);
}

__attribute__((visibility("default"))) int gfcuda_selfcheck(int32_t ordinal, int64_t nodes, int32_t batches,
                                                            uint64_t seed, char *report, size_t cap) {
  GF_GUARD_REPORT(report, cap);
  return gfcudago_selfcheck(ordinal, nodes, batches, seed, report, cap);
}

__attribute__((visibility("default"))) int gfcuda_epoch(int32_t ordinal, const char *config_json, char *report,
                                                        size_t cap) {
  GF_GUARD_REPORT(report, cap);
  return gfcudago_epoch(ordinal, (char *)config_json, report, cap);
}

__attribute__((visibility("default"))) int gfcuda_fault(int32_t ordinal, const char *kind, char *report,
                                                        size_t cap) {
  GF_GUARD_REPORT(report, cap);
  return gfcudago_fault(ordinal, (char *)kind, report, cap);
}

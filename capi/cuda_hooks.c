//go:build cuda

/*
 * The CUDA library's test hooks (see cuda_on.go), exported with default
 * visibility: cgo's own export wrappers are compiled with the package's
 * -fvisibility=hidden, so, like the gf_* shims of graphferry.c, these are the
 * symbols a caller (tests/gpu/run.sh) resolves.
 */
#include <stddef.h>
#include <stdint.h>

#include "_cgo_export.h"

__attribute__((visibility("default"))) int gfcuda_selfcheck(int64_t nodes, int32_t batches, uint64_t seed,
                                                            char *report, size_t cap) {
  return gfcudago_selfcheck(nodes, batches, seed, report, cap);
}

__attribute__((visibility("default"))) int gfcuda_epoch(const char *config_json, char *report, size_t cap) {
  return gfcudago_epoch((char *)config_json, report, cap);
}

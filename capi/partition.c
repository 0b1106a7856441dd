// partition.c: the C shim of gf_dataset_partition (the "Offline
// partitioning" section of include/graphferry.h), kept apart from
// graphferry.c; the same pattern: fork guard, then the Go export.

#include "graphferry.h"
#include "guard.h"
#include "_cgo_export.h"

int gf_dataset_partition(const char *src_dir, const char *dst_dir,
                         const gf_partition_options *options) {
  GF_GUARD();
  return gfgo_dataset_partition((char *)src_dir, (char *)dst_dir,
                                (gf_partition_options *)options);
}

// gf__partition_progress calls the caller's progress function: Go cannot
// call a C function pointer itself.
void gf__partition_progress(void (*fn)(void *, int64_t, int64_t), void *user, int64_t done,
                            int64_t total) {
  fn(user, done, total);
}

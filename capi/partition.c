// partition.c: the C side of gf_dataset_partition's progress callback
// (gf_dataset_partition's shim is generated: boundary_gen.c).

#include "graphferry.h"

// gf__partition_progress calls the caller's progress function: Go cannot
// call a C function pointer itself.
void gf__partition_progress(void (*fn)(void *, int64_t, int64_t), void *user, int64_t done,
                            int64_t total) {
  fn(user, done, total);
}

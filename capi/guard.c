// guard.c: the fork guard's flag, its atfork registration and its message
// (see guard.h for how the C files use them).

#include <pthread.h>
#include <string.h>

#include "guard.h"

volatile int gf__forked = 0;

const char gf__fork_msg[] =
    "graphferry cannot be used in a process forked after it was loaded: "
    "its engine runs its own threads, which do not survive fork(); create "
    "graphferry objects in the process that uses them (with PyTorch's "
    "DataLoader, use num_workers=0)";

static void gf__atfork_child(void) { gf__forked = 1; }

__attribute__((constructor)) static void gf__guard_init(void) {
  pthread_atfork(NULL, NULL, gf__atfork_child);
}

void gf__fork_report(char *report, size_t cap) {
  if (report == NULL || cap == 0) {
    return;
  }
  size_t n = sizeof gf__fork_msg - 1;
  if (n > cap - 1) {
    n = cap - 1;
  }
  memcpy(report, gf__fork_msg, n);
  report[n] = 0;
}

// guard.h: the fork guard of every C file of capi. Internal; not part of the
// public interface.
//
// The Go runtime's threads do not survive fork(): a child process forked
// after the library was loaded must never enter Go, or it would hang on
// threads it does not have. guard.c registers (once, at load) an atfork
// handler that sets gf__forked in the child; every C entry point then starts
// with the guard of its return shape, before it looks at its arguments:
//
//   GF_GUARD()                  int status functions: GF_EFORK
//   GF_GUARD_VOID()             void functions (the *_close): nothing
//   GF_GUARD_NULL()             functions returning a pointer: NULL
//   GF_GUARD_RETURN(value)      any other shape: value
//   GF_GUARD_REPORT(report, cap)
//                               the CUDA library's hooks (cuda_hooks.c):
//                               1, with the fork message in report[0:cap]
//
// gf_errmsg() returns gf__fork_msg in such a child.
#ifndef GRAPHFERRY_GUARD_H
#define GRAPHFERRY_GUARD_H

#include <stddef.h>

#include "graphferry.h"

// Set in a child process forked after the library was loaded (guard.c).
extern __attribute__((visibility("hidden"))) volatile int gf__forked;

// What a forked child is told (gf_errmsg, the hooks' report).
extern __attribute__((visibility("hidden"))) const char gf__fork_msg[];

// gf__fork_report writes gf__fork_msg, truncated and NUL-terminated, into
// report[0:cap] (nothing when report is NULL or cap is 0).
__attribute__((visibility("hidden"))) void gf__fork_report(char *report, size_t cap);

#define GF_GUARD_RETURN(value) \
  do {                         \
    if (gf__forked) {          \
      return value;            \
    }                          \
  } while (0)

#define GF_GUARD() GF_GUARD_RETURN(GF_EFORK)

#define GF_GUARD_NULL() GF_GUARD_RETURN(NULL)

#define GF_GUARD_VOID() \
  do {                  \
    if (gf__forked) {   \
      return;           \
    }                   \
  } while (0)

#define GF_GUARD_REPORT(report, cap)    \
  do {                                  \
    if (gf__forked) {                   \
      gf__fork_report((report), (cap)); \
      return 1;                         \
    }                                   \
  } while (0)

#endif

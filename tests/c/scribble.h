/* gf_scribble_malloc, for the Go tests' gftest helpers (capi/commtest.go,
 * cuda/gpu_testhelp.go): it allocates n blocks of size bytes, fills each
 * with the word w, and frees them (the last first), so that the calling
 * thread's next n allocations of that size get them back, still holding w
 * where the allocator's free-list links did not overwrite it. C memory a
 * caller takes as uninitialised then holds w: a test fills it with a bad Go
 * pointer to show that no Go pointer store lands there (its write barrier
 * would hand the old word to a marking collector). Never shipped. */
#ifndef GF_SCRIBBLE_H
#define GF_SCRIBBLE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void gf_scribble_malloc(size_t size, uintptr_t w, int n) {
    void *p[16];
    if (n > 16) n = 16;
    for (int i = 0; i < n; i++) {
        p[i] = malloc(size);
        for (size_t j = 0; p[i] && j + sizeof w <= size; j += sizeof w) memcpy((char *)p[i] + j, &w, sizeof w);
        __asm__ volatile("" : : "r"(p[i]) : "memory"); /* the stores are not dead */
    }
    for (int i = n - 1; i >= 0; i--) free(p[i]);
}

#endif

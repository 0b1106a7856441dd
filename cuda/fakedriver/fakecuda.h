/* Test introspection of graphferry's fake CUDA driver (cuda/fakedriver).
 *
 * The fake libcuda.so.1 exports these besides the driver API. A program can
 * tell it runs on the fake with dlsym(RTLD_DEFAULT, "gf_fakecuda_is_fake").
 * Never shipped; see cuda/fakedriver/README.md. */
#ifndef GF_FAKECUDA_H
#define GF_FAKECUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Counters of one device, over all its contexts. "live" counts what exists
 * now; the totals count since cuInit. */
typedef struct {
    int64_t live_allocs;          /* cuMemAlloc allocations not freed */
    int64_t live_alloc_bytes;     /* their bytes, each rounded up to 256 */
    int64_t mem_total;            /* GF_FAKECUDA_MEM */
    int64_t live_modules;         /* loaded, not unloaded */
    int64_t module_loads;         /* total successful loads */
    int64_t live_streams;         /* created, not destroyed (no NULL stream) */
    int64_t live_events;          /* created, not destroyed */
    int64_t live_contexts;        /* non-primary contexts + the primary if active */
    int64_t primary_refcount;     /* the primary context's retain count */
    int64_t kernel_launches;      /* total successful cuLaunchKernel */
    int64_t live_host_ranges;     /* pinned (cuMemHostAlloc/AllocHost) + registered ranges, all devices */
} gf_fakecuda_stats_t;

/* gf_fakecuda_stats fills *out for device ordinal `device`: 0, or -1 when
 * the driver is not initialised, the device does not exist or out is
 * NULL. */
int gf_fakecuda_stats(int device, gf_fakecuda_stats_t *out);

/* Host memory registered in place (cuMemHostRegister), all devices:
 * *total the successful registrations since cuInit, *live the ranges
 * registered now. 0, or -1 when the driver is not initialised or an output
 * is NULL. */
int gf_fakecuda_registrations(int64_t *total, int64_t *live);

/* 1 when [p, p+n) lies inside one host range registered now with
 * cuMemHostRegister (not a pinned allocation), else 0. p is an address
 * only: it is never read. */
int gf_fakecuda_is_registered(uintptr_t p, size_t n);

/* Sets the delay, in microseconds, before each queued operation of every
 * stream runs (GF_FAKECUDA_DELAY_US at cuInit; < 0: 0) and returns the
 * previous one. Streams run their work on threads of their own, so a copy
 * lands, a kernel runs and an event completes that long after the work
 * before it on its stream, whatever the host does meanwhile. */
long long gf_fakecuda_set_delay_us(long long us);

/* Holds (hold != 0) or lets go of (0) stream s of the calling thread's
 * current context (s may be CU_STREAM_LEGACY or CU_STREAM_PER_THREAD,
 * this thread's): while held, none of its queued work starts, so a test
 * can keep a consumer's reads pending. 0, or -1 (no context, not a
 * stream, nothing to let go of). Waiting for a held stream waits until it
 * is let go. */
int gf_fakecuda_hold(void *s, int hold);

/* After `after` more calls of the driver function named fn (any thread;
 * one that needs cuInit), the next n fail with CUresult code (not 0), for
 * the tests of error paths. 0, or -1 for bad arguments. */
int gf_fakecuda_fail(const char *fn, int after, int n, int code);

/* 1: this libcuda.so.1 is the fake. */
int gf_fakecuda_is_fake(void);

/* Why the calling thread's last failing driver call failed, in words
 * ("" when none failed yet). Valid until the thread's next driver call. */
const char *gf_fakecuda_last_reason(void);

#ifdef __cplusplus
}
#endif

#endif

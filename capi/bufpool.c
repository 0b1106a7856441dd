// bufpool.c allocates the buffers that leave the library as DLPack tensors
// (sampled blocks, gathered features) and keeps recently freed large ones
// for reuse while a loader is open.
//
// Why: a loader hands out a few buffers of tens of MB per batch (the
// features of ~10^5 nodes). From malloc, each is a fresh mmap whose every
// 4 KiB page faults on first write and is unmapped again when the consumer
// drops the batch: on a 2-core VM that was ~350,000 page faults and 0.8 s
// of system time per products-like epoch, more than the gather itself.
// Large buffers are therefore mapped by us (asking for transparent huge
// pages), and a tensor's deleter puts its buffer back into a small pool
// from which the next batch takes it, already faulted in.
//
// Every buffer has a header in front of its data recording how it was
// obtained, so that gf__buf_free needs nothing but the data pointer.
// Deleters call gf__buf_free: plain C, never entering Go. In a process
// forked from the one that loaded the library the pool is not touched (its
// lock may have been held by a thread that does not exist in the child);
// buffers are simply released.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "shim.h"

enum { GF__BUF_MALLOC = 1, GF__BUF_MAP = 2, GF__BUF_HOST = 3 };

#define GF__BUF_MAGIC 0x67666275u  // "gfbu"

// The header sits in the 64 bytes right before the data, whatever the kind.
typedef struct {
  size_t cap;       // usable bytes from the data pointer on
  void *base;       // what malloc, mmap or the host's allocator returned
  size_t map_len;   // GF__BUF_MAP: length of the whole mapping; GF__BUF_HOST: bytes asked of the host
  gf__host *host;   // GF__BUF_HOST: the allocator it came from
  uint32_t kind;
  uint32_t magic;
} gf__buf_header;

// Space in front of the data: 64 bytes after malloc (keeping the data
// 64-byte aligned for any dtype and vector loads), a page after mmap (data
// page-aligned).
#define GF__HDR 64
#define GF__MAP_HDR 4096

// Buffers of at least this many bytes are mapped and may be pooled.
#define GF__POOL_MIN ((size_t)1 << 20)
// The pool holds at most this many buffers and bytes.
#define GF__POOL_SLOTS 32
#define GF__POOL_BYTES ((size_t)512 << 20)

static pthread_mutex_t gf__pool_mu = PTHREAD_MUTEX_INITIALIZER;
static void *gf__pool[GF__POOL_SLOTS];  // data pointers
static int gf__pool_n = 0;
static size_t gf__pool_bytes = 0;
static int gf__pool_users = 0;  // open loaders: the pool keeps buffers only while > 0

static gf__buf_header *gf__hdr(void *data) {
  return (gf__buf_header *)((char *)data - GF__HDR);
}

// gf__size_class rounds n up to a size of the form 2^k * (4 + j) / 4,
// j in 0..3, so that slightly larger later requests (the next batch's
// features) fit a pooled buffer, wasting at most a quarter.
static size_t gf__size_class(size_t n) {
  size_t p = 1;
  while (p * 2 <= n) {
    p *= 2;
  }
  if (p == n) {
    return n;
  }
  size_t step = p / 4 > 0 ? p / 4 : 1;
  return (n + step - 1) / step * step;
}

static void gf__unmap(gf__buf_header *h) { munmap(h->base, h->map_len); }

// gf__pool_take takes a pooled buffer of at least n bytes, or returns NULL.
static void *gf__pool_take(size_t n) {
  GF_GUARD_NULL();
  void *best = NULL;
  int at = -1;
  pthread_mutex_lock(&gf__pool_mu);
  for (int i = 0; i < gf__pool_n; i++) {
    size_t cap = gf__hdr(gf__pool[i])->cap;
    if (cap >= n && cap / 2 <= n &&
        (best == NULL || cap < gf__hdr(best)->cap)) {
      best = gf__pool[i];
      at = i;
    }
  }
  if (best != NULL) {
    gf__pool[at] = gf__pool[--gf__pool_n];
    gf__pool_bytes -= gf__hdr(best)->cap;
  }
  pthread_mutex_unlock(&gf__pool_mu);
  return best;
}

void *gf__buf_alloc(size_t n) {
  if (n < GF__POOL_MIN) {
    void *m = NULL;
    if (posix_memalign(&m, GF__HDR, GF__HDR + n) != 0) {
      return NULL;
    }
    char *p = (char *)m;
    gf__buf_header *h = (gf__buf_header *)p;
    h->cap = n;
    h->base = p;
    h->map_len = 0;
    h->kind = GF__BUF_MALLOC;
    h->magic = GF__BUF_MAGIC;
    return p + GF__HDR;
  }
  void *pooled = gf__pool_take(n);
  if (pooled != NULL) {
    return pooled;
  }
  size_t cap = gf__size_class(n);
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = GF__MAP_HDR + (cap + page - 1) / page * page;
  if (len < cap) {
    return NULL;  // overflow
  }
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    return NULL;
  }
#ifdef MADV_HUGEPAGE
  madvise(m, len, MADV_HUGEPAGE);  // advice: fewer faults and TLB misses
#endif
  char *data = (char *)m + GF__MAP_HDR;
  gf__buf_header *h = gf__hdr(data);
  h->cap = cap;
  h->base = m;
  h->map_len = len;
  h->kind = GF__BUF_MAP;
  h->magic = GF__BUF_MAGIC;
  return data;
}

// gf__pool_put keeps the mapped buffer data in the pool if there is room and
// a user; it returns whether it did.
static int gf__pool_put(void *data) {
  GF_GUARD_RETURN(0);
  size_t cap = gf__hdr(data)->cap;
  int kept = 0;
  pthread_mutex_lock(&gf__pool_mu);
  if (gf__pool_users > 0 && gf__pool_n < GF__POOL_SLOTS &&
      gf__pool_bytes + cap <= GF__POOL_BYTES) {
    gf__pool[gf__pool_n++] = data;
    gf__pool_bytes += cap;
    kept = 1;
  }
  pthread_mutex_unlock(&gf__pool_mu);
  return kept;
}

// ---------------------------------------------------------------------------
// Host allocators (gf_allocator): a loader's output buffers from memory the
// host provides. A gf__host is the library's copy of the host's struct,
// reference-counted: one reference for the loader that was given it, one per
// live buffer, so the last of them (often a deleter run long after the
// loader was closed) frees it.

struct gf__host {
  gf_allocator a;
  int64_t refs;  // atomic
};

gf__host *gf__host_new(gf_allocator a) {
  gf__host *h = (gf__host *)calloc(1, sizeof *h);
  if (h == NULL) {
    return NULL;
  }
  h->a = a;
  h->refs = 1;
  return h;
}

void gf__host_release(gf__host *h) {
  if (h != NULL && __atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    free(h);
  }
}

void *gf__buf_alloc_host(gf__host *host, size_t n) {
  if (n > SIZE_MAX - GF__HDR) {
    return NULL;
  }
  size_t len = GF__HDR + n;
  char *base = (char *)host->a.alloc(host->a.user, len, GF__HDR);
  if (base == NULL) {
    return NULL;
  }
  __atomic_add_fetch(&host->refs, 1, __ATOMIC_ACQ_REL);
  gf__buf_header *h = (gf__buf_header *)base;
  h->cap = n;
  h->base = base;
  h->map_len = len;
  h->host = host;
  h->kind = GF__BUF_HOST;
  h->magic = GF__BUF_MAGIC;
  return base + GF__HDR;
}

void gf__buf_free(void *data) {
  if (data == NULL) {
    return;
  }
  gf__buf_header *h = gf__hdr(data);
  if (h->kind == GF__BUF_HOST) {
    gf__host *host = h->host;
    h->magic = 0;
    if (!gf__forked) {  // a forked child does not call back into its parent's host
      host->a.free(host->a.user, h->base, h->map_len);
      gf__host_release(host);
    }
    return;
  }
  if (h->kind == GF__BUF_MALLOC) {
    h->magic = 0;
    free(h->base);
    return;
  }
  if (!gf__pool_put(data)) {
    gf__unmap(h);
  }
}

void gf__buf_pool_use(int delta) {
  void *drop[GF__POOL_SLOTS];
  int n = 0;
  pthread_mutex_lock(&gf__pool_mu);
  gf__pool_users += delta;
  if (gf__pool_users <= 0) {
    gf__pool_users = 0;
    n = gf__pool_n;
    memcpy(drop, gf__pool, (size_t)n * sizeof(void *));
    gf__pool_n = 0;
    gf__pool_bytes = 0;
  }
  pthread_mutex_unlock(&gf__pool_mu);
  for (int i = 0; i < n; i++) {
    gf__unmap(gf__hdr(drop[i]));
  }
}

#ifdef GF_GFTEST
// For the Go tests only (testhelp.go, build tag gftest, defines GF_GFTEST).
void gf__buf_pool_stats(int64_t *count, int64_t *bytes, int64_t *users) {
  pthread_mutex_lock(&gf__pool_mu);
  *count = gf__pool_n;
  *bytes = (int64_t)gf__pool_bytes;
  *users = gf__pool_users;
  pthread_mutex_unlock(&gf__pool_mu);
}
#endif

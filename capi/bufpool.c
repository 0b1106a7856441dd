// bufpool.c allocates the buffers that leave the library as DLPack tensors
// (sampled blocks, gathered features), from pools that keep freed buffers
// for reuse: the library's default pool and the host pools of
// gf_host_pool_open (include/graphferry.h), one code path for both.
//
// Why pool: a loader hands out a few buffers of tens of MB per batch (the
// features of ~10^5 nodes). From malloc, each is a fresh mmap whose every
// 4 KiB page faults on first write and is unmapped again when the consumer
// drops the batch: on a 2-core VM that was ~350,000 page faults and 0.8 s
// of system time per products-like epoch, more than the gather itself.
// Buffers are therefore mapped by us (asking for transparent huge pages),
// and a tensor's deleter puts its buffer back into its pool, from which the
// next batch takes it, already faulted in.
//
// The default pool (the library's own memory, no gf_allocator) maps buffers
// of at least 1 MiB (smaller ones come from malloc and are never pooled) and
// keeps at most 32 of them and 512 MiB while a loader is open. A host pool
// maps every buffer (a mapping of its own, so that a host can page-lock it
// once without touching another buffer's pages), keeps every freed one until
// it is closed, reports each new mapping once (gf_host_pool_new_chunks: a
// GPU consumer registers it with the CUDA runtime then), and, fenced, reuses
// a freed buffer only once a fence the host started after the free has
// passed (the copies that read it are done).
//
// Every buffer has a header in front of its data recording how it was
// obtained, so that gf__buf_free needs nothing but the data pointer.
// Deleters call gf__buf_free: plain C, never entering Go. In a process
// forked from the one that loaded the library no pool is touched (its lock
// may have been held by a thread that does not exist in the child); buffers
// are simply released.

#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "shim.h"

enum { GF__BUF_MALLOC = 1, GF__BUF_MAP = 2, GF__BUF_HOST = 3 };

#define GF__BUF_MAGIC 0x67666275u   // "gfbu": a buffer handed out
#define GF__BUF_POOLED 0x67667062u  // "gfpb": a mapped buffer held by its pool
#define GF__POOL_MAGIC 0x6766706cu  // "gfpl"

// The header sits in the 64 bytes right before the data, whatever the kind.
typedef struct gf__buf_header {
  size_t cap;      // usable bytes from the data pointer on
  void *base;      // what malloc, mmap or the host's allocator returned
  size_t map_len;  // GF__BUF_MAP: length of the whole mapping; GF__BUF_HOST: bytes asked of the host
  union {
    gf__host *host;  // GF__BUF_HOST: the allocator it came from
    gf__pool *pool;  // GF__BUF_MAP: the pool it belongs to
  };
  struct gf__buf_header *next;     // the pool's free or waiting list
  struct gf__buf_header *new_next; // the pool's list of mappings not yet reported
  uint64_t wait;                   // waiting: the fence it waits for
  uint32_t kind;
  uint32_t magic;
} gf__buf_header;

_Static_assert(sizeof(gf__buf_header) <= 64, "the buffer header fits in front of the data");

// Space in front of the data: 64 bytes after malloc (keeping the data
// 64-byte aligned for any dtype and vector loads), a page after mmap (data
// page-aligned).
#define GF__HDR 64
#define GF__MAP_HDR 4096

// A mapped buffer of at most this many bytes serves any smaller request.
#define GF__SMALL_CAP ((size_t)64 << 10)

struct gf__pool {
  pthread_mutex_t mu;
  uint32_t magic;
  int32_t flags;           // GF_HOST_POOL_*
  size_t map_min;          // smaller requests come from malloc (default pool)
  int64_t keep_count;      // freed buffers kept at most (count, bytes) ...
  size_t keep_bytes;
  int users;               // ... while users > 0
  int closed;
  int64_t refs;            // host pools: the handle, allocator copies, live buffers
  int64_t limit;           // GF_HOST_POOL_LIMIT: the most bytes of live buffers
  gf__buf_header *free;    // reusable buffers
  int64_t free_n;
  size_t free_bytes;
  gf__buf_header *wait_head, *wait_tail;  // freed buffers waiting for a fence, in order
  uint64_t started, passed;               // fences
  gf__buf_header *fresh;                  // mappings not yet reported
  gf_host_pool_statistics st;
  gf__pool *next_pool;                    // the registry of host pools
};

// The library's copy of a host's gf_allocator (see "Host allocators" below).
struct gf__host {
  gf_allocator a;
  int64_t refs;  // atomic
};

// Internal flag of the host pools: new mappings are kept for
// gf_host_pool_new_chunks.
#define GF__POOL_REPORT (1 << 30)

static gf__pool gf__default_pool = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .magic = GF__POOL_MAGIC,
    .map_min = (size_t)1 << 20,
    .keep_count = 32,
    .keep_bytes = (size_t)512 << 20,
    .refs = 1,
};

// The host pools open or still referenced: a pool pointer is checked
// against it before use.
static pthread_mutex_t gf__pools_mu = PTHREAD_MUTEX_INITIALIZER;
static gf__pool *gf__pools = NULL;

// gf__errorf sets the thread's message from a format.
static void gf__errorf(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void gf__errorf(const char *format, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, format);
  vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  gf__set_error(buf);
}

static gf__buf_header *gf__hdr(void *data) {
  return (gf__buf_header *)((char *)data - GF__HDR);
}

static void *gf__data(gf__buf_header *h) { return (char *)h + GF__HDR; }

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

static void gf__unmap_list(gf__buf_header *h) {
  while (h != NULL) {
    gf__buf_header *next = h->next;
    gf__unmap(h);
    h = next;
  }
}

// gf__pool_destroy releases a host pool nothing refers to any more
// (its buffers are unmapped already).
static void gf__pool_destroy(gf__pool *p) {
  pthread_mutex_lock(&gf__pools_mu);
  for (gf__pool **q = &gf__pools; *q != NULL; q = &(*q)->next_pool) {
    if (*q == p) {
      *q = p->next_pool;
      break;
    }
  }
  pthread_mutex_unlock(&gf__pools_mu);
  p->magic = 0;
  pthread_mutex_destroy(&p->mu);
  free(p);
}

// gf__pool_unref drops a reference taken with p->mu held (the caller
// unlocked it) and destroys p if it was the last one.
static void gf__pool_unref(gf__pool *p) {
  pthread_mutex_lock(&p->mu);
  int last = --p->refs == 0;
  pthread_mutex_unlock(&p->mu);
  if (last) {
    gf__pool_destroy(p);
  }
}

// gf__release_locked makes the freed buffer h reusable (poisoned first with
// GF_HOST_POOL_POISON), or queues it on *drop for unmapping when the pool
// keeps no more.
static void gf__release_locked(gf__pool *p, gf__buf_header *h, gf__buf_header **drop) {
  if (p->users > 0 && p->free_n < p->keep_count && p->free_bytes + h->cap <= p->keep_bytes) {
    if (p->flags & GF_HOST_POOL_POISON) {
      memset(gf__data(h), 0xA5, h->cap);
    }
    h->magic = GF__BUF_POOLED;
    h->next = p->free;
    p->free = h;
    p->free_n++;
    p->free_bytes += h->cap;
    return;
  }
  p->st.chunks--;
  p->st.chunk_bytes -= (int64_t)h->map_len;
  h->magic = 0;
  h->next = *drop;
  *drop = h;
}

// gf__pool_take takes a freed buffer of p of at least n bytes (and not much
// more), or returns NULL.
static gf__buf_header *gf__take_locked(gf__pool *p, size_t n) {
  gf__buf_header **best = NULL;
  for (gf__buf_header **q = &p->free; *q != NULL; q = &(*q)->next) {
    size_t cap = (*q)->cap;
    if (cap >= n && (cap / 2 <= n || cap <= GF__SMALL_CAP) && (best == NULL || cap < (*best)->cap)) {
      best = q;
    }
  }
  if (best == NULL) {
    return NULL;
  }
  gf__buf_header *h = *best;
  *best = h->next;
  p->free_n--;
  p->free_bytes -= h->cap;
  return h;
}

// gf__pool_alloc returns a buffer of at least n bytes from p (data 64-byte
// aligned, page-aligned when mapped), or NULL.
static void *gf__pool_alloc(gf__pool *p, size_t n) {
  if (n < p->map_min) {
    void *m = NULL;
    if (posix_memalign(&m, GF__HDR, GF__HDR + n) != 0) {
      return NULL;
    }
    gf__buf_header *h = (gf__buf_header *)m;
    h->cap = n;
    h->base = m;
    h->map_len = 0;
    h->kind = GF__BUF_MALLOC;
    h->magic = GF__BUF_MAGIC;
    return gf__data(h);
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (n > SIZE_MAX / 2 - GF__MAP_HDR - page) {
    return NULL;  // overflow
  }
  size_t cap = (gf__size_class(n) + page - 1) / page * page;
  gf__buf_header *h = NULL;
  if (!gf__forked) {
    pthread_mutex_lock(&p->mu);
    if ((p->flags & GF_HOST_POOL_LIMIT) && p->st.live_bytes + (int64_t)cap > p->limit) {
      p->st.failures++;
      p->st.last_failure_bytes = (int64_t)n;
      p->st.last_failure_errno = 0;
      pthread_mutex_unlock(&p->mu);
      return NULL;
    }
    h = gf__take_locked(p, n);
    if (h != NULL) {
      p->st.allocs++;
      p->st.live_buffers++;
      p->st.live_bytes += (int64_t)h->cap;
      p->refs++;
      h->magic = GF__BUF_MAGIC;
    } else {
      p->st.live_bytes += (int64_t)cap;  // reserved while mapping
    }
    pthread_mutex_unlock(&p->mu);
    if (h != NULL) {
      return gf__data(h);
    }
  }
  size_t len = GF__MAP_HDR + cap;
  void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  int err = errno;
  if (m != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
    madvise(m, len, MADV_HUGEPAGE);  // advice: fewer faults and TLB misses
#endif
    h = gf__hdr((char *)m + GF__MAP_HDR);
    h->cap = cap;
    h->base = m;
    h->map_len = len;
    h->pool = p;
    h->next = NULL;
    h->new_next = NULL;
    h->kind = GF__BUF_MAP;
    h->magic = GF__BUF_MAGIC;
  }
  if (gf__forked) {
    return h != NULL ? gf__data(h) : NULL;
  }
  pthread_mutex_lock(&p->mu);
  if (h == NULL) {
    p->st.live_bytes -= (int64_t)cap;
    p->st.failures++;
    p->st.last_failure_bytes = (int64_t)n;
    p->st.last_failure_errno = err != 0 ? err : ENOMEM;
  } else {
    p->st.allocs++;
    p->st.live_buffers++;
    p->st.chunks++;
    p->st.chunk_bytes += (int64_t)len;
    p->refs++;
    if (p->flags & GF__POOL_REPORT) {
      h->new_next = p->fresh;
      p->fresh = h;
    }
  }
  pthread_mutex_unlock(&p->mu);
  return h != NULL ? gf__data(h) : NULL;
}

// gf__pool_put takes back the mapped buffer h of its pool.
static void gf__pool_put(gf__buf_header *h) {
  gf__pool *p = h->pool;
  if (gf__forked) {
    gf__unmap(h);
    return;
  }
  gf__buf_header *drop = NULL;
  pthread_mutex_lock(&p->mu);
  if (h->magic != GF__BUF_MAGIC) {  // freed twice
    p->st.bad_frees++;
    pthread_mutex_unlock(&p->mu);
    return;
  }
  p->st.frees++;
  p->st.live_buffers--;
  p->st.live_bytes -= (int64_t)h->cap;
  if ((p->flags & GF_HOST_POOL_FENCED) && !p->closed) {
    h->magic = GF__BUF_POOLED;
    h->wait = p->started + 1;  // a fence started after this free
    h->next = NULL;
    if (p->wait_tail != NULL) {
      p->wait_tail->next = h;
    } else {
      p->wait_head = h;
    }
    p->wait_tail = h;
    p->st.waiting++;
  } else {
    gf__release_locked(p, h, &drop);
  }
  int last = --p->refs == 0;
  pthread_mutex_unlock(&p->mu);
  gf__unmap_list(drop);
  if (last) {
    gf__pool_destroy(p);
  }
}

void *gf__buf_alloc(size_t n) { return gf__pool_alloc(&gf__default_pool, n); }

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
  gf__pool_put(h);
}

void gf__buf_pool_use(int delta) {
  gf__pool *p = &gf__default_pool;
  gf__buf_header *drop = NULL;
  pthread_mutex_lock(&p->mu);
  p->users += delta;
  if (p->users <= 0) {
    p->users = 0;
    while (p->free != NULL) {
      gf__buf_header *h = p->free;
      p->free = h->next;
      p->free_n--;
      p->free_bytes -= h->cap;
      gf__release_locked(p, h, &drop);
    }
  }
  pthread_mutex_unlock(&p->mu);
  gf__unmap_list(drop);
}

#ifdef GF_GFTEST
// For the Go tests only (testhelp.go, build tag gftest, defines GF_GFTEST).
void gf__buf_pool_stats(int64_t *count, int64_t *bytes, int64_t *users) {
  gf__pool *p = &gf__default_pool;
  pthread_mutex_lock(&p->mu);
  *count = p->free_n;
  *bytes = (int64_t)p->free_bytes;
  *users = p->users;
  pthread_mutex_unlock(&p->mu);
}
#endif

// ---------------------------------------------------------------------------
// Host allocators (gf_allocator): a loader's output buffers from memory the
// host provides. A gf__host is the library's copy of the host's struct,
// reference-counted: one reference for the loader that was given it, one per
// live buffer, so the last of them (often a deleter run long after the
// loader was closed) frees it. A copy of a host pool's allocator also holds
// a reference to the pool.

static void *gf__pool_alloc_cb(void *user, size_t bytes, size_t alignment);
static void gf__pool_free_cb(void *user, void *ptr, size_t bytes);
static gf__pool *gf__pool_ref(gf__pool *p);

gf__host *gf__host_new(gf_allocator a, int *closed_pool) {
  *closed_pool = 0;
  if (a.alloc == gf__pool_alloc_cb && gf__pool_ref((gf__pool *)a.user) == NULL) {
    *closed_pool = 1;
    return NULL;
  }
  gf__host *h = (gf__host *)calloc(1, sizeof *h);
  if (h == NULL) {
    if (a.alloc == gf__pool_alloc_cb) {
      gf__pool_unref((gf__pool *)a.user);
    }
    return NULL;
  }
  h->a = a;
  h->refs = 1;
  return h;
}

void gf__host_release(gf__host *h) {
  if (h != NULL && __atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0) {
    if (h->a.alloc == gf__pool_alloc_cb) {
      gf__pool_unref((gf__pool *)h->a.user);
    }
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

// ---------------------------------------------------------------------------
// Host pools (gf_host_pool_*, include/graphferry.h).

// gf__pool_ref returns p with a reference taken, or NULL (setting no
// message) when p is not an open host pool.
static gf__pool *gf__pool_ref(gf__pool *p) {
  gf__pool *found = NULL;
  pthread_mutex_lock(&gf__pools_mu);
  for (gf__pool *q = gf__pools; q != NULL; q = q->next_pool) {
    if (q == p) {
      pthread_mutex_lock(&p->mu);
      if (!p->closed) {
        p->refs++;
        found = p;
      }
      pthread_mutex_unlock(&p->mu);
      break;
    }
  }
  pthread_mutex_unlock(&gf__pools_mu);
  return found;
}

static int gf__pool_arg(gf__pool *p, const char *fn) {
  if (p == NULL) {
    gf__errorf("%s: pool is NULL", fn);
    return GF_EINVAL;
  }
  if (gf__pool_ref(p) == NULL) {
    gf__errorf("%s: pool is not an open gf_host_pool (closed?)", fn);
    return GF_EBADHANDLE;
  }
  return GF_OK;
}

static void *gf__pool_alloc_cb(void *user, size_t bytes, size_t alignment) {
  if (alignment > GF__MAP_HDR || bytes == 0) {
    return NULL;
  }
  return gf__pool_alloc((gf__pool *)user, bytes);
}

static void gf__pool_free_cb(void *user, void *ptr, size_t bytes) {
  (void)bytes;
  if (ptr == NULL) {
    return;
  }
  gf__buf_header *h = gf__hdr(ptr);
  gf__pool *p = (gf__pool *)user;
  if (h->kind != GF__BUF_MAP || h->pool != p) {
    pthread_mutex_lock(&p->mu);
    p->st.bad_frees++;  // not one of this pool's buffers
    pthread_mutex_unlock(&p->mu);
    return;
  }
  gf__pool_put(h);
}

int gf_host_pool_open(const gf_host_pool_options *options, gf_host_pool **out_pool,
                      gf_allocator *out_allocator) {
  GF_GUARD();
  static const char fn[] = "gf_host_pool_open";
  if (out_pool == NULL || out_allocator == NULL) {
    gf__errorf("%s: %s is NULL", fn, out_pool == NULL ? "out_pool" : "out_allocator");
    return GF_EINVAL;
  }
  *out_pool = NULL;
  gf_host_pool_options o = {0};
  if (options != NULL) {
    if (options->struct_size != sizeof o) {
      gf__errorf("%s: options->struct_size = %u (want %zu)", fn, options->struct_size, sizeof o);
      return GF_EINVAL;
    }
    o = *options;
  }
  int32_t known = GF_HOST_POOL_FENCED | GF_HOST_POOL_POISON | GF_HOST_POOL_LIMIT;
  if (o.flags & ~known) {
    gf__errorf("%s: options->flags = %#x has unknown bits %#x", fn, (unsigned)o.flags, (unsigned)(o.flags & ~known));
    return GF_EINVAL;
  }
  if ((o.flags & GF_HOST_POOL_LIMIT) && o.limit_bytes < 0) {
    gf__errorf("%s: options->limit_bytes = %lld (want >= 0)", fn, (long long)o.limit_bytes);
    return GF_EINVAL;
  }
  gf__pool *p = (gf__pool *)calloc(1, sizeof *p);
  if (p == NULL || pthread_mutex_init(&p->mu, NULL) != 0) {
    free(p);
    gf__errorf("%s: out of memory", fn);
    return GF_ENOMEM;
  }
  p->magic = GF__POOL_MAGIC;
  p->flags = o.flags | GF__POOL_REPORT;
  p->keep_count = INT64_MAX;
  p->keep_bytes = SIZE_MAX;
  p->users = 1;
  p->refs = 1;
  p->limit = o.limit_bytes;
  p->st.struct_size = sizeof p->st;
  pthread_mutex_lock(&gf__pools_mu);
  p->next_pool = gf__pools;
  gf__pools = p;
  pthread_mutex_unlock(&gf__pools_mu);
  memset(out_allocator, 0, sizeof *out_allocator);
  out_allocator->struct_size = sizeof *out_allocator;
  out_allocator->user = p;
  out_allocator->alloc = gf__pool_alloc_cb;
  out_allocator->free = gf__pool_free_cb;
  *out_pool = (gf_host_pool *)p;
  return GF_OK;
}

int gf_host_pool_new_chunks(gf_host_pool *pool, void **ptrs, size_t *lens, int64_t capacity,
                            int64_t *out_count) {
  GF_GUARD();
  static const char fn[] = "gf_host_pool_new_chunks";
  gf__pool *p = (gf__pool *)pool;
  int rc = gf__pool_arg(p, fn);
  if (rc != GF_OK) {
    return rc;
  }
  if (out_count == NULL || capacity < 0 || (capacity > 0 && (ptrs == NULL || lens == NULL))) {
    gf__pool_unref(p);
    gf__errorf("%s: %s", fn, out_count == NULL ? "out_count is NULL" : capacity < 0 ? "capacity < 0" : "ptrs or lens is NULL");
    return GF_EINVAL;
  }
  int64_t n = 0;
  pthread_mutex_lock(&p->mu);
  while (n < capacity && p->fresh != NULL) {
    gf__buf_header *h = p->fresh;
    p->fresh = h->new_next;
    ptrs[n] = h->base;
    lens[n] = h->map_len;
    n++;
  }
  pthread_mutex_unlock(&p->mu);
  *out_count = n;
  gf__pool_unref(p);
  return GF_OK;
}

int gf_host_pool_fence(gf_host_pool *pool, uint64_t passed, uint64_t *out_fence) {
  GF_GUARD();
  static const char fn[] = "gf_host_pool_fence";
  gf__pool *p = (gf__pool *)pool;
  int rc = gf__pool_arg(p, fn);
  if (rc != GF_OK) {
    return rc;
  }
  gf__buf_header *drop = NULL;
  pthread_mutex_lock(&p->mu);
  if (passed > p->started) {
    uint64_t started = p->started;
    pthread_mutex_unlock(&p->mu);
    gf__pool_unref(p);
    gf__errorf("%s: passed = %llu, a fence not started yet (the latest is %llu)", fn, (unsigned long long)passed,
               (unsigned long long)started);
    return GF_EINVAL;
  }
  if (passed > p->passed) {
    p->passed = passed;
  }
  while (p->wait_head != NULL && p->wait_head->wait <= p->passed) {
    gf__buf_header *h = p->wait_head;
    p->wait_head = h->next;
    if (p->wait_head == NULL) {
      p->wait_tail = NULL;
    }
    p->st.waiting--;
    gf__release_locked(p, h, &drop);
  }
  if (out_fence != NULL) {
    *out_fence = ++p->started;
  }
  pthread_mutex_unlock(&p->mu);
  gf__unmap_list(drop);
  gf__pool_unref(p);
  return GF_OK;
}

int gf_host_pool_stats(gf_host_pool *pool, gf_host_pool_statistics *out) {
  GF_GUARD();
  static const char fn[] = "gf_host_pool_stats";
  gf__pool *p = (gf__pool *)pool;
  int rc = gf__pool_arg(p, fn);
  if (rc != GF_OK) {
    return rc;
  }
  if (out == NULL || out->struct_size != sizeof *out) {
    gf__pool_unref(p);
    if (out == NULL) {
      gf__errorf("%s: out is NULL", fn);
    } else {
      gf__errorf("%s: out->struct_size = %u (want %zu)", fn, out->struct_size, sizeof *out);
    }
    return GF_EINVAL;
  }
  pthread_mutex_lock(&p->mu);
  *out = p->st;
  pthread_mutex_unlock(&p->mu);
  gf__pool_unref(p);
  return GF_OK;
}

int gf_host_pool_close(gf_host_pool *pool) {
  GF_GUARD();
  gf__pool *p = (gf__pool *)pool;
  if (p == NULL) {
    return GF_OK;
  }
  int rc = gf__pool_arg(p, "gf_host_pool_close");
  if (rc != GF_OK) {
    return rc;
  }
  gf__buf_header *drop = NULL;
  pthread_mutex_lock(&p->mu);
  p->closed = 1;
  p->users = 0;
  gf__buf_header *h = p->wait_head;
  p->wait_head = p->wait_tail = NULL;
  p->st.waiting = 0;
  while (h != NULL) {  // the host's fences are over: nothing reads them any more
    gf__buf_header *next = h->next;
    gf__release_locked(p, h, &drop);
    h = next;
  }
  while (p->free != NULL) {
    h = p->free;
    p->free = h->next;
    gf__release_locked(p, h, &drop);
  }
  p->free_n = 0;
  p->free_bytes = 0;
  p->fresh = NULL;
  p->refs--;  // the handle's; gf__pool_unref drops gf__pool_arg's
  pthread_mutex_unlock(&p->mu);
  gf__unmap_list(drop);
  gf__pool_unref(p);
  return GF_OK;
}

/*
 * gftest.h: what the C tests (test_capi.c, test_comm.c, test_threads.c,
 * test_typed.c, test_alloc.c, test_edge_loader.c, test_cancel.c, soak.c)
 * share: checks that count and report failures with file:line and
 * gf_errmsg(), the summary line, DLPack tensor builders, fields taken out
 * of batches, a counting host allocator, control-message queues between
 * ranks that are threads, temporary folders, and the dataset argument.
 *
 * Header-only (each test is one C file), C99 + POSIX + pthreads, and like
 * the tests it uses nothing of graphferry but the public header and the
 * library. Build with -pthread: CHECK may be called from any thread.
 */
#ifndef GRAPHFERRY_GFTEST_H
#define GRAPHFERRY_GFTEST_H

#include "graphferry.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Checks                                                                 */

/* The checks that passed and failed (under gft_mu). */
static int gft_passed = 0, gft_failed = 0;
static pthread_mutex_t gft_mu = PTHREAD_MUTEX_INITIALIZER;

/* gft_check_begin counts a check. On failure it starts the report
   ("FAIL file:line: ") and returns 1 with gft_mu held, for the caller's
   message and gft_check_end; otherwise it returns 0. */
static inline int gft_check_begin(int ok, const char *file, int line) {
  pthread_mutex_lock(&gft_mu);
  if (ok) {
    gft_passed++;
    pthread_mutex_unlock(&gft_mu);
    return 0;
  }
  gft_failed++;
  fprintf(stderr, "FAIL %s:%d: ", file, line);
  return 1;
}

static inline void gft_check_end(void) {
  fprintf(stderr, " (last error: %s)\n", gf_errmsg());
  pthread_mutex_unlock(&gft_mu);
}

/* CHECK(cond, printf format, ...): counts the check; on failure prints
   "FAIL file:line: <message> (last error: <gf_errmsg()>)". The message's
   arguments are evaluated only on failure. Thread-safe. */
#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (gft_check_begin((cond) != 0, __FILE__, __LINE__)) { \
      fprintf(stderr, __VA_ARGS__);                         \
      gft_check_end();                                      \
    }                                                       \
  } while (0)

/* CHECK_ERR(call, status, needle): the call (evaluated once) must return
   status with a message containing needle. */
#define CHECK_ERR(call, code, needle)                                           \
  do {                                                                          \
    int gft_rc_ = (call);                                                       \
    CHECK(gft_rc_ == (code) && strstr(gf_errmsg(), (needle)) != NULL,           \
          "want status %d with message containing \"%s\", got %d", (int)(code), \
          (needle), gft_rc_);                                                   \
  } while (0)

/* gft_summary prints "name: N passed, N failed" and returns the exit
   status: 0 when no check failed. */
static inline int gft_summary(const char *name) {
  pthread_mutex_lock(&gft_mu);
  int passed = gft_passed, failed = gft_failed;
  pthread_mutex_unlock(&gft_mu);
  printf("%s: %d passed, %d failed\n", name, passed, failed);
  return failed == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------------- */
/* DLPack tensors over the caller's memory                                */

static inline DLTensor gft_tensor(void *data, int32_t ndim, int64_t *shape, uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

/* A 1-D tensor of *shape elements. */
static inline DLTensor gft_vec(void *data, int64_t *shape, uint8_t code, uint8_t bits) {
  return gft_tensor(data, 1, shape, code, bits);
}

static inline DLTensor gft_i64(int64_t *data, int64_t *shape) { return gft_vec(data, shape, kDLInt, 64); }

/* A managed tensor over t with no deleter and no context. */
static inline DLManagedTensor gft_managed(DLTensor t) {
  DLManagedTensor m;
  memset(&m, 0, sizeof m);
  m.dl_tensor = t;
  return m;
}

/* The size of a tensor's data in bytes (compact layout). */
static inline size_t gft_tensor_bytes(const DLTensor *t) {
  size_t n = (size_t)(t->dtype.bits / 8) * t->dtype.lanes;
  for (int32_t i = 0; i < t->ndim; i++) n *= (size_t)t->shape[i];
  return n;
}

/* gft_same_tensor: a and b hold the same bytes (both NULL counts). */
static inline int gft_same_tensor(const DLManagedTensor *a, const DLManagedTensor *b) {
  if (a == NULL || b == NULL) return a == b;
  size_t n = gft_tensor_bytes(&a->dl_tensor);
  return n == gft_tensor_bytes(&b->dl_tensor) && memcmp(a->dl_tensor.data, b->dl_tensor.data, n) == 0;
}

/* gft_drop calls the deleter of t, if any. */
static inline void gft_drop(DLManagedTensor *t) {
  if (t != NULL && t->deleter != NULL) t->deleter(t);
}

/* gft_take_i64 takes an int64 field of a batch out and returns a malloc'd
   copy of it (*n entries), or NULL when gf_batch_take fails. */
static inline int64_t *gft_take_i64(gf_batch *b, int32_t field, int32_t layer, int64_t *n) {
  DLManagedTensor *t = NULL;
  if (gf_batch_take(b, field, layer, &t) != GF_OK || t == NULL) return NULL;
  *n = t->dl_tensor.shape[0];
  int64_t *out = (int64_t *)malloc((size_t)(*n > 0 ? *n : 1) * sizeof(int64_t));
  if (out != NULL) memcpy(out, t->dl_tensor.data, (size_t)*n * sizeof(int64_t));
  t->deleter(t);
  return out;
}

/* ---------------------------------------------------------------------- */
/* Control messages between ranks that are threads (gf_comm send, recv)   */

/* A FIFO of messages from one rank to another. Not locked: the caller
   holds its own lock (and waits on its own condition) around these. */
typedef struct gft_msg {
  struct gft_msg *next;
  int64_t n;
  unsigned char data[];
} gft_msg;

typedef struct {
  gft_msg *head, *tail;
} gft_fifo;

/* gft_fifo_push appends a copy of data[0:n]; 1 when out of memory. */
static inline int gft_fifo_push(gft_fifo *q, const void *data, int64_t n) {
  gft_msg *e = (gft_msg *)malloc(sizeof(gft_msg) + (size_t)n);
  if (e == NULL) return 1;
  e->next = NULL;
  e->n = n;
  if (n > 0) memcpy(e->data, data, (size_t)n);
  if (q->tail != NULL) {
    q->tail->next = e;
  } else {
    q->head = e;
  }
  q->tail = e;
  return 0;
}

/* gft_fifo_pop removes the first message (NULL when empty): the caller
   delivers it with gft_msg_deliver. */
static inline gft_msg *gft_fifo_pop(gft_fifo *q) {
  gft_msg *e = q->head;
  if (e != NULL) {
    q->head = e->next;
    if (q->head == NULL) q->tail = NULL;
  }
  return e;
}

/* gft_msg_deliver copies e into buf (capacity bytes) as gf_comm's recv
   does, frees it and returns recv's status: 0, or 2 when it does not fit. */
static inline int gft_msg_deliver(gft_msg *e, void *buf, int64_t capacity, int64_t *size) {
  int rc = 0;
  if (e->n > capacity) {
    rc = 2;
  } else {
    if (e->n > 0) memcpy(buf, e->data, (size_t)e->n);
    *size = e->n;
  }
  free(e);
  return rc;
}

/* gft_fifo_free frees the messages nobody received. */
static inline void gft_fifo_free(gft_fifo *q) {
  for (gft_msg *e; (e = gft_fifo_pop(q)) != NULL;) free(e);
}

/* ---------------------------------------------------------------------- */
/* A counting host allocator (gf_allocator)                               */

/* gft_counting records every block a loader asks of a host allocator
   (gft_allocator_of), so that a test can check that every byte handed out
   lies in a live block (gft_owned) and that every block is freed once, with
   its size; fail_after makes it fail once it has given that many blocks. */
#define GFT_MAX_BLOCKS 65536

typedef struct {
  pthread_mutex_t mu;
  void *ptr[GFT_MAX_BLOCKS];
  size_t bytes[GFT_MAX_BLOCKS];
  int n;              /* live blocks */
  long allocs, frees; /* totals */
  long bad_frees;     /* unknown pointer or wrong size */
  long misaligned;    /* alignment not a power of two <= 4096 */
  long fail_after;    /* < 0: never fail; else fail once allocs reaches it */
  long failures;
} gft_counting;

static inline void *gft_c_alloc(void *user, size_t bytes, size_t alignment) {
  gft_counting *c = (gft_counting *)user;
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > 4096) {
    __atomic_add_fetch(&c->misaligned, 1, __ATOMIC_SEQ_CST);
    return NULL;
  }
  pthread_mutex_lock(&c->mu);
  if ((c->fail_after >= 0 && c->allocs >= c->fail_after) || c->n == GFT_MAX_BLOCKS) {
    c->failures++;
    pthread_mutex_unlock(&c->mu);
    return NULL;
  }
  void *p = NULL;
  if (posix_memalign(&p, alignment, bytes) != 0) {
    pthread_mutex_unlock(&c->mu);
    return NULL;
  }
  memset(p, 0xA7, bytes);
  c->ptr[c->n] = p;
  c->bytes[c->n] = bytes;
  c->n++;
  c->allocs++;
  pthread_mutex_unlock(&c->mu);
  return p;
}

static inline void gft_c_free(void *user, void *ptr, size_t bytes) {
  gft_counting *c = (gft_counting *)user;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < c->n; i++) {
    if (c->ptr[i] == ptr) {
      if (c->bytes[i] != bytes) c->bad_frees++;
      c->ptr[i] = c->ptr[c->n - 1];
      c->bytes[i] = c->bytes[c->n - 1];
      c->n--;
      c->frees++;
      pthread_mutex_unlock(&c->mu);
      free(ptr);
      return;
    }
  }
  c->bad_frees++;
  pthread_mutex_unlock(&c->mu);
}

/* gft_owned says whether [p, p+len) lies inside one live block of c. */
static inline int gft_owned(gft_counting *c, const void *p, size_t len) {
  int ok = 0;
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < c->n && !ok; i++) {
    const char *b = (const char *)c->ptr[i];
    ok = (const char *)p >= b && (const char *)p + len <= b + c->bytes[i];
  }
  pthread_mutex_unlock(&c->mu);
  return ok;
}

static inline void gft_counting_init(gft_counting *c) {
  memset(c, 0, sizeof *c);
  pthread_mutex_init(&c->mu, NULL);
  c->fail_after = -1;
}

static inline gf_allocator gft_allocator_of(gft_counting *c) {
  gf_allocator a;
  memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.user = c;
  a.alloc = gft_c_alloc;
  a.free = gft_c_free;
  return a;
}

/* gft_failing_allocator_runs opens a loader with open(ctx, a, &loader) on
   allocators that fail once they have given k blocks, for k = 0, step,
   2*step, ... below kmax, and reads an epoch of each: an epoch during which
   the allocator failed must end with GF_ENOMEM naming the host allocator,
   the others with GF_DONE, and no run may leak a block or free one wrongly.
   Returns in how many runs the allocator failed. */
static inline int gft_failing_allocator_runs(int (*open)(void *ctx, const gf_allocator *a, gf_loader **out), void *ctx,
                                             long kmax, long step) {
  int failed_runs = 0;
  for (long k = 0; k < kmax; k += step) {
    gft_counting c;
    gft_counting_init(&c);
    c.fail_after = k;
    gf_allocator a = gft_allocator_of(&c);
    gf_loader *l = NULL;
    CHECK(open(ctx, &a, &l) == GF_OK && l != NULL, "open");
    if (!l) continue;
    CHECK(gf_loader_start(l, 0) == GF_OK, "start");
    int rc = GF_OK;
    while (rc == GF_OK) {
      gf_batch *b = NULL;
      rc = gf_loader_next(l, &b);
      if (b) gf_batch_close(b);
    }
    if (c.failures > 0) {
      failed_runs++;
      CHECK(rc == GF_ENOMEM && strstr(gf_errmsg(), "host allocator") != NULL, "k=%ld: next returned %d: %s", k, rc,
            gf_errmsg());
    } else {
      CHECK(rc == GF_DONE, "k=%ld: the epoch ended with %d", k, rc);
    }
    gf_loader_close(l);
    CHECK(c.n == 0 && c.allocs == c.frees, "k=%ld: %d blocks leaked (%ld allocs, %ld frees)", k, c.n, c.allocs,
          c.frees);
    CHECK(c.bad_frees == 0, "k=%ld: %ld bad frees", k, c.bad_frees);
    pthread_mutex_destroy(&c.mu);
  }
  return failed_runs;
}

/* gft_check_all_freed: every block of c was freed once, with its size. */
#define gft_check_all_freed(c)                                                                                     \
  do {                                                                                                             \
    CHECK((c)->n == 0 && (c)->allocs == (c)->frees && (c)->allocs > 0,                                             \
          "every block freed once: %d live, %ld allocs, %ld frees", (c)->n, (c)->allocs, (c)->frees);              \
    CHECK((c)->bad_frees == 0 && (c)->misaligned == 0, "%ld bad frees, %ld bad alignments", (c)->bad_frees,       \
          (c)->misaligned);                                                                                        \
  } while (0)

/* ---------------------------------------------------------------------- */
/* Files                                                                  */

/* The shipped Cora, relative to the repository root (where make runs the
   tests). */
#define GFT_CORA "examples/data/cora"

/* gft_open opens the dataset dir, or fails a check and returns NULL. */
static inline gf_graph *gft_open(const char *dir) {
  gf_graph *g = NULL;
  int rc = gf_graph_open(dir, NULL, &g);
  CHECK(rc == GF_OK, "gf_graph_open(%s)", dir);
  return rc == GF_OK ? g : NULL;
}

/* gft_arg returns argv[i], or fallback when the command line is shorter. */
static inline const char *gft_arg(int argc, char **argv, int i, const char *fallback) {
  return i < argc ? argv[i] : fallback;
}

/* gft_tmpdir creates a new folder $TMPDIR/gf_<tag>_XXXXXX (default /tmp)
   and writes its path into buf; it returns buf, or NULL on failure. */
static inline char *gft_tmpdir(char *buf, size_t cap, const char *tag) {
  const char *tmp = getenv("TMPDIR");
  int n = snprintf(buf, cap, "%s/gf_%s_XXXXXX", tmp != NULL && tmp[0] != 0 ? tmp : "/tmp", tag);
  if (n < 0 || (size_t)n >= cap) return NULL;
  return mkdtemp(buf);
}

/* gft_rmtree removes path and, for a folder, everything in it (without
   following links); it returns 0 on success. */
static inline int gft_rmtree(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path);
  DIR *d = opendir(path);
  if (d == NULL) return -1;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    char *child = (char *)malloc(len);
    if (child == NULL) {
      rc = -1;
      break;
    }
    snprintf(child, len, "%s/%s", path, e->d_name);
    if (gft_rmtree(child) != 0) rc = -1;
    free(child);
  }
  closedir(d);
  if (rmdir(path) != 0) rc = -1;
  return rc;
}

#endif

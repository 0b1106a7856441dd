/*
 * gftest.h: what the C tests (test_capi.c, test_comm.c, test_threads.c,
 * test_typed.c, test_cancel.c, soak.c) share: checks that count and report failures with
 * file:line and gf_errmsg(), the summary line, DLPack tensor builders,
 * fields taken out of batches, control-message queues between ranks that
 * are threads, temporary folders, and the dataset argument.
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
/* Files                                                                  */

/* The shipped Cora, relative to the repository root (where make runs the
   tests). */
#define GFT_CORA "examples/data/cora"

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

/*
 * graphferry.h - the public C interface of graphferry, a mini-batch data
 * engine for graph neural network training.
 *
 * This file is the authoritative reference for how the C interface behaves.
 * It is hand-written, C99, and depends on <stdint.h> and <stddef.h> only.
 *
 * One source
 * ----------
 * This header is the specification of the C boundary; nothing else states
 * it by hand. python/tools/cgen.py (`make gen`; `make lint` fails when what
 * it would write differs from what is committed) reads it with dlpack.h and
 * derives the rest: the Python package's ctypes bindings (structs,
 * constants, prototypes, and the non-error statuses each function may
 * return, read from its doc block's "Returns:"), libgraphferry's C shims
 * that only forward to the engine (capi/boundary_gen.c), and the struct
 * layouts it accepts (capi/boundary_gen.go). It also checks this header
 * against the release headers kept in tests/c/abi/: their structs only grew
 * at the end and their signatures are unchanged. So the declarations stay
 * plain C the tool reads: one declaration per statement, an integer per
 * #define, a doc block before each function; in a doc block, "never fails"
 * marks an int that is a value, not a status, and "sets no message" a
 * status returned without a gf_errmsg() message.
 *
 * Options grow as size-versioned structs (below), not as an options object
 * set by name: the layouts are already promised across releases, a zeroed
 * struct is every default, and a field is typed and checked by the
 * compiler and, through the derived bindings, by Python. A new option is
 * one field appended to its struct here (with its comment), the engine's
 * field it sets, and the one line of capi's reader of that struct that
 * converts it; once a struct's layout has shipped, a new field goes after an
 * "an earlier layout ends here" mark at the old end.
 *
 * Overview
 * --------
 * A gf_graph holds a graph's topology (CSC of in-neighbours: row v lists the
 * sources u of the edges u->v), split into patches that each own one
 * consecutive range of renumbered node ids, and named node data (features,
 * labels). Every node id that crosses this interface is an ORIGINAL id (the
 * caller's numbering); renumbering is internal.
 *
 * gf_sample() draws one multi-hop neighbourhood with the collective sampling
 * primitive (per hop: shuffle frontier nodes to their owning patch, sample
 * there, reshuffle the results back). A gf_loader runs a sampler thread and a
 * loader thread connected by bounded queues and yields gf_batch objects, one
 * per mini-batch, in order.
 *
 * Conventions
 * -----------
 * - Every fallible function returns an int status: GF_OK (0) or one of the
 *   GF_E* codes below (GF_DONE and GF_NOT_READY are the non-error, non-zero
 *   codes). New codes
 *   may be added in later versions. Each function's block lists the codes it
 *   returns and when. Besides those, every function may return GF_EFORK
 *   (called in a forked child, see below) and GF_EINTERNAL (a bug in
 *   graphferry; the library then refuses every later call); these two are
 *   not repeated in each block. A function that takes a handle returns
 *   GF_EBADHANDLE for a NULL, closed or foreign one, and GF_EINVAL for a
 *   NULL out pointer.
 * - After a failure, gf_errmsg() returns a message that starts with the
 *   function name and names the offending argument and value. Messages are
 *   per thread: the message of the last failed call made on this thread.
 * - Constructors return the new handle through an out_* pointer, the last
 *   argument, and set it to NULL on failure. Destructors (gf_*_close) accept
 *   NULL and do nothing; closing a handle twice is detected and ignored.
 * - Handles are opaque. A handle that is NULL, already closed, or not a
 *   graphferry handle of the expected kind gives GF_EBADHANDLE; it never
 *   crashes the process.
 * - Bad arguments never change a handle: after an error every handle is as
 *   usable as it was before the call.
 * - Option structs (gf_*_options) start with uint32_t struct_size, which the
 *   caller sets to sizeof of the struct it was compiled with. Fields are
 *   only ever appended, never moved or removed, so a program built against
 *   an older header keeps working: every struct_size from the first
 *   released layout's (the offset just past its last field) up to this
 *   header's sizeof is accepted; the fields the caller's layout holds are
 *   read and the ones added since take their zero value, which is always
 *   their default. graphferry never reads past struct_size bytes. Any other
 *   struct_size is GF_EINVAL, with a message giving the accepted range.
 *   A comment "-- an earlier layout ends here --" in a struct marks where
 *   an older header's layout ended: a struct_size equal to that layout's
 *   sizeof reads the fields before the mark only (never its padding).
 * - Tensors are DLPack's (dlpack.h, shipped beside this header: DLPack 1.1).
 *   Input tensors are described with DLTensor. Unless a function says
 *   otherwise they are borrowed for the duration of the call and copied.
 *   Only CPU tensors (kDLCPU) are accepted in this version; they must be
 *   C-contiguous (strides NULL or row-major compact), and their bytes (at
 *   data + byte_offset) memory of this process: a byte_offset past the
 *   buffer is GF_EINVAL naming it.
 * - Output tensors are owned DLPack tensors: the legacy DLManagedTensor, or
 *   DLPack 1.x's DLManagedTensorVersioned from the *_versioned functions
 *   (version {1, 1}, flags DLPACK_FLAG_BITMASK_IS_COPIED: the memory is the
 *   receiver's alone). Their memory is allocated outside any garbage
 *   collector; the receiver owns each one and must call its deleter exactly
 *   once. Deleters are plain C, may be called from any thread, and never
 *   call back into graphferry. A tensor with no elements has data NULL.
 * - Threads: a thread count of 0 (or <= 0) in any options struct means
 *   the default: every core this process may run on, or, when a launcher
 *   says that several ranks share this host (the environment variable
 *   LOCAL_WORLD_SIZE, which torchrun sets), that divided by their number
 *   (at least 1), so that N ranks do not start N times the host's threads.
 *   GOMAXPROCS in the environment, when set, is the default instead.
 *   More than 64 threads per core (and more than 256) is GF_EINVAL.
 * - Sizes: what a count or size a caller passes makes the library allocate
 *   (patches, a walk's length, a loader's sampler workers) is checked first
 *   against the memory this process may use (the machine's, its memory
 *   cgroup's limit, its RLIMIT_AS) less what it holds: GF_ENOMEM with a
 *   message giving both, and nothing lost, never a process killed.
 * - Processes that fork: the library runs its own threads. In a child
 *   process forked after the library was loaded, every function fails with
 *   GF_EFORK (and the destructors do nothing) rather than hang. Create
 *   graphferry objects in the process that uses them.
 */
#ifndef GRAPHFERRY_H
#define GRAPHFERRY_H

#include <stddef.h>
#include <stdint.h>

/*
 * DLPack's declarations: dlpack.h beside this header (DLPack 1.1), or an
 * upstream dlpack.h of major version 1 that the program included first
 * (both use the same include guard, so the first one included wins).
 */
#include "dlpack.h"
#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION != 1
#error "graphferry.h needs DLPack 1.x: include graphferry's dlpack.h (or DLPack 1.x's)"
#endif

/*
 * GF_API marks the public functions. libgraphferry.so exports these and
 * nothing else: the library is compiled with hidden visibility and linked
 * with a version script that keeps only gf_* names.
 */
#if defined(_WIN32)
#if defined(GF_BUILD)
#define GF_API __declspec(dllexport)
#else
#define GF_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define GF_API __attribute__((visibility("default")))
#else
#define GF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                 */
/* ------------------------------------------------------------------------ */

#define GF_VERSION_MAJOR 0
#define GF_VERSION_MINOR 4
#define GF_VERSION_PATCH 0
/* GF_VERSION_NUMBER is MAJOR*1000000 + MINOR*1000 + PATCH. */
#define GF_VERSION_NUMBER \
  (GF_VERSION_MAJOR * 1000000 + GF_VERSION_MINOR * 1000 + GF_VERSION_PATCH)
#define GF_VERSION_STRING "0.4.0"

/*
 * gf_version_number returns GF_VERSION_NUMBER of the library that is
 * loaded, which may differ from the header a program was compiled with. It
 * never fails (the int is the version, not a status).
 * Programs should check that the major versions agree:
 *   gf_version_number() / 1000000 == GF_VERSION_MAJOR
 */
GF_API int gf_version_number(void);

/* gf_version returns the library's version as static text, e.g. "0.1.0". */
GF_API const char *gf_version(void);

/* gf_build_id returns static text naming the sources the library was built
 * from: 16 hex digits of a hash over the checkout's engine, C API, CUDA and
 * header files (capi/source_id.sh), or "unknown" for a build that bypassed
 * capi/build.sh. The same text follows "gfbuild:" in the binary, so tools
 * can read it without loading the library (tests/gpu/run.sh does). */
GF_API const char *gf_build_id(void);

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                  */
/* ------------------------------------------------------------------------ */

#define GF_OK 0           /* Success */
#define GF_EINVAL 1       /* An argument has an invalid value */
#define GF_ETYPE 2        /* A tensor has the wrong dtype, device or layout */
#define GF_ENOMEM 3       /* Out of memory */
#define GF_EBADHANDLE 4   /* NULL, closed or foreign handle */
#define GF_ESTATE 5       /* Not allowed in the object's current state */
#define GF_EIO 6          /* A file could not be read or written */
#define GF_ENOTSUP 7      /* Valid, but not supported by this build */
#define GF_EFORK 8        /* Called in a process forked after loading */
#define GF_EINTERNAL 9    /* A bug in graphferry; the message says where */
#define GF_ECANCELED 10   /* Stopped early: the call's gf_cancel token was cancelled */
#define GF_DONE 100       /* Not an error: an iteration has ended */
#define GF_NOT_READY 101  /* Not an error: nothing arrived within the wait; call again */

/*
 * gf_status_str returns static English text for a status code (for example
 * "invalid argument" for GF_EINVAL), and "unknown status" for any other
 * value. Never NULL; do not free.
 */
GF_API const char *gf_status_str(int status);

/*
 * gf_errmsg returns the message of the last call that failed on the calling
 * thread, or "" if none has. Never NULL. The text is owned by the library
 * and stays valid until the next failing call on this thread; copy it to
 * keep it. Successful calls do not clear it.
 */
GF_API const char *gf_errmsg(void);

/*
 * gf_free releases memory that a graphferry function documents as "free
 * with gf_free". gf_free(NULL) does nothing.
 */
GF_API void gf_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Cancelling a long call                                                   */
/* ------------------------------------------------------------------------ */
/*
 * A gf_cancel token stops long single calls early: bind it to the thread
 * that makes the call (gf_cancel_bind), and cancel it from any other thread
 * or a signal handler (gf_cancel_request). The calls that check it:
 * gf_graph_open of a dataset directory (between its steps, and every 16 MiB
 * of a checksum), gf_random_walk (every step), gf_sample and
 * gf_sample_keyed (every hop), gf_dataset_convert_npy (between files and
 * record batches) and gf_dataset_partition (between rank folders). Such a
 * call returns GF_ECANCELED at its first check after the token is
 * cancelled, its outputs unset and nothing leaked; a writer first removes
 * what it wrote. A call that completes first returns as usual. A token
 * stays cancelled until freed: use a fresh one per call.
 *
 *   gf_cancel *tok; gf_cancel_new(&tok);
 *   gf_cancel_bind(tok);          // on the calling thread
 *   rc = gf_random_walk(...);     // GF_ECANCELED once another thread
 *                                 // called gf_cancel_request(tok)
 *   gf_cancel_bind(NULL);
 *   gf_cancel_free(tok);          // after every call that uses it returned
 *
 * gf_cancel_request and gf_cancel_is_requested are plain C (one atomic
 * store or load: async-signal-safe, never entering the engine).
 */
typedef struct gf_cancel gf_cancel;

/* gf_cancel_new makes a token, not cancelled (*out NULL on failure). */
GF_API int gf_cancel_new(gf_cancel **out);

/* gf_cancel_request cancels token. Returns GF_OK, or GF_EINVAL for a NULL
 * or freed token; it sets no message (it may run in a signal handler). */
GF_API int gf_cancel_request(gf_cancel *token);

/* gf_cancel_is_requested sets *out to 1 if token is cancelled, else 0. */
GF_API int gf_cancel_is_requested(const gf_cancel *token, int32_t *out);

/* gf_cancel_bind makes token the calling thread's (NULL: none); the token
 * must outlive the binding. */
GF_API int gf_cancel_bind(gf_cancel *token);

/* gf_cancel_free frees token (NULL: nothing); unbinds it from the calling
 * thread. No call may be using it. */
GF_API void gf_cancel_free(gf_cancel *token);

/* ------------------------------------------------------------------------ */
/* Arrow C Data Interface                                                   */
/* ------------------------------------------------------------------------ */
/* The standard definitions (https://arrow.apache.org/docs/format/CDataInterface.html). */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  void (*release)(struct ArrowSchema *);
  void *private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  void (*release)(struct ArrowArray *);
  void *private_data;
};
#endif

/* ------------------------------------------------------------------------ */
/* Graphs                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * gf_graph is a graph: topology split into patches, plus named node data.
 * Constructors: gf_graph_from_csc, gf_graph_from_csr, gf_graph_from_coo,
 * gf_graph_from_arrow, gf_graph_open. Must be closed with gf_graph_close.
 * Thread-safety: every function may be called from several threads at once
 * on the same graph (sampling and reading are concurrent; changing node data
 * takes a lock).
 */
typedef struct gf_graph gf_graph;

/* Partition methods for gf_graph_options.partition. */
#define GF_PARTITION_RANGE 0  /* patch p owns ids [p*N/P, (p+1)*N/P) */
#define GF_PARTITION_RANDOM 1 /* each node to a patch drawn from seed */
#define GF_PARTITION_GIVEN 2  /* assignment[v] is the patch of node v */
/* gf_dataset_partition only: linear deterministic greedy, one streaming
   pass in id order, each node to the rank where most of its in-neighbours
   went, weighed by rows and edges (graphs larger than the memory given:
   gf_partition_options.memory_limit_bytes) */
#define GF_PARTITION_LDG 3

/* Flags for gf_graph_options.flags (COO and Arrow input only). */
#define GF_GRAPH_REMOVE_DUPLICATES 1u /* keep the first of equal (src,dst) */
#define GF_GRAPH_REMOVE_SELF_LOOPS 2u /* drop edges v->v */
/* gf_graph_open of a dataset directory only: read every file it lists whole
 * (feat.bin included) and compare its CRC-32C with graphferry.json's; a
 * mismatch is GF_EIO naming the file. Sizes, and the sums of the Arrow
 * tables, are compared at every open. */
#define GF_GRAPH_VERIFY_CHECKSUMS 4u

/* Feature tiers for gf_graph_options.feature_tier (gf_graph_open of a
 * dataset directory). */
#define GF_TIER_AUTO 0   /* by memory_budget: mapped if everything fits, else disk */
#define GF_TIER_MEMORY 1 /* feat.bin memory-mapped, read through the page cache */
#define GF_TIER_DISK 2   /* direct reads (O_DIRECT, io_uring or pread workers)
                            under a CPU cache of rows */

/* CPU cache policies of the disk tier (gf_graph_options.cache_policy). */
#define GF_CACHE_S3FIFO 0 /* S3-FIFO (SOSP'23), the default */
#define GF_CACHE_SIEVE 1  /* SIEVE (NSDI'24) */
#define GF_CACHE_LRU 2    /* least recently used */

/*
 * gf_graph_options configures graph construction. Pass NULL for the
 * defaults (one patch, no renumbering, nothing removed). Zero-initialise it
 * and set struct_size = sizeof(gf_graph_options); fields may be appended in
 * later versions and never move. Accepted struct_size: 44 (0.1.0, the end of
 * flags) to sizeof (72 on LP64 platforms; 48 before memory_budget).
 */
typedef struct gf_graph_options {
  uint32_t struct_size;
  /* Number of patches P (0 or 1: one patch). */
  int32_t num_patches;
  /* GF_PARTITION_RANGE (default), GF_PARTITION_RANDOM or GF_PARTITION_GIVEN. */
  int32_t partition;
  /* Reserved flags word for partition; must be 0. */
  uint32_t reserved;
  /* Seed of GF_PARTITION_RANDOM. */
  uint64_t seed;
  /* GF_PARTITION_GIVEN: int64 [num_nodes] patch ids in [0, P). Borrowed. */
  const DLTensor *assignment;
  /* COO/Arrow: number of nodes; <= 0 means max id + 1. CSC/CSR: ignored. */
  int64_t num_nodes;
  /* GF_GRAPH_REMOVE_* flags (COO/Arrow only; must be 0 otherwise). */
  uint32_t flags;
  /* -- an earlier layout ends here -- */
  /* gf_graph_open of a dataset directory only (must be 0 otherwise):
     memory_budget is the memory in bytes the graph may keep resident (0:
     no budget); with GF_TIER_AUTO it decides whether feat.bin is mapped
     or read from disk under a CPU cache of what the budget leaves
     (gf_graph_memory_plan says what was decided). Opening stays within
     it: a budget below what opening holds (the node columns and, without
     CSC files, the topology's build from edges.arrow) is GF_ENOMEM before
     that is allocated. feature_tier forces the
     tier; cache_bytes the disk tier's CPU cache (0: what the budget leaves,
     none without a budget); cache_policy its eviction policy (GF_CACHE_*).
     Read as 0 from an older struct_size (44, 48). */
  int64_t memory_budget;
  int32_t feature_tier;
  int32_t cache_policy;
  int64_t cache_bytes;
} gf_graph_options;

/*
 * gf_graph_from_csc builds a graph from in-neighbour CSC arrays: the
 * sources of the edges into node v are indices[indptr[v]:indptr[v+1]].
 * @param indptr   int64 [N+1], indptr[0] == 0, non-decreasing. Borrowed.
 * @param indices  int64 [E], each in [0, N). Borrowed.
 * @param edge_ids int64 [E] edge ids, or NULL for 0..E-1. Borrowed.
 * @param options  may be NULL.
 * @param out_graph receives the graph, or NULL on failure.
 * int32 index arrays are accepted and widened.
 * Returns:
 *   GF_OK
 *   GF_EINVAL  a NULL argument, an array not 1-D, indptr empty, not starting
 *              at 0 or decreasing, an index out of range, edge_ids of the
 *              wrong length, invalid options (struct_size, partition,
 *              assignment, num_patches, flags set for CSC/CSR input)
 *   GF_ETYPE   an array that is not int64/int32, not on the CPU, or not
 *              contiguous
 *   GF_ENOMEM  the graph does not fit in memory
 * Must be released with gf_graph_close.
 */
GF_API int gf_graph_from_csc(const DLTensor *indptr, const DLTensor *indices,
                             const DLTensor *edge_ids, const gf_graph_options *options,
                             gf_graph **out_graph);

/*
 * gf_graph_from_csr is gf_graph_from_csc for out-neighbour CSR arrays: the
 * destinations of the edges out of node u are indices[indptr[u]:indptr[u+1]].
 * Edge ids default to CSR positions. Same arguments and return codes as
 * gf_graph_from_csc.
 */
GF_API int gf_graph_from_csr(const DLTensor *indptr, const DLTensor *indices,
                             const DLTensor *edge_ids, const gf_graph_options *options,
                             gf_graph **out_graph);

/*
 * gf_graph_from_coo builds a graph from edge lists src[i] -> dst[i]; edge i
 * gets id i. Duplicates and self-loops are kept unless options->flags asks
 * to remove them.
 * @param src, dst int64 (or int32) [E], non-negative. Borrowed.
 * Returns:
 *   GF_OK
 *   GF_EINVAL  a NULL argument, src and dst of different lengths, a negative
 *              id, an id >= options->num_nodes when that is set, invalid
 *              options (struct_size, partition, flags)
 *   GF_ETYPE   src or dst not int64/int32, not on the CPU, or not contiguous
 *   GF_ENOMEM  the graph does not fit in memory
 * Release with gf_graph_close.
 */
GF_API int gf_graph_from_coo(const DLTensor *src, const DLTensor *dst,
                             const gf_graph_options *options, gf_graph **out_graph);

/*
 * gf_graph_from_arrow builds a graph from an edge table given through the
 * Arrow C Data Interface: a struct array (a record batch) with int64 or
 * int32 columns "src" and "dst" and an optional float "weight" column.
 * Edge i (row i) gets id i.
 * @param schema, array  On GF_OK both have been released by graphferry
 *                       (their release is NULL). On failure they are left
 *                       untouched and the caller still owns them.
 * Returns:
 *   GF_OK
 *   GF_EINVAL  schema or array NULL or already released, a missing "src" or
 *              "dst" column, nulls, columns of different lengths, a negative
 *              id, a weight that does not fit in float32, invalid options
 *   GF_ETYPE   not a struct array, or a column of another Arrow format
 *   GF_ENOMEM  the graph does not fit in memory
 * Release with gf_graph_close.
 */
GF_API int gf_graph_from_arrow(struct ArrowSchema *schema, struct ArrowArray *array,
                               const gf_graph_options *options, gf_graph **out_graph);

/*
 * gf_graph_open opens a graph stored on disk. path is either a graphferry
 * dataset directory (graphferry.json, edges.arrow, nodes.arrow, feat.bin;
 * its node columns become node data, e.g. "feat", "label", "train_mask") or
 * an Arrow IPC (Feather v2) file holding an edge table as in
 * gf_graph_from_arrow. Files are read through memory mapping.
 * Returns:
 *   GF_OK
 *   GF_EINVAL  path NULL or empty, invalid options (flags or num_nodes with a
 *              dataset directory), files whose contents are malformed
 *   GF_EIO     path or a file of the dataset is missing, unreadable or
 *              damaged
 *   GF_ENOMEM  the graph does not fit in memory
 * Release with gf_graph_close.
 */
GF_API int gf_graph_open(const char *path, const gf_graph_options *options,
                         gf_graph **out_graph);

/*
 * gf_memory_plan is what gf_graph_open decided about memory (see
 * gf_graph_options.memory_budget): sizes in bytes and where the features
 * are read from. Set struct_size = sizeof(gf_memory_plan) before the call.
 * Accepted struct_size (LP64): 96 to sizeof (96).
 */
typedef struct gf_memory_plan {
  uint32_t struct_size;
  /* GF_TIER_MEMORY or GF_TIER_DISK (GF_TIER_MEMORY for a graph not opened
     from a dataset directory, whose sizes below are 0). */
  int32_t feature_tier;
  int64_t budget;
  int64_t num_nodes;
  int64_t num_edges;
  /* Resident: the CSC topology, the other node columns (labels, masks),
     and the loaders' working memory (per sampler worker a node table and
     workspace). */
  int64_t topology_bytes;
  int64_t node_column_bytes;
  int64_t sampling_bytes;
  /* The feature matrix (feat.bin). */
  int64_t feature_bytes;
  /* The disk tier's CPU cache and its policy (GF_CACHE_*). */
  int64_t cache_bytes;
  int32_t cache_policy;
  /* Disk tier: non-zero when reads bypass the page cache (O_DIRECT), and
     when they go through io_uring (else a pool of pread workers). */
  int32_t direct;
  int32_t io_uring;
} gf_memory_plan;

/*
 * gf_graph_memory_plan fills *out with what gf_graph_open decided.
 * Returns GF_OK, GF_EBADHANDLE (graph), GF_EINVAL (out NULL or a bad
 * struct_size).
 */
GF_API int gf_graph_memory_plan(const gf_graph *graph, gf_memory_plan *out);

/*
 * gf_graph_memory_report sets *out_report to the same plan in words, one
 * fact a line (the budget, the counts, what is resident, where features are
 * read from and why). Free with gf_free.
 * Returns GF_OK, GF_EBADHANDLE (graph), GF_EINVAL (out_report NULL).
 */
GF_API int gf_graph_memory_report(const gf_graph *graph, char **out_report);

/*
 * gf_graph_close releases a graph. Loaders and batches made from it stay
 * valid: the graph's memory is released when the last of them is closed
 * (as sqlite3_close_v2 does). gf_graph_close(NULL) does nothing.
 *
 * It may be called while other threads are inside calls on the same graph
 * (gf_sample, gf_random_walk, gf_graph_get_node_data, ...): every call holds
 * a reference for its duration, so memory in use is never freed under it.
 * Such a call either completes normally or, if the close came first, fails
 * with GF_EBADHANDLE ("graph was closed"); calls made after the close get
 * GF_EBADHANDLE (handle values are never reused).
 */
GF_API void gf_graph_close(gf_graph *graph);

/*
 * gf_graph_num_nodes, gf_graph_num_edges and gf_graph_num_patches set *out
 * to the graph's number of nodes, edges and patches.
 * Returns GF_OK, GF_EBADHANDLE (graph), GF_EINVAL (out is NULL).
 */
GF_API int gf_graph_num_nodes(const gf_graph *graph, int64_t *out);
GF_API int gf_graph_num_edges(const gf_graph *graph, int64_t *out);
GF_API int gf_graph_num_patches(const gf_graph *graph, int32_t *out);

/*
 * gf_graph_set_node_data stores tensor under name as node data: row v is
 * node v (original ids), so shape[0] must equal the number of nodes.
 * Accepted dtypes: float32, float16, bfloat16, float64, int64, int32, int8,
 * uint8, bool; floating features keep their type.
 * @param name    non-empty NUL-terminated name; replaces an existing entry.
 * @param tensor  On GF_OK graphferry owns the tensor and calls its deleter
 *                when it no longer needs the memory (possibly at once, after
 *                copying it when the graph is renumbered). On failure the
 *                caller still owns it.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      name NULL or empty, tensor NULL, no dimensions, or
 *                  shape[0] other than the number of nodes
 *   GF_ETYPE       a dtype not listed above, not on the CPU, or not
 *                  contiguous
 *   GF_ESTATE      name exists and an open loader reads it
 *   GF_EBADHANDLE  graph
 *   GF_ENOMEM      the permuted copy does not fit in memory
 */
GF_API int gf_graph_set_node_data(gf_graph *graph, const char *name,
                                  DLManagedTensor *tensor);

/*
 * gf_graph_set_node_data_versioned is gf_graph_set_node_data for a DLPack
 * 1.x tensor, with the same ownership rule: on GF_OK graphferry calls
 * tensor->deleter when done; on failure the caller still owns it (and
 * graphferry has read nothing but its version if the major version is not
 * 1). Its flags are not needed: graphferry only reads the memory.
 * Returns the codes of gf_graph_set_node_data, and GF_ETYPE for a tensor
 * whose version.major is not DLPACK_MAJOR_VERSION (1).
 */
GF_API int gf_graph_set_node_data_versioned(gf_graph *graph, const char *name,
                                            DLManagedTensorVersioned *tensor);

/*
 * gf_graph_get_node_data sets *out_tensor to a copy of the node data stored
 * under name, rows in original node order (NULL on failure). The caller
 * owns the tensor and must call its deleter.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      name NULL, empty or unknown; out_tensor NULL
 *   GF_EBADHANDLE  graph
 *   GF_EIO         the dataset file holding the data can no longer be read
 *   GF_ENOMEM      the copy does not fit in memory
 */
GF_API int gf_graph_get_node_data(gf_graph *graph, const char *name,
                                  DLManagedTensor **out_tensor);

/*
 * gf_graph_get_node_data_versioned is gf_graph_get_node_data returning a
 * DLPack 1.x tensor (version {1, 1}, flags DLPACK_FLAG_BITMASK_IS_COPIED).
 * Same return codes.
 */
GF_API int gf_graph_get_node_data_versioned(gf_graph *graph, const char *name,
                                            DLManagedTensorVersioned **out_tensor);

/*
 * gf_graph_node_data_names sets *out_names to the names of the node data,
 * sorted, separated by '\n' (an empty string if there are none). Free with
 * gf_free.
 * Returns GF_OK, GF_EBADHANDLE (graph), GF_EINVAL (out_names is NULL).
 */
GF_API int gf_graph_node_data_names(const gf_graph *graph, char **out_names);

/*
 * gf_graph_set_edge_data stores tensor under name as edge data (DGL's
 * g.edata, PyG's edge_attr): row e is the edge whose original id is e, so
 * shape[0] must be the number of edge ids (the largest edge id + 1: the
 * number of edges when the graph was built with implicit ids). Edge
 * loaders gather it over every batch's sampled edges
 * (gf_edge_loader_options.edge_feature_names, gf_batch_take_edge_data).
 * Dtypes as gf_graph_set_node_data. Edge ids are never renumbered, so the
 * memory is kept as it is, never copied.
 * @param name    non-empty NUL-terminated name; replaces an existing entry.
 * @param tensor  On GF_OK graphferry owns the tensor and calls its deleter
 *                when the entry is replaced or the graph's memory released.
 *                On failure the caller still owns it.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      name NULL or empty, tensor NULL, no dimensions, or
 *                  shape[0] other than the number of edge ids
 *   GF_ETYPE       a dtype not accepted, not on the CPU, or not contiguous
 *   GF_ESTATE      name exists and an open loader reads it
 *   GF_EBADHANDLE  graph
 */
GF_API int gf_graph_set_edge_data(gf_graph *graph, const char *name,
                                  DLManagedTensor *tensor);

/*
 * gf_graph_set_edge_weights sets the weight of every edge, for biased
 * sampling (gf_sample_options.biased): weights[e] is the weight of the edge
 * whose id is e, so weights must have more entries than the largest edge
 * id (normally E). Weights must be finite and >= 0; an edge of weight 0 is
 * never sampled when sampling is biased. Replaces earlier weights.
 * @param weights float32 or float64 [>= max edge id + 1]. Borrowed (copied).
 * Returns:
 *   GF_OK
 *   GF_EINVAL      weights NULL, not 1-D, too short, or holding a negative or
 *                  non-finite weight (or one beyond float32's range)
 *   GF_ETYPE       weights not float32/float64, not on the CPU, or not
 *                  contiguous
 *   GF_ESTATE      loaders are open on the graph: close them first
 *   GF_EBADHANDLE  graph
 */
GF_API int gf_graph_set_edge_weights(gf_graph *graph, const DLTensor *weights);

/*
 * gf_graph_set_source_weights sets per-node weights for biased sampling:
 * every edge u->v gets the weight weights[u] of its source, stored beside
 * the edge (as DSP does), so that the patch owning v samples locally with
 * the probability w(u) / (sum of w over v's in-neighbours).
 * @param weights float32 or float64 [N], indexed by original node id.
 *                Borrowed (copied).
 * Same return codes as gf_graph_set_edge_weights (too short: fewer than N
 * entries); replaces earlier weights.
 */
GF_API int gf_graph_set_source_weights(gf_graph *graph, const DLTensor *weights);

/* ---- Typed (heterogeneous) graphs and temporal sampling ------------------ */
/*
 * A typed graph is ONE graph over a global id space (DGL's to_homogeneous
 * numbering): node type t owns the consecutive original node ids
 * [node_offsets[t], node_offsets[t+1]); relation r, from nodes of type
 * relation_src_type[r] to nodes of type relation_dst_type[r], owns the
 * consecutive edge ids [edge_offsets[r], edge_offsets[r+1]); and every
 * node's in-edges are grouped by relation in increasing relation order. An
 * edge list given relation by relation (edge id = position) builds exactly
 * that. The engine stores nothing per edge: the type of a node or edge is
 * an offset lookup on its original id, so partitioning, int32 storage,
 * weights, exclusion and reproducibility are unchanged. The types have
 * names, held by the engine with them: a dataset's graphferry.json gives
 * them (gf_graph_open), gf_graph_set_types_json sets types with names,
 * types set without names (gf_graph_set_types) are named by their index
 * ("0", "1", ...), and gf_graph_types_json reads them.
 */

/*
 * gf_graph_set_types makes graph typed, replacing earlier types.
 * @param num_node_types T >= 1; node_offsets int64 [T+1]: 0, ..., N.
 * @param num_relations  R >= 1; edge_offsets int64 [R+1]: 0, ..., E.
 * @param relation_src_type, relation_dst_type int32 [R], in [0, T).
 * All arrays borrowed (copied).
 * Returns:
 *   GF_OK
 *   GF_EINVAL      a NULL array; T or R out of range; offsets not starting
 *                  at 0, decreasing, or not ending at N (E); a relation type
 *                  out of range; an edge id >= E (a typed graph's edge ids
 *                  are 0..E-1); an edge whose end points' types are not its
 *                  relation's; an in-edge list not grouped by relation (the
 *                  message names the first bad node and edge)
 *   GF_ESTATE      loaders are open on the graph: close them first
 *   GF_EBADHANDLE  graph
 */
GF_API int gf_graph_set_types(gf_graph *graph, int32_t num_node_types, const int64_t *node_offsets,
                              int32_t num_relations, const int64_t *edge_offsets,
                              const int32_t *relation_src_type, const int32_t *relation_dst_type);

/*
 * gf_graph_num_types sets *num_node_types and *num_relations (0 and 0 for an
 * untyped graph).
 * Returns GF_OK, GF_EINVAL (an out pointer NULL), GF_EBADHANDLE (graph).
 */
GF_API int gf_graph_num_types(const gf_graph *graph, int32_t *num_node_types, int32_t *num_relations);

/*
 * gf_graph_set_types_json makes graph typed with named types, replacing
 * earlier types: types_json is {"node_types": [{"name", "num_nodes"},
 * ...], "edge_types": [{"src", "rel", "dst", "num_edges"}, ...]} (the form
 * of a typed dataset's graphferry.json and of gf_graph_types_json), in
 * type (global id) order: the counts give the offsets of
 * gf_graph_set_types, src and dst name the node types of each relation.
 * Per-type node data "<type>/<name>" is that of the node type named
 * <type> (see "Typed (heterogeneous) graphs from data"), so the types are
 * set before any such data. Borrowed (read during the call).
 * Returns:
 *   GF_OK
 *   GF_EINVAL      types_json NULL, empty or malformed; a name empty or
 *                  holding a character it may not ('/' in a node type,
 *                  newline, NUL); a node type or a (src, rel, dst) triple
 *                  named twice; src or dst not a node type; counts that do
 *                  not fit the graph (as gf_graph_set_types; the message
 *                  names the field)
 *   GF_ESTATE      loaders are open on the graph, or per-type node data is
 *                  held (it is keyed by the names)
 *   GF_EBADHANDLE  graph
 */
GF_API int gf_graph_set_types_json(gf_graph *graph, const char *types_json);

/*
 * gf_graph_types_json sets *out_json to the graph's types as JSON, in a
 * string the caller frees with gf_free: {"node_types": [{"name",
 * "num_nodes"}, ...], "edge_types": [{"src", "rel", "dst", "num_edges"},
 * ...]}, in type (global id) order, the form of a typed dataset's
 * graphferry.json; both lists empty for an untyped graph.
 * Returns GF_OK, GF_EINVAL (out_json NULL), GF_EBADHANDLE (graph).
 */
GF_API int gf_graph_types_json(const gf_graph *graph, char **out_json);

/*
 * gf_graph_set_node_time sets the time of every node for temporal sampling
 * (gf_sample_options.temporal = GF_TEMPORAL_NODE).
 * @param time int64 [N], by original node id. Borrowed (copied).
 * Returns:
 *   GF_OK
 *   GF_EINVAL      time NULL, not 1-D, or not N entries
 *   GF_ETYPE       time not int64, not on the CPU, or not contiguous
 *   GF_ESTATE      loaders are open on the graph: close them first
 *   GF_EBADHANDLE  graph
 */
GF_API int gf_graph_set_node_time(gf_graph *graph, const DLTensor *time);

/*
 * gf_graph_set_edge_time sets the time of every edge for temporal sampling
 * (GF_TEMPORAL_EDGE).
 * @param time int64 [> largest edge id], by edge id. Borrowed (copied).
 * Same return codes as gf_graph_set_node_time (too short: not more entries
 * than the largest edge id).
 */
GF_API int gf_graph_set_edge_time(gf_graph *graph, const DLTensor *time);

/*
 * The output folder of the tools that write one (gf_dataset_convert_npy,
 * gf_dataset_generate, gf_dataset_partition) must be empty or new, and
 * neither their source folder, inside it nor above it: outputs never mix
 * with other files or with their inputs. Options of the tools that write a
 * dataset (gf_dataset_convert_npy_into, gf_dataset_generate_into): set
 * struct_size to sizeof(*options); fields are only ever appended, and a
 * zero field takes its default; NULL: every default.
 */
typedef struct gf_output_options {
  uint32_t struct_size;
  /* Nonzero: write into a dst_dir that is not empty, or is the source
     folder, inside it or above it; what a dataset writer writes there
     (graphferry.json and every file it lists, edges.arrow, nodes.arrow,
     feat.bin and its page sums, the CSC files) is replaced, nothing else.
     0 (default): such a dst_dir is refused (GF_EINVAL, naming it). */
  int32_t overwrite;
} gf_output_options;

/*
 * gf_dataset_convert_npy converts a dataset in the .npy layout (indptr.npy
 * and indices.npy of the in-neighbour CSR, optional feat.npy, label.npy,
 * train_idx/val_idx/test_idx.npy, meta.json) found in src_dir into a
 * graphferry dataset directory dst_dir (created if missing; empty or new,
 * and neither src_dir, inside it nor above it: see gf_output_options).
 * gf_dataset_convert_npy_into is the same with options (NULL: the
 * defaults, gf_dataset_convert_npy).
 * Returns:
 *   GF_OK
 *   GF_EINVAL  src_dir or dst_dir NULL or empty, malformed arrays or
 *              meta.json, dst_dir not empty or src_dir, inside it or above
 *              it (without options->overwrite), bad options->struct_size
 *   GF_EIO     a file missing or unreadable, or dst_dir not writable
 *   GF_ENOMEM  the dataset does not fit in memory
 */
GF_API int gf_dataset_convert_npy(const char *src_dir, const char *dst_dir);
GF_API int gf_dataset_convert_npy_into(const char *src_dir, const char *dst_dir,
                                       const gf_output_options *options);

/*
 * gf_dataset_generate writes a synthetic graphferry dataset directory: an
 * R-MAT (Kronecker) power-law graph with the Graph500 probabilities, stored
 * in both directions, with random features, learnable labels and a
 * train/val/test split, generated in parallel and reproducible from seed.
 * @param preset  "tiny" (2^10 nodes), "small" (2^16), "products-like"
 *                (2,449,029 nodes, ~120M edges, 100 float32 features, 47
 *                classes) or "papers-like" (4M nodes, ~100M edges, 128
 *                features, 172 classes); typed (heterogeneous, ogbn-mag's
 *                node types and relations with rev_ reverses, features per
 *                type, labels and years on papers, node and edge
 *                timestamps): "hetero-tiny" (~950 nodes, for tests),
 *                "hetero-small" (~121K nodes, ~2.3M edges) or "mag-like"
 *                (ogbn-mag's counts: 1.94M nodes, ~40M edges); written in
 *                bounded memory, the topology as CSC files that
 *                gf_graph_open maps (no edges.arrow): "papers100M-like"
 *                (ogbn-papers100M's shape: 111M nodes, ~1.6B edges, 128
 *                float32 features, 57 GB) or "disk-small" (8M nodes, ~32M
 *                edges, 4.1 GB of features).
 * @param dst_dir created if missing; empty or new (see gf_output_options).
 * @param seed    0 keeps the preset's own seed.
 * @param num_threads <= 0: the default (see Threads); the output does not depend on it.
 * gf_dataset_generate_into is the same with options (NULL: the defaults,
 * gf_dataset_generate).
 * Returns:
 *   GF_OK
 *   GF_EINVAL  preset or dst_dir NULL or empty, an unknown preset, dst_dir
 *              not empty (without options->overwrite), bad
 *              options->struct_size
 *   GF_EIO     dst_dir cannot be created or written
 *   GF_ENOMEM  the graph does not fit in memory
 */
GF_API int gf_dataset_generate(const char *preset, const char *dst_dir, uint64_t seed,
                               int32_t num_threads);
GF_API int gf_dataset_generate_into(const char *preset, const char *dst_dir, uint64_t seed,
                                    int32_t num_threads, const gf_output_options *options);

/*
 * gf_dataset_write_csc adds the CSC files of the graphferry dataset in dir
 * (csc_indptr.bin, csc_indices.bin, csc_edge_ids.bin when edge ids are not
 * CSC positions) and records them in its graphferry.json: gf_graph_open then
 * maps them read-only instead of building the graph from edges.arrow, so a
 * topology larger than memory stays usable (one patch, range partitioning;
 * gf_graph_memory_plan reports it as mapped). Writing them reads the dataset
 * once the usual way (the memory of a normal open).
 * Returns:
 *   GF_OK
 *   GF_EINVAL  dir NULL or empty, or a dataset that cannot have them (typed,
 *              weighted, or with CSC files already)
 *   GF_EIO     dir is not a readable dataset, or cannot be written
 *   GF_ENOMEM  the graph does not fit in memory to be written
 */
GF_API int gf_dataset_write_csc(const char *dir);

/* ---------------------------------------------------------------------------
 * Typed (heterogeneous) graphs from data
 *
 * A typed graph numbers its nodes type by type and its edges relation by
 * relation: node type t owns the global node ids [node_offsets[t],
 * node_offsets[t+1]) and relation r the global edge ids [edge_offsets[r],
 * edge_offsets[r+1]), every edge of r going from a node of
 * relation_src_type[r] to one of relation_dst_type[r] (see
 * gf_graph_set_types). The constructors below take type-local ids and build
 * that numbering; types without names in the input are named by their
 * index (gf_graph_set_types_json names them).
 *
 * A typed dataset directory (gf_dataset_generate's "hetero-*" presets)
 * opens with gf_graph_open, which sets its types: its graphferry.json lists
 * "node_types" ([{"name", "num_nodes"}], in global id order) and
 * "edge_types" ([{"src", "rel", "dst", "num_edges"}], in edge id order);
 * node data of one node type is named "<type>/<name>" ("paper/feat") and has
 * that type's node count of rows (read it with gf_graph_get_node_data;
 * loaders take such names among their feature and label names and gather,
 * per batch, one row per batch node of the type (labels: per seed of the
 * type), in the order of the type's nodes in the batch's typed view: the
 * rows of their type-local ids; on any typed graph, data set with
 * gf_graph_set_node_data under "<type>/<name>", <type> one of its node
 * type names exactly, with that type's node count of rows, is such data:
 * the type is named, never inferred from a row count); the graph's node
 * times (gf_graph_set_node_time) are set from the int64 node column "time"
 * (by global node id, also kept as node data) and its edge times
 * (gf_graph_set_edge_time) from the dataset's edge_data "time" (int64, by
 * edge id), when present.
 * ------------------------------------------------------------------------- */

/*
 * gf_graph_from_typed_coo builds a typed graph from one edge list per
 * relation, in type-local ids: edge i of relation r goes from node src[r][i]
 * of type relation_src_type[r] to node dst[r][i] of type
 * relation_dst_type[r], and gets the global edge id edge_offsets[r] + i
 * (edge_offsets[r] = the edge counts of the relations before r). Node j of
 * type t gets the global id node_offsets[t] + j. The graph's types are set
 * (gf_graph_num_types reports them).
 * @param num_node_types     T, in [1, 2^20].
 * @param node_counts        int64 [T], each >= 0. Borrowed.
 * @param num_relations      R, in [1, 2^20].
 * @param relation_src_type  int32 [R], each in [0, T). Borrowed.
 * @param relation_dst_type  int32 [R], each in [0, T). Borrowed.
 * @param src, dst           R tensors each: int64 or int32, 1-D, the same
 *                           length per relation, ids in [0, node_counts of
 *                           the relation's type). Borrowed.
 * @param options   may be NULL; num_nodes must be 0 or the sum of
 *                  node_counts; the GF_GRAPH_REMOVE_* flags are refused
 *                  (removing edges would renumber the relations).
 * @param out_graph receives the graph, or NULL on failure.
 * Returns:
 *   GF_OK
 *   GF_EINVAL  a NULL argument, a count or type index out of range, src[r]
 *              and dst[r] of different lengths, an id out of its type's
 *              range, invalid options
 *   GF_ETYPE   an edge list not int64/int32, not on the CPU or not contiguous
 *   GF_ENOMEM  the graph does not fit in memory
 * Release with gf_graph_close.
 */
GF_API int gf_graph_from_typed_coo(int32_t num_node_types, const int64_t *node_counts,
                                   int32_t num_relations, const int32_t *relation_src_type,
                                   const int32_t *relation_dst_type, const DLTensor *const *src,
                                   const DLTensor *const *dst, const gf_graph_options *options,
                                   gf_graph **out_graph);

/*
 * gf_graph_open_typed_arrow opens a typed edge table: an Arrow IPC (Feather
 * v2) file with int64/int32 columns "src" and "dst" (type-local ids), an
 * optional float "weight", and a column "etype" giving each row's relation,
 * either as an integer (int8 to int64) relation index or as a
 * dictionary-encoded string naming it "src:rel:dst" or by the bare rel name
 * when only one relation has it. Rows may come in any order: the edges are
 * numbered relation by relation, in file order within a relation.
 * gf_graph_open refuses a file with "graphferry.types" metadata (GF_EINVAL):
 * its ids are type-local, so it is opened here or not at all.
 * @param types_json  the node types and relations as JSON,
 *                    {"node_types": [{"name": "paper", "num_nodes": 100},
 *                    ...], "edge_types": [{"src": "author", "rel": "writes",
 *                    "dst": "paper"}, ...]} (the relations in edge id order;
 *                    a "num_edges" given must match the table). NULL: the
 *                    file's schema metadata "graphferry.types" holds it.
 * @param options     may be NULL; flags and num_nodes must be 0.
 * Returns:
 *   GF_OK
 *   GF_EINVAL  path NULL or empty, types_json empty or malformed (the
 *              message names the field), no metadata and no types_json, an
 *              unknown relation name or index, an id out of its type's range,
 *              invalid options
 *   GF_EIO     the file is missing, unreadable or damaged
 *   GF_ENOMEM  the graph does not fit in memory
 * Release with gf_graph_close.
 */
GF_API int gf_graph_open_typed_arrow(const char *path, const char *types_json,
                                     const gf_graph_options *options, gf_graph **out_graph);

/* ------------------------------------------------------------------------ */
/* Sampling                                                                 */
/* ------------------------------------------------------------------------ */

/* Values of gf_sample_options.frontier. */
/*
 * GF_FRONTIER_ALL: hop h samples the neighbours of every node gathered so
 * far, so that layer h's destination nodes are all of layer h-1's nodes (the
 * shape of DGL's message-flow blocks).
 */
#define GF_FRONTIER_ALL 0
/*
 * GF_FRONTIER_NEW: hop h samples only the nodes first reached in hop h-1
 * (hop 0 samples the seeds), as torch_geometric's NeighborLoader does.
 */
#define GF_FRONTIER_NEW 1

/* Values of gf_sample_options.scheme. */
/*
 * GF_SCHEME_NODE_WISE: every frontier node samples up to fanouts[h] of its
 * neighbours (fan-out -1: all of them).
 */
#define GF_SCHEME_NODE_WISE 0
/*
 * GF_SCHEME_LAYER_WISE (DSP Eq. 2): hop h draws fanouts[h] times, with
 * replacement, a frontier node u with probability proportional to its total
 * in-edge weight (its in-degree when not biased), then each drawn node
 * samples as many neighbours as it was drawn (distinct ones, capped at its
 * degree, unless replace is set). With layer_without_replacement, hop h
 * instead draws min(fanouts[h], frontier size) distinct frontier nodes with
 * probability proportional to the same weights, each sampling one
 * neighbour. Every frontier node keeps its (possibly empty) row.
 */
#define GF_SCHEME_LAYER_WISE 1
/*
 * GF_SCHEME_LABOR: LABOR-0 layer-neighbour sampling (DGL's LaborSampler with
 * importance_sampling=0). In hop h every candidate neighbour t draws one
 * uniform variate r_t in [0, 1), the same for every destination of the
 * batch, and destination v with d_v candidates keeps t iff
 * r_t < fanouts[h] / d_v (all of them when d_v <= fanouts[h]; -1: all; 0:
 * none): each neighbour is kept with probability min(1, fanouts[h] / d_v),
 * so v keeps fanouts[h] neighbours in expectation, and destinations sharing
 * neighbours keep the same ones. r_t depends on (seed, batch, hop, t's
 * original id) only; with layer_dependency every hop uses hop 0's
 * variates. Not valid with replace or biased (GF_EINVAL).
 */
#define GF_SCHEME_LABOR 2

/*
 * gf_sample_options configures neighbour sampling. Zero-initialise it and
 * set struct_size = sizeof(gf_sample_options). Accepted struct_size (LP64):
 * 36 to sizeof (104). 0.1.0's first layout ended with num_threads (36 bytes,
 * sizeof 40); a struct of that size is read up to num_threads and the
 * fields from scheme on take their defaults. The layout ending with
 * layer_dependency (sizeof 64) is read up to layer_dependency.
 */
typedef struct gf_sample_options {
  uint32_t struct_size;
  /* Number of hops L (> 0) and the fan-out of each, starting from the seeds:
     the number of neighbours each frontier node samples in that hop; -1
     takes all neighbours; 0 takes none (the hop's block has its dst nodes,
     as its src nodes too, and no edge: DGL's fan-out 0). Values below -1
     are invalid. Borrowed. L = 0 (zero hops: fanouts and relation_fanouts
     may be NULL) is valid with GF_FRONTIER_NEW only: a batch is its seeds
     alone, with no block (gf_batch_num_hops: 0; PyG's num_neighbors=[]);
     with GF_FRONTIER_ALL (DGL's blocks, one per layer) it is GF_EINVAL. */
  int32_t num_hops;
  const int32_t *fanouts;
  /* Non-zero: sample with replacement. Default: uniform without. */
  int32_t replace;
  /* GF_FRONTIER_ALL or GF_FRONTIER_NEW. */
  int32_t frontier;
  /* Seed of the random streams; equal seeds give equal samples. */
  uint64_t seed;
  /* Worker threads per sampling step; <= 0: the default (see Threads). */
  int32_t num_threads;
  /* -- an earlier layout ends here -- */
  /* GF_SCHEME_NODE_WISE (0, the default), GF_SCHEME_LAYER_WISE or
     GF_SCHEME_LABOR. */
  int32_t scheme;
  /* Non-zero: take neighbour u of v with probability w(u->v) / (sum of the
     weights of v's in-edges), with the weights of gf_graph_set_edge_weights;
     without replacement by exponential keys. Edges of weight 0 are never
     taken. */
  int32_t biased;
  /* GF_SCHEME_LAYER_WISE only: draw distinct frontier nodes (see below). */
  int32_t layer_without_replacement;
  /* int64 (or int32) [k] edge ids that are never sampled, as if absent (for
     link-prediction loaders), or NULL. Any order; ids not in the graph are
     ignored. Borrowed (copied). */
  const DLTensor *exclude_edges;
  /* -- an earlier layout ends here -- */
  /* GF_SCHEME_LABOR only: non-zero gives every hop the same variates (DGL's
     layer_dependency=True). */
  int32_t layer_dependency;
  /* -- an earlier layout ends here -- */
  /* Fields below are read as 0 / NULL from a struct_size that ends before
     them (an older header's). */
  /* Per-relation fan-outs of a typed graph (gf_graph_set_types): when
     relation_fanouts is non-NULL it holds num_hops * num_relations values,
     hop-major ([h * num_relations + r]), num_relations must equal the
     graph's, and fanouts may be NULL (it is ignored). A frontier node v
     samples, for every relation r into v's type, relation_fanouts[h*R + r]
     of its in-edges of relation r (-1: all, 0: none), each relation from a
     random stream of its own; v's sampled edges are the relations' in
     relation order. Valid with GF_SCHEME_NODE_WISE (biased, replace,
     exclude_edges apply per relation) and GF_SCHEME_LABOR (per relation, the
     variates shared as usual); not with GF_SCHEME_LAYER_WISE. With NULL
     relation_fanouts a typed graph samples as an untyped one. Borrowed. */
  int32_t num_relations;
  const int32_t *relation_fanouts;
  /* Non-zero: every seed is sampled as a subgraph of its own (PyG's
     disjoint=True); seeds may repeat; needs GF_FRONTIER_NEW and is not valid
     with GF_SCHEME_LAYER_WISE. The batch's nodes come hop by hop, and within
     a hop seed by seed; GF_FIELD_BATCH gives each node's seed position. */
  int32_t disjoint;
  /* GF_TEMPORAL_NONE (0), GF_TEMPORAL_NODE or GF_TEMPORAL_EDGE: neighbour u
     (edge e) of a node of seed i's subgraph is a candidate iff
     node_time[u] (edge_time[e]) <= seed_times[i]. Needs disjoint and the
     graph's times (gf_graph_set_node_time / gf_graph_set_edge_time). */
  int32_t temporal;
  /* GF_TEMPORAL_UNIFORM (0): sample among the candidates as usual;
     GF_TEMPORAL_LAST: take the fan-out candidates with the largest times
     (ties: the later in-edge), in in-edge order; node-wise, without replace
     or biased only. */
  int32_t temporal_strategy;
  /* int64 [B] for gf_sample: one time per seed; required iff temporal != 0
     (loaders take theirs from gf_loader_options.seed_times and ignore this).
     Borrowed (copied). */
  const DLTensor *seed_times;
  /* -- an earlier layout ends here -- */
  /* gf_sample and gf_sample_keyed only: the memory of the batch's tensors
     (see gf_allocator; copied for the call, its blocks freed through it
     when the batch's tensors are), or NULL for the library's own. A block
     it does not give fails the call with GF_ENOMEM naming the host
     allocator, every block already taken freed. Loaders take theirs from
     gf_loader_options.allocator and refuse this one (GF_EINVAL). A
     struct_size of 96 (the layout before it) reads it as NULL. */
  const struct gf_allocator *allocator;
} gf_sample_options;

/* Values of gf_sample_options.temporal and .temporal_strategy. */
#define GF_TEMPORAL_NONE 0
#define GF_TEMPORAL_NODE 1
#define GF_TEMPORAL_EDGE 2
#define GF_TEMPORAL_UNIFORM 0
#define GF_TEMPORAL_LAST 1

/*
 * gf_batch is one sampled mini-batch: the nodes of a multi-hop neighbourhood
 * (seeds first), one CSC block per hop, and gathered node data. Produced by
 * gf_sample and gf_loader_next. Must be released with gf_batch_close.
 * Thread-safety: use a batch from one thread at a time.
 */
typedef struct gf_batch gf_batch;

/*
 * gf_sample samples the multi-hop neighbourhood of seeds, synchronously.
 * @param seeds   int64 [B] distinct original node ids (they may repeat with
 *                options->disjoint). Borrowed.
 * @param options required.
 * @param out_batch receives the batch (no node data), NULL on failure.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      seeds, options or out_batch NULL; options invalid
 *                  (struct_size, num_hops, a fan-out below -1, frontier,
 *                  scheme, biased without edge weights); a seed out of range
 *                  or repeated
 *   GF_ETYPE       seeds or options->exclude_edges not int64/int32, not on
 *                  the CPU, or not contiguous
 *   GF_EBADHANDLE  graph
 *   GF_EIO         a dataset file behind the graph can no longer be read
 *   GF_ENOMEM      the batch does not fit in memory
 */
GF_API int gf_sample(gf_graph *graph, const DLTensor *seeds,
                     const gf_sample_options *options, gf_batch **out_batch);

/*
 * gf_sample_keyed is gf_sample with the batch key of the sample's random
 * streams, which the library derives from (options->seed, batch_key):
 * gf_sample is batch_key 0, and a loader's batch i of epoch e uses key
 * (e << 32) | i, so gf_sample_keyed with that key and that batch's seeds
 * gives that batch's sample. A host that samples one batch per call (a
 * framework's sampler called per batch) passes a key per call, so that the
 * calls have streams of their own without deriving seeds itself. Same
 * arguments and return codes as gf_sample.
 */
GF_API int gf_sample_keyed(gf_graph *graph, const DLTensor *seeds, const gf_sample_options *options,
                           uint64_t batch_key, gf_batch **out_batch);

/* Fields of a batch for gf_batch_take. All are int64 tensors. */
/* All sampled nodes, original ids, seeds first then each hop's new nodes. */
#define GF_FIELD_NODES 0
/* [L+1]: number of seeds, then the number of nodes first reached per hop. */
#define GF_FIELD_HOP_COUNTS 1
/* [B]: the seeds, original ids, in batch order. */
#define GF_FIELD_SEEDS 2
/* [B]: position of each seed in the seeds array given to the loader. */
#define GF_FIELD_INPUT_INDEX 3
/* Hop `layer`: [num_dst+1] CSC offsets over the block's destination nodes. */
#define GF_FIELD_INDPTR 4
/* Hop `layer`: [num_edges] source of each edge, as a position in NODES. */
#define GF_FIELD_INDICES 5
/* Hop `layer`: [num_edges] original edge ids. */
#define GF_FIELD_EDGE_IDS 6
/* Disjoint batches only: [num nodes], the seed position (in the batch) of
   the subgraph each node of NODES belongs to. GF_EINVAL for other batches. */
#define GF_FIELD_BATCH 7
/*
 * Typed views: batches of a typed graph (gf_graph_set_types) only, any
 * options; GF_EINVAL for other batches. They split the batch by node type
 * and relation, as heterogeneous blocks take it, and are computed with the
 * batch (by a loader's sampler threads). T node types, R relations, L hops.
 * A node's "rank" is its position among the batch's nodes of its type (in
 * GF_FIELD_TYPED_NODES order within the type).
 */
/* [n]: the nodes of NODES grouped by type (type order), each type's in
   NODES order; type-local ids (original id - node_offsets[type]). */
#define GF_FIELD_TYPED_NODES 8
/* [n]: position in NODES of each entry of GF_FIELD_TYPED_NODES. */
#define GF_FIELD_TYPED_ORDER 9
/* [T+1]: where each type's nodes start in GF_FIELD_TYPED_NODES. */
#define GF_FIELD_TYPED_NODE_OFFSETS 10
/* [T*(L+1)], row-major by type: the nodes of type t first reached at level
   l (level 0 the seeds), as GF_FIELD_HOP_COUNTS per type. */
#define GF_FIELD_TYPED_HOP_COUNTS 11
/* Hop `layer`: [3*T]: the block's destination count of each type, then
   its source count of each type, then the rank of each type's first block
   destination (0 unless the block's dst_offset is non-zero). */
#define GF_FIELD_TYPED_BLOCK_SHAPE 12
/* Hop `layer`: [R+1]: where each relation's edges start in the hop's
   GF_FIELD_TYPED_SRC, _DST and _EDGE_IDS. The edges are grouped by
   relation (relation order), each relation's in the block's CSC order. */
#define GF_FIELD_TYPED_EDGE_OFFSETS 13
/* Hop `layer`: [num_edges]: the rank of each edge's source in its type. */
#define GF_FIELD_TYPED_SRC 14
/* Hop `layer`: [num_edges]: the rank of each edge's destination in its
   type (non-decreasing within a relation). */
#define GF_FIELD_TYPED_DST 15
/* Hop `layer`: [num_edges]: relation-local edge ids (original edge id -
   edge_offsets[relation]). */
#define GF_FIELD_TYPED_EDGE_IDS 16
/* Hop `layer`: relation after relation, relation r's CSC offsets over the
   block destinations of its destination type d (count c_d in
   GF_FIELD_TYPED_BLOCK_SHAPE): c_d+1 entries from 0 to r's edge count;
   sum over r of (c_{dst(r)} + 1) entries in all. */
#define GF_FIELD_TYPED_INDPTR 17
/*
 * The sampled edges as one edge list (layer 0): the edges of hop 0, then of
 * hop 1, ..., each hop's in CSC order (PyG's edge_index and e_id). Batches
 * of loaders opened with gf_loader_options.coo (or edge loaders with
 * gf_edge_loader_options.coo) only, computed by the loader's sampler
 * threads; GF_EINVAL for other batches. (Numbered from
 * 32: the values after GF_FIELD_TYPED_INDPTR stay free for per-hop views.)
 */
/* [2, E]: row 0 each edge's source, row 1 its destination, as positions in
   GF_FIELD_NODES. */
#define GF_FIELD_COO_INDEX 32
/* [E]: each edge's original id. */
#define GF_FIELD_COO_EDGE_IDS 33

/* gf_loader_options.coo: which edges the edge list holds. */
/* The sampled edges, hop after hop, each hop's in CSC order. */
#define GF_COO_SAMPLED 1
/* The sampled edges made bidirectional as PyG's to_bidirectional makes
   them: each edge and its reverse with the same id, one edge per (source,
   destination) pair, sorted by destination then source; a pair listed
   twice keeps the id of its last listing (the sampled edges, then their
   reverses). */
#define GF_COO_BIDIRECTIONAL 2
/* Every edge of the graph among the batch's nodes (the subgraph they
   induce, as gf_graph_induced_subgraph lists it); no per-hop meaning. */
#define GF_COO_INDUCED 3
/* GF_COO_INDUCED as dgl.DGLGraph.subgraph lists the edges (by source
   position, then edge id), the batch made a subgraph batch: its blocks
   are dropped (on a typed graph: made one block over all its nodes, hop
   counts [seeds, other nodes], which the typed view splits by relation),
   its edge data gathered over these edges. An edge loader's batch leaves
   out the edges it excludes (DGL's exclude), as DGL's ShaDowKHopSampler
   inside as_edge_prediction_sampler does. */
#define GF_COO_SUBGRAPH 4

/*
 * gf_batch_num_hops sets *out to the number of hops (blocks) L.
 * Returns GF_OK, GF_EBADHANDLE (batch), GF_EINVAL (out is NULL).
 */
GF_API int gf_batch_num_hops(const gf_batch *batch, int32_t *out);

/*
 * gf_batch_block_shape describes hop `layer`'s block: its destination nodes
 * are NODES[dst_offset : dst_offset+num_dst] and its source nodes are
 * NODES[0 : num_src]. Any out pointer may be NULL.
 * Returns GF_OK, GF_EINVAL (layer out of range), GF_EBADHANDLE (batch).
 */
GF_API int gf_batch_block_shape(const gf_batch *batch, int32_t layer,
                                int64_t *num_dst, int64_t *num_src,
                                int64_t *dst_offset);

/*
 * gf_batch_take moves one field of the batch out as a DLPack tensor; layer
 * selects the hop for the per-hop fields and must be 0 otherwise. The caller
 * owns *out_tensor (NULL on failure) and must call its deleter. Each field
 * can be taken once.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      unknown field, layer out of range (or non-zero for a field
 *                  that is not per hop), out_tensor NULL
 *   GF_ESTATE      the field was already taken
 *   GF_EBADHANDLE  batch
 *   GF_ENOMEM      no memory for the tensor's header
 */
GF_API int gf_batch_take(gf_batch *batch, int32_t field, int32_t layer,
                         DLManagedTensor **out_tensor);

/*
 * gf_batch_take_versioned is gf_batch_take returning a DLPack 1.x tensor
 * (version {1, 1}, flags DLPACK_FLAG_BITMASK_IS_COPIED). Same return codes;
 * a field taken by either function counts as taken for both.
 */
GF_API int gf_batch_take_versioned(gf_batch *batch, int32_t field, int32_t layer,
                                   DLManagedTensorVersioned **out_tensor);

/*
 * gf_batch_take_node_data moves out the node data gathered under name: for
 * a loader's feature names, one row per node of GF_FIELD_NODES; for its
 * label names, one row per seed. Same ownership as gf_batch_take.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      name NULL, empty or not gathered into this batch;
 *                  out_tensor NULL
 *   GF_ESTATE      the data was already taken
 *   GF_EBADHANDLE  batch
 *   GF_ENOMEM      no memory for the tensor's header
 */
GF_API int gf_batch_take_node_data(gf_batch *batch, const char *name,
                                   DLManagedTensor **out_tensor);

/*
 * gf_batch_take_node_data_versioned is gf_batch_take_node_data returning a
 * DLPack 1.x tensor (version {1, 1}, flags DLPACK_FLAG_BITMASK_IS_COPIED).
 * Same return codes.
 */
GF_API int gf_batch_take_node_data_versioned(gf_batch *batch, const char *name,
                                             DLManagedTensorVersioned **out_tensor);

/*
 * gf_batch_take_edge_data moves out the edge data gathered under name (an
 * edge loader's edge_feature_names): one row per sampled edge, the edges of
 * layer 0 (GF_FIELD_EDGE_IDS of layer 0), then of layer 1, and so on. Same
 * ownership as gf_batch_take; edge and node data have names of their own.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      name NULL, empty or not gathered into this batch;
 *                  out_tensor NULL
 *   GF_ESTATE      the data was already taken
 *   GF_EBADHANDLE  batch
 *   GF_ENOMEM      no memory for the tensor's header
 */
GF_API int gf_batch_take_edge_data(gf_batch *batch, const char *name,
                                   DLManagedTensor **out_tensor);

/*
 * gf_batch_close releases a batch and every field not taken from it.
 * gf_batch_close(NULL) does nothing.
 */
GF_API void gf_batch_close(gf_batch *batch);

/*
 * gf_walk_options configures random walks. Zero-initialise it and set
 * struct_size = sizeof(gf_walk_options). Accepted struct_size (LP64): 32
 * (the end of seed, the first layout's last field) to sizeof (32).
 */
typedef struct gf_walk_options {
  uint32_t struct_size;
  /* Steps per walk (>= 0). */
  int32_t length;
  /* Probability in [0, 1] that a step jumps back to the walk's seed instead
     of moving (no edge is recorded for such a step). */
  double restart_prob;
  /* Non-zero: step to in-neighbour u of v with probability proportional to
     the edge weight (see gf_sample_options.biased); else uniformly. */
  int32_t biased;
  /* Worker threads; <= 0: the default (see Threads). */
  int32_t num_threads;
  /* Seed of the random streams. */
  uint64_t seed;
} gf_walk_options;

/*
 * gf_random_walk walks from each seed along in-edges (from v to one of the
 * sources u of its edges u->v, the direction neighbour sampling follows),
 * one collective step at a time: each step sends the walker's node to the
 * patch that owns it, which draws one neighbour and sends back only that
 * node and its edge id. A walk that reaches a node without in-edges stops.
 * @param seeds  int64 [B] original node ids (repeats allowed). Borrowed.
 * @param out_traces   receives int64 [B, length+1]: row i is the walk from
 *                     seeds[i], original node ids, -1 after it stopped.
 * @param out_edge_ids receives int64 [B, length]: the edge id of each step,
 *                     -1 for a restart or after the walk stopped. May be
 *                     NULL if not wanted.
 * The caller owns the tensors and must call their deleters (both are NULL
 * on failure). gf_tensor_to_versioned turns them into DLPack 1.x tensors.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      seeds, options or out_traces NULL; options invalid
 *                  (struct_size, negative length, restart_prob outside
 *                  [0, 1], biased without edge weights); a seed out of range
 *   GF_ETYPE       seeds not int64/int32, not on the CPU, or not contiguous
 *   GF_EBADHANDLE  graph
 *   GF_EIO         a dataset file behind the graph can no longer be read
 *   GF_ENOMEM      the traces do not fit in memory
 */
GF_API int gf_random_walk(gf_graph *graph, const DLTensor *seeds,
                          const gf_walk_options *options,
                          DLManagedTensor **out_traces,
                          DLManagedTensor **out_edge_ids);

/*
 * gf_tensor_to_versioned turns a tensor that a graphferry function returned
 * as a legacy DLManagedTensor into the DLPack 1.x DLManagedTensorVersioned
 * (version {1, 1}, flags DLPACK_FLAG_BITMASK_IS_COPIED) over the same
 * memory, without copying it.
 * @param tensor  made by graphferry and not yet deleted. On GF_OK it is
 *                consumed: do not call its deleter. On failure the caller
 *                still owns it.
 * @param out_tensor receives the new tensor (NULL on failure); the caller
 *                must call its deleter.
 * Returns:
 *   GF_OK
 *   GF_EINVAL  tensor or out_tensor NULL, or a tensor that graphferry did
 *              not make (its deleter is not graphferry's)
 *   GF_ENOMEM  no memory for the new tensor's header
 */
GF_API int gf_tensor_to_versioned(DLManagedTensor *tensor,
                                  DLManagedTensorVersioned **out_tensor);

/* ------------------------------------------------------------------------ */
/* Loaders                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * gf_loader yields the mini-batches of an epoch over a set of seed nodes,
 * sampled and gathered ahead by the library's own threads (a sampler stage
 * and a loader stage over bounded queues). The sampler stage samples
 * num_threads batches at once (num_threads of the sample options, every
 * core when <= 0), one per worker thread, each worker with its own node
 * table (4 bytes per graph node) and workspaces; batches still arrive in
 * order and do not depend on it. gf_loader_stats says where time goes. Made by gf_loader_open; must be
 * closed with gf_loader_close. Thread-safety: use a loader from one thread
 * at a time, except that gf_loader_close may be called from another thread
 * to interrupt a gf_loader_next or gf_loader_next_wait that is waiting for
 * a batch (see gf_loader_close).
 */
typedef struct gf_loader gf_loader;

/*
 * gf_allocator: memory the host provides for the tensors a loader hands out
 * (blocks, ids, gathered node data, labels), for example page-locked host
 * memory that a GPU copies from asynchronously. The library itself keeps no
 * GPU dependency: what the memory is, is the host's business. Zero-initialise
 * it and set struct_size = sizeof(gf_allocator); the library copies the
 * struct when a loader is opened.
 *
 * alloc returns at least `bytes` bytes aligned to `alignment` (a power of
 * two, at most 4096), or NULL when it cannot: the batch being made then
 * fails with GF_ENOMEM naming the host allocator, and every block already
 * taken for it is freed. free releases a block from alloc, with the same
 * `bytes`; the library calls it exactly once per block, from any thread,
 * possibly after the loader was closed (when the caller drops the last
 * tensor of a batch). Both are called from the library's own threads,
 * concurrently: they must be thread-safe, must not call graphferry, and
 * must stay valid (with `user`) until every block from them was freed. Only
 * loaders' output tensors come from the allocator; in a process forked after
 * the library was loaded, blocks are not given back (free is not called).
 * free comes when the last tensor in the block was deleted: a host whose
 * consumer queues reads that run later (non-blocking device copies) must
 * not reuse the block before they ran; gf_host_pool (below) is such an
 * allocator, owned by the library.
 */
typedef struct gf_allocator {
  uint32_t struct_size;
  uint32_t reserved; /* 0 */
  void *user;        /* passed to alloc and free */
  void *(*alloc)(void *user, size_t bytes, size_t alignment);
  void (*free)(void *user, void *ptr, size_t bytes);
} gf_allocator;

/*
 * gf_host_pool: host memory owned by the library for the tensors loaders
 * hand out, offered as a gf_allocator (gf_host_pool_open fills one in: give
 * it as gf_loader_options.allocator or gf_sample_options.allocator). Its
 * alloc and free are plain C inside the library: no host code runs per
 * buffer. Every buffer is a mapping of its own (page-aligned; no page shared
 * with another buffer), kept by the pool for reuse until the pool is closed.
 * The library's own memory (no allocator) comes from the same code, a pool
 * that keeps only large buffers, and only while a loader is open.
 *
 * Page-locking (a GPU consumer's copies from host memory are asynchronous
 * only from page-locked memory): gf_host_pool_new_chunks reports each
 * mapping once, after it was made and before a tensor in it is handed out
 * by a batch taken since, so that the host can page-lock it once (for CUDA,
 * cudaHostRegister on the thread that takes the batches); the library makes
 * no GPU call. A pool that was page-locked must stay open as long as the
 * registration (closing unmaps its free buffers).
 *
 * When a buffer is reused: a buffer goes back to its pool when the last
 * tensor in it is deleted. Without GF_HOST_POOL_FENCED it can be handed out
 * again at once; that is right when nothing reads it after its tensors are
 * gone. A consumer may however queue reads that run later (a non-blocking
 * device copy, queued on a stream) and drop its tensors before they ran.
 * With GF_HOST_POOL_FENCED a freed buffer is handed out again only after a
 * fence started after its free has passed: the host starts fences with
 * gf_host_pool_fence (say, each time it takes a batch, recording an event
 * on the stream its consumer copies on) and reports each as passed (the
 * `passed` of a later gf_host_pool_fence) once the reads queued before it
 * completed (the event completed). Passing fence n passes every earlier
 * one. Until then the freed buffer waits, unmodified.
 */
typedef struct gf_host_pool gf_host_pool;

typedef struct gf_host_pool_options {
  uint32_t struct_size; /* sizeof(gf_host_pool_options) */
  /* GF_HOST_POOL_* flags: FENCED (see above); POISON (for tests: a buffer
     is filled with 0xA5 bytes when it becomes reusable, so that a reader
     still holding it sees the bytes change); LIMIT (an allocation that would
     take the capacity of the live buffers past limit_bytes fails: the batch
     fails with GF_ENOMEM naming the host allocator). */
  int32_t flags;
  int64_t limit_bytes;
} gf_host_pool_options;

#define GF_HOST_POOL_FENCED 1
#define GF_HOST_POOL_POISON 2
#define GF_HOST_POOL_LIMIT 4

/* What a host pool holds (gf_host_pool_stats). Set struct_size. */
typedef struct gf_host_pool_statistics {
  uint32_t struct_size;
  int32_t last_failure_errno; /* the latest failed allocation: 0 the limit, else mmap's errno */
  int64_t allocs;             /* buffers handed out */
  int64_t frees;              /* buffers given back */
  int64_t bad_frees;          /* frees of buffers not handed out (freed twice, or not the pool's): ignored */
  int64_t live_buffers;       /* handed out and not given back */
  int64_t live_bytes;         /* their capacity */
  int64_t waiting;            /* freed buffers waiting for a fence */
  int64_t chunks;             /* mappings the pool holds: live, waiting or free */
  int64_t chunk_bytes;        /* their length */
  int64_t failures;           /* allocations refused */
  int64_t last_failure_bytes; /* the bytes the latest of them asked for */
} gf_host_pool_statistics;

/*
 * gf_host_pool_open makes a host pool (options NULL: no flags) and fills in
 * *out_allocator with it. The pool lives until gf_host_pool_close and then as
 * long as a loader opened with its allocator is open or a buffer from it is
 * live. Returns GF_OK; GF_EINVAL (an out pointer NULL, struct_size, unknown
 * flags, a negative limit); GF_ENOMEM.
 */
GF_API int gf_host_pool_open(const gf_host_pool_options *options, gf_host_pool **out_pool,
                             gf_allocator *out_allocator);

/*
 * gf_host_pool_new_chunks writes the mappings made since the previous call
 * (up to capacity of them: call again while *out_count == capacity) into
 * ptrs and lens (start, length in bytes). GF_EBADHANDLE: pool not open.
 */
GF_API int gf_host_pool_new_chunks(gf_host_pool *pool, void **ptrs, size_t *lens, int64_t capacity,
                                   int64_t *out_count);

/*
 * gf_host_pool_fence reports fence `passed` (0: none) passed, which makes the
 * buffers freed before it started reusable, and starts a new fence, its
 * number in *out_fence (NULL: none started). Numbers start at 1 and grow by
 * one. GF_EINVAL: `passed` was not started yet; GF_EBADHANDLE: pool not open.
 */
GF_API int gf_host_pool_fence(gf_host_pool *pool, uint64_t passed, uint64_t *out_fence);

/* gf_host_pool_stats: what the pool holds. GF_EINVAL: out NULL or its
   struct_size; GF_EBADHANDLE: pool not open. */
GF_API int gf_host_pool_stats(gf_host_pool *pool, gf_host_pool_statistics *out);

/*
 * gf_host_pool_close closes the pool: its free buffers and those waiting
 * for a fence are unmapped (the host's fences are over), later frees unmap
 * theirs; loaders opened with its allocator keep working until closed, but
 * no new one accepts it (GF_EINVAL). NULL: nothing. GF_EBADHANDLE: not open.
 */
GF_API int gf_host_pool_close(gf_host_pool *pool);

/*
 * gf_loader_options configures a loader. Zero-initialise it and set
 * struct_size = sizeof(gf_loader_options). Accepted struct_size (LP64): 72
 * (the end of label_names) to sizeof (128), but 104: an early 0.1.0 draft
 * embedded gf_sample_options by value, sizeof 104; that layout is refused
 * (no released header had that size).
 *
 * Device outputs (mode 2: sampling and gathering on a GPU). With
 * device.device_type = kDLCUDA the loader samples and gathers on CUDA device
 * device.device_id, and its batches' tensors (but GF_FIELD_HOP_COUNTS, on
 * the host) are device memory, taken out as DLPack tensors whose
 * dl_tensor.device is {kDLCUDA, device_id}. Only the CUDA library
 * (libgraphferry_cuda.so) offers them; libgraphferry.so returns GF_ENOTSUP
 * from gf_loader_open, naming the library to use. Node-wise sampling only
 * (gf_sample_options.scheme GF_SCHEME_NODE, not disjoint, not temporal, not
 * typed), and gf_loader_open only (not the edge or distributed loaders):
 * other requests give GF_ENOTSUP. The stream contract:
 *   - The device work of a batch is queued on the library's streams and is
 *     complete only at the batch's ready event. A consumer reading the
 *     batch's device tensors on its stream S first makes S wait for that
 *     event: gf_batch_wait_stream(batch, S) (the host does not wait), or set
 *     options.stream = S and gf_loader_next does it for every batch.
 *   - Who frees what, when: a device tensor taken from a batch belongs to
 *     the caller, who calls its deleter (plain C, any thread, never blocks,
 *     never calls the driver) once done with it; the library reuses the
 *     memory only after the work queued on the consumer's stream (the last
 *     stream given to gf_batch_wait_stream before the take, else
 *     options.stream) at the time it takes the memory back, on its next
 *     call for that loader. Without a consumer stream, the caller must have
 *     finished its reads (synchronised) before calling the deleter. Tensors
 *     not taken are freed by gf_batch_close, ordered after the same stream.
 *   - Batches stay valid after gf_loader_close, device tensors included:
 *     the loader's device memory is kept until its last batch is closed and
 *     the last tensor taken from it deleted (released then by
 *     gf_batch_close, or after a deleter by the library's next loader or
 *     batch call, or at process exit).
 */
typedef struct gf_loader_options {
  uint32_t struct_size;
  /* How each batch is sampled. Borrowed (copied); required. */
  const gf_sample_options *sample;
  /* Seeds per batch (> 0). */
  int64_t batch_size;
  /* Non-zero: a new permutation of the seeds every epoch. */
  int32_t shuffle;
  /* Non-zero: drop the last batch if it is smaller than batch_size. */
  int32_t drop_last;
  /* Seed of the per-epoch permutation. */
  uint64_t shuffle_seed;
  /* Capacity of each queue between stages; <= 0 means 2; a queue holds at
     most the epoch's batches (a larger capacity is that). */
  int32_t queue_capacity;
  /* Node data gathered for every node of a batch (e.g. "feat"). Borrowed. */
  int32_t num_feature_names;
  const char *const *feature_names;
  /* Node data gathered for the seeds of a batch (e.g. "label"). Borrowed. */
  int32_t num_label_names;
  const char *const *label_names;
  /* -- an earlier layout ends here -- */
  /* Temporal sampling (gf_sample_options.temporal): int64 [n], the seed time
     of each of the loader's seeds (permuted with them every epoch); NULL
     otherwise. Read as NULL from an older header's struct_size (72).
     Borrowed (copied). */
  const DLTensor *seed_times;
  /* -- an earlier layout ends here -- */
  /* The memory of the loader's output tensors (see gf_allocator); NULL: the
     library's own. Copied. Read as NULL from an older struct_size (72, 80). */
  const gf_allocator *allocator;
  /* -- an earlier layout ends here -- */
  /* Where the batches live: device_type 0 (zero-initialised) or kDLCPU: host
     memory (CPU sampling); kDLCUDA: device memory of CUDA device device_id,
     sampled and gathered there (see "Device outputs" above). Other types
     are GF_ENOTSUP. Read as {0, 0} from an older struct_size (72, 80, 88);
     the fields after it read as 0 from a struct_size that ends before them. */
  DLDevice device;
  /* The consumer's stream (a CUstream of device's primary context; kDLCUDA
     only, else GF_EINVAL), or NULL: gf_loader_next makes it wait for each
     batch's ready event, and device memory is reused after its work. */
  void *stream;
  /* kDLCUDA only: the node data rows kept in device memory (the hot tier,
     nodes of highest in-degree first); the others are read in place from
     pinned host memory by the gather kernel (a dataset's mapped files and
     the caller's tensors page-locked where they are; arrays the library
     made itself, renumbered node data, copied into pinned memory first).
     > 0: that many bytes of rows;
     0: no hot tier; -1: auto, what fits in the device's free memory less
     device_reserve_bytes (>= 0; memory left for the model, also by
     GF_TOPOLOGY_AUTO). */
  int64_t device_cache_bytes;
  int64_t device_reserve_bytes;
  /* kDLCUDA only: where the graph's topology lives: GF_TOPOLOGY_AUTO (0)
     device memory when it fits in the free memory less
     device_reserve_bytes, else pinned host memory; GF_TOPOLOGY_DEVICE (1);
     GF_TOPOLOGY_PINNED (2): pinned host memory read in place by the
     sampling kernels (UVA, as DGL's use_uva=True): a dataset's mapped CSC
     files page-locked where they are, a topology built in memory copied
     into pinned memory first. */
  int32_t device_topology;
  /* Non-zero: every batch also holds its sampled edges as one edge list
     (GF_FIELD_COO_*: PyG's edge_index and e_id), made by the loader's
     sampler threads rather than by the consumer. A loader whose sampler
     makes its own batches (a device sampler) refuses it. An edge loader
     makes the edge list when either this or gf_edge_loader_options.coo is
     set. Read as 0 from a struct_size that ends before it (72, 80, 88,
     124). GF_COO_SAMPLED (1) is the sampled edges; GF_COO_BIDIRECTIONAL
     and GF_COO_INDUCED (PyG's subgraph_type) and GF_COO_SUBGRAPH make
     other edge lists there too; another value is GF_EINVAL. */
  int32_t coo;
} gf_loader_options;

#define GF_TOPOLOGY_AUTO 0
#define GF_TOPOLOGY_DEVICE 1
#define GF_TOPOLOGY_PINNED 2

/*
 * gf_loader_open makes a loader over seeds (int64 [n] distinct original
 * node ids, which may repeat with disjoint sample options; borrowed). No
 * thread runs until gf_loader_start. *out_loader is NULL on failure.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      seeds, options, options->sample or out_loader NULL;
 *                  invalid options (struct_size of either struct, batch_size,
 *                  the sample options as in gf_sample, a NULL name, an
 *                  unknown node data name, an allocator's struct_size,
 *                  reserved or NULL function; a stream or device_* field
 *                  with a host device; a device_id, device_cache_bytes,
 *                  device_reserve_bytes or device_topology out of range; a
 *                  CUDA device that cannot be opened); a seed out of range
 *                  or repeated
 *   GF_ETYPE       seeds not int64/int32, not on the CPU, or not contiguous
 *   GF_ENOTSUP     device.device_type kDLCUDA in the CPU library, a device
 *                  type other than kDLCPU/kDLCUDA, or a request the device
 *                  does not sample (see "Device outputs")
 *   GF_EBADHANDLE  graph
 *   GF_ENOMEM      the loader's buffers do not fit in memory
 * Release with gf_loader_close.
 */
GF_API int gf_loader_open(gf_graph *graph, const DLTensor *seeds,
                          const gf_loader_options *options, gf_loader **out_loader);

/*
 * gf_batch_wait_stream makes the consumer's stream (a CUstream of the
 * device's primary context) wait, without the host waiting, for the batch's
 * ready event: the producer's device work on the batch (cuStreamWaitEvent).
 * Device tensors taken from the batch afterwards have their memory reused
 * only after the work queued on stream (see "Device outputs" at
 * gf_loader_options). A host batch has nothing to wait for: GF_OK, and
 * stream is not used.
 * Returns GF_OK, GF_EBADHANDLE (batch), GF_EINVAL (stream NULL for a device
 * batch), or the driver's failure (GF_EINVAL naming the CUDA error, e.g. a
 * stream of another context).
 */
GF_API int gf_batch_wait_stream(gf_batch *batch, void *stream);

/*
 * gf_loader_num_batches sets *out to the number of batches per epoch.
 * Returns GF_OK, GF_EBADHANDLE (loader), GF_EINVAL (out is NULL).
 */
GF_API int gf_loader_num_batches(const gf_loader *loader, int64_t *out);

/*
 * gf_loader_start begins epoch `epoch` (its seed permutation and random
 * streams depend on the epoch number). An epoch in progress is stopped
 * first and its undelivered batches are freed.
 * Returns GF_OK, GF_EBADHANDLE (loader).
 */
GF_API int gf_loader_start(gf_loader *loader, uint64_t epoch);

/*
 * gf_loader_start_at begins epoch `epoch` at its first_batch-th batch (as
 * gf_loader_next counts them: a distributed loader's own share): the
 * loader delivers the batches an uninterrupted epoch delivers from that
 * place on, bit for bit, and samples none of the ones before. An epoch
 * interrupted after k batches (gf_loader_position) resumes, in this
 * process or a fresh one, with gf_loader_start_at(loader, epoch, k) on a
 * loader opened with the same seeds, batch size, shuffle and sample
 * options (seed included) and, for a distributed loader, the same rank and
 * number of ranks; threads and patches may differ. first_batch ==
 * gf_loader_num_batches gives an epoch that is already over.
 * Returns GF_OK, GF_EBADHANDLE (loader), GF_EINVAL (first_batch outside
 * [0, gf_loader_num_batches]).
 */
GF_API int gf_loader_start_at(gf_loader *loader, uint64_t epoch, int64_t first_batch);

/*
 * gf_loader_start_ordered is gf_loader_start_at with the epoch's order of
 * the seeds (a subgraph loader's items) given by the caller instead of the
 * loader's own shuffle: order is int64 (or int32) [n], a permutation of the
 * positions [0, n) of the n seeds the loader was opened with; batch i
 * takes positions order[i*batch_size ...] and samples with the epoch's
 * random streams as any epoch does. A caller that shuffles with its own
 * generator (torch's sampler) gives each epoch's order here, and resumes
 * an interrupted epoch with the same order and first_batch. Read during
 * the call.
 * Returns GF_OK, GF_EBADHANDLE (loader), GF_EINVAL (order NULL, not a
 * permutation of [0, n), or first_batch outside [0, gf_loader_num_batches]),
 * GF_ETYPE (order not int64/int32).
 */
GF_API int gf_loader_start_ordered(gf_loader *loader, uint64_t epoch, int64_t first_batch,
                                   const DLTensor *order);

/*
 * gf_loader_position sets *out_epoch to the current (or last) epoch and
 * *out_delivered to how many of its batches gf_loader_next has returned,
 * those a gf_loader_start_at skipped included: where to resume it. Before
 * the first gf_loader_start both are 0 and *out_started (may be NULL) is 0.
 * May be called from any thread.
 * Returns GF_OK, GF_EBADHANDLE (loader), GF_EINVAL (out_epoch or
 * out_delivered NULL).
 */
GF_API int gf_loader_position(const gf_loader *loader, uint64_t *out_epoch, int64_t *out_delivered,
                              int32_t *out_started);

/*
 * gf_loader_next sets *out_batch to the next batch of the current epoch.
 * *out_batch is NULL unless GF_OK is returned.
 * Returns:
 *   GF_OK
 *   GF_DONE        the epoch has no more batches
 *   GF_ESTATE      no epoch was started
 *   GF_EBADHANDLE  loader; also when gf_loader_close, called from another
 *                  thread, interrupted this call while it waited ("the
 *                  loader was closed ... while this call waited for a
 *                  batch"): see gf_loader_close
 *   GF_EINVAL      out_batch NULL
 *   GF_EIO, GF_ENOMEM, GF_EINVAL
 *                  the error that stopped the sampler or loader stage (a
 *                  dataset file that can no longer be read, memory, a
 *                  distributed loader's failed or timed-out exchange); the
 *                  epoch is then over and the next call returns GF_DONE
 */
GF_API int gf_loader_next(gf_loader *loader, gf_batch **out_batch);

/*
 * gf_loader_next_wait is gf_loader_next waiting at most timeout_ms
 * milliseconds for the batch: when none is ready by then it returns
 * GF_NOT_READY (not an error: *out_batch is NULL, the loader and its epoch
 * are unchanged, and the next call goes on waiting for the same batch).
 * timeout_ms < 0 waits as long as gf_loader_next does. A host that must
 * stay responsive while it waits (an interpreter that checks for signals
 * between calls, as graphferry's Python package does for Ctrl-C) calls it
 * in a loop with a short timeout_ms.
 * Returns what gf_loader_next returns, GF_NOT_READY, and GF_EINVAL for
 * timeout_ms = 0.
 */
GF_API int gf_loader_next_wait(gf_loader *loader, int64_t timeout_ms, gf_batch **out_batch);

/*
 * gf_loader_close stops the loader's threads (none is left running when it
 * returns), frees undelivered batches and releases the loader. Batches
 * already returned stay valid. gf_loader_close(NULL) does nothing.
 *
 * It may be called from another thread while one thread waits in
 * gf_loader_next or gf_loader_next_wait on the same loader: the waiting
 * call then returns GF_EBADHANDLE promptly (a batch that arrived meanwhile
 * is freed, not returned), and gf_loader_close returns after it has; the
 * loader's memory is released only then, so nothing is freed under the
 * waiting thread. The handle stays valid for that returning call and is
 * invalid once gf_loader_close has returned: a later call with it returns
 * GF_EBADHANDLE, as with any closed handle. A distributed loader
 * (gf_loader_open_comm, gf_loader_open_part) closes as promptly while its
 * library thread is blocked in a gf_comm callback: see gf_comm.
 */
GF_API void gf_loader_close(gf_loader *loader);

/* ------------------------------------------------------------------------ */
/* Loader statistics                                                        */
/* ------------------------------------------------------------------------ */

/*
 * gf_stage_stats is one pipeline stage's time and batches over a span (an
 * epoch, or every epoch). Times are nanoseconds of the monotonic clock,
 * summed over the stage's threads (the sampler stage runs several workers
 * at once, so its times can exceed the wall time).
 */
typedef struct gf_stage_stats {
  /* Working: sampling and copying out the topology (sampler), gathering
     node data (loader); for the consumer, the time between receiving a
     batch and asking for the next one (the training step). */
  int64_t busy_ns;
  /* Waiting for the next stage to take a finished batch (a full queue). */
  int64_t blocked_ns;
  /* Waiting for a batch from the stage before (an empty queue); for the
     consumer, the time spent inside gf_loader_next. */
  int64_t waiting_ns;
  /* Batches the stage finished. */
  int64_t batches;
} gf_stage_stats;

/*
 * gf_loader_counters are a loader's statistics over one span.
 */
typedef struct gf_loader_counters {
  gf_stage_stats sampler;
  gf_stage_stats loader;
  gf_stage_stats consumer;
  /* Bytes of node data gathered from each memory tier: host memory (the
     store, which may be a mapped file, and a host hot tier), pinned host
     memory read in place by a device, device memory. On the CPU build only
     bytes_host is non-zero. */
  int64_t bytes_host;
  int64_t bytes_pinned;
  int64_t bytes_device;
  /* Node data rows served by a hot tier (a feature cache) and by the full
     store; the hit rate is rows_hot / (rows_hot + rows_cold). Without a
     cache every row is cold. */
  int64_t rows_hot;
  int64_t rows_cold;
  /* Wall time of the span: from gf_loader_start to the epoch's last batch
     (or to now while the epoch runs), summed over epochs for the total. */
  int64_t wall_ns;
} gf_loader_counters;

/*
 * gf_tier_counters split a span's cold rows (rows_cold) of node data read
 * from the disk tier (gf_graph_options.feature_tier): rows served by its
 * CPU cache (their bytes are in bytes_host) and rows read from disk; the
 * hit rate of the CPU cache is rows_cache / (rows_cache + rows_disk).
 */
typedef struct gf_tier_counters {
  int64_t rows_cache;
  int64_t rows_disk;
  /* Bytes of the rows read from disk; bytes the reads fetched (whole
     aligned blocks, neighbouring rows coalesced) in disk_requests reads. */
  int64_t bytes_disk;
  int64_t bytes_disk_read;
  int64_t disk_requests;
} gf_tier_counters;

/*
 * gf_loader_statistics is filled by gf_loader_stats. Set struct_size =
 * sizeof(gf_loader_statistics) before the call: a caller built against an
 * older header gets the fields its struct has, and later versions only
 * append fields. Accepted struct_size (LP64): 312 (before the tiers) to
 * sizeof (392).
 */
typedef struct gf_loader_statistics {
  uint32_t struct_size;
  /* Sampler workers (threads of the sampler stage). */
  int32_t workers;
  /* The epoch `epoch` describes (the last one started) and how many epochs
     were started since gf_loader_open. */
  uint64_t epoch;
  int64_t epochs;
  /* The epoch in progress, or the last one. */
  gf_loader_counters current;
  /* Every epoch since gf_loader_open. */
  gf_loader_counters total;
  /* -- an earlier layout ends here -- */
  /* The disk tier's share of current and total (zero without one). */
  gf_tier_counters current_tiers;
  gf_tier_counters total_tiers;
} gf_loader_statistics;

/*
 * gf_loader_stats fills *out with the loader's statistics. They are atomic
 * counters read one by one: taken while the stages run, they may be a
 * batch apart between stages. Cheap enough to call after every batch.
 * Thread-safety: may be called from any thread, also while another thread
 * is inside gf_loader_next.
 * Returns:
 *   GF_OK
 *   GF_EBADHANDLE  loader
 *   GF_EINVAL      out NULL, or out->struct_size outside the accepted range
 */
GF_API int gf_loader_stats(const gf_loader *loader, gf_loader_statistics *out);

/* ------------------------------------------------------------------------ */
/* Feature cache (hot tier)                                                 */
/* ------------------------------------------------------------------------ */

/* Cache policies: which nodes' feature rows go to the hot tier. */
#define GF_CACHE_IN_DEGREE 1    /* highest in-degree first (PaGraph) */
#define GF_CACHE_PRESAMPLING 2  /* most read over a few sampled epochs */

/*
 * gf_cache_options configures gf_loader_set_cache. Zero-initialise it and
 * set struct_size = sizeof(gf_cache_options). The size of the hot tier is
 * the first of: bytes (> 0), fraction (> 0), auto (non-zero). Accepted
 * struct_size (LP64): 56 to sizeof (56).
 */
typedef struct gf_cache_options {
  uint32_t struct_size;
  /* GF_CACHE_IN_DEGREE or GF_CACHE_PRESAMPLING. */
  int32_t policy;
  /* Hot tier size in bytes (the rows of every feature name together). */
  int64_t bytes;
  /* Fraction of the nodes whose rows are hot, in (0, 1] (NaN is GF_EINVAL). */
  double fraction;
  /* Non-zero: what fits in budget bytes after reserve bytes (for the
     model). On the CPU build the caller gives the budget. */
  int32_t auto_size;
  int64_t budget;
  int64_t reserve;
  /* Epochs GF_CACHE_PRESAMPLING samples ahead (<= 0: 2): epochs 0, 1, ...
     of this loader, so the counts are those of the batches it will give. */
  int32_t presample_epochs;
} gf_cache_options;

/*
 * gf_loader_set_cache copies the hot rows of the loader's feature names into
 * a hot tier that the loader gathers from, the other rows still coming from
 * the graph's node data; batches are unchanged, and gf_loader_stats reports
 * the hit rate (rows_hot, rows_cold). On the CPU build the hot tier is a
 * host copy (bytes_host). The epoch in progress is stopped: call
 * gf_loader_start next. *out_rows (may be NULL) is set to the number of hot
 * rows.
 * Returns:
 *   GF_OK
 *   GF_EBADHANDLE  loader
 *   GF_EINVAL      options NULL, bad struct_size, policy or size
 *   GF_EIO         a node data file can no longer be read
 */
GF_API int gf_loader_set_cache(gf_loader *loader, const gf_cache_options *options,
                               int64_t *out_rows);

/* ---------------------------------------------------------------------------
 * Induced subgraphs
 */

/*
 * gf_graph_induced_subgraph returns every edge u->v of the graph whose two
 * endpoints are in nodes: the subgraph the nodes induce (PyG's
 * subgraph_type="induced", torch_geometric.utils.subgraph). Edges are
 * grouped by target in the order of nodes; a target's edges keep the order
 * of its neighbour list, so the result is the same for any patch count.
 * @param nodes  int64 or int32 [N] original node ids, distinct. Borrowed.
 * @param out_src      receives int64 [E]: each edge's source as a position
 *                     in nodes (local id).
 * @param out_dst      receives int64 [E]: each edge's target, likewise.
 * @param out_edge_ids receives int64 [E]: each edge's original id. May be
 *                     NULL if not wanted.
 * The caller owns the tensors and must call their deleters (all are NULL on
 * failure).
 * Returns:
 *   GF_OK
 *   GF_EINVAL      nodes, out_src or out_dst NULL; nodes not 1-D; a node out
 *                  of range or repeated
 *   GF_ETYPE       nodes not int64/int32, not on the CPU, or not contiguous
 *   GF_EBADHANDLE  graph (also when it was closed)
 *   GF_ENOMEM      the edges do not fit in memory
 */
GF_API int gf_graph_induced_subgraph(gf_graph *graph, const DLTensor *nodes,
                                     DLManagedTensor **out_src,
                                     DLManagedTensor **out_dst,
                                     DLManagedTensor **out_edge_ids);

/*
 * Subgraph loaders (GraphSAINT, Cluster-GCN): a gf_loader whose batch is a
 * node set and the subgraph it induces, made ahead of the consumer by the
 * loader's threads. Batch i of epoch e depends only on (the options, the
 * graph, the items of the batch, the batch key (e << 32) | i): its node set
 * is drawn from the random stream keyed by loader->shuffle_seed and the
 * batch key, never from the thread or patch count.
 *
 * A batch has no blocks (gf_batch_num_hops: 0): GF_FIELD_NODES holds its
 * nodes (original ids; drawn sets in increasing id order, parts' nodes
 * part after part), GF_FIELD_COO_INDEX [2, E] its edges as positions in
 * NODES and GF_FIELD_COO_EDGE_IDS [E] their original ids, in edge_order;
 * GF_FIELD_HOP_COUNTS is [0, nodes] and GF_FIELD_SEEDS / INPUT_INDEX are
 * empty. gf_batch_take_node_data has loader->feature_names over every
 * node; gf_batch_take_edge_data the edge_feature_names over every edge.
 */
/* Kinds: how a batch's node set is made. */
/* budget nodes drawn with replacement by weighting, the distinct kept. */
#define GF_SUBGRAPH_NODES 1
/* budget edges drawn with replacement by weighting, their distinct ends. */
#define GF_SUBGRAPH_EDGES 2
/* budget roots drawn uniformly, a walk of walk_length steps along
   out-edges from each (the engine's walks), every node visited. */
#define GF_SUBGRAPH_WALKS 3
/* The items are part ids: the union of the batch's parts' nodes. */
#define GF_SUBGRAPH_PARTS 4
/* The items are seed nodes (ShaDow-GNN): the k-hop sample of the batch's
   seeds with loader->sample (required; not temporal) made induced: the
   sample's nodes in its order, seeds first (GF_FIELD_SEEDS, HOP_COUNTS
   the sample's; label_names gathered over the seeds), or with
   loader->sample->disjoint every seed's subgraph of its own: its distinct
   nodes in increasing id order, subgraph after subgraph (GF_FIELD_BATCH:
   the seed position of each node's subgraph), each edge in every subgraph
   holding both its ends; no label names then. */
#define GF_SUBGRAPH_KHOP 5
/* The items are seed nodes of a typed graph (distinct): HGT's sample of
   the batch's seeds (the Heterogeneous Graph Transformer's, PyG's
   HGTLoader): num_samples[h * T + t] nodes of type t drawn in hop h, each
   by its squared budget (the budget of a node: the sum, over its edges
   into the sampled nodes of each relation, of 1 / that node's in-degree in
   the relation; a node with more than 50 in-edges in a relation gives
   1/50 through 50 of them, drawn uniformly), without replacement, all of
   them when there are not more; then the subgraph the seeds and draws
   induce. NODES: the seeds, then each hop's draws type by type;
   GF_FIELD_SEEDS and INPUT_INDEX the seeds and their positions among the
   items; HOP_COUNTS [seeds, drawn]; label_names gathered over the seeds;
   the edges grouped by destination in NODES order (edge_order is
   ignored). */
#define GF_SUBGRAPH_HGT 6
/* The node set is what options->draw_callback returns for the batch
   (given its key and items: placeholders), the distinct ids kept: a DGL
   SAINTSampler subclass's own draw, made ahead on the loader's threads. */
#define GF_SUBGRAPH_DRAWN 7
/* Weightings (GF_SUBGRAPH_NODES, GF_SUBGRAPH_EDGES). */
/* Node v: max(out_degree(v), 1) (DGL's SAINTSampler('node')). */
#define GF_SUBGRAPH_WEIGHT_OUT_DEGREE_MIN1 0
/* Node v: out_degree(v) (PyG's GraphSAINTNodeSampler). */
#define GF_SUBGRAPH_WEIGHT_OUT_DEGREE 1
/* Edge u->v: 1/max(in_degree(v),1) + 1/max(out_degree(u),1) (DGL's 'edge'). */
#define GF_SUBGRAPH_WEIGHT_INVERSE_DEGREE 2
/* Edge u->v: in_degree(u) + out_degree(v) + 1e-10 (PyG's GraphSAINTEdgeSampler). */
#define GF_SUBGRAPH_WEIGHT_DEGREE_SUM 3
/* Edge orders of a batch. */
/* By source position, then edge id (DGL's DGLGraph.subgraph). */
#define GF_SUBGRAPH_ORDER_SRC_EID 0
/* By source, then destination position, then edge id (PyG's SparseTensor). */
#define GF_SUBGRAPH_ORDER_SRC_DST 1
/* By destination position, then edge id (a CSC's order). */
#define GF_SUBGRAPH_ORDER_DST_EID 2
/* By edge id (PyG's Data.subgraph). */
#define GF_SUBGRAPH_ORDER_EID 3

/*
 * gf_subgraph_loader_options configures a subgraph loader. Zero-initialise
 * it and set struct_size = sizeof(gf_subgraph_loader_options).
 */
typedef struct gf_subgraph_loader_options {
  uint32_t struct_size;
  /* GF_SUBGRAPH_NODES, _EDGES, _WALKS, _PARTS, _KHOP, _HGT or _DRAWN. */
  int32_t kind;
  /* Batching (batch_size items a batch, shuffle, drop_last, queue_capacity),
     shuffle_seed (which also roots the draws), feature_names (gathered over
     every node), allocator. Its sample must be NULL (GF_SUBGRAPH_KHOP: the
     sampling, required) and its label_names empty (GF_SUBGRAPH_KHOP
     without disjoint: over the seeds), its seed_times NULL, its device the
     host's. Borrowed; required. */
  const gf_loader_options *loader;
  /* GF_SUBGRAPH_WEIGHT_*: of nodes for GF_SUBGRAPH_NODES, of edges for
     GF_SUBGRAPH_EDGES; ignored by the other kinds. */
  int32_t weighting;
  /* GF_SUBGRAPH_ORDER_*: the order of each batch's edges. */
  int32_t edge_order;
  /* Nodes or edges drawn, or walk roots, per batch (>= 0). */
  int64_t budget;
  /* Steps of every walk (GF_SUBGRAPH_WALKS, >= 0). */
  int64_t walk_length;
  /* GF_SUBGRAPH_PARTS: int64 [k+1] offsets from 0, non-decreasing, and
     int64 [offsets[k]] distinct node ids (NULL: nodes 0..offsets[k]-1):
     part j is part_nodes[offsets[j]:offsets[j+1]]. Borrowed (copied). */
  const DLTensor *part_offsets;
  const DLTensor *part_nodes;
  /* Threads the loader's workers share; <= 0: the default (see Threads). */
  int32_t num_threads;
  /* Edge data (gf_graph_set_edge_data) gathered over every batch's edges. */
  int32_t num_edge_feature_names;
  const char *const *edge_feature_names;
  /* -- an earlier layout ends here -- */
  /* GF_SUBGRAPH_HGT: int64 [L * T], hop-major, the nodes of each node type
     drawn in each hop (>= 0; NULL: no hop). Borrowed (copied). Read as
     NULL from 0.3.0's struct_size. */
  const DLTensor *num_samples;
  /* GF_SUBGRAPH_DRAWN (required there, NULL for the other kinds): the
     caller's draw, called once a batch on the thread making it with the
     batch's items and key, returning node ids in [0, num_nodes) (repeats
     allowed; at most max(8 x num_nodes, 65536)); see gf_batch_callback.
     Borrowed (copied); its user and fn must stay valid while the loader is
     open. Read as NULL from 0.3.0's struct_size. */
  const struct gf_batch_callback *draw_callback;
} gf_subgraph_loader_options;

/*
 * gf_subgraph_loader_open makes a subgraph loader: a gf_loader (use it with
 * gf_loader_start, gf_loader_next, gf_loader_num_batches, gf_loader_stats
 * and gf_loader_close) over items: int64/int32 [n] part ids in
 * [0, k) for GF_SUBGRAPH_PARTS, seed node ids for GF_SUBGRAPH_KHOP
 * (distinct unless disjoint), else placeholders whose number alone counts
 * (each batch draws its own node set); borrowed (copied). On a typed
 * graph (not GF_SUBGRAPH_KHOP) a batch also has its edges as one block over
 * all its nodes (gf_batch_num_hops: 1; destination-major, in edge_order
 * within a destination), whose typed view (GF_FIELD_TYPED_*) splits the
 * batch by node type and relation. *out_loader is NULL on failure.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      items, options, options->loader or out_loader NULL;
 *                  invalid options (a struct_size, kind, weighting for the
 *                  kind, edge_order, a negative budget or walk_length,
 *                  loader->batch_size, loader->sample (NULL or not, as
 *                  the kind wants; its options as in gf_sample), label
 *                  names, seed times or a device, an unknown node or edge
 *                  data name, part offsets or nodes, a part id out of
 *                  range, a seed out of range or repeated); a graph without
 *                  edges to draw from; a typed graph (GF_SUBGRAPH_KHOP), an
 *                  untyped one (GF_SUBGRAPH_HGT); num_samples not one entry
 *                  per node type and hop, negative, or set for another kind
 *   GF_ETYPE       items, part_offsets or part_nodes not int64/int32, not
 *                  on the CPU, or not contiguous
 *   GF_EBADHANDLE  graph
 *   GF_ENOMEM      the loader's buffers do not fit in memory
 * A batch with a part repeated in it fails at gf_loader_next (GF_EINVAL).
 * Release with gf_loader_close.
 */
GF_API int gf_subgraph_loader_open(gf_graph *graph, const DLTensor *items,
                                   const gf_subgraph_loader_options *options,
                                   gf_loader **out_loader);

/* Formats of gf_graph_edges. */
/* COO: out_first = sources, out_second = destinations, out_edge_ids, one
   entry per edge in increasing edge id order (for a graph built from a COO
   with implicit ids: the arrays it was built from). */
#define GF_EDGES_COO 0
/* CSC: out_first = indptr [N+1] over the destinations in increasing id
   order, out_second = the sources of each destination's in-edges in the
   graph's stored order, out_edge_ids alongside. */
#define GF_EDGES_CSC 1

/*
 * gf_graph_edges exports a graph's edges in one call: every edge in
 * original node and edge ids (relation = -1), or, on a typed graph
 * (gf_graph_set_types), the edges of relation `relation` in type-local
 * node ids and relation-local edge ids (for CSC, N is the number of nodes
 * of its destination type). The result does not depend on the patches.
 * @param format  GF_EDGES_COO or GF_EDGES_CSC.
 * @param out_first, out_second, out_edge_ids  receive int64 tensors (see
 *                the formats); out_edge_ids may be NULL if not wanted. The
 *                caller owns them and must call their deleters (all are
 *                NULL on failure).
 * Returns:
 *   GF_OK
 *   GF_EINVAL      format unknown; relation < -1, out of range, or >= 0 on
 *                  an untyped graph; out_first or out_second NULL
 *   GF_EBADHANDLE  graph
 *   GF_ENOMEM      the edges do not fit in memory
 */
GF_API int gf_graph_edges(gf_graph *graph, int32_t format, int32_t relation,
                          DLManagedTensor **out_first, DLManagedTensor **out_second,
                          DLManagedTensor **out_edge_ids);

/* ---------------------------------------------------------------------------
 * Per-batch callbacks
 *
 * A gf_batch_callback is a function of the caller that the library calls
 * once for each batch it makes, before making it, where an option takes
 * one (gf_edge_sampler_options.exclude_callback: DGL's callable exclude):
 * given ids of the batch it answers ids of its own, which the batch is
 * then made with. The table is read (copied) when the loader or sampler
 * opens; user must stay valid until it is closed.
 *
 * Threads. fn runs on the thread that makes the batch: one of a loader's
 * sampler threads, ahead of the consumer, or the caller's own thread for a
 * one-off batch (gf_edge_sampler_sample). Calls for different batches may
 * run at the same time on different threads, so fn must be safe to call
 * concurrently. It must not call the loader or sampler it serves.
 * gf_loader_close waits for a call in progress to return.
 *
 * Arguments. batch_key is the batch's key ((epoch << 32) | index for a
 * loader's batch). input, borrowed for the call, is int64 [n] CPU
 * contiguous (n >= 0; data NULL when n is 0): the batch's ids (its seed
 * edge ids). fn answers in *output (NULL on entry): NULL for no ids, or a
 * DLManagedTensor of int64 or int32 [m] CPU contiguous ids, m <=
 * max_output, that it hands over: the library copies the ids, then calls
 * output->deleter (plain C; it may run on any thread of the library).
 *
 * Errors. fn returns 0, or a non-zero status after writing a NUL-terminated
 * message into message (message_size bytes, at least 256): that batch then
 * fails, and the consumer's gf_loader_next (gf_edge_sampler_sample for a
 * one-off batch) returns that status (GF_EINVAL for a value that is not a
 * GF_E* error status) with a message naming the batch and ending with
 * fn's; a loader's epoch ends there. An *output fn set is released either
 * way. An output that breaks the rules above (dtype, device, ndim, layout,
 * more than max_output ids, ids the option does not take) fails the batch
 * the same way, with GF_ETYPE or GF_EINVAL and a message naming the fault.
 */
typedef int (*gf_batch_callback_fn)(void *user, uint64_t batch_key, const DLTensor *input,
                                    int64_t max_output, DLManagedTensor **output, char *message,
                                    size_t message_size);

/* Set struct_size to sizeof(gf_batch_callback); fields are only ever
   appended. */
typedef struct gf_batch_callback {
  uint32_t struct_size;
  /* Passed to fn as it is (the library never reads it). */
  void *user;
  /* Required. */
  gf_batch_callback_fn fn;
} gf_batch_callback;

/* ---------------------------------------------------------------------------
 * Edge-level sampling (link prediction)
 *
 * A gf_edge_sampler turns a batch of seed edges into a gf_batch: negative
 * pairs, the batch's seeds (the nodes of the pairs), the pairs relabelled to
 * positions in those seeds, and the multi-hop neighbourhood of the seeds
 * with the batch's excluded edges left out. Two flavours:
 *   GF_LINK_DGL  seeds are edge ids, as DGL's as_edge_prediction_sampler:
 *                negatives GF_NEG_PER_SOURCE_UNIFORM (DGL's Uniform(k) and
 *                PerSourceUniform(k)) or GF_NEG_GLOBAL_UNIFORM (GlobalUniform
 *                (k), self-loops excluded, without replacement); seeds in
 *                dgl.compact_graphs order; exclude none, self or reverse_id.
 *   GF_LINK_PYG  seeds are node pairs (columns of edge_label_index), as PyG's
 *                LinkNeighborLoader: negatives GF_NEG_BINARY (ceil(amount *
 *                B) pairs) or GF_NEG_TRIPLET (amount destinations per pair);
 *                seeds are the sorted distinct nodes of the pairs.
 * Negatives are drawn from streams keyed by the sample options' seed and the
 * batch key, in original node ids: a batch depends only on the options, the
 * key and its seed edges, never on the patch or thread count.
 *
 * On a typed graph (gf_graph_set_types) the batches are heterogeneous, as
 * DGL's and PyG's are on heterographs: GF_LINK_DGL groups a batch's seed
 * edges by relation (each relation's in batch order; GF_LINK_POS_OFFSETS
 * says where each starts), draws GF_NEG_PER_SOURCE_UNIFORM destinations
 * among the nodes of the destination type of each edge's relation, and
 * compacts per node type as dgl.compact_graphs does on heterographs;
 * GF_LINK_PYG takes pairs of one edge type and draws GF_NEG_BINARY sources
 * and destinations (GF_NEG_TRIPLET destinations) among the nodes of the
 * pairs' source (destination) type. The seeds are then grouped by node
 * type, and every pair index is a position among the seeds of its node's
 * type (a type-local id of the pair graph, or of PyG's per-type
 * edge_label_index). GF_NEG_GLOBAL_UNIFORM draws per relation, as DGL's
 * global_uniform_negative_sampling per canonical edge type: at most k pairs
 * per seed edge of the relation, uniform over its source x destination
 * type, rejecting its own edges (an edge of another relation between the
 * same types may be a negative), self-loops only on a relation within one
 * node type (GF_NEG_KEEP_SELF_LOOPS keeps them); GF_LINK_NEG_OFFSETS says
 * where each relation's negatives start. A disjoint (or temporal) GF_LINK_PYG batch on a typed graph
 * keeps PyG's disjoint seeds (every pair end and negative, in PyG's order,
 * not grouped by type) and its pair indices and GF_FIELD_BATCH are ranks
 * among the seeds of their node's type (GF_FIELD_BATCH modulo the
 * positives), as PyG's heterogeneous edge_sample numbers them.
 *
 * gf_edge_loader_open makes a loader whose batches are these, made ahead of
 * the consumer by the library's threads (see gf_edge_loader_open).
 */
typedef struct gf_edge_sampler gf_edge_sampler;

#define GF_LINK_DGL 1
#define GF_LINK_PYG 2

#define GF_NEG_NONE 0
#define GF_NEG_PER_SOURCE_UNIFORM 1 /* GF_LINK_DGL */
#define GF_NEG_GLOBAL_UNIFORM 2     /* GF_LINK_DGL */
#define GF_NEG_BINARY 3             /* GF_LINK_PYG */
#define GF_NEG_TRIPLET 4            /* GF_LINK_PYG */

/* gf_edge_sampler_options.negative_flags, GF_NEG_GLOBAL_UNIFORM only; zero
   is DGL's GlobalUniform defaults (exclude_self_loops=True, replace=False). */
#define GF_NEG_KEEP_SELF_LOOPS 1 /* exclude_self_loops=False: pairs (u, u) may be drawn */
#define GF_NEG_REPLACE 2         /* replace=True: repeated pairs are kept */

#define GF_EXCLUDE_NONE 0
#define GF_EXCLUDE_SELF 1       /* the batch's seed edge ids */
#define GF_EXCLUDE_REVERSE_ID 2 /* the seed ids and their reverses */

/*
 * Options of gf_edge_sampler_open. Set struct_size to sizeof(*options);
 * fields are only ever appended, and a zero field takes its default.
 */
typedef struct gf_edge_sampler_options {
  uint32_t struct_size;
  /* Neighbour sampling of every batch (required; read during the call).
     Its seed roots the negative streams too; its exclude_edges are left out
     of every batch, on top of each batch's own exclusion. */
  const gf_sample_options *sample;
  /* GF_LINK_DGL or GF_LINK_PYG. */
  int32_t mode;
  /* GF_NEG_*, one of the mode's, or GF_NEG_NONE. */
  int32_t negative;
  /* DGL: k, negatives per seed edge (integer > 0). PyG: NegativeSampling's
     amount (> 0; an integer for triplet). */
  double amount;
  /* GF_LINK_DGL only: GF_EXCLUDE_*. */
  int32_t exclude;
  /* GF_EXCLUDE_REVERSE_ID: int64 (or int32) [E] reverse_eids, reverse_eids[e]
     the reverse of edge e (copied); or NULL with reverse_half > 0: edges e
     and e + reverse_half are reverses of each other (a graph built from
     cat([src, dst]) -> cat([dst, src])). */
  const DLTensor *reverse_eids;
  int64_t reverse_half;
  /* -- an earlier layout ends here -- */
  /* GF_NEG_GLOBAL_UNIFORM only: GF_NEG_KEEP_SELF_LOOPS | GF_NEG_REPLACE, or
     0 (DGL's defaults). Appended: a struct_size that ends at reverse_half
     (the first layout) reads it as 0. */
  uint32_t negative_flags;
  /* GF_LINK_PYG with negatives only: float32 or float64 [num_nodes], PyG's
     NegativeSampling weight: negatives are drawn with probability
     proportional to their node's weight (with replacement; weights finite,
     >= 0, with a positive sum). NULL: uniform. Borrowed (copied during the
     call). On a typed graph: one weight per node of the type it draws, by
     the type's own ids (triplet: the pairs' destination type; binary: both
     end types, which must then have that many nodes), checked with the
     pairs (GF_EINVAL naming the sizes). */
  const DLTensor *negative_weights;
  /* -- an earlier layout ends here -- */
  /* GF_LINK_DGL only (NULL: none): DGL's callable exclude (see "Per-batch
     callbacks"), called for each batch with its seed edge ids (input, in
     batch order; global ids on a typed graph) and returning edge ids of
     the graph (at most 2 x (edges + seed edges), repeats allowed) that the
     batch's neighbour sampling leaves out, on top of sample->exclude_edges
     and exclude. Read during gf_edge_sampler_open and gf_edge_loader_open;
     refused (GF_ENOTSUP) by gf_edge_loader_open_part. With
     gf_edge_loader_open_comm every rank calls it for every batch of a
     round (the ranks sample a round's batches in turns, as with exclude):
     it must give every rank the same edges for the same seed edges. */
  const gf_batch_callback *exclude_callback;
} gf_edge_sampler_options;

/*
 * gf_edge_sampler_open checks options and returns a sampler over graph,
 * which holds a reference to the graph until gf_edge_sampler_close.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      options or out_sampler NULL; an invalid field (named)
 *   GF_ETYPE       reverse_eids or sample->exclude_edges not int64/int32 CPU
 *   GF_ENOTSUP     a valid option this build does not support
 *   GF_EBADHANDLE  graph
 */
GF_API int gf_edge_sampler_open(gf_graph *graph, const gf_edge_sampler_options *options,
                                gf_edge_sampler **out_sampler);

/*
 * gf_edge_sampler_sample samples one edge batch.
 * @param seeds     GF_LINK_DGL: int64 [B] edge ids (repeats allowed).
 *                  GF_LINK_PYG: int64 [B] source nodes of the pairs.
 *                  Borrowed.
 * @param seeds_dst GF_LINK_PYG: int64 [B] destination nodes; GF_LINK_DGL:
 *                  NULL. Borrowed.
 * @param batch_key names the batch's random streams (the batch index, say).
 * @param out_batch receives the batch, NULL on failure: GF_FIELD_SEEDS are
 *                  the link seeds (first in GF_FIELD_NODES), the blocks are
 *                  as gf_sample's, and gf_batch_take_link gives the pairs.
 * Returns:
 *   GF_OK
 *   GF_EINVAL      seeds empty or with an id out of range (named), seeds_dst
 *                  given in DGL mode or missing in PyG mode, lengths differ
 *   GF_ETYPE       seeds or seeds_dst not int64/int32 CPU contiguous
 *   GF_EBADHANDLE  sampler
 *   GF_EIO, GF_ENOMEM
 */
GF_API int gf_edge_sampler_sample(gf_edge_sampler *sampler, const DLTensor *seeds,
                                  const DLTensor *seeds_dst, uint64_t batch_key,
                                  gf_batch **out_batch);

/*
 * gf_edge_sampler_sample_timed is gf_edge_sampler_sample for a GF_LINK_PYG
 * sampler whose sample options are temporal (PyG's LinkNeighborLoader with
 * time_attr and edge_label_time): seed_times holds int64 [B], one time per
 * pair, the seed time of both its ends and of its negatives (as PyG's
 * edge_sample repeats edge_label_time). Temporal link sampling is disjoint
 * (every pair end is a seed of its own subgraph, GF_FIELD_BATCH its pair).
 * Under node times (gf_graph_set_node_time) every negative is kept not
 * later than its pair's time, as PyG's neg_sample: a later one is drawn
 * again (up to five times), then replaced by the earliest node of its
 * range (of its type on a typed graph). An edge loader takes the pairs'
 * times as
 * options->loader->seed_times, shuffled with the pairs.
 * Returns: as gf_edge_sampler_sample; GF_EINVAL also for a GF_LINK_DGL
 * sampler, seed_times NULL or not one per pair, or a sampler that is not
 * temporal.
 */
GF_API int gf_edge_sampler_sample_timed(gf_edge_sampler *sampler, const DLTensor *seeds,
                                        const DLTensor *seeds_dst, const DLTensor *seed_times,
                                        uint64_t batch_key, gf_batch **out_batch);

/* gf_edge_sampler_close releases the sampler; batches stay valid. NULL: no-op. */
GF_API void gf_edge_sampler_close(gf_edge_sampler *sampler);

/* Pair indices of an edge batch for gf_batch_take_link: int64 positions into
   GF_FIELD_SEEDS. A field its mode does not produce is an empty [0] tensor. */
/* DGL: the edges of pair_graph, one per seed edge in order. PyG (no or
   binary negatives): edge_label_index, the B positives then the negatives. */
#define GF_LINK_POS_SRC 0
#define GF_LINK_POS_DST 1
/* DGL: the edges of neg_pair_graph. */
#define GF_LINK_NEG_SRC 2
#define GF_LINK_NEG_DST 3
/* PyG triplet: src_index [B], dst_pos_index [B], dst_neg_index [B, amount]. */
#define GF_LINK_SRC_INDEX 4
#define GF_LINK_DST_POS_INDEX 5
#define GF_LINK_DST_NEG_INDEX 6
/* [B]: the position of each positive pair's seed edge (or pair) among the
   loader's seeds, in pair order (PyG's input_id); for gf_edge_sampler_sample,
   among the seeds given to it. */
#define GF_LINK_INPUT_ID 7
/* DGL: [B] the seed edge ids in pair order (pair_graph.edata[dgl.EID]);
   relation-local ids on a typed graph. PyG: empty. */
#define GF_LINK_EDGE_IDS 8
/* DGL on a typed graph: [R+1] where each relation's positive (negative)
   pairs start among GF_LINK_POS_* (GF_LINK_NEG_*); empty otherwise. */
#define GF_LINK_POS_OFFSETS 9
#define GF_LINK_NEG_OFFSETS 10

/*
 * gf_batch_take_link moves a pair field (GF_LINK_*) of an edge batch (from
 * gf_edge_sampler_sample, or gf_loader_next on an edge loader) out as a
 * DLPack tensor the caller owns; each field can be taken once.
 * Returns: GF_OK; GF_EINVAL field out of range, out_tensor NULL, or a batch
 * that is not an edge batch; GF_ESTATE field already taken; GF_EBADHANDLE.
 */
GF_API int gf_batch_take_link(gf_batch *batch, int32_t field, DLManagedTensor **out_tensor);

/*
 * gf_edge_loader_options configures an edge loader. Zero-initialise it and
 * set struct_size = sizeof(gf_edge_loader_options); fields are only ever
 * appended, and a zero field takes its default.
 */
typedef struct gf_edge_loader_options {
  uint32_t struct_size;
  /* How each batch is made, as gf_edge_sampler_open takes it (mode,
     negatives, exclusion, and the neighbour sampling: its seed roots every
     random stream, its num_threads is the loader's threads). Required; read
     during the call. */
  const gf_edge_sampler_options *sampler;
  /* How the seeds are batched, as gf_loader_open takes it: batch_size (seed
     edges or pairs per batch), shuffle, drop_last, shuffle_seed,
     queue_capacity, feature_names (node data over every node of a batch),
     label_names (over its seeds), allocator. Its sample must be NULL or
     sampler->sample; its seed_times NULL, or for a temporal GF_LINK_PYG
     sampler one int64 time per pair (see gf_edge_sampler_sample_timed),
     shuffled with the pairs. Required; read during the call. */
  const gf_loader_options *loader;
  /* Edge data (gf_graph_set_edge_data) gathered over every batch's sampled
     edges, taken with gf_batch_take_edge_data. Borrowed. */
  int32_t num_edge_feature_names;
  const char *const *edge_feature_names;
  /* Non-zero: every batch also holds its sampled edges as one edge list
     (GF_FIELD_COO_*), made by the sampler threads. */
  int32_t coo;
} gf_edge_loader_options;

/*
 * gf_edge_loader_open makes an edge loader: a gf_loader (use it with
 * gf_loader_start, gf_loader_next, gf_loader_num_batches, gf_loader_stats,
 * gf_loader_set_cache and gf_loader_close) over seed edges (GF_LINK_DGL:
 * edge ids, repeats allowed) or seed pairs (GF_LINK_PYG: seeds -> seeds_dst;
 * on a typed graph, of one edge type). Each epoch shuffles the seeds by
 * (loader->shuffle_seed, epoch) and batch i of epoch e is the batch
 * gf_edge_sampler_sample makes of its seeds with batch key (e << 32) | i
 * (its GF_LINK_INPUT_ID giving their positions among the loader's seeds),
 * made ahead of the consumer by the library's sampler threads, with its
 * node data and edge data gathered; batches take their fields as
 * gf_edge_sampler_sample's (gf_batch_take, gf_batch_take_link, ...). No
 * thread runs until gf_loader_start. *out_loader is NULL on failure.
 * @param seeds     int64 (or int32) [n]: GF_LINK_DGL: edge ids;
 *                  GF_LINK_PYG: the pairs' sources. Borrowed (copied).
 * @param seeds_dst GF_LINK_PYG: int64 [n] the pairs' destinations;
 *                  GF_LINK_DGL: NULL. Borrowed (copied).
 * Returns:
 *   GF_OK
 *   GF_EINVAL      seeds, options, options->sampler, options->loader or
 *                  out_loader NULL; invalid options (as gf_edge_sampler_open
 *                  and gf_loader_open say; loader->sample other than NULL
 *                  or sampler->sample; loader->seed_times set for
 *                  GF_LINK_DGL, or not one per pair; an unknown node or
 *                  edge data name); seeds_dst given in DGL mode or
 *                  missing in PyG mode, lengths differ; a seed edge id that
 *                  is not an edge, a node id out of range, pairs of several
 *                  edge types on a typed graph (the first bad seed named)
 *   GF_ETYPE       seeds or seeds_dst not int64/int32 CPU contiguous
 *   GF_ENOTSUP     a valid option this build does not support
 *   GF_EBADHANDLE  graph
 * Release with gf_loader_close.
 */
GF_API int gf_edge_loader_open(gf_graph *graph, const DLTensor *seeds, const DLTensor *seeds_dst,
                               const gf_edge_loader_options *options, gf_loader **out_loader);

/* ------------------------------------------------------------------------ */
/* Communicators                                                            */
/* ------------------------------------------------------------------------ */

/*
 * gf_comm is a communicator the host provides, for running one rank per
 * process (torch.distributed, MPI, NCCL's host side, threads in a test): a
 * table of callbacks with a user pointer, through which the library's
 * collective sampling exchanges its messages with the other ranks. Every
 * collective is two calls, in the same order on every rank:
 *
 *   exchange_sizes: send_sizes[j] is the number of bytes this rank sends to
 *     rank j; the callback fills recv_sizes[j] with the number rank j sends
 *     here (an all-to-all of one int64 per rank).
 *   all_to_all: send[j] (send_sizes[j] bytes) goes to rank j; the callback
 *     fills recv[j] (recv_sizes[j] bytes, allocated by the library) with
 *     what rank j sent. send[rank] goes to recv[rank].
 *
 * Every pointer passed is C memory owned by the library, valid only during
 * the call (copy what must outlive it); pointers of empty messages may be
 * NULL. A callback returns 0 on success and anything else on failure, after
 * which errmsg (optional, may be NULL) is asked for a message; the library
 * copies it at once. A failure is final: every later exchange of the
 * loader fails with the same message, since the ranks no longer pair up.
 *
 * The callbacks run on a library thread, never two at once for one loader.
 * The library cannot interrupt a callback, but it stops waiting for one
 * (a) when the loader is closed: gf_loader_close returns promptly even
 * while a callback is blocked on a peer that never answers, and (b) when
 * timeout_ms is set and the callback has not returned within it: the
 * loader then fails, gf_loader_next returning GF_EIO with "rank R of N,
 * size exchange (or data exchange): comm: no answer within the time-out:
 * rank P did not answer within T" (with more than two ranks the library
 * cannot tell which peer is silent and names them all; a callback that
 * can tell should fail first, with a message naming it). A callback the
 * library stopped waiting for is left to return on its own: its result is
 * dropped, the buffers it was given stay valid until it returns, and no
 * callback of the loader starts after that, nor after gf_loader_close has
 * returned. user must stay valid until every callback has returned: make
 * a blocked one return (fail the host's pending collectives, e.g. by
 * destroying its process group, or with the host's own time-out) before
 * freeing it. A rank that fails must make its peers' collectives fail too
 * (closing its process group does). The table is copied when a loader is
 * opened.
 *
 * send and recv (optional: both or neither) carry small control messages
 * between two ranks, in order, for the coordinator that orders the
 * exchanges of concurrent sampler workers (DSP's CCC: every rank starts
 * them in one global order, so that they cannot deadlock or pair up
 * wrongly). With them, a loader samples with min(num_threads, 4) workers
 * (the default thread count when num_threads <= 0) over the one exchange channel; without,
 * with one. They must not share a channel with the exchanges (a control
 * message must never wait behind an exchange). send delivers size bytes to
 * rank `to`; recv blocks until the next message from rank `from` arrives,
 * copies it into buf (capacity bytes: enough for any message, which is at
 * most 4110 bytes) and sets *size. The library calls send from one thread and
 * recv from one thread per peer, concurrently; both must fail within bounded
 * time when the peer dies. A recv still blocked when the loader closes is
 * left to return on its own (its message is dropped). With timeout_ms set,
 * an exchange that some rank has not reached within timeout_ms fails every
 * rank with a message naming the ranks that did not (rank 0, which orders
 * the exchanges, tells the others; should rank 0 itself stop answering, the
 * others give it up after three time-outs, naming it), and a send that has
 * not returned within it fails naming the rank it was for (a recv waits
 * for the next message however long: control messages come only when
 * ranks exchange).
 *
 * all_to_all_dl (optional, after 0.3.0; NULL: all_to_all is called) is
 * all_to_all for hosts that hand the library's memory to a transport
 * without copying it (torch.distributed through DLPack): send is a 1-D
 * uint8 tensor of the messages to ranks 0, 1, ... back to back
 * (send_sizes[j] bytes each), recv one of recv_sizes' total bytes that the
 * callback fills with the messages from ranks 0, 1, ... back to back. Both
 * are C memory of the library and both become the callback's: it calls
 * each one's deleter (plain C, on any thread) once it and its transport
 * are done with them, whatever it returns, possibly long after it
 * returned (a transport that gave up on an exchange may still touch them
 * until it lets go). The library reads recv when the callback returned 0,
 * the memory staying valid until every deleter has run. With it set,
 * all_to_all may be NULL.
 *
 * struct_size: sizeof(gf_comm), or from a header before timeout_ms the
 * offset just past recv (timeout_ms is then 0), or from one before
 * all_to_all_dl the offset just past timeout_ms (all_to_all_dl is then
 * NULL).
 */
typedef struct gf_comm {
  uint32_t struct_size; /* sizeof(gf_comm) */
  int32_t rank;         /* this process's rank, in [0, size) */
  int32_t size;         /* number of ranks (>= 1) */
  void *user;           /* passed to every callback */
  int (*exchange_sizes)(void *user, const int64_t *send_sizes,
                        int64_t *recv_sizes);
  int (*all_to_all)(void *user, const void *const *send,
                    const int64_t *send_sizes, void *const *recv,
                    const int64_t *recv_sizes);
  const char *(*errmsg)(void *user);
  int (*send)(void *user, int32_t to, const void *msg, int64_t size);
  int (*recv)(void *user, int32_t from, void *buf, int64_t capacity,
              int64_t *size);
  /* -- an earlier layout ends here -- */
  /* How long (milliseconds, at most a year) the library waits for an
     exchange before it fails the loader, naming the rank that did not
     answer and the time-out; 0: as long as the callbacks take (then bound
     them yourself). */
  int64_t timeout_ms;
  /* -- an earlier layout ends here -- */
  int (*all_to_all_dl)(void *user, DLManagedTensor *send,
                       const int64_t *send_sizes, DLManagedTensor *recv,
                       const int64_t *recv_sizes);
} gf_comm;

/*
 * gf_loader_open_comm opens rank comm->rank's loader of a group that
 * samples together: every rank calls it with the same graph (opened with
 * num_patches = comm->size), seeds and options. Rank r owns patch r for
 * sampling; topology and node data are replicated in every process. The
 * epoch's batches are the single-process loader's (bit-identical for the
 * same seeds and options), dealt out round-robin: rank r gets batches r,
 * r + size, ...; every rank gets ceil(batches / size) of them, the ranks
 * short of one in the last round padded with a copy of one of the epoch's
 * first batches (as torch's DistributedSampler pads). Use the loader with
 * gf_loader_start/next/close; gf_loader_num_batches gives this rank's
 * count. Every rank must read every epoch to its end: a rank that stops
 * early leaves the others blocked in their collective until its time-out.
 * Returns what gf_loader_open returns, and GF_EINVAL for a NULL comm, a
 * struct_size other than sizeof(gf_comm), a NULL exchange_sizes, a NULL
 * all_to_all and all_to_all_dl, only one of send and recv, a rank or size out of range, or a
 * graph whose number of
 * patches is not comm->size. A failed exchange makes gf_loader_next return
 * GF_EIO with the host's message.
 */
GF_API int gf_loader_open_comm(gf_graph *graph, const DLTensor *seeds,
                               const gf_loader_options *options,
                               const gf_comm *comm, gf_loader **out_loader);

/* ---------------------------------------------------------------------------
 * Rank parts: each process opens its own folder of a partition
 *
 * gf_part is one rank's share of a dataset partitioned by
 * gf_dataset_partition (below): gf_part_open reads DST/partition.json, the
 * rank's folder DST/part-<rank>/ and, for GF_LAYOUT_DSP and
 * GF_LAYOUT_HYBRID, DST/assignment.npy, and none of the other ranks'
 * folders. Node ids that cross these functions are ORIGINAL ids of the
 * whole graph. What a part holds, by layout:
 *   GF_LAYOUT_DSP           the in-edges of its owned nodes only, and the
 *                           node data of its owned nodes. Sampling is CSP
 *                           over the communicator (each rank answers the
 *                           tasks of its own nodes); the loader fetches
 *                           the node data of other ranks' nodes from their
 *                           owners, one exchange round per batch.
 *   GF_LAYOUT_HYBRID        the whole topology, the node data of its owned
 *                           nodes: sampling as GF_LAYOUT_DSP, node data
 *                           fetched the same way.
 *   GF_LAYOUT_SELF_RELIANT  the num_hops-hop neighbourhood of its own seeds
 *                           and every node data row it holds: no exchange.
 * Memory that grows with the whole graph's node count N on every rank: 8
 * bytes a node for the CSC's row offsets, and for dsp and hybrid 16 more
 * for the id maps (plus the sampler's table, 4 bytes a node up to 2^24).
 * A typed partition's part (partition.json lists node_types and
 * edge_types) is typed by the whole graph's types (gf_graph_num_types'
 * sense; its batches carry the typed fields), and its per-type node data
 * ("<type>/<name>") holds the rows of its nodes of that type: loaders on
 * it take per-type names, one row per batch node of the type (labels: per
 * seed of the type) in the batch's typed order, fetched like the others.
 * Must be closed with gf_part_close; loaders opened on it keep working
 * until they are closed.
 * ------------------------------------------------------------------------- */

typedef struct gf_part gf_part;

/* Flags of gf_part_open. */
#define GF_PART_VERIFY 1 /* read every file whole and check its CRC-32C */

/*
 * gf_part_open opens rank's part of the partition in dir (the folder
 * holding partition.json). The sizes of the files it reads are compared
 * with those partition.json and the folder's graphferry.json record (their
 * checksums too with GF_PART_VERIFY), and every id map is checked.
 * Returns: GF_OK; GF_EINVAL dir or out_part NULL, rank outside
 * [0, parts), unknown flags, a folder that is not a partition's; GF_EIO a
 * missing, damaged or changed file; GF_ENOMEM.
 */
GF_API int gf_part_open(const char *dir, int32_t rank, uint32_t flags, gf_part **out_part);

/* gf_part_close closes a part (NULL: no-op; twice: ignored). */
GF_API void gf_part_close(gf_part *part);

/* What gf_part_get_info reports. Set struct_size to sizeof(gf_part_info). */
typedef struct gf_part_info {
  uint32_t struct_size;
  int32_t rank;      /* this part's rank */
  int32_t num_parts; /* ranks of the partition */
  int32_t layout;    /* GF_LAYOUT_* */
  int32_t num_hops;  /* L of GF_LAYOUT_SELF_RELIANT (0 otherwise) */
  int64_t num_nodes; /* nodes of the whole graph */
  int64_t num_owned; /* nodes this rank owns */
  int64_t num_edges; /* edges this rank's topology holds */
} gf_part_info;

/*
 * gf_part_get_info fills *out_info.
 * Returns: GF_OK; GF_EINVAL out_info NULL or its struct_size is not
 * sizeof(gf_part_info); GF_EBADHANDLE.
 */
GF_API int gf_part_get_info(gf_part *part, gf_part_info *out_info);

/*
 * gf_part_owned_nodes returns the original ids of the rank's owned nodes,
 * increasing (int64 [num_owned]), as a DLPack tensor the caller owns.
 * gf_part_get_node_data returns node data name ("feat", "label",
 * "train_mask", ...) of those nodes, one row each in the same order (a
 * typed part's per-type name "<type>/<name>": the owned nodes of that
 * type, in the same order).
 * Returns: GF_OK; GF_EINVAL name or out_tensor NULL, unknown name;
 * GF_ENOMEM; GF_EIO a mapped file that can no longer be read;
 * GF_EBADHANDLE.
 */
GF_API int gf_part_owned_nodes(gf_part *part, DLManagedTensor **out_tensor);
GF_API int gf_part_get_node_data(gf_part *part, const char *name, DLManagedTensor **out_tensor);

/*
 * gf_part_node_data_names sets *out_names to the names of the part's node
 * data, sorted, separated by '\n'. Free with gf_free.
 * Returns GF_OK, GF_EBADHANDLE, GF_EINVAL (out_names is NULL).
 */
GF_API int gf_part_node_data_names(gf_part *part, char **out_names);

/*
 * Temporal sampling on a part (GF_TEMPORAL_NODE, GF_TEMPORAL_EDGE): a
 * partition carries no times, so the ranks give them after gf_part_open
 * and before opening loaders (which refuse temporal requests, GF_ESTATE,
 * until then). A rank reads the times of the nodes it holds (its owned
 * nodes and the sources of their in-edges): a dsp part keeps those alone
 * (8 bytes x (owned + halo)), a hybrid or self-reliant part every node's;
 * PyG negatives under node times, which can be any node, are asked of
 * their owners batch by batch.
 * gf_part_set_node_time with comm NULL: time is int64 [N], the time of
 * every node of the whole graph by original id (the part keeps what it
 * holds). With comm: a collective (every rank calls it, comm->rank the
 * part's rank, comm->size its num_parts), time is int64 [num_owned], the
 * times of the rank's own nodes in gf_part_owned_nodes order; three
 * all-to-alls carry each rank the times of the nodes it holds (O(owned +
 * halo) bytes a rank). A rank giving another length makes the call fail
 * on every rank.
 * gf_part_set_edge_time: int64, by original edge id (more entries than the
 * largest original edge id the part holds).
 * Borrowed (copied). Returns: GF_OK; GF_EINVAL time NULL, not 1-D, a wrong
 * length, a bad comm; GF_ETYPE time not int64 on the CPU; GF_ESTATE loaders
 * are open on the part; GF_EIO an exchange failed; GF_EBADHANDLE.
 */
GF_API int gf_part_set_node_time(gf_part *part, const DLTensor *time, const gf_comm *comm);
GF_API int gf_part_set_edge_time(gf_part *part, const DLTensor *time);

/*
 * gf_loader_open_part opens rank comm->rank's loader on its part: every
 * rank calls it on its own part of the same partition, with the same
 * options, comm->rank the part's rank and comm->size its num_parts.
 *   GF_LAYOUT_DSP, GF_LAYOUT_HYBRID: seeds are original ids (any rank's),
 *     the same on every rank. The batches are gf_loader_open_comm's: the
 *     single-process loader's batches with the same seeds and options,
 *     bit-identical node data included, dealt out round-robin with
 *     padding. Layer-wise sampling is GF_ENOTSUP on dsp parts (its draw
 *     needs the degree of every node).
 *   GF_LAYOUT_SELF_RELIANT: seeds are this rank's own seeds (owned nodes
 *     with a train, val or test mask set in its folder), at most num_hops
 *     hops. Each rank samples its own batches with no exchange; every
 *     batch equals the single-process sample of its seeds with the same
 *     batch key. The ranks agree at open (one exchange) on the number of
 *     batches per epoch, the largest of theirs; a rank with fewer repeats
 *     its first ones.
 * Every rank must read every epoch to its end (dsp, hybrid), as with
 * gf_loader_open_comm.
 * Returns what gf_loader_open_comm returns, and GF_EINVAL for a comm whose
 * rank or size is not the part's, a self-reliant seed this rank does not
 * hold with its neighbourhood, or more hops than a self-reliant part holds.
 */
GF_API int gf_loader_open_part(gf_part *part, const DLTensor *seeds,
                               const gf_loader_options *options,
                               const gf_comm *comm, gf_loader **out_loader);

/*
 * gf_edge_loader_open_comm opens rank comm->rank's edge loader (link
 * prediction) of a group that samples together, as gf_loader_open_comm
 * opens a node loader: every rank calls it with the same graph (opened
 * with num_patches = comm->size; typed or not), seeds, seeds_dst and options,
 * which are gf_edge_loader_open's. The epoch's batches are the
 * single-process edge loader's (gf_edge_loader_open with the same
 * arguments: the same shuffle, batch keys, negatives, pairs, samples, node
 * and edge data, bit for bit), dealt out round-robin with padding as
 * gf_loader_open_comm deals them: rank r gets batches r, r + size, ...,
 * every rank ceil(batches / size). With GF_EXCLUDE_SELF or
 * GF_EXCLUDE_REVERSE_ID (global edge ids) the ranks sample the batches of
 * a round in turns, since every rank answers the others' sampling tasks
 * under the request of the batch being sampled. On a typed graph
 * (gf_graph_set_types, the same types on every rank) the batches are
 * gf_edge_loader_open's typed ones (seed edges grouped by relation,
 * negatives per type, typed views). Every rank must read every epoch to
 * its end, as with gf_loader_open_comm.
 * Returns what gf_edge_loader_open returns and the GF_EINVAL of
 * gf_loader_open_comm for comm.
 */
GF_API int gf_edge_loader_open_comm(gf_graph *graph, const DLTensor *seeds, const DLTensor *seeds_dst,
                                    const gf_edge_loader_options *options, const gf_comm *comm,
                                    gf_loader **out_loader);

/*
 * gf_edge_loader_open_part opens rank comm->rank's edge loader on its part
 * (GF_LAYOUT_DSP or GF_LAYOUT_HYBRID): every rank calls it on its own part
 * of the same partition with the same seeds (edge ids or node pairs of the
 * whole graph, original ids) and options. The batches are
 * gf_edge_loader_open_comm's, i.e. the single-process edge loader's of the
 * whole dataset; node data of other ranks' nodes is fetched from their
 * owners as gf_loader_open_part fetches it. On GF_LAYOUT_DSP the endpoints
 * of GF_LINK_DGL seed edges are resolved at open, in one exchange (each
 * rank holds the in-edges of its own nodes): every rank must call it;
 * GF_NEG_GLOBAL_UNIFORM negatives then ask the owners which candidate
 * pairs are edges, in one exchange round per batch (the same negatives as
 * one process).
 * Returns what gf_edge_loader_open_comm returns, the GF_EINVAL of
 * gf_loader_open_part for comm, and GF_ENOTSUP for GF_LAYOUT_SELF_RELIANT,
 * temporal sampling before the part has its times, edge_feature_names (a
 * part holds no edge data) and layer-wise sampling on GF_LAYOUT_DSP.
 */
GF_API int gf_edge_loader_open_part(gf_part *part, const DLTensor *seeds, const DLTensor *seeds_dst,
                                    const gf_edge_loader_options *options, const gf_comm *comm,
                                    gf_loader **out_loader);

/* ---------------------------------------------------------------------------
 * Offline partitioning
 *
 * gf_dataset_partition splits a dataset directory into one folder per rank,
 * DST/part-<r>/, and writes DST/partition.json and DST/assignment.npy. Every
 * part-<r> is a graphferry dataset (gf_graph_open opens it) over the rank's
 * local nodes: its owned nodes first (local ids [0, num_owned), increasing
 * original id), then the other nodes it holds; with global_ids.npy (int64
 * [num_local]: local node -> original node) and global_eids.npy (int64
 * [num_local_edges]: local edge id -> original edge id). Labels and extra
 * node columns are copied for every local node; the train/val/test masks
 * are set on owned nodes only (each seed is on its owner's rank alone).
 * What a rank holds depends on the layout:
 *   GF_LAYOUT_DSP           owned nodes with all their in-edges; their
 *                           sources owned elsewhere follow as halo nodes (no
 *                           in-edges). Features of owned nodes only, in
 *                           feat.npy ([num_owned, ...], no feat.bin).
 *   GF_LAYOUT_SELF_RELIANT  owned nodes and the num_hops-hop in-neighbourhood
 *                           of the owned seeds (train, val and test nodes),
 *                           with every in-edge of every node closer than
 *                           num_hops to a seed; features of every local node
 *                           in the dataset's feat.bin (no exchange at all).
 *   GF_LAYOUT_HYBRID        every node and edge; features of owned nodes only,
 *                           in feat.npy.
 * partition.json records the method, parts, layout, per-rank counts, the
 * size and CRC-32C of every file, and the edge cut (edges whose endpoints
 * have different ranks) of this assignment and of range and random.
 * ------------------------------------------------------------------------- */

#define GF_LAYOUT_DSP 0          /* DSP patches: exchange while sampling */
#define GF_LAYOUT_SELF_RELIANT 1 /* PaGraph: L-hop neighbourhoods, no exchange */
#define GF_LAYOUT_HYBRID 2       /* FastSample: topology everywhere, features split */

/* The most ranks gf_dataset_partition writes (and gf_part_open reads). */
#define GF_MAX_PARTS 65536

/*
 * Options of gf_dataset_partition. Set struct_size to sizeof(*options);
 * fields are only ever appended, and a zero field takes its default.
 */
typedef struct gf_partition_options {
  uint32_t struct_size;
  /* GF_PARTITION_RANGE (default), GF_PARTITION_RANDOM, GF_PARTITION_GIVEN
     or GF_PARTITION_LDG. */
  int32_t method;
  /* Number of ranks (1 to GF_MAX_PARTS; required). */
  int32_t num_parts;
  /* GF_LAYOUT_DSP (default), GF_LAYOUT_SELF_RELIANT or GF_LAYOUT_HYBRID. */
  int32_t layout;
  /* L of GF_LAYOUT_SELF_RELIANT (>= 0); ignored by the other layouts. */
  int32_t num_hops;
  /* Seed of GF_PARTITION_RANDOM (and of the random baseline cut). */
  uint64_t seed;
  /* GF_PARTITION_GIVEN: int64 or int32 [num_nodes] ranks in [0, num_parts)
     (a METIS result, say); NULL otherwise. Copied during the call. */
  const DLTensor *assignment;
  /* Method name recorded in partition.json ("metis"); NULL: the method's. */
  const char *method_name;
  /* Called (from an engine thread, with the call still running) after each
     rank's folder is written: done of total ranks. NULL: no calls. */
  void (*progress)(void *progress_user, int64_t done, int64_t total);
  void *progress_user;
  /* -- an earlier layout ends here -- */
  /* Nonzero: write into a dst_dir that is not empty, or is src_dir, inside
     it or above it; what a partition writes there (partition.json,
     assignment.npy, every part-<r>/) is removed first, nothing else (never
     a folder holding src_dir). 0 (default): such a dst_dir is refused. */
  int32_t overwrite;
  /* Nonzero: go on with the partition an interrupted run (killed, out of
     memory) left in dst_dir, keeping the rank folders it finished, when its
     options and assignment match; else (or 0) start over. */
  int32_t resume;
  /* > 0: the memory the call may use, in bytes (refused up front when the
     assignment does not fit in it; half of it bounds the heap, the rest is
     left to the page cache); 0: no bound. */
  int64_t memory_limit_bytes;
} gf_partition_options;

/*
 * gf_dataset_partition writes the dataset in src_dir partitioned into
 * dst_dir (created if missing) as described above. dst_dir must be empty or
 * new, and neither src_dir, inside it nor above it, unless
 * options->overwrite (see gf_output_options).
 * Returns:
 *   GF_OK
 *   GF_EINVAL  a path or options NULL; dst_dir not empty, or src_dir, inside
 *              it or above it, without options->overwrite (the message names
 *              it); num_parts outside [1, GF_MAX_PARTS];
 *              method, layout or num_hops out of range; an assignment with
 *              the wrong length,
 *              a rank out of range, or given without GF_PARTITION_GIVEN
 *   GF_ETYPE   assignment not int64/int32 CPU contiguous
 *   GF_EIO     src_dir is not a readable dataset (every file's recorded
 *              CRC-32C is checked before anything is written), or dst_dir
 *              not writable
 *   GF_ENOMEM
 */
GF_API int gf_dataset_partition(const char *src_dir, const char *dst_dir,
                                const gf_partition_options *options);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHFERRY_H */

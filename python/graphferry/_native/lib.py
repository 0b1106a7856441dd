"""ctypes declarations of the C interfaces graphferry calls: include/graphferry.h
(the library), the dlpack.h structs it passes, the CUDA library's check hooks
and the few Python C API functions that handle DLPack capsules. Every
``ctypes`` declaration of the package is here, once; the modules above call
these and declare nothing.

Each C function is declared once: its prototype quoted in a comment, then
``@cfunc(name, argtypes, restype)`` over a typed, positional-only stub that the
decorator replaces with the foreign function. Functions that return a status
get an ``errcheck`` that raises :class:`~graphferry.GraphferryError` (or a
subclass) with ``gf_errmsg()``'s text for anything but ``GF_OK`` (and
``GF_DONE`` where the function documents it).

Every binding first checks that the process is the one that loaded the
library: the library runs its own threads, which a forked child does not
have, so a call there raises ``GraphferryError(GF_EFORK)`` before reaching C
(the library itself would also return ``GF_EFORK``). ``binding.raw`` is the
unguarded foreign function without errcheck, for tests of the C behaviour.

The library is found at ``$GRAPHFERRY_LIB_PATH`` (a file path), else at
``graphferry/lib/libgraphferry.so`` (where ``pip install`` builds it), the CPU
or the CUDA build as :mod:`graphferry._native.backend` chooses. Its major
version must equal the package's.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Callable, NewType

from .. import _version
from ..errors import (
    GF_DONE,
    GF_EBADHANDLE,
    GF_EFORK,
    GF_NOT_READY,
    GF_OK,
    GraphferryError,
    error_for_status,
)
from . import backend
from .backend import BackendError

# ---------------------------------------------------------------------------
# Finding and loading the library
# ---------------------------------------------------------------------------

LIB_NAME = "libgraphferry.so"
ENV_LIB_PATH = "GRAPHFERRY_LIB_PATH"


def _candidate_paths() -> list[Path]:
    paths = []
    override = os.environ.get(ENV_LIB_PATH)
    if override:
        paths.append(Path(override))
    # The CPU or the CUDA library (backend.py), in graphferry/lib/.
    paths.append(backend.library_path(Path(__file__).resolve().parent.parent / "lib", explicit=bool(override)))
    return paths


def _load_library() -> tuple[ctypes.CDLL, Path]:
    tried = []
    for path in _candidate_paths():
        if path.is_file():
            try:
                return ctypes.CDLL(str(path)), path
            except OSError as err:
                raise OSError(f"graphferry: could not load {path}: {err}") from err
        tried.append(str(path))
    raise FileNotFoundError(
        "graphferry: shared library libgraphferry.so not found; tried "
        + ", ".join(repr(p) for p in tried)
        + f". Build it with `pip install ./python` (or `make lib` and set {ENV_LIB_PATH}"
        " to the built file)."
    )


_lib, LIB_PATH = _load_library()

# Fork detection: the library's threads do not exist in a forked child.
_LOAD_PID = os.getpid()
_forked = False


def _mark_forked() -> None:
    global _forked
    _forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_mark_forked)


def in_forked_child() -> bool:
    """True in a process forked after graphferry was loaded."""
    return _forked or os.getpid() != _LOAD_PID


def _fork_error(name: str) -> GraphferryError:
    return GraphferryError(
        GF_EFORK,
        f"{name}: graphferry cannot be used in a forked child process (pid {os.getpid()}; "
        f"the library was loaded in pid {_LOAD_PID}): it runs its own threads, which a fork "
        "does not copy. Create graphferry objects in the process that uses them, and use "
        "num_workers=0 with data loaders (graphferry samples on its own threads).",
    )


# ---------------------------------------------------------------------------
# Handle types: NewType for type checkers, void * at run time.
# ---------------------------------------------------------------------------

gf_graph_p = NewType("gf_graph_p", int)
gf_batch_p = NewType("gf_batch_p", int)
gf_loader_p = NewType("gf_loader_p", int)
gf_graph_p_ctypes = ctypes.c_void_p
gf_batch_p_ctypes = ctypes.c_void_p
gf_loader_p_ctypes = ctypes.c_void_p
gf_edge_sampler_p_ctypes = ctypes.c_void_p
gf_part_p_ctypes = ctypes.c_void_p

# What ctypes accepts for a pointer argument: ctypes.byref(x), a pointer, None.
CtypesRef = Any

c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_int32_p = ctypes.POINTER(ctypes.c_int32)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)

# ---------------------------------------------------------------------------
# Constants (see include/graphferry.h)
# ---------------------------------------------------------------------------

GF_PARTITION_RANGE = 0
GF_PARTITION_RANDOM = 1
GF_PARTITION_GIVEN = 2

GF_GRAPH_REMOVE_DUPLICATES = 1
GF_GRAPH_REMOVE_SELF_LOOPS = 2
GF_GRAPH_VERIFY_CHECKSUMS = 4  # gf_graph_open only

GF_TIER_AUTO = 0
GF_TIER_MEMORY = 1
GF_TIER_DISK = 2

GF_CACHE_S3FIFO = 0
GF_CACHE_SIEVE = 1
GF_CACHE_LRU = 2

GF_FRONTIER_ALL = 0
GF_FRONTIER_NEW = 1

GF_SCHEME_NODE_WISE = 0
GF_SCHEME_LAYER_WISE = 1
GF_SCHEME_LABOR = 2

GF_FIELD_NODES = 0
GF_FIELD_HOP_COUNTS = 1
GF_FIELD_SEEDS = 2
GF_FIELD_INPUT_INDEX = 3
GF_FIELD_INDPTR = 4
GF_FIELD_INDICES = 5
GF_FIELD_EDGE_IDS = 6
GF_FIELD_BATCH = 7
# A typed graph's batch, split by type and relation by the engine.
GF_FIELD_TYPED_NODES = 8
GF_FIELD_TYPED_ORDER = 9
GF_FIELD_TYPED_NODE_OFFSETS = 10
GF_FIELD_TYPED_HOP_COUNTS = 11
GF_FIELD_TYPED_BLOCK_SHAPE = 12
GF_FIELD_TYPED_EDGE_OFFSETS = 13
GF_FIELD_TYPED_SRC = 14
GF_FIELD_TYPED_DST = 15
GF_FIELD_TYPED_EDGE_IDS = 16
GF_FIELD_TYPED_INDPTR = 17
GF_FIELD_COO_INDEX = 32
GF_FIELD_COO_EDGE_IDS = 33
GF_COO_SAMPLED = 1
GF_COO_BIDIRECTIONAL = 2
GF_COO_INDUCED = 3

GF_TEMPORAL_NONE = 0
GF_TEMPORAL_NODE = 1
GF_TEMPORAL_EDGE = 2
GF_TEMPORAL_UNIFORM = 0
GF_TEMPORAL_LAST = 1

GF_CACHE_IN_DEGREE = 1
GF_CACHE_PRESAMPLING = 2

GF_LINK_DGL = 1
GF_LINK_PYG = 2

GF_NEG_NONE = 0
GF_NEG_PER_SOURCE_UNIFORM = 1
GF_NEG_GLOBAL_UNIFORM = 2
GF_NEG_BINARY = 3
GF_NEG_TRIPLET = 4

GF_NEG_KEEP_SELF_LOOPS = 1
GF_NEG_REPLACE = 2

GF_EXCLUDE_NONE = 0
GF_EXCLUDE_SELF = 1
GF_EXCLUDE_REVERSE_ID = 2

GF_LINK_POS_SRC = 0
GF_LINK_POS_DST = 1
GF_LINK_NEG_SRC = 2
GF_LINK_NEG_DST = 3
GF_LINK_SRC_INDEX = 4
GF_LINK_DST_POS_INDEX = 5
GF_LINK_DST_NEG_INDEX = 6
GF_LINK_INPUT_ID = 7
GF_LINK_EDGE_IDS = 8
GF_LINK_POS_OFFSETS = 9
GF_LINK_NEG_OFFSETS = 10

GF_SUBGRAPH_NODES = 1
GF_SUBGRAPH_EDGES = 2
GF_SUBGRAPH_WALKS = 3
GF_SUBGRAPH_PARTS = 4
GF_SUBGRAPH_KHOP = 5
GF_SUBGRAPH_HGT = 6
GF_SUBGRAPH_DRAWN = 7
GF_SUBGRAPH_WEIGHT_OUT_DEGREE_MIN1 = 0
GF_SUBGRAPH_WEIGHT_OUT_DEGREE = 1
GF_SUBGRAPH_WEIGHT_INVERSE_DEGREE = 2
GF_SUBGRAPH_WEIGHT_DEGREE_SUM = 3
GF_SUBGRAPH_ORDER_SRC_EID = 0
GF_SUBGRAPH_ORDER_SRC_DST = 1
GF_SUBGRAPH_ORDER_DST_EID = 2
GF_SUBGRAPH_ORDER_EID = 3
GF_EDGES_COO = 0
GF_EDGES_CSC = 1

GF_LAYOUT_DSP = 0
GF_LAYOUT_SELF_RELIANT = 1
GF_LAYOUT_HYBRID = 2
GF_MAX_PARTS = 65536  # gf_dataset_partition's largest num_parts

GF_PART_VERIFY = 1  # gf_part_open: check every file's CRC-32C

# ---------------------------------------------------------------------------
# DLPack (include/dlpack.h)
# ---------------------------------------------------------------------------

# DLDeviceType
kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3

# DLDataTypeCode
kDLInt = 0
kDLUInt = 1
kDLFloat = 2
kDLBfloat = 4
kDLComplex = 5
kDLBool = 6


# typedef struct { DLDeviceType device_type; int32_t device_id; } DLDevice;
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


# typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
class DLDataType(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


# typedef struct {
#   void *data; DLDevice device; int32_t ndim; DLDataType dtype;
#   int64_t *shape; int64_t *strides; uint64_t byte_offset;
# } DLTensor;
class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# typedef struct DLManagedTensor {
#   DLTensor dl_tensor; void *manager_ctx;
#   void (*deleter)(struct DLManagedTensor *self);
# } DLManagedTensor;
class DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


# typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


# typedef struct DLManagedTensorVersioned {
#   DLPackVersion version; void *manager_ctx;
#   void (*deleter)(struct DLManagedTensorVersioned *self);
#   uint64_t flags; DLTensor dl_tensor;
# } DLManagedTensorVersioned;
class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


DLPACK_MAJOR_VERSION = 1
DLPACK_MINOR_VERSION = 1
DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1
DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED = 1 << 2

DLPACK_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


# ---------------------------------------------------------------------------
# Structs
# ---------------------------------------------------------------------------


# typedef struct gf_graph_options {
#   uint32_t struct_size; int32_t num_patches; int32_t partition;
#   uint32_t reserved; uint64_t seed; const DLTensor *assignment;
#   int64_t num_nodes; uint32_t flags;
# } gf_graph_options;
class gf_graph_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("num_patches", ctypes.c_int32),
        ("partition", ctypes.c_int32),
        ("reserved", ctypes.c_uint32),
        ("seed", ctypes.c_uint64),
        ("assignment", ctypes.POINTER(DLTensor)),
        ("num_nodes", ctypes.c_int64),
        ("flags", ctypes.c_uint32),
        ("memory_budget", ctypes.c_int64),
        ("feature_tier", ctypes.c_int32),
        ("cache_policy", ctypes.c_int32),
        ("cache_bytes", ctypes.c_int64),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_graph_options), **fields)


# typedef struct gf_memory_plan {
#   uint32_t struct_size; int32_t feature_tier; int64_t budget, num_nodes, num_edges,
#   topology_bytes, node_column_bytes, sampling_bytes, feature_bytes, cache_bytes;
#   int32_t cache_policy, direct, io_uring;
# } gf_memory_plan;
class gf_memory_plan(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("feature_tier", ctypes.c_int32),
        ("budget", ctypes.c_int64),
        ("num_nodes", ctypes.c_int64),
        ("num_edges", ctypes.c_int64),
        ("topology_bytes", ctypes.c_int64),
        ("node_column_bytes", ctypes.c_int64),
        ("sampling_bytes", ctypes.c_int64),
        ("feature_bytes", ctypes.c_int64),
        ("cache_bytes", ctypes.c_int64),
        ("cache_policy", ctypes.c_int32),
        ("direct", ctypes.c_int32),
        ("io_uring", ctypes.c_int32),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_memory_plan), **fields)


# typedef struct gf_sample_options {
#   uint32_t struct_size; int32_t num_hops; const int32_t *fanouts;
#   int32_t replace; int32_t frontier; uint64_t seed; int32_t num_threads;
#   int32_t scheme; int32_t biased; int32_t layer_without_replacement;
#   const DLTensor *exclude_edges; int32_t layer_dependency;
#   int32_t num_relations; const int32_t *relation_fanouts;
#   int32_t disjoint; int32_t temporal; int32_t temporal_strategy;
#   const DLTensor *seed_times; const struct gf_allocator *allocator;
# } gf_sample_options;
class gf_sample_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("num_hops", ctypes.c_int32),
        ("fanouts", ctypes.POINTER(ctypes.c_int32)),
        ("replace", ctypes.c_int32),
        ("frontier", ctypes.c_int32),
        ("seed", ctypes.c_uint64),
        ("num_threads", ctypes.c_int32),
        ("scheme", ctypes.c_int32),
        ("biased", ctypes.c_int32),
        ("layer_without_replacement", ctypes.c_int32),
        ("exclude_edges", ctypes.POINTER(DLTensor)),
        ("layer_dependency", ctypes.c_int32),
        ("num_relations", ctypes.c_int32),
        ("relation_fanouts", ctypes.POINTER(ctypes.c_int32)),
        ("disjoint", ctypes.c_int32),
        ("temporal", ctypes.c_int32),
        ("temporal_strategy", ctypes.c_int32),
        ("seed_times", ctypes.POINTER(DLTensor)),
        ("allocator", ctypes.c_void_p),  # gf_sample's host allocator: unused here (NULL)
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_sample_options), **fields)


# The callbacks of a gf_allocator (include/graphferry.h, "Loaders"):
# void *(*alloc)(void *user, size_t bytes, size_t alignment);
# void (*free)(void *user, void *ptr, size_t bytes);
gf_alloc_fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
gf_free_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


# typedef struct gf_allocator {
#   uint32_t struct_size; uint32_t reserved; void *user;
#   void *(*alloc)(void *user, size_t bytes, size_t alignment);
#   void (*free)(void *user, void *ptr, size_t bytes);
# } gf_allocator;
class gf_allocator(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("user", ctypes.c_void_p),
        ("alloc", gf_alloc_fn),
        ("free", gf_free_fn),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_allocator), **fields)


# typedef struct gf_loader_options {
#   uint32_t struct_size; const gf_sample_options *sample; int64_t batch_size;
#   int32_t shuffle; int32_t drop_last; uint64_t shuffle_seed;
#   int32_t queue_capacity;
#   int32_t num_feature_names; const char *const *feature_names;
#   int32_t num_label_names; const char *const *label_names;
#   const DLTensor *seed_times; const gf_allocator *allocator;
#   DLDevice device; void *stream; int64_t device_cache_bytes;
#   int64_t device_reserve_bytes; int32_t device_topology; int32_t coo;
# } gf_loader_options;
class gf_loader_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("sample", ctypes.POINTER(gf_sample_options)),
        ("batch_size", ctypes.c_int64),
        ("shuffle", ctypes.c_int32),
        ("drop_last", ctypes.c_int32),
        ("shuffle_seed", ctypes.c_uint64),
        ("queue_capacity", ctypes.c_int32),
        ("num_feature_names", ctypes.c_int32),
        ("feature_names", ctypes.POINTER(ctypes.c_char_p)),
        ("num_label_names", ctypes.c_int32),
        ("label_names", ctypes.POINTER(ctypes.c_char_p)),
        ("seed_times", ctypes.POINTER(DLTensor)),
        ("allocator", ctypes.POINTER(gf_allocator)),
        # device outputs (mode 2): the CUDA library only
        ("device", DLDevice),
        ("stream", ctypes.c_void_p),
        ("device_cache_bytes", ctypes.c_int64),
        ("device_reserve_bytes", ctypes.c_int64),
        ("device_topology", ctypes.c_int32),
        ("coo", ctypes.c_int32),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_loader_options), **fields)


GF_TOPOLOGY_AUTO = 0
GF_TOPOLOGY_DEVICE = 1
GF_TOPOLOGY_PINNED = 2


# typedef struct gf_walk_options {
#   uint32_t struct_size; int32_t length; double restart_prob;
#   int32_t biased; int32_t num_threads; uint64_t seed;
# } gf_walk_options;
class gf_walk_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("length", ctypes.c_int32),
        ("restart_prob", ctypes.c_double),
        ("biased", ctypes.c_int32),
        ("num_threads", ctypes.c_int32),
        ("seed", ctypes.c_uint64),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_walk_options), **fields)


# struct ArrowSchema { const char *format; const char *name; const char *metadata;
#   int64_t flags; int64_t n_children; struct ArrowSchema **children;
#   struct ArrowSchema *dictionary; void (*release)(struct ArrowSchema *);
#   void *private_data; };
class ArrowSchema(ctypes.Structure):
    pass


ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowSchema))),
    ("dictionary", ctypes.POINTER(ArrowSchema)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


# struct ArrowArray { int64_t length; int64_t null_count; int64_t offset;
#   int64_t n_buffers; int64_t n_children; const void **buffers;
#   struct ArrowArray **children; struct ArrowArray *dictionary;
#   void (*release)(struct ArrowArray *); void *private_data; };
class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.c_void_p),
    ("private_data", ctypes.c_void_p),
]


def arrow_release(struct: Any) -> None:
    """Calls an ArrowSchema's or ArrowArray's release callback unless it is
    already released (release == NULL)."""
    if struct.release:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(struct.release)(ctypes.addressof(struct))


# typedef struct gf_stage_stats {
#   int64_t busy_ns, blocked_ns, waiting_ns, batches;
# } gf_stage_stats;
class gf_stage_stats(ctypes.Structure):
    _fields_ = [
        ("busy_ns", ctypes.c_int64),
        ("blocked_ns", ctypes.c_int64),
        ("waiting_ns", ctypes.c_int64),
        ("batches", ctypes.c_int64),
    ]


# typedef struct gf_loader_counters {
#   gf_stage_stats sampler, loader, consumer;
#   int64_t bytes_host, bytes_pinned, bytes_device, rows_hot, rows_cold, wall_ns;
# } gf_loader_counters;
class gf_loader_counters(ctypes.Structure):
    _fields_ = [
        ("sampler", gf_stage_stats),
        ("loader", gf_stage_stats),
        ("consumer", gf_stage_stats),
        ("bytes_host", ctypes.c_int64),
        ("bytes_pinned", ctypes.c_int64),
        ("bytes_device", ctypes.c_int64),
        ("rows_hot", ctypes.c_int64),
        ("rows_cold", ctypes.c_int64),
        ("wall_ns", ctypes.c_int64),
    ]


# typedef struct gf_tier_counters {
#   int64_t rows_cache, rows_disk, bytes_disk, bytes_disk_read, disk_requests;
# } gf_tier_counters;
class gf_tier_counters(ctypes.Structure):
    _fields_ = [
        ("rows_cache", ctypes.c_int64),
        ("rows_disk", ctypes.c_int64),
        ("bytes_disk", ctypes.c_int64),
        ("bytes_disk_read", ctypes.c_int64),
        ("disk_requests", ctypes.c_int64),
    ]


# typedef struct gf_loader_statistics {
#   uint32_t struct_size; int32_t workers; uint64_t epoch; int64_t epochs;
#   gf_loader_counters current, total; gf_tier_counters current_tiers, total_tiers;
# } gf_loader_statistics;
class gf_loader_statistics(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("workers", ctypes.c_int32),
        ("epoch", ctypes.c_uint64),
        ("epochs", ctypes.c_int64),
        ("current", gf_loader_counters),
        ("total", gf_loader_counters),
        ("current_tiers", gf_tier_counters),
        ("total_tiers", gf_tier_counters),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_loader_statistics), **fields)


# typedef struct gf_cache_options {
#   uint32_t struct_size; int32_t policy; int64_t bytes; double fraction;
#   int32_t auto_size; int64_t budget; int64_t reserve; int32_t presample_epochs;
# } gf_cache_options;
class gf_cache_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("policy", ctypes.c_int32),
        ("bytes", ctypes.c_int64),
        ("fraction", ctypes.c_double),
        ("auto_size", ctypes.c_int32),
        ("budget", ctypes.c_int64),
        ("reserve", ctypes.c_int64),
        ("presample_epochs", ctypes.c_int32),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_cache_options), **fields)


# typedef int (*gf_batch_callback_fn)(void *user, uint64_t batch_key, const DLTensor *input,
#     int64_t max_output, DLManagedTensor **output, char *message, size_t message_size);
_callback_args = (ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(DLTensor), ctypes.c_int64, c_void_pp)
gf_batch_callback_fn = ctypes.CFUNCTYPE(ctypes.c_int, *_callback_args, ctypes.c_void_p, ctypes.c_size_t)


# typedef struct gf_batch_callback {
#   uint32_t struct_size; void *user; gf_batch_callback_fn fn;
# } gf_batch_callback;
class gf_batch_callback(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("user", ctypes.c_void_p), ("fn", gf_batch_callback_fn)]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_batch_callback), **fields)


# typedef struct gf_edge_sampler_options {
#   uint32_t struct_size; const gf_sample_options *sample; int32_t mode;
#   int32_t negative; double amount; int32_t exclude;
#   const DLTensor *reverse_eids; int64_t reverse_half; uint32_t negative_flags;
#   const DLTensor *negative_weights; const gf_batch_callback *exclude_callback;
# } gf_edge_sampler_options;
class gf_edge_sampler_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("sample", ctypes.POINTER(gf_sample_options)),
        ("mode", ctypes.c_int32),
        ("negative", ctypes.c_int32),
        ("amount", ctypes.c_double),
        ("exclude", ctypes.c_int32),
        ("reverse_eids", ctypes.POINTER(DLTensor)),
        ("reverse_half", ctypes.c_int64),
        ("negative_flags", ctypes.c_uint32),
        ("negative_weights", ctypes.POINTER(DLTensor)),
        ("exclude_callback", ctypes.POINTER(gf_batch_callback)),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_edge_sampler_options), **fields)


# typedef struct gf_edge_loader_options {
#   uint32_t struct_size; const gf_edge_sampler_options *sampler;
#   const gf_loader_options *loader;
#   int32_t num_edge_feature_names; const char *const *edge_feature_names;
#   int32_t coo;
# } gf_edge_loader_options;
class gf_edge_loader_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("sampler", ctypes.POINTER(gf_edge_sampler_options)),
        ("loader", ctypes.POINTER(gf_loader_options)),
        ("num_edge_feature_names", ctypes.c_int32),
        ("edge_feature_names", ctypes.POINTER(ctypes.c_char_p)),
        ("coo", ctypes.c_int32),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_edge_loader_options), **fields)


# typedef struct gf_subgraph_loader_options {
#   uint32_t struct_size; int32_t kind; const gf_loader_options *loader;
#   int32_t weighting; int32_t edge_order; int64_t budget; int64_t walk_length;
#   const DLTensor *part_offsets; const DLTensor *part_nodes; int32_t num_threads;
#   int32_t num_edge_feature_names; const char *const *edge_feature_names;
# } gf_subgraph_loader_options;
class gf_subgraph_loader_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("kind", ctypes.c_int32),
        ("loader", ctypes.POINTER(gf_loader_options)),
        ("weighting", ctypes.c_int32),
        ("edge_order", ctypes.c_int32),
        ("budget", ctypes.c_int64),
        ("walk_length", ctypes.c_int64),
        ("part_offsets", ctypes.POINTER(DLTensor)),
        ("part_nodes", ctypes.POINTER(DLTensor)),
        ("num_threads", ctypes.c_int32),
        ("num_edge_feature_names", ctypes.c_int32),
        ("edge_feature_names", ctypes.POINTER(ctypes.c_char_p)),
        ("num_samples", ctypes.POINTER(DLTensor)),
        ("draw_callback", ctypes.POINTER(gf_batch_callback)),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_subgraph_loader_options), **fields)


# The callbacks of a gf_comm (include/graphferry.h, "Communicators").
gf_exchange_sizes_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, c_int64_p, c_int64_p)
gf_all_to_all_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, c_void_pp, c_int64_p, c_void_pp, c_int64_p)
# all_to_all_dl: (user, DLManagedTensor *send, send_sizes, DLManagedTensor *recv, recv_sizes)
gf_all_to_all_dl_fn = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, c_int64_p, ctypes.c_void_p, c_int64_p
)
gf_errmsg_fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
gf_send_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
gf_recv_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, c_int64_p)


# typedef struct gf_comm { uint32_t struct_size; int32_t rank; int32_t size;
#   void *user; exchange_sizes; all_to_all; errmsg; send; recv;
#   int64_t timeout_ms; all_to_all_dl; } gf_comm;
class gf_comm(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("rank", ctypes.c_int32),
        ("size", ctypes.c_int32),
        ("user", ctypes.c_void_p),
        ("exchange_sizes", gf_exchange_sizes_fn),
        ("all_to_all", gf_all_to_all_fn),
        ("errmsg", gf_errmsg_fn),
        ("send", gf_send_fn),
        ("recv", gf_recv_fn),
        ("timeout_ms", ctypes.c_int64),
        ("all_to_all_dl", gf_all_to_all_dl_fn),
    ]


# typedef struct gf_part_info {
#   uint32_t struct_size; int32_t rank; int32_t num_parts; int32_t layout;
#   int32_t num_hops; int64_t num_nodes; int64_t num_owned; int64_t num_edges;
# } gf_part_info;
class gf_part_info(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("rank", ctypes.c_int32),
        ("num_parts", ctypes.c_int32),
        ("layout", ctypes.c_int32),
        ("num_hops", ctypes.c_int32),
        ("num_nodes", ctypes.c_int64),
        ("num_owned", ctypes.c_int64),
        ("num_edges", ctypes.c_int64),
    ]


# void (*progress)(void *progress_user, int64_t done, int64_t total);
gf_progress_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


# typedef struct gf_partition_options {
#   uint32_t struct_size; int32_t method; int32_t num_parts; int32_t layout;
#   int32_t num_hops; uint64_t seed; const DLTensor *assignment;
#   const char *method_name;
#   void (*progress)(void *progress_user, int64_t done, int64_t total);
#   void *progress_user;
# } gf_partition_options;
class gf_partition_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("method", ctypes.c_int32),
        ("num_parts", ctypes.c_int32),
        ("layout", ctypes.c_int32),
        ("num_hops", ctypes.c_int32),
        ("seed", ctypes.c_uint64),
        ("assignment", ctypes.POINTER(DLTensor)),
        ("method_name", ctypes.c_char_p),
        ("progress", gf_progress_fn),
        ("progress_user", ctypes.c_void_p),
        ("overwrite", ctypes.c_int32),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_partition_options), **fields)


# ---------------------------------------------------------------------------
# Python's C API: DLPack capsules
# ---------------------------------------------------------------------------

# Bound as private prototypes so that the argtypes of ctypes.pythonapi's shared
# attributes (which other libraries set too) are left alone. PYFUNCTYPE keeps
# the GIL held during these calls.
PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)
PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi)
)
# PyCapsule_GetPointer on a capsule's address (in its destructor) or on the capsule.
PyCapsule_GetPointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
PyCapsule_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi)
)
PyCapsule_GetName = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
# void (*PyCapsule_Destructor)(PyObject *capsule)
PyCapsule_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


# ---------------------------------------------------------------------------
# The binding decorator and errcheck
# ---------------------------------------------------------------------------

# Unguarded, errcheck-free foreign functions used by the error path itself.
_raw_errmsg = ctypes.CFUNCTYPE(ctypes.c_char_p)(("gf_errmsg", _lib))
_raw_status_str = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(("gf_status_str", _lib))


# The library's words for a NULL handle ("gf_x: graph handle is NULL"). The
# Python objects pass NULL only once closed, so that is what a user reads.
_NULL_HANDLE = re.compile(r"^(?P<fn>[\w.]+): (?P<kind>[\w ]+) handle is NULL$")


def _last_error(name: str, status: int) -> GraphferryError:
    message = (_raw_errmsg() or b"").decode("utf-8", errors="replace")
    if not message:
        text = (_raw_status_str(status) or b"").decode("utf-8", errors="replace")
        message = f"{name}: {text} (status {status})"
    null = _NULL_HANDLE.match(message) if status == GF_EBADHANDLE else None
    if null is not None:
        kind = null["kind"]
        message = f"{null['fn']}: the {kind} is closed (its close() was called, or the object it belongs to was closed)"
    return error_for_status(status, message)


def _check_ok(result: int, func: Any, args: tuple) -> int:
    """errcheck: GF_OK passes, any other status raises."""
    if result != GF_OK:
        raise _last_error(getattr(func, "gf_name", "graphferry"), result)
    return result


def _check_ok_or_done(result: int, func: Any, args: tuple) -> int:
    """errcheck: GF_OK and GF_DONE pass, any other status raises."""
    if result != GF_OK and result != GF_DONE:
        raise _last_error(getattr(func, "gf_name", "graphferry"), result)
    return result


def _check_ok_done_or_not_ready(result: int, func: Any, args: tuple) -> int:
    """errcheck: GF_OK, GF_DONE and GF_NOT_READY pass, any other status raises."""
    if result != GF_OK and result != GF_DONE and result != GF_NOT_READY:
        raise _last_error(getattr(func, "gf_name", "graphferry"), result)
    return result


def cfunc(
    name: str,
    argtypes: Sequence[Any],
    restype: Any,
    *,
    errcheck: Callable[[int, Any, tuple], int] | None = _check_ok,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Binds the stub it decorates to the library's function ``name``.

    ``errcheck`` (for status-returning functions) turns failures into
    exceptions; pass None for functions that return something else.
    """
    proto = ctypes.CFUNCTYPE(restype, *argtypes)
    foreign = proto((name, _lib))
    foreign.gf_name = name
    if errcheck is not None:
        foreign.errcheck = errcheck
    raw = proto((name, _lib))

    def decorator(stub: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(stub)
        def call(*args: Any) -> Any:
            if _forked or os.getpid() != _LOAD_PID:
                raise _fork_error(name)
            return foreign(*args)

        call.raw = raw  # type: ignore[attr-defined]
        call.foreign = foreign  # type: ignore[attr-defined]
        return call

    return decorator


DLTensor_p = ctypes.POINTER(DLTensor)
DLManagedTensor_p = ctypes.POINTER(DLManagedTensor)
gf_graph_options_p = ctypes.POINTER(gf_graph_options)
gf_sample_options_p = ctypes.POINTER(gf_sample_options)
gf_loader_options_p = ctypes.POINTER(gf_loader_options)
gf_walk_options_p = ctypes.POINTER(gf_walk_options)

# ---------------------------------------------------------------------------
# Versions
# ---------------------------------------------------------------------------


# int gf_version_number(void);
@cfunc("gf_version_number", [], ctypes.c_int, errcheck=None)
def gf_version_number() -> int: ...


# const char *gf_version(void);
@cfunc("gf_version", [], ctypes.c_char_p, errcheck=None)
def gf_version() -> bytes: ...


# const char *gf_build_id(void);
@cfunc("gf_build_id", [], ctypes.c_char_p, errcheck=None)
def gf_build_id() -> bytes: ...


# ---------------------------------------------------------------------------
# Status codes and errors
# ---------------------------------------------------------------------------


# const char *gf_status_str(int status);
@cfunc("gf_status_str", [ctypes.c_int], ctypes.c_char_p, errcheck=None)
def gf_status_str(status: int, /) -> bytes: ...


# const char *gf_errmsg(void);
@cfunc("gf_errmsg", [], ctypes.c_char_p, errcheck=None)
def gf_errmsg() -> bytes: ...


# void gf_free(void *ptr);
@cfunc("gf_free", [ctypes.c_void_p], None, errcheck=None)
def gf_free(ptr: int | None, /) -> None: ...


# ---------------------------------------------------------------------------
# Cancel tokens
# ---------------------------------------------------------------------------


# int gf_cancel_new(gf_cancel **out);
@cfunc("gf_cancel_new", [ctypes.c_void_p], ctypes.c_int)
def gf_cancel_new(out: Any, /) -> int: ...


# int gf_cancel_request(gf_cancel *token);
@cfunc("gf_cancel_request", [ctypes.c_void_p], ctypes.c_int, errcheck=None)
def gf_cancel_request(token: int | None, /) -> int: ...


# int gf_cancel_is_requested(const gf_cancel *token, int32_t *out);
@cfunc("gf_cancel_is_requested", [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int)
def gf_cancel_is_requested(token: int | None, out: Any, /) -> int: ...


# int gf_cancel_bind(gf_cancel *token);
@cfunc("gf_cancel_bind", [ctypes.c_void_p], ctypes.c_int)
def gf_cancel_bind(token: int | None, /) -> int: ...


# void gf_cancel_free(gf_cancel *token);
@cfunc("gf_cancel_free", [ctypes.c_void_p], None, errcheck=None)
def gf_cancel_free(token: int | None, /) -> None: ...


# ---------------------------------------------------------------------------
# Graphs
# ---------------------------------------------------------------------------


# int gf_graph_from_csc(const DLTensor *indptr, const DLTensor *indices,
#                       const DLTensor *edge_ids, const gf_graph_options *options,
#                       gf_graph **out_graph);
@cfunc(
    "gf_graph_from_csc",
    [DLTensor_p, DLTensor_p, DLTensor_p, gf_graph_options_p, c_void_pp],
    ctypes.c_int,
)
def gf_graph_from_csc(
    indptr: CtypesRef,
    indices: CtypesRef,
    edge_ids: CtypesRef,
    options: CtypesRef,
    out_graph: CtypesRef,
    /,
) -> int: ...


# int gf_graph_from_csr(const DLTensor *indptr, const DLTensor *indices,
#                       const DLTensor *edge_ids, const gf_graph_options *options,
#                       gf_graph **out_graph);
@cfunc(
    "gf_graph_from_csr",
    [DLTensor_p, DLTensor_p, DLTensor_p, gf_graph_options_p, c_void_pp],
    ctypes.c_int,
)
def gf_graph_from_csr(
    indptr: CtypesRef,
    indices: CtypesRef,
    edge_ids: CtypesRef,
    options: CtypesRef,
    out_graph: CtypesRef,
    /,
) -> int: ...


# int gf_graph_from_coo(const DLTensor *src, const DLTensor *dst,
#                       const gf_graph_options *options, gf_graph **out_graph);
@cfunc(
    "gf_graph_from_coo",
    [DLTensor_p, DLTensor_p, gf_graph_options_p, c_void_pp],
    ctypes.c_int,
)
def gf_graph_from_coo(src: CtypesRef, dst: CtypesRef, options: CtypesRef, out_graph: CtypesRef, /) -> int: ...


# int gf_graph_from_arrow(struct ArrowSchema *schema, struct ArrowArray *array,
#                         const gf_graph_options *options, gf_graph **out_graph);
@cfunc(
    "gf_graph_from_arrow",
    [ctypes.POINTER(ArrowSchema), ctypes.POINTER(ArrowArray), gf_graph_options_p, c_void_pp],
    ctypes.c_int,
)
def gf_graph_from_arrow(schema: CtypesRef, array: CtypesRef, options: CtypesRef, out_graph: CtypesRef, /) -> int: ...


# int gf_graph_open(const char *path, const gf_graph_options *options,
#                   gf_graph **out_graph);
@cfunc("gf_graph_open", [ctypes.c_char_p, gf_graph_options_p, c_void_pp], ctypes.c_int)
def gf_graph_open(path: bytes, options: CtypesRef, out_graph: CtypesRef, /) -> int: ...


# void gf_graph_close(gf_graph *graph);
@cfunc("gf_graph_close", [gf_graph_p_ctypes], None, errcheck=None)
def gf_graph_close(graph: gf_graph_p | None, /) -> None: ...


# int gf_graph_num_nodes(const gf_graph *graph, int64_t *out);
@cfunc("gf_graph_num_nodes", [gf_graph_p_ctypes, c_int64_p], ctypes.c_int)
def gf_graph_num_nodes(graph: gf_graph_p | None, out: CtypesRef, /) -> int: ...


# int gf_graph_num_edges(const gf_graph *graph, int64_t *out);
@cfunc("gf_graph_num_edges", [gf_graph_p_ctypes, c_int64_p], ctypes.c_int)
def gf_graph_num_edges(graph: gf_graph_p | None, out: CtypesRef, /) -> int: ...


# int gf_graph_num_patches(const gf_graph *graph, int32_t *out);
@cfunc("gf_graph_num_patches", [gf_graph_p_ctypes, c_int32_p], ctypes.c_int)
def gf_graph_num_patches(graph: gf_graph_p | None, out: CtypesRef, /) -> int: ...


# int gf_graph_set_node_data(gf_graph *graph, const char *name,
#                            DLManagedTensor *tensor);
@cfunc(
    "gf_graph_set_node_data",
    [gf_graph_p_ctypes, ctypes.c_char_p, ctypes.c_void_p],
    ctypes.c_int,
)
def gf_graph_set_node_data(graph: gf_graph_p | None, name: bytes, tensor: int, /) -> int: ...


# int gf_graph_set_edge_data(gf_graph *graph, const char *name,
#                            DLManagedTensor *tensor);
@cfunc(
    "gf_graph_set_edge_data",
    [gf_graph_p_ctypes, ctypes.c_char_p, ctypes.c_void_p],
    ctypes.c_int,
)
def gf_graph_set_edge_data(graph: gf_graph_p | None, name: bytes, tensor: int, /) -> int: ...


# int gf_graph_get_node_data(gf_graph *graph, const char *name,
#                            DLManagedTensor **out_tensor);
@cfunc("gf_graph_get_node_data", [gf_graph_p_ctypes, ctypes.c_char_p, c_void_pp], ctypes.c_int)
def gf_graph_get_node_data(graph: gf_graph_p | None, name: bytes, out_tensor: CtypesRef, /) -> int: ...


# int gf_graph_set_node_data_versioned(gf_graph *graph, const char *name,
#                                      DLManagedTensorVersioned *tensor);
@cfunc(
    "gf_graph_set_node_data_versioned",
    [gf_graph_p_ctypes, ctypes.c_char_p, ctypes.c_void_p],
    ctypes.c_int,
)
def gf_graph_set_node_data_versioned(graph: gf_graph_p | None, name: bytes, tensor: int, /) -> int: ...


# int gf_graph_get_node_data_versioned(gf_graph *graph, const char *name,
#                                      DLManagedTensorVersioned **out_tensor);
@cfunc("gf_graph_get_node_data_versioned", [gf_graph_p_ctypes, ctypes.c_char_p, c_void_pp], ctypes.c_int)
def gf_graph_get_node_data_versioned(graph: gf_graph_p | None, name: bytes, out_tensor: CtypesRef, /) -> int: ...


# int gf_graph_memory_plan(const gf_graph *graph, gf_memory_plan *out);
@cfunc("gf_graph_memory_plan", [gf_graph_p_ctypes, ctypes.POINTER(gf_memory_plan)], ctypes.c_int)
def gf_graph_memory_plan(graph: gf_graph_p | None, out: CtypesRef, /) -> int: ...


# int gf_graph_memory_report(const gf_graph *graph, char **out_report);
@cfunc("gf_graph_memory_report", [gf_graph_p_ctypes, c_void_pp], ctypes.c_int)
def gf_graph_memory_report(graph: gf_graph_p | None, out_report: CtypesRef, /) -> int: ...


# int gf_graph_node_data_names(const gf_graph *graph, char **out_names);
@cfunc("gf_graph_node_data_names", [gf_graph_p_ctypes, c_void_pp], ctypes.c_int)
def gf_graph_node_data_names(graph: gf_graph_p | None, out_names: CtypesRef, /) -> int: ...


# int gf_graph_set_edge_weights(gf_graph *graph, const DLTensor *weights);
@cfunc("gf_graph_set_edge_weights", [gf_graph_p_ctypes, DLTensor_p], ctypes.c_int)
def gf_graph_set_edge_weights(graph: gf_graph_p | None, weights: CtypesRef, /) -> int: ...


# int gf_graph_set_source_weights(gf_graph *graph, const DLTensor *weights);
@cfunc("gf_graph_set_source_weights", [gf_graph_p_ctypes, DLTensor_p], ctypes.c_int)
def gf_graph_set_source_weights(graph: gf_graph_p | None, weights: CtypesRef, /) -> int: ...


# int gf_graph_set_types(gf_graph *graph, int32_t num_node_types, const int64_t *node_offsets,
#                        int32_t num_relations, const int64_t *edge_offsets,
#                        const int32_t *relation_src_type, const int32_t *relation_dst_type);
@cfunc(
    "gf_graph_set_types",
    [
        gf_graph_p_ctypes,
        ctypes.c_int32,
        ctypes.POINTER(ctypes.c_int64),
        ctypes.c_int32,
        ctypes.POINTER(ctypes.c_int64),
        ctypes.POINTER(ctypes.c_int32),
        ctypes.POINTER(ctypes.c_int32),
    ],
    ctypes.c_int,
)
def gf_graph_set_types(
    graph: gf_graph_p | None,
    num_node_types: int,
    node_offsets: Any,
    num_relations: int,
    edge_offsets: Any,
    relation_src_type: Any,
    relation_dst_type: Any,
    /,
) -> int: ...


# int gf_graph_num_types(const gf_graph *graph, int32_t *num_node_types, int32_t *num_relations);
@cfunc(
    "gf_graph_num_types",
    [gf_graph_p_ctypes, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)],
    ctypes.c_int,
)
def gf_graph_num_types(graph: gf_graph_p | None, num_node_types: CtypesRef, num_relations: CtypesRef, /) -> int: ...


# int gf_graph_set_types_json(gf_graph *graph, const char *types_json);
@cfunc("gf_graph_set_types_json", [gf_graph_p_ctypes, ctypes.c_char_p], ctypes.c_int)
def gf_graph_set_types_json(graph: gf_graph_p | None, types_json: bytes, /) -> int: ...


# int gf_graph_types_json(const gf_graph *graph, char **out_json);
@cfunc("gf_graph_types_json", [gf_graph_p_ctypes, c_void_pp], ctypes.c_int)
def gf_graph_types_json(graph: gf_graph_p | None, out_json: CtypesRef, /) -> int: ...


# int gf_graph_set_node_time(gf_graph *graph, const DLTensor *time);
@cfunc("gf_graph_set_node_time", [gf_graph_p_ctypes, DLTensor_p], ctypes.c_int)
def gf_graph_set_node_time(graph: gf_graph_p | None, time: CtypesRef, /) -> int: ...


# int gf_graph_set_edge_time(gf_graph *graph, const DLTensor *time);
@cfunc("gf_graph_set_edge_time", [gf_graph_p_ctypes, DLTensor_p], ctypes.c_int)
def gf_graph_set_edge_time(graph: gf_graph_p | None, time: CtypesRef, /) -> int: ...


class gf_output_options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("overwrite", ctypes.c_int32)]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_output_options), **fields)


gf_output_options_p = ctypes.POINTER(gf_output_options)


# int gf_dataset_convert_npy_into(const char *src_dir, const char *dst_dir,
#                                 const gf_output_options *options);
@cfunc("gf_dataset_convert_npy_into", [ctypes.c_char_p, ctypes.c_char_p, gf_output_options_p], ctypes.c_int)
def gf_dataset_convert_npy_into(src_dir: bytes, dst_dir: bytes, options: Any, /) -> int: ...


# int gf_dataset_write_csc(const char *dir);
@cfunc("gf_dataset_write_csc", [ctypes.c_char_p], ctypes.c_int)
def gf_dataset_write_csc(dir: bytes, /) -> int: ...


# int gf_dataset_generate_into(const char *preset, const char *dst_dir, uint64_t seed,
#                              int32_t num_threads, const gf_output_options *options);
@cfunc(
    "gf_dataset_generate_into",
    [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_int32, ctypes.POINTER(gf_output_options)],
    ctypes.c_int,
)
def gf_dataset_generate_into(preset: bytes, dst_dir: bytes, seed: int, num_threads: int, options: Any, /) -> int: ...


# ---------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------


# int gf_sample(gf_graph *graph, const DLTensor *seeds,
#               const gf_sample_options *options, gf_batch **out_batch);
@cfunc(
    "gf_sample",
    [gf_graph_p_ctypes, DLTensor_p, gf_sample_options_p, c_void_pp],
    ctypes.c_int,
)
def gf_sample(graph: gf_graph_p | None, seeds: CtypesRef, options: CtypesRef, out_batch: CtypesRef, /) -> int: ...


# int gf_batch_num_hops(const gf_batch *batch, int32_t *out);
@cfunc("gf_batch_num_hops", [gf_batch_p_ctypes, c_int32_p], ctypes.c_int)
def gf_batch_num_hops(batch: gf_batch_p | None, out: CtypesRef, /) -> int: ...


# int gf_batch_block_shape(const gf_batch *batch, int32_t layer,
#                          int64_t *num_dst, int64_t *num_src,
#                          int64_t *dst_offset);
@cfunc(
    "gf_batch_block_shape",
    [gf_batch_p_ctypes, ctypes.c_int32, c_int64_p, c_int64_p, c_int64_p],
    ctypes.c_int,
)
def gf_batch_block_shape(
    batch: gf_batch_p | None,
    layer: int,
    num_dst: CtypesRef,
    num_src: CtypesRef,
    dst_offset: CtypesRef,
    /,
) -> int: ...


# int gf_batch_take(gf_batch *batch, int32_t field, int32_t layer,
#                   DLManagedTensor **out_tensor);
@cfunc(
    "gf_batch_take",
    [gf_batch_p_ctypes, ctypes.c_int32, ctypes.c_int32, c_void_pp],
    ctypes.c_int,
)
def gf_batch_take(batch: gf_batch_p | None, field: int, layer: int, out_tensor: CtypesRef, /) -> int: ...


# int gf_batch_wait_stream(gf_batch *batch, void *stream);
@cfunc(
    "gf_batch_wait_stream",
    [gf_batch_p_ctypes, ctypes.c_void_p],
    ctypes.c_int,
)
def gf_batch_wait_stream(batch: gf_batch_p | None, stream: int | None, /) -> int: ...


# int gf_batch_take_node_data(gf_batch *batch, const char *name,
#                             DLManagedTensor **out_tensor);
@cfunc("gf_batch_take_node_data", [gf_batch_p_ctypes, ctypes.c_char_p, c_void_pp], ctypes.c_int)
def gf_batch_take_node_data(batch: gf_batch_p | None, name: bytes, out_tensor: CtypesRef, /) -> int: ...


# int gf_batch_take_edge_data(gf_batch *batch, const char *name,
#                             DLManagedTensor **out_tensor);
@cfunc("gf_batch_take_edge_data", [gf_batch_p_ctypes, ctypes.c_char_p, c_void_pp], ctypes.c_int)
def gf_batch_take_edge_data(batch: gf_batch_p | None, name: bytes, out_tensor: CtypesRef, /) -> int: ...


# int gf_batch_take_versioned(gf_batch *batch, int32_t field, int32_t layer,
#                             DLManagedTensorVersioned **out_tensor);
@cfunc(
    "gf_batch_take_versioned",
    [gf_batch_p_ctypes, ctypes.c_int32, ctypes.c_int32, c_void_pp],
    ctypes.c_int,
)
def gf_batch_take_versioned(batch: gf_batch_p | None, field: int, layer: int, out_tensor: CtypesRef, /) -> int: ...


# int gf_batch_take_node_data_versioned(gf_batch *batch, const char *name,
#                                       DLManagedTensorVersioned **out_tensor);
@cfunc(
    "gf_batch_take_node_data_versioned",
    [gf_batch_p_ctypes, ctypes.c_char_p, c_void_pp],
    ctypes.c_int,
)
def gf_batch_take_node_data_versioned(batch: gf_batch_p | None, name: bytes, out_tensor: CtypesRef, /) -> int: ...


# void gf_batch_close(gf_batch *batch);
@cfunc("gf_batch_close", [gf_batch_p_ctypes], None, errcheck=None)
def gf_batch_close(batch: gf_batch_p | None, /) -> None: ...


# int gf_random_walk(gf_graph *graph, const DLTensor *seeds,
#                    const gf_walk_options *options,
#                    DLManagedTensor **out_traces,
#                    DLManagedTensor **out_edge_ids);
@cfunc(
    "gf_random_walk",
    [gf_graph_p_ctypes, DLTensor_p, gf_walk_options_p, c_void_pp, c_void_pp],
    ctypes.c_int,
)
def gf_random_walk(
    graph: gf_graph_p | None,
    seeds: CtypesRef,
    options: CtypesRef,
    out_traces: CtypesRef,
    out_edge_ids: CtypesRef,
    /,
) -> int: ...


# ---------------------------------------------------------------------------
# Loaders
# ---------------------------------------------------------------------------


# int gf_loader_open(gf_graph *graph, const DLTensor *seeds,
#                    const gf_loader_options *options, gf_loader **out_loader);
@cfunc(
    "gf_loader_open",
    [gf_graph_p_ctypes, DLTensor_p, gf_loader_options_p, c_void_pp],
    ctypes.c_int,
)
def gf_loader_open(graph: gf_graph_p | None, seeds: CtypesRef, options: CtypesRef, out_loader: CtypesRef, /) -> int: ...


# int gf_loader_num_batches(const gf_loader *loader, int64_t *out);
@cfunc("gf_loader_num_batches", [gf_loader_p_ctypes, c_int64_p], ctypes.c_int)
def gf_loader_num_batches(loader: gf_loader_p | None, out: CtypesRef, /) -> int: ...


# int gf_loader_start(gf_loader *loader, uint64_t epoch);
@cfunc("gf_loader_start", [gf_loader_p_ctypes, ctypes.c_uint64], ctypes.c_int)
def gf_loader_start(loader: gf_loader_p | None, epoch: int, /) -> int: ...


# int gf_loader_start_at(gf_loader *loader, uint64_t epoch, int64_t first_batch);
@cfunc("gf_loader_start_at", [gf_loader_p_ctypes, ctypes.c_uint64, ctypes.c_int64], ctypes.c_int)
def gf_loader_start_at(loader: gf_loader_p | None, epoch: int, first_batch: int, /) -> int: ...


# int gf_loader_start_ordered(gf_loader *loader, uint64_t epoch, int64_t first_batch,
#                             const DLTensor *order);
@cfunc("gf_loader_start_ordered", [gf_loader_p_ctypes, ctypes.c_uint64, ctypes.c_int64, DLTensor_p], ctypes.c_int)
def gf_loader_start_ordered(loader: gf_loader_p | None, epoch: int, first_batch: int, order: CtypesRef, /) -> int: ...


# int gf_loader_position(const gf_loader *loader, uint64_t *out_epoch, int64_t *out_delivered,
#                        int32_t *out_started);
@cfunc(
    "gf_loader_position",
    [gf_loader_p_ctypes, ctypes.POINTER(ctypes.c_uint64), c_int64_p, ctypes.POINTER(ctypes.c_int32)],
    ctypes.c_int,
)
def gf_loader_position(
    loader: gf_loader_p | None, out_epoch: CtypesRef, out_delivered: CtypesRef, out_started: CtypesRef | None, /
) -> int: ...


# int gf_loader_next(gf_loader *loader, gf_batch **out_batch);
@cfunc(
    "gf_loader_next",
    [gf_loader_p_ctypes, c_void_pp],
    ctypes.c_int,
    errcheck=_check_ok_or_done,
)
def gf_loader_next(loader: gf_loader_p | None, out_batch: CtypesRef, /) -> int: ...


# int gf_loader_next_wait(gf_loader *loader, int64_t timeout_ms, gf_batch **out_batch);
@cfunc(
    "gf_loader_next_wait",
    [gf_loader_p_ctypes, ctypes.c_int64, c_void_pp],
    ctypes.c_int,
    errcheck=_check_ok_done_or_not_ready,
)
def gf_loader_next_wait(loader: gf_loader_p | None, timeout_ms: int, out_batch: CtypesRef, /) -> int: ...


# void gf_loader_close(gf_loader *loader);
@cfunc("gf_loader_close", [gf_loader_p_ctypes], None, errcheck=None)
def gf_loader_close(loader: gf_loader_p | None, /) -> None: ...


# int gf_tensor_to_versioned(DLManagedTensor *tensor,
#                            DLManagedTensorVersioned **out_tensor);
@cfunc("gf_tensor_to_versioned", [ctypes.c_void_p, c_void_pp], ctypes.c_int)
def gf_tensor_to_versioned(tensor: int, out_tensor: CtypesRef, /) -> int: ...


# ---------------------------------------------------------------------------
# Induced subgraphs
# ---------------------------------------------------------------------------


# int gf_graph_induced_subgraph(gf_graph *graph, const DLTensor *nodes,
#                               DLManagedTensor **out_src,
#                               DLManagedTensor **out_dst,
#                               DLManagedTensor **out_edge_ids);
@cfunc(
    "gf_graph_induced_subgraph",
    [gf_graph_p_ctypes, DLTensor_p, c_void_pp, c_void_pp, c_void_pp],
    ctypes.c_int,
)
def gf_graph_induced_subgraph(
    graph: gf_graph_p | None,
    nodes: CtypesRef,
    out_src: CtypesRef,
    out_dst: CtypesRef,
    out_edge_ids: CtypesRef,
    /,
) -> int: ...


# int gf_subgraph_loader_open(gf_graph *graph, const DLTensor *items,
#                             const gf_subgraph_loader_options *options, gf_loader **out_loader);
@cfunc(
    "gf_subgraph_loader_open",
    [gf_graph_p_ctypes, DLTensor_p, ctypes.POINTER(gf_subgraph_loader_options), c_void_pp],
    ctypes.c_int,
)
def gf_subgraph_loader_open(
    graph: int | None, items: CtypesRef, options: CtypesRef, out_loader: CtypesRef, /
) -> int: ...


# int gf_graph_edges(gf_graph *graph, int32_t format, int32_t relation,
#                    DLManagedTensor **out_first, DLManagedTensor **out_second,
#                    DLManagedTensor **out_edge_ids);
@cfunc(
    "gf_graph_edges",
    [gf_graph_p_ctypes, ctypes.c_int32, ctypes.c_int32, c_void_pp, c_void_pp, c_void_pp],
    ctypes.c_int,
)
def gf_graph_edges(
    graph: gf_graph_p | None,
    format: int,
    relation: int,
    out_first: CtypesRef,
    out_second: CtypesRef,
    out_edge_ids: CtypesRef,
    /,
) -> int: ...


# ---------------------------------------------------------------------------
# Loader statistics and the hot tier
# ---------------------------------------------------------------------------


# int gf_loader_stats(const gf_loader *loader, gf_loader_statistics *out);
@cfunc(
    "gf_loader_stats",
    [gf_loader_p_ctypes, ctypes.POINTER(gf_loader_statistics)],
    ctypes.c_int,
)
def gf_loader_stats(loader: gf_loader_p | None, out: CtypesRef, /) -> int: ...


# int gf_loader_set_cache(gf_loader *loader, const gf_cache_options *options, int64_t *out_rows);
@cfunc(
    "gf_loader_set_cache",
    [gf_loader_p_ctypes, ctypes.POINTER(gf_cache_options), ctypes.POINTER(ctypes.c_int64)],
    ctypes.c_int,
)
def gf_loader_set_cache(loader: gf_loader_p | None, options: CtypesRef, out_rows: CtypesRef, /) -> int: ...


# ---------------------------------------------------------------------------
# Host pools (include/graphferry.h, "gf_host_pool")
# ---------------------------------------------------------------------------

GF_HOST_POOL_FENCED = 1
GF_HOST_POOL_POISON = 2
GF_HOST_POOL_LIMIT = 4


class gf_host_pool_options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("flags", ctypes.c_int32), ("limit_bytes", ctypes.c_int64)]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_host_pool_options), **fields)


class gf_host_pool_statistics(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("last_failure_errno", ctypes.c_int32)] + [
        (name, ctypes.c_int64)
        for name in (
            "allocs",
            "frees",
            "bad_frees",
            "live_buffers",
            "live_bytes",
            "waiting",
            "chunks",
            "chunk_bytes",
            "failures",
            "last_failure_bytes",
        )
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_host_pool_statistics), **fields)


# int gf_host_pool_open(const gf_host_pool_options *options, gf_host_pool **out_pool,
#                       gf_allocator *out_allocator);
@cfunc("gf_host_pool_open", [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int)
def gf_host_pool_open(options: CtypesRef, out_pool: CtypesRef, out_allocator: CtypesRef, /) -> int: ...


# int gf_host_pool_new_chunks(gf_host_pool *pool, void **ptrs, size_t *lens, int64_t capacity,
#                             int64_t *out_count);
@cfunc(
    "gf_host_pool_new_chunks",
    [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p],
    ctypes.c_int,
)
def gf_host_pool_new_chunks(pool: int, ptrs: Any, lens: Any, capacity: int, out_count: CtypesRef, /) -> int: ...


# int gf_host_pool_fence(gf_host_pool *pool, uint64_t passed, uint64_t *out_fence);
@cfunc("gf_host_pool_fence", [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p], ctypes.c_int)
def gf_host_pool_fence(pool: int, passed: int, out_fence: CtypesRef | None, /) -> int: ...


# int gf_host_pool_stats(gf_host_pool *pool, gf_host_pool_statistics *out);
@cfunc("gf_host_pool_stats", [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int)
def gf_host_pool_stats(pool: int, out: CtypesRef, /) -> int: ...


# int gf_host_pool_close(gf_host_pool *pool);
@cfunc("gf_host_pool_close", [ctypes.c_void_p], ctypes.c_int)
def gf_host_pool_close(pool: int | None, /) -> int: ...


# ---------------------------------------------------------------------------
# Edge-level sampling
# ---------------------------------------------------------------------------


# int gf_edge_sampler_open(gf_graph *graph, const gf_edge_sampler_options *options,
#                          gf_edge_sampler **out_sampler);
@cfunc(
    "gf_edge_sampler_open",
    [gf_graph_p_ctypes, ctypes.POINTER(gf_edge_sampler_options), c_void_pp],
    ctypes.c_int,
)
def gf_edge_sampler_open(graph: int | None, options: CtypesRef, out_sampler: CtypesRef, /) -> int: ...


# int gf_edge_sampler_sample(gf_edge_sampler *sampler, const DLTensor *seeds,
#                            const DLTensor *seeds_dst, uint64_t batch_key,
#                            gf_batch **out_batch);
@cfunc(
    "gf_edge_sampler_sample",
    [gf_edge_sampler_p_ctypes, DLTensor_p, DLTensor_p, ctypes.c_uint64, c_void_pp],
    ctypes.c_int,
)
def gf_edge_sampler_sample(
    sampler: int | None, seeds: CtypesRef, seeds_dst: CtypesRef, batch_key: int, out_batch: CtypesRef, /
) -> int: ...


# int gf_edge_sampler_sample_timed(gf_edge_sampler *sampler, const DLTensor *seeds,
#                                  const DLTensor *seeds_dst, const DLTensor *seed_times,
#                                  uint64_t batch_key, gf_batch **out_batch);
@cfunc(
    "gf_edge_sampler_sample_timed",
    [gf_edge_sampler_p_ctypes, DLTensor_p, DLTensor_p, DLTensor_p, ctypes.c_uint64, c_void_pp],
    ctypes.c_int,
)
def gf_edge_sampler_sample_timed(
    sampler: int | None,
    seeds: CtypesRef,
    seeds_dst: CtypesRef,
    seed_times: CtypesRef,
    batch_key: int,
    out_batch: CtypesRef,
    /,
) -> int: ...


# void gf_edge_sampler_close(gf_edge_sampler *sampler);
@cfunc("gf_edge_sampler_close", [gf_edge_sampler_p_ctypes], None, errcheck=None)
def gf_edge_sampler_close(sampler: int | None, /) -> None: ...


# int gf_batch_take_link(gf_batch *batch, int32_t field, DLManagedTensor **out_tensor);
@cfunc("gf_batch_take_link", [gf_batch_p_ctypes, ctypes.c_int32, c_void_pp], ctypes.c_int)
def gf_batch_take_link(batch: gf_batch_p | None, field: int, out_tensor: CtypesRef, /) -> int: ...


# int gf_sample_keyed(gf_graph *graph, const DLTensor *seeds, const gf_sample_options *options,
#                     uint64_t batch_key, gf_batch **out_batch);
@cfunc(
    "gf_sample_keyed",
    [gf_graph_p_ctypes, DLTensor_p, ctypes.POINTER(gf_sample_options), ctypes.c_uint64, c_void_pp],
    ctypes.c_int,
)
def gf_sample_keyed(
    graph: int | None, seeds: CtypesRef, options: CtypesRef, batch_key: int, out_batch: CtypesRef, /
) -> int: ...


# int gf_edge_loader_open(gf_graph *graph, const DLTensor *seeds, const DLTensor *seeds_dst,
#                         const gf_edge_loader_options *options, gf_loader **out_loader);
@cfunc(
    "gf_edge_loader_open",
    [gf_graph_p_ctypes, DLTensor_p, DLTensor_p, ctypes.POINTER(gf_edge_loader_options), c_void_pp],
    ctypes.c_int,
)
def gf_edge_loader_open(
    graph: int | None, seeds: CtypesRef, seeds_dst: CtypesRef, options: CtypesRef, out_loader: CtypesRef, /
) -> int: ...


# ---------------------------------------------------------------------------
# Communicators and rank parts
# ---------------------------------------------------------------------------


# int gf_loader_open_comm(gf_graph *graph, const DLTensor *seeds,
#                         const gf_loader_options *options, const gf_comm *comm,
#                         gf_loader **out_loader);
@cfunc(
    "gf_loader_open_comm",
    [gf_graph_p_ctypes, DLTensor_p, gf_loader_options_p, ctypes.POINTER(gf_comm), c_void_pp],
    ctypes.c_int,
)
def gf_loader_open_comm(graph: Any, seeds: Any, options: Any, comm: Any, out_loader: Any, /) -> int: ...


# int gf_part_open(const char *dir, int32_t rank, uint32_t flags, gf_part **out_part);
@cfunc("gf_part_open", [ctypes.c_char_p, ctypes.c_int32, ctypes.c_uint32, c_void_pp], ctypes.c_int)
def gf_part_open(path: bytes, rank: int, flags: int, out_part: Any, /) -> int: ...


# void gf_part_close(gf_part *part);
@cfunc("gf_part_close", [gf_part_p_ctypes], None, errcheck=None)
def gf_part_close(part: Any, /) -> None: ...


# int gf_part_get_info(gf_part *part, gf_part_info *out_info);
@cfunc("gf_part_get_info", [gf_part_p_ctypes, ctypes.POINTER(gf_part_info)], ctypes.c_int)
def gf_part_get_info(part: Any, out_info: Any, /) -> int: ...


# int gf_part_owned_nodes(gf_part *part, DLManagedTensor **out_tensor);
@cfunc("gf_part_owned_nodes", [gf_part_p_ctypes, c_void_pp], ctypes.c_int)
def gf_part_owned_nodes(part: Any, out_tensor: Any, /) -> int: ...


# int gf_part_get_node_data(gf_part *part, const char *name, DLManagedTensor **out_tensor);
@cfunc("gf_part_get_node_data", [gf_part_p_ctypes, ctypes.c_char_p, c_void_pp], ctypes.c_int)
def gf_part_get_node_data(part: Any, name: bytes, out_tensor: Any, /) -> int: ...


# int gf_part_node_data_names(gf_part *part, char **out_names);
@cfunc("gf_part_node_data_names", [gf_part_p_ctypes, c_void_pp], ctypes.c_int)
def gf_part_node_data_names(part: Any, out_names: Any, /) -> int: ...


# int gf_part_set_node_time(gf_part *part, const DLTensor *time, const gf_comm *comm);
@cfunc("gf_part_set_node_time", [gf_part_p_ctypes, DLTensor_p, ctypes.POINTER(gf_comm)], ctypes.c_int)
def gf_part_set_node_time(part: Any, time: CtypesRef, comm: Any, /) -> int: ...


# int gf_part_set_edge_time(gf_part *part, const DLTensor *time);
@cfunc("gf_part_set_edge_time", [gf_part_p_ctypes, DLTensor_p], ctypes.c_int)
def gf_part_set_edge_time(part: Any, time: CtypesRef, /) -> int: ...


# int gf_loader_open_part(gf_part *part, const DLTensor *seeds,
#                         const gf_loader_options *options, const gf_comm *comm,
#                         gf_loader **out_loader);
@cfunc(
    "gf_loader_open_part",
    [gf_part_p_ctypes, DLTensor_p, gf_loader_options_p, ctypes.POINTER(gf_comm), c_void_pp],
    ctypes.c_int,
)
def gf_loader_open_part(part: Any, seeds: Any, options: Any, comm: Any, out_loader: Any, /) -> int: ...


# int gf_edge_loader_open_comm(gf_graph *graph, const DLTensor *seeds, const DLTensor *seeds_dst,
#                              const gf_edge_loader_options *options, const gf_comm *comm,
#                              gf_loader **out_loader);
@cfunc(
    "gf_edge_loader_open_comm",
    [
        gf_graph_p_ctypes,
        DLTensor_p,
        DLTensor_p,
        ctypes.POINTER(gf_edge_loader_options),
        ctypes.POINTER(gf_comm),
        c_void_pp,
    ],
    ctypes.c_int,
)
def gf_edge_loader_open_comm(
    graph: Any, seeds: Any, seeds_dst: Any, options: Any, comm: Any, out_loader: Any, /
) -> int: ...


# int gf_edge_loader_open_part(gf_part *part, const DLTensor *seeds, const DLTensor *seeds_dst,
#                              const gf_edge_loader_options *options, const gf_comm *comm,
#                              gf_loader **out_loader);
@cfunc(
    "gf_edge_loader_open_part",
    [
        gf_part_p_ctypes,
        DLTensor_p,
        DLTensor_p,
        ctypes.POINTER(gf_edge_loader_options),
        ctypes.POINTER(gf_comm),
        c_void_pp,
    ],
    ctypes.c_int,
)
def gf_edge_loader_open_part(
    part: Any, seeds: Any, seeds_dst: Any, options: Any, comm: Any, out_loader: Any, /
) -> int: ...


# ---------------------------------------------------------------------------
# Partitioning a dataset into rank folders
# ---------------------------------------------------------------------------


# int gf_dataset_partition(const char *src_dir, const char *dst_dir,
#                          const gf_partition_options *options);
@cfunc(
    "gf_dataset_partition",
    [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(gf_partition_options)],
    ctypes.c_int,
)
def gf_dataset_partition(src_dir: bytes, dst_dir: bytes, options: Any, /) -> int: ...


# ---------------------------------------------------------------------------
# Version check at import
# ---------------------------------------------------------------------------

LIB_VERSION_NUMBER: int = gf_version_number()
LIB_VERSION: str = (gf_version() or b"").decode("ascii", errors="replace")
LIB_BUILD_ID: str = (gf_build_id() or b"").decode("ascii", errors="replace")
_PACKAGE_MAJOR = int(_version.__version__.split(".")[0])

if LIB_VERSION_NUMBER // 1000000 != _PACKAGE_MAJOR:
    raise ImportError(
        f"graphferry {_version.__version__} needs libgraphferry major version {_PACKAGE_MAJOR}, "
        f"but {LIB_PATH} is version {LIB_VERSION} (gf_version_number() = {LIB_VERSION_NUMBER}); "
        "rebuild it with `pip install ./python` or point GRAPHFERRY_LIB_PATH at a matching build"
    )

# ---------------------------------------------------------------------------
# The CUDA library's check and test hooks (capi/cuda_on.go)
# ---------------------------------------------------------------------------


class CudaHooks:
    """The CUDA library's check and test hooks (capi/cuda_on.go), typed.
    Each returns the hook's JSON report, or raises :class:`BackendError` with
    its message."""

    _REPORT = 1 << 16

    def __init__(self, lib: ctypes.CDLL, forked: Callable[[], bool]) -> None:
        self._forked = forked
        c_char_p, c_size_t, i32 = ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int32
        self._check = lib.gfcuda_check
        self._check.argtypes = [i32, c_char_p, c_size_t]
        self._selfcheck = lib.gfcuda_selfcheck
        self._selfcheck.argtypes = [i32, ctypes.c_int64, i32, ctypes.c_uint64, c_char_p, c_size_t]
        self._epoch = lib.gfcuda_epoch
        self._epoch.argtypes = [i32, c_char_p, c_char_p, c_size_t]
        self._fault = lib.gfcuda_fault
        self._fault.argtypes = [i32, c_char_p, c_char_p, c_size_t]
        for f in (self._check, self._selfcheck, self._epoch, self._fault):
            f.restype = ctypes.c_int

    def _call(self, fn: Any, *args: Any) -> Any:
        if self._forked():
            raise BackendError("graphferry cannot be used in a forked child process")
        buf = ctypes.create_string_buffer(self._REPORT)
        rc = fn(*args, buf, len(buf))
        text = buf.value.decode("utf-8", errors="replace")
        if rc != 0:
            raise BackendError(text)
        return json.loads(text)

    def check(self, ordinal: int) -> dict[str, Any]:
        return self._call(self._check, ordinal)

    def selfcheck(self, ordinal: int, nodes: int, batches: int, seed: int) -> dict[str, Any]:
        return self._call(self._selfcheck, ordinal, nodes, batches, seed)

    def epoch(self, ordinal: int, config: Mapping[str, Any]) -> dict[str, Any]:
        return self._call(self._epoch, ordinal, json.dumps(config).encode())

    def fault(self, ordinal: int, kind: str) -> str:
        """The error graphferry reported for a deliberately faulty launch."""
        return self._call(self._fault, ordinal, kind.encode())


# The CUDA library's hooks, when this process loaded it (backend.py).
CUDA: CudaHooks | None = CudaHooks(_lib, in_forked_child) if backend.BACKEND == "cuda" else None

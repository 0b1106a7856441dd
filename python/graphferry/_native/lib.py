"""ctypes declarations of the C interfaces graphferry calls: include/graphferry.h
(the library), the dlpack.h structs it passes, the CUDA library's check hooks
and the few Python C API functions that handle DLPack capsules. Every
``ctypes`` declaration of the package is here, once; the modules above call
these and declare nothing.

The header is the source: the constants, callback types, structs and
function bindings between the ``generated`` markers below are written by
python/tools/cgen.py from include/graphferry.h and include/dlpack.h (``make
gen``; ``make lint`` fails when they differ). Each function is bound by
``_bind``; one that returns a status gets an ``errcheck`` that raises
:class:`~graphferry.GraphferryError` (or a subclass) with ``gf_errmsg()``'s
text for anything but ``GF_OK`` and the non-error statuses its doc block's
"Returns:" names (``GF_DONE``, ``GF_NOT_READY``); one documented to set no
message returns its status unchecked.

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
from typing import Any, Callable

from .. import _version
from ..errors import GF_DONE, GF_EBADHANDLE, GF_EFORK, GF_NOT_READY, GF_OK, GraphferryError, error_for_status
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
# Binding: errcheck, the fork guard, sized structs
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


def _checker(*passing: int) -> Callable[[int, Any, tuple], int]:
    """errcheck: GF_OK and the statuses ``passing`` pass, any other raises."""
    ok = frozenset((GF_OK, *passing))

    def check(result: int, func: Any, args: tuple) -> int:
        if result not in ok:
            raise _last_error(getattr(func, "gf_name", "graphferry"), result)
        return result

    return check


_check_ok = _checker()


def _bind(name: str, argtypes: Sequence[Any], restype: Any, errcheck: Callable[[int, Any, tuple], int] | None) -> Any:
    """The library's function ``name``, guarded against a forked child, with
    ``.raw`` (unguarded, no errcheck) and ``.foreign`` (with errcheck)."""
    proto = ctypes.CFUNCTYPE(restype, *argtypes)
    foreign = proto((name, _lib))
    foreign.gf_name = name
    if errcheck is not None:
        foreign.errcheck = errcheck

    def call(*args: Any) -> Any:
        if _forked or os.getpid() != _LOAD_PID:
            raise _fork_error(name)
        return foreign(*args)

    call.__name__ = call.__qualname__ = name
    call.raw = proto((name, _lib))  # type: ignore[attr-defined]
    call.foreign = foreign  # type: ignore[attr-defined]
    return call


def cfunc(
    name: str, argtypes: Sequence[Any], restype: Any, *, errcheck: Callable[[int, Any, tuple], int] | None = _check_ok
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Binds the stub it decorates to the library's function ``name`` (a
    binding made outside the generated ones, as a test's)."""
    return lambda stub: functools.wraps(stub)(_bind(name, argtypes, restype, errcheck))


class _Sized(ctypes.Structure):
    """A struct that starts with ``uint32_t struct_size``, which defaults to
    its size (this header's layout)."""

    def __init__(self, **fields: Any) -> None:
        super().__init__(**{"struct_size": ctypes.sizeof(type(self)), **fields})


# What ctypes accepts for a pointer argument: ctypes.byref(x), a pointer, None.
CtypesRef = Any
c_void_pp = ctypes.POINTER(ctypes.c_void_p)

# --- generated by python/tools/cgen.py from include/graphferry.h: do not edit ---
# fmt: off

# Constants: dlpack.h's enums and flags, graphferry.h's #defines (status codes: errors.py).
kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLOpenCL = 4
kDLVulkan = 7
kDLMetal = 8
kDLVPI = 9
kDLROCM = 10
kDLROCMHost = 11
kDLExtDev = 12
kDLCUDAManaged = 13
kDLOneAPI = 14
kDLWebGPU = 15
kDLHexagon = 16
kDLMAIA = 17
kDLTrn = 18
kDLInt = 0
kDLUInt = 1
kDLFloat = 2
kDLOpaqueHandle = 3
kDLBfloat = 4
kDLComplex = 5
kDLBool = 6
kDLFloat8_e3m4 = 7
kDLFloat8_e4m3 = 8
kDLFloat8_e4m3b11fnuz = 9
kDLFloat8_e4m3fn = 10
kDLFloat8_e4m3fnuz = 11
kDLFloat8_e5m2 = 12
kDLFloat8_e5m2fnuz = 13
kDLFloat8_e8m0fnu = 14
kDLFloat6_e2m3fn = 15
kDLFloat6_e3m2fn = 16
kDLFloat4_e2m1fn = 17
DLPACK_MAJOR_VERSION = 1
DLPACK_MINOR_VERSION = 1
DLPACK_FLAG_BITMASK_READ_ONLY = 1
DLPACK_FLAG_BITMASK_IS_COPIED = 2
DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED = 4
GF_PARTITION_RANGE = 0  # patch p owns ids [p*N/P, (p+1)*N/P)
GF_PARTITION_RANDOM = 1  # each node to a patch drawn from seed
GF_PARTITION_GIVEN = 2  # assignment[v] is the patch of node v
GF_PARTITION_LDG = 3
GF_GRAPH_REMOVE_DUPLICATES = 1  # keep the first of equal (src,dst)
GF_GRAPH_REMOVE_SELF_LOOPS = 2  # drop edges v->v
GF_GRAPH_VERIFY_CHECKSUMS = 4
GF_TIER_AUTO = 0  # by memory_budget: mapped if everything fits, else disk
GF_TIER_MEMORY = 1  # feat.bin memory-mapped, read through the page cache
GF_TIER_DISK = 2  # direct reads (O_DIRECT, io_uring or pread workers) under a CPU cache of rows
GF_CACHE_S3FIFO = 0  # S3-FIFO (SOSP'23), the default
GF_CACHE_SIEVE = 1  # SIEVE (NSDI'24)
GF_CACHE_LRU = 2  # least recently used
GF_FRONTIER_ALL = 0
GF_FRONTIER_NEW = 1
GF_SCHEME_NODE_WISE = 0
GF_SCHEME_LAYER_WISE = 1
GF_SCHEME_LABOR = 2
GF_TEMPORAL_NONE = 0
GF_TEMPORAL_NODE = 1
GF_TEMPORAL_EDGE = 2
GF_TEMPORAL_UNIFORM = 0
GF_TEMPORAL_LAST = 1
GF_FIELD_NODES = 0
GF_FIELD_HOP_COUNTS = 1
GF_FIELD_SEEDS = 2
GF_FIELD_INPUT_INDEX = 3
GF_FIELD_INDPTR = 4
GF_FIELD_INDICES = 5
GF_FIELD_EDGE_IDS = 6
GF_FIELD_BATCH = 7
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
GF_COO_SUBGRAPH = 4
GF_HOST_POOL_FENCED = 1
GF_HOST_POOL_POISON = 2
GF_HOST_POOL_LIMIT = 4
GF_TOPOLOGY_AUTO = 0
GF_TOPOLOGY_DEVICE = 1
GF_TOPOLOGY_PINNED = 2
GF_CACHE_IN_DEGREE = 1  # highest in-degree first (PaGraph)
GF_CACHE_PRESAMPLING = 2  # most read over a few sampled epochs
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
GF_LINK_DGL = 1
GF_LINK_PYG = 2
GF_NEG_NONE = 0
GF_NEG_PER_SOURCE_UNIFORM = 1  # GF_LINK_DGL
GF_NEG_GLOBAL_UNIFORM = 2  # GF_LINK_DGL
GF_NEG_BINARY = 3  # GF_LINK_PYG
GF_NEG_TRIPLET = 4  # GF_LINK_PYG
GF_NEG_KEEP_SELF_LOOPS = 1  # exclude_self_loops=False: pairs (u, u) may be drawn
GF_NEG_REPLACE = 2  # replace=True: repeated pairs are kept
GF_EXCLUDE_NONE = 0
GF_EXCLUDE_SELF = 1  # the batch's seed edge ids
GF_EXCLUDE_REVERSE_ID = 2  # the seed ids and their reverses
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
GF_PART_VERIFY = 1  # read every file whole and check its CRC-32C
GF_LAYOUT_DSP = 0  # DSP patches: exchange while sampling
GF_LAYOUT_SELF_RELIANT = 1  # PaGraph: L-hop neighbourhoods, no exchange
GF_LAYOUT_HYBRID = 2  # FastSample: topology everywhere, features split
GF_MAX_PARTS = 65536

# Callback types: a struct's function-pointer field F is gf_F_fn.
gf_batch_callback_fn = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_int64, c_void_pp, ctypes.c_void_p,
    ctypes.c_size_t
)
gf_alloc_fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
gf_free_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
gf_exchange_sizes_fn = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)
)
gf_all_to_all_fn = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, c_void_pp, ctypes.POINTER(ctypes.c_int64), c_void_pp, ctypes.POINTER(ctypes.c_int64)
)
gf_errmsg_fn = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
gf_send_fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
gf_recv_fn = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)
)
gf_all_to_all_dl_fn = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_int64)
)
gf_progress_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)

# Structs (struct_size, when first, defaults to the struct's size).

class DLPackVersion(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
    ]


class DLDevice(ctypes.Structure):
    _fields_ = [
        ("device_type", ctypes.c_int),
        ("device_id", ctypes.c_int32),
    ]


class DLDataType(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
    ]


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


class DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


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


class gf_graph_options(_Sized):
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


class gf_memory_plan(_Sized):
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


class gf_output_options(_Sized):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("overwrite", ctypes.c_int32),
    ]


class gf_allocator(_Sized):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32),
        ("user", ctypes.c_void_p),
        ("alloc", gf_alloc_fn),
        ("free", gf_free_fn),
    ]


class gf_sample_options(_Sized):
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
        ("allocator", ctypes.POINTER(gf_allocator)),
    ]


class gf_walk_options(_Sized):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("length", ctypes.c_int32),
        ("restart_prob", ctypes.c_double),
        ("biased", ctypes.c_int32),
        ("num_threads", ctypes.c_int32),
        ("seed", ctypes.c_uint64),
    ]


class gf_host_pool_options(_Sized):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("flags", ctypes.c_int32),
        ("limit_bytes", ctypes.c_int64),
    ]


class gf_host_pool_statistics(_Sized):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("last_failure_errno", ctypes.c_int32),
        ("allocs", ctypes.c_int64),
        ("frees", ctypes.c_int64),
        ("bad_frees", ctypes.c_int64),
        ("live_buffers", ctypes.c_int64),
        ("live_bytes", ctypes.c_int64),
        ("waiting", ctypes.c_int64),
        ("chunks", ctypes.c_int64),
        ("chunk_bytes", ctypes.c_int64),
        ("failures", ctypes.c_int64),
        ("last_failure_bytes", ctypes.c_int64),
    ]


class gf_loader_options(_Sized):
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
        ("device", DLDevice),
        ("stream", ctypes.c_void_p),
        ("device_cache_bytes", ctypes.c_int64),
        ("device_reserve_bytes", ctypes.c_int64),
        ("device_topology", ctypes.c_int32),
        ("coo", ctypes.c_int32),
    ]


class gf_stage_stats(ctypes.Structure):
    _fields_ = [
        ("busy_ns", ctypes.c_int64),
        ("blocked_ns", ctypes.c_int64),
        ("waiting_ns", ctypes.c_int64),
        ("batches", ctypes.c_int64),
    ]


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


class gf_tier_counters(ctypes.Structure):
    _fields_ = [
        ("rows_cache", ctypes.c_int64),
        ("rows_disk", ctypes.c_int64),
        ("bytes_disk", ctypes.c_int64),
        ("bytes_disk_read", ctypes.c_int64),
        ("disk_requests", ctypes.c_int64),
    ]


class gf_loader_statistics(_Sized):
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


class gf_cache_options(_Sized):
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


class gf_batch_callback(_Sized):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("user", ctypes.c_void_p),
        ("fn", gf_batch_callback_fn),
    ]


class gf_subgraph_loader_options(_Sized):
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


class gf_edge_sampler_options(_Sized):
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


class gf_edge_loader_options(_Sized):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("sampler", ctypes.POINTER(gf_edge_sampler_options)),
        ("loader", ctypes.POINTER(gf_loader_options)),
        ("num_edge_feature_names", ctypes.c_int32),
        ("edge_feature_names", ctypes.POINTER(ctypes.c_char_p)),
        ("coo", ctypes.c_int32),
    ]


class gf_comm(_Sized):
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


class gf_part_info(_Sized):
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


class gf_partition_options(_Sized):
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
        ("resume", ctypes.c_int32),
        ("memory_limit_bytes", ctypes.c_int64),
    ]


# Functions: each C declaration, bound; statuses other than GF_OK and the listed ones raise.
gf_version_number = _bind("gf_version_number", [], ctypes.c_int, None)
gf_version = _bind("gf_version", [], ctypes.c_char_p, None)
gf_build_id = _bind("gf_build_id", [], ctypes.c_char_p, None)
gf_status_str = _bind("gf_status_str", [ctypes.c_int], ctypes.c_char_p, None)
gf_errmsg = _bind("gf_errmsg", [], ctypes.c_char_p, None)
gf_free = _bind("gf_free", [ctypes.c_void_p], None, None)
gf_cancel_new = _bind("gf_cancel_new", [c_void_pp], ctypes.c_int, _checker())
gf_cancel_request = _bind("gf_cancel_request", [ctypes.c_void_p], ctypes.c_int, None)
gf_cancel_is_requested = _bind("gf_cancel_is_requested", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)
], ctypes.c_int, _checker())
gf_cancel_bind = _bind("gf_cancel_bind", [ctypes.c_void_p], ctypes.c_int, _checker())
gf_cancel_free = _bind("gf_cancel_free", [ctypes.c_void_p], None, None)
gf_graph_from_csc = _bind("gf_graph_from_csc", [
    ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(gf_graph_options),
    c_void_pp
], ctypes.c_int, _checker())
gf_graph_from_csr = _bind("gf_graph_from_csr", [
    ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(gf_graph_options),
    c_void_pp
], ctypes.c_int, _checker())
gf_graph_from_coo = _bind("gf_graph_from_coo", [
    ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(gf_graph_options), c_void_pp
], ctypes.c_int, _checker())
gf_graph_from_arrow = _bind("gf_graph_from_arrow", [
    ctypes.POINTER(ArrowSchema), ctypes.POINTER(ArrowArray), ctypes.POINTER(gf_graph_options), c_void_pp
], ctypes.c_int, _checker())
gf_graph_open = _bind("gf_graph_open", [
    ctypes.c_char_p, ctypes.POINTER(gf_graph_options), c_void_pp
], ctypes.c_int, _checker())
gf_graph_memory_plan = _bind("gf_graph_memory_plan", [
    ctypes.c_void_p, ctypes.POINTER(gf_memory_plan)
], ctypes.c_int, _checker())
gf_graph_memory_report = _bind("gf_graph_memory_report", [ctypes.c_void_p, c_void_pp], ctypes.c_int, _checker())
gf_graph_close = _bind("gf_graph_close", [ctypes.c_void_p], None, None)
gf_graph_num_nodes = _bind("gf_graph_num_nodes", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)
], ctypes.c_int, _checker())
gf_graph_num_edges = _bind("gf_graph_num_edges", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)
], ctypes.c_int, _checker())
gf_graph_num_patches = _bind("gf_graph_num_patches", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)
], ctypes.c_int, _checker())
gf_graph_set_node_data = _bind("gf_graph_set_node_data", [
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p
], ctypes.c_int, _checker())
gf_graph_set_node_data_versioned = _bind("gf_graph_set_node_data_versioned", [
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p
], ctypes.c_int, _checker())
gf_graph_get_node_data = _bind("gf_graph_get_node_data", [
    ctypes.c_void_p, ctypes.c_char_p, c_void_pp
], ctypes.c_int, _checker())
gf_graph_get_node_data_versioned = _bind("gf_graph_get_node_data_versioned", [
    ctypes.c_void_p, ctypes.c_char_p, c_void_pp
], ctypes.c_int, _checker())
gf_graph_node_data_names = _bind("gf_graph_node_data_names", [ctypes.c_void_p, c_void_pp], ctypes.c_int, _checker())
gf_graph_set_edge_data = _bind("gf_graph_set_edge_data", [
    ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p
], ctypes.c_int, _checker())
gf_graph_set_edge_weights = _bind("gf_graph_set_edge_weights", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor)
], ctypes.c_int, _checker())
gf_graph_set_source_weights = _bind("gf_graph_set_source_weights", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor)
], ctypes.c_int, _checker())
gf_graph_set_types = _bind("gf_graph_set_types", [
    ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), ctypes.c_int32, ctypes.POINTER(ctypes.c_int64),
    ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)
], ctypes.c_int, _checker())
gf_graph_num_types = _bind("gf_graph_num_types", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)
], ctypes.c_int, _checker())
gf_graph_set_types_json = _bind("gf_graph_set_types_json", [ctypes.c_void_p, ctypes.c_char_p], ctypes.c_int, _checker())
gf_graph_types_json = _bind("gf_graph_types_json", [ctypes.c_void_p, c_void_pp], ctypes.c_int, _checker())
gf_graph_set_node_time = _bind("gf_graph_set_node_time", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor)
], ctypes.c_int, _checker())
gf_graph_set_edge_time = _bind("gf_graph_set_edge_time", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor)
], ctypes.c_int, _checker())
gf_dataset_convert_npy = _bind("gf_dataset_convert_npy", [ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int, _checker())
gf_dataset_convert_npy_into = _bind("gf_dataset_convert_npy_into", [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(gf_output_options)
], ctypes.c_int, _checker())
gf_dataset_generate = _bind("gf_dataset_generate", [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_int32
], ctypes.c_int, _checker())
gf_dataset_generate_into = _bind("gf_dataset_generate_into", [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_int32, ctypes.POINTER(gf_output_options)
], ctypes.c_int, _checker())
gf_dataset_write_csc = _bind("gf_dataset_write_csc", [ctypes.c_char_p], ctypes.c_int, _checker())
gf_graph_from_typed_coo = _bind("gf_graph_from_typed_coo", [
    ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), ctypes.c_int32, ctypes.POINTER(ctypes.c_int32),
    ctypes.POINTER(ctypes.c_int32), c_void_pp, c_void_pp, ctypes.POINTER(gf_graph_options), c_void_pp
], ctypes.c_int, _checker())
gf_graph_open_typed_arrow = _bind("gf_graph_open_typed_arrow", [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(gf_graph_options), c_void_pp
], ctypes.c_int, _checker())
gf_sample = _bind("gf_sample", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_sample_options), c_void_pp
], ctypes.c_int, _checker())
gf_sample_keyed = _bind("gf_sample_keyed", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_sample_options), ctypes.c_uint64, c_void_pp
], ctypes.c_int, _checker())
gf_batch_num_hops = _bind("gf_batch_num_hops", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)
], ctypes.c_int, _checker())
gf_batch_block_shape = _bind("gf_batch_block_shape", [
    ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
    ctypes.POINTER(ctypes.c_int64)
], ctypes.c_int, _checker())
gf_batch_take = _bind("gf_batch_take", [
    ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, c_void_pp
], ctypes.c_int, _checker())
gf_batch_take_versioned = _bind("gf_batch_take_versioned", [
    ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, c_void_pp
], ctypes.c_int, _checker())
gf_batch_take_node_data = _bind("gf_batch_take_node_data", [
    ctypes.c_void_p, ctypes.c_char_p, c_void_pp
], ctypes.c_int, _checker())
gf_batch_take_node_data_versioned = _bind("gf_batch_take_node_data_versioned", [
    ctypes.c_void_p, ctypes.c_char_p, c_void_pp
], ctypes.c_int, _checker())
gf_batch_take_edge_data = _bind("gf_batch_take_edge_data", [
    ctypes.c_void_p, ctypes.c_char_p, c_void_pp
], ctypes.c_int, _checker())
gf_batch_close = _bind("gf_batch_close", [ctypes.c_void_p], None, None)
gf_random_walk = _bind("gf_random_walk", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_walk_options), c_void_pp, c_void_pp
], ctypes.c_int, _checker())
gf_tensor_to_versioned = _bind("gf_tensor_to_versioned", [ctypes.c_void_p, c_void_pp], ctypes.c_int, _checker())
gf_host_pool_open = _bind("gf_host_pool_open", [
    ctypes.POINTER(gf_host_pool_options), c_void_pp, ctypes.POINTER(gf_allocator)
], ctypes.c_int, _checker())
gf_host_pool_new_chunks = _bind("gf_host_pool_new_chunks", [
    ctypes.c_void_p, c_void_pp, ctypes.POINTER(ctypes.c_size_t), ctypes.c_int64, ctypes.POINTER(ctypes.c_int64)
], ctypes.c_int, _checker())
gf_host_pool_fence = _bind("gf_host_pool_fence", [
    ctypes.c_void_p, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)
], ctypes.c_int, _checker())
gf_host_pool_stats = _bind("gf_host_pool_stats", [
    ctypes.c_void_p, ctypes.POINTER(gf_host_pool_statistics)
], ctypes.c_int, _checker())
gf_host_pool_close = _bind("gf_host_pool_close", [ctypes.c_void_p], ctypes.c_int, _checker())
gf_loader_open = _bind("gf_loader_open", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_loader_options), c_void_pp
], ctypes.c_int, _checker())
gf_batch_wait_stream = _bind("gf_batch_wait_stream", [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int, _checker())
gf_loader_num_batches = _bind("gf_loader_num_batches", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)
], ctypes.c_int, _checker())
gf_loader_start = _bind("gf_loader_start", [ctypes.c_void_p, ctypes.c_uint64], ctypes.c_int, _checker())
gf_loader_start_at = _bind("gf_loader_start_at", [
    ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64
], ctypes.c_int, _checker())
gf_loader_start_ordered = _bind("gf_loader_start_ordered", [
    ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64, ctypes.POINTER(DLTensor)
], ctypes.c_int, _checker())
gf_loader_position = _bind("gf_loader_position", [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int32)
], ctypes.c_int, _checker())
gf_loader_next = _bind("gf_loader_next", [ctypes.c_void_p, c_void_pp], ctypes.c_int, _checker(GF_DONE))
gf_loader_next_wait = _bind("gf_loader_next_wait", [
    ctypes.c_void_p, ctypes.c_int64, c_void_pp
], ctypes.c_int, _checker(GF_DONE, GF_NOT_READY))
gf_loader_close = _bind("gf_loader_close", [ctypes.c_void_p], None, None)
gf_loader_stats = _bind("gf_loader_stats", [
    ctypes.c_void_p, ctypes.POINTER(gf_loader_statistics)
], ctypes.c_int, _checker())
gf_loader_set_cache = _bind("gf_loader_set_cache", [
    ctypes.c_void_p, ctypes.POINTER(gf_cache_options), ctypes.POINTER(ctypes.c_int64)
], ctypes.c_int, _checker())
gf_graph_induced_subgraph = _bind("gf_graph_induced_subgraph", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), c_void_pp, c_void_pp, c_void_pp
], ctypes.c_int, _checker())
gf_subgraph_loader_open = _bind("gf_subgraph_loader_open", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_subgraph_loader_options), c_void_pp
], ctypes.c_int, _checker())
gf_graph_edges = _bind("gf_graph_edges", [
    ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, c_void_pp, c_void_pp, c_void_pp
], ctypes.c_int, _checker())
gf_edge_sampler_open = _bind("gf_edge_sampler_open", [
    ctypes.c_void_p, ctypes.POINTER(gf_edge_sampler_options), c_void_pp
], ctypes.c_int, _checker())
gf_edge_sampler_sample = _bind("gf_edge_sampler_sample", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.c_uint64, c_void_pp
], ctypes.c_int, _checker())
gf_edge_sampler_sample_timed = _bind("gf_edge_sampler_sample_timed", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.c_uint64,
    c_void_pp
], ctypes.c_int, _checker())
gf_edge_sampler_close = _bind("gf_edge_sampler_close", [ctypes.c_void_p], None, None)
gf_batch_take_link = _bind("gf_batch_take_link", [ctypes.c_void_p, ctypes.c_int32, c_void_pp], ctypes.c_int, _checker())
gf_edge_loader_open = _bind("gf_edge_loader_open", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(gf_edge_loader_options),
    c_void_pp
], ctypes.c_int, _checker())
gf_loader_open_comm = _bind("gf_loader_open_comm", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_loader_options), ctypes.POINTER(gf_comm), c_void_pp
], ctypes.c_int, _checker())
gf_part_open = _bind("gf_part_open", [
    ctypes.c_char_p, ctypes.c_int32, ctypes.c_uint32, c_void_pp
], ctypes.c_int, _checker())
gf_part_close = _bind("gf_part_close", [ctypes.c_void_p], None, None)
gf_part_get_info = _bind("gf_part_get_info", [ctypes.c_void_p, ctypes.POINTER(gf_part_info)], ctypes.c_int, _checker())
gf_part_owned_nodes = _bind("gf_part_owned_nodes", [ctypes.c_void_p, c_void_pp], ctypes.c_int, _checker())
gf_part_get_node_data = _bind("gf_part_get_node_data", [
    ctypes.c_void_p, ctypes.c_char_p, c_void_pp
], ctypes.c_int, _checker())
gf_part_node_data_names = _bind("gf_part_node_data_names", [ctypes.c_void_p, c_void_pp], ctypes.c_int, _checker())
gf_part_set_node_time = _bind("gf_part_set_node_time", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_comm)
], ctypes.c_int, _checker())
gf_part_set_edge_time = _bind("gf_part_set_edge_time", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor)
], ctypes.c_int, _checker())
gf_loader_open_part = _bind("gf_loader_open_part", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(gf_loader_options), ctypes.POINTER(gf_comm), c_void_pp
], ctypes.c_int, _checker())
gf_edge_loader_open_comm = _bind("gf_edge_loader_open_comm", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(gf_edge_loader_options),
    ctypes.POINTER(gf_comm), c_void_pp
], ctypes.c_int, _checker())
gf_edge_loader_open_part = _bind("gf_edge_loader_open_part", [
    ctypes.c_void_p, ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor), ctypes.POINTER(gf_edge_loader_options),
    ctypes.POINTER(gf_comm), c_void_pp
], ctypes.c_int, _checker())
gf_dataset_partition = _bind("gf_dataset_partition", [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(gf_partition_options)
], ctypes.c_int, _checker())

# fmt: on
# --- end of generated code ---

gf_graph_options_p = ctypes.POINTER(gf_graph_options)
# How a DLPack deleter (DLManagedTensor.deleter, an address) is called.
DLPACK_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def arrow_release(struct: Any) -> None:
    """Calls an ArrowSchema's or ArrowArray's release callback unless it is
    already released (release == NULL)."""
    if struct.release:
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(struct.release)(ctypes.addressof(struct))


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

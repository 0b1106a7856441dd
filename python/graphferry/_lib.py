"""ctypes declarations of include/graphferry.h, the library's C interface.

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
``graphferry/lib/libgraphferry.so`` (where ``pip install`` builds it). Its
major version must equal the package's.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, NewType

from . import _backend
from ._backend import CudaHooks
from ._dlpack import DLManagedTensor, DLTensor
from ._version import __version__
from .errors import (
    GF_DONE,
    GF_EFORK,
    GF_OK,
    GraphferryError,
    error_for_status,
)

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
    # The CPU or the CUDA library: graphferry/_backend.py.
    paths.append(_backend.library_path(Path(__file__).resolve().parent / "lib", explicit=bool(override)))
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

# What ctypes accepts for a pointer argument: ctypes.byref(x), a pointer, None.
CtypesRef = Any

# ---------------------------------------------------------------------------
# Constants (see include/graphferry.h)
# ---------------------------------------------------------------------------

GF_PARTITION_RANGE = 0
GF_PARTITION_RANDOM = 1
GF_PARTITION_GIVEN = 2

GF_GRAPH_REMOVE_DUPLICATES = 1
GF_GRAPH_REMOVE_SELF_LOOPS = 2

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

GF_TEMPORAL_NONE = 0
GF_TEMPORAL_NODE = 1
GF_TEMPORAL_EDGE = 2
GF_TEMPORAL_UNIFORM = 0
GF_TEMPORAL_LAST = 1

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
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_graph_options), **fields)


# typedef struct gf_sample_options {
#   uint32_t struct_size; int32_t num_hops; const int32_t *fanouts;
#   int32_t replace; int32_t frontier; uint64_t seed; int32_t num_threads;
#   int32_t scheme; int32_t biased; int32_t layer_without_replacement;
#   const DLTensor *exclude_edges; int32_t layer_dependency;
#   int32_t num_relations; const int32_t *relation_fanouts;
#   int32_t disjoint; int32_t temporal; int32_t temporal_strategy;
#   const DLTensor *seed_times;
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
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_sample_options), **fields)


# typedef struct gf_loader_options {
#   uint32_t struct_size; const gf_sample_options *sample; int64_t batch_size;
#   int32_t shuffle; int32_t drop_last; uint64_t shuffle_seed;
#   int32_t queue_capacity;
#   int32_t num_feature_names; const char *const *feature_names;
#   int32_t num_label_names; const char *const *label_names;
#   const DLTensor *seed_times;
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
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_loader_options), **fields)


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


# ---------------------------------------------------------------------------
# The binding decorator and errcheck
# ---------------------------------------------------------------------------

# Unguarded, errcheck-free foreign functions used by the error path itself.
_raw_errmsg = ctypes.CFUNCTYPE(ctypes.c_char_p)(("gf_errmsg", _lib))
_raw_status_str = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(("gf_status_str", _lib))


def _last_error(name: str, status: int) -> GraphferryError:
    message = (_raw_errmsg() or b"").decode("utf-8", errors="replace")
    if not message:
        text = (_raw_status_str(status) or b"").decode("utf-8", errors="replace")
        message = f"{name}: {text} (status {status})"
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


c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_int32_p = ctypes.POINTER(ctypes.c_int32)
c_void_pp = ctypes.POINTER(ctypes.c_void_p)
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


# int gf_graph_set_node_time(gf_graph *graph, const DLTensor *time);
@cfunc("gf_graph_set_node_time", [gf_graph_p_ctypes, DLTensor_p], ctypes.c_int)
def gf_graph_set_node_time(graph: gf_graph_p | None, time: CtypesRef, /) -> int: ...


# int gf_graph_set_edge_time(gf_graph *graph, const DLTensor *time);
@cfunc("gf_graph_set_edge_time", [gf_graph_p_ctypes, DLTensor_p], ctypes.c_int)
def gf_graph_set_edge_time(graph: gf_graph_p | None, time: CtypesRef, /) -> int: ...


# int gf_dataset_convert_npy(const char *src_dir, const char *dst_dir);
@cfunc("gf_dataset_convert_npy", [ctypes.c_char_p, ctypes.c_char_p], ctypes.c_int)
def gf_dataset_convert_npy(src_dir: bytes, dst_dir: bytes, /) -> int: ...


# int gf_dataset_generate(const char *preset, const char *dst_dir, uint64_t seed,
#                         int32_t num_threads);
@cfunc("gf_dataset_generate", [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint64, ctypes.c_int32], ctypes.c_int)
def gf_dataset_generate(preset: bytes, dst_dir: bytes, seed: int, num_threads: int, /) -> int: ...


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


# int gf_batch_take_node_data(gf_batch *batch, const char *name,
#                             DLManagedTensor **out_tensor);
@cfunc("gf_batch_take_node_data", [gf_batch_p_ctypes, ctypes.c_char_p, c_void_pp], ctypes.c_int)
def gf_batch_take_node_data(batch: gf_batch_p | None, name: bytes, out_tensor: CtypesRef, /) -> int: ...


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


# int gf_loader_next(gf_loader *loader, gf_batch **out_batch);
@cfunc(
    "gf_loader_next",
    [gf_loader_p_ctypes, c_void_pp],
    ctypes.c_int,
    errcheck=_check_ok_or_done,
)
def gf_loader_next(loader: gf_loader_p | None, out_batch: CtypesRef, /) -> int: ...


# void gf_loader_close(gf_loader *loader);
@cfunc("gf_loader_close", [gf_loader_p_ctypes], None, errcheck=None)
def gf_loader_close(loader: gf_loader_p | None, /) -> None: ...


# int gf_tensor_to_versioned(DLManagedTensor *tensor,
#                            DLManagedTensorVersioned **out_tensor);
@cfunc("gf_tensor_to_versioned", [ctypes.c_void_p, c_void_pp], ctypes.c_int)
def gf_tensor_to_versioned(tensor: int, out_tensor: CtypesRef, /) -> int: ...


# ---------------------------------------------------------------------------
# Version check at import
# ---------------------------------------------------------------------------

LIB_VERSION_NUMBER: int = gf_version_number()
LIB_VERSION: str = (gf_version() or b"").decode("ascii", errors="replace")
LIB_BUILD_ID: str = (gf_build_id() or b"").decode("ascii", errors="replace")
_PACKAGE_MAJOR = int(__version__.split(".")[0])

if LIB_VERSION_NUMBER // 1000000 != _PACKAGE_MAJOR:
    raise ImportError(
        f"graphferry {__version__} needs libgraphferry major version {_PACKAGE_MAJOR}, "
        f"but {LIB_PATH} is version {LIB_VERSION} (gf_version_number() = {LIB_VERSION_NUMBER}); "
        "rebuild it with `pip install ./python` or point GRAPHFERRY_LIB_PATH at a matching build"
    )

# The CUDA library's hooks, when this process loaded it (graphferry/_backend.py).
CUDA: CudaHooks | None = CudaHooks(_lib, in_forked_child) if _backend.BACKEND == "cuda" else None

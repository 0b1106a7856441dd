"""Edge-level sampling (link prediction): the ctypes declarations of the
header's "Edge-level sampling" section and :class:`EdgeSampler`, the engine
object the DGL and PyG edge loaders share.

An edge batch is drawn in one call (``gf_edge_sampler_sample``): the
negatives, the batch's seeds (the nodes of the pairs), the pairs relabelled
to positions in those seeds and the neighbourhood of the seeds with the
batch's excluded edges left out. Negatives come from the engine's random
streams keyed by the options' seed and the batch key, so equal seeds give
equal batches whatever the patch or thread count.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import torch

from . import _lib
from ._dlpack import BorrowedTensor, DLTensor, borrow, tensor_from_managed
from ._lib import CtypesRef, DLTensor_p, c_void_pp, cfunc, gf_batch_p, gf_batch_p_ctypes, gf_graph_p_ctypes
from ._options import SampleOptions
from ._resource import Closeable
from .graph import Graph
from .sampling import SampledSubgraph, _Batch

GF_LINK_DGL = 1
GF_LINK_PYG = 2

GF_NEG_NONE = 0
GF_NEG_PER_SOURCE_UNIFORM = 1
GF_NEG_GLOBAL_UNIFORM = 2
GF_NEG_BINARY = 3
GF_NEG_TRIPLET = 4

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

_NEGATIVES = {
    None: GF_NEG_NONE,
    "per_source_uniform": GF_NEG_PER_SOURCE_UNIFORM,
    "global_uniform": GF_NEG_GLOBAL_UNIFORM,
    "binary": GF_NEG_BINARY,
    "triplet": GF_NEG_TRIPLET,
}
_EXCLUDES = {None: GF_EXCLUDE_NONE, "self": GF_EXCLUDE_SELF, "reverse_id": GF_EXCLUDE_REVERSE_ID}


# typedef struct gf_edge_sampler_options {
#   uint32_t struct_size; const gf_sample_options *sample; int32_t mode;
#   int32_t negative; double amount; int32_t exclude;
#   const DLTensor *reverse_eids; int64_t reverse_half;
# } gf_edge_sampler_options;
class gf_edge_sampler_options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("sample", ctypes.POINTER(_lib.gf_sample_options)),
        ("mode", ctypes.c_int32),
        ("negative", ctypes.c_int32),
        ("amount", ctypes.c_double),
        ("exclude", ctypes.c_int32),
        ("reverse_eids", ctypes.POINTER(DLTensor)),
        ("reverse_half", ctypes.c_int64),
    ]

    def __init__(self, **fields):
        super().__init__(struct_size=ctypes.sizeof(gf_edge_sampler_options), **fields)


gf_edge_sampler_p_ctypes = ctypes.c_void_p


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


# void gf_edge_sampler_close(gf_edge_sampler *sampler);
@cfunc("gf_edge_sampler_close", [gf_edge_sampler_p_ctypes], None, errcheck=None)
def gf_edge_sampler_close(sampler: int | None, /) -> None: ...


# int gf_batch_take_link(gf_batch *batch, int32_t field, DLManagedTensor **out_tensor);
@cfunc("gf_batch_take_link", [gf_batch_p_ctypes, ctypes.c_int32, c_void_pp], ctypes.c_int)
def gf_batch_take_link(batch: gf_batch_p | None, field: int, out_tensor: CtypesRef, /) -> int: ...


@dataclass
class EdgeSample:
    r"""One edge batch.

    Attributes:
        sub (SampledSubgraph): the neighbourhood of the seeds (``sub.seeds``:
            DGL's compacted pair-graph nodes, or PyG's sorted unique ids).
        pos_src, pos_dst (Tensor): DGL: pair_graph's edges; PyG: the rows of
            edge_label_index (positives, then binary negatives). Positions in
            ``sub.seeds``.
        neg_src, neg_dst (Tensor): DGL: neg_pair_graph's edges.
        src_index, dst_pos_index, dst_neg_index (Tensor): PyG triplet mode.
    """

    sub: SampledSubgraph
    pos_src: torch.Tensor
    pos_dst: torch.Tensor
    neg_src: torch.Tensor
    neg_dst: torch.Tensor
    src_index: torch.Tensor
    dst_pos_index: torch.Tensor
    dst_neg_index: torch.Tensor


class EdgeSampler(Closeable):
    r"""The engine's edge-level sampler (``gf_edge_sampler``) over ``graph``.

    Args:
        graph (Graph): the graph; the sampler holds a reference to it.
        options (SampleOptions): neighbour sampling of every batch; its seed
            also roots the negatives.
        mode (str): ``"dgl"`` (seeds are edge ids) or ``"pyg"`` (seeds are
            node pairs).
        negative (str, optional): ``"per_source_uniform"``,
            ``"global_uniform"`` (DGL), ``"binary"``, ``"triplet"`` (PyG).
        amount (float): DGL's ``k``, or PyG's ``amount``.
        exclude (str, optional): DGL's ``None``, ``"self"`` or
            ``"reverse_id"``.
        reverse_eids (Tensor, optional): with ``"reverse_id"``.
    """

    def __init__(
        self,
        graph: Graph,
        options: SampleOptions,
        *,
        mode: str,
        negative: str | None = None,
        amount: float = 0.0,
        exclude: str | None = None,
        reverse_eids: Any = None,
    ):
        self._handle: int | None = None
        if mode not in ("dgl", "pyg"):
            raise ValueError(f"'mode' must be 'dgl' or 'pyg' (got {mode!r})")
        if negative not in _NEGATIVES:
            raise ValueError(f"unknown negative sampler {negative!r}")
        if exclude not in _EXCLUDES:
            raise ValueError(f"'exclude' must be None, 'self' or 'reverse_id' (got {exclude!r})")
        self.graph = graph
        self.mode = mode
        self.options = options
        sopts, keep = options.to_c()
        rev = borrow(reverse_eids, "reverse_eids")
        opts = gf_edge_sampler_options(
            sample=ctypes.pointer(sopts),
            mode=GF_LINK_DGL if mode == "dgl" else GF_LINK_PYG,
            negative=_NEGATIVES[negative],
            amount=float(amount),
            exclude=_EXCLUDES[exclude],
            reverse_eids=ctypes.pointer(rev.dltensor) if rev is not None else None,
        )
        out = ctypes.c_void_p()
        gf_edge_sampler_open(graph.handle, ctypes.byref(opts), ctypes.byref(out))
        del keep, rev
        self._handle = out.value

    def sample(self, seeds: Any, seeds_dst: Any = None, key: int = 0) -> EdgeSample:
        """Samples the edge batch of ``seeds`` (edge ids; with ``seeds_dst``,
        the sources of node pairs) under batch key ``key``."""
        if self._handle is None:
            raise ValueError("this EdgeSampler was closed")
        src = BorrowedTensor(seeds, "seeds")
        dst = BorrowedTensor(seeds_dst, "seeds_dst") if seeds_dst is not None else None
        out = ctypes.c_void_p()
        gf_edge_sampler_sample(
            self._handle,
            src.ref,
            dst.ref if dst is not None else None,
            key & 0xFFFFFFFFFFFFFFFF,
            ctypes.byref(out),
        )
        with _Batch(out.value) as batch:
            links = []
            for field in range(GF_LINK_DST_NEG_INDEX + 1):
                ptr = ctypes.c_void_p()
                gf_batch_take_link(batch._handle, field, ctypes.byref(ptr))
                links.append(tensor_from_managed(ptr.value))
            sub = batch.read(frontier_all=self.options.frontier == "all")
        return EdgeSample(sub, *links)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None and not _lib.in_forked_child():
            gf_edge_sampler_close(handle)

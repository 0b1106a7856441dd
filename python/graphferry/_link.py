"""Edge-level sampling (link prediction): :class:`EdgeSampler`, the engine
object (``gf_edge_sampler``) the DGL and PyG edge loaders share.

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

from ._native import lib as _lib
from ._native.dlpack import BorrowedTensor, borrow, tensor_from_managed
from ._options import SampleOptions
from ._resource import Closeable
from .graph import Graph
from .sampling import SampledSubgraph, _Batch

_NEGATIVES = {
    None: _lib.GF_NEG_NONE,
    "per_source_uniform": _lib.GF_NEG_PER_SOURCE_UNIFORM,
    "global_uniform": _lib.GF_NEG_GLOBAL_UNIFORM,
    "binary": _lib.GF_NEG_BINARY,
    "triplet": _lib.GF_NEG_TRIPLET,
}
_EXCLUDES = {None: _lib.GF_EXCLUDE_NONE, "self": _lib.GF_EXCLUDE_SELF, "reverse_id": _lib.GF_EXCLUDE_REVERSE_ID}


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
        opts = _lib.gf_edge_sampler_options(
            sample=ctypes.pointer(sopts),
            mode=_lib.GF_LINK_DGL if mode == "dgl" else _lib.GF_LINK_PYG,
            negative=_NEGATIVES[negative],
            amount=float(amount),
            exclude=_EXCLUDES[exclude],
            reverse_eids=ctypes.pointer(rev.dltensor) if rev is not None else None,
        )
        out = ctypes.c_void_p()
        _lib.gf_edge_sampler_open(graph.handle, ctypes.byref(opts), ctypes.byref(out))
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
        _lib.gf_edge_sampler_sample(
            self._handle,
            src.ref,
            dst.ref if dst is not None else None,
            key & 0xFFFFFFFFFFFFFFFF,
            ctypes.byref(out),
        )
        with _Batch(out.value) as batch:
            links = []
            for field in range(_lib.GF_LINK_DST_NEG_INDEX + 1):
                ptr = ctypes.c_void_p()
                _lib.gf_batch_take_link(batch._handle, field, ctypes.byref(ptr))
                links.append(tensor_from_managed(ptr.value))
            sub = batch.read(frontier_all=self.options.frontier == "all")
        return EdgeSample(sub, *links)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None and not _lib.in_forked_child():
            _lib.gf_edge_sampler_close(handle)

"""Edge-level sampling (link prediction): the engine objects the DGL and PyG
edge loaders share, :class:`EdgeLoader` (batches made ahead on the engine's
threads: negatives, the batch's seeds, the pairs relabelled to positions
among them, the edges the batch excludes, the neighbourhood of the seeds,
node and edge data) and :class:`EdgeSampler` (one such batch per call).
Negatives come from the engine's random streams keyed by the options' seed
and the batch key, whatever the patch or thread count.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ._callback import BatchCallback, reraise
from ._native import lib as _lib
from ._native.dlpack import BorrowedTensor, borrow
from ._options import SampleOptions
from ._resource import Closeable
from .errors import GraphferryError
from .graph import Graph, _encode_name
from .sampling import Loader, SampledSubgraph, _Batch, _names

_NEGATIVES = {
    None: _lib.GF_NEG_NONE,
    "per_source_uniform": _lib.GF_NEG_PER_SOURCE_UNIFORM,
    "global_uniform": _lib.GF_NEG_GLOBAL_UNIFORM,
    "binary": _lib.GF_NEG_BINARY,
    "triplet": _lib.GF_NEG_TRIPLET,
}
_EXCLUDES = {None: _lib.GF_EXCLUDE_NONE, "self": _lib.GF_EXCLUDE_SELF, "reverse_id": _lib.GF_EXCLUDE_REVERSE_ID}


def _empty() -> torch.Tensor:
    return torch.empty(0, dtype=torch.int64)


@dataclass
class EdgeSample:
    r"""One edge batch.

    Attributes:
        sub (SampledSubgraph): the neighbourhood of the seeds (``sub.seeds``:
            DGL's compacted pair-graph nodes, or PyG's sorted unique ids;
            grouped by node type on a typed graph), with the node and edge
            data an edge loader gathered.
        pos_src, pos_dst (Tensor): DGL: pair_graph's edges; PyG: the rows of
            edge_label_index (positives, then binary negatives). Positions in
            ``sub.seeds`` (on a typed graph: among the seeds of their node's
            type).
        neg_src, neg_dst (Tensor): DGL: neg_pair_graph's edges.
        src_index, dst_pos_index, dst_neg_index (Tensor): PyG triplet mode.
        input_id (Tensor): the position of each positive pair's seed edge
            (or pair) among the loader's seeds, in pair order (PyG's
            ``input_id``).
        edge_ids (Tensor): DGL: the seed edge ids in pair order
            (relation-local on a typed graph).
        pos_offsets, neg_offsets (Tensor): DGL on a typed graph: where each
            relation's positive (negative) pairs start.
    """

    sub: SampledSubgraph
    pos_src: torch.Tensor
    pos_dst: torch.Tensor
    neg_src: torch.Tensor
    neg_dst: torch.Tensor
    src_index: torch.Tensor
    dst_pos_index: torch.Tensor
    dst_neg_index: torch.Tensor
    input_id: torch.Tensor = field(default_factory=_empty)
    edge_ids: torch.Tensor = field(default_factory=_empty)
    pos_offsets: torch.Tensor = field(default_factory=_empty)
    neg_offsets: torch.Tensor = field(default_factory=_empty)


def _read_edge_batch(batch: _Batch, sub: SampledSubgraph) -> EdgeSample:
    """The pair fields of an engine edge batch, around its sample ``sub``."""
    return EdgeSample(sub, *(batch.take_link(f) for f in range(_lib.GF_LINK_NEG_OFFSETS + 1)))


_SAMPLER_ARGS = frozenset(
    ("mode", "negative", "amount", "exclude", "reverse_eids", "negative_flags", "negative_weights", "exclude_callback")
)


class _SamplerOptions:
    """A ``gf_edge_sampler_options`` and what it points to, kept alive
    together: how the engine makes an edge batch."""

    def __init__(
        self,
        options: SampleOptions,
        *,
        mode: str,
        negative: str | None = None,
        amount: float = 0.0,
        exclude: str | None = None,
        reverse_eids: Any = None,
        negative_flags: int = 0,
        negative_weights: Any = None,
        exclude_callback: BatchCallback | None = None,
    ):
        if mode not in ("dgl", "pyg"):
            raise ValueError(f"'mode' must be 'dgl' or 'pyg' (got {mode!r})")
        if negative not in _NEGATIVES:
            raise ValueError(f"unknown negative sampler {negative!r}")
        if exclude not in _EXCLUDES:
            raise ValueError(f"'exclude' must be None, 'self' or 'reverse_id' (got {exclude!r})")
        self.sample, self._keep = options.to_c()
        self._reverse = borrow(reverse_eids, "reverse_eids")
        self._weights = borrow(negative_weights, "negative_weights")
        self.mode, self.callback = mode, exclude_callback
        self.struct = _lib.gf_edge_sampler_options(
            sample=ctypes.pointer(self.sample),
            mode=_lib.GF_LINK_DGL if mode == "dgl" else _lib.GF_LINK_PYG,
            negative=_NEGATIVES[negative],
            amount=float(amount),
            exclude=_EXCLUDES[exclude],
            reverse_eids=ctypes.pointer(self._reverse.dltensor) if self._reverse is not None else None,
            negative_flags=int(negative_flags),
            negative_weights=ctypes.pointer(self._weights.dltensor) if self._weights is not None else None,
            exclude_callback=ctypes.pointer(exclude_callback.struct) if exclude_callback is not None else None,
        )


class EdgeSampler(Closeable):
    r"""The engine's edge-level sampler (``gf_edge_sampler``) over ``graph``:
    one edge batch per call, in the caller's thread.

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
        reverse_eids (Tensor, optional): with ``"reverse_id"`` (``-1``: no
            reverse).
        negative_flags (int): with ``"global_uniform"``, DGL's
            ``exclude_self_loops=False`` (``GF_NEG_KEEP_SELF_LOOPS``) and
            ``replace=True`` (``GF_NEG_REPLACE``); 0: DGL's defaults.
        negative_weights (Tensor, optional): PyG mode: float ``[num_nodes]``
            weights of the negatives (PyG's ``NegativeSampling`` weight).
        exclude_callback (BatchCallback, optional): DGL mode: given each
            batch's seed edge ids, the edge ids it also excludes (DGL's
            callable ``exclude``), called on the thread making the batch;
            an exception it raises is raised where that batch is asked for.
    """

    def __init__(self, graph: Graph, options: SampleOptions, **sampler_args: Any):
        self._handle: int | None = None
        opts = self._sampler_options = _SamplerOptions(options, **sampler_args)
        self.graph = graph
        self.mode = opts.mode
        self.options = options
        self._typed = graph.num_types[0] > 0
        out = ctypes.c_void_p()
        _lib.gf_edge_sampler_open(graph.handle, ctypes.byref(opts.struct), ctypes.byref(out))
        self._handle = out.value

    def sample(self, seeds: Any, seeds_dst: Any = None, key: int = 0, seed_times: Any = None) -> EdgeSample:
        """Samples the edge batch of ``seeds`` (edge ids; with ``seeds_dst``,
        the sources of node pairs) under batch key ``key``; a temporal PyG
        sampler takes ``seed_times``, one time per pair."""
        if self._handle is None:
            raise ValueError("this EdgeSampler was closed")
        src = BorrowedTensor(seeds, "seeds")
        dst = BorrowedTensor(seeds_dst, "seeds_dst") if seeds_dst is not None else None
        out = ctypes.c_void_p()
        args = [self._handle, src.ref, dst.ref if dst is not None else None]
        times = BorrowedTensor(seed_times, "seed_times") if seed_times is not None else None
        sample = _lib.gf_edge_sampler_sample if times is None else _lib.gf_edge_sampler_sample_timed
        try:
            sample(*args, *([] if times is None else [times.ref]), key & 0xFFFFFFFFFFFFFFFF, ctypes.byref(out))
        except GraphferryError as err:
            callback = self._sampler_options.callback
            reraise([] if callback is None else [callback], err)
        with _Batch(out.value) as batch:
            sub = batch.read(
                frontier_all=self.options.frontier == "all", disjoint=self.options.disjoint, typed=self._typed
            )
            return _read_edge_batch(batch, sub)

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None and not _lib.in_forked_child():
            _lib.gf_edge_sampler_close(handle)


class EdgeLoader(Loader):
    r"""The engine's edge loader (``gf_edge_loader_open``): a
    :class:`~graphferry.Loader` over seed edges (``mode="dgl"``: edge ids)
    or seed pairs (``mode="pyg"``: ``seeds -> seeds_dst``), whose epochs
    shuffle the seeds from ``options.seed`` and the epoch number and yield
    :class:`EdgeSample` batches made ahead of the training loop on the
    engine's threads: batch ``i`` of epoch ``e`` is :class:`EdgeSampler`'s
    batch of its seeds under key ``(e << 32) | i``. Iteration, statistics,
    caches and closing are :class:`~graphferry.Loader`'s.

    Args:
        graph (Graph): the graph.
        seeds (Tensor): int64 ``[n]`` edge ids (DGL) or pair sources (PyG).
        seeds_dst (Tensor, optional): int64 ``[n]`` pair destinations (PyG).
        options (SampleOptions): neighbour sampling; its seed roots the
            shuffles and every random stream.
        edge_feature_names: edge data (:meth:`Graph.set_edge_data`) gathered
            over every batch's sampled edges (``sub.edge_data``).
        **args: :class:`EdgeSampler`'s (``mode``, ``negative``, ...; the
            callback runs on the engine's threads, ahead) and
            :meth:`~graphferry.Loader.from_options`' (batching, node data,
            ``coo``, ``allocator``; ``seed_times``: one time per pair).
    """

    def __init__(
        self,
        graph: Graph,
        seeds: Any,
        seeds_dst: Any,
        options: SampleOptions,
        *,
        edge_feature_names: Sequence[str] = (),
        **args: Any,
    ):
        self._handle = None
        sampler = {k: args.pop(k) for k in list(args) if k in _SAMPLER_ARGS}
        self._sampler_options = _SamplerOptions(options, **sampler)
        self._seeds_dst = seeds_dst
        self._edge_features = [
            (n, _encode_name(n, "edge_feature_names")) for n in _names(edge_feature_names, "edge_feature_names")
        ]
        self._edge_array = (ctypes.c_char_p * max(len(self._edge_features), 1))(*[b for _, b in self._edge_features])
        self._open(graph, seeds, options, **args)  # batching, names, coo, allocator, seed_times

    @property
    def _callbacks(self) -> list:
        callback = self._sampler_options.callback
        return [] if callback is None else [callback]

    def _open_handle(self, graph: Graph, seeds: BorrowedTensor, out: ctypes.c_void_p) -> None:
        self._open_edges(lambda dst, options: _lib.gf_edge_loader_open(graph.handle, seeds.ref, dst, options, out))

    def _open_edges(self, open_loader: Any) -> None:
        """Calls ``open_loader(seeds_dst, options)`` with the ``ctypes``
        arguments of a ``gf_edge_loader_open*`` call: the pairs'
        destinations (or None) and the ``gf_edge_loader_options``."""
        sampler = self._sampler_options
        self._options.sample = ctypes.pointer(sampler.sample)  # the loader samples with the sampler's options
        options = _lib.gf_edge_loader_options(
            sampler=ctypes.pointer(sampler.struct),
            loader=ctypes.pointer(self._options),
            num_edge_feature_names=len(self._edge_features),
            edge_feature_names=ctypes.cast(self._edge_array, ctypes.POINTER(ctypes.c_char_p)),
        )
        dst = BorrowedTensor(self._seeds_dst, "seeds_dst") if self._seeds_dst is not None else None
        open_loader(dst.ref if dst is not None else None, ctypes.byref(options))
        self._seeds_dst = None  # copied by the engine

    def _read(self, batch: _Batch) -> EdgeSample:
        sub = super()._read(batch)
        sub.edge_data = {name: batch.take_edge_data(raw) for name, raw in self._edge_features}
        return _read_edge_batch(batch, sub)

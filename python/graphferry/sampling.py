"""Neighbour sampling and the engine's pipelined loader.

:func:`sample_neighbors` draws one multi-hop neighbourhood synchronously
(``gf_sample``). :class:`Loader` yields one :class:`SampledSubgraph` per
mini-batch from the engine's own sampler and loader threads (``gf_loader_*``);
:mod:`graphferry.dgl` and :mod:`graphferry.pyg` turn those into DGL blocks
and PyG ``Data`` objects.

Indexing invariants of a :class:`SampledSubgraph` (all ids ORIGINAL ids):

* ``nodes`` lists every sampled node once: the seeds first (in batch order),
  then the nodes first reached in hop 0, hop 1, ... (``hop_counts`` gives the
  sizes of these groups).
* ``blocks[h]`` is hop ``h`` counted from the seeds. It is CSC over its
  destination nodes ``nodes[dst_offset : dst_offset + num_dst]``; its
  ``indices`` are positions into ``nodes`` and are all below ``num_src`` (its
  source nodes are ``nodes[:num_src]``).
* With ``frontier="all"`` (DGL's message-flow blocks) ``dst_offset`` is 0
  and block ``h``'s destination nodes are all nodes gathered before hop ``h``;
  with ``frontier="new"`` (PyG's) hop ``h`` samples only the nodes first
  reached in hop ``h - 1`` (hop 0 samples the seeds).
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from . import _interrupt
from ._callback import BatchCallback, close_at_exit, reraise
from ._device import DeviceOptions
from ._hostmem import HostAllocator
from ._native import lib as _lib
from ._native.dlpack import BorrowedTensor, DeviceTensor, borrow, tensor_from_managed
from ._options import SampleOptions
from ._resource import Closeable
from ._stats import LoaderStats, cache_options, read_stats, set_cache
from .errors import GF_DONE, GF_EBADHANDLE, GF_EINTERNAL, GF_EINVAL, GF_ESTATE, GF_NOT_READY, GraphferryError
from .graph import Graph, _as_int, _encode_name, _scalar

__all__ = [
    "Block",
    "SampledSubgraph",
    "TypedView",
    "TypedBlock",
    "SampleOptions",
    "sample_neighbors",
    "random_walk",
    "induced_subgraph",
    "Loader",
]


@dataclass(frozen=True)
class Block:
    r"""One hop of a sample, as CSC over the block's destination nodes.

    Attributes:
        indptr (Tensor): int64 ``[num_dst + 1]``; the edges into destination
            ``i`` are ``indptr[i]:indptr[i+1]``.
        indices (Tensor): int64 ``[num_edges]``; the source of each edge as a
            position in :attr:`SampledSubgraph.nodes` (``< num_src``).
        edge_ids (Tensor): int64 ``[num_edges]`` original edge ids.
        num_dst (int): number of destination nodes, which are
            ``nodes[dst_offset : dst_offset + num_dst]``.
        num_src (int): number of source nodes, which are ``nodes[:num_src]``.
        dst_offset (int): position of the first destination node in ``nodes``.
    """

    indptr: torch.Tensor
    indices: torch.Tensor
    edge_ids: torch.Tensor
    num_dst: int
    num_src: int
    dst_offset: int

    @property
    def num_edges(self) -> int:
        return int(self.indices.numel())

    def dst_positions(self) -> torch.Tensor:
        """The destination of each edge as a position in ``nodes`` (int64)."""
        counts = self.indptr[1:] - self.indptr[:-1]
        local = torch.arange(self.num_dst, dtype=torch.int64).repeat_interleave(counts, output_size=self.num_edges)
        return local + self.dst_offset if self.dst_offset else local

    def edge_index(self) -> torch.Tensor:
        """``[2, num_edges]``: row 0 the source and row 1 the destination of each
        edge, as positions in ``nodes``."""
        return torch.stack([self.indices, self.dst_positions()])


@dataclass(frozen=True)
class TypedBlock:
    r"""One hop of a typed graph's sample split by relation (computed by
    the engine with the batch). A node's *rank* is its position among the
    batch's nodes of its type (:attr:`TypedView.nodes` order within the
    type).

    Attributes:
        num_dst (list of int): the block's destination nodes of each type.
        num_src (list of int): the block's source nodes of each type (a
            prefix of each type's nodes).
        dst_rank (list of int): the rank of each type's first destination
            (0 unless the block's ``dst_offset`` is non-zero).
        edge_offsets (list of int): ``[R + 1]``; relation ``r``'s edges are
            ``edge_offsets[r]:edge_offsets[r+1]`` of ``src``, ``dst`` and
            ``edge_ids``, in the block's CSC order.
        src (Tensor): int64, the rank of each edge's source in its type.
        dst (Tensor): int64, the rank of each edge's destination in its type.
        edge_ids (Tensor): int64 relation-local edge ids.
        indptr (Tensor): int64, relation after relation, the CSC offsets of
            the relation's edges over the block's destinations of its
            destination type (``num_dst[d] + 1`` entries each); see
            :meth:`indptr_of`.
    """

    num_dst: list[int]
    num_src: list[int]
    dst_rank: list[int]
    edge_offsets: list[int]
    src: torch.Tensor
    dst: torch.Tensor
    edge_ids: torch.Tensor
    indptr: torch.Tensor

    def edges_of(self, r: int) -> slice:
        """The slice of relation ``r``'s edges."""
        return slice(self.edge_offsets[r], self.edge_offsets[r + 1])

    def indptr_starts(self, relation_dst_type: Sequence[int]) -> list[int]:
        """Where each relation's offsets start in :attr:`indptr` (``[R + 1]``),
        given each relation's destination type."""
        starts = [0]
        for d in relation_dst_type:
            starts.append(starts[-1] + self.num_dst[d] + 1)
        return starts


@dataclass(frozen=True)
class TypedView:
    r"""A typed graph's sample split by node type and relation, computed by
    the engine with the batch (a loader's sampler threads), so that
    heterogeneous blocks and ``HeteroData`` only wrap these arrays.

    Attributes:
        nodes (Tensor): int64 type-local ids of :attr:`SampledSubgraph.nodes`
            grouped by type (type order), each type's nodes in ``nodes``
            order (its seeds first, then level by level).
        order (Tensor): int64, the position in ``SampledSubgraph.nodes`` of
            each entry of :attr:`nodes`.
        node_offsets (list of int): ``[T + 1]``; type ``t``'s nodes are
            ``nodes[node_offsets[t]:node_offsets[t+1]]``.
        hop_counts (Tensor): int64 ``[T, L + 1]``, ``hop_counts`` per type.
        blocks (list of TypedBlock): ``blocks[h]`` is hop ``h``.
    """

    nodes: torch.Tensor
    order: torch.Tensor
    node_offsets: list[int]
    hop_counts: torch.Tensor
    blocks: list[TypedBlock]

    def nodes_of(self, t: int) -> torch.Tensor:
        """Type ``t``'s nodes (type-local ids)."""
        return self.nodes[self.node_offsets[t] : self.node_offsets[t + 1]]


@dataclass
class SampledSubgraph:
    r"""One sampled multi-hop neighbourhood (see the module's docstring for
    the indexing invariants).

    Attributes:
        nodes (Tensor): int64, every sampled node, seeds first.
        hop_counts (Tensor): int64 ``[L + 1]``: the number of seeds, then the
            number of nodes first reached in each hop.
        blocks (list of Block): ``blocks[h]`` is hop ``h`` from the seeds.
        input_index (Tensor, optional): int64 ``[B]``, for loader batches: the
            position of each seed in the seeds the loader was given.
        node_data (dict): the loader's feature names -> one row per node of
            ``nodes``.
        labels (dict): the loader's label names -> one row per seed.
        batch (Tensor, optional): disjoint batches only (``disjoint=True``):
            int64, one entry per node of ``nodes``, the position (in the
            batch's seeds) of the seed whose subgraph the node belongs to.
        typed (TypedView, optional): samples of a typed graph
            (:meth:`Graph.set_types`): the sample split by node type and
            relation.
        edge_data (dict): an edge loader's edge feature names -> one row per
            sampled edge: the edges of ``blocks[0]``, then of ``blocks[1]``,
            ... (a batch without blocks: of ``coo``).
        coo (tuple of Tensor, optional): ``(index, edge_ids)``, the sampled
            edges in that order as one edge list, ``index`` ``[2, E]`` the
            sources and destinations as positions in ``nodes`` (PyG's
            ``edge_index``), when the engine made it (an edge loader opened
            with ``coo=True``).
    """

    nodes: torch.Tensor
    hop_counts: torch.Tensor
    blocks: list[Block]
    input_index: torch.Tensor | None = None
    node_data: dict[str, torch.Tensor] = field(default_factory=dict)
    labels: dict[str, torch.Tensor] = field(default_factory=dict)
    batch: torch.Tensor | None = None
    typed: TypedView | None = None
    edge_data: dict[str, torch.Tensor] = field(default_factory=dict)
    coo: tuple[torch.Tensor, torch.Tensor] | None = None

    @property
    def batch_size(self) -> int:
        """The number of seeds (the first ``batch_size`` entries of ``nodes``)."""
        return int(self.hop_counts[0])

    @property
    def seeds(self) -> torch.Tensor:
        return self.nodes[: self.batch_size]


def from_device(tensor: DeviceTensor) -> Any:
    """A mode-2 batch's device tensor as the consumer gets it: a torch CUDA
    tensor (``torch.from_dlpack``, on PyTorch's current stream)."""
    return torch.from_dlpack(tensor)


class _Batch(Closeable):
    """Wrapper of one ``gf_batch *``; fields are moved out once each. A
    device batch (mode 2: ``device`` is the CUDA ordinal) hands its device
    tensors over through :class:`DeviceTensor` (the stream contract)."""

    def __init__(self, handle: int, device: int | None = None):
        self._handle: int | None = handle
        self._device = device

    def _out(self, take: Any, host: bool = False) -> Any:
        """The tensor that ``take(out)`` moves out: a host tensor at once; on
        a device batch, through ``__dlpack__`` (the consumer's stream first
        waits for the batch). ``host``: a field that stays on the host."""
        out = ctypes.c_void_p()
        if self._device is None or host:
            take(out)
            return tensor_from_managed(out.value)

        def taken() -> int:
            take(out)
            return out.value

        return from_device(DeviceTensor(self._handle, taken, self._device))

    def num_hops(self) -> int:
        return _scalar(_lib.gf_batch_num_hops, self._handle, ctypes.c_int32)

    def block_shape(self, layer: int) -> tuple[int, int, int]:
        num_dst, num_src, dst_offset = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        _lib.gf_batch_block_shape(
            self._handle,
            layer,
            ctypes.byref(num_dst),
            ctypes.byref(num_src),
            ctypes.byref(dst_offset),
        )
        return num_dst.value, num_src.value, dst_offset.value

    def take(self, field_id: int, layer: int = 0) -> torch.Tensor:
        return self._out(
            lambda out: _lib.gf_batch_take(self._handle, field_id, layer, ctypes.byref(out)),
            host=field_id == _lib.GF_FIELD_HOP_COUNTS,
        )

    def take_node_data(self, name: bytes) -> torch.Tensor:
        return self._out(lambda out: _lib.gf_batch_take_node_data(self._handle, name, ctypes.byref(out)))

    def take_edge_data(self, name: bytes) -> torch.Tensor:
        out = ctypes.c_void_p()
        _lib.gf_batch_take_edge_data(self._handle, name, ctypes.byref(out))
        return tensor_from_managed(out.value)

    def take_link(self, field_id: int) -> torch.Tensor:
        """A pair field (``GF_LINK_*``) of an edge batch."""
        out = ctypes.c_void_p()
        _lib.gf_batch_take_link(self._handle, field_id, ctypes.byref(out))
        return tensor_from_managed(out.value)

    def read(
        self,
        feature_names: Sequence[tuple[str, bytes]] = (),
        label_names: Sequence[tuple[str, bytes]] = (),
        *,
        input_index: bool = False,
        frontier_all: bool = False,
        disjoint: bool = False,
        typed: bool = False,
        coo: bool = False,
    ) -> SampledSubgraph:
        """Moves every field out into a :class:`SampledSubgraph` (with
        ``typed``, the typed view too when the batch has one; with ``coo``,
        the edge list the engine made)."""
        blocks = []
        for layer in range(self.num_hops()):
            num_dst, num_src, dst_offset = self.block_shape(layer)
            if frontier_all and dst_offset != 0:
                raise GraphferryError(
                    GF_EINTERNAL,
                    f"gf_batch_block_shape: hop {layer} of a GF_FRONTIER_ALL batch has "
                    f"dst_offset {dst_offset} (expected 0)",
                )
            blocks.append(
                Block(
                    indptr=self.take(_lib.GF_FIELD_INDPTR, layer),
                    indices=self.take(_lib.GF_FIELD_INDICES, layer),
                    edge_ids=self.take(_lib.GF_FIELD_EDGE_IDS, layer),
                    num_dst=num_dst,
                    num_src=num_src,
                    dst_offset=dst_offset,
                )
            )
        return SampledSubgraph(
            nodes=self.take(_lib.GF_FIELD_NODES),
            hop_counts=self.take(_lib.GF_FIELD_HOP_COUNTS),
            blocks=blocks,
            input_index=self.take(_lib.GF_FIELD_INPUT_INDEX) if input_index else None,
            node_data={name: self.take_node_data(raw) for name, raw in feature_names},
            labels={name: self.take_node_data(raw) for name, raw in label_names},
            batch=self.take(_lib.GF_FIELD_BATCH) if disjoint else None,
            typed=self._read_typed(len(blocks)) if typed else None,
            coo=(self.take(_lib.GF_FIELD_COO_INDEX), self.take(_lib.GF_FIELD_COO_EDGE_IDS)) if coo else None,
        )

    def _read_typed(self, num_hops: int) -> TypedView | None:
        """The typed view, or None for a batch without one (a typed graph's
        batch from a path that does not compute it)."""
        try:
            node_offsets = self.take(_lib.GF_FIELD_TYPED_NODE_OFFSETS).tolist()
        except GraphferryError as err:
            if err.code == GF_EINVAL:
                return None
            raise
        num_types = len(node_offsets) - 1
        blocks = []
        for layer in range(num_hops):
            shape = self.take(_lib.GF_FIELD_TYPED_BLOCK_SHAPE, layer).tolist()
            blocks.append(
                TypedBlock(
                    num_dst=shape[:num_types],
                    num_src=shape[num_types : 2 * num_types],
                    dst_rank=shape[2 * num_types :],
                    edge_offsets=self.take(_lib.GF_FIELD_TYPED_EDGE_OFFSETS, layer).tolist(),
                    src=self.take(_lib.GF_FIELD_TYPED_SRC, layer),
                    dst=self.take(_lib.GF_FIELD_TYPED_DST, layer),
                    edge_ids=self.take(_lib.GF_FIELD_TYPED_EDGE_IDS, layer),
                    indptr=self.take(_lib.GF_FIELD_TYPED_INDPTR, layer),
                )
            )
        return TypedView(
            nodes=self.take(_lib.GF_FIELD_TYPED_NODES),
            order=self.take(_lib.GF_FIELD_TYPED_ORDER),
            node_offsets=node_offsets,
            hop_counts=self.take(_lib.GF_FIELD_TYPED_HOP_COUNTS).view(num_types, num_hops + 1),
            blocks=blocks,
        )

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None and not _lib.in_forked_child():
            _lib.gf_batch_close(handle)


def _check_graph(graph: Any) -> Graph:
    if not isinstance(graph, Graph):
        raise TypeError(f"expected a 'graphferry.Graph' (got '{type(graph).__name__}')")
    return graph


def random_seed() -> int:
    """A 63-bit seed drawn from torch's default generator (so that
    ``torch.manual_seed`` makes graphferry's sampling reproducible)."""
    return int(torch.randint(0, 2**63 - 1, (), dtype=torch.int64))


def sample_neighbors(
    graph: Graph,
    seeds: Any,
    fanouts: Sequence[int],
    *,
    replace: bool = False,
    frontier: str = "all",
    seed: int = 0,
    num_threads: int = 0,
    scheme: str = "node",
    biased: bool = False,
    layer_without_replacement: bool = False,
    exclude_edges: Any = None,
    layer_dependency: bool = False,
    relation_fanouts: Any = None,
    disjoint: bool = False,
    temporal: str | None = None,
    temporal_strategy: str = "uniform",
    seed_times: Any = None,
) -> SampledSubgraph:
    r"""Samples the multi-hop neighbourhood of ``seeds`` synchronously with
    the collective sampling primitive (``gf_sample``).

    Args:
        graph (Graph): the graph.
        seeds (Tensor): int64 ``[B]`` distinct original node ids.
        fanouts (list of int): fan-out per hop FROM THE SEEDS (PyG order);
            ``-1`` takes all neighbours.

    The other arguments are the fields of :class:`SampleOptions` (equal
    ``seed`` values give equal samples), with its defaults.

    .. code-block:: python

        sub = graphferry.sample_neighbors(g, torch.tensor([0, 5]), [10, 5])
        sub.nodes[:sub.batch_size]   # the seeds
        sub.blocks[0].edge_index()   # hop 0: edges into the seeds
    """
    graph = _check_graph(graph)
    options = SampleOptions(
        fanouts,
        replace=replace,
        frontier=frontier,
        scheme=scheme,
        biased=biased,
        layer_without_replacement=layer_without_replacement,
        layer_dependency=layer_dependency,
        exclude_edges=exclude_edges,
        seed=seed,
        num_threads=num_threads,
        relation_fanouts=relation_fanouts,
        disjoint=disjoint,
        temporal=temporal,
        temporal_strategy=temporal_strategy,
        seed_times=seed_times,
    )
    return sample_with_options(graph, seeds, options)


def sample_with_options(graph: Graph, seeds: Any, options: SampleOptions) -> SampledSubgraph:
    """:func:`sample_neighbors` with its options as one :class:`SampleOptions`."""
    graph = _check_graph(graph)
    opts, keep = options.to_c()
    borrowed = BorrowedTensor(seeds, "seeds")
    out = ctypes.c_void_p()
    _interrupt.call(
        lambda: _lib.gf_sample_keyed(
            graph.handle, borrowed.ref, ctypes.byref(opts), options.batch_key & 0xFFFFFFFFFFFFFFFF, ctypes.byref(out)
        ),
        discard=lambda _: _lib.gf_batch_close(out.value),
    )
    with _Batch(out.value) as batch:
        return batch.read(
            frontier_all=options.frontier == "all", disjoint=options.disjoint, typed=graph.num_types[0] > 0
        )


def random_walk(
    graph: Graph,
    seeds: Any,
    length: int,
    *,
    restart_prob: float = 0.0,
    biased: bool = False,
    seed: int = 0,
    num_threads: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Random walks from ``seeds`` along in-edges (``gf_random_walk``): each
    step moves from ``v`` to one of the sources ``u`` of its edges
    ``u -> v`` (the direction neighbour sampling follows). A walk that
    reaches a node without in-edges stops.

    Args:
        graph (Graph): the graph.
        seeds (Tensor): int64 ``[B]`` original node ids (repeats allowed).
        length (int): steps per walk (``>= 0``).
        restart_prob (float): probability in ``[0, 1]`` that a step jumps
            back to the walk's seed instead of moving. (default: :obj:`0.0`)
        biased (bool): step along an edge with probability proportional to
            its weight (see :meth:`Graph.set_edge_weights`); else uniformly.
            (default: :obj:`False`)
        seed (int): seed of the random streams. (default: :obj:`0`)
        num_threads (int): worker threads; ``<= 0`` uses every core.
            (default: :obj:`0`)

    Returns:
        ``(traces, edge_ids)``: int64 ``[B, length + 1]``, row ``i`` the
        walk from ``seeds[i]`` (``traces[i, 0] == seeds[i]``), ``-1`` after
        it stopped; and int64 ``[B, length]``, the edge id of each step,
        ``-1`` for a restart or after the walk stopped.

    .. code-block:: python

        traces, eids = graphferry.random_walk(g, torch.tensor([0, 5]), 4,
                                              restart_prob=0.1)
    """
    graph = _check_graph(graph)
    if isinstance(restart_prob, bool) or not isinstance(restart_prob, (int, float, np.integer, np.floating)):
        raise TypeError(f"'restart_prob' must be a float (got '{type(restart_prob).__name__}')")
    opts = _lib.gf_walk_options(
        length=_as_int(length, "length"),
        restart_prob=float(restart_prob),
        biased=1 if biased else 0,
        num_threads=_as_int(num_threads, "num_threads"),
        seed=_as_int(seed, "seed") & 0xFFFFFFFFFFFFFFFF,
    )
    borrowed = BorrowedTensor(seeds, "seeds")
    traces, edge_ids = ctypes.c_void_p(), ctypes.c_void_p()

    def discard(_: Any) -> None:
        tensor_from_managed(traces.value)  # frees them
        tensor_from_managed(edge_ids.value)

    _interrupt.call(
        lambda: _lib.gf_random_walk(
            graph.handle,
            borrowed.ref,
            ctypes.byref(opts),
            ctypes.byref(traces),
            ctypes.byref(edge_ids),
        ),
        discard=discard,
    )
    try:
        trace_tensor = tensor_from_managed(traces.value)
    except BaseException:
        tensor_from_managed(edge_ids.value)  # frees it
        raise
    return trace_tensor, tensor_from_managed(edge_ids.value)


def induced_subgraph(graph: Graph, nodes: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Every edge ``u -> v`` of ``graph`` with both ends in ``nodes``
    (original ids, distinct), as ``(src, dst, edge_ids)``: int64 ``[E]``,
    ``src`` and ``dst`` positions in ``nodes``, ``edge_ids`` the original
    edge ids. Edges are grouped by target in the order of ``nodes``."""
    graph = _check_graph(graph)
    borrowed = BorrowedTensor(nodes, "nodes")
    src, dst, eid = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    _lib.gf_graph_induced_subgraph(graph.handle, borrowed.ref, ctypes.byref(src), ctypes.byref(dst), ctypes.byref(eid))
    out = []
    try:
        for managed in (src, dst, eid):
            out.append(tensor_from_managed(managed.value))
    except BaseException:
        for managed in (src, dst, eid)[len(out) + 1 :]:
            tensor_from_managed(managed.value)  # frees it
        raise
    return out[0], out[1], out[2]


# How long each gf_loader_next_wait of a loader's iteration waits (ms): the
# latency of Ctrl-C while the loop waits for a batch.
NEXT_WAIT_MS = 20


class Loader(Closeable):
    r"""The engine's pipelined mini-batch loader over a set of seed nodes.

    A sampler thread and a loader thread of the engine, connected by bounded
    queues, sample and gather ahead of the consumer. Each :func:`iter` starts
    a new epoch (the previous one, if unfinished, is stopped and its
    undelivered batches freed, and any iterator of it ends); each item is a
    :class:`SampledSubgraph` whose ``node_data`` holds the ``feature_names``
    (one row per node) and ``labels`` the ``label_names`` (one row per seed).

    Waiting for a batch can be interrupted: Ctrl-C (SIGINT) raises
    KeyboardInterrupt within about :data:`NEXT_WAIT_MS` milliseconds and
    leaves the epoch as it was (iterating again resumes it; :meth:`close`
    ends it), and :meth:`close` from another thread makes the waiting
    ``next()`` raise a :class:`GraphferryError` saying so at once.

    Args:
        graph (Graph): the graph (closing it closes this loader first).
        seeds (Tensor): int64 distinct original node ids.
        fanouts (list of int): fan-out per hop from the seeds; ``-1`` = all.
        batch_size (int): seeds per batch. (default: :obj:`1`)
        shuffle (bool): a new permutation every epoch. (default: :obj:`False`)
        drop_last (bool): drop a last, smaller batch. (default: :obj:`False`)
        seed (int, optional): seed of the shuffles and random streams.
            (default: :obj:`None`, drawn from torch's generator)
        queue_capacity (int): capacity of each queue. (default: :obj:`2`)
        feature_names (list of str): node data gathered for every node.
            (default: :obj:`()`)
        label_names (list of str): node data gathered for the seeds.
            (default: :obj:`()`)
        seed_times (Tensor, optional): temporal sampling: int64, one time
            per seed, permuted with them. (default: :obj:`None`)
        allocator (HostAllocator, optional): the memory of the batches'
            tensors (``gf_loader_options.allocator``): a host pool of the
            library's, e.g. page-locked for a GPU consumer. (default: :obj:`None`,
            the library's own)

    The other arguments are the fields of :class:`SampleOptions`, with its
    defaults.
    """

    def __init__(
        self,
        graph: Graph,
        seeds: Any,
        fanouts: Sequence[int],
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        replace: bool = False,
        frontier: str = "all",
        seed: int | None = None,
        queue_capacity: int = 2,
        feature_names: Sequence[str] = (),
        label_names: Sequence[str] = (),
        num_threads: int = 0,
        scheme: str = "node",
        biased: bool = False,
        layer_without_replacement: bool = False,
        exclude_edges: Any = None,
        relation_fanouts: Any = None,
        disjoint: bool = False,
        temporal: str | None = None,
        temporal_strategy: str = "uniform",
        seed_times: Any = None,
        allocator: HostAllocator | None = None,
    ):
        options = SampleOptions(
            fanouts,
            replace=replace,
            frontier=frontier,
            scheme=scheme,
            biased=biased,
            layer_without_replacement=layer_without_replacement,
            exclude_edges=exclude_edges,
            seed=random_seed() if seed is None else seed,
            num_threads=num_threads,
            relation_fanouts=relation_fanouts,
            disjoint=disjoint,
            temporal=temporal,
            temporal_strategy=temporal_strategy,
        )
        self._open(
            graph,
            seeds,
            options,
            batch_size=batch_size,
            shuffle=shuffle,
            drop_last=drop_last,
            queue_capacity=queue_capacity,
            feature_names=feature_names,
            label_names=label_names,
            seed_times=seed_times,
            allocator=allocator,
        )

    @classmethod
    def from_options(cls, graph: Graph, seeds: Any, options: SampleOptions, **kwargs: Any) -> Loader:
        """A loader sampling with ``options``, whose seed also seeds the
        per-epoch shuffles. ``kwargs``: ``batch_size``, ``shuffle``,
        ``drop_last``, ``queue_capacity``, ``feature_names``,
        ``label_names``, ``seed_times`` and ``allocator`` as in
        :class:`Loader`; ``device``: mode 2 (the CUDA library samples and
        gathers on that device; see :mod:`graphferry._device`); ``coo``: the
        engine's threads also make every batch's edges one edge list
        (``sub.coo``: PyG's ``edge_index`` and ``e_id``)."""
        self = cls.__new__(cls)
        self._open(graph, seeds, options, **kwargs)
        return self

    def _open(
        self,
        graph: Graph,
        seeds: Any,
        options: SampleOptions,
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        queue_capacity: int = 2,
        feature_names: Sequence[str] = (),
        label_names: Sequence[str] = (),
        seed_times: Any = None,
        allocator: HostAllocator | None = None,
        device: DeviceOptions | None = None,
        coo: bool = False,
    ) -> None:
        self._handle: int | None = None
        if device is not None and not isinstance(device, DeviceOptions):
            raise TypeError(f"'device' must be graphferry DeviceOptions (got '{type(device).__name__}')")
        self.device = device
        self._coo = int(coo)  # 0, or which edge list (GF_COO_*; True: the sampled edges)
        # One thread calls the engine loader at a time (the header's rule):
        # an epoch one thread starts supersedes another's whole.
        self._turn = threading.RLock()
        # Seconds a next() waits for a batch before it raises (0: no bound).
        self.wait_timeout = 0.0
        self._active: object | None = None  # token of the epoch in progress
        self._next_epoch = 0
        # The latest epoch's (number, batches yielded, ended), and where the
        # next iter() resumes (load_state_dict).
        self._position: tuple[int, int, bool] | None = None
        self._resume: tuple[int, int] | None = None
        self.graph = _check_graph(graph)
        self._typed = not graph.closed and graph.num_types[0] > 0
        if not isinstance(options, SampleOptions):
            raise TypeError(f"'options' must be a graphferry.SampleOptions (got '{type(options).__name__}')")
        self.options = options
        self.frontier = options.frontier
        self._sample, self._keep = options.to_c()
        self._seed_times = borrow(seed_times, "seed_times")
        self._features = [(n, _encode_name(n, "feature_names")) for n in _names(feature_names, "feature_names")]
        self._labels = [(n, _encode_name(n, "label_names")) for n in _names(label_names, "label_names")]
        self._feature_array = (ctypes.c_char_p * max(len(self._features), 1))(*[b for _, b in self._features])
        self._label_array = (ctypes.c_char_p * max(len(self._labels), 1))(*[b for _, b in self._labels])
        if allocator is not None and not isinstance(allocator, HostAllocator):
            raise TypeError(f"'allocator' must be a graphferry HostAllocator (got '{type(allocator).__name__}')")
        self.allocator = allocator
        self._options = _lib.gf_loader_options(
            sample=ctypes.pointer(self._sample),
            batch_size=_as_int(batch_size, "batch_size"),
            shuffle=1 if shuffle else 0,
            drop_last=1 if drop_last else 0,
            shuffle_seed=options.seed & 0xFFFFFFFFFFFFFFFF,
            queue_capacity=_as_int(queue_capacity, "queue_capacity"),
            num_feature_names=len(self._features),
            feature_names=ctypes.cast(self._feature_array, ctypes.POINTER(ctypes.c_char_p)),
            num_label_names=len(self._labels),
            label_names=ctypes.cast(self._label_array, ctypes.POINTER(ctypes.c_char_p)),
            seed_times=ctypes.pointer(self._seed_times.dltensor) if self._seed_times is not None else None,
            allocator=ctypes.pointer(allocator.struct) if allocator is not None else None,
            coo=int(self._coo),
        )
        if device is not None:
            o = self._options
            o.device = _lib.DLDevice(_lib.kDLCUDA, device.ordinal)
            o.device_topology = device.topology
            o.device_cache_bytes = device.cache_bytes
            o.device_reserve_bytes = device.reserve_bytes
        if graph.closed:
            raise _closed_error("graphferry.Loader: the graph was closed")
        borrowed = BorrowedTensor(seeds, "seeds")
        self._fingerprint = _fingerprint(borrowed, options, self._options)
        out = ctypes.c_void_p()
        self._open_handle(graph, borrowed, out)
        self._handle = out.value
        graph._add_child(self)
        if self._callbacks:
            close_at_exit(self)  # its threads call into Python

    @property
    def _callbacks(self) -> list[BatchCallback]:
        """The Python functions the engine calls for each batch (whose
        exception a batch they failed raises)."""
        return []

    def _open_handle(self, graph: Graph, seeds: BorrowedTensor, out: ctypes.c_void_p) -> None:
        """Opens the engine loader into ``out`` (graphferry.distributed
        opens one rank's share instead)."""
        _lib.gf_loader_open(graph.handle, seeds.ref, ctypes.byref(self._options), ctypes.byref(out))

    def _check_open(self) -> int:
        """The handle, or an error saying what was closed."""
        if self._handle is None:
            if self.graph.closed:
                raise _closed_error(
                    "graphferry.Loader: the graph was closed (closing a graphferry.Graph closes its loaders)"
                )
            raise _closed_error("graphferry.Loader: the loader was closed")
        return self._handle

    def __len__(self) -> int:
        return _scalar(_lib.gf_loader_num_batches, self._check_open())

    def __iter__(self) -> _EpochIterator:
        with self._turn:
            if self._resume is not None:
                epoch, first = self._resume
                it = self.epoch(epoch, first_batch=first)
                self._next_epoch = epoch + 1
                return it
            epoch = self._next_epoch
            self._next_epoch += 1
            return self.epoch(epoch)

    def epoch(self, number: int, first_batch: int = 0, order: Any = None) -> _EpochIterator:
        """Starts epoch ``number`` (its permutation and random streams depend
        on it) and returns its iterator. With ``first_batch`` > 0 the epoch
        starts at that batch (``gf_loader_start_at``): the batches an
        uninterrupted epoch yields from there on, none of the earlier ones
        sampled. ``order`` (int64, a permutation of the seeds' positions)
        batches the seeds in that order instead of the loader's shuffle
        (``gf_loader_start_ordered``)."""
        number = _as_int(number, "epoch")
        first_batch = _as_int(first_batch, "first_batch")
        e = number & 0xFFFFFFFFFFFFFFFF
        with self._turn:
            handle = self._check_open()
            self._active = None
            if order is None:
                _lib.gf_loader_start_at(handle, e, first_batch)
            else:
                _lib.gf_loader_start_ordered(handle, e, first_batch, BorrowedTensor(order, "order").ref)
            self._resume = None
            it = _EpochIterator(self, number, first_batch)
            self._next_epoch = max(self._next_epoch, number + 1)  # the epochs after it follow it
            self._active = it.token
            self._position = (number, first_batch, False)
            return it

    def state_dict(self) -> dict[str, Any]:
        """Where the loader stands, for :meth:`load_state_dict` in this
        process or a fresh one (the protocol of torchdata's
        ``StatefulDataLoader``): the epoch being iterated and how many of its
        batches were yielded, or, between epochs, the next epoch, with what
        the state belongs to (the kind of loader, the graph's size, the
        seeds, the batching and sampling options).
        A plain dict of ints and strings (save it with the model's
        checkpoint)."""
        state: dict[str, Any] = {
            "format": "graphferry.loader",
            "version": STATE_VERSION,
            "kind": self.state_kind,
            "next_epoch": self._next_epoch,
            "epoch": None,
            "batches_yielded": 0,
            "num_batches": len(self),
            "fingerprint": self._state_fingerprint(),
        }
        pos = self._resume or (self._position[:2] if self._position and not self._position[2] else None)
        if pos is not None:
            state["epoch"], state["batches_yielded"] = pos
        return state

    @property
    def state_kind(self) -> str:
        """What a state of this loader says it belongs to: its class."""
        return state_kind(self)

    def _state_fingerprint(self) -> dict[str, Any]:
        graph = {"num_nodes": int(self.graph.num_nodes), "num_edges": int(self.graph.num_edges)}
        return dict(self._fingerprint, graph=graph, **self._rank_fingerprint())

    def load_state_dict(self, state: dict[str, Any], *, kind: str | None = None) -> None:
        """Restores a :meth:`state_dict`: the next ``iter()`` yields exactly
        the batches of the interrupted epoch that had not been yielded, bit
        for bit (none of the earlier ones is sampled again), and the epochs
        after it follow as they would have. The loader must have been opened
        with the same graph, seeds, batch size, shuffle, drop_last and sample
        options (seed included) and, distributed, the same rank and number
        of ranks; the thread and patch counts may differ. An epoch in
        progress is dropped. A state of another kind of loader, of another
        graph, seeds or options, or with numbers out of range (an epoch that
        is not before the next, more batches than an epoch has) is refused
        with a ValueError that says which (``kind``: the kind the state must
        be of, by default this loader's :attr:`state_kind`)."""
        check_state(state, kind or self.state_kind)
        want = self._state_fingerprint()
        got = state["fingerprint"]
        if state["version"] == 1:  # 0.3.0's states recorded no graph
            want.pop("graph")
        diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
        if diff:
            raise ValueError(
                "the loader state was saved by a loader with other settings: "
                + ", ".join(f"{k} {got.get(k)!r} (this loader: {want.get(k)!r})" for k in diff)
            )
        next_epoch, epoch, k = check_position(state, len(self))
        with self._turn:
            self._active = None
            if epoch is None:
                self._resume = None
                self._position = None
            else:
                self._resume = (epoch, k)
            self._next_epoch = next_epoch

    def _rank_fingerprint(self) -> dict[str, Any]:
        """What else a state must match: a distributed loader's rank and size."""
        return {}

    @property
    def in_epoch(self) -> bool:
        """Whether an epoch was started and has not ended."""
        return self._active is not None

    def _next_batch(self, it: _EpochIterator) -> SampledSubgraph:
        with it.turn:  # threads sharing the iterator take a batch each
            return self._take_batch(it)

    def _superseded(self, it: _EpochIterator) -> GraphferryError:
        it.done = True
        return GraphferryError(
            GF_ESTATE,
            "graphferry.Loader: this epoch was superseded before its end: iter(), epoch() or set_cache() "
            "started another epoch of the same loader, and its remaining batches will not come (one "
            "Loader serves one epoch at a time; open one per concurrent epoch, or use graphferry.dgl / "
            "graphferry.pyg loaders, whose iterators each keep their own epoch)",
        )

    def _take_batch(self, it: _EpochIterator) -> SampledSubgraph:
        if it.done:
            raise StopIteration
        if self._handle is None:  # closed under a running epoch: an error, not a short epoch
            it.done = True
            self._check_open()
        if self._active is not it.token:  # a newer epoch of this loader started
            raise self._superseded(it)
        out = it.taken  # a batch taken but not returned (an interrupt came between) is returned now
        if not out.value and self._wait_next(it, out) == GF_DONE:
            self._active = None
            it.done = True
            self._position = (it.number, it.yielded, True)
            raise StopIteration
        batch_handle, out.value = out.value, None
        device = getattr(self, "device", None)
        with _Batch(batch_handle, None if device is None else device.ordinal) as batch:
            sub = self._read(batch)
        if self.allocator is not None:
            self.allocator.step()  # page-locks new memory, fences its reuse on the consumer's stream
        it.yielded += 1
        if self._active is it.token:
            self._position = (it.number, it.yielded, False)
        return sub

    def _read(self, batch: _Batch) -> Any:
        """What the iteration yields of one engine batch."""
        return batch.read(
            self._features,
            self._labels,
            input_index=True,
            frontier_all=self.frontier == "all",
            disjoint=self.options.disjoint,
            typed=self._typed,
            coo=self._coo,
        )

    def _wait_next(self, it: _EpochIterator, out: ctypes.c_void_p) -> int:
        """Waits for the epoch's next batch (into ``out``) in waits of
        :data:`NEXT_WAIT_MS`, between which Python runs its signal handlers
        (a ctypes call blocked in C cannot), as the class's docstring says;
        past :attr:`wait_timeout`, RuntimeError (torch's words), the epoch
        going on. Returns GF_OK or GF_DONE."""
        deadline = time.monotonic() + self.wait_timeout if self.wait_timeout > 0 else None
        while True:
            handle = self._handle
            try:
                if handle is None:
                    self._check_open()  # raises
                with self._turn:  # between waits, another thread may start an epoch
                    if self._active is not it.token:
                        raise self._superseded(it)
                    status = _lib.gf_loader_next_wait(handle, NEXT_WAIT_MS, ctypes.byref(out))
            except GraphferryError as err:
                if it.done and self._active is not None and self._active is not it.token:
                    raise  # superseded: the newer epoch goes on
                self._active = None  # the error ended the epoch
                it.done = True
                if self._handle is None and not self.graph.closed:
                    raise _closed_error(
                        "graphferry.Loader: the loader was closed (by another thread) while waiting for a batch"
                    ) from err
                explained = self.allocator.explain(err) if self.allocator is not None else err
                if explained is not err:
                    raise explained from explained.__cause__  # the failed allocation
                reraise(self._callbacks, err)  # a callback's exception, else err
            if status != GF_NOT_READY:
                return status
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self.wait_timeout:g} seconds")

    def stats(self) -> LoaderStats:
        """The pipeline's statistics: per stage (sampler workers, loader,
        consumer) busy, blocked and waiting time and batches, node data bytes
        per memory tier and hot-tier hits, for the current epoch and in total
        (atomic counters in the engine: cheap enough to read every batch).
        After :meth:`close`, the last statistics read before closing."""
        if self._handle is None:
            last = getattr(self, "_last_stats", None)
            if last is not None:
                return last
            self._check_open()  # raises
        return read_stats(self._handle)

    def set_cache(
        self,
        size: int | float | str,
        *,
        policy: str = "degree",
        budget: int | None = None,
        reserve: int = 0,
        presample_epochs: int = 2,
    ) -> int:
        """Puts the feature rows of the nodes most likely to be read in a hot
        tier (a contiguous copy on the CPU build, the device tier's contents
        on a GPU) that later epochs gather from; batches are unchanged and
        :meth:`stats` reports the hit rate. Stops the epoch in progress: call
        between epochs. Returns the number of hot rows.

        Args:
            size: bytes (int), a fraction of the nodes (float in (0, 1]), or
                ``"auto"``: what fits in ``budget`` bytes after ``reserve``.
            policy: ``"degree"`` (highest in-degree first, PaGraph) or
                ``"presample"`` (most read over ``presample_epochs`` epochs of
                this loader, sampled ahead: GNNLab, DSP).
        """
        opts = cache_options(size, policy, budget, reserve, presample_epochs)
        with self._turn:
            self._active = None  # the engine stops the epoch in progress
            return set_cache(self._check_open(), opts)

    def _free(self) -> None:
        handle, self._handle = self._handle, None
        self._active = None
        if handle is not None and not _lib.in_forked_child():
            try:
                self._last_stats = read_stats(handle)
            except Exception:  # noqa: BLE001 - closing must not fail for statistics
                pass
            _lib.gf_loader_close(handle)

    @property
    def handle(self) -> int | None:
        """The ``gf_loader *`` as an int, or None once closed."""
        return self._handle

    @property
    def closed(self) -> bool:
        return self._handle is None

    def close(self) -> None:
        """Stops the engine's threads and releases the loader. Idempotent.
        An epoch still being iterated then raises on its next batch; so
        does dropping the loader (no reference cycle keeps it)."""
        self._free()

    def __reduce__(self):
        raise TypeError(
            "a graphferry loader cannot be pickled or used in another process: graphferry "
            "samples on its own threads (use num_workers=0)"
        )


class _EpochIterator(Iterator[SampledSubgraph]):
    """The batches of one epoch of a :class:`Loader`."""

    def __init__(self, loader: Loader, number: int = 0, first: int = 0):
        self._loader = loader
        self.token = object()
        self.number = number  # the epoch
        self.yielded = first  # batches of the epoch yielded so far (those a resume skipped included)
        self.done = False
        self.taken = ctypes.c_void_p()  # a gf_batch taken from the engine, not yet returned
        self.turn = threading.Lock()  # held while a thread takes a batch

    def __iter__(self) -> _EpochIterator:
        return self

    def __next__(self) -> SampledSubgraph:
        return self._loader._next_batch(self)

    def __del__(self) -> None:
        handle, self.taken.value = self.taken.value, None
        if handle and _lib is not None and not _lib.in_forked_child():
            _lib.gf_batch_close(handle)  # batches stay valid after their loader closed


STATE_VERSION = 2


def state_kind(loader: Any) -> str:
    """The kind of loader a state belongs to: its class, named from its
    package (``graphferry.Loader``, ``graphferry.dgl.DataLoader``, ...)."""
    return f"{type(loader).__module__.rsplit('.', 1)[0]}.{type(loader).__qualname__}"


def _state_int(state: dict[str, Any], key: str, upper: int) -> int:
    value = state.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < upper:
        raise ValueError(f"the loader state's {key!r} must be an int in [0, {upper}) (got {value!r})")
    return value


def check_state(state: Any, kind: str) -> None:
    """Refuses, naming the problem, what is not a loader state, or one that
    another kind of loader saved."""
    if not isinstance(state, dict) or state.get("format") != "graphferry.loader":
        raise ValueError(f"not a graphferry loader state (from a loader's state_dict()); got {type(state).__name__}")
    version = state.get("version")
    if version not in (1, STATE_VERSION):
        raise ValueError(f"loader state version {version!r} is not supported (want {STATE_VERSION}, or 1)")
    if not isinstance(state.get("fingerprint"), dict):
        raise ValueError(
            f"the loader state's 'fingerprint' must be a dict (got {type(state.get('fingerprint')).__name__})"
        )
    if version != 1 and state.get("kind") != kind:
        raise ValueError(f"the loader state was saved by a {state.get('kind')!r}, not by a {kind!r}")


def check_position(state: dict[str, Any], num_batches: int) -> tuple[int, int | None, int]:
    """The (next epoch, epoch, batches yielded) of a loader state whose
    epochs have ``num_batches`` batches, each in range: the epoch being
    iterated is one before the next, and at most every batch was yielded."""
    if state["version"] != 1 and state.get("num_batches") != num_batches:
        raise ValueError(
            f"the loader state's epochs have {state.get('num_batches')!r} batches; this loader's have {num_batches}"
        )
    next_epoch = _state_int(state, "next_epoch", 2**63)
    epoch, k = state.get("epoch"), state.get("batches_yielded")
    if epoch is None:
        return next_epoch, None, 0
    epoch = _state_int(state, "epoch", 2**63)
    if epoch >= next_epoch:
        raise ValueError(f"the loader state's epoch {epoch} is not before its next epoch {next_epoch}")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= num_batches:
        raise ValueError(f"batches_yielded = {k!r} is outside [0, {num_batches}]")
    return next_epoch, epoch, k


def _fingerprint(seeds: BorrowedTensor, options: SampleOptions, lo: Any) -> dict[str, Any]:
    """What a loader state must match to resume on a loader: the seeds (a
    digest), the batching and the sample options that decide the batches."""
    t = seeds.tensor if hasattr(seeds, "tensor") else None
    digest = ""
    if t is not None:
        digest = hashlib.blake2b(t.detach().cpu().contiguous().numpy().tobytes(), digest_size=16).hexdigest()
    return {
        "num_seeds": int(seeds.dltensor.shape[0]) if seeds.dltensor.ndim > 0 else 0,
        "seeds": digest,
        "batch_size": int(lo.batch_size),
        "shuffle": bool(lo.shuffle),
        "drop_last": bool(lo.drop_last),
        "seed": int(options.seed) & 0xFFFFFFFFFFFFFFFF,
        "options": options.fingerprint(),
    }


def _closed_error(message: str) -> GraphferryError:
    # GF_EBADHANDLE, as the library answers for a released handle.
    return GraphferryError(GF_EBADHANDLE, message)


def _names(names: Any, what: str) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str):
        return [names]
    if not isinstance(names, (list, tuple)):
        raise TypeError(f"'{what}' must be a list of str (got '{type(names).__name__}')")
    return list(names)

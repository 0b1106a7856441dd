"""What the subgraph samplers of :mod:`graphferry.dgl` (``SAINTSampler``)
and :mod:`graphferry.pyg` (``GraphSAINT*Sampler``, ``ShaDowKHopSampler``,
``ClusterLoader``) share: the engine's subgraph loader
(:class:`SubgraphLoader`, ``gf_subgraph_loader_open``), whose batches --
GraphSAINT's draws, Cluster-GCN's parts or ShaDow's k-hop samples and the
subgraph they induce, with their node and edge data -- are made ahead by
the engine's threads.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ._callback import BatchCallback
from ._native import lib as _lib
from ._native.dlpack import BorrowedTensor, borrow
from ._options import SampleOptions
from .graph import Graph, _encode_name
from .sampling import Loader, _Batch, _names

__all__ = [
    "SubgraphLoader",
    "SubgraphSample",
]

_KINDS = {
    "nodes": _lib.GF_SUBGRAPH_NODES,
    "edges": _lib.GF_SUBGRAPH_EDGES,
    "walks": _lib.GF_SUBGRAPH_WALKS,
    "parts": _lib.GF_SUBGRAPH_PARTS,
    "khop": _lib.GF_SUBGRAPH_KHOP,
    "hgt": _lib.GF_SUBGRAPH_HGT,
    "drawn": _lib.GF_SUBGRAPH_DRAWN,
}
_WEIGHTS = {
    None: 0,
    "out_degree_min1": _lib.GF_SUBGRAPH_WEIGHT_OUT_DEGREE_MIN1,
    "out_degree": _lib.GF_SUBGRAPH_WEIGHT_OUT_DEGREE,
    "inverse_degree": _lib.GF_SUBGRAPH_WEIGHT_INVERSE_DEGREE,
    "degree_sum": _lib.GF_SUBGRAPH_WEIGHT_DEGREE_SUM,
}
_ORDERS = {
    "src_eid": _lib.GF_SUBGRAPH_ORDER_SRC_EID,
    "src_dst": _lib.GF_SUBGRAPH_ORDER_SRC_DST,
    "dst_eid": _lib.GF_SUBGRAPH_ORDER_DST_EID,
    "eid": _lib.GF_SUBGRAPH_ORDER_EID,
}


@dataclass
class SubgraphSample:
    """One batch of a :class:`SubgraphLoader`: ``nodes`` (int64 original
    ids), ``edge_index`` (int64 ``[2, E]``, positions in ``nodes``),
    ``edge_ids`` (int64 ``[E]``), the node data gathered over every node and
    the edge data over every edge; ``kind="khop"``: ``seeds`` (the batch's
    seeds), ``labels`` (the label names over them) and, for disjoint
    options, ``batch`` (each node's subgraph: a seed position)."""

    nodes: torch.Tensor
    edge_index: torch.Tensor
    edge_ids: torch.Tensor
    node_data: dict[str, torch.Tensor] = field(default_factory=dict)
    edge_data: dict[str, torch.Tensor] = field(default_factory=dict)
    seeds: torch.Tensor | None = None
    labels: dict[str, torch.Tensor] = field(default_factory=dict)
    batch: torch.Tensor | None = None


def _choice(table: dict, value: Any, what: str) -> int:
    if value not in table:
        raise ValueError(f"{what} must be one of {sorted(k for k in table if k is not None)} (got {value!r})")
    return table[value]


class SubgraphLoader(Loader):
    r"""The engine's subgraph loader (``gf_subgraph_loader_open``): a
    :class:`~graphferry.Loader` whose batch ``i`` of epoch ``e`` is a node
    set the engine makes from the stream keyed by ``seed`` and
    ``(e << 32) | i`` and the subgraph it induces, made ahead of the
    consumer by the engine's threads, as :class:`SubgraphSample` (of a
    typed graph: as :class:`~graphferry.sampling.SampledSubgraph`, whose
    ``typed`` view splits it by type). Iteration, statistics and closing
    are :class:`~graphferry.Loader`'s.

    Args:
        graph (Graph): the graph (untyped).
        items (Tensor): int64 part ids (``kind="parts"``), seed nodes
            (``kind="khop"``), else placeholders whose number alone counts:
            ``batch_size`` of them a batch.
        kind (str): ``"nodes"``, ``"edges"``, ``"walks"``, ``"parts"``,
            ``"khop"`` (ShaDow: the k-hop sample of the seeds with
            ``options``, made induced), ``"hgt"`` (HGT's draw around the
            seeds of a typed graph, ``num_samples``, made induced) or
            ``"drawn"`` (the node ids ``draw`` returns for each batch).
        num_samples (Tensor): ``"hgt"``: int64 ``[hops, node types]``, the
            nodes of each type drawn in each hop.
        draw (BatchCallback): ``"drawn"``: the caller's draw, called on
            the engine's threads with each batch's items and key.
        options (SampleOptions): ``"khop"``'s sampling (its seed roots the
            shuffles and the samples; ``seed`` is not used then).
        weighting (str): the draw weights of ``"nodes"``
            (``"out_degree_min1"``: DGL's, ``"out_degree"``: PyG's) or
            ``"edges"`` (``"inverse_degree"``: DGL's, ``"degree_sum"``:
            PyG's).
        budget (int): nodes or edges drawn, or walk roots, per batch.
        walk_length (int): steps of every walk.
        part_offsets, part_nodes (Tensor): ``"parts"``: part ``j`` is
            ``part_nodes[part_offsets[j]:part_offsets[j + 1]]`` (None:
            node ids ``0..``).
        edge_order (str): ``"src_eid"`` (DGL's subgraph), ``"src_dst"``
            (PyG's ``SparseTensor``), ``"dst_eid"`` or ``"eid"`` (PyG's
            ``Data.subgraph``).
        seed (int): roots the shuffles and the draws.
        edge_feature_names (list of str): edge data
            (:meth:`Graph.set_edge_data`) gathered over every edge.
        num_threads (int): the engine's threads; ``<= 0`` every core.
        **batching: :meth:`~graphferry.Loader.from_options`' ``batch_size``,
            ``shuffle``, ``drop_last``, ``queue_capacity``, ``allocator``,
            ``feature_names`` (over every node) and ``label_names``
            (``"khop"`` without ``disjoint``: over the seeds).
    """

    def __init__(
        self,
        graph: Graph,
        items: Any,
        *,
        kind: str,
        weighting: str | None = None,
        budget: int = 0,
        walk_length: int = 0,
        part_offsets: Any = None,
        part_nodes: Any = None,
        edge_order: str = "src_eid",
        seed: int = 0,
        options: SampleOptions | None = None,
        edge_feature_names: Sequence[str] = (),
        num_threads: int = 0,
        num_samples: Any = None,
        draw: BatchCallback | None = None,
        **batching: Any,
    ):
        self._handle = None
        self._kind = _choice(_KINDS, kind, "kind")
        self._draw = draw
        self._weighting = _choice(_WEIGHTS, weighting, "weighting")
        self._order = _choice(_ORDERS, edge_order, "edge_order")
        self._budget, self._walk_length, self._threads = int(budget), int(walk_length), int(num_threads)
        self._parts = [
            borrow(part_offsets, "part_offsets"),
            borrow(part_nodes, "part_nodes"),
            borrow(None if num_samples is None else torch.as_tensor(num_samples).reshape(-1), "num_samples"),
        ]
        self._edge_features = [
            (n, _encode_name(n, "edge_feature_names")) for n in _names(edge_feature_names, "edge_feature_names")
        ]
        self._edge_array = (ctypes.c_char_p * max(len(self._edge_features), 1))(*[b for _, b in self._edge_features])
        self._khop = kind == "khop"
        if self._khop != (options is not None):
            raise ValueError("SubgraphLoader: kind='khop' samples with 'options' (and only it takes them)")
        if options is None:
            # The options the Loader records (fingerprint, shuffle seed);
            # the engine draws by kind, not by them.
            options = SampleOptions([1], seed=int(seed), num_threads=int(num_threads))
        self._open(graph, items, options, **batching)

    def _open_handle(self, graph: Graph, seeds: BorrowedTensor, out: ctypes.c_void_p) -> None:
        if not self._khop:
            self._options.sample = None  # the engine draws by kind
        offsets, nodes, samples = self._parts
        options = _lib.gf_subgraph_loader_options(
            kind=self._kind,
            loader=ctypes.pointer(self._options),
            weighting=self._weighting,
            edge_order=self._order,
            budget=self._budget,
            walk_length=self._walk_length,
            part_offsets=ctypes.pointer(offsets.dltensor) if offsets is not None else None,
            part_nodes=ctypes.pointer(nodes.dltensor) if nodes is not None else None,
            num_threads=self._threads,
            num_edge_feature_names=len(self._edge_features),
            edge_feature_names=ctypes.cast(self._edge_array, ctypes.POINTER(ctypes.c_char_p)),
            num_samples=ctypes.pointer(samples.dltensor) if samples is not None else None,
            draw_callback=ctypes.pointer(self._draw.struct) if self._draw is not None else None,
        )
        _lib.gf_subgraph_loader_open(graph.handle, seeds.ref, ctypes.byref(options), out)
        self._parts = [None, None, None]  # copied by the engine

    @property
    def _callbacks(self) -> list[BatchCallback]:
        return [] if self._draw is None else [self._draw]

    def _read(self, batch: _Batch) -> Any:
        if self._typed:  # its typed view (the engine's split), seeds and node data
            return super()._read(batch)
        return SubgraphSample(
            nodes=batch.take(_lib.GF_FIELD_NODES),
            edge_index=batch.take(_lib.GF_FIELD_COO_INDEX),
            edge_ids=batch.take(_lib.GF_FIELD_COO_EDGE_IDS),
            node_data={name: batch.take_node_data(raw) for name, raw in self._features},
            edge_data={name: batch.take_edge_data(raw) for name, raw in self._edge_features},
            seeds=batch.take(_lib.GF_FIELD_SEEDS) if self._khop else None,
            labels={name: batch.take_node_data(raw) for name, raw in self._labels},
            batch=batch.take(_lib.GF_FIELD_BATCH) if self._khop and self.options.disjoint else None,
        )

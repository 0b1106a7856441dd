"""graphferry's collective neighbour sampling as a PyG ``BaseSampler``
(:class:`Sampler`), for PyG's own ``NodeLoader``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch_geometric.data import Data
from torch_geometric.sampler import BaseSampler, HeteroSamplerOutput, NodeSamplerInput, SamplerOutput

from .._loader import call_key, loader_seed
from .._native.dlpack import as_cpu_tensor
from .._options import check_scheme
from ..graph import Graph
from ..hetero import HeteroGraph
from .base import (
    check_weight_attr,
    num_neighbors_list,
    sample,
    sample_options,
    sampling_settings,
    seed_times,
    split,
)
from .convert import as_graph, as_hetero_graph, check_data, check_node_rows, is_hetero

__all__ = ["Sampler"]


class Sampler(BaseSampler):
    r"""graphferry's collective neighbour sampling as a PyG ``BaseSampler``.

    :meth:`sample_from_nodes` samples like PyG's ``NeighborSampler`` (each hop
    expands only the nodes first reached in the previous hop) and returns a
    ``SamplerOutput`` whose ``row``/``col`` are local indices (source/target),
    so ``NodeLoader(data, node_sampler=Sampler(data, ...))`` yields the same
    kind of ``Data`` as PyG's ``NeighborLoader``.

    Args:
        data (torch_geometric.data.Data or graphferry.Graph): the graph; a
            ``Data`` is converted once and cached.
        num_neighbors (list of int): neighbours per hop from the seeds;
            ``-1`` takes all.
        replace (bool): sample with replacement. (default: :obj:`False`)
        weight_attr (str, optional): as PyG's ``weight_attr``: the name of
            the edge attribute of ``data`` holding edge weights (e.g.
            ``"edge_weight"``), one per column of ``edge_index``; neighbours
            are then sampled with probability proportional to their edge
            weight, and edges of weight 0 never. Weights must be finite and
            non-negative. With a :class:`graphferry.Graph` as ``data``, the
            graph must already have weights
            (:meth:`graphferry.Graph.set_edge_weights`) and ``weight_attr``
            only switches biased sampling on. (default: :obj:`None`)
        scheme (str): ``"node"`` (node-wise, PyG's) or ``"layer"``
            (layer-wise, DSP Eq. 2: ``num_neighbors[h]`` is the budget of the
            whole hop). (default: :obj:`"node"`)
        layer_without_replacement (bool): with ``scheme="layer"``, draw
            distinct frontier nodes. (default: :obj:`False`)
        exclude_edges (Tensor, optional): edge ids (columns of
            ``edge_index``) never sampled. (default: :obj:`None`)
        seed (int, optional): seed of the per-call random streams.
            (default: :obj:`None`, drawn from torch's generator)
        subgraph_type (str): as PyG's: ``"directional"`` (the sampled
            edges), ``"bidirectional"`` (the sampled edges made
            bidirectional, e.g. ``u->v`` adds ``v->u`` with the same edge
            id, then coalesced) or ``"induced"`` (every edge of the graph
            among the sampled nodes). The last two leave
            ``num_sampled_nodes``/``num_sampled_edges`` None, as PyG does.
            (default: :obj:`"directional"`)
        disjoint (bool): as PyG's: each seed gets its own subgraph (a node
            reached from two seeds appears twice), nodes ordered hop by hop
            and within a hop seed by seed, and ``batch`` gives each node's
            seed. Not with ``subgraph_type="induced"``. (default:
            :obj:`False`)
        time_attr (str, optional): as PyG's: the node attribute (node
            times) or edge attribute (edge times) of ``data`` holding integer
            timestamps; sampling is then temporal (and disjoint): a
            neighbour is a candidate only if its node time (the time of its
            edge) is not later than its subgraph's seed time, the seed's
            ``NodeSamplerInput.time`` or else its own node time. With a
            :class:`graphferry.Graph`, ``"node"`` or ``"edge"``: the times
            the graph holds (:meth:`graphferry.Graph.set_node_time`).
            (default: :obj:`None`)
        temporal_strategy (str): ``"uniform"`` (draw among the candidates)
            or ``"last"`` (the candidates with the latest times).
            (default: :obj:`"uniform"`)

    With a ``HeteroData`` (or :class:`graphferry.HeteroGraph`) as ``data``,
    ``num_neighbors`` may be a dict of edge type -> list (every edge type),
    ``PyG's NodeLoader`` is given ``input_nodes=(node_type, ...)``, and
    :meth:`sample_from_nodes` returns a ``HeteroSamplerOutput``;
    ``exclude_edges`` is then a dict of edge type -> edge ids (columns of
    that type's ``edge_index``) or global edge ids. One class for both, as
    PyG's ``NeighborSampler``: it branches on ``data``.
    """

    def __init__(
        self,
        data: Any,
        num_neighbors: Sequence[int],
        *,
        replace: bool = False,
        weight_attr: str | None = None,
        scheme: str = "node",
        layer_without_replacement: bool = False,
        exclude_edges: Any = None,
        seed: int | None = None,
        subgraph_type: Any = "directional",
        disjoint: bool = False,
        directed: bool = True,
        time_attr: str | None = None,
        temporal_strategy: str = "uniform",
    ):
        check_data(data)
        self.data = data
        self._per_type = is_hetero(data)
        self.num_neighbors = num_neighbors if self._per_type else num_neighbors_list(num_neighbors)
        self.subgraph_type, self._temporal, self.temporal_strategy, self.disjoint = sampling_settings(
            data, subgraph_type, directed, disjoint, time_attr, temporal_strategy
        )
        self.time_attr = time_attr
        self.replace = bool(replace)
        self.weight_attr = check_weight_attr(weight_attr)
        self.scheme = check_scheme(scheme)
        self.layer_without_replacement = bool(layer_without_replacement)
        self.exclude_edges = exclude_edges
        self.seed = int(loader_seed(seed))
        self._calls = 0
        self._hetero: HeteroGraph | None = None
        self._graph: Graph | None = None
        self._open()
        # Validated once; each call replaces only the seed (and seed times).
        self._options = sample_options(
            self._hetero,
            self.num_neighbors,
            replace=self.replace,
            biased=self.weight_attr is not None,
            scheme=self.scheme,
            layer_without_replacement=self.layer_without_replacement,
            exclude_edges=exclude_edges,
            disjoint=self.disjoint,
            temporal=self._temporal,
            temporal_strategy=self.temporal_strategy,
            seed=self.seed,
        )

    def _open(self) -> None:
        """The engine graph of ``data``: converted (and cached) here, and again
        after unpickling (a graph is a handle into one process's engine)."""
        if self._per_type:
            self._hetero = as_hetero_graph(self.data, self.weight_attr, self.time_attr)
            self._graph = self._hetero.graph
            return
        if isinstance(self.data, Data):
            check_node_rows(self.data)
        self._graph = as_graph(self.data, self.weight_attr, self.time_attr)

    def _next_key(self) -> int:
        # Each call gets its own random streams, reproducible from `seed`.
        self._calls += 1
        return call_key(self._calls)  # as NeighborLoader.__call__

    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs: Any) -> SamplerOutput | HeteroSamplerOutput:
        if self._graph is None:  # after unpickling
            self._open()
        if self._per_type:
            return self._sample_per_type(index)
        if index.input_type is not None:
            raise ValueError(
                f"this graphferry.pyg.Sampler was made for a homogeneous graph (got input_type='{index.input_type}'); "
                "give it a HeteroData for (node type, ids) input nodes"
            )
        seeds = as_cpu_tensor(index.node, "index.node").to(torch.int64)
        times = seed_times(self.data, self._temporal, self.time_attr, index.time, seeds)
        out = sample(self._graph, seeds, self._options, self._next_key(), self.subgraph_type, times)
        return SamplerOutput(
            node=out.node,
            row=out.row,
            col=out.col,
            edge=out.edge,
            batch=out.batch,
            num_sampled_nodes=out.num_sampled_nodes,
            num_sampled_edges=out.num_sampled_edges,
            metadata=(index.input_id, index.time),
        )

    def _sample_per_type(self, index: NodeSamplerInput) -> HeteroSamplerOutput:
        """:meth:`sample_from_nodes` on a heterogeneous graph: ``(node type,
        ids)`` seeds, PyG's ``HeteroSamplerOutput``."""
        hetero = self._hetero
        if index.input_type is None:
            raise ValueError(
                "this graphferry.pyg.Sampler samples a heterogeneous graph: give NodeLoader "
                f"input_nodes=(node type, ids) (node types: {hetero.node_types})"
            )
        if index.input_type not in hetero.node_types:
            raise ValueError(f"unknown input node type '{index.input_type}' (node types: {hetero.node_types})")
        local = as_cpu_tensor(index.node, "index.node").to(torch.int64)
        seeds = hetero.to_global(index.input_type, local)
        times = seed_times(self.data, self._temporal, self.time_attr, index.time, local, index.input_type)
        out = sample(hetero.graph, seeds, self._options, self._next_key(), "directional", times, per_type=True)
        output = split(hetero, out, self.subgraph_type)
        output.metadata = (index.input_id, index.time)
        return output

    def sample_from_edges(self, index: Any, neg_sampling: Any = None) -> SamplerOutput:
        raise NotImplementedError("graphferry.pyg.Sampler samples from nodes only")

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_graph"] = state["_hetero"] = None  # handles into this process's engine
        return state

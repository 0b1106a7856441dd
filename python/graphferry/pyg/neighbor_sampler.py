"""graphferry's collective neighbour sampling as a PyG ``BaseSampler``
(:class:`Sampler`), for PyG's own ``NodeLoader``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch_geometric.data import Data
from torch_geometric.sampler import (
    BaseSampler,
    EdgeSamplerInput,
    HeteroSamplerOutput,
    NegativeSampling,
    NodeSamplerInput,
    SamplerOutput,
)

from .._link import EdgeSampler
from .._loader import call_key, loader_seed
from .._native import lib as _lib
from .._native.dlpack import as_cpu_tensor
from .._options import check_scheme
from ..errors import GF_EFORK, GraphferryError
from ..graph import Graph
from ..hetero import HeteroGraph
from .base import (
    check_weight_attr,
    directional,
    finish,
    link_negatives,
    num_neighbors_list,
    sample,
    sample_options,
    sampling_settings,
    seed_times,
    split,
)
from .convert import check_data, check_node_rows, is_hetero, time_tensor
from .stores import engine_graph, is_hetero_stores

__all__ = ["Sampler"]


class Sampler(BaseSampler):
    r"""graphferry's collective neighbour sampling as a PyG ``BaseSampler``.

    :meth:`sample_from_nodes` samples like PyG's ``NeighborSampler`` (each hop
    expands only the nodes first reached in the previous hop) and returns a
    ``SamplerOutput`` whose ``row``/``col`` are local indices (source/target),
    so ``NodeLoader(data, node_sampler=Sampler(data, ...))`` yields the same
    kind of ``Data`` as PyG's ``NeighborLoader``; :meth:`sample_from_edges`
    serves PyG's ``LinkNeighborLoader(..., neighbor_sampler=Sampler(...))``
    and ``LinkLoader`` (binary and triplet negatives, with or without
    ``edge_label``), batch for batch as :class:`LinkNeighborLoader` makes
    them.

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

    In PyG's loaders with ``num_workers > 0``, give them
    ``multiprocessing_context="spawn"`` (or ``"forkserver"``): the sampler
    is pickled (its ``data``, not its engine handles) and opens its graph in
    each worker, whose calls draw streams keyed by the worker's torch seed
    (new every epoch and worker); in a forked worker it raises
    :class:`graphferry.GraphferryError` saying so (the engine never runs in a
    forked child).
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
        self._per_type = is_hetero(data) or is_hetero_stores(data)
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
        # A GraphStore's edge order, applied by PyG to e_id (per edge type: a dict).
        self._edge_perm: torch.Tensor | dict[Any, torch.Tensor | None] | None = None
        # The engine's edge samplers of sample_from_edges, one per (negative
        # mode, amount, weights), with the weights they were opened with.
        self._edge_samplers: dict[tuple[str | None, float, int], tuple[EdgeSampler, Any]] = {}
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
        if isinstance(self.data, Data):
            check_node_rows(self.data)
        self._graph, self._hetero, self._edge_perm = engine_graph(self.data, self.weight_attr, self.time_attr)

    @property
    def edge_permutation(self) -> torch.Tensor | dict[Any, torch.Tensor | None] | None:
        """PyG's ``BaseSampler.edge_permutation``: with a ``(FeatureStore,
        GraphStore)`` pair whose store is not a :class:`GraphStore`, the
        store's edge order (PyG's loaders map ``e_id`` through it; per edge
        type for typed edges)."""
        if self._graph is None and isinstance(self.data, tuple):
            self._open()
        return self._edge_perm

    def _next_key(self) -> int:
        # Each call gets its own random streams, reproducible from `seed`;
        # in a worker process of torch's DataLoader, keyed by the worker's
        # torch seed too (new every epoch and worker, as torch seeds them).
        self._calls += 1
        worker = torch.utils.data.get_worker_info()
        if worker is None:
            return call_key(self._calls)  # as NeighborLoader.__call__
        return ((worker.seed & 0xFFFFFFFF) << 32 | call_key(self._calls)) & 0x7FFFFFFFFFFFFFFF

    def _ready(self) -> None:
        """Opens the engine graph after unpickling (in a worker process
        torch's DataLoader started with the "spawn" or "forkserver" method);
        a forked worker is refused: the engine never runs in a forked
        child."""
        if _lib.in_forked_child():
            raise GraphferryError(
                GF_EFORK,
                "graphferry.pyg.Sampler in a forked worker process (a DataLoader with num_workers > 0 and the "
                "'fork' start method): the engine never runs in a forked child. Give the loader "
                "multiprocessing_context='spawn' (or 'forkserver'): the Sampler is pickled and opens its graph in "
                "each worker; or num_workers=0 (graphferry's own loaders sample on the engine's threads)",
            )
        if self._graph is None:
            self._open()

    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs: Any) -> SamplerOutput | HeteroSamplerOutput:
        self._ready()
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
        return out.to_pyg((index.input_id, index.time))

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

    def sample_from_edges(
        self, index: EdgeSamplerInput, neg_sampling: NegativeSampling | None = None
    ) -> SamplerOutput | HeteroSamplerOutput:
        """PyG's link sampling (inside ``LinkNeighborLoader``/``LinkLoader``):
        the engine's edge sampler (``gf_edge_sampler_sample``, PyG mode)
        draws the negatives (binary or triplet, PyG's distribution from the
        engine's streams), takes the pairs' sorted unique nodes as seeds and
        samples around them, in one call; the output's ``metadata`` is
        PyG's: ``(input_id, edge_label_index, edge_label, edge_label_time)``,
        or ``(input_id, src_index, dst_pos_index, dst_neg_index, seed_time)``
        for triplet negatives."""
        if not isinstance(index, EdgeSamplerInput):
            raise TypeError(f"sample_from_edges takes an EdgeSamplerInput (got '{type(index).__name__}')")
        self._ready()
        neg = NegativeSampling.cast(neg_sampling) if neg_sampling is not None else None
        mode, amount, weights = link_negatives(neg)
        times = None
        if (index.time is not None) != (self._temporal is not None):
            raise ValueError(
                "temporal link sampling needs both the pairs' times (edge_label_time) and a sampler made with "
                f"time_attr (got times: {index.time is not None}, time_attr: {self.time_attr!r})"
            )
        if index.time is not None:
            # Under node times the engine keeps negatives not later than
            # their seed, as PyG's neg_sample.
            times = time_tensor(as_cpu_tensor(index.time, "index.time"), "'edge_label_time'").contiguous()
        row = as_cpu_tensor(index.row, "index.row").to(torch.int64)
        col = as_cpu_tensor(index.col, "index.col").to(torch.int64)
        hetero = self._hetero
        if self._per_type:
            etype = index.input_type
            if etype is None or tuple(etype) not in hetero.edge_types:
                raise ValueError(
                    f"this graphferry.pyg.Sampler samples a heterogeneous graph: the pairs need an edge type "
                    f"of {hetero.edge_types} (got input_type={etype!r})"
                )
            row, col = hetero.to_global(etype[0], row), hetero.to_global(etype[2], col)
        elif index.input_type is not None:
            raise ValueError(
                f"this graphferry.pyg.Sampler was made for a homogeneous graph (got input_type={index.input_type!r})"
            )
        key = (mode, amount, id(weights))
        if key not in self._edge_samplers or self._edge_samplers[key][1] is not weights:
            engine = EdgeSampler(
                self._graph, self._options, mode="pyg", negative=mode, amount=amount, negative_weights=weights
            )
            self._edge_samplers[key] = (engine, weights)  # the weights kept: their id names them
        s = self._edge_samplers[key][0].sample(
            row.contiguous(), col.contiguous(), key=self._next_key(), seed_times=times
        )
        given = index.input_id if index.input_id is not None else torch.arange(row.numel())
        input_id = given[s.input_id]
        num_pos = input_id.numel()
        # PyG's src_time: the pairs' times, repeated over the binary negatives
        src_time = times[s.input_id] if times is not None else None
        if mode == "triplet":
            if index.label is not None:
                raise ValueError("'edge_label' needs to be undefined for 'triplet'-based negative sampling")
            metadata = (
                input_id,
                s.src_index,
                s.dst_pos_index,
                s.dst_neg_index.view(num_pos, -1).squeeze(-1),
                src_time,
            )
        else:
            label = index.label[s.input_id] if index.label is not None else None
            if mode == "binary":
                if label is None:
                    label = torch.ones(num_pos)
                num_neg = s.pos_src.numel() - num_pos
                label = torch.cat([label, label.new_zeros((num_neg,) + label.shape[1:])])
            if src_time is not None:
                src_time = src_time.repeat(-(-s.pos_src.numel() // num_pos))[: s.pos_src.numel()]
            metadata = (input_id, torch.stack([s.pos_src, s.pos_dst]), label, src_time)
        if self._per_type:
            output = split(hetero, directional(s.sub, per_type=True), self.subgraph_type)
            output.metadata = metadata
            return output
        return finish(directional(s.sub), self._graph, self.subgraph_type).to_pyg(metadata)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_graph"] = state["_hetero"] = None  # handles into this process's engine
        state["_edge_samplers"] = {}
        return state

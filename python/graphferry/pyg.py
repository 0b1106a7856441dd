r"""graphferry as PyTorch Geometric's neighbour sampler and loader.

Two ways in:

* :class:`Sampler` is a ``torch_geometric.sampler.BaseSampler``, so PyG's own
  ``NodeLoader`` composes with it (PyG then joins the features):

  .. code-block:: python

      from torch_geometric.loader import NodeLoader
      loader = NodeLoader(data, node_sampler=graphferry.pyg.Sampler(data, [10, 10]),
                          input_nodes=data.train_mask, batch_size=128)

* :class:`NeighborLoader` runs the engine's own pipeline (sampling and
  feature gathering on its threads) and yields the ``Data`` objects that
  ``torch_geometric.loader.NeighborLoader`` yields:

  .. code-block:: python

      loader = graphferry.pyg.NeighborLoader(data, [10, 10], batch_size=128,
                                             input_nodes=data.train_mask, shuffle=True)
      for batch in loader:
          out = model(batch.x, batch.edge_index)[:batch.batch_size]
          loss = F.cross_entropy(out, batch.y[:batch.batch_size])

Both take PyG's ``subgraph_type`` (``"directional"``, ``"bidirectional"``,
``"induced"``) and ``disjoint``; the loader is callable
(``loader(index)``) like PyG's, and takes a ``(FeatureStore, GraphStore)``
pair, with :class:`GraphStore` serving a graphferry graph to PyG's
remote-backend interface.

Both take a ``HeteroData`` too (or a :class:`graphferry.HeteroGraph`, see
:func:`from_pyg`), with ``num_neighbors`` per edge type and
``input_nodes=(node_type, ids or mask)``, and yield ``HeteroData`` batches
as PyG's heterogeneous loaders do:

.. code-block:: python

    loader = graphferry.pyg.NeighborLoader(
        hetero_data, {("author", "writes", "paper"): [10, 5], ("paper", "cites", "paper"): [5, 5],
                      ("paper", "rev_writes", "author"): [3, 3]},
        input_nodes=("paper", hetero_data["paper"].train_mask), batch_size=128)
    for batch in loader:
        out = model(batch.x_dict, batch.edge_index_dict)["paper"][:batch["paper"].batch_size]

Temporal sampling is PyG's: ``time_attr`` names a node attribute (the
nodes' times) or an edge attribute (the edges' times), ``input_time`` gives
each seed's time (by default the seed's own node time), and only neighbours
(edges) not later than their subgraph's seed time are sampled, drawn
uniformly (``temporal_strategy="uniform"``) or the latest first
(``"last"``). Temporal sampling is disjoint: every seed gets its own
subgraph, as in PyG.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch_geometric.data
from torch_geometric.data import Data, EdgeAttr, FeatureStore, HeteroData
from torch_geometric.edge_index import EdgeIndex
from torch_geometric.loader.utils import filter_custom_store, filter_edge_store_, get_input_nodes, index_select
from torch_geometric.sampler import BaseSampler, HeteroSamplerOutput, NodeSamplerInput, SamplerOutput
from torch_geometric.sampler.utils import to_bidirectional

from . import _cache
from ._loader import EngineLoader, refuse_workers
from ._native.dlpack import as_cpu_tensor
from ._options import SampleOptions, check_scheme, fanout_values
from ._pyg_hetero import (
    as_hetero_graph,
    build_batch,
    from_pyg,
    hetero_fanouts,
    hetero_time_level,
    input_nodes_of,
    split_output,
    split_typed,
    time_tensor,
)
from .graph import Graph, pyg_node_attrs
from .hetero import HeteroGraph
from .sampling import SampledSubgraph, TypedView, induced_subgraph, random_seed, sample_with_options

__all__ = ["Sampler", "NeighborLoader", "GraphStore", "as_graph", "from_pyg", "random_walk"]


def _pyg_signature(data: Data, weight_attr: str | None = None, time_attr: str | None = None) -> Any:
    weights = getattr(data, weight_attr, None) if weight_attr is not None else None
    times = getattr(data, time_attr, None) if time_attr is not None else None
    return (
        data.num_nodes,
        _cache.tensor_signature(data.edge_index),
        tuple((name, _cache.tensor_signature(data[name])) for name in pyg_node_attrs(data)),
        (weight_attr, _cache.tensor_signature(weights)) if isinstance(weights, torch.Tensor) else None,
        (time_attr, _cache.tensor_signature(times)) if isinstance(times, torch.Tensor) else None,
    )


def _time_level(data: Any, time_attr: str | None) -> str | None:
    """Where the times of ``time_attr`` live: ``"node"``, ``"edge"`` or
    None (no temporal sampling). For a ``Data``, as PyG decides (a node
    attribute first); a :class:`graphferry.Graph` or
    :class:`graphferry.HeteroGraph` holds its times already
    (``set_node_time``/``set_edge_time``) and ``time_attr`` says which
    (``"node"`` or ``"edge"``)."""
    if time_attr is None:
        return None
    if not isinstance(time_attr, str):
        raise TypeError(f"'time_attr' must name an attribute (got '{type(time_attr).__name__}')")
    if isinstance(data, Data):
        if time_attr in data and data.is_node_attr(time_attr):
            return "node"
        if time_attr in data and data.is_edge_attr(time_attr):
            return "edge"
        raise ValueError(
            f"'time_attr': '{time_attr}' is neither a node-level nor an edge-level attribute of the Data "
            f"(it has {sorted(data.keys())})"
        )
    if isinstance(data, HeteroData):
        return hetero_time_level(data, time_attr)
    if isinstance(data, (Graph, HeteroGraph)):
        if time_attr not in ("node", "edge"):
            raise ValueError(
                f"'time_attr' with a graphferry.{type(data).__name__} is 'node' or 'edge' (the times the graph "
                f"holds: set_node_time / set_edge_time), got {time_attr!r}"
            )
        return time_attr
    raise TypeError(f"'time_attr' needs a Data or HeteroData (got '{type(data).__name__}')")


def _graph_of_data(data: Data, weight_attr: str | None, time_attr: str | None) -> Graph:
    graph = Graph.from_pyg(data, edge_weights=weight_attr)
    try:
        level = _time_level(data, time_attr)
        if level == "node":
            graph.set_node_time(time_tensor(data[time_attr], f"data.{time_attr}"))
        elif level == "edge":
            graph.set_edge_time(time_tensor(data[time_attr], f"data.{time_attr}"))
    except BaseException:
        graph.close()
        raise
    return graph


def as_graph(data: Any, weight_attr: str | None = None, time_attr: str | None = None) -> Graph:
    """``data`` if it is a :class:`graphferry.Graph`, else the (cached)
    conversion of a ``torch_geometric.data.Data``, with the edge weights of
    ``data[weight_attr]`` when ``weight_attr`` is given and the node or edge
    times of ``data[time_attr]`` when ``time_attr`` is given."""
    if isinstance(data, Data) and weight_attr is not None:
        if not isinstance(getattr(data, weight_attr, None), torch.Tensor):
            raise KeyError(
                f"'weight_attr': the Data has no tensor attribute '{weight_attr}' (it has {sorted(data.keys())})"
            )
    if isinstance(data, Data) and time_attr is not None:
        _time_level(data, time_attr)  # a clear error before converting
    return _cache.as_graph(
        data,
        Data,
        "torch_geometric.data.Data",
        lambda: _pyg_signature(data, weight_attr, time_attr),
        lambda: _graph_of_data(data, weight_attr, time_attr),
    )


def _is_hetero(data: Any) -> bool:
    return isinstance(data, (HeteroData, HeteroGraph))


def _num_neighbors(num_neighbors: Any) -> list[int]:
    values = num_neighbors
    if not isinstance(values, dict):  # a dict's .values is a method
        values = getattr(num_neighbors, "values", num_neighbors)  # torch_geometric NumNeighbors
    if isinstance(values, dict):
        raise TypeError(
            "per-edge-type num_neighbors need a heterogeneous graph (a HeteroData or graphferry.HeteroGraph); "
            "this graph is homogeneous: give a list of ints"
        )
    return list(fanout_values(values, "num_neighbors"))


def _temporal_strategy(strategy: Any) -> str:
    if strategy not in ("uniform", "last"):
        raise ValueError(f"'temporal_strategy' must be 'uniform' or 'last' (got {strategy!r})")
    return strategy


def _seed_times(
    data: Any, level: str | None, time_attr: str | None, input_time: Any, nodes: torch.Tensor, input_type: Any = None
) -> torch.Tensor | None:
    """The time of every seed of ``nodes`` for temporal sampling (None
    without): ``input_time`` when given, else the seeds' own node times, as
    PyG takes them. ``nodes`` are the seeds' ids in ``data`` (type-local,
    of ``input_type``, for a ``HeteroData``)."""
    if level is None:
        if input_time is not None:
            raise ValueError(
                "seed times ('input_time') were given but the sampling is not temporal: give 'time_attr' too"
            )
        return None
    if input_time is not None:
        times = time_tensor(as_cpu_tensor(input_time, "input_time"), "'input_time'")
        if times.numel() != nodes.numel():
            raise ValueError(f"'input_time' has {times.numel()} times for {nodes.numel()} seeds (want one per seed)")
        return times
    if level == "edge":
        raise ValueError(
            f"temporal sampling by edge time ('{time_attr}' is an edge attribute) needs the seeds' times: "
            "give 'input_time'"
        )
    if isinstance(data, Data):
        return time_tensor(data[time_attr], f"data.{time_attr}")[nodes]
    if isinstance(data, HeteroData):
        store = data[input_type]
        if time_attr not in store:
            raise ValueError(
                f"input node type '{input_type}' has no node time '{time_attr}': give 'input_time' for its seeds"
            )
        return time_tensor(store[time_attr], f"data['{input_type}'].{time_attr}")[nodes]
    raise ValueError(
        f"temporal sampling on a graphferry.{type(data).__name__} needs the seeds' times: give 'input_time'"
    )


def _weight_attr(weight_attr: Any) -> str | None:
    if weight_attr is not None and not isinstance(weight_attr, str):
        raise TypeError(f"'weight_attr' must name an edge attribute (got '{type(weight_attr).__name__}')")
    return weight_attr


def random_walk(
    edge_index: torch.Tensor,
    start: torch.Tensor,
    walk_length: int,
    p: float = 1.0,
    q: float = 1.0,
    num_nodes: int | None = None,
    return_edge_indices: bool = False,
    restart_prob: float = 0.0,
    seed: int | None = None,
):
    r"""Uniform random walks in the manner of ``torch_cluster.random_walk``
    (which PyG's ``Node2Vec`` uses), by graphferry's collective walk: from
    each node of ``start``, ``walk_length`` steps, each to a uniformly drawn
    target of the current node's out-edges (``edge_index[0]`` = source).

    Args:
        edge_index (Tensor): ``[2, E]`` edges, row 0 the sources.
        start (Tensor): start nodes.
        walk_length (int): steps per walk.
        p, q (float): node2vec's return and in-out parameters; only
            ``p = q = 1`` (unbiased walks) is supported.
        num_nodes (int, optional): number of nodes. (default: :obj:`None`,
            the largest id + 1)
        return_edge_indices (bool): also return the column of ``edge_index``
            taken by every step. (default: :obj:`False`)
        restart_prob (float): probability of jumping back to the start node
            at each step. (default: :obj:`0.0`)
        seed (int, optional): seed of the random streams. (default:
            :obj:`None`, drawn from torch's generator)

    Returns:
        ``node_seq`` int64 ``[len(start), walk_length + 1]`` (and, with
        ``return_edge_indices``, ``edge_seq`` ``[len(start), walk_length]``).
        A walk that reaches a node without out-edges stops: the rest of its
        row is ``-1`` (``torch_cluster`` repeats the node instead), and so are
        the edge entries of stopped walks and restarts.
    """
    if p != 1.0 or q != 1.0:
        raise NotImplementedError(
            f"graphferry.pyg.random_walk supports unbiased walks only (p = q = 1; got p={p}, q={q})"
        )
    edge_index = as_cpu_tensor(edge_index, "edge_index")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"'edge_index' must have shape [2, E] (got {list(edge_index.shape)})")
    node_seq, edge_seq = _cache.walk_reversed(
        edge_index,
        (_cache.tensor_signature(edge_index), num_nodes),
        lambda: (edge_index[0], edge_index[1], num_nodes, None),
        start,
        walk_length,
        biased=False,
        restart_prob=restart_prob,
        seed=seed,
    )
    return (node_seq, edge_seq) if return_edge_indices else node_seq


def _edge_index(sub: SampledSubgraph) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(row, col, edge): source and target as positions in ``sub.nodes``,
    hop after hop, and the original edge ids."""
    if not sub.blocks:
        empty = torch.empty(0, dtype=torch.int64)
        return empty, empty, empty
    row = torch.cat([b.indices for b in sub.blocks])
    col = torch.cat([b.dst_positions() for b in sub.blocks])
    edge = torch.cat([b.edge_ids for b in sub.blocks])
    return row, col, edge


SUBGRAPH_TYPES = ("directional", "bidirectional", "induced")


def _subgraph_type(subgraph_type: Any, directed: bool = True) -> str:
    value = getattr(subgraph_type, "value", subgraph_type)  # torch_geometric.sampler.SubgraphType
    if not isinstance(value, str) or value not in SUBGRAPH_TYPES:
        raise ValueError(f"'subgraph_type' must be one of {', '.join(SUBGRAPH_TYPES)} (got {subgraph_type!r})")
    if not directed:
        # As PyG: directed=False is the deprecated spelling of "induced".
        warnings.warn(
            "The usage of the 'directed' argument is deprecated. Use `subgraph_type='induced'` instead.",
            stacklevel=3,
        )
        value = "induced"
    return value


def _disjoint_options(disjoint: bool, temporal: str | None, temporal_strategy: str) -> dict[str, Any]:
    """The disjoint and temporal fields of :class:`SampleOptions` (left out
    when neither is asked for)."""
    if not disjoint:
        return {}
    fields: dict[str, Any] = {"disjoint": True}
    if temporal is not None:
        fields.update(temporal=temporal, temporal_strategy=temporal_strategy)
    return fields


def _disjoint_flag(disjoint: Any, subgraph_type: str) -> bool:
    disjoint = bool(disjoint)
    if disjoint and subgraph_type == "induced":
        # PyG refuses the combination too.
        raise ValueError("'disjoint' sampling is not supported together with subgraph_type='induced'")
    return disjoint


def _mix(seed: int, key: int) -> int:
    """A seed for the sub-stream ``key`` of ``seed`` (SplitMix64's finaliser)."""
    z = (seed + (key + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) & 0x7FFFFFFFFFFFFFFF


@dataclass
class _Output:
    """One sampled batch in PyG's terms (the fields of ``SamplerOutput``)."""

    node: torch.Tensor
    row: torch.Tensor
    col: torch.Tensor
    edge: torch.Tensor
    batch: torch.Tensor | None
    num_sampled_nodes: list[int] | None
    num_sampled_edges: list[int] | None
    # The engine's split by type and relation (samples of typed graphs).
    typed: TypedView | None = None


def _directional(sub: SampledSubgraph) -> _Output:
    """``sub`` in PyG's terms; a disjoint sample (the engine's: nodes hop by
    hop and within a hop seed by seed) brings its ``batch``."""
    row, col, edge = _edge_index(sub)
    return _Output(
        sub.nodes,
        row,
        col,
        edge,
        getattr(sub, "batch", None),
        sub.hop_counts.tolist(),
        [b.num_edges for b in sub.blocks],
        sub.typed,
    )


def _finish(out: _Output, graph: Graph, subgraph_type: str) -> _Output:
    """Applies ``subgraph_type`` to a directional sample, as PyG's
    ``NeighborSampler`` does: the counts per hop no longer apply to the
    other two kinds and become None."""
    if subgraph_type == "bidirectional":
        row, col, edge = to_bidirectional(
            row=out.row, col=out.col, rev_row=out.row, rev_col=out.col, edge_id=out.edge, rev_edge_id=out.edge
        )
        return _Output(out.node, row, col, edge, out.batch, None, None)
    if subgraph_type == "induced":
        row, col, edge = induced_subgraph(graph, out.node)
        return _Output(out.node, row, col, edge, out.batch, None, None)
    return out


def _sample(
    graph: Graph,
    seeds: torch.Tensor,
    options: SampleOptions,
    seed: int,
    subgraph_type: str,
    seed_times: torch.Tensor | None = None,
) -> _Output:
    """Samples around ``seeds`` in the caller's thread (disjoint and
    temporal as ``options`` say)."""
    changes: dict[str, Any] = {"seed": seed}
    if seed_times is not None:
        changes["seed_times"] = seed_times
    out = _directional(sample_with_options(graph, seeds, options.replace_fields(**changes)))
    return _finish(out, graph, subgraph_type)


def _split(hetero: HeteroGraph, out: _Output, subgraph_type: str) -> HeteroSamplerOutput:
    """A directional sample over the global ids of ``hetero`` as PyG's
    per-type output, made bidirectional or induced as PyG's heterogeneous
    sampler does (``bidirectional`` pairs an edge type with its reverse type,
    PyG's ``HeteroSamplerOutput.to_bidirectional``)."""
    if subgraph_type == "induced":
        out = _finish(out, hetero.graph, "induced")
    if out.typed is not None:  # split by the engine, in its threads
        split = split_typed(hetero, out.typed, batch=out.batch)
    else:  # induced edges: split here
        split = split_output(
            hetero,
            out.node,
            out.row,
            out.col,
            out.edge,
            batch=out.batch,
            hop_counts=out.num_sampled_nodes,
            edges_per_hop=out.num_sampled_edges,
        )
    return split.to_bidirectional() if subgraph_type == "bidirectional" else split


def _hetero_options(
    hetero: HeteroGraph,
    num_neighbors: Any,
    *,
    replace: bool,
    biased: bool,
    scheme: str,
    layer_without_replacement: bool,
    exclude_edges: Any,
    disjoint: bool,
    temporal: str | None,
    temporal_strategy: str,
    seed: int,
    num_threads: int = 0,
) -> SampleOptions:
    """The options of a heterogeneous sample: PyG's ``num_neighbors`` per
    relation (hops from the seeds), PyG's frontier."""
    relation_fanouts = hetero_fanouts(hetero, num_neighbors)
    if isinstance(exclude_edges, dict):  # {edge type: relation-local edge ids}
        parts = [hetero.edge_to_global(et, ids) for et, ids in exclude_edges.items()]
        exclude_edges = torch.cat(parts) if parts else None
    return SampleOptions(
        # Ignored by the engine with relation_fanouts; kept as the per-hop
        # maximum for whoever reads the options.
        tuple(-1 if -1 in hop else max(hop, default=0) for hop in relation_fanouts),
        relation_fanouts=relation_fanouts,
        replace=replace,
        frontier="new",
        scheme=scheme,
        biased=biased,
        layer_without_replacement=layer_without_replacement,
        exclude_edges=exclude_edges,
        disjoint=disjoint,
        temporal=temporal,
        temporal_strategy=temporal_strategy,
        seed=seed,
        num_threads=num_threads,
    )


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
    that type's ``edge_index``) or global edge ids.
    """

    def __new__(cls, data: Any = None, *args: Any, **kwargs: Any) -> Sampler:
        # A heterogeneous graph gets the heterogeneous sampler (a subclass).
        if cls is Sampler and _is_hetero(data):
            cls = _HeteroSampler
        return super().__new__(cls)

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
        self.data = data
        self.num_neighbors = _num_neighbors(num_neighbors)
        self._init_common(
            data, subgraph_type, directed, disjoint, replace, weight_attr, scheme, layer_without_replacement,
            exclude_edges, seed, time_attr, temporal_strategy,
        )  # fmt: skip
        # Validated once; each call replaces only the seed (and seed times).
        self._options = SampleOptions(
            self.num_neighbors,
            replace=self.replace,
            frontier="new",
            scheme=self.scheme,
            biased=self.weight_attr is not None,
            layer_without_replacement=self.layer_without_replacement,
            exclude_edges=exclude_edges,
            seed=self.seed,
            **_disjoint_options(self.disjoint, self._temporal, self.temporal_strategy),
        )
        if isinstance(data, Data):
            _check_node_rows(data)
        self._graph: Graph | None = as_graph(data, self.weight_attr, self.time_attr)

    def _init_common(
        self,
        data: Any,
        subgraph_type: Any,
        directed: bool,
        disjoint: bool,
        replace: bool,
        weight_attr: Any,
        scheme: str,
        layer_without_replacement: bool,
        exclude_edges: Any,
        seed: int | None,
        time_attr: Any,
        temporal_strategy: Any,
    ) -> None:
        self.subgraph_type = _subgraph_type(subgraph_type, directed)
        self.time_attr = time_attr
        self._temporal = _time_level(data, time_attr)
        self.temporal_strategy = _temporal_strategy(temporal_strategy)
        # Temporal sampling is disjoint, as PyG's NeighborSampler makes it.
        self.disjoint = _disjoint_flag(bool(disjoint) or self._temporal is not None, self.subgraph_type)
        self.replace = bool(replace)
        self.weight_attr = _weight_attr(weight_attr)
        self.scheme = check_scheme(scheme)
        self.layer_without_replacement = bool(layer_without_replacement)
        self.exclude_edges = exclude_edges
        self.seed = random_seed() if seed is None else int(seed)
        self._calls = 0

    def _next_seed(self) -> int:
        # Each call gets its own random streams, reproducible from `seed`.
        self._calls += 1
        return _mix(self.seed, self._calls)  # as NeighborLoader.__call__

    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs: Any) -> SamplerOutput:
        if index.input_type is not None:
            raise ValueError(
                f"this graphferry.pyg.Sampler was made for a homogeneous graph (got input_type='{index.input_type}'); "
                "give it a HeteroData for (node type, ids) input nodes"
            )
        if self._graph is None:  # after unpickling
            self._graph = as_graph(self.data, self.weight_attr, self.time_attr)
        seeds = as_cpu_tensor(index.node, "index.node").to(torch.int64)
        times = _seed_times(self.data, self._temporal, self.time_attr, index.time, seeds)
        out = _sample(self._graph, seeds, self._options, self._next_seed(), self.subgraph_type, times)
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

    def sample_from_edges(self, index: Any, neg_sampling: Any = None) -> SamplerOutput:
        raise NotImplementedError("graphferry.pyg.Sampler samples from nodes only")

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_graph"] = None  # a handle into this process's engine
        return state


class _HeteroSampler(Sampler):
    """:class:`Sampler` over a ``HeteroData`` or
    :class:`graphferry.HeteroGraph` (``Sampler(hetero_data, ...)`` makes
    one): :meth:`sample_from_nodes` takes ``(node type, ids)`` seeds and
    returns PyG's ``HeteroSamplerOutput``."""

    def __init__(
        self,
        data: Any,
        num_neighbors: Any,
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
        self.data = data
        self.num_neighbors = num_neighbors
        self._init_common(
            data, subgraph_type, directed, disjoint, replace, weight_attr, scheme, layer_without_replacement,
            exclude_edges, seed, time_attr, temporal_strategy,
        )  # fmt: skip
        self._hetero: HeteroGraph | None = as_hetero_graph(data, self.weight_attr, self.time_attr)
        self._options = _hetero_options(
            self._hetero,
            num_neighbors,
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
        self._graph = self._hetero.graph

    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs: Any) -> HeteroSamplerOutput:
        if self._hetero is None:  # after unpickling
            self._hetero = as_hetero_graph(self.data, self.weight_attr, self.time_attr)
            self._graph = self._hetero.graph
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
        times = _seed_times(self.data, self._temporal, self.time_attr, index.time, local, index.input_type)
        out = _sample(hetero.graph, seeds, self._options, self._next_seed(), "directional", times)
        split = _split(hetero, out, self.subgraph_type)
        split.metadata = (index.input_id, index.time)
        return split

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_hetero"] = None
        return state


class NeighborLoader(EngineLoader):
    r"""A ``torch_geometric.loader.NeighborLoader`` backed by the graphferry
    engine's pipeline (sampling and feature gathering on its own threads).

    Yields ``torch_geometric.data.Data`` with the fields PyG's loader gives:
    every node-level attribute (``x``, ``y``, masks, NumPy arrays, ...)
    gathered for all sampled nodes, edge-level attributes indexed by
    ``e_id``, ``edge_index`` (local ids, row = source, col = target),
    ``n_id``, ``e_id``, ``batch_size``, ``num_sampled_nodes`` and
    ``num_sampled_edges`` (lists, per hop), ``input_id``, and with
    ``disjoint=True`` ``batch``. The seeds are the first ``batch_size``
    nodes. Like PyG's loaders, ``loader(index)`` samples one batch from the
    seeds at positions ``index`` of ``input_nodes``.

    Args:
        data (torch_geometric.data.Data, graphferry.Graph or tuple): the
            graph; a ``Data`` is converted once and cached. Or, as PyG's
            remote backends, a ``(FeatureStore, GraphStore)`` pair: the
            graph of the ``GraphStore`` is sampled (a :class:`GraphStore`
            directly, any other converted once) and the node features are
            read from the ``FeatureStore``; ``input_nodes`` is then needed
            as in PyG (here, None means every node).
        num_neighbors (list of int): neighbours per hop from the seeds.
        input_nodes (Tensor, optional): seed node ids, or a bool mask.
            (default: :obj:`None`, all nodes)
        batch_size (int): seeds per batch. (default: :obj:`1`)
        shuffle (bool): reshuffle the seeds every epoch. (default: :obj:`False`)
        drop_last (bool): drop the last, smaller batch. (default: :obj:`False`)
        replace (bool): sample with replacement. (default: :obj:`False`)
        subgraph_type (str): ``"directional"``, ``"bidirectional"`` or
            ``"induced"``, as in :class:`Sampler`. (default:
            :obj:`"directional"`)
        disjoint (bool): each seed its own subgraph, as in :class:`Sampler`
            (a seed may repeat in ``input_nodes``). (default: :obj:`False`)
        directed (bool): PyG's deprecated spelling: ``False`` is
            ``subgraph_type="induced"``. (default: :obj:`True`)
        time_attr (str, optional): temporal sampling, as in :class:`Sampler`:
            the node or edge attribute of ``data`` holding integer times.
            Makes the sampling disjoint. (default: :obj:`None`)
        input_time (Tensor, optional): the time of each seed of
            ``input_nodes`` (one per seed, in their order); by default each
            seed's own node time (needed with edge times). The batch's
            ``seed_time`` holds them, as in PyG. (default: :obj:`None`)
        temporal_strategy (str): ``"uniform"`` or ``"last"``, as in
            :class:`Sampler`. (default: :obj:`"uniform"`)
        weight_attr (str, optional): the edge attribute of ``data`` holding
            edge weights, for biased sampling, as in :class:`Sampler`.
            (default: :obj:`None`)
        scheme (str): ``"node"`` (node-wise, PyG's) or ``"layer"``
            (layer-wise, DSP Eq. 2: ``num_neighbors[h]`` is the budget of the
            whole hop). (default: :obj:`"node"`)
        layer_without_replacement (bool): with ``scheme="layer"``, draw
            distinct frontier nodes. (default: :obj:`False`)
        exclude_edges (Tensor, optional): edge ids (columns of
            ``edge_index``) never sampled. (default: :obj:`None`)
        seed (int, optional): seed of shuffling and sampling.
            (default: :obj:`None`, drawn from torch's generator)
        num_workers (int): must be 0: graphferry samples on its own threads.
            (default: :obj:`0`)
        queue_capacity (int): batches buffered per pipeline stage.
            (default: :obj:`2`)
        num_threads (int): the engine's sampling threads; ``<= 0`` uses every
            core. (default: :obj:`0`)

    With a ``HeteroData`` (or a :class:`graphferry.HeteroGraph`) as
    ``data`` it yields ``HeteroData`` batches as PyG's heterogeneous
    ``NeighborLoader`` does: per node type every node attribute gathered,
    ``n_id`` and ``num_sampled_nodes`` (per hop), per edge type
    ``edge_index`` (row: positions among the source type's nodes, col: among
    the destination type's), edge attributes, ``e_id`` and
    ``num_sampled_edges``, and on the input type ``input_id``,
    ``batch_size`` (and ``seed_time``); ``batch`` per node type when
    disjoint. Then ``num_neighbors`` is a list (every edge type) or a dict
    of edge type -> list (every edge type given), ``input_nodes`` a node
    type or ``(node_type, ids or bool mask)``, ``time_attr`` may name node
    attributes of several node types (types without it are never filtered
    out) or edge attributes, and ``exclude_edges`` is a dict of edge type
    -> edge ids of that type (or global ids).
    """

    def __new__(cls, data: Any = None, *args: Any, **kwargs: Any) -> NeighborLoader:
        if cls is NeighborLoader and _is_hetero(data):
            cls = _HeteroNeighborLoader
        return super().__new__(cls)

    def __init__(
        self,
        data: Any,
        num_neighbors: Sequence[int],
        *,
        input_nodes: Any = None,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        replace: bool = False,
        subgraph_type: Any = "directional",
        disjoint: bool = False,
        directed: bool = True,
        weight_attr: str | None = None,
        scheme: str = "node",
        layer_without_replacement: bool = False,
        exclude_edges: Any = None,
        seed: int | None = None,
        num_workers: int = 0,
        queue_capacity: int = 2,
        num_threads: int = 0,
        time_attr: str | None = None,
        input_time: Any = None,
        temporal_strategy: str = "uniform",
    ):
        self._loaders = []
        refuse_workers(num_workers)
        self.data = data
        self.num_neighbors = _num_neighbors(num_neighbors)
        self.subgraph_type = _subgraph_type(subgraph_type, directed)
        if input_time is not None and time_attr is None:
            raise ValueError("'input_time' is given but 'time_attr' is not: temporal sampling needs both")
        if isinstance(data, tuple) and time_attr is not None:
            raise ValueError("'time_attr' needs a Data (or a graphferry.Graph); not a (FeatureStore, GraphStore) pair")
        self.time_attr = time_attr
        self._temporal = _time_level(data, time_attr)
        self.temporal_strategy = _temporal_strategy(temporal_strategy)
        self.disjoint = _disjoint_flag(bool(disjoint) or self._temporal is not None, self.subgraph_type)
        self.batch_size = batch_size
        self.weight_attr = _weight_attr(weight_attr)
        self._stores: tuple[FeatureStore, Any] | None = None
        self._edge_perm: torch.Tensor | None = None
        self._node_attrs: list[str] = []
        self._other_node_attrs: list[str] = []
        self._graph_node_data: dict[str, torch.Tensor] = {}
        if isinstance(data, tuple):
            graph = self._open_stores(data)
            index_of: Any = data
            if input_nodes is None:
                input_nodes = torch.arange(graph.num_nodes)
        else:
            if isinstance(data, Data):
                _check_node_rows(data)
            graph = as_graph(data, self.weight_attr, self.time_attr)
            if isinstance(data, Data):
                self._node_attrs = pyg_node_attrs(data)
                # Node attributes the engine does not hold (e.g. NumPy
                # arrays, memory maps): indexed per batch, as PyG's
                # filter_node_store_ indexes them.
                self._other_node_attrs = [
                    key
                    for key in data.keys()
                    if key not in self._node_attrs and (key == "num_nodes" or data._store.is_node_attr(key))
                ]
            else:
                self._node_attrs = graph.node_data_names()
            index_of = data if isinstance(data, Data) else Data(num_nodes=graph.num_nodes)
        # Seeds and input_id as PyG's own loaders make them (None: all nodes;
        # a bool mask: its nonzero ids, input_id the node ids; ids: input_id
        # the positions, left None here).
        if input_nodes is not None and not isinstance(input_nodes, torch.Tensor):
            input_nodes = as_cpu_tensor(input_nodes, "input_nodes")
        _, seeds, self._input_id = get_input_nodes(index_of, input_nodes)[:3]
        self._input_time = (
            None if input_time is None else time_tensor(as_cpu_tensor(input_time, "input_time"), "'input_time'")
        )
        seed_times = _seed_times(data, self._temporal, time_attr, self._input_time, seeds)
        self._seed_times = seed_times
        self._seed = random_seed() if seed is None else int(seed)
        self._calls = 0
        options = SampleOptions(
            self.num_neighbors,
            replace=replace,
            frontier="new",
            scheme=scheme,
            biased=self.weight_attr is not None,
            layer_without_replacement=layer_without_replacement,
            exclude_edges=exclude_edges,
            seed=self._seed,
            num_threads=num_threads,
            **_disjoint_options(self.disjoint, self._temporal, self.temporal_strategy),
        )
        self._open_engine(
            graph,
            seeds,
            options,
            batch_size=batch_size,
            shuffle=shuffle,
            drop_last=drop_last,
            queue_capacity=queue_capacity,
            # With stores, features come from the FeatureStore.
            feature_names=self._node_attrs if self._stores is None else (),
            seed_times=seed_times,
        )

    def _open_stores(self, data: tuple) -> Graph:
        if len(data) != 2:
            raise TypeError(f"expected a (FeatureStore, GraphStore) pair (got a tuple of {len(data)})")
        feature_store, graph_store = data
        if not isinstance(feature_store, FeatureStore):
            raise TypeError(
                f"expected a 'torch_geometric.data.FeatureStore' first (got '{type(feature_store).__name__}')"
            )
        if not isinstance(graph_store, torch_geometric.data.GraphStore):
            raise TypeError(f"expected a 'torch_geometric.data.GraphStore' second (got '{type(graph_store).__name__}')")
        if self.weight_attr is not None:
            raise ValueError("'weight_attr' needs a Data; with a GraphStore, set weights on its graph")
        self._stores = (feature_store, graph_store)
        if isinstance(graph_store, GraphStore):
            return graph_store.graph
        graph, self._edge_perm = _graph_of_store(graph_store)
        return graph

    def _next_seed(self) -> int:
        self._calls += 1
        return _mix(self._seed, self._calls)

    def _batch_index(self, index: Any) -> torch.Tensor:
        self._check_open()
        if not isinstance(index, torch.Tensor):
            index = torch.tensor(index, dtype=torch.long)
        return index

    def _seed_time_of(self, positions: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(the times the engine samples with, the batch's ``seed_time`` as
        PyG sets it: ``input_time`` when given, else None)."""
        times = self._seed_times[positions] if self._seed_times is not None else None
        given = self._input_time[positions] if self._input_time is not None else None
        return times, given

    def __call__(self, index: Any) -> Data:
        """Samples one batch from the seeds at positions ``index`` of
        ``input_nodes`` (as PyG's ``NodeLoader.__call__``), in the caller's
        thread."""
        index = self._batch_index(index)
        seeds = self._seeds[index]
        input_id = self._input_id[index] if self._input_id is not None else index
        times, given = self._seed_time_of(index)
        out = _sample(self._graph, seeds, self._options, self._next_seed(), self.subgraph_type, times)
        return self._build(out, {}, input_id, given)

    def _convert(self, sub: SampledSubgraph) -> Data:
        out = _finish(_directional(sub), self._graph, self.subgraph_type)
        positions = sub.input_index
        input_id = self._input_id[positions] if self._input_id is not None else positions
        return self._build(out, sub.node_data, input_id, self._seed_time_of(positions)[1])

    def _node_data_of_graph(self, name: str) -> torch.Tensor:
        # Read once: gathering in this thread needs the whole column.
        if name not in self._graph_node_data:
            self._graph_node_data[name] = self._graph.get_node_data(name)
        return self._graph_node_data[name]

    def _build(
        self,
        out: _Output,
        node_data: dict[str, torch.Tensor],
        input_id: torch.Tensor,
        seed_time: torch.Tensor | None = None,
    ) -> Data:
        """The ``Data`` PyG's ``NodeLoader.filter_fn`` makes of ``out``; node
        data the engine gathered is taken as it is."""
        node, row, col, edge = out.node, out.row, out.col, out.edge
        source = self.data
        if self._stores is not None:
            data = filter_custom_store(*self._stores, node, row, col, edge)
            if self._edge_perm is not None:
                edge = self._edge_perm[edge]
        elif isinstance(source, Data):
            # PyG's filter_data, except that the node attributes the engine
            # gathered are taken as they are rather than gathered again.
            data = copy.copy(source)
            for key in self._node_attrs + self._other_node_attrs:
                if key in node_data:
                    data[key] = node_data[key]
                elif key == "num_nodes":
                    data.num_nodes = node.numel()
                else:
                    value = source[key]
                    data[key] = index_select(value, node, dim=source.__cat_dim__(key, value))
            filter_edge_store_(source._store, data._store, row, col, edge)
        else:
            data = Data(num_nodes=node.numel())
            for key in self._node_attrs:
                data[key] = node_data[key] if key in node_data else self._node_data_of_graph(key)[node]
            # As PyG's filter_edge_store_: the targets (col) are sorted.
            data.edge_index = EdgeIndex(torch.stack([row, col]), sparse_size=data.size(), sort_order="col")
        data.n_id = node
        data.e_id = edge
        data.batch = out.batch  # None (no disjoint) removes it, as in PyG
        data.num_sampled_nodes = out.num_sampled_nodes
        data.num_sampled_edges = out.num_sampled_edges
        data.input_id = input_id
        data.seed_time = seed_time  # None (no input_time) removes it, as in PyG
        data.batch_size = int(input_id.numel())
        return data

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class _HeteroNeighborLoader(NeighborLoader):
    """:class:`NeighborLoader` over a ``HeteroData`` or
    :class:`graphferry.HeteroGraph` (``NeighborLoader(hetero_data, ...)``
    makes one): ``HeteroData`` batches."""

    def __init__(
        self,
        data: Any,
        num_neighbors: Any,
        *,
        input_nodes: Any = None,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        replace: bool = False,
        subgraph_type: Any = "directional",
        disjoint: bool = False,
        directed: bool = True,
        weight_attr: str | None = None,
        scheme: str = "node",
        layer_without_replacement: bool = False,
        exclude_edges: Any = None,
        seed: int | None = None,
        num_workers: int = 0,
        queue_capacity: int = 2,
        num_threads: int = 0,
        time_attr: str | None = None,
        input_time: Any = None,
        temporal_strategy: str = "uniform",
    ):
        self._loaders = []
        refuse_workers(num_workers)
        self.data = data
        self.num_neighbors = num_neighbors
        self.subgraph_type = _subgraph_type(subgraph_type, directed)
        if input_time is not None and time_attr is None:
            raise ValueError("'input_time' is given but 'time_attr' is not: temporal sampling needs both")
        self.time_attr = time_attr
        self._temporal = _time_level(data, time_attr)
        self.temporal_strategy = _temporal_strategy(temporal_strategy)
        self.disjoint = _disjoint_flag(bool(disjoint) or self._temporal is not None, self.subgraph_type)
        self.batch_size = batch_size
        self.weight_attr = _weight_attr(weight_attr)
        hetero = self._hetero = as_hetero_graph(data, self.weight_attr, self.time_attr)
        self._input_type, local, self._input_id = input_nodes_of(hetero, input_nodes)
        self._input_time = (
            None if input_time is None else time_tensor(as_cpu_tensor(input_time, "input_time"), "'input_time'")
        )
        self._seed_times = _seed_times(data, self._temporal, time_attr, self._input_time, local, self._input_type)
        self._seed = random_seed() if seed is None else int(seed)
        self._calls = 0
        options = _hetero_options(
            hetero,
            num_neighbors,
            replace=replace,
            biased=self.weight_attr is not None,
            scheme=scheme,
            layer_without_replacement=layer_without_replacement,
            exclude_edges=exclude_edges,
            disjoint=self.disjoint,
            temporal=self._temporal,
            temporal_strategy=self.temporal_strategy,
            seed=self._seed,
            num_threads=num_threads,
        )
        self._open_engine(
            hetero.graph,
            hetero.to_global(self._input_type, local),
            options,
            batch_size=batch_size,
            shuffle=shuffle,
            drop_last=drop_last,
            queue_capacity=queue_capacity,
            seed_times=self._seed_times,
        )

    def __call__(self, index: Any) -> HeteroData:
        """Samples one batch from the seeds at positions ``index`` of
        ``input_nodes``, in the caller's thread."""
        index = self._batch_index(index)
        seeds = self._seeds[index]
        input_id = self._input_id[index] if self._input_id is not None else index
        times, given = self._seed_time_of(index)
        out = _sample(self._graph, seeds, self._options, self._next_seed(), "directional", times)
        return self._build_hetero(out, input_id, given)

    def _convert(self, sub: SampledSubgraph) -> HeteroData:
        positions = sub.input_index
        input_id = self._input_id[positions] if self._input_id is not None else positions
        return self._build_hetero(_directional(sub), input_id, self._seed_time_of(positions)[1])

    def _build_hetero(self, out: _Output, input_id: torch.Tensor, seed_time: torch.Tensor | None) -> HeteroData:
        split = _split(self._hetero, out, self.subgraph_type)
        return build_batch(self.data, self._hetero, split, self._input_type, input_id, seed_time)


def _check_node_rows(data: Data) -> None:
    """A ``Data`` whose ``x`` (or ``pos``) does not hold one row per node is
    an error: PyG would take it for a graph-level attribute and copy it
    whole into every batch."""
    num_nodes = data.num_nodes
    for key in ("x", "pos"):
        value = getattr(data, key, None)
        if isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim >= 1:
            rows = value.shape[data.__cat_dim__(key, value)]
            if rows != num_nodes:
                raise ValueError(
                    f"Data attribute '{key}' has {rows} rows but the graph has {num_nodes} nodes "
                    "(want one row per node)"
                )


def _graph_of_store(graph_store: Any) -> tuple[Graph, torch.Tensor | None]:
    """A graphferry graph of a homogeneous PyG ``GraphStore``, and the
    permutation from its COO order to the store's edge order (None: the
    same), which PyG applies to ``e_id``."""
    attrs = graph_store.get_all_edge_attrs()
    if len(attrs) != 1 or attrs[0].edge_type is not None:
        raise TypeError(
            "graphferry supports homogeneous graphs only "
            f"(the GraphStore has edge types {[a.edge_type for a in attrs]})"
        )
    row, col, perm = graph_store.coo()  # tensors for a homogeneous store
    if isinstance(row, dict):
        ((row, col, perm),) = zip(row.values(), col.values(), perm.values())
    size = attrs[0].size
    num_nodes = max(size) if size is not None and None not in size else None
    return Graph.from_coo(row, col, num_nodes=num_nodes), perm


class GraphStore(torch_geometric.data.GraphStore):
    r"""A ``torch_geometric.data.GraphStore`` over a graphferry graph, for
    PyG's remote-backend interface: ``NeighborLoader((feature_store,
    graphferry.pyg.GraphStore(graph)), ...)`` samples with the engine and
    reads features from any ``FeatureStore``.

    It holds one homogeneous edge set (``edge_type=None``), edge ``i``
    having id ``i``. ``put_edge_index`` replaces the graph (COO, CSR or CSC);
    ``get_edge_index`` reads it back from the engine in any layout.

    Args:
        graph (graphferry.Graph or torch_geometric.data.Data, optional):
            the graph (a ``Data`` is converted and cached).
            (default: :obj:`None`, put one with ``put_edge_index``)
    """

    def __init__(self, graph: Any = None):
        super().__init__()
        self._graph: Graph | None = None if graph is None else as_graph(graph)

    @property
    def graph(self) -> Graph:
        """The graph held."""
        if self._graph is None:
            raise ValueError("this GraphStore holds no graph yet: call put_edge_index first")
        return self._graph

    @staticmethod
    def _check_type(edge_attr: EdgeAttr) -> None:
        if edge_attr.edge_type is not None:
            raise ValueError(
                f"graphferry supports homogeneous graphs only (got edge_type={edge_attr.edge_type!r}; use None)"
            )

    def _put_edge_index(self, edge_index: Any, edge_attr: EdgeAttr) -> bool:
        self._check_type(edge_attr)
        layout = getattr(edge_attr.layout, "value", edge_attr.layout)
        size = edge_attr.size
        num_nodes = max(size) if size is not None and None not in size else None
        first, second = edge_index
        if layout == "coo":
            self._graph = Graph.from_coo(first, second, num_nodes=num_nodes)
        elif layout == "csc":  # (row, colptr)
            self._graph = Graph.from_csc(second, first)
        elif layout == "csr":  # (rowptr, col)
            self._graph = Graph.from_csr(first, second)
        else:
            raise ValueError(f"unknown edge layout {edge_attr.layout!r}")
        return True

    def _get_edge_index(self, edge_attr: EdgeAttr) -> Any:
        self._check_type(edge_attr)
        if self._graph is None:
            return None
        graph = self._graph
        src, dst, eid = induced_subgraph(graph, torch.arange(graph.num_nodes))  # every edge, by target
        layout = getattr(edge_attr.layout, "value", edge_attr.layout)
        if layout == "coo":
            order = torch.argsort(eid)
            return src[order], dst[order]
        if layout == "csc":
            colptr = torch.zeros(graph.num_nodes + 1, dtype=torch.int64)
            torch.cumsum(torch.bincount(dst, minlength=graph.num_nodes), 0, out=colptr[1:])
            return src, colptr
        if layout == "csr":
            order = torch.argsort(src, stable=True)
            rowptr = torch.zeros(graph.num_nodes + 1, dtype=torch.int64)
            torch.cumsum(torch.bincount(src, minlength=graph.num_nodes), 0, out=rowptr[1:])
            return rowptr, dst[order]
        raise ValueError(f"unknown edge layout {edge_attr.layout!r}")

    def _remove_edge_index(self, edge_attr: EdgeAttr) -> bool:
        self._check_type(edge_attr)
        if self._graph is None:
            return False
        self._graph = None
        return True

    def get_all_edge_attrs(self) -> list[EdgeAttr]:
        if self._graph is None:
            return []
        n = self._graph.num_nodes
        return [EdgeAttr(edge_type=None, layout="coo", is_sorted=False, size=(n, n))]


from .pyg_link import LinkNeighborLoader  # noqa: E402  (edge-level loading, link prediction)

__all__ += ["LinkNeighborLoader"]

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
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from torch_geometric.data import Data
from torch_geometric.edge_index import EdgeIndex
from torch_geometric.loader.utils import filter_edge_store_, get_input_nodes, index_select
from torch_geometric.sampler import BaseSampler, NodeSamplerInput, SamplerOutput

from . import _cache, _loader
from ._dlpack import as_cpu_tensor
from ._loader import EngineLoader, refuse_workers
from ._options import SampleOptions, check_scheme, fanout_values
from .graph import Graph, pyg_node_attrs
from .sampling import SampledSubgraph, random_seed, sample_with_options

__all__ = ["Sampler", "NeighborLoader", "as_graph", "random_walk"]


def _pyg_signature(data: Data, weight_attr: str | None = None) -> Any:
    weights = getattr(data, weight_attr, None) if weight_attr is not None else None
    return (
        data.num_nodes,
        _cache.tensor_signature(data.edge_index),
        tuple((name, _cache.tensor_signature(data[name])) for name in pyg_node_attrs(data)),
        (weight_attr, _cache.tensor_signature(weights)) if isinstance(weights, torch.Tensor) else None,
    )


def as_graph(data: Any, weight_attr: str | None = None) -> Graph:
    """``data`` if it is a :class:`graphferry.Graph`, else the (cached)
    conversion of a ``torch_geometric.data.Data``, with the edge weights of
    ``data[weight_attr]`` when ``weight_attr`` is given."""
    if isinstance(data, Data) and weight_attr is not None:
        if not isinstance(getattr(data, weight_attr, None), torch.Tensor):
            raise KeyError(
                f"'weight_attr': the Data has no tensor attribute '{weight_attr}' (it has {sorted(data.keys())})"
            )
    return _loader.as_graph(
        data,
        Data,
        "torch_geometric.data.Data",
        lambda: _pyg_signature(data, weight_attr),
        lambda: Graph.from_pyg(data, edge_weights=weight_attr),
    )


def _num_neighbors(num_neighbors: Any) -> list[int]:
    values = getattr(num_neighbors, "values", num_neighbors)  # torch_geometric NumNeighbors
    if isinstance(values, dict):
        raise TypeError("graphferry supports homogeneous graphs only (got per-edge-type num_neighbors)")
    return list(fanout_values(values, "num_neighbors"))


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
    node_seq, edge_seq = _loader.walk_reversed(
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
    ):
        self.data = data
        self.num_neighbors = _num_neighbors(num_neighbors)
        self.replace = bool(replace)
        self.weight_attr = _weight_attr(weight_attr)
        self.scheme = check_scheme(scheme)
        self.layer_without_replacement = bool(layer_without_replacement)
        self.exclude_edges = exclude_edges
        self.seed = random_seed() if seed is None else int(seed)
        # Validated once; each call replaces only the seed.
        self._options = SampleOptions(
            self.num_neighbors,
            replace=self.replace,
            frontier="new",
            scheme=self.scheme,
            biased=self.weight_attr is not None,
            layer_without_replacement=self.layer_without_replacement,
            exclude_edges=exclude_edges,
            seed=self.seed,
        )
        self._calls = 0
        self._graph: Graph | None = as_graph(data, self.weight_attr)

    def _next_seed(self) -> int:
        # Each call gets its own random streams, reproducible from `seed`.
        self._calls += 1
        return (self.seed + self._calls * 0x9E3779B97F4A7C15) & 0x7FFFFFFFFFFFFFFF

    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs: Any) -> SamplerOutput:
        if index.input_type is not None:
            raise ValueError(f"graphferry samples homogeneous graphs only (got input_type='{index.input_type}')")
        if index.time is not None:
            raise ValueError("graphferry does not support temporal sampling (got seed times)")
        if self._graph is None:  # after unpickling
            self._graph = as_graph(self.data, self.weight_attr)
        sub = sample_with_options(self._graph, index.node, self._options.replace_fields(seed=self._next_seed()))
        row, col, edge = _edge_index(sub)
        return SamplerOutput(
            node=sub.nodes,
            row=row,
            col=col,
            edge=edge,
            batch=None,
            num_sampled_nodes=sub.hop_counts.tolist(),
            num_sampled_edges=[b.num_edges for b in sub.blocks],
            metadata=(index.input_id, index.time),
        )

    def sample_from_edges(self, index: Any, neg_sampling: Any = None) -> SamplerOutput:
        raise NotImplementedError("graphferry.pyg.Sampler samples from nodes only")

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_graph"] = None  # a handle into this process's engine
        return state


class NeighborLoader(EngineLoader):
    r"""A ``torch_geometric.loader.NeighborLoader`` backed by the graphferry
    engine's pipeline (sampling and feature gathering on its own threads).

    Yields ``torch_geometric.data.Data`` with the fields PyG's loader gives:
    every node-level attribute (``x``, ``y``, masks, ...) gathered for all
    sampled nodes, edge-level attributes indexed by ``e_id``, ``edge_index``
    (local ids, row = source, col = target), ``n_id``, ``e_id``,
    ``batch_size``, ``num_sampled_nodes`` and ``num_sampled_edges`` (lists,
    per hop), ``input_id``. The seeds are the first ``batch_size`` nodes.

    Args:
        data (torch_geometric.data.Data or graphferry.Graph): the graph; a
            ``Data`` is converted once and cached.
        num_neighbors (list of int): neighbours per hop from the seeds.
        input_nodes (Tensor, optional): seed node ids, or a bool mask.
            (default: :obj:`None`, all nodes)
        batch_size (int): seeds per batch. (default: :obj:`1`)
        shuffle (bool): reshuffle the seeds every epoch. (default: :obj:`False`)
        drop_last (bool): drop the last, smaller batch. (default: :obj:`False`)
        replace (bool): sample with replacement. (default: :obj:`False`)
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
    """

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
        weight_attr: str | None = None,
        scheme: str = "node",
        layer_without_replacement: bool = False,
        exclude_edges: Any = None,
        seed: int | None = None,
        num_workers: int = 0,
        queue_capacity: int = 2,
        num_threads: int = 0,
    ):
        self._loaders = []
        refuse_workers(num_workers)
        self.data = data
        self.num_neighbors = _num_neighbors(num_neighbors)
        self.batch_size = batch_size
        self.weight_attr = _weight_attr(weight_attr)
        graph = as_graph(data, self.weight_attr)
        if isinstance(data, Data):
            self._node_attrs = pyg_node_attrs(data)
            # Node attributes the engine does not hold (e.g. NumPy arrays):
            # indexed per batch, as PyG's filter_node_store_ indexes them.
            self._other_node_attrs = [
                key
                for key in data.keys()
                if key not in self._node_attrs and (key == "num_nodes" or data._store.is_node_attr(key))
            ]
        else:
            self._node_attrs = graph.node_data_names()
            self._other_node_attrs = []
        # Seeds and input_id as PyG's own loaders make them (None: all nodes;
        # a bool mask: its nonzero ids, input_id the node ids; ids: input_id
        # the positions, left None here).
        index_of = data if isinstance(data, Data) else Data(num_nodes=graph.num_nodes)
        if input_nodes is not None and not isinstance(input_nodes, torch.Tensor):
            input_nodes = as_cpu_tensor(input_nodes, "input_nodes")
        _, seeds, self._input_id = get_input_nodes(index_of, input_nodes)[:3]
        self._seeds = seeds
        options = SampleOptions(
            self.num_neighbors,
            replace=replace,
            frontier="new",
            scheme=scheme,
            biased=self.weight_attr is not None,
            layer_without_replacement=layer_without_replacement,
            exclude_edges=exclude_edges,
            seed=random_seed() if seed is None else seed,
            num_threads=num_threads,
        )
        self._open_engine(
            graph,
            seeds,
            options,
            batch_size=batch_size,
            shuffle=shuffle,
            drop_last=drop_last,
            queue_capacity=queue_capacity,
            feature_names=self._node_attrs,
        )

    def _convert(self, sub: SampledSubgraph) -> Data:
        row, col, edge = _edge_index(sub)
        node = sub.nodes
        source = self.data if isinstance(self.data, Data) else None
        if source is None:
            out = Data(num_nodes=node.numel())
            for key, value in sub.node_data.items():
                out[key] = value
            # As PyG's filter_edge_store_: hops follow each other and each
            # hop is CSC, so the targets (col) are sorted.
            out.edge_index = EdgeIndex(torch.stack([row, col]), sparse_size=out.size(), sort_order="col")
        else:
            # PyG's filter_data, except that the node attributes the engine
            # gathered are taken as they are rather than gathered again.
            out = copy.copy(source)
            for key, value in sub.node_data.items():
                out[key] = value
            for key in self._other_node_attrs:
                if key == "num_nodes":
                    out.num_nodes = node.numel()
                    continue
                value = source[key]
                out[key] = index_select(value, node, dim=source.__cat_dim__(key, value))
            filter_edge_store_(source._store, out._store, row, col, edge)
        out.n_id = node
        out.e_id = edge
        out.num_sampled_nodes = sub.hop_counts.tolist()
        out.num_sampled_edges = [b.num_edges for b in sub.blocks]
        positions = sub.input_index
        out.input_id = self._input_id[positions] if self._input_id is not None else positions
        out.batch_size = sub.batch_size
        return out

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


from .pyg_link import LinkNeighborLoader  # noqa: E402  (edge-level loading, link prediction)

__all__ += ["LinkNeighborLoader"]

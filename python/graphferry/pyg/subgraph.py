"""What graphferry's PyG subgraph loaders (:mod:`.shadow`,
:mod:`.graph_saint`, :mod:`.cluster`) share: the ``Data``'s checked
``edge_index``, and :class:`HeldAttributes`: which of a ``Data``'s
attributes the engine's subgraph loader gathers on its threads."""

from __future__ import annotations

from typing import Any

import torch
from torch_geometric.data import Data

from .. import _cache
from .._loader import sync_edge_data
from ..graph import Graph

__all__ = ["check_edge_index", "HeldAttributes"]


class HeldAttributes:
    """The tensor attributes of a ``Data`` with one row per node or per
    edge, and those of them the engine graph (the ``Data`` converted as
    PyG's ``NeighborLoader`` converts it: its node attributes are node
    data) gathers for a subgraph loader's batches: node attributes it
    holds, edge attributes handed to it (:func:`sync_edge_data`). A batch
    takes the engine's rows while the ``Data`` holds the same tensors, and
    indexes the attribute itself otherwise (replaced since, or a dtype the
    engine does not carry)."""

    def __init__(self, data: Any, graph: Graph, num_nodes: int, num_edges: int):
        self.data, self.num_nodes, self.num_edges = data, num_nodes, num_edges
        held = set(graph.node_data_names())
        self.node_names = [key for key, _ in self.attrs(num_nodes) if key in held]
        self.edge_names = sync_edge_data(graph, dict(self.attrs(num_edges)))
        self._signatures = {key: _cache.tensor_signature(data[key]) for key in self.edge_names}

    def attrs(self, rows: int) -> list[tuple[str, torch.Tensor]]:
        """The ``Data``'s tensor attributes with ``rows`` rows (but the
        topology)."""
        return [
            (key, item)
            for key, item in self.data
            if key not in ("edge_index", "num_nodes")
            and isinstance(item, torch.Tensor)
            and item.dim() > 0
            and item.size(0) == rows
        ]

    def replaced(self) -> bool:
        """Whether an edge attribute handed to the engine was replaced."""
        return any(_cache.tensor_signature(self.data[k]) != sig for k, sig in self._signatures.items())

    def rows(self, key: str, item: torch.Tensor, sample: Any) -> torch.Tensor | None:
        """The rows of attribute ``key`` (``item``) for one engine batch
        ``sample`` (a :class:`~graphferry._subgraph.SubgraphSample`): the
        engine's, or indexed here; None for an attribute of neither
        level."""
        if item.dim() == 0:
            return None
        if item.size(0) == self.num_nodes:
            rows = sample.node_data.get(key)
            return rows if rows is not None else item[sample.nodes]
        if item.size(0) == self.num_edges:
            rows = sample.edge_data.get(key)
            if rows is None or _cache.tensor_signature(item) != self._signatures.get(key):
                rows = item[sample.edge_ids]
            return rows
        return None


def check_edge_index(data: Any, owner: str) -> torch.Tensor:
    """``data.edge_index`` of a ``Data`` on the CPU, checked."""
    if not isinstance(data, Data):
        raise TypeError(f"{owner} takes a 'torch_geometric.data.Data' (got '{type(data).__name__}')")
    edge_index = getattr(data, "edge_index", None)
    if edge_index is None:
        raise ValueError(
            f"{owner} needs 'data.edge_index' (an 'adj_t' SparseTensor needs torch_sparse, which graphferry "
            "does not use)"
        )
    if not isinstance(edge_index, torch.Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{owner}: 'data.edge_index' must be a tensor of shape [2, num_edges]")
    if edge_index.is_cuda:
        raise ValueError(f"{owner}: 'data.edge_index' must be on the CPU (as PyG's loaders require)")
    return edge_index

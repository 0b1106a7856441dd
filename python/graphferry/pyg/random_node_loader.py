"""PyG's ``RandomNodeLoader`` by the engine: the nodes in torch's sampler
order cut into ``num_parts`` parts, each batch the subgraph its part
induces, made ahead by the engine's subgraph loader (each node a part of
its own) on the one iteration path."""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch_geometric.data import HeteroData
from torch_geometric.loader import RandomNodeLoader as _RandomNodeLoader
from torch_geometric.utils import select

from .._loader import engine_node_data
from .._subgraph import SubgraphLoader
from .convert import as_graph, as_hetero_graph
from .hetero import split_typed
from .subgraph import HeldAttributes, SubgraphEpochs, check_edge_index, in_process_kwargs

__all__ = ["RandomNodeLoader"]


class RandomNodeLoader(SubgraphEpochs, _RandomNodeLoader):
    r"""PyG's ``RandomNodeLoader`` (same arguments): batches of
    ``ceil(num_nodes / num_parts)`` nodes in torch's sampler order
    (``shuffle=True``: a new permutation every epoch from torch's
    generator, as PyG's), each the subgraph it induces, as PyG's
    ``data.subgraph(nodes)``: node attributes in the batch's node order,
    edges in edge id order with their attributes. A ``HeteroData`` gives
    ``HeteroData`` batches (``data.subgraph`` of each type's nodes in the
    batch; a type's nodes in their batch order, an edge type's edges in edge
    id order). The engine's threads make the batches ahead of the training
    loop, the attributes it holds gathered with them. ``num_workers > 0`` is
    accepted and nothing is forked (the engine's threads sample); the
    worker-only arguments are ignored.
    """

    def __init__(self, data: Any, num_parts: int, **kwargs: Any):
        kwargs, self.num_threads = in_process_kwargs(kwargs)
        self._hetero = None
        if isinstance(data, HeteroData):
            self._hetero = as_hetero_graph(data)
            self.graph = self._hetero.graph
        else:
            check_edge_index(data, type(self).__name__)
            self.graph = as_graph(data)
        super().__init__(data, num_parts, **kwargs)
        n = int(self.num_nodes)
        self._open_subgraphs(self.graph, torch.arange(n))

    def _engine(self, allocator: Any = None) -> SubgraphLoader:
        """The engine's loader: every node a part of its own, batched in
        each epoch's order, its edges in edge id order."""
        n = int(self.num_nodes)
        if self._hetero is None:
            self._held = HeldAttributes(self.data, self.graph, n, int(self.data.edge_index.size(1)))
            nodes, edges = self._held.node_names, self._held.edge_names
        else:
            nodes, edges = list(self._hetero.engine_names()), []
        return SubgraphLoader(
            self.graph,
            torch.arange(n),
            kind="parts",
            part_offsets=torch.arange(n + 1),
            edge_order="eid",
            batch_size=self.batch_size,
            drop_last=self.drop_last,
            feature_names=nodes,
            edge_feature_names=edges,
            num_threads=self.num_threads,
            allocator=allocator,
        )

    def _before_epoch(self) -> None:
        if self._hetero is None:
            super()._before_epoch()
            return
        hetero = as_hetero_graph(self.data)  # hands the engine node data replaced since
        if hetero is not self._hetero:
            self.release_idle()
            self._hetero, self.graph, self._graph = hetero, hetero.graph, hetero.graph

    def _convert(self, sample: Any) -> Any:
        if self._hetero is not None:
            return self._convert_hetero(sample)
        data = copy.copy(self.data)
        data.edge_index = sample.edge_index
        for key, item in self.data:
            if key == "num_nodes":
                data.num_nodes = sample.nodes.numel()
            elif key != "edge_index" and isinstance(item, torch.Tensor):
                rows = self._held.rows(key, item, sample)
                if rows is not None:
                    data[key] = rows
        return data

    def _convert_hetero(self, sample: Any) -> HeteroData:
        """PyG's ``HeteroData.subgraph`` of the batch's nodes, from the
        engine's split by type."""
        hg, source = self._hetero, self.data
        out = split_typed(hg, sample.typed)
        data = copy.copy(source)
        for nt in hg.node_types:
            ids, store = out.node[nt], source[nt]
            for key, value in store.items():
                if key == "num_nodes":
                    data[nt].num_nodes = ids.numel()
                elif store.is_node_attr(key):
                    rows = sample.node_data.get(f"{nt}/{key}")
                    if rows is None or not engine_node_data(hg.graph, f"{nt}/{key}", value):
                        rows = select(value, ids, dim=store._parent().__cat_dim__(key, value, store))
                    data[nt][key] = rows
        for et in hg.edge_types:
            order = torch.argsort(out.edge[et])  # Data.subgraph keeps the edges' order
            edges, store = out.edge[et][order], source[et]
            for key, value in store.items():
                if key == "edge_index":
                    data[et].edge_index = torch.stack([out.row[et][order], out.col[et][order]])
                elif store.is_edge_attr(key):
                    data[et][key] = select(value, edges, dim=store._parent().__cat_dim__(key, value, store))
        return data

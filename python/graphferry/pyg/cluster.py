r"""PyG's Cluster-GCN loading (``torch_geometric.loader.ClusterData`` and
``ClusterLoader``) with graphferry's METIS (PyG's ``ClusterData``
partitions with ``torch_sparse``'s or ``pyg-lib``'s, neither of which
graphferry uses) and the engine's induced subgraphs."""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch_geometric.loader import ClusterData as _ClusterData
from torch_geometric.loader import ClusterLoader as _ClusterLoader
from torch_geometric.utils import select

from .. import _cache
from .._loader import engine_edge_data, engine_node_data, sync_edge_data, sync_node_data
from .._subgraph import SubgraphLoader, SubgraphSample
from ..graph import Graph
from ..partition import metis_parts, symmetric_adjacency
from .subgraph import SubgraphEpochs, in_process_kwargs

__all__ = ["ClusterData", "ClusterLoader"]


class ClusterData(_ClusterData):
    r"""PyG's ``ClusterData`` (same arguments and attributes), METIS by
    graphferry (``pymetis``, k-way or with ``recursive=True`` recursive
    bisection, as ``python -m graphferry partition --method metis``) on the
    graph made undirected without self-loops (PyG hands METIS the edges as
    they are): the same permuted ``data`` and ``partition`` as PyG's, so
    PyG's own ``ClusterLoader`` takes it too. ``num_parts`` larger than the
    number of nodes raises ValueError.

    .. code-block:: python

        cluster_data = graphferry.pyg.ClusterData(data, num_parts=1500)
        loader = graphferry.pyg.ClusterLoader(cluster_data, batch_size=20, shuffle=True)
        for batch in loader:
            out = model(batch.x, batch.edge_index)
    """

    def _metis(self, edge_index: torch.Tensor, num_nodes: int) -> torch.Tensor:
        xadj, adjncy = symmetric_adjacency(edge_index[0].cpu().numpy(), edge_index[1].cpu().numpy(), int(num_nodes))
        parts = metis_parts(
            xadj, adjncy, int(num_nodes), int(self.num_parts), recursive=bool(self.recursive), who="ClusterData"
        )
        return torch.from_numpy(parts).to(edge_index.device)


def _partition_graph(cluster_data: Any) -> Graph:
    """The partitioned graph of ``cluster_data`` (its permuted CSR or CSC)
    as an engine graph, edge ids the CSR (CSC) positions; converted once."""
    part = cluster_data.partition
    build = Graph.from_csr if part.sparse_format == "csr" else Graph.from_csc
    return _cache.cached_graph(
        cluster_data,
        (part.sparse_format, _cache.tensor_signature(part.indptr), _cache.tensor_signature(part.index)),
        lambda: build(part.indptr, part.index),
        kind="cluster",
    )


class ClusterLoader(SubgraphEpochs, _ClusterLoader):
    r"""PyG's ``ClusterLoader`` (same arguments): batches of
    ``batch_size`` clusters of ``cluster_data`` (graphferry's
    :class:`ClusterData` or PyG's), each the subgraph the engine induces on
    their nodes, as PyG's: nodes cluster after cluster, edges by source
    (``sparse_format="csr"``; by target with ``"csc"``) in the partition's
    order, node- and edge-level attributes indexed to them. The engine's
    threads make the batches ahead of the training loop, the attributes
    they can hold gathered with them; the clusters' order is torch's
    sampler's (PyG's shuffle). ``num_workers > 0`` is accepted and nothing
    is forked (the engine's library must not cross a fork); the
    worker-only arguments are ignored.
    """

    def __init__(self, cluster_data: Any, **kwargs: Any):
        kwargs, self.num_threads = in_process_kwargs(kwargs)
        self.graph = _partition_graph(cluster_data)
        super().__init__(cluster_data, **kwargs)
        self._held = self._hold()
        self._open_subgraphs(self.graph, torch.arange(len(cluster_data)))

    def _hold(self) -> tuple[list[str], list[str], tuple]:
        """Hands the engine graph the data's node and edge attributes (rows
        along dim 0, a dtype it carries) it does not hold yet: the node and
        edge attributes it gathers, and the signatures of every attribute
        (to tell a replaced one)."""
        data = self.cluster_data.data
        nodes, edges = {}, {}
        for key, value in data.items():
            if not isinstance(value, torch.Tensor) or value.dim() == 0 or data.__cat_dim__(key, value) != 0:
                continue
            if data.is_node_attr(key):
                nodes[key] = value
            elif data.is_edge_attr(key) and key != "edge_index":
                edges[key] = value
        return sync_node_data(self.graph, nodes), sync_edge_data(self.graph, edges), self._signature()

    def _signature(self) -> tuple:
        return tuple((k, _cache.tensor_signature(v)) for k, v in self.cluster_data.data.items() if torch.is_tensor(v))

    def _engine(self, allocator: Any = None) -> SubgraphLoader:
        """The engine's loader over the clusters (each epoch in torch's
        sampler's order), gathering the attributes it holds."""
        part = self.cluster_data.partition
        return SubgraphLoader(
            self.graph,
            torch.arange(len(self.cluster_data)),
            kind="parts",
            part_offsets=part.partptr.to(torch.int64),
            edge_order="src_eid" if part.sparse_format == "csr" else "dst_eid",
            batch_size=self.batch_size,
            drop_last=self.drop_last,
            feature_names=self._held[0],
            edge_feature_names=self._held[1],
            num_threads=self.num_threads,
            allocator=allocator,
        )

    def _before_epoch(self) -> None:
        """Hands the engine the attributes replaced since (its idle loaders
        reopen with them)."""
        if self._held[2] != self._signature():
            self.release_idle()
            self._held = self._hold()

    def _convert(self, sample: SubgraphSample) -> Any:
        data = self.cluster_data.data
        node, edge = sample.nodes, sample.edge_ids
        out = copy.copy(data)
        for key, value in data.items():
            if key == "num_nodes":
                out.num_nodes = node.numel()
            elif data.is_node_attr(key):
                rows = sample.node_data.get(key)
                if rows is None or not engine_node_data(self.graph, key, value):
                    rows = select(value, node, dim=data.__cat_dim__(key, value))
                out[key] = rows
            elif data.is_edge_attr(key):
                rows = sample.edge_data.get(key)
                if rows is None or not engine_edge_data(self.graph, key, value):
                    rows = select(value, edge, dim=data.__cat_dim__(key, value))
                out[key] = rows
        out.edge_index = sample.edge_index
        return out

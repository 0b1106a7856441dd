r"""PyG's Cluster-GCN loading (``torch_geometric.loader.ClusterData`` and
``ClusterLoader``) with graphferry's METIS and the engine's induced
subgraphs: PyG's ``ClusterData`` partitions with ``torch_sparse``'s or
``pyg-lib``'s METIS, neither of which graphferry uses.

* :class:`ClusterData` is PyG's, its METIS call replaced by graphferry's
  (``pymetis``, as ``python -m graphferry partition --method metis``) on the
  graph made undirected without self-loops (METIS partitions undirected
  graphs; PyG hands it the edges as they are): the same permuted ``data``
  and ``partition`` as PyG's, so PyG's own ``ClusterLoader`` takes it too.
* :class:`ClusterLoader` is PyG's, each batch (the union of its clusters)
  made by the engine's induced-subgraph call on the partitioned graph: the
  ``Data`` PyG's ``ClusterLoader`` gives, node for node and edge for edge.
  It takes PyG's ``ClusterData`` too.

.. code-block:: python

    cluster_data = graphferry.pyg.ClusterData(data, num_parts=1500)
    loader = graphferry.pyg.ClusterLoader(cluster_data, batch_size=20, shuffle=True)
    for batch in loader:
        out = model(batch.x, batch.edge_index)
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch_geometric.loader import ClusterData as _ClusterData
from torch_geometric.loader import ClusterLoader as _ClusterLoader
from torch_geometric.utils import select

from .. import _cache
from .._subgraph import in_process_kwargs
from ..graph import Graph
from ..partition import metis_parts, symmetric_adjacency
from .subgraph import induced_coo

__all__ = ["ClusterData", "ClusterLoader"]


class ClusterData(_ClusterData):
    r"""PyG's ``ClusterData`` (same arguments and attributes), METIS by
    graphferry (``pymetis``, k-way or with ``recursive=True`` recursive
    bisection) on the undirected graph without self-loops. ``num_parts``
    larger than the number of nodes raises ValueError."""

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


class ClusterLoader(_ClusterLoader):
    r"""PyG's ``ClusterLoader`` (same arguments): batches of
    ``batch_size`` clusters of ``cluster_data`` (graphferry's
    :class:`ClusterData` or PyG's), each the subgraph the engine induces on
    their nodes, as PyG's: nodes cluster after cluster, edges by source
    (``sparse_format="csr"``; by target with ``"csc"``) in the partition's
    order, node- and edge-level attributes indexed to them.
    ``num_workers > 0`` is accepted and nothing is forked (the engine's
    library must not cross a fork); the worker-only arguments are ignored.
    """

    def __init__(self, cluster_data: Any, **kwargs: Any):
        kwargs, _ = in_process_kwargs(kwargs)
        self.graph = _partition_graph(cluster_data)
        super().__init__(cluster_data, **kwargs)

    def _collate(self, batch: Any) -> Any:
        batch = torch.as_tensor(batch, dtype=torch.int64).view(-1)
        data = self.cluster_data.data
        part = self.cluster_data.partition
        starts, ends = part.partptr[batch], part.partptr[batch + 1]
        node = torch.cat([torch.arange(int(s), int(e)) for s, e in zip(starts, ends)])
        by = "src" if part.sparse_format == "csr" else "dst"
        row, col, edge = induced_coo(self.graph, node, by=by, then="eid")
        out = copy.copy(data)
        for key, value in data.items():
            if key == "num_nodes":
                out.num_nodes = node.numel()
            elif data.is_node_attr(key):
                out[key] = select(value, node, dim=data.__cat_dim__(key, value))
            elif data.is_edge_attr(key):
                out[key] = select(value, edge, dim=data.__cat_dim__(key, value))
        out.edge_index = torch.stack([row, col], dim=0)
        return out

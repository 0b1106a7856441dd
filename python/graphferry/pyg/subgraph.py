"""What graphferry's PyG subgraph loaders (:mod:`.shadow`,
:mod:`.graph_saint`, :mod:`.cluster`) share: the topology of a ``Data`` as
an engine graph (converted once, without its node data: these loaders index
the ``Data``'s tensors themselves, as PyG's do), and the engine's induced
subgraph in the edge order PyG's ``SparseTensor`` gives it."""

from __future__ import annotations

from typing import Any

import torch
from torch_geometric.data import Data

from .. import _cache
from ..graph import Graph
from ..sampling import induced_subgraph

__all__ = ["topology_graph", "induced_coo", "sort_coo", "check_edge_index"]


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


def topology_graph(source: Any, edge_index: torch.Tensor, num_nodes: int) -> Graph:
    """The engine graph of the edges ``edge_index`` (row 0 the sources; edge
    ``i`` is column ``i``) over ``num_nodes`` nodes, converted once for
    ``source`` (the ``Data`` or loader they belong to) while they stay the
    same."""
    return _cache.cached_graph(
        source,
        (int(num_nodes), _cache.tensor_signature(edge_index)),
        lambda: Graph.from_coo(edge_index[0], edge_index[1], num_nodes=int(num_nodes)),
        kind="topology",
    )


def induced_coo(
    graph: Graph, nodes: torch.Tensor, by: str = "src", then: str = "other"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The subgraph the engine induces on ``nodes`` (distinct ids;
    ``gf_graph_induced_subgraph``) as ``(row, col, edge_ids)``, ``row`` and
    ``col`` positions in ``nodes``, sorted as PyG lists them (see
    :func:`sort_coo`)."""
    row, col, eid = induced_subgraph(graph, nodes)
    return sort_coo(row, col, eid, int(nodes.numel()), by, then)


def sort_coo(
    row: torch.Tensor, col: torch.Tensor, eid: torch.Tensor, n: int, by: str = "src", then: str = "other"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Edges ``row -> col`` (positions among ``n`` nodes) sorted by ``row``
    (``by="src"``, CSR) or by ``col`` (``by="dst"``, CSC), then by the other
    end (``then="other"``: a ``SparseTensor``'s order, multi-edges by edge
    id) or by edge id alone (``then="eid"``: the order of a graph whose edge
    ids are its CSR or CSC positions, as ``ClusterData``'s)."""
    major, minor = (row, col) if by == "src" else (col, row)
    order = torch.argsort(eid, stable=True)
    key = major * max(n, 1) + minor if then == "other" else major
    order = order[torch.argsort(key[order], stable=True)]
    return row[order], col[order], eid[order]

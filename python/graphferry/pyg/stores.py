"""PyG's remote-backend interface: :class:`GraphStore` serves a graphferry
graph to PyG as a ``torch_geometric.data.GraphStore``, and
:func:`graph_of_store` converts any other (homogeneous) ``GraphStore`` for
the engine."""

from __future__ import annotations

from typing import Any

import torch
import torch_geometric.data
from torch_geometric.data import EdgeAttr

from ..graph import Graph
from ..hetero import HeteroGraph
from .convert import DataKindError, as_graph, as_hetero_graph, is_hetero, set_store_times

__all__ = ["GraphStore", "engine_graph", "graph_of_store", "hetero_graph_of_stores", "is_hetero_stores", "open_stores"]


def graph_of_store(graph_store: Any) -> tuple[Graph, torch.Tensor | None]:
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


def is_hetero_stores(data: Any) -> bool:
    """Whether ``data`` is a ``(FeatureStore, GraphStore)`` pair whose
    GraphStore holds typed edges (``edge_type`` not None)."""
    if not (isinstance(data, tuple) and len(data) == 2):
        return False
    graph_store = data[1]
    if not isinstance(graph_store, torch_geometric.data.GraphStore) or isinstance(graph_store, GraphStore):
        return False
    attrs = graph_store.get_all_edge_attrs()
    return bool(attrs) and all(a.edge_type is not None for a in attrs)


def hetero_graph_of_stores(
    data: tuple, weight_attr: Any = None, time_attr: str | None = None
) -> tuple[HeteroGraph, dict[tuple[str, str, str], torch.Tensor | None]]:
    """The :class:`graphferry.HeteroGraph` of a heterogeneous ``(FeatureStore,
    GraphStore)`` pair, and per edge type the permutation PyG applies to
    ``e_id`` (None: the store's order).

    Node types are the FeatureStore's groups, then those only the edge types
    name, in the order the stores list them; a type's count is its edges' ``size`` when the
    GraphStore gives one, else the rows of its FeatureStore tensors, else
    one past the largest id its edges name (as PyG's own samplers count
    them). With ``time_attr`` the graph holds the FeatureStore's times
    (:func:`~.convert.set_store_times`)."""
    feature_store, graph_store = _checked_pair(data, weight_attr)
    attrs = graph_store.get_all_edge_attrs()
    if not attrs or any(a.edge_type is None for a in attrs):
        raise TypeError(
            "expected a GraphStore of typed edges (a heterogeneous graph); "
            f"got edge types {[a.edge_type for a in attrs]}"
        )
    edge_types = list(dict.fromkeys(tuple(a.edge_type) for a in attrs))
    rows, cols, perms = graph_store.coo(edge_types)
    counts: dict[str, int | None] = {}
    for attr in feature_store.get_all_tensor_attrs():
        if isinstance(attr.group_name, str):
            counts.setdefault(attr.group_name, None)
    for et in edge_types:
        counts.setdefault(et[0], None)
        counts.setdefault(et[2], None)
    for attr in attrs:  # the GraphStore's sizes first
        size = attr.size
        if size is not None:
            for nt, n in ((attr.edge_type[0], size[0]), (attr.edge_type[2], size[1])):
                if n is not None:
                    counts[nt] = max(int(n), counts[nt] or 0)
    for attr in feature_store.get_all_tensor_attrs():
        nt = attr.group_name
        if isinstance(nt, str) and counts.get(nt) is None:
            size = feature_store.get_tensor_size(attr)
            if size is not None and len(size) >= 1:
                counts[nt] = int(size[0])
    for et in edge_types:  # else: one past the largest id named
        for nt, ids in ((et[0], rows[et]), (et[2], cols[et])):
            if ids.numel():
                counts[nt] = max(counts[nt] or 0, int(ids.max()) + 1)
    num_nodes = {nt: n or 0 for nt, n in counts.items()}
    hetero = HeteroGraph.from_coo(num_nodes, {et: (rows[et], cols[et]) for et in edge_types})
    perm = {et: perms.get(et) for et in edge_types}
    set_store_times(hetero, data, time_attr, perm)
    return hetero, perm


def _checked_pair(data: tuple, weight_attr: Any) -> tuple[Any, Any]:
    """PyG's ``(FeatureStore, GraphStore)`` pair, its parts checked."""
    if len(data) != 2:
        raise DataKindError(f"expected a (FeatureStore, GraphStore) pair (got a tuple of {len(data)})")
    feature_store, graph_store = data
    if not isinstance(feature_store, torch_geometric.data.FeatureStore):
        raise DataKindError(
            f"expected a 'torch_geometric.data.FeatureStore' first (got '{type(feature_store).__name__}')"
        )
    if not isinstance(graph_store, torch_geometric.data.GraphStore):
        raise DataKindError(f"expected a 'torch_geometric.data.GraphStore' second (got '{type(graph_store).__name__}')")
    if weight_attr is not None:
        raise ValueError("'weight_attr' needs a Data; with a GraphStore, set weights on its graph")
    return feature_store, graph_store


def open_stores(
    data: tuple, weight_attr: Any = None, time_attr: str | None = None
) -> tuple[Graph, torch.Tensor | None]:
    """The engine graph of PyG's ``(FeatureStore, GraphStore)`` pair (its
    parts checked; with ``time_attr`` holding the FeatureStore's times), and
    the permutation PyG applies to ``e_id`` (None for a :class:`GraphStore`,
    whose edge ``i`` has id ``i``)."""
    _, graph_store = _checked_pair(data, weight_attr)
    graph, perm = (graph_store.graph, None) if isinstance(graph_store, GraphStore) else graph_of_store(graph_store)
    set_store_times(graph, data, time_attr, perm)
    return graph, perm


def engine_graph(data: Any, weight_attr: Any = None, time_attr: Any = None) -> tuple[Graph, HeteroGraph | None, Any]:
    """The engine graph of what PyG's samplers and loaders take as ``data``
    (a ``Data`` or ``HeteroData``, converted once and cached; a graphferry
    graph; a ``(FeatureStore, GraphStore)`` pair), its
    :class:`graphferry.HeteroGraph` when typed (else None), and the
    permutation PyG applies to ``e_id`` (per edge type when typed; None but
    for a pair's store)."""
    if is_hetero(data) or is_hetero_stores(data):
        if isinstance(data, tuple):
            hetero, perm = hetero_graph_of_stores(data, weight_attr, time_attr)
        else:
            hetero, perm = as_hetero_graph(data, weight_attr, time_attr), None
        return hetero.graph, hetero, perm
    if isinstance(data, tuple):
        graph, perm = open_stores(data, weight_attr, time_attr)
        return graph, None, perm
    return as_graph(data, weight_attr, time_attr), None, None


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
        layout = getattr(edge_attr.layout, "value", edge_attr.layout)
        if layout == "coo":  # in edge id order
            src, dst, _ = graph.edges("coo")
            return src, dst
        colptr, src, _ = graph.edges("csc")  # every edge, by target
        if layout == "csc":
            return src, colptr
        if layout == "csr":
            dst = torch.repeat_interleave(torch.arange(graph.num_nodes), torch.diff(colptr))
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

"""PyG's graphs as the engine's: ``Data`` to :class:`~graphferry.Graph`
(:func:`as_graph`) and ``HeteroData`` to :class:`~graphferry.HeteroGraph`
(:func:`from_pyg`, :func:`as_hetero_graph`), each converted once and cached
while its tensors stay the same, with its edge weights and its node or edge
times; and where ``time_attr`` puts the times (:func:`time_level`).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data, HeteroData

from .. import _cache, _loader
from .._native.dlpack import as_cpu_tensor
from ..distributed import is_typed_part
from ..graph import Graph, pyg_node_attrs
from ..hetero import HeteroGraph

__all__ = [
    "DataKindError",
    "check_data",
    "as_graph",
    "from_pyg",
    "as_hetero_graph",
    "is_hetero",
    "time_level",
    "time_tensor",
    "store_times",
    "set_store_times",
    "check_node_rows",
]


class DataKindError(TypeError, ValueError):
    """A graph input of a kind the loaders do not take: a TypeError, and the
    ValueError PyG's samplers and loaders raise for it (``except ValueError``
    written for PyG catches it)."""


def check_data(data: Any) -> None:
    """``data`` is a graph PyG's loaders take (a ``Data``, a
    ``HeteroData`` or a pair), or a graphferry graph; the pair's parts are
    checked where they are opened."""
    if isinstance(data, (Data, HeteroData, Graph, HeteroGraph)) or (isinstance(data, tuple) and len(data) == 2):
        return
    raise DataKindError(
        "Expected a 'Data', 'HeteroData', a tuple of 'FeatureStore' and 'GraphStore', "
        f"or a graphferry.Graph or HeteroGraph (got '{type(data).__name__}')"
    )


def _pyg_signature(data: Data, weight_attr: str | None = None, time_attr: str | None = None) -> Any:
    weights = getattr(data, weight_attr, None) if weight_attr is not None else None
    times = getattr(data, time_attr, None) if time_attr is not None else None
    return (
        data.num_nodes,
        _cache.tensor_signature(data.edge_index) if data.edge_index is not None else None,
        tuple((name, _cache.tensor_signature(data[name])) for name in pyg_node_attrs(data)),
        (weight_attr, _cache.tensor_signature(weights)) if isinstance(weights, torch.Tensor) else None,
        (time_attr, _cache.tensor_signature(times)) if isinstance(times, torch.Tensor) else None,
    )


def time_level(data: Any, time_attr: str | None) -> str | None:
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
        return _stores_time_level(data.node_stores, data.edge_stores, time_attr)
    if isinstance(data, tuple):
        return _store_time_level(data, store_times(data, time_attr), time_attr)
    if isinstance(data, (Graph, HeteroGraph)):
        if time_attr not in ("node", "edge"):
            raise ValueError(
                f"'time_attr' with a graphferry.{type(data).__name__} is 'node' or 'edge' (the times the graph "
                f"holds: set_node_time / set_edge_time), got {time_attr!r}"
            )
        return time_attr
    raise TypeError(f"'time_attr' needs a Data, a HeteroData or a pair of stores (got '{type(data).__name__}')")


def store_times(data: tuple, time_attr: str) -> dict[Any, torch.Tensor]:
    """The times of PyG's ``(FeatureStore, GraphStore)`` pair, as PyG's
    ``NeighborSampler`` reads them: every FeatureStore tensor named
    ``time_attr``, whole, by its group (a node type, an edge type, or None
    for a homogeneous store)."""
    feature_store = data[0]
    times = {}
    for attr in feature_store.get_all_tensor_attrs():
        if attr.attr_name == time_attr:
            attr = copy.copy(attr)
            attr.index = None  # every row
            what = f"the FeatureStore's '{time_attr}' of {attr.group_name!r}"
            times[attr.group_name] = time_tensor(feature_store.get_tensor(attr), what)
    if not times:
        raise ValueError(f"'time_attr': the FeatureStore holds no tensor '{time_attr}' (the nodes' or edges' times)")
    return times


def _store_time_level(data: tuple, times: dict[Any, torch.Tensor], time_attr: str) -> str:
    """Where a pair's times live: a heterogeneous store's by their groups
    (node types or edge types, as PyG reads them); a homogeneous store's
    are node times when they have one row per node (the GraphStore's size),
    else edge times."""
    groups = list(times)
    if all(isinstance(g, str) for g in groups):
        return "node"
    if all(isinstance(g, tuple) for g in groups):
        return "edge"
    if groups != [None]:
        raise ValueError(f"'time_attr': '{time_attr}' holds both node-level and edge-level times ({groups})")
    sizes = [a.size for a in data[1].get_all_edge_attrs() if a.size is not None and None not in a.size]
    return "node" if not sizes or times[None].numel() == max(sizes[0]) else "edge"


def set_store_times(graph: Graph | HeteroGraph, data: tuple, time_attr: str | None, perm: Any) -> None:
    """Hands the engine graph of a pair the pair's times (:func:`store_times`),
    edge times put in the engine's edge order (``perm``: the store's edge
    of each engine edge, per edge type for a :class:`HeteroGraph`)."""
    if time_attr is None:
        return
    times = store_times(data, time_attr)
    edges = _store_time_level(data, times, time_attr) == "edge"
    if isinstance(graph, HeteroGraph):
        if not edges:
            graph.set_node_time(times)
            return
        perm = perm or {}
        graph.set_edge_time({et: t if perm.get(et) is None else t[perm[et]] for et, t in times.items()})
    elif edges:
        graph.set_edge_time(times[None] if perm is None else times[None][perm])
    else:
        graph.set_node_time(times[None])


def _graph_of_data(data: Data, weight_attr: str | None, time_attr: str | None) -> Graph:
    graph = Graph.from_pyg(data, edge_weights=weight_attr)
    try:
        level = time_level(data, time_attr)
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
        time_level(data, time_attr)  # a clear error before converting
    return _cache.as_graph(
        data,
        Data,
        "torch_geometric.data.Data",
        lambda: _pyg_signature(data, weight_attr, time_attr),
        lambda: _graph_of_data(data, weight_attr, time_attr),
    )


def is_hetero(data: Any) -> bool:
    return isinstance(data, (HeteroData, HeteroGraph)) or is_typed_part(data)


def check_node_rows(data: Data) -> None:
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


def _stores_time_level(stores: Any, edge_stores: Any, time_attr: str) -> str:
    """``"node"`` or ``"edge"``: where ``time_attr`` lives, as PyG decides."""
    in_nodes = any(time_attr in store for store in stores)
    in_edges = any(time_attr in store for store in edge_stores)
    if in_nodes and in_edges:
        raise ValueError(f"'time_attr': '{time_attr}' holds both node-level and edge-level times")
    if not in_nodes and not in_edges:
        raise ValueError(f"'time_attr': '{time_attr}' is neither a node-level nor an edge-level attribute")
    return "node" if in_nodes else "edge"


def time_tensor(value: Any, what: str) -> torch.Tensor:
    """``value`` as int64 times; floating or bool times are refused (the
    engine compares int64 timestamps)."""
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(value)
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{what} must be a tensor of times (got '{type(value).__name__}')")
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        raise TypeError(f"{what} must hold integer timestamps (got dtype {value.dtype})")
    if value.dim() != 1:
        raise ValueError(f"{what} must be 1-D, one time per node or edge (got shape {list(value.shape)})")
    return value.cpu().to(torch.int64)


def from_pyg(
    data: HeteroData,
    *,
    weight_attr: str | None = None,
    time_attr: str | None = None,
    num_patches: int = 1,
    partition: Any = "range",
    seed: int = 0,
) -> HeteroGraph:
    r"""Converts a ``torch_geometric.data.HeteroData`` on the CPU into a
    :class:`~graphferry.HeteroGraph`: node types in ``data.node_types``
    order, edge types in ``data.edge_types`` order, edge ``j`` of an edge
    type being column ``j`` of its ``edge_index`` (row 0 the source type,
    row 1 the destination type). The loaders hand the node attributes of
    every type to the engine (:func:`as_hetero_graph`; not copied, as
    ``"<ntype>/<name>"``), which gathers them with each batch; those of a
    dtype it does not carry are gathered from ``data``, as PyG does.

    Args:
        data (torch_geometric.data.HeteroData): the graph; every edge type
            needs an ``edge_index`` and every node type a number of nodes.
        weight_attr (str, optional): the edge attribute holding edge weights
            for biased sampling (PyG's ``weight_attr``); edge types without
            it are sampled uniformly. (default: :obj:`None`)
        time_attr (str, optional): the attribute holding timestamps for
            temporal sampling (PyG's ``time_attr``): node-level (in node
            stores: the nodes' times) or edge-level (in edge stores: the
            edges' times); types without it are never filtered out.
            (default: :obj:`None`)
        num_patches, partition, seed: as in
            :meth:`graphferry.HeteroGraph.from_coo`.
    """
    if not isinstance(data, HeteroData):
        raise TypeError(f"expected a 'torch_geometric.data.HeteroData' (got '{type(data).__name__}')")
    if weight_attr is not None and not isinstance(weight_attr, str):
        raise TypeError(f"'weight_attr' must name an edge attribute (got '{type(weight_attr).__name__}')")
    level = time_level(data, time_attr)
    num_nodes = {}
    for nt in data.node_types:
        n = data[nt].num_nodes
        if n is None:
            raise ValueError(f"node type '{nt}' of the HeteroData has no number of nodes (set data['{nt}'].num_nodes)")
        num_nodes[nt] = int(n)
    edges = {}
    weights = {}
    edge_time = {}
    for et in data.edge_types:
        store = data[et]
        edge_index = store.get("edge_index")
        if edge_index is None:
            raise TypeError(
                f"edge type {et} of the HeteroData has no 'edge_index' (graphferry reads COO edges; "
                f"it has {sorted(store.keys())})"
            )
        edge_index = as_cpu_tensor(edge_index, f"data[{et}].edge_index")
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"data[{et}].edge_index must have shape [2, E] (got {list(edge_index.shape)})")
        edges[et] = (edge_index[0], edge_index[1])
        if weight_attr is not None and weight_attr in store:
            weights[et] = as_cpu_tensor(store[weight_attr], f"data[{et}].{weight_attr}")
        if level == "edge" and time_attr in store:
            edge_time[et] = time_tensor(store[time_attr], f"data[{et}].{time_attr}")
    if weight_attr is not None and not weights:
        raise KeyError(f"'weight_attr': no edge type of the HeteroData has an attribute '{weight_attr}'")
    node_time = None
    if level == "node":
        node_time = {
            nt: time_tensor(data[nt][time_attr], f"data['{nt}'].{time_attr}")
            for nt in data.node_types
            if time_attr in data[nt]
        }
    return HeteroGraph.from_coo(
        num_nodes,
        edges,
        edge_weights=weights or None,
        node_time=node_time,
        edge_time=edge_time or None,
        num_patches=num_patches,
        partition=partition,
        seed=seed,
    )


def _hetero_signature(data: HeteroData, weight_attr: str | None, time_attr: str | None) -> Any:
    sig = _cache.tensor_signature
    parts: list[Any] = [tuple(data.node_types), tuple(data.edge_types), weight_attr, time_attr]
    for nt in data.node_types:
        store = data[nt]
        parts.append((store.num_nodes, sig(store[time_attr]) if time_attr and time_attr in store else None))
    for et in data.edge_types:
        store = data[et]
        extra = tuple(
            sig(store[k]) if isinstance(store[k], torch.Tensor) else None
            for k in (weight_attr, time_attr)
            if k is not None and k in store
        )
        parts.append((sig(store["edge_index"]) if "edge_index" in store else None, extra))
    return tuple(parts)


def as_hetero_graph(data: Any, weight_attr: str | None = None, time_attr: str | None = None) -> HeteroGraph:
    """``data`` if it is a :class:`HeteroGraph`, else the (cached)
    :func:`from_pyg` conversion of a ``HeteroData``."""
    if isinstance(data, HeteroGraph):
        return data
    if is_typed_part(data):
        return data.hetero_view()
    if not isinstance(data, HeteroData):
        raise TypeError(
            f"expected a 'torch_geometric.data.HeteroData' or 'graphferry.HeteroGraph' (got '{type(data).__name__}')"
        )
    hetero = _cache.cached_graph(
        data,
        _hetero_signature(data, weight_attr, time_attr),
        lambda: from_pyg(data, weight_attr=weight_attr, time_attr=time_attr),
        kind="hetero",
    )
    # Every type's node attributes go to the engine as "<ntype>/<name>"
    # (again when replaced since); other dtypes or devices stay in data, as
    # do all of a graph without edge types (the engine types graphs with
    # relations: its samples are their seeds, split and gathered here).
    if hetero.num_relations == 0:
        return hetero
    stores = [(nt, data[nt], data[nt].num_nodes) for nt in data.node_types]
    tensors = {
        f"{nt}/{k}": s[k] for nt, s, n in stores for k in s.node_attrs() if getattr(s[k], "shape", ())[:1] == (n,)
    }
    _loader.sync_node_data(hetero.graph, tensors)
    return hetero

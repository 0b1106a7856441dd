"""DGL's graphs as the engine's: a homogeneous ``dgl.DGLGraph`` as a
:class:`~graphferry.Graph` (:func:`as_graph`), a heterograph as a
:class:`~graphferry.HeteroGraph` (:func:`as_hetero_graph`), each converted
once and cached while its topology and weights stay the same; the node data a
converted graph holds kept in step with ``g.ndata`` (:func:`sync_node_data`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dgl
import torch

from .. import _cache, _loader
from ..distributed import is_typed_part
from ..errors import GF_EINVAL, InvalidArgumentError
from ..graph import Graph
from ..hetero import HeteroGraph

__all__ = ["as_graph", "as_hetero_graph", "is_hetero_input", "sync_node_data", "check_homogeneous", "check_prefetch"]


def check_homogeneous(g: Any) -> None:
    if not g.is_homogeneous:
        raise TypeError(
            f"graphferry supports homogeneous graphs only (got node types {g.ntypes} and edge types {g.etypes})"
        )


def check_prefetch(frame: Any, names: Sequence[str], what: str) -> None:
    """Raises naming the fields of ``names`` that a DGLGraph's ``ndata`` or
    ``edata`` (``frame``, called ``what``) lacks."""
    missing = [n for n in names if n not in frame]
    if missing:
        raise InvalidArgumentError(
            GF_EINVAL, f"the DGLGraph has no {what} field {missing} to prefetch (it has {sorted(frame)})"
        )


def topology_signature(g: Any, prob: str | None = None) -> Any:
    """What a converted graph depends on: the topology and the weights. Node
    data is kept in step separately (:func:`sync_node_data`), so that
    replacing a feature tensor does not convert the whole graph again."""
    return (
        g.num_nodes(),
        g.num_edges(),
        None if prob is None else (prob, _cache.tensor_signature(g.edata[prob])),
    )


def _convert_dgl(g: Any, prob: str | None) -> Graph:
    graph = Graph.from_dgl(g, edge_weights=prob)
    # The node data the engine holds, as of which tensor (see sync_node_data).
    held = set(graph.node_data_names())
    graph._node_sources = {
        name: _cache.tensor_signature(value)
        for name, value in g.ndata.items()
        if isinstance(value, torch.Tensor) and name in held
    }
    return graph


def as_graph(graph: Any, prob: str | None = None) -> Graph:
    """``graph`` if it is a :class:`graphferry.Graph`, else the (cached)
    conversion of a homogeneous ``dgl.DGLGraph``, with the edge weights of
    ``graph.edata[prob]`` when ``prob`` is given."""
    if isinstance(graph, dgl.DGLGraph):
        check_homogeneous(graph)
        if prob is not None and prob not in graph.edata:
            raise KeyError(f"'prob': the DGLGraph has no edata field '{prob}' (it has {sorted(graph.edata.keys())})")
    return _cache.as_graph(
        graph,
        dgl.DGLGraph,
        "dgl.DGLGraph",
        lambda: topology_signature(graph, prob),
        lambda: _convert_dgl(graph, prob),
    )


def sync_node_data(graph: Graph, g: Any, names: Sequence[str]) -> None:
    """Hands the engine ``g.ndata[name]`` for each of ``names`` replaced (or
    changed in place) since (:func:`graphferry._loader.sync_node_data`;
    meanwhile the batches serve it through DGL's lazy columns)."""
    if getattr(graph, "_node_sources", None) is not None:
        _loader.sync_node_data(graph, {name: g.ndata[name] for name in names if name in g.ndata})


def _hetero_signature(g: Any, prob: str | None) -> Any:
    """What a converted heterograph depends on: its types, sizes and weights."""
    weights = None
    if prob is not None:
        weights = tuple(
            _cache.tensor_signature(g.edges[et].data[prob]) if prob in g.edges[et].data else None
            for et in g.canonical_etypes
        )
    return (
        tuple(g.ntypes),
        tuple(g.canonical_etypes),
        tuple(g.num_nodes(nt) for nt in g.ntypes),
        tuple(g.num_edges(et) for et in g.canonical_etypes),
        prob,
        weights,
    )


def as_hetero_graph(graph: Any, prob: str | None = None) -> HeteroGraph:
    """``graph`` if it is a :class:`HeteroGraph`, else the (cached)
    conversion of a ``dgl.DGLGraph`` with the weights of ``edata[prob]``."""
    if isinstance(graph, HeteroGraph):
        return graph
    if is_typed_part(graph):
        return graph.hetero_view()
    if isinstance(graph, dgl.DGLGraph):
        if prob is not None and not any(prob in graph.edges[et].data for et in graph.canonical_etypes):
            raise KeyError(f"'prob': no edge type of the DGLGraph has an edata field '{prob}'")
        return _cache.cached_graph(
            graph,
            _hetero_signature(graph, prob),
            lambda: HeteroGraph.from_dgl(graph, edge_weights=prob),
            kind="hetero",
        )
    raise TypeError(f"expected a 'dgl.DGLGraph' or 'graphferry.HeteroGraph' (got '{type(graph).__name__}')")


def is_hetero_input(graph: Any, indices: Any, sampler: Any = None) -> bool:
    """Whether a loader over ``graph`` and ``indices`` takes the
    heterogeneous path: a :class:`HeteroGraph`, a DGL graph with several
    node or edge types, or a dict of seeds."""
    if isinstance(graph, HeteroGraph) or isinstance(indices, Mapping) or is_typed_part(graph):
        return True
    return isinstance(graph, dgl.DGLGraph) and not graph.is_homogeneous

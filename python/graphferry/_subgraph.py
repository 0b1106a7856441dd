"""Induced subgraphs (``gf_graph_induced_subgraph``), which
:mod:`graphferry.pyg` uses for ``subgraph_type="induced"``. Bound here, apart
from :mod:`graphferry._lib`, so that the section keeps to its own files."""

from __future__ import annotations

import ctypes
from typing import Any

import torch

from . import _lib
from ._dlpack import BorrowedTensor, tensor_from_managed
from .graph import Graph

__all__ = ["induced_subgraph"]


# int gf_graph_induced_subgraph(gf_graph *graph, const DLTensor *nodes,
#                               DLManagedTensor **out_src,
#                               DLManagedTensor **out_dst,
#                               DLManagedTensor **out_edge_ids);
@_lib.cfunc(
    "gf_graph_induced_subgraph",
    [_lib.gf_graph_p_ctypes, _lib.DLTensor_p, _lib.c_void_pp, _lib.c_void_pp, _lib.c_void_pp],
    ctypes.c_int,
)
def gf_graph_induced_subgraph(
    graph: _lib.gf_graph_p | None,
    nodes: _lib.CtypesRef,
    out_src: _lib.CtypesRef,
    out_dst: _lib.CtypesRef,
    out_edge_ids: _lib.CtypesRef,
    /,
) -> int: ...


def induced_subgraph(graph: Graph, nodes: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Every edge ``u -> v`` of ``graph`` with both ends in ``nodes``
    (original ids, distinct), as ``(src, dst, edge_ids)``: int64 ``[E]``,
    ``src`` and ``dst`` positions in ``nodes``, ``edge_ids`` the original
    edge ids. Edges are grouped by target in the order of ``nodes``."""
    if not isinstance(graph, Graph):
        raise TypeError(f"expected a 'graphferry.Graph' (got '{type(graph).__name__}')")
    borrowed = BorrowedTensor(nodes, "nodes")
    src, dst, eid = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    gf_graph_induced_subgraph(graph.handle, borrowed.ref, ctypes.byref(src), ctypes.byref(dst), ctypes.byref(eid))
    out = []
    try:
        for managed in (src, dst, eid):
            out.append(tensor_from_managed(managed.value))
    except BaseException:
        for managed in (src, dst, eid)[len(out) + 1 :]:
            tensor_from_managed(managed.value)  # frees it
        raise
    return out[0], out[1], out[2]

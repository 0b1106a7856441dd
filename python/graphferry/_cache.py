"""Conversions of DGL / PyG graphs to :class:`~graphferry.Graph`, done once,
for the loaders of :mod:`graphferry.dgl` and :mod:`graphferry.pyg`
(:func:`as_graph`), and walks on a graph's reverse (:func:`walk_reversed`).

A converted graph is kept as long as the source object lives (it is found by
the source's identity through a weak reference, since PyG's ``Data`` is not
hashable), together with a signature of what it was built from (sizes, data
pointers and versions of its tensors); a changed source is converted again.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any

import torch

from .graph import Graph, _tensor_signature
from .sampling import random_seed, random_walk

_lock = threading.Lock()
# (id(source), kind) -> (weak reference to source, signature, graph)
_cache: dict[tuple[int, str], tuple[Any, Hashable, Graph]] = {}


# Which tensor, in which version: sizes, data pointer, dtype and version counter.
tensor_signature = _tensor_signature


def _forget(key: tuple[int, str], ref: Any) -> None:
    with _lock:
        entry = _cache.get(key)
        if entry is not None and entry[0] is ref:
            del _cache[key]


def cached_graph(source: Any, signature: Hashable, convert: Callable[[], Graph], kind: str = "graph") -> Graph:
    """The graph converted from ``source``, converting it if needed. ``kind``
    tells conversions of one source apart (e.g. its reverse)."""
    key = (id(source), kind)
    with _lock:
        entry = _cache.get(key)
        if entry is not None and entry[0]() is source and entry[1] == signature and not entry[2].closed:
            return entry[2]
    graph = convert()
    try:
        ref = weakref.ref(source, lambda r, key=key: _forget(key, r))
    except TypeError:  # not weakly referenceable: no caching
        return graph
    with _lock:
        # A replaced graph is not closed here: loaders made from it may still
        # use it; it is released with its last reference.
        _cache[key] = (ref, signature, graph)
    return graph


def as_graph(
    source: Any,
    native: type,
    native_name: str,
    signature: Callable[[], Hashable],
    convert: Callable[[], Graph],
) -> Graph:
    """``source`` if it is a :class:`Graph`; else, for a ``native`` graph
    object, its conversion, cached while ``signature()`` stays the same."""
    if isinstance(source, Graph):
        return source
    if isinstance(source, native):
        return cached_graph(source, signature(), convert)
    raise TypeError(f"expected a '{native_name}' or 'graphferry.Graph' (got '{type(source).__name__}')")


def walk_reversed(
    source: Any,
    signature: Hashable,
    edges: Callable[[], tuple[torch.Tensor, torch.Tensor, int | None, torch.Tensor | None]],
    nodes: Any,
    length: int,
    *,
    biased: bool,
    restart_prob: float,
    seed: int | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Walks along OUT-edges (as DGL and torch_cluster walk) with the engine,
    which walks along in-edges: on the reversed graph, converted once per
    ``source`` and ``signature``. ``edges()`` gives ``(src, dst, num_nodes,
    weights)`` of the original graph; edge ids are kept. ``biased`` steps in
    proportion to the weights (which the signature must cover)."""

    def convert() -> Graph:
        src, dst, num_nodes, weights = edges()
        return Graph.from_coo(dst, src, num_nodes=num_nodes, edge_weights=weights)

    reverse = cached_graph(source, signature, convert, kind="reverse")
    return random_walk(
        reverse,
        nodes,
        length,
        restart_prob=restart_prob,
        biased=biased,
        seed=random_seed() if seed is None else seed,
    )

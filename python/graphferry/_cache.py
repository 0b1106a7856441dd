"""Conversions of DGL / PyG graphs to :class:`~graphferry.Graph`, done once.

A converted graph is kept as long as the source object lives (it is found by
the source's identity through a weak reference, since PyG's ``Data`` is not
hashable), together with a signature of what it was built from (sizes, data
pointers and versions of its tensors); a changed source is converted again.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from typing import Any, Callable

from .graph import Graph, _tensor_signature

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

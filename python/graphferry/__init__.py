"""graphferry: a GNN mini-batch data engine, as a data loader for DGL and PyG.

The engine is a Go library (libgraphferry.so, C interface in
include/graphferry.h) reached through ctypes; tensors cross in both directions
through DLPack without copies. ``graphferry.dgl`` and ``graphferry.pyg``
(imported on first use) plug it into DGL and PyTorch Geometric.

.. code-block:: python

    import graphferry
    g = graphferry.Graph.open("cora_gf")          # or from_dgl / from_pyg / from_coo
    sub = graphferry.sample_neighbors(g, g.train_idx[:4], [10, 5])
"""

from __future__ import annotations

import importlib
from typing import Any

from . import _lib
from ._stats import LoaderCounters, LoaderStats, StageStats
from ._version import __version__
from .errors import GraphferryError, InvalidArgumentError, OutOfMemoryError, StorageError, TypeMismatchError
from .graph import PRESETS, Graph, convert_npy, generate
from .hetero import HeteroGraph
from .sampling import Block, Loader, SampledSubgraph, SampleOptions, random_walk, sample_neighbors

__all__ = [
    "__version__",
    "GraphferryError",
    "InvalidArgumentError",
    "TypeMismatchError",
    "StorageError",
    "OutOfMemoryError",
    "Graph",
    "HeteroGraph",
    "convert_npy",
    "generate",
    "PRESETS",
    "sample_neighbors",
    "random_walk",
    "SampledSubgraph",
    "Block",
    "SampleOptions",
    "Loader",
    "LoaderStats",
    "LoaderCounters",
    "StageStats",
    "library_version",
    "library_path",
]

_LAZY_SUBMODULES = ("dgl", "pyg")


def library_version() -> str:
    """The version of the loaded libgraphferry, e.g. ``"0.1.0"``."""
    return _lib.LIB_VERSION


def library_path() -> str:
    """The path libgraphferry was loaded from."""
    return str(_lib.LIB_PATH)


def __getattr__(name: str) -> Any:
    # graphferry.dgl / graphferry.pyg import DGL / PyG, so only on first use.
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

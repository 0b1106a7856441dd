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
from pathlib import Path
from typing import Any

from ._native import backend as _backend
from ._native import lib as _lib
from ._native.backend import BackendError
from ._stats import LoaderCounters, LoaderStats, StageStats
from ._version import __version__
from .errors import GraphferryError, InvalidArgumentError, OutOfMemoryError, StorageError, TypeMismatchError
from .graph import PRESETS, Graph, convert_npy, generate, write_csc
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
    "write_csc",
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
    "dataset_path",
    "library_version",
    "library_path",
    "library_build_id",
    "backend",
    "cuda_check",
    "BackendError",
]

_LAZY_SUBMODULES = ("dgl", "pyg")


def dataset_path(name: str = "cora") -> str:
    """The folder of a dataset that ships inside the package, for :meth:`Graph.open`:
    ``"cora"`` (2,708 nodes, 10,556 edges, 1,433 features, 7 classes, the
    Planetoid split) is ``graphferry/data/cora`` (a checkout's ``examples/data/cora``)."""
    folder = Path(__file__).resolve().parent / "data" / name
    if not (folder / "graphferry.json").is_file():
        raise ValueError(f"graphferry.dataset_path: no shipped dataset {name!r} (there is 'cora')")
    return str(folder)


def library_version() -> str:
    """The version of the loaded libgraphferry, e.g. ``"0.1.0"``."""
    return _lib.LIB_VERSION


def library_path() -> str:
    """The path libgraphferry was loaded from."""
    return str(_lib.LIB_PATH)


def library_build_id() -> str:
    """The source id the loaded libgraphferry was built from (16 hex digits,
    ``capi/source_id.sh``), or ``"unknown"``."""
    return _lib.LIB_BUILD_ID


def backend() -> str:
    """The library this process loaded: ``"cpu"`` (the default), ``"cuda"``
    (``GRAPHFERRY_BACKEND=cuda`` when graphferry was imported) or
    ``"explicit"`` (``GRAPHFERRY_LIB_PATH``)."""
    return str(_backend.BACKEND)


def cuda_check(device: Any = None) -> dict[str, Any]:
    """Checks that graphferry's CUDA backend works on ``device`` (an int,
    ``"cuda:N"`` or a ``torch.device``; by default PyTorch's current device)
    and returns what it found: the device's name and compute capability, the
    driver's version, the kernels' PTX ISA and target, the library's build
    id. The check runs once per device and per process; it leaves PyTorch's
    current device and context as they were.

    Raises :class:`BackendError` naming why the backend cannot be used: the
    CPU library was loaded (set ``GRAPHFERRY_BACKEND=cuda`` before importing
    graphferry), no such device, an architecture older than sm_70, a driver
    too old for the kernels' PTX, or the driver refusing the PTX.
    """
    if _lib.CUDA is None:
        raise BackendError(
            f"graphferry.cuda_check: this process loaded the {backend()} library "
            f"({_lib.LIB_PATH}); the CUDA backend is loaded only when GRAPHFERRY_BACKEND=cuda is set "
            "before graphferry is imported"
        )
    return _backend.check_device(_lib.CUDA, device)


def __getattr__(name: str) -> Any:
    # graphferry.dgl / graphferry.pyg import DGL / PyG, so only on first use.
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

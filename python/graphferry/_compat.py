"""What differs between the torch and torch_geometric releases graphferry runs on.

graphferry is tested in two environments: the main one (python/requirements.txt),
where DGL pins torch 2.2 and torch_geometric 2.5, and the second one
(python/requirements-latest.txt) with the newest torch and torch_geometric of
the package index. Every choice that depends on those versions is made here,
once, so the rest of the package reads one name instead of a version check.

torch_geometric is imported lazily: the core package must import without it.
"""

from __future__ import annotations

import functools
import re

import torch

from ._native.lib import PyCapsule_GetName

__all__ = ["pyg_loaders_wrap_edge_index", "torch_imports_versioned_dlpack", "version_tuple"]


def version_tuple(version: str) -> tuple[int, int]:
    """``(major, minor)`` of a version string such as ``"2.8.1"`` or ``"2.15.0+cu132"``."""
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None:
        raise ValueError(f"not a version: {version!r}")
    return int(match.group(1)), int(match.group(2))


@functools.cache
def pyg_loaders_wrap_edge_index() -> bool:
    """Whether torch_geometric's own loaders yield ``edge_index`` as an ``EdgeIndex``.

    torch_geometric 2.5 wraps the sampled ``edge_index`` of its loaders
    (``loader.utils.filter_edge_store_``) in an ``EdgeIndex`` sorted by column;
    2.6 went back to a plain tensor (the wrapping is commented out there), and
    2.7 and 2.8 kept it so. Our loaders must yield what the installed PyG's
    loaders yield, so that code written against one works with the other.
    """
    import torch_geometric

    try:
        from torch_geometric.edge_index import EdgeIndex  # noqa: F401
    except ImportError:  # before 2.5: no EdgeIndex at all
        return False
    return version_tuple(torch_geometric.__version__) < (2, 6)


@functools.cache
def torch_imports_versioned_dlpack() -> bool:
    """Whether this torch's ``from_dlpack`` takes DLPack 1.x tensors
    (``DLManagedTensorVersioned`` in a ``"dltensor_versioned"`` capsule).

    Probed rather than read from the version: torch's ``from_dlpack`` asks
    every producer, its own tensors included, for ``__dlpack__(max_version=
    (1, 0))``, so a torch whose tensors answer that with a versioned capsule
    reads versioned capsules too. torch 2.2 refuses the keyword (TypeError);
    torch 2.15 answers with a versioned capsule.
    """
    try:
        capsule = torch.empty(0).__dlpack__(max_version=(1, 0))
    except TypeError:
        return False
    # Dropping the unconsumed capsule frees its tensor (torch's destructor).
    return PyCapsule_GetName(capsule) == b"dltensor_versioned"

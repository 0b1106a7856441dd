"""Deprecated: where :class:`graphferry.pyg.LinkNeighborLoader` lived before
:mod:`graphferry.pyg` became a package (now
:mod:`graphferry.pyg.link_neighbor_loader`). Import it from
:mod:`graphferry.pyg`."""

from __future__ import annotations

import warnings

from .pyg.link_neighbor_loader import LinkNeighborLoader

__all__ = ["LinkNeighborLoader"]

warnings.warn(
    "graphferry.pyg_link is deprecated: import LinkNeighborLoader from graphferry.pyg",
    DeprecationWarning,
    stacklevel=2,
)

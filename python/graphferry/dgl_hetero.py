"""Deprecated: what :mod:`graphferry.dgl` offered for heterographs before it
became a package (now :mod:`graphferry.dgl.hetero`, :mod:`graphferry.dgl.blocks`
and :mod:`graphferry.dgl.convert`). Import these from :mod:`graphferry.dgl`."""

from __future__ import annotations

import warnings

from .dgl import HeteroDataLoader, as_hetero_graph, to_hetero_blocks
from .dgl.convert import is_hetero_input

__all__ = ["HeteroDataLoader", "to_hetero_blocks", "as_hetero_graph", "is_hetero_input"]

warnings.warn(
    "graphferry.dgl_hetero is deprecated: import DataLoader, to_hetero_blocks and as_hetero_graph from graphferry.dgl",
    DeprecationWarning,
    stacklevel=2,
)

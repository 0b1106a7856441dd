"""Deprecated: where DGL's edge-level loading lived before :mod:`graphferry.dgl`
became a package (now :mod:`graphferry.dgl.edge`). Import these from
:mod:`graphferry.dgl`: ``graphferry.dgl.DataLoader`` given an edge prediction
sampler is the edge loader."""

from __future__ import annotations

import warnings

from .dgl import EdgeDataLoader, EdgePredictionSampler, HeteroEdgeDataLoader, as_edge_prediction_sampler

__all__ = ["EdgePredictionSampler", "as_edge_prediction_sampler", "EdgeDataLoader", "HeteroEdgeDataLoader"]

warnings.warn(
    "graphferry.dgl_link is deprecated: import as_edge_prediction_sampler and DataLoader from graphferry.dgl",
    DeprecationWarning,
    stacklevel=2,
)

"""The batches of :class:`graphferry.dgl.DataLoader` with DGL's
``SAINTSampler`` (GraphSAINT): each batch draws a node set as DGL's sampler
of that mode draws it, and is the subgraph the engine induces on it
(``gf_graph_induced_subgraph``), as ``SAINTSampler.sample`` returns it.

* ``mode='node'``: ``budget`` nodes drawn with replacement, node ``v`` with
  probability in proportion to its out-degree (at least 1), the distinct
  ones kept;
* ``mode='edge'``: ``budget`` edges drawn with replacement, edge ``u -> v``
  in proportion to ``1 / in_degree(v) + 1 / out_degree(u)`` (each at least
  1), the distinct ends of the distinct edges kept;
* ``mode='walk'``: ``budget = (num_roots, walk_length)``: that many roots
  drawn uniformly, a random walk of ``walk_length`` steps along out-edges
  from each (the engine's walk, ``gf_random_walk``, on the reversed graph),
  every node visited kept.

The engine draws each batch's nodes from its own random stream (the
loader's seed and the batch key: an epoch is reproducible from ``seed``).
"""

from __future__ import annotations

import numbers
from typing import Any

import dgl
import torch

from .._callback import BatchCallback
from ..errors import GF_EINVAL, InvalidArgumentError
from .convert import check_prefetch
from .node import SubgraphBatches

__all__ = ["SaintBatches", "saint_mode"]

_SAINT = dgl.dataloading.SAINTSampler
_MODES = {"node_sampler": "node", "edge_sampler": "edge", "walk_sampler": "walk"}


def saint_mode(sampler: Any) -> str | None:
    """The mode of a DGL ``SAINTSampler`` (``'node'``, ``'edge'`` or
    ``'walk'``), read from the draw it was made with; None when a subclass
    replaced that draw with its own."""
    draw = getattr(sampler.sampler, "__func__", None)
    for name, mode in _MODES.items():
        if draw is getattr(_SAINT, name):
            return mode
    return None


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"SAINTSampler's {what} must be an int (got {value!r})")
    value = int(value)
    if value < 0:
        raise ValueError(f"SAINTSampler's {what} must be >= 0 (got {value})")
    return value


class SaintBatches(SubgraphBatches):
    """How :class:`graphferry.dgl.DataLoader` serves DGL's ``SAINTSampler``:
    the seeds are DGL's placeholders (only their number counts: one
    subgraph per batch of them), and each batch is the subgraph of the
    nodes its mode draws (see the module's doc), made ahead by the engine's
    subgraph loader, its nodes in increasing id order, its edges as
    ``dgl.DGLGraph.subgraph`` lists them, ``dgl.NID``/``dgl.EID`` and the
    graph's data attached as DGL attaches them and
    ``prefetch_ndata``/``prefetch_edata`` gathered. A subclass of
    ``SAINTSampler`` with a draw of its own has it called on the DGLGraph
    by the engine's threads, ahead of the training loop, as DGL calls it
    (from torch's default generator: such draws are not reproducible from
    the loader's seed, and a resumed epoch draws its remaining batches
    anew), and the engine induces the subgraph of the nodes it returns."""

    shuffles = False  # the placeholders: only their number counts

    def __init__(self, graph: Any, indices: Any, sampler: Any):
        super().__init__(graph, indices, sampler)
        self.sampler = sampler
        self.mode = saint_mode(sampler)
        if self.mode is None and self.dgl_graph is None:
            raise TypeError("a SAINTSampler with a draw of its own needs the dgl.DGLGraph to call it on")
        if self.mode == "walk":
            budget = sampler.budget
            if not isinstance(budget, (tuple, list)) or len(budget) != 2:
                raise TypeError(f"SAINTSampler('walk')'s budget is (num_roots, walk_length) (got {budget!r})")
            self.num_roots = _count(budget[0], "budget[0] (num_roots)")
            self.walk_length = _count(budget[1], "budget[1] (walk_length)")
        elif self.mode is not None:
            self.budget = _count(sampler.budget, "budget")
        g = self.dgl_graph
        if g is not None:
            check_prefetch(g.ndata, self.prefetch_ndata, "ndata")
            check_prefetch(g.edata, self.prefetch_edata, "edata")
        else:
            held = self.graph.node_data_names()
            missing = [n for n in self.prefetch_ndata if n not in held]
            if missing:
                raise InvalidArgumentError(
                    GF_EINVAL, f"the graphferry.Graph has no node data {missing} to prefetch (it has {sorted(held)})"
                )

    def engine_draw(self) -> dict:
        """The engine's draw of a built-in mode, or a subclass's own draw
        called by the engine (``kind="drawn"``)."""
        if self.mode is None:
            return dict(kind="drawn", draw=BatchCallback(self._draw, "the SAINTSampler's draw"))
        if self.mode == "walk":
            return dict(kind="walks", budget=self.num_roots, walk_length=self.walk_length)
        weighting = "out_degree_min1" if self.mode == "node" else "inverse_degree"
        return dict(kind=f"{self.mode}s", weighting=weighting, budget=self.budget)

    def _draw(self, _items: torch.Tensor, _key: int) -> torch.Tensor:
        return torch.as_tensor(self.sampler.sampler(self.dgl_graph)).to(torch.int64)

    def engine_items(self, seeds: torch.Tensor) -> torch.Tensor:
        """Placeholders: only their number counts (one node set a batch)."""
        return torch.arange(seeds.numel())

"""What the subgraph samplers of :mod:`graphferry.dgl` (``SAINTSampler``)
and :mod:`graphferry.pyg` (``GraphSAINT*Sampler``, ``ShaDowKHopSampler``,
``ClusterLoader``) share: GraphSAINT's weighted draws of nodes or edges, the
nodes random walks visit, the random generator of one batch, and the torch
``DataLoader`` keywords of PyG's subgraph loaders, run in one process.

The graph work of these samplers is the engine's (its random walks,
``gf_random_walk``, and its induced-subgraph call,
``gf_graph_induced_subgraph``); what is drawn here is the batch's seed
set, as DGL and PyG draw it with torch: roots uniformly, nodes or edges with
probabilities they define.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ._loader import worker_threads

__all__ = ["WeightedDraw", "batch_generator", "visited", "in_process_kwargs", "WORKER_ONLY_ARGS"]

_MASK64 = (1 << 64) - 1


def batch_generator(seed: Any, key: int) -> torch.Generator:
    """The torch generator of the batch with key ``key`` (batch ``i`` of
    epoch ``e``: ``(e << 32) | i``) of a loader seeded with ``seed``: its own
    stream, reproducible from the seed, independent of the other batches'."""
    state = np.random.SeedSequence([int(seed) & _MASK64, int(key) & _MASK64]).generate_state(1, np.uint64)[0]
    return torch.Generator().manual_seed(int(state) & 0x7FFF_FFFF_FFFF_FFFF)


class WeightedDraw:
    """Draws ids ``i`` in ``[0, len(weights))`` with probability
    ``weights[i] / weights.sum()``, with replacement: the cumulative weights
    once (float64), then one ``searchsorted`` per draw of ``k``
    (``O(k log n)``). ``torch.multinomial`` draws the same distribution but
    refuses more than ``2**24`` categories, fewer edges than a large graph
    has. An id of weight 0 is never drawn."""

    def __init__(self, weights: torch.Tensor, what: str):
        w = weights.detach().to(torch.float64).reshape(-1)
        if w.numel() == 0:
            raise ValueError(f"no {what} to draw from (the graph has none)")
        if not bool(torch.isfinite(w).all()) or bool((w < 0).any()):
            raise ValueError(f"the weights of the {what} must be finite and >= 0")
        self.cdf = torch.cumsum(w, 0)
        if float(self.cdf[-1]) <= 0:
            raise ValueError(f"the weights of the {what} sum to 0")

    def __call__(self, k: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """int64 ``[k]``: ``k`` ids drawn independently."""
        u = torch.rand(int(k), dtype=torch.float64, generator=generator) * self.cdf[-1]
        return torch.searchsorted(self.cdf, u, right=True).clamp_(max=self.cdf.numel() - 1)


def visited(traces: torch.Tensor) -> torch.Tensor:
    """The distinct nodes of random walks' ``traces`` (the engine pads a
    walk that stopped with ``-1``), sorted."""
    return traces[traces >= 0].unique()


# torch DataLoader arguments that only configure worker processes: PyG's
# subgraph loaders pass them on to torch; graphferry's run in the calling
# process (the engine's threads do the graph work), so they are dropped.
WORKER_ONLY_ARGS = frozenset({"persistent_workers", "prefetch_factor", "worker_init_fn", "multiprocessing_context"})


def in_process_kwargs(kwargs: dict) -> tuple[dict, int]:
    """The torch ``DataLoader`` keywords of a PyG subgraph loader (a torch
    ``DataLoader`` itself) as graphferry's runs them, with the engine's
    sampling threads: ``num_workers > 0`` sets the threads (see
    :func:`~graphferry._loader.worker_threads`) and no worker process is
    forked (the engine's library must not cross a fork), so the worker-only
    keywords are dropped, as are ``dataset`` and ``collate_fn`` (the loader
    makes its own; PyG's GraphSAINT loaders drop them too, for PyTorch
    Lightning)."""
    kwargs = dict(kwargs)
    threads = worker_threads(kwargs.pop("num_workers", 0))
    for name in WORKER_ONLY_ARGS | {"dataset", "collate_fn"}:
        kwargs.pop(name, None)
    return kwargs, threads

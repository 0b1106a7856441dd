r"""graphferry as DGL's edge-level loader (link prediction).

:func:`as_edge_prediction_sampler` wraps a neighbour sampler as DGL's does;
:class:`graphferry.dgl.DataLoader` given such a sampler and seed EDGE ids
yields ``(input_nodes, pair_graph, neg_pair_graph, blocks)`` (without a
negative sampler: ``(input_nodes, pair_graph, blocks)``), like
``dgl.dataloading.DataLoader``. The engine draws the negatives, compacts the
pairs (``dgl.compact_graphs``' node order), leaves the batch's excluded
edges out of neighbour sampling and samples, in one call per batch.

.. code-block:: python

    sampler = graphferry.dgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([10, 10]), exclude="reverse_id",
        reverse_eids=reverse_eids,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(5))
    loader = graphferry.dgl.DataLoader(g, train_eids, sampler, batch_size=512, shuffle=True)
    for input_nodes, pair_graph, neg_pair_graph, blocks in loader:
        ...

DGL's own ``dgl.dataloading.as_edge_prediction_sampler(...)`` object is
accepted too. Supported: homogeneous graphs, ``exclude`` None, ``"self"`` or
``"reverse_id"``, and DGL's ``Uniform(k)``, ``PerSourceUniform(k)`` and
``GlobalUniform(k)`` (its defaults: no self-loops, without replacement).
Negatives come from the engine's random streams, not torch's: they are as
DGL's in distribution, not value by value.
"""

from __future__ import annotations

from typing import Any

import dgl
import torch

from ._link import EdgeSampler
from ._loader import refuse_workers
from ._options import SampleOptions
from ._resource import Closeable
from .sampling import random_seed

__all__ = ["EdgePredictionSampler", "as_edge_prediction_sampler", "EdgeDataLoader"]


class EdgePredictionSampler:
    r"""The settings of :func:`as_edge_prediction_sampler`, with the meaning
    of DGL's ``dgl.dataloading.EdgePredictionSampler``."""

    def __init__(
        self,
        sampler: Any,
        exclude: Any = None,
        reverse_eids: Any = None,
        reverse_etypes: Any = None,
        negative_sampler: Any = None,
        prefetch_labels: Any = None,
    ):
        self.sampler = sampler
        self.exclude = exclude
        self.reverse_eids = reverse_eids
        self.reverse_etypes = reverse_etypes
        self.negative_sampler = negative_sampler
        self.prefetch_labels = list(prefetch_labels or [])

    def __repr__(self) -> str:
        return (
            f"EdgePredictionSampler(exclude={self.exclude!r}, negative_sampler={type(self.negative_sampler).__name__})"
        )


def as_edge_prediction_sampler(
    sampler: Any,
    exclude: Any = None,
    reverse_eids: Any = None,
    reverse_etypes: Any = None,
    negative_sampler: Any = None,
    prefetch_labels: Any = None,
) -> EdgePredictionSampler:
    r"""DGL's ``as_edge_prediction_sampler`` for :class:`graphferry.dgl.DataLoader`.

    Args:
        sampler: a ``dgl.dataloading.NeighborSampler`` or
            :class:`graphferry.dgl.NeighborSampler`.
        exclude (str, optional): ``None``, ``"self"`` (the batch's seed
            edges are never sampled) or ``"reverse_id"`` (nor their reverses,
            ``reverse_eids[eid]``). (default: :obj:`None`)
        reverse_eids (Tensor, optional): int64 ``[E]``, for ``"reverse_id"``.
        reverse_etypes: heterogeneous graphs only: refused.
        negative_sampler: ``dgl.dataloading.negative_sampler.Uniform(k)``,
            ``PerSourceUniform(k)``, ``GlobalUniform(k)`` or None.
        prefetch_labels (list of str, optional): edge data wanted on
            ``pair_graph.edata`` (every edge field of the DGLGraph is
            attached lazily anyway).
    """
    settings = EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler, prefetch_labels)
    _engine_settings(settings)  # errors surface here, as DGL's checks do
    return settings


def is_edge_sampler(obj: Any) -> bool:
    """Whether ``obj`` is ours or DGL's edge prediction sampler."""
    return isinstance(obj, (EdgePredictionSampler, dgl.dataloading.EdgePredictionSampler))


def _negative(neg: Any) -> tuple[str | None, int]:
    ns = dgl.dataloading.negative_sampler
    if neg is None:
        return None, 0
    if isinstance(neg, ns.PerSourceUniform):
        return "per_source_uniform", int(neg.k)
    if isinstance(neg, ns.GlobalUniform):
        if not neg.exclude_self_loops or neg.replace:
            raise NotImplementedError(
                "graphferry implements GlobalUniform with its defaults only "
                f"(exclude_self_loops=True, replace=False; got {neg.exclude_self_loops}, {neg.replace})"
            )
        return "global_uniform", int(neg.k)
    raise TypeError(
        "graphferry draws negatives itself: negative_sampler must be DGL's Uniform(k), "
        f"PerSourceUniform(k) or GlobalUniform(k), or None (got '{type(neg).__name__}')"
    )


def _engine_settings(sampler: Any) -> tuple[Any, str | None, int, str | None, Any]:
    """(node sampler settings, negative, k, exclude, reverse_eids) of ours or
    DGL's EdgePredictionSampler."""
    from .dgl import _sampler_settings

    if not is_edge_sampler(sampler):
        raise TypeError(f"expected an edge prediction sampler (got '{type(sampler).__name__}')")
    settings = _sampler_settings(sampler.sampler)
    if sampler.reverse_etypes is not None:
        raise TypeError("graphferry supports homogeneous graphs only (got reverse_etypes)")
    exclude = sampler.exclude
    if exclude not in (None, "self", "reverse_id"):
        raise ValueError(
            f"graphferry's edge loader takes exclude=None, 'self' or 'reverse_id' (got {exclude!r}); "
            "reverse_types needs edge types and a callable runs Python per batch"
        )
    reverse = getattr(sampler, "reverse_eids", None)
    if exclude == "reverse_id" and reverse is None:
        raise ValueError("exclude='reverse_id' needs reverse_eids")
    negative, k = _negative(sampler.negative_sampler)
    return settings, negative, k, exclude, reverse if exclude == "reverse_id" else None


class EdgeDataLoader(Closeable):
    r"""DGL-style edge-level loader backed by the engine; what
    :class:`graphferry.dgl.DataLoader` becomes when given an edge prediction
    sampler.

    Args:
        graph (dgl.DGLGraph or graphferry.Graph): the graph (homogeneous). A
            DGLGraph's node and edge data reach the blocks and pair graphs
            through DGL's lazy frames, as with DGL's loader.
        indices (Tensor): the seed edge ids.
        graph_sampler: :func:`as_edge_prediction_sampler`'s result, or
            DGL's.
        device, batch_size, drop_last, shuffle: as DGL's DataLoader.
        seed (int, optional): seed of shuffling, negatives and sampling.
            (default: drawn from torch's generator, or ``generator``)
        num_threads (int): the engine's threads (<= 0: every core).
        **kwargs: torch DataLoader arguments: ``num_workers`` must be 0,
            ``generator`` seeds when ``seed`` is not given, the rest of
            DGL's tuning arguments are ignored.
    """

    def __init__(
        self,
        graph: Any,
        indices: Any,
        graph_sampler: Any,
        device: str | torch.device | None = None,
        use_ddp: bool = False,
        ddp_seed: int = 0,
        batch_size: int = 1,
        drop_last: bool = False,
        shuffle: bool = False,
        *args: Any,
        seed: int | None = None,
        num_threads: int = 0,
        queue_capacity: int = 2,
        **kwargs: Any,
    ):
        from .dgl import _IGNORED, _REFUSED, as_graph

        self._sampler: EdgeSampler | None = None
        refuse_workers(kwargs.pop("num_workers", 0))
        generator = kwargs.pop("generator", None)
        for name in kwargs:
            if name in _REFUSED:
                raise ValueError(f"graphferry.dgl.DataLoader does not take '{name}'")
            if name not in _IGNORED:
                raise TypeError(f"graphferry.dgl.DataLoader got an unexpected keyword argument '{name}'")
        if use_ddp:
            raise NotImplementedError("use_ddp is not implemented for graphferry's edge loader yet")
        if isinstance(indices, dict):
            raise TypeError("graphferry supports homogeneous graphs only (got seed edges per edge type)")
        settings, negative, k, exclude, reverse = _engine_settings(graph_sampler)
        self.graph = graph
        self.graph_sampler = graph_sampler
        self.batch_size = int(batch_size)
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be positive (got {batch_size})")
        self.drop_last = bool(drop_last)
        self.shuffle = bool(shuffle)
        self.device = torch.device("cpu" if device is None else device)
        self._dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else None
        self._idtype = self._dgl_graph.idtype if self._dgl_graph is not None else torch.int64
        self._has_negative = negative is not None
        eids = indices if isinstance(indices, torch.Tensor) else torch.as_tensor(indices)
        self.indices = eids.to(torch.int64).contiguous()
        if seed is None:
            if generator is not None:
                seed = int(torch.randint(0, 2**63 - 1, (), generator=generator))
            else:
                seed = random_seed()
        self.seed = int(seed)
        self._graph = as_graph(graph, settings.prob)
        options = SampleOptions(
            list(reversed(settings.fanouts)),
            replace=settings.replace,
            frontier="all",
            scheme=settings.scheme,
            biased=settings.prob is not None,
            layer_without_replacement=settings.layer_without_replacement,
            exclude_edges=settings.exclude_edges,
            seed=self.seed,
            num_threads=num_threads,
        )
        if reverse is not None:
            reverse = torch.as_tensor(reverse).to(torch.int64).contiguous()
        self._sampler = EdgeSampler(
            self._graph, options, mode="dgl", negative=negative, amount=k, exclude=exclude, reverse_eids=reverse
        )
        self._epoch = 0

    def __len__(self) -> int:
        n = len(self.indices)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self, epoch: int) -> torch.Tensor:
        if not self.shuffle:
            return self.indices
        gen = torch.Generator().manual_seed((self.seed * 1_000_003 + epoch) & (2**63 - 1))
        return self.indices[torch.randperm(len(self.indices), generator=gen)]

    def __iter__(self) -> Any:
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        epoch = self._epoch
        self._epoch += 1
        order = self._order(epoch)
        return (self._batch(order[i * self.batch_size : (i + 1) * self.batch_size], epoch, i) for i in range(len(self)))

    def sample(self, eids: Any, key: int = 0) -> tuple:
        """The batch of the seed edge ids ``eids`` under batch key ``key``
        (what one step of an epoch yields)."""
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        eids = torch.as_tensor(eids).to(torch.int64).contiguous()
        return self._convert(eids, self._sampler.sample(eids, key=key))

    def _batch(self, eids: torch.Tensor, epoch: int, index: int) -> tuple:
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        return self._convert(eids, self._sampler.sample(eids, key=(epoch << 32) | index))

    def _convert(self, eids: torch.Tensor, sample: Any) -> tuple:
        from .dgl import to_blocks

        g, idtype = self._dgl_graph, self._idtype
        blocks = to_blocks(sample.sub, g, idtype=idtype)
        seeds = sample.sub.seeds.to(idtype)
        n = len(seeds)
        pair = dgl.graph((sample.pos_src.to(idtype), sample.pos_dst.to(idtype)), num_nodes=n, idtype=idtype)
        out_eids = eids.to(idtype)
        if g is not None and (len(g.ndata) > 0 or len(g.edata) > 0):
            dgl.utils.set_new_frames(
                pair,
                node_frames=dgl.utils.extract_node_subframes(g, [seeds]),
                edge_frames=dgl.utils.extract_edge_subframes(g, [out_eids]),
            )
        else:
            pair.ndata[dgl.NID] = seeds
            pair.edata[dgl.EID] = out_eids
        input_nodes = blocks[0].srcdata[dgl.NID] if blocks else seeds
        if self._has_negative:
            neg = dgl.graph((sample.neg_src.to(idtype), sample.neg_dst.to(idtype)), num_nodes=n, idtype=idtype)
            neg.ndata[dgl.NID] = seeds
            out = (input_nodes, pair, neg, blocks)
        else:
            out = (input_nodes, pair, blocks)
        if self.device.type != "cpu":
            out = tuple(x.to(self.device) if not isinstance(x, list) else [b.to(self.device) for b in x] for x in out)
        return out

    def close(self) -> None:
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.close()


def dispatching_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """``DataLoader.__new__``: an edge prediction sampler (the third
    argument, ``graph_sampler``) makes an :class:`EdgeDataLoader`."""
    sampler = args[2] if len(args) > 2 else kwargs.get("graph_sampler")
    if is_edge_sampler(sampler):
        return EdgeDataLoader(*args, **kwargs)
    return object.__new__(cls)

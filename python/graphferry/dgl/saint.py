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

The three modes are the engine's subgraph loader
(:class:`graphferry._subgraph.SubgraphLoader`, ``gf_subgraph_loader_open``):
the engine draws each batch's nodes from its own random stream (the
loader's seed and the batch key, so that an epoch is reproducible from
``seed``), induces the subgraph and gathers ``prefetch_ndata`` /
``prefetch_edata`` on its threads, ahead of the training loop; this module
turns each batch into the ``DGLGraph`` DGL's sampler returns. A subclass
with a draw of its own is called here, batch by batch, and the engine
induces the subgraph of the nodes it returns.
"""

from __future__ import annotations

import numbers
from typing import Any

import dgl
import torch

from .. import _cache
from .._loader import sync_edge_data
from .._subgraph import SubgraphLoader, SubgraphSample, batch_generator
from ..errors import GF_EINVAL, InvalidArgumentError
from .convert import as_graph
from .node import SubgraphBatches, drop_replaced_node_data, induced_dgl, lazy_node_data

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
    nodes its mode draws (see the module's doc), made here, its nodes in
    increasing id order, its edges as ``dgl.DGLGraph.subgraph`` lists them,
    ``dgl.NID``/``dgl.EID`` and the graph's data attached as DGL attaches
    them and ``prefetch_ndata``/``prefetch_edata`` gathered. A subclass of
    ``SAINTSampler`` with a draw of its own has it called on the DGLGraph,
    and the engine induces the subgraph of the nodes it returns."""

    def __init__(self, graph: Any, indices: Any, sampler: Any):
        self.dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else None
        self.idtype = self.dgl_graph.idtype if self.dgl_graph is not None else torch.int64
        self.graph = as_graph(graph)
        self.seeds = torch.as_tensor(indices).view(-1)
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
        self.num_threads = 0  # the engine's threads (the DataLoader sets them)
        self._loader: SubgraphLoader | None = None
        self.prefetch_ndata = list(sampler.prefetch_ndata)
        self.prefetch_edata = list(sampler.prefetch_edata)
        self._node_data: dict[str, torch.Tensor] = {}
        g = self.dgl_graph
        if g is not None:
            for what, names, have in (("ndata", self.prefetch_ndata, g.ndata), ("edata", self.prefetch_edata, g.edata)):
                missing = [n for n in names if n not in have]
                if missing:
                    raise InvalidArgumentError(
                        GF_EINVAL, f"the DGLGraph has no {what} field {missing} to prefetch (it has {sorted(have)})"
                    )
        else:
            if self.prefetch_edata:
                raise ValueError(
                    "prefetch_edata needs the dgl.DGLGraph (a graphferry.Graph holds no edge data); "
                    f"got prefetch_edata={self.prefetch_edata}"
                )
            held = self.graph.node_data_names()
            missing = [n for n in self.prefetch_ndata if n not in held]
            if missing:
                raise InvalidArgumentError(
                    GF_EINVAL, f"the graphferry.Graph has no node data {missing} to prefetch (it has {sorted(held)})"
                )
            self._node_data = {n: self.graph.get_node_data(n) for n in self.prefetch_ndata}

    def _data_signature(self) -> tuple:
        """What the engine loader's gathers depend on: the prefetched
        tensors of the DGLGraph."""
        g = self.dgl_graph
        if g is None:
            return ()
        return tuple(_cache.tensor_signature(g.ndata[n]) for n in self.prefetch_ndata) + tuple(
            _cache.tensor_signature(g.edata[n]) for n in self.prefetch_edata
        )

    def _engine_loader(self, seed: Any, batch_size: int, drop_last: bool) -> SubgraphLoader:
        """The engine's loader of this mode (opened once, reopened when the
        DGLGraph's prefetched data was replaced since): the node data and
        edge data the engine holds are gathered on its threads; the rest is
        served by DGL's lazy columns."""
        signature = (self._data_signature(), int(seed), int(batch_size), bool(drop_last), self.seeds.numel())
        loader = getattr(self, "_loader", None)
        if loader is not None and not loader.closed and self._loader_signature == signature:
            return loader
        self.close()
        g = self.dgl_graph
        if g is not None:
            lazy = lazy_node_data(self.graph, g, self.prefetch_ndata)
            self._engine_ndata = [n for n in self.prefetch_ndata if n not in lazy]
            self._engine_edata = sync_edge_data(self.graph, {n: g.edata[n] for n in self.prefetch_edata})
            self._edata_signatures = {n: _cache.tensor_signature(g.edata[n]) for n in self._engine_edata}
        else:
            self._engine_ndata, self._engine_edata = list(self.prefetch_ndata), []
        if self.mode == "walk":
            draw = dict(kind="walks", budget=self.num_roots, walk_length=self.walk_length)
        else:
            weighting = "out_degree_min1" if self.mode == "node" else "inverse_degree"
            draw = dict(kind=f"{self.mode}s", weighting=weighting, budget=self.budget)
        self._loader = SubgraphLoader(
            self.graph,
            torch.arange(self.seeds.numel()),  # placeholders: only their number counts
            **draw,
            edge_order="src_eid",
            seed=int(seed),
            batch_size=batch_size,
            drop_last=drop_last,
            feature_names=self._engine_ndata,
            edge_feature_names=self._engine_edata,
            num_threads=self.num_threads,
        )
        self._loader_signature = signature
        return self._loader

    def close(self) -> None:
        """Closes the engine loader (it reopens on the next epoch)."""
        loader, self._loader = getattr(self, "_loader", None), None
        if loader is not None:
            loader.close()

    def epoch(self, number: int, seed: Any, batch_size: int, shuffle: bool, drop_last: bool, finish: Any) -> Any:
        """Epoch ``number``: the engine's batches (made ahead on its
        threads), each converted to DGL's subgraph; a subclass's own draw is
        made here, batch by batch. Placeholders are never shuffled: only
        their number counts."""
        if self.mode is None:
            yield from super().epoch(number, seed, batch_size, shuffle, drop_last, finish)
            return
        for sample in self._engine_loader(seed, batch_size, drop_last).epoch(number):
            yield finish(self._subgraph(sample))

    def _subgraph(self, sample: SubgraphSample) -> Any:
        """The DGLGraph of one engine batch, as ``dgl.DGLGraph.subgraph``
        gives it (the engine lists the edges in its order), with the
        gathered data in place of the lazy columns."""
        g, nodes, idtype = self.dgl_graph, sample.nodes, self.idtype
        src, dst = sample.edge_index[0], sample.edge_index[1]
        subg = dgl.graph((src.to(idtype), dst.to(idtype)), num_nodes=nodes.numel(), idtype=idtype)
        if g is not None:
            dgl.utils.set_new_frames(
                subg,
                node_frames=dgl.utils.extract_node_subframes(g, [nodes.to(idtype)]),
                edge_frames=dgl.utils.extract_edge_subframes(g, [sample.edge_ids.to(idtype)]),
            )
            drop_replaced_node_data(self.graph, g, sample.node_data)
        else:
            subg.ndata[dgl.NID] = nodes.to(idtype)
            subg.edata[dgl.EID] = sample.edge_ids.to(idtype)
        for name, rows in sample.node_data.items():
            subg.ndata[name] = rows
        for name, rows in sample.edge_data.items():
            if _cache.tensor_signature(g.edata[name]) == self._edata_signatures.get(name):  # not replaced since
                subg.edata[name] = rows
        # DGL's loader prefetches these: read now, not when first used
        for name in self.prefetch_ndata:
            subg.ndata[name] = subg.ndata[name]
        for name in self.prefetch_edata:
            subg.edata[name] = subg.edata[name]
        return subg

    def nodes(self, generator: torch.Generator) -> torch.Tensor:
        """The distinct nodes a subclass's own draw returns, sorted, int64."""
        return torch.as_tensor(self.sampler.sampler(self.dgl_graph)).to(torch.int64).unique()

    def batch(self, seeds: torch.Tensor, seed: Any, key: int) -> Any:
        """The batch of a subclass's own draw, made here."""
        nodes = self.nodes(batch_generator(seed, key))
        subg = induced_dgl(self.graph, self.dgl_graph, nodes, self.idtype)
        # DGL's loader prefetches these: gathered now, not when first read
        for name in self.prefetch_ndata:
            subg.ndata[name] = self._node_data[name][nodes] if self.dgl_graph is None else subg.ndata[name]
        for name in self.prefetch_edata:
            subg.edata[name] = subg.edata[name]
        return subg

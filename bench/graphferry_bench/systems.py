"""The systems measured, each behind one interface.

A system yields, per epoch, :class:`Batch` records in one of three modes:

* ``"sample"``: sampling only (no feature or label gathering);
* ``"load"``: sampling plus gathering the features of every input node and the
  labels of the seeds;
* ``"train"``: as ``"load"``, and the caller runs a GraphSAGE training step on
  each batch (DGL ``SAGEConv`` on blocks for the DGL-format systems, PyG
  ``SAGEConv`` on ``edge_index`` for the PyG-format ones).

Fan-outs are given from the seeds outwards (``[15, 10, 5]``: 15 neighbours per
seed, then 10, then 5), the order of graphferry's engine and PyG; they are
reversed for DGL and GraphBolt, which list the outermost layer first.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Callable

import torch

from .data import BenchGraph

MODES = ("sample", "load", "train")

PYG_MISSING = "PyG NeighborLoader: not measured (needs pyg-lib or torch-sparse, not installable from the package index)"


@dataclass
class Batch:
    fmt: str  # "dgl" (blocks) or "pyg" (edge_index)
    graph: Any  # list of DGL blocks, or the edge_index [2, E]
    x: torch.Tensor | None  # features of the input nodes (load/train modes)
    y: torch.Tensor | None  # labels of the seeds
    num_edges: int  # sampled edges in this batch
    batch_size: int  # seeds


class System:
    name: str = "?"
    fmt: str = "dgl"
    is_graphferry: bool = False
    modes: Sequence[str] = MODES
    note: str = ""

    def __init__(self, bg: BenchGraph, fanouts: Sequence[int], batch_size: int, seed: int):
        self.bg, self.fanouts, self.batch_size, self.seed = bg, list(fanouts), batch_size, seed

    def epochs(self, mode: str) -> Callable[[], Iterable[Batch]]:
        """A function that starts a new epoch in ``mode`` and returns its batches."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def _dgl_batch(blocks, load: bool) -> Batch:
    x = blocks[0].srcdata["feat"] if load else None
    y = blocks[-1].dstdata["label"] if load else None
    return Batch("dgl", blocks, x, y, sum(b.num_edges() for b in blocks), blocks[-1].num_dst_nodes())


# -- baselines ---------------------------------------------------------------------


class DGLClassic(System):
    """dgl.dataloading.DataLoader + NeighborSampler (features by DGL's prefetching)."""

    name = "DGL DataLoader"
    num_workers = 0

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._loaders = {}

    def epochs(self, mode):
        import dgl

        load = mode != "sample"
        if load not in self._loaders:
            sampler = dgl.dataloading.NeighborSampler(
                list(reversed(self.fanouts)),
                prefetch_node_feats=["feat"] if load else None,
                prefetch_labels=["label"] if load else None,
            )
            kw = dict(num_workers=self.num_workers)
            if self.num_workers:
                kw["persistent_workers"] = True
            torch.manual_seed(self.seed)
            self._loaders[load] = dgl.dataloading.DataLoader(
                self.bg.dgl(), self.bg.seeds, sampler, batch_size=self.batch_size, shuffle=True, **kw
            )
        dl = self._loaders[load]
        return lambda: (_dgl_batch(blocks, load) for _, _, blocks in dl)

    def close(self):
        self._loaders.clear()


class DGLWorkers(DGLClassic):
    name = "DGL DataLoader (num_workers=2)"
    num_workers = 2
    note = "forked worker processes, persistent_workers=True"


class GraphBolt(System):
    """DGL GraphBolt's CPU pipeline: ItemSampler -> sample_neighbor -> fetch_feature."""

    name = "DGL GraphBolt"
    note = "ItemSampler -> sample_neighbor -> fetch_feature, gb.DataLoader(num_workers=0), MiniBatch.blocks"

    def epochs(self, mode):
        import dgl.graphbolt as gb

        load = mode != "sample"
        bg = self.bg
        items = gb.ItemSet((bg.seeds, bg.label[bg.seeds]), names=("seed_nodes", "labels"))
        dp = gb.ItemSampler(items, batch_size=self.batch_size, shuffle=True)
        dp = dp.sample_neighbor(bg.graphbolt(), list(reversed(self.fanouts)))
        if load:
            store = gb.BasicFeatureStore({("node", None, "feat"): gb.TorchBasedFeature(bg.feat)})
            dp = dp.fetch_feature(store, node_feature_keys=["feat"])
        torch.manual_seed(self.seed)
        dl = gb.DataLoader(dp, num_workers=0)

        def convert(mb):
            blocks = mb.blocks
            x = mb.node_features["feat"] if load else None
            y = mb.labels if load else None
            return Batch("dgl", blocks, x, y, sum(b.num_edges() for b in blocks), blocks[-1].num_dst_nodes())

        return lambda: (convert(mb) for mb in dl)


def pyg_backend() -> str | None:
    """The sampling backend PyG's NeighborLoader would use, or None."""
    for mod in ("pyg_lib", "torch_sparse"):
        if importlib.util.find_spec(mod) is not None:
            return mod
    return None


class PyGNeighborLoader(System):
    name = "PyG NeighborLoader"
    fmt = "pyg"

    def epochs(self, mode):
        from torch_geometric.loader import NeighborLoader

        load = mode != "sample"
        data = self.bg.pyg(with_features=load)
        torch.manual_seed(self.seed)
        dl = NeighborLoader(data, self.fanouts, input_nodes=self.bg.seeds, batch_size=self.batch_size, shuffle=True)

        def convert(d):
            return Batch(
                "pyg",
                d.edge_index,
                d.x if load else None,
                d.y[: d.batch_size] if load else None,
                int(d.edge_index.size(1)),
                int(d.batch_size),
            )

        return lambda: (convert(d) for d in dl)


class IndexSelect(System):
    """Feature loading only: torch index_select of the features (and labels) of
    the input nodes of one epoch of graphferry's samples (the same node sets
    every epoch)."""

    name = "torch index_select (features only)"
    modes = ("load",)
    note = "feat.index_select over the input nodes of a graphferry epoch; no sampling, no training"

    def epochs(self, mode):
        import graphferry

        g = self.bg.graphferry_topology()
        gen = torch.Generator().manual_seed(self.seed)
        perm = self.bg.seeds[torch.randperm(self.bg.seeds.numel(), generator=gen)]
        node_sets = []
        for i, start in enumerate(range(0, perm.numel(), self.batch_size)):
            seeds = perm[start : start + self.batch_size]
            sub = graphferry.sample_neighbors(g, seeds, self.fanouts, seed=self.seed + i)
            node_sets.append((sub.nodes, seeds))
        feat, label = self.bg.feat, self.bg.label

        def run():
            for nodes, seeds in node_sets:
                x = feat.index_select(0, nodes)
                y = label.index_select(0, seeds)
                yield Batch("none", None, x, y, 0, seeds.numel())

        return run


class MemcpyCeiling(IndexSelect):
    """The memory-copy ceiling of feature loading: per batch, one contiguous
    copy of as many feature rows as the batch has input nodes (what a gather
    could reach if every row it reads were adjacent). The copies go into one
    buffer allocated and written once before the epochs (so pre-faulted) and
    reused by every batch: a ceiling that paid a fresh allocation and its page
    faults per batch would measure the allocator, not the copy (graphferry's
    own loader reuses pooled buffers). Each batch's ``x`` is therefore valid
    only until the next batch."""

    name = "memcpy ceiling (features only)"
    note = (
        "contiguous copy of the same number of feature rows per batch into one reused, pre-faulted buffer; "
        "no gather, no sampling"
    )

    def epochs(self, mode):
        gather = super().epochs(mode)
        sizes = [batch.x.shape[0] for batch in gather()]
        feat = self.bg.feat
        rows = feat.shape[0]
        buf = torch.empty((max(sizes, default=0), feat.shape[1]), dtype=feat.dtype)
        buf.zero_()  # touch every page now, outside the timed epochs

        def run():
            for i, n in enumerate(sizes):
                start = (i * 7919) % max(1, rows - n) if rows > n else 0
                x = buf[:n]
                x.copy_(feat[start : start + n])
                yield Batch("none", None, x, None, 0, 0)

        return run


# -- graphferry ------------------------------------------------------------------------


class GraphferryDGL(System):
    """graphferry.dgl.DataLoader (engine pipeline, queue capacity 2) with DGL's NeighborSampler."""

    name = "graphferry.dgl (pipelined)"
    is_graphferry = True
    note = "graphferry.dgl.DataLoader, queue_capacity=2, engine threads"

    def epochs(self, mode):
        import dgl

        import graphferry.dgl

        load = mode != "sample"
        sampler = dgl.dataloading.NeighborSampler(
            list(reversed(self.fanouts)),
            prefetch_node_feats=["feat"] if load else None,
            prefetch_labels=["label"] if load else None,
        )
        g = self.bg.graphferry() if load else self.bg.graphferry_topology()
        dl = graphferry.dgl.DataLoader(
            g, self.bg.seeds, sampler, batch_size=self.batch_size, shuffle=True, seed=self.seed, queue_capacity=2
        )
        self._dls = getattr(self, "_dls", []) + [dl]
        return lambda: (_dgl_batch(blocks, load) for _, _, blocks in dl)

    def close(self):
        for dl in getattr(self, "_dls", []):
            dl.close()


class GraphferryPyG(System):
    """graphferry.pyg.NeighborLoader on the graphferry Graph (node data "feat", "label")."""

    name = "graphferry.pyg (pipelined)"
    fmt = "pyg"
    is_graphferry = True
    note = "graphferry.pyg.NeighborLoader, queue_capacity=2, engine threads"

    def epochs(self, mode):
        import graphferry.pyg

        load = mode != "sample"
        g = self.bg.graphferry() if load else self.bg.graphferry_topology()
        dl = graphferry.pyg.NeighborLoader(
            g,
            self.fanouts,
            input_nodes=self.bg.seeds,
            batch_size=self.batch_size,
            shuffle=True,
            seed=self.seed,
            queue_capacity=2,
        )
        self._dls = getattr(self, "_dls", []) + [dl]

        def convert(d):
            x = d.feat if load else None
            y = d.label[: d.batch_size] if load else None
            return Batch("pyg", d.edge_index, x, y, int(d.edge_index.size(1)), int(d.batch_size))

        return lambda: (convert(d) for d in dl)

    def close(self):
        for dl in getattr(self, "_dls", []):
            dl.close()


class GraphferrySequential(System):
    """graphferry.sample_neighbors per batch in the calling thread, then the
    features by torch index_select of the node data (read once with
    Graph.get_node_data): no pipelining, nothing runs ahead."""

    is_graphferry = True
    frontier = "all"

    def epochs(self, mode):
        import graphferry
        import graphferry.dgl

        load = mode != "sample"
        g = self.bg.graphferry_topology()
        feat, label = self.bg.feat, self.bg.label
        if load and not hasattr(self, "_feat"):
            # the node data as graphferry holds it, copied out once
            self._feat = self.bg.graphferry().get_node_data("feat")
            self._label = self.bg.graphferry().get_node_data("label").to(torch.int64)
        if load:
            feat, label = self._feat, self._label
        seeds_all = self.bg.seeds
        counter = {"epoch": 0}

        def run() -> Iterator[Batch]:
            epoch = counter["epoch"]
            counter["epoch"] += 1
            gen = torch.Generator().manual_seed(self.seed * 1000003 + epoch)
            perm = seeds_all[torch.randperm(seeds_all.numel(), generator=gen)]
            for i, start in enumerate(range(0, perm.numel(), self.batch_size)):
                seeds = perm[start : start + self.batch_size]
                sub = graphferry.sample_neighbors(
                    g, seeds, self.fanouts, frontier=self.frontier, seed=(self.seed + epoch * 7919 + i * 104729)
                )
                yield self.convert(sub, seeds, feat if load else None, label if load else None)

        return run


class GraphferryDGLSequential(GraphferrySequential):
    name = "graphferry.dgl (sequential)"
    note = "sample_neighbors + to_blocks + index_select, main thread"

    def convert(self, sub, seeds, feat, label):
        import graphferry.dgl

        blocks = graphferry.dgl.to_blocks(sub)
        x = feat.index_select(0, sub.nodes[: blocks[0].num_src_nodes()]) if feat is not None else None
        y = label.index_select(0, seeds) if label is not None else None
        return Batch("dgl", blocks, x, y, sum(b.num_edges for b in sub.blocks), seeds.numel())


class GraphferryPyGSequential(GraphferrySequential):
    name = "graphferry.pyg (sequential)"
    fmt = "pyg"
    frontier = "new"
    note = "sample_neighbors(frontier='new') + index_select, main thread"

    def convert(self, sub, seeds, feat, label):
        if sub.blocks:
            edge_index = torch.cat([b.edge_index() for b in sub.blocks], dim=1)
        else:
            edge_index = torch.empty(2, 0, dtype=torch.int64)
        x = feat.index_select(0, sub.nodes) if feat is not None else None
        y = label.index_select(0, seeds) if label is not None else None
        return Batch("pyg", edge_index, x, y, int(edge_index.size(1)), seeds.numel())


BASELINES = [DGLClassic, DGLWorkers, GraphBolt, PyGNeighborLoader, IndexSelect, MemcpyCeiling]
GRAPHFERRY = [GraphferryDGL, GraphferryDGLSequential, GraphferryPyG, GraphferryPyGSequential]
ALL_SYSTEMS = BASELINES + GRAPHFERRY


def available(cls, quick_workers: bool = True) -> tuple[bool, str]:
    """Whether a system can run here, and why not."""
    if cls is PyGNeighborLoader and pyg_backend() is None:
        return False, PYG_MISSING
    if cls is GraphBolt:
        try:
            import dgl.graphbolt  # noqa: F401
        except Exception as err:  # pragma: no cover - depends on the install
            return False, f"DGL GraphBolt: not measured ({err})"
    return True, ""


# -- models --------------------------------------------------------------------------------


class DGLSage(torch.nn.Module):
    def __init__(self, in_dim, hidden, classes, layers=3):
        super().__init__()
        from dgl.nn import SAGEConv

        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.layers = torch.nn.ModuleList(SAGEConv(a, b, "mean") for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, blocks, x):
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            x = layer(block, x)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x


class PyGSage(torch.nn.Module):
    def __init__(self, in_dim, hidden, classes, layers=3):
        super().__init__()
        from torch_geometric.nn import SAGEConv

        dims = [in_dim] + [hidden] * (layers - 1) + [classes]
        self.layers = torch.nn.ModuleList(SAGEConv(a, b, aggr="mean") for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, edge_index, x, batch_size):
        for i, layer in enumerate(self.layers):
            x = layer(x, edge_index)
            if i < len(self.layers) - 1:
                x = torch.relu(x)
        return x[:batch_size]


class Trainer:
    """One GraphSAGE (3 layers, mean aggregation) + Adam, trained batch by batch."""

    def __init__(self, fmt: str, in_dim: int, hidden: int, classes: int, layers: int, seed: int = 0):
        torch.manual_seed(seed)
        cls = DGLSage if fmt == "dgl" else PyGSage
        self.fmt = fmt
        self.model = cls(in_dim, hidden, classes, layers)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.steps = 0

    def step(self, batch: Batch) -> float:
        self.model.train()
        if batch.fmt == "dgl":
            out = self.model(batch.graph, batch.x)
        else:
            out = self.model(batch.graph, batch.x, batch.batch_size)
        loss = torch.nn.functional.cross_entropy(out, batch.y, ignore_index=-1)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        self.steps += 1
        return float(loss.detach())

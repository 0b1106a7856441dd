"""GraphSAINT epochs on the engine's pipeline against the same batches made
on the training thread, in one process run.

Three loaders give DGL's ``SAINTSampler`` batches (``g.subgraph`` of a drawn
node set, with its features) of the shipped Cora graph:

* ``pipelined``: ``graphferry.dgl.DataLoader`` (the engine's subgraph
  loader draws, induces and gathers ahead of the training loop, on its
  threads);
* ``training thread``: what graphferry did before the subgraph loaders
  moved onto the pipeline, kept here as the reference: each batch drawn
  with torch (DGL's weights, an inverse-CDF lookup), induced by one engine
  call (``gf_graph_induced_subgraph``) and its features indexed, all in the
  training thread, nothing made ahead;
* ``DGL``: DGL's own ``DataLoader``.

Each batch is followed by a simulated training step (a dense layer forward
and backward over the batch's features, ``--step-ms`` long at least), as a
training loop would; the epochs of the three loaders are interleaved (round
``r`` runs epoch ``r`` of each in turn). Reported: the median epoch time of
each and the ratios ``training thread / pipelined`` and ``DGL /
pipelined``, from the same run. Nothing here is asserted.

With ``--kind`` other than ``saint``, the other subgraph loaders' sampling
epochs beside their counterparts, all on the engine path (issue 29):
``dgl_cluster`` (``ClusterGCNSampler``) and ``dgl_shadow``
(``ShaDowKHopSampler``) against DGL's ``DataLoader``; ``pyg_cluster``
against PyG's own ``ClusterLoader`` on the same ``ClusterData``;
``pyg_saint`` (``GraphSAINTRandomWalkSampler``) and ``pyg_shadow``, whose
PyG counterparts need ``torch_sparse``/``pyg-lib`` (not installable here:
only graphferry's epoch is reported for them). Ratios are each loader's
median epoch over graphferry's, from the same run.

    python bench/subgraph_bench.py [--kind saint|dgl_cluster|dgl_shadow|pyg_cluster|pyg_saint|pyg_shadow]
                                   [--mode node|edge|walk] [--epochs 7] [--out bench/results/subgraph]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import dgl
import torch

import graphferry
import graphferry.dgl
from graphferry.sampling import induced_subgraph

HERE = Path(__file__).resolve().parent


def cora() -> dgl.DGLGraph:
    graph = graphferry.Graph.open(str(HERE.parent / "examples" / "data" / "cora"))
    src, dst, _ = graph.edges()
    g = dgl.graph((src, dst), num_nodes=graph.num_nodes)
    g.ndata["feat"] = graph.get_node_data("feat")
    graph.close()
    return g


class TrainingThreadSaint:
    """The reference: the batches of ``SAINTSampler(mode, budget)`` made on
    the caller's thread, one at a time (graphferry's way before its
    subgraph loaders ran on the pipeline)."""

    def __init__(self, g: dgl.DGLGraph, mode: str, budget, batches: int, seed: int):
        self.g, self.mode, self.budget, self.batches, self.seed = g, mode, budget, batches, seed
        src, dst = (t.long() for t in g.edges(order="eid"))
        self.graph = graphferry.Graph.from_coo(src, dst, num_nodes=g.num_nodes())
        self.reversed = graphferry.Graph.from_coo(dst, src, num_nodes=g.num_nodes())  # walks along out-edges
        self.src, self.dst = src, dst
        out_deg = torch.bincount(src, minlength=g.num_nodes()).double().clamp(min=1)
        in_deg = torch.bincount(dst, minlength=g.num_nodes()).double().clamp(min=1)
        weights = out_deg if mode == "node" else 1 / in_deg[dst] + 1 / out_deg[src]
        self.cdf = torch.cumsum(weights, 0)
        self.epoch = 0

    def _nodes(self, gen: torch.Generator) -> torch.Tensor:
        if self.mode == "walk":
            roots = torch.randint(0, self.g.num_nodes(), (self.budget[0],), generator=gen)
            seed = int(torch.randint(0, 2**62, (), generator=gen))
            traces = graphferry.random_walk(self.reversed, roots, self.budget[1], seed=seed)[0]
            return traces[traces >= 0].unique()
        u = torch.rand(self.budget, dtype=torch.float64, generator=gen) * self.cdf[-1]
        drawn = torch.searchsorted(self.cdf, u, right=True).clamp_(max=self.cdf.numel() - 1).unique()
        if self.mode == "node":
            return drawn
        return torch.cat([self.src[drawn], self.dst[drawn]]).unique()

    def __iter__(self):
        gen = torch.Generator().manual_seed(self.seed * 1000 + self.epoch)
        self.epoch += 1
        for _ in range(self.batches):
            nodes = self._nodes(gen)
            s, d, e = induced_subgraph(self.graph, nodes)
            order = torch.argsort(s * (int(e.max()) + 1 if e.numel() else 1) + e)
            sg = dgl.graph((s[order], d[order]), num_nodes=nodes.numel())
            sg.ndata[dgl.NID], sg.edata[dgl.EID] = nodes, e[order]
            sg.ndata["feat"] = self.g.ndata["feat"][nodes]
            yield sg


def features(batch) -> torch.Tensor:
    """The node features of a batch of any kind (a DGL subgraph, DGL's
    ShaDow tuple, a PyG Data)."""
    if isinstance(batch, tuple):
        batch = batch[2]
    return batch.ndata["feat"] if isinstance(batch, dgl.DGLGraph) else batch.x


def kind_loaders(kind: str, g: dgl.DGLGraph, args) -> tuple[str, dict]:
    """The title and the loaders of a ``--kind`` other than saint,
    graphferry's first."""
    import tempfile

    from torch_geometric.data import Data
    from torch_geometric.loader import ClusterLoader as PyGClusterLoader

    import graphferry.pyg as gp

    src, dst = g.edges(order="eid")
    data = Data(x=g.ndata["feat"], edge_index=torch.stack([src, dst]).long(), num_nodes=g.num_nodes())
    t = args.threads
    if kind == "dgl_cluster":
        parts = 100
        sampler = dgl.dataloading.ClusterGCNSampler(
            g, parts, cache_path=str(Path(tempfile.gettempdir()) / "gf_bench_cora_parts.pkl"), prefetch_ndata=["feat"]
        )
        ids = torch.arange(parts)
        kw = dict(batch_size=5, shuffle=True)
        return f"ClusterGCNSampler({parts} parts), 5 parts a batch", {
            "graphferry": graphferry.dgl.DataLoader(g, ids, sampler, seed=1, num_threads=t, **kw),
            "DGL": dgl.dataloading.DataLoader(g, ids, sampler, **kw),
        }
    if kind == "dgl_shadow":
        sampler = dgl.dataloading.ShaDowKHopSampler([10, 5], prefetch_node_feats=["feat"])
        ids = torch.arange(args.batches * 32)
        kw = dict(batch_size=32, shuffle=True)
        return "ShaDowKHopSampler([10, 5]), 32 seeds a batch", {
            "graphferry": graphferry.dgl.DataLoader(g, ids, sampler, seed=1, num_threads=t, **kw),
            "DGL": dgl.dataloading.DataLoader(g, ids, sampler, **kw),
        }
    if kind == "pyg_cluster":
        cd = gp.ClusterData(data, num_parts=100, log=False)
        return "ClusterData(100 parts) + ClusterLoader, 5 parts a batch", {
            "graphferry": gp.ClusterLoader(cd, batch_size=5, shuffle=True, num_workers=t),
            "PyG": PyGClusterLoader(cd, batch_size=5, shuffle=True),
        }
    if kind == "pyg_saint":
        loader = gp.GraphSAINTRandomWalkSampler(
            data, batch_size=500, walk_length=3, num_steps=args.batches, log=False, num_workers=t
        )
        return "GraphSAINTRandomWalkSampler(500 roots, 3 steps) (PyG's needs torch_sparse: not run)", {
            "graphferry": loader
        }
    loader = gp.ShaDowKHopSampler(data, depth=2, num_neighbors=5, batch_size=32, shuffle=True, num_workers=t)
    return "ShaDowKHopSampler(depth 2, 5 neighbours), 32 seeds a batch (PyG's needs torch_sparse: not run)", {
        "graphferry": loader
    }


def step(model: torch.nn.Module, batch, step_ms: float) -> None:
    """A training step's stand-in: at least ``step_ms`` of a dense layer
    forward and backward over the batch's features."""
    t0 = time.perf_counter()
    while True:
        model(features(batch)).sum().backward()
        if (time.perf_counter() - t0) * 1e3 >= step_ms:
            return


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--kind",
        choices=["saint", "dgl_cluster", "dgl_shadow", "pyg_cluster", "pyg_saint", "pyg_shadow"],
        default="saint",
    )
    ap.add_argument("--mode", choices=["node", "edge", "walk"], default="edge")
    ap.add_argument("--epochs", type=int, default=7)
    ap.add_argument("--batches", type=int, default=40, help="batches an epoch")
    ap.add_argument("--step-ms", type=float, default=5.0, help="the simulated training step, per batch")
    ap.add_argument("--threads", type=int, default=0, help="graphferry's threads (0: every core)")
    ap.add_argument("--out", default=str(HERE / "results" / "subgraph"))
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    g = cora()
    if args.kind != "saint":
        return other_kind(args, g)
    budget = {"node": 2000, "edge": 1500, "walk": (500, 3)}[args.mode]
    sampler = dgl.dataloading.SAINTSampler(args.mode, budget, prefetch_ndata=["feat"])
    placeholders = torch.arange(args.batches)
    loaders = {
        "pipelined": graphferry.dgl.DataLoader(g, placeholders, sampler, seed=1, num_threads=args.threads),
        "training thread": TrainingThreadSaint(g, args.mode, budget, args.batches, seed=1),
        "DGL": dgl.dataloading.DataLoader(g, placeholders, sampler),
    }
    model = torch.nn.Linear(g.ndata["feat"].shape[1], 64)
    times: dict[str, list[float]] = {name: [] for name in loaders}
    for r in range(args.epochs + 1):  # round 0 warms up
        for name, loader in loaders.items():
            t0 = time.perf_counter()
            n = 0
            for sg in loader:
                step(model, sg, args.step_ms)
                n += 1
            if r > 0:
                times[name].append(time.perf_counter() - t0)
            assert n == args.batches, (name, n)
    median = {name: statistics.median(t) for name, t in times.items()}
    result = {
        "mode": args.mode,
        "budget": budget,
        "batches": args.batches,
        "step_ms": args.step_ms,
        "epochs": args.epochs,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "epoch_s": median,
        "training_thread_over_pipelined": median["training thread"] / median["pipelined"],
        "dgl_over_pipelined": median["DGL"] / median["pipelined"],
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"saint_{args.mode}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"SAINTSampler('{args.mode}', {budget}) on Cora, {args.batches} batches an epoch, "
        f"a {args.step_ms:g} ms training step a batch, median of {args.epochs} epochs ({os.cpu_count()} CPUs)",
        "",
        "| loader | epoch (s) |",
        "|---|---|",
        *(f"| {name} | {t:.3f} |" for name, t in median.items()),
        "",
        f"training thread / pipelined: {result['training_thread_over_pipelined']:.2f}x; "
        f"DGL / pipelined: {result['dgl_over_pipelined']:.2f}x",
    ]
    (out / f"saint_{args.mode}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def other_kind(args, g: dgl.DGLGraph) -> int:
    """One run of a ``--kind`` other than saint: epochs interleaved as
    saint's, each loader's median epoch and its ratio to graphferry's."""
    title, loaders = kind_loaders(args.kind, g, args)
    model = torch.nn.Linear(g.ndata["feat"].shape[1], 64)
    times: dict[str, list[float]] = {name: [] for name in loaders}
    batches: dict[str, int] = {}
    for r in range(args.epochs + 1):  # round 0 warms up
        for name, loader in loaders.items():
            t0 = time.perf_counter()
            n = 0
            for batch in loader:
                step(model, batch, args.step_ms)
                n += 1
            if r > 0:
                times[name].append(time.perf_counter() - t0)
            batches[name] = n
    median = {name: statistics.median(t) for name, t in times.items()}
    load = os.getloadavg()
    result = {
        "kind": args.kind,
        "title": title,
        "batches": batches,
        "step_ms": args.step_ms,
        "epochs": args.epochs,
        "cpus": os.cpu_count(),
        "loadavg_after": load,
        "platform": platform.platform(),
        "epoch_s": median,
        "over_graphferry": {name: t / median["graphferry"] for name, t in median.items()},
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{args.kind}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"{title} on Cora, a {args.step_ms:g} ms training step a batch, median of {args.epochs} epochs "
        f"({os.cpu_count()} CPUs, load average after the run {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f})",
        "",
        "| loader | batches | epoch (s) | / graphferry |",
        "|---|---|---|---|",
        *(f"| {n} | {batches[n]} | {t:.3f} | {t / median['graphferry']:.2f}x |" for n, t in median.items()),
    ]
    (out / f"{args.kind}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

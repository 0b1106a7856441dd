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

    python bench/subgraph_bench.py [--mode node|edge|walk] [--epochs 7] [--out bench/results/subgraph]
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


def step(model: torch.nn.Module, sg: dgl.DGLGraph, step_ms: float) -> None:
    """A training step's stand-in: at least ``step_ms`` of a dense layer
    forward and backward over the batch's features."""
    t0 = time.perf_counter()
    while True:
        model(sg.ndata["feat"]).sum().backward()
        if (time.perf_counter() - t0) * 1e3 >= step_ms:
            return


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["node", "edge", "walk"], default="edge")
    ap.add_argument("--epochs", type=int, default=7)
    ap.add_argument("--batches", type=int, default=40, help="batches an epoch")
    ap.add_argument("--step-ms", type=float, default=5.0, help="the simulated training step, per batch")
    ap.add_argument("--threads", type=int, default=0, help="graphferry's threads (0: every core)")
    ap.add_argument("--out", default=str(HERE / "results" / "subgraph"))
    args = ap.parse_args(argv)
    torch.manual_seed(0)
    g = cora()
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


if __name__ == "__main__":
    sys.exit(main())

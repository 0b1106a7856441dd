"""Sampling epochs of edge-level loaders on CiteSeer's edges: DGL's own
(as_edge_prediction_sampler + dgl.dataloading.DataLoader) beside
graphferry.dgl.DataLoader with the same sampler, and graphferry's PyG
LinkNeighborLoader. A sampling epoch iterates the loader and touches each
batch's structure (pair graphs and blocks, not features), with no model, so
that it measures what making the batches costs the training thread.

The graph is examples/train_link.py's training graph (both directions of 85%
of CiteSeer's undirected edges, edge e and e + E reverses), every edge a seed,
batch 512, fan-outs [10, 10], Uniform(1) negatives, exclude="reverse_id".

    python bench/link_epoch.py [--epochs 5] [--threads 0]

Prints the median epoch time of each loader (after one warm-up epoch).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import dgl
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))

import train_link  # noqa: E402

import graphferry.dgl  # noqa: E402


def epochs(loader, n, touch):
    times = []
    for _ in range(n + 1):
        t0 = time.perf_counter()
        for batch in loader:
            touch(batch)
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    feat, pairs = train_link.load_citeseer()
    g, reverse, _, _ = train_link.split(feat.size(0), pairs, 0)
    g.ndata["feat"] = feat
    eids = torch.arange(g.num_edges())
    neighbor = dgl.dataloading.NeighborSampler([10, 10])
    kw = dict(exclude="reverse_id", reverse_eids=reverse, negative_sampler=dgl.dataloading.negative_sampler.Uniform(1))

    def touch_dgl(batch):
        # The batch's structure, not its features: a sampling epoch.
        _, pair, neg, blocks = batch
        pair.num_edges(), neg.num_edges(), [b.num_edges() for b in blocks]

    ours = graphferry.dgl.DataLoader(
        g,
        eids,
        graphferry.dgl.as_edge_prediction_sampler(neighbor, **kw),
        batch_size=512,
        shuffle=True,
        seed=0,
        num_threads=args.threads,
    )
    theirs = dgl.dataloading.DataLoader(
        g, eids, dgl.dataloading.as_edge_prediction_sampler(neighbor, **kw), batch_size=512, shuffle=True
    )
    t_ours = epochs(ours, args.epochs, touch_dgl)
    t_dgl = epochs(theirs, args.epochs, touch_dgl)
    print(f"edges {g.num_edges()}, batches {len(ours)}, torch threads {torch.get_num_threads()}")
    print(f"DGL's edge loader:        {t_dgl:.3f} s an epoch")
    print(f"graphferry.dgl.DataLoader: {t_ours:.3f} s an epoch ({t_dgl / t_ours:.2f}x)")
    try:
        from torch_geometric.data import Data

        from graphferry import pyg as gfpyg
    except ImportError:
        return
    src, dst = g.edges()
    data = Data(edge_index=torch.stack([src, dst]), num_nodes=g.num_nodes())
    pyg = gfpyg.LinkNeighborLoader(
        data, [10, 10], neg_sampling="binary", batch_size=512, shuffle=True, seed=0, num_threads=args.threads
    )
    t_pyg = epochs(pyg, args.epochs, lambda b: b.edge_index.shape)
    print(f"graphferry.pyg.LinkNeighborLoader: {t_pyg:.3f} s an epoch")


if __name__ == "__main__":
    main()

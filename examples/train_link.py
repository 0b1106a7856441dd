"""Link prediction on CiteSeer with a GraphSAGE encoder: graphferry's DGL edge
loader beside DGL's own, same model, epochs and seeds; prints the test AUC of
each.

    python examples/train_link.py                 # both loaders, 10 epochs
    python examples/train_link.py --loader graphferry --epochs 20

CiteSeer comes from the repository (tests/data/citeseer.npz, unpacked by
tests/python/testdata.py into a temporary folder) or from the shared
datasets where they exist. Its undirected edges are split 85/5/10 into
train/val/test; the training graph holds both directions of the training
edges (edge e and e + E are reverses), every training edge is a seed, and a
batch's seed edges and their reverses are excluded from neighbour sampling
(exclude="reverse_id"), so the model never sees the edges it scores. Test
AUC ranks the held-out edges against as many random non-edges.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import dgl
import dgl.nn as dglnn
import numpy as np
import torch
import torch.nn.functional as F

import graphferry.dgl

REPO = Path(__file__).resolve().parents[1]


def load_citeseer():
    """(features, undirected edges u < v) of CiteSeer."""
    sys.path.insert(0, str(REPO / "tests" / "python"))
    import testdata

    path = testdata.dataset_dir("citeseer")
    if path is None:
        raise SystemExit("CiteSeer not found (tests/data/citeseer.npz is missing)")
    indptr = np.load(path / "indptr.npy")
    indices = np.load(path / "indices.npy")
    feat = torch.from_numpy(np.load(path / "feat.npy"))
    dst = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    u, v = np.minimum(indices, dst), np.maximum(indices, dst)
    keep = u != v
    pairs = np.unique(np.stack([u[keep], v[keep]], 1), axis=0)
    return feat / feat.sum(1, keepdim=True).clamp(min=1), torch.from_numpy(pairs.T.copy())


def split(num_nodes, pairs, seed):
    """Training graph (both directions, reverse edge ids) and the test
    positives and negatives."""
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(pairs.size(1), generator=gen)
    n_test, n_val = int(0.10 * pairs.size(1)), int(0.05 * pairs.size(1))
    test, train = pairs[:, perm[:n_test]], pairs[:, perm[n_test + n_val :]]
    src, dst = torch.cat([train[0], train[1]]), torch.cat([train[1], train[0]])
    g = dgl.graph((src, dst), num_nodes=num_nodes)
    e = train.size(1)
    reverse = torch.cat([torch.arange(e, 2 * e), torch.arange(0, e)])
    # Test negatives: random pairs that are not edges of the whole graph.
    existing = set(map(tuple, pairs.T.tolist()))
    negs = []
    while len(negs) < n_test:
        a, b = torch.randint(0, num_nodes, (2,), generator=gen).tolist()
        if a != b and (min(a, b), max(a, b)) not in existing:
            negs.append((a, b))
    return g, reverse, test, torch.tensor(negs).T


class SAGE(torch.nn.Module):
    def __init__(self, in_feats, hidden):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            [dglnn.SAGEConv(in_feats, hidden, "mean"), dglnn.SAGEConv(hidden, hidden, "mean")]
        )

    def forward(self, blocks_or_graph, x):
        graphs = blocks_or_graph if isinstance(blocks_or_graph, list) else [blocks_or_graph] * len(self.layers)
        for i, (layer, g) in enumerate(zip(self.layers, graphs)):
            x = layer(g, x)
            if i + 1 < len(self.layers):
                x = F.relu(x)
        return x


def score(h, src, dst):
    return (h[src] * h[dst]).sum(1)


def auc(pos, neg):
    """Area under the ROC curve: the probability that a positive outranks a
    negative (ties count half)."""
    scores = torch.cat([pos, neg])
    order = scores.argsort()
    ranks = torch.empty_like(scores)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=scores.dtype)
    # average ranks over ties
    uniq, inv = scores.unique(return_inverse=True)
    sums = torch.zeros(len(uniq), dtype=scores.dtype).index_add_(0, inv, ranks)
    counts = torch.zeros(len(uniq), dtype=scores.dtype).index_add_(0, inv, torch.ones_like(ranks))
    ranks = (sums / counts)[inv]
    n_pos, n_neg = len(pos), len(neg)
    return float((ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def run(loader_kind, *, epochs=10, seed=0, fanouts=(10, 10), batch_size=512, hidden=128, lr=0.005, k=1, log=print):
    """Trains with the given loader ("graphferry" or "dgl") and returns the
    test AUC."""
    feat, pairs = load_citeseer()
    g, reverse, test_pos, test_neg = split(feat.size(0), pairs, seed)
    g.ndata["feat"] = feat
    torch.manual_seed(seed)
    model = SAGE(feat.size(1), hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    neighbor = dgl.dataloading.NeighborSampler(list(fanouts))
    kw = dict(exclude="reverse_id", reverse_eids=reverse, negative_sampler=dgl.dataloading.negative_sampler.Uniform(k))
    eids = torch.arange(g.num_edges())
    if loader_kind == "graphferry":
        sampler = graphferry.dgl.as_edge_prediction_sampler(neighbor, **kw)
        loader = graphferry.dgl.DataLoader(g, eids, sampler, batch_size=batch_size, shuffle=True, seed=seed)
    else:
        sampler = dgl.dataloading.as_edge_prediction_sampler(neighbor, **kw)
        loader = dgl.dataloading.DataLoader(g, eids, sampler, batch_size=batch_size, shuffle=True)
    for epoch in range(epochs):
        model.train()
        start, total = time.time(), 0.0
        for _, pair, neg, blocks in loader:
            h = model(blocks, blocks[0].srcdata["feat"])
            pos_s = score(h, *pair.edges())
            neg_s = score(h, *neg.edges())
            loss = F.binary_cross_entropy_with_logits(
                torch.cat([pos_s, neg_s]), torch.cat([torch.ones_like(pos_s), torch.zeros_like(neg_s)])
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss)
        log(f"[{loader_kind}] epoch {epoch:3d} loss {total / len(loader):.4f} ({time.time() - start:.1f} s)")
    model.eval()
    with torch.no_grad():
        h = model(g, g.ndata["feat"])  # full-neighbour inference on the training graph
        result = auc(score(h, *test_pos), score(h, *test_neg))
    log(f"[{loader_kind}] test AUC {result:.4f}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loader", default="both", choices=["both", "graphferry", "dgl"])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--fanouts", type=int, nargs="+", default=[10, 10])
    args = parser.parse_args()
    kinds = ["graphferry", "dgl"] if args.loader == "both" else [args.loader]
    results = {
        kind: run(kind, epochs=args.epochs, seed=args.seed, fanouts=args.fanouts, batch_size=args.batch_size)
        for kind in kinds
    }
    print("test AUC: " + ", ".join(f"{k} {v:.4f}" for k, v in results.items()))


if __name__ == "__main__":
    main()

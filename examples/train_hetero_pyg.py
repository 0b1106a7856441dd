"""Heterogeneous GraphSAGE (PyG's HeteroConv of SAGEConv) on the citation heterograph of train_hetero.py, trained
through graphferry's loaders with the same seeds, model and training loop.

    python examples/train_hetero_pyg.py                        # every loader available, one after the other
    python examples/train_hetero_pyg.py --loader graphferry    # graphferry.pyg.NeighborLoader only
    python examples/train_hetero_pyg.py --loader nodeloader    # PyG's NodeLoader + graphferry.pyg.Sampler only
    python examples/train_hetero_pyg.py --loader pyg           # PyG's own NeighborLoader (pyg-lib or torch-sparse)
    python examples/train_hetero_pyg.py --time                 # temporal: papers only see what existed before them

The data is train_hetero.py's ``hetero_data`` (the same seeded heterograph DGL trains on there) as a PyG
``HeteroData``. With ``--time`` every paper gets a publication time (authors, institutions and fields none), and
sampling is temporal (``time_attr="time"``): a paper's subgraph holds only papers not published after it.
"""

import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.data import HeteroData
from torch_geometric.loader import NeighborLoader, NodeLoader
from torch_geometric.nn import HeteroConv, SAGEConv

import graphferry.pyg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_hetero import hetero_data  # noqa: E402  (the data shared with the DGL example)


def to_pyg(data, with_time=False):
    """The data as a ``HeteroData``: ``x`` on every node type, ``y`` and the split masks on papers, and with
    ``with_time`` a publication time per paper."""
    out = HeteroData()
    for ntype, n in data["num_nodes"].items():
        out[ntype].num_nodes = n
        out[ntype].x = data["feat"][ntype]
    out["paper"].y = data["label"]
    for split in ("train", "val", "test"):
        mask = torch.zeros(data["num_nodes"]["paper"], dtype=torch.bool)
        mask[data[f"{split}_idx"]] = True
        out["paper"][f"{split}_mask"] = mask
    for (s, r, d), (src, dst) in data["edges"].items():
        out[s, r, d].edge_index = torch.stack([src, dst])
    if with_time:
        out["paper"].time = torch.randperm(data["num_nodes"]["paper"], generator=torch.Generator().manual_seed(1))
    return out


class HeteroSAGE(nn.Module):
    """A per-type input projection, then one HeteroConv of SAGEConv (one per edge type, summed) per hop."""

    def __init__(self, data, hidden, num_classes, dropout):
        super().__init__()
        self.proj = nn.ModuleDict({nt: nn.Linear(data[nt].x.size(1), hidden) for nt in data.node_types})
        self.convs = nn.ModuleList(
            [
                HeteroConv({et: SAGEConv(hidden, out) for et in data.edge_types}, aggr="sum")
                for out in (hidden, num_classes)
            ]
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x_dict, edge_index_dict):
        h = {nt: self.dropout(self.proj[nt](x)) for nt, x in x_dict.items()}
        for i, conv in enumerate(self.convs):
            h = conv(h, edge_index_dict)
            if i != len(self.convs) - 1:
                h = {nt: self.dropout(F.relu(v)) for nt, v in h.items()}
        return h["paper"]


def pyg_can_sample():
    import torch_geometric.typing

    return torch_geometric.typing.WITH_PYG_LIB or torch_geometric.typing.WITH_TORCH_SPARSE


def make_loader(kind, data, split, num_neighbors, batch_size, seed, shuffle=False, time_attr=None):
    input_nodes = ("paper", data["paper"][f"{split}_mask"])
    kw = dict(batch_size=batch_size, shuffle=shuffle)
    temporal = dict(time_attr=time_attr) if time_attr else {}
    if kind == "graphferry":
        return graphferry.pyg.NeighborLoader(data, num_neighbors, input_nodes=input_nodes, seed=seed, **temporal, **kw)
    if kind == "nodeloader":  # graphferry as the sampler of PyG's own NodeLoader
        sampler = graphferry.pyg.Sampler(data, num_neighbors, seed=seed, **temporal)
        return NodeLoader(data, node_sampler=sampler, input_nodes=input_nodes, **kw)
    return NeighborLoader(data, num_neighbors, input_nodes=input_nodes, **temporal, **kw)


def run(kind, data, args):
    """Trains from scratch with one loader; returns the test accuracy of the best validation epoch."""
    torch.manual_seed(args.seed)
    num_neighbors = {et: args.fanouts for et in data.edge_types}
    time_attr = "time" if args.time else None
    train = make_loader(kind, data, "train", num_neighbors, args.batch_size, args.seed, True, time_attr)
    val = make_loader(kind, data, "val", num_neighbors, 1024, args.seed, time_attr=time_attr)
    test = make_loader(kind, data, "test", num_neighbors, 1024, args.seed, time_attr=time_attr)
    model = HeteroSAGE(data, args.hidden, int(data["paper"].y.max()) + 1, args.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    def logits(batch):
        return model(batch.x_dict, batch.edge_index_dict)[: batch["paper"].batch_size]

    def evaluate(loader):
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for batch in loader:
                bs = batch["paper"].batch_size
                correct += (logits(batch).argmax(1) == batch["paper"].y[:bs]).sum().item()
                total += bs
        return correct / total

    best_val, best_test = -1.0, 0.0
    for epoch in range(args.epochs):
        model.train()
        start, total_loss, batches = time.perf_counter(), 0.0, 0
        for batch in train:
            loss = F.cross_entropy(logits(batch), batch["paper"].y[: batch["paper"].batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item()
            batches += 1
        epoch_time = time.perf_counter() - start
        val_acc, test_acc = evaluate(val), evaluate(test)
        if val_acc > best_val:
            best_val, best_test = val_acc, test_acc
        print(
            f"[{kind}] epoch {epoch:2d} | time {epoch_time:.2f}s | loss {total_loss / batches:.4f} "
            f"| val {100 * val_acc:.2f}% | test {100 * test_acc:.2f}%"
        )
    for loader in (train, val, test):
        getattr(loader, "close", lambda: None)()
    return best_test


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loader", default="all", choices=["all", "graphferry", "nodeloader", "pyg"])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--fanouts", type=int, nargs="+", default=[10, 10], help="per edge type, from the seeds out")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.3)
    parser.add_argument("--lr", type=float, default=0.005)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--papers", type=int, default=4000, help="number of papers (the graph scales with it)")
    parser.add_argument("--time", action="store_true", help="temporal sampling by the papers' publication times")
    args = parser.parse_args()

    raw = hetero_data(
        seed=args.seed, num_papers=args.papers, num_authors=args.papers // 2, num_institutions=60, num_fields=40
    )
    data = to_pyg(raw, with_time=args.time)
    print(data)
    kinds = ["graphferry", "nodeloader", "pyg"] if args.loader == "all" else [args.loader]
    if "pyg" in kinds and not pyg_can_sample():
        if args.loader == "pyg":
            raise SystemExit("PyG's own NeighborLoader needs pyg-lib or torch-sparse, neither is installed")
        print("PyG's own NeighborLoader: skipped (needs pyg-lib or torch-sparse, neither is installed)")
        kinds.remove("pyg")
    results = {kind: run(kind, data, args) for kind in kinds}
    for kind, acc in results.items():
        print(f"{kind}: test accuracy {100 * acc:.2f}% (at the best validation epoch)")


if __name__ == "__main__":
    main()

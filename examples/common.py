"""Helpers shared by train_dgl.py and train_pyg.py: arguments, dataset loading, a progress bar, best-epoch
tracking."""

import argparse
import os

import pyarrow.feather
import torch
import tqdm

import graphferry

DEFAULT_DATASET = graphferry.dataset_path("cora")  # shipped inside the package (here: examples/data/cora)


def parse_args(description, loaders, fanouts_help):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--dataset", default=DEFAULT_DATASET, help="graphferry dataset directory (default: the shipped Cora)"
    )
    parser.add_argument("--loader", default=loaders[0], choices=loaders)
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--fanouts", type=int, nargs="+", default=[10, 10], help=fanouts_help)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def open_dataset(path):
    """Opens a graphferry dataset with its features row-normalised (the usual Planetoid preprocessing)."""
    if not os.path.exists(os.path.join(path, "graphferry.json")):
        raise SystemExit(
            f"no graphferry dataset at {path} (no graphferry.json there).\n"
            f"graphferry ships Cora ready to use: --dataset {DEFAULT_DATASET}\n"
            f"A dataset in the .npy layout (indptr.npy, indices.npy, feat.npy, label.npy, "
            f"train_idx.npy, ...; see the README) converts with\n"
            f"    python -m graphferry convert SRC_DIR {path}"
        )
    graph = graphferry.Graph.open(path)
    feat = graph.get_node_data("feat")
    graph.set_node_data("feat", feat / feat.sum(1, keepdim=True).clamp(min=1))
    return graph


def edges(graph, path):
    """(src, dst) int64 tensors of the dataset's edge table (edges.arrow)."""
    table = pyarrow.feather.read_table(os.path.join(path, "edges.arrow"), columns=["src", "dst"])
    return (torch.from_numpy(table.column("src").to_numpy()), torch.from_numpy(table.column("dst").to_numpy()))


def to_dgl(graph, path):
    """The same graph as a ``dgl.DGLGraph`` with every node data tensor in ``ndata``."""
    import dgl

    g = dgl.graph(edges(graph, path), num_nodes=graph.num_nodes)
    for name in graph.node_data_names():
        g.ndata[name] = graph.get_node_data(name)
    return g


def to_pyg(graph, path):
    """The same graph as a ``torch_geometric.data.Data`` (``x`` = features, ``y`` = labels)."""
    from torch_geometric.data import Data

    return Data(
        x=graph.get_node_data("feat"),
        y=graph.get_node_data("label"),
        edge_index=torch.stack(edges(graph, path)),
        num_nodes=graph.num_nodes,
    )


class BestEpoch:
    """Keeps the test accuracy of the epoch with the best validation accuracy."""

    def __init__(self):
        self.val, self.test, self.epoch = -1.0, 0.0, -1

    def update(self, epoch, val, test):
        if val > self.val:
            self.val, self.test, self.epoch = val, test, epoch


def progress(loader, epoch, every=1):
    """Iterates ``loader`` under a tqdm bar. For graphferry's loaders the bar shows, from ``loader.stats()``,
    the epoch's batches per second and the pipeline stage that limits it: "sampler", "loader" (feature
    gathering) or "consumer" (the training step itself, when the loader keeps ahead)."""
    stats = getattr(loader, "stats", None)
    bar = tqdm.tqdm(loader, desc=f"epoch {epoch}", leave=False, unit="batch")
    for i, item in enumerate(bar):
        yield item
        if stats is not None and i % every == 0:
            cur = stats().current
            bar.set_postfix_str(f"{cur.batches_per_second:.1f} batch/s, bottleneck: {cur.bottleneck}")


def stats_summary(loader):
    """`` | N batch/s, bottleneck: STAGE (busy share ...)`` for the epoch a graphferry loader just ran, else ""."""
    if not hasattr(loader, "stats"):
        return ""
    cur = loader.stats().current
    load = " ".join(f"{name} {share:.0%}" for name, share in cur.load.items())
    return f" | {cur.batches_per_second:.1f} batch/s, bottleneck: {cur.bottleneck} (busy: {load})"

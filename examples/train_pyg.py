"""GraphSAGE node classification with PyG, mini-batches from graphferry.

# graphferry.pyg.NeighborLoader
python examples/train_pyg.py --dataset examples/data/cora
# PyG's NodeLoader + graphferry.pyg.Sampler
python examples/train_pyg.py --dataset examples/data/cora --loader graphferry-nodeloader
"""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.loader import NodeLoader
from torch_geometric.nn import SAGEConv

import graphferry.pyg

from common import BestEpoch, open_dataset, parse_args, progress, stats_summary, to_pyg


class SAGE(nn.Module):
    def __init__(self, in_channels, hidden, out_channels, dropout):
        super().__init__()
        self.convs = nn.ModuleList([SAGEConv(in_channels, hidden), SAGEConv(hidden, out_channels)])
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, edge_index):
        x = self.dropout(x)
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i != len(self.convs) - 1:
                x = self.dropout(F.relu(x))
        return x


def make_loader(kind, data, input_nodes, num_neighbors, batch_size, shuffle=False):
    if kind == "graphferry":
        return graphferry.pyg.NeighborLoader(
            data, num_neighbors, input_nodes=input_nodes, batch_size=batch_size, shuffle=shuffle
        )
    # graphferry as the sampler of PyG's own NodeLoader
    return NodeLoader(
        data,
        node_sampler=graphferry.pyg.Sampler(data, num_neighbors),
        input_nodes=input_nodes,
        batch_size=batch_size,
        shuffle=shuffle,
    )


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for batch in loader:
            pred = model(batch.x, batch.edge_index)[: batch.batch_size].argmax(1)
            correct += (pred == batch.y[: batch.batch_size]).sum().item()
            total += batch.batch_size
    return correct / total


def main():
    args = parse_args(
        __doc__.splitlines()[0],
        ["graphferry", "graphferry-nodeloader"],
        "neighbours sampled per hop, from the seeds outwards (PyG's num_neighbors)",
    )
    torch.manual_seed(args.seed)

    graph = open_dataset(args.dataset)  # a graphferry.Graph: topology + feat, label, *_mask
    data = to_pyg(graph, args.dataset)  # Data(x, y, edge_index)
    num_classes = int(data.y.max()) + 1

    train_loader = make_loader(args.loader, data, graph.train_idx, args.fanouts, args.batch_size, shuffle=True)
    full = [-1] * len(args.fanouts)
    val_loader = make_loader(args.loader, data, graph.val_idx, full, 1024)
    test_loader = make_loader(args.loader, data, graph.test_idx, full, 1024)

    model = SAGE(data.num_features, args.hidden, num_classes, args.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    best = BestEpoch()
    for epoch in range(args.epochs):
        model.train()
        start, total_loss = time.perf_counter(), 0.0
        for batch in progress(train_loader, epoch):
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
            loss = F.cross_entropy(out, batch.y[: batch.batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_loss += loss.item()
        epoch_time = time.perf_counter() - start
        val_acc, test_acc = evaluate(model, val_loader), evaluate(model, test_loader)
        best.update(epoch, val_acc, test_acc)
        print(
            f"epoch {epoch:3d} | time {epoch_time:.3f}s | loss {total_loss / len(train_loader):.4f} "
            f"| val {100 * val_acc:.2f}% | test {100 * test_acc:.2f}%{stats_summary(train_loader)}"
        )
    print(f"best validation accuracy {100 * best.val:.2f}% at epoch {best.epoch}")
    print(f"test accuracy: {100 * best.test:.2f}%")


if __name__ == "__main__":
    main()

"""GraphSAGE node classification with DGL, mini-batches from graphferry (or from DGL's own loader).

    python examples/train_dgl.py --dataset examples/data/cora                 # graphferry.dgl.DataLoader
    python examples/train_dgl.py --dataset examples/data/cora --loader dgl    # dgl.dataloading.DataLoader

The two differ only in the DataLoader: same sampler, model and training loop.
"""

import time

import dgl
import dgl.nn as dglnn
import torch
import torch.nn as nn
import torch.nn.functional as F

import graphferry.dgl

from common import BestEpoch, open_dataset, parse_args, progress, stats_summary, to_dgl


class SAGE(nn.Module):
    def __init__(self, in_feats, hidden, n_classes, dropout):
        super().__init__()
        self.layers = nn.ModuleList(
            [dglnn.SAGEConv(in_feats, hidden, "mean"), dglnn.SAGEConv(hidden, n_classes, "mean")]
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = self.dropout(x)
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = self.dropout(F.relu(h))
        return h


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for _input_nodes, output_nodes, blocks in loader:
            pred = model(blocks, blocks[0].srcdata["feat"]).argmax(1)
            correct += (pred == blocks[-1].dstdata["label"]).sum().item()
            total += len(output_nodes)
    return correct / total


def main():
    args = parse_args(
        __doc__.splitlines()[0],
        ["graphferry", "dgl"],
        "neighbours sampled for each layer's block, input layer first (DGL order)",
    )
    torch.manual_seed(args.seed)
    dgl.seed(args.seed)

    graph = open_dataset(args.dataset)  # a graphferry.Graph: topology + feat, label, *_mask
    train_idx, val_idx, test_idx = graph.train_idx, graph.val_idx, graph.test_idx
    in_feats = graph.get_node_data("feat").shape[1]
    n_classes = int(graph.get_node_data("label").max()) + 1
    if args.loader == "dgl":
        graph = to_dgl(graph, args.dataset)  # DGL's loader needs a DGLGraph

    sampler = dgl.dataloading.NeighborSampler(args.fanouts, prefetch_node_feats=["feat"], prefetch_labels=["label"])
    full = dgl.dataloading.NeighborSampler(
        [-1] * len(args.fanouts), prefetch_node_feats=["feat"], prefetch_labels=["label"]
    )
    DataLoader = graphferry.dgl.DataLoader if args.loader == "graphferry" else dgl.dataloading.DataLoader
    train_loader = DataLoader(graph, train_idx, sampler, batch_size=args.batch_size, shuffle=True)
    val_loader = DataLoader(graph, val_idx, full, batch_size=1024)
    test_loader = DataLoader(graph, test_idx, full, batch_size=1024)

    model = SAGE(in_feats, args.hidden, n_classes, args.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    best = BestEpoch()
    for epoch in range(args.epochs):
        model.train()
        start, total_loss = time.perf_counter(), 0.0
        for _input_nodes, _output_nodes, blocks in progress(train_loader, epoch):
            logits = model(blocks, blocks[0].srcdata["feat"])
            loss = F.cross_entropy(logits, blocks[-1].dstdata["label"])
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

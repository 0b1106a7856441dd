"""GraphSAGE with DistributedDataParallel, mini-batches sampled across the ranks by graphferry.

    torchrun --nproc_per_node=2 examples/train_dist.py --dataset examples/data/cora
    torchrun --nproc_per_node=1 examples/train_dist.py --dataset examples/data/cora   # one process, to compare

Every rank opens the dataset with one patch per rank (each process holds the
whole graph and its features; rank r owns patch r for sampling) and a
graphferry.distributed.DistributedLoader over a TorchComm (Gloo): the
collective sampling primitive's shuffles cross the processes, and each rank
gets every size-th batch of the single-process epoch (padded so that every
rank runs the same number of steps). The model is DGL's SAGEConv wrapped in
DistributedDataParallel. Every rank evaluates the whole validation and test
sets with a local loader (no exchange); rank 0 prints.
"""

import argparse
import datetime
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from train_dgl import SAGE, evaluate  # the same model and evaluation as the single-process example

import graphferry
import graphferry.dgl
from graphferry import distributed

DEFAULT_DATASET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cora")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=DEFAULT_DATASET, help="graphferry dataset directory")
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--fanouts", type=int, nargs="+", default=[10, 10], help="input layer first (DGL order)")
    parser.add_argument("--batch-size", type=int, default=32, help="seeds per batch and rank")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a collective may wait for a peer")
    args = parser.parse_args()

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)  # the same initial model on every rank (DDP also broadcasts rank 0's)
    comm = distributed.TorchComm(timeout=args.timeout)  # a group of its own, apart from DDP's

    graph = graphferry.Graph.open(args.dataset, num_patches=world)
    feat = graph.get_node_data("feat")
    graph.set_node_data("feat", feat / feat.sum(1, keepdim=True).clamp(min=1))
    in_feats = feat.shape[1]
    n_classes = int(graph.get_node_data("label").max()) + 1

    # The engine counts hops from the seeds: reverse DGL's order.
    train_loader = distributed.DistributedLoader(
        graph,
        graph.train_idx,
        list(reversed(args.fanouts)),
        comm=comm,
        batch_size=args.batch_size,
        shuffle=True,
        seed=args.seed,
        feature_names=["feat"],
        label_names=["label"],
    )
    full = graphferry.dgl.NeighborSampler(
        [-1] * len(args.fanouts), prefetch_node_feats=["feat"], prefetch_labels=["label"]
    )
    val_loader = graphferry.dgl.DataLoader(graph, graph.val_idx, full, batch_size=1024, seed=0)
    test_loader = graphferry.dgl.DataLoader(graph, graph.test_idx, full, batch_size=1024, seed=0)

    model = DistributedDataParallel(SAGE(in_feats, args.hidden, n_classes, args.dropout))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    best_val, best_test, best_epoch = -1.0, 0.0, -1
    for epoch in range(args.epochs):
        model.train()
        start, total_loss, steps = time.perf_counter(), 0.0, 0
        for sub in train_loader.epoch(epoch):
            blocks = graphferry.dgl.to_blocks(sub)
            logits = model(blocks, sub.node_data["feat"])
            loss = F.cross_entropy(logits, sub.labels["label"])
            opt.zero_grad()
            loss.backward()  # DDP all-reduces the gradients: every rank runs the same number of steps
            opt.step()
            total_loss += loss.item()
            steps += 1
        epoch_time = time.perf_counter() - start
        val_acc, test_acc = evaluate(model.module, val_loader), evaluate(model.module, test_loader)
        if val_acc > best_val:
            best_val, best_test, best_epoch = val_acc, test_acc, epoch
        if rank == 0:
            print(
                f"epoch {epoch:3d} | {steps} steps/rank | time {epoch_time:.3f}s | loss {total_loss / steps:.4f} "
                f"| val {100 * val_acc:.2f}% | test {100 * test_acc:.2f}%",
                flush=True,
            )
    if rank == 0:
        print(f"ranks: {world}, exchange: {comm.method}")
        print(f"best validation accuracy {100 * best_val:.2f}% at epoch {best_epoch}")
        print(f"test accuracy: {100 * best_test:.2f}%")
    train_loader.close()
    val_loader.close()
    test_loader.close()
    graph.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

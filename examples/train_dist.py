"""GraphSAGE with DistributedDataParallel, mini-batches sampled across the ranks by graphferry.

    torchrun --nproc_per_node=2 examples/train_dist.py --dataset examples/data/cora
    torchrun --nproc_per_node=1 examples/train_dist.py --dataset examples/data/cora   # one process, to compare

    # each rank opens only its own folder of a partition:
    python -m graphferry partition examples/data/cora /tmp/cora-2 --parts 2 --method metis --layout dsp
    torchrun --nproc_per_node=2 examples/train_dist.py --partition /tmp/cora-2

    # two "machines" of two ranks each (here both on this one), DGL's loader interface:
    python -m graphferry partition examples/data/cora /tmp/cora-4 --parts 4 --layout dsp
    torchrun --nnodes=2 --nproc-per-node=2 --rdzv-backend=c10d --rdzv-endpoint=127.0.0.1:29400 \
        --rdzv-id=cora examples/train_dist.py --partition /tmp/cora-4 --loader dgl   # run on each node

With --dataset, every rank opens the dataset with one patch per rank (each
process holds the whole graph and its features; rank r owns patch r for
sampling). With --partition, rank r opens only DST/part-<r> (a
graphferry.distributed.PartGraph): with the dsp layout it holds the in-edges
and features of its own nodes, sampling crosses the processes and the
features of other ranks' nodes are fetched from them per batch; with hybrid
it holds the whole topology and its own features; with self-reliant its
seeds' neighbourhoods and every feature it needs (each rank trains on its own
seeds, no exchange). Either way a graphferry.distributed.DistributedLoader
over a TorchComm (Gloo) gives each rank every size-th batch of the
single-process epoch (padded so that every rank runs the same number of
steps; self-reliant: its own batches); with --loader dgl the training batches
come from graphferry.dgl.DataLoader(..., comm=comm) instead, as DGL blocks
(the same batches). The model is DGL's SAGEConv wrapped
in DistributedDataParallel. With --dataset every rank evaluates the whole
validation and test sets with a local loader; with --partition the ranks
evaluate together (dsp, hybrid: a distributed loader over the whole sets;
self-reliant: each its own nodes) and sum the counts. Rank 0 prints.
"""

import argparse
import datetime
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from train_dgl import SAGE, evaluate  # the same model and evaluation as the single-process example

import graphferry
import graphferry.dgl
from graphferry import distributed

DEFAULT_DATASET = graphferry.dataset_path("cora")  # shipped inside the package (here: examples/data/cora)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=DEFAULT_DATASET, help="graphferry dataset directory")
    parser.add_argument(
        "--partition",
        default=None,
        help="partition folder (python -m graphferry partition): each rank opens only its part-<rank>",
    )
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--fanouts", type=int, nargs="+", default=[10, 10], help="input layer first (DGL order)")
    parser.add_argument("--batch-size", type=int, default=32, help="seeds per batch and rank")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--dropout", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight-decay", type=float, default=5e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--loader",
        choices=["engine", "dgl"],
        default="engine",
        help="training batches from graphferry.distributed.DistributedLoader or graphferry.dgl.DataLoader(comm=)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a collective may wait for a peer")
    args = parser.parse_args()

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)  # the same initial model on every rank (DDP also broadcasts rank 0's)
    comm = distributed.TorchComm(timeout=args.timeout)  # a group of its own, apart from DDP's

    if args.partition:
        graph = distributed.PartGraph.open(args.partition, rank)
        if rank == 0:
            print(f"rank parts: {graph!r}", flush=True)
        normalise = True  # the part's features are read-only: normalise each batch's rows
        in_feats = graph.get_node_data("feat").shape[1]
        labels = graph.get_node_data("label")
        n_classes = int(labels.max()) + 1
        classes = torch.tensor([n_classes], dtype=torch.int64)
        dist.all_reduce(classes, op=dist.ReduceOp.MAX)
        n_classes = int(classes)
    else:
        graph = graphferry.Graph.open(args.dataset, num_patches=world)
        feat = graph.get_node_data("feat")
        graph.set_node_data("feat", feat / feat.sum(1, keepdim=True).clamp(min=1))
        normalise = False
        in_feats = feat.shape[1]
        n_classes = int(graph.get_node_data("label").max()) + 1

    def seeds_of(mask):
        if isinstance(graph, distributed.PartGraph) and graph.layout != "self-reliant":
            return distributed.global_seeds(graph, comm, mask)  # a single process's seeds
        return graph._mask_index(mask)  # self-reliant: this rank's own; else the whole graph's

    def dist_loader(mask, fanouts, shuffle, batch_size):
        # The engine counts hops from the seeds: reverse DGL's order.
        return distributed.DistributedLoader(
            graph,
            seeds_of(mask),
            list(reversed(fanouts)),
            comm=comm,
            batch_size=batch_size,
            shuffle=shuffle,
            seed=args.seed,
            feature_names=["feat"],
            label_names=["label"],
        )

    if args.loader == "dgl":
        # DGL's interface: (input_nodes, output_nodes, blocks), the same batches.
        sampler = graphferry.dgl.NeighborSampler(args.fanouts, prefetch_node_feats=["feat"], prefetch_labels=["label"])
        train_loader = graphferry.dgl.DataLoader(
            graph, seeds_of("train_mask"), sampler, batch_size=args.batch_size, shuffle=True, seed=args.seed, comm=comm
        )
    else:
        train_loader = dist_loader("train_mask", args.fanouts, True, args.batch_size)
    if args.partition:
        # Every rank takes part in every evaluation batch (collective).
        own = graph.layout == "self-reliant"
        val_loader = PartEval(dist_loader, seeds_of, "val_mask", len(args.fanouts), normalise, own)
        test_loader = PartEval(dist_loader, seeds_of, "test_mask", len(args.fanouts), normalise, own)
    else:
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
        for blocks, x, y in train_batches(train_loader, epoch, args.loader):
            if normalise:
                x = x / x.sum(1, keepdim=True).clamp(min=1)
            logits = model(blocks, x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()  # DDP all-reduces the gradients: every rank runs the same number of steps
            opt.step()
            total_loss += loss.item()
            steps += 1
        epoch_time = time.perf_counter() - start
        if args.partition:
            val_acc, test_acc = val_loader.evaluate(model.module), test_loader.evaluate(model.module)
        else:
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
    # DDP's process group goes with the model: let it go while the tensors
    # of this script's own collectives (PartEval.counts, classes) are still
    # held. With torch before 2.8 a Gloo group destroyed while its worker
    # still releases a collective's tensor that Python dropped first
    # deadlocks the process (the destructor holds the GIL the worker needs;
    # pytorch/pytorch#56297). graphferry's TorchComm guards its own group.
    del model, opt
    dist.destroy_process_group()


def train_batches(loader, epoch, kind):
    """(blocks, input features, output labels) of each training batch."""
    if kind == "dgl":  # each iter() is the next epoch
        for _input_nodes, _output_nodes, blocks in loader:
            yield blocks, blocks[0].srcdata["feat"], blocks[-1].dstdata["label"]
        return
    for sub in loader.epoch(epoch):
        yield graphferry.dgl.to_blocks(sub), sub.node_data["feat"], sub.labels["label"]


class PartEval:
    """Accuracy over a mask's nodes with every rank's part: a distributed
    loader over them with all neighbours, the counts summed over the ranks.
    A rank skips its padding batches (copies of batches counted already)."""

    BATCH = 1024

    def __init__(self, dist_loader, seeds_of, mask, hops, normalise, own_seeds):
        n = int(seeds_of(mask).numel())
        self.loader = dist_loader(mask, [-1] * hops, False, self.BATCH)
        self.batches = -(-n // self.BATCH)  # the group's (self-reliant: this rank's)
        self.rank, self.step = (0, 1) if own_seeds else (dist.get_rank(), dist.get_world_size())
        self.normalise = normalise
        self.counts = torch.zeros(2, dtype=torch.int64)  # reused: held until the end (see main)

    def evaluate(self, model):
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for k, sub in enumerate(self.loader.epoch(0)):
                if k * self.step + self.rank >= self.batches:  # padding
                    continue
                x = sub.node_data["feat"]
                if self.normalise:
                    x = x / x.sum(1, keepdim=True).clamp(min=1)
                pred = model(graphferry.dgl.to_blocks(sub), x).argmax(1)
                correct += int((pred == sub.labels["label"]).sum())
                total += int(sub.hop_counts[0])
        counts = self.counts
        counts[0], counts[1] = correct, total
        dist.all_reduce(counts)
        return int(counts[0]) / max(int(counts[1]), 1)

    def close(self):
        self.loader.close()


if __name__ == "__main__":
    main()

"""Soak: open a graph, open loaders, iterate, break mid-epoch, drop everything; many times.

Each round opens the shipped Cora (examples/data/cora: Arrow files read, feat.bin
mapped), opens the engine's Loader (features and labels gathered), a DGL and a PyG
loader over graphs built once, samples once more directly and reads node data back
through DLPack; it takes a few batches of each loader, breaks out of the epochs
and drops every object, so that the handles, mappings, buffers and engine threads
of the round must all be released for the process to stay flat.

Rounds: SOAK_ROUNDS (200, ``GRAPHFERRY_SOAK_ROUNDS`` changes it), however long
they take: a count, not a time, so that a slow or busy machine soaks as much
as a fast one (enough rounds to see growth; no timing is asserted). After
WARMUP rounds (allocator pools, Go heap and thread pools reach their working
size), it records the process's resident memory, open file descriptors and
memory mappings, and requires them flat at the end (tolerances below).
"""

from __future__ import annotations

import gc
import os
import time

import psutil
import pytest
import testdata
import torch

import graphferry

try:
    import dgl

    import graphferry.dgl as gf_dgl
except ImportError:  # the environment without DGL: the other loaders still soak
    dgl = None
try:
    from torch_geometric.data import Data

    import graphferry.pyg as gf_pyg
except ImportError:
    Data = None

SOAK_ROUNDS = max(int(os.environ.get("GRAPHFERRY_SOAK_ROUNDS", "200")), 150)  # 3 x WARMUP at least
WARMUP = 50

# Tolerances, between the median of the WARMUP..2*WARMUP rounds and the median of
# the last WARMUP rounds:
# - open file descriptors: none. Every file a round opens (the dataset's files) is
#   closed before the round ends; one leaked descriptor per round would be
#   hundreds.
# - memory mappings (/proc/self/maps lines): 16. Allocators map and unmap arenas
#   as their working set wanders (Go heap arenas, glibc per-thread arenas, torch's
#   large tensors), but a leaked mapping per round (an unclosed feat.bin) is
#   hundreds.
# - resident memory: 32 MiB. A round touches about 20 MB (Cora's 15.5 MB features
#   mapped, copies of node data, batches), and freed memory returns to the system
#   lazily (Go's scavenger, glibc's trim threshold), so RSS wanders by several MB
#   from round to round; a leak of 32 KiB per round, or of any one round's
#   features, exceeds the bound over the rounds that run.
FD_TOLERANCE = 0
MAPS_TOLERANCE = 16
RSS_TOLERANCE = 32 << 20


def _maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def _round(path, dgl_graph, pyg_data, r):
    g = graphferry.Graph.open(path)
    train = g.train_idx
    loader = graphferry.Loader(
        g,
        train,
        [10, 5],
        batch_size=16,
        shuffle=True,
        seed=r,
        feature_names=["feat"],
        label_names=["label"],
        num_threads=2,
    )
    for i, batch in enumerate(loader):
        assert batch.node_data["feat"].shape[0] == batch.nodes.numel()
        if i == 2:
            break  # mid-epoch: the engine stops the epoch and frees what is queued
    sub = graphferry.sample_neighbors(g, train[:8], [5, 5], seed=r)
    assert sub.nodes.numel() >= 8
    label = g.get_node_data("label")
    assert label.numel() == g.num_nodes
    del batch, sub, label, loader
    g.close()

    if dgl_graph is not None:
        sampler = dgl.dataloading.NeighborSampler([5, 5], prefetch_node_feats=["feat"], prefetch_labels=["label"])
        dl = gf_dgl.DataLoader(dgl_graph, torch.arange(0, 140), sampler, batch_size=16, shuffle=True)
        for i, (_, _, blocks) in enumerate(dl):  # noqa: B007 - the last batch stays alive until del
            if i == 1:
                break
        del blocks, dl
    if pyg_data is not None:
        nl = gf_pyg.NeighborLoader(
            pyg_data, num_neighbors=[5, 5], input_nodes=pyg_data.train_mask, batch_size=16, shuffle=True
        )
        for i, b in enumerate(nl):  # noqa: B007 - the last batch stays alive until del
            if i == 1:
                break
        del b, nl


def test_soak_open_iterate_break_drop():
    path = testdata.REPO / "examples" / "data" / "cora"
    import pyarrow.feather

    with graphferry.Graph.open(path) as g:  # node data for the DGL and PyG graphs, built once
        feat, label, train_mask = g.get_node_data("feat"), g.get_node_data("label"), g.get_node_data("train_mask")

    edges = pyarrow.feather.read_table(path / "edges.arrow", columns=["src", "dst"])
    src, dst = (torch.tensor(edges.column(c).to_numpy()) for c in ("src", "dst"))
    dgl_graph = pyg_data = None
    if dgl is not None:
        dgl_graph = dgl.graph((src, dst), num_nodes=feat.shape[0])
        dgl_graph.ndata["feat"], dgl_graph.ndata["label"] = feat, label
    if Data is not None:
        pyg_data = Data(x=feat, y=label, edge_index=torch.stack([src, dst]), train_mask=train_mask.bool())

    proc = psutil.Process()
    samples = []  # (rss, fds, maps) after each round
    start = time.monotonic()
    rounds = SOAK_ROUNDS
    for r in range(rounds):
        _round(path, dgl_graph, pyg_data, r)
        if (r + 1) % 10 == 0:
            gc.collect()  # the loaders' reference cycles, if any, go at a steady pace
        samples.append((proc.memory_info().rss, proc.num_fds(), _maps()))
    print(
        f"\nsoak: {rounds} rounds in {time.monotonic() - start:.1f} s; "
        f"DGL {'on' if dgl_graph is not None else 'off'}, PyG {'on' if pyg_data is not None else 'off'}"
    )
    early, late = samples[WARMUP : 2 * WARMUP], samples[-WARMUP:]
    for i, (name, tol, unit) in enumerate(
        [
            ("resident memory", RSS_TOLERANCE, 1 << 20),
            ("open file descriptors", FD_TOLERANCE, 1),
            ("memory mappings", MAPS_TOLERANCE, 1),
        ]
    ):
        a, b = _median([s[i] for s in early]), _median([s[i] for s in late])
        print(f"soak: {name}: {a / unit:.0f} after warm-up, {b / unit:.0f} at the end")
        assert b - a <= tol, (
            f"{name} grew from {a / unit:.1f} to {b / unit:.1f} over {rounds - 2 * WARMUP} rounds "
            f"(tolerance {tol / unit:.0f})"
        )


if __name__ == "__main__":  # pragma: no cover - for a longer soak by hand
    raise SystemExit(pytest.main([__file__, "-s", "-q"]))

"""Loader statistics: graphferry.Loader.stats() and the DGL and PyG loaders'."""

from __future__ import annotations

import json
import math

import pytest
import torch

import graphferry
from graphferry._stats import LoaderStats


def test_loader_stats_counts(cora_graph, cora_npy):
    seeds = torch.from_numpy(cora_npy.train_idx)
    loader = graphferry.Loader(
        cora_graph, seeds, [5, 5], batch_size=32, shuffle=True, seed=3, feature_names=["feat"], label_names=["label"]
    )
    st = loader.stats()
    assert isinstance(st, LoaderStats) and st.epochs == 0 and st.workers >= 1
    assert st.total.consumer.batches == 0 and st.current.hit_rate == 0.0
    want_bytes = 0
    for epoch in range(2):
        nbytes = batches = 0
        for sub in loader:
            batches += 1
            for t in list(sub.node_data.values()) + list(sub.labels.values()):
                nbytes += t.numel() * t.element_size()
        want_bytes += nbytes
        st = loader.stats()
        assert st.epoch == epoch and st.epochs == epoch + 1
        assert batches == len(loader) == math.ceil(len(seeds) / 32)
        cur = st.current
        assert cur.sampler.batches == cur.loader.batches == cur.consumer.batches == batches
        assert st.total.consumer.batches == batches * (epoch + 1)
        assert cur.bytes_host == nbytes and st.total.bytes_host == want_bytes
        assert cur.bytes_pinned == cur.bytes_device == 0
        assert cur.rows_hot == 0 and cur.rows_cold > 0 and cur.hit_rate == 0.0
        assert cur.sampler.busy > 0 and cur.loader.busy > 0 and cur.wall > 0
        assert cur.batches_per_second > 0
        assert cur.bottleneck in ("sampler", "loader", "consumer")
        assert set(cur.load) == {"sampler", "loader", "consumer"}
    json.dumps(st.to_dict())  # plain numbers all the way down
    loader.close()
    assert loader.stats() == st  # the last statistics stay readable after close


def test_dgl_loader_stats(cora_dgl, cora_npy):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    sampler = dgl.dataloading.NeighborSampler([3, 3], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = gfdgl.DataLoader(cora_dgl, torch.from_numpy(cora_npy.train_idx), sampler, batch_size=40, seed=2)
    n = sum(1 for _ in loader)
    st = loader.stats()
    assert st.current.consumer.batches == n == len(loader)
    assert st.current.bytes_host > 0
    loader.close()


def test_pyg_loader_stats(cora_pyg):
    pytest.importorskip("torch_geometric")
    import graphferry.pyg as gfpyg

    seeds = cora_pyg.train_mask.nonzero().view(-1)
    loader = gfpyg.NeighborLoader(cora_pyg, [4, 2], input_nodes=seeds, batch_size=32, seed=0)
    assert loader.stats().epochs == 0
    n = sum(1 for _ in loader)
    st = loader.stats()
    assert st.current.consumer.batches == n == len(loader)
    assert st.current.loader.batches == n
    loader.close()


@pytest.mark.parametrize("policy", ["degree", "presample"])
def test_loader_cache_same_batches_and_hits(cora_graph, cora_npy, policy):
    seeds = torch.from_numpy(cora_npy.train_idx)
    args = dict(batch_size=32, shuffle=True, seed=5, feature_names=["feat"], label_names=["label"])
    plain = graphferry.Loader(cora_graph, seeds, [4, 4], **args)
    cached = graphferry.Loader(cora_graph, seeds, [4, 4], **args)
    feat_bytes = cora_npy.feat.shape[1] * cora_npy.feat.itemsize
    rows = cached.set_cache(300 * feat_bytes, policy=policy)
    assert rows == 300
    hot = 0
    for a, b in zip(plain, cached, strict=True):
        assert torch.equal(a.nodes, b.nodes)
        assert torch.equal(a.node_data["feat"], b.node_data["feat"])
        assert torch.equal(a.labels["label"], b.labels["label"])
    cur = cached.stats().current
    hot = cur.rows_hot
    assert hot > 0 and 0 < cur.hit_rate < 1
    assert plain.stats().current.rows_hot == 0
    assert cached.set_cache(0.5, policy=policy) == cora_npy.num_nodes // 2
    assert cached.set_cache("auto", budget=100 * feat_bytes + 7, reserve=7) == 100
    with pytest.raises(ValueError, match="budget"):
        cached.set_cache("auto")
    with pytest.raises(ValueError, match="policy"):
        cached.set_cache(0.5, policy="lru")
    with pytest.raises(graphferry.GraphferryError, match="fraction"):
        cached.set_cache(1.5)
    plain.close()
    cached.close()


def test_dgl_loader_cache(cora_dgl, cora_npy):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    sampler = dgl.dataloading.NeighborSampler([3, 3], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = gfdgl.DataLoader(cora_dgl, torch.from_numpy(cora_npy.train_idx), sampler, batch_size=40, seed=2)
    assert loader.set_cache(0.25, policy="presample") == cora_npy.num_nodes // 4
    for input_nodes, _, blocks in loader:
        assert torch.equal(blocks[0].srcdata["feat"], cora_dgl.ndata["feat"][input_nodes])
    assert loader.stats().current.rows_hot > 0
    loader.close()


@pytest.mark.parametrize("local_world_size", [None, "2", "64"])
def test_default_threads_are_this_ranks_share_of_the_host(local_world_size):
    """Without num_threads, a loader's workers are the host's cores divided
    by the ranks a launcher (torchrun: LOCAL_WORLD_SIZE) started on it."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    code = (
        "import graphferry, torch\n"
        f"g = graphferry.Graph.open({str(REPO / 'examples' / 'data' / 'cora')!r})\n"
        "loader = graphferry.Loader(g, torch.arange(100), [2], batch_size=10)\n"
        "print(loader.stats().workers)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("LOCAL_WORLD_SIZE", "GOMAXPROCS")}
    if local_world_size is not None:
        env["LOCAL_WORLD_SIZE"] = local_world_size
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    cpus = len(os.sched_getaffinity(0))
    want = cpus if local_world_size is None else max(1, cpus // int(local_world_size))
    assert int(out.stdout.strip()) == want

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

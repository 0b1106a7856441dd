"""graphferry.pyg: NeighborLoader and Sampler composed with PyG's NodeLoader."""

from __future__ import annotations

import math
import pickle

import pytest
import torch

pytest.importorskip("torch_geometric")

from torch_geometric.data import Data  # noqa: E402
from torch_geometric.loader import NodeLoader  # noqa: E402
from torch_geometric.sampler import NodeSamplerInput, SamplerOutput  # noqa: E402

import graphferry  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402


def check_batch(data: Data, batch: Data, fanouts, seeds=None):
    """The fields and invariants of PyG's NeighborLoader output."""
    n_id, e_id, ei = batch.n_id, batch.e_id, batch.edge_index
    bs = batch.batch_size
    assert isinstance(bs, int)
    assert n_id.dtype == e_id.dtype == ei.dtype == torch.int64
    assert ei.dim() == 2 and ei.size(0) == 2 and ei.size(1) == e_id.numel()
    nsn, nse = batch.num_sampled_nodes, batch.num_sampled_edges
    assert isinstance(nsn, list) and all(type(v) is int for v in nsn)
    assert isinstance(nse, list) and all(type(v) is int for v in nse)
    assert len(nsn) == len(fanouts) + 1 and len(nse) == len(fanouts)
    assert sum(nsn) == n_id.numel() and nsn[0] == bs and sum(nse) == e_id.numel()
    assert n_id.unique().numel() == n_id.numel()
    if seeds is not None:
        assert torch.equal(n_id[:bs], seeds)
    assert batch.input_id.dtype == torch.int64 and batch.input_id.numel() == bs
    # node and edge attributes
    assert torch.equal(batch.x, data.x[n_id])
    assert torch.equal(batch.y, data.y[n_id])
    if "train_mask" in data:
        assert torch.equal(batch.train_mask, data.train_mask[n_id])
    if "edge_weight" in data:
        assert torch.equal(batch.edge_weight, data.edge_weight[e_id])
    # every edge exists: row = source, col = target, local ids
    assert torch.equal(data.edge_index[:, e_id], n_id[ei])
    # hop h: targets are the nodes first reached in hop h-1, sources known after hop h
    start = 0
    for h, count in enumerate(nse):
        col = ei[1, start : start + count]
        row = ei[0, start : start + count]
        lo = sum(nsn[:h])
        if count:
            assert int(col.min()) >= lo and int(col.max()) < lo + nsn[h]
            assert int(row.max()) < sum(nsn[: h + 2])
        deg = torch.bincount(col - lo, minlength=nsn[h])
        full = torch.bincount(data.edge_index[1], minlength=data.num_nodes)[n_id[lo : lo + nsn[h]]]
        assert torch.equal(deg, full.clamp(max=fanouts[h]) if fanouts[h] >= 0 else full)
        start += count
    assert batch.num_nodes == n_id.numel()


def test_neighbor_loader_fields(cora_pyg):
    data = cora_pyg
    seeds = data.train_mask.nonzero().view(-1)
    loader = gfpyg.NeighborLoader(data, [5, 3], input_nodes=seeds, batch_size=32, seed=0)
    assert len(loader) == math.ceil(len(seeds) / 32)
    count = 0
    for i, batch in enumerate(loader):
        assert isinstance(batch, Data)
        check_batch(data, batch, [5, 3], seeds[i * 32 : (i + 1) * 32])
        assert torch.equal(batch.input_id, torch.arange(i * 32, i * 32 + batch.batch_size))  # positions
        count += 1
    assert count == len(loader)


def test_neighbor_loader_mask_input_id(cora_pyg):
    data = cora_pyg
    loader = gfpyg.NeighborLoader(data, [2], input_nodes=data.train_mask, batch_size=50, shuffle=True, seed=1)
    got = []
    for batch in loader:
        check_batch(data, batch, [2])
        # PyG: with a mask, input_id holds the node ids
        assert torch.equal(batch.input_id, batch.n_id[: batch.batch_size])
        got.append(batch.input_id)
    assert sorted(torch.cat(got).tolist()) == data.train_mask.nonzero().view(-1).tolist()


def test_neighbor_loader_all_nodes(tiny):
    data = Data(
        x=torch.randn(tiny.num_nodes, 3), y=torch.arange(tiny.num_nodes), edge_index=torch.stack([tiny.src, tiny.dst])
    )
    loader = gfpyg.NeighborLoader(data, [-1, 2], batch_size=16)
    assert len(loader) == math.ceil(tiny.num_nodes / 16)
    seen = []
    for batch in loader:
        check_batch(data, batch, [-1, 2])
        seen.append(batch.n_id[: batch.batch_size])
    assert torch.equal(torch.cat(seen), torch.arange(tiny.num_nodes))


def test_sage_conv_accepts_batches(cora_pyg):
    from torch_geometric.nn import SAGEConv

    data = cora_pyg
    conv1, conv2 = SAGEConv(data.num_features, 16), SAGEConv(16, 7)
    loader = gfpyg.NeighborLoader(data, [10, 10], input_nodes=data.train_mask, batch_size=64, seed=2)
    for batch in loader:
        h = torch.relu(conv1(batch.x, batch.edge_index))
        out = conv2(h, batch.edge_index)[: batch.batch_size]
        loss = torch.nn.functional.cross_entropy(out, batch.y[: batch.batch_size])
        loss.backward()
        assert torch.isfinite(loss)


@pytest.mark.parametrize("drop_last", [False, True])
def test_epochs_cover_seeds_once(cora_pyg, cora_npy, drop_last):
    seeds = torch.from_numpy(cora_npy.val_idx)
    loader = gfpyg.NeighborLoader(
        cora_pyg, [3, 3], input_nodes=seeds, batch_size=64, shuffle=True, drop_last=drop_last, seed=4
    )
    expected = len(seeds) // 64 if drop_last else math.ceil(len(seeds) / 64)
    assert len(loader) == expected
    orders = []
    for _ in range(2):
        got = [b.n_id[: b.batch_size] for b in loader]
        assert len(got) == expected
        got = torch.cat(got)
        if drop_last:
            assert len(got) == expected * 64 and got.unique().numel() == len(got)
        else:
            assert sorted(got.tolist()) == sorted(seeds.tolist())
        orders.append(got)
    assert not torch.equal(orders[0], orders[1])


def test_break_then_new_epoch(cora_pyg):
    loader = gfpyg.NeighborLoader(
        cora_pyg, [3, 3], input_nodes=cora_pyg.train_mask, batch_size=16, shuffle=True, seed=5, queue_capacity=1
    )
    for i, _ in enumerate(loader):
        if i == 2:
            break
    got = torch.cat([b.input_id for b in loader])
    assert sorted(got.tolist()) == cora_pyg.train_mask.nonzero().view(-1).tolist()
    loader.close()


def test_node_loader_composes(cora_pyg):
    data = cora_pyg
    sampler = gfpyg.Sampler(data, [5, 3], seed=0)
    loader = NodeLoader(data, node_sampler=sampler, input_nodes=data.train_mask, batch_size=32, shuffle=True)
    seen = []
    for batch in loader:
        check_batch(data, batch, [5, 3])
        assert torch.equal(batch.input_id, batch.n_id[: batch.batch_size])
        seen.append(batch.input_id)
    assert sorted(torch.cat(seen).tolist()) == data.train_mask.nonzero().view(-1).tolist()


def test_neighbor_loader_matches_node_loader_fields(cora_pyg):
    data = cora_pyg
    ours = next(iter(gfpyg.NeighborLoader(data, [4, 2], input_nodes=torch.arange(8), batch_size=8, seed=0)))
    pyg = next(
        iter(
            NodeLoader(
                data, node_sampler=gfpyg.Sampler(data, [4, 2], seed=0), input_nodes=torch.arange(8), batch_size=8
            )
        )
    )
    assert sorted(ours.keys()) == sorted(pyg.keys())
    for key in ours.keys():
        assert type(ours[key]) is type(pyg[key]), key
        if isinstance(ours[key], torch.Tensor):
            assert ours[key].dtype == pyg[key].dtype, key
    assert torch.equal(ours.input_id, pyg.input_id)


def test_sampler_output(tiny):
    data = Data(x=torch.randn(tiny.num_nodes, 2), edge_index=torch.stack([tiny.src, tiny.dst]))
    sampler = gfpyg.Sampler(data, [3, 2], seed=1)
    seeds = torch.tensor([3, 7, 11])
    out = sampler.sample_from_nodes(NodeSamplerInput(input_id=torch.tensor([0, 1, 2]), node=seeds))
    assert isinstance(out, SamplerOutput)
    assert torch.equal(out.node[:3], seeds)
    assert out.batch is None
    assert torch.equal(out.metadata[0], torch.tensor([0, 1, 2])) and out.metadata[1] is None
    assert torch.equal(data.edge_index[:, out.edge], out.node[torch.stack([out.row, out.col])])
    assert sum(out.num_sampled_nodes) == out.node.numel()
    assert sum(out.num_sampled_edges) == out.edge.numel()
    # successive calls draw new samples; the sampler pickles without its handle
    again = pickle.loads(pickle.dumps(sampler))
    out2 = again.sample_from_nodes(NodeSamplerInput(input_id=None, node=seeds))
    assert torch.equal(out2.node[:3], seeds)
    with pytest.raises(TypeError, match="EdgeSamplerInput"):  # sample_from_edges: test_pyg_dropin
        sampler.sample_from_edges(None)


def test_data_converted_once_and_refreshed(tiny):
    data = Data(
        x=torch.randn(tiny.num_nodes, 2),
        y=torch.zeros(tiny.num_nodes, dtype=torch.long),
        edge_index=torch.stack([tiny.src, tiny.dst]),
    )
    a = gfpyg.as_graph(data)
    assert gfpyg.as_graph(data) is a
    data.x = torch.randn(tiny.num_nodes, 2)  # a changed Data is converted again
    b = gfpyg.as_graph(data)
    assert b is not a
    assert torch.equal(b.get_node_data("x"), data.x)
    assert isinstance(a, graphferry.Graph) and not a.closed


# -- weight_attr: biased sampling -----------------------------------------------


def _weighted_data(tiny, seed=3):
    gen = torch.Generator().manual_seed(seed)
    e = tiny.src.numel()
    w = torch.rand(e, generator=gen) + 0.1
    w[torch.rand(e, generator=gen) < 0.4] = 0
    data = Data(
        x=torch.randn(tiny.num_nodes, 3),
        y=torch.arange(tiny.num_nodes),
        edge_index=torch.stack([tiny.src, tiny.dst]),
        edge_weight=w,
    )
    return data, w


def test_neighbor_loader_weight_attr_is_biased(tiny):
    data, w = _weighted_data(tiny)
    pos_deg = torch.bincount(tiny.dst[w > 0], minlength=tiny.num_nodes)
    loader = gfpyg.NeighborLoader(
        data, [3, 2], batch_size=8, weight_attr="edge_weight", seed=4, input_nodes=torch.arange(tiny.num_nodes - 1)
    )
    for _ in range(5):
        for batch in loader:
            assert bool((w[batch.e_id] > 0).all()), "an edge of weight 0 was sampled"
            assert torch.equal(batch.edge_weight, w[batch.e_id])
            assert torch.equal(data.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
            # hop 0: min(fan-out, positive in-degree) edges per seed
            bs, n0 = batch.batch_size, batch.num_sampled_edges[0]
            deg = torch.bincount(batch.edge_index[1, :n0], minlength=bs)
            assert torch.equal(deg, pos_deg[batch.n_id[:bs]].clamp(max=3))
    loader.close()
    # without weight_attr the same Data samples uniformly (weight-0 edges included)
    loader = gfpyg.NeighborLoader(data, [-1], batch_size=tiny.num_nodes)
    batch = next(iter(loader))
    assert batch.e_id.numel() == tiny.src.numel()
    loader.close()


def test_sampler_weight_attr_with_node_loader(tiny):
    data, w = _weighted_data(tiny, seed=5)
    sampler = gfpyg.Sampler(data, [3, 3], weight_attr="edge_weight", seed=0)
    loader = NodeLoader(data, node_sampler=sampler, input_nodes=torch.arange(30), batch_size=10)
    for batch in loader:
        assert bool((w[batch.e_id] > 0).all())
    # the Sampler on a graphferry.Graph: the graph must carry the weights
    g = graphferry.Graph.from_pyg(data)
    with pytest.raises(graphferry.InvalidArgumentError, match="weights"):
        gfpyg.Sampler(g, [2], weight_attr="edge_weight").sample_from_nodes(
            NodeSamplerInput(input_id=None, node=torch.arange(4))
        )
    g.set_edge_weights(data.edge_weight)
    out = gfpyg.Sampler(g, [2], weight_attr="edge_weight").sample_from_nodes(
        NodeSamplerInput(input_id=None, node=torch.arange(30))
    )
    assert bool((w[out.edge] > 0).all())
    g.close()
    with graphferry.Graph.from_pyg(data, edge_weights="edge_weight") as g2:
        sub = graphferry.sample_neighbors(g2, torch.arange(39), [3], biased=True)
        assert bool((w[sub.blocks[0].edge_ids] > 0).all())
    with graphferry.Graph.from_pyg(data, edge_weights=w.double()) as g3:
        sub = graphferry.sample_neighbors(g3, torch.arange(39), [3], biased=True)
        assert bool((w[sub.blocks[0].edge_ids] > 0).all())


def test_weight_attr_errors(tiny):
    data, w = _weighted_data(tiny)
    gfpyg.NeighborLoader(data, [2]).close()  # converted (and cached) without weights
    with pytest.raises(KeyError, match="nope"):
        gfpyg.NeighborLoader(data, [2], weight_attr="nope")
    with pytest.raises(TypeError, match="weight_attr"):
        gfpyg.Sampler(data, [2], weight_attr=1)
    bad = Data(x=data.x, y=data.y, edge_index=data.edge_index, edge_weight=-w)
    bad.edge_weight[w == 0] = -1.0
    with pytest.raises(graphferry.InvalidArgumentError, match="finite and >= 0"):
        gfpyg.NeighborLoader(bad, [2], weight_attr="edge_weight")
    short = Data(x=data.x, y=data.y, edge_index=data.edge_index, edge_weight=w[:10])
    with pytest.raises(graphferry.InvalidArgumentError, match="10 entries"):
        gfpyg.Sampler(short, [2], weight_attr="edge_weight")


def test_layer_wise_and_exclusion_through_pyg(cora_pyg):
    """scheme="layer" makes num_neighbors a per-hop budget, and excluded
    edges never appear, through both the loader and the BaseSampler."""
    excluded = torch.arange(0, cora_pyg.edge_index.size(1), 3)
    loader = gfpyg.NeighborLoader(
        cora_pyg, [20, 10], batch_size=64, scheme="layer", replace=True, exclude_edges=excluded, seed=1
    )
    for batch in loader:
        assert batch.num_sampled_edges[0] <= 20 and batch.num_sampled_edges[1] <= 10
        assert not bool(torch.isin(batch.e_id, excluded).any())
        assert torch.equal(cora_pyg.edge_index[:, batch.e_id], batch.n_id[batch.edge_index])
    loader.close()
    sampler = gfpyg.Sampler(cora_pyg, [5, 5], exclude_edges=excluded, seed=0)
    for batch in NodeLoader(cora_pyg, node_sampler=sampler, input_nodes=torch.arange(200), batch_size=50):
        assert not bool(torch.isin(batch.e_id, excluded).any())
    with pytest.raises(ValueError, match="scheme"):
        gfpyg.Sampler(cora_pyg, [5], scheme="walk")


def test_neighbor_loader_indexes_other_node_attributes_with_pygs_helpers(tiny):
    """Node attributes the engine does not hold (a NumPy array) are indexed
    per batch as PyG's filter_node_store_ indexes them; input_nodes given as
    a list go through PyG's get_input_nodes."""
    import numpy as np

    n = tiny.num_nodes
    data = Data(x=torch.randn(n, 3), y=torch.arange(n), edge_index=torch.stack([tiny.src, tiny.dst]))
    data.pos_np = np.arange(n * 2, dtype=np.float32).reshape(n, 2)
    data.title = "tiny"  # graph-level: kept as it is
    loader = gfpyg.NeighborLoader(data, [3, 2], input_nodes=[5, 1, 7], batch_size=2, seed=0)
    batches = list(loader)
    assert len(batches) == 2
    for i, batch in enumerate(batches):
        assert torch.equal(batch.pos_np, torch.from_numpy(data.pos_np)[batch.n_id])
        assert batch.num_nodes == batch.n_id.numel()
        assert batch.title == "tiny"
        assert torch.equal(batch.input_id, torch.arange(2 * i, 2 * i + batch.batch_size))
        check_batch(data, batch, [3, 2], torch.tensor([5, 1, 7])[2 * i : 2 * i + 2])
    loader.close()


def test_neighbor_loader_on_a_graphferry_graph(tiny):
    data = Data(
        x=torch.randn(tiny.num_nodes, 3), y=torch.arange(tiny.num_nodes), edge_index=torch.stack([tiny.src, tiny.dst])
    )
    with graphferry.Graph.from_pyg(data) as g:
        loader = gfpyg.NeighborLoader(g, [3, 2], batch_size=8, seed=0)
        for batch in loader:
            check_batch(data, batch, [3, 2])
        # two live iterators: two independent epochs
        pairs = list(zip(loader, loader))
        assert len(pairs) == len(loader)


def test_engine_edge_list_is_the_blocks_expanded(cora_pyg):
    """A loader opened with ``coo`` carries each batch's edges as one edge
    list made by the engine's threads (what NeighborLoader's ``edge_index``
    and ``e_id`` are): the blocks' CSC expanded hop after hop, as the
    consumer would expand it, and the sampling is the same with and
    without it."""
    from graphferry.pyg.base import edge_index

    g = gfpyg.convert.as_graph(cora_pyg)
    options = graphferry.SampleOptions([5, 3], frontier="new", seed=3)
    seeds = torch.arange(300)
    with (
        graphferry.Loader.from_options(g, seeds, options, batch_size=64, shuffle=True, coo=True) as with_coo,
        graphferry.Loader.from_options(g, seeds, options, batch_size=64, shuffle=True) as without,
    ):
        n = 0
        for a, b in zip(with_coo, without, strict=True):
            assert b.coo is None and a.coo is not None
            index, ids = a.coo
            row, col, edge = edge_index(b)
            assert index.shape == (2, row.numel()) and index.is_contiguous()
            assert torch.equal(index[0], row) and torch.equal(index[1], col) and torch.equal(ids, edge)
            assert torch.equal(a.nodes, b.nodes)
            n += 1
        assert n == 5
    batch = next(iter(gfpyg.NeighborLoader(cora_pyg, [5, 3], batch_size=64, seed=3)))
    check_batch(cora_pyg, batch, [5, 3])

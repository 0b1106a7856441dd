"""graphferry.dgl.DataLoader: real DGL blocks from the engine's pipeline."""

from __future__ import annotations

import math

import pytest
import torch

dgl = pytest.importorskip("dgl")

import graphferry  # noqa: E402
import graphferry.dgl as gfdgl  # noqa: E402


def check_batch(g, input_nodes, output_nodes, blocks, fanouts, feats=("feat",), labels=("label",)):
    """DGL's conventions for (input_nodes, output_nodes, blocks)."""
    assert len(blocks) == len(fanouts)
    for block in blocks:
        assert isinstance(block, dgl.DGLGraph) and block.is_block
    assert torch.equal(input_nodes, blocks[0].srcdata[dgl.NID])
    assert torch.equal(output_nodes, blocks[-1].dstdata[dgl.NID])
    for i, block in enumerate(blocks):
        src_ids = block.srcdata[dgl.NID]
        dst_ids = block.dstdata[dgl.NID]
        assert torch.equal(src_ids[: block.num_dst_nodes()], dst_ids), "dst nodes lead the src nodes"
        if i + 1 < len(blocks):
            assert block.num_dst_nodes() == blocks[i + 1].num_src_nodes(), "blocks chain"
            assert torch.equal(dst_ids, blocks[i + 1].srcdata[dgl.NID])
        # every edge exists in g, with its id, between the right nodes
        u, v = block.edges()
        eids = block.edata[dgl.EID]
        gu, gv = g.find_edges(eids)
        assert torch.equal(gu, src_ids[u]) and torch.equal(gv, dst_ids[v])
        # blocks[i] samples fanouts[i] in-neighbours (DGL order: the last applies to the seeds)
        want = g.in_degrees(dst_ids)
        if fanouts[i] >= 0:
            want = want.clamp(max=fanouts[i])
        assert torch.equal(block.in_degrees(), want)
    for name in feats:
        assert torch.equal(blocks[0].srcdata[name], g.ndata[name][input_nodes])
    for name in labels:
        assert torch.equal(blocks[-1].dstdata[name], g.ndata[name][output_nodes])


def test_blocks_and_features(cora_dgl, cora_npy):
    g = cora_dgl
    train = torch.from_numpy(cora_npy.train_idx)
    fanouts = [2, 7]  # asymmetric: checks the order
    sampler = dgl.dataloading.NeighborSampler(fanouts, prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = gfdgl.DataLoader(g, train, sampler, batch_size=32, shuffle=True, seed=0)
    n = 0
    for input_nodes, output_nodes, blocks in loader:
        check_batch(g, input_nodes, output_nodes, blocks, fanouts)
        n += 1
    assert n == len(loader) == math.ceil(len(train) / 32)
    loader.close()


def test_sage_forward_backward(cora_dgl, cora_npy):
    from dgl.nn import SAGEConv

    g = cora_dgl
    sampler = dgl.dataloading.NeighborSampler([5, 5], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = gfdgl.DataLoader(g, torch.from_numpy(cora_npy.train_idx), sampler, batch_size=64, seed=1)
    conv1 = SAGEConv(g.ndata["feat"].shape[1], 16, "mean")
    conv2 = SAGEConv(16, 7, "mean")
    opt = torch.optim.Adam(list(conv1.parameters()) + list(conv2.parameters()), lr=0.01)
    for _, output_nodes, blocks in loader:
        h = torch.relu(conv1(blocks[0], blocks[0].srcdata["feat"]))
        logits = conv2(blocks[1], h)
        assert logits.shape == (len(output_nodes), 7)
        loss = torch.nn.functional.cross_entropy(logits, blocks[-1].dstdata["label"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert torch.isfinite(loss)


def test_blocks_are_what_create_block_makes(cora_dgl, cora_npy):
    """The loader builds its blocks below dgl.create_block (skipping its
    checks); they must be the blocks create_block makes from the same CSC:
    same types, sizes, edges in the same order, formats, and the same
    SAGEConv output."""
    from dgl.nn import SAGEConv

    g = cora_dgl
    sampler = dgl.dataloading.NeighborSampler([4, 6], prefetch_node_feats=["feat"])
    loader = gfdgl.DataLoader(g, torch.from_numpy(cora_npy.train_idx), sampler, batch_size=40, seed=2)
    conv = SAGEConv(g.ndata["feat"].shape[1], 8, "mean")
    for _, _, blocks in loader:
        for block in blocks:
            indptr, indices, eids = block.adj_tensors("csc")
            ref = dgl.create_block(
                ("csc", (indptr, indices, torch.empty(0, dtype=torch.int64))),
                num_src_nodes=block.num_src_nodes(),
                num_dst_nodes=block.num_dst_nodes(),
            )
            assert block.is_block and ref.is_block
            assert (block.srctypes, block.dsttypes, block.canonical_etypes) == (
                ref.srctypes,
                ref.dsttypes,
                ref.canonical_etypes,
            )
            assert (block.num_src_nodes(), block.num_dst_nodes(), block.num_edges()) == (
                ref.num_src_nodes(),
                ref.num_dst_nodes(),
                ref.num_edges(),
            )
            assert block.formats() == ref.formats()
            assert block.idtype == ref.idtype == torch.int64
            for a, b in zip(block.edges(form="all", order="eid"), ref.edges(form="all", order="eid")):
                assert torch.equal(a, b)
            assert torch.equal(block.in_degrees(), ref.in_degrees())
        x = blocks[0].srcdata["feat"]
        assert torch.equal(
            conv(blocks[0], x),
            conv(
                dgl.create_block(
                    ("csc", blocks[0].adj_tensors("csc")),
                    num_src_nodes=blocks[0].num_src_nodes(),
                    num_dst_nodes=blocks[0].num_dst_nodes(),
                ),
                x,
            ),
        )
    loader.close()


def test_full_neighbourhood_blocks_match_dgl(cora_dgl):
    """With fan-out -1 the blocks hold exactly DGL's in-edges."""
    g = cora_dgl
    seeds = torch.tensor([0, 10, 633])
    loader = gfdgl.DataLoader(g, seeds, gfdgl.NeighborSampler([-1]), batch_size=3)
    ((_, output_nodes, blocks),) = list(loader)
    u, v, eids = blocks[0].edges(form="all")
    got = sorted(blocks[0].edata[dgl.EID].tolist())
    assert got == sorted(g.in_edges(seeds, form="eid").tolist())


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("drop_last", [False, True])
def test_epochs_cover_seeds_once(cora_dgl, cora_npy, shuffle, drop_last):
    seeds = torch.from_numpy(cora_npy.val_idx)  # 500 seeds
    bs = 64
    loader = gfdgl.DataLoader(
        cora_dgl,
        seeds,
        dgl.dataloading.NeighborSampler([3, 3]),
        batch_size=bs,
        shuffle=shuffle,
        drop_last=drop_last,
        seed=3,
    )
    expected_batches = len(seeds) // bs if drop_last else math.ceil(len(seeds) / bs)
    assert len(loader) == expected_batches
    orders = []
    for _ in range(2):
        out = [o for _, o, _ in loader]
        assert len(out) == expected_batches
        sizes = [len(o) for o in out]
        assert all(s == bs for s in sizes[:-1])
        got = torch.cat(out)
        if drop_last:
            assert len(got) == expected_batches * bs
            assert got.unique().numel() == len(got)
            assert set(got.tolist()) <= set(seeds.tolist())
        else:
            assert sorted(got.tolist()) == sorted(seeds.tolist())
        orders.append(got)
    if shuffle:
        assert not torch.equal(orders[0], orders[1]), "a new permutation every epoch"
    else:
        assert torch.equal(orders[0], seeds[: len(orders[0])])


def test_break_then_new_epoch(cora_dgl, cora_npy):
    seeds = torch.from_numpy(cora_npy.train_idx)
    loader = gfdgl.DataLoader(
        cora_dgl, seeds, dgl.dataloading.NeighborSampler([4, 4]), batch_size=16, shuffle=True, seed=5, queue_capacity=1
    )
    first = iter(loader)
    head = [next(first)[1], next(first)[1]]
    # a second iter() while the first is unfinished: an independent epoch, as DGL's
    got = torch.cat([o for _, o, _ in loader])
    assert sorted(got.tolist()) == sorted(seeds.tolist())
    rest = [o for _, o, _ in first]  # the first epoch goes on where it was
    assert sorted(torch.cat(head + rest).tolist()) == sorted(seeds.tolist())
    del first
    for _ in range(3):
        for i, _batch in enumerate(loader):
            if i == 1:
                break
    got = torch.cat([o for _, o, _ in loader])
    assert sorted(got.tolist()) == sorted(seeds.tolist())
    loader.close()
    loader.close()


def test_same_seed_same_batches(cora_dgl, cora_npy):
    seeds = torch.from_numpy(cora_npy.train_idx)
    sampler = dgl.dataloading.NeighborSampler([3, 3])

    def run():
        loader = gfdgl.DataLoader(cora_dgl, seeds, sampler, batch_size=32, shuffle=True, seed=9)
        return [(i.clone(), [b.edata[dgl.EID].clone() for b in bl]) for i, _, bl in loader]

    a, b = run(), run()
    for (ia, ea), (ib, eb) in zip(a, b):
        assert torch.equal(ia, ib)
        assert all(torch.equal(x, y) for x, y in zip(ea, eb))


def test_graphferry_graph_and_own_sampler(tiny):
    gd = dgl.graph((tiny.src, tiny.dst), num_nodes=tiny.num_nodes)
    gd.ndata["feat"] = torch.randn(tiny.num_nodes, 4, dtype=torch.float16)
    gd.ndata["label"] = torch.arange(tiny.num_nodes)
    g = graphferry.Graph.from_dgl(gd)
    sampler = gfdgl.NeighborSampler([3, 2], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = gfdgl.DataLoader(g, torch.arange(0, 30), sampler, batch_size=7)
    assert len(loader) == 5
    for input_nodes, output_nodes, blocks in loader:
        check_batch(gd, input_nodes, output_nodes, blocks, [3, 2])
        assert blocks[0].srcdata["feat"].dtype == torch.float16
    g.close()
    assert all(lo.closed for lo in loader._loaders)  # the graph closed its loaders first
    with pytest.raises(graphferry.GraphferryError, match="graph was closed"):
        iter(loader)
    with pytest.raises(graphferry.GraphferryError, match="graph was closed"):
        len(loader)


def test_dgl_graph_converted_once(cora_dgl, cora_npy):
    sampler = dgl.dataloading.NeighborSampler([2])
    a = gfdgl.DataLoader(cora_dgl, torch.arange(10), sampler)
    b = gfdgl.DataLoader(cora_dgl, torch.arange(10), sampler)
    assert a._graph is b._graph
    assert a._graph.num_nodes == cora_dgl.num_nodes()


def test_device_parameter(tiny):
    gd = dgl.graph((tiny.src, tiny.dst), num_nodes=tiny.num_nodes)
    loader = gfdgl.DataLoader(gd, torch.arange(5), gfdgl.NeighborSampler([2]), batch_size=5, device=torch.device("cpu"))
    ((inp, out, blocks),) = list(loader)
    assert inp.device.type == out.device.type == blocks[0].device.type == "cpu"


# -- biased (prob / mask), excluded edges, layer-wise --------------------------


def _weighted_dgl(tiny, seed=3):
    gd = dgl.graph((tiny.src, tiny.dst), num_nodes=tiny.num_nodes)
    gen = torch.Generator().manual_seed(seed)
    w = torch.rand(gd.num_edges(), generator=gen) + 0.1
    w[torch.rand(gd.num_edges(), generator=gen) < 0.4] = 0
    gd.edata["w"] = w
    gd.edata["m"] = w > 0
    gd.ndata["feat"] = torch.randn(tiny.num_nodes, 3)
    return gd, w


def _block_eids(blocks):
    return torch.cat([b.edata[dgl.EID] for b in blocks])


@pytest.mark.parametrize("field", ["prob", "mask"])
def test_dgl_sampler_prob_is_biased(tiny, field):
    gd, w = _weighted_dgl(tiny)
    name = "w" if field == "prob" else "m"
    sampler = dgl.dataloading.NeighborSampler([3, 3], prefetch_node_feats=["feat"], **{field: name})
    loader = gfdgl.DataLoader(gd, torch.arange(tiny.num_nodes - 1), sampler, batch_size=8, seed=1)
    pos_deg = torch.bincount(tiny.dst[w > 0], minlength=tiny.num_nodes)
    for _ in range(5):  # epochs
        for _input_nodes, output_nodes, blocks in loader:
            eids = _block_eids(blocks)
            assert eids.numel() > 0 and bool((w[eids] > 0).all()), "an edge of weight 0 was sampled"
            u, v = gd.find_edges(blocks[-1].edata[dgl.EID])
            src_ids, dst_ids = blocks[-1].srcdata[dgl.NID], blocks[-1].dstdata[dgl.NID]
            uu, vv = blocks[-1].edges()
            assert torch.equal(u, src_ids[uu]) and torch.equal(v, dst_ids[vv])
            # min(fan-out, positive in-degree) edges per seed, as DGL's own sampler
            assert torch.equal(blocks[-1].in_degrees(), pos_deg[output_nodes].clamp(max=3))
    # the converted graph carries the weights; unbiased sampling of the same DGLGraph still works
    plain = gfdgl.DataLoader(gd, torch.arange(8), dgl.dataloading.NeighborSampler([-1]), batch_size=8)
    ((_, out, blocks),) = list(plain)
    assert sorted(blocks[0].edata[dgl.EID].tolist()) == sorted(gd.in_edges(out, form="eid").tolist())
    loader.close()
    plain.close()


def test_dgl_prob_matches_dgl_support(tiny):
    """Every (seed, edge) graphferry samples with prob is one DGL's own sampler can take."""
    gd, w = _weighted_dgl(tiny, seed=8)
    seeds = torch.arange(tiny.num_nodes - 1)
    gf = gfdgl.DataLoader(gd, seeds, dgl.dataloading.NeighborSampler([2], prob="w"), batch_size=39)
    ((_, out, blocks),) = list(gf)
    dgl.seed(0)
    ref = dgl.sampling.sample_neighbors(gd, seeds, 2, prob="w")
    assert bool((w[ref.edata[dgl.EID]] > 0).all())
    assert blocks[0].num_edges() == ref.num_edges()  # both take min(2, positive in-degree)


def test_own_sampler_prob_exclude_and_scheme(tiny):
    gd, w = _weighted_dgl(tiny)
    excluded = torch.arange(0, gd.num_edges(), 4)
    sampler = gfdgl.NeighborSampler([3, 3], prob="w", exclude_edges=excluded)
    loader = gfdgl.DataLoader(gd, torch.arange(30), sampler, batch_size=10, seed=2)
    for _, _, blocks in loader:
        eids = _block_eids(blocks)
        assert bool((w[eids] > 0).all()) and not bool((eids % 4 == 0).any())
    loader.close()
    sampler = gfdgl.NeighborSampler([8, 5], scheme="layer", prefetch_node_feats=["feat"])
    loader = gfdgl.DataLoader(gd, torch.arange(30), sampler, batch_size=10, seed=2)
    for input_nodes, _output_nodes, blocks in loader:
        assert [b.num_edges() <= f for b, f in zip(blocks, [8, 5])] == [True, True]
        assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][input_nodes])
    loader.close()
    with pytest.raises(ValueError, match="scheme"):
        gfdgl.NeighborSampler([2], scheme="edge")
    with pytest.raises(ValueError, match="mutually exclusive"):
        gfdgl.NeighborSampler([2], prob="w", mask="m")
    with pytest.raises(KeyError, match="nope"):
        gfdgl.DataLoader(gd, torch.arange(4), gfdgl.NeighborSampler([2], prob="nope"))


def test_graphferry_graph_with_prob_needs_weights(tiny):
    gd, w = _weighted_dgl(tiny)
    g = graphferry.Graph.from_dgl(gd)  # no weights
    with pytest.raises(graphferry.InvalidArgumentError, match="weights"):
        gfdgl.DataLoader(g, torch.arange(4), dgl.dataloading.NeighborSampler([2], prob="w"))
    g.set_edge_weights(gd.edata["w"])
    loader = gfdgl.DataLoader(g, torch.arange(30), dgl.dataloading.NeighborSampler([2], prob="w"), batch_size=10)
    for _, _, blocks in loader:
        assert bool((w[_block_eids(blocks)] > 0).all())
    g.close()
    with graphferry.Graph.from_dgl(gd, edge_weights="w") as g2:
        sub = graphferry.sample_neighbors(g2, torch.arange(39), [3], biased=True)
        assert bool((w[sub.blocks[0].edge_ids] > 0).all())
    with graphferry.Graph.from_dgl(gd, edge_weights=gd.edata["m"]) as g3:
        sub = graphferry.sample_neighbors(g3, torch.arange(39), [3], biased=True)
        assert bool((w[sub.blocks[0].edge_ids] > 0).all())
    with pytest.raises(KeyError, match="nope"):
        graphferry.Graph.from_dgl(gd, edge_weights="nope")


def test_num_threads_does_not_change_batches():
    """The engine's streams are keyed per node, so the thread count is a
    speed knob only: one and two threads give the same batches."""
    g = graphferry.Graph.from_coo(torch.randint(0, 300, (3000,)), torch.randint(0, 300, (3000,)), num_nodes=300)
    sampler = gfdgl.NeighborSampler([4, 4])
    runs = []
    for threads in (1, 2):
        dl = gfdgl.DataLoader(g, torch.arange(300), sampler, batch_size=64, shuffle=True, seed=3, num_threads=threads)
        runs.append([[b.edata[dgl.EID] for b in blocks] for _, _, blocks in dl])
        dl.close()
    for a, b in zip(*runs):
        assert all(torch.equal(x, y) for x, y in zip(a, b))


# -- conformance with dgl.dataloading.DataLoader (issue 12) ----------------------


def _dgl_graph(tiny, idtype=torch.int64):
    gd = dgl.graph((tiny.src, tiny.dst), num_nodes=tiny.num_nodes, idtype=idtype)
    gen = torch.Generator().manual_seed(11)
    gd.ndata["feat"] = torch.randn(tiny.num_nodes, 3, generator=gen)
    gd.ndata["label"] = torch.arange(tiny.num_nodes)
    gd.edata["w"] = torch.rand(gd.num_edges(), generator=gen)
    return gd


def _first(loader):
    return next(iter(loader))


def test_int32_graph_gives_int32_ids_and_blocks(tiny):
    gd = _dgl_graph(tiny, torch.int32)
    seeds = torch.arange(10, dtype=torch.int32)
    sampler = dgl.dataloading.NeighborSampler([3, 2], prefetch_node_feats=["feat"])
    ref_in, ref_out, ref_blocks = _first(dgl.dataloading.DataLoader(gd, seeds, sampler, batch_size=10))
    inp, out, blocks = _first(gfdgl.DataLoader(gd, seeds, sampler, batch_size=10))
    assert (inp.dtype, out.dtype) == (ref_in.dtype, ref_out.dtype) == (torch.int32, torch.int32)
    for ours, ref in zip(blocks, ref_blocks):
        assert ours.idtype == ref.idtype == torch.int32
        assert ours.srcdata[dgl.NID].dtype == ours.dstdata[dgl.NID].dtype == torch.int32
        assert ours.edata[dgl.EID].dtype == ref.edata[dgl.EID].dtype
    check_batch(gd, inp.long(), out.long(), [b.long() for b in blocks], [3, 2], labels=())
    gd.in_degrees(out)  # the graph's own API takes the ids back
    assert torch.equal(out, seeds)


def test_blocks_carry_all_node_and_edge_data_like_dgl(tiny):
    gd = _dgl_graph(tiny)
    seeds = torch.arange(12)
    sampler = dgl.dataloading.NeighborSampler([2, 3])  # nothing prefetched
    _, _, ref_blocks = _first(dgl.dataloading.DataLoader(gd, seeds, sampler, batch_size=12))
    inp, out, blocks = _first(gfdgl.DataLoader(gd, seeds, sampler, batch_size=12))
    for ours, ref in zip(blocks, ref_blocks):
        assert set(ours.srcdata.keys()) == set(ref.srcdata.keys())
        assert set(ours.dstdata.keys()) == set(ref.dstdata.keys())
        assert set(ours.edata.keys()) == set(ref.edata.keys())
        src, dst, eids = ours.srcdata[dgl.NID], ours.dstdata[dgl.NID], ours.edata[dgl.EID]
        assert torch.equal(ours.srcdata["feat"], gd.ndata["feat"][src])
        assert torch.equal(ours.dstdata["label"], gd.ndata["label"][dst])
        assert torch.equal(ours.edata["w"], gd.edata["w"][eids])
    assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][inp])
    # prefetch_edge_feats, as DGL: on every block's edata
    sampler = dgl.dataloading.NeighborSampler([2, 3], prefetch_edge_feats=["w"])
    _, _, blocks = _first(gfdgl.DataLoader(gd, seeds, sampler, batch_size=12))
    assert all(torch.equal(b.edata["w"], gd.edata["w"][b.edata[dgl.EID]]) for b in blocks)
    with pytest.raises(graphferry.InvalidArgumentError, match="nope"):
        gfdgl.DataLoader(gd, seeds, dgl.dataloading.NeighborSampler([2], prefetch_edge_feats=["nope"]))
    with graphferry.Graph.from_dgl(gd) as g, pytest.raises(ValueError, match="prefetch_edge_feats"):
        gfdgl.DataLoader(g, seeds, sampler)


def test_replaced_ndata_is_served(tiny):
    gd = _dgl_graph(tiny)
    sampler = dgl.dataloading.NeighborSampler([2, 2], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = gfdgl.DataLoader(gd, torch.arange(30), sampler, batch_size=8, seed=1)
    other = gfdgl.DataLoader(gd, torch.arange(5), sampler, batch_size=5)  # open on the same graph
    for inp, _, blocks in loader:
        assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][inp])
    # between epochs (embeddings recomputed each epoch): the next epoch serves the new tensor
    gd.ndata["feat"] = torch.randn(tiny.num_nodes, 3) + 100
    for inp, _, blocks in loader:
        assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][inp])
    for inp, _, blocks in other:
        assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][inp])
    # mid-epoch, with another epoch live: served at once, from DGL's lazy column
    it = iter(loader)
    next(it)
    gd.ndata["feat"] = torch.randn(tiny.num_nodes, 3) - 100
    gd.ndata["label"] = gd.ndata["label"] * 2
    for inp, out, blocks in it:
        assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][inp])
        assert torch.equal(blocks[-1].dstdata["label"], gd.ndata["label"][out])
    for inp, _, blocks in loader:  # and the engine holds the new tensors from the next epoch on
        assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][inp])
    loader.close()
    other.close()


def test_two_live_iterators_are_two_epochs_like_dgl(tiny):
    gd = _dgl_graph(tiny)
    seeds = torch.arange(30)
    sampler = dgl.dataloading.NeighborSampler([2])
    ref = dgl.dataloading.DataLoader(gd, seeds, sampler, batch_size=7)
    ours = gfdgl.DataLoader(gd, seeds, sampler, batch_size=7)
    ref_pairs = list(zip(ref, ref))
    pairs = list(zip(ours, ours))
    assert len(pairs) == len(ref_pairs) == len(ours) == 5
    for side in (0, 1):
        got = torch.cat([p[side][1] for p in pairs])
        assert torch.equal(got, seeds)  # each iterator a whole epoch
    ours.close()


def test_heterograph_needs_seeds_per_type():
    # Heterographs take the heterogeneous path (test_hetero_dgl.py), whose
    # seeds are a dict {ntype: ids} as DGL's.
    hg = dgl.heterograph({("a", "x", "b"): (torch.tensor([0, 1]), torch.tensor([1, 0])), ("b", "y", "a"): ([0], [1])})
    hg.edges["x"].data["w"] = torch.rand(2)
    hg.edges["y"].data["w"] = torch.rand(1)
    with pytest.raises(TypeError, match="give the seeds as a dict"):
        gfdgl.DataLoader(hg, torch.arange(2), dgl.dataloading.NeighborSampler([2], prob="w"))
    with pytest.raises(TypeError, match="give the seeds as a dict"):
        gfdgl.DataLoader(hg, torch.arange(2), dgl.dataloading.NeighborSampler([2]))


def test_accepts_every_dgl_dataloader_argument(tiny):
    import inspect

    gd = _dgl_graph(tiny)
    sampler = dgl.dataloading.NeighborSampler([2])
    params = inspect.signature(dgl.dataloading.DataLoader.__init__).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    assert set(defaults) <= set(inspect.signature(gfdgl.DataLoader.__init__).parameters)
    torch_args = dict(
        num_workers=0,
        persistent_workers=False,
        prefetch_factor=None,
        timeout=0,
        worker_init_fn=None,
        multiprocessing_context=None,
        pin_memory=False,
        pin_memory_device="",
        generator=torch.Generator().manual_seed(3),
    )
    loader = gfdgl.DataLoader(gd, torch.arange(9), sampler, **defaults, **torch_args)
    assert torch.equal(torch.cat([o for _, o, _ in loader]), torch.arange(9))
    loader = gfdgl.DataLoader(
        gd, torch.arange(9), sampler, "cpu", use_prefetch_thread=False, pin_prefetcher=False, batch_size=4
    )
    assert len(loader) == 3
    # num_workers sets the engine's sampling threads (nothing is forked)
    assert gfdgl.DataLoader(gd, torch.arange(9), sampler, num_workers=2)._options.num_threads == 2
    with pytest.raises(ValueError, match="num_workers"):
        gfdgl.DataLoader(gd, torch.arange(9), sampler, num_workers=-1)
    with pytest.raises(ValueError, match="collate_fn"):
        gfdgl.DataLoader(gd, torch.arange(9), sampler, collate_fn=list)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        gfdgl.DataLoader(gd, torch.arange(9), sampler, bogus=1)
    with pytest.raises(ValueError, match="use_uva"):
        gfdgl.DataLoader(gd, torch.arange(9), sampler, use_uva=True)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n, world", [(23, 4), (24, 4), (5, 3), (2, 3)])
def test_ddp_split_is_dgls(n, world, drop_last):
    from dgl.dataloading import dataloader as dgl_dl

    indices = torch.arange(100, 100 + n)
    for rank in range(world):
        lo, hi = dgl_dl._decompose_one_dimension(n, world, rank, drop_last)
        ref = indices[lo:hi]
        ours = gfdgl.ddp_split(indices, rank, world, drop_last)
        assert len(ours) == hi - lo  # the same number of seeds (and batches) on every rank
        assert torch.equal(ours[: len(ref)], ref)  # DGL's slice
        assert ours.unique().numel() == len(ours)  # padded with distinct seeds


def test_use_ddp_with_a_process_group(tiny, tmp_path):
    import torch.distributed as dist

    gd = _dgl_graph(tiny)
    sampler = dgl.dataloading.NeighborSampler([2])
    with pytest.raises(RuntimeError, match="init_process_group"):
        gfdgl.DataLoader(gd, torch.arange(9), sampler, use_ddp=True)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        a = gfdgl.DataLoader(gd, torch.arange(9), sampler, use_ddp=True, ddp_seed=4, shuffle=True, batch_size=4)
        b = gfdgl.DataLoader(gd, torch.arange(9), sampler, use_ddp=True, ddp_seed=4, shuffle=True, batch_size=4)
        ea, eb = [o for _, o, _ in a], [o for _, o, _ in b]
        assert all(torch.equal(x, y) for x, y in zip(ea, eb))  # ddp_seed seeds the shuffles
        assert sorted(torch.cat(ea).tolist()) == list(range(9))
    finally:
        dist.destroy_process_group()


def test_fanout_zero_like_dgl(tiny):
    gd = _dgl_graph(tiny)
    seeds = torch.arange(10)
    sampler = dgl.dataloading.NeighborSampler([0, 3])
    _, ref_out, ref_blocks = _first(dgl.dataloading.DataLoader(gd, seeds, sampler, batch_size=10))
    _, out, blocks = _first(gfdgl.DataLoader(gd, seeds, sampler, batch_size=10))
    assert torch.equal(out, ref_out)
    assert blocks[0].num_edges() == ref_blocks[0].num_edges() == 0
    # The hop of fan-out 0 keeps its dst nodes, the next block's src nodes
    # (how many is random: each library draws the seeds' hop its own way).
    assert blocks[0].num_dst_nodes() == blocks[1].num_src_nodes()
    assert ref_blocks[0].num_dst_nodes() == ref_blocks[1].num_src_nodes()
    # DGL's block has no src nodes at all; ours keeps the dst nodes as its
    # src nodes (as every other block), so input features still exist.
    assert blocks[0].num_src_nodes() == blocks[0].num_dst_nodes()
    # Without replacement, each seed takes min(3, in-degree) edges in both.
    assert blocks[1].num_edges() == ref_blocks[1].num_edges()


def test_fanout_errors_name_the_users_hop(tiny):
    gd = _dgl_graph(tiny)
    with pytest.raises(graphferry.InvalidArgumentError, match=r"fanouts\[0\] = -2") as info:
        gfdgl.DataLoader(gd, torch.arange(4), dgl.dataloading.NeighborSampler([-2, 5, 5]))
    assert "DGL order" in str(info.value)
    with pytest.raises(graphferry.InvalidArgumentError, match=r"fanouts\[2\] = -3"):
        gfdgl.DataLoader(gd, torch.arange(4), dgl.dataloading.NeighborSampler([5, 5, -3]))


def test_node_data_of_an_unsupported_dtype_is_skipped(tiny):
    import warnings

    gd = _dgl_graph(tiny)
    gd.ndata["z"] = torch.randn(tiny.num_nodes, 2, dtype=torch.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unused: no warning
        inp, _, blocks = _first(
            gfdgl.DataLoader(gd, torch.arange(8), dgl.dataloading.NeighborSampler([2], prefetch_node_feats=["feat"]))
        )
    assert torch.equal(blocks[0].srcdata["feat"], gd.ndata["feat"][inp])
    assert torch.equal(blocks[0].srcdata["z"], gd.ndata["z"][inp])  # lazily, as DGL
    with pytest.warns(UserWarning, match="'z'"):
        loader = gfdgl.DataLoader(gd, torch.arange(8), dgl.dataloading.NeighborSampler([2], prefetch_node_feats=["z"]))
    inp, _, blocks = _first(loader)
    assert torch.equal(blocks[0].srcdata["z"], gd.ndata["z"][inp])
    g = graphferry.Graph.from_dgl(gd)
    assert "z" in g.skipped_node_data and "feat" in g.node_data_names()
    g.close()


def test_closing_the_graph_mid_epoch_raises(tiny):
    gd = _dgl_graph(tiny)
    g = graphferry.Graph.from_dgl(gd)
    loader = gfdgl.DataLoader(g, torch.arange(30), gfdgl.NeighborSampler([2]), batch_size=4)
    it = iter(loader)
    next(it)
    g.close()
    with pytest.raises(graphferry.GraphferryError, match="graph was closed"):
        next(it)
    with pytest.raises(graphferry.GraphferryError, match="graph was closed"):
        iter(loader)


def test_labor_sampler_refuses_importance_sampling(tiny):
    # LaborSampler itself is supported (test_dgl_labor.py); LABOR-i, i > 0, is not.
    gd = _dgl_graph(tiny)
    with pytest.raises(NotImplementedError, match="importance_sampling=1"):
        gfdgl.DataLoader(gd, torch.arange(4), dgl.dataloading.LaborSampler([2], importance_sampling=1))

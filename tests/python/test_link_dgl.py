"""graphferry.dgl's edge-level loader against DGL 2.1's own
(dgl.dataloading.as_edge_prediction_sampler + DataLoader): the same output
structure, and DGL's invariants on every batch."""

from __future__ import annotations

import pytest
import torch

dgl = pytest.importorskip("dgl")

import graphferry.dgl as gfdgl  # noqa: E402
from graphferry.dgl import EdgeDataLoader  # noqa: E402
from graphferry.dgl.edge import edge_settings  # noqa: E402

NS = dgl.dataloading.negative_sampler


def small_graph(idtype=torch.int64):
    """A graph with its reverse edges: edge e and e + E are reverses."""
    torch.manual_seed(3)
    src, dst = torch.randint(0, 60, (200,)), torch.randint(0, 60, (200,))
    g = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=60, idtype=idtype)
    g.ndata["feat"] = torch.randn(60, 5)
    g.edata["w"] = torch.rand(400)
    reverse = torch.cat([torch.arange(200, 400), torch.arange(0, 200)]).to(idtype)
    return g, reverse


def batches(loader):
    return list(iter(loader))


def block_eids(blocks):
    return torch.cat([b.edata[dgl.EID].to(torch.int64) for b in blocks])


def check_dgl_batch(g, eids, batch, k, excluded):
    """DGL's conventions for (input_nodes, pair_graph, neg_pair_graph, blocks)."""
    input_nodes, pair, neg, blocks = batch
    seeds = pair.ndata[dgl.NID]
    assert pair.idtype == g.idtype and neg.idtype == g.idtype and input_nodes.dtype == g.idtype
    assert neg.num_nodes() == pair.num_nodes() == len(seeds)
    assert torch.equal(neg.ndata[dgl.NID], seeds)
    # pair graph: one edge per seed edge, in order, between its endpoints
    assert torch.equal(pair.edata[dgl.EID].to(torch.int64), eids)
    ps, pd = pair.edges()
    gs, gd = g.find_edges(eids.to(g.idtype))
    assert torch.equal(seeds[ps.long()], gs) and torch.equal(seeds[pd.long()], gd)
    # seeds: dgl.compact_graphs' order over the positive and negative pairs
    ns, nd = neg.edges()
    pos_g = dgl.graph((gs, gd), num_nodes=g.num_nodes(), idtype=g.idtype)
    neg_g = dgl.graph((seeds[ns.long()], seeds[nd.long()]), num_nodes=g.num_nodes(), idtype=g.idtype)
    want = dgl.compact_graphs([pos_g, neg_g])[0].ndata[dgl.NID]
    assert torch.equal(seeds, want)
    # negatives: k per positive, same source, any destination
    assert neg.num_edges() == k * len(eids)
    assert torch.equal(seeds[ns.long()], gs.repeat_interleave(k))
    # blocks: DGL's shape, output nodes are the seeds, features attached
    assert torch.equal(blocks[-1].dstdata[dgl.NID], seeds)
    assert torch.equal(input_nodes, blocks[0].srcdata[dgl.NID])
    assert blocks[0].srcdata["feat"].shape == (blocks[0].num_src_nodes(), 5)
    taken = block_eids(blocks)
    assert not bool(torch.isin(taken, excluded).any()), "an excluded edge was sampled"
    for b in blocks:
        u, v = b.edges()
        s, d = g.find_edges(b.edata[dgl.EID])
        assert torch.equal(b.srcdata[dgl.NID][u.long()], s) and torch.equal(b.dstdata[dgl.NID][v.long()], d)


@pytest.mark.parametrize("idtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("exclude", [None, "self", "reverse_id"])
def test_matches_dgl_conventions(idtype, exclude):
    g, reverse = small_graph(idtype)
    eids = torch.arange(0, 400, 3)
    kw = dict(
        exclude=exclude, reverse_eids=reverse if exclude == "reverse_id" else None, negative_sampler=NS.Uniform(3)
    )
    ours = gfdgl.DataLoader(
        g,
        eids.to(idtype),
        gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([-1, 4]), **kw),
        batch_size=32,
        seed=5,
    )
    theirs = dgl.dataloading.DataLoader(
        g,
        eids.to(idtype),
        dgl.dataloading.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([-1, 4]), **kw),
        batch_size=32,
    )
    assert isinstance(ours, EdgeDataLoader)
    assert len(ours) == len(theirs)
    got, want = batches(ours), batches(theirs)
    for b, (mine, ref) in enumerate(zip(got, want)):
        batch_eids = eids[b * 32 : (b + 1) * 32]
        if exclude is None:
            excluded = torch.tensor([], dtype=torch.int64)
        elif exclude == "self":
            excluded = batch_eids
        else:
            excluded = torch.cat([batch_eids, reverse[batch_eids].long()])
        check_dgl_batch(g, batch_eids, mine, 3, excluded)
        # DGL's own output, the same structure
        assert len(mine) == len(ref) == 4
        assert [type(x) for x in mine[:3]] == [type(x) for x in ref[:3]]
        assert len(mine[3]) == len(ref[3])
        assert mine[0].dtype == ref[0].dtype
        assert mine[1].ndata[dgl.NID].dtype == ref[1].ndata[dgl.NID].dtype
        assert set(mine[1].edata.keys()) >= set(ref[1].edata.keys())
        assert torch.equal(mine[1].edata[dgl.EID], ref[1].edata[dgl.EID])
        assert mine[2].num_edges() == ref[2].num_edges()


def test_without_exclusion_seed_edges_show_up():
    # Fan-out -1 at the seeds takes every in-edge: without exclusion the seed
    # edges are in the first hop, so the exclusion checks above can fail.
    g, _ = small_graph()
    eids = torch.arange(0, 64)
    sampler = gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([-1]))
    (input_nodes, pair, blocks), *_ = batches(gfdgl.DataLoader(g, eids, sampler, batch_size=64, seed=1))
    assert bool(torch.isin(eids, block_eids(blocks)).all())


def test_no_negative_sampler_and_dgl_sampler_object():
    g, reverse = small_graph()
    eids = torch.arange(100)
    theirs = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([2, 2]), exclude="reverse_id", reverse_eids=reverse
    )
    loader = gfdgl.DataLoader(g, eids, theirs, batch_size=40, shuffle=True, seed=2)
    out = batches(loader)
    assert len(out) == 3
    seen = []
    for _input_nodes, pair, blocks in out:
        e = pair.edata[dgl.EID]
        seen.append(e)
        assert not bool(torch.isin(block_eids(blocks), torch.cat([e, reverse[e]])).any())
    assert torch.equal(torch.sort(torch.cat(seen)).values, eids), "an epoch covers every seed edge once"


def test_global_uniform():
    g, _ = small_graph()
    eids = torch.arange(50)
    sampler = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([2]), negative_sampler=NS.GlobalUniform(2)
    )
    for _, _pair, neg, _ in batches(gfdgl.DataLoader(g, eids, sampler, batch_size=50, seed=4)):
        seeds = neg.ndata[dgl.NID]
        ns, nd = neg.edges()
        u, v = seeds[ns], seeds[nd]
        assert 0 < neg.num_edges() <= 100, "at most k per positive, as DGL (failed draws are dropped)"
        assert not bool(g.has_edges_between(u, v).any()), "GlobalUniform never returns an edge"
        assert not bool((u == v).any()), "nor a self-loop"


def test_seeded_and_epochs_differ():
    g, _ = small_graph()
    eids = torch.arange(120)
    sampler = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([3, 3]), exclude="self", negative_sampler=NS.PerSourceUniform(2)
    )

    def run(loader):
        return [(p.ndata[dgl.NID], n.edges()[1], [b.edata[dgl.EID] for b in bl]) for _, p, n, bl in batches(loader)]

    a = gfdgl.DataLoader(g, eids, sampler, batch_size=50, shuffle=True, seed=9)
    b = gfdgl.DataLoader(g, eids, sampler, batch_size=50, shuffle=True, seed=9, num_threads=1)
    first_a, first_b = run(a), run(b)
    for x, y in zip(first_a, first_b):
        assert torch.equal(x[0], y[0]) and torch.equal(x[1], y[1])
        assert all(torch.equal(p, q) for p, q in zip(x[2], y[2]))
    second = run(a)
    assert not all(torch.equal(x[0], y[0]) for x, y in zip(first_a, second)), "epochs reshuffle"


def test_refusals():
    base = dgl.dataloading.NeighborSampler([2])
    with pytest.raises(ValueError, match="reverse_eids"):
        gfdgl.as_edge_prediction_sampler(base, exclude="reverse_id")
    with pytest.raises(ValueError, match="exclude"):
        gfdgl.as_edge_prediction_sampler(base, exclude="reverse_types")
    with pytest.raises(TypeError, match="negative_sampler"):
        gfdgl.as_edge_prediction_sampler(base, negative_sampler=lambda g, e: None)
    # GlobalUniform's arguments are taken now (test_dgl_dropin checks them against DGL)
    replacing = gfdgl.as_edge_prediction_sampler(base, negative_sampler=NS.GlobalUniform(1, replace=True))
    assert edge_settings(replacing).negative_flags == 2  # GF_NEG_REPLACE
    g, _ = small_graph()
    sampler = gfdgl.as_edge_prediction_sampler(base)
    with pytest.raises(ValueError, match="num_workers"):
        gfdgl.DataLoader(g, torch.arange(5), sampler, num_workers=-2)
    workers = gfdgl.DataLoader(g, torch.arange(5), sampler, batch_size=2, num_workers=4)  # forks nothing
    assert workers._options.num_threads == 4 and len(batches(workers)) == 3
    loader = gfdgl.DataLoader(g, torch.tensor([0, 400]), sampler, batch_size=2, seed=0)
    with pytest.raises(Exception, match="400"):
        batches(loader)

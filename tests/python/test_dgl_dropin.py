"""graphferry.dgl as a drop-in for DGL 2.1's edge-level loading (issue 20):
the edge loader takes every DataLoader argument the node loader takes
(use_uva=False, use_ddp=True, num_workers), exclude as a callable (DGL's
documented form) and GlobalUniform with its arguments, each against DGL's own
DataLoader on the same graph."""

from __future__ import annotations

import inspect

import pytest
import torch

dgl = pytest.importorskip("dgl")

import graphferry.dgl as gfdgl  # noqa: E402

NS = dgl.dataloading.negative_sampler


def small_graph():
    """60 nodes, 200 edges and their reverses (edge e and e + 200)."""
    g = torch.Generator().manual_seed(3)
    src, dst = torch.randint(0, 60, (200,), generator=g), torch.randint(0, 60, (200,), generator=g)
    graph = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=60)
    graph.ndata["feat"] = torch.randn(60, 5, generator=g)
    return graph, torch.cat([torch.arange(200, 400), torch.arange(0, 200)])


def block_eids(blocks):
    return torch.cat([b.edata[dgl.EID].to(torch.int64) for b in blocks])


def test_edge_loader_takes_every_node_loader_argument():
    g, _ = small_graph()
    sampler = gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([2]), negative_sampler=NS.Uniform(1))
    params = inspect.signature(dgl.dataloading.DataLoader.__init__).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    # DGL's link-prediction example's arguments, DGL's defaults (use_uva=False) included
    loader = gfdgl.DataLoader(
        g, torch.arange(40), sampler, **defaults, num_workers=4, persistent_workers=True, pin_memory=False
    )
    assert loader._options.num_threads == 4
    got = torch.cat([pair.edata[dgl.EID] for _, pair, _, _ in loader])
    assert torch.equal(got.sort().values, torch.arange(40))
    with pytest.raises(ValueError, match="use_uva=True"):
        gfdgl.DataLoader(g, torch.arange(40), sampler, use_uva=True)


def test_edge_loader_use_ddp(tmp_path):
    import torch.distributed as dist

    g, _ = small_graph()
    sampler = gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([2]))
    with pytest.raises(RuntimeError, match="init_process_group"):
        gfdgl.DataLoader(g, torch.arange(30), sampler, use_ddp=True)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        kwargs = dict(use_ddp=True, ddp_seed=7, shuffle=True, batch_size=8)
        ours = gfdgl.DataLoader(g, torch.arange(100, 130), sampler, **kwargs)
        theirs = dgl.dataloading.DataLoader(
            g, torch.arange(100, 130), dgl.dataloading.as_edge_prediction_sampler(sampler.sampler), **kwargs
        )
        # this rank's seed edges are DGL's (one rank: every seed edge, each once), batched alike
        assert torch.equal(ours._edges.seeds, gfdgl.ddp_split(torch.arange(100, 130), 0, 1, False))
        mine = [pair.edata[dgl.EID] for _, pair, _ in ours]
        dgls = [pair.edata[dgl.EID] for _, pair, _ in theirs]
        assert [len(m) for m in mine] == [len(d) for d in dgls]
        assert torch.equal(torch.cat(mine).sort().values, torch.cat(dgls).sort().values)
    finally:
        dist.destroy_process_group()


def test_exclude_callable_as_dgl_calls_it():
    g, reverse = small_graph()
    calls = []

    def exclude(seed_edges):
        calls.append(seed_edges.clone())
        return torch.cat([seed_edges, reverse[seed_edges]])

    base = dgl.dataloading.NeighborSampler([-1, -1])
    ours = gfdgl.DataLoader(
        g, torch.arange(50), gfdgl.as_edge_prediction_sampler(base, exclude=exclude), batch_size=16, shuffle=True
    )
    theirs = dgl.dataloading.DataLoader(
        g, torch.arange(50), dgl.dataloading.as_edge_prediction_sampler(base, exclude=exclude), batch_size=16
    )
    for loader in (ours, theirs):
        calls.clear()
        seen = []
        for _, pair, blocks in loader:
            eids = pair.edata[dgl.EID].to(torch.int64)
            seen.append(eids)
            # called with the batch's seed edges (ours ahead: not necessarily last);
            # none of what it named is sampled
            assert any(torch.equal(c.sort().values, eids.sort().values) for c in calls)
            banned = torch.cat([eids, reverse[eids]])
            assert not bool(torch.isin(block_eids(blocks), banned).any())
        assert len(calls) == len(loader) == 4
        assert torch.equal(torch.cat(seen).sort().values, torch.arange(50))
    # with fan-out -1 the blocks hold every allowed edge: DGL's blocks, edge for edge
    eids = torch.tensor([3, 250, 17])
    mine = ours.sample(eids)
    dgls = theirs.collator.sample(g, eids) if hasattr(theirs, "collator") else theirs.graph_sampler.sample(g, eids)
    for a, b in zip(mine[2], dgls[2]):
        assert torch.equal(a.edata[dgl.EID].sort().values, b.edata[dgl.EID].sort().values)
    # the same batches as the engine's own exclusion of the same edges
    same = gfdgl.DataLoader(
        g, torch.arange(50), gfdgl.as_edge_prediction_sampler(base, exclude="reverse_id", reverse_eids=reverse)
    )
    for a, b in zip(mine[2], same.sample(eids)[2]):
        assert torch.equal(a.edata[dgl.EID].sort().values, b.edata[dgl.EID].sort().values)
    bad = gfdgl.DataLoader(g, torch.arange(5), gfdgl.as_edge_prediction_sampler(base, exclude=lambda e: "x"))
    with pytest.raises(TypeError, match="exclude callable"):
        next(iter(bad))


def test_exclude_callable_on_a_heterograph():
    gen = torch.Generator().manual_seed(5)
    src, dst = torch.randint(0, 20, (50,), generator=gen), torch.randint(0, 30, (50,), generator=gen)
    g = dgl.heterograph({("u", "buys", "i"): (src, dst), ("i", "bought_by", "u"): (dst, src)})
    seen = []

    def exclude(seed_edges):
        seen.append({k: v.clone() for k, v in seed_edges.items()})
        ids = seed_edges[("u", "buys", "i")]
        return {("u", "buys", "i"): ids, ("i", "bought_by", "u"): ids}  # the edge and its reverse (same id)

    sampler = gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([-1]), exclude=exclude)
    loader = gfdgl.DataLoader(g, {"buys": torch.arange(50)}, sampler, batch_size=20)
    for _, pair, blocks in loader:
        eids = pair.edges["buys"].data[dgl.EID].to(torch.int64)
        # called with the batch's seed edges (made ahead: not necessarily the last call)
        assert any(torch.equal(c[("u", "buys", "i")].sort().values, eids.sort().values) for c in seen)
        for etype in (("u", "buys", "i"), ("i", "bought_by", "u")):
            got = blocks[0].edges[etype].data[dgl.EID].to(torch.int64)
            assert not bool(torch.isin(got, eids).any()), etype
    assert len(seen) == 3


@pytest.mark.parametrize("exclude_self_loops, replace", [(True, False), (False, False), (True, True), (False, True)])
def test_global_uniform_with_its_arguments(exclude_self_loops, replace):
    """Negatives that are never edges, self-loops only when allowed, repeats
    only with replacement: in DGL's and ours alike, on a graph small enough
    that both happen within a few batches."""
    src = torch.tensor([0, 1, 2, 3, 4, 5])
    g = dgl.graph((src, (src + 1) % 6), num_nodes=6)
    neg = NS.GlobalUniform(4, exclude_self_loops=exclude_self_loops, replace=replace)
    sampler = gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([1]), negative_sampler=neg)
    ours = gfdgl.DataLoader(g, torch.arange(6), sampler, seed=1)

    def mine(key):
        _, _, neg_pair, _ = ours.sample(torch.arange(6), key=key)
        s, d = neg_pair.edges()
        return neg_pair.ndata[dgl.NID][s.long()], neg_pair.ndata[dgl.NID][d.long()]

    torch.manual_seed(0)
    for draw in (mine, lambda key: neg(g, torch.arange(6))):  # ours, then DGL's own sampler
        loops = repeats = 0
        for key in range(10):
            s, d = draw(key)
            assert not bool(g.has_edges_between(s, d).any())  # never an edge
            assert len(s) <= 24
            loops += int((s == d).sum())
            repeats += len(s) - len(set(zip(s.tolist(), d.tolist())))
        assert (loops > 0) == (not exclude_self_loops), draw
        assert (repeats > 0) == replace, draw


def _edge_set(subg):
    s, d = subg.edges()
    nid, eid = subg.ndata[dgl.NID], subg.edata[dgl.EID]
    return set(zip(nid[s.long()].tolist(), nid[d.long()].tolist(), eid.tolist()))


def test_shadow_khop_sampler_as_dgls():
    """DGL's ShaDowKHopSampler through graphferry's DataLoader: the engine's
    k-hop sample, then the induced subgraph (one engine call); with fan-out
    -1 DGL's batches, node and edge for edge."""
    g, _ = small_graph()
    g.ndata["label"] = torch.arange(60)
    seeds = torch.tensor([3, 17, 42, 8, 0, 59, 23])
    for fanouts in ([-1, -1], [3, 2]):
        sampler = dgl.dataloading.ShaDowKHopSampler(fanouts, prefetch_node_feats=["feat"])
        ours = gfdgl.DataLoader(g, seeds, sampler, batch_size=4, seed=1)
        theirs = dgl.dataloading.DataLoader(g, seeds, sampler, batch_size=4)
        mine, dgls = list(ours), list(theirs)
        assert len(mine) == len(dgls) == 2
        # the engine's ShaDow loader made them (sampled and induced on its threads)
        (engine,) = ours._loaders
        assert type(engine).__name__ == "SubgraphLoader" and engine.stats().total.loader.batches == 2
        for (a_in, a_out, a_sub), (b_in, b_out, b_sub) in zip(mine, dgls):
            assert torch.equal(a_out, b_out) and torch.equal(a_in[: len(a_out)], a_out)  # seeds first
            assert torch.equal(a_sub.ndata[dgl.NID], a_in) and a_sub.idtype == g.idtype
            assert torch.equal(a_sub.ndata["feat"], g.ndata["feat"][a_in])  # gathered by the engine
            assert torch.equal(a_sub.ndata["label"], g.ndata["label"][a_in])  # attached lazily, as DGL's
            # induced: every edge of g among the sampled nodes, in the order DGL lists them
            assert torch.equal(a_sub.edata[dgl.EID], g.subgraph(a_in).edata[dgl.EID])
            if fanouts == [-1, -1]:  # deterministic: DGL's own batch
                assert torch.equal(a_in.sort().values, b_in.sort().values)
                assert _edge_set(a_sub) == _edge_set(b_sub)


def test_cluster_gcn_sampler_as_dgls(tmp_path):
    """DGL's ClusterGCNSampler (its METIS partition, made by DGL): each
    batch the subgraph induced on its partitions' nodes, by the engine,
    DGL's own batch node for node and edge for edge."""
    g, _ = small_graph()
    sampler = dgl.dataloading.ClusterGCNSampler(g, 6, cache_path=str(tmp_path / "parts.pkl"), prefetch_ndata=["feat"])
    ours = gfdgl.DataLoader(g, torch.arange(6), sampler, batch_size=4, num_workers=2)
    theirs = dgl.dataloading.DataLoader(g, torch.arange(6), sampler, batch_size=4)
    mine, dgls = list(ours), list(theirs)
    assert len(mine) == len(dgls) == len(ours) == 2
    for a, b in zip(mine, dgls):
        assert torch.equal(a.ndata[dgl.NID], b.ndata[dgl.NID])
        assert torch.equal(a.edata[dgl.EID], b.edata[dgl.EID])
        assert torch.equal(torch.stack(a.edges()), torch.stack(b.edges()))
        assert torch.equal(a.ndata["feat"], b.ndata["feat"])
    # made by the engine's subgraph loader, on its threads
    assert ours._subgraphs._loader.stats().total.loader.batches == 2
    shuffled = gfdgl.DataLoader(g, torch.arange(6), sampler, batch_size=2, shuffle=True, seed=3)
    epochs = [[sg.ndata[dgl.NID] for sg in shuffled] for _ in range(2)]
    for batches in epochs:
        nodes = torch.cat(batches)
        assert torch.equal(nodes.sort().values, torch.arange(60))  # every partition once per epoch
    again = [
        sg.ndata[dgl.NID] for sg in gfdgl.DataLoader(g, torch.arange(6), sampler, batch_size=2, shuffle=True, seed=3)
    ]
    assert all(torch.equal(a, b) for a, b in zip(again, epochs[0]))  # the engine's shuffle, from the seed
    with pytest.raises(ValueError, match="partition ids out of range"):
        gfdgl.DataLoader(g, torch.tensor([6]), sampler)

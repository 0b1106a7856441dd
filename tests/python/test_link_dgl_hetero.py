"""graphferry.dgl's edge-level loader on heterographs (as_edge_prediction_sampler
with seed edges per edge type), against DGL 2.1's own EdgePredictionSampler +
DataLoader on the same graph: the same tuple structure, key sets, dtypes and
node/edge types, positives that are real edges of their type, negatives of
the right types, and exclusion ("self", "reverse_types", "reverse_id")
keeping the seed edges (and their reverses) out of the blocks."""

from __future__ import annotations

import pytest
import torch

dgl = pytest.importorskip("dgl")

import graphferry  # noqa: E402
import graphferry.dgl as gfdgl  # noqa: E402
from graphferry.dgl import HeteroEdgeDataLoader  # noqa: E402

NS = dgl.dataloading.negative_sampler


def _graph(idtype=torch.int64, seed=0, num_paper=40, num_author=25):
    gen = torch.Generator().manual_seed(seed)

    def rand(n, hi_src, hi_dst):
        return torch.randint(0, hi_src, (n,), generator=gen), torch.randint(0, hi_dst, (n,), generator=gen)

    writes = rand(120, num_author, num_paper)
    g = dgl.heterograph(
        {
            ("paper", "cites", "paper"): rand(200, num_paper, num_paper),
            ("author", "writes", "paper"): writes,
            ("paper", "rev_writes", "author"): (writes[1], writes[0]),
        },
        num_nodes_dict={"paper": num_paper, "author": num_author},
        idtype=idtype,
    )
    g.nodes["paper"].data["feat"] = torch.randn(num_paper, 4, generator=gen)
    g.edges["writes"].data["w"] = torch.rand(120, generator=gen)
    return g


SEEDS = {"writes": torch.arange(0, 120, 3), ("paper", "cites", "paper"): torch.arange(0, 200, 5)}
FANOUTS = [{"cites": 2, "writes": 2, "rev_writes": 2}, {"cites": 3, "writes": 1, "rev_writes": 1}]


def _loaders(g, exclude=None, neg=None, **kw):
    ours = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler(FANOUTS), exclude=exclude, negative_sampler=neg, **kw
    )
    theirs = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler(FANOUTS), exclude=exclude, negative_sampler=neg, **kw
    )
    a = gfdgl.DataLoader(g, SEEDS, ours, batch_size=16, seed=3)
    b = dgl.dataloading.DataLoader(g, {k: v.to(g.idtype) for k, v in SEEDS.items()}, theirs, batch_size=16)
    return a, b


def _check_pair(g, pair, ref):
    """Same types, key sets, dtypes; every pair edge a real edge of its type."""
    assert pair.ntypes == ref.ntypes and pair.canonical_etypes == ref.canonical_etypes
    assert pair.idtype == ref.idtype == g.idtype
    for nt in g.ntypes:
        assert set(pair.nodes[nt].data.keys()) == set(ref.nodes[nt].data.keys())
    for et in g.canonical_etypes:
        assert set(pair.edges[et].data.keys()) == set(ref.edges[et].data.keys())
        src, dst = pair.edges(etype=et)
        eid = pair.edges[et].data[dgl.EID]
        assert eid.dtype == g.idtype
        gs, gd = g.find_edges(eid, etype=et)
        assert torch.equal(pair.nodes[et[0]].data[dgl.NID][src.long()], gs)
        assert torch.equal(pair.nodes[et[2]].data[dgl.NID][dst.long()], gd)
    if "w" in pair.edges["writes"].data:
        eid = pair.edges["writes"].data[dgl.EID].long()
        assert torch.equal(pair.edges["writes"].data["w"], g.edges["writes"].data["w"][eid])


def _check_blocks(g, blocks, ref_blocks):
    assert len(blocks) == len(ref_blocks)
    for b, r in zip(blocks, ref_blocks):
        assert b.srctypes == r.srctypes and b.canonical_etypes == r.canonical_etypes and b.idtype == r.idtype
        for et in b.canonical_etypes:
            src, dst = b.edges(etype=et)
            gs, gd = g.find_edges(b.edges[et].data[dgl.EID], etype=et)
            assert torch.equal(b.srcnodes[et[0]].data[dgl.NID][src.long()], gs)
            assert torch.equal(b.dstnodes[et[2]].data[dgl.NID][dst.long()], gd)


@pytest.mark.parametrize("idtype", [torch.int64, torch.int32])
def test_structure_matches_dgl(idtype):
    g = _graph(idtype)
    a, b = _loaders(g, neg=NS.Uniform(2))
    assert isinstance(a, HeteroEdgeDataLoader)
    assert len(a) == len(b)
    for ours, ref in zip(a, b):
        assert len(ours) == len(ref) == 4
        input_nodes, pair, neg, blocks = ours
        r_input, r_pair, r_neg, r_blocks = ref
        assert set(input_nodes) == set(r_input) == set(g.ntypes)
        assert all(input_nodes[nt].dtype == idtype for nt in g.ntypes)
        _check_pair(g, pair, r_pair)
        assert neg.ntypes == r_neg.ntypes and neg.canonical_etypes == r_neg.canonical_etypes
        assert neg.idtype == idtype
        for nt in g.ntypes:
            assert set(neg.nodes[nt].data.keys()) == set(r_neg.nodes[nt].data.keys())
        for et in g.canonical_etypes:
            assert set(neg.edges[et].data.keys()) == set(r_neg.edges[et].data.keys())
        for nt in g.ntypes:  # compacted together: the same nodes
            assert neg.num_nodes(nt) == pair.num_nodes(nt)
            # the batch's seeds are the last block's destination nodes
            assert torch.equal(blocks[-1].dstnodes[nt].data[dgl.NID], pair.nodes[nt].data[dgl.NID])
        for et in g.canonical_etypes:
            k = neg.num_edges(et)
            assert k == 2 * pair.num_edges(et)
            nsrc, ndst = neg.edges(etype=et)
            psrc, _ = pair.edges(etype=et)
            # per-source: each seed's source repeated k times; dst of the right type
            assert torch.equal(nsrc, psrc.repeat_interleave(2))
            ids = pair.nodes[et[2]].data[dgl.NID][ndst.long()]
            assert ((ids >= 0) & (ids < g.num_nodes(et[2]))).all()
        _check_blocks(g, blocks, r_blocks)


def test_without_negatives_and_reproducible():
    g = _graph()
    a, b = _loaders(g)
    first = list(a)
    refs = list(b)
    assert len(first) == len(refs)
    for ours, ref in zip(first, refs):
        assert len(ours) == len(ref) == 3
        _check_pair(g, ours[1], ref[1])
        # unshuffled and without negatives: DGL's very batches and compaction
        for nt in g.ntypes:
            assert torch.equal(ours[1].nodes[nt].data[dgl.NID], ref[1].nodes[nt].data[dgl.NID])
        for et in g.canonical_etypes:
            assert torch.equal(ours[1].edges[et].data[dgl.EID], ref[1].edges[et].data[dgl.EID])
            assert torch.equal(torch.stack(ours[1].edges(etype=et)), torch.stack(ref[1].edges(etype=et)))
    again = list(a)  # epoch 1 (unshuffled: same seeds, other random streams)
    for x, y in zip(first, again):
        for nt in g.ntypes:
            assert torch.equal(x[1].nodes[nt].data[dgl.NID], y[1].nodes[nt].data[dgl.NID])
    # sample() under a key repeats
    s1 = a.sample({"writes": torch.tensor([0, 5, 7])}, key=9)
    s2 = a.sample({"writes": torch.tensor([0, 5, 7])}, key=9)
    for x, y in zip(s1[2], s2[2]):
        for et in g.canonical_etypes:
            assert torch.equal(x.edges[et].data[dgl.EID], y.edges[et].data[dgl.EID])


def _block_eids(blocks, et):
    return torch.cat([b.edges[et].data[dgl.EID].long() for b in blocks])


def _full_fanout_loader(g, exclude, **kw):
    sampler = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([-1, -1]), exclude=exclude, negative_sampler=NS.PerSourceUniform(1), **kw
    )
    return gfdgl.DataLoader(g, {"writes": torch.arange(120)}, sampler, batch_size=30, seed=1)


def test_exclude_self_and_reverse_types():
    g = _graph()
    # without exclusion, full fan-outs see some seed edges
    seen = 0
    for _, pair, _, blocks in _full_fanout_loader(g, None):
        seen += torch.isin(_block_eids(blocks, "writes"), pair.edges["writes"].data[dgl.EID].long()).sum()
    assert seen > 0
    rev = {"writes": "rev_writes", "rev_writes": "writes"}
    for exclude, kw in (("self", {}), ("reverse_types", {"reverse_etypes": rev})):
        seen_rev = 0
        for _, pair, _, blocks in _full_fanout_loader(g, exclude, **kw):
            seeds = pair.edges["writes"].data[dgl.EID].long()
            assert not torch.isin(_block_eids(blocks, "writes"), seeds).any()
            seen_rev += torch.isin(_block_eids(blocks, "rev_writes"), seeds).sum()
        assert (seen_rev == 0) == (exclude == "reverse_types")


def test_exclude_reverse_id():
    g = _graph()
    # the reverse of writes edge i is writes edge (i + 1) % 120 (an arbitrary map)
    reverse = {"writes": (torch.arange(120) + 1) % 120}
    for _, pair, _, blocks in _full_fanout_loader(g, "reverse_id", reverse_eids=reverse):
        seeds = pair.edges["writes"].data[dgl.EID].long()
        got = _block_eids(blocks, "writes")
        assert not torch.isin(got, seeds).any()
        assert not torch.isin(got, reverse["writes"][seeds]).any()


def test_hetero_graph_input():
    g = _graph()
    hg = graphferry.HeteroGraph.from_dgl(g)
    sampler = gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler(FANOUTS), negative_sampler=NS.Uniform(1))
    input_nodes, pair, neg, blocks = next(iter(gfdgl.DataLoader(hg, SEEDS, sampler, batch_size=8, seed=0)))
    assert set(input_nodes) == set(g.ntypes)
    for et in g.canonical_etypes:
        src, dst = pair.edges(etype=et)
        gs, gd = g.find_edges(pair.edges[et].data[dgl.EID], etype=et)
        assert torch.equal(pair.nodes[et[0]].data[dgl.NID][src.long()], gs)
        assert torch.equal(pair.nodes[et[2]].data[dgl.NID][dst.long()], gd)


def test_errors():
    g = _graph()
    ns = dgl.dataloading.NeighborSampler(FANOUTS)
    with pytest.raises(ValueError, match="reverse_etypes"):
        gfdgl.as_edge_prediction_sampler(ns, exclude="reverse_types")
    with pytest.raises(TypeError, match="dict"):
        gfdgl.DataLoader(g, torch.arange(3), gfdgl.as_edge_prediction_sampler(ns))
    with pytest.raises(ValueError, match="unknown|not an edge type|edge type"):
        gfdgl.DataLoader(g, {"nope": torch.arange(3)}, gfdgl.as_edge_prediction_sampler(ns))
    with pytest.raises(TypeError, match="dict"):
        gfdgl.DataLoader(
            g, SEEDS, gfdgl.as_edge_prediction_sampler(ns, exclude="reverse_id", reverse_eids=torch.arange(120))
        )
    homo = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 0])))
    with pytest.raises(ValueError, match="heterograph"):
        gfdgl.DataLoader(
            homo,
            torch.arange(2),
            gfdgl.as_edge_prediction_sampler(
                dgl.dataloading.NeighborSampler([1]), exclude="reverse_types", reverse_etypes={"a": "b"}
            ),
        )


def test_same_batches_for_any_patch_and_thread_count():
    g = _graph()
    sampler = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler(FANOUTS), exclude="self", negative_sampler=NS.Uniform(2)
    )
    runs = []
    for patches, threads in ((1, 1), (3, 2)):
        hg = graphferry.HeteroGraph.from_dgl(g, num_patches=patches)
        loader = gfdgl.DataLoader(hg, SEEDS, sampler, batch_size=16, shuffle=True, seed=11, num_threads=threads)
        runs.append(list(loader))
    for (i1, p1, n1, b1), (i2, p2, n2, b2) in zip(*runs):
        for nt in g.ntypes:
            assert torch.equal(i1[nt], i2[nt])
            assert torch.equal(p1.nodes[nt].data[dgl.NID], p2.nodes[nt].data[dgl.NID])
        for et in g.canonical_etypes:
            assert torch.equal(torch.stack(n1.edges(etype=et)), torch.stack(n2.edges(etype=et)))
            for x, y in zip(b1, b2):
                assert torch.equal(x.edges[et].data[dgl.EID], y.edges[et].data[dgl.EID])

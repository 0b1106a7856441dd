"""DGL's LaborSampler (LABOR-0) through graphferry.dgl.DataLoader, against DGL's
own LaborSampler + DataLoader on small graphs."""

from __future__ import annotations

import pytest
import torch

dgl = pytest.importorskip("dgl")

import graphferry.dgl as gfdgl  # noqa: E402


def _graph(num_nodes=60, num_edges=700, seed=3):
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_nodes, (num_edges,), generator=gen)
    # a skewed in-degree: a few hubs above every fan-out, some nodes below
    dst = torch.where(
        torch.rand(num_edges, generator=gen) < 0.4,
        torch.randint(0, 6, (num_edges,), generator=gen),
        torch.randint(0, num_nodes, (num_edges,), generator=gen),
    )
    g = dgl.graph((src, dst), num_nodes=num_nodes)
    g.ndata["feat"] = torch.randn(num_nodes, 4, generator=gen)
    g.ndata["label"] = torch.arange(num_nodes)
    return g


def _check_blocks(g, input_nodes, output_nodes, blocks, num_layers):
    """DGL's block conventions, and every sampled edge exists in g."""
    assert len(blocks) == num_layers
    assert torch.equal(input_nodes, blocks[0].srcdata[dgl.NID])
    assert torch.equal(output_nodes, blocks[-1].dstdata[dgl.NID])
    for i, block in enumerate(blocks):
        assert block.is_block
        src_ids, dst_ids = block.srcdata[dgl.NID], block.dstdata[dgl.NID]
        assert torch.equal(src_ids[: block.num_dst_nodes()], dst_ids), "dst nodes lead the src nodes"
        if i + 1 < len(blocks):
            assert torch.equal(dst_ids, blocks[i + 1].srcdata[dgl.NID]), "blocks chain"
        u, v = block.edges()
        eids = block.edata[dgl.EID]
        gu, gv = g.find_edges(eids)
        assert torch.equal(gu, src_ids[u]) and torch.equal(gv, dst_ids[v])
        assert len(set(eids.tolist())) == len(eids), "an edge is kept at most once"
        # a destination keeps at most its in-degree, all of it when that is <= fan-out
        assert bool((block.in_degrees() <= g.in_degrees(dst_ids)).all())


def test_block_structure_matches_dgl():
    g = _graph()
    seeds = torch.arange(0, 20)
    fanouts = [3, 2]
    ours = gfdgl.DataLoader(
        g,
        seeds,
        dgl.dataloading.LaborSampler(fanouts, prefetch_node_feats=["feat"], prefetch_labels=["label"]),
        batch_size=8,
        seed=1,
    )
    theirs = dgl.dataloading.DataLoader(g, seeds, dgl.dataloading.LaborSampler(fanouts), batch_size=8)
    got, want = list(ours), list(theirs)
    ours.close()
    assert len(got) == len(want)
    for (gi, go, gb), (wi, wo, wb) in zip(got, want):
        _check_blocks(g, gi, go, gb, len(fanouts))
        assert torch.equal(go, wo)
        assert gi.dtype == wi.dtype and go.dtype == wo.dtype
        for b, w in zip(gb, wb):
            assert b.idtype == w.idtype
            assert b.edata[dgl.EID].dtype == w.edata[dgl.EID].dtype
            assert b.srcdata[dgl.NID].dtype == w.srcdata[dgl.NID].dtype
            # LABOR-0 attaches no edge weights, in DGL as here
            assert "edge_weights" not in w.edata and "edge_weights" not in b.edata
        assert torch.equal(gb[0].srcdata["feat"], g.ndata["feat"][gi])
        assert torch.equal(gb[-1].dstdata["label"], g.ndata["label"][go])


def _edges_per_dst(g, loader_of, seeds, runs):
    """Mean number of edges each seed keeps in the last block, over runs."""
    total = torch.zeros(len(seeds), dtype=torch.float64)
    for r in range(runs):
        for _, output_nodes, blocks in loader_of(r):
            assert torch.equal(output_nodes, seeds)
            total += blocks[-1].in_degrees().to(torch.float64)
    return total / runs


def test_expected_edges_per_destination_match_dgl():
    g = _graph()
    seeds = torch.arange(0, 12)  # one batch: hubs 0..5 and ordinary nodes
    k, runs = 3, 300

    def ours(r):
        return gfdgl.DataLoader(g, seeds, dgl.dataloading.LaborSampler([k]), batch_size=len(seeds), seed=r)

    def theirs(r):
        dgl.seed(r)
        return dgl.dataloading.DataLoader(g, seeds, dgl.dataloading.LaborSampler([k]), batch_size=len(seeds))

    got = _edges_per_dst(g, ours, seeds, runs)
    want = _edges_per_dst(g, theirs, seeds, runs)
    deg = g.in_degrees(seeds).to(torch.float64)
    expected = torch.minimum(deg, torch.full_like(deg, k))  # E[kept] = d * min(1, k/d)
    # Var[kept] <= k for independent Bernoulli(k/d) marginals; 5 sigma of the mean of `runs`
    tol = 5 * (expected.clamp(min=1) / runs).sqrt()
    assert torch.all((got - expected).abs() <= tol), (got, expected)
    assert torch.all((want - expected).abs() <= tol), (want, expected)
    assert torch.equal(got[deg <= k], deg[deg <= k]), "a destination with in-degree <= fan-out keeps all"


def test_layer_dependency_and_reproducibility():
    g = _graph()
    seeds = torch.arange(0, 10)

    def run(**kw):
        loader = gfdgl.DataLoader(g, seeds, dgl.dataloading.LaborSampler([4, 4], **kw), batch_size=10, seed=5)
        out = list(loader)
        loader.close()
        return out

    a, b = run(layer_dependency=True), run(layer_dependency=True)
    for (ai, _, ab), (bi, _, bb) in zip(a, b):
        assert torch.equal(ai, bi)
        for x, y in zip(ab, bb):
            assert torch.equal(x.edata[dgl.EID], y.edata[dgl.EID])
    # With layer dependency the seeds (dst of both blocks) keep the same
    # neighbours in both layers.
    for _, _, blocks in a:
        _check_blocks(g, blocks[0].srcdata[dgl.NID], seeds, blocks, 2)
        inner, outer = blocks[1], blocks[0]
        for j in range(len(seeds)):
            e_in = inner.in_edges(j, form="eid")
            e_out = outer.in_edges(j, form="eid")
            assert sorted(inner.edata[dgl.EID][e_in].tolist()) == sorted(outer.edata[dgl.EID][e_out].tolist())


def test_graphferry_sampler_with_scheme_labor():
    g = _graph()
    sampler = gfdgl.NeighborSampler([2, -1], scheme="labor", prefetch_node_feats=["feat"])
    loader = gfdgl.DataLoader(g, torch.arange(6), sampler, batch_size=3, seed=0)
    for input_nodes, output_nodes, blocks in loader:
        _check_blocks(g, input_nodes, output_nodes, blocks, 2)
        # fan-out -1 (the seeds' layer) keeps every in-edge
        assert torch.equal(blocks[-1].in_degrees(), g.in_degrees(output_nodes))
    loader.close()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"importance_sampling": 1}, NotImplementedError, "importance_sampling=1"),
        ({"importance_sampling": -1}, NotImplementedError, "LABOR-0 only"),
        ({"prob": "w"}, NotImplementedError, "prob='w'"),
        ({"batch_dependency": 4}, NotImplementedError, "batch_dependency=4"),
        ({"edge_dir": "out"}, ValueError, "in-neighbours only"),
    ],
)
def test_unsupported_options_are_named(kwargs, error, match):
    g = _graph()
    g.edata["w"] = torch.rand(g.num_edges())
    with pytest.raises(error, match=match):
        gfdgl.DataLoader(g, torch.arange(4), dgl.dataloading.LaborSampler([2], **kwargs), batch_size=2)


def test_replace_is_refused_by_the_engine():
    g = _graph()
    sampler = gfdgl.NeighborSampler([2], scheme="labor", replace=True)
    with pytest.raises(Exception, match="Replace is not valid"):
        gfdgl.DataLoader(g, torch.arange(4), sampler, batch_size=2)


def test_sample_neighbors_labor_is_the_same_for_any_patch_count(tiny):
    import graphferry

    seeds = torch.arange(0, tiny.num_nodes, 3)
    subs = []
    for patches, partition, threads in [(1, "range", 1), (3, "random", 2), (4, "range", 3)]:
        with graphferry.Graph.from_coo(
            tiny.src, tiny.dst, num_nodes=tiny.num_nodes, num_patches=patches, partition=partition
        ) as g:
            subs.append(
                graphferry.sample_neighbors(
                    g, seeds, [3, 2], scheme="labor", layer_dependency=True, seed=11, num_threads=threads
                )
            )
    for sub in subs[1:]:
        assert torch.equal(sub.nodes, subs[0].nodes)
        for a, b in zip(sub.blocks, subs[0].blocks):
            assert torch.equal(a.indptr, b.indptr) and torch.equal(a.edge_ids, b.edge_ids)

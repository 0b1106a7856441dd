"""DGL's ShaDowKHopSampler inside as_edge_prediction_sampler (issue 33):
graphferry's DataLoader yields DGL's ``(input_nodes, pair_graph[,
neg_pair_graph], subgraph)``, the subgraph induced on the k-hop ShaDow
sample of the pairs' ends with the batch's excluded edges left out, made
by the engine's edge loader on its threads (GF_COO_SUBGRAPH).

DGL's own checks of this case (tests/python/pytorch/dataloading/
test_dataloader.py, test_edge_dataloader_excludes with ShaDowKHopSampler:
4 exclusions x a callable or not x 2 batch sizes, 16 cases) are reproduced
on the graphs they build, with one change: DGL's homogeneous fixture makes
its reverse edges (``src = cat([s, d])``) and then builds the graph from
``(s, d)`` alone, so that its ``reverse_eids`` name edges the graph does
not have; here the graph holds them, as the fixture means it to (the
engine refuses exclusion ids that are not edges). Then DGL's own loader on
the same graphs: with every neighbour sampled (fan-out -1) both are
deterministic and must agree batch for batch."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np
import pytest
import torch

dgl = pytest.importorskip("dgl")

import graphferry  # noqa: E402
import graphferry.dgl as gdgl  # noqa: E402
from graphferry import GraphferryError  # noqa: E402

NS = dgl.dataloading.negative_sampler


def _homogeneous(gen: torch.Generator):
    """DGL's _create_homogeneous, its reverse edges in the graph: edge e's
    reverse is e + 1000 (and back)."""
    s, d = torch.randint(0, 200, (1000,), generator=gen), torch.randint(0, 200, (1000,), generator=gen)
    g = dgl.graph((torch.cat([s, d]), torch.cat([d, s])), num_nodes=200)
    reverse_eids = torch.cat([torch.arange(1000, 2000), torch.arange(0, 1000)])
    always_exclude = torch.randint(0, 1000, (50,), generator=gen)
    return g, reverse_eids, always_exclude, torch.arange(0, 1000)


def _heterogeneous(gen: torch.Generator):
    """DGL's _create_heterogeneous."""
    edges = {}
    for utype, etype, vtype in [("A", "AA", "A"), ("A", "AB", "B")]:
        s, d = torch.randint(0, 200, (1000,), generator=gen), torch.randint(0, 200, (1000,), generator=gen)
        edges[utype, etype, vtype] = (s, d)
        edges[vtype, "rev-" + etype, utype] = (d, s)
    g = dgl.heterograph(edges, num_nodes_dict={"A": 200, "B": 200})
    reverse_etypes = {"AA": "rev-AA", "AB": "rev-AB", "rev-AA": "AA", "rev-AB": "AB"}
    always_exclude = {
        "AA": torch.randint(0, 1000, (50,), generator=gen),
        "AB": torch.randint(0, 1000, (50,), generator=gen),
    }
    return g, reverse_etypes, always_exclude, {"AA": torch.arange(0, 1000), "AB": torch.arange(0, 1000)}


def _edges_to_exclude(g, exclude, always_exclude, pair_eids):
    """DGL's _find_edges_to_exclude: what a batch of the seed edges
    ``pair_eids`` excludes (also the callable form of ``exclude``)."""
    if exclude is None:
        return always_exclude
    if exclude == "self":
        return pair_eids if always_exclude is None else torch.cat([pair_eids, always_exclude])
    if exclude == "reverse_id":
        pair_eids = torch.cat([pair_eids, pair_eids + 1000])
        return pair_eids if always_exclude is None else torch.cat([pair_eids, always_exclude])
    pair_eids = {g.to_canonical_etype(k): v for k, v in pair_eids.items()}
    if ("A", "AA", "A") in pair_eids:
        pair_eids[("A", "rev-AA", "A")] = pair_eids[("A", "AA", "A")]
    if ("A", "AB", "B") in pair_eids:
        pair_eids[("B", "rev-AB", "A")] = pair_eids[("A", "AB", "B")]
    for k, v in (always_exclude or {}).items():
        k = g.to_canonical_etype(k)
        pair_eids[k] = torch.cat([pair_eids[k], v]) if k in pair_eids else v
    return pair_eids


def _per_type(x, g):
    return x if isinstance(x, Mapping) else {g.canonical_etypes[0]: x}


def _check_induced(g, input_nodes, subg, excluded):
    """``subg`` is the subgraph of ``g`` induced on ``input_nodes`` without
    the ``excluded`` edges: every such edge, none other (per edge type)."""
    ref = g.subgraph(input_nodes)
    got = _per_type(subg.edata[dgl.EID], g)
    for et, ids in _per_type(ref.edata[dgl.EID], g).items():
        out = excluded.get(et, torch.empty(0, dtype=ids.dtype))
        want = ids[~torch.isin(ids, out)]
        assert sorted(want.tolist()) == sorted(got[et].tolist()), et
        if not g.is_homogeneous:
            continue
        # DGL's order: dgl.DGLGraph.subgraph's, the excluded edges removed
        assert torch.equal(got[et], want)
        keep = ~torch.isin(ids, out)
        assert torch.equal(torch.stack(subg.edges()), torch.stack(ref.edges())[:, keep])


@pytest.mark.parametrize("batch_size", [1, 50])
@pytest.mark.parametrize("always_exclude_flag", [False, True])
@pytest.mark.parametrize("exclude", [None, "self", "reverse_id", "reverse_types"])
def test_dgls_edge_dataloader_excludes_with_shadow(exclude, always_exclude_flag, batch_size):
    """DGL's test_edge_dataloader_excludes with ShaDowKHopSampler([5]): no
    edge a batch excludes (DGL's modes, or its callable form with 50 more
    edges always excluded) is in the batch's subgraph; and the subgraph is
    every other edge among its nodes."""
    gen = torch.Generator().manual_seed(3)
    if exclude == "reverse_types":
        g, reverse_etypes, always_exclude, seed_edges = _heterogeneous(gen)
    else:
        g, reverse_eids, always_exclude, seed_edges = _homogeneous(gen)
    if not always_exclude_flag:
        always_exclude = None
    kwargs = dict(
        exclude=partial(_edges_to_exclude, g, exclude, always_exclude) if always_exclude_flag else exclude,
        reverse_eids=reverse_eids if exclude == "reverse_id" else None,
        reverse_etypes=reverse_etypes if exclude == "reverse_types" else None,
    )
    sampler = dgl.dataloading.as_edge_prediction_sampler(dgl.dataloading.ShaDowKHopSampler([5]), **kwargs)
    loader = gdgl.DataLoader(g, seed_edges, sampler, batch_size=batch_size, use_prefetch_thread=False, seed=1)
    batches = 0
    for i, (input_nodes, pair_graph, subg) in enumerate(loader):
        assert isinstance(subg, dgl.DGLGraph) and not subg.is_block
        pair_eids = pair_graph.edata[dgl.EID]
        excluded = _edges_to_exclude(g, exclude, always_exclude, pair_eids)
        block_eids = _per_type(subg.edata[dgl.EID], g)
        excluded = {} if excluded is None else _per_type(excluded, g)
        for k, ids in excluded.items():  # DGL's own check
            assert not np.isin(ids.numpy(), block_eids[k].numpy()).any()
        _check_induced(g, input_nodes, subg, excluded)
        batches += 1
        if i == 10:
            break
    assert batches == 11
    (engine,) = loader._loaders  # made by the engine's edge loader, ahead of this loop
    assert type(engine).__name__ == "EdgeLoader" and engine.stats().total.loader.batches >= batches
    loader.close()


def _ends(graph, et):
    """(source ids, destination ids, edge ids) of the edges of type ``et``."""
    s, d = graph.edges(etype=et)
    nid = graph.ndata[dgl.NID]
    sn, dn = (nid[et[0]], nid[et[2]]) if isinstance(nid, Mapping) else (nid, nid)
    return sn[s.long()].tolist(), dn[d.long()].tolist(), graph.edges[et].data[dgl.EID].tolist()


def _digest(batch):
    """A batch as plain lists: the pair graph exactly, the ShaDow sample's
    nodes as a set with the seeds first, its edges as a set of (source id,
    destination id, edge id) per type."""
    input_nodes, pair, subg = batch[0], batch[1], batch[-1]
    out = {}
    for et in pair.canonical_etypes:
        out[("pair",) + et] = _ends(pair, et)
        out[("sub",) + et] = set(zip(*_ends(subg, et)))
    for nt, ids in (input_nodes if isinstance(input_nodes, Mapping) else {"_N": input_nodes}).items():
        n = pair.num_nodes(nt) if nt != "_N" else pair.num_nodes()
        out[("nodes", nt)] = (ids[:n].tolist(), sorted(ids.tolist()))
    return out


def test_batches_are_dgls_own_loaders():
    """On the same graph, seeds and settings, with every neighbour sampled
    (fan-out -1: no randomness): DGL's loader and ours give the same pair
    graphs, the same ShaDow node sets (the pair's nodes first, in the same
    order) and the same subgraphs, node and edge data attached as DGL
    attaches them (the prefetched ones gathered by the engine)."""
    gen = torch.Generator().manual_seed(4)
    g, reverse_eids, _, _ = _homogeneous(gen)
    g.ndata["feat"], g.ndata["label"] = torch.randn(200, 4, generator=gen), torch.arange(200)
    g.edata["w"] = torch.randn(2000, generator=gen)
    seeds = torch.arange(0, 2000, 7)
    for exclude in (None, "self", "reverse_id"):
        shadow = dgl.dataloading.ShaDowKHopSampler([-1, -1], prefetch_node_feats=["feat"], prefetch_edge_feats=["w"])
        sampler = dgl.dataloading.as_edge_prediction_sampler(shadow, exclude=exclude, reverse_eids=reverse_eids)
        ours = list(gdgl.DataLoader(g, seeds, sampler, batch_size=40, num_workers=2))
        theirs = list(dgl.dataloading.DataLoader(g, seeds, sampler, batch_size=40))
        assert len(ours) == len(theirs) == 8
        for a, b in zip(ours, theirs):
            assert _digest(a) == _digest(b), exclude
            sub, ref = a[-1], b[-1]
            assert set(sub.ndata) == set(ref.ndata) and set(sub.edata) == set(ref.edata)
            for name in ("feat", "label", dgl.NID):
                assert torch.equal(sub.ndata[name], g.ndata[name][a[0]] if name != dgl.NID else a[0])
            assert torch.equal(sub.edata["w"], g.edata["w"][sub.edata[dgl.EID]])
            assert torch.equal(a[1].edata["w"], g.edata["w"][a[1].edata[dgl.EID]])  # pair graph: DGL's lazy frames


def test_heterogeneous_batches_are_dgls_own_loaders():
    """The heterograph of DGL's test, exclude='reverse_types', fan-out -1:
    DGL's batches, node type by node type and edge type by edge type."""
    gen = torch.Generator().manual_seed(5)
    g, reverse_etypes, _, _ = _heterogeneous(gen)
    g.nodes["A"].data["feat"] = torch.randn(200, 3, generator=gen)
    seeds = {"AA": torch.arange(0, 1000, 9), "AB": torch.arange(0, 1000, 13)}
    sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.ShaDowKHopSampler([-1]), exclude="reverse_types", reverse_etypes=reverse_etypes
    )
    ours = list(gdgl.DataLoader(g, seeds, sampler, batch_size=32))
    theirs = list(dgl.dataloading.DataLoader(g, seeds, sampler, batch_size=32))
    assert len(ours) == len(theirs) == 6
    for a, b in zip(ours, theirs):
        assert _digest(a) == _digest(b)
        sub = a[-1]
        assert sub.ntypes == b[-1].ntypes and sub.canonical_etypes == b[-1].canonical_etypes
        assert torch.equal(sub.nodes["A"].data["feat"], g.nodes["A"].data["feat"][a[0]["A"]])


def test_negatives_and_their_nodes_are_sampled_too():
    """With DGL's Uniform(k): neg_pair_graph has k negatives per seed edge,
    from its source, over the pair graph's nodes; the ShaDow sample starts
    with those nodes (the negatives' ends included), as DGL's does."""
    g, reverse_eids, _, _ = _homogeneous(torch.Generator().manual_seed(6))
    sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.ShaDowKHopSampler([3, 3]),
        exclude="reverse_id",
        reverse_eids=reverse_eids,
        negative_sampler=NS.Uniform(2),
    )
    loader = gdgl.DataLoader(g, torch.arange(0, 2000, 3), sampler, batch_size=64, shuffle=True, seed=2)
    for input_nodes, pair, neg, subg in loader:
        n = pair.num_nodes()
        assert neg.num_nodes() == n and neg.num_edges() == 2 * pair.num_edges()
        assert torch.equal(neg.ndata[dgl.NID], pair.ndata[dgl.NID])
        assert torch.equal(neg.edges()[0], pair.edges()[0].repeat_interleave(2))
        assert torch.equal(input_nodes[:n], pair.ndata[dgl.NID]) and torch.equal(subg.ndata[dgl.NID], input_nodes)
        eids = pair.edata[dgl.EID]
        _check_induced(g, input_nodes, subg, {g.canonical_etypes[0]: torch.cat([eids, reverse_eids[eids]])})


def test_bad_inputs_are_refused_by_name():
    """What DGL refuses (an unknown exclusion, a missing reverse map, a bad
    seed edge) graphferry refuses too, naming it; what graphferry does not
    serve with a ShaDowKHopSampler inside (comm=, the one-off sample())
    says so."""
    g, reverse_eids, _, _ = _homogeneous(torch.Generator().manual_seed(7))
    shadow = dgl.dataloading.ShaDowKHopSampler([2])

    def edge(**kw):
        return dgl.dataloading.as_edge_prediction_sampler(shadow, **kw)

    with pytest.raises(ValueError, match="'bogus'"):  # DGL: "unsupported mode bogus"
        gdgl.DataLoader(g, torch.arange(10), edge(exclude="bogus"))
    with pytest.raises(ValueError, match="reverse_eids"):
        gdgl.DataLoader(g, torch.arange(10), edge(exclude="reverse_id"))
    with pytest.raises(ValueError, match="reverse_types"):
        gdgl.DataLoader(g, torch.arange(10), edge(exclude="reverse_types", reverse_etypes={"a": "b"}))
    with pytest.raises(dgl.DGLError):  # DGL's own loader, for comparison
        next(iter(dgl.dataloading.DataLoader(g, torch.tensor([3, 5000]), edge(exclude="self"), batch_size=2)))
    with pytest.raises(GraphferryError, match="5000"):
        next(iter(gdgl.DataLoader(g, torch.tensor([3, 5000]), edge(exclude="self"), batch_size=2)))
    loader = gdgl.DataLoader(g, torch.arange(10), edge(exclude="self"), batch_size=4)
    with pytest.raises(NotImplementedError, match="ShaDowKHopSampler"):
        loader.sample(torch.tensor([1, 2]))
    assert sum(1 for _ in loader) == 3  # the loader goes on
    loader.close()
    graph = graphferry.Graph.from_dgl(g)
    with pytest.raises(NotImplementedError, match="ShaDowKHopSampler"):  # before the communicator is used
        gdgl.DataLoader(graph, torch.arange(10), edge(exclude="self"), comm=object())
    graph.close()

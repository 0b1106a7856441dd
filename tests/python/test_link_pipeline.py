"""The edge-level loaders on the engine's pipeline (gf_edge_loader_open):
graphferry.dgl.DataLoader with an edge prediction sampler and
graphferry.pyg.LinkNeighborLoader, homogeneous and heterogeneous.

- their batches depend on the seed, the epoch and the batch only: the same
  for any patch and thread count;
- the training thread does no sampling between two batches: while the
  consumer holds a batch and asks for nothing, the engine makes the next
  ones (its statistics count them; the time saved is bench/'s);
- edge data (DGL's prefetch_edge_feats, PyG's edge attributes) is gathered
  by the engine and equals the graph's rows for the batch's edge ids;
- the loaders' statistics are the engine's;
- Graph.edges / HeteroGraph.edges (gf_graph_edges) give back the edges a
  graph was built from."""

from __future__ import annotations

import pytest
import torch

dgl = pytest.importorskip("dgl")
pyg = pytest.importorskip("torch_geometric")

from torch_geometric.data import Data, HeteroData  # noqa: E402

import graphferry  # noqa: E402
import graphferry.dgl as gfdgl  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402

from conftest import wait_made_ahead  # noqa: E402

NS = dgl.dataloading.negative_sampler


def random_edges(num_nodes: int, num_edges: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, num_nodes, (num_edges,), generator=gen), torch.randint(
        0, num_nodes, (num_edges,), generator=gen
    )


# ---------------------------------------------------------------------------
# Same batches for any patch and thread count


def dgl_epoch(graph, sampler, eids, threads):
    loader = gfdgl.DataLoader(graph, eids, sampler, batch_size=32, shuffle=True, seed=5, num_threads=threads)
    out = []
    for input_nodes, pair, neg, blocks in loader:
        out.append(
            [input_nodes, pair.ndata[dgl.NID], pair.edata[dgl.EID], *neg.edges()]
            + [b.edata[dgl.EID] for b in blocks]
            + [torch.stack(b.edges()) for b in blocks]
        )
    loader.close()
    return out


def test_dgl_edge_batches_same_for_any_patch_and_thread_count():
    src, dst = random_edges(300, 3000, 1)
    eids = torch.arange(0, 3000, 7)
    sampler = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([4, 3]), exclude="self", negative_sampler=NS.Uniform(3)
    )
    runs = []
    for patches, threads in ((1, 1), (3, 2), (4, 3)):
        g = graphferry.Graph.from_coo(src, dst, num_nodes=300, num_patches=patches, partition="random", seed=9)
        runs.append(dgl_epoch(g, sampler, eids, threads))
        g.close()
    assert len(runs[0]) == -(-len(eids) // 32)
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            assert all(torch.equal(x, y) for x, y in zip(a, b))
    # and another seed gives other batches
    g = graphferry.Graph.from_coo(src, dst, num_nodes=300)
    loader = gfdgl.DataLoader(g, eids, sampler, batch_size=32, shuffle=True, seed=6, num_threads=1)
    first = next(iter(loader))
    assert not torch.equal(first[1].edata[dgl.EID], runs[0][0][2])
    loader.close()
    g.close()


def hetero_data(seed: int = 0) -> HeteroData:
    gen = torch.Generator().manual_seed(seed)
    data = HeteroData()
    data["author"].num_nodes = 40
    data["paper"].num_nodes = 70
    data["author", "writes", "paper"].edge_index = torch.stack(
        [torch.randint(0, 40, (300,), generator=gen), torch.randint(0, 70, (300,), generator=gen)]
    )
    data["paper", "cites", "paper"].edge_index = torch.randint(0, 70, (2, 400), generator=gen)
    data["paper", "rev_writes", "author"].edge_index = data["author", "writes", "paper"].edge_index.flip(0)
    return data


def pyg_epoch(data, threads, **kw):
    loader = gfpyg.LinkNeighborLoader(data, [3, 2], batch_size=40, shuffle=True, seed=3, num_threads=threads, **kw)
    out = []
    for batch in loader:
        if isinstance(batch, HeteroData):
            fields = [batch[nt].n_id for nt in batch.node_types]
            fields += [batch[et].e_id for et in batch.edge_types if "e_id" in batch[et]]
            store = batch[kw["edge_label_index"][0]]
            fields += [store.input_id, store.edge_label_index, store.edge_label]
        else:
            fields = [batch.n_id, batch.e_id, batch.input_id, batch.edge_label_index, batch.edge_label]
        out.append(fields)
    loader.close()
    return out


@pytest.mark.parametrize("hetero", [False, True])
def test_pyg_link_batches_same_for_any_patch_and_thread_count(hetero):
    runs = []
    for patches, threads in ((1, 1), (3, 2)):
        if hetero:
            data = gfpyg.from_pyg(hetero_data(), num_patches=patches, partition="random", seed=2)
            kw = {"edge_label_index": (("author", "writes", "paper"), None), "neg_sampling": "binary"}
        else:
            src, dst = random_edges(200, 2000, 4)
            data = graphferry.Graph.from_coo(src, dst, num_nodes=200, num_patches=patches, partition="random")
            kw = {"edge_label_index": torch.stack(random_edges(200, 300, 5)), "neg_sampling": "binary"}
        runs.append(pyg_epoch(data, threads, **kw))
        data.close()
    assert len(runs[0]) > 1
    for a, b in zip(*runs):
        assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_hetero_negatives_come_from_the_engine_streams():
    """The heterogeneous link loaders' negatives are the engine's: the same
    under a seed whatever the threads, other under another seed, and of the
    right types (DGL: the destination type per edge type; PyG: the pair
    type's source and destination types)."""
    data = hetero_data(1)

    def negatives(seed, threads):
        loader = gfpyg.LinkNeighborLoader(
            data,
            [2],
            edge_label_index=("author", "writes", "paper"),
            neg_sampling=("triplet", 2),
            batch_size=50,
            seed=seed,
            num_threads=threads,
        )
        out = [batch["paper"].n_id[batch["paper"].dst_neg_index] for batch in loader]
        loader.close()
        return torch.cat([x.flatten() for x in out])

    a, b, c = negatives(7, 1), negatives(7, 2), negatives(8, 1)
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert bool(((a >= 0) & (a < 70)).all()) and a.unique().numel() > 30, "papers, all over the type"


# ---------------------------------------------------------------------------
# No sampling on the training thread


@pytest.fixture(scope="module")
def big_graph():
    src, dst = random_edges(20_000, 300_000, 11)
    g = graphferry.Graph.from_coo(src, dst, num_nodes=20_000)
    yield g
    g.close()


def _check_prefetched(loader) -> None:
    """Once the consumer holds its first batch and asks for nothing, the
    engine makes the next ones (its loader stage counts them): the batches
    are made ahead of the consumer. (How much waiting that saves is
    measured in bench/, not asserted here.)"""
    it = iter(loader)
    next(it)
    assert wait_made_ahead(loader, batches=3, timeout=60) >= 3  # 1 taken, 2 queued (capacity 2)
    loader.close()


def test_dgl_edge_loader_prefetches(big_graph):
    sampler = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([15, 10]), exclude="self", negative_sampler=NS.Uniform(4)
    )
    eids = torch.arange(0, 300_000, 97)
    loader = gfdgl.DataLoader(big_graph, eids, sampler, batch_size=512, shuffle=True, seed=1, num_threads=1)
    _check_prefetched(loader)


def test_pyg_link_loader_prefetches(big_graph):
    pairs = torch.stack(random_edges(20_000, 10_000, 12))
    loader = gfpyg.LinkNeighborLoader(
        big_graph, [15, 10], edge_label_index=pairs, neg_sampling="binary", batch_size=512, seed=1, num_threads=1
    )
    _check_prefetched(loader)


# ---------------------------------------------------------------------------
# Edge data gathered by the engine


def test_dgl_prefetch_edge_feats_from_the_engine():
    src, dst = random_edges(100, 1500, 3)
    w = torch.randn(1500, 3)
    eids = torch.arange(0, 1500, 5)
    # A graphferry.Graph has no lazy frames: its blocks' edata can only come
    # from the engine's gather.
    g = graphferry.Graph.from_coo(src, dst, num_nodes=100)
    g.set_edge_data("w", w)
    sampler = gfdgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([5, 5], prefetch_edge_feats=["w"]), negative_sampler=NS.Uniform(1)
    )
    loader = gfdgl.DataLoader(g, eids, sampler, batch_size=64, seed=0)
    n = 0
    for _, _, _, blocks in loader:
        for b in blocks:
            assert torch.equal(b.edata["w"], w[b.edata[dgl.EID]])
            n += b.num_edges()
    assert n > 0
    loader.close()
    # A DGLGraph's edata: handed to the engine, gathered there, and the
    # values served are the graph's, also after the column is replaced.
    dg = dgl.graph((src, dst), num_nodes=100)
    dg.edata["w"] = w
    loader = gfdgl.DataLoader(dg, eids, sampler, batch_size=64, seed=0)
    assert loader._edges.edge_feature_names == ["w"]
    for _, _, _, blocks in loader:
        for b in blocks:
            assert torch.equal(b.edata["w"], w[b.edata[dgl.EID]])
    dg.edata["w"] = w * 2
    for _, _, _, blocks in loader:
        for b in blocks:
            assert torch.equal(b.edata["w"], 2 * w[b.edata[dgl.EID]])
    loader.close()
    g.close()


def test_pyg_edge_attr_from_the_engine():
    src, dst = random_edges(100, 1500, 6)
    data = Data(x=torch.randn(100, 4), edge_index=torch.stack([src, dst]), edge_attr=torch.randn(1500, 2))
    data.edge_weight = torch.rand(1500)
    loader = gfpyg.LinkNeighborLoader(data, [4, 3], neg_sampling="binary", batch_size=100, seed=1)
    assert sorted(loader._edge_attrs) == ["edge_attr", "edge_weight"]
    for batch in loader:
        assert torch.equal(batch.edge_attr, data.edge_attr[batch.e_id])
        assert torch.equal(batch.edge_weight, data.edge_weight[batch.e_id])
        assert torch.equal(batch.x, data.x[batch.n_id])
    data.edge_attr = data.edge_attr + 1  # replaced: the batches serve the new values
    batch = next(iter(loader))
    assert torch.equal(batch.edge_attr, data.edge_attr[batch.e_id])
    loader.close()


# ---------------------------------------------------------------------------
# Statistics, errors


def test_edge_loader_statistics():
    src, dst = random_edges(100, 1000, 8)
    g = dgl.graph((src, dst), num_nodes=100)
    sampler = gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([3]), negative_sampler=NS.Uniform(1))
    loader = gfdgl.DataLoader(g, torch.arange(500), sampler, batch_size=50, seed=0)
    n = sum(1 for _ in loader)
    stats = loader.stats()
    assert n == len(loader) == 10
    assert stats.current.consumer.batches == 10 and stats.current.sampler.batches >= 10
    loader.close()
    pyg_loader = gfpyg.LinkNeighborLoader(
        Data(edge_index=torch.stack([src, dst]), num_nodes=100), [3], batch_size=100, seed=0
    )
    assert sum(1 for _ in pyg_loader) == len(pyg_loader) == 10
    assert pyg_loader.stats().current.consumer.batches == 10
    pyg_loader.close()


# ---------------------------------------------------------------------------
# A graph's edges in one call


def test_graph_edges():
    src, dst = random_edges(50, 400, 2)
    for patches in (1, 3):
        with graphferry.Graph.from_coo(src, dst, num_nodes=50, num_patches=patches, partition="random") as g:
            s, d, e = g.edges()
            assert torch.equal(s, src) and torch.equal(d, dst) and torch.equal(e, torch.arange(400))
            indptr, indices, eids = g.edges("csc")
            assert torch.equal(indptr[1:] - indptr[:-1], torch.bincount(dst, minlength=50))
            targets = torch.repeat_interleave(torch.arange(50), indptr[1:] - indptr[:-1])
            assert torch.equal(src[eids], indices) and torch.equal(dst[eids], targets)
            with pytest.raises(ValueError, match="layout"):
                g.edges("csr")
            with pytest.raises(graphferry.InvalidArgumentError, match="not typed"):
                g.edges(relation=0)
    data = hetero_data(3)
    with gfpyg.from_pyg(data, num_patches=2) as hg:
        for et in data.edge_types:
            s, d = hg.edges(et)
            assert torch.equal(torch.stack([s, d]), data[et].edge_index)
        with pytest.raises(graphferry.InvalidArgumentError, match="out of range"):
            hg.graph.edges(relation=7)

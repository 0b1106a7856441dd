"""Issue 33's PyG items, each against PyG's documented behaviour: where PyG
runs here (torch_geometric 2.5.3 without pyg-lib or torch-sparse) its own
output or exception is the reference; where it needs pyg-lib or
torch-sparse, the expected output from PyG's tests and source is stated.

* zero hops (``num_neighbors=[]``): the seeds (or seed pairs) alone;
* a ``(src, dst)`` seed edge type naming no stored type is ``(src, 'to', dst)``;
* PyG's error wording its users' tests match on;
* temporal sampling over a ``(FeatureStore, GraphStore)`` pair, and a typed
  GraphStore in ``LinkNeighborLoader``;
* ``graphferry.pyg.Sampler`` in PyG's ``NodeLoader`` with spawned workers
  (and a clear refusal in forked ones);
* ``RandomNodeLoader`` (batch for batch PyG's) and ``HGTLoader``.
"""

from __future__ import annotations

import copy
import inspect

import contract_kinds as ck
import pytest
import torch

pytest.importorskip("torch_geometric")
import torch_geometric.loader as pyg_loader  # noqa: E402
from torch_geometric.data import Data, HeteroData  # noqa: E402
from torch_geometric.testing.feature_store import MyFeatureStore  # noqa: E402
from torch_geometric.testing.graph_store import MyGraphStore  # noqa: E402

import graphferry  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402


def random_edges(num_src: int, num_dst: int, num: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randint(0, num_src, (num,), generator=g), torch.randint(0, num_dst, (num,), generator=g)])


# ---------------------------------------------------------------------------
# Zero hops


def test_zero_hops_homogeneous_batches_are_the_seeds_alone():
    # PyG (pyg-lib's neighbor_sample with no hop): node = the seeds, no edge,
    # num_sampled_nodes = [batch size], num_sampled_edges = [].
    data = ck.pyg_data()
    seeds = torch.arange(0, 100, 3)
    for kw in ({}, {"disjoint": True}, {"time_attr": "time"}):
        batches = list(gfpyg.NeighborLoader(data, [], input_nodes=seeds, batch_size=8, **kw))
        assert torch.equal(torch.cat([b.n_id for b in batches]), seeds)
        for b in batches:
            assert b.edge_index.size(1) == 0 and b.e_id.numel() == 0
            assert b.num_sampled_nodes == [b.batch_size] and b.num_sampled_edges == []
            assert torch.equal(b.x, data.x[b.n_id])
            if kw:  # disjoint (temporal is): every seed its own subgraph
                assert torch.equal(b.batch, torch.arange(b.batch_size))
    # PyG's own NodeLoader with graphferry's sampler
    loader = pyg_loader.NodeLoader(data, node_sampler=gfpyg.Sampler(data, []), input_nodes=seeds, batch_size=8)
    assert torch.equal(torch.cat([b.n_id for b in loader]), seeds)


def test_zero_hops_heterogeneous():
    data = ck.pyg_hetero()
    batch = next(iter(gfpyg.NeighborLoader(data, [], input_nodes=("paper", torch.arange(10)), batch_size=5)))
    assert torch.equal(batch["paper"].n_id, torch.arange(5)) and batch["author"].n_id.numel() == 0
    assert all(batch[et].edge_index.size(1) == 0 for et in data.edge_types)
    assert batch["paper"].num_sampled_nodes == [5]


def test_zero_hops_link_loader_without_edges():
    # PyG's test_homo_link_neighbor_loader_no_edges (needs pyg-lib there)
    loader = gfpyg.LinkNeighborLoader(
        Data(num_nodes=100), num_neighbors=[], batch_size=20, edge_label_index=random_edges(100, 100, 100)
    )
    for batch in loader:
        assert isinstance(batch, Data)
        assert batch.input_id.numel() == 20
        assert batch.edge_label_index.size(1) == 20
        assert batch.num_nodes == batch.edge_label_index.unique().numel()


def test_src_dst_edge_type_naming_no_stored_type_is_src_to_dst():
    # PyG's test_hetero_link_neighbor_loader_no_edges: ('paper', 'paper') in a
    # HeteroData of node types only is ('paper', 'to', 'paper'), as
    # HeteroData._to_canonical maps it.
    x = torch.randn(100, 4)
    loader = gfpyg.LinkNeighborLoader(
        HeteroData(paper={"x": x}),
        num_neighbors=[],
        edge_label_index=(("paper", "paper"), random_edges(100, 100, 100)),
        batch_size=20,
    )
    for batch in loader:
        assert isinstance(batch, HeteroData)
        assert batch["paper", "paper"].input_id.numel() == 20
        assert batch["paper", "paper"].edge_label_index.size(1) == 20
        assert batch["paper"].num_nodes == batch["paper", "paper"].edge_label_index.unique().numel()
        assert torch.equal(batch["paper"].x, x[batch["paper"].n_id])
    # a stored type between the two is still the one it names
    data = ck.pyg_hetero()
    a = gfpyg.LinkNeighborLoader(data, [2], edge_label_index=(("paper", "paper"), None), batch_size=64, seed=1)
    assert a.input_type == ("paper", "cites", "paper")


def test_zero_hops_need_the_new_node_frontier():
    # DGL's blocks (frontier "all") want one block per layer: refused by name
    g = graphferry.Graph.from_coo(torch.tensor([0, 1]), torch.tensor([1, 2]), num_nodes=3)
    with pytest.raises(graphferry.GraphferryError, match="GF_FRONTIER_NEW"):
        graphferry.sample_neighbors(g, torch.tensor([0]), [])
    sub = graphferry.sample_neighbors(g, torch.tensor([2, 0]), [], frontier="new")
    assert torch.equal(sub.nodes, torch.tensor([2, 0])) and sub.blocks == []


# ---------------------------------------------------------------------------
# PyG's wording


def test_unequal_hops_across_edge_types_in_pyg_words():
    # PyG 2.9's test_neighbor_loader matches "hops must be the same across all"
    data = ck.pyg_hetero()
    fanouts = {et: [1] * (2 if i else 1) for i, et in enumerate(data.edge_types)}
    with pytest.raises(ValueError, match="hops must be the same across all"):
        gfpyg.NeighborLoader(data, fanouts, input_nodes="paper")


def test_temporal_link_loader_without_edge_label_time_in_pyg_words():
    data = ck.pyg_hetero()
    data["paper"].time = torch.arange(data["paper"].num_nodes)
    kw = {"num_neighbors": [-1, -1], "edge_label_index": ("paper", "paper"), "batch_size": 32, "time_attr": "time"}
    with pytest.raises(ValueError) as ours:
        gfpyg.LinkNeighborLoader(data, **kw)
    with pytest.raises(ValueError) as theirs:  # PyG checks this before sampling: it runs here
        pyg_loader.LinkNeighborLoader(data, **kw)
    assert str(ours.value).startswith(str(theirs.value).rstrip("."))
    assert "'edge_label_time' is not set" in str(ours.value)


# ---------------------------------------------------------------------------
# Stores


def homogeneous_stores(data: Data) -> tuple:
    fs, gs = MyFeatureStore(), MyGraphStore()
    fs.put_tensor(data.x, group_name=None, attr_name="x", index=None)
    fs.put_tensor(data.time, group_name=None, attr_name="time", index=None)
    gs.put_edge_index(data.edge_index, edge_type=None, layout="coo", size=(data.num_nodes, data.num_nodes))
    return fs, gs


def typed_stores(data: Data) -> tuple[tuple, HeteroData]:
    """PyG's test_temporal_custom_neighbor_loader_on_cora's stores: one node
    type 'v' with its times, edges sorted by source time within each
    destination; and the HeteroData holding the same."""
    fs, gs = MyFeatureStore(), MyGraphStore()
    fs.put_tensor(data.x, group_name="v", attr_name="x", index=None)
    fs.put_tensor(data.time, group_name="v", attr_name="time", index=None)
    row, col = data.edge_index
    perm = (col * (data.num_nodes + 1) + data.time[row]).argsort()
    n = data.num_nodes
    gs.put_edge_index(data.edge_index[:, perm], edge_type=("v", "to", "v"), layout="coo", is_sorted=True, size=(n, n))
    hetero = HeteroData()
    hetero["v"].x, hetero["v"].time = data.x, data.time
    hetero["v", "to", "v"].edge_index = data.edge_index[:, perm]
    return (fs, gs), hetero


def test_temporal_sampling_over_stores_equals_over_the_data():
    data = ck.pyg_data()
    seeds = torch.arange(0, 300, 7)
    kw = {"input_nodes": seeds, "time_attr": "time", "batch_size": 16, "seed": 4}
    ours = list(gfpyg.NeighborLoader(homogeneous_stores(data), [3, 2], **kw))
    ref = list(gfpyg.NeighborLoader(data, [3, 2], **kw))
    assert len(ours) == len(ref) == 3
    for a, b in zip(ours, ref):
        assert torch.equal(a.n_id, b.n_id) and torch.equal(a.batch, b.batch) and torch.equal(a.x, b.x)
        assert torch.all(data.time[a.n_id] <= data.time[a.n_id[:16]][a.batch])  # never later than its seed
    # PyG's own NodeLoader over the stores with graphferry's sampler
    sampler = gfpyg.Sampler(homogeneous_stores(data), [3, 2], time_attr="time", seed=4)
    batch = next(iter(pyg_loader.NodeLoader(homogeneous_stores(data), node_sampler=sampler, input_nodes=seeds)))
    assert torch.all(batch.time <= batch.time[batch.batch])


def test_temporal_typed_stores_as_pyg_test_on_cora():
    # PyG's test_temporal_custom_neighbor_loader_on_cora: the loader over the
    # HeteroData and over the stores give the same times (all neighbours)
    data = ck.pyg_data()
    stores, hetero = typed_stores(data)
    kw = {"num_neighbors": [-1, -1], "input_nodes": "v", "time_attr": "time", "batch_size": 128}
    for b1, b2 in zip(gfpyg.NeighborLoader(hetero, **kw), gfpyg.NeighborLoader(stores, **kw)):
        assert torch.equal(b1["v"].time, b2["v"].time)
        seed_time = b2["v"].time[: b2["v"].batch_size]
        assert torch.all(b2["v"].time <= seed_time[b2["v"].batch])


def test_link_loader_over_typed_stores():
    data = ck.pyg_data()
    stores, hetero = typed_stores(data)
    pairs = hetero["v", "to", "v"].edge_index[:, :100]
    kw = {"edge_label_index": (("v", "to", "v"), pairs), "batch_size": 20, "seed": 2}
    for neg in ({"neg_sampling_ratio": 1.0}, {"edge_label_time": data.time[pairs[1]] + 3, "time_attr": "time"}):
        ours = list(gfpyg.LinkNeighborLoader(stores, [2, 2], **kw, **neg))
        ref = list(gfpyg.LinkNeighborLoader(hetero, [2, 2], **kw, **neg))
        assert len(ours) == len(ref) == 5
        for a, b in zip(ours, ref):
            et = ("v", "to", "v")
            assert torch.equal(a["v"].n_id, b["v"].n_id) and torch.equal(a["v"].x, b["v"].x)
            assert torch.equal(a[et].edge_index, b[et].edge_index)
            assert torch.equal(a[et].edge_label_index, b[et].edge_label_index)
            # e_id in the GraphStore's edge order
            edges = hetero[et].edge_index[:, a[et].e_id]
            assert torch.equal(a["v"].n_id[a[et].edge_index], edges)


# ---------------------------------------------------------------------------
# graphferry's Sampler in PyG's loaders with worker processes


def test_sampler_in_spawned_workers():
    data = ck.pyg_data()
    seeds = torch.arange(64)
    loader = pyg_loader.NodeLoader(
        data,
        node_sampler=gfpyg.Sampler(data, [3, 2], seed=1),
        input_nodes=seeds,
        batch_size=16,
        num_workers=2,
        multiprocessing_context="spawn",
    )
    for _ in range(2):
        batches = list(loader)
        assert torch.equal(torch.cat([b.n_id[: b.batch_size] for b in batches]), seeds)
        for b in batches:
            assert torch.equal(b.x, data.x[b.n_id])
            assert torch.equal(b.n_id[b.edge_index], data.edge_index[:, b.e_id])  # real edges, local ids


def test_sampler_in_forked_workers_says_spawn():
    data = ck.pyg_data()
    loader = pyg_loader.NodeLoader(
        data,
        node_sampler=gfpyg.Sampler(data, [3, 2]),
        input_nodes=torch.arange(32),
        batch_size=16,
        num_workers=1,
        multiprocessing_context="fork",
    )
    with pytest.raises(Exception, match="multiprocessing_context='spawn'"):
        list(loader)


# ---------------------------------------------------------------------------
# RandomNodeLoader and HGTLoader


def equal_stores(a, b) -> None:
    stores_a, stores_b = (a.stores, b.stores) if isinstance(a, HeteroData) else ([a], [b])
    for x, y in zip(stores_a, stores_b):
        assert set(x.keys()) == set(y.keys())
        for key in x.keys():
            assert torch.equal(torch.as_tensor(x[key]), torch.as_tensor(y[key])), key


@pytest.mark.parametrize("hetero", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_random_node_loader_is_pygs(hetero, shuffle):
    # PyG's RandomNodeLoader runs here: the same batches, node for node and
    # edge for edge, under the same torch seed
    data = ck.pyg_hetero() if hetero else ck.pyg_data()
    if hetero:
        data["paper", "cites", "paper"].edge_attr = torch.randn(data["paper", "cites", "paper"].num_edges, 2)
    else:
        data.edge_attr = torch.randn(data.num_edges, 3)
    torch.manual_seed(3)
    ref = [list(pyg_loader.RandomNodeLoader(data, num_parts=7, shuffle=shuffle)) for _ in range(2)]
    torch.manual_seed(3)
    loader = gfpyg.RandomNodeLoader(data, num_parts=7, shuffle=shuffle)
    assert isinstance(loader, pyg_loader.RandomNodeLoader) and len(loader) == 7
    ours = [list(loader) for _ in range(2)]
    for r, o in zip(ref, ours):
        assert len(r) == len(o) == 7
        for a, b in zip(r, o):
            equal_stores(a, b)


def hgt_edges_are_induced(data: HeteroData, batch: HeteroData) -> None:
    """Every edge of ``data`` among the batch's nodes, once, with its id."""
    for et in data.edge_types:
        src, _, dst = et
        ei = data[et].edge_index
        in_src = torch.zeros(data[src].num_nodes, dtype=torch.bool)
        in_src[batch[src].n_id] = True
        in_dst = torch.zeros(data[dst].num_nodes, dtype=torch.bool)
        in_dst[batch[dst].n_id] = True
        want = torch.nonzero(in_src[ei[0]] & in_dst[ei[1]]).view(-1)
        got = batch[et].e_id if "e_id" in batch[et] else torch.empty(0, dtype=torch.int64)
        assert torch.equal(got.sort().values, want)
        if want.numel():
            local = batch[et].edge_index
            assert torch.equal(torch.stack([batch[src].n_id[local[0]], batch[dst].n_id[local[1]]]), ei[:, got])
            assert torch.all(local[1][1:] >= local[1][:-1]), "grouped by destination in node order"


def test_hgt_loader_batches_as_pyg_documents():
    # PyG's HGTLoader needs torch-sparse (hgt_sample): expected from its
    # docs and source: the first batch_size nodes of the input type are the
    # seeds; at most sum(num_samples[t]) further nodes of each type t; the
    # subgraph induced by the sampled nodes; node attributes indexed by
    # n_id, edge attributes by e_id; input_id and batch_size.
    data = ck.pyg_hetero()
    data["paper", "cites", "paper"].edge_attr = torch.randn(data["paper", "cites", "paper"].num_edges, 2)
    with pytest.raises(NotImplementedError, match="does not support a data object of type"):
        gfpyg.HGTLoader(ck.pyg_data(), num_samples=[4], input_nodes=None)  # PyG's HGTSampler's words
    seeds = torch.arange(0, 600, 2)
    for num_samples in ([64, 32], {"paper": [64, 32], "author": [16, 8]}):
        loader = gfpyg.HGTLoader(data, num_samples=num_samples, input_nodes=("paper", seeds), batch_size=50, seed=3)
        assert len(loader) == 6
        batches = list(loader)
        for i, b in enumerate(batches):
            assert torch.equal(b["paper"].n_id[:50], seeds[50 * i : 50 * (i + 1)])
            assert torch.equal(b["paper"].input_id, torch.arange(50 * i, 50 * (i + 1)))
            assert b["paper"].batch_size == 50
            budget = {nt: sum(v) for nt, v in (num_samples if isinstance(num_samples, dict) else {}).items()}
            assert b["paper"].num_nodes <= 50 + budget.get("paper", 96)
            assert b["author"].num_nodes <= budget.get("author", 96)
            for nt in data.node_types:
                assert b[nt].n_id.unique().numel() == b[nt].n_id.numel()
                assert torch.equal(b[nt].x, data[nt].x[b[nt].n_id])
                assert "num_sampled_nodes" not in b[nt]
            hgt_edges_are_induced(data, b)
            et = ("paper", "cites", "paper")
            assert torch.equal(b[et].edge_attr, data[et].edge_attr[b[et].e_id])
    with pytest.raises(ValueError, match="Number of hops must be the same across all node types"):
        gfpyg.HGTLoader(data, num_samples={"paper": [4, 4], "author": [4]}, input_nodes="paper")


def test_hgt_loader_is_seeded_and_draws_by_budget():
    data = ck.pyg_hetero()
    kw = {"num_samples": [32], "input_nodes": ("paper", torch.arange(200)), "batch_size": 40}
    a = [b["author"].n_id for b in gfpyg.HGTLoader(data, seed=5, **kw)]
    b = [b["author"].n_id for b in gfpyg.HGTLoader(data, seed=5, **kw)]
    c = [b["author"].n_id for b in gfpyg.HGTLoader(data, seed=6, **kw)]
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, y) for x, y in zip(a, c))
    # one hop draws authors among the seeds' in-neighbours only (the budget's)
    writes = data["author", "writes", "paper"].edge_index
    for i, authors in enumerate(a):
        seeds = torch.arange(40 * i, 40 * (i + 1))
        neighbours = writes[0, torch.isin(writes[1], seeds)].unique()
        assert torch.isin(authors, neighbours).all()
        assert authors.numel() == min(32, neighbours.numel())


def test_new_loaders_are_one_path_engine_loaders():
    data = ck.pyg_hetero()
    loaders = [
        gfpyg.HGTLoader(data, num_samples=[8], input_nodes="paper", batch_size=512),
        gfpyg.RandomNodeLoader(copy.copy(data), num_parts=4),
    ]
    for loader in loaders:
        assert isinstance(loader, graphferry._loader.EngineLoader)
        next(iter(loader))
        assert loader.stats().current.consumer.batches >= 1
        loader.close()


@pytest.mark.parametrize("name", ["HGTLoader", "RandomNodeLoader"])
def test_new_loaders_take_every_argument_of_pygs_at_its_default(name):
    # An unchanged script runs: every keyword of PyG's own loader, and of
    # torch's DataLoader (its **kwargs), at its default.
    theirs = getattr(pyg_loader, name)
    fixed = {"HGTLoader": {"num_samples": [4], "input_nodes": "paper"}, "RandomNodeLoader": {"num_parts": 3}}[name]
    set_by_pyg = {"HGTLoader": (), "RandomNodeLoader": ("batch_size",)}[name]  # PyG's own refuses it too
    kw = {}
    for cls in (theirs, torch.utils.data.DataLoader):
        for k, p in inspect.signature(cls.__init__).parameters.items():
            skip = ("self", "data", "dataset", "kwargs", *fixed, *set_by_pyg)
            if k in skip or p.default is inspect.Parameter.empty:
                continue
            kw.setdefault(k, p.default)
    loader = getattr(gfpyg, name)(ck.pyg_hetero(), **fixed, **kw)
    assert len(list(loader)) == len(loader) > 0
    loader.close()

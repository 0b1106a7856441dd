"""graphferry.pyg.NeighborLoader over a heterogeneous (FeatureStore, GraphStore)
pair (PyG's remote-backend interface with typed edges).

The stores hold what make_hetero's HeteroData holds (PyG's own test stores,
torch_geometric.testing's MyFeatureStore and MyGraphStore): the batches must
equal those of the loader over the HeteroData itself, read their node
attributes from the FeatureStore, and equal what PyG's NodeLoader makes over
the same stores with graphferry's Sampler.
"""

from __future__ import annotations

import copy

import pytest
import torch

pytest.importorskip("torch_geometric")
from test_hetero_pyg import EDGE_TYPES, FANOUTS, check_hetero_batch, make_hetero  # noqa: E402
from torch_geometric.loader import NodeLoader  # noqa: E402

import graphferry.pyg as gfpyg  # noqa: E402
from graphferry.pyg.stores import hetero_graph_of_stores, is_hetero_stores  # noqa: E402

testing_fs = pytest.importorskip("torch_geometric.testing.feature_store")
testing_gs = pytest.importorskip("torch_geometric.testing.graph_store")


def make_stores(data, layout="coo", sizes=True):
    fs = testing_fs.MyFeatureStore()
    for nt in data.node_types:
        for key, value in data[nt].items():
            if key != "num_nodes":
                fs.put_tensor(value, group_name=nt, attr_name=key, index=None)
    gs = testing_gs.MyGraphStore()
    for et in data.edge_types:
        src, dst = data[et].edge_index
        size = (data[et[0]].num_nodes, data[et[2]].num_nodes) if sizes else None
        if layout == "coo":
            gs.put_edge_index((src, dst), edge_type=et, layout="coo", size=size)
        else:  # CSC: the store's edge i is the i-th by destination
            order = csc_order(src, dst)
            colptr = torch.zeros(data[et[2]].num_nodes + 1, dtype=torch.int64)
            torch.cumsum(torch.bincount(dst, minlength=data[et[2]].num_nodes), 0, out=colptr[1:])
            gs.put_edge_index((src[order], colptr), edge_type=et, layout="csc", size=size)
    return fs, gs


def csc_order(src, dst):
    return torch.argsort(dst * (int(src.max()) + 1 if src.numel() else 1) + src)


@pytest.fixture(scope="module")
def data():
    return make_hetero()


def test_hetero_graph_of_stores_types_and_counts(data):
    stores = make_stores(data)
    assert is_hetero_stores(stores)
    hg, perms = hetero_graph_of_stores(stores)
    assert hg.node_types == data.node_types  # the FeatureStore's groups, then institution (edges only)
    assert [tuple(et) for et in hg.edge_types] == EDGE_TYPES
    for nt in data.node_types:
        assert hg.num_nodes(nt) == data[nt].num_nodes
    assert all(p is None for p in perms.values())
    # without sizes, counts come from the FeatureStore's rows, else the largest id
    hg2, _ = hetero_graph_of_stores(make_stores(data, sizes=False))
    assert hg2.num_nodes("paper") == data["paper"].num_nodes
    largest = int(data[("author", "affiliated_with", "institution")].edge_index[1].max())
    assert hg2.num_nodes("institution") == largest + 1


def test_loader_over_stores_equals_loader_over_hetero_data(data):
    stores = make_stores(data)
    kw = dict(input_nodes=("paper", torch.arange(40)), batch_size=10, seed=3)
    ours = list(gfpyg.NeighborLoader(stores, FANOUTS, **kw))
    ref = list(gfpyg.NeighborLoader(data, FANOUTS, **kw))
    assert len(ours) == len(ref) == 4
    plain = copy.copy(data)  # PyG reads no edge attributes from stores ("TODO support edge attributes")
    del plain[("paper", "cites", "paper")].edge_attr
    for a, b in zip(ours, ref):
        assert "edge_attr" not in a[("paper", "cites", "paper")]
        check_hetero_batch(plain, a, "paper", fanouts=FANOUTS)
        for nt in data.node_types:
            assert torch.equal(a[nt].n_id, b[nt].n_id)
            for key in ("x", "y"):
                if key in data[nt]:
                    assert torch.equal(a[nt][key], data[nt][key][a[nt].n_id])  # read from the FeatureStore
        for et in data.edge_types:
            assert torch.equal(torch.as_tensor(a[et].edge_index), torch.as_tensor(b[et].edge_index))
            assert torch.equal(a[et].e_id, b[et].e_id)
        assert torch.equal(a["paper"].input_id, b["paper"].input_id)
        assert a["paper"].batch_size == b["paper"].batch_size


def test_loader_over_csc_stores_names_edges_in_the_store_order(data):
    # A CSC GraphStore: e_id is the edge's position in the store (by
    # destination), through PyG's permutation when its coo() gives one.
    stores = make_stores(data, layout="csc")
    loader = gfpyg.NeighborLoader(stores, FANOUTS, input_nodes=("paper", None), batch_size=16, seed=5)
    for batch in loader:
        for et in data.edge_types:
            ei, e_id = torch.as_tensor(batch[et].edge_index), batch[et].e_id
            src_t, _, dst_t = et
            got = torch.stack([batch[src_t].n_id[ei[0]], batch[dst_t].n_id[ei[1]]])
            stored = data[et].edge_index[:, csc_order(*data[et].edge_index)]
            assert torch.equal(stored[:, e_id], got), et  # e_id names the store's edge


def test_loader_over_stores_equals_pyg_nodeloader_with_our_sampler(data):
    stores = make_stores(data)
    hg, _ = hetero_graph_of_stores(stores)
    seeds = ("paper", torch.arange(data["paper"].num_nodes))
    ours = gfpyg.NeighborLoader(stores, FANOUTS, input_nodes=seeds, seed=11)
    theirs = NodeLoader(stores, node_sampler=gfpyg.Sampler(hg, FANOUTS, seed=11), input_nodes=seeds)
    a, b = ours([2, 8, 31]), theirs([2, 8, 31])
    for nt in data.node_types:
        assert torch.equal(a[nt].n_id, b[nt].n_id)
        for key in ("x", "y"):
            if key in data[nt]:
                assert torch.equal(a[nt][key], b[nt][key])
    for et in data.edge_types:
        assert torch.equal(torch.as_tensor(a[et].edge_index), torch.as_tensor(b[et].edge_index))
        assert torch.equal(a[et].e_id, b[et].e_id)
    assert torch.equal(a["paper"].input_id, b["paper"].input_id)


def test_hetero_stores_errors(data):
    fs, gs = make_stores(data)
    with pytest.raises(ValueError, match="weight_attr"):
        gfpyg.NeighborLoader((fs, gs), FANOUTS, input_nodes=("paper", None), weight_attr="w")
    with pytest.raises(ValueError, match="time_attr"):
        gfpyg.NeighborLoader((fs, gs), FANOUTS, input_nodes=("paper", None), time_attr="t")
    bad = testing_gs.MyGraphStore()
    et = ("author", "writes", "paper")
    src, dst = data[et].edge_index
    bad.put_edge_index((src, dst), edge_type=et, layout="coo", size=(3, data["paper"].num_nodes))  # too few authors
    with pytest.raises(ValueError):
        gfpyg.NeighborLoader((fs, bad), FANOUTS, input_nodes=("paper", None))


def test_our_sampler_over_the_stores_in_pyg_nodeloader(data):
    # graphferry.pyg.Sampler given the stores themselves, inside PyG's NodeLoader
    stores = make_stores(data, layout="csc")
    seeds = ("paper", torch.arange(data["paper"].num_nodes))
    sampler = gfpyg.Sampler(stores, FANOUTS, seed=11)
    assert isinstance(sampler.edge_permutation, dict)
    theirs = NodeLoader(stores, node_sampler=sampler, input_nodes=seeds)
    ours = gfpyg.NeighborLoader(stores, FANOUTS, input_nodes=seeds, seed=11)
    a, b = ours([2, 8, 31]), theirs([2, 8, 31])
    for nt in data.node_types:
        assert torch.equal(a[nt].n_id, b[nt].n_id)
    for et in data.edge_types:
        assert torch.equal(torch.as_tensor(a[et].edge_index), torch.as_tensor(b[et].edge_index))
        assert torch.equal(a[et].e_id, b[et].e_id)
    # Temporal sampling over stores is taken now (issue 33, test_pyg_round3): a time the FeatureStore
    # does not hold is a ValueError, as PyG's ("did not find any temporal data")
    with pytest.raises(ValueError, match="the FeatureStore holds no tensor 't'"):
        gfpyg.Sampler(stores, FANOUTS, time_attr="t")

"""graphferry.pyg beside PyG's own behaviour: loader(index), NumPy and
memory-mapped attributes, refused inputs, subgraph_type, disjoint, and the
(FeatureStore, GraphStore) remote-backend interface.

PyG's own NeighborLoader cannot sample here (no pyg-lib or torch-sparse), so
the references are PyG's NodeLoader (its own filter_fn and __call__) driven by
graphferry.pyg.Sampler, and PyG's utilities (subgraph, to_undirected)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("torch_geometric")

from torch_geometric.data import Data, FeatureStore, TensorAttr  # noqa: E402
from torch_geometric.loader import NodeLoader  # noqa: E402
from torch_geometric.utils import coalesce, subgraph, to_undirected  # noqa: E402

import graphferry  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402

NUM_NODES, NUM_EDGES = 120, 700
FANOUTS = [3, 2]


def make_data(seed: int = 0) -> Data:
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, NUM_NODES, (2, NUM_EDGES), generator=g)
    x = torch.randn(NUM_NODES, 4, generator=g)
    y = torch.randint(0, 5, (NUM_NODES,), generator=g)
    edge_attr = torch.randn(NUM_EDGES, 2, generator=g)
    return Data(x=x, y=y, edge_index=edge_index, edge_attr=edge_attr, num_nodes=NUM_NODES)


def assert_same_data(a: Data, b: Data) -> None:
    """The same keys and values (tensors, lists, ints)."""
    assert sorted(a.keys()) == sorted(b.keys())
    for key in a.keys():
        va, vb = a[key], b[key]
        if isinstance(va, torch.Tensor):
            assert torch.equal(torch.as_tensor(va), torch.as_tensor(vb)), key
        else:
            assert va == vb, key


def edges_exist(data: Data, batch: Data, reversed_ok: bool = False) -> None:
    """Every edge of the batch is edge e_id of the graph (or, with
    reversed_ok, its reverse)."""
    got = batch.n_id[batch.edge_index]
    orig = data.edge_index[:, batch.e_id]
    same = (got == orig).all(0)
    if reversed_ok:
        same |= (got == orig.flip(0)).all(0)
    assert bool(same.all())


# ---------------------------------------------------------------------------
# loader(index)


@pytest.mark.parametrize("input_nodes", ["ids", "mask", "none"])
def test_call_matches_pyg_nodeloader(input_nodes):
    data = make_data()
    nodes = {
        "ids": torch.tensor([5, 17, 3, 99, 42, 8]),
        "mask": torch.arange(NUM_NODES) % 7 == 0,
        "none": None,
    }[input_nodes]
    ours = gfpyg.NeighborLoader(data, FANOUTS, input_nodes=nodes, batch_size=4, seed=11)
    theirs = NodeLoader(data, node_sampler=gfpyg.Sampler(data, FANOUTS, seed=11), input_nodes=nodes, batch_size=4)
    for index in ([0, 2, 3], torch.tensor([1, 4])):
        a, b = ours(index), theirs(index)  # the same random streams, call after call
        assert_same_data(a, b)
        index = torch.as_tensor(index)
        seeds = ours._seeds[index]
        assert torch.equal(a.n_id[: a.batch_size], seeds)
        assert a.batch_size == index.numel()
        edges_exist(data, a)
        assert torch.equal(a.x, data.x[a.n_id]) and torch.equal(a.edge_attr, data.edge_attr[a.e_id])
        assert a.num_nodes == a.n_id.numel()
    ours.close()


def test_call_on_a_graphferry_graph():
    data = make_data()
    graph = graphferry.Graph.from_pyg(data)
    loader = gfpyg.NeighborLoader(graph, FANOUTS, batch_size=4, seed=3)
    b = loader([7, 1])
    assert torch.equal(b.n_id[:2], torch.tensor([7, 1]))
    assert torch.equal(b.x, data.x[b.n_id]) and torch.equal(b.y, data.y[b.n_id])
    edges_exist(data, b)
    loader.close()
    graph.close()


# ---------------------------------------------------------------------------
# NumPy arrays and memory maps


@pytest.mark.parametrize("kind", ["array", "memmap"])
def test_numpy_attributes_indexed_per_batch(kind, tmp_path):
    data = make_data()
    values = np.arange(NUM_NODES * 3, dtype=np.float32).reshape(NUM_NODES, 3)
    if kind == "memmap":
        mm = np.memmap(tmp_path / "z.bin", dtype=np.float32, mode="w+", shape=values.shape)
        mm[:] = values
        mm.flush()
        values = np.memmap(tmp_path / "z.bin", dtype=np.float32, mode="r", shape=values.shape)
    data.z = values
    loader = gfpyg.NeighborLoader(data, FANOUTS, batch_size=8, seed=1)
    theirs = NodeLoader(data, node_sampler=gfpyg.Sampler(data, FANOUTS, seed=1), batch_size=8)
    for b in loader:
        assert b.num_nodes == b.n_id.numel()
        assert b.z.shape[0] == b.n_id.numel()
        assert np.array_equal(np.asarray(b.z), np.asarray(values)[b.n_id.numpy()])
    # the same type and values as PyG's own filter_data gives
    a, c = loader([0, 1, 2]), theirs([0, 1, 2])
    assert type(a.z) is type(c.z)
    assert_same_data(a, c)
    loader.close()


# ---------------------------------------------------------------------------
# refused inputs


def test_dict_num_neighbors_need_a_hetero_graph():
    data = make_data()
    with pytest.raises(TypeError, match="need a heterogeneous graph"):
        gfpyg.NeighborLoader(data, {("a", "to", "a"): [2, 2]})
    with pytest.raises(TypeError, match="need a heterogeneous graph"):
        gfpyg.Sampler(data, {("a", "to", "a"): [2]})


def test_x_with_wrong_rows_is_an_error():
    data = make_data()
    data.x = data.x[:-3]
    with pytest.raises(ValueError, match=r"'x' has 117 rows but the graph has 120 nodes"):
        gfpyg.NeighborLoader(data, FANOUTS)
    with pytest.raises(ValueError, match=r"'x' has 117 rows but the graph has 120 nodes"):
        gfpyg.Sampler(data, FANOUTS)


def test_bad_subgraph_type_and_disjoint_induced():
    data = make_data()
    with pytest.raises(ValueError, match="subgraph_type"):
        gfpyg.NeighborLoader(data, FANOUTS, subgraph_type="sideways")
    with pytest.raises(ValueError, match="disjoint"):
        gfpyg.NeighborLoader(data, FANOUTS, subgraph_type="induced", disjoint=True)


# ---------------------------------------------------------------------------
# subgraph_type


def test_bidirectional_is_the_directional_sample_made_undirected():
    data = make_data()
    nodes = torch.tensor([3, 9, 27, 81, 50])
    directional = gfpyg.NeighborLoader(data, FANOUTS, input_nodes=nodes, seed=4)([0, 1, 2, 3, 4])
    loader = gfpyg.NeighborLoader(data, FANOUTS, input_nodes=nodes, seed=4, subgraph_type="bidirectional")
    b = loader([0, 1, 2, 3, 4])
    assert torch.equal(b.n_id, directional.n_id)
    want = to_undirected(torch.as_tensor(directional.edge_index), num_nodes=b.num_nodes)
    got = coalesce(torch.as_tensor(b.edge_index), num_nodes=b.num_nodes)
    assert torch.equal(got, want)
    edges_exist(data, b, reversed_ok=True)
    assert set(b.e_id.tolist()) == set(directional.e_id.tolist())
    assert torch.equal(b.edge_attr, data.edge_attr[b.e_id])
    # PyG drops the per-hop counts of a bidirectional sample
    assert "num_sampled_nodes" not in b and "num_sampled_edges" not in b
    theirs = NodeLoader(
        data,
        node_sampler=gfpyg.Sampler(data, FANOUTS, seed=4, subgraph_type="bidirectional"),
        input_nodes=nodes,
    )
    assert_same_data(b, theirs([0, 1, 2, 3, 4]))


@pytest.mark.parametrize("source", ["data", "graph", "patches"])
def test_induced_matches_pyg_subgraph(source):
    data = make_data()
    graph = {
        "data": data,
        "graph": graphferry.Graph.from_pyg(data),
        "patches": graphferry.Graph.from_pyg(data, num_patches=3, partition="random", seed=2),
    }[source]
    nodes = torch.tensor([3, 9, 27, 81, 50, 64])
    loader = gfpyg.NeighborLoader(graph, FANOUTS, input_nodes=nodes, seed=5, subgraph_type="induced")
    directional = gfpyg.NeighborLoader(graph, FANOUTS, input_nodes=nodes, seed=5)
    for index in ([0, 1, 2], [3, 4, 5]):
        b, d = loader(index), directional(index)
        assert torch.equal(b.n_id, d.n_id)  # the same nodes, now with every edge among them
        edge_index, _, mask = subgraph(b.n_id, data.edge_index, relabel_nodes=True, return_edge_mask=True)
        want_ids = mask.nonzero().view(-1)
        order = torch.argsort(b.e_id)
        assert torch.equal(b.e_id[order], want_ids)
        assert torch.equal(torch.as_tensor(b.edge_index)[:, order], edge_index)
        assert "num_sampled_nodes" not in b
        assert bool((torch.as_tensor(b.edge_index)[1].diff() >= 0).all())  # targets sorted, as EdgeIndex says
    with pytest.warns(UserWarning, match="directed"):
        old = gfpyg.NeighborLoader(graph, FANOUTS, input_nodes=nodes, seed=5, directed=False)
    assert old.subgraph_type == "induced"
    for lo in (loader, directional, old):
        lo.close()
    if isinstance(graph, graphferry.Graph):
        graph.close()


def test_induced_iterates_through_the_engine():
    data = make_data()
    loader = gfpyg.NeighborLoader(data, FANOUTS, batch_size=16, seed=2, subgraph_type="induced")
    batches = list(loader)
    assert len(batches) == len(loader)
    for b in batches:
        _, _, mask = subgraph(b.n_id, data.edge_index, relabel_nodes=True, return_edge_mask=True)
        assert sorted(b.e_id.tolist()) == mask.nonzero().view(-1).tolist()
        edges_exist(data, b)
        assert torch.equal(b.x, data.x[b.n_id])
    loader.close()


# ---------------------------------------------------------------------------
# disjoint


def check_disjoint(data: Data, b: Data, seeds: torch.Tensor) -> None:
    bs = b.batch_size
    assert torch.equal(b.n_id[:bs], seeds)
    assert torch.equal(b.batch[:bs], torch.arange(bs))
    assert b.batch.numel() == b.n_id.numel()
    ei = torch.as_tensor(b.edge_index)
    assert torch.equal(b.batch[ei[0]], b.batch[ei[1]])  # no edge between two seeds' subgraphs
    edges_exist(data, b)
    assert sum(b.num_sampled_nodes) == b.n_id.numel() and sum(b.num_sampled_edges) == b.e_id.numel()
    # hop by hop, and within a hop seed by seed
    start = 0
    for count in b.num_sampled_nodes:
        assert bool((b.batch[start : start + count].diff() >= 0).all())
        start += count
    deg = torch.bincount(data.edge_index[1], minlength=NUM_NODES)
    for i in range(bs):
        mine = (b.batch == i).nonzero().view(-1)
        assert b.n_id[mine].unique().numel() == mine.numel()  # distinct within one subgraph
        # the seed has min(fanout, degree) in-edges from its own subgraph
        assert int((ei[1] == i).sum()) == min(FANOUTS[0], int(deg[seeds[i]]))
    assert bool((ei[1].diff() >= 0).all())


def test_disjoint_matches_pyg_nodeloader_fields():
    data = make_data()
    nodes = torch.tensor([5, 5, 17, 3, 99])  # a repeated seed gets two subgraphs
    loader = gfpyg.NeighborLoader(data, FANOUTS, input_nodes=nodes, seed=8, disjoint=True)
    theirs = NodeLoader(
        data, node_sampler=gfpyg.Sampler(data, FANOUTS, seed=8, disjoint=True), input_nodes=nodes, batch_size=5
    )
    b = loader([0, 1, 2, 3, 4])
    check_disjoint(data, b, nodes)
    assert torch.equal(b.x, data.x[b.n_id])
    assert_same_data(b, theirs([0, 1, 2, 3, 4]))
    # the repeated seed gets two subgraphs rooted at it, each drawn on its own (as PyG's disjoint sampling)
    assert b.n_id[b.batch == 0][0] == b.n_id[b.batch == 1][0] == 5


def test_disjoint_iterates_and_is_reproducible():
    data = make_data()
    loader = gfpyg.NeighborLoader(data, FANOUTS, batch_size=32, shuffle=True, seed=6, disjoint=True)
    first = list(loader)
    assert len(first) == len(loader) == 4
    seen = torch.cat([b.n_id[: b.batch_size] for b in first])
    assert sorted(seen.tolist()) == list(range(NUM_NODES))
    for b in first:
        check_disjoint(data, b, b.n_id[: b.batch_size])
        assert torch.equal(b.input_id, b.n_id[: b.batch_size])
    again = gfpyg.NeighborLoader(data, FANOUTS, batch_size=32, shuffle=True, seed=6, disjoint=True)
    for a, c in zip(first, again):
        assert_same_data(a, c)
    loader.close()
    again.close()


def test_disjoint_bidirectional():
    data = make_data()
    loader = gfpyg.NeighborLoader(data, FANOUTS, seed=1, disjoint=True, subgraph_type="bidirectional")
    b = loader([4, 5, 6])
    ei = torch.as_tensor(b.edge_index)
    assert torch.equal(b.batch[ei[0]], b.batch[ei[1]])
    assert torch.equal(coalesce(ei.flip(0), num_nodes=b.num_nodes), coalesce(ei, num_nodes=b.num_nodes))
    edges_exist(data, b, reversed_ok=True)


# ---------------------------------------------------------------------------
# (FeatureStore, GraphStore)


class DictFeatureStore(FeatureStore):
    """A minimal in-memory FeatureStore, after PyG's test store."""

    def __init__(self):
        super().__init__()
        self.tensors: dict[tuple, torch.Tensor] = {}

    def _put_tensor(self, tensor, attr: TensorAttr) -> bool:
        assert attr.index is None
        self.tensors[(attr.group_name, attr.attr_name)] = tensor
        return True

    def _get_tensor(self, attr: TensorAttr):
        tensor = self.tensors.get((attr.group_name, attr.attr_name))
        if tensor is None or attr.index is None:
            return tensor
        return tensor[attr.index]

    def _remove_tensor(self, attr: TensorAttr) -> bool:
        return self.tensors.pop((attr.group_name, attr.attr_name), None) is not None

    def _get_tensor_size(self, attr: TensorAttr):
        tensor = self._get_tensor(attr)
        return None if tensor is None else tensor.size()

    def get_all_tensor_attrs(self):
        return [TensorAttr(group_name=g, attr_name=a) for g, a in self.tensors]


def make_stores(data: Data):
    fs = DictFeatureStore()
    fs.put_tensor(data.x, group_name=None, attr_name="x", index=None)
    fs.put_tensor(data.y, group_name=None, attr_name="y", index=None)
    return fs


def test_graph_store_round_trip():
    data = make_data()
    gs = gfpyg.GraphStore(data)
    (attr,) = gs.get_all_edge_attrs()
    assert attr.edge_type is None and tuple(attr.size) == (NUM_NODES, NUM_NODES)
    row, col = gs.get_edge_index(edge_type=None, layout="coo")
    assert torch.equal(torch.stack([row, col]), data.edge_index)
    # PyG's own conversion of the stored COO to CSC agrees with ours
    rows, colptrs, _ = gs.csc()
    row_c, colptr = gs.get_edge_index(edge_type=None, layout="csc")
    assert torch.equal(colptr, colptrs)
    dst = torch.repeat_interleave(torch.arange(NUM_NODES), colptr.diff())
    assert sorted(zip(row_c.tolist(), dst.tolist())) == sorted(zip(rows.tolist(), dst.tolist()))
    assert sorted(zip(row_c.tolist(), dst.tolist())) == sorted(zip(*data.edge_index.tolist()))
    rowptr, col_r = gs.get_edge_index(edge_type=None, layout="csr")
    src = torch.repeat_interleave(torch.arange(NUM_NODES), rowptr.diff())
    assert sorted(zip(src.tolist(), col_r.tolist())) == sorted(zip(*data.edge_index.tolist()))
    # put replaces the graph; remove empties the store
    other = gfpyg.GraphStore()
    assert other.get_all_edge_attrs() == []
    other.put_edge_index(
        (data.edge_index[0], data.edge_index[1]), edge_type=None, layout="coo", size=(NUM_NODES, NUM_NODES)
    )
    assert other.graph.num_edges == NUM_EDGES
    assert other.remove_edge_index(edge_type=None, layout="coo")
    with pytest.raises(ValueError, match="no graph"):
        _ = other.graph
    with pytest.raises(ValueError, match="homogeneous"):
        gs.get_edge_index(edge_type=("a", "to", "b"), layout="coo")


@pytest.mark.parametrize("graph_store", ["graphferry", "pyg"])
def test_feature_store_graph_store_loader(graph_store):
    data = make_data()
    fs = make_stores(data)
    if graph_store == "graphferry":
        gs = gfpyg.GraphStore(graphferry.Graph.from_pyg(data))
    else:
        testing = pytest.importorskip("torch_geometric.testing.graph_store")
        gs = testing.MyGraphStore()
        gs.put_edge_index(
            (data.edge_index[0], data.edge_index[1]), edge_type=None, layout="coo", size=(NUM_NODES, NUM_NODES)
        )
    nodes = torch.arange(0, NUM_NODES, 3)
    loader = gfpyg.NeighborLoader((fs, gs), FANOUTS, input_nodes=nodes, batch_size=10, seed=9)
    batches = list(loader)
    assert len(batches) == len(loader) == 4
    for b in batches:
        assert torch.equal(b.x, data.x[b.n_id]) and torch.equal(b.y, data.y[b.n_id])
        assert b.num_nodes == b.n_id.numel()
        edges_exist(data, b)
        assert len(b.num_sampled_nodes) == len(FANOUTS) + 1
    # loader(index) gives what PyG's NodeLoader over the same stores gives
    sampler = gfpyg.Sampler(graphferry.Graph.from_pyg(data), FANOUTS, seed=9)
    theirs = NodeLoader((fs, gs), node_sampler=sampler, input_nodes=nodes, batch_size=10)
    assert_same_data(loader([0, 5, 7]), theirs([0, 5, 7]))
    loader.close()


def test_stores_refused():
    data = make_data()
    with pytest.raises(TypeError, match="FeatureStore"):
        gfpyg.NeighborLoader((object(), gfpyg.GraphStore(data)), FANOUTS)
    with pytest.raises(TypeError, match="GraphStore"):
        gfpyg.NeighborLoader((make_stores(data), object()), FANOUTS)

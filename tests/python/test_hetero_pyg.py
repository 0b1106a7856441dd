"""graphferry.pyg on PyG's HeteroData: from_pyg, the split of a typed sample
into PyG's per-type output, NeighborLoader batches and graphferry.pyg.Sampler
inside PyG's own NodeLoader.

PyG's own NeighborLoader cannot sample here (no pyg-lib or torch-sparse), so
the references are PyG's documented output structure (the keys and dtypes its
heterogeneous NeighborLoader gives), PyG's NodeLoader (its own filter_fn)
driven by graphferry.pyg.Sampler, and the graph's edges."""

from __future__ import annotations

import pickle

import pytest
import torch

pytest.importorskip("torch_geometric")

from torch_geometric.data import HeteroData  # noqa: E402
from torch_geometric.loader import NodeLoader  # noqa: E402
from torch_geometric.sampler import HeteroSamplerOutput, NodeSamplerInput  # noqa: E402

import graphferry  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402
from graphferry.pyg import base as pyg_base  # noqa: E402
from graphferry.pyg import hetero as _pyg_hetero  # noqa: E402

WRITES = ("author", "writes", "paper")
REV_WRITES = ("paper", "rev_writes", "author")
CITES = ("paper", "cites", "paper")
AFFILIATED = ("author", "affiliated_with", "institution")
EMPLOYS = ("institution", "employs", "author")  # no edges at all
EDGE_TYPES = [WRITES, REV_WRITES, CITES, AFFILIATED, EMPLOYS]
NUM = {"paper": 60, "author": 40, "institution": 6}
FANOUTS = {WRITES: [3, 2], REV_WRITES: [2, 1], CITES: [4, 2], AFFILIATED: [1, 1], EMPLOYS: [5, 5]}


def make_hetero(seed: int = 0) -> HeteroData:
    g = torch.Generator().manual_seed(seed)
    data = HeteroData()
    data["paper"].x = torch.randn(NUM["paper"], 8, generator=g)
    data["paper"].y = torch.randint(0, 4, (NUM["paper"],), generator=g)
    data["paper"].train_mask = torch.rand(NUM["paper"], generator=g) < 0.5
    data["author"].x = torch.randn(NUM["author"], 5, generator=g)
    data["institution"].num_nodes = NUM["institution"]
    src = torch.randint(0, NUM["author"], (150,), generator=g)
    dst = torch.randint(0, NUM["paper"], (150,), generator=g)
    data[WRITES].edge_index = torch.stack([src, dst])
    data[REV_WRITES].edge_index = torch.stack([dst, src])
    data[CITES].edge_index = torch.randint(0, NUM["paper"], (2, 200), generator=g)
    data[CITES].edge_attr = torch.randn(200, 3, generator=g)
    data[AFFILIATED].edge_index = torch.stack(
        [torch.arange(NUM["author"]), torch.randint(0, NUM["institution"], (NUM["author"],), generator=g)]
    )
    data[EMPLOYS].edge_index = torch.empty(2, 0, dtype=torch.int64)
    return data


@pytest.fixture(scope="module")
def data() -> HeteroData:
    return make_hetero()


def in_degree(data: HeteroData, et) -> torch.Tensor:
    return torch.bincount(data[et].edge_index[1], minlength=data[et[2]].num_nodes)


def check_hetero_batch(data: HeteroData, batch: HeteroData, input_type: str, seeds=None, fanouts=None, replace=False):
    """The fields and invariants of PyG's heterogeneous NeighborLoader output
    (directional, not disjoint)."""
    assert isinstance(batch, HeteroData)
    assert batch.node_types == data.node_types and batch.edge_types == data.edge_types  # every type, even empty
    bs = batch[input_type].batch_size
    assert isinstance(bs, int)
    assert batch[input_type].input_id.dtype == torch.int64 and batch[input_type].input_id.numel() == bs
    num_hops = None
    for nt in data.node_types:
        store = batch[nt]
        n_id = store.n_id
        assert n_id.dtype == torch.int64 and n_id.dim() == 1
        assert n_id.unique().numel() == n_id.numel(), f"{nt}: each node once"
        if n_id.numel():
            assert int(n_id.min()) >= 0 and int(n_id.max()) < data[nt].num_nodes
        nsn = store.num_sampled_nodes
        assert isinstance(nsn, list) and all(type(v) is int for v in nsn)
        assert sum(nsn) == n_id.numel()
        num_hops = len(nsn) - 1 if num_hops is None else num_hops
        assert len(nsn) == num_hops + 1
        assert nsn[0] == (bs if nt == input_type else 0), f"{nt}: only the input type has seeds"
        for key, value in data[nt].items():  # node attributes gathered by n_id
            if key != "num_nodes":
                assert torch.equal(store[key], value[n_id]), f"{nt}.{key}"
        assert store.num_nodes == n_id.numel()
        if nt != input_type:
            assert "input_id" not in store and "batch_size" not in store
    if seeds is not None:
        assert torch.equal(batch[input_type].n_id[:bs], seeds)
    for et in data.edge_types:
        store = batch[et]
        src_t, _, dst_t = et
        ei, e_id = torch.as_tensor(store.edge_index), store.e_id
        assert ei.dtype == e_id.dtype == torch.int64
        assert ei.shape == (2, e_id.numel())
        nse = store.num_sampled_edges
        assert isinstance(nse, list) and all(type(v) is int for v in nse) and len(nse) == num_hops
        assert sum(nse) == e_id.numel()
        if e_id.numel():
            assert int(ei[0].max()) < batch[src_t].n_id.numel() and int(ei[1].max()) < batch[dst_t].n_id.numel()
        # every edge exists, with its type: row = source, col = destination
        assert torch.equal(
            data[et].edge_index[:, e_id], torch.stack([batch[src_t].n_id[ei[0]], batch[dst_t].n_id[ei[1]]])
        )
        if "edge_attr" in data[et]:
            assert torch.equal(store.edge_attr, data[et].edge_attr[e_id])
        assert bool((ei[1].diff() >= 0).all()), "sorted by destination, as EdgeIndex(sort_order='col') says"
        if fanouts is None:
            continue
        # hop h: destinations are the dst-type nodes first reached in hop h - 1
        nsn = batch[dst_t].num_sampled_nodes
        deg = in_degree(data, et)
        start = 0
        for h, count in enumerate(nse):
            col = ei[1, start : start + count]
            lo = sum(nsn[:h])
            if count:
                assert int(col.min()) >= lo and int(col.max()) < lo + nsn[h], f"{et} hop {h}"
            got = torch.bincount(col - lo, minlength=nsn[h])
            full = deg[batch[dst_t].n_id[lo : lo + nsn[h]]]
            fan = fanouts[et][h]
            want = full.clamp(max=fan) if fan >= 0 else full
            if replace:
                assert torch.equal(got, torch.where(full > 0, torch.full_like(full, fan), full)), f"{et} hop {h}"
            else:
                assert torch.equal(got, want), f"{et} hop {h}: min(in-degree, fan-out) edges per node"
            start += count


# ---------------------------------------------------------------------------
# from_pyg


def test_from_pyg_types_and_edges(data):
    with gfpyg.from_pyg(data) as hg:
        assert hg.node_types == data.node_types == ["paper", "author", "institution"]
        assert hg.edge_types == data.edge_types == EDGE_TYPES
        assert [hg.num_nodes(nt) for nt in hg.node_types] == [60, 40, 6]
        assert [hg.num_edges(et) for et in hg.edge_types] == [150, 150, 200, 40, 0]
        # the global graph: edge j of type et is global edge edge_offsets[r] + j
        sub = graphferry.sample_neighbors(hg.graph, torch.arange(hg.num_nodes()), [-1])
        block = sub.blocks[0]
        src, dst, eid = sub.nodes[block.indices], sub.nodes[block.dst_positions()], block.edge_ids
        rel, local = hg.to_local_edge(eid)
        for r, et in enumerate(hg.edge_types):
            sel = rel == r
            got = torch.stack([src[sel], dst[sel]])[:, torch.argsort(local[sel])]
            want = data[et].edge_index.clone()
            want[0] += hg.node_offsets[hg.ntype_index(et[0])]
            want[1] += hg.node_offsets[hg.ntype_index(et[2])]
            assert torch.equal(got, want), et


def test_from_pyg_errors(data):
    with pytest.raises(TypeError, match="HeteroData"):
        gfpyg.from_pyg(object())
    bad = make_hetero()
    del bad[CITES].edge_index
    bad[CITES].adj = torch.zeros(1)
    with pytest.raises(TypeError, match="no 'edge_index'"):
        gfpyg.from_pyg(bad)
    with pytest.raises(KeyError, match="weight_attr"):
        gfpyg.from_pyg(data, weight_attr="nope")
    with pytest.raises(ValueError, match="neither a node-level nor an edge-level"):
        gfpyg.from_pyg(data, time_attr="nope")
    both = make_hetero()
    both["paper"].t = torch.zeros(NUM["paper"], dtype=torch.int64)
    both[CITES].t = torch.zeros(200, dtype=torch.int64)
    with pytest.raises(ValueError, match="both node-level and edge-level"):
        gfpyg.from_pyg(both, time_attr="t")
    floaty = make_hetero()
    floaty["paper"].t = torch.zeros(NUM["paper"])
    with pytest.raises(TypeError, match="integer timestamps"):
        gfpyg.from_pyg(floaty, time_attr="t")


# ---------------------------------------------------------------------------
# the split of a typed sample (hand-made: a sample of the global graph)


def sample_global(hg, seeds, fanouts, seed=0):
    """A PyG-frontier sample of the global graph (homogeneous fan-outs: the
    split does not care how the edges were drawn)."""
    sub = graphferry.sample_neighbors(hg.graph, seeds, fanouts, frontier="new", seed=seed)
    return pyg_base.directional(sub)


def test_split_output_by_hand():
    """A tiny typed graph where every id is known."""
    data = HeteroData()
    data["a"].num_nodes = 3
    data["b"].num_nodes = 2
    data["a", "to", "b"].edge_index = torch.tensor([[0, 1, 2], [0, 0, 1]])
    data["b", "back", "a"].edge_index = torch.tensor([[1], [2]])
    data["a", "self", "a"].edge_index = torch.empty(2, 0, dtype=torch.int64)
    with gfpyg.from_pyg(data) as hg:  # global ids: a0 a1 a2 b0 b1; edges 0-2 "to", 3 "back"
        node = torch.tensor([3, 1, 0, 4, 2])  # seeds b0, then a1 a0 b1, then a2
        row = torch.tensor([1, 2, 4, 3])  # positions in node
        col = torch.tensor([0, 0, 3, 4])
        edge = torch.tensor([1, 0, 2, 3])
        out = _pyg_hetero.split_output(hg, node, row, col, edge, batch=None, hop_counts=[1, 3, 1], edges_per_hop=[2, 2])
        assert isinstance(out, HeteroSamplerOutput)
        assert out.node["a"].tolist() == [1, 0, 2] and out.node["b"].tolist() == [0, 1]
        to, back, self_ = ("a", "to", "b"), ("b", "back", "a"), ("a", "self", "a")
        assert out.row[to].tolist() == [0, 1, 2] and out.col[to].tolist() == [0, 0, 1]
        assert out.edge[to].tolist() == [1, 0, 2]
        assert out.row[back].tolist() == [1] and out.col[back].tolist() == [2] and out.edge[back].tolist() == [0]
        assert out.row[self_].numel() == out.col[self_].numel() == out.edge[self_].numel() == 0
        assert out.num_sampled_nodes == {"a": [0, 2, 1], "b": [1, 1, 0]}
        assert out.num_sampled_edges == {to: [2, 1], back: [0, 1], self_: [0, 0]}
        assert out.batch is None


def test_split_and_batch_of_a_global_sample(data):
    with gfpyg.from_pyg(data) as hg:
        local = torch.tensor([3, 17, 42, 8])
        out = sample_global(hg, hg.to_global("paper", local), [4, 3], seed=5)
        split = pyg_base.split(hg, out, "directional")
        batch = _pyg_hetero.build_batch(data, hg, split, "paper", torch.arange(4), None)
    check_hetero_batch(data, batch, "paper", seeds=local)
    assert "seed_time" not in batch["paper"] and "batch" not in batch["paper"]
    # the same nodes and edges as the global sample, split by type
    assert sum(batch[nt].n_id.numel() for nt in data.node_types) == out.node.numel()
    assert sum(batch[et].e_id.numel() for et in data.edge_types) == out.edge.numel()


def test_batch_keys_as_pyg(data):
    """The keys PyG's heterogeneous NeighborLoader gives (PyG 2.5 and 2.8)."""
    with gfpyg.from_pyg(data) as hg:
        out = sample_global(hg, hg.to_global("paper", torch.tensor([1, 2])), [2, 2])
        batch = _pyg_hetero.build_batch(
            data, hg, pyg_base.split(hg, out, "directional"), "paper", torch.arange(2), None
        )
    assert set(batch["paper"].keys()) == {
        "x", "y", "train_mask", "n_id", "num_sampled_nodes", "input_id", "batch_size",
    }  # fmt: skip
    assert set(batch["author"].keys()) == {"x", "n_id", "num_sampled_nodes"}
    assert set(batch["institution"].keys()) == {"num_nodes", "n_id", "num_sampled_nodes"}
    assert set(batch[CITES].keys()) == {"edge_index", "edge_attr", "e_id", "num_sampled_edges"}
    for et in (WRITES, REV_WRITES, AFFILIATED, EMPLOYS):
        assert set(batch[et].keys()) == {"edge_index", "e_id", "num_sampled_edges"}, et
    assert batch[EMPLOYS].edge_index.shape == (2, 0)
    assert set(batch.x_dict) == {"paper", "author"} and set(batch.edge_index_dict) == set(EDGE_TYPES)


def test_split_of_a_hetero_graph_without_data(data):
    """A HeteroGraph (no HeteroData behind it) gives its per-type node data."""
    with gfpyg.from_pyg(data) as hg:
        hg.set_node_data("paper", "x", data["paper"].x)
        out = sample_global(hg, hg.to_global("paper", torch.tensor([0, 5])), [3])
        batch = _pyg_hetero.build_batch(hg, hg, pyg_base.split(hg, out, "directional"), "paper", torch.arange(2), None)
        assert torch.equal(batch["paper"].x, data["paper"].x[batch["paper"].n_id])
        assert batch["author"].num_nodes == batch["author"].n_id.numel()
        for et in data.edge_types:
            ei = torch.as_tensor(batch[et].edge_index)
            assert torch.equal(
                data[et].edge_index[:, batch[et].e_id],
                torch.stack([batch[et[0]].n_id[ei[0]], batch[et[2]].n_id[ei[1]]]),
            )


def test_split_bidirectional_and_induced(data):
    with gfpyg.from_pyg(data) as hg:
        out = sample_global(hg, hg.to_global("paper", torch.tensor([4, 9])), [3, 3], seed=2)
        induced = pyg_base.split(hg, out, "induced")
        bidir = pyg_base.split(hg, out, "bidirectional")
    # induced: every edge of every type among the sampled nodes
    assert induced.num_sampled_nodes is None and induced.num_sampled_edges is None
    for et in data.edge_types:
        src_nodes, dst_nodes = induced.node[et[0]], induced.node[et[2]]
        ei = data[et].edge_index
        inside = torch.isin(ei[0], src_nodes) & torch.isin(ei[1], dst_nodes)
        assert sorted(induced.edge[et].tolist()) == inside.nonzero().view(-1).tolist(), et
    # bidirectional: PyG's pairing of an edge type with its rev_ type
    assert bidir.num_sampled_nodes is None
    w = torch.stack([bidir.row[WRITES], bidir.col[WRITES]])
    r = torch.stack([bidir.row[REV_WRITES], bidir.col[REV_WRITES]])
    assert torch.equal(w.flip(0), r)


def _batches(loader) -> list:
    with loader:
        return [b for b in loader]


@pytest.mark.parametrize("kind", ["node", "link"])
def test_induced_split_by_the_engine(data, monkeypatch, kind):
    """A heterogeneous induced batch is made and split by type on the
    engine's threads (its typed view): the same batches as the induced
    edges listed by the engine and split here, PyG's way, which is what the
    loaders did before."""

    def make():
        if kind == "node":
            return gfpyg.NeighborLoader(
                data,
                num_neighbors=[3, 2],
                input_nodes="paper",
                batch_size=16,
                shuffle=True,
                seed=5,
                subgraph_type="induced",
            )
        return gfpyg.LinkNeighborLoader(
            data,
            num_neighbors=[3, 2],
            edge_label_index=(CITES, data[CITES].edge_index[:, :64]),
            batch_size=16,
            shuffle=True,
            seed=5,
            subgraph_type="induced",
            neg_sampling_ratio=1.0,
        )

    made = []
    real = pyg_base.split_typed

    def spy(*args, **kwargs):
        made.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(pyg_base, "split_typed", spy)
    engine = _batches(make())
    assert made, "the engine's typed view did not split the induced batches"
    module = gfpyg.neighbor_loader if kind == "node" else gfpyg.link_neighbor_loader
    monkeypatch.setattr(module, "COO", {**pyg_base.COO, "induced": 0})  # the engine lists nothing: split here
    made.clear()
    here = _batches(make())
    assert not made and len(engine) == len(here) > 0
    for a, b in zip(engine, here):
        for nt in data.node_types:
            assert torch.equal(a[nt].n_id, b[nt].n_id), nt
        for et in data.edge_types:
            assert torch.equal(a[et].edge_index, b[et].edge_index), et
            assert torch.equal(a[et].e_id, b[et].e_id), et
            if "edge_attr" in b[et]:
                assert torch.equal(a[et].edge_attr, b[et].edge_attr), et
        assert not hasattr(a, "num_sampled_nodes") and not hasattr(b, "num_sampled_nodes")  # none per hop, as PyG's


# ---------------------------------------------------------------------------
# argument readers


def test_fanouts_and_input_nodes(data):
    with gfpyg.from_pyg(data) as hg:
        assert _pyg_hetero.hetero_fanouts(hg, [3, 2]) == ((3,) * 5, (2,) * 5)
        assert _pyg_hetero.hetero_fanouts(hg, FANOUTS) == ((3, 2, 4, 1, 5), (2, 1, 2, 1, 5))
        by_str = {"__".join(et): v for et, v in FANOUTS.items()}
        assert _pyg_hetero.hetero_fanouts(hg, by_str) == _pyg_hetero.hetero_fanouts(hg, FANOUTS)
        from torch_geometric.sampler.base import NumNeighbors

        nn = NumNeighbors({CITES: [7, 7]}, default=[1, 0])
        assert _pyg_hetero.hetero_fanouts(hg, nn) == ((1, 1, 7, 1, 1), (0, 0, 7, 0, 0))
        with pytest.raises(ValueError, match="no number of neighbours for edge types"):
            _pyg_hetero.hetero_fanouts(hg, {CITES: [1]})
        with pytest.raises(ValueError, match="unknown edge type"):
            _pyg_hetero.hetero_fanouts(hg, {**FANOUTS, ("paper", "likes", "paper"): [1, 1]})
        with pytest.raises(ValueError, match="same number of hops"):
            _pyg_hetero.hetero_fanouts(hg, {**FANOUTS, CITES: [1]})
        t, ids, input_id = _pyg_hetero.input_nodes_of(hg, ("paper", data["paper"].train_mask))
        assert t == "paper" and torch.equal(ids, data["paper"].train_mask.nonzero().view(-1))
        assert torch.equal(input_id, ids)
        t, ids, input_id = _pyg_hetero.input_nodes_of(hg, "author")
        assert t == "author" and torch.equal(ids, torch.arange(40)) and input_id is None
        t, ids, input_id = _pyg_hetero.input_nodes_of(hg, ("author", [3, 1]))
        assert ids.tolist() == [3, 1] and input_id is None
        with pytest.raises(ValueError, match="unknown node type 'venue'"):
            _pyg_hetero.input_nodes_of(hg, ("venue", None))
        with pytest.raises(ValueError, match="needed for a heterogeneous graph"):
            _pyg_hetero.input_nodes_of(hg, None)
        with pytest.raises(ValueError, match="out of range"):
            _pyg_hetero.input_nodes_of(hg, ("institution", torch.tensor([6])))
        with pytest.raises(ValueError, match="mask of node type 'paper' has 3 entries"):
            _pyg_hetero.input_nodes_of(hg, ("paper", torch.ones(3, dtype=torch.bool)))
        with pytest.raises(TypeError, match="node type or a"):
            _pyg_hetero.input_nodes_of(hg, torch.tensor([1, 2]))


def test_homogeneous_sampler_refuses_dict_fanouts():
    from torch_geometric.data import Data

    data = Data(edge_index=torch.tensor([[0, 1], [1, 0]]), num_nodes=2)
    with pytest.raises(TypeError, match="need a heterogeneous graph"):
        gfpyg.NeighborLoader(data, {("a", "b", "c"): [1]})


# ---------------------------------------------------------------------------
# NeighborLoader and Sampler (the engine's per-relation fan-outs)


def test_neighbor_loader_hetero_fields(data):
    mask = data["paper"].train_mask
    loader = gfpyg.NeighborLoader(data, FANOUTS, input_nodes=("paper", mask), batch_size=8, seed=0)
    assert isinstance(loader, gfpyg.NeighborLoader)
    seeds = mask.nonzero().view(-1)
    batches = list(loader)
    assert len(batches) == len(loader) == -(-seeds.numel() // 8)
    for i, batch in enumerate(batches):
        check_hetero_batch(data, batch, "paper", seeds=seeds[i * 8 : (i + 1) * 8], fanouts=FANOUTS)
        assert torch.equal(batch["paper"].input_id, seeds[i * 8 : (i + 1) * 8])  # a mask: the node ids
        assert batch[EMPLOYS].edge_index.shape == (2, 0)
    loader.close()


def test_neighbor_loader_hetero_list_fanouts_shuffle_and_call(data):
    loader = gfpyg.NeighborLoader(data, [2, 2], input_nodes=("author", None), batch_size=16, shuffle=True, seed=3)
    seen = []
    for batch in loader:
        check_hetero_batch(data, batch, "author", fanouts={et: [2, 2] for et in EDGE_TYPES})
        seen.append(batch["author"].n_id[: batch["author"].batch_size])
    assert sorted(torch.cat(seen).tolist()) == list(range(NUM["author"]))
    one = loader([5, 0, 7])
    check_hetero_batch(data, one, "author", seeds=torch.tensor([5, 0, 7]), fanouts={et: [2, 2] for et in EDGE_TYPES})
    assert one["author"].input_id.tolist() == [5, 0, 7]  # ids given: positions
    loader.close()


def test_neighbor_loader_hetero_is_reproducible(data):
    def epoch():
        loader = gfpyg.NeighborLoader(data, FANOUTS, input_nodes="paper", batch_size=20, shuffle=True, seed=11)
        out = [(b["paper"].n_id, b[CITES].e_id, b[WRITES].edge_index) for b in loader]
        loader.close()
        return out

    for a, b in zip(epoch(), epoch()):
        for x, y in zip(a, b):
            assert torch.equal(torch.as_tensor(x), torch.as_tensor(y))


def test_neighbor_loader_hetero_replace_and_zero_fanout(data):
    fan = {**FANOUTS, CITES: [0, 6], WRITES: [5, 5]}
    loader = gfpyg.NeighborLoader(data, fan, input_nodes=("paper", torch.arange(10)), batch_size=10, replace=True)
    batch = next(iter(loader))
    check_hetero_batch(data, batch, "paper", fanouts=fan, replace=True)
    assert batch[CITES].num_sampled_edges[0] == 0
    loader.close()


def test_sampler_in_pyg_nodeloader_hetero(data):
    sampler = gfpyg.Sampler(data, FANOUTS, seed=4)
    assert isinstance(sampler, gfpyg.Sampler)
    loader = NodeLoader(data, node_sampler=sampler, input_nodes=("paper", torch.arange(30)), batch_size=10)
    batches = list(loader)
    assert len(batches) == 3
    for i, batch in enumerate(batches):
        check_hetero_batch(data, batch, "paper", seeds=torch.arange(i * 10, (i + 1) * 10), fanouts=FANOUTS)
    out = sampler.sample_from_nodes(NodeSamplerInput(input_id=None, node=torch.tensor([1, 2]), input_type="author"))
    assert isinstance(out, HeteroSamplerOutput)
    assert out.node["author"][:2].tolist() == [1, 2]
    assert set(out.row) == set(EDGE_TYPES) and out.num_sampled_nodes["author"][0] == 2
    # unpickled (as DataLoader workers get it): converts again
    again = pickle.loads(pickle.dumps(sampler))
    assert isinstance(again, gfpyg.Sampler)
    out = again.sample_from_nodes(NodeSamplerInput(input_id=None, node=torch.tensor([3]), input_type="paper"))
    assert out.node["paper"][0].item() == 3


def test_sampler_and_loader_same_batch_with_bidirectional(data):
    """Our loader and PyG's NodeLoader with our Sampler make the same batch
    from the same seed."""
    kw = dict(seed=9, subgraph_type="bidirectional")
    ours = gfpyg.NeighborLoader(data, FANOUTS, input_nodes=("paper", None), **kw)
    theirs = NodeLoader(data, node_sampler=gfpyg.Sampler(data, FANOUTS, **kw), input_nodes=("paper", None))
    a, b = ours([3, 9, 27]), theirs([3, 9, 27])
    for nt in data.node_types:
        assert sorted(a[nt].keys()) == sorted(b[nt].keys())
        assert torch.equal(a[nt].n_id, b[nt].n_id)
    for et in data.edge_types:
        assert sorted(a[et].keys()) == sorted(b[et].keys())
        assert torch.equal(torch.as_tensor(a[et].edge_index), torch.as_tensor(b[et].edge_index))
    assert "num_sampled_nodes" not in a["paper"]  # bidirectional: no per-hop counts, as PyG
    w, r = torch.as_tensor(a[WRITES].edge_index), torch.as_tensor(a[REV_WRITES].edge_index)
    assert torch.equal(w.flip(0), r)
    ours.close()


def test_hetero_exclude_edges(data):
    excluded = torch.arange(200)  # every "cites" edge
    loader = gfpyg.NeighborLoader(
        data, FANOUTS, input_nodes=("paper", None), batch_size=60, exclude_edges={CITES: excluded}
    )
    batch = next(iter(loader))
    assert batch[CITES].e_id.numel() == 0 and batch[WRITES].e_id.numel() > 0
    loader.close()


def test_hetero_errors(data):
    with pytest.raises(ValueError, match="unknown edge type"):
        gfpyg.NeighborLoader(data, {**FANOUTS, ("paper", "likes", "paper"): [1, 1]}, input_nodes="paper")
    with pytest.raises(ValueError, match="no number of neighbours"):
        gfpyg.NeighborLoader(data, {CITES: [1, 1]}, input_nodes="paper")
    with pytest.raises(ValueError, match="unknown node type 'venue'"):
        gfpyg.NeighborLoader(data, FANOUTS, input_nodes=("venue", None))
    with pytest.raises(ValueError, match="needed for a heterogeneous graph"):
        gfpyg.NeighborLoader(data, FANOUTS)
    with pytest.raises(ValueError, match="neither a node-level nor an edge-level"):
        gfpyg.NeighborLoader(data, FANOUTS, input_nodes="paper", time_attr="nope")
    sampler = gfpyg.Sampler(data, FANOUTS)
    with pytest.raises(ValueError, match="input_nodes=\\(node type, ids\\)"):
        sampler.sample_from_nodes(NodeSamplerInput(input_id=None, node=torch.tensor([1])))
    with pytest.raises(ValueError, match="unknown input node type 'venue'"):
        sampler.sample_from_nodes(NodeSamplerInput(input_id=None, node=torch.tensor([1]), input_type="venue"))


def test_one_hop_edges_as_dgl_sample_neighbors(data):
    """Against DGL's heterogeneous sample_neighbors on the same graph: with
    every neighbour taken, the same edges per edge type; with fan-outs, the
    same number of edges into every seed per edge type."""
    dgl = pytest.importorskip("dgl")
    g = dgl.heterograph(
        {et: (data[et].edge_index[0], data[et].edge_index[1]) for et in data.edge_types},
        num_nodes_dict={nt: data[nt].num_nodes for nt in data.node_types},
    )
    seeds = torch.tensor([0, 7, 19, 33, 52])
    for fan in (-1, 2):
        loader = gfpyg.NeighborLoader(data, [fan], input_nodes=("paper", seeds), batch_size=5, seed=1)
        b = next(iter(loader))
        loader.close()
        theirs = dgl.sampling.sample_neighbors(g, {"paper": seeds}, fan)
        for et in data.edge_types:
            their_eids = theirs.edges[et].data[dgl.EID]
            if fan == -1:
                assert sorted(b[et].e_id.tolist()) == sorted(their_eids.tolist()), et
            ours = torch.bincount(data[et].edge_index[1, b[et].e_id], minlength=data[et[2]].num_nodes)
            dgls = torch.bincount(data[et].edge_index[1, their_eids], minlength=data[et[2]].num_nodes)
            assert torch.equal(ours, dgls), et


def test_uniform_per_relation():
    """Each relation's fan-out draws uniformly among that relation's in-edges
    only: 300 destinations with 6 in-edges of relation A and 6 of relation
    B; fan-out A=1, B=2 (without replacement)."""
    k, per = 300, 6
    data = HeteroData()
    data["d"].num_nodes = k
    data["a"].num_nodes = k * per
    data["b"].num_nodes = k * per
    dst = torch.arange(k).repeat_interleave(per)
    data["a", "A", "d"].edge_index = torch.stack([torch.arange(k * per), dst])
    data["b", "B", "d"].edge_index = torch.stack([torch.arange(k * per), dst])
    fan = {("a", "A", "d"): [1], ("b", "B", "d"): [2]}
    loader = gfpyg.NeighborLoader(data, fan, input_nodes="d", batch_size=k, seed=7)
    b = next(iter(loader))
    loader.close()
    for et, draws in ((("a", "A", "d"), 1), (("b", "B", "d"), 2)):
        e_id = b[et].e_id
        assert e_id.numel() == k * draws
        assert torch.equal(torch.bincount(data[et].edge_index[1, e_id], minlength=k), torch.full((k,), draws))
        counts = torch.bincount(e_id % per, minlength=per).double()
        expected = k * draws / per
        chi2 = float(((counts - expected) ** 2 / expected).sum())
        assert chi2 < 20.52, f"{et}: chi-square {chi2:.1f} over 5 degrees of freedom (p < 0.001)"


def test_hetero_weight_attr():
    """weight_attr per edge type, as PyG's: edges of weight 0 are never
    sampled; edge types without the attribute are sampled uniformly."""
    data = make_hetero(seed=1)
    weight = torch.zeros(data[CITES].edge_index.size(1))
    weight[::3] = 1.0
    data[CITES].w = weight
    loader = gfpyg.NeighborLoader(data, FANOUTS, input_nodes="paper", batch_size=60, weight_attr="w", seed=2)
    b = next(iter(loader))
    loader.close()
    assert b[CITES].e_id.numel() > 0 and bool((weight[b[CITES].e_id] > 0).all())
    assert torch.equal(b[CITES].w, weight[b[CITES].e_id])
    assert b[WRITES].e_id.numel() > 0  # no weights: uniform
    hop0 = b[CITES].num_sampled_edges[0]
    got = torch.bincount(torch.as_tensor(b[CITES].edge_index)[1, :hop0], minlength=NUM["paper"])
    positive = torch.bincount(data[CITES].edge_index[1, weight > 0], minlength=NUM["paper"])
    assert torch.equal(got[:60], positive[b["paper"].n_id[:60]].clamp(max=FANOUTS[CITES][0]))


# ---------------------------------------------------------------------------
# LinkNeighborLoader on a HeteroData


def check_link_edges(data: HeteroData, batch: HeteroData) -> None:
    """Every sampled edge exists with its type; node attributes by n_id."""
    for et in data.edge_types:
        ei = torch.as_tensor(batch[et].edge_index)
        assert torch.equal(
            data[et].edge_index[:, batch[et].e_id], torch.stack([batch[et[0]].n_id[ei[0]], batch[et[2]].n_id[ei[1]]])
        )
    for nt in ("paper", "author"):
        assert torch.equal(batch[nt].x, data[nt].x[batch[nt].n_id])


def test_link_loader_hetero_two_types(data):
    loader = gfpyg.LinkNeighborLoader(data, FANOUTS, edge_label_index=WRITES, batch_size=32, shuffle=True, seed=1)
    assert len(loader) == -(-150 // 32)
    seen = []
    for batch in loader:
        pairs = data[WRITES].edge_index[:, batch[WRITES].input_id]
        eli = batch[WRITES].edge_label_index
        assert torch.equal(batch["author"].n_id[eli[0]], pairs[0]) and torch.equal(
            batch["paper"].n_id[eli[1]], pairs[1]
        )
        # the seeds: the sorted unique nodes of the pairs, first in their types
        for nt, ends in (("author", pairs[0]), ("paper", pairs[1])):
            k = batch[nt].num_sampled_nodes[0]
            assert torch.equal(batch[nt].n_id[:k], ends.unique())
        assert batch["institution"].num_sampled_nodes[0] == 0
        assert "edge_label" not in batch[WRITES]
        check_link_edges(data, batch)
        seen.append(batch[WRITES].input_id)
    assert sorted(torch.cat(seen).tolist()) == list(range(150))
    loader.close()


def test_link_loader_hetero_binary_same_type(data):
    pairs = data[CITES].edge_index[:, :40]
    loader = gfpyg.LinkNeighborLoader(
        data, FANOUTS, edge_label_index=(CITES, pairs), neg_sampling="binary", batch_size=20, seed=2
    )
    for i, batch in enumerate(loader):
        eli, label = batch[CITES].edge_label_index, batch[CITES].edge_label
        assert eli.shape == (2, 40) and label.tolist() == [1.0] * 20 + [0.0] * 20
        assert torch.equal(batch["paper"].n_id[eli[:, :20]], pairs[:, i * 20 : (i + 1) * 20])
        assert int(eli.max()) < batch["paper"].num_sampled_nodes[0]  # negatives are seeds too
        check_link_edges(data, batch)
    loader.close()


def test_link_loader_hetero_triplet(data):
    loader = gfpyg.LinkNeighborLoader(
        data, [2, 2], edge_label_index=("author", "paper"), neg_sampling=("triplet", 3), batch_size=10, seed=3
    )
    batch = loader(torch.arange(10))
    pairs = data[WRITES].edge_index[:, :10]
    assert torch.equal(batch["author"].n_id[batch["author"].src_index], pairs[0])
    assert torch.equal(batch["paper"].n_id[batch["paper"].dst_pos_index], pairs[1])
    assert batch["paper"].dst_neg_index.shape == (10, 3)
    assert "edge_label_index" not in batch[WRITES]
    check_link_edges(data, batch)
    loader.close()


def test_link_loader_hetero_errors(data):
    with pytest.raises(ValueError, match="'edge_label_index' is needed"):
        gfpyg.LinkNeighborLoader(data, FANOUTS)
    with pytest.raises(ValueError, match="unknown edge type"):
        gfpyg.LinkNeighborLoader(data, FANOUTS, edge_label_index=("paper", "likes", "paper"))
    with pytest.raises(ValueError, match="out of range"):
        gfpyg.LinkNeighborLoader(data, FANOUTS, edge_label_index=(WRITES, torch.tensor([[40], [0]])))
    with pytest.raises(ValueError, match="neither a node-level"):  # temporal: test_link_hetero_temporal.py
        gfpyg.LinkNeighborLoader(
            data, FANOUTS, edge_label_index=WRITES, time_attr="t", edge_label_time=torch.zeros(149, dtype=torch.long)
        )
    loader = gfpyg.LinkNeighborLoader(data, FANOUTS, edge_label_index=WRITES)
    loader.close()
    with pytest.raises(ValueError, match="closed"):
        next(iter(loader))


def test_neighbor_loader_on_a_hetero_graph(data):
    """A graphferry.HeteroGraph as data: its node data per type in the batch."""
    with gfpyg.from_pyg(data) as hg:
        hg.set_node_data("paper", "x", data["paper"].x)
        hg.set_node_data("paper", "y", data["paper"].y)
        hg.set_node_data("author", "x", data["author"].x)
        loader = gfpyg.NeighborLoader(hg, FANOUTS, input_nodes=("paper", torch.arange(12)), batch_size=6, seed=5)
        for batch in loader:
            for nt in ("paper", "author"):
                assert torch.equal(batch[nt].x, data[nt].x[batch[nt].n_id])
            assert torch.equal(batch["paper"].y, data["paper"].y[batch["paper"].n_id])
            assert batch["institution"].num_nodes == batch["institution"].n_id.numel()
            for et in data.edge_types:
                ei = torch.as_tensor(batch[et].edge_index)
                pairs = torch.stack([batch[et[0]].n_id[ei[0]], batch[et[2]].n_id[ei[1]]])
                assert torch.equal(data[et].edge_index[:, batch[et].e_id], pairs)
        loader.close()
        with pytest.raises(ValueError, match="'time_attr' with a graphferry.HeteroGraph is 'node' or 'edge'"):
            gfpyg.NeighborLoader(hg, FANOUTS, input_nodes="paper", time_attr="time")

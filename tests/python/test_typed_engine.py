"""The engine's typed graphs, per-relation fan-outs, disjoint and temporal
sampling through the low-level Python API (Graph.set_types, SampleOptions,
sample_neighbors, Loader)."""

from __future__ import annotations

import pytest
import torch

import graphferry as gf
from graphferry._options import SampleOptions
from graphferry.errors import GraphferryError

# Node types A = [0, 30), B = [30, 80); relations 0: A->B, 1: B->B, 2: B->A.
NODE_OFFSETS = [0, 30, 80]
REL_SRC = [0, 1, 1]
REL_DST = [1, 1, 0]
_RANGES = [((0, 30), (30, 80)), ((30, 80), (30, 80)), ((30, 80), (0, 30))]


def _typed_coo(seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    src, dst, offsets = [], [], [0]
    for (s0, s1), (d0, d1) in _RANGES:
        src.append(torch.randint(s0, s1, (120,), generator=gen))
        dst.append(torch.randint(d0, d1, (120,), generator=gen))
        offsets.append(offsets[-1] + 120)
    return torch.cat(src), torch.cat(dst), offsets


def _relation(edge_ids: torch.Tensor, offsets) -> torch.Tensor:
    return torch.bucketize(edge_ids, torch.tensor(offsets[1:]), right=True)


@pytest.fixture(params=[(1, "range"), (3, "random")], ids=["1patch", "3random"])
def typed(request):
    src, dst, offsets = _typed_coo()
    parts, method = request.param
    g = gf.Graph.from_coo(src, dst, num_nodes=80, num_patches=parts, partition=method, seed=2)
    g.set_types(NODE_OFFSETS, offsets, REL_SRC, REL_DST)
    yield g, src, dst, offsets
    g.close()


def test_set_types_and_num_types():
    src, dst, offsets = _typed_coo()
    with gf.Graph.from_coo(src, dst, num_nodes=80) as g:
        assert g.num_types == (0, 0)
        g.set_types(torch.tensor(NODE_OFFSETS), offsets, REL_SRC, REL_DST)
        assert g.num_types == (2, 3)
        with pytest.raises(gf.InvalidArgumentError, match="destination type is 1"):
            g.set_types(NODE_OFFSETS, offsets, REL_SRC, [1, 1, 1])
        with pytest.raises(gf.InvalidArgumentError, match=r"node_offsets\[2\] = 79"):
            g.set_types([0, 30, 79], offsets, REL_SRC, REL_DST)
        with pytest.raises(ValueError, match="one entry per relation"):
            g.set_types(NODE_OFFSETS, offsets, REL_SRC[:2], REL_DST)
        with pytest.raises(TypeError):
            g.set_types(NODE_OFFSETS, offsets, ["a", 1, 1], REL_DST)
        assert g.num_types == (2, 3), "a refused call keeps the types"


def test_set_types_refuses_ungrouped_lists():
    src, dst, offsets = _typed_coo()
    # Relation 1's edges first: node lists are no longer grouped in
    # relation order.
    perm = torch.cat([torch.arange(120, 240), torch.arange(0, 120), torch.arange(240, 360)])
    with gf.Graph.from_coo(src[perm], dst[perm], num_nodes=80) as g:
        with pytest.raises(gf.InvalidArgumentError, match="not grouped by relation|type"):
            g.set_types(NODE_OFFSETS, offsets, REL_SRC, REL_DST)


def test_relation_fanouts(typed):
    g, src, dst, offsets = typed
    seeds = torch.tensor([35, 3, 70])
    rf = [[2, 3, 1], [1, 0, 2]]
    sub = gf.sample_neighbors(g, seeds, (), relation_fanouts=rf, seed=7)
    assert len(sub.blocks) == 2
    for h, block in enumerate(sub.blocks):
        dst_nodes = sub.nodes[block.dst_offset : block.dst_offset + block.num_dst]
        for i, v in enumerate(dst_nodes.tolist()):
            e = block.edge_ids[block.indptr[i] : block.indptr[i + 1]]
            rel = _relation(e, offsets)
            assert torch.all(rel[1:] >= rel[:-1]), "edges come relation by relation"
            assert torch.equal(dst[e], torch.full_like(e, v))
            for r in range(3):
                in_r = int(((dst == v) & (_relation(torch.arange(360), offsets) == r)).sum())
                want = min(rf[h][r], in_r) if REL_DST[r] == (0 if v < 30 else 1) else 0
                assert int((rel == r).sum()) == want, (h, v, r)
    again = gf.sample_neighbors(g, seeds, [9, 9], relation_fanouts=rf, seed=7)  # same hop count
    assert torch.equal(sub.nodes, again.nodes), "fanouts are ignored with relation_fanouts"
    with pytest.raises(gf.InvalidArgumentError, match="the graph has 3 relations"):
        gf.sample_neighbors(g, seeds, (), relation_fanouts=[[1, 1]])
    with pytest.raises(ValueError, match="one fan-out per relation"):
        SampleOptions((), relation_fanouts=[[1, 1, 1], [1]])
    with pytest.raises(ValueError, match="2 hops"):
        SampleOptions((1, 1), relation_fanouts=[[1, 1, 1]])
    assert SampleOptions((), relation_fanouts=[[1, 4, -1], [0, 2, 1]]).fanouts == (4, 2)
    with pytest.raises(gf.InvalidArgumentError, match="LayerWise"):
        gf.sample_neighbors(g, seeds, (), relation_fanouts=rf, scheme="layer")


def test_relation_fanouts_same_for_any_layout():
    src, dst, offsets = _typed_coo(3)
    got = []
    for parts, method in [(1, "range"), (2, "range"), (3, "random")]:
        with gf.Graph.from_coo(src, dst, num_nodes=80, num_patches=parts, partition=method, seed=4) as g:
            g.set_types(NODE_OFFSETS, offsets, REL_SRC, REL_DST)
            sub = gf.sample_neighbors(g, torch.tensor([1, 40, 79]), (), relation_fanouts=[[2, 2, 2], [1, 3, 1]], seed=9)
            got.append((sub.nodes, [b.edge_ids for b in sub.blocks]))
    for nodes, edges in got[1:]:
        assert torch.equal(nodes, got[0][0])
        assert all(torch.equal(a, b) for a, b in zip(edges, got[0][1]))


def test_untyped_graph_refuses_relation_fanouts():
    src, dst, _ = _typed_coo()
    with gf.Graph.from_coo(src, dst, num_nodes=80) as g:
        with pytest.raises(gf.InvalidArgumentError, match="typed graph"):
            gf.sample_neighbors(g, torch.tensor([1]), (), relation_fanouts=[[1, 1, 1]])


def test_disjoint_batch_field(typed):
    """Only disjoint batches carry ``batch``; disjoint needs PyG's frontier.
    (The order of disjoint batches against the old per-seed concatenation is
    tested in test_temporal_pyg.py.)"""
    g, *_ = typed
    seeds = torch.tensor([35, 3, 35, 70])
    sub = gf.sample_neighbors(g, seeds, [-1, -1], frontier="new", disjoint=True)
    assert sub.batch is not None and sub.batch.numel() == sub.nodes.numel()
    plain = gf.sample_neighbors(g, torch.tensor([35, 3]), [2, 2], frontier="new")
    assert plain.batch is None
    with pytest.raises(gf.InvalidArgumentError, match="FrontierNew"):
        gf.sample_neighbors(g, seeds, [2], disjoint=True)


def test_temporal_sampling(typed):
    g, src, dst, offsets = typed
    node_time = torch.arange(80, dtype=torch.int64) % 17
    edge_time = torch.arange(360, dtype=torch.int64) % 23
    g.set_node_time(node_time)
    g.set_edge_time(edge_time)
    seeds = torch.tensor([35, 3, 35, 70, 10])
    times = torch.tensor([5, 16, 0, 9, 12])
    sub = gf.sample_neighbors(
        g, seeds, [3, 2], frontier="new", disjoint=True, temporal="node", seed_times=times, seed=1
    )
    later = sub.nodes[5:]
    assert torch.all(node_time[later] <= times[sub.batch[5:]])
    sub = gf.sample_neighbors(
        g, seeds, [3, 2], frontier="new", disjoint=True, temporal="edge", temporal_strategy="last", seed_times=times
    )
    for block in sub.blocks:
        for i in range(block.num_dst):
            pos = block.dst_offset + i
            e = block.edge_ids[block.indptr[i] : block.indptr[i + 1]]
            cut = times[sub.batch[pos]]
            assert torch.all(edge_time[e] <= cut)
            v = int(sub.nodes[pos])
            cand = torch.nonzero((dst == v) & (edge_time <= cut)).view(-1)
            # "last": the largest times, ties to the later edge, in edge order.
            order = sorted(cand.tolist(), key=lambda x: (int(edge_time[x]), x), reverse=True)[: e.numel()]
            assert e.tolist() == sorted(order), (v, e, cand)
    typed_sub = gf.sample_neighbors(
        g,
        seeds,
        (),
        relation_fanouts=[[2, 2, 2], [1, 1, 1]],
        frontier="new",
        disjoint=True,
        temporal="edge",
        seed_times=times,
    )
    for block in typed_sub.blocks:
        for i in range(block.num_dst):
            e = block.edge_ids[block.indptr[i] : block.indptr[i + 1]]
            assert torch.all(edge_time[e] <= times[typed_sub.batch[block.dst_offset + i]])
    with pytest.raises(gf.InvalidArgumentError, match="seed_times is NULL"):
        gf.sample_neighbors(g, seeds, [2], frontier="new", disjoint=True, temporal="node")
    with pytest.raises(gf.InvalidArgumentError, match="Disjoint"):
        gf.sample_neighbors(g, torch.tensor([1]), [2], temporal="node", seed_times=torch.tensor([3]))
    with pytest.raises(ValueError, match="temporal"):
        SampleOptions((2,), temporal="nodes")
    with pytest.raises(gf.InvalidArgumentError, match="node times have 3 entries"):
        g.set_node_time(torch.zeros(3, dtype=torch.int64))
    with pytest.raises(gf.TypeMismatchError):
        g.set_edge_time(torch.zeros(360, dtype=torch.float32))


def test_temporal_disjoint_loader(typed):
    g, *_ = typed
    node_time = torch.arange(80, dtype=torch.int64) % 13
    g.set_node_time(node_time)
    seeds = torch.tensor([35, 35, 3, 70, 10, 11, 40])
    times = torch.tensor([4, 12, 8, 2, 9, 0, 6])
    loader = gf.Loader(
        g,
        seeds,
        [3, 2],
        batch_size=3,
        shuffle=True,
        frontier="new",
        disjoint=True,
        temporal="node",
        seed_times=times,
        seed=5,
    )
    with loader:
        with pytest.raises(GraphferryError, match="loader"):
            g.set_node_time(node_time)
        seen = []
        for sub in loader:
            assert sub.batch is not None and sub.batch.numel() == sub.nodes.numel()
            bt = times[sub.input_index]
            assert torch.equal(sub.seeds, seeds[sub.input_index])
            assert torch.all(node_time[sub.nodes[sub.batch_size :]] <= bt[sub.batch[sub.batch_size :]])
            seen += sub.input_index.tolist()
        assert sorted(seen) == list(range(7))
    with pytest.raises(gf.InvalidArgumentError, match="seed_times is NULL"):
        gf.Loader(g, seeds, [2], frontier="new", disjoint=True, temporal="node")

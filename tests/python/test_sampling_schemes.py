"""Edge weights, biased and layer-wise sampling, excluded edges and random
walks: the Python arguments reach the engine, and what comes back obeys the
documented semantics."""

from __future__ import annotations

import math

import pytest
import torch

import graphferry
from graphferry.errors import GF_ESTATE, GraphferryError, InvalidArgumentError, TypeMismatchError

from conftest import check_subgraph, edge_table


def zero_some(num_edges: int, seed: int = 3) -> torch.Tensor:
    """float32 weights in (0.1, 1.1] with about a third of them 0."""
    gen = torch.Generator().manual_seed(seed)
    w = torch.rand(num_edges, generator=gen) + 0.1
    w[torch.rand(num_edges, generator=gen) < 0.35] = 0
    return w


def sampled_edge_ids(sub) -> torch.Tensor:
    return torch.cat([b.edge_ids for b in sub.blocks])


def positive_in_degree(tiny, weights) -> torch.Tensor:
    return torch.bincount(tiny.dst[weights > 0], minlength=tiny.num_nodes)


# -- edge weights -----------------------------------------------------------------


def test_constructors_take_edge_weights(tiny):
    w = zero_some(tiny.src.numel())
    zero = set((w == 0).nonzero().view(-1).tolist())
    seeds = torch.arange(tiny.num_nodes - 1)
    csr_order = torch.argsort(tiny.src, stable=True)
    csr_indptr = torch.zeros(tiny.num_nodes + 1, dtype=torch.int64)
    csr_indptr[1:] = torch.cumsum(torch.bincount(tiny.src, minlength=tiny.num_nodes), 0)
    graphs = [
        graphferry.Graph.from_coo(tiny.src, tiny.dst, num_nodes=tiny.num_nodes, edge_weights=w),
        graphferry.Graph.from_csc(tiny.indptr, tiny.indices, edge_ids=tiny.edge_ids, edge_weights=w),
        graphferry.Graph.from_csr(csr_indptr, tiny.dst[csr_order], edge_ids=csr_order, edge_weights=w),
        graphferry.Graph.from_coo(
            tiny.src, tiny.dst, num_nodes=tiny.num_nodes, edge_weights=w.double(), num_patches=3, partition="random"
        ),
    ]
    for g in graphs:
        with g:
            for seed in range(5):
                sub = graphferry.sample_neighbors(g, seeds, [4, 3], biased=True, seed=seed)
                assert not zero & set(sampled_edge_ids(sub).tolist())
                check_subgraph(sub, seeds, [4, 3], edge_table(tiny.src, tiny.dst), frontier="all", replace=True)


def test_biased_never_takes_zero_weight_edges(tiny, tiny_graph):
    w = zero_some(tiny.src.numel())
    tiny_graph.set_edge_weights(w)
    edges = edge_table(tiny.src, tiny.dst)
    pos_deg = positive_in_degree(tiny, w)
    seeds = torch.arange(tiny.num_nodes - 1)
    for frontier in ("all", "new"):
        for seed in range(20):
            sub = graphferry.sample_neighbors(tiny_graph, seeds, [3, 2], biased=True, seed=seed, frontier=frontier)
            eids = sampled_edge_ids(sub)
            assert bool((w[eids] > 0).all()), "an edge of weight 0 was sampled"
            check_subgraph(sub, seeds, [3, 2], edges, frontier=frontier, replace=True)
            # without replacement: min(fan-out, number of positive in-edges) per node
            blk = sub.blocks[0]
            assert torch.equal(blk.indptr[1:] - blk.indptr[:-1], pos_deg[seeds].clamp(max=3))
    sub = graphferry.sample_neighbors(tiny_graph, seeds, [5], biased=True, replace=True, seed=1)
    assert bool((w[sub.blocks[0].edge_ids] > 0).all())


def test_biased_follows_the_weights():
    # 2000 destinations, each with in-edges of weights 0, 1, 2, 3, 4 from
    # its own five sources; fan-out 1 takes edge j with probability j / 10.
    n, weights = 2000, torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0])
    dst = torch.arange(n).repeat_interleave(5)
    src = n + torch.arange(5 * n)
    w = weights.repeat(n)
    with graphferry.Graph.from_coo(src, dst, edge_weights=w) as g:
        sub = graphferry.sample_neighbors(g, torch.arange(n), [1], biased=True, seed=11)
        eids = sub.blocks[0].edge_ids
        assert eids.numel() == n
        counts = torch.bincount(eids % 5, minlength=5).double()
        expected = weights / weights.sum() * n
        assert counts[0] == 0
        z = (counts[1:] - expected[1:]) / (expected[1:] * (1 - weights[1:] / 10)).sqrt()
        assert bool((z.abs() < 4.5).all()), f"counts {counts.tolist()} vs {expected.tolist()}"
        # unbiased sampling of the same graph is uniform (and takes weight-0 edges)
        sub = graphferry.sample_neighbors(g, torch.arange(n), [1], seed=11)
        counts = torch.bincount(sub.blocks[0].edge_ids % 5, minlength=5).double()
        z = (counts - n / 5) / math.sqrt(n * 0.2 * 0.8)
        assert bool((z.abs() < 4.5).all()), f"uniform counts {counts.tolist()}"


def test_bool_mask_is_weights_zero_one(tiny, tiny_graph):
    mask = torch.rand(tiny.src.numel(), generator=torch.Generator().manual_seed(1)) < 0.5
    tiny_graph.set_edge_weights(mask)
    sub = graphferry.sample_neighbors(tiny_graph, torch.arange(tiny.num_nodes - 1), [3], biased=True)
    assert bool(mask[sub.blocks[0].edge_ids].all())


def test_set_edge_weights_replaces(tiny, tiny_graph):
    seeds = torch.arange(tiny.num_nodes - 1)
    w = torch.zeros(tiny.src.numel())
    w[::3] = 1
    tiny_graph.set_edge_weights(w)
    eids = graphferry.sample_neighbors(tiny_graph, seeds, [4], biased=True).blocks[0].edge_ids
    assert bool((eids % 3 == 0).all())
    w = torch.zeros(tiny.src.numel())
    w[1::3] = 1
    tiny_graph.set_edge_weights(w)
    eids = graphferry.sample_neighbors(tiny_graph, seeds, [4], biased=True).blocks[0].edge_ids
    assert bool((eids % 3 == 1).all())


# -- errors at the boundary -----------------------------------------------------


def test_biased_without_weights(tiny_graph):
    with pytest.raises(InvalidArgumentError, match="weights"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([3]), [2], biased=True)
    with pytest.raises(InvalidArgumentError, match="weights"):
        graphferry.random_walk(tiny_graph, torch.tensor([3]), 3, biased=True)
    with pytest.raises(InvalidArgumentError, match="weights"):
        graphferry.Loader(tiny_graph, torch.arange(4), [2], biased=True)
    # the graph still samples
    graphferry.sample_neighbors(tiny_graph, torch.tensor([3]), [2])


def test_bad_edge_weights(tiny, tiny_graph):
    e = tiny.src.numel()
    w = torch.ones(e)
    w[5] = -1
    with pytest.raises(InvalidArgumentError, match=r"weights\[\d+\] = -1"):
        tiny_graph.set_edge_weights(w)
    w[5] = float("nan")
    with pytest.raises(InvalidArgumentError, match="finite"):
        tiny_graph.set_edge_weights(w)
    w[5] = float("inf")
    with pytest.raises(InvalidArgumentError, match="finite"):
        tiny_graph.set_edge_weights(w)
    with pytest.raises(InvalidArgumentError, match="3 entries"):
        tiny_graph.set_edge_weights(torch.ones(3))
    with pytest.raises(InvalidArgumentError, match="1-D"):
        tiny_graph.set_edge_weights(torch.ones(e, 2))
    with pytest.raises(TypeMismatchError, match="float32 or float64"):
        tiny_graph.set_edge_weights(torch.ones(e, dtype=torch.int64))
    with pytest.raises(TypeError, match="weights"):
        tiny_graph.set_edge_weights("w")
    with pytest.raises(InvalidArgumentError, match="3 entries"):
        graphferry.Graph.from_coo(tiny.src, tiny.dst, edge_weights=torch.ones(3))
    # a failed set leaves the graph without weights and usable
    with pytest.raises(InvalidArgumentError, match="weights"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([3]), [2], biased=True)


def test_weights_cannot_change_under_an_open_loader(tiny, tiny_graph):
    loader = graphferry.Loader(tiny_graph, torch.arange(8), [2], batch_size=4)
    with pytest.raises(GraphferryError, match="loader") as info:
        tiny_graph.set_edge_weights(torch.ones(tiny.src.numel()))
    assert info.value.code == GF_ESTATE
    loader.close()
    tiny_graph.set_edge_weights(torch.ones(tiny.src.numel()))


def test_unknown_scheme(tiny_graph):
    for bad in ("edge", "Node", "", 1, None):
        with pytest.raises(ValueError, match="'scheme' must be 'node', 'layer' or 'labor'"):
            graphferry.sample_neighbors(tiny_graph, torch.tensor([3]), [2], scheme=bad)
    with pytest.raises(ValueError, match="scheme"):
        graphferry.Loader(tiny_graph, torch.arange(4), [2], scheme="edge")


def test_bad_exclude_edges(tiny_graph):
    with pytest.raises(TypeMismatchError, match="exclude_edges"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([3]), [2], exclude_edges=torch.ones(2))
    with pytest.raises(TypeError, match="exclude_edges"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([3]), [2], exclude_edges="e")


# -- excluded edges -----------------------------------------------------------------


def test_excluded_edges_never_sampled(tiny, tiny_graph):
    gen = torch.Generator().manual_seed(5)
    excluded = torch.randperm(tiny.src.numel(), generator=gen)[: tiny.src.numel() // 3]
    excluded = torch.cat([excluded, torch.tensor([10**9, -1])])  # ids not in the graph: ignored
    keep = torch.ones(tiny.src.numel(), dtype=torch.bool)
    keep[excluded[:-2]] = False
    deg = torch.bincount(tiny.dst[keep], minlength=tiny.num_nodes)
    seeds = torch.arange(tiny.num_nodes - 1)
    edges = edge_table(tiny.src, tiny.dst)
    for seed in range(10):
        for ex in (excluded, excluded.to(torch.int32), excluded.numpy()):
            sub = graphferry.sample_neighbors(tiny_graph, seeds, [3, 2], seed=seed, exclude_edges=ex)
            assert not bool(keep[sampled_edge_ids(sub)].logical_not().any())
            check_subgraph(sub, seeds, [3, 2], edges, frontier="all", replace=True)
            blk = sub.blocks[0]
            assert torch.equal(blk.indptr[1:] - blk.indptr[:-1], deg[seeds].clamp(max=3))
    # with all of a node's in-edges excluded, -1 gives the remaining ones
    sub = graphferry.sample_neighbors(tiny_graph, seeds, [-1], exclude_edges=excluded)
    assert sorted(sub.blocks[0].edge_ids.tolist()) == keep.nonzero().view(-1).tolist()
    # the Loader too, and together with biased sampling
    w = zero_some(tiny.src.numel())
    tiny_graph.set_edge_weights(w)
    loader = graphferry.Loader(tiny_graph, seeds, [3, 2], batch_size=8, seed=2, exclude_edges=excluded, biased=True)
    for sub in loader:
        eids = sampled_edge_ids(sub)
        assert bool(keep[eids].all()) and bool((w[eids] > 0).all())
    loader.close()


# -- layer-wise -------------------------------------------------------------------


@pytest.mark.parametrize("fanouts", [[5, 4], [12, 30], [1, 1, 1]])
def test_layer_wise_respects_the_budget(tiny, tiny_graph, fanouts):
    edges = edge_table(tiny.src, tiny.dst)
    seeds = torch.arange(0, 30, 3)
    for frontier in ("all", "new"):
        for seed in range(10):
            sub = graphferry.sample_neighbors(tiny_graph, seeds, fanouts, scheme="layer", seed=seed, frontier=frontier)
            check_subgraph(sub, seeds, fanouts, edges, frontier=frontier, replace=True)
            assert sub.blocks[0].num_edges > 0
            for blk, budget in zip(sub.blocks, fanouts):
                assert blk.num_edges <= budget, "layer-wise: at most fanouts[h] edges per hop"
                pairs = blk.dst_positions() * (edges.size(0) + 1) + blk.edge_ids
                assert pairs.unique().numel() == pairs.numel(), "distinct neighbours per node"
            # with replacement each draw samples one edge: exactly the budget
            sub = graphferry.sample_neighbors(
                tiny_graph, seeds, fanouts, scheme="layer", replace=True, seed=seed, frontier=frontier
            )
            in_deg = torch.bincount(tiny.dst, minlength=tiny.num_nodes)
            for blk, budget in zip(sub.blocks, fanouts):
                frontier_nodes = sub.nodes[blk.dst_offset : blk.dst_offset + blk.num_dst]
                reachable = int(in_deg[frontier_nodes].sum()) > 0
                assert blk.num_edges == (budget if reachable else 0)
            # without replacement of nodes: min(budget, frontier) nodes, one edge each
            sub = graphferry.sample_neighbors(
                tiny_graph,
                seeds,
                fanouts,
                scheme="layer",
                layer_without_replacement=True,
                seed=seed,
                frontier=frontier,
            )
            check_subgraph(sub, seeds, fanouts, edges, frontier=frontier, replace=True)
            for blk, budget in zip(sub.blocks, fanouts):
                deg = blk.indptr[1:] - blk.indptr[:-1]
                assert bool((deg <= 1).all())
                assert blk.num_edges <= min(budget, blk.num_dst)


def test_layer_wise_biased(tiny, tiny_graph):
    w = zero_some(tiny.src.numel())
    tiny_graph.set_edge_weights(w)
    seeds = torch.arange(0, 39)
    for seed in range(10):
        for lwr in (False, True):
            sub = graphferry.sample_neighbors(
                tiny_graph,
                seeds,
                [20, 20],
                scheme="layer",
                biased=True,
                seed=seed,
                layer_without_replacement=lwr,
            )
            eids = sampled_edge_ids(sub)
            assert eids.numel() > 0 and bool((w[eids] > 0).all())
            for blk in sub.blocks:
                assert blk.num_edges <= 20
    loader = graphferry.Loader(tiny_graph, seeds, [6, 6], batch_size=10, scheme="layer", biased=True)
    for sub in loader:
        assert all(b.num_edges <= 6 for b in sub.blocks)
        assert bool((w[sampled_edge_ids(sub)] > 0).all())
    loader.close()


# -- random walks -----------------------------------------------------------------


def check_walks(tiny, seeds, traces, eids, length, weights=None):
    edges = edge_table(tiny.src, tiny.dst)
    b = seeds.numel()
    assert traces.dtype == eids.dtype == torch.int64
    assert traces.shape == (b, length + 1) and eids.shape == (b, length)
    assert torch.equal(traces[:, 0], seeds)
    in_deg = torch.bincount(tiny.dst, minlength=tiny.num_nodes)
    restarts = 0
    for i in range(b):
        for t in range(length):
            v, u, e = int(traces[i, t]), int(traces[i, t + 1]), int(eids[i, t])
            if v == -1:  # stopped: stays stopped
                assert u == -1 and e == -1
            elif e == -1:  # a restart, or a stop at a node without in-edges
                if u == -1:
                    assert in_deg[v] == 0, "a walk stops only where there are no in-edges"
                else:
                    assert u == int(seeds[i])
                    restarts += 1
            else:  # a step along the in-edge e = u -> v
                assert tuple(edges[e].tolist()) == (u, v)
                if weights is not None:
                    assert weights[e] > 0
    return restarts


def test_random_walk_follows_edges(tiny, tiny_graph):
    seeds = torch.tensor([3, 3, 0, 12, 5, tiny.num_nodes - 1])  # repeats; the last is isolated
    traces, eids = graphferry.random_walk(tiny_graph, seeds, 8, seed=4)
    assert check_walks(tiny, seeds, traces, eids, 8) == 0, "no restarts with restart_prob=0"
    assert bool((traces[-1, 1:] == -1).all()), "the isolated node's walk stops at once"
    again = graphferry.random_walk(tiny_graph, seeds, 8, seed=4)
    assert torch.equal(again[0], traces) and torch.equal(again[1], eids), "same seed, same walks"
    t0, e0 = graphferry.random_walk(tiny_graph, seeds, 0)
    assert torch.equal(t0, seeds.view(-1, 1)) and e0.shape == (seeds.numel(), 0)


def test_random_walk_restart_and_bias(tiny, tiny_graph):
    seeds = torch.arange(tiny.num_nodes - 1).repeat(5)
    traces, eids = graphferry.random_walk(tiny_graph, seeds, 10, restart_prob=0.5, seed=2)
    restarts = check_walks(tiny, seeds, traces, eids, 10)
    steps = int((traces[:, :-1] >= 0).sum())
    assert 0.35 * steps < restarts < 0.65 * steps
    traces, eids = graphferry.random_walk(tiny_graph, seeds, 4, restart_prob=1.0)
    assert bool((traces == seeds.view(-1, 1)).all()) and bool((eids == -1).all())
    w = zero_some(tiny.src.numel())
    tiny_graph.set_edge_weights(w)
    traces, eids = graphferry.random_walk(tiny_graph, seeds, 10, biased=True, seed=3)
    check_walks(tiny, seeds, traces, eids, 10, weights=w)


def test_random_walk_errors(tiny_graph):
    seeds = torch.tensor([3])
    for bad in (1.5, -0.1, float("nan")):
        with pytest.raises(InvalidArgumentError, match="restart_prob"):
            graphferry.random_walk(tiny_graph, seeds, 3, restart_prob=bad)
    with pytest.raises(TypeError, match="restart_prob"):
        graphferry.random_walk(tiny_graph, seeds, 3, restart_prob="0.5")
    with pytest.raises(InvalidArgumentError, match="length"):
        graphferry.random_walk(tiny_graph, seeds, -1)
    with pytest.raises(TypeError, match="length"):
        graphferry.random_walk(tiny_graph, seeds, 2.0)
    with pytest.raises(InvalidArgumentError, match="seeds"):
        graphferry.random_walk(tiny_graph, torch.tensor([10**6]), 3)
    with pytest.raises(TypeMismatchError):
        graphferry.random_walk(tiny_graph, torch.tensor([1.0]), 3)
    with pytest.raises(TypeError, match="graphferry.Graph"):
        graphferry.random_walk("g", seeds, 3)


def test_source_weights_are_per_node():
    """set_source_weights: edge u -> v weighs weights[u], so a source of
    weight 0 is never taken and the others follow their node weights."""
    src = torch.tensor([1, 2, 3, 1, 2, 3, 0])
    dst = torch.tensor([0, 0, 0, 4, 4, 4, 1])
    g = graphferry.Graph.from_coo(src, dst, num_nodes=5)
    with pytest.raises(graphferry.InvalidArgumentError, match="node id"):
        g.set_source_weights(torch.ones(2))
    g.set_source_weights(torch.tensor([1.0, 1.0, 0.0, 3.0, 1.0]))
    counts = torch.zeros(5)
    for s in range(400):
        sub = graphferry.sample_neighbors(g, torch.tensor([0, 4]), [1], biased=True, seed=s)
        srcs = sub.nodes[sub.blocks[0].indices]
        assert not bool((srcs == 2).any()), "a source of weight 0 was sampled"
        counts += torch.bincount(srcs, minlength=5)
    # node 3 weighs 3, node 1 weighs 1: about 3:1 over 800 draws
    assert 500 < counts[3] < 700 and 100 < counts[1] < 300
    g.close()


def test_dgl_random_walk_follows_out_edges_like_dgl():
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    src = torch.tensor([0, 0, 1, 2, 3, 3, 4])
    dst = torch.tensor([1, 2, 3, 3, 4, 0, 2])
    g = dgl.graph((src, dst), num_nodes=6)
    g.edata["w"] = torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    for prob in (None, "w"):
        traces, eids, types = gfdgl.random_walk(
            g, torch.tensor([0, 1, 5]), length=5, prob=prob, return_eids=True, seed=3
        )
        assert traces.shape == (3, 6) and eids.shape == (3, 5) and types.tolist() == [0] * 6
        assert traces[:, 0].tolist() == [0, 1, 5]
        assert traces[2, 1:].tolist() == [-1] * 5  # node 5 has no successors
        for i in range(3):
            for t in range(5):
                u, v, e = int(traces[i, t]), int(traces[i, t + 1]), int(eids[i, t])
                if v < 0:
                    continue
                assert (int(src[e]), int(dst[e])) == (u, v), "a step must follow an out-edge"
                if prob == "w":
                    assert e != 1, "an edge of weight 0 was walked"
    # DGL's own random_walk gives walks of the same shape over the same edges
    ref, _ = dgl.sampling.random_walk(g, torch.tensor([0, 1]), length=5)
    assert ref.shape == (2, 6)


def test_pyg_random_walk_like_torch_cluster():
    import graphferry.pyg as gfpyg

    edge_index = torch.tensor([[0, 0, 1, 2, 3], [1, 2, 2, 3, 0]])
    seq, eseq = gfpyg.random_walk(edge_index, torch.tensor([0, 3]), 6, return_edge_indices=True, seed=1)
    assert seq.shape == (2, 7) and eseq.shape == (2, 6)
    for i in range(2):
        for t in range(6):
            e = int(eseq[i, t])
            assert int(edge_index[0, e]) == int(seq[i, t]) and int(edge_index[1, e]) == int(seq[i, t + 1])
    with pytest.raises(NotImplementedError, match="p = q = 1"):
        gfpyg.random_walk(edge_index, torch.tensor([0]), 3, p=2.0)


# -- seeds of one-off calls ---------------------------------------------------------


def test_one_off_seeds_are_per_call(tiny_graph):
    """sample_neighbors and random_walk reuse the engine's sampler across seeds;
    a seed gives the same sample whatever was asked before it, and different
    seeds differ."""
    seeds = torch.arange(0, tiny_graph.num_nodes, 3)

    def edges(seed, **kw):
        return sampled_edge_ids(graphferry.sample_neighbors(tiny_graph, seeds, [3, 2], seed=seed, **kw))

    def walks(seed):
        return graphferry.random_walk(tiny_graph, seeds, 6, seed=seed)[0]

    for kw in ({}, {"replace": True}, {"scheme": "layer"}):
        first = edges(5, **kw)
        other = edges(6, **kw)
        assert not torch.equal(first, other)
        assert torch.equal(edges(5, **kw), first)
        assert torch.equal(edges(6, **kw), other)
    w5, w6 = walks(5), walks(6)
    assert not torch.equal(w5, w6)
    assert torch.equal(walks(5), w5)

"""Temporal and disjoint sampling through graphferry.pyg (homogeneous and
heterogeneous): PyG's time_attr (node or edge times), input_time,
temporal_strategy "uniform" | "last", and disjoint batches made by the engine
in the order of the per-seed loop they replace.

PyG's own temporal sampler (pyg-lib) is not installable here, so the
references are its documented rule (a neighbour, or an edge, is a candidate
iff its time is not later than the seed time of its subgraph; "last" takes
the latest candidates) checked on graphs with random times, and the old
per-seed Python loop for the disjoint order."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("torch_geometric")

from torch_geometric.data import Data, HeteroData  # noqa: E402
from torch_geometric.loader import NodeLoader  # noqa: E402

import graphferry  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402
from graphferry._options import SampleOptions  # noqa: E402
from graphferry.pyg import base as pyg_base  # noqa: E402
from graphferry.sampling import sample_with_options  # noqa: E402

NUM_NODES, NUM_EDGES = 200, 1600
FANOUTS = [4, 3]


def make_data(seed: int = 0) -> Data:
    g = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, NUM_NODES, (2, NUM_EDGES), generator=g)
    return Data(
        x=torch.randn(NUM_NODES, 3, generator=g),
        edge_index=edge_index,
        time=torch.randint(0, 100, (NUM_NODES,), generator=g),
        edge_time=torch.randint(0, 100, (NUM_EDGES,), generator=g),
        num_nodes=NUM_NODES,
    )


@pytest.fixture(scope="module")
def data() -> Data:
    return make_data()


# ---------------------------------------------------------------------------
# disjoint batches come from the engine, in the order of the old per-seed loop


def concat_disjoint(subs, num_hops):
    """The order graphferry.pyg made disjoint batches in before the engine
    made them (one sample per seed, concatenated hop by hop and within a hop
    seed by seed): node, batch, row, col, edge, nodes and edges per hop."""
    counts = torch.stack([s.hop_counts for s in subs])  # [B, L + 1]
    num_seeds, num_levels = counts.shape
    by_hop = counts.t().reshape(-1)
    start = (torch.cumsum(by_hop, 0) - by_hop).reshape(num_levels, num_seeds).t()
    local_start = torch.cumsum(counts, 1) - counts
    total = int(by_hop.sum())
    node = torch.empty(total, dtype=torch.int64)
    batch = torch.empty(total, dtype=torch.int64)
    positions = []
    for i, sub in enumerate(subs):
        hop = torch.repeat_interleave(torch.arange(num_levels), counts[i])
        pos = start[i][hop] + torch.arange(sub.nodes.numel()) - local_start[i][hop]
        node[pos] = sub.nodes
        batch[pos] = i
        positions.append(pos)
    rows, cols, edges, num_edges = [], [], [], []
    for h in range(num_hops):
        n = 0
        for i, sub in enumerate(subs):
            block = sub.blocks[h]
            rows.append(positions[i][block.indices])
            cols.append(positions[i][block.dst_positions()])
            edges.append(block.edge_ids)
            n += block.num_edges
        num_edges.append(n)
    return node, batch, torch.cat(rows), torch.cat(cols), torch.cat(edges), counts.sum(0).tolist(), num_edges


@pytest.mark.parametrize("fanouts", [[-1, -1], [-1, 0, -1]])
def test_engine_disjoint_matches_the_per_seed_order(data, fanouts):
    """With every neighbour taken (no randomness) the engine's disjoint batch
    is exactly the old per-seed concatenation, a repeated seed included."""
    graph = gfpyg.as_graph(data)
    seeds = torch.tensor([5, 17, 5, 3, 199, 42])
    options = SampleOptions(fanouts, frontier="new", seed=1)
    subs = [sample_with_options(graph, seeds[i : i + 1], options) for i in range(seeds.numel())]
    want = concat_disjoint(subs, len(fanouts))
    out = pyg_base.directional(sample_with_options(graph, seeds, options.replace_fields(disjoint=True)))
    got = (out.node, out.batch, out.row, out.col, out.edge, out.num_sampled_nodes, out.num_sampled_edges)
    for name, a, b in zip(("node", "batch", "row", "col", "edge", "nodes/hop", "edges/hop"), got, want):
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b), name
        else:
            assert a == b, name


# ---------------------------------------------------------------------------
# homogeneous temporal sampling


def check_temporal(data: Data, b: Data, fanouts, seed_time: torch.Tensor, level: str, strategy="uniform"):
    """PyG's temporal rule on one disjoint batch: every node of seed i's
    subgraph (node times) or every edge (edge times) is not later than
    seed_time[i]; each destination has min(fan-out, candidates) edges, and
    with "last" the latest candidates."""
    bs = b.batch_size
    assert torch.equal(b.batch[:bs], torch.arange(bs))
    ei = torch.as_tensor(b.edge_index)
    assert torch.equal(b.batch[ei[0]], b.batch[ei[1]])
    assert torch.equal(data.edge_index[:, b.e_id], b.n_id[ei]), "every edge exists"
    limit = seed_time[b.batch]  # per node: its subgraph's seed time
    if level == "node":  # the seeds are not sampled: their own times may be later (given input_time)
        assert bool((data.time[b.n_id[bs:]] <= limit[bs:]).all()), "no node later than its seed"
    else:
        assert bool((data.edge_time[b.e_id] <= limit[ei[1]]).all()), "no edge later than its seed"
    src, dst = data.edge_index
    start = 0
    for h, count in enumerate(b.num_sampled_edges):
        lo = sum(b.num_sampled_nodes[:h])
        col = ei[1, start : start + count]
        got = torch.bincount(col - lo, minlength=b.num_sampled_nodes[h])
        for k in range(b.num_sampled_nodes[h]):
            v = int(b.n_id[lo + k])
            cutoff = int(limit[lo + k])
            into = dst == v
            times = data.time[src[into]] if level == "node" else data.edge_time[into]
            cand = times[times <= cutoff]
            want = min(fanouts[h], cand.numel()) if fanouts[h] >= 0 else cand.numel()
            assert int(got[k]) == want, f"hop {h}, node {v}: min(fan-out, candidates)"
            if strategy == "last" and want:
                mine = (col - lo) == k
                eids = b.e_id[start : start + count][mine]
                picked = data.time[src[eids]] if level == "node" else data.edge_time[eids]
                top = cand.sort(descending=True).values[:want]
                assert torch.equal(picked.sort(descending=True).values, top), f"hop {h}, node {v}: the latest"
        start += count


@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_node_time_loader(data, strategy):
    seeds = torch.arange(0, NUM_NODES, 3)
    loader = gfpyg.NeighborLoader(
        data, FANOUTS, input_nodes=seeds, batch_size=16, time_attr="time", temporal_strategy=strategy, seed=2
    )
    assert loader.disjoint, "temporal sampling is disjoint, as in PyG"
    n = 0
    for b in loader:
        check_temporal(data, b, FANOUTS, data.time[b.n_id[: b.batch_size]], "node", strategy)
        assert "seed_time" not in b  # as PyG: only input_time shows up there
        assert torch.equal(b.x, data.x[b.n_id])
        n += b.batch_size
    assert n == seeds.numel()
    loader.close()


@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_edge_time_loader_with_input_time(data, strategy):
    seeds = torch.arange(0, NUM_NODES, 2)
    input_time = torch.randint(20, 80, (seeds.numel(),), generator=torch.Generator().manual_seed(3))
    loader = gfpyg.NeighborLoader(
        data,
        FANOUTS,
        input_nodes=seeds,
        input_time=input_time,
        batch_size=25,
        shuffle=True,  # the seed times are permuted with the seeds
        time_attr="edge_time",
        temporal_strategy=strategy,
        seed=4,
    )
    for b in loader:
        assert torch.equal(b.seed_time, input_time[b.input_id])
        check_temporal(data, b, FANOUTS, b.seed_time, "edge", strategy)
    b = loader([3, 0])
    assert torch.equal(b.seed_time, input_time[[3, 0]])
    check_temporal(data, b, FANOUTS, b.seed_time, "edge", strategy)
    loader.close()


def test_temporal_sampler_in_pyg_nodeloader(data):
    seeds = torch.arange(40)
    input_time = torch.full((40,), 50)
    sampler = gfpyg.Sampler(data, FANOUTS, time_attr="time", seed=5)
    loader = NodeLoader(data, node_sampler=sampler, input_nodes=seeds, input_time=input_time, batch_size=10)
    for b in loader:
        assert torch.equal(b.seed_time, torch.full((10,), 50))
        check_temporal(data, b, FANOUTS, b.seed_time, "node")
    # without input_time: each seed's own node time
    loader = NodeLoader(data, node_sampler=sampler, input_nodes=seeds, batch_size=20)
    for b in loader:
        check_temporal(data, b, FANOUTS, data.time[b.n_id[: b.batch_size]], "node")


def test_uniform_temporal_distribution():
    """Uniform among the candidates only: 400 destinations, each with 10
    in-neighbours at times 0..9 (candidates for seed time 9) and 10 at
    times 10..19 (never); fan-out 1 should pick each time 0..9 equally."""
    k, per = 400, 20
    dst = torch.arange(k).repeat_interleave(per)
    src = k + torch.arange(k * per)
    time = torch.cat([torch.full((k,), 9), torch.arange(per).repeat(k)])
    data = Data(edge_index=torch.stack([src, dst]), time=time, num_nodes=k + k * per)
    loader = gfpyg.NeighborLoader(data, [1], input_nodes=torch.arange(k), batch_size=k, time_attr="time", seed=6)
    b = next(iter(loader))
    picked = time[b.n_id[b.batch_size :]]
    assert picked.numel() == k and int(picked.max()) <= 9
    counts = torch.bincount(picked, minlength=10).double()
    chi2 = float(((counts - k / 10) ** 2 / (k / 10)).sum())
    assert chi2 < 27.88, f"chi-square {chi2:.1f} over 9 degrees of freedom (p < 0.001)"
    loader.close()


def test_temporal_errors(data):
    with pytest.raises(ValueError, match="neither a node-level nor an edge-level"):
        gfpyg.NeighborLoader(data, FANOUTS, time_attr="nope")
    with pytest.raises(ValueError, match="neither a node-level nor an edge-level"):
        gfpyg.Sampler(data, FANOUTS, time_attr="nope")
    with pytest.raises(ValueError, match="'input_time' is given but 'time_attr' is not"):
        gfpyg.NeighborLoader(data, FANOUTS, input_time=torch.zeros(NUM_NODES, dtype=torch.int64))
    with pytest.raises(ValueError, match="needs the seeds' times: give 'input_time'"):
        gfpyg.NeighborLoader(data, FANOUTS, time_attr="edge_time")
    with pytest.raises(ValueError, match="'input_time' has 3 times for 200 seeds"):
        gfpyg.NeighborLoader(data, FANOUTS, time_attr="time", input_time=torch.zeros(3, dtype=torch.int64))
    with pytest.raises(ValueError, match="'temporal_strategy' must be 'uniform' or 'last'"):
        gfpyg.NeighborLoader(data, FANOUTS, time_attr="time", temporal_strategy="recent")
    with pytest.raises(ValueError, match="induced"):
        gfpyg.NeighborLoader(data, FANOUTS, time_attr="time", subgraph_type="induced")
    floaty = make_data()
    floaty.time = floaty.time.float()
    with pytest.raises(TypeError, match="integer timestamps"):
        gfpyg.NeighborLoader(floaty, FANOUTS, time_attr="time")
    sampler = gfpyg.Sampler(data, FANOUTS)
    from torch_geometric.sampler import NodeSamplerInput

    with pytest.raises(ValueError, match="not temporal"):
        sampler.sample_from_nodes(NodeSamplerInput(input_id=None, node=torch.tensor([1]), time=torch.tensor([3])))
    with pytest.raises(ValueError, match="'time_attr' with a graphferry.Graph is 'node' or 'edge'"):
        gfpyg.NeighborLoader(graphferry.Graph.from_pyg(data), FANOUTS, time_attr="time")


def test_graph_with_its_own_times(data):
    """A graphferry.Graph holds its times; time_attr says which, and the
    seeds' times must be given."""
    with graphferry.Graph.from_pyg(data) as graph:
        graph.set_node_time(data.time)
        with pytest.raises(ValueError, match="give 'input_time'"):
            gfpyg.NeighborLoader(graph, FANOUTS, time_attr="node")
        seeds = torch.arange(30)
        loader = gfpyg.NeighborLoader(
            graph, FANOUTS, input_nodes=seeds, input_time=data.time[seeds], time_attr="node", batch_size=30
        )
        b = next(iter(loader))
        check_temporal(data, b, FANOUTS, data.time[b.n_id[: b.batch_size]], "node")
        loader.close()


# ---------------------------------------------------------------------------
# heterogeneous temporal sampling

WRITES = ("author", "writes", "paper")
REV_WRITES = ("paper", "rev_writes", "author")
CITES = ("paper", "cites", "paper")
IN = ("author", "in", "institution")
HOPS = {WRITES: [3, 2], REV_WRITES: [2, 2], CITES: [3, 2], IN: [1, 1]}


def make_hetero(seed: int = 0) -> HeteroData:
    g = torch.Generator().manual_seed(seed)
    data = HeteroData()
    data["paper"].x = torch.randn(80, 4, generator=g)
    data["paper"].time = torch.randint(0, 50, (80,), generator=g)
    data["author"].num_nodes = 50
    data["author"].time = torch.randint(0, 50, (50,), generator=g)
    data["institution"].num_nodes = 5  # no times: never filtered out
    src, dst = torch.randint(0, 50, (240,), generator=g), torch.randint(0, 80, (240,), generator=g)
    data[WRITES].edge_index = torch.stack([src, dst])
    data[REV_WRITES].edge_index = torch.stack([dst, src])
    data[CITES].edge_index = torch.randint(0, 80, (2, 300), generator=g)
    data[IN].edge_index = torch.stack([torch.arange(50), torch.randint(0, 5, (50,), generator=g)])
    for et in (WRITES, REV_WRITES, CITES, IN):
        data[et].stamp = torch.randint(0, 50, (data[et].edge_index.size(1),), generator=g)
    return data


@pytest.fixture(scope="module")
def hdata() -> HeteroData:
    return make_hetero()


def check_hetero_temporal(data: HeteroData, b: HeteroData, seed_time: torch.Tensor, level: str, strategy="uniform"):
    bs = b["paper"].batch_size
    assert torch.equal(b["paper"].batch[:bs], torch.arange(bs))
    for nt in data.node_types:
        assert b[nt].batch.numel() == b[nt].n_id.numel(), f"{nt}: batch per node"
        if level == "node" and "time" in data[nt]:
            first = bs if nt == "paper" else 0  # past the seeds
            times, limit = data[nt].time[b[nt].n_id[first:]], seed_time[b[nt].batch[first:]]
            assert bool((times <= limit).all()), f"{nt}: not later than its seed"
    for et in data.edge_types:
        s, _, d = et
        ei = torch.as_tensor(b[et].edge_index)
        assert torch.equal(data[et].edge_index[:, b[et].e_id], torch.stack([b[s].n_id[ei[0]], b[d].n_id[ei[1]]]))
        assert torch.equal(b[s].batch[ei[0]], b[d].batch[ei[1]]), f"{et}: within one seed's subgraph"
        if level == "edge":
            limit = seed_time[b[d].batch[ei[1]]]
            assert bool((data[et].stamp[b[et].e_id] <= limit).all()), f"{et}: no edge later than its seed"
        # every destination: min(fan-out, candidates) edges of this type
        nsn, start = b[d].num_sampled_nodes, 0
        for h, count in enumerate(b[et].num_sampled_edges):
            lo = sum(nsn[:h])
            col = ei[1, start : start + count]
            got = torch.bincount(col - lo, minlength=nsn[h])
            for k in range(nsn[h]):
                v = int(b[d].n_id[lo + k])
                cutoff = int(seed_time[b[d].batch[lo + k]])
                into = data[et].edge_index[1] == v
                if level == "node":
                    times = data[s].time[data[et].edge_index[0, into]] if "time" in data[s] else None
                else:
                    times = data[et].stamp[into]
                cand = int(into.sum()) if times is None else int((times <= cutoff).sum())
                assert int(got[k]) == min(HOPS[et][h], cand), f"{et} hop {h} node {v}"
                if strategy == "last" and times is not None and got[k]:
                    eids = b[et].e_id[start : start + count][(col - lo) == k]
                    picked = data[s].time[data[et].edge_index[0, eids]] if level == "node" else data[et].stamp[eids]
                    top = times[times <= cutoff].sort(descending=True).values[: int(got[k])]
                    assert torch.equal(picked.sort(descending=True).values, top), f"{et} hop {h} node {v}: latest"
            start += count


@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_hetero_node_time(hdata, strategy):
    loader = gfpyg.NeighborLoader(
        hdata, HOPS, input_nodes=("paper", None), batch_size=20, time_attr="time", temporal_strategy=strategy, seed=1
    )
    for b in loader:
        seeds = b["paper"].n_id[: b["paper"].batch_size]
        check_hetero_temporal(hdata, b, hdata["paper"].time[seeds], "node", strategy)
    loader.close()


def test_hetero_edge_time_and_sampler(hdata):
    seeds = torch.arange(0, 80, 4)
    input_time = torch.randint(10, 40, (seeds.numel(),), generator=torch.Generator().manual_seed(2))
    loader = gfpyg.NeighborLoader(
        hdata, HOPS, input_nodes=("paper", seeds), input_time=input_time, batch_size=10, time_attr="stamp", seed=3
    )
    for b in loader:
        assert torch.equal(b["paper"].seed_time, input_time[b["paper"].input_id])
        check_hetero_temporal(hdata, b, b["paper"].seed_time, "edge")
    loader.close()
    sampler = gfpyg.Sampler(hdata, HOPS, time_attr="stamp", temporal_strategy="last", seed=4)
    nl = NodeLoader(hdata, node_sampler=sampler, input_nodes=("paper", seeds), input_time=input_time, batch_size=10)
    for b in nl:
        check_hetero_temporal(hdata, b, b["paper"].seed_time, "edge", "last")
    with pytest.raises(ValueError, match="needs the seeds' times"):
        gfpyg.NeighborLoader(hdata, HOPS, input_nodes="paper", time_attr="stamp")


def test_hetero_input_type_without_time(hdata):
    with pytest.raises(ValueError, match="input node type 'institution' has no node time 'time'"):
        gfpyg.NeighborLoader(hdata, HOPS, input_nodes="institution", time_attr="time")


def test_hetero_disjoint_without_time(hdata):
    loader = gfpyg.NeighborLoader(hdata, HOPS, input_nodes=("author", torch.tensor([4, 4, 9])), disjoint=True, seed=0)
    b = loader([0, 1, 2])
    assert b["author"].batch[:3].tolist() == [0, 1, 2]
    assert b["author"].n_id[:3].tolist() == [4, 4, 9]
    for et in hdata.edge_types:
        ei = torch.as_tensor(b[et].edge_index)
        assert torch.equal(b[et[0]].batch[ei[0]], b[et[2]].batch[ei[1]])
    loader.close()
    # through the engine's pipeline: repeated seeds, shuffled, two per batch
    seeds = torch.tensor([4, 4, 9, 1, 1, 30, 2])
    loader = gfpyg.NeighborLoader(
        hdata, HOPS, input_nodes=("author", seeds), disjoint=True, batch_size=2, shuffle=True, seed=5
    )
    got = []
    for b in loader:
        bs = b["author"].batch_size
        assert b["author"].batch[:bs].tolist() == list(range(bs))
        assert torch.equal(b["author"].n_id[:bs], seeds[b["author"].input_id])
        for nt in hdata.node_types:
            assert b[nt].batch.numel() == b[nt].n_id.numel() and bool((b[nt].batch < bs).all())
        for et in hdata.edge_types:
            ei = torch.as_tensor(b[et].edge_index)
            assert torch.equal(b[et[0]].batch[ei[0]], b[et[2]].batch[ei[1]])
        got.append(b["author"].input_id)
    assert sorted(torch.cat(got).tolist()) == list(range(seeds.numel()))
    loader.close()


def test_hetero_graph_with_its_own_times(hdata):
    """A graphferry.HeteroGraph holds its times (set_node_time per type);
    time_attr="node" says so and input_time gives the seeds' times."""
    with gfpyg.from_pyg(hdata) as hg:
        hg.set_node_time({"paper": hdata["paper"].time, "author": hdata["author"].time})
        with pytest.raises(ValueError, match="give 'input_time'"):
            gfpyg.NeighborLoader(hg, HOPS, input_nodes="paper", time_attr="node")
        seeds = torch.arange(0, 80, 5)
        loader = gfpyg.NeighborLoader(
            hg, HOPS, input_nodes=("paper", seeds), input_time=hdata["paper"].time[seeds], time_attr="node"
        )
        b = loader(torch.arange(seeds.numel()))
        check_hetero_temporal(hdata, b, b["paper"].seed_time, "node")
        loader.close()

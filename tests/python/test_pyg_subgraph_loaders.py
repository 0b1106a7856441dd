"""PyG's subgraph loaders as graphferry.pyg serves them (issue 20):
ShaDowKHopSampler, ClusterData + ClusterLoader and the GraphSAINT samplers.
PyG's own need torch_sparse or pyg-lib, neither installable here (both
pinned environments: they raise ImportError), so each is checked against
what of PyG does run (its pure-Python ClusterLoader and partition code,
``torch_geometric.utils.subgraph``), against DGL 2.1's ShaDowKHopSampler
on the same edges where DGL is installed, and against the probabilities
PyG's code defines."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Data
from torch_geometric.loader import ClusterData as PyGClusterData
from torch_geometric.loader import ClusterLoader as PyGClusterLoader
from torch_geometric.utils import subgraph

import graphferry.pyg as gp

from conftest import wait_made_ahead

pytest.importorskip("pymetis")


def directed_data(n=80, seed=11):
    """Out-hubs 0-3, in-hubs 4-7 and a sparse rest (in- and out-degrees
    differ); ``nid`` (node ids) and ``eid`` (edge ids) travel with the
    batches."""
    gen = torch.Generator().manual_seed(seed)
    src = [torch.full((30,), h) for h in range(4)] + [torch.randint(8, n, (30,), generator=gen) for _ in range(4)]
    dst = [torch.randint(8, n, (30,), generator=gen) for _ in range(4)] + [torch.full((30,), h) for h in range(4, 8)]
    src.append(torch.randint(8, n, (60,), generator=gen))
    dst.append(torch.randint(8, n, (60,), generator=gen))
    edge_index = torch.stack([torch.cat(src), torch.cat(dst)])
    e = edge_index.size(1)
    return Data(
        x=torch.randn(n, 3, generator=gen),
        y=torch.arange(n) % 5,
        nid=torch.arange(n),
        edge_index=edge_index,
        eid=torch.arange(e),
        edge_weight=torch.rand(e, generator=gen),
        num_nodes=n,
    )


def communities(k=4, size=30, seed=2):
    """k dense communities joined by a few edges, undirected."""
    gen = torch.Generator().manual_seed(seed)
    src, dst = [], []
    for c in range(k):
        s = torch.randint(0, size, (150,), generator=gen) + c * size
        d = torch.randint(0, size, (150,), generator=gen) + c * size
        src.append(s)
        dst.append(d)
    src.append(torch.randint(0, k * size, (10,), generator=gen))
    dst.append(torch.randint(0, k * size, (10,), generator=gen))
    s, d = torch.cat(src), torch.cat(dst)
    edge_index = torch.stack([torch.cat([s, d]), torch.cat([d, s])])
    n = k * size
    return Data(
        x=torch.randn(n, 4, generator=gen),
        nid=torch.arange(n),
        edge_index=edge_index,
        eid=torch.arange(edge_index.size(1)),
        num_nodes=n,
    )


def test_pygs_own_loaders_cannot_run_here():
    """Why graphferry serves them: PyG's need torch_sparse or pyg-lib. When
    they can run, this test says so and the tests below should compare with
    them."""
    data = directed_data()
    with pytest.raises(ImportError):
        PyGClusterData(data, 4, log=False)
    with pytest.raises(ImportError):
        from torch_geometric.loader import ShaDowKHopSampler

        ShaDowKHopSampler(data, 2, 3)


# ---------------------------------------------------------------------------
# GraphSAINT
# ---------------------------------------------------------------------------

SAINTS = [
    (gp.GraphSAINTNodeSampler, {}),
    (gp.GraphSAINTEdgeSampler, {}),
    (gp.GraphSAINTRandomWalkSampler, {"walk_length": 3}),
]


def check_induced_data(data, batch):
    """``batch`` is the subgraph of ``data`` induced on its nodes (as
    ``torch_geometric.utils.subgraph`` gives it), edges sorted by source
    then target, every attribute indexed to its nodes and edges."""
    nid = batch.nid
    assert torch.equal(nid, nid.unique()), "nodes in increasing id order"
    assert batch.num_nodes == nid.numel()
    ref_index, _, mask = subgraph(
        nid, data.edge_index, relabel_nodes=True, num_nodes=data.num_nodes, return_edge_mask=True
    )
    ref_eid = mask.nonzero().view(-1)
    key = ref_index[0] * nid.numel() + ref_index[1]
    order = torch.argsort(key * (data.edge_index.size(1) + 1) + ref_eid)
    assert torch.equal(batch.edge_index, ref_index[:, order])
    assert torch.equal(batch.eid, ref_eid[order])
    assert torch.equal(batch.x, data.x[nid]) and torch.equal(batch.y, data.y[nid])
    assert torch.equal(batch.edge_weight, data.edge_weight[batch.eid])


@pytest.mark.parametrize("cls,kw", SAINTS)
def test_graph_saint_batches_are_induced_subgraphs(cls, kw):
    data = directed_data()
    torch.manual_seed(0)
    loader = cls(data, batch_size=12, num_steps=5, log=False, **kw)
    assert isinstance(loader, torch.utils.data.DataLoader) and len(loader) == 5
    batches = list(loader)
    assert len(batches) == 5
    for batch in batches:
        assert type(batch) is Data and "node_norm" not in batch
        check_induced_data(data, batch)
        if cls is gp.GraphSAINTRandomWalkSampler:  # reached by walks: all but the roots have an in-edge there
            entered = torch.zeros(batch.num_nodes, dtype=torch.bool)
            entered[batch.edge_index[1]] = True
            assert int((~entered).sum()) <= 12
    torch.manual_seed(0)
    again = list(cls(data, batch_size=12, num_steps=5, log=False, **kw))
    assert all(torch.equal(a.nid, b.nid) for a, b in zip(batches, again)), "torch.manual_seed reproduces an epoch"


def inclusion(loader, n, rounds):
    count = torch.zeros(n)
    for _ in range(rounds // len(loader)):
        for batch in loader:
            count[batch.nid] += 1
    return count / rounds


@pytest.mark.parametrize("cls,kw", SAINTS)
def test_graph_saint_draws_as_pygs_code_defines(cls, kw):
    """How often each node is in a batch (400 batches) against the
    probability PyG's code defines: node sampler, the sources of uniformly
    drawn edges; edge sampler, edges in proportion to in_degree(source) +
    out_degree(target) (PyG's weights), both ends kept; random walks along
    out-edges (checked on a directed path, where walking in-edges reverses
    the profile)."""
    rounds, budget = 400, 12
    if cls is gp.GraphSAINTRandomWalkSampler:
        n, length, roots = 40, 3, 4
        edge_index = torch.stack([torch.arange(n - 1), torch.arange(1, n)])  # i -> i + 1
        data = Data(nid=torch.arange(n), edge_index=edge_index, num_nodes=n)
        torch.manual_seed(0)
        got = inclusion(cls(data, batch_size=roots, walk_length=length, num_steps=10, log=False), n, rounds)
        covers = torch.clamp(torch.arange(n), max=length) + 1.0  # roots whose walk passes v
        expected = 1 - (1 - covers / n) ** roots
    else:
        data = directed_data()
        n = data.num_nodes
        row, col = data.edge_index
        torch.manual_seed(0)
        got = inclusion(cls(data, batch_size=budget, num_steps=10, log=False), n, rounds)
        if cls is gp.GraphSAINTNodeSampler:
            p = torch.bincount(row, minlength=n).double() / row.numel()
            expected = 1 - (1 - p) ** budget
        else:
            w = torch.bincount(col, minlength=n).double()[row] + torch.bincount(row, minlength=n).double()[col]
            p_edge = w / w.sum()
            # node v is in a batch if a drawn edge has v at either end
            touch = torch.zeros(n, dtype=torch.float64).index_add_(0, row, p_edge)
            touch.index_add_(0, col, p_edge)
            touch -= torch.zeros(n, dtype=torch.float64).index_add_(0, row[row == col], p_edge[row == col])
            expected = 1 - (1 - touch) ** budget
    expected = expected.float()
    sigma = (expected * (1 - expected) / rounds).sqrt().clamp(min=0.01)
    assert float(((got - expected).abs() / sigma).max()) < 4.5, (got - expected).abs().max()


@pytest.mark.parametrize("cls,kw", SAINTS)
def test_graph_saint_norm_as_pygs(cls, kw, tmp_path):
    """sample_coverage > 0: PyG's normalisation, recomputed here from the
    same draws (the engine's, from the seed torch's generator gave the
    loader, replayed): node_norm = samples / count /
    N, edge_norm = count(source) / count(edge) clamped to 1e4, 0.1 where
    undefined; saved under PyG's file name and read back."""
    data = directed_data()
    n, coverage, steps = data.num_nodes, 5, 4
    torch.manual_seed(3)
    loader = cls(
        data, batch_size=12, num_steps=steps, sample_coverage=coverage, log=False, save_dir=str(tmp_path), **kw
    )
    torch.manual_seed(3)
    replay = cls(data, batch_size=12, num_steps=steps, log=False, **kw)
    node_count, edge_count = torch.zeros(n), torch.zeros(data.edge_index.size(1))
    samples = total = 0
    draws = replay._norm_samples()  # the engine's draws of the estimate, from the same seed
    while total < n * coverage:
        for _ in range(steps):
            node_idx, edge_idx = next(draws)
            node_count[node_idx] += 1
            edge_count[edge_idx] += 1
            total += node_idx.numel()
        samples += steps
    edge_norm = (node_count[data.edge_index[0]] / edge_count).clamp(0, 1e4)
    edge_norm[torch.isnan(edge_norm)] = 0.1
    node_count[node_count == 0] = 0.1
    assert torch.allclose(loader.node_norm, samples / node_count / n)
    assert torch.allclose(loader.edge_norm, edge_norm)
    batch = next(iter(loader))
    assert torch.equal(batch.node_norm, loader.node_norm[batch.nid])
    assert torch.equal(batch.edge_norm, loader.edge_norm[batch.eid])
    assert len(list(tmp_path.iterdir())) == 1
    reread = cls(
        data, batch_size=12, num_steps=steps, sample_coverage=coverage, log=False, save_dir=str(tmp_path), **kw
    )
    assert torch.equal(reread.node_norm, loader.node_norm)


@pytest.mark.parametrize("cls,kw", SAINTS)
def test_graph_saint_batches_are_made_ahead(cls, kw):
    """The engine makes the subgraphs on its threads: after the first
    batch, while the training thread holds no work, more batches are
    finished than were consumed; every epoch draws anew."""
    data = directed_data()
    loader = cls(data, batch_size=12, num_steps=6, log=False, **kw)
    it = iter(loader)
    first = next(it)
    engine = loader._loader
    assert wait_made_ahead(engine) >= 3
    # the engine gathers the node attributes and edge attributes too
    assert {"x", "y", "nid"} <= {name for name, _ in engine._features}
    assert {"edge_weight", "eid"} <= {name for name, _ in engine._edge_features}
    assert len(list(it)) == 5
    second = next(iter(loader))
    assert not torch.equal(first.nid, second.nid) or not torch.equal(first.eid, second.eid)
    loader.close()
    assert engine.closed
    assert len(list(loader)) == 6  # reopens


def test_graph_saint_serves_replaced_attributes():
    """Attributes replaced between epochs reach the next epoch's batches
    (the engine's copies are refreshed), node- and edge-level."""
    data = directed_data()
    loader = gp.GraphSAINTEdgeSampler(data, batch_size=12, num_steps=3, log=False)
    for batch in loader:
        check_induced_data(data, batch)
    data.x = data.x * 2 + 1
    data.edge_weight = data.edge_weight + 3
    for batch in loader:
        check_induced_data(data, batch)


def test_graph_saint_arguments():
    data = directed_data()
    loader = gp.GraphSAINTNodeSampler(
        data, batch_size=5, num_steps=2, num_workers=4, persistent_workers=True, prefetch_factor=2, log=False
    )
    assert loader.num_workers == 0 and len(list(loader)) == 2  # nothing forked
    with pytest.raises(ValueError, match="node_norm"):
        gp.GraphSAINTNodeSampler(Data(edge_index=data.edge_index, node_norm=torch.ones(80)), batch_size=5)
    with pytest.raises(ValueError, match="needs 'data.edge_index'"):
        gp.GraphSAINTEdgeSampler(Data(x=torch.ones(3, 1)), batch_size=5)


# ---------------------------------------------------------------------------
# ShaDowKHopSampler
# ---------------------------------------------------------------------------


def test_shadow_batches_are_pygs():
    """Every root its own subgraph: ``batch``/``ptr``/``root_n_id`` as PyG
    makes them, each subgraph induced on its nodes (in increasing id
    order), within ``depth`` in-hops of its root, ``y`` the roots' labels."""
    data = directed_data()
    depth, k = 2, 3
    roots = torch.tensor([9, 4, 30, 9, 55])  # a repeated root gets two subgraphs
    torch.manual_seed(0)
    loader = gp.ShaDowKHopSampler(data, depth, k, node_idx=roots, batch_size=3)
    seen = []
    for batch in loader:
        b = batch.root_n_id.numel()
        assert torch.equal(batch.ptr[1:] - batch.ptr[:-1], torch.bincount(batch.batch, minlength=b))
        assert torch.equal(batch.y, data.y[batch.nid[batch.root_n_id]])
        assert torch.equal(batch.x, data.x[batch.nid])
        for g in range(b):
            lo, hi = int(batch.ptr[g]), int(batch.ptr[g + 1])
            nid = batch.nid[lo:hi]
            root = int(batch.nid[batch.root_n_id[g]])
            seen.append(root)
            assert lo <= int(batch.root_n_id[g]) < hi and torch.equal(nid, nid.unique())
            mask = (batch.edge_index[0] >= lo) & (batch.edge_index[0] < hi)
            part = Data(
                nid=nid,
                num_nodes=hi - lo,
                edge_index=batch.edge_index[:, mask] - lo,
                eid=batch.eid[mask],
                x=batch.x[lo:hi],
                y=data.y[nid],
                edge_weight=batch.edge_weight[mask],
            )
            check_induced_data(data, part)
            assert bool(((batch.edge_index[1][mask] >= lo) & (batch.edge_index[1][mask] < hi)).all())
            # within depth in-hops of the root, at most k new in-neighbours a node
            reach = {root}
            frontier = {root}
            for _ in range(depth):
                frontier = {int(s) for s, t in data.edge_index.t().tolist() if t in frontier}
                reach |= frontier
            assert set(nid.tolist()) <= reach
            assert nid.numel() <= 1 + k + k * k
    assert seen == roots.tolist()
    (alone,) = list(gp.ShaDowKHopSampler(data, 0, k, node_idx=roots, batch_size=5))  # depth 0: the roots
    assert alone.nid.tolist() == roots.tolist() and alone.edge_index.size(1) == 0
    with pytest.raises(ValueError, match="'depth' must be an int >= 0"):
        gp.ShaDowKHopSampler(data, -1, 3)


def test_shadow_batches_are_made_ahead_and_reproducible():
    """The engine's threads sample, induce and gather ahead of the training
    loop; torch.manual_seed repeats the epochs (the seed and the shuffle are
    torch's draws), and the next epoch samples anew."""
    data = directed_data()
    torch.manual_seed(1)
    loader = gp.ShaDowKHopSampler(data, 2, 3, batch_size=8, shuffle=True)
    it = iter(loader)
    first = [next(it)]
    engine = loader._loader
    assert wait_made_ahead(engine) >= 3
    assert {"x", "y"} <= {name for name, _ in engine._features}
    first += list(it)
    second = list(loader)
    torch.manual_seed(1)
    again = gp.ShaDowKHopSampler(data, 2, 3, batch_size=8, shuffle=True)
    for epoch in (first, second):
        mine = list(again)
        assert len(mine) == len(epoch) == 10
        for a, b in zip(mine, epoch):
            assert torch.equal(a.nid, b.nid) and torch.equal(a.edge_index, b.edge_index)
    assert any(not torch.equal(a.nid, b.nid) for a, b in zip(first, second))
    loader.close()


def test_shadow_as_dgls_shadow_on_the_same_edges():
    """Taking every neighbour (fan-out -1 / num_neighbors >= max degree),
    PyG's ShaDow subgraph of a root is DGL's ShaDowKHopSampler's batch of
    that root alone: the same nodes and edges."""
    dgl = pytest.importorskip("dgl")
    data = directed_data()
    g = dgl.graph((data.edge_index[0], data.edge_index[1]), num_nodes=data.num_nodes)
    roots = torch.tensor([9, 4, 30, 55, 0, 12])
    ours = gp.ShaDowKHopSampler(data, 2, 1000, node_idx=roots, batch_size=4)
    got = []
    for batch in ours:
        for gi in range(batch.root_n_id.numel()):
            lo, hi = int(batch.ptr[gi]), int(batch.ptr[gi + 1])
            mask = (batch.edge_index[0] >= lo) & (batch.edge_index[0] < hi)
            got.append((set(batch.nid[lo:hi].tolist()), set(batch.eid[mask].tolist())))
    sampler = dgl.dataloading.ShaDowKHopSampler([-1, -1])
    theirs = [
        (set(sg.ndata[dgl.NID].tolist()), set(sg.edata[dgl.EID].tolist()))
        for _, _, sg in dgl.dataloading.DataLoader(g, roots, sampler, batch_size=1)
    ]
    assert got == theirs
    assert any(len(edges) > 0 for _, edges in got)


# ---------------------------------------------------------------------------
# ClusterData / ClusterLoader
# ---------------------------------------------------------------------------


def assert_same_data(a, b):
    assert set(a.keys()) == set(b.keys())
    for key in a.keys():
        va, vb = a[key], b[key]
        assert torch.equal(va, vb) if isinstance(va, torch.Tensor) else va == vb, key


@pytest.mark.parametrize("sparse_format", ["csr", "csc"])
def test_cluster_loader_as_pygs_own(sparse_format):
    """graphferry's ClusterData in PyG's own ClusterLoader and in
    graphferry's (the engine's induced subgraphs): the same batches, node
    for node and edge for edge, shuffled or not; and graphferry's loader on
    a ClusterData PyG's own code partitioned (its pure-Python partition
    step, given a cluster vector). A random graph: many edges between
    clusters, whose order in a batch of shuffled clusters is PyG's."""
    data = directed_data()
    cd = gp.ClusterData(data, num_parts=6, log=False, sparse_format=sparse_format)
    assert isinstance(cd, PyGClusterData) and len(cd) == 6
    for batch_size in (1, 2, 4):
        ours = list(gp.ClusterLoader(cd, batch_size=batch_size))
        theirs = list(PyGClusterLoader(cd, batch_size=batch_size))
        assert len(ours) == len(theirs) == -(-6 // batch_size)
        for a, b in zip(ours, theirs):
            assert_same_data(a, b)
    torch.manual_seed(4)
    ours = list(gp.ClusterLoader(cd, batch_size=3, shuffle=True))
    torch.manual_seed(4)
    theirs = list(PyGClusterLoader(cd, batch_size=3, shuffle=True))
    for a, b in zip(ours, theirs):
        assert_same_data(a, b)
    assert torch.equal(torch.cat([b.nid for b in ours]).sort().values, torch.arange(data.num_nodes))
    # PyG's own partition code on a cluster vector of ours: served the same
    pyg = PyGClusterData.__new__(PyGClusterData)
    pyg.num_parts, pyg.recursive, pyg.keep_inter_cluster_edges = 5, False, False
    pyg.sparse_format = sparse_format
    pyg.partition = pyg._partition(data.edge_index, torch.arange(data.num_nodes) % 5)
    pyg.data = pyg._permute_data(data, pyg.partition)
    for a, b in zip(gp.ClusterLoader(pyg, batch_size=2), PyGClusterLoader(pyg, batch_size=2)):
        assert_same_data(a, b)


def test_cluster_data_metis_partition():
    """Every node in exactly one cluster; METIS cuts far fewer edges than a
    random split of the same sizes (the communities are its clusters); a
    cluster as PyG's ClusterData[i] gives it is a batch of one cluster."""
    data = communities()
    n = data.num_nodes
    for recursive in (False, True):
        cd = gp.ClusterData(data, num_parts=4, recursive=recursive, log=False)
        part = cd.partition
        assert torch.equal(part.node_perm.sort().values, torch.arange(n))
        cluster = torch.empty(n, dtype=torch.int64)
        for i in range(4):
            cluster[part.node_perm[part.partptr[i] : part.partptr[i + 1]]] = i
        row, col = data.edge_index
        cut = int((cluster[row] != cluster[col]).sum())
        shuffled = cluster[torch.randperm(n, generator=torch.Generator().manual_seed(0))]
        assert cut * 5 < int((shuffled[row] != shuffled[col]).sum())
        one = gp.ClusterLoader(cd, batch_size=1)
        for i, batch in enumerate(one):
            assert_same_data(batch, cd[i])
    with pytest.raises(ValueError, match="cannot split 120 nodes into 500 parts"):
        gp.ClusterData(data, num_parts=500, log=False)


def test_cluster_loader_batches_are_made_ahead():
    """The engine's threads make the batches (the subgraph and the
    attributes it holds) ahead of the training loop; a replaced attribute
    reaches the next epoch."""
    data = directed_data()
    cd = gp.ClusterData(data, num_parts=8, log=False)
    loader = gp.ClusterLoader(cd, batch_size=1)
    it = iter(loader)
    next(it)
    engine = loader._loader
    assert wait_made_ahead(engine) >= 3
    assert {"x", "y"} <= {name for name, _ in engine._features}
    assert "edge_weight" in {name for name, _ in engine._edge_features}
    assert len(list(it)) == 7
    cd.data.x = cd.data.x + 1
    cd.data.edge_weight = cd.data.edge_weight * 2
    for ours, theirs in zip(loader, PyGClusterLoader(cd, batch_size=1)):
        assert_same_data(ours, theirs)
    loader.close()

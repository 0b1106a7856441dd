"""DGL 2.1's SAINTSampler through graphferry.dgl.DataLoader (issue 20): the
node, edge and walk draws made as DGL makes them (walks by the engine), each
batch the subgraph the engine induces on them, against DGL's own
DataLoader on the same graph: the structure exactly (every batch is
g.subgraph of its nodes, with the graph's data), the draws in distribution
(how often each node is in a batch, against DGL's frequencies and the
probabilities DGL defines)."""

from __future__ import annotations

import pytest
import torch

dgl = pytest.importorskip("dgl")

import graphferry  # noqa: E402
import graphferry.dgl as gfdgl  # noqa: E402
from graphferry.errors import InvalidArgumentError  # noqa: E402

from conftest import wait_made_ahead  # noqa: E402

SAINT = dgl.dataloading.SAINTSampler


def directed_graph(idtype=torch.int64):
    """80 nodes: out-hubs (0-3, many out-edges), in-hubs (4-7, many
    in-edges) and a sparse rest, so that in- and out-degrees differ and a
    draw by the wrong one shows."""
    gen = torch.Generator().manual_seed(11)
    n = 80
    src = [torch.full((30,), h) for h in range(4)] + [torch.randint(8, n, (30,), generator=gen) for _ in range(4)]
    dst = [torch.randint(8, n, (30,), generator=gen) for _ in range(4)] + [torch.full((30,), h) for h in range(4, 8)]
    src.append(torch.randint(8, n, (60,), generator=gen))
    dst.append(torch.randint(8, n, (60,), generator=gen))
    g = dgl.graph((torch.cat(src), torch.cat(dst)), num_nodes=n, idtype=idtype)
    g.ndata["feat"] = torch.randn(n, 3, generator=gen)
    g.ndata["label"] = torch.arange(n)
    g.edata["w"] = torch.randn(g.num_edges(), generator=gen)
    return g


MODES = [("node", 12), ("edge", 10), ("walk", (4, 3))]


def check_induced(g, sg):
    """``sg`` is exactly ``g.subgraph`` of its nodes, with g's data."""
    nid = sg.ndata[dgl.NID]
    assert torch.equal(nid, nid.unique()), "nodes in increasing id order, distinct"
    ref = g.subgraph(nid)
    assert sg.idtype == g.idtype
    assert torch.equal(torch.stack(sg.edges()), torch.stack(ref.edges()))
    assert torch.equal(sg.edata[dgl.EID], ref.edata[dgl.EID])
    assert torch.equal(sg.ndata["feat"], g.ndata["feat"][nid.long()])
    assert torch.equal(sg.ndata["label"], g.ndata["label"][nid.long()])
    assert torch.equal(sg.edata["w"], g.edata["w"][sg.edata[dgl.EID].long()])


@pytest.mark.parametrize("idtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("mode,budget", MODES)
def test_saint_batches_are_dgls_subgraphs(mode, budget, idtype):
    g = directed_graph(idtype)
    sampler = SAINT(mode, budget, prefetch_ndata=["feat"], prefetch_edata=["w"])
    for batch_size, drop_last in ((1, False), (3, False), (3, True)):
        ours = gfdgl.DataLoader(g, torch.arange(7), sampler, batch_size=batch_size, drop_last=drop_last, seed=5)
        theirs = dgl.dataloading.DataLoader(g, torch.arange(7), sampler, batch_size=batch_size, drop_last=drop_last)
        mine = list(ours)
        if mode == "walk" and idtype == torch.int32:
            # DGL 2.1's walk draw passes int64 roots to an int32 graph and fails
            with pytest.raises(dgl.DGLError, match="data type torch.int32"):
                list(theirs)
            dgls = [None] * len(theirs)
        else:
            dgls = list(theirs)
        assert len(mine) == len(dgls) == len(ours) == len(theirs)
        for sg, ref in zip(mine, dgls):
            check_induced(g, sg)
            if ref is not None:
                assert set(sg.ndata.keys()) == set(ref.ndata.keys())
                assert set(sg.edata.keys()) == set(ref.edata.keys())
            assert sg.num_nodes() > 0
            if mode == "walk":
                assert sg.num_nodes() <= budget[0] * (budget[1] + 1)
                # reached by walks: every node but the roots has the node
                # its walk came from in the subgraph (an in-edge there)
                assert int((sg.in_degrees() == 0).sum()) <= budget[0]
            elif mode == "node":
                assert sg.num_nodes() <= budget
            else:
                assert sg.num_nodes() <= 2 * budget


def inclusion(batches, n):
    """How often each node is in a batch."""
    count = torch.zeros(n)
    for sg in batches:
        count[sg.ndata[dgl.NID].long()] += 1
    return count / len(batches)


@pytest.mark.parametrize("mode,budget", MODES)
def test_saint_draws_as_dgls(mode, budget):
    """How often each node is drawn, ours against DGL's (400 batches each):
    within a few standard deviations everywhere, where drawing by in-degree
    instead of out-degree, uniformly, or walking along in-edges is far off.
    The node mode is compared with DGL's probabilities as well."""
    g = directed_graph()
    n, rounds = g.num_nodes(), 400
    sampler = SAINT(mode, budget)
    torch.manual_seed(0)
    dgl.seed(0)  # DGL's walks draw from DGL's generator
    theirs = inclusion(list(dgl.dataloading.DataLoader(g, torch.arange(rounds), sampler)), n)
    ours = inclusion(list(gfdgl.DataLoader(g, torch.arange(rounds), sampler, seed=1)), n)
    p = (theirs + ours) / 2
    sigma = (p * (1 - p) * 2 / rounds).sqrt().clamp(min=0.01)
    assert float(((ours - theirs).abs() / sigma).max()) < 4.5, (ours - theirs).abs().max()
    if mode == "node":
        prob = g.out_degrees().float().clamp(min=1)
        expected = 1 - (1 - prob / prob.sum()) ** budget
        sigma = (expected * (1 - expected) / rounds).sqrt().clamp(min=0.01)
        assert float(((ours - expected).abs() / sigma).max()) < 4.5
    # the hubs tell the draws apart: far more often in a batch than the rest
    # (node, edge) or never reached from the sparse rest (walk: 4-7 have no
    # out-edges to follow, 0-3 no in-edges)
    if mode == "walk":
        assert float(ours[4:8].mean()) > float(ours[0:4].mean())


def test_saint_reproducible_from_seed_and_epochs_differ():
    g = directed_graph()
    for mode, budget in MODES:
        sampler = SAINT(mode, budget)
        a = gfdgl.DataLoader(g, torch.arange(4), sampler, seed=3)
        b = gfdgl.DataLoader(g, torch.arange(4), sampler, seed=3)
        first = [sg.ndata[dgl.NID] for sg in a]
        assert all(torch.equal(x, y.ndata[dgl.NID]) for x, y in zip(first, b))
        second = [sg.ndata[dgl.NID] for sg in a]  # the next epoch: new draws
        assert any(not torch.equal(x, y) for x, y in zip(first, second))
        assert any(not torch.equal(first[0], x) for x in first[1:])  # batches differ within an epoch


def test_saint_on_a_graphferry_graph_and_errors():
    g = directed_graph()
    src, dst = g.edges(order="eid")
    graph = graphferry.Graph.from_coo(src, dst, num_nodes=g.num_nodes())
    graph.set_node_data("feat", g.ndata["feat"])
    for mode, budget in MODES:
        loader = gfdgl.DataLoader(graph, torch.arange(3), SAINT(mode, budget, prefetch_ndata=["feat"]), seed=2)
        for sg in loader:
            nid = sg.ndata[dgl.NID]
            ref = g.subgraph(nid)
            assert torch.equal(torch.stack(sg.edges()), torch.stack(ref.edges()))
            assert torch.equal(sg.edata[dgl.EID], ref.edata[dgl.EID])
            assert torch.equal(sg.ndata["feat"], g.ndata["feat"][nid])
    with pytest.raises(InvalidArgumentError, match="no ndata field"):
        gfdgl.DataLoader(g, torch.arange(3), SAINT("node", 5, prefetch_ndata=["nope"]))
    with pytest.raises(InvalidArgumentError, match="no edata field"):
        gfdgl.DataLoader(g, torch.arange(3), SAINT("node", 5, prefetch_edata=["nope"]))
    with pytest.raises(ValueError, match="prefetch_edata needs the dgl.DGLGraph"):
        gfdgl.DataLoader(graph, torch.arange(3), SAINT("node", 5, prefetch_edata=["w"]))
    with pytest.raises(TypeError, match="num_roots, walk_length"):
        gfdgl.DataLoader(g, torch.arange(3), SAINT("walk", 5))
    with pytest.raises(TypeError, match="budget must be an int"):
        gfdgl.DataLoader(g, torch.arange(3), SAINT("node", 2.5))
    with pytest.raises(NotImplementedError, match="homogeneous graph in one process"):
        hg = dgl.heterograph({("a", "r", "b"): (torch.tensor([0]), torch.tensor([0]))})
        gfdgl.DataLoader(hg, {"a": torch.arange(1)}, SAINT("node", 5))


def test_saint_subclass_draw_is_called():
    """A SAINTSampler subclass with a draw of its own: its nodes, the
    engine's subgraph."""

    class Fixed(SAINT):
        def node_sampler(self, g):
            return torch.tensor([9, 3, 40, 3])

    g = directed_graph()
    (sg,) = list(gfdgl.DataLoader(g, torch.arange(1), Fixed("node", 5)))
    assert sg.ndata[dgl.NID].tolist() == [3, 9, 40]
    check_induced(g, sg)


def test_saint_subclass_draw_runs_on_the_engines_threads_ahead():
    """A subclass's own draw is an engine input (a callback): called on the
    engine's threads while the training loop holds a batch, its exception
    raised where the batch it failed would have come, chained to the
    engine's error naming that batch."""
    import threading

    calls = []

    class Recording(SAINT):
        def node_sampler(self, g):
            calls.append(threading.get_ident())
            return torch.tensor([9, 3, 40, 3])

    g = directed_graph()
    loader = gfdgl.DataLoader(g, torch.arange(6), Recording("node", 5))
    it = iter(loader)
    next(it)
    assert wait_made_ahead(loader) >= 3
    assert calls and threading.get_ident() not in calls
    assert len(list(it)) == 5
    loader.close()

    class Failing(SAINT):
        def node_sampler(self, g):
            raise LookupError("no nodes today")

    loader = gfdgl.DataLoader(g, torch.arange(3), Failing("node", 5))
    with pytest.raises(LookupError, match="no nodes today") as err:
        next(iter(loader))
    assert "batch 0" in str(err.value.__cause__)
    loader.close()


def test_saint_use_ddp_splits_the_placeholders(tmp_path):
    import torch.distributed as dist

    g = directed_graph()
    dist.init_process_group("gloo", init_method=f"file://{tmp_path}/store", rank=0, world_size=1)
    try:
        loader = gfdgl.DataLoader(g, torch.arange(5), SAINT("edge", 6), use_ddp=True, batch_size=2)
        assert len(loader) == len(list(loader)) == 3
    finally:
        dist.destroy_process_group()


def test_saint_batches_are_made_ahead():
    """The engine makes the batches on its threads, ahead of the training
    loop: after the first batch is taken and the loop idles, the loader
    stage has passed on more batches than were consumed (the queue filled
    while the training thread did nothing)."""
    g = directed_graph()
    loader = gfdgl.DataLoader(g, torch.arange(20), SAINT("edge", 10, prefetch_ndata=["feat"]), seed=4)
    it = iter(loader)
    next(it)
    engine = loader._subgraphs._loader
    assert wait_made_ahead(engine) >= 3  # 1 consumed, 2 more made ahead (queue capacity 2)
    assert len(list(it)) == 19
    loader.close()
    assert engine.closed

"""graphferry.pyg as a drop-in for PyG's loaders (issue 20): every argument of
PyG's NeighborLoader and NodeLoader, transform and transform_sampler_output
applied where PyG applies them, graphs without edges, and PyG's exceptions
for bad input.

PyG's own NeighborLoader cannot sample here (no pyg-lib), so the references
are PyG's NodeLoader (its own filter_fn, transforms and __call__) driven by
graphferry.pyg.Sampler with the same seed: the same random streams, call
after call."""

from __future__ import annotations

import inspect

import pytest
import torch

pytest.importorskip("torch_geometric")

from torch_geometric.data import Data, HeteroData  # noqa: E402
from torch_geometric.loader import LinkNeighborLoader as PyGLink  # noqa: E402
from torch_geometric.loader import NeighborLoader as PyGNeighborLoader  # noqa: E402
from torch_geometric.loader import NodeLoader  # noqa: E402
from torch_geometric.sampler import HeteroSamplerOutput, SamplerOutput  # noqa: E402
from torch_geometric.sampler import NeighborSampler as PyGNeighborSampler  # noqa: E402

import graphferry.pyg as gfpyg  # noqa: E402

NUM_NODES, NUM_EDGES = 80, 400
FANOUTS = [3, 2]
WRITES, CITES = ("author", "writes", "paper"), ("paper", "cites", "paper")


def make_data() -> Data:
    g = torch.Generator().manual_seed(0)
    return Data(
        x=torch.randn(NUM_NODES, 4, generator=g),
        y=torch.randint(0, 5, (NUM_NODES,), generator=g),
        edge_index=torch.randint(0, NUM_NODES, (2, NUM_EDGES), generator=g),
        edge_attr=torch.randn(NUM_EDGES, 2, generator=g),
    )


def make_hetero() -> HeteroData:
    g = torch.Generator().manual_seed(1)
    data = HeteroData()
    data["paper"].x = torch.randn(30, 4, generator=g)
    data["author"].x = torch.randn(20, 3, generator=g)
    data[WRITES].edge_index = torch.stack(
        [torch.randint(0, 20, (60,), generator=g), torch.randint(0, 30, (60,), generator=g)]
    )
    data[CITES].edge_index = torch.randint(0, 30, (2, 90), generator=g)
    return data


def assert_same(a, b) -> None:
    """The same stores, keys and values (tensors, lists, ints)."""
    assert type(a) is type(b)
    for sa, sb in zip(a.stores, b.stores):
        assert sorted(sa.keys()) == sorted(sb.keys())
        for key in sa.keys():
            va, vb = sa[key], sb[key]
            if isinstance(va, torch.Tensor):
                assert torch.equal(torch.as_tensor(va), torch.as_tensor(vb)), key
            else:
                assert va == vb, key


def first_nodes(out: SamplerOutput) -> SamplerOutput:
    """A transform_sampler_output that changes the sampled nodes: keeps the
    first half of them and the edges among them, and marks input_id."""
    keep = max(1, out.node.numel() // 2)
    mask = (out.row < keep) & (out.col < keep)
    return SamplerOutput(
        out.node[:keep],
        out.row[mask],
        out.col[mask],
        out.edge[mask],
        metadata=(out.metadata[0] + 1000, out.metadata[1]),
    )


def mark(batch):
    batch.marked = True
    return batch


def test_takes_every_argument_of_pygs_loaders():
    ours = set(inspect.signature(gfpyg.NeighborLoader.__init__).parameters)
    for cls in (PyGNeighborLoader, NodeLoader):
        theirs = set(inspect.signature(cls.__init__).parameters) - {"node_sampler", "kwargs"}
        assert theirs <= ours, theirs - ours
    data = make_data()
    loader = gfpyg.NeighborLoader(
        data,
        FANOUTS,
        None,  # input_nodes, input_time, replace, subgraph_type, disjoint, ... in PyG's order
        None,
        False,
        "directional",
        False,
        "uniform",
        None,
        None,
        None,
        None,
        True,  # is_sorted
        True,  # filter_per_worker
        None,
        True,
        batch_size=32,
        num_workers=2,
        pin_memory=True,
        persistent_workers=True,
        prefetch_factor=2,
        timeout=0,
        worker_init_fn=None,
        generator=torch.Generator().manual_seed(4),
        collate_fn=None,  # PyG's loaders drop it
    )
    assert loader._options.num_threads == 2
    assert torch.equal(torch.cat([b.n_id[: b.batch_size] for b in loader]), torch.arange(NUM_NODES))
    loader.close()
    with pytest.raises(TypeError, match="'transform' must be callable"):
        gfpyg.NeighborLoader(data, FANOUTS, transform=3)
    with pytest.raises(TypeError, match="'filter_per_worker' must be a bool"):
        gfpyg.NeighborLoader(data, FANOUTS, filter_per_worker="yes")
    with pytest.raises(TypeError, match="'is_sorted' must be a bool"):
        gfpyg.NeighborLoader(data, FANOUTS, is_sorted=None)
    with pytest.raises(ValueError, match="'sampler'"):
        gfpyg.NeighborLoader(data, FANOUTS, sampler=[0, 1])
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        gfpyg.NeighborLoader(data, FANOUTS, bogus=1)


@pytest.mark.parametrize("tso", [None, "same_nodes", "other_nodes"])
def test_transforms_as_pyg_applies_them(tso):
    data = make_data()
    transform_sampler_output = {
        None: None,
        "same_nodes": lambda out: SamplerOutput(out.node, out.row, out.col, out.edge, metadata=out.metadata),
        "other_nodes": first_nodes,
    }[tso]
    nodes = torch.tensor([5, 17, 3, 60, 42, 8])
    kwargs = dict(input_nodes=nodes, batch_size=3, transform=mark, transform_sampler_output=transform_sampler_output)
    ours = gfpyg.NeighborLoader(data, FANOUTS, seed=11, **kwargs)
    theirs = NodeLoader(data, node_sampler=gfpyg.Sampler(data, FANOUTS, seed=11), **kwargs)
    for index in ([0, 2, 3], [1, 4]):
        a, b = ours(index), theirs(index)
        assert_same(a, b)
        assert a.marked and torch.equal(a.x, data.x[a.n_id])
    # the engine's own epoch: the transforms applied to every batch, the
    # features those of the nodes the transform kept
    for batch in ours:
        assert batch.marked and torch.equal(batch.x, data.x[batch.n_id])
        assert torch.equal(batch.edge_attr, data.edge_attr[batch.e_id])
        if tso == "other_nodes":
            assert bool((batch.input_id >= 1000).all())
    ours.close()


def test_transform_sampler_output_on_a_hetero_graph():
    data = make_hetero()

    def tso(out: HeteroSamplerOutput) -> HeteroSamplerOutput:
        out.metadata = (out.metadata[0] * 2, out.metadata[1])
        return out

    kwargs = dict(input_nodes=("paper", torch.arange(10)), batch_size=4, transform=mark, transform_sampler_output=tso)
    ours = gfpyg.NeighborLoader(data, [2, 2], seed=5, **kwargs)
    theirs = NodeLoader(data, node_sampler=gfpyg.Sampler(data, [2, 2], seed=5), **kwargs)
    a, b = ours([1, 3]), theirs([1, 3])
    assert_same(a, b)
    assert torch.equal(a["paper"].input_id, torch.tensor([2, 6])) and a.marked
    bad = gfpyg.NeighborLoader(data, [2], input_nodes="paper", transform_sampler_output=lambda out: None)
    with pytest.raises(TypeError, match="invalid type"):
        bad([0])
    ours.close()
    bad.close()


def test_neighbor_sampler_replaces_the_sampling_arguments():
    data = make_data()
    sampler = gfpyg.Sampler(data, [4], seed=3, disjoint=True)
    given = gfpyg.NeighborLoader(data, [1, 1], neighbor_sampler=sampler, batch_size=5)
    direct = gfpyg.NeighborLoader(data, [4], seed=3, disjoint=True, batch_size=5)
    assert_same(given([0, 1, 2]), direct([0, 1, 2]))
    with pytest.warns(UserWarning):  # PyG's warning without pyg-lib
        theirs = PyGNeighborSampler(data, [2, 1], disjoint=True, replace=True)
    from_pyg = gfpyg.NeighborLoader(data, [1], neighbor_sampler=theirs, seed=2)
    same = gfpyg.NeighborLoader(data, [2, 1], disjoint=True, replace=True, seed=2)
    assert_same(from_pyg([7, 9]), same([7, 9]))
    with pytest.raises(ValueError, match="samples another graph"):
        gfpyg.NeighborLoader(make_data(), [1], neighbor_sampler=sampler)
    with pytest.raises(TypeError, match="'neighbor_sampler' must be"):
        gfpyg.NeighborLoader(data, [1], neighbor_sampler=object())
    for loader in (given, direct, from_pyg, same):
        loader.close()


def test_input_id_as_nodeloaders():
    data = make_data()
    nodes, ids = torch.tensor([3, 9, 27]), torch.tensor([100, 200, 300])
    ours = gfpyg.NeighborLoader(data, FANOUTS, input_nodes=nodes, input_id=ids, batch_size=2, seed=1)
    theirs = NodeLoader(data, gfpyg.Sampler(data, FANOUTS, seed=1), input_nodes=nodes, input_id=ids, batch_size=2)
    assert_same(ours([2, 0]), theirs([2, 0]))
    assert torch.equal(torch.cat([b.input_id for b in ours]), ids)
    ours.close()


@pytest.mark.parametrize("edges", ["no_edge_index", "no_edges"])
def test_a_graph_without_edges_gives_the_seeds_alone(edges):
    g = torch.Generator().manual_seed(2)
    data = Data(x=torch.randn(10, 3, generator=g), y=torch.arange(10))
    if edges == "no_edges":
        data.edge_index = torch.empty(2, 0, dtype=torch.int64)
    ours = gfpyg.NeighborLoader(data, FANOUTS, batch_size=4, shuffle=True, seed=1)
    seen = []
    for batch in ours:
        assert batch.n_id.numel() == batch.batch_size and batch.num_sampled_nodes == [batch.batch_size, 0, 0]
        assert batch.e_id.numel() == 0 and torch.equal(batch.x, data.x[batch.n_id])
        # PyG's filter_data: a Data without edge_index gives batches without one
        assert ("edge_index" in batch) == (edges == "no_edges")
        seen.append(batch.n_id)
    assert torch.equal(torch.cat(seen).sort().values, torch.arange(10))
    for disjoint in (False, True):
        mine = gfpyg.NeighborLoader(data, FANOUTS, batch_size=4, seed=1, disjoint=disjoint)
        theirs = NodeLoader(data, gfpyg.Sampler(data, FANOUTS, seed=1, disjoint=disjoint), batch_size=4)
        assert_same(mine([3, 0, 7]), theirs([3, 0, 7]))
        mine.close()
    ours.close()


def test_a_hetero_graph_without_edge_types_gives_the_seeds_alone():
    data = HeteroData()
    data["a"].x = torch.randn(5, 2)
    data["b"].x = torch.randn(3, 1)
    for num_neighbors in ([2, 2], {}):
        ours = gfpyg.NeighborLoader(data, num_neighbors, input_nodes="a", batch_size=2, seed=4)
        theirs = NodeLoader(data, gfpyg.Sampler(data, num_neighbors, seed=4), input_nodes="a", batch_size=2)
        assert_same(ours([4, 1]), theirs([4, 1]))
        batches = list(ours)
        assert torch.equal(torch.cat([b["a"].n_id for b in batches]), torch.arange(5))
        for b in batches:
            assert b["a"].n_id.numel() == b["a"].batch_size and b["b"].n_id.numel() == 0
            assert torch.equal(b["a"].x, data["a"].x[b["a"].n_id]) and b["b"].x.shape == (0, 1)
            assert b["a"].num_sampled_nodes[0] == b["a"].batch_size and sum(b["a"].num_sampled_nodes[1:]) == 0
        ours.close()
    for kind in ("bidirectional", "induced"):
        batch = gfpyg.NeighborLoader(data, [2], input_nodes=("b", torch.tensor([2, 0])), subgraph_type=kind)([0, 1])
        assert torch.equal(batch["b"].n_id, torch.tensor([2, 0])) and batch["a"].n_id.numel() == 0


def _raised(make) -> BaseException:
    with pytest.raises(Exception) as info:
        make()
    return info.value


def test_bad_input_raises_what_pyg_raises():
    """The same exception type as PyG's own code raises for the same input,
    with a message that says the same (a word in common)."""
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader
    from torch_geometric.sampler import NumNeighbors

    data, hetero = make_data(), make_hetero()
    data.t = torch.arange(NUM_NODES)
    unequal = {WRITES: [2, 2], CITES: [2]}

    def pyg_hops():
        num_neighbors = NumNeighbors(unequal)
        num_neighbors.get_mapped_values(hetero.edge_types)
        return num_neighbors.num_hops

    cases = [
        # PyG checks the hops when it samples (NumNeighbors.num_hops); graphferry when the loader is made
        (lambda: gfpyg.NeighborLoader(hetero, unequal, input_nodes="paper"), pyg_hops, "hops"),
        (lambda: gfpyg.Sampler(hetero, unequal), pyg_hops, "hops"),
        (lambda: gfpyg.NeighborLoader([1, 2], [2]), lambda: PyGNeighborLoader([1, 2], [2]), "Expected a 'Data'"),
        (lambda: gfpyg.Sampler(3, [2]), lambda: PyGNeighborSampler(3, [2]), "Expected a 'Data'"),
        (lambda: gfpyg.LinkNeighborLoader("x", [2]), lambda: PyGLinkNeighborLoader("x", [2]), "Expected a 'Data'"),
        (
            lambda: gfpyg.NeighborLoader(data, [2], input_time=torch.zeros(NUM_NODES)),
            lambda: PyGNeighborLoader(data, [2], input_time=torch.zeros(NUM_NODES)),
            "'time_attr'",
        ),
        (
            lambda: gfpyg.LinkNeighborLoader(data, [2], time_attr="t"),
            lambda: PyGLinkNeighborLoader(data, [2], time_attr="t"),
            "'edge_label_time'",
        ),
        (
            lambda: gfpyg.LinkNeighborLoader(data, [2], edge_label_time=torch.zeros(NUM_EDGES)),
            lambda: PyGLinkNeighborLoader(data, [2], edge_label_time=torch.zeros(NUM_EDGES)),
            "'time_attr'",
        ),
        (
            lambda: gfpyg.LinkNeighborLoader(data, [2], neg_sampling=("binary", -1)),
            lambda: PyGLinkNeighborLoader(data, [2], neg_sampling=("binary", -1)),
            "positive",
        ),
    ]
    for ours, theirs, words in cases:
        mine, pygs = _raised(ours), _raised(theirs)
        assert isinstance(mine, type(pygs)), (mine, pygs)
        assert words.lower() in str(mine).lower() and words.lower() in str(pygs).lower(), (mine, pygs)


# ---------------------------------------------------------------------------
# graphferry.pyg.Sampler inside PyG's own LinkNeighborLoader / LinkLoader


@pytest.mark.parametrize("neg", [None, "binary", ("binary", 2), ("triplet", 3)])
@pytest.mark.parametrize("labels", [False, True])
def test_sample_from_edges_inside_pygs_link_loaders(neg, labels):
    from torch_geometric.loader import LinkLoader
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    data = make_data()
    pairs = data.edge_index[:, :40]
    label = torch.randint(0, 2, (40,), generator=torch.Generator().manual_seed(6)) if labels else None
    if labels and neg is not None and "triplet" in str(neg):
        with pytest.raises(ValueError, match="triplet"):  # PyG's own check, before sampling
            PyGLinkNeighborLoader(data, FANOUTS, edge_label_index=pairs, edge_label=label, neg_sampling=neg)
        return
    kwargs = dict(edge_label_index=pairs, edge_label=label, neg_sampling=neg, batch_size=8)
    ours = gfpyg.LinkNeighborLoader(data, FANOUTS, seed=4, **kwargs)
    # PyG's loaders, with graphferry's sampler: their __call__ and filter_fn, our sample_from_edges
    theirs = [
        PyGLinkNeighborLoader(data, FANOUTS, neighbor_sampler=gfpyg.Sampler(data, FANOUTS, seed=4), **kwargs),
        LinkLoader(data, link_sampler=gfpyg.Sampler(data, FANOUTS, seed=4), **kwargs),
    ]
    index = torch.tensor([3, 0, 9, 17, 4])
    want = ours(index)  # the first call: batch key 0 in both
    for loader in theirs:
        assert_same(loader(index), want)
    # a whole epoch of PyG's own loop: PyG's link batches on the sampled subgraphs
    triplet = neg is not None and "triplet" in str(neg)
    seen = []
    for batch in theirs[0]:
        b = batch.input_id.numel()
        seen.append(batch.input_id)
        assert torch.equal(batch.x, data.x[batch.n_id]) and torch.equal(batch.edge_attr, data.edge_attr[batch.e_id])
        if triplet:
            ends = torch.stack([batch.n_id[batch.src_index], batch.n_id[batch.dst_pos_index]])
            assert batch.dst_neg_index.shape == (b, 3)
        else:
            ends = batch.n_id[batch.edge_label_index[:, :b]]
            num_neg = batch.edge_label_index.size(1) - b
            amount = 0 if neg is None else (neg[1] if isinstance(neg, tuple) else 1)
            assert num_neg == -(-b * amount // 1)
            if labels:
                shift = 1 if neg is not None else 0  # PyG's LinkLoader shifts given labels for binary negatives
                assert torch.equal(batch.edge_label[:b], label[batch.input_id] + shift)
            if neg is not None:
                assert bool((batch.edge_label[b:] == 0).all())
        assert torch.equal(ends, pairs[:, batch.input_id])
    assert torch.equal(torch.cat(seen).sort().values, torch.arange(40))
    ours.close()


def test_sample_from_edges_on_a_hetero_graph():
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    data = make_hetero()
    num_neighbors = {WRITES: [2, 1], CITES: [2, 1]}
    for neg in (None, "binary", ("triplet", 2)):
        kwargs = dict(edge_label_index=WRITES, neg_sampling=neg, batch_size=16)
        ours = gfpyg.LinkNeighborLoader(data, num_neighbors, seed=2, **kwargs)
        sampler = gfpyg.Sampler(data, num_neighbors, seed=2)
        theirs = PyGLinkNeighborLoader(data, num_neighbors, neighbor_sampler=sampler, **kwargs)
        assert_same(theirs(torch.arange(6)), ours(torch.arange(6)))
        batches = list(theirs)
        assert len(batches) == 4
        for batch in batches:
            assert torch.equal(batch["paper"].x, data["paper"].x[batch["paper"].n_id])
        ours.close()
    bad = gfpyg.Sampler(data, num_neighbors)
    with pytest.raises(ValueError, match="edge type"):
        from torch_geometric.sampler import EdgeSamplerInput

        bad.sample_from_edges(EdgeSamplerInput(None, torch.tensor([0]), torch.tensor([0])))


@pytest.mark.parametrize("subgraph_type", ["bidirectional", "induced"])
def test_link_loader_subgraph_types_on_a_homogeneous_graph(subgraph_type):
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    data = make_data()
    kwargs = dict(neg_sampling="binary", batch_size=8, subgraph_type=subgraph_type)
    ours = gfpyg.LinkNeighborLoader(data, FANOUTS, seed=4, **kwargs)
    sampler = gfpyg.Sampler(data, FANOUTS, seed=4, subgraph_type=subgraph_type)
    theirs = PyGLinkNeighborLoader(data, FANOUTS, neighbor_sampler=sampler, **kwargs)
    assert_same(ours(torch.arange(6)), theirs(torch.arange(6)))
    for batch in ours:
        assert "num_sampled_nodes" not in batch and "num_sampled_edges" not in batch  # as PyG's (None)
        ends = batch.n_id[batch.edge_index]
        orig = data.edge_index[:, batch.e_id]
        assert bool(((ends == orig).all(0) | (ends == orig.flip(0)).all(0)).all())
        assert torch.equal(batch.edge_attr, data.edge_attr[batch.e_id]) and torch.equal(batch.x, data.x[batch.n_id])
        if subgraph_type == "bidirectional":  # every edge has its reverse
            pairs = set(map(tuple, batch.edge_index.t().tolist()))
            assert all((c, r) in pairs for r, c in pairs)
    ours.close()


@pytest.mark.parametrize("mode", ["binary", "triplet"])
def test_weighted_negatives(mode):
    """NegativeSampling's weight: negatives only among the nodes of positive
    weight, in proportion to it (PyG draws torch.multinomial(weight, ...))."""
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader
    from torch_geometric.sampler import NegativeSampling

    data = make_data()
    weight = torch.zeros(NUM_NODES)
    weight[7], weight[11] = 1.0, 3.0
    params = inspect.signature(NegativeSampling.__init__).parameters
    if "weight" in params:  # PyG 2.5
        neg = NegativeSampling(mode, 2, weight=weight)
    else:  # newer PyG: one weight per end
        neg = NegativeSampling(mode, 2, src_weight=weight, dst_weight=weight)
    ours = gfpyg.LinkNeighborLoader(data, [1], neg_sampling=neg, batch_size=100, seed=3)
    theirs = PyGLinkNeighborLoader(data, [1], neighbor_sampler=gfpyg.Sampler(data, [1], seed=3), neg_sampling=neg)
    assert_same(ours(torch.arange(10)), theirs(torch.arange(10)))
    drawn = []
    for _ in range(3):
        for batch in ours:
            b = batch.input_id.numel()
            if mode == "binary":
                drawn.append(batch.n_id[batch.edge_label_index[:, b:]].reshape(-1))
            else:
                drawn.append(batch.n_id[batch.dst_neg_index].reshape(-1))
    drawn = torch.cat(drawn)
    assert set(drawn.unique().tolist()) == {7, 11}
    assert abs(float((drawn == 11).float().mean()) - 0.75) < 0.05
    if mode == "binary" and "src_weight" in params:
        with pytest.raises(NotImplementedError, match="src_weight"):
            gfpyg.LinkNeighborLoader(data, [1], neg_sampling=NegativeSampling(mode, 1, src_weight=weight))
    with pytest.raises(ValueError, match="weights for a graph of"):  # PyG raises ValueError too
        bad = NegativeSampling(
            mode,
            1,
            **(
                {"weight": weight[:12]}
                if "weight" in params
                else {"dst_weight": weight[:12], "src_weight": weight[:12]}
            ),
        )
        next(iter(gfpyg.LinkNeighborLoader(data, [1], neg_sampling=bad)))
    ours.close()


@pytest.mark.parametrize("neg", [None, "binary", ("triplet", 2)])
def test_disjoint_link_loader(neg):
    """disjoint=True as PyG's edge_sample makes it (PyG's own code over
    graphferry's disjoint node sampling is the reference of the layout):
    every pair end, negatives included, is a seed of its own subgraph, the
    pair indices are PyG's aranges and batch is the pair modulo the
    positives."""
    from torch_geometric.loader import LinkLoader
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader
    from torch_geometric.sampler import NodeSamplerInput
    from torch_geometric.sampler.neighbor_sampler import edge_sample

    class PyGEdgeSample(gfpyg.Sampler):  # PyG's edge_sample over graphferry's node sampling
        def sample_from_edges(self, index, neg_sampling=None):
            def sample_fn(seed, seed_time):
                return self.sample_from_nodes(NodeSamplerInput(input_id=None, node=seed))

            return edge_sample(index, sample_fn, NUM_NODES, True, None, neg_sampling)

    data = make_data()
    pairs = data.edge_index[:, :40]
    kwargs = dict(edge_label_index=pairs, neg_sampling=neg, batch_size=8)
    ours = gfpyg.LinkNeighborLoader(data, FANOUTS, disjoint=True, seed=4, **kwargs)
    inside = PyGLinkNeighborLoader(
        data, FANOUTS, neighbor_sampler=gfpyg.Sampler(data, FANOUTS, seed=4, disjoint=True), **kwargs
    )
    reference = LinkLoader(data, PyGEdgeSample(data, FANOUTS, disjoint=True), **kwargs)
    index = torch.tensor([5, 2, 30, 11, 7])
    a = ours(index)
    assert_same(a, inside(index))
    b = reference(index)
    assert sorted(a.keys()) == sorted(b.keys())
    for key in ("input_id", "edge_label_index", "src_index", "dst_pos_index", "dst_neg_index"):
        if key in b:
            assert torch.equal(a[key], b[key]), key
    for batch in [a, *ours]:
        p = batch.input_id.numel()
        num_seeds = batch.num_sampled_nodes[0]
        assert torch.equal(batch.batch[:num_seeds], torch.arange(num_seeds) % p)
        if neg is not None and "triplet" in str(neg):
            ends = torch.stack([batch.n_id[batch.src_index], batch.n_id[batch.dst_pos_index]])
        else:
            ends = batch.n_id[batch.edge_label_index[:, :p]]
        assert torch.equal(ends, pairs[:, batch.input_id])
        # every node's subgraph is its pair's: its edges stay within one batch entry
        assert bool((batch.batch[batch.edge_index[0]] == batch.batch[batch.edge_index[1]]).all())
        assert torch.equal(batch.x, data.x[batch.n_id])
    ours.close()


@pytest.mark.parametrize("neg", [None, "binary", ("triplet", 2)])
@pytest.mark.parametrize("strategy", ["uniform", "last"])
def test_temporal_link_loader(neg, strategy):
    """time_attr (edge times), edge_label_time and temporal_strategy as PyG's
    edge_sample makes them (PyG's own code over graphferry's temporal node
    sampling is the reference of the layout and the times): disjoint, every
    sampled edge not later than its pair's time."""
    from torch_geometric.loader import LinkLoader
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader
    from torch_geometric.sampler import NodeSamplerInput
    from torch_geometric.sampler.neighbor_sampler import edge_sample

    class PyGEdgeSample(gfpyg.Sampler):  # PyG's edge_sample over graphferry's temporal node sampling
        def sample_from_edges(self, index, neg_sampling=None):
            def sample_fn(seed, seed_time):
                return self.sample_from_nodes(NodeSamplerInput(input_id=None, node=seed, time=seed_time))

            return edge_sample(index, sample_fn, NUM_NODES, True, None, neg_sampling)

    data = make_data()
    data.etime = torch.randint(0, 100, (NUM_EDGES,), generator=torch.Generator().manual_seed(8))
    pairs = data.edge_index[:, :40]
    times = torch.randint(20, 100, (40,), generator=torch.Generator().manual_seed(9))
    kwargs = dict(
        edge_label_index=pairs,
        edge_label_time=times,
        time_attr="etime",
        temporal_strategy=strategy,
        neg_sampling=neg,
        batch_size=8,
    )
    ours = gfpyg.LinkNeighborLoader(data, FANOUTS, seed=4, **kwargs)
    sampler = dict(time_attr="etime", temporal_strategy=strategy)
    inside = PyGLinkNeighborLoader(
        data, FANOUTS, neighbor_sampler=gfpyg.Sampler(data, FANOUTS, seed=4, **sampler), **kwargs
    )
    index = torch.tensor([5, 2, 30, 11, 7])
    a = ours(index)
    assert_same(a, inside(index))
    reference = LinkLoader(
        data,
        PyGEdgeSample(data, FANOUTS, **sampler),
        **{k: v for k, v in kwargs.items() if k not in ("time_attr", "temporal_strategy")},
    )
    b = reference(index)
    assert sorted(a.keys()) == sorted(b.keys())
    for key in ("input_id", "edge_label_index", "edge_label_time", "seed_time", "src_index", "dst_pos_index"):
        if key in b:
            assert torch.equal(a[key], b[key]), key
    seen = []
    for batch in [a, *ours]:
        seen.append(batch.input_id)
        pair_time = times[batch.input_id][batch.batch]  # each node's pair's time
        assert bool((data.etime[batch.e_id] <= pair_time[batch.edge_index[1]]).all())
        assert torch.equal(batch.x, data.x[batch.n_id])
    assert torch.equal(torch.cat(seen[1:]).sort().values, torch.arange(40))
    ours.close()


def test_temporal_link_loader_refusals():
    data = make_data()
    data.ntime = torch.arange(NUM_NODES)
    times = torch.zeros(10, dtype=torch.long)
    pairs = data.edge_index[:, :10]
    # negatives under node times are kept not later than their seed, as PyG's
    # neg_sample (tests/python/test_link_hetero_temporal.py)
    batch = gfpyg.LinkNeighborLoader(
        data, [2], edge_label_index=pairs, time_attr="ntime", edge_label_time=times + 5, neg_sampling="binary"
    )([0, 1])
    assert bool((data.ntime[batch.n_id[batch.edge_label_index[:, 2:]]] <= 5).all())
    # node times without negatives are PyG's temporal node sampling around the pairs
    batch = gfpyg.LinkNeighborLoader(data, [2], edge_label_index=pairs, time_attr="ntime", edge_label_time=times + 50)(
        [0, 1]
    )
    assert bool((data.ntime[batch.n_id[batch.num_sampled_nodes[0] :]] <= 50).all())
    with pytest.raises(ValueError, match="one per pair"):
        gfpyg.LinkNeighborLoader(data, [2], edge_label_index=pairs, time_attr="ntime", edge_label_time=times[:3])


def stores_of(data: Data, graph_store: str) -> tuple:
    """PyG's (FeatureStore, GraphStore) of ``data``: graphferry's GraphStore
    or PyG's own testing one (its edge order, a permutation of ours)."""
    from test_pyg_conformance import make_stores

    if graph_store == "graphferry":
        return make_stores(data), gfpyg.GraphStore(data)
    testing = pytest.importorskip("torch_geometric.testing.graph_store")
    gs = testing.MyGraphStore()
    size = (NUM_NODES, NUM_NODES)
    gs.put_edge_index((data.edge_index[0], data.edge_index[1]), edge_type=None, layout="coo", size=size)
    return make_stores(data), gs


@pytest.mark.parametrize("graph_store", ["graphferry", "pyg"])
def test_sampler_over_feature_and_graph_stores(graph_store):
    """graphferry.pyg.Sampler over PyG's (FeatureStore, GraphStore) pair
    inside PyG's own NodeLoader and LinkNeighborLoader: features from the
    FeatureStore, e_id in the GraphStore's edge order (edge_permutation)."""
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    data = make_data()
    fs, gs = stores_of(data, graph_store)
    nodes = torch.arange(0, NUM_NODES, 3)
    ours = gfpyg.NeighborLoader((fs, gs), FANOUTS, input_nodes=nodes, batch_size=10, seed=9)
    theirs = NodeLoader(
        (fs, gs), node_sampler=gfpyg.Sampler((fs, gs), FANOUTS, seed=9), input_nodes=nodes, batch_size=10
    )
    assert_same(ours([0, 5, 7]), theirs([0, 5, 7]))
    for batch in theirs:
        assert torch.equal(batch.x, data.x[batch.n_id]) and torch.equal(batch.y, data.y[batch.n_id])
        ends = batch.n_id[batch.edge_index]
        assert torch.equal(ends, data.edge_index[:, batch.e_id])  # e_id are the store's edge ids
    link = PyGLinkNeighborLoader(
        (fs, gs),
        FANOUTS,
        neighbor_sampler=gfpyg.Sampler((fs, gs), FANOUTS, seed=2),
        edge_label_index=(None, data.edge_index[:, :20]),  # PyG names the (absent) edge type with stores
        neg_sampling="binary",
        batch_size=8,
    )
    for batch in link:
        b = batch.input_id.numel()
        assert torch.equal(batch.n_id[batch.edge_label_index[:, :b]], data.edge_index[:, batch.input_id])
        assert torch.equal(batch.x, data.x[batch.n_id])
    with pytest.raises(TypeError, match="GraphStore"):
        gfpyg.Sampler((fs, object()), FANOUTS)
    ours.close()


@pytest.mark.parametrize("graph_store", ["graphferry", "pyg"])
def test_link_loader_over_feature_and_graph_stores(graph_store):
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    data = make_data()
    fs, gs = stores_of(data, graph_store)
    kwargs = dict(edge_label_index=(None, data.edge_index[:, :20]), neg_sampling="binary", batch_size=8)
    ours = gfpyg.LinkNeighborLoader((fs, gs), FANOUTS, seed=2, **kwargs)
    theirs = PyGLinkNeighborLoader(
        (fs, gs), FANOUTS, neighbor_sampler=gfpyg.Sampler((fs, gs), FANOUTS, seed=2), **kwargs
    )
    assert_same(ours(torch.arange(6)), theirs(torch.arange(6)))
    for batch in ours:
        b = batch.input_id.numel()
        assert torch.equal(batch.n_id[batch.edge_label_index[:, :b]], data.edge_index[:, batch.input_id])
        assert torch.equal(batch.x, data.x[batch.n_id])
        assert torch.equal(batch.n_id[batch.edge_index], data.edge_index[:, batch.e_id])
    ours.close()


def test_link_loader_takes_every_argument_of_pygs_at_its_default():
    # Every keyword of PyG's own LinkNeighborLoader, at PyG's default, is
    # accepted (an unchanged script runs); set hooks we do not apply are refused.
    ei = torch.randint(0, 50, (2, 300), generator=torch.Generator().manual_seed(3))
    data = Data(x=torch.randn(50, 4), edge_index=ei, num_nodes=50)
    sig = inspect.signature(PyGLink.__init__)
    kw = {
        k: p.default
        for k, p in sig.parameters.items()
        if k not in ("self", "data", "num_neighbors", "kwargs") and p.default is not inspect.Parameter.empty
    }
    kw.update(edge_label_index=ei[:, :20], batch_size=8)
    batch = next(iter(gfpyg.LinkNeighborLoader(data, [3, 2], **kw)))
    assert batch.edge_label_index.shape[1] == 8
    with pytest.raises(NotImplementedError, match="transform_sampler_output"):
        gfpyg.LinkNeighborLoader(data, [3, 2], edge_label_index=ei[:, :20], transform_sampler_output=lambda o: o)
    with pytest.raises(TypeError, match="is_sorted"):
        gfpyg.LinkNeighborLoader(data, [3, 2], edge_label_index=ei[:, :20], is_sorted="yes")

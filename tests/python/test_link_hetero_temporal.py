"""graphferry.pyg.LinkNeighborLoader on heterogeneous graphs with
``disjoint=True`` and temporal sampling (node and edge times), and negatives
under node times (homogeneous and typed), against PyG.

PyG's own heterogeneous LinkNeighborLoader cannot sample here (no pyg-lib or
torch-sparse), so the references are: our homogeneous loader on the
equivalent graph (a HeteroData of one node and one edge type gives the same
batch, with full fan-outs), PyG's pure-Python ``edge_sample`` (its seeds per
type, seed times and label metadata), PyG's own ``LinkNeighborLoader`` over
``graphferry.pyg.Sampler`` (PyG's filter and field placement), and the
invariants PyG documents: every sampled edge exists with its type, disjoint
subgraphs per pair, nothing later than its pair's time, negatives not later
than their seed under node times. Runs in .venv (PyG 2.5) and .venv-latest
(PyG 2.8)."""

from __future__ import annotations

import pytest
import torch

pyg = pytest.importorskip("torch_geometric")

from torch_geometric.data import Data, HeteroData  # noqa: E402
from torch_geometric.sampler import EdgeSamplerInput, HeteroSamplerOutput, NegativeSampling  # noqa: E402
from torch_geometric.sampler.neighbor_sampler import edge_sample  # noqa: E402

import graphferry.pyg as gfpyg  # noqa: E402

WRITES = ("author", "writes", "paper")
REV = ("paper", "rev_writes", "author")
CITES = ("paper", "cites", "paper")
NUM = {"author": 30, "paper": 50}
FANOUTS = {WRITES: [3, 2], REV: [2, 2], CITES: [3, 2]}
NEGS = [None, "binary", ("triplet", 2)]


def make_hetero(seed: int = 0) -> HeteroData:
    g = torch.Generator().manual_seed(seed)
    data = HeteroData()
    for nt, n in NUM.items():
        data[nt].x = torch.randn(n, 4, generator=g)
        data[nt].time = torch.randint(0, 100, (n,), generator=g)
    src = torch.randint(0, NUM["author"], (200,), generator=g)
    dst = torch.randint(0, NUM["paper"], (200,), generator=g)
    data[WRITES].edge_index = torch.stack([src, dst])
    data[REV].edge_index = torch.stack([dst, src])
    data[CITES].edge_index = torch.randint(0, NUM["paper"], (2, 240), generator=g)
    for et in (WRITES, REV, CITES):
        data[et].etime = torch.randint(0, 100, (data[et].edge_index.size(1),), generator=g)
    return data


def pair_times(n: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(40, 100, (n,), generator=torch.Generator().manual_seed(seed))


def label_fields(batch: HeteroData, et, neg):
    """(pair ends as (src ids, dst ids) of the positives, number of positives)."""
    p = batch[et].input_id.numel()
    s, d = batch[et[0]].n_id, batch[et[2]].n_id
    if neg is not None and "triplet" in str(neg):
        return torch.stack([s[batch[et[0]].src_index], d[batch[et[2]].dst_pos_index]]), p
    eli = batch[et].edge_label_index
    return torch.stack([s[eli[0, :p]], d[eli[1, :p]]]), p


def check_invariants(data: HeteroData, batch: HeteroData, et, pairs, times=None, level=None, neg=None):
    """PyG's documented invariants of a disjoint (temporal) heterogeneous
    link batch."""
    ends, p = label_fields(batch, et, neg)
    assert torch.equal(ends, pairs[:, batch[et].input_id])
    pair_time = times[batch[et].input_id] if times is not None else None
    for nt in data.node_types:
        assert torch.equal(batch[nt].x, data[nt].x[batch[nt].n_id])
        assert batch[nt].batch.numel() == batch[nt].n_id.numel()
        assert batch[nt].batch.numel() == 0 or int(batch[nt].batch.max()) < p
    for rel in data.edge_types:
        ei = torch.as_tensor(batch[rel].edge_index)
        src, dst = batch[rel[0]].n_id[ei[0]], batch[rel[2]].n_id[ei[1]]
        # every sampled edge exists with its type
        assert torch.equal(data[rel].edge_index[:, batch[rel].e_id], torch.stack([src, dst]))
        # disjoint: an edge stays within its pair's subgraph
        assert torch.equal(batch[rel[0]].batch[ei[0]], batch[rel[2]].batch[ei[1]])
        if level == "edge":
            assert bool((data[rel].etime[batch[rel].e_id] <= pair_time[batch[rel[2]].batch[ei[1]]]).all())
    if level == "node":
        for nt in data.node_types:
            k = batch[nt].num_sampled_nodes[0]  # the seeds (the pairs' ends and negatives)
            later = batch[nt].n_id[k:]
            assert bool((data[nt].time[later] <= pair_time[batch[nt].batch[k:]]).all())
    # the seeds of each type: ranked from 0 per type, their pair the rank modulo the positives
    for nt in {et[0], et[2]}:
        k = batch[nt].num_sampled_nodes[0]
        assert torch.equal(batch[nt].batch[:k], torch.arange(k) % p)


@pytest.mark.parametrize("neg", NEGS)
@pytest.mark.parametrize(
    "temporal", [dict(disjoint=True), dict(time_attr="time"), dict(time_attr="etime")], ids=["disjoint", "node", "edge"]
)
def test_one_type_matches_homogeneous(neg, temporal):
    """A HeteroData of one node type and one edge type gives our
    homogeneous loader's batch (full fan-outs: no draw depends on the
    graph's typing): nodes, batch, edges, labels, times, triplet indices."""
    g = torch.Generator().manual_seed(5)
    n, e = 40, 160
    ei = torch.randint(0, n, (2, e), generator=g)
    x, ntime, etime = (
        torch.randn(n, 4, generator=g),
        torch.randint(0, 50, (n,), generator=g),
        torch.randint(0, 50, (e,), generator=g),
    )
    et = ("p", "c", "p")
    hd = HeteroData()
    hd["p"].x, hd["p"].time = x, ntime
    hd[et].edge_index, hd[et].etime = ei, etime
    d = Data(x=x, edge_index=ei, num_nodes=n)
    d.time, d.etime = ntime, etime
    pairs = ei[:, :30]
    kw = dict(temporal)
    if "time_attr" in kw:
        kw["edge_label_time"] = torch.randint(10, 50, (30,), generator=g)
    args = dict(neg_sampling=neg, batch_size=8, seed=3, **kw)
    hetero = gfpyg.LinkNeighborLoader(hd, [-1, -1], edge_label_index=(et, pairs), **args)
    homo = gfpyg.LinkNeighborLoader(d, [-1, -1], edge_label_index=pairs, **args)
    for index in (torch.arange(8), torch.tensor([29, 3, 17])):
        a, b = hetero(index), homo(index)
        compared = 0
        for key in b.keys():
            if key in ("x", "time", "etime", "num_nodes", "num_sampled_nodes", "num_sampled_edges"):
                continue
            store = a[et] if key in a[et] else a["p"]
            assert key in store, key
            assert torch.equal(torch.as_tensor(store[key]), torch.as_tensor(b[key])), key
            compared += 1
        assert compared >= 6
        assert a["p"].num_sampled_nodes == b.num_sampled_nodes
    hetero.close()
    homo.close()


@pytest.mark.parametrize("neg", NEGS)
@pytest.mark.parametrize("level", [None, "node", "edge"])
@pytest.mark.parametrize("et", [WRITES, CITES], ids=["two_types", "one_type"])
def test_invariants(et, level, neg):
    """Disjoint and temporal batches on a graph of two node types: every
    sampled edge exists with its type, each pair's subgraph is its own,
    nothing is later than its pair's time, the seeds of each type are
    numbered from 0 (PyG's batch = seed rank % positives); iterated and
    called."""
    data = make_hetero()
    pairs = data[et].edge_index[:, :48]
    times = pair_times(48)
    kw = dict(disjoint=True) if level is None else dict(time_attr={"node": "time", "edge": "etime"}[level])
    if level is not None:
        kw["edge_label_time"] = times
    loader = gfpyg.LinkNeighborLoader(
        data, FANOUTS, edge_label_index=(et, pairs), neg_sampling=neg, batch_size=10, shuffle=True, seed=7, **kw
    )
    seen = []
    for batch in loader:
        check_invariants(data, batch, et, pairs, times if level else None, level, neg)
        seen.append(batch[et].input_id)
    assert torch.equal(torch.cat(seen).sort().values, torch.arange(48))
    batch = loader(torch.tensor([4, 40, 2]))
    check_invariants(data, batch, et, pairs, times if level else None, level, neg)
    if level is not None:
        p = 3
        if neg is not None and "triplet" in str(neg):
            for nt in {et[0], et[2]}:  # PyG's: on the source and destination types
                assert torch.equal(batch[nt].seed_time, times[batch[et].input_id])
            assert "edge_label_time" not in batch[et]
        else:
            m = batch[et].edge_label_index.size(1)
            assert torch.equal(batch[et].edge_label_time, times[batch[et].input_id].repeat(m)[:m])
            assert m == (p if neg is None else 2 * p)
    loader.close()


class _Seeds:
    """PyG's edge_sample's sample_fn: records the seeds and seed times it is
    given, answers the batch pyg-lib gives the seeds of a disjoint sample
    (each type's seeds numbered from 0)."""

    def __call__(self, seed_dict, seed_time_dict):
        self.seeds, self.times = seed_dict, seed_time_dict
        batch = {nt: torch.arange(s.numel()) for nt, s in seed_dict.items()}
        return HeteroSamplerOutput(node=seed_dict, row={}, col={}, edge={}, batch=batch)


@pytest.mark.parametrize("neg", NEGS)
@pytest.mark.parametrize("et", [WRITES, CITES], ids=["two_types", "one_type"])
def test_seeds_and_labels_as_pyg_edge_sample(et, neg):
    """Our seeds per type (the pairs' ends then the negatives', in PyG's
    order), their times, ``batch`` of the seeds and the label fields are
    PyG's edge_sample's, given our negatives (replayed through a
    NegativeSampling whose sample() returns them)."""
    data = make_hetero()
    pairs = data[et].edge_index[:, :12]
    times = pair_times(12)
    loader = gfpyg.LinkNeighborLoader(
        data, FANOUTS, edge_label_index=(et, pairs), edge_label_time=times, time_attr="etime", neg_sampling=neg, seed=2
    )
    index = torch.tensor([3, 0, 7, 11, 5])
    ours = loader(index)
    loader.close()
    seeds = {nt: ours[nt].n_id[: ours[nt].num_sampled_nodes[0]] for nt in {et[0], et[2]}}
    p = index.numel()
    neg_sampling = None
    if neg is not None:
        ns = NegativeSampling.cast(neg)
        if ns.is_binary():
            k = seeds[et[0]].numel() // 2 if et[0] == et[2] else seeds[et[0]].numel()
            src_all = seeds[et[0]][:k]
            dst_all = seeds[et[2]][k:] if et[0] == et[2] else seeds[et[2]]
            replay = [src_all[p:], dst_all[p:]]
        else:
            replay = [seeds[et[2]][2 * p :] if et[0] == et[2] else seeds[et[2]][p:]]

        class Replay(NegativeSampling):
            def sample(self, num_samples, *args, **kwargs):
                out = replay.pop(0)
                assert out.numel() == num_samples
                return out

        neg_sampling = Replay(ns.mode, ns.amount)
    fn = _Seeds()
    inputs = EdgeSamplerInput(
        input_id=index, row=pairs[0, index], col=pairs[1, index], time=times[index], input_type=et
    )
    out = edge_sample(inputs, fn, dict(NUM), True, None, neg_sampling)
    for nt in seeds:
        assert torch.equal(seeds[nt], fn.seeds[nt]), nt
        k = seeds[nt].numel()
        assert torch.equal(ours[nt].batch[:k], out.batch[nt]), nt
    meta = out.metadata
    assert torch.equal(ours[et].input_id, meta[0])
    if neg is not None and "triplet" in str(neg):
        assert torch.equal(ours[et[0]].src_index, meta[1])
        assert torch.equal(ours[et[2]].dst_pos_index, meta[2])
        assert torch.equal(ours[et[2]].dst_neg_index, meta[3])
        assert torch.equal(ours[et[0]].seed_time, meta[4])
    else:
        assert torch.equal(ours[et].edge_label_index, meta[1])
        if meta[2] is not None:
            assert torch.equal(ours[et].edge_label, meta[2])
        assert torch.equal(ours[et].edge_label_time, meta[3])


@pytest.mark.parametrize("neg", NEGS)
@pytest.mark.parametrize("level", ["node", "edge"])
def test_sampler_inside_pyg_link_loader(level, neg):
    """graphferry.pyg.Sampler inside PyG's own LinkNeighborLoader on a
    HeteroData, temporal: PyG's filter over our edge sampler gives the batch
    our loader gives."""
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    data = make_hetero()
    pairs = data[WRITES].edge_index[:, :20]
    times = pair_times(20)
    attr = {"node": "time", "edge": "etime"}[level]
    kwargs = dict(edge_label_index=(WRITES, pairs), edge_label_time=times, time_attr=attr, neg_sampling=neg)
    ours = gfpyg.LinkNeighborLoader(data, FANOUTS, seed=4, **kwargs)
    inside = PyGLinkNeighborLoader(
        data, FANOUTS, neighbor_sampler=gfpyg.Sampler(data, FANOUTS, seed=4, time_attr=attr), **kwargs
    )
    index = torch.tensor([5, 2, 19, 11])
    a, b = ours(index), inside(index)
    for key, store in [(nt, a[nt]) for nt in a.node_types] + [(et, a[et]) for et in a.edge_types]:
        other = b[key]
        for name in store.keys():
            if name in ("num_sampled_nodes", "num_sampled_edges"):
                continue
            assert name in other, (key, name)
            va, vb = store[name], other[name]
            if isinstance(va, torch.Tensor):
                assert torch.equal(torch.as_tensor(va), torch.as_tensor(vb)), (key, name)
    check_invariants(data, a, WRITES, pairs, times, level, neg)
    ours.close()


def _negatives(batch, neg, p):
    """The negative nodes of a homogeneous batch: (sources or None,
    destinations), draw f belonging to positive f % p."""
    if "triplet" in str(neg):
        # dst_neg_index[i, j] is draw j * p + i (PyG's view(-1, num_pos).t())
        return None, batch.n_id[batch.dst_neg_index.reshape(p, -1).t().reshape(-1)]
    eli = batch.edge_label_index[:, p:]
    return batch.n_id[eli[0]], batch.n_id[eli[1]]


@pytest.mark.parametrize("neg", ["binary", NegativeSampling("binary", 2.5), ("triplet", 3)])
def test_negatives_under_node_times_homogeneous(neg):
    """PyG's neg_sample under node times: every negative is not later than
    its positive's seed time; when no redraw is early enough, the earliest
    node (PyG's node_time.argmin()); the negatives vary over the nodes that
    are early enough (not one fallback)."""
    g = torch.Generator().manual_seed(3)
    n = 60
    data = Data(x=torch.randn(n, 2, generator=g), edge_index=torch.randint(0, n, (2, 300), generator=g), num_nodes=n)
    data.ntime = torch.arange(n) % 20 + 10  # times 10..29
    data.ntime[17] = 0  # the earliest node
    pairs = data.edge_index[:, :40]
    times = torch.randint(12, 30, (40,), generator=g)
    times[::5] = 5  # only node 17 is early enough for these
    loader = gfpyg.LinkNeighborLoader(
        data,
        [2, 2],
        edge_label_index=pairs,
        edge_label_time=times,
        time_attr="ntime",
        neg_sampling=neg,
        batch_size=8,
        seed=1,
    )
    drawn = []
    for batch in loader:
        p = batch.input_id.numel()
        seed_time = times[batch.input_id]
        for side in _negatives(batch, neg, p):
            if side is None:
                continue
            cut = seed_time.repeat(-(-side.numel() // p))[: side.numel()]
            assert bool((data.ntime[side] <= cut).all())
            assert bool((side[cut == 5] == 17).all())
            drawn.append(side)
    assert torch.cat(drawn).unique().numel() > 20
    loader.close()


@pytest.mark.parametrize("neg", ["binary", ("triplet", 2)])
@pytest.mark.parametrize("et", [WRITES, CITES], ids=["two_types", "one_type"])
def test_negatives_under_node_times_typed(et, neg):
    """On a HeteroData, the negatives of each side are of its node type and
    not later than their seed (PyG's node_time per type); the fallback is
    the earliest node of that type."""
    data = make_hetero()
    data["author"].time[7] = -1
    data["paper"].time[9] = -1
    pairs = data[et].edge_index[:, :30]
    times = pair_times(30)
    times[::4] = -1
    loader = gfpyg.LinkNeighborLoader(
        data,
        FANOUTS,
        edge_label_index=(et, pairs),
        edge_label_time=times,
        time_attr="time",
        neg_sampling=neg,
        batch_size=6,
        seed=9,
    )
    earliest = {"author": 7, "paper": 9}
    for batch in loader:
        check_invariants(data, batch, et, pairs, times, "node", neg)
        p = batch[et].input_id.numel()
        seed_time = times[batch[et].input_id]
        if "triplet" in str(neg):
            idx = batch[et[2]].dst_neg_index.reshape(p, -1).t().reshape(-1)
            sides = [(et[2], batch[et[2]].n_id[idx])]
        else:
            eli = batch[et].edge_label_index[:, p:]
            sides = [(et[0], batch[et[0]].n_id[eli[0]]), (et[2], batch[et[2]].n_id[eli[1]])]
        for nt, ids in sides:
            assert int(ids.max()) < NUM[nt]
            cut = seed_time.repeat(-(-ids.numel() // p))[: ids.numel()]
            assert bool((data[nt].time[ids] <= cut).all())
            assert bool((ids[cut == -1] == earliest[nt]).all())
    loader.close()


def test_negatives_under_node_times_inside_pyg_loader():
    """graphferry.pyg.Sampler inside PyG's LinkNeighborLoader takes node
    times with negatives too (no longer refused): the batch is our
    loader's."""
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    g = torch.Generator().manual_seed(2)
    data = Data(x=torch.randn(30, 2, generator=g), edge_index=torch.randint(0, 30, (2, 90), generator=g), num_nodes=30)
    data.ntime = torch.randint(0, 50, (30,), generator=g)
    pairs = data.edge_index[:, :16]
    times = torch.randint(10, 50, (16,), generator=g)
    kwargs = dict(edge_label_index=pairs, edge_label_time=times, time_attr="ntime", neg_sampling="binary")
    ours = gfpyg.LinkNeighborLoader(data, [2, 2], seed=6, **kwargs)
    inside = PyGLinkNeighborLoader(
        data, [2, 2], neighbor_sampler=gfpyg.Sampler(data, [2, 2], seed=6, time_attr="ntime"), **kwargs
    )
    index = torch.tensor([1, 9, 4])
    a, b = ours(index), inside(index)
    for key in a.keys():
        if isinstance(a[key], torch.Tensor):
            assert torch.equal(torch.as_tensor(a[key]), torch.as_tensor(b[key])), key
    neg = a.n_id[a.edge_label_index[:, 3:]]
    assert bool((data.ntime[neg] <= times[index].repeat(2)[:3]).all())
    ours.close()


def weighted(mode: str, amount: float, weight: torch.Tensor) -> NegativeSampling:
    """PyG's weighted NegativeSampling: ``weight`` (PyG 2.5) or the same
    ``src_weight`` and ``dst_weight`` (newer PyG)."""
    import inspect

    if "src_weight" in inspect.signature(NegativeSampling).parameters:
        return NegativeSampling(mode, amount, src_weight=weight, dst_weight=weight)
    return NegativeSampling(mode, amount, weight)


@pytest.mark.parametrize("mode", ["binary", "triplet"])
def test_weighted_negatives_one_type_match_homogeneous(mode):
    """Weighted negatives on a HeteroData of one node type are our
    homogeneous loader's (the weight vector of the type is PyG's over
    every node): same negatives, same batch."""
    g = torch.Generator().manual_seed(6)
    n = 40
    ei = torch.randint(0, n, (2, 160), generator=g)
    x = torch.randn(n, 3, generator=g)
    weight = torch.rand(n, generator=g)
    weight[::3] = 0
    et = ("p", "c", "p")
    hd = HeteroData()
    hd["p"].x = x
    hd[et].edge_index = ei
    d = Data(x=x, edge_index=ei, num_nodes=n)
    args = dict(neg_sampling=weighted(mode, 2, weight), batch_size=8, seed=5)
    a = gfpyg.LinkNeighborLoader(hd, [-1], edge_label_index=(et, ei[:, :24]), **args)(torch.arange(8))
    b = gfpyg.LinkNeighborLoader(d, [-1], edge_label_index=ei[:, :24], **args)(torch.arange(8))
    for key in ("edge_label_index", "edge_label", "src_index", "dst_pos_index", "dst_neg_index", "n_id", "batch"):
        if key in b:
            store = a[et] if key in a[et] else a["p"]
            assert torch.equal(store[key], b[key]), key
    if mode == "triplet":
        negs = a["p"].n_id[a["p"].dst_neg_index]
    else:
        negs = a["p"].n_id[a[et].edge_label_index[:, 8:]]
    assert bool((weight[negs] > 0).all())


@pytest.mark.parametrize("mode", ["binary", "triplet"])
def test_weighted_negatives_two_types(mode):
    """On a graph of two node types the weight vector is by the drawn type's
    own ids (PyG's NegativeSampling.sample(num, num_nodes of the type)):
    triplet destinations by the destination type's weights, binary ends by
    one vector over both types, which must then have its length (refused
    with the sizes otherwise, as PyG refuses a weight of the wrong length);
    zero weights are never drawn; graphferry.pyg.Sampler inside PyG's own
    LinkNeighborLoader gives the same batch."""
    from torch_geometric.loader import LinkNeighborLoader as PyGLinkNeighborLoader

    data = make_hetero()
    g = torch.Generator().manual_seed(7)
    if mode == "binary":  # both ends by one vector: two types of one size
        data["author"].x = torch.randn(NUM["paper"], 4, generator=g)
        data["author"].time = torch.randint(0, 100, (NUM["paper"],), generator=g)
    weight = torch.rand(NUM["paper"], generator=g)
    weight[weight < 0.5] = 0
    pairs = data[WRITES].edge_index[:, :30]
    kwargs = dict(edge_label_index=(WRITES, pairs), neg_sampling=weighted(mode, 3, weight), batch_size=10)
    ours = gfpyg.LinkNeighborLoader(data, FANOUTS, seed=2, **kwargs)
    for batch in ours:
        p = batch[WRITES].input_id.numel()
        if mode == "triplet":
            sides = [batch["paper"].n_id[batch["paper"].dst_neg_index.reshape(-1)]]
        else:
            eli = batch[WRITES].edge_label_index[:, p:]
            sides = [batch["author"].n_id[eli[0]], batch["paper"].n_id[eli[1]]]
        for ids in sides:
            assert ids.numel() == 3 * p and bool((weight[ids] > 0).all())
    inside = PyGLinkNeighborLoader(data, FANOUTS, neighbor_sampler=gfpyg.Sampler(data, FANOUTS, seed=2), **kwargs)
    index = torch.tensor([3, 14, 8])
    a, b = ours(index), inside(index)
    for nt in ("author", "paper"):
        assert torch.equal(a[nt].n_id, b[nt].n_id)
    for key in ("edge_label_index", "edge_label"):
        if key in a[WRITES]:
            assert torch.equal(a[WRITES][key], b[WRITES][key])
    if mode == "triplet":
        assert torch.equal(a["paper"].dst_neg_index, b["paper"].dst_neg_index)
    ours.close()
    wrong = gfpyg.LinkNeighborLoader(
        make_hetero(), FANOUTS, edge_label_index=WRITES, neg_sampling=weighted("binary", 1, weight), seed=1
    )
    with pytest.raises(ValueError, match="50 weights for the 30 nodes of the pairs' source type"):
        next(iter(wrong))


def _dgl_graph(dgl, reviews_all_but_writes: bool = False):
    g = torch.Generator().manual_seed(11)
    na, npap = 12, 20
    writes = (torch.randint(0, na, (60,), generator=g), torch.randint(0, npap, (60,), generator=g))
    rels = {
        ("paper", "cites", "paper"): (
            torch.randint(0, npap, (90,), generator=g),
            torch.randint(0, npap, (90,), generator=g),
        ),
        ("author", "writes", "paper"): writes,
        ("paper", "rev_writes", "author"): (writes[1], writes[0]),
    }
    if reviews_all_but_writes:  # every author -> paper pair that is not a writes edge
        a, p = torch.meshgrid(torch.arange(na), torch.arange(npap), indexing="ij")
        a, p = a.reshape(-1), p.reshape(-1)
        is_write = torch.zeros(na, npap, dtype=torch.bool)
        is_write[writes[0], writes[1]] = True
        keep = ~is_write[a, p]
        rels[("author", "reviews", "paper")] = (a[keep], p[keep])
    return dgl.heterograph(rels, num_nodes_dict={"author": na, "paper": npap})


def _negatives_per_type(neg):
    out = {}
    for et in neg.canonical_etypes:
        s, d = neg.edges(etype=et)
        out[et] = (neg.nodes[et[0]].data["_ID"][s.long()], neg.nodes[et[2]].data["_ID"][d.long()])
    return out


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("self_loops", [True, False])
def test_dgl_global_uniform_on_heterographs(self_loops, replace):
    """DGL 2.1's edge DataLoader with GlobalUniform on a heterograph is the
    reference of the batch's structure (negative graph's types, node sets,
    keys); per edge type our negatives are pairs of its node types that are
    not its edges, at most k per seed edge, unique without replace, no
    self-loops on a one-type relation unless asked, as DGL's
    global_uniform_negative_sampling draws them."""
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    g = _dgl_graph(dgl)
    ns = dgl.dataloading.negative_sampler.GlobalUniform(3, exclude_self_loops=self_loops, replace=replace)
    seeds = {"writes": torch.arange(0, 60, 2), "cites": torch.arange(0, 90, 3)}
    fan = [{"cites": 2, "writes": 2, "rev_writes": 2}]
    ours = gfdgl.DataLoader(
        g,
        seeds,
        gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler(fan), negative_sampler=ns),
        batch_size=20,
        seed=4,
    )
    theirs = dgl.dataloading.DataLoader(
        g,
        seeds,
        dgl.dataloading.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler(fan), negative_sampler=ns),
        batch_size=20,
    )
    self_loop_seen = False
    for (in_a, pair_a, neg_a, blocks_a), (in_b, pair_b, neg_b, blocks_b) in zip(ours, theirs):
        assert neg_a.ntypes == neg_b.ntypes and neg_a.canonical_etypes == neg_b.canonical_etypes
        assert pair_a.canonical_etypes == pair_b.canonical_etypes
        assert set(in_a) == set(in_b) and len(blocks_a) == len(blocks_b)
        for nt in g.ntypes:
            assert neg_a.num_nodes(nt) == pair_a.num_nodes(nt)  # compacted together
            assert set(neg_a.nodes[nt].data.keys()) == set(neg_b.nodes[nt].data.keys())
        for et, (s, d) in _negatives_per_type(neg_a).items():
            n_pos = pair_a.num_edges(etype=et)
            assert s.numel() <= 3 * n_pos
            if n_pos:
                assert s.numel() > 0
            assert not bool(g.has_edges_between(s, d, etype=et).any()), et
            if not replace:
                assert torch.unique(s * 1000 + d).numel() == s.numel()
            if et[0] == et[2]:
                self_loop_seen |= bool((s == d).any())
                if self_loops:
                    assert not bool((s == d).any())
    if self_loops:
        assert not self_loop_seen
    ours.close()


def test_dgl_global_uniform_checks_its_own_edge_type():
    """Two edge types joining the same node types: a negative of one may be
    an edge of the other (DGL checks the canonical edge type only). Here
    every author -> paper pair that is not a writes edge is a reviews edge,
    so writes' negatives are reviews edges, and the reverse."""
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    g = _dgl_graph(dgl, reviews_all_but_writes=True)
    ns = dgl.dataloading.negative_sampler.GlobalUniform(2)
    fan = [{et: 1 for et in g.etypes}]
    seeds = {"writes": torch.arange(0, 60, 3), "reviews": torch.arange(0, 100, 5)}
    loader = gfdgl.DataLoader(
        g,
        seeds,
        gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler(fan), negative_sampler=ns),
        batch_size=40,
        seed=1,
    )
    _, pair, neg, _ = next(iter(loader))
    negs = _negatives_per_type(neg)
    for et, other in ((("author", "writes", "paper"), "reviews"), (("author", "reviews", "paper"), "writes")):
        s, d = negs[et]
        assert s.numel() > 0, et
        assert not bool(g.has_edges_between(s, d, etype=et).any())
        assert bool(g.has_edges_between(s, d, etype=other).all())
    loader.close()

"""graphferry.pyg.LinkNeighborLoader against PyG's LinkNeighborLoader
pipeline. PyG cannot sample here (no pyg-lib or torch-sparse), so the
reference is PyG's own LinkLoader and edge_sample (its negatives, seeds,
edge_label_index/edge_label or triplet indices, filter_fn) over graphferry's
node sampler: every field, dtype and shape must match PyG's, and every
invariant must hold. Runs in .venv (PyG 2.5) and .venv-latest (PyG 2.8)."""

from __future__ import annotations

import pytest
import torch

pyg = pytest.importorskip("torch_geometric")

from torch_geometric.data import Data  # noqa: E402
from torch_geometric.loader import LinkLoader  # noqa: E402
from torch_geometric.sampler import NegativeSampling, NodeSamplerInput  # noqa: E402
from torch_geometric.sampler.neighbor_sampler import edge_sample  # noqa: E402

import graphferry.pyg as gfpyg  # noqa: E402


class RefLinkSampler(gfpyg.Sampler):
    """PyG's edge_sample (negatives, seeds, label metadata) over
    graphferry's node sampling: the reference output of a
    LinkNeighborLoader."""

    def sample_from_edges(self, index, neg_sampling=None):
        def sample_fn(seed, seed_time):
            return self.sample_from_nodes(NodeSamplerInput(input_id=None, node=seed))

        return edge_sample(index, sample_fn, self._num_nodes, False, None, neg_sampling)


def make_data():
    torch.manual_seed(4)
    ei = torch.randint(0, 50, (2, 300))
    return Data(x=torch.randn(50, 3), y=torch.arange(50), edge_index=ei, edge_attr=torch.randn(300, 2), num_nodes=50)


def reference(data, neg_sampling, edge_label_index=None, edge_label=None, batch_size=16):
    sampler = RefLinkSampler(data, [3, 2], seed=1)
    sampler._num_nodes = data.num_nodes
    loader = LinkLoader(
        data,
        sampler,
        edge_label_index=edge_label_index,
        edge_label=edge_label,
        neg_sampling=neg_sampling,
        batch_size=batch_size,
    )
    return next(iter(loader))


def check_common(data, batch, num_pos):
    assert batch.n_id.dtype == torch.int64 and batch.e_id.dtype == torch.int64
    assert torch.equal(batch.x, data.x[batch.n_id])
    assert torch.equal(batch.edge_attr, data.edge_attr[batch.e_id])
    src, dst = batch.n_id[batch.edge_index[0]], batch.n_id[batch.edge_index[1]]
    assert torch.equal(src, data.edge_index[0, batch.e_id]) and torch.equal(dst, data.edge_index[1, batch.e_id])
    assert batch.input_id.numel() == num_pos
    seeds = batch.n_id[: batch.num_sampled_nodes[0]]
    assert torch.equal(seeds, torch.sort(seeds).values), "seeds are the sorted unique ids"


def same_fields(ours, ref):
    assert set(ours.keys()) == set(ref.keys())
    for key in ours.keys():
        a, b = ours[key], ref[key]
        if isinstance(a, torch.Tensor):
            assert a.dtype == b.dtype, key
            if key not in ("x", "y", "n_id", "e_id", "edge_index", "edge_attr"):
                assert a.shape == b.shape, key


@pytest.mark.parametrize("neg", [None, "binary", "triplet", NegativeSampling("binary", 2.5)])
def test_fields_match_pyg(neg):
    data = make_data()
    ours = gfpyg.LinkNeighborLoader(data, [3, 2], neg_sampling=neg, batch_size=16, seed=1)
    batch = next(iter(ours))
    ref = reference(data, neg)
    same_fields(batch, ref)
    check_common(data, batch, 16)
    pos = data.edge_index[:, batch.input_id]
    mode = None if neg is None else NegativeSampling.cast(neg).mode.value
    if mode == "triplet":
        assert torch.equal(batch.n_id[batch.src_index], pos[0])
        assert torch.equal(batch.n_id[batch.dst_pos_index], pos[1])
        assert batch.dst_neg_index.shape == (16,)
        assert int(batch.dst_neg_index.max()) < batch.num_sampled_nodes[0]
    else:
        eli = batch.edge_label_index
        assert torch.equal(batch.n_id[eli[:, :16]], pos)
        assert int(eli.max()) < batch.num_sampled_nodes[0]
        if mode == "binary":
            amount = NegativeSampling.cast(neg).amount
            assert eli.size(1) == 16 + int(-(-amount * 16 // 1))
            assert torch.equal(batch.edge_label, torch.cat([torch.ones(16), torch.zeros(eli.size(1) - 16)]))


def test_labels_and_label_index():
    data = make_data()
    eli = torch.randint(0, 50, (2, 40))
    label = torch.randint(0, 3, (40,))
    label[0] = 0
    ours = gfpyg.LinkNeighborLoader(
        data, [2], edge_label_index=eli, edge_label=label, neg_sampling="binary", batch_size=16, shuffle=True, seed=3
    )
    ref = reference(data, "binary", eli, label)
    seen = []
    for batch in ours:
        n = batch.input_id.numel()
        if n == 16:
            same_fields(batch, ref)
        assert torch.equal(batch.edge_label[:n], label[batch.input_id] + 1), "labels shifted so 0 means negative"
        assert bool((batch.edge_label[n:] == 0).all())
        assert torch.equal(batch.n_id[batch.edge_label_index[:, :n]], eli[:, batch.input_id])
        seen.append(batch.input_id)
    assert torch.equal(torch.sort(torch.cat(seen)).values, torch.arange(40))
    # without negatives, the labels are passed on as given
    plain = next(iter(gfpyg.LinkNeighborLoader(data, [2], edge_label_index=eli, edge_label=label, batch_size=8)))
    assert torch.equal(plain.edge_label, label[:8])


def test_triplet_amount_and_seeding():
    data = make_data()
    a = gfpyg.LinkNeighborLoader(data, [2, 2], neg_sampling=NegativeSampling("triplet", 3), batch_size=20, seed=7)
    b = gfpyg.LinkNeighborLoader(
        data, [2, 2], neg_sampling=NegativeSampling("triplet", 3), batch_size=20, seed=7, num_threads=1
    )
    ba, bb = next(iter(a)), next(iter(b))
    assert ba.dst_neg_index.shape == (20, 3)
    same_fields(ba, reference(data, NegativeSampling("triplet", 3), batch_size=20))
    for key in ("n_id", "e_id", "src_index", "dst_pos_index", "dst_neg_index"):
        assert torch.equal(ba[key], bb[key]), key
    other = next(iter(gfpyg.LinkNeighborLoader(data, [2, 2], neg_sampling=("triplet", 3), batch_size=20, seed=8)))
    assert not torch.equal(ba.n_id[ba.dst_neg_index], other.n_id[other.dst_neg_index])


def test_refusals():
    data = make_data()
    assert gfpyg.LinkNeighborLoader(data, [2], disjoint=True).disjoint  # taken now: test_pyg_dropin checks it
    # temporal sampling is taken now (test_pyg_dropin); an unknown time attribute is PyG's ValueError
    with pytest.raises(ValueError, match="neither a node-level nor an edge-level"):
        gfpyg.LinkNeighborLoader(data, [2], time_attr="t", edge_label_time=torch.zeros(300, dtype=torch.long))
    with pytest.raises(ValueError, match="'time_attr' is set while 'edge_label_time' is not"):  # as PyG's
        gfpyg.LinkNeighborLoader(data, [2], time_attr="t")
    with pytest.raises(ValueError, match="triplet"):
        gfpyg.LinkNeighborLoader(data, [2], edge_label=torch.ones(300), neg_sampling="triplet")
    with pytest.raises(ValueError, match="num_workers"):
        gfpyg.LinkNeighborLoader(data, [2], num_workers=-2)
    bad = gfpyg.LinkNeighborLoader(data, [2], edge_label_index=torch.tensor([[0], [50]]))
    with pytest.raises(Exception, match="50"):
        next(iter(bad))

"""One public class per DGL or PyG counterpart, whatever its input: a
heterogeneous graph or an edge prediction sampler makes an instance of the
class called (it prints and introspects as it), not of a hidden subclass,
and no class replaces its constructor; a loader that cannot be made draws no
seed from torch's generator."""

from __future__ import annotations

import pickle

import pytest
import torch

dgl = pytest.importorskip("dgl")
pytest.importorskip("torch_geometric")

from torch_geometric.data import HeteroData  # noqa: E402

import graphferry  # noqa: E402
import graphferry.dgl as gfdgl  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402


def _heterograph():
    torch.manual_seed(0)
    return dgl.heterograph(
        {
            ("a", "x", "b"): (torch.randint(0, 20, (60,)), torch.randint(0, 30, (60,))),
            ("b", "y", "a"): (torch.randint(0, 30, (60,)), torch.randint(0, 20, (60,))),
        },
        num_nodes_dict={"a": 20, "b": 30},
    )


def _hetero_data(g):
    data = HeteroData()
    data["a"].x = torch.randn(20, 2)
    data["b"].x = torch.randn(30, 2)
    for et in g.canonical_etypes:
        data[et].edge_index = torch.stack(g.edges(etype=et))
    return data


def test_no_class_replaces_its_constructor():
    for cls in (gfdgl.DataLoader, gfpyg.NeighborLoader, gfpyg.LinkNeighborLoader, gfpyg.Sampler):
        assert "__new__" not in vars(cls), cls


def test_dgl_loader_is_one_class():
    g = _heterograph()
    homogeneous = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])))
    sampler = dgl.dataloading.NeighborSampler([2])
    edges = gfdgl.as_edge_prediction_sampler(sampler)
    loaders = [
        gfdgl.DataLoader(homogeneous, torch.arange(3), sampler),
        gfdgl.DataLoader(g, {"a": torch.arange(4)}, sampler),
        gfdgl.DataLoader(homogeneous, torch.arange(3), edges),
        gfdgl.DataLoader(g, {("a", "x", "b"): torch.arange(4)}, edges),
    ]
    for loader in loaders:
        assert type(loader) is gfdgl.DataLoader
        assert repr(loader).startswith("<graphferry.dgl.dataloader.DataLoader object")
        assert len(list(loader)) == len(loader)
        loader.close()
    # The names the heterogeneous and edge loaders had as classes.
    assert gfdgl.HeteroDataLoader is gfdgl.EdgeDataLoader is gfdgl.HeteroEdgeDataLoader is gfdgl.DataLoader
    # Edge loaders run on the engine's pipeline: their statistics are the
    # engine's (after close, those of the last epoch).
    assert loaders[2].stats().current.consumer.batches == 3
    with pytest.raises(TypeError, match="give an edge prediction sampler"):
        loaders[0].sample(torch.arange(2))


def test_pyg_classes_are_one_class_each():
    g = _heterograph()
    data = _hetero_data(g)
    hetero = graphferry.HeteroGraph.from_dgl(g)
    for source in (data, hetero):
        loader = gfpyg.NeighborLoader(source, [2], input_nodes=("a", None), batch_size=8)
        assert type(loader) is gfpyg.NeighborLoader and repr(loader) == "NeighborLoader()"
        assert len(list(loader)) == 3
        loader.close()
        link = gfpyg.LinkNeighborLoader(source, [2], edge_label_index=("a", "x", "b"), batch_size=32)
        assert type(link) is gfpyg.LinkNeighborLoader and repr(link) == "LinkNeighborLoader()"
        assert len(list(link)) == 2
        link.close()
        sampler = gfpyg.Sampler(source, [2])
        assert type(sampler) is gfpyg.Sampler
    again = pickle.loads(pickle.dumps(gfpyg.Sampler(data, [2])))
    assert type(again) is gfpyg.Sampler and again._hetero is None  # converted again on first use


def test_a_loader_that_cannot_be_made_draws_no_seed():
    g = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])))
    g.ndata["feat"] = torch.randn(3, 2)
    hg = _heterograph()
    missing = dgl.dataloading.NeighborSampler([2], prefetch_node_feats=["nope"])
    bad = [
        lambda: gfdgl.DataLoader(g, torch.arange(3), missing),
        lambda: gfdgl.DataLoader(hg, torch.arange(3), dgl.dataloading.NeighborSampler([2])),
        lambda: gfdgl.DataLoader(
            g, torch.arange(3), gfdgl.as_edge_prediction_sampler(dgl.dataloading.NeighborSampler([2])), batch_size=0
        ),
    ]
    for make in bad:
        torch.manual_seed(5)
        state = torch.get_rng_state()
        with pytest.raises((ValueError, TypeError)):
            make()
        assert torch.equal(torch.get_rng_state(), state)
    torch.manual_seed(5)
    gfdgl.DataLoader(g, torch.arange(3), dgl.dataloading.NeighborSampler([2])).close()
    assert not torch.equal(torch.get_rng_state(), state)  # one that is made draws its seed

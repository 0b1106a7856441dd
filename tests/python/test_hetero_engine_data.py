"""The engine owns the typed model (issue 29): type names live in the
engine's graph (a HeteroGraph reads them there), per-type node data is that
of the type its name names (never a type guessed from a row count), and the
node data of a DGL heterograph, a HeteroData and HeteroGraph.set_node_data
is handed to the engine once and gathered with each batch on its threads:
the training thread gathers nothing, and data replaced in the framework's
object after that is served as it is now, never stale."""

from __future__ import annotations

import pytest
import torch

import graphferry
from graphferry import HeteroGraph

# Two node types of the same size, edges both ways.
EQUAL_EDGES = {
    ("a", "ab", "b"): (
        torch.tensor([0, 1, 2, 3, 4, 5]),
        torch.tensor([1, 2, 3, 4, 5, 0]),
    ),
    ("b", "ba", "a"): (torch.tensor([0, 2, 4, 1]), torch.tensor([5, 3, 1, 0])),
}


def _equal_sized() -> HeteroGraph:
    hg = HeteroGraph.from_coo({"a": 6, "b": 6}, EQUAL_EDGES, num_patches=2, partition="random", seed=1)
    hg.set_node_data("a", "x", torch.arange(6) * 10)
    hg.set_node_data("b", "x", torch.arange(6) * 10 + 1)
    return hg


def test_type_names_live_in_the_engine():
    with _equal_sized() as hg:
        got = graphferry.hetero._engine_types(hg.graph)
        assert [t["name"] for t in got["node_types"]] == hg.node_types == ["a", "b"]
        assert [(t["src"], t["rel"], t["dst"]) for t in got["edge_types"]] == hg.edge_types
        assert hg.graph.node_data_names() == ["a/x", "b/x"]
        with pytest.raises(graphferry.GraphferryError, match='per-type node data "a/x" is held'):
            graphferry.hetero._engine_types(hg.graph, got)


def test_equal_sized_types_each_serve_their_own_data():
    """Two node types of 6 nodes with data of the same name: each batch's
    rows are the node's row of its own type (on main the engine could not
    tell the types apart and refused the data)."""
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl
    from graphferry.pyg import NeighborLoader

    with _equal_sized() as hg:
        assert hg.engine_names() == ("a/x", "b/x")
        loader = NeighborLoader(hg, [2, 2], input_nodes=("a", torch.arange(6)), batch_size=2, num_threads=1)
        batches = 0
        for batch in loader:
            for nt, base in (("a", 0), ("b", 1)):
                assert torch.equal(batch[nt].x, batch[nt].n_id * 10 + base), nt
            batches += 1
        assert batches == 3
        # Not copied: the engine gathers from the very tensor handed in.
        hg.get_node_data("a", "x").add_(1000)
        for batch in loader:
            assert torch.equal(batch["a"].x, batch["a"].n_id * 10 + 1000)
        loader.close()
        sampler = graphferry.dgl.NeighborSampler([2, 2], prefetch_node_feats=["x"], prefetch_labels={"b": ["x"]})
        dl = graphferry.dgl.DataLoader(hg, {"a": torch.arange(6), "b": torch.arange(3)}, sampler, batch_size=3)
        for _, _, blocks in dl:
            for nt, base in (("a", 1000), ("b", 1)):
                ids = blocks[0].srcnodes[nt].data[dgl.NID]
                assert torch.equal(blocks[0].srcnodes[nt].data["x"], ids * 10 + base), nt
            ids = blocks[-1].dstnodes["b"].data[dgl.NID]
            assert torch.equal(blocks[-1].dstnodes["b"].data["x"], ids * 10 + 1)
        dl.close()


def _capture_batches(monkeypatch, cls):
    """Records every engine batch's node data that ``cls._convert`` sees,
    and makes HeteroGraph.get_node_data (a Python gather) fail."""
    seen = []
    convert = cls._convert

    def spy(self, sub):
        seen.append(dict(sub.node_data))
        return convert(self, sub)

    def no_gather(*args, **kwargs):
        raise AssertionError("a batch's rows were gathered in Python")

    monkeypatch.setattr(cls, "_convert", spy)
    monkeypatch.setattr(HeteroGraph, "get_node_data", no_gather)
    return seen


def test_dgl_heterograph_data_gathered_by_the_engine(monkeypatch):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl
    from graphferry.dgl.dataloader import DataLoader

    gen = torch.Generator().manual_seed(0)
    g = dgl.heterograph(
        {
            ("paper", "cites", "paper"): (
                torch.randint(0, 30, (90,), generator=gen),
                torch.randint(0, 30, (90,), generator=gen),
            ),
            ("author", "writes", "paper"): (
                torch.randint(0, 20, (60,), generator=gen),
                torch.randint(0, 30, (60,), generator=gen),
            ),
            ("paper", "rev", "author"): (
                torch.randint(0, 30, (60,), generator=gen),
                torch.randint(0, 20, (60,), generator=gen),
            ),
        },
        num_nodes_dict={"paper": 30, "author": 20},
    )
    g.nodes["paper"].data["feat"] = torch.randn(30, 4, generator=gen)
    g.nodes["author"].data["feat"] = torch.randn(20, 2, generator=gen)
    g.nodes["paper"].data["label"] = torch.randint(0, 5, (30,), generator=gen)
    sampler = gfdgl.NeighborSampler([3, 3], prefetch_node_feats=["feat"], prefetch_labels={"paper": ["label"]})
    seen = _capture_batches(monkeypatch, DataLoader)
    loader = gfdgl.DataLoader(g, {"paper": torch.arange(30)}, sampler, batch_size=8, num_threads=1)
    assert set(loader._blocks.feature_names) == {"paper/feat", "author/feat"}
    assert loader._blocks.label_names == ("paper/label",)

    def check(feat_of):
        batches = 0
        for _, _, blocks in loader:
            for nt in ("paper", "author"):
                frame = blocks[0].srcnodes[nt].data
                assert torch.equal(frame["feat"], feat_of[nt][frame[dgl.NID].long()]), nt
            dst = blocks[-1].dstnodes["paper"].data
            assert torch.equal(dst["label"], g.nodes["paper"].data["label"][dst[dgl.NID].long()])
            batches += 1
        assert batches == 4
        return batches

    check({nt: g.nodes[nt].data["feat"] for nt in ("paper", "author")})
    # The block's rows are the engine's own tensors, not gathered again.
    _, _, blocks = next(iter(loader))
    assert seen and blocks[0].srcnodes["paper"].data["feat"].data_ptr() == seen[-1]["paper/feat"].data_ptr()
    # Replaced in the DGL graph: the next epochs serve the new tensor.
    new = torch.randn(20, 2, generator=gen)
    g.nodes["author"].data["feat"] = new
    check({"paper": g.nodes["paper"].data["feat"], "author": new})
    g.nodes["author"].data["feat"].mul_(2)  # changed in place
    check({"paper": g.nodes["paper"].data["feat"], "author": new})
    loader.close()


def test_hetero_data_gathered_by_the_engine(monkeypatch):
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import HeteroData

    import graphferry.pyg as gfpyg
    import graphferry.pyg.hetero as pyg_hetero
    from graphferry.pyg.neighbor_loader import NeighborLoader

    gen = torch.Generator().manual_seed(1)
    data = HeteroData()
    data["paper"].x = torch.randn(30, 4, generator=gen)
    data["paper"].y = torch.randint(0, 5, (30,), generator=gen)
    data["author"].x = torch.randn(20, 2, generator=gen)
    data["paper", "cites", "paper"].edge_index = torch.randint(0, 30, (2, 90), generator=gen)
    data["author", "writes", "paper"].edge_index = torch.stack(
        [
            torch.randint(0, 20, (60,), generator=gen),
            torch.randint(0, 30, (60,), generator=gen),
        ]
    )
    data["paper", "rev", "author"].edge_index = data["author", "writes", "paper"].edge_index.flip(0)
    filtered = []
    filter_hetero_data = pyg_hetero.filter_hetero_data

    def spy(source, *args):
        filtered.append({nt: set(source[nt].keys()) for nt in source.node_types})
        return filter_hetero_data(source, *args)

    monkeypatch.setattr(pyg_hetero, "filter_hetero_data", spy)
    seen = _capture_batches(monkeypatch, NeighborLoader)
    loader = gfpyg.NeighborLoader(
        data,
        [3, 3],
        input_nodes=("paper", torch.arange(30)),
        batch_size=8,
        num_threads=1,
    )
    assert {"paper/x", "paper/y", "author/x"} <= set(loader._node_attrs)

    def check(x_of):
        batches = 0
        for batch in loader:
            for nt in ("paper", "author"):
                assert torch.equal(batch[nt].x, x_of[nt][batch[nt].n_id]), nt
            assert torch.equal(batch["paper"].y, data["paper"].y[batch["paper"].n_id])
            batches += 1
        assert batches == 4

    check({nt: data[nt].x for nt in ("paper", "author")})
    assert all("x" not in keys["paper"] and "x" not in keys["author"] for keys in filtered), "PyG gathered x"
    batch = next(iter(loader))
    assert batch["author"].x.data_ptr() == seen[-1]["author/x"].data_ptr(), "the engine's rows, as they are"
    # Replaced in the HeteroData while the loader is open: served as it is now
    # (PyG gathers it until the engine holds it again), never stale.
    data["author"].x = torch.randn(20, 2, generator=gen)
    filtered.clear()
    check({nt: data[nt].x for nt in ("paper", "author")})
    assert all("x" in keys["author"] and "x" not in keys["paper"] for keys in filtered)
    loader.close()
    # A new loader hands the new tensor to the engine.
    loader = gfpyg.NeighborLoader(
        data,
        [3, 3],
        input_nodes=("paper", torch.arange(30)),
        batch_size=8,
        num_threads=1,
    )
    filtered.clear()
    check({nt: data[nt].x for nt in ("paper", "author")})
    assert all("x" not in keys["author"] for keys in filtered)
    loader.close()

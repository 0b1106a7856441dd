"""Per-type node data ("<type>/<name>") gathered by the engine's loader of
a whole typed graph, ahead of the training thread: the rows of the batch's
nodes of each type in the typed view's order, which the heterogeneous
loaders (PyG's, DGL's) ask the engine for: every type's data, a dataset's and
what set_node_data, a DGL heterograph or a HeteroData handed it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import graphferry

RELATION_FANOUTS = [[3, 2, -1, 2, 0, 3, 1], [2, 1, 2, 0, 2, 1, 2]]
FEATS, LABELS = ["paper/feat", "author/feat"], ["paper/label"]


@pytest.fixture(scope="module")
def typed_dir(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("hetero_tiny") / "gf"
    graphferry.generate("hetero-tiny", dst, seed=3)
    return dst


def test_engine_loader_gathers_per_type_rows(typed_dir):
    """graphferry.Loader over a typed dataset with per-type names: each
    batch's rows are the whole per-type arrays at the typed view's ids
    (labels: at the seeds of the type), whatever the partitioning."""
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        arrays = {name: hg.get_node_data(*name.split("/")) for name in FEATS + LABELS}
        paper, author = hg.ntype_index("paper"), hg.ntype_index("author")
        # Seeds of two types: the papers' labels are of the paper seeds only.
        seeds = torch.cat(
            [hg.to_global("paper", torch.arange(0, 200, 3)), hg.to_global("author", torch.arange(0, 60, 4))]
        )
    for patches in (1, 3):
        g = graphferry.Graph.open(typed_dir, num_patches=patches, partition="random", seed=2)
        try:
            loader = graphferry.Loader(
                g,
                seeds,
                [3, 2],
                relation_fanouts=RELATION_FANOUTS,
                batch_size=32,
                shuffle=True,
                seed=17,
                feature_names=FEATS,
                label_names=LABELS,
                num_threads=1,
            )
            batches = 0
            for sub in loader.epoch(0):
                tv, off = sub.typed, sub.typed.node_offsets
                for name in FEATS:
                    t = paper if name.startswith("paper/") else author
                    assert torch.equal(sub.node_data[name], arrays[name][tv.nodes[off[t] : off[t + 1]]]), name
                ids = tv.nodes[off[paper] : off[paper + 1]][: int(tv.hop_counts[paper, 0])]
                assert torch.equal(sub.labels["paper/label"], arrays["paper/label"][ids])
                batches += 1
            loader.close()
            assert batches == -(-seeds.numel() // 32)
        finally:
            g.close()


def test_engine_names_of_a_whole_graph(typed_dir):
    """What the loaders ask the engine for: every type's node data, the
    dataset's and what set_node_data handed it (also over an engine name),
    on any typed graph: the type is the one named, also when two types have
    as many nodes."""
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        held = set(hg.engine_names())
        assert {"paper/feat", "author/feat", "paper/label"} <= held
        hg.get_node_data("paper", "feat")  # read from the engine: still the engine's
        assert "paper/feat" in hg.engine_names()
        extra = torch.arange(hg.num_nodes("paper"))
        hg.set_node_data("paper", "extra", extra)
        shadow = torch.zeros(hg.num_nodes("author"), 2)
        hg.set_node_data("author", "feat", shadow)
        names = set(hg.engine_names())
        assert {"paper/extra", "author/feat", "paper/feat"} <= names
        assert torch.equal(hg.graph.get_node_data("author/feat"), shadow), "the engine holds the new tensor"
        assert hg.engine_names({"paper": ["label"]}) == ("paper/label",)
    edges = {("a", "r", "b"): (torch.tensor([0, 1]), torch.tensor([1, 0]))}
    with graphferry.HeteroGraph.from_coo({"a": 2, "b": 2}, edges) as hg:
        hg.graph.set_node_data("b/x", torch.tensor([5, 6]))
        assert hg.engine_names() == ("b/x",)  # a and b both have 2 nodes: "b/x" names b
    with graphferry.HeteroGraph.from_coo({"a": 2, "b": 3}, edges) as hg:
        hg.graph.set_node_data("b/x", torch.tensor([5, 6, 7]))
        assert hg.engine_names() == ("b/x",)


def test_pyg_loader_mixes_engine_and_python_rows(typed_dir):
    """PyG's NeighborLoader over a HeteroGraph: the dataset's rows and the
    ones handed in from Python (a new name, and one replacing the
    dataset's) are each the node's row of its type."""
    from graphferry.pyg import NeighborLoader

    with graphferry.HeteroGraph.open(typed_dir) as hg:
        extra = torch.arange(hg.num_nodes("paper")) * 2
        shadow = torch.randn(hg.num_nodes("author"), 2)
        hg.set_node_data("paper", "extra", extra)
        hg.set_node_data("author", "feat", shadow)
        fanouts = {et: [2, 1] for et in hg.edge_types}
        loader = NeighborLoader(hg, fanouts, input_nodes=("paper", torch.arange(64)), batch_size=16, num_threads=1)
        assert "paper/feat" in loader._node_attrs and "author/feat" in loader._node_attrs  # all the engine's
        batches = 0
        for batch in loader:
            batches += 1
            for nt in hg.node_types:
                for name in hg.node_data_names(nt):
                    assert torch.equal(batch[nt][name], hg.get_node_data(nt, name)[batch[nt].n_id]), (nt, name)
            assert torch.equal(batch["author"]["feat"], shadow[batch["author"].n_id])
        loader.close()
        assert batches == 4

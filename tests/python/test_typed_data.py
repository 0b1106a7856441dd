"""The typed (heterogeneous) dataset layout from Python: generate("hetero-tiny"),
open it, read its types and per-type node data, verify it, and check that its
relations are numbered the way DGL numbers a heterograph's."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

import graphferry


@pytest.fixture(scope="module")
def hetero_tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("typed") / "hetero-tiny"
    graphferry.generate("hetero-tiny", path)
    return path


def _meta(path):
    with open(path / "graphferry.json", encoding="utf-8") as f:
        return json.load(f)


def test_generate_writes_types(hetero_tiny):
    meta = _meta(hetero_tiny)
    ntypes = [t["name"] for t in meta["node_types"]]
    assert ntypes == ["author", "field_of_study", "institution", "paper"]
    etypes = [(t["src"], t["rel"], t["dst"]) for t in meta["edge_types"]]
    assert ("author", "writes", "paper") in etypes and ("paper", "rev_writes", "author") in etypes
    assert etypes == sorted(etypes), "relations in canonical order"
    assert sum(t["num_nodes"] for t in meta["node_types"]) == meta["num_nodes"]
    assert sum(t["num_edges"] for t in meta["edge_types"]) == meta["num_edges"]
    # Every data file is checksummed, the per-type ones included.
    for entry in meta["node_data"] + meta["edge_data"]:
        assert entry["file"] in meta["files"]


def test_open_typed_dataset(hetero_tiny):
    meta = _meta(hetero_tiny)
    counts = {t["name"]: t["num_nodes"] for t in meta["node_types"]}
    offsets = np.concatenate([[0], np.cumsum([t["num_nodes"] for t in meta["node_types"]])])
    with graphferry.Graph.open(hetero_tiny, num_patches=3, partition="random", seed=1) as g:
        assert g.num_nodes == meta["num_nodes"]
        assert g.num_edges == meta["num_edges"]
        assert g.num_types == (4, 7)
        names = g.node_data_names()
        for ntype, width in {"author": 8, "field_of_study": 4, "institution": 4, "paper": 16}.items():
            assert f"{ntype}/feat" in names
            feat = g.get_node_data(f"{ntype}/feat")
            assert feat.shape == (counts[ntype], width) and feat.dtype == torch.float32
        label = g.get_node_data("label")
        paper = list(counts).index("paper")
        lo, hi = int(offsets[paper]), int(offsets[paper + 1])
        paper_label = g.get_node_data("paper/label")
        assert torch.equal(label[lo:hi], paper_label)
        assert (label[:lo] == -1).all() and (label[hi:] == -1).all()
        train = g.get_node_data("paper/train_mask").bool()
        assert torch.equal(g.get_node_data("train_mask")[lo:hi].bool(), train)
        years = g.get_node_data("time")[lo:hi]
        assert years.dtype == torch.int64 and (years >= 2000).all() and (years <= 2020).all()
        with pytest.raises(graphferry.GraphferryError, match="row per node"):
            g.set_node_data("paper/bad", torch.zeros(3))


def test_generate_is_reproducible_across_threads(tmp_path):
    graphferry.generate("hetero-tiny", tmp_path / "a", num_threads=1)
    graphferry.generate("hetero-tiny", tmp_path / "b", num_threads=2)
    assert _meta(tmp_path / "a")["files"] == _meta(tmp_path / "b")["files"]
    graphferry.generate("hetero-tiny", tmp_path / "c", seed=9)
    assert _meta(tmp_path / "a")["files"] != _meta(tmp_path / "c")["files"]


def test_verify_typed_dataset(hetero_tiny):
    out = subprocess.run(
        [sys.executable, "-m", "graphferry", "verify", str(hetero_tiny)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "node.paper.feat.bin" in out.stdout and "edge.time.bin" in out.stdout


def test_damaged_typed_file_is_named(hetero_tiny, tmp_path):
    import shutil

    copy = tmp_path / "ds"
    shutil.copytree(hetero_tiny, copy)
    path = copy / "node.author.feat.bin"
    data = bytearray(path.read_bytes())
    data[5] ^= 0x10
    path.chmod(0o644)
    path.write_bytes(bytes(data))
    with pytest.raises(graphferry.GraphferryError, match="node.author.feat.bin"):
        graphferry.Graph.open(copy, verify=True)


def test_relation_order_matches_dgl(hetero_tiny):
    dgl = pytest.importorskip("dgl")
    meta = _meta(hetero_tiny)
    etypes = [(t["src"], t["rel"], t["dst"]) for t in meta["edge_types"]]
    data = {et: (torch.tensor([0]), torch.tensor([0])) for et in etypes}
    hg = dgl.heterograph(data, num_nodes_dict={t["name"]: t["num_nodes"] for t in meta["node_types"]})
    assert hg.canonical_etypes == etypes
    assert hg.ntypes == [t["name"] for t in meta["node_types"]]


@pytest.mark.parametrize("temporal", ["node", "edge"])
def test_dataset_times_reach_the_engine(hetero_tiny, temporal):
    # Opening sets the node and edge times: temporal sampling from papers
    # with a cut-off year reaches no node later than it (edge times are the
    # later of their ends' times, so the edge variant holds it too).
    from graphferry.sampling import sample_neighbors

    meta = _meta(hetero_tiny)
    offsets = np.concatenate([[0], np.cumsum([t["num_nodes"] for t in meta["node_types"]])])
    paper = [t["name"] for t in meta["node_types"]].index("paper")
    with graphferry.Graph.open(hetero_tiny, num_patches=2) as g:
        node_time = g.get_node_data("time")
        seeds = torch.arange(int(offsets[paper]), int(offsets[paper]) + 16)
        cut = torch.full((16,), 2010, dtype=torch.int64)
        sub = sample_neighbors(
            g, seeds, [-1, -1], frontier="new", disjoint=True, temporal=temporal, seed_times=cut, seed=3
        )
        reached = sub.nodes[sub.batch_size :]
        assert reached.numel() > 0
        assert (node_time[reached] <= 2010).all()
        untimed = sample_neighbors(g, seeds, [-1, -1], frontier="new", disjoint=True, seed=3)
        assert (node_time[untimed.nodes[untimed.batch_size :]] > 2010).any(), "the cut-off excludes something"

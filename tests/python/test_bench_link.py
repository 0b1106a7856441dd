"""The link-prediction mode of the benchmark (bench/graphferry_bench/link.py,
``make bench-link``) checked for its own correctness on tiny graphs: one
epoch of every edge loader and node loader, the JSON figures, ratios, goals
and the Markdown report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("dgl", reason="the link mode's baseline is DGL's edge loader")
pytest.importorskip("torch_geometric", reason="the link mode measures graphferry.pyg's loaders")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from graphferry_bench import data, link, systems  # noqa: E402


def tiny_link_graph() -> link.LinkGraph:
    """The undirected edges u < v of the suite's tiny R-MAT graph (symmetric),
    as a link graph: both directions, edge i and i + E reverses."""
    g = data.python_rmat("tiny", batch_size=64, seed=0)
    src, dst = g.indices.numpy(), g.dst().numpy()
    keep = src < dst
    lg = link.from_pairs("tiny", "test", g.num_nodes, src[keep], dst[keep], g.feat)
    g.close()
    return lg


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    out = tmp_path_factory.mktemp("link")
    lg = tiny_link_graph()
    notes = []
    result = link.run(
        [lg],
        out,
        epochs=1,
        warmup=0,
        notes=notes,
        echo=lambda line: None,
        progress=False,
        node_graphs=[lambda: data.python_rmat("tiny", batch_size=64, seed=0)],
        command="test",
    )
    return result, out, lg


def test_edge_loaders_on_tiny_graph(doc):
    result, out, lg = doc
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk["meta"]["mode"] == "link" and on_disk["meta"]["command"] == "test"
    (run,) = on_disk["runs"]
    assert run["graph"] == "tiny" and run["num_edges"] == lg.num_edges and run["num_seeds"] == lg.num_edges
    # reverses: edge e and e + E join the same nodes the other way round
    half = lg.num_edges // 2
    assert torch.equal(lg.edge_index[:, :half], lg.edge_index.flip(0)[:, half:])
    assert torch.equal(lg.reverse_eids()[lg.reverse_eids()], torch.arange(lg.num_edges))

    results = run["results"]
    expected = {c.name for c in link.ALL_SYSTEMS if link.available(c)[0]}
    assert set(results) == expected and link.BASELINE in results
    if systems.pyg_backend() is None:
        assert link.PYG_MISSING in on_disk["meta"]["notes"]
    batches = -(-lg.num_edges // link.BATCH_SIZE)
    base = results[link.BASELINE]
    for name, entry in results.items():
        assert set(entry["modes"]) == set(link.MODES), name
        for mode, m in entry["modes"].items():
            assert m["median_s"] > 0 and len(m["times_s"]) == 1, (name, mode)
            assert m["batches"] == batches, (name, mode)
            # every seed edge once, and one negative for each
            assert m["pairs"] == 2 * lg.num_edges, (name, mode)
            assert m["sampled_edges"] > 0, (name, mode)
            feature_bytes = lg.feat.shape[1] * lg.feat.element_size()
            if mode == "sample":
                assert m["feature_bytes"] == 0, name
            else:
                assert m["feature_bytes"] > 0 and m["feature_bytes"] % feature_bytes == 0, name
        if entry["graphferry"]:
            for mode in link.MODES:
                assert entry["ratios"][mode]["ratio"] == pytest.approx(
                    base["modes"][mode]["median_s"] / entry["modes"][mode]["median_s"]
                )
        else:
            assert "ratios" not in entry


def test_graphferry_pyg_sampling_mode_gathers_no_features():
    """The sampling mode's graphferry.pyg loader is given the graphferry.Graph
    converted from the DGL graph (a loader on a Data gathers every node
    attribute it has): its batches carry no features; the features mode's
    carry ``x``."""
    lg = tiny_link_graph()
    system = link.GraphferryPyGLink(lg, link.FANOUTS, 64, 0)
    try:
        batch = next(iter(system.loader("sample")))
        assert "x" not in batch and "feat" not in batch
        batch = next(iter(system.loader("features")))
        assert torch.equal(batch.x, lg.feat[batch.n_id])
    finally:
        system.close()
        lg.release()


def test_node_loaders_and_goals(doc):
    result, out, _ = doc
    (nodes,) = result["nodes"]
    assert nodes["graph"] == "rmat-tiny" and nodes["batch_size"] == link.NODE_BATCH_SIZE
    results = nodes["results"]
    assert set(results) == {c.name for c in link.NODE_SYSTEMS}
    for name, entry in results.items():
        assert set(entry["modes"]) == {"sample"}, name
        assert entry["modes"]["sample"]["feature_bytes"] == 0 and entry["modes"]["sample"]["sampled_edges"] > 0
    pyg = results[systems.GraphferryPyG.name]["modes"]["sample"]["median_s"]
    dgl = results[systems.GraphferryDGL.name]["modes"]["sample"]["median_s"]
    assert nodes["pyg_over_dgl"]["ratio"] == pytest.approx(pyg / dgl)

    goals = result["goals"]
    node_goals = [g for g in goals if g["graph"] == "rmat-tiny"]
    assert len(node_goals) == 1 and node_goals[0]["met"] == (pyg / dgl <= link.NODE_GOAL)
    edge_goals = [g for g in goals if g["graph"] == "tiny"]
    graphferry_loaders = [e for e in result["runs"][0]["results"].values() if e["graphferry"]]
    assert len(edge_goals) == len(graphferry_loaders) * len(link.MODES)
    assert all(g["met"] == (g["measured"] >= link.GOAL) for g in edge_goals)

    md = (out / "results.md").read_text()
    assert md.rstrip("\n") == link.to_markdown(result).rstrip("\n")
    assert "## Goals" in md and "## Edge loaders" in md and "## Node loaders (sampling epochs)" in md
    assert f"| {link.BASELINE} |" in md and "graphferry.pyg / graphferry.dgl:" in md


def test_load_npy_keeps_each_undirected_edge_once(tmp_path):
    # 0-1 twice (both directions), 1-2, a self-loop on 2
    (tmp_path / "g").mkdir()
    np.save(tmp_path / "g" / "indptr.npy", np.array([0, 1, 3, 5]))
    np.save(tmp_path / "g" / "indices.npy", np.array([1, 0, 2, 1, 2]))
    np.save(tmp_path / "g" / "feat.npy", np.ones((3, 2), dtype=np.float32))
    lg = link.load_npy(tmp_path / "g")
    assert lg.num_nodes == 3 and lg.edge_index.tolist() == [[0, 1, 1, 2], [1, 2, 0, 1]]


def test_main_without_datasets_reports_missing(tmp_path, capsys):
    rc = link.main(["--datasets", "no-such", "--data", str(tmp_path), "--out", str(tmp_path / "o"), "--no-progress"])
    assert rc == 1
    assert "no-such: not measured" in capsys.readouterr().out

"""The benchmark suite (bench/graphferry_bench) checked for its own
correctness on a tiny in-Python R-MAT graph: one epoch of every system, the
JSON figures, ratios = baseline / graphferry, the Markdown table, the PNGs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from graphferry_bench import cli, data, measure, report, systems  # noqa: E402


@pytest.fixture(scope="module")
def tiny():
    g = data.python_rmat("tiny", batch_size=64, seed=0)
    yield g
    g.close()


def test_rmat_csc_is_valid(tiny):
    n = tiny.num_nodes
    assert n == 256 and tiny.indptr.numel() == n + 1 and tiny.indptr[-1] == tiny.num_edges > 0
    assert int(tiny.indices.min()) >= 0 and int(tiny.indices.max()) < n
    dst = tiny.dst()
    assert not bool((dst == tiny.indices).any())  # no self-loops
    # symmetric: every edge u -> v has v -> u
    fwd = set(zip(tiny.indices.tolist(), dst.tolist()))
    assert all((v, u) in fwd for u, v in fwd)
    assert tiny.feat.dtype == torch.float32 and tiny.feat.shape == (n, 16)


def test_ratio_is_baseline_over_graphferry():
    base = {"median_s": 2.0, "min_s": 1.5, "max_s": 3.0}
    ours = {"median_s": 0.5, "min_s": 0.4, "max_s": 1.0}
    r = measure.ratio(base, ours)
    assert r == {"ratio": 4.0, "low": 1.5, "high": 7.5}
    assert measure.loading_ratio(0.2, 0.1) == pytest.approx(2.0)
    assert measure.loading_ratio(0.2, 0.0) is None


def test_memcpy_ceiling_reuses_one_prefaulted_buffer(tiny):
    """The ceiling copies contiguous feature rows, as many as each batch of the
    index_select baseline has input nodes, into one buffer made before the
    epoch: no allocation (and no page faults) inside the timed loop."""
    ceiling = systems.MemcpyCeiling(tiny, [5, 5], 64, 0)
    gathered = [b.x.shape[0] for b in systems.IndexSelect(tiny, [5, 5], 64, 0).epochs("load")()]
    run = ceiling.epochs("load")
    feat = tiny.feat
    epochs = []
    for _ in range(2):  # every epoch uses the same buffer
        ptrs, sizes = set(), []
        for b in run():
            n = b.x.shape[0]
            sizes.append(n)
            ptrs.add(b.x.data_ptr())
            start = int((feat == b.x[0]).all(1).nonzero()[0])  # rmat features: distinct rows
            assert torch.equal(b.x, feat[start : start + n]), "a contiguous run of feature rows"
        assert sizes == gathered
        epochs.append(ptrs)
    assert epochs[0] == epochs[1] and len(epochs[0]) == 1, "one buffer for every batch of every epoch"


def test_suite_on_tiny_graph(tiny, tmp_path):
    pytest.importorskip("dgl", reason="the suite's baselines and its checks below are DGL's loaders")
    cfg = cli.Config(
        mode="test",
        batch_size=64,
        hidden=16,
        epochs=1,
        warmup=0,
        threads=[1, 2],
        batch_sizes=[32, 64],
        fanout_sweep=[[5, 5, 5], [10, 5, 5]],
        scaling_epochs=1,
    )
    lines = []
    doc = cli.run_suite([tiny], cfg, tmp_path, progress=False, echo=lines.append)
    on_disk = json.loads((tmp_path / "results.json").read_text())
    assert on_disk["meta"]["mode"] == "test"
    assert set(on_disk) >= {"meta", "runs", "scaling", "plots"}
    (run,) = on_disk["runs"]
    assert run["graph"] == "rmat-tiny" and run["num_nodes"] == 256 and run["batch_size"] == 64
    results = run["results"]

    expected = {cls.name for cls in systems.ALL_SYSTEMS if systems.available(cls)[0]}
    assert set(results) == expected
    if systems.pyg_backend() is None:
        assert systems.PYG_MISSING in on_disk["meta"]["notes"] and f"bench: {systems.PYG_MISSING}" in lines
        assert "PyG NeighborLoader" not in results

    for name, entry in results.items():
        for mode, m in entry["modes"].items():
            assert mode in systems.MODES
            assert m["median_s"] > 0 and m["min_s"] <= m["median_s"] <= m["max_s"], (name, mode)
            assert len(m["times_s"]) == 1 and m["batches"] == -(-tiny.seeds.numel() // 64)
        b = entry["breakdown"]
        if "load" in entry["modes"]:
            assert entry["modes"]["load"]["feature_bytes"] > 0
            assert b["loading_s"] >= 0
        if "sample" in entry["modes"]:
            assert entry["modes"]["sample"]["sampled_edges"] > 0 and entry["modes"]["sample"]["edges_per_s"] > 0
            assert entry["modes"]["sample"]["feature_bytes"] == 0
        if "train" in entry["modes"]:
            assert b["training_s"] >= 0 and b["epoch_s"] == entry["modes"]["train"]["median_s"]

    # ratios: baseline time / graphferry time, on the medians
    gf = results["graphferry.dgl (pipelined)"]
    dgl_entry = results["DGL DataLoader"]
    r = gf["ratios"]["DGL DataLoader"]
    assert r["sampling"]["ratio"] == pytest.approx(
        dgl_entry["modes"]["sample"]["median_s"] / gf["modes"]["sample"]["median_s"]
    )
    assert r["epoch"]["ratio"] == pytest.approx(
        dgl_entry["modes"]["train"]["median_s"] / gf["modes"]["train"]["median_s"]
    )
    assert "ratios" not in dgl_entry
    # the same features are moved for the same seeds by every DGL-format system
    assert gf["modes"]["load"]["feature_bytes"] % (16 * 4) == 0

    sc = on_disk["scaling"]
    assert [t["num_threads"] for t in sc["threads"]] == [1, 2]
    assert [t["batch_size"] for t in sc["batch_size_sweep"]] == [32, 64]
    assert all(t["edges_per_s"] > 0 for t in sc["threads"] + sc["batch_size_sweep"] + sc["fanout_sweep"])

    md = (tmp_path / "results.md").read_text()
    assert "## Headline ratios" in md and "| DGL DataLoader |" in md
    table_rows = [line for line in md.splitlines() if line.startswith("| graphferry.dgl (pipelined) |")]
    assert len(table_rows) == 1 and table_rows[0].count("|") == 8
    assert md.rstrip("\n") == report.to_markdown(doc).rstrip("\n")

    for name in ("breakdown.png", "throughput_threads.png", "throughput_batch_size.png", "throughput_fanout.png"):
        png = tmp_path / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name


def test_cli_without_datasets_reports_missing(tmp_path, capsys):
    rc = cli.main(
        ["--datasets", "no-such-dataset", "--data", str(tmp_path), "--out", str(tmp_path / "o"), "--no-progress"]
    )
    assert rc == 1
    assert "no-such-dataset: not measured" in capsys.readouterr().out

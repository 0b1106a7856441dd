"""Memory that graphs and loaders hold (issue 34): a dropped loader releases
what it holds at once, without close() and without a garbage collection;
opening a dataset holds what memory_plan says and stays within its budget.

No timing is asserted: outcomes only (objects gone, descriptors and resident
memory back where they were, a budget refused with an error naming it)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import psutil
import pytest
import torch

import graphferry

REPO = Path(__file__).resolve().parents[2]
CORA = REPO / "examples" / "data" / "cora"

ROUNDS = 30
WARMUP = 3
# Resident memory may wander by a few MB (allocator pools, Go's scavenger);
# a round that kept its graph keeps its disk tier's cache (16 MiB below,
# filled by three batches' rows) and 30 of them are hundreds of MB.
RSS_TOLERANCE = 48 << 20


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _round(r: int) -> tuple[weakref.ref, weakref.ref]:
    g = graphferry.Graph.open(CORA, feature_tier="disk", cache_bytes=16 << 20)
    loader = graphferry.Loader(
        g, g.train_idx, [10, 10], batch_size=48, shuffle=True, seed=r, feature_names=["feat"], label_names=["label"]
    )
    it = iter(loader)
    for _ in range(3):
        batch = next(it)
        assert batch.node_data["feat"].shape[0] == batch.nodes.numel()
    refs = weakref.ref(g), weakref.ref(loader)
    del g, loader, it, batch  # mid-epoch, no close()
    return refs


def test_dropped_disk_tier_loaders_release_memory_and_descriptors():
    """Disk-tier graphs and loaders dropped mid-epoch without close() and
    with the collector off are gone at once (nothing in them refers back to
    them), their files and io_uring rings closed: descriptors and resident
    memory stay flat over the rounds."""
    proc = psutil.Process()
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for r in range(WARMUP):  # the Go runtime's own descriptors (its poller) and pools
            _round(r)
        fds, rss = _fds(), proc.memory_info().rss
        for r in range(ROUNDS):
            g, loader = _round(WARMUP + r)
            assert g() is None and loader() is None, f"round {r}: the dropped graph or loader is still alive"
            assert _fds() == fds, f"round {r}: {_fds() - fds} descriptors left open"
        grown = proc.memory_info().rss - rss
        assert grown < RSS_TOLERANCE, f"resident memory grew by {grown >> 20} MiB over {ROUNDS} rounds"
    finally:
        if enabled:
            gc.enable()


def test_dropped_batch_and_graph_without_loader():
    """A graph dropped without close(), and a batch taken from a loader
    whose graph was closed, go with their last reference too."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        g = graphferry.Graph.open(CORA, feature_tier="disk")
        ref = weakref.ref(g)
        del g
        assert ref() is None
        with graphferry.Graph.open(CORA) as g:
            loader = graphferry.Loader(g, torch.arange(64), [5], batch_size=16)
            batch = next(iter(loader))
        assert loader.closed  # closing the graph closed it
        ref = weakref.ref(loader)
        del loader
        assert ref() is None
        assert batch.nodes.numel() >= 16  # the batch stays valid
    finally:
        if enabled:
            gc.enable()


_OPEN = r"""
import json, sys
import graphferry

def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024

graphferry.Graph.open(sys.argv[2]).close()  # the engine's runtime and threads started
before = anon()
g = graphferry.Graph.open(sys.argv[1], memory_budget=int(sys.argv[3]))
print(json.dumps({"grown": anon() - before, "plan": g.memory_plan, "report": g.memory_report()}))
"""


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """A random graph of 150,000 nodes and 6M edges converted to a dataset
    without CSC files: a topology of about 25 MB, well above the process's
    noise (a few MB)."""
    rng = np.random.default_rng(34)
    n, e = 150_000, 6_000_000
    src = tmp_path_factory.mktemp("npy")
    np.save(src / "indptr.npy", np.linspace(0, e, n + 1).astype(np.int64))
    np.save(src / "indices.npy", rng.integers(0, n, e, dtype=np.int64))
    np.save(src / "feat.npy", rng.random((n, 4), dtype=np.float32))
    np.save(src / "label.npy", rng.integers(0, 4, n, dtype=np.int64))
    (src / "meta.json").write_text(json.dumps({"name": "random", "num_classes": 4}))
    path = tmp_path_factory.mktemp("random") / "random"
    graphferry.convert_npy(src, path)
    assert not (path / "csc_indptr.bin").exists()
    return path


def _open(path: Path, budget: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _OPEN, str(path), str(CORA), str(budget)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_open_holds_what_the_plan_says(generated):
    """Opened without CSC files (the topology built from edges.arrow), the
    process's anonymous resident memory grows by the plan's topology and node
    columns within 25%: the build's record batches and counters are not
    kept; the report says what opening held at most."""
    got = _open(generated, 1 << 40)
    plan = got["plan"]
    want = plan["topology_bytes"] + plan["node_column_bytes"]
    assert want > 24 << 20
    assert 0.75 * want <= got["grown"] <= 1.25 * want, (got["grown"], want)
    assert "opening: held at most" in got["report"]
    assert "building the topology from edges.arrow" in got["report"]


def test_open_refuses_a_budget_below_what_opening_holds(generated):
    """A budget below what the build holds is refused before the CSC is
    allocated, with an error that names the budget and the CSC files as the
    way out; the budget it needs opens."""
    with pytest.raises(graphferry.GraphferryError, match="over the memory budget of 4194304 bytes") as err:
        graphferry.Graph.open(generated, memory_budget=4 << 20)
    assert "python -m graphferry csc" in str(err.value)
    assert isinstance(err.value, MemoryError)
    with graphferry.Graph.open(generated, memory_budget=1 << 30) as g:
        report = g.memory_report()
    held = report.split("opening: held at most ")[1].split(" (")[0]
    assert held.endswith("MiB") and 4 < float(held.split()[0]) < 1024

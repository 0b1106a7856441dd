"""The disk tier from Python (issue 21): Graph.open's memory_budget,
feature_tier, cache_policy and cache_bytes; the plan it reports; rows read
through every tier (hot, CPU cache, disk) equal the dataset's for every
dtype; a truncated, damaged or rewritten feature file read through the disk
tier is the mapping's error; the budget is honoured (feat.bin's pages are never mapped in: the
tier reads around the page cache, O_DIRECT)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

# As test_damaged: the engine's SIGBUS handler, not faulthandler's, must see
# a truncated mapping's fault (an autouse fixture).
from test_damaged import engine_handles_sigbus  # noqa: F401

import graphferry

REPO = Path(__file__).resolve().parents[2]
CORA = REPO / "examples" / "data" / "cora"
WIDTH = 24  # feature columns kept in the copies (Cora has 1433)


def _cora_feat() -> np.ndarray:
    meta = json.loads((CORA / "graphferry.json").read_text())
    return np.fromfile(CORA / "feat.bin", dtype=np.float32).reshape(meta["feature"]["shape"])


def _copy_with_feat(dst: Path, feat: np.ndarray, dtype: str) -> Path:
    """Cora with feat.bin replaced by feat (dtype named as graphferry.json
    names it)."""
    shutil.copytree(CORA, dst)
    raw = feat.tobytes()
    (dst / "feat.bin").write_bytes(raw)
    meta = json.loads((dst / "graphferry.json").read_text())
    meta["feature"] = {"file": "feat.bin", "dtype": dtype, "shape": list(feat.shape)}
    meta["files"].pop("feat.bin")  # size recorded below; no checksum (verify=False)
    meta["files"]["feat.bin"] = {"size": len(raw)}
    # A hand-made copy: no block or declared sums (those of the shipped
    # feat.bin would refuse the new one), opened like an older dataset.
    meta.pop("blocks", None)
    meta.pop("declared", None)
    (dst / "graphferry.json").write_text(json.dumps(meta))
    return dst


def _as(dtype: str, x: np.ndarray) -> tuple[np.ndarray, torch.Tensor]:
    """x (small integers as float32) as dtype: the file's bytes and the
    torch tensor they read as."""
    if dtype == "bfloat16":
        t = torch.from_numpy(x).to(torch.bfloat16)
        return t.view(torch.int16).numpy(), t
    if dtype == "bool":
        b = x != 0
        return b, torch.from_numpy(b)
    a = x.astype(dtype)
    return a, torch.from_numpy(a)


DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_rows_through_every_tier(tmp_path, dtype):
    rng = np.random.default_rng(len(dtype))
    base = (_cora_feat()[:, :WIDTH] * 3 + rng.integers(-4, 5, size=(2708, WIDTH))).astype(np.float32)
    raw, want = _as(dtype, base)
    path = _copy_with_feat(tmp_path / "cora", raw, dtype)
    row = want[0].numel() * want.element_size()
    policy = ["s3fifo", "sieve", "lru"][len(dtype) % 3]
    with graphferry.Graph.open(path, feature_tier="disk", cache_policy=policy, cache_bytes=300 * (row + 64)) as g:
        plan = g.memory_plan
        assert plan["feature_tier"] == "disk" and plan["cache_policy"] == policy
        assert plan["feature_bytes"] == want.numel() * want.element_size()
        assert "disk" in g.memory_report()
        loader = graphferry.Loader(
            g, torch.arange(2708), [4, 4], batch_size=512, shuffle=True, seed=1, feature_names=["feat"], num_threads=2
        )
        assert loader.set_cache(0.05) > 0  # the hot tier above the CPU cache
        for _ in range(2):
            for b in loader:
                got = b.node_data["feat"]
                assert got.dtype == want.dtype
                assert torch.equal(got, want[b.nodes]), dtype
        s = loader.stats().total
        assert s.rows_hot > 0 and s.rows_cache > 0 and s.rows_disk > 0, s
        assert s.rows_cold == s.rows_cache + s.rows_disk
        assert s.bytes_disk == s.rows_disk * row
        assert s.bytes_disk_read >= s.bytes_disk and s.disk_requests > 0
        assert 0 < s.cache_hit_rate < 1
        loader.close()


def test_open_options_checked():
    with pytest.raises(ValueError, match="feature_tier"):
        graphferry.Graph.open(CORA, feature_tier="ssd")
    with pytest.raises(ValueError, match="cache_policy"):
        graphferry.Graph.open(CORA, cache_policy="clock")
    with pytest.raises(graphferry.GraphferryError, match="memory_budget"):
        graphferry.Graph.open(CORA, memory_budget=-1)
    with graphferry.Graph.open(CORA) as g:  # no budget: mapped as before
        assert g.memory_plan["feature_tier"] == "memory"


def _error_of(path: Path, tier: str) -> tuple[type, str]:
    """The error of an epoch over path's Cora after feat.bin is truncated
    to 4 KiB under the open graph (before the first batch is loaded: both
    tiers fail on the same batch and, one thread, the same first bad row)."""
    with graphferry.Graph.open(path, feature_tier=tier, cache_bytes=0 if tier == "disk" else None) as g:
        loader = graphferry.Loader(
            g, torch.arange(2708), [3], batch_size=256, seed=1, feature_names=["feat"], num_threads=1
        )
        os.truncate(path / "feat.bin", 4096)
        try:
            for _ in loader:
                pass
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc), str(exc)
        finally:
            loader.close()
            shutil.copyfile(CORA / "feat.bin", path / "feat.bin")
    raise AssertionError(f"no error on the {tier} tier")


def test_truncated_feature_file_same_error(tmp_path):
    path = tmp_path / "cora"
    shutil.copytree(CORA, path)
    mapped = _error_of(path, "memory")
    disk = _error_of(path, "disk")
    assert "truncated or replaced while mapped" in mapped[1] and str(path / "feat.bin") in mapped[1]
    # The same error but for the byte named: the mapping faults at the first
    # byte it touches past the end, the disk tier names the first row its
    # reads found short (both past the new end).
    byte = re.compile(r"byte (\d+) is past the end")
    assert disk[0] is mapped[0]
    assert byte.sub("byte N is past the end", disk[1]) == byte.sub("byte N is past the end", mapped[1])
    assert int(byte.search(disk[1]).group(1)) >= 4096 and int(byte.search(mapped[1]).group(1)) >= 4096


def _epoch_error(path: Path, tier: str, damage) -> str:
    """The error of an epoch over path's Cora (block sums recorded) after
    damage(feat.bin) changed it in place under the open graph."""
    with graphferry.Graph.open(path, feature_tier=tier, cache_bytes=0 if tier == "disk" else None) as g:
        assert g.memory_plan["feature_tier"] == tier
        loader = graphferry.Loader(
            g, torch.arange(2708), [3], batch_size=256, seed=1, feature_names=["feat"], num_threads=1
        )
        damage(path / "feat.bin")
        try:
            with pytest.raises(OSError, match=r"feat\.bin: (block|page) \d+ \(bytes \d+ to \d+\) has CRC-32C") as info:
                for _ in loader:
                    pass
        finally:
            loader.close()
            shutil.copyfile(CORA / "feat.bin", path / "feat.bin")
    return str(info.value)


def _flip(feat: Path) -> None:
    with open(feat, "r+b") as f:  # in place: the same file under both tiers
        f.seek(5 * 262144 + 12345)
        b = f.read(1)
        f.seek(5 * 262144 + 12345)
        f.write(bytes([b[0] ^ 0x40]))


def _rewrite(feat: Path) -> None:
    data = np.fromfile(feat, dtype=np.float32) + 1  # the same size
    with open(feat, "r+b") as f:
        f.write(data.tobytes())


def test_damaged_feature_file_disk_tier_same_error(tmp_path):
    """One flipped byte in feat.bin (Cora records its block and page sums)
    read through the disk tier is the mapping's error, naming the file and
    the damaged block (mapping) or page (disk tier; the disk tier once read
    rows unchecked); a same-size rewrite too."""
    path = tmp_path / "cora"
    shutil.copytree(CORA, path)
    assert "blocks" in json.loads((path / "graphferry.json").read_text())
    mapped = _epoch_error(path, "memory", _flip)
    disk = _epoch_error(path, "disk", _flip)
    flipped = 5 * 262144 + 12345
    assert f"{path / 'feat.bin'}: block 5 (bytes 1310720 to 1572863)" in mapped
    page = flipped // 4096
    assert f"{path / 'feat.bin'}: page {page} (bytes {page * 4096} to {page * 4096 + 4095})" in disk
    unit = re.compile(
        r"(block|page) \d+ \(bytes \d+ to \d+\) has CRC-32C \w+, (graphferry\.json|feat\.bin\.pages) says \w+"
    )
    assert unit.sub("UNIT", disk) == unit.sub("UNIT", mapped)  # the same error otherwise
    assert "the file is damaged or was changed" in _epoch_error(path, "disk", _rewrite)


def test_page_sums_checked_on_every_disk_read(tmp_path):
    """A dataset written today records feat.bin's page sums
    (feat.bin.pages): the disk tier checks every page it reads (no block
    read first), so a byte flipped in a page already read is an error
    naming the file and the page at the next read of it from disk."""
    path = tmp_path / "tiny"
    graphferry.generate("tiny", path)
    assert (path / "feat.bin.pages").stat().st_size == 4 * (((path / "feat.bin").stat().st_size + 4095) // 4096)
    with graphferry.Graph.open(path, feature_tier="disk", cache_bytes=0) as g:
        assert "disk reads verified: every page read, against feat.bin.pages" in g.memory_report()
        loader = graphferry.Loader(g, torch.arange(g.num_nodes), [0], batch_size=1024, feature_names=["feat"])
        for _ in loader:  # every page read once, whole
            pass
        _flip_at(path / "feat.bin", 5000)
        message = re.escape(f"{path / 'feat.bin'}: page 1 (bytes 4096 to 8191)")
        with pytest.raises(graphferry.StorageError, match=message):
            for _ in loader:
                pass
        loader.close()


def _flip_at(feat: Path, offset: int) -> None:
    with open(feat, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0x40]))


_RSS = """
import sys, torch, graphferry
tier, budget = sys.argv[2], int(sys.argv[3]) or None
g = graphferry.Graph.open(sys.argv[1], feature_tier=tier, memory_budget=budget)
lo = graphferry.Loader(g, torch.arange(2708), [5, 5], batch_size=256, seed=1, feature_names=["feat"], num_threads=2)
for _ in range(2):
    for b in lo:
        pass
rss, name = 0, None
for line in open("/proc/self/smaps"):
    parts = line.split()
    if not line[0].isupper() or ":" not in parts[0]:
        name = parts[-1] if len(parts) >= 6 else None
    elif parts[0] == "Rss:" and name and name.endswith("feat.bin"):
        rss += int(parts[1]) * 1024
print(g.memory_plan["feature_tier"], g.memory_plan["cache_bytes"], rss)
"""


def test_memory_budget_honoured(tmp_path):
    """A budget below Cora's 15.5 MB of features puts them on the disk tier
    with a cache inside the budget; two epochs then bring none of
    feat.bin's pages into the process (the mapped tier brings nearly all),
    and the cache's bytes fit what the budget left."""
    feat = (CORA / "feat.bin").stat().st_size

    def run(tier: str, budget: int) -> tuple[str, int, int]:
        out = subprocess.run(
            [sys.executable, "-c", _RSS, str(CORA), tier, str(budget)], capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr
        t, cache, rss = out.stdout.split()
        return t, int(cache), int(rss)

    with graphferry.Graph.open(CORA) as g:
        p = g.memory_plan
        resident = p["topology_bytes"] + p["node_column_bytes"] + p["sampling_bytes"]
    budget = resident + feat // 4
    tier, cache, rss = run("auto", budget)
    assert tier == "disk" and 0 < cache <= feat // 4
    assert rss == 0
    tier, _, rss = run("memory", 0)
    assert tier == "memory" and rss > feat // 2


def test_write_csc_maps_the_topology(tmp_path):
    """write_csc (and ``python -m graphferry csc``) adds the CSC files: the
    dataset then opens with its topology mapped, the same batches."""

    def epoch(path) -> tuple[list, str]:
        with graphferry.Graph.open(path) as g:
            lo = graphferry.Loader(g, torch.arange(0, 2708, 3), [5, 5], batch_size=128, shuffle=True, seed=4)
            out = [torch.cat([b.nodes, *(blk.indices for blk in b.blocks)]) for b in lo]
            lo.close()
            return out, g.memory_report()

    path = tmp_path / "cora"
    shutil.copytree(CORA, path)
    want, report = epoch(path)
    assert "mapped from the dataset's CSC files" not in report
    out = subprocess.run([sys.executable, "-m", "graphferry", "csc", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (path / "csc_indptr.bin").stat().st_size == 8 * 2709
    got, report = epoch(path)
    assert "mapped from the dataset's CSC files" in report
    assert len(got) == len(want) and all(torch.equal(a, b) for a, b in zip(got, want))
    with pytest.raises(graphferry.GraphferryError, match="CSC files already"):
        graphferry.write_csc(path)


@pytest.mark.parametrize("name", ["csc_indptr.bin", "csc_indices.bin"])
def test_truncated_csc_file_is_an_error(tmp_path, name):
    """A CSC file truncated while the graph maps it: sampling, a walk and a
    loader's epoch raise an error naming the file (the process died of
    SIGBUS), and the graph still closes."""
    path = tmp_path / "cora"
    shutil.copytree(CORA, path)
    graphferry.write_csc(path)
    with graphferry.Graph.open(path) as g:
        assert "mapped from the dataset's CSC files" in g.memory_report()
        seeds = torch.arange(0, 2708, 2)
        graphferry.sample_neighbors(g, seeds, [-1, -1], num_threads=2)
        os.truncate(path / name, 0)
        message = re.escape(f"{path / name}: byte ") + r"\d+ is past the end of the file: it was truncated"
        with pytest.raises(graphferry.StorageError, match=message):
            graphferry.sample_neighbors(g, seeds, [-1, -1], num_threads=2)
        with pytest.raises(graphferry.StorageError, match=message):
            graphferry.random_walk(g, seeds, 10, num_threads=2)
        loader = graphferry.Loader(g, seeds, [5, 5], batch_size=256, num_threads=2)
        with pytest.raises(graphferry.StorageError, match=message):
            for _ in loader:
                pass
        loader.close()

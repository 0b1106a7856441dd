"""Damaged and changing dataset files, as an unlucky user meets them: feat.bin
truncated or replaced under an open graph, flipped bytes, files swapped for
links or pipes. Each must be an error naming the file, with the process and
every other handle alive (a truncated memory map used to kill the process
with SIGBUS).

The engine turns SIGBUS on a truncated map into an error only when its own
signal handler sees the fault first. Python's faulthandler, when enabled
after the library is loaded (pytest's faulthandler plugin is, since conftest
imports graphferry before pytest configures it), sits in front of it, takes
the fault as fatal and re-raises it as a signal sent by a user, which Go
does not turn into a panic: the process dies. The fixture below takes
faulthandler out of the way for these tests (disable restores the handler
it displaced, the engine's); enabling faulthandler before graphferry is
imported (python -X faulthandler) keeps the engine's handler in front."""

from __future__ import annotations

import faulthandler
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

import graphferry
from graphferry import errors

REPO = Path(__file__).resolve().parents[2]
CORA = REPO / "examples" / "data" / "cora"


def _io_error() -> type:
    """The exception class of GF_EIO. The final form is OSError (the C layer
    maps errors wrapping errs.ErrIO to GF_EIO and Python raises OSError for
    it); until that mapping is in the library, its own error class."""
    if isinstance(errors.error_for_status(errors.GF_EIO, ""), OSError):
        return OSError
    return graphferry.GraphferryError


@pytest.fixture(autouse=True)
def engine_handles_sigbus():
    was = faulthandler.is_enabled()
    faulthandler.disable()
    yield
    if was:
        faulthandler.enable()


@pytest.fixture
def cora_copy(tmp_path) -> Path:
    dst = tmp_path / "cora"
    shutil.copytree(CORA, dst)
    return dst


def _feat(path: Path) -> np.ndarray:
    meta = json.loads((path / "graphferry.json").read_text())
    return np.fromfile(path / "feat.bin", dtype=np.float32).reshape(meta["feature"]["shape"])


def _loader(g, **kw):
    n = g.num_nodes
    return graphferry.Loader(
        g,
        torch.arange(n),
        [5, 5],
        batch_size=256,
        seed=1,
        queue_capacity=1,
        feature_names=["feat"],
        label_names=["label"],
        num_threads=1,
        **kw,
    )


def _check_alive(other) -> None:
    """Another graph (another file) still loads whole epochs."""
    with _loader(other) as loader:
        assert sum(1 for _ in loader) == len(loader)


@pytest.mark.parametrize("how", ["truncate", "overwrite shorter"])
def test_feat_truncated_mid_epoch(cora_copy, how):
    feat = cora_copy / "feat.bin"
    with graphferry.Graph.open(cora_copy) as g, graphferry.Graph.open(CORA) as other:
        loader = _loader(g)
        it = iter(loader)
        first = next(it)
        want = torch.from_numpy(_feat(CORA))
        torch.testing.assert_close(first.node_data["feat"], want[first.nodes])
        if how == "truncate":
            os.truncate(feat, 4096)
        else:  # what open(path, "wb").write(...) of a shorter file does
            with open(feat, "r+b") as f:
                f.truncate(0)
                f.write(b"\0" * 10000)
        with pytest.raises(_io_error()) as info:
            for _ in it:
                pass
        msg = str(info.value)
        assert str(feat) in msg
        assert "truncated or replaced while mapped" in msg
        # The process, the graph's other node data and other graphs live on.
        assert g.get_node_data("label").shape == (g.num_nodes,)
        with pytest.raises(_io_error(), match="feat.bin"):
            g.get_node_data("feat")
        _check_alive(other)
        loader.close()
        # A new open sees the size change.
        with pytest.raises(_io_error(), match="feat.bin is .* bytes, graphferry.json says 15522256"):
            graphferry.Graph.open(cora_copy)


def test_feat_replaced_by_rename_mid_epoch(cora_copy):
    """Renaming a new file over feat.bin leaves the mapped old file in place:
    the epoch goes on with the data the graph was opened with."""
    feat = cora_copy / "feat.bin"
    want = torch.from_numpy(_feat(CORA))
    with graphferry.Graph.open(cora_copy) as g:
        with _loader(g) as loader:
            it = iter(loader)
            next(it)
            tmp = cora_copy / "feat.new"
            tmp.write_bytes(b"\1" * 4096)
            os.replace(tmp, feat)
            n = 1
            for batch in it:
                torch.testing.assert_close(batch.node_data["feat"], want[batch.nodes])
                n += 1
            assert n == len(loader)


def _verify(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphferry", "verify", str(path)],
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=300,
    )


def test_verify(cora_copy):
    r = _verify(CORA)
    assert r.returncode == 0, r.stderr
    assert "ok" in r.stdout and "feat.bin" in r.stdout

    with graphferry.Graph.open(cora_copy, verify=True) as g:
        assert g.num_nodes == 2708
    # One flipped bit in each file in turn, sizes unchanged: a plain open
    # of a flipped feat.bin succeeds (it is not read), verify names it.
    for name in ["feat.bin", "edges.arrow", "nodes.arrow"]:
        path = cora_copy / name
        good = path.read_bytes()
        bad = bytearray(good)
        bad[len(bad) - 100] ^= 1
        path.write_bytes(bytes(bad))
        r = _verify(cora_copy)
        assert r.returncode == 1
        assert f"{path}: CRC-32C is" in r.stderr, r.stderr
        with pytest.raises(_io_error(), match=f"{name}: CRC-32C is"):
            graphferry.Graph.open(cora_copy, verify=True)
        path.write_bytes(good)

    # A dataset written before sums were recorded.
    meta = json.loads((cora_copy / "graphferry.json").read_text())
    del meta["files"]
    (cora_copy / "graphferry.json").write_text(json.dumps(meta))
    r = _verify(cora_copy)
    assert r.returncode == 0, r.stderr
    assert "carries no checksums" in r.stdout
    with graphferry.Graph.open(cora_copy, verify=True) as g:
        assert g.num_edges == 10556

    with pytest.raises(graphferry.GraphferryError, match="dataset directories only"):
        graphferry.Graph.open(cora_copy / "edges.arrow", verify=True)


def test_files_confined_and_regular(cora_copy, tmp_path):
    feat = cora_copy / "feat.bin"
    outside = tmp_path / "elsewhere.bin"
    shutil.copy(feat, outside)
    feat.unlink()
    feat.symlink_to(outside)
    with pytest.raises(graphferry.GraphferryError, match="outside the dataset directory"):
        graphferry.Graph.open(cora_copy)
    feat.unlink()
    shutil.copy(outside, cora_copy / "feat.v2.bin")
    feat.symlink_to("feat.v2.bin")  # inside the folder: allowed
    with graphferry.Graph.open(cora_copy, verify=True) as g:
        assert g.get_node_data("feat").shape == (2708, 1433)

    # A named pipe would block open(2) until a writer came, deaf to Ctrl-C.
    nodes = cora_copy / "nodes.arrow"
    nodes.unlink()
    os.mkfifo(nodes)
    with pytest.raises(graphferry.GraphferryError, match="nodes.arrow is not a regular file"):
        graphferry.Graph.open(cora_copy)


def _rewrite(path: Path, how: str) -> None:
    """Writes the file at path in place at the same size: rewritten whole
    (as open(path, "wb") does), zeroed, or one byte flipped."""
    raw = bytearray(path.read_bytes())
    if how == "rewritten":
        path.write_bytes(bytes(b ^ 0x55 for b in raw))
    elif how == "zeroed":
        with open(path, "r+b") as f:
            f.write(bytes(len(raw)))
    else:
        with open(path, "r+b") as f:
            f.seek(1000)
            f.write(bytes([raw[1000] ^ 0x08]))


@pytest.mark.parametrize("how", ["rewritten", "zeroed", "byte flipped"])
@pytest.mark.parametrize(
    "tier", [{}, {"memory_budget": 1 << 30}, {"feature_tier": "disk"}], ids=["memory", "budget", "disk"]
)
def test_feat_changed_in_place_between_epochs(tmp_path, how, tier):
    """Issue 34: feat.bin written in place at the same size after an epoch
    read (and verified) every block: the next epoch served the new bytes
    silently through the mapping. Now it fails naming the file."""
    path = tmp_path / "tiny"
    graphferry.generate("tiny", path)
    with graphferry.Graph.open(path, **tier) as g:
        with graphferry.Loader(g, torch.arange(g.num_nodes), [0], batch_size=128, feature_names=["feat"]) as loader:
            assert sum(1 for _ in loader) == len(loader)
            _rewrite(path / "feat.bin", how)
            with pytest.raises(_io_error(), match=re.escape(str(path / "feat.bin")) + ": (block|page) "):
                for _ in loader:
                    pass


@pytest.mark.parametrize("how", ["rewritten", "zeroed", "byte flipped"])
def test_csc_changed_in_place_between_epochs(tmp_path, how):
    """Issue 34: a CSC file written in place under an open graph whose
    topology it is (zeroed: every source node 0, still a valid graph) was
    sampled silently; the next epoch now fails at its first batch naming
    the file."""
    path = tmp_path / "tiny"
    graphferry.generate("tiny", path)
    graphferry.write_csc(path)
    with graphferry.Graph.open(path) as g:
        with graphferry.Loader(g, torch.arange(g.num_nodes), [-1], batch_size=128) as loader:
            assert sum(1 for _ in loader) == len(loader)
            _rewrite(path / "csc_indices.bin", how)
            with pytest.raises(_io_error(), match=re.escape(str(path / "csc_indices.bin")) + ": CRC-32C is "):
                next(iter(loader))

"""Ctrl-C stops long single calls (issue 23).

A child process builds a generated graph, starts one long call, and the
test sends it SIGINT while the call runs: the call must raise
KeyboardInterrupt rather than finish (the library stops at its next check,
a few milliseconds of work; the latency is printed, not asserted), and the
graph must stay usable. The calls are sized to run for seconds on one
thread (random walk: 10M steps; sampling: 30 hops from 200k seeds), so that
an uninterruptible call would finish and report its result instead.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import graphferry
from graphferry._native import lib as _lib
from graphferry.errors import GF_ECANCELED

pytestmark = pytest.mark.usefixtures("sigint_raises_keyboardinterrupt")  # conftest: they test what Ctrl-C does


_CHILD = r"""
import sys, time, torch, graphferry
n = 200_000
g = torch.Generator().manual_seed(0)
src, dst = torch.randint(0, n, (2_000_000,), generator=g), torch.randint(0, n, (2_000_000,), generator=g)
G = graphferry.Graph.from_coo(src, dst, num_nodes=n, num_patches=int(sys.argv[2]))
what = sys.argv[1]
print("ready", flush=True)
t = time.monotonic()
try:
    if what == "walk":
        graphferry.random_walk(G, torch.arange(100_000), 100, num_threads=1)
    else:
        graphferry.sample_neighbors(G, torch.arange(n), [10] * 30, num_threads=1)
    print(f"finished {time.monotonic() - t:.2f}", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
traces, _ = graphferry.random_walk(G, torch.arange(5), 3)
print("usable", tuple(traces.shape), flush=True)
import threading
time.sleep(0.1)  # the worker returns just after it said it finished
print("workers", sum(t.name == "graphferry-call" and t.is_alive() for t in threading.enumerate()), flush=True)
"""


def _interrupt(args: list[str], first_line: str = "ready", delay: float = 0.4) -> tuple[str, float, str, int]:
    """Runs the child code with args, sends SIGINT delay s after it printed
    first_line; returns its next line, the seconds from the signal to that
    line, the rest of its output and its exit status."""
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [
                str(Path(graphferry.__file__).parents[1]),
                os.environ.get("PYTHONPATH", ""),
            ]
        ),
    )
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line == first_line, (
            line,
            proc.stderr.read() if proc.poll() is not None else "",
        )
        time.sleep(delay)
        t = time.monotonic()
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().strip()
        dt = time.monotonic() - t
        rest = proc.stdout.read()  # not communicate(): it would skip what readline buffered
        err = proc.stderr.read()
        proc.wait(timeout=60)
        return line, dt, rest.strip() + err, proc.returncode
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("patches", [1, 2])
@pytest.mark.parametrize("what", ["walk", "sample"])
def test_ctrl_c_stops_a_long_call(what, patches):
    line, dt, rest, rc = _interrupt(["-c", _CHILD, what, str(patches)])
    assert line == "interrupted", (line, rest)
    print(f"KeyboardInterrupt {dt:.3f} s after SIGINT")  # a figure, not an assertion
    assert rc == 0 and "usable (5, 4)" in rest, rest
    assert "workers 0" in rest, rest  # the engine stopped the call (no abandoned worker)


_OPEN_CHILD = r"""
import sys, threading, time, graphferry
print("ready", flush=True)
t = time.monotonic()
try:
    graphferry.Graph.open(sys.argv[1], verify=True)
    print(f"opened {time.monotonic() - t:.2f}", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
except graphferry.GraphferryError as err:
    print(f"failed {time.monotonic() - t:.2f} {err}", flush=True)
time.sleep(0.1)  # the worker returns just after it said it finished
print("workers", sum(t.name == "graphferry-call" and t.is_alive() for t in threading.enumerate()), flush=True)
with graphferry.Graph.open(sys.argv[2]) as g:
    print("usable", g.num_edges, flush=True)
"""


def test_ctrl_c_stops_a_long_open(tmp_path):
    """Graph.open(verify=True) of a dataset whose feat.bin is 1 GiB (a
    sparse file: no disk used; its recorded sum is wrong, so that an open
    left to finish fails, after reading it all, seconds on this machine):
    SIGINT stops the checksum loop within the bound."""
    import json
    import shutil

    cora = Path(__file__).resolve().parents[2] / "examples" / "data" / "cora"
    big = tmp_path / "big"
    shutil.copytree(cora, big)
    size = 1 << 30
    with open(big / "feat.bin", "r+b") as f:
        f.truncate(size)
    meta = json.loads((big / "graphferry.json").read_text())
    meta["files"]["feat.bin"] = {"size": size, "crc32c": "00000000"}
    del meta["blocks"], meta["declared"]
    (big / "graphferry.json").write_text(json.dumps(meta))
    line, dt, rest, rc = _interrupt(["-c", _OPEN_CHILD, str(big), str(cora)], delay=0.3)
    assert line == "interrupted", (line, rest)
    print(f"KeyboardInterrupt {dt:.3f} s after SIGINT")  # a figure, not an assertion
    assert rc == 0 and "workers 0" in rest and "usable 10556" in rest, rest


def test_cancel_token_through_ctypes():
    """The C entry points as Python binds them: a token cancelled before a
    walk makes the walk fail with GF_ECANCELED on the bound thread, and
    nothing else; NULL is refused."""
    import torch

    g = graphferry.Graph.from_coo(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0]))
    tok = ctypes.c_void_p()
    _lib.gf_cancel_new(ctypes.byref(tok))
    try:
        flag = ctypes.c_int32(-1)
        _lib.gf_cancel_is_requested(tok, ctypes.byref(flag))
        assert flag.value == 0
        assert _lib.gf_cancel_request(tok) == 0
        _lib.gf_cancel_is_requested(tok, ctypes.byref(flag))
        assert flag.value == 1
        _lib.gf_cancel_bind(tok)
        try:
            with pytest.raises(graphferry.GraphferryError, match="gf_random_walk: cancelled") as exc:
                _walk_direct(g)
            assert exc.value.code == GF_ECANCELED
        finally:
            _lib.gf_cancel_bind(None)
        traces, _ = graphferry.random_walk(g, torch.tensor([0]), 2)  # unbound: runs
        assert traces.tolist() == [[0, 2, 1]]
    finally:
        _lib.gf_cancel_free(tok)
    assert _lib.gf_cancel_request(None) != 0
    with pytest.raises(graphferry.GraphferryError, match="out is NULL"):
        _lib.gf_cancel_new(None)


def _walk_direct(g):
    """gf_random_walk on this thread (graphferry.random_walk runs it on a
    worker thread when called from the main thread)."""
    import torch

    from graphferry._native.dlpack import BorrowedTensor, tensor_from_managed

    opts = _lib.gf_walk_options(length=2, restart_prob=0.0, biased=0, num_threads=1, seed=0)
    borrowed = BorrowedTensor(torch.tensor([0]), "seeds")
    traces, eids = ctypes.c_void_p(), ctypes.c_void_p()
    _lib.gf_random_walk(
        g.handle,
        borrowed.ref,
        ctypes.byref(opts),
        ctypes.byref(traces),
        ctypes.byref(eids),
    )
    return tensor_from_managed(traces.value), tensor_from_managed(eids.value)


_PARTITION_CHILD = r"""
import os, sys, time
from graphferry import partition
print("ready", flush=True)
t = time.monotonic()
try:
    partition.partition(sys.argv[1], sys.argv[2], parts=16, method="random", layout="hybrid")
    print(f"finished {time.monotonic() - t:.2f}", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print("left", sorted(os.listdir(sys.argv[2])), flush=True)
"""


def test_ctrl_c_stops_partition_leaving_nothing(tmp_path):
    """SIGINT during a 16-rank partition of a generated dataset (65,536
    nodes, 1.8M edges; seconds uninterrupted): KeyboardInterrupt within the
    bound, and DST holds nothing of it (no rank folder, no assignment.npy,
    no partition.json)."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    graphferry.generate("small", src)
    dst.mkdir()
    line, dt, rest, rc = _interrupt(["-c", _PARTITION_CHILD, str(src), str(dst)], delay=1.0)
    assert line == "interrupted", (line, rest)
    print(f"KeyboardInterrupt {dt:.3f} s after SIGINT")  # a figure, not an assertion
    assert rc == 0 and "left []" in rest, rest
    assert sorted(os.listdir(dst)) == []


_CONVERT_CHILD = r"""
import os, sys, time, graphferry
print("ready", flush=True)
t = time.monotonic()
try:
    graphferry.convert_npy(sys.argv[1], sys.argv[2])
    print(f"finished {time.monotonic() - t:.2f}", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print("left", sorted(os.listdir(sys.argv[2])) if os.path.exists(sys.argv[2]) else None, flush=True)
"""


def test_ctrl_c_stops_convert_leaving_nothing(tmp_path):
    """SIGINT during the conversion of a generated .npy dataset (500,000
    nodes, 16M edges; about 2 s uninterrupted): KeyboardInterrupt within the
    bound (the conversion checks before each input file, between the output
    files and before each record batch of edges.arrow), and DST holds
    nothing of it (the output is written into a temporary folder and moved
    into place only when complete)."""
    import json

    import numpy as np

    src, dst = tmp_path / "npy", tmp_path / "dst"
    src.mkdir()
    n, e = 500_000, 16_000_000
    rng = np.random.default_rng(0)
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(rng.multinomial(e, np.full(n, 1 / n)), out=indptr[1:])
    np.save(src / "indptr.npy", indptr)
    np.save(src / "indices.npy", rng.integers(0, n, e, dtype=np.int64))
    (src / "meta.json").write_text(json.dumps({"name": "generated", "num_nodes": n, "num_edges": e}))
    line, dt, rest, rc = _interrupt(["-c", _CONVERT_CHILD, str(src), str(dst)], delay=0.3)
    assert line == "interrupted", (line, rest)
    print(f"KeyboardInterrupt {dt:.3f} s after SIGINT")  # a figure, not an assertion
    assert rc == 0 and ("left []" in rest or "left None" in rest), rest
    print(f"convert: KeyboardInterrupt {dt:.3f} s after SIGINT")

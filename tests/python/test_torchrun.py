"""Two "machines" on this one, launched the way users launch them.

Two ``torchrun --nnodes=2 --nproc-per-node=2`` launches meet at a c10d
rendezvous on 127.0.0.1 (four ranks over Gloo); each rank opens only its own
folder of a 4-part dsp partition of examples/data/cora and trains
examples/train_dist.py's GraphSAGE (DDP) on the batches of
``graphferry.dgl.DataLoader(part, ..., comm=comm)``. The test accuracy must
reach the floor test_accuracy.py holds the single-process loaders to, and
match the same script run as one process (on the whole dataset, the four
ranks' combined batch size) within 3 points.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from graphferry.partition import partition

pytest.importorskip("dgl")
pytestmark = pytest.mark.torchrun  # make test-py runs it in a pytest process of its own

REPO = Path(__file__).resolve().parents[2]
CORA = REPO / "examples" / "data" / "cora"
SCRIPT = REPO / "examples" / "train_dist.py"
EPOCHS = 10
BATCH = 8  # seeds per batch and rank: 4 ranks make the one process's 32
FLOOR = 0.77  # test_accuracy.FLOOR["cora"]
MAX_GAP = 0.03
LAUNCH_S = 240


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _accuracy(out: str) -> float:
    found = re.findall(r"^test accuracy: ([0-9.]+)%$", out, re.MULTILINE)
    assert len(found) == 1, out[-3000:]
    return float(found[0]) / 100


def _torchrun(*args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *args,
        str(SCRIPT),
        "--loader",
        "dgl",
        "--epochs",
        str(EPOCHS),
    ]


def test_two_nodes_of_two_ranks_train_to_single_process_accuracy(tmp_path):
    if not (CORA / "graphferry.json").exists():
        pytest.skip("examples/data/cora is not available")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    single = subprocess.run(
        _torchrun("--standalone", "--nproc-per-node=1") + ["--dataset", str(CORA), "--batch-size", str(4 * BATCH)],
        capture_output=True,
        text=True,
        timeout=LAUNCH_S,
        env=env,
    )
    assert single.returncode == 0, single.stderr[-4000:]
    one = _accuracy(single.stdout)

    parts = tmp_path / "cora-4"
    partition(CORA, parts, parts=4, method="random", layout="dsp", seed=0)
    rdzv = [
        "--nnodes=2",
        "--nproc-per-node=2",
        "--rdzv-backend=c10d",
        f"--rdzv-endpoint=127.0.0.1:{_free_port()}",
        "--rdzv-id=graphferry-test",
    ]
    nodes = []
    outs = []
    try:
        # The first launch hosts the rendezvous store (is_host), as the
        # machine named by --rdzv-endpoint would; each launch is a session
        # of its own, so that a hung one is killed with its ranks.
        for is_host in (1, 0):
            cmd = _torchrun(*rdzv, f"--rdzv-conf=is_host={is_host}")
            cmd += ["--partition", str(parts), "--batch-size", str(BATCH), "--timeout", "60"]
            nodes.append(
                subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
                )
            )
        for node in nodes:
            outs.append(node.communicate(timeout=LAUNCH_S))
    finally:
        for node in nodes:
            if node.poll() is None:
                os.killpg(node.pid, signal.SIGKILL)  # the launch and the ranks it started
                node.communicate()
    for node, (_, err) in zip(nodes, outs):
        assert node.returncode == 0, err[-4000:]
    # Global rank 0 prints; the rendezvous decides which launch holds it.
    printed = [out for out, _ in outs if "test accuracy:" in out]
    assert len(printed) == 1, outs
    assert "ranks: 4" in printed[0]
    four = _accuracy(printed[0])
    print(f"Cora test accuracy: one process {one:.3f}, two nodes x two ranks {four:.3f}")
    assert one >= FLOOR and four >= FLOOR, (one, four)
    assert abs(one - four) <= MAX_GAP, (one, four)

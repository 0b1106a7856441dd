"""GPU tests of the CUDA library (tests/gpu/run.sh runs them on a GPU).

Without a usable GPU and the CUDA library every test here is skipped: a
process without a GPU must not even load that library.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
CUDA_LIB = REPO / "python" / "graphferry" / "lib" / "libgraphferry_cuda.so"


def _gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _gpu(), reason="needs a usable CUDA GPU"),
    pytest.mark.skipif(not CUDA_LIB.is_file(), reason=f"needs {CUDA_LIB} (make lib-cuda)"),
]


@pytest.fixture(scope="module")
def gf():
    if os.environ.get("GRAPHFERRY_LIB_PATH") or os.environ.get("GRAPHFERRY_BACKEND", "auto") not in ("", "auto", "cuda"):
        pytest.skip("the backend is forced by the environment")
    import torch

    torch.zeros(1, device="cuda")  # PyTorch's primary context first, as in training
    import graphferry

    return graphferry


@pytest.fixture(scope="module")
def lib(gf):
    lib = ctypes.CDLL(gf.library_path())
    lib.gfcuda_selfcheck.argtypes = [ctypes.c_int64, ctypes.c_int32, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]
    lib.gfcuda_epoch.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    return lib


def test_auto_backend_is_cuda(gf):
    from graphferry import _backend

    assert _backend.BACKEND == "cuda"
    assert gf.library_path().endswith("libgraphferry_cuda.so")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kernels_match_cpu_engine(lib, seed):
    buf = ctypes.create_string_buffer(1 << 16)
    rc = lib.gfcuda_selfcheck(4000, 3, seed, buf, len(buf))
    assert rc == 0, buf.value.decode()
    rep = json.loads(buf.value)
    assert rep["Schemes"] == 144 and rep["Edges"] > 0


def test_epoch_on_cora_identical(lib):
    cfg = {"Dataset": str(REPO / "examples" / "data" / "cora"), "Fanouts": [10, 5], "BatchSize": 64,
           "MaxBatches": 0, "Seed": 5, "Compare": 1000, "CPUThreads": 4}
    buf = ctypes.create_string_buffer(1 << 16)
    rc = lib.gfcuda_epoch(json.dumps(cfg).encode(), buf, len(buf))
    assert rc == 0, buf.value.decode()
    res = json.loads(buf.value)
    assert res["identical"] and res["compared_batches"] == res["batches"] > 0


def test_hook_errors_are_reported(lib):
    buf = ctypes.create_string_buffer(256)
    assert lib.gfcuda_selfcheck(0, 1, 1, buf, len(buf)) == 1
    assert b"must be positive" in buf.value
    assert lib.gfcuda_epoch(b"{not json", buf, len(buf)) == 1
    assert b"config" in buf.value
    assert lib.gfcuda_epoch(json.dumps({"Dataset": "/nonexistent", "Fanouts": [5], "BatchSize": 8}).encode(),
                            buf, len(buf)) == 1


def test_cpu_api_works_in_the_cuda_library(gf):
    g = gf.Graph.from_coo([0, 1, 2, 3], [1, 2, 3, 0], num_nodes=4)
    sub = gf.sample_neighbors(g, [0, 1], [2, 2])
    assert sub.nodes[:2].tolist() == [0, 1]

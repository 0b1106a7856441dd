"""GPU tests of the CUDA library (tests/gpu/run.sh runs them on a GPU, with
GRAPHFERRY_BACKEND=cuda).

Without a usable GPU and that backend every test here is skipped, and
run.sh fails a run in which any was: a skipped test on the GPU machine is a
check that did not happen.
"""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))


def _ready() -> bool:
    try:
        import torch
    except ImportError:
        return False
    if not torch.cuda.is_available():
        return False
    import graphferry

    return graphferry.backend() == "cuda"


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not _ready(), reason="needs a usable CUDA GPU and GRAPHFERRY_BACKEND=cuda"),
]


@pytest.fixture(scope="module")
def gf(torch):
    import graphferry

    return graphferry


@pytest.fixture(scope="module")
def hooks(gf):
    from graphferry import _lib

    assert _lib.CUDA is not None
    return _lib.CUDA


@pytest.fixture(scope="module")
def driver():
    return ctypes.CDLL("libcuda.so.1")


def _current_context(driver) -> int | None:
    c = ctypes.c_void_p()
    assert driver.cuCtxGetCurrent(ctypes.byref(c)) == 0
    return c.value


def test_cuda_check(gf, torch):
    rep = gf.cuda_check()
    assert rep["ordinal"] == torch.cuda.current_device()
    assert rep["fake_driver"] is False
    assert rep["name"] == torch.cuda.get_device_name(rep["ordinal"])
    major, minor = torch.cuda.get_device_capability(rep["ordinal"])
    assert (rep["compute_major"], rep["compute_minor"]) == (major, minor)
    assert rep["ptx_target"] == "sm_70" and rep["driver_version"] >= rep["needs_driver"]
    assert rep["build_id"] == gf.library_build_id() != "unknown"


def test_pytorch_state_unchanged_by_every_call(gf, hooks, torch, driver):
    """After every graphferry call PyTorch's current device and the thread's
    current CUDA context are what they were, on every device."""
    for device in range(torch.cuda.device_count()):
        torch.cuda.set_device(device)
        torch.zeros(1, device="cuda")
        ctx, dev = _current_context(driver), torch.cuda.current_device()
        calls = {
            "cuda_check": lambda: gf.cuda_check(device),
            "check 0": lambda: hooks.check(0),
            "selfcheck": lambda: hooks.selfcheck(0, 600, 1, 1),
            "fault node": lambda: hooks.fault(0, "node"),
            "fault launch": lambda: hooks.fault(0, "launch"),
            "epoch": lambda: hooks.epoch(
                0,
                {
                    "Dataset": str(REPO / "examples" / "data" / "cora"),
                    "Fanouts": [5],
                    "BatchSize": 64,
                    "MaxBatches": 2,
                    "Seed": 1,
                    "Compare": 2,
                    "CPUThreads": 2,
                },
            ),
            "cpu api": lambda: gf.sample_neighbors(gf.Graph.from_coo([0, 1, 2], [1, 2, 0], num_nodes=3), [0], [2]),
        }
        for name, call in calls.items():
            call()
            assert torch.cuda.current_device() == dev, name
            assert _current_context(driver) == ctx, name
    torch.cuda.set_device(0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kernels_match_cpu_engine(hooks, seed):
    rep = hooks.selfcheck(0, 4000, 3, seed)
    assert rep["Schemes"] == 144 and rep["Edges"] > 0
    # The mode-2 pipeline (device sampler stage, tiers, gather, outputs) on
    # 8 schemes of each of 3 layouts, against the CPU engine's pipeline.
    assert rep["pipeline"]["Schemes"] == 24 and rep["pipeline"]["Batches"] > 0


def test_epoch_on_cora_identical(hooks):
    cfg = {
        "Dataset": str(REPO / "examples" / "data" / "cora"),
        "Fanouts": [10, 5],
        "BatchSize": 64,
        "MaxBatches": 0,
        "Seed": 5,
        "Compare": 1000,
        "CPUThreads": 4,
        "GatherRows": 4096,
    }
    res = hooks.epoch(0, cfg)
    assert res["identical"] and res["compared_batches"] == res["batches"] > 0
    # The device stage: one host synchronisation per batch, the topology in
    # device memory (it fits), the gather measured on both tiers.
    assert res["host_syncs_per_batch"] == 1 and res["placement"] == "device"
    g = res["gather"]
    assert g["row_bytes"] == 1433 * 4 and g["width"] == 4
    assert (
        min(g["hot_gather_bytes_per_second"], g["zero_copy_gather_bytes_per_second"], g["d2d_copy_bytes_per_second"])
        > 0
    )


@pytest.mark.parametrize(
    ("kind", "words"),
    [("node", ["kernel gf_count", "outside the graph"]), ("launch", ["gf_count", "CUDA_ERROR_INVALID_VALUE"])],
)
def test_faults_are_reported_and_pytorch_still_works(hooks, torch, kind, words):
    message = hooks.fault(0, kind)
    for w in words:
        assert w in message, message
    x = torch.arange(10, device="cuda")
    assert int((x * 2).sum().item()) == 90
    torch.cuda.synchronize()


def test_open_close_100_does_not_grow_device_memory(hooks, torch):
    hooks.check(0)
    torch.cuda.synchronize()
    free0, _ = torch.cuda.mem_get_info(0)
    for _ in range(100):
        hooks.check(0)
    free1, total = torch.cuda.mem_get_info(0)
    assert free1 >= free0 - (2 << 20), (free0, free1, total)


def test_hook_errors_are_reported(gf, hooks):
    with pytest.raises(gf.BackendError, match="must be positive"):
        hooks.selfcheck(0, 0, 1, 1)
    with pytest.raises(gf.BackendError, match="config"):
        hooks.epoch(0, "{not json")  # type: ignore[arg-type]
    with pytest.raises(gf.BackendError, match="does not exist"):
        hooks.check(99)
    with pytest.raises(gf.BackendError, match="unknown kind"):
        hooks.fault(0, "nonsense")


def test_cpu_api_works_in_the_cuda_library(gf):
    g = gf.Graph.from_coo([0, 1, 2, 3], [1, 2, 3, 0], num_nodes=4)
    sub = gf.sample_neighbors(g, [0, 1], [2, 2])
    assert sub.nodes[:2].tolist() == [0, 1]

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
    # Cora's feat.bin is a memory map (off the Go heap): the cold tier
    # registers it in place, no pinned copy.
    assert g["cold_copied"] is False
    assert (
        min(
            g["hot_gather_bytes_per_second"],
            g["zero_copy_gather_bytes_per_second"],
            g["d2d_copy_bytes_per_second"],
        )
        > 0
    )


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("node", ["kernel gf_count", "outside the graph"]),
        ("launch", ["gf_count", "CUDA_ERROR_INVALID_VALUE"]),
    ],
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


# --- mode 2 through the C API, DLPack and the loaders (not yet run on a GPU) --


def _cora(gf):
    return gf.Graph.open(str(REPO / "examples" / "data" / "cora"))


def test_mode2_loader_batches_match_the_cpu_engine_on_a_side_stream(gf, torch):
    """The device loader's batches, taken with torch.from_dlpack on a side
    stream (the stream contract: that stream waits on the producer's event,
    no host sync), equal the CPU engine's byte for byte, every placement."""
    from graphferry import _device, sampling

    g = _cora(gf)
    seeds = torch.arange(0, 600) * 7 % g.num_nodes
    opts = gf.SampleOptions([10, 5], seed=11)
    kw = {"batch_size": 64, "shuffle": True, "feature_names": ["feat"]}
    side = torch.cuda.Stream()
    for topology, cache in (
        (_device._lib.GF_TOPOLOGY_DEVICE, -1),
        (_device._lib.GF_TOPOLOGY_PINNED, 0),
    ):
        dev = _device.DeviceOptions(torch.cuda.current_device(), topology, cache, 0)
        host = sampling.Loader.from_options(g, seeds, opts, **kw)
        devl = sampling.Loader.from_options(g, seeds, opts, device=dev, **kw)
        n = 0
        for epoch in range(2):
            with torch.cuda.stream(side):
                for a, b in zip(iter(host), iter(devl), strict=True):
                    assert b.nodes.is_cuda and b.node_data["feat"].is_cuda and not b.hop_counts.is_cuda
                    pairs = [
                        (a.nodes, b.nodes),
                        (a.input_index, b.input_index),
                        (a.node_data["feat"], b.node_data["feat"]),
                    ]
                    for x, y in zip(a.blocks, b.blocks, strict=True):
                        pairs += [
                            (x.indptr, y.indptr),
                            (x.indices, y.indices),
                            (x.edge_ids, y.edge_ids),
                        ]
                    for x, y in pairs:
                        assert torch.equal(x, y.cpu()), (epoch, n)
                    assert torch.equal(a.hop_counts, b.hop_counts)
                    n += 1
        assert n > 0
        host.close()
        devl.close()
    g.close()


def test_mode2_device_memory_returns_after_close(gf, torch):
    """Tensors kept past the loader's close stay readable; 20 open/iterate/
    close rounds do not grow the device's used memory."""
    from graphferry import _device, sampling

    g = _cora(gf)
    seeds = torch.arange(0, 256)
    opts = gf.SampleOptions([5, 5], seed=3)
    dev = _device.DeviceOptions(torch.cuda.current_device())
    kept = None
    used = []
    for _ in range(20):
        loader = sampling.Loader.from_options(g, seeds, opts, device=dev, batch_size=64, feature_names=["feat"])
        for b in loader:
            kept = b.node_data["feat"]
        loader.close()
        assert float(kept.sum()) == float(kept.cpu().sum())
        kept = None
        torch.cuda.synchronize()
        free, total = torch.cuda.mem_get_info()
        used.append(total - free)
    assert used[-1] <= used[2] + (8 << 20), used
    g.close()


@pytest.mark.parametrize("how", [{"sample_on": "cuda"}, {"use_uva": True}])
def test_dgl_loader_mode2_matches_mode1(gf, torch, how):
    import dgl
    from graphferry import dgl as gfdgl

    src, dst = torch.randint(0, 2000, (2, 20000), generator=torch.Generator().manual_seed(1))
    gd = dgl.graph((src, dst), num_nodes=2000)
    gd.ndata["feat"] = torch.randn(2000, 16, generator=torch.Generator().manual_seed(2))
    sampler = gfdgl.NeighborSampler([5, 5])
    args = {"batch_size": 128, "shuffle": True, "seed": 9, "device": "cuda"}
    two = gfdgl.DataLoader(gd, torch.arange(2000), sampler, **args, **how)
    one = gfdgl.DataLoader(gd, torch.arange(2000), sampler, **args, sample_on="cpu")
    assert two.mode.sample_on == "cuda" and one.mode.sample_on == "cpu"
    for (i2, o2, b2), (i1, o1, b1) in zip(two, one, strict=True):
        assert i2.is_cuda and torch.equal(i2, i1) and torch.equal(o2, o1)
        assert torch.equal(b2[0].srcdata["feat"], b1[0].srcdata["feat"])
        for x, y in zip(b2, b1, strict=True):
            assert [t.tolist() for t in x.edges()] == [t.tolist() for t in y.edges()]


def test_dgl_loader_auto_picks_mode2_when_the_graph_fits(gf, torch):
    import dgl
    from graphferry import dgl as gfdgl

    gd = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])))
    loader = gfdgl.DataLoader(gd, torch.arange(3), gfdgl.NeighborSampler([2]), device="cuda")
    assert loader.mode.sample_on == "cuda", loader.mode.reason


def test_pyg_loader_mode2_matches_mode1(gf, torch):
    from graphferry.pyg import NeighborLoader
    from torch_geometric.data import Data

    g = torch.Generator().manual_seed(4)
    n = 3000
    data = Data(
        x=torch.randn(n, 8, generator=g),
        edge_index=torch.randint(0, n, (2, 30000), generator=g),
        num_nodes=n,
    )
    two = NeighborLoader(data, [5, 5], batch_size=100, seed=2, device="cuda", sample_on="cuda")
    one = NeighborLoader(data, [5, 5], batch_size=100, seed=2, device="cuda", sample_on="cpu")
    assert two.mode.sample_on == "cuda" and one.mode.sample_on == "cpu"
    for a, b in zip(two, one, strict=True):
        assert a.x.is_cuda and torch.equal(a.n_id.cpu(), b.n_id.cpu())
        assert torch.equal(a.edge_index.cpu(), b.edge_index.cpu()) and torch.equal(a.x.cpu(), b.x.cpu())

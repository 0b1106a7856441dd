"""Mode 2 from Python (graphferry._device, sampling.Loader's ``device``,
DLPack's stream contract through DeviceTensor): the choice of mode that
``device="cuda"`` makes, in process; and, in fresh interpreters over the fake
CUDA driver (cuda/fakedriver, as test_backend.py), the CUDA library's device
batches read through ``__dlpack__(stream=...)`` byte for byte equal to the
CPU engine's, and the CPU library's refusal. torch has no CUDA here, so the
device tensors are read with the driver, not torch; tests/gpu/test_gpu.py
runs the torch side on a GPU."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import graphferry
from graphferry import _device
from graphferry._native import backend as _backend
from graphferry._native import lib as _lib
from graphferry._native.backend import BackendError
from graphferry.errors import GF_ENOTSUP

REPO = Path(__file__).resolve().parents[2]
FAKE_DRIVER = REPO / "build" / "fakecuda"
CUDA = torch.device("cuda")


def test_cpu_device_is_the_cpu_engine():
    for device in (None, "cpu", torch.device("cpu")):
        assert _device.choose_mode(device, backend="cuda").sample_on == "cpu"
        assert _device.choose_mode(device, sample_on="cpu", backend="cuda").device is None
        with pytest.raises(ValueError, match="give device='cuda'"):
            _device.choose_mode(device, sample_on="cuda", backend="cuda")
        with pytest.raises(ValueError, match="use_uva=True samples on a GPU"):
            _device.choose_mode(device, use_uva=True, backend="cuda")


def test_cuda_device_alone_is_mode1():
    """device="cuda" without sample_on or use_uva is CPU sampling with the
    pinned hand-off, with either library loaded: mode 2 only when asked."""
    for backend in ("cuda", "cpu"):
        for device in (CUDA, "cuda", torch.device("cuda", 0)):
            mode = _device.choose_mode(device, backend=backend)
            assert mode.sample_on == "cpu" and mode.device is None and "mode 1" in mode.reason, mode


def test_overrides():
    assert _device.choose_mode(CUDA, sample_on="cpu", backend="cuda").sample_on == "cpu"
    forced = _device.choose_mode(CUDA, sample_on="cuda", backend="cuda")
    assert forced.sample_on == "cuda" and forced.device.topology == _lib.GF_TOPOLOGY_AUTO
    uva = _device.choose_mode(CUDA, use_uva=True, backend="cuda")
    assert uva.sample_on == "cuda" and uva.device.topology == _lib.GF_TOPOLOGY_PINNED and uva.device.cache_bytes == 0
    with pytest.raises(ValueError, match="give one of them"):
        _device.choose_mode(CUDA, use_uva=True, sample_on="cpu", backend="cuda")
    with pytest.raises(ValueError, match="sample_on must be"):
        _device.choose_mode(CUDA, sample_on="gpu", backend="cuda")
    with pytest.raises(ValueError, match="reserve_bytes"):
        _device.choose_mode(CUDA, reserve_bytes=-1, backend="cuda")
    for kw in ({"sample_on": "cuda"}, {"use_uva": True}):
        with pytest.raises(
            BackendError,
            match="set GRAPHFERRY_BACKEND=cuda before importing graphferry",
        ):
            _device.choose_mode(CUDA, backend="cpu", **kw)


def test_this_process_cpu_library_refuses_a_device():
    """This test process loaded the CPU library: the engine refuses a
    device loader with GF_ENOTSUP naming the CUDA library."""
    if _lib.CUDA is not None:
        pytest.skip("this process loaded the CUDA library")  # pragma: no cover
    g = graphferry.Graph.from_csc(torch.tensor([0, 1, 2]), torch.tensor([1, 0]))
    try:
        with pytest.raises(BackendError, match="GRAPHFERRY_BACKEND=cuda"):
            _device.choose_mode(CUDA, sample_on="cuda")
        opts = graphferry.SampleOptions([1], seed=1)
        with pytest.raises(graphferry.GraphferryError, match="libgraphferry_cuda.so") as err:
            graphferry.Loader.from_options(g, torch.tensor([0, 1]), opts, device=_device.DeviceOptions(0))
        assert err.value.code == GF_ENOTSUP
    finally:
        g.close()


# --- over the fake driver, in a fresh interpreter with the CUDA library ----

_CHILD = r"""
import ctypes, json, sys
import torch
import graphferry
from graphferry import _device, sampling
from graphferry._native import lib as L

out = {"backend": graphferry.backend()}
drv = ctypes.CDLL("libcuda.so.1")
ok = lambda rc: rc == 0 or sys.exit(f"driver call failed: {rc}")
ok(drv.cuInit(0))
dev, ctx, stream = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
ok(drv.cuDeviceGet(ctypes.byref(dev), 0))
ok(drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
ok(drv.cuCtxSetCurrent(ctx))
ok(drv.cuStreamCreate(ctypes.byref(stream), 1))

g = graphferry.Graph.open(sys.argv[1])
out["auto"] = _device.choose_mode(torch.device("cuda")).sample_on
choice = _device.choose_mode(torch.device("cuda"), sample_on=sys.argv[2] if sys.argv[2] != "uva" else None,
                             use_uva=sys.argv[2] == "uva")
seeds = torch.arange(0, 300) * 7 % g.num_nodes
opts = graphferry.SampleOptions([5, 3], seed=7)
kw = dict(batch_size=64, shuffle=True, feature_names=["feat"])
host = sampling.Loader.from_options(g, seeds, opts, **kw)
devl = sampling.Loader.from_options(g, seeds, opts, device=choice.device, **kw)

get = ctypes.pythonapi.PyCapsule_GetPointer
get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

calls = [0]
def read(dt, first):
    if first:
        try:
            dt.__dlpack__(stream=0)
        except ValueError:
            out["stream0_refused"] = True
    versioned = calls[0] % 2 == 1  # every other tensor as a DLPack 1.x consumer takes it
    calls[0] += 1
    cap = dt.__dlpack__(stream=stream.value, max_version=(1, 0) if versioned else None)
    if first:
        try:
            dt.__dlpack__(stream=stream.value)
        except BufferError:
            out["twice_refused"] = True
    if versioned:
        t = L.DLManagedTensorVersioned.from_address(get(cap, b"dltensor_versioned")).dl_tensor
        out["versioned"] = out.get("versioned", 0) + 1
    else:
        t = L.DLManagedTensor.from_address(get(cap, b"dltensor")).dl_tensor
    assert (t.device.device_type, t.device.device_id) == (L.kDLCUDA, 0), (t.device.device_type, t.device.device_id)
    n = t.dtype.bits // 8
    for i in range(t.ndim):
        n *= t.shape[i]
    buf = ctypes.create_string_buffer(max(n, 1))
    ok(drv.cuStreamSynchronize(stream))
    if n:
        ok(drv.cuMemcpyDtoH_v2(buf, ctypes.c_uint64(t.data), ctypes.c_size_t(n)))
    return buf.raw[:n]  # the capsule, dropped here, calls the deleter

# This torch has no CUDA: the batch's device tensors are consumed as
# torch.from_dlpack would, while the batch is open, by reading them with the
# driver on our stream.
first = [True]
def consume(dt):
    data = read(dt, first[0])
    first[0] = False
    return data
sampling.from_device = consume

def same(a, data, first=False):
    return a.contiguous().numpy().tobytes() == data

batches, diffs = 0, []
for epoch in range(2):
    for a, b in zip(iter(host), iter(devl), strict=True):
        checks = {
            "nodes": same(a.nodes, b.nodes),
            "input_index": same(a.input_index, b.input_index),
            "feat": same(a.node_data["feat"], b.node_data["feat"]),
            "hop_counts": torch.equal(a.hop_counts, b.hop_counts),
        }
        for h, (x, y) in enumerate(zip(a.blocks, b.blocks, strict=True)):
            checks[f"indptr{h}"] = same(x.indptr, y.indptr)
            checks[f"indices{h}"] = same(x.indices, y.indices)
            checks[f"edge_ids{h}"] = same(x.edge_ids, y.edge_ids)
        diffs += [f"{epoch}/{batches}/{k}" for k, v in checks.items() if not v]
        batches += 1
out.update(batches=batches, diffs=diffs[:5], sample_on=choice.sample_on,
           topology=choice.device.topology if choice.device else None)
host.close(); devl.close(); g.close()
stats = (ctypes.c_int64 * 16)()
drv.gf_fakecuda_stats(0, stats)
out["live_allocs"] = stats[0]
print(json.dumps(out))
"""


def _cuda_library() -> Path:
    for p in (
        REPO / "build" / "libgraphferry_cuda.so",
        REPO / "python" / "graphferry" / "lib" / "libgraphferry_cuda.so",
    ):
        if p.is_file():
            return p
    pytest.fail("the CUDA library is not built: make lib-cuda")


@pytest.fixture(scope="module")
def cuda_package(tmp_path_factory) -> Path:
    """A copy of the package whose lib/ has both libraries, and the fake
    driver (make lib-cuda fakecuda)."""
    if not (FAKE_DRIVER / "libcuda.so.1").is_file():
        pytest.fail(f"the fake CUDA driver is not built: make fakecuda (looked in {FAKE_DRIVER})")
    root = tmp_path_factory.mktemp("pkg")
    src = Path(graphferry.__file__).resolve().parent
    shutil.copytree(src, root / "graphferry", ignore=shutil.ignore_patterns("lib", "__pycache__"))
    (root / "graphferry" / "lib").mkdir()
    shutil.copy(src / "lib" / _backend.CPU_LIB, root / "graphferry" / "lib" / _backend.CPU_LIB)
    shutil.copy(_cuda_library(), root / "graphferry" / "lib" / _backend.CUDA_LIB)
    return root


def _run(root: Path, code: str, args: list[str], **env_extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GRAPHFERRY_LIB_PATH", "LD_LIBRARY_PATH") and not k.startswith("GF_FAKECUDA")
    }
    env.update(PYTHONPATH=str(root), LD_LIBRARY_PATH=str(FAKE_DRIVER), **env_extra)
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        check=False,
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, f"exit {out.returncode}\nstdout: {out.stdout[-3000:]}\nstderr: {out.stderr[-3000:]}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "mode,extra",
    [("cuda", {}), ("uva", {"GF_FAKECUDA_THREADS": "3", "GF_FAKECUDA_SEED": "5"})],
)
def test_device_batches_through_dlpack_over_the_fake_driver(cuda_package, mode, extra):
    res = _run(
        cuda_package,
        _CHILD,
        [str(REPO / "examples" / "data" / "cora"), mode],
        GRAPHFERRY_BACKEND="cuda",
        **extra,
    )
    assert res["backend"] == "cuda"
    assert res["sample_on"] == "cuda"
    assert res["topology"] == (_lib.GF_TOPOLOGY_PINNED if mode == "uva" else _lib.GF_TOPOLOGY_AUTO)
    assert res["auto"] == "cpu"  # device="cuda" alone: mode 1, with the CUDA library too
    assert res["batches"] == 10 and res["diffs"] == []
    assert (
        res["stream0_refused"] and res["twice_refused"] and res["versioned"] == 45
    )  # 10 batches of 9 device tensors, every other one
    assert res["live_allocs"] == 0  # every device block freed after close and the deleters


_PINNED_SOURCES = r"""
import ctypes, json, sys
import torch
import graphferry
from graphferry import _device, sampling

drv = ctypes.CDLL("libcuda.so.1")
drv.gf_fakecuda_is_registered.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
def registrations():
    total, live = ctypes.c_int64(), ctypes.c_int64()
    assert drv.gf_fakecuda_registrations(ctypes.byref(total), ctypes.byref(live)) == 0
    return total.value, live.value

g = graphferry.Graph.open(sys.argv[1])
x = torch.arange(g.num_nodes * 6, dtype=torch.float32).reshape(g.num_nodes, 6)
g.set_node_data("x", x)  # the caller's memory, shared with the engine
choice = _device.choose_mode(torch.device("cuda"), use_uva=True)  # the topology in pinned host memory
seeds = torch.arange(0, 200) * 7 % g.num_nodes
opts = graphferry.SampleOptions([5, 3], seed=7)
kw = dict(batch_size=64, feature_names=["x", "feat"])
devl = sampling.Loader.from_options(g, seeds, opts, device=choice.device, **kw)
out = {"x_registered": drv.gf_fakecuda_is_registered(x.data_ptr(), x.numel() * 4), "open": registrations()}
devl.close()
out["x_registered_after_close"] = drv.gf_fakecuda_is_registered(x.data_ptr(), x.numel() * 4)
out["closed"] = registrations()
g.close()
print(json.dumps(out))
"""


def test_pinned_memory_registers_only_memory_off_the_go_heap(cuda_package):
    """In the device loader with the topology and node data in pinned host
    memory, the caller's tensor (shared through DLPack) and Cora's mapped
    feat.bin are registered with the driver in place; the topology, built
    on the Go heap, is copied into pinned allocations, never registered."""
    res = _run(cuda_package, _PINNED_SOURCES, [str(REPO / "examples" / "data" / "cora")], GRAPHFERRY_BACKEND="cuda")
    assert res["x_registered"] == 1 and res["x_registered_after_close"] == 0
    total, live = res["open"]
    assert (total, live) == (2, 2), res  # x and feat.bin: nothing of the topology
    assert res["closed"] == [2, 0], res


# --- the loaders' hooks ------------------------------------------------------


def _pyg_data(n: int = 40):
    from torch_geometric.data import Data

    g = torch.Generator().manual_seed(0)
    src, dst = torch.randint(0, n, (2, 4 * n), generator=g)
    return Data(
        x=torch.randn(n, 3, generator=g),
        y=torch.arange(n),
        edge_index=torch.stack([src, dst]),
        num_nodes=n,
    )


def test_pyg_loader_choice_with_the_cpu_library():
    from graphferry.pyg import NeighborLoader

    data = _pyg_data()
    plain = NeighborLoader(data, [2], batch_size=8)
    assert plain.mode.sample_on == "cpu" and plain.mode.device is None
    with pytest.raises(ValueError, match="give device='cuda'"):
        NeighborLoader(data, [2], batch_size=8, sample_on="cuda")
    with pytest.raises(BackendError, match="set GRAPHFERRY_BACKEND=cuda before importing graphferry"):
        NeighborLoader(data, [2], batch_size=8, device="cuda", sample_on="cuda")
    # device="cuda": mode 1 (here without CUDA the prefetch step falls back
    # to the CPU with PyG's warning)
    with pytest.warns(UserWarning):
        mode1 = NeighborLoader(data, [2], batch_size=8, device="cuda")
    assert mode1.mode.sample_on == "cpu" and "mode 1" in mode1.mode.reason
    assert sum(b.batch_size for b in mode1) == data.num_nodes
    with pytest.warns(UserWarning):
        forced = NeighborLoader(data, [2], batch_size=8, device="cuda", sample_on="cpu")
    assert forced.mode.sample_on == "cpu" and "sample_on='cpu'" in forced.mode.reason


def test_dgl_loader_choice_with_the_cpu_library():
    import dgl

    from graphferry import dgl as gfdgl

    gd = dgl.graph((torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 3, 0])))
    sampler = gfdgl.NeighborSampler([2])
    loader = gfdgl.DataLoader(gd, torch.arange(4), sampler, batch_size=2)
    assert loader.mode.sample_on == "cpu" and loader.mode.device is None
    with pytest.raises(ValueError, match="give device='cuda'"):
        gfdgl.DataLoader(gd, torch.arange(4), sampler, sample_on="cuda")
    with pytest.raises(ValueError, match="sample_on must be"):
        gfdgl.DataLoader(gd, torch.arange(4), sampler, sample_on="gpu")


_NEVER_OPENED = r"""
import ctypes, json, warnings
import torch
import graphferry
from torch_geometric.data import Data
from graphferry.pyg import NeighborLoader

drv = ctypes.CDLL("libcuda.so.1")
def device_use():
    stats = (ctypes.c_int64 * 16)()
    assert drv.gf_fakecuda_stats(0, stats) == 0
    return {"launches": stats[9], "module_loads": stats[4], "primary_refcount": stats[8], "streams": stats[5]}

g = torch.Generator().manual_seed(0)
n = 40
src, dst = torch.randint(0, n, (2, 4 * n), generator=g)
data = Data(x=torch.randn(n, 3, generator=g), edge_index=torch.stack([src, dst]), num_nodes=n)
out = {"backend": graphferry.backend()}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # no CUDA in torch here: the hand-off falls back to the CPU
    pyg = NeighborLoader(data, [2], batch_size=8, device="cuda")
    out["mode"] = pyg.mode.sample_on
    out["batches"] = [sum(1 for _ in pyg) for epoch in range(2)]
    out["mode1"] = device_use()
    forced = NeighborLoader(data, [2], batch_size=8, device="cuda", sample_on="cuda")
    out["forced"] = [forced.mode.sample_on, len(forced)]
    try:
        NeighborLoader(data, [2], batch_size=8, device="cuda", sample_on="cuda", disjoint=True)
    except NotImplementedError as e:
        out["disjoint"] = str(e)
print(json.dumps(out))
"""


def test_device_cuda_alone_never_opens_the_device_sampler(cuda_package):
    """With the CUDA library loaded over the fake driver, a loader with
    device="cuda" and no sample_on (PyG's NeighborLoader; DGL's DataLoader
    makes the same choice, test_cuda_device_alone_is_mode1, but needs
    torch's CUDA to be built) runs mode 1 and never opens the device
    sampler: its epochs leave the driver untouched (no kernel launched, no
    module loaded, no context retained, no stream made). Only
    sample_on="cuda" asks for mode 2."""
    res = _run(cuda_package, _NEVER_OPENED, [], GRAPHFERRY_BACKEND="cuda")
    assert res["backend"] == "cuda", res
    assert res["mode"] == "cpu" and res["batches"] == [5, 5], res
    assert res["mode1"] == {"launches": 0, "module_loads": 0, "primary_refcount": 0, "streams": 0}, res
    assert res["forced"] == ["cuda", 5], res
    assert "mode 2" in res["disjoint"], res


# --- stream order on the asynchronous fake driver ------------------------------

_PER_THREAD = r"""
import ctypes, json, queue, sys, threading
import torch
import graphferry
from graphferry import _device, sampling
from graphferry._native import lib as L

drv = ctypes.CDLL("libcuda.so.1")
drv.gf_fakecuda_hold.argtypes = [ctypes.c_void_p, ctypes.c_int]
def ok(rc):
    if rc != 0:
        raise RuntimeError(f"driver call failed: {rc}")
ok(drv.cuInit(0))
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
ok(drv.cuDeviceGet(ctypes.byref(dev), 0))
ok(drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
PER_THREAD = 2  # CU_STREAM_PER_THREAD: the calling thread's own default stream
get = ctypes.pythonapi.PyCapsule_GetPointer
get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]

g = graphferry.Graph.open(sys.argv[1])
seeds = torch.arange(g.num_nodes)
opts = graphferry.SampleOptions([5, 3], seed=7)
kw = dict(batch_size=64, shuffle=True)
host = sampling.Loader.from_options(g, seeds, opts, **kw)
devl = sampling.Loader.from_options(g, seeds, opts, device=_device.DeviceOptions(0), **kw)

jobs, done = queue.Queue(), queue.Queue()
def consumer():
    # Thread A takes every device tensor with stream=2 (its own per-thread
    # stream), queues its read there (held: it has not run yet) and lets go
    # of the tensor at once, as torch would after queueing its kernels.
    try:
        ok(drv.cuCtxSetCurrent(ctx))
        ok(drv.gf_fakecuda_hold(PER_THREAD, 1))
        bufs = []
        while (dt := jobs.get()) is not None:
            cap = dt.__dlpack__(stream=PER_THREAD)
            t = L.DLManagedTensor.from_address(get(cap, b"dltensor")).dl_tensor
            n = t.dtype.bits // 8
            for i in range(t.ndim):
                n *= t.shape[i]
            buf = ctypes.c_void_p()
            ok(drv.cuMemHostAlloc(ctypes.byref(buf), ctypes.c_size_t(max(n, 1)), 0))
            if n:
                src, size = ctypes.c_uint64(t.data), ctypes.c_size_t(n)
                ok(drv.cuMemcpyDtoHAsync_v2(buf, src, size, ctypes.c_void_p(PER_THREAD)))
            bufs.append((buf, n))
            del cap, t  # the deleter runs here, on this thread
            done.put(len(bufs) - 1)
        ok(drv.gf_fakecuda_hold(PER_THREAD, 0))
        ok(drv.cuStreamSynchronize(ctypes.c_void_p(PER_THREAD)))
        done.put([ctypes.string_at(b.value, n) for b, n in bufs])
    except BaseException as e:
        done.put(e)
        raise

def handoff(dt):
    jobs.put(dt)
    i = done.get()
    if isinstance(i, BaseException):
        raise i
    return i
sampling.from_device = handoff
a = threading.Thread(target=consumer)
a.start()

# Thread B (this one) iterates: its gf_loader_next and gf_batch_close drain
# the deleters' queue. Memory given back after stream 2 must wait for
# thread A's stream, not this thread's.
expect = []
for epoch in range(2):
    for x, y in zip(iter(host), iter(devl), strict=True):
        pairs = [(x.nodes, y.nodes), (x.input_index, y.input_index)]
        for bx, by in zip(x.blocks, y.blocks, strict=True):
            pairs += [(bx.indptr, by.indptr), (bx.indices, by.indices), (bx.edge_ids, by.edge_ids)]
        expect += [(i, t.contiguous().numpy().tobytes()) for t, i in pairs]
jobs.put(None)
got = done.get()
a.join()
diffs = [i for i, want in expect if got[i] != want]
devl.close(); host.close(); g.close()
stats = (ctypes.c_int64 * 16)()
drv.gf_fakecuda_stats(0, stats)
print(json.dumps({"tensors": len(expect), "diffs": len(diffs), "live_allocs": stats[0]}))
"""


def test_per_thread_stream_orders_reuse_on_the_consumers_thread(cuda_package):
    """DLPack's ``stream=2`` is the consumer thread's per-thread stream. A
    consumer thread takes every device tensor with it and queues its read
    there (held by the fake driver, so it has not run), then lets go of the
    tensor; another thread iterates the loader, draining the deleters.
    Every read, once the consumer's stream runs, equals the CPU engine's
    batch: no block was reused while that stream still had to read it.
    Before the fix the drain recorded the release event on the draining
    thread's own per-thread stream, the blocks were reused by later batches
    and the reads came out wrong."""
    res = _run(cuda_package, _PER_THREAD, [str(REPO / "examples" / "data" / "cora")], GRAPHFERRY_BACKEND="cuda")
    assert res["tensors"] > 500, res
    assert res["diffs"] == 0, res
    assert res["live_allocs"] == 0, res

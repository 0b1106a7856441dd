"""The GPU data path, everything of it but the CUDA calls (those are
tests/gpu/test_transfer.py's, run on a GPU by tests/gpu/run.sh):

* graphferry's host allocator (the C API's host pool, gf_host_pool, given to
  the engine as its gf_allocator) under node and edge loaders: every output
  byte from it, the batches those of the library's memory, every block
  freed exactly once (also for batches dropped after the loader and the
  graph were closed), a failing pool a clear error that leaks nothing, a
  clean exit with batches held;
* a block is handed out again only after the copies that read it ran: a
  consumer holding a batch's memory and a stand-in for its pending
  non_blocking copies (a stream whose copies run late) over a pool that
  poisons reusable blocks; each new mapping page-locked once, before a
  tensor in it is handed over;
* which loaders take the path: PyG's ``pin_memory=True`` passes the
  allocator to the engine loaders; DGL's ``device``, ``pin_prefetcher``,
  ``use_prefetch_thread``, ``use_alternate_streams`` read as DGL reads them,
  with DGL's errors; CPU training runs nothing of it;
* the prefetch step (``DeviceStage``, a step of ``EngineLoader._iterate``)
  with a CPU device: order, errors, Ctrl-C, closing the loader under it, no
  thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import gc
import os
import signal
import subprocess
import sys
import threading
import time
import warnings
from typing import Any

import pytest
import torch

import graphferry
from graphferry import _hostmem, _loader, _transfer
from graphferry._hostmem import HostAllocator
from graphferry._link import EdgeLoader
from graphferry.errors import GraphferryError, OutOfMemoryError

CUDA = torch.cuda.is_available()
KINDS = ("node", "edge-dgl", "edge-pyg")


def tensors_of(obj) -> list[torch.Tensor]:
    """Every tensor of a loader batch (a SampledSubgraph or an EdgeSample), in
    field order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for x in obj for t in tensors_of(x)]
    if isinstance(obj, dict):
        return [t for k in sorted(obj) for t in tensors_of(obj[k])]
    if dataclasses.is_dataclass(obj):
        return [t for f in dataclasses.fields(obj) for t in tensors_of(getattr(obj, f.name))]
    return []


@pytest.fixture
def graph(cora_dir):
    g = graphferry.Graph.open(cora_dir)
    g.set_edge_data("w", torch.rand(g.num_edges, 3, generator=torch.Generator().manual_seed(1)))
    yield g
    g.close()


def open_loader(kind: str, g: graphferry.Graph, allocator: HostAllocator | None, **kw) -> graphferry.Loader:
    common = dict(batch_size=64, shuffle=True, feature_names=["feat"], label_names=["label"], allocator=allocator)
    common.update(kw)
    if kind == "node":
        return graphferry.Loader(g, torch.arange(0, 1200, 2), [5, 3], seed=3, num_threads=2, **common)
    options = graphferry.SampleOptions((4, 2), frontier="all" if kind == "edge-dgl" else "new", seed=3, num_threads=2)
    if kind == "edge-dgl":
        return EdgeLoader(
            g,
            torch.arange(0, 900, 3),
            None,
            options,
            mode="dgl",
            negative="per_source_uniform",
            amount=2,
            exclude="self",
            edge_feature_names=["w"],
            **common,
        )
    src = torch.arange(0, 600, 2)
    return EdgeLoader(
        g, src, (src * 7 + 1) % g.num_nodes, options, mode="pyg", negative="binary", amount=1.0, coo=True, **common
    )


# ---------------------------------------------------------------------------
# The host allocator under the engine's loaders


@pytest.mark.parametrize("kind", KINDS)
def test_every_output_byte_comes_from_the_allocator(graph, kind):
    alloc = HostAllocator(pinned=False)
    ours, theirs = open_loader(kind, graph, alloc), open_loader(kind, graph, None)
    kept, copies, batches = [], [], 0
    for a, b in zip(ours, theirs):
        ta, tb = tensors_of(a), tensors_of(b)
        assert len(ta) == len(tb) >= 8
        for x, y in zip(ta, tb):
            assert x.dtype == y.dtype and torch.equal(x, y)  # the batches of the library's memory
            assert alloc.owns(x), f"a tensor of {kind} batch {batches} is not in the allocator's blocks"
            assert not (y.numel() and alloc.owns(y))
        if batches < 3:  # dropped after the loaders and the graph are closed
            kept.append(a)
            copies.append([t.clone() for t in ta])
        batches += 1
    assert batches >= 5 and alloc.allocs > 0 and alloc.failures == 0
    # Another epoch stopped with batches in flight (the loader closes them).
    it = iter(ours)
    next(it)
    del it
    ours.close()
    theirs.close()
    graph.close()
    gc.collect()
    assert alloc.live_blocks > 0  # the kept batches
    for batch, saved in zip(kept, copies):
        assert all(torch.equal(x, y) for x, y in zip(tensors_of(batch), saved))
    del kept, batch, a, b, ta, tb, x, y
    gc.collect()
    assert alloc.live_blocks == 0 and alloc.live_bytes == 0
    assert alloc.allocs == alloc.frees and alloc.unknown_frees == 0  # every block freed exactly once


@pytest.mark.parametrize("kind", KINDS)
def test_failing_allocator_is_a_clear_error_and_leaks_nothing(graph, kind):
    # One batch's bytes, then limits that fail at several points of a batch.
    probe = HostAllocator(pinned=False)
    with open_loader(kind, graph, probe, queue_capacity=1) as loader:
        first = next(iter(loader))
        batch_bytes = sum(t.numel() * t.element_size() for t in tensors_of(first))
        del first
    failed = 0
    for limit in (0, 100, batch_bytes // 8, batch_bytes // 2, batch_bytes):
        alloc = HostAllocator(pinned=False, limit_bytes=limit)
        loader = open_loader(kind, graph, alloc, queue_capacity=1)
        seen, it = [], iter(loader)
        with pytest.raises(OutOfMemoryError) as caught:
            for batch in it:
                seen.append(batch)  # held: the live blocks grow until the limit is passed
        err = caught.value
        assert isinstance(err, MemoryError) and isinstance(err, GraphferryError)
        assert "host allocator" in str(err) and f"limit of {limit} bytes" in str(err), str(err)
        assert isinstance(err.__cause__, MemoryError)
        assert alloc.failures >= 1
        failed += 1
        with pytest.raises(StopIteration):  # the error ended the epoch
            next(it)
        loader.close()
        del seen, caught, err, it
        gc.collect()
        assert alloc.live_blocks == 0 and alloc.allocs == alloc.frees and alloc.unknown_frees == 0
    assert failed == 5


@pytest.mark.skipif(CUDA, reason="page-locked memory can be had here")
def test_page_locked_memory_without_cuda_fails_with_torch_s_reason():
    with pytest.raises(RuntimeError, match="page-locked memory needs CUDA") as c:
        HostAllocator(pinned=True)
    assert isinstance(c.value.__cause__, RuntimeError)  # torch's


def test_allocator_argument_is_checked(graph):
    with pytest.raises(TypeError, match="'allocator' must be a graphferry HostAllocator"):
        graphferry.Loader(graph, torch.arange(4), [2], allocator=object())


_EXIT_SCRIPT = """
import sys, torch, graphferry, graphferry.pyg
from graphferry._hostmem import HostAllocator
from graphferry._transfer import Transfer

g = graphferry.Graph.open(sys.argv[1])
alloc = HostAllocator(pinned=False)
loader = graphferry.Loader(g, torch.arange(0, 2000), [10, 5], batch_size=16, feature_names=["feat"],
                           allocator=alloc, queue_capacity=4, num_threads=2)
it = iter(loader)
held = next(it)  # a batch held at exit, the pipeline full of batches in flight
pyg = graphferry.pyg.NeighborLoader(g, [10, 5], batch_size=16, input_nodes=torch.arange(2000), num_threads=2)
prefetching = pyg._iterate(Transfer(device=torch.device("cpu"), allocator=alloc))
held2 = next(prefetching)  # a batch staged ahead at exit
print("iterating", flush=True)
if sys.argv[2] == "raise":
    raise SystemExit(3)
"""


@pytest.mark.parametrize("how", ["return", "raise"])
def test_no_callback_runs_into_a_finalizing_interpreter(cora_dir, how):
    """Loaders on a host pool, open at exit with batches held and in flight:
    their threads call no Python (the pool's alloc and free are C), and the
    process exits cleanly (one run each: make test's time is short; the C
    soak and valgrind cover the pool's races)."""
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT_SCRIPT, str(cora_dir), how],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONFAULTHANDLER="1"),
    )
    assert "iterating" in proc.stdout, proc.stderr
    assert proc.returncode == (3 if how == "raise" else 0), proc.stderr
    assert "Fatal Python error" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------
# Which loaders take the path


def _warns_without_cuda(match: str):
    return contextlib.nullcontext() if CUDA else pytest.warns(UserWarning, match=match)


@pytest.mark.parametrize("kind", ["node", "link"])
def test_pyg_pin_memory_passes_the_allocator(cora_pyg, kind):
    from graphferry.pyg import LinkNeighborLoader, NeighborLoader

    def make(**kw):
        if kind == "node":
            return NeighborLoader(cora_pyg, [5, 3], input_nodes=cora_pyg.train_mask, batch_size=32, seed=4, **kw)
        return LinkNeighborLoader(
            cora_pyg, [4, 2], batch_size=64, neg_sampling="binary", seed=4, num_threads=2, shuffle=True, **kw
        )

    with _warns_without_cuda("pin_memory=True is set but no accelerator is found"):
        pinned = make(pin_memory=True)
    plain = make()
    transfer = pinned._transfer
    assert transfer.device is None and transfer.pins == CUDA
    alloc = transfer.allocator
    assert alloc is _hostmem.shared_allocator(CUDA)
    assert plain._transfer is None
    n = 0
    it = iter(pinned)
    assert isinstance(it, _loader._Epoch)  # batches stay on the CPU
    for a, b in zip(it, plain):
        for key in ("x", "y", "n_id", "e_id", "edge_index"):
            assert torch.equal(a[key], b[key]), key
        assert alloc.owns(a.x) and alloc.owns(a.n_id) and not alloc.owns(b.x)
        n += 1
    assert n >= 3
    assert pinned._loaders and all(lo.allocator is alloc for lo in pinned._loaders)
    assert all(lo.allocator is None for lo in plain._loaders)
    pinned.close()
    plain.close()


def test_pin_memory_arguments(cora_pyg):
    from graphferry.pyg import LinkNeighborLoader, NeighborLoader

    with pytest.raises(TypeError, match="'pin_memory' must be a bool"):
        NeighborLoader(cora_pyg, [2], pin_memory="yes")
    with pytest.raises(ValueError, match="pin_memory_device='cpu'"):
        NeighborLoader(cora_pyg, [2], pin_memory=True, pin_memory_device="cpu")
    with pytest.warns(UserWarning, match="pin memory device is set and pin_memory flag is not used"):
        loader = NeighborLoader(cora_pyg, [2], pin_memory_device="cuda")
    assert loader._transfer is None
    with pytest.raises(TypeError, match="'pin_memory_device' must be a str"):
        LinkNeighborLoader(cora_pyg, [2], pin_memory=False, pin_memory_device=0)


# (gpu, use_prefetch_thread, use_alternate_streams, pin_prefetcher, tensor adaptor) ->
# (pin_prefetcher, use_prefetch_thread, use_alternate_streams), as DGL 2.1's DataLoader resolves them
# for a graph on the CPU.
_DGL_SETTINGS = [
    ((True, None, None, None, True), (True, True, True)),
    ((True, None, None, None, False), (True, True, False)),
    ((True, False, None, None, True), (True, False, True)),
    ((True, None, False, None, True), (True, True, False)),
    ((True, None, None, False, True), (False, True, True)),
    ((True, False, False, False, True), (False, False, False)),
    ((False, None, None, None, True), (False, False, False)),
    ((False, False, True, False, True), (False, False, True)),  # kept as given; no stream off CUDA
    ((False, None, True, None, False), (False, False, False)),
]


@pytest.mark.parametrize("given, want", _DGL_SETTINGS)
def test_dgl_settings_are_dgl_s(given, want):
    gpu, thread, streams, pin, adaptor = given
    warns = pytest.warns(UserWarning, match="TensorAdaptor") if streams and not adaptor else contextlib.nullcontext()
    with warns:
        got = _transfer.dgl_settings(
            gpu, use_prefetch_thread=thread, use_alternate_streams=streams, pin_prefetcher=pin, tensor_adaptor=adaptor
        )
    assert got == want


def test_dgl_settings_warn_without_tensor_adaptor():
    with pytest.warns(UserWarning, match="use_alternate_streams is turned off because TensorAdaptor is not available"):
        assert _transfer.dgl_settings(True, use_alternate_streams=True, tensor_adaptor=False) == (True, True, False)


@pytest.mark.parametrize("name", ["pin_prefetcher", "use_prefetch_thread"])
def test_dgl_refuses_gpu_settings_on_the_cpu_as_dgl_does(cora_dgl, name):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    sampler = dgl.dataloading.NeighborSampler([2])
    ids = torch.arange(8)
    with pytest.raises(ValueError) as theirs:
        dgl.dataloading.DataLoader(cora_dgl, ids, sampler, device="cpu", **{name: True})
    with pytest.raises(ValueError) as ours:
        gfdgl.DataLoader(cora_dgl, ids, sampler, device="cpu", **{name: True})
    assert str(ours.value) == str(theirs.value)


def test_dgl_argument_errors(cora_dgl):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    sampler = dgl.dataloading.NeighborSampler([2])
    ids = torch.arange(8)
    if not CUDA:
        with pytest.raises(RuntimeError, match="device='cuda': no CUDA device is available"):
            gfdgl.DataLoader(cora_dgl, ids, sampler, device="cuda")
    with pytest.raises(TypeError, match="pin_memory=True"):
        gfdgl.DataLoader(cora_dgl, ids, sampler, pin_memory=True)
    # use_uva=True is mode 2 (issue 19): with this process's CPU library it
    # says how to load the CUDA one; without a device it is refused
    with pytest.raises(graphferry.BackendError, match="set GRAPHFERRY_BACKEND=cuda before importing graphferry"):
        gfdgl.DataLoader(cora_dgl, ids, sampler, device="cuda", use_uva=True)
    with pytest.raises(ValueError, match="use_uva=True samples on a GPU"):
        gfdgl.DataLoader(cora_dgl, ids, sampler, use_uva=True)


def test_cpu_training_runs_nothing_of_the_gpu_path(cora_dgl, cora_pyg):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl
    from graphferry.pyg import LinkNeighborLoader, NeighborLoader

    shared = dict(_hostmem._SHARED)
    allocs = {k: a.allocs for k, a in shared.items()}
    threads = threading.active_count()
    cuda_initialized = torch.cuda.is_initialized()
    node = dgl.dataloading.NeighborSampler([3, 2], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loaders = [
        gfdgl.DataLoader(cora_dgl, torch.arange(200), node, batch_size=64),
        gfdgl.DataLoader(cora_dgl, torch.arange(200), node, device="cpu", use_alternate_streams=True, batch_size=64),
        gfdgl.DataLoader(
            cora_dgl,
            torch.arange(300),
            dgl.dataloading.as_edge_prediction_sampler(
                dgl.dataloading.NeighborSampler([2]), negative_sampler=dgl.dataloading.negative_sampler.Uniform(1)
            ),
            batch_size=64,
        ),
        NeighborLoader(cora_pyg, [3, 2], batch_size=64, input_nodes=torch.arange(200)),
        LinkNeighborLoader(cora_pyg, [3], batch_size=256, neg_sampling="binary"),
    ]
    settings = ("device", "pin_prefetcher", "use_prefetch_thread", "use_alternate_streams")
    theirs = dgl.dataloading.DataLoader(cora_dgl, torch.arange(200), node, device="cpu", use_alternate_streams=True)
    assert [getattr(loaders[1], k) for k in settings] == [getattr(theirs, k) for k in settings]
    assert loaders[1].use_alternate_streams  # kept as given, as DGL keeps it (no stream on the CPU)
    for loader in loaders:
        assert loader._transfer is None
        if hasattr(loader, "pin_prefetcher"):
            assert loader.device == torch.device("cpu") and not (loader.pin_prefetcher or loader.use_prefetch_thread)
        it = iter(loader)
        assert type(it) is _loader._Epoch
        assert sum(1 for _ in it) >= 2
        assert all(lo.allocator is None for lo in loader._loaders)
        loader.close()
    assert threading.active_count() == threads  # no prefetch thread
    assert torch.cuda.is_initialized() == cuda_initialized
    assert _hostmem._SHARED == shared and all(a.allocs == allocs[k] for k, a in shared.items())


# ---------------------------------------------------------------------------
# When a block is handed out again


class _LateStream:
    """A stand-in for the consumer's CUDA stream on the CPU: ``copy(t)``
    queues a non_blocking copy of ``t`` that reads its bytes only when the
    stream runs (``run()``), through a view that does not keep ``t`` alive;
    an event recorded on it completes once the copies queued before it ran."""

    def __init__(self):
        self.queued: list = []
        self.ran = 0

    def copy(self, t: torch.Tensor) -> None:
        self.queued.append((ctypes.c_uint8 * (t.numel() * t.element_size())).from_address(t.data_ptr()))

    def run(self) -> list[bytes]:
        out = [bytes(view) for view in self.queued[self.ran :]]
        self.ran = len(self.queued)
        return out

    def record_event(self):
        stream, mark = self, len(self.queued)
        return type("Event", (), {"query": lambda self: stream.ran >= mark})()


@pytest.mark.parametrize("fenced", [True, False], ids=["fenced", "unfenced"])
def test_a_block_is_reused_only_after_the_copies_that_read_it(cora_pyg, fenced):
    """The consumer copies each batch's tensors non_blocking (the copies run
    a few batches later), drops the batch, and holds two batches whole. The
    pool poisons a block when it can be handed out again. Fenced (what
    pin_memory=True gives a GPU consumer), every copy reads the batch's
    bytes; unfenced (a block reusable once its tensors are gone, as the
    allocator over PyTorch's pinned memory was before), the copies read
    poisoned or later batches' bytes: the test's check fails there."""
    from graphferry.pyg import NeighborLoader

    stream = _LateStream()
    alloc = HostAllocator(pinned=False, poison=True, stream=(lambda: stream) if fenced else None)
    loader = NeighborLoader(cora_pyg, [5, 3], batch_size=32, input_nodes=torch.arange(1600), seed=3, num_threads=2)
    ref = NeighborLoader(cora_pyg, [5, 3], batch_size=32, input_nodes=torch.arange(1600), seed=3, num_threads=2)
    want, held, changed, n = [], [], 0, 0
    for batch, theirs in zip(loader._iterate(_transfer.Transfer(device=None, allocator=alloc)), ref):
        for key in ("x", "n_id", "e_id"):  # what the engine wrote (edge_index is made in Python)
            assert alloc.owns(batch[key]), key
            stream.copy(batch[key])
            want.append(bytes(theirs[key].contiguous().numpy().tobytes()))
        if n in (1, 4):
            held.append((batch, theirs))  # the consumer holds them: never reused
        del batch
        n += 1
        if n % 4 == 0:  # the queued copies run, several batches late
            got = stream.run()
            changed += sum(a != b for a, b in zip(got, want[-len(got) :]))
    got = stream.run()
    changed += sum(a != b for a, b in zip(got, want[-len(got) :]))
    assert n == 50 and len(held) == 2
    for batch, theirs in held:
        assert all(torch.equal(batch[k], theirs[k]) for k in ("x", "n_id", "edge_index"))
    if fenced:
        assert changed == 0, f"{changed} copies read a block handed out again before they ran"
        assert alloc.waiting > 0  # freed after the latest fence: not reusable yet
    else:
        assert changed > 0  # the check sees reuse under pending copies
    loader.close()
    ref.close()


def test_each_mapping_is_page_locked_once_before_its_batch_is_handed_over(graph):
    """The GPU path's page-locking (cudaHostRegister there) with a stand-in
    that records the ranges: each mapping of the pool once, and every tensor
    of a batch in a locked range when the batch is handed over."""
    locked: list[tuple[int, int]] = []
    alloc = HostAllocator(pinned=False, page_lock=lambda address, size: locked.append((address, size)))
    with open_loader("node", graph, alloc, queue_capacity=1) as loader:
        for _ in range(3):
            for sub in loader:
                for t in tensors_of(sub):
                    start = t.data_ptr()
                    end = start + t.numel() * t.element_size()
                    assert not t.numel() or any(a <= start and end <= a + n for a, n in locked)
            del sub, t
    assert len(locked) == len(set(locked)) > 0 and alloc.frees == alloc.allocs
    assert len(locked) < alloc.allocs / 2  # mappings are reused: locked once, handed out many times


# ---------------------------------------------------------------------------
# The prefetch step with a CPU device


def _cpu_transfer(allocator: HostAllocator | None = None) -> _transfer.Transfer:
    return _transfer.Transfer(device=torch.device("cpu"), allocator=allocator)


def _staged(source) -> Any:
    """``source``'s items through the prefetch step."""
    stage = _transfer.DeviceStage(_cpu_transfer())
    return iter(lambda: stage.next(lambda: next(source)), object())


def _prefetch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "prefetch" in t.name and t.is_alive()]


def test_prefetch_step_yields_the_epoch_in_order(cora_pyg, cora_dgl):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl
    from graphferry.pyg import LinkNeighborLoader, NeighborLoader

    alloc = HostAllocator(pinned=False)
    node = dgl.dataloading.NeighborSampler([3, 2], prefetch_node_feats=["feat"], prefetch_labels=["label"])
    edge = dgl.dataloading.as_edge_prediction_sampler(
        node, negative_sampler=dgl.dataloading.negative_sampler.Uniform(1)
    )
    makers = {
        "pyg node": lambda: NeighborLoader(cora_pyg, [3, 2], batch_size=64, input_nodes=torch.arange(400), seed=2),
        "pyg link": lambda: LinkNeighborLoader(cora_pyg, [3], batch_size=256, neg_sampling="binary", seed=2),
        "dgl node": lambda: gfdgl.DataLoader(cora_dgl, torch.arange(400), node, batch_size=64, seed=2),
        "dgl edge": lambda: gfdgl.DataLoader(cora_dgl, torch.arange(600), edge, batch_size=64, seed=2),
    }
    for name, make in makers.items():
        ours, ref = make(), make()
        it = ours._iterate(_cpu_transfer(alloc))
        assert type(it) is _loader._Epoch and it._stage is not None, name  # the one path, with the step
        got, want = list(it), list(ref)
        assert not _prefetch_threads()
        assert len(got) == len(want) >= 2, name
        for a, b in zip(got, want):
            if name.startswith("pyg"):
                assert all(torch.equal(a[k], b[k]) for k in ("x", "n_id", "edge_index")), name
                assert alloc.owns(a.x) and alloc.owns(a.n_id) and not alloc.owns(b.x), name
            else:
                assert torch.equal(a[0], b[0]) and torch.equal(a[-1][0].srcdata["feat"], b[-1][0].srcdata["feat"])
                assert alloc.owns(a[0]), name  # input_nodes: the engine's sampled nodes
                # The engine gathers prefetch_node_feats (and the node loader's labels).
                blocks, theirs = a[-1], b[-1]
                assert alloc.owns(blocks[0].srcdata["feat"]) and not alloc.owns(theirs[0].srcdata["feat"]), name
                if name == "dgl node":
                    assert alloc.owns(blocks[-1].dstdata["label"])
        assert all(lo.allocator is alloc for lo in ours._loaders if not lo.closed)
        ours.close()
        ref.close()


def test_prefetch_step_is_one_batch_ahead_and_counts_what_it_handed_over(cora_pyg):
    """Batch k+1 is taken (and its copies issued) when batch k is handed
    over; state_dict counts the batches the consumer received."""
    from graphferry.pyg import NeighborLoader

    loader = NeighborLoader(cora_pyg, [3], batch_size=64, input_nodes=torch.arange(640), seed=1, num_threads=2)
    taken = []
    convert = loader._convert
    loader._convert = lambda sub: taken.append(1) or convert(sub)
    it = loader._iterate(_cpu_transfer())
    for k in range(3):
        next(it)
        assert len(taken) == k + 2
        assert loader.state_dict()["batches_yielded"] == k + 1
    assert len(list(it)) == 7 and len(taken) == 10
    loader.close()


class _Items:
    """A source of ints with a delay per item, raising ``fail`` at ``at``
    (KeyboardInterrupt: once, as Ctrl-C would)."""

    def __init__(self, n, *, at=-1, fail=None, delay=0.0):
        self.i, self.n, self.at, self.fail, self.delay = 0, n, at, fail, delay

    def __iter__(self):
        return self

    def __next__(self):
        if self.i == self.at and self.fail is not None:
            fail = self.fail
            if fail is KeyboardInterrupt:
                self.fail = None
            raise fail("source failed")
        if self.i >= self.n:
            raise StopIteration
        time.sleep(self.delay)
        self.i += 1
        return torch.tensor([self.i - 1])


def test_prefetch_errors_reach_the_training_thread_at_their_batch():
    it = _staged(_Items(6, at=3, fail=ValueError))
    assert [int(next(it)) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="source failed"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_prefetch_inline_interrupt_loses_no_batch():
    it = _staged(_Items(6, at=3, fail=KeyboardInterrupt))
    got, interrupts = [], 0
    while True:
        try:
            got.append(int(next(it)))
        except KeyboardInterrupt:
            interrupts += 1
        except StopIteration:
            break
    assert got == list(range(6)) and interrupts == 1


@pytest.mark.usefixtures("sigint_raises_keyboardinterrupt")
def test_prefetch_ctrl_c_leaves_the_epoch_resumable():
    it = _staged(_Items(5, delay=0.3))
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        next(it)  # waits for the first item, 0.3 s away
    timer.join()
    assert [int(x) for x in it] == list(range(5))


def test_dropping_the_iterator_frees_its_loader(cora_pyg):
    from graphferry.pyg import NeighborLoader

    loader = NeighborLoader(cora_pyg, [3, 2], batch_size=16, input_nodes=torch.arange(800), num_threads=2)
    transfer = _cpu_transfer(HostAllocator(pinned=False))
    it = loader._iterate(transfer)
    next(it)
    del it
    gc.collect()
    it = loader._iterate(transfer)  # the same engine loader, idle again
    assert len(loader._loaders) == 1
    assert sum(1 for _ in it) == len(loader)
    loader.close()


def test_failing_allocator_through_the_prefetch_step(cora_pyg):
    """The engine's OutOfMemoryError reaches the training thread at its
    batch, ends the epoch, and leaks no block."""
    from graphferry.pyg import NeighborLoader

    alloc = HostAllocator(pinned=False, limit_bytes=16 << 20)  # a few batches of Cora's features
    loader = NeighborLoader(cora_pyg, [5, 3], batch_size=32, input_nodes=torch.arange(1600), num_threads=2)
    it = loader._iterate(_cpu_transfer(alloc))
    held = []
    with pytest.raises(OutOfMemoryError, match="limit of 16777216 bytes") as caught:
        for batch in it:
            held.append(batch)  # kept: the live blocks grow past the limit
    assert held and isinstance(caught.value.__cause__, MemoryError)
    with pytest.raises(StopIteration):
        next(it)
    loader.close()
    del held, batch, caught, it
    gc.collect()
    assert alloc.live_blocks == 0 and alloc.allocs == alloc.frees > 0 and alloc.unknown_frees == 0


def test_closing_the_loader_stops_the_prefetch_step(cora_pyg):
    from graphferry.pyg import NeighborLoader

    loader = NeighborLoader(cora_pyg, [3, 2], batch_size=16, input_nodes=torch.arange(800), num_threads=2)
    it = loader._iterate(_cpu_transfer())
    next(it)
    threading.Timer(0.05, loader.close).start()
    with pytest.raises(GraphferryError, match="was closed"):
        for _ in it:
            time.sleep(0.01)


def test_to_device_keeps_the_batch_s_structure():
    from collections import namedtuple

    Pair = namedtuple("Pair", "a b")
    batch = (torch.arange(3), [torch.ones(2), {"k": torch.zeros(1)}], Pair(torch.arange(2), None), 7, "s")
    moved = _transfer.to_device(batch, torch.device("cpu"))
    assert isinstance(moved, tuple) and isinstance(moved[2], Pair) and moved[3:] == (7, "s")
    assert torch.equal(moved[1][1]["k"], torch.zeros(1))
    leaves = list(_transfer._leaves(batch))
    assert len(leaves) == 4  # the four tensors


def test_prefetch_transfer_on_the_cpu_passes_batches_through(cora_pyg):
    from graphferry.pyg import NeighborLoader, PrefetchLoader

    loader = NeighborLoader(cora_pyg, [3], batch_size=64, input_nodes=torch.arange(256), seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CUDA asked for: no warning
        pf = PrefetchLoader(loader, device="cpu")
    assert pf.transfer is None and len(pf) == len(loader) == 4
    assert type(iter(pf)) is _loader._Epoch
    if not CUDA:
        with pytest.warns(UserWarning, match="Requested device 'cuda' is not available, falling back to CPU"):
            assert PrefetchLoader(loader, device="cuda").transfer is None
        assert PrefetchLoader(loader).device == torch.device("cpu")
    loader.close()

"""GPU tests of mode 1 of issue 19, CPU sampling for GPU training (the
hand-off): tests/gpu/run.sh runs them on a GPU. They need CUDA through
PyTorch, not graphferry's CUDA library: mode 1 runs on the CPU library too.

* every tensor of a batch for a GPU consumer is page-locked: the engine's
  outputs in the page-locked host pool's mappings (registered once, freed
  exactly once), what the conversion derives pinned after it;
* pin_memory=True is safe for the user's own non_blocking copies: copies
  queued behind a busy stream, the batches dropped at once, still read the
  batches' bytes (the pool hands a buffer out again only after an event
  recorded on the consumer's stream after the drop has passed);
* the batches on the device equal the CPU batches of the same seed (node
  and edge loaders, through the loader's prefetch step and PrefetchLoader);
* the training stream waits for the copies on an event, never the host:
  with the side stream held busy on the device, next() returns at once,
  the copy's event has not passed, nothing synchronised the host, and the
  training stream still reads the batch's values (it is ordered after the
  copies on the device).

DGL is not in the GPU machine's image, so DGL's device='cuda' path (the same
prefetch step, with dgl.blocks.move_batch as its copy) is not run here.

Without CUDA every test is skipped, and run.sh fails a run in which any was.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
CORA = REPO / "examples" / "data" / "cora"


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not _cuda(), reason="needs a usable CUDA GPU")]

# How long the side stream is held busy (torch.cuda._sleep cycles: about
# 0.5 s at 2 GHz), against which next() must return at once (< 0.1 s).
_BUSY_CYCLES = 1_000_000_000


@pytest.fixture(scope="module")
def graph(torch):
    import graphferry

    g = graphferry.Graph.open(CORA)
    yield g
    g.close()


def _tensors(obj, torch) -> list:
    """Every tensor of a PyG batch, in key order."""
    return [obj[k] for k in sorted(obj.keys()) if isinstance(obj[k], torch.Tensor)]


def _pairs(g, torch):
    src = torch.arange(0, 1200, 2)
    return torch.stack([src, (src * 7 + 1) % g.num_nodes])


def _make(kind: str, g, torch, **kw):
    from graphferry.pyg import LinkNeighborLoader, NeighborLoader

    if kind == "node":
        return NeighborLoader(g, [5, 3], batch_size=64, input_nodes=torch.arange(1024), seed=5, shuffle=True, **kw)
    return LinkNeighborLoader(
        g, [4, 2], edge_label_index=_pairs(g, torch), batch_size=128, neg_sampling="binary", seed=5, **kw
    )


@pytest.mark.parametrize("kind", ["node", "edge"])
def test_pin_memory_batches_are_page_locked_from_the_allocator(torch, graph, kind):
    from graphferry import _hostmem

    alloc = _hostmem.shared_allocator(pinned=True)
    assert alloc.pinned
    pinned, plain = _make(kind, graph, torch, pin_memory=True), _make(kind, graph, torch)
    n = 0
    for a, b in zip(pinned, plain):
        ta, tb = _tensors(a, torch), _tensors(b, torch)
        assert len(ta) == len(tb) >= 4
        for x, y in zip(ta, tb):
            assert x.is_pinned() or not x.numel(), f"{kind} batch {n}: a tensor is not page-locked"
            assert torch.equal(x, y)
        assert alloc.owns(a.n_id) and not alloc.owns(b.n_id)  # the engine wrote it there
        if kind == "node":
            assert alloc.owns(a.feat)
        n += 1
    assert n >= 4
    pinned.close()
    plain.close()


def test_engine_outputs_in_page_locked_blocks_freed_once(torch, graph):
    import dataclasses
    import gc

    import graphferry
    from graphferry._hostmem import HostAllocator

    alloc = HostAllocator(pinned=True)
    loader = graphferry.Loader(
        graph, torch.arange(1024), [5, 3], batch_size=64, feature_names=["feat"], label_names=["label"],
        allocator=alloc, seed=2,
    )  # fmt: skip
    n = 0
    for sub in loader:
        tensors = []
        for f in dataclasses.fields(sub):
            v = getattr(sub, f.name)
            vs = list(v.values()) if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else [v]
            for t in vs:
                if dataclasses.is_dataclass(t):
                    tensors += [getattr(t, q.name) for q in dataclasses.fields(t)]
                else:
                    tensors.append(t)
        tensors = [t for t in tensors if isinstance(t, torch.Tensor) and t.numel()]
        assert len(tensors) >= 6
        assert all(t.is_pinned() and alloc.owns(t) for t in tensors)
        n += 1
    assert n == 16
    loader.close()
    del sub, tensors, t
    gc.collect()
    assert alloc.allocs > 0 and alloc.live_blocks == 0 and alloc.allocs == alloc.frees and alloc.unknown_frees == 0


def test_pin_memory_is_safe_for_the_user_s_non_blocking_copies(torch, graph):
    ours, ref = _make("node", graph, torch, pin_memory=True), _make("node", graph, torch)
    device = torch.device("cuda", torch.cuda.current_device())
    copies, n = [], 0
    for batch in ours:
        torch.cuda._sleep(_BUSY_CYCLES // 8)  # the copy below runs well after the batch is dropped
        copies.append(batch.x.to(device, non_blocking=True))
        del batch
        n += 1
    assert n == len(ref) >= 4
    for x, theirs in zip(copies, ref):
        assert torch.equal(x.cpu(), theirs.x), "a copy read a buffer handed out again before it ran"
    ours.close()
    ref.close()


@pytest.mark.parametrize("how", ["iterate", "PrefetchLoader"])
@pytest.mark.parametrize("kind", ["node", "edge"])
def test_batches_on_the_device_equal_the_cpu_batches(torch, graph, kind, how):
    from graphferry import _loader, _transfer
    from graphferry.pyg import PrefetchLoader

    ours, ref = _make(kind, graph, torch), _make(kind, graph, torch)
    if how == "PrefetchLoader":
        it = iter(PrefetchLoader(ours, "cuda"))
    else:
        transfer = _transfer.Transfer(
            device=torch.device("cuda", torch.cuda.current_device()),
            allocator=_transfer.shared_allocator(pinned=True),
            side_stream=True,
        )
        it = ours._iterate(transfer)
    assert isinstance(it, _loader._Epoch) and it._stage.stream is not None
    n = 0
    for a, b in zip(it, ref):
        ta, tb = _tensors(a, torch), _tensors(b, torch)
        assert len(ta) == len(tb) >= 4
        for x, y in zip(ta, tb):
            assert x.is_cuda and x.device.index == torch.cuda.current_device()
            assert torch.equal(x.cpu(), y)
        n += 1
    assert n == len(ref) >= 4
    ours.close()
    ref.close()


class _Source:
    """Page-locked random batches, and their values kept for the check."""

    def __init__(self, torch, n: int):
        gen = torch.Generator().manual_seed(9)
        self.values = [torch.rand(1 << 20, generator=gen) for _ in range(n)]
        self.i = 0
        self.gate = threading.Event()  # the first batch is taken once the test has readied the device

    def __iter__(self):
        return self

    def __next__(self):
        self.gate.wait()
        if self.i == len(self.values):
            raise StopIteration
        self.i += 1
        return {"x": self.values[self.i - 1].pin_memory()}


def test_training_stream_waits_on_an_event_not_the_host(torch, monkeypatch):
    from graphferry import _transfer

    device = torch.device("cuda", torch.cuda.current_device())
    host_waits = []
    spied = [(torch.cuda, "synchronize"), (torch.cuda.Event, "synchronize"), (torch.cuda.Stream, "synchronize")]
    for owner, name in spied:
        real = getattr(owner, name)

        def spy(*args, _real=real, _name=f"{owner.__name__}.{name}", **kwargs):
            host_waits.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(owner, name, spy)

    source = _Source(torch, 6)
    stage = _transfer.DeviceStage(_transfer.Transfer(device=device, allocator=None, side_stream=True))
    it = iter(lambda: stage.next(lambda: next(source)), object())
    side = stage.stream
    with torch.cuda.stream(side):
        torch.cuda._sleep(_BUSY_CYCLES)  # the side stream busy before the first copies are issued
    source.gate.set()
    training = torch.cuda.current_stream(device)
    assert side != training
    got = 0
    for k in range(len(source.values)):
        t0 = time.perf_counter()
        batch = next(it)
        returned = time.perf_counter() - t0
        assert returned < 0.1, f"next() blocked the host for {returned:.3f} s"
        if k + 1 < len(source.values):
            ahead = stage._ahead[0]  # batch k+1, its copies issued on the side stream before batch k was handed over
            assert isinstance(ahead, _transfer._Staged)
            if k == 0:
                assert not ahead.event.query(), "the copy had finished: the host waited for it"
        # Ordered after the copies on the device: the right values, read on the training stream.
        assert batch["x"].is_cuda
        total = batch["x"].double().sum()
        assert torch.allclose(total.cpu(), source.values[k].double().sum())  # .cpu() waits for the stream
        got += 1
        with torch.cuda.stream(side):
            torch.cuda._sleep(_BUSY_CYCLES // 4)  # copies issued from now on finish later
    with pytest.raises(StopIteration):
        next(it)
    assert got == 6
    assert host_waits == [], f"the prefetch step synchronised the host: {host_waits}"

"""The GPU data path of the engine-backed loaders (CPU-sampled batches for a
GPU consumer), node and edge loaders of both frameworks alike:
:class:`Transfer`, how a loader's batches reach their consumer (read from
DGL's arguments by :func:`dgl_transfer`, from torch's ``pin_memory`` by
:func:`pin_transfer`, from PyG's ``PrefetchLoader`` by
:func:`prefetch_transfer`; CPU training has none), and :class:`DeviceStage`,
the prefetch step of the one iteration path (``EngineLoader._iterate``).
Its only CUDA calls are behind a CUDA device; with a CPU device the same
steps run without a stream, which is how the CPU tests exercise it.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from ._hostmem import HostAllocator, cuda_ready, shared_allocator

__all__ = [
    "Transfer",
    "DeviceStage",
    "dgl_settings",
    "dgl_transfer",
    "pin_transfer",
    "prefetch_transfer",
    "cuda_device",
    "to_device",
    "pin_batch",
    "record_stream",
]


@dataclass(frozen=True)
class Transfer:
    """How a loader's batches reach their consumer.

    Attributes:
        device (torch.device, optional): where the batches go, through the
            prefetch step (:class:`DeviceStage`); None: they stay on the
            CPU (``pin_memory`` alone).
        allocator (HostAllocator, optional): the memory the engine writes
            the batches into (page-locked for a GPU); None: the library's own.
        side_stream (bool): the copies run on a stream of their own.
    """

    device: torch.device | None
    allocator: HostAllocator | None
    side_stream: bool = False

    @property
    def pins(self) -> bool:
        """Whether batches are made page-locked: the engine's memory, and
        what the training thread derives from it (:func:`pin_batch`)."""
        return self.allocator is not None and self.allocator.pinned


def cuda_device(device: Any, what: str = "device") -> torch.device:
    """``device`` as a ``torch.device``, a CUDA device with its index (the
    current one when none is given, as DGL resolves it); raises
    RuntimeError when CUDA is not available."""
    device = torch.device(device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError(
                f"{what}={str(device)!r}: no CUDA device is available (torch.cuda.is_available() is False)"
            )
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
    return device


def _page_locked(what: str) -> HostAllocator:
    """The allocator of a consumer that asked for page-locked memory: the
    page-locked one, or ordinary memory (with torch's warning) without CUDA."""
    return shared_allocator(pinned=cuda_ready(what))


def dgl_settings(
    gpu: bool,
    *,
    use_prefetch_thread: bool | None = None,
    use_alternate_streams: bool | None = None,
    pin_prefetcher: bool | None = None,
    tensor_adaptor: bool = True,
) -> tuple[bool, bool, bool]:
    """DGL 2.1's ``DataLoader`` arguments as DGL reads them for a graph on
    the CPU and a CUDA device (``gpu``) or another one, with DGL's defaults,
    errors and warning: ``(pin_prefetcher, use_prefetch_thread,
    use_alternate_streams)``; the last is kept as given for a device other
    than CUDA, though no stream is made for it."""
    if not gpu:
        if pin_prefetcher is True:
            raise ValueError("pin_prefetcher=True is only effective when device=cuda and sampling is performed on CPU.")
        if use_prefetch_thread is True:
            raise ValueError(
                "use_prefetch_thread=True is only effective when device=cuda and sampling is performed on CPU."
            )
    if use_alternate_streams and not tensor_adaptor:
        warnings.warn("use_alternate_streams is turned off because TensorAdaptor is not available.", stacklevel=4)
        use_alternate_streams = False
    if use_alternate_streams is None:
        use_alternate_streams = gpu and tensor_adaptor
    if not gpu:
        return False, False, bool(use_alternate_streams)
    return (
        True if pin_prefetcher is None else bool(pin_prefetcher),
        True if use_prefetch_thread is None else bool(use_prefetch_thread),
        bool(use_alternate_streams),
    )


def dgl_transfer(
    device: Any,
    *,
    use_prefetch_thread: bool | None = None,
    use_alternate_streams: bool | None = None,
    pin_prefetcher: bool | None = None,
    tensor_adaptor: bool = True,
) -> tuple[torch.device, tuple[bool, bool, bool], Transfer | None]:
    """``graphferry.dgl.DataLoader``'s arguments read: its device
    (:func:`cuda_device`), its settings as DGL keeps them
    (:func:`dgl_settings`) and their :class:`Transfer` (None for a device
    other than CUDA)."""
    device = torch.device("cpu" if device is None else device)
    gpu = device.type == "cuda"
    settings = dgl_settings(
        gpu,
        use_prefetch_thread=use_prefetch_thread,
        use_alternate_streams=use_alternate_streams,
        pin_prefetcher=pin_prefetcher,
        tensor_adaptor=tensor_adaptor,
    )
    if not gpu:
        return device, settings, None
    device = cuda_device(device)
    pin, _, side_stream = settings  # use_prefetch_thread: the same prefetch step (DeviceStage)
    allocator = _page_locked("pin_prefetcher") if pin else None
    return device, settings, Transfer(device=device, allocator=allocator, side_stream=side_stream)


def pin_transfer(pin_memory: Any, pin_memory_device: Any = "") -> Transfer | None:
    """torch's ``DataLoader(pin_memory=..., pin_memory_device=...)``: with
    ``pin_memory`` the batches come out page-locked, on the CPU, as torch's
    pinning makes them (the engine writes them there, the rest is pinned);
    without it, None (``pin_memory_device`` alone: torch's warning)."""
    if not isinstance(pin_memory, bool):
        raise TypeError(f"'pin_memory' must be a bool (got '{type(pin_memory).__name__}')")
    if not isinstance(pin_memory_device, str):
        raise TypeError(f"'pin_memory_device' must be a str (got '{type(pin_memory_device).__name__}')")
    if not pin_memory:
        if pin_memory_device:
            warnings.warn(
                "pin memory device is set and pin_memory flag is not used then device pinned memory "
                "won't be used, please set pin_memory flag to True",
                stacklevel=3,
            )
        return None
    if pin_memory_device and torch.device(pin_memory_device).type != "cuda":
        raise ValueError(f"pin_memory_device={pin_memory_device!r}: graphferry pins host memory for CUDA devices")
    return Transfer(device=None, allocator=_page_locked("pin_memory=True"))


def prefetch_transfer(device: Any) -> Transfer | None:
    """PyG's ``PrefetchLoader(loader, device)``: page-locked batches copied
    to a CUDA ``device`` on a side stream ahead of the training; None for the
    CPU (batches pass through). ``device`` None is CUDA when available, as
    in PyG; an unavailable CUDA device falls back to the CPU with PyG's
    warning."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        warnings.warn(f"Requested device '{device.type}' is not available, falling back to CPU", stacklevel=3)
        return None
    if device.type != "cuda":
        return None
    device = cuda_device(device)
    return Transfer(device=device, allocator=_page_locked("PrefetchLoader"), side_stream=True)


# ---------------------------------------------------------------------------
# A batch's parts: tensors in lists, tuples, dicts and PyG's stores; any other
# object (a DGL graph) whole.


def _leaves(obj: Any) -> Iterator[Any]:
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _leaves(x)
    elif isinstance(obj, Mapping):
        for x in obj.values():
            yield from _leaves(x)
    elif hasattr(obj, "stores") and not isinstance(obj, type):  # PyG's Data and HeteroData
        for store in obj.stores:
            yield from _leaves(store)
    elif obj is not None and not isinstance(obj, (int, float, str, bool)):
        yield obj


def to_device(obj: Any, device: torch.device, move: Callable[[Any, torch.device], Any] | None = None) -> Any:
    """``obj`` (a framework batch) on ``device``, every copy non-blocking:
    tensors, lists, tuples and dicts of them, and objects with ``.to`` (PyG's
    ``Data``, DGL's graphs) through ``move`` when given, else their ``.to``."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device, non_blocking=True)
    if isinstance(obj, list):
        return [to_device(x, device, move) for x in obj]
    if isinstance(obj, tuple):
        items = [to_device(x, device, move) for x in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, Mapping):
        return {k: to_device(v, device, move) for k, v in obj.items()}
    if move is not None:
        return move(obj, device)
    to = getattr(obj, "to", None)
    return to(device, non_blocking=True) if callable(to) else obj


def pin_batch(obj: Any) -> Any:
    """``obj`` with every tensor in page-locked memory: those the engine
    wrote already are (kept as they are), what the conversion derived from
    them is copied there; PyG's ``Data`` through its ``pin_memory``."""
    if isinstance(obj, torch.Tensor):
        return obj.pin_memory()
    if isinstance(obj, list):
        return [pin_batch(x) for x in obj]
    if isinstance(obj, tuple):
        items = [pin_batch(x) for x in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, Mapping):
        return {k: pin_batch(v) for k, v in obj.items()}
    pin = getattr(obj, "pin_memory", None)
    return pin() if callable(pin) else obj


def record_stream(obj: Any, stream: Any) -> None:
    """Records every device tensor of ``obj`` on ``stream`` (DGL graphs
    through their own ``record_stream``)."""
    for leaf in _leaves(obj):
        if isinstance(leaf, torch.Tensor):
            if leaf.is_cuda:
                leaf.record_stream(stream)
        elif callable(getattr(leaf, "record_stream", None)):
            leaf.record_stream(stream)


# ---------------------------------------------------------------------------
# The prefetch step


class _Staged:
    """A batch on its way: its device copy, the event after its copies, and
    the host batch they read."""

    __slots__ = ("batch", "event", "host")

    def __init__(self, batch: Any, event: Any, host: Any):
        self.batch, self.event, self.host = batch, event, host


class DeviceStage:
    """The prefetch step of one epoch: :meth:`next` hands batch k over once
    the copies of batch k+1 to the device are issued (non-blocking, from
    page-locked memory, on a side stream), so that they run while batch k
    trains. The training stream waits on an event recorded after the
    copies, never the host, and the device tensors are recorded on it
    (``record_stream``) so that PyTorch's allocator does not hand their
    memory to the side stream before the training is done with them. The
    host batch is dropped then: the engine's pool reuses its buffers only
    after a fence recorded on that stream later has passed
    (:meth:`~graphferry._hostmem.HostAllocator.step`). There is no prefetch
    thread: the engine's threads sample and gather ahead, and DGL's
    ``use_prefetch_thread`` means this step. ``move(batch, device)`` makes
    the device copy (default :func:`to_device`).

    An error of the source (or of a copy) is raised by the ``next()`` that
    would have returned that batch, and ends the epoch. An interrupt
    (Ctrl-C) leaves what was taken or staged for the next call.
    """

    def __init__(self, transfer: Transfer, move: Callable[[Any, torch.device], Any] = to_device):
        self.device = transfer.device
        self.move = move
        cuda = self.device.type == "cuda"
        self.stream = torch.cuda.Stream(device=self.device) if cuda and transfer.side_stream else None
        self._cuda = cuda
        self._ahead: deque[Any] = deque()  # staged batches, or the error / end that comes after them
        self._taken: Any = None  # a batch taken from the source, not yet staged
        self._done = False

    def next(self, take: Callable[[], Any]) -> Any:
        """Batch k (``take()`` gives the CPU batches in order), once the
        copies of batch k+1 are issued."""
        if self._done:
            raise StopIteration
        if not self._ahead:
            self._ahead.append(self._stage(take))
        if len(self._ahead) == 1 and isinstance(self._ahead[0], _Staged):
            self._ahead.append(self._stage(take))
        item = self._ahead.popleft()
        if isinstance(item, _Staged):
            return self._hand_over(item)
        self._done = True
        self._ahead.clear()
        raise item

    def _stage(self, take: Callable[[], Any]) -> Any:
        try:
            if self._taken is None:
                self._taken = take()
            with self._copying():
                moved = self.move(self._taken, self.device)
                event = torch.cuda.current_stream(self.device).record_event() if self._cuda else None
        except StopIteration:
            return StopIteration()
        except Exception as err:  # noqa: BLE001 - raised at its batch
            return err
        host, self._taken = self._taken, None
        return _Staged(moved, event, host)

    def _copying(self) -> contextlib.AbstractContextManager:
        stack = contextlib.ExitStack()
        if self._cuda:
            stack.enter_context(torch.cuda.device(self.device))
            if self.stream is not None:
                stack.enter_context(torch.cuda.stream(self.stream))
        return stack

    def _hand_over(self, staged: _Staged) -> Any:
        """The training stream waits for the copies and the device memory is
        recorded on it; the host batch goes."""
        if self._cuda:
            current = torch.cuda.current_stream(self.device)
            if self.stream is not None and self.stream != current:
                current.wait_event(staged.event)
                record_stream(staged.batch, current)
        return staged.batch

"""The GPU data path of the engine-backed loaders (CPU-sampled batches for a
GPU consumer), shared by :mod:`graphferry.dgl` and :mod:`graphferry.pyg`,
node and edge loaders alike:

* :class:`Transfer`: how a loader's batches reach their consumer, read from
  the framework's arguments by :func:`dgl_transfer` (DGL's ``device``,
  ``use_prefetch_thread``, ``use_alternate_streams``, ``pin_prefetcher``),
  :func:`pin_transfer` (PyG's and torch's ``pin_memory``) and
  :func:`prefetch_transfer` (PyG's ``PrefetchLoader``). A GPU consumer gets
  the engine's batches written into page-locked memory from PyTorch
  (:class:`~graphferry._hostmem.HostAllocator`); CPU training gets no
  :class:`Transfer` and nothing here runs for it.
* :class:`DeviceIterator`: the prefetch step. Batch k+1 is copied to the
  device (non-blocking copies from page-locked memory, on a side stream)
  while batch k trains; the training stream waits on an event recorded after
  the copies, never the host; the device tensors are recorded on the
  training stream (``record_stream``) so that PyTorch's allocator does not
  hand their memory to the side stream before the training is done with
  them; the host blocks are kept until the copy's event has passed (polled,
  not waited for), since the copies read them after the batch was handed
  over. With a prefetch thread, the engine's batch is also taken and
  converted into the framework's there.

The only CUDA calls are in :class:`_CudaSteps`; with a CPU device the same
iteration runs with :class:`_HostSteps` (no stream, nothing to wait for),
which is how the CPU tests exercise this module.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import torch

from ._hostmem import HostAllocator, cuda_ready, on_exit, shared_allocator

__all__ = [
    "Transfer",
    "DeviceIterator",
    "dgl_settings",
    "dgl_transfer",
    "pin_transfer",
    "prefetch_transfer",
    "cuda_device",
    "to_device",
    "pin_batch",
    "record_stream",
]

# How long a waiting next() sleeps between checks (the latency of Ctrl-C),
# as the engine loader's own wait (graphferry.sampling.NEXT_WAIT_MS).
_WAIT_S = 0.02


@dataclass(frozen=True)
class Transfer:
    """How a loader's batches reach their consumer.

    Attributes:
        device (torch.device, optional): where the batches go, through the
            prefetch step (:class:`DeviceIterator`); None: they stay on the
            CPU (``pin_memory`` alone).
        allocator (HostAllocator, optional): the memory the engine writes
            the batches into (page-locked for a GPU); None: the library's own.
        thread (bool): a prefetch thread takes, converts and copies the
            batches ahead of the training loop.
        side_stream (bool): the copies run on a stream of their own.
    """

    device: torch.device | None
    allocator: HostAllocator | None
    thread: bool = False
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
    the CPU (sampling on the CPU), for a CUDA device (``gpu``) or another
    one: ``(pin_prefetcher, use_prefetch_thread, use_alternate_streams)``.
    With a CUDA device the first two default to True and the third to
    whether DGL's TensorAdaptor is there (``tensor_adaptor``); asked for
    without it, it is turned off with DGL's warning. With another device,
    ``pin_prefetcher=True`` and ``use_prefetch_thread=True`` raise
    ValueError, as in DGL, and both are False; ``use_alternate_streams``
    is then kept as given (False by default), as DGL keeps it, though no
    stream is made for a device other than CUDA."""
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
    """``graphferry.dgl.DataLoader``'s arguments read: its device (a CUDA
    one without an index is the current one, as DGL resolves it; without
    CUDA it raises RuntimeError), its settings as DGL keeps them
    (:func:`dgl_settings`) and their :class:`Transfer`, None for a device
    other than CUDA: CPU training, nothing of the GPU path."""
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
    pin, thread, side_stream = settings
    allocator = _page_locked("pin_prefetcher") if pin else None
    return device, settings, Transfer(device=device, allocator=allocator, thread=thread, side_stream=side_stream)


def pin_transfer(pin_memory: Any, pin_memory_device: Any = "") -> Transfer | None:
    """torch's ``DataLoader(pin_memory=..., pin_memory_device=...)`` (PyG's
    loaders pass them on): with ``pin_memory`` the engine writes the batches
    into page-locked memory and the rest of each batch is pinned, so that
    the batches come out pinned, on the CPU, as torch's pinning makes them;
    without it, None (``pin_memory_device`` alone is ignored with torch's
    warning)."""
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
    to a CUDA ``device`` on a side stream by a prefetch thread; None for the
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
    return Transfer(device=device, allocator=_page_locked("PrefetchLoader"), thread=True, side_stream=True)


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
    """A batch on its way: its device copy, the event after the copies, the
    stream they ran on, and what keeps its host memory alive meanwhile."""

    __slots__ = ("batch", "event", "stream", "host")

    def __init__(self, batch: Any, event: Any, stream: Any, host: list[Any]):
        self.batch = batch
        self.event = event
        self.stream = stream
        self.host = host


class _Failed:
    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


_END = object()

# Host memory of copies handed over (or dropped) whose event had not passed:
# (event, what keeps the memory), released in order once each event passed.
_pending_lock = threading.Lock()
_pending: deque[tuple[Any, list[Any]]] = deque()


def _keep_until_copied(event: Any, host: list[Any]) -> None:
    if event is None:
        return
    with _pending_lock:
        _pending.append((event, host))


def _release_copied() -> None:
    """Drops the host memory of the copies that are done (never waits)."""
    done = []
    with _pending_lock:
        while _pending and _pending[0][0].query():
            done.append(_pending.popleft())
    del done  # the blocks go back outside the lock


def _release_all() -> None:
    """At exit: waits for the copies still reading host memory, then drops it."""
    with _pending_lock:
        items = list(_pending)
        _pending.clear()
    for event, _ in items:
        event.synchronize()


class _HostSteps:
    """The prefetch step's device calls for a CPU device: none."""

    def __init__(self, device: torch.device):
        self.device = device

    def copying(self) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def record(self) -> tuple[Any, Any]:
        return None, None

    def hand_over(self, staged: _Staged) -> Any:
        return staged.batch


class _CudaSteps:
    """The prefetch step's CUDA calls (the only ones of the GPU path)."""

    def __init__(self, device: torch.device, side_stream: bool):
        self.device = device
        self.stream = torch.cuda.Stream(device=device) if side_stream else None

    def copying(self) -> contextlib.AbstractContextManager:
        stack = contextlib.ExitStack()
        stack.enter_context(torch.cuda.device(self.device))
        if self.stream is not None:
            stack.enter_context(torch.cuda.stream(self.stream))
        return stack

    def record(self) -> tuple[Any, Any]:
        """An event after the copies issued so far on this thread's current
        stream (the side stream inside :meth:`copying`), and that stream."""
        stream = torch.cuda.current_stream(self.device)
        event = torch.cuda.Event()
        event.record(stream)
        return event, stream

    def hand_over(self, staged: _Staged) -> Any:
        """On the training thread: its stream waits for the copies (on the
        device, not the host), the device memory is recorded on it, and the
        host memory is kept until the copies are done."""
        current = torch.cuda.current_stream(self.device)
        if staged.stream != current:
            current.wait_event(staged.event)
            record_stream(staged.batch, current)
        _keep_until_copied(staged.event, staged.host)
        _release_copied()
        return staged.batch


class _State:
    """An epoch's prefetch step, shared by its :class:`DeviceIterator` and
    its prefetch thread (which does not reference the iterator, so that
    dropping the iterator stops the thread)."""

    def __init__(self, source: Iterator[Any], steps: Any, move: Callable, pin: Callable | None):
        self.source = source
        self.steps = steps
        self.move = move
        self.pin = pin
        self.cpu: Any = None  # a batch taken from the source, not yet staged
        self.ahead: deque[Any] = deque()  # staged (or _Failed / _END), inline mode
        self.finished = False
        self.error: BaseException | None = None  # what next() raises once stopped (None: StopIteration)
        self.stopping = threading.Event()
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=1)
        self.thread: threading.Thread | None = None

    # -- staging (the prefetch thread, or the training thread inline) ------------------

    def stage(self) -> _Staged:
        """Takes the next batch and issues its copies; StopIteration at the
        end. A batch taken but not yet staged (an interrupt came between) is
        staged first."""
        if self.cpu is None:
            self.cpu = next(self.source)
        batch = self.cpu
        if self.pin is not None:
            batch = self.cpu = self.pin(batch)
        host = [batch, *_leaves(batch)]  # PyG's Data.to replaces its tensors in place
        with self.steps.copying():
            moved = self.move(batch, self.steps.device)
            event, stream = self.steps.record()
        self.cpu = None
        return _Staged(moved, event, stream, host)

    def _stage_item(self) -> Any:
        try:
            return self.stage()
        except StopIteration:
            return _END
        except Exception as err:  # noqa: BLE001 - handed to the training thread
            return _Failed(err)

    def run(self) -> None:
        """The prefetch thread: stages one batch after another into the queue."""
        try:
            while not self.stopping.is_set():
                item = self._stage_item()
                while True:
                    if self.stopping.is_set():
                        _drop(item)
                        return
                    try:
                        self.queue.put(item, timeout=_WAIT_S)
                        break
                    except queue.Full:
                        continue
                if not isinstance(item, _Staged):
                    return
        finally:
            if self.stopping.is_set():
                self._drain()

    def start_thread(self) -> None:
        self.thread = threading.Thread(target=self.run, name="graphferry-prefetch", daemon=True)
        self.thread.start()
        _running.add(self)

    # -- handing over (the training thread) -----------------------------------------------

    def next(self) -> Any:
        if self.finished:
            if self.error is not None:
                raise self.error
            raise StopIteration
        item = self._next_threaded() if self.thread is not None else self._next_inline()
        if item is _END:
            self.finished = True
            _release_copied()  # the last batches' host memory, once their copies are done
            raise StopIteration
        if isinstance(item, _Failed):
            self.finished = True
            raise item.error
        return self.steps.hand_over(item)

    def _next_inline(self) -> Any:
        """Batch k, once the copies of batch k+1 are issued (so that they run
        while batch k trains). An interrupt leaves what was staged for the
        next call."""
        if not self.ahead:
            self.ahead.append(self._stage_item())
        if len(self.ahead) == 1 and isinstance(self.ahead[0], _Staged):
            self.ahead.append(self._stage_item())
        return self.ahead.popleft()

    def _next_threaded(self) -> Any:
        while True:
            try:
                return self.queue.get(timeout=_WAIT_S)
            except queue.Empty:
                thread = self.thread
                if thread is not None and not thread.is_alive() and self.queue.empty():
                    raise RuntimeError("graphferry: the prefetch thread of this epoch was stopped") from None

    # -- stopping ----------------------------------------------------------------------------

    def stop(self, error: BaseException | None = None) -> None:
        """Stops the prefetch thread (it exits within about a batch) and
        keeps the host memory of copies still in flight until they are done;
        an unfinished epoch's next() then raises ``error`` (None: it ends)."""
        self.stopping.set()
        if not self.finished:
            self.error = error
        self.finished = True
        self._drain()
        while self.ahead:
            _drop(self.ahead.popleft())

    def join(self, timeout: float | None = None) -> None:
        thread = self.thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def _drain(self) -> None:
        while True:
            try:
                _drop(self.queue.get_nowait())
            except queue.Empty:
                return


def _drop(item: Any) -> None:
    """A staged batch nobody will take: its device copy is dropped (it was
    used by no other stream), its host memory kept until the copy is done."""
    if isinstance(item, _Staged):
        _keep_until_copied(item.event, item.host)


# The states of running prefetch threads, stopped at exit before the loaders close.
_running: weakref.WeakSet[_State] = weakref.WeakSet()


def _stop_threads() -> None:
    for state in list(_running):
        state.stop()


def _join_threads() -> None:
    for state in list(_running):
        state.join(timeout=5.0)


on_exit(-1, _stop_threads)  # then the loaders close (which ends a thread's wait for a batch)
on_exit(1, _join_threads)
on_exit(2, _release_all)


class DeviceIterator(Iterator[Any]):
    """The batches of ``source`` (an epoch of CPU batches, the framework's)
    on ``transfer.device``, through the prefetch step (see the module's
    docstring): with ``transfer.thread`` a prefetch thread takes, converts
    and copies them ahead (one batch queued, one being staged, as DGL's
    prefetcher); without it, the training thread issues the copies of batch
    k+1 before handing batch k over.

    ``move(batch, device)`` makes the device copy (default
    :func:`to_device`); ``pin`` (default :func:`pin_batch` when
    ``transfer.pins``) makes the rest of a batch page-locked first.

    Ctrl-C while ``next()`` waits raises KeyboardInterrupt and leaves the
    epoch as it was (iterate again to resume); an error of the source (or
    of a copy) is raised by the ``next()`` that would have returned that
    batch, and ends the epoch. Dropping the iterator, or :meth:`close`,
    stops its thread.
    """

    def __init__(
        self,
        source: Iterator[Any],
        transfer: Transfer,
        *,
        move: Callable[[Any, torch.device], Any] = to_device,
        pin: Callable[[Any], Any] | None = None,
    ):
        device = transfer.device
        if device is None:
            raise ValueError("DeviceIterator needs a Transfer with a device")
        steps = _CudaSteps(device, transfer.side_stream) if device.type == "cuda" else _HostSteps(device)
        if pin is None and transfer.pins:
            pin = pin_batch
        self.transfer = transfer
        self.state = _State(source, steps, move, pin)
        if transfer.thread:
            self.state.start_thread()
        self._finalizer = weakref.finalize(self, _State.stop, self.state)

    @property
    def stream(self) -> Any:
        """The side stream the copies run on (None: the copying thread's
        current stream)."""
        return getattr(self.state.steps, "stream", None)

    def __iter__(self) -> DeviceIterator:
        return self

    def __next__(self) -> Any:
        return self.state.next()

    def close(self) -> None:
        """Stops the epoch's prefetching and waits for its thread."""
        self._finalizer()
        self.state.join()

"""What the engine-backed loaders of :mod:`graphferry.dgl` and
:mod:`graphferry.pyg` share: the torch arguments every loader takes
(``num_workers``, ``timeout``, ...), the seed of a loader and of its one-off
batches, the node and edge data handed to the engine, and
:class:`EngineLoader`, the one iteration path: it opens, iterates and closes
the engine's loaders and turns each batch into the framework's, handed over
as a :class:`~graphferry._transfer.Transfer` says (CPU training: none).
"""

from __future__ import annotations

import datetime
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from ._hostmem import HostAllocator
from ._options import SampleOptions
from ._resource import Closeable
from ._stats import LoaderStats
from ._transfer import DeviceStage, Transfer, pin_batch, to_device
from .distributed import DistributedLoader, PartGraph
from .errors import GF_ESTATE, GraphferryError
from .graph import Graph, _tensor_signature
from .sampling import Loader, SampledSubgraph, _closed_error, random_seed, state_kind

__all__ = [
    "EngineLoader",
    "worker_threads",
    "torch_loader_kwargs",
    "TORCH_WORKER_ARGS",
    "check_worker_init_fn",
    "loader_seed",
    "call_key",
    "comm_timeout",
    "release_idle_loaders",
    "sync_edge_data",
    "engine_edge_data",
]


def worker_threads(num_workers: Any, num_threads: Any = 0) -> Any:
    """The engine's sampling threads given torch's ``num_workers``: no
    process is forked, ``num_workers > 0`` sets the threads (as
    ``num_threads`` does; ``0`` leaves ``num_threads``, whose ``<= 0`` means
    every core). Both given and different is an error."""
    if not isinstance(num_workers, (int, np.integer)) or isinstance(num_workers, bool):
        raise TypeError(f"'num_workers' must be an int (got '{type(num_workers).__name__}')")
    if num_workers < 0:
        # torch's DataLoader refuses it with the same exception.
        raise ValueError(f"num_workers option should be non-negative (got {num_workers})")
    if num_workers == 0:
        return num_threads
    if isinstance(num_threads, (int, np.integer)) and not isinstance(num_threads, bool) and num_threads > 0:
        if num_threads != num_workers:
            raise ValueError(
                f"num_workers={num_workers} and num_threads={num_threads} both set the engine's sampling "
                "threads: give one of them"
            )
    return int(num_workers)


# torch DataLoader arguments that only tune torch's worker processes and
# pinning thread, which graphferry does not have: accepted and ignored
# (worker_init_fn only as None; timeout and pin_memory the loaders read).
TORCH_WORKER_ARGS = frozenset(
    {
        "persistent_workers",
        "prefetch_factor",  # batches per worker: see queue_capacity
        "timeout",
        "worker_init_fn",
        "multiprocessing_context",
        "pin_memory",
        "pin_memory_device",
        "in_order",  # our batches always arrive in order
    }
)


def check_worker_init_fn(kwargs: dict, owner: str) -> None:
    """Refuses a ``worker_init_fn`` by name rather than never calling it:
    there is no worker process to call it in (calling it in the training
    process would re-seed or reconfigure that process instead)."""
    if kwargs.get("worker_init_fn") is not None:
        raise ValueError(
            f"{owner} got worker_init_fn: graphferry starts no worker processes (its engine samples on its own "
            "threads, which run no Python), so it would never be called; remove it (the loader's seed= or "
            "torch.manual_seed makes the batches reproducible)"
        )


def torch_loader_kwargs(
    kwargs: dict,
    owner: str,
    ignored: Sequence[str] = ("dataset", "collate_fn"),
    refused: Sequence[str] = ("sampler", "batch_sampler"),
    why: str = "it batches the seeds itself",
) -> Any:
    """Checks the torch ``DataLoader`` keywords a loader passes on and
    returns ``generator`` (or None): worker settings are ignored, as are
    ``ignored`` (PyG's loaders drop ``dataset`` and ``collate_fn``), and
    ``refused`` (which would replace the seeds' batching) raise saying
    ``why`` unless None."""
    generator = kwargs.pop("generator", None)
    check_worker_init_fn(kwargs, owner)
    for name, value in kwargs.items():
        if name in refused:
            if value is not None:  # None: torch's default, as an unchanged script passes it
                raise ValueError(f"{owner} does not take '{name}': {why}")
        elif name not in TORCH_WORKER_ARGS and name not in ignored:
            raise TypeError(f"{owner} got an unexpected keyword argument '{name}'")
    return generator


def loader_seed(seed: Any, *, shared: Any = None, generator: torch.Generator | None = None) -> Any:
    """The seed a loader shuffles and samples with: ``seed`` when given;
    else ``shared``, the same on every rank (DGL's ``ddp_seed``); else one
    drawn from ``generator`` (torch's ``DataLoader(generator=...)``), by
    default torch's, so that ``torch.manual_seed`` makes it reproducible."""
    if seed is not None:
        return seed
    if shared is not None:
        return shared
    if generator is not None:
        return int(torch.randint(0, 2**63 - 1, (), generator=generator))
    return random_seed()


def batch_timeout(timeout: Any) -> float:
    """torch's ``timeout`` (seconds, or a ``datetime.timedelta``): the bound
    on the wait for each batch, in seconds (0: none)."""
    seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"'timeout' must be a number of seconds (got '{type(timeout).__name__}')")
    if seconds < 0:
        raise ValueError("timeout option should be non-negative")  # torch's words
    return float(seconds)


def comm_timeout(comm: Any, timeout: Any) -> Any:
    """torch's ``timeout`` with ``comm``: the loaders' bound on an exchange
    (None, the communicator's own, for torch's default 0)."""
    if comm is None or (not isinstance(timeout, datetime.timedelta) and timeout == 0):
        return None
    return timeout  # checked by DistributedLoader


def call_key(n: int) -> int:
    """The batch key of a loader's ``n``-th one-off call (``loader(index)``,
    a sampler's ``sample_from_nodes``; ``n`` from 1): its own random
    streams, the first as ``graphferry.sample_neighbors`` with the same seed."""
    return n - 1


# Held while an EngineLoader picks the engine loader of a new epoch.
_STARTING = threading.RLock()


class _Epoch:
    """One epoch of an :class:`EngineLoader`: the engine's batches,
    converted, pinned when the transfer pins, copied to its device ahead by
    :class:`DeviceStage`; the owner's position counts the batches the
    consumer received (not those copied ahead)."""

    def __init__(self, owner: EngineLoader, batches: Any, number: int, first: int, transfer: Transfer | None = None):
        self._owner = owner
        self._batches = batches
        self._pin = transfer is not None and transfer.pins
        self._stage = None
        if transfer is not None and transfer.device is not None:
            self._stage = DeviceStage(transfer, owner._move)
        self._position = _Position(owner, number, first)
        self._turn = threading.Lock()  # threads sharing the iterator take a batch each

    def __iter__(self) -> _Epoch:
        return self

    def _take(self) -> Any:
        batch = self._owner._convert(next(self._batches))
        return pin_batch(batch) if self._pin else batch

    def __next__(self) -> Any:
        with self._turn:
            try:
                batch = self._take() if self._stage is None else self._stage.next(self._take)
            except StopIteration:
                self._position.record(True)
                raise
            self._position.record(False)
        return batch


class _Position:
    """An epoch's number and batches received, recorded in the owner while
    that epoch is its latest."""

    def __init__(self, owner: EngineLoader, number: int, first: int):
        self._owner = owner
        self._number = number
        self._yielded = first
        self._token = object()
        owner._position = (number, first, False, self._token)

    def record(self, done: bool) -> None:
        """One more batch reached the consumer (done: the epoch ended)."""
        if not done:
            self._yielded += 1
        pos = self._owner._position
        if pos is not None and pos[3] is self._token:  # the owner's latest epoch
            self._owner._position = (self._number, self._yielded, done, self._token)


class EngineLoader(Closeable):
    """Base of the DGL and PyG loaders: a pool of engine :class:`Loader` over
    one graph, seeds and options, one per epoch being iterated.

    Subclasses call :meth:`_open_engine` once and implement :meth:`_convert`
    (a :class:`SampledSubgraph` to the framework's batch); they may override
    :meth:`_before_epoch`.
    """

    _loaders: list[Loader]

    def _open_engine(
        self,
        graph: Graph,
        seeds: Any,
        options: SampleOptions,
        *,
        comm: Any = None,
        comm_timeout: Any = None,
        timeout: Any = 0,
        opener: Callable[..., Loader] | None = None,
        eager: bool = True,
        transfer: Transfer | None = None,
        **loader_args: Any,
    ) -> None:
        """Keeps what the engine loaders are opened with and opens the first
        (with ``eager``; else on first use, so that errors in the seeds
        surface when the loader is iterated). ``opener(allocator=)``, when
        given, opens each engine loader; else :meth:`Loader.from_options`
        does, given ``loader_args`` (batching, node data, ``seed_times``,
        ``device`` for mode 2, ``coo``). ``transfer``: how batches reach a
        GPU consumer."""
        if comm is None and opener is None and isinstance(graph, PartGraph):
            raise ValueError(
                f"{graph!r} is one rank's part of a partition: its loaders sample with the other ranks, give comm="
            )
        self._transfer = transfer
        self._graph = graph
        self._opener = opener
        self._comm = comm  # a graphferry.distributed.Communicator: one rank's share per epoch
        self._comm_timeout = comm_timeout  # its loaders' bound on an exchange (None: the comm's)
        # torch's timeout: the bound on the wait for each batch (with comm,
        # the bound on each exchange, comm_timeout, says more: the rank)
        self._wait_timeout = batch_timeout(timeout) if comm is None else 0.0
        self._seeds = seeds
        self._options = options
        self._loader_args = loader_args
        self._loaders = []
        # id(loader) -> the iterator of its epoch
        self._epochs: dict[int, weakref.ref] = {}
        self._next_epoch = 0
        # The latest epoch's (number, batches yielded, ended, token) and a
        # position to resume from on the next iter() (load_state_dict).
        self._position: tuple[int, int, bool, object] | None = None
        self._resume: tuple[int, int] | None = None
        # The caller's order of the latest epoch, and one to resume with
        self._order: torch.Tensor | None = None
        self._resume_order: torch.Tensor | None = None
        self._closed = False
        if eager:  # errors in the options surface here
            self._loaders.append(self._new_loader(self._allocator()))
        _register(graph, self)

    def _new_loader(self, allocator: HostAllocator | None = None) -> Loader:
        if getattr(self, "_opener", None) is not None:
            loader = self._opener(allocator=allocator)
        elif getattr(self, "_comm", None) is not None:
            loader = DistributedLoader.from_options(
                self._graph,
                self._seeds,
                self._options,
                comm=self._comm,
                timeout=getattr(self, "_comm_timeout", None),
                allocator=allocator,
                **self._loader_args,
            )
        else:
            loader = Loader.from_options(
                self._graph, self._seeds, self._options, allocator=allocator, **self._loader_args
            )
        loader.wait_timeout = getattr(self, "_wait_timeout", 0.0)
        cache = getattr(self, "_cache_args", None)
        if cache is not None:
            try:
                loader.set_cache(**cache)
            except BaseException:
                loader.close()
                raise
        return loader

    def set_cache(self, size: int | float | str, **kwargs: Any) -> int:
        """A hot tier for the feature rows (:meth:`graphferry.Loader.set_cache`:
        same arguments), on every engine loader this loader opens. Call between
        epochs. Returns the number of hot rows."""
        self._check_open()
        rows = 0
        for loader in self._loaders:
            if not loader.closed:
                rows = loader.set_cache(size, **kwargs)
        self._cache_args = dict(size=size, **kwargs)
        return rows

    def _idle_loader(self, allocator: HostAllocator | None = None) -> Loader:
        """An engine loader with no epoch that anyone still iterates, whose
        batches come from ``allocator`` (None: the library's memory); opens
        one if every loader is busy (an idle one of the other memory is
        reopened)."""
        for i, loader in enumerate(self._loaders):
            if loader.closed:
                if self._graph.closed:
                    loader._check_open()  # raises: the graph was closed
                loader = self._loaders[i] = self._new_loader(allocator)  # released by release_idle
                return loader
            ref = self._epochs.get(id(loader))
            if not loader.in_epoch or ref is None or ref() is None:
                if loader.allocator is not allocator:
                    self._epochs.pop(id(loader), None)
                    loader.close()
                    loader = self._loaders[i] = self._new_loader(allocator)
                return loader
        loader = self._new_loader(allocator)
        self._loaders.append(loader)
        return loader

    def release_idle(self) -> None:
        """Closes the engine loaders no epoch is using (they reopen when
        needed), so that the graph's node data can be replaced."""
        for loader in self._loaders:
            ref = self._epochs.get(id(loader))
            if not loader.in_epoch or ref is None or ref() is None:
                self._epochs.pop(id(loader), None)
                loader.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"this {type(self).__name__} was closed")
        if self._graph.closed:
            if self._loaders:
                self._loaders[0]._check_open()  # raises: the graph was closed
            raise _closed_error(
                "graphferry.Loader: the graph was closed (closing a graphferry.Graph closes its loaders)"
            )

    def _before_epoch(self) -> None:
        """Called by ``iter()`` before an epoch starts."""

    def _epoch_order(self) -> torch.Tensor | None:
        """A new epoch's order of the seeds when the caller shuffles them (a
        permutation of their positions, kept in :meth:`state_dict`); None: the engine's."""
        return None

    def _convert(self, sub: SampledSubgraph) -> Any:  # pragma: no cover - always overridden
        raise NotImplementedError

    def _move(self, batch: Any, device: Any) -> Any:
        """The device copy of a converted batch (the prefetch step's; the
        copies are non-blocking)."""
        return to_device(batch, device)

    def __len__(self) -> int:
        self._check_open()
        loader = next((lo for lo in self._loaders if not lo.closed), None)
        if loader is None:
            loader = self._idle_loader(self._allocator())
        return len(loader)

    def _allocator(self) -> HostAllocator | None:
        """The memory of this loader's own epochs (``iter(loader)``)."""
        transfer = getattr(self, "_transfer", None)
        return transfer.allocator if transfer is not None else None

    def __iter__(self) -> Any:
        return self._iterate(getattr(self, "_transfer", None))

    def _iterate(self, transfer: Transfer | None) -> Any:
        """An epoch whose batches reach their consumer as ``transfer`` says:
        on its device, copied one batch ahead, or on the CPU (pinned when it
        pins; as they are without a transfer)."""
        self._check_open()
        with _STARTING:  # two threads starting epochs get an engine loader each
            self._before_epoch()
            loader = self._idle_loader(transfer.allocator if transfer is not None else None)
            self._last_loader = loader
            epoch, first = self._resume or (self._next_epoch, 0)
            order = self._resume_order if self._resume else self._epoch_order()
            batches = loader.epoch(epoch, first_batch=first, order=order)
            self._order, self._resume_order = order, None
            self._next_epoch = epoch + 1
            self._resume = None
            it = _Epoch(self, batches, epoch, first, transfer)
            self._epochs[id(loader)] = weakref.ref(it)
            return it

    def state_dict(self) -> dict[str, Any]:
        """Where the loader stands (:meth:`graphferry.Loader.state_dict`, the
        protocol of torchdata's ``StatefulDataLoader``): the epoch being
        iterated and how many batches it yielded, or the next epoch."""
        self._check_open()
        loader = getattr(self, "_last_loader", None)
        if loader is None or loader.closed:
            loader = self._idle_loader(self._allocator())
        state = loader.state_dict()
        state["kind"] = self.state_kind
        state["next_epoch"] = self._next_epoch
        state["epoch"], state["batches_yielded"] = None, 0
        pos = self._resume or (self._position[:2] if self._position and not self._position[2] else None)
        if pos is not None:
            state["epoch"], state["batches_yielded"] = pos
            order = self._resume_order if self._resume else self._order
            if order is not None:  # the caller's order of that epoch: the rest is batched from it
                state["order"] = order.tolist()
        return state

    @property
    def state_kind(self) -> str:
        """What a state of this loader says it belongs to: its class."""
        return state_kind(self)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restores a :meth:`state_dict` (:meth:`graphferry.Loader.load_state_dict`):
        the next ``iter()`` yields exactly the batches of the interrupted epoch
        that had not been yielded, bit for bit, without sampling the earlier
        ones; later epochs follow as they would have. The loader must be
        opened with the same graph, seeds, batching and sampler (seed
        included) and, distributed, the same rank and number of ranks."""
        self._check_open()
        loader = self._idle_loader(self._allocator())
        loader.load_state_dict(state, kind=self.state_kind)  # checks it against this loader's settings
        epoch, first = loader._resume or (None, 0)
        loader._resume = None
        self._resume = None if epoch is None else (epoch, first)
        order = state.get("order") if epoch is not None else None
        self._resume_order = None if order is None else torch.as_tensor(order, dtype=torch.int64)
        self._position = None
        self._next_epoch = loader._next_epoch

    def stats(self) -> LoaderStats:
        """The statistics (:meth:`graphferry.Loader.stats`) of the engine
        loader that runs the latest epoch: ``current`` is that epoch,
        ``total`` every epoch that engine loader ran (an epoch started while
        another is still being iterated runs on an engine loader of its
        own)."""
        loader = getattr(self, "_last_loader", None)
        if loader is None:
            self._check_open()
            loader = self._loaders[0] if self._loaders else self._idle_loader(self._allocator())
        return loader.stats()

    def close(self) -> None:
        """Stops the engine's threads of this loader. Idempotent. An epoch
        being iterated then raises on its next batch."""
        self._closed = True
        for loader in getattr(self, "_loaders", ()):
            loader.close()


# Graph -> the EngineLoaders open on it, so that one of them can release the
# others' idle engine loaders before it replaces node data.
_by_graph: weakref.WeakKeyDictionary[Graph, weakref.WeakSet] = weakref.WeakKeyDictionary()


def _register(graph: Graph, loader: EngineLoader) -> None:
    _by_graph.setdefault(graph, weakref.WeakSet()).add(loader)


def release_idle_loaders(graph: Graph) -> None:
    """Closes every idle engine loader of every :class:`EngineLoader` on
    ``graph``: the engine refuses to replace node data while loaders are open."""
    for loader in list(_by_graph.get(graph, ())):
        if not loader._closed:
            loader.release_idle()


def sync_edge_data(graph: Graph, tensors: Any) -> list[str]:
    """Puts each tensor of ``tensors`` (name -> one row per edge id: a
    DGLGraph's ``edata``, a PyG ``Data``'s edge attributes) into the engine
    graph as edge data, unless the engine already holds that very tensor
    (same signature), and returns the names the engine holds for them now,
    for an edge loader to gather on its threads. The engine refuses to
    replace edge data while loaders are open on the graph, so idle engine
    loaders are closed first; a name a loader is still reading mid-epoch, or
    of a dtype the engine does not carry, is left out (the caller serves it
    its own way)."""
    return _sync(graph, tensors, graph.set_edge_data, "_edge_sources")


def sync_node_data(graph: Graph, tensors: Any) -> list[str]:
    """:func:`sync_edge_data` for node data (engine names -> tensors: a
    heterograph's or a ``HeteroData``'s per-type data, ``"<ntype>/<name>"``)."""
    return _sync(graph, tensors, graph.set_node_data, "_node_sources")


def _sync(graph: Graph, tensors: Any, put: Callable[[str, Any], None], attr: str) -> list[str]:
    sources = getattr(graph, attr, None)
    if sources is None:
        sources = {}
        setattr(graph, attr, sources)
    held = []
    for name, value in tensors.items():
        if not isinstance(value, torch.Tensor):
            continue
        signature = _tensor_signature(value)
        if sources.get(name) != signature:
            release_idle_loaders(graph)
            try:
                put(name, value)
            except TypeError:  # a dtype the engine does not carry
                continue
            except GraphferryError as err:
                if err.code == GF_ESTATE:  # read by a loader mid-epoch
                    continue
                raise
            sources[name] = signature
        held.append(name)
    return held


def engine_edge_data(graph: Graph, name: str, value: Any) -> bool:
    """Whether the engine's edge data ``name`` is ``value`` as it is now
    (not replaced or changed in place since :func:`sync_edge_data`)."""
    return isinstance(value, torch.Tensor) and getattr(graph, "_edge_sources", {}).get(name) == _tensor_signature(value)


def engine_node_data(graph: Graph, name: str, value: Any) -> bool:
    """:func:`engine_edge_data` for node data (:func:`sync_node_data`)."""
    return isinstance(value, torch.Tensor) and getattr(graph, "_node_sources", {}).get(name) == _tensor_signature(value)

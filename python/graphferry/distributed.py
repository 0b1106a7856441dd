"""Sampling across processes: one rank per process, over ``torch.distributed``.

Each process (launched by ``torchrun`` or ``torch.multiprocessing`` with the
"spawn" start method: the engine must never run in a forked child) opens the
same graph with one patch per rank and a :class:`DistributedLoader` with a
:class:`TorchComm`. Rank ``r`` owns patch ``r`` for sampling: the collective
sampling primitive's shuffle and reshuffle cross the processes through the
communicator, which the engine drives through the C API's ``gf_comm``
callbacks.

With :meth:`Graph.open` every process holds the whole topology and node
data (replicated); the patches decide which rank samples which node. With a
:class:`PartGraph` (:meth:`PartGraph.open`), each process opens only its own
folder of a partition written by ``python -m graphferry partition`` and holds
only what its layout gives it (see :class:`PartGraph`).

The batches of an epoch are exactly those of a single-process
:class:`~graphferry.Loader` with the same seeds and options (bit-identical),
dealt out round-robin: rank ``r`` gets batches ``r, r + size, ...``. Every
rank gets ``ceil(batches / size)`` of them: the ranks short of one in the
last round are PADDED with a copy of one of the epoch's first batches (as
``torch.utils.data.DistributedSampler`` pads), so that DDP's gradient
all-reduce never waits for a rank that ran out. Every rank must read every
epoch to its end.

A rank that dies or stops exchanging does not hang the others: every
exchange is bounded by the loader's time-out (``DistributedLoader(timeout=)``,
``graphferry.dgl.DataLoader(..., comm=comm, timeout=)``, by default the
``TorchComm``'s, 60 s), after which every other rank's ``next()`` raises,
naming the rank that did not answer and the time-out (a rank that died is
named as soon as its connection breaks; with its own error when it reported
one: an uncaught exception, one leaving ``with loader:``, or
:func:`report_failure`). ``close()`` from another thread and
Ctrl-C interrupt a ``next()`` waiting on the other ranks, as for any
:class:`~graphferry.Loader`; a closed loader's exchange in progress gives up,
and the communicator can no longer be used (the ranks are out of step).

Each loader samples with one worker thread, unless its communicator carries
the control messages of the engine's coordinator
(``TorchComm(coordinated=True)``): then with ``min(num_threads, 4)``
workers, whose exchanges the coordinator starts in one order on every rank;
the batches are the same.

.. code-block:: python

    dist.init_process_group("gloo")
    comm = graphferry.distributed.TorchComm()
    g = graphferry.Graph.open(path, num_patches=comm.size)
    loader = graphferry.distributed.DistributedLoader(g, train_idx, [10, 5], comm=comm, batch_size=512, seed=0)

    # or, each rank with its own folder of DST (python -m graphferry partition SRC DST --parts N):
    part = graphferry.distributed.PartGraph.open(DST, rank=comm.rank)
    train_idx = graphferry.distributed.global_seeds(part, comm, "train_mask")
    loader = graphferry.distributed.DistributedLoader(part, train_idx, [10, 5], comm=comm, batch_size=512, seed=0)
"""

from __future__ import annotations

import atexit
import ctypes
import datetime
import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as dist

from ._link import EdgeLoader
from ._metafile import read_object
from ._native import lib as _lib
from ._native.dlpack import BorrowedTensor, _capsule, tensor_from_managed
from .graph import _CONSTRUCTOR_TOKEN, Graph, _encode_name
from .hetero import HeteroGraph
from .partition import LAYOUTS
from .sampling import Loader, random_seed

__all__ = [
    "Communicator",
    "TorchComm",
    "CommCancelled",
    "DistributedLoader",
    "DistributedEdgeLoader",
    "PartGraph",
    "global_seeds",
    "report_failure",
]

# gf_part_info.layout -> its name
_LAYOUTS = {number: name for name, number in LAYOUTS.items()}


def _seconds(timeout: Any, what: str) -> float:
    """A time-out given as a ``datetime.timedelta`` or seconds, > 0."""
    value = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        raise ValueError(f"'{what}' must be a positive number of seconds or a datetime.timedelta (got {timeout!r})")
    return float(value)


class CommCancelled(RuntimeError):
    """An exchange abandoned because its loader was closed."""


# How often a waiting exchange looks at whether its loader was closed (s).
_POLL_S = 0.02
# How long a TorchComm waits at its end for Gloo's workers to let go of its
# exchanges' tensors (TorchComm._settle; they take microseconds once they
# hold the GIL, which the wait releases).
_SETTLE_S = 2.0


class _Session:
    """One loader's use of a :class:`Communicator`: its time-out, whether the
    loader was closed (its exchanges then give up), and the callbacks the
    engine is running for it."""

    def __init__(self, key: int, timeout: float):
        self.key = key
        self.timeout = timeout
        self.cancelled = threading.Event()
        self._cond = threading.Condition()
        self._running = 0

    def enter(self) -> None:
        with self._cond:
            self._running += 1

    def leave(self) -> None:
        with self._cond:
            self._running -= 1
            self._cond.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Waits until no callback of the session runs (at most timeout s)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._running == 0, timeout)


class Communicator:
    """A communicator for the engine: rank, size, and the two exchanges of
    every collective, in the same order on every rank. Subclass it to plug
    in another transport (MPI, ...); :class:`TorchComm` is the one over
    ``torch.distributed``.

    The engine calls the exchanges from its own thread (one at a time per
    loader); an exception is reported to the engine, which then fails every
    later exchange of the loader and raises on the consumer's side with the
    message. An exchange must not block forever: ``timeout`` (a
    ``datetime.timedelta`` or seconds; a loader may give its own) bounds
    it. The engine stops waiting for an exchange that has not returned
    within it (the loader then fails naming the peer it waited for, with
    two ranks), and when the loader is closed; an implementation that
    bounds its own waits (as :class:`TorchComm` does, naming the ranks that
    did not answer) sets ``bounds_waits`` and checks :meth:`cancelled`
    while it waits, so that closing a loader does not leave it running.
    """

    #: Whether the exchanges bound their own waits by :meth:`exchange_timeout`
    #: and give up when :meth:`cancelled` (the engine then adds no time-out).
    bounds_waits = False

    #: Whether :meth:`send` and :meth:`recv` carry the control messages of
    #: the engine's coordinator, which orders the exchanges of several
    #: sampler workers per rank (DSP's CCC): a loader then samples with
    #: ``min(num_threads, 4)`` workers (every core when ``num_threads <=
    #: 0``); without, with one.
    coordinated = False

    def __init__(self, rank: int, size: int, *, timeout: datetime.timedelta | float = 60.0):
        if not (isinstance(size, int) and size >= 1 and isinstance(rank, int) and 0 <= rank < size):
            raise ValueError(f"rank = {rank!r} and size = {size!r}: want 0 <= rank < size")
        self.rank, self.size, self.timeout = rank, size, _seconds(timeout, "timeout")
        self._error = ctypes.create_string_buffer(b"")
        self._lock = threading.Lock()
        self._sessions: dict[int, _Session] = {}
        self._next_key = 1
        self._local = threading.local()  # the session of the callback this thread runs
        # The callbacks must live as long as the tables do.
        self._callbacks = (
            _lib.gf_exchange_sizes_fn(self._c_exchange_sizes),
            _lib.gf_all_to_all_dl_fn(self._c_all_to_all),
            _lib.gf_errmsg_fn(self._c_errmsg),
            _lib.gf_send_fn(self._c_send),
            _lib.gf_recv_fn(self._c_recv),
        )

    # Subclasses implement these two.
    def exchange_sizes(self, send: torch.Tensor) -> torch.Tensor:
        """All-to-all of one int64 per rank: ``send[j]`` to rank ``j``;
        returns ``recv`` with ``recv[j]`` from rank ``j``."""
        raise NotImplementedError

    def all_to_all(self, send: torch.Tensor, send_splits: list[int], recv_splits: list[int]) -> torch.Tensor:
        """All-to-all of bytes: ``send`` (uint8) holds the messages to ranks
        0, 1, ... back to back, ``send_splits`` their lengths; returns the
        messages from every rank back to back (``recv_splits`` long)."""
        raise NotImplementedError

    def all_to_all_into(self, send: Any, send_splits: list[int], recv_splits: list[int], out: Any) -> None:
        """:meth:`all_to_all` into ``out`` (uint8, ``sum(recv_splits)``
        bytes), the form the engine calls: ``send`` and ``out`` are the
        engine's own memory (no copy). This default copies what
        :meth:`all_to_all` returns into ``out``; a subclass whose transport
        can receive in place overrides it (:class:`TorchComm` does)."""
        got = self.all_to_all(send, send_splits, recv_splits)
        if got.dtype != torch.uint8 or got.numel() != out.numel():
            raise RuntimeError(f"all_to_all returned {got.numel()} bytes of {got.dtype}, want {out.numel()} uint8")
        out.copy_(got.reshape(-1))

    def send(self, to: int, msg: bytes) -> None:
        """Delivers a control message (at most 4110 bytes) to rank ``to``,
        after every earlier one to that rank (with :attr:`coordinated`). It
        must not wait behind :meth:`all_to_all` (another channel), and must
        fail within bounded time when the peer is gone."""
        raise NotImplementedError

    def recv(self, peer: int) -> bytes:
        """The next control message from rank ``peer`` (with
        :attr:`coordinated`), waiting however long it takes; called from
        one thread per peer at once, and should give up (raise) once
        :meth:`cancelled`. Messages are per loader: :meth:`session_key`
        names the loader the calling thread runs for, the same on every
        rank."""
        raise NotImplementedError

    def session_key(self) -> int:
        """The loader the calling thread's callback runs for: loaders are
        numbered in the order they are opened on this communicator (which
        every rank follows), 0 outside the engine's callbacks."""
        session = getattr(self._local, "session", None)
        return 0 if session is None else session.key

    def exchange_timeout(self) -> float:
        """The bound (s) on the exchange the calling thread runs: its
        loader's time-out inside the engine's callbacks, :attr:`timeout`
        otherwise."""
        session = getattr(self._local, "session", None)
        return self.timeout if session is None else session.timeout

    def cancelled(self) -> bool:
        """Whether the loader the calling thread exchanges for was closed:
        an exchange still waiting should then give up (raise)."""
        session = getattr(self._local, "session", None)
        return session is not None and session.cancelled.is_set()

    # Loaders' sessions.
    def _table(self, session: _Session) -> Any:
        """The gf_comm the engine calls, for one loader's session."""
        timeout_ms = 0 if self.bounds_waits else max(1, round(session.timeout * 1000))  # the engine bounds the rest
        return _lib.gf_comm(
            struct_size=ctypes.sizeof(_lib.gf_comm),
            rank=self.rank,
            size=self.size,
            user=session.key,
            exchange_sizes=self._callbacks[0],
            all_to_all_dl=self._callbacks[1],
            errmsg=self._callbacks[2],
            send=self._callbacks[3] if self.coordinated else _lib.gf_send_fn(),
            recv=self._callbacks[4] if self.coordinated else _lib.gf_recv_fn(),
            timeout_ms=timeout_ms,
        )

    def _open_session(self, timeout: float | None) -> _Session:
        with self._lock:
            session = _Session(self._next_key, self.timeout if timeout is None else timeout)
            self._next_key += 1
            self._sessions[session.key] = session
        return session

    def _close_session(self, session: _Session) -> None:
        """After its loader was closed: waits (briefly) for the session's
        callbacks that the engine left running to return, so that none
        runs Python code on an engine thread later (at interpreter exit)."""
        session.cancelled.set()
        # An exchange that gives up when cancelled returns within a poll; one
        # that cannot (TorchComm's p2p waits) by its time-out.
        if not session.wait_idle(session.timeout + 1.0 if self.bounds_waits else 1.0):
            warnings.warn(
                f"graphferry: an exchange of {type(self).__name__} still runs after its loader was closed "
                "(it does not give up when cancelled()); it is left to return on its own",
                stacklevel=3,
            )
        with self._lock:
            self._sessions.pop(session.key, None)

    # The C side.
    def _fail(self, exc: BaseException) -> int:
        msg = f"rank {self.rank} of {self.size}: {type(exc).__name__}: {exc}"
        self._error = ctypes.create_string_buffer(msg.encode("utf-8", errors="replace"))
        return 1

    def _run(self, user: Any, exchange: Any) -> int:
        """Runs one of the engine's callbacks for the session ``user``."""
        with self._lock:
            session = self._sessions.get(user) if user else None
        if session is not None:
            session.enter()
        self._local.session = session
        try:
            if session is not None and session.cancelled.is_set():
                raise CommCancelled("the loader was closed")
            exchange()
            return 0
        except BaseException as exc:  # noqa: BLE001 - reported to the engine
            return self._fail(exc)
        finally:
            self._local.session = None
            if session is not None:
                session.leave()

    def _c_exchange_sizes(self, user: Any, send: Any, recv: Any) -> int:
        def exchange() -> None:
            n = self.size
            out = self.exchange_sizes(torch.tensor(send[:n], dtype=torch.int64))
            if out.shape != (n,):
                raise RuntimeError(f"exchange_sizes returned shape {tuple(out.shape)}, want ({n},)")
            for j, v in enumerate(out.tolist()):
                recv[j] = v

        return self._run(user, exchange)

    def _c_all_to_all(self, user: Any, send: Any, send_sizes: Any, recv: Any, recv_sizes: Any) -> int:
        # gf_comm.all_to_all_dl: DLPack tensors over the engine's C block (it copies send in, recv out), taken
        # first: their deleters free it once torch (and Gloo, even after an exchange it gave up on) let go. As
        # legacy capsules, whatever torch asks for: gf_tensor_to_versioned re-wraps only a batch's tensors. Both
        # capsules first: one torch did not take lets its tensor go when it is collected.
        try:
            capsules = [_capsule(p, None) for p in (send, recv)]
            send, recv = (torch.from_dlpack(c) for c in capsules)
        except BaseException as exc:  # noqa: BLE001 - reported to the engine
            return self._fail(exc)
        n = self.size
        return self._run(user, lambda: self.all_to_all_into(send, send_sizes[:n], recv_sizes[:n], recv))

    def _c_send(self, user: Any, to: int, msg: Any, size: int) -> int:
        return self._run(user, lambda: self.send(int(to), ctypes.string_at(msg, size) if size else b""))

    def _c_recv(self, user: Any, peer: int, buf: Any, capacity: int, size: Any) -> int:
        def exchange() -> None:
            data = self.recv(int(peer))
            if not isinstance(data, (bytes, bytearray)):
                raise TypeError(f"recv returned {type(data).__name__}, want bytes")
            if len(data) > capacity:
                raise RuntimeError(f"recv returned {len(data)} bytes, want at most {capacity}")
            ctypes.memmove(buf, bytes(data), len(data))
            size[0] = len(data)

        return self._run(user, exchange)

    def _c_errmsg(self, _user: Any) -> int:
        return ctypes.addressof(self._error)


# Process groups of TorchComms that abandoned a collective: its worker thread
# stays in it until the group's time-out, so destroying the group (at
# interpreter exit, when its last reference goes) would wait that long.
_abandoned_groups: list[Any] = []

# The TorchComms of this process (for the failure reports of an uncaught
# exception) and how many were made (their store keys).
_live_comms: weakref.WeakSet[TorchComm] = weakref.WeakSet()
_comm_count = 0
_hook_installed = False


def _store() -> Any:
    """torch.distributed's default store, or None."""
    try:
        return dist.distributed_c10d._get_default_store()
    except Exception:  # noqa: BLE001 - no process group, or a torch without it
        return None


def report_failure(exc: BaseException) -> None:
    """Reports ``exc`` to the other ranks of every TorchComm of this process
    (see :meth:`TorchComm.report_failure`): call it where a rank catches an
    exception that ends its part in the training. Uncaught exceptions are
    reported by themselves."""
    reason = f"{type(exc).__name__}: {exc}"
    for comm in list(_live_comms):
        comm.report_failure(reason)


def _install_excepthook() -> None:
    """Chains sys.excepthook so that an uncaught exception on a rank is
    reported to the others before the interpreter exits (and closes the
    rank's connections)."""
    global _hook_installed
    if _hook_installed:
        return
    _hook_installed = True
    previous = sys.excepthook

    def hook(kind: Any, value: Any, tb: Any) -> None:
        if value is not None and not isinstance(value, KeyboardInterrupt):
            report_failure(value)
        previous(kind, value, tb)

    sys.excepthook = hook


class TorchComm(Communicator):
    """A :class:`Communicator` over a ``torch.distributed`` process group.

    With ``method="all_to_all"`` every exchange is an asynchronous
    ``all_to_all_single`` waited for in short slices: one that has not
    completed within the time-out fails, naming the ranks that did not
    answer (with two ranks, the other one; with more, those that do not
    answer a probe the failing ranks send each other), one that breaks (a
    rank that died) fails at once, naming it the same way, and one whose
    loader is closed gives up within a few milliseconds. With ``"p2p"``
    each exchange is ``isend``/``irecv`` pairs waited for up to the
    time-out (Gloo's point-to-point waits cannot be given up early: closing
    a loader waits for its exchange in progress, at most that long). After
    an exchange failed or gave up the ranks are out of step: the TorchComm
    refuses every later exchange (make a new one on every rank).

    Args:
        group: the ranks to sample with (default: every rank). The sampler
            exchanges on a NEW group over the same ranks (made here, so every
            rank must construct its TorchComm at the same point): its
            collectives run on the engine's thread, and sharing a group with
            the training loop's (DDP's all-reduce) could pair one thread's
            collective with the other's.
        backend: the new group's backend (default ``"gloo"``: the engine's
            messages are in host memory).
        timeout: bound on each exchange, a ``datetime.timedelta`` or seconds
            (default 60 s; a :class:`DistributedLoader` may give its own): a
            rank that died or stopped makes the others fail within it,
            naming it. Also the new group's time-out.
        method: ``"all_to_all"`` (``all_to_all_single``), ``"p2p"``
            (``isend``/``irecv`` pairs, for backends without all-to-all) or
            ``"auto"``: all_to_all where the backend has it.
        coordinated: carry the engine coordinator's control messages, so
            that each loader samples with several workers
            (``min(num_threads, 4)``) whose exchanges the coordinator orders
            the same on every rank (see :attr:`Communicator.coordinated`).
            They travel through the process group's key-value store
            (torch's ``TCPStore``: not the group's collectives, behind which
            they must never wait), under this TorchComm's group name; a
            waiting ``recv`` polls it and gives up when its loader closes.
            The batches are the same as with one worker. (default: False)
    """

    bounds_waits = True

    def __init__(
        self,
        group: Any = None,
        *,
        backend: str = "gloo",
        timeout: datetime.timedelta | float = 60.0,
        method: str = "auto",
        coordinated: bool = False,
    ):
        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("graphferry.distributed.TorchComm: call torch.distributed.init_process_group first")
        if method not in ("auto", "all_to_all", "p2p"):
            raise ValueError(f"method must be 'auto', 'all_to_all' or 'p2p' (got {method!r})")
        seconds = _seconds(timeout, "timeout")
        ranks = None if group is None else dist.get_process_group_ranks(group)
        self._dist = dist
        self._group = dist.new_group(ranks=ranks, backend=backend, timeout=datetime.timedelta(seconds=seconds))
        self._global = dist.get_process_group_ranks(self._group)  # group rank -> global rank
        self._broken: str | None = None
        super().__init__(dist.get_rank(self._group), dist.get_world_size(self._group), timeout=seconds)
        if method == "auto":
            method = "all_to_all" if _has_all_to_all(self._group, self.size) else "p2p"
        self.method = method
        # Every rank makes its TorchComms in the same order: the n-th one's
        # failure reports share a key prefix in the process group's store.
        global _comm_count
        _comm_count += 1
        self._failure_prefix = f"graphferry/comm{_comm_count}/failed/"
        # The tensors this TorchComm gave its group's collectives, as weak
        # references: settled (see _settle) before the group can go.
        self._given: list[weakref.ref] = []
        self._given_lock = threading.Lock()
        _live_comms.add(self)
        _install_excepthook()
        self.coordinated = bool(coordinated)
        self._store: Any = None
        self._store_lock = threading.Lock()
        self._sent: dict[tuple[int, int], int] = {}  # (loader, to) -> messages sent
        self._received: dict[tuple[int, int], int] = {}  # (loader, from) -> messages received
        if self.coordinated:
            name = getattr(self._group, "group_name", None) or dist.distributed_c10d._world.pg_names[self._group]
            self._store = dist.PrefixStore(f"graphferry/control/{name}/", dist.distributed_c10d._get_default_store())

    @property
    def group(self) -> Any:
        """The process group the sampler exchanges on."""
        return self._group

    def _give(self, *tensors: torch.Tensor) -> None:
        """Records tensors handed to a collective of the group (see _settle)."""
        with self._given_lock:
            self._given = [r for r in self._given if r() is not None]
            self._given += [weakref.ref(t) for t in tensors]

    def _settle(self, timeout: float = _SETTLE_S) -> bool:
        """Waits, the GIL released, until Gloo's workers have let go of
        every tensor this TorchComm gave its group; True when they have.

        With torch before 2.8 a Gloo process group's destructor holds the
        GIL while it waits for its worker threads, and a worker letting go
        of a finished collective's tensor whose Python object was dropped
        first needs the GIL to free it: destroying the group in that
        window deadlocks the process (pytorch/pytorch#56297, fixed by
        #154976). The group can only go after this TorchComm does (it holds
        the group) or at exit, so both settle first. A group whose
        collective was abandoned is never destroyed: nothing to wait for.
        """
        if self._broken is not None:
            return True
        deadline = time.monotonic() + timeout
        while True:
            with self._given_lock:
                self._given = [r for r in self._given if r() is not None]
                if not self._given:
                    return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.001)

    def __del__(self) -> None:
        try:
            if getattr(self, "_given", None) is not None:
                self._settle()
        except Exception:  # noqa: BLE001 - late in interpreter exit the modules may be gone
            pass

    def exchange_sizes(self, send: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(send)
        self._exchange(send.view(torch.uint8), [8] * self.size, out.view(torch.uint8), [8] * self.size, "size exchange")
        return out

    def all_to_all(self, send: torch.Tensor, send_splits: list[int], recv_splits: list[int]) -> torch.Tensor:
        out = torch.empty(sum(recv_splits), dtype=torch.uint8)
        self._exchange(send, send_splits, out, recv_splits, "data exchange")
        return out

    def all_to_all_into(self, send: Any, send_splits: list[int], recv_splits: list[int], out: Any) -> None:
        self._exchange(send, send_splits, out, recv_splits, "data exchange")

    def _exchange(self, send: Any, send_splits: list[int], out: Any, recv_splits: list[int], what: str) -> None:
        """send and out go to torch.distributed as they are (no copy)."""
        if self.method == "all_to_all":
            self._give(out, send)
            self._collective(
                lambda: self._dist.all_to_all_single(
                    out, send, recv_splits, send_splits, group=self._group, async_op=True
                ),
                what,
            )
        else:
            self._p2p(list(send.split(send_splits)), list(out.split(recv_splits)), what)

    def send(self, to: int, msg: bytes) -> None:
        if not self.coordinated:
            raise RuntimeError("this TorchComm carries no control messages: make it with coordinated=True")
        key = (self.session_key(), to)
        seq = self._sent.get(key, 0)  # one sending thread
        channel = f"{key[0]}/{self.rank}>{to}"
        with self._store_lock:
            self._store.set(f"{channel}/{seq}", msg)
            self._store.add(f"{channel}/count", 1)  # after the message: the receiver polls the count
        self._sent[key] = seq + 1

    def recv(self, peer: int) -> bytes:
        if not self.coordinated:
            raise RuntimeError("this TorchComm carries no control messages: make it with coordinated=True")
        key = (self.session_key(), peer)
        seq = self._received.get(key, 0)  # one receiving thread per peer
        channel = f"{key[0]}/{peer}>{self.rank}"
        pause = 5e-5
        while True:
            with self._store_lock:  # add(0) reads the count without waiting
                if self._store.add(f"{channel}/count", 0) > seq:
                    data = self._store.get(f"{channel}/{seq}")
                    self._store.delete_key(f"{channel}/{seq}")
                    break
            if self.cancelled():
                raise CommCancelled("control message: given up, the loader was closed")
            time.sleep(pause)
            pause = min(pause * 2, 2e-3)
        self._received[key] = seq + 1
        return data

    def _check_usable(self) -> None:
        if self._broken is not None:
            raise RuntimeError(
                f"this TorchComm can no longer exchange: {self._broken}; the ranks are out of step "
                "(make a new TorchComm on every rank)"
            )

    def _collective(self, start: Any, what: str) -> None:
        """Starts an asynchronous collective and waits for it in slices, up
        to the exchange's time-out, giving up if its loader is closed."""
        self._check_usable()
        timeout = self.exchange_timeout()
        deadline = time.monotonic() + timeout
        work = start()
        try:
            while True:
                left = deadline - time.monotonic()
                try:
                    work.wait(timeout=datetime.timedelta(seconds=max(min(_POLL_S, left), 0.001)))
                    return
                except RuntimeError as exc:
                    if "timed out" not in str(exc).lower():  # the collective broke: a rank died
                        self._fail_exchange(what, timeout, str(exc), abandoned=False)
                if self.cancelled():
                    raise CommCancelled(f"{what}: given up, the loader was closed")
                if left <= 0:
                    self._fail_exchange(what, timeout, None, abandoned=True)
        except (CommCancelled, KeyboardInterrupt) as exc:
            self._abandon(f"rank {self.rank} gave up its {what} ({type(exc).__name__})")
            raise

    def _abandon(self, why: str) -> None:
        if self._broken is None:
            self._broken = why
            _abandoned_groups.append(self._group)

    def _fail_exchange(self, what: str, timeout: float, error: str | None, abandoned: bool) -> None:
        """Raises the failure of a collective, naming the ranks behind it."""
        if abandoned:
            self._abandon(f"rank {self.rank}'s {what} timed out")
        silent = self._silent_ranks()
        self._raise(
            what, timeout, silent if error is None else [], {} if error is None else dict.fromkeys(silent, error)
        )

    def _raise(self, what: str, timeout: float, timed_out: list[int], broke: dict[int, str]) -> None:
        parts = []
        if timed_out:
            who = f"rank {timed_out[0]}" if len(timed_out) == 1 else f"ranks {timed_out}"
            parts.append(f"{who} did not answer within {timeout:g} s")
            parts += [f"rank {j} failed: {why}" for j in timed_out if (why := self._failure_of(j))]
        for j, e in sorted(broke.items()):
            why = self._failure_of(j)
            named = f"rank {j} failed: {why} (then its connection closed: {e})"
            parts.append(named if why else f"rank {j} failed ({e})")
        message = f"{what}: " + "; ".join(parts)
        if self._broken is None:
            self._broken = f"rank {self.rank}'s {message}"
        raise (TimeoutError if timed_out else ConnectionError)(message)

    def report_failure(self, reason: str) -> None:
        """Tells the other ranks why this rank is failing: they name it in
        the error of the exchange its failure breaks. Written to the process
        group's store (torch.distributed's rendezvous store, which outlives a
        rank's connections; with a rank 0 that hosts it and fails itself, the
        others may miss it). Never raises."""
        store = _store()
        if store is None:
            return
        key = self._failure_prefix + str(self.rank)
        try:
            store.set(key, reason[:2000])
            store.add(key + "/n", 1)  # set last: a reader that sees it finds the reason
        except Exception:  # noqa: BLE001 - reporting must never be what fails
            pass

    def _failure_of(self, rank: int) -> str | None:
        """What rank reported of its failure (report_failure), if anything."""
        store = _store()
        if store is None:
            return None
        key = self._failure_prefix + str(rank)
        try:
            if store.add(key + "/n", 0) == 0:  # add(0): a read that never blocks
                return None
            return store.get(key).decode("utf-8", errors="replace")
        except Exception:  # noqa: BLE001 - the store may be gone with a failed rank 0
            return None

    def _silent_ranks(self) -> list[int]:
        """The ranks a failed collective waited for in vain: the other one
        of two; of more, those whose probe does not come within a short
        grace (every rank the failure reaches sends each peer one)."""
        peers = [r for r in range(self.size) if r != self.rank]
        if len(peers) == 1:
            return peers
        token = torch.full((1,), self.rank, dtype=torch.int64)
        self._give(token)
        sends = []  # kept until the end: dropping a send's work drops the send
        for j in peers:
            try:
                sends.append(self._dist.isend(token, self._global[j], group=self._group, tag=_PROBE_TAG))
            except RuntimeError:
                pass
        heard = set()
        deadline = time.monotonic() + min(_PROBE_GRACE_S, self.exchange_timeout())
        for _ in peers:  # from any rank, as they come: Gloo fails every pending wait once one timed out
            buf = torch.empty(1, dtype=torch.int64)
            self._give(buf)
            try:
                work = self._dist.irecv(buf, None, group=self._group, tag=_PROBE_TAG)
                work.wait(timeout=datetime.timedelta(seconds=max(deadline - time.monotonic(), 0.001)))
            except RuntimeError:
                break
            heard.add(work._source_rank())
        del sends
        return [j for j in peers if j not in heard] or peers

    def _p2p(self, send: list[torch.Tensor], recv: list[torch.Tensor], what: str) -> None:
        """Sends send[j] to rank j and receives rank j's into recv[j] (views:
        no copy but this rank's own message)."""
        self._check_usable()
        timeout = self.exchange_timeout()
        deadline = time.monotonic() + timeout
        self._give(*send, *recv)
        works = []
        for j in range(self.size):
            if j == self.rank:
                recv[j].copy_(send[j])
                continue
            peer = self._global[j]
            if send[j].numel():
                works.append((j, self._dist.isend(send[j], peer, group=self._group)))
            if recv[j].numel():
                works.append((j, self._dist.irecv(recv[j], peer, group=self._group)))
        failed: dict[int, str] = {}
        for j, work in works:
            try:  # one wait each, to the deadline: Gloo closes a pair whose wait timed out
                work.wait(timeout=datetime.timedelta(seconds=max(deadline - time.monotonic(), 0.001)))
            except RuntimeError as exc:
                failed.setdefault(j, str(exc))
        if failed:
            timed_out = sorted(j for j, e in failed.items() if "timed out" in e.lower() or "timeout" in e.lower())
            self._raise(what, timeout, timed_out, {j: e for j, e in failed.items() if j not in timed_out})


# The probe of a failed collective (TorchComm._silent_ranks): its tag, and
# how long a rank waits for the other ranks' probes.
_PROBE_TAG = 0x6766  # "gf"
_PROBE_GRACE_S = 1.0


def _has_all_to_all(group: Any, size: int) -> bool:
    """Whether the group's backend runs all_to_all_single (a collective: every
    rank calls it; a backend refuses it everywhere or nowhere)."""
    try:
        out = torch.empty(size, dtype=torch.int64)
        dist.all_to_all_single(out, torch.zeros(size, dtype=torch.int64), group=group)
        return True
    except RuntimeError:
        return False


class PartGraph(Graph):
    """One rank's part of a partition written by ``python -m graphferry
    partition SRC DST --parts N --layout ...``: :meth:`open` reads
    ``DST/partition.json``, ``DST/part-<rank>/`` and (dsp, hybrid)
    ``DST/assignment.npy``, never another rank's folder. Give it to a
    :class:`DistributedLoader` in place of a :class:`~graphferry.Graph`.

    What the rank holds and what its loader moves, by :attr:`layout`:

    - ``"dsp"``: the in-edges of its owned nodes and their node data.
      Sampling is the collective sampling primitive over the communicator
      (tasks travel to the owner of each frontier node, answers come back);
      after each batch is sampled, the node data of nodes owned elsewhere is
      fetched from their owners in one exchange round (requests, then rows).
    - ``"hybrid"``: the whole topology, the node data of its owned nodes:
      sampling as dsp, node data fetched the same way.
    - ``"self-reliant"``: the ``num_hops``-hop neighbourhood of its own seeds
      with all their node data: nothing moves; each rank samples its own
      seeds (:attr:`train_idx` and the like), up to ``num_hops`` hops.

    Every node id is an original id of the whole graph. The node data this
    object returns (:meth:`get_node_data`, :attr:`train_idx`, ...) is the
    owned nodes' (in :meth:`owned_nodes` order); the whole-graph calls of
    :class:`~graphferry.Graph` (sampling, setting node data) are not
    available on a part and raise. ``graphferry.dgl.DataLoader(part, seeds,
    sampler, comm=comm)`` loads DGL blocks from a part as from a graph.
    """

    @classmethod
    def open(cls, path: Any, rank: int, *, verify: bool = False) -> PartGraph:  # type: ignore[override]
        """Opens ``rank``'s part of the partition in ``path`` (the folder
        holding ``partition.json``); ``verify`` checks every file's CRC-32C."""
        if not isinstance(rank, int) or isinstance(rank, bool):
            raise TypeError(f"'rank' must be an int (got '{type(rank).__name__}')")
        out = ctypes.c_void_p()
        _lib.gf_part_open(os.fsencode(path), rank, _lib.GF_PART_VERIFY if verify else 0, ctypes.byref(out))
        self = cls(out.value, _owner=_CONSTRUCTOR_TOKEN)
        info = _lib.gf_part_info(struct_size=ctypes.sizeof(_lib.gf_part_info))
        _lib.gf_part_get_info(self._handle, ctypes.byref(info))
        self.rank, self.num_parts = info.rank, info.num_parts
        self.layout, self.num_hops = _LAYOUTS.get(info.layout, str(info.layout)), info.num_hops
        self._num_nodes, self.num_owned, self._num_edges = info.num_nodes, info.num_owned, info.num_edges
        # A typed partition's types (the engine checked them at open).
        meta = read_object(os.path.join(os.fspath(path), "partition.json"))
        self.node_types = [t["name"] for t in meta.get("node_types") or []]
        self._type_offsets = [0]
        for t in meta.get("node_types") or []:
            self._type_offsets.append(self._type_offsets[-1] + int(t["num_nodes"]))
        self.edge_types = [(t["src"], t["rel"], t["dst"]) for t in meta.get("edge_types") or []]
        self._edge_counts = [int(t["num_edges"]) for t in meta.get("edge_types") or []]
        return self

    def hetero_view(self) -> HeteroGraph:
        """This typed part as the :class:`~graphferry.HeteroGraph` the
        heterogeneous loaders take (``graphferry.pyg.NeighborLoader(part,
        ..., comm=)``, ``graphferry.dgl.DataLoader(part, {ntype: ids}, ...,
        comm=)``): the whole graph's types over this part, which it does not
        own (closing the part closes it). Its node data is fetched by the
        loaders per batch (``"<ntype>/<name>"``), a part holding only its own
        rows. ValueError for an untyped part."""
        return HeteroGraph._of_part(self, self._type_offsets, self._edge_counts)

    @property
    def num_nodes(self) -> int:
        """Nodes of the whole graph."""
        return self._num_nodes

    @property
    def num_edges(self) -> int:
        """Edges this rank's topology holds."""
        return self._num_edges

    @property
    def num_patches(self) -> int:
        return self.num_parts

    @property
    def num_types(self) -> tuple[int, int]:
        """``(number of node types, number of relations)`` of a typed
        partition (:attr:`node_types`, :attr:`edge_types`: the whole
        graph's, by original ids); ``(0, 0)`` for an untyped one."""
        return len(self.node_types), len(self.edge_types)

    def owned_nodes(self) -> torch.Tensor:
        """int64 original ids of the nodes this rank owns, increasing."""
        out = ctypes.c_void_p()
        _lib.gf_part_owned_nodes(self._handle, ctypes.byref(out))
        return tensor_from_managed(out.value)

    def get_node_data(self, name: str) -> torch.Tensor:
        """A copy of node data ``name`` of the owned nodes (one row each, in
        :meth:`owned_nodes` order)."""
        out = ctypes.c_void_p()
        _lib.gf_part_get_node_data(self._handle, _encode_name(name), ctypes.byref(out))
        return tensor_from_managed(out.value)

    def set_node_time(self, time: Any, comm: Communicator | None = None) -> None:  # type: ignore[override]
        """Sets the node times for temporal sampling (``temporal="node"``,
        PyG's ``time_attr``), which a partition does not carry. A dsp rank
        keeps those of the nodes it holds (owned and halo) alone.

        Args:
            time: int64. Without ``comm``: ``[num_nodes]``, the time of every
                node of the whole graph by original id. With ``comm``:
                ``[num_owned]``, the times of this rank's own nodes in
                :meth:`owned_nodes` order (e.g. ``part.get_node_data("time")``).
                Copied.
            comm (Communicator, optional): a collective: every rank calls
                it with its own nodes' times and the ranks exchange what each
                holds; a rank giving another length fails every rank's call.

        Raises:
            InvalidArgumentError: a wrong length. TypeMismatchError: not
            int64. GraphferryError: (``GF_ESTATE``) loaders are open on the
            part; (``GF_EIO``) the exchange failed.
        """
        borrowed = BorrowedTensor(time, "time")
        if comm is None:
            _lib.gf_part_set_node_time(self._handle, borrowed.ref, None)
            return
        DistributedLoader._check_comm(self, comm)
        session = comm._open_session(comm.timeout)
        try:
            table = comm._table(session)
            _lib.gf_part_set_node_time(self._handle, borrowed.ref, ctypes.byref(table))
        finally:
            comm._close_session(session)

    def set_edge_time(self, time: Any) -> None:
        """Sets the edge times for temporal sampling (``temporal="edge"``):
        int64, indexed by original edge id (more entries than the largest
        original edge id this part holds; the whole graph's vector will
        do). Copied. Raises as :meth:`set_node_time`."""
        borrowed = BorrowedTensor(time, "time")
        _lib.gf_part_set_edge_time(self._handle, borrowed.ref)

    def _mask_index(self, name: str) -> torch.Tensor | None:
        """The owned nodes whose mask ``name`` is set: this rank's seeds."""
        if name not in self.node_data_names():
            return None
        owned = self.owned_nodes()
        ntype = name.split("/", 1)[0]
        if "/" in name and ntype in self.node_types:
            # A typed part's per-type mask has a row per owned node of its type.
            t = self.node_types.index(ntype)
            owned = owned[(owned >= self._type_offsets[t]) & (owned < self._type_offsets[t + 1])]
        return owned[self.get_node_data(name).bool()]

    def node_data_names(self) -> list[str]:
        """The names of the part's node data, sorted."""
        out = ctypes.c_void_p()
        _lib.gf_part_node_data_names(self._handle, ctypes.byref(out))
        try:
            text = ctypes.string_at(out.value).decode("utf-8") if out.value else ""
        finally:
            _lib.gf_free(out.value)
        return text.split("\n") if text else []

    def _free(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None and not _lib.in_forked_child():
            _lib.gf_part_close(handle)

    def __repr__(self) -> str:
        return (
            f"PartGraph(rank={getattr(self, 'rank', None)} of {getattr(self, 'num_parts', None)}, "
            f"layout={getattr(self, 'layout', None)!r}, num_owned={getattr(self, 'num_owned', None)})"
        )


def is_typed_part(graph: Any) -> bool:
    """Whether ``graph`` is a rank's part of a typed partition (its loaders
    are the heterogeneous ones, over :meth:`PartGraph.hetero_view`)."""
    return isinstance(graph, PartGraph) and bool(graph.node_types)


def global_seeds(part: PartGraph, comm: Communicator, mask: str = "train_mask") -> torch.Tensor:
    """Every rank's seeds of ``mask`` (its owned nodes with the mask set),
    gathered over ``comm`` and sorted: the seeds a single process takes from
    the whole dataset (``graph.train_idx``), for a dsp or hybrid
    :class:`DistributedLoader`. A collective: every rank calls it. On a
    typed part ``mask`` may be a per-type mask (``"paper/train_mask"``):
    the global ids of that type's seeds."""
    local = part._mask_index(mask)
    if local is None:
        raise ValueError(f"the part has no node data {mask!r}")
    raw = local.to(torch.int64).contiguous().view(torch.uint8)
    counts = comm.exchange_sizes(torch.full((comm.size,), raw.numel(), dtype=torch.int64)).tolist()
    out = comm.all_to_all(raw.repeat(comm.size), [raw.numel()] * comm.size, counts)
    return torch.sort(out.view(torch.int64)).values


class DistributedLoader(Loader):
    """One rank's share of a :class:`~graphferry.Loader`'s epochs.

    Every rank opens it with the same graph (opened with
    ``num_patches=comm.size``), seeds and options; each epoch it yields
    ``ceil(batches / comm.size)`` batches, the single-process loader's
    batches ``comm.rank, comm.rank + comm.size, ...`` (padded: see the
    module documentation). ``seed=None`` draws one seed on rank 0 and
    shares it. Other arguments are :class:`~graphferry.Loader`'s.

    ``graph`` may instead be this rank's :class:`PartGraph`: with the dsp
    and hybrid layouts the batches are the same (seeds of the whole graph,
    the same on every rank: see :func:`global_seeds`), node data of other
    ranks' nodes fetched from them; with self-reliant, ``seeds`` are this
    rank's own (``part.train_idx``), each rank samples alone, and every
    rank yields the largest rank's number of batches.
    """

    def __init__(
        self,
        graph: Graph,
        seeds: Any,
        fanouts: Sequence[int],
        *,
        comm: Communicator,
        seed: int | None = None,
        timeout: datetime.timedelta | float | None = None,
        **kwargs: Any,
    ):
        self._set_comm(graph, comm, timeout)
        if seed is None:
            seed = _shared_seed(comm)
        super().__init__(graph, seeds, fanouts, seed=seed, **kwargs)

    @classmethod
    def from_options(
        cls,
        graph: Graph,
        seeds: Any,
        options: Any,
        *,
        comm: Communicator,
        timeout: datetime.timedelta | float | None = None,
        **kwargs: Any,
    ) -> Loader:
        """A distributed loader sampling with ``options`` (a
        :class:`~graphferry.SampleOptions`, the same on every rank)."""
        self = cls.__new__(cls)
        self._set_comm(graph, comm, timeout)
        self._open(graph, seeds, options, **kwargs)
        return self

    def _set_comm(self, graph: Graph, comm: Any, timeout: Any) -> None:
        self._check_comm(graph, comm)
        self._comm = comm  # the engine calls its callbacks until the loader is closed
        self.timeout = comm.timeout if timeout is None else _seconds(timeout, "timeout")
        self._session: _Session | None = None

    @staticmethod
    def _check_comm(graph: Graph, comm: Any) -> None:
        if not isinstance(comm, Communicator):
            raise TypeError(f"'comm' must be a graphferry.distributed.Communicator (got '{type(comm).__name__}')")
        if isinstance(graph, Graph) and not graph.closed and graph.num_patches != comm.size:
            raise ValueError(
                f"the graph has {graph.num_patches} patches but the communicator {comm.size} ranks: "
                f"open it with num_patches={comm.size}"
            )
        if isinstance(graph, PartGraph) and not graph.closed and graph.rank != comm.rank:
            raise ValueError(f"this is part {graph.rank}, but the communicator's rank is {comm.rank}")

    @property
    def comm(self) -> Communicator:
        return self._comm

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        # An exception leaving `with loader:` ends this rank's part: the
        # other ranks learn it by name (TorchComm.report_failure).
        if value is not None and not isinstance(value, KeyboardInterrupt) and isinstance(self._comm, TorchComm):
            self._comm.report_failure(f"{type(value).__name__}: {value}")
        self.close()

    def _rank_fingerprint(self) -> dict[str, Any]:
        """A rank resumes its own share: the state names the rank and size."""
        return {"rank": int(self._comm.rank), "world_size": int(self._comm.size)}

    def _open_handle(self, graph: Graph, seeds: BorrowedTensor, out: ctypes.c_void_p) -> None:
        open_loader = _lib.gf_loader_open_part if isinstance(graph, PartGraph) else _lib.gf_loader_open_comm
        self._open_in_session(
            lambda table: open_loader(graph.handle, seeds.ref, ctypes.byref(self._options), table, ctypes.byref(out))
        )

    def _open_in_session(self, open_loader: Any) -> None:
        """Calls ``open_loader(table)`` with the ``gf_comm`` table of a new
        session of the communicator, kept until the loader closes."""
        session = self._comm._open_session(self.timeout)
        table = self._comm._table(session)
        try:
            open_loader(ctypes.byref(table))
        except BaseException:
            self._comm._close_session(session)
            raise
        self._session = session
        _open_loaders.add(self)

    def _free(self) -> None:
        # The engine stops waiting for an exchange in progress when the
        # loader closes; the session's cancel makes that exchange give up
        # too, and closing waits for it, so that no callback of this loader
        # runs Python code after close() (nor at interpreter exit).
        session, self._session = getattr(self, "_session", None), None
        if session is not None:
            session.cancelled.set()
        super()._free()
        if session is not None:
            self._comm._close_session(session)


class DistributedEdgeLoader(DistributedLoader, EdgeLoader):
    """One rank's share of an edge loader's epochs (link prediction: the
    engine's edge loader, :class:`graphferry._link.EdgeLoader`, under
    ``graphferry.pyg.LinkNeighborLoader`` and DGL's edge ``DataLoader``).

    Every rank opens it with the same graph (opened with
    ``num_patches=comm.size``, typed or not: a typed graph's batches are
    the single-process typed edge loader's) or its own :class:`PartGraph`
    (dsp or hybrid), the same seed edges (``mode="dgl"``: edge ids) or pairs
    (``mode="pyg"``: ``seeds -> seeds_dst``, original ids of the whole
    graph) and the same options (``options.seed`` included). Each epoch it
    yields ``ceil(batches / comm.size)`` batches: the single-process edge
    loader's batches ``comm.rank, comm.rank + comm.size, ...`` (negatives,
    exclusions and samples as in one process), padded as
    :class:`DistributedLoader` pads. Other arguments are
    :class:`~graphferry._link.EdgeLoader`'s; ``timeout`` is
    :class:`DistributedLoader`'s.
    """

    def __init__(
        self,
        graph: Graph,
        seeds: Any,
        seeds_dst: Any,
        options: Any,
        *,
        comm: Communicator,
        timeout: datetime.timedelta | float | None = None,
        **kwargs: Any,
    ):
        self._set_comm(graph, comm, timeout)
        if isinstance(graph, PartGraph):
            _check_part_edges(graph, options, kwargs)
        EdgeLoader.__init__(self, graph, seeds, seeds_dst, options, **kwargs)

    def _open_handle(self, graph: Graph, seeds: BorrowedTensor, out: ctypes.c_void_p) -> None:
        open_loader = _lib.gf_edge_loader_open_part if isinstance(graph, PartGraph) else _lib.gf_edge_loader_open_comm
        self._open_edges(
            lambda dst, options: self._open_in_session(
                lambda table: open_loader(graph.handle, seeds.ref, dst, options, table, ctypes.byref(out))
            )
        )


def _check_part_edges(part: PartGraph, options: Any, kwargs: dict) -> None:
    """What a rank part's edge loader does not serve, refused by name
    before any exchange (the engine refuses them too, GF_ENOTSUP)."""
    if part.layout not in ("dsp", "hybrid"):
        raise NotImplementedError(
            f"the edge loaders of rank parts serve the dsp and hybrid layouts (this part is {part.layout}: a "
            "self-reliant rank holds the neighbourhoods of its own seed nodes, not of seed edges)"
        )
    if kwargs.get("edge_feature_names"):
        raise NotImplementedError("the edge loaders of rank parts gather no edge data (a part holds none)")


# The distributed loaders still open: closed at interpreter exit, before
# Python finalizes, so that no engine thread calls into Python then.
_open_loaders: weakref.WeakSet[DistributedLoader] = weakref.WeakSet()


@atexit.register
def _close_open_loaders() -> None:
    for loader in list(_open_loaders):
        loader.close()
    # Before Python finalizes and torch destroys the groups (TorchComm._settle).
    for comm in list(_live_comms):
        comm._settle()
    # Never destroyed: the exit would wait for their abandoned collectives.
    for group in _abandoned_groups:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(group))


def _shared_seed(comm: Communicator, drawn: int | None = None) -> int:
    """Rank 0's seed shared with every rank (a collective): ``drawn``, or a
    random one when None."""
    if comm.rank == 0 and drawn is None:
        drawn = random_seed()
    send = torch.full((comm.size,), drawn if comm.rank == 0 else 0, dtype=torch.int64)
    return int(comm.exchange_sizes(send)[0])

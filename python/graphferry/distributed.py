"""Sampling across processes: one rank per process, over ``torch.distributed``.

Each process (launched by ``torchrun`` or ``torch.multiprocessing`` with the
"spawn" start method: the engine must never run in a forked child) opens the
same graph with one patch per rank and a :class:`DistributedLoader` with a
:class:`TorchComm`. Rank ``r`` owns patch ``r`` for sampling: the collective
sampling primitive's shuffle and reshuffle cross the processes through the
communicator, which the engine drives through the C API's ``gf_comm``
callbacks.

For now every process holds the whole topology and node data (replicated);
the patches decide which rank samples which node, not what a process holds.
Per-rank folders written by an offline partitioner are later work.

The batches of an epoch are exactly those of a single-process
:class:`~graphferry.Loader` with the same seeds and options (bit-identical),
dealt out round-robin: rank ``r`` gets batches ``r, r + size, ...``. Every
rank gets ``ceil(batches / size)`` of them: the ranks short of one in the
last round are PADDED with a copy of one of the epoch's first batches (as
``torch.utils.data.DistributedSampler`` pads), so that DDP's gradient
all-reduce never waits for a rank that ran out. Every rank must read every
epoch to its end.

.. code-block:: python

    dist.init_process_group("gloo")
    comm = graphferry.distributed.TorchComm()
    g = graphferry.Graph.open(path, num_patches=comm.size)
    loader = graphferry.distributed.DistributedLoader(g, train_idx, [10, 5], comm=comm, batch_size=512, seed=0)
"""

from __future__ import annotations

import ctypes
import datetime
import threading
from collections.abc import Sequence
from typing import Any

import torch

from . import _lib
from ._dlpack import BorrowedTensor
from .graph import Graph
from .sampling import Loader

__all__ = ["Communicator", "TorchComm", "DistributedLoader"]

# ---------------------------------------------------------------------------
# The C table (include/graphferry.h, "Communicators")
# ---------------------------------------------------------------------------

_c_int64_p = ctypes.POINTER(ctypes.c_int64)
_c_void_pp = ctypes.POINTER(ctypes.c_void_p)
_EXCHANGE_SIZES = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, _c_int64_p, _c_int64_p)
_ALL_TO_ALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, _c_void_pp, _c_int64_p, _c_void_pp, _c_int64_p)
_ERRMSG = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
# send and recv (CCC's control messages) are left NULL from Python for now:
# the loader then samples with one worker per rank.
_SEND = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64)
_RECV = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64, _c_int64_p)


class gf_comm(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("rank", ctypes.c_int32),
        ("size", ctypes.c_int32),
        ("user", ctypes.c_void_p),
        ("exchange_sizes", _EXCHANGE_SIZES),
        ("all_to_all", _ALL_TO_ALL),
        ("errmsg", _ERRMSG),
        ("send", _SEND),
        ("recv", _RECV),
    ]


# int gf_loader_open_comm(gf_graph *graph, const DLTensor *seeds,
#                         const gf_loader_options *options, const gf_comm *comm,
#                         gf_loader **out_loader);
@_lib.cfunc(
    "gf_loader_open_comm",
    [ctypes.c_void_p, _lib.DLTensor_p, _lib.gf_loader_options_p, ctypes.POINTER(gf_comm), _lib.c_void_pp],
    ctypes.c_int,
)
def gf_loader_open_comm(graph: Any, seeds: Any, options: Any, comm: Any, out_loader: Any, /) -> int: ...


def _view(ptr: int | None, n: int) -> torch.Tensor:
    """A uint8 tensor over n bytes of C memory at ptr (no copy)."""
    if n == 0 or not ptr:
        return torch.empty(0, dtype=torch.uint8)
    return torch.frombuffer((ctypes.c_uint8 * n).from_address(ptr), dtype=torch.uint8)


class Communicator:
    """A communicator for the engine: rank, size, and the two exchanges of
    every collective, in the same order on every rank. Subclass it to plug
    in another transport (MPI, ...); :class:`TorchComm` is the one over
    ``torch.distributed``.

    The engine calls the exchanges from its own thread (one at a time per
    loader); an exception is reported to the engine, which then fails every
    later exchange of the loader and raises on the consumer's side with the
    message. An exchange must not block forever: bound it with a time-out.
    """

    def __init__(self, rank: int, size: int):
        if not (isinstance(size, int) and size >= 1 and isinstance(rank, int) and 0 <= rank < size):
            raise ValueError(f"rank = {rank!r} and size = {size!r}: want 0 <= rank < size")
        self.rank = rank
        self.size = size
        self._error = ctypes.create_string_buffer(b"")
        self._lock = threading.Lock()
        # The callbacks must live as long as the table does.
        self._callbacks = (
            _EXCHANGE_SIZES(self._c_exchange_sizes),
            _ALL_TO_ALL(self._c_all_to_all),
            _ERRMSG(self._c_errmsg),
        )
        self._c = gf_comm(
            struct_size=ctypes.sizeof(gf_comm),
            rank=rank,
            size=size,
            user=None,
            exchange_sizes=self._callbacks[0],
            all_to_all=self._callbacks[1],
            errmsg=self._callbacks[2],
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

    # The C side.
    def _fail(self, exc: BaseException) -> int:
        msg = f"rank {self.rank} of {self.size}: {type(exc).__name__}: {exc}"
        self._error = ctypes.create_string_buffer(msg.encode("utf-8", errors="replace"))
        return 1

    def _c_exchange_sizes(self, _user: Any, send: Any, recv: Any) -> int:
        try:
            n = self.size
            out = self.exchange_sizes(torch.tensor(send[:n], dtype=torch.int64))
            if out.shape != (n,):
                raise RuntimeError(f"exchange_sizes returned shape {tuple(out.shape)}, want ({n},)")
            for j, v in enumerate(out.tolist()):
                recv[j] = v
            return 0
        except BaseException as exc:  # noqa: BLE001 - reported to the engine
            return self._fail(exc)

    def _c_all_to_all(self, _user: Any, send: Any, send_sizes: Any, recv: Any, recv_sizes: Any) -> int:
        try:
            n = self.size
            ss, rs = send_sizes[:n], recv_sizes[:n]
            parts = [_view(send[j], ss[j]) for j in range(n)]
            out = self.all_to_all(torch.cat(parts) if parts else torch.empty(0, dtype=torch.uint8), ss, rs)
            if out.dtype != torch.uint8 or out.numel() != sum(rs) or not out.is_contiguous():
                raise RuntimeError(f"all_to_all returned {out.numel()} bytes of {out.dtype}, want {sum(rs)} uint8")
            base, off = out.data_ptr(), 0
            for j in range(n):
                if rs[j]:
                    ctypes.memmove(recv[j], base + off, rs[j])
                off += rs[j]
            return 0
        except BaseException as exc:  # noqa: BLE001 - reported to the engine
            return self._fail(exc)

    def _c_errmsg(self, _user: Any) -> int:
        return ctypes.addressof(self._error)


class TorchComm(Communicator):
    """A :class:`Communicator` over a ``torch.distributed`` process group.

    Args:
        group: the ranks to sample with (default: every rank). The sampler
            exchanges on a NEW group over the same ranks (made here, so every
            rank must construct its TorchComm at the same point): its
            collectives run on the engine's thread, and sharing a group with
            the training loop's (DDP's all-reduce) could pair one thread's
            collective with the other's.
        backend: the new group's backend (default ``"gloo"``: the engine's
            messages are in host memory).
        timeout: bound on each collective (default 60 s): a rank that died
            or stopped makes the others fail within it.
        method: ``"all_to_all"`` (``all_to_all_single``), ``"p2p"``
            (``isend``/``irecv`` pairs, for backends without all-to-all) or
            ``"auto"``: all_to_all where the backend has it.
    """

    def __init__(
        self,
        group: Any = None,
        *,
        backend: str = "gloo",
        timeout: datetime.timedelta | float = 60.0,
        method: str = "auto",
    ):
        import torch.distributed as dist

        if not dist.is_available() or not dist.is_initialized():
            raise RuntimeError("graphferry.distributed.TorchComm: call torch.distributed.init_process_group first")
        if method not in ("auto", "all_to_all", "p2p"):
            raise ValueError(f"method must be 'auto', 'all_to_all' or 'p2p' (got {method!r})")
        if not isinstance(timeout, datetime.timedelta):
            timeout = datetime.timedelta(seconds=float(timeout))
        ranks = None if group is None else dist.get_process_group_ranks(group)
        self._dist = dist
        self._group = dist.new_group(ranks=ranks, backend=backend, timeout=timeout)
        self._global = dist.get_process_group_ranks(self._group)  # group rank -> global rank
        super().__init__(dist.get_rank(self._group), dist.get_world_size(self._group))
        if method == "auto":
            method = "all_to_all" if _has_all_to_all(self._group, self.size) else "p2p"
        self.method = method

    @property
    def group(self) -> Any:
        """The process group the sampler exchanges on."""
        return self._group

    def exchange_sizes(self, send: torch.Tensor) -> torch.Tensor:
        if self.method == "all_to_all":
            out = torch.empty_like(send)
            self._dist.all_to_all_single(out, send, group=self._group)
            return out
        parts = self._p2p([send[j : j + 1] for j in range(self.size)], [1] * self.size, torch.int64)
        return torch.cat(parts)

    def all_to_all(self, send: torch.Tensor, send_splits: list[int], recv_splits: list[int]) -> torch.Tensor:
        if self.method == "all_to_all":
            out = torch.empty(sum(recv_splits), dtype=torch.uint8)
            self._dist.all_to_all_single(out, send, recv_splits, send_splits, group=self._group)
            return out
        chunks = list(torch.split(send, send_splits))
        return torch.cat(self._p2p(chunks, recv_splits, torch.uint8))

    def _p2p(self, send: list[torch.Tensor], recv_sizes: list[int], dtype: torch.dtype) -> list[torch.Tensor]:
        recv = [torch.empty(n, dtype=dtype) for n in recv_sizes]
        works = []
        for j in range(self.size):
            if j == self.rank:
                recv[j].copy_(send[j])
                continue
            peer = self._global[j]
            if send[j].numel():
                works.append(self._dist.isend(send[j].contiguous(), peer, group=self._group))
            if recv_sizes[j]:
                works.append(self._dist.irecv(recv[j], peer, group=self._group))
        for w in works:
            w.wait()
        return recv


def _has_all_to_all(group: Any, size: int) -> bool:
    """Whether the group's backend runs all_to_all_single (a collective: every
    rank calls it; a backend refuses it everywhere or nowhere)."""
    import torch.distributed as dist

    try:
        out = torch.empty(size, dtype=torch.int64)
        dist.all_to_all_single(out, torch.zeros(size, dtype=torch.int64), group=group)
        return True
    except RuntimeError:
        return False


class DistributedLoader(Loader):
    """One rank's share of a :class:`~graphferry.Loader`'s epochs.

    Every rank opens it with the same graph (opened with
    ``num_patches=comm.size``), seeds and options; each epoch it yields
    ``ceil(batches / comm.size)`` batches, the single-process loader's
    batches ``comm.rank, comm.rank + comm.size, ...`` (padded: see the
    module documentation). ``seed=None`` draws one seed on rank 0 and
    shares it. Other arguments are :class:`~graphferry.Loader`'s.
    """

    def __init__(
        self,
        graph: Graph,
        seeds: Any,
        fanouts: Sequence[int],
        *,
        comm: Communicator,
        seed: int | None = None,
        **kwargs: Any,
    ):
        self._check_comm(graph, comm)
        self._comm = comm  # the engine calls its callbacks until the loader is closed
        if seed is None:
            seed = _shared_seed(comm)
        super().__init__(graph, seeds, fanouts, seed=seed, **kwargs)

    @classmethod
    def from_options(cls, graph: Graph, seeds: Any, options: Any, *, comm: Communicator, **kwargs: Any) -> Loader:
        """A distributed loader sampling with ``options`` (a
        :class:`~graphferry.SampleOptions`, the same on every rank)."""
        self = cls.__new__(cls)
        self._check_comm(graph, comm)
        self._comm = comm
        self._open(graph, seeds, options, **kwargs)
        return self

    @staticmethod
    def _check_comm(graph: Graph, comm: Any) -> None:
        if not isinstance(comm, Communicator):
            raise TypeError(f"'comm' must be a graphferry.distributed.Communicator (got '{type(comm).__name__}')")
        if isinstance(graph, Graph) and not graph.closed and graph.num_patches != comm.size:
            raise ValueError(
                f"the graph has {graph.num_patches} patches but the communicator {comm.size} ranks: "
                f"open it with num_patches={comm.size}"
            )

    @property
    def comm(self) -> Communicator:
        return self._comm

    def _open_handle(self, graph: Graph, seeds: BorrowedTensor, out: ctypes.c_void_p) -> None:
        gf_loader_open_comm(
            graph.handle, seeds.ref, ctypes.byref(self._options), ctypes.byref(self._comm._c), ctypes.byref(out)
        )


def _shared_seed(comm: Communicator) -> int:
    """A random seed drawn on rank 0 and shared with every rank."""
    from .sampling import random_seed

    send = torch.full((comm.size,), random_seed() if comm.rank == 0 else 0, dtype=torch.int64)
    return int(comm.exchange_sizes(send)[0])

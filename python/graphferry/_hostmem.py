"""Host memory for the engine's batches, from PyTorch: :class:`HostAllocator`
is the C API's ``gf_allocator`` (``gf_loader_options.allocator``) over
PyTorch's host storage, page-locked (``torch.empty(..., pin_memory=True)``,
PyTorch's caching host allocator) for a GPU consumer, so that every byte the
engine writes for a batch lands where the device copies it from
asynchronously. CPU training does not use it: its batches stay in the
library's own memory.

The library calls ``alloc`` and ``free`` from its own threads, concurrently,
and ``free`` also from a tensor's deleter, on whichever thread drops the last
tensor of a block, possibly long after the loader was closed. So:

* the callbacks are thread-safe (a lock around the block table; PyTorch's
  allocation and release run outside it) and never raise: a failed
  allocation is recorded and answered with NULL, which fails the batch with
  ``GF_ENOMEM``; the loader then raises it with the recorded cause
  (:meth:`HostAllocator.explain`);
* an allocator lives as long as the process (every one made is kept in a
  module list), so a block freed after its loader is gone finds its
  callbacks;
* no callback may run into a finalizing interpreter: at exit, before
  finalization, :func:`_at_exit` runs the hooks registered with
  :func:`on_exit` (the prefetch threads stop first) and closes every loader
  opened with an allocator (:func:`register_user`), so that no library
  thread calls Python after that; blocks still held then are freed by
  deleters on Python threads, which hold the interpreter.
"""

from __future__ import annotations

import atexit
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import torch

from ._native import lib as _lib
from .errors import GF_ENOMEM, GraphferryError, OutOfMemoryError

__all__ = ["HostAllocator", "shared_allocator", "register_user", "on_exit", "cuda_ready"]


class HostAllocator:
    """A ``gf_allocator`` whose blocks are PyTorch host storage: page-locked
    (``pinned=True``) or ordinary. Each block is a ``uint8`` tensor kept in a
    table until the library frees it.

    Args:
        pinned (bool): page-locked memory (needs CUDA) or ordinary memory.
        limit_bytes (int, optional): fail an allocation that would take the
            live blocks past this many bytes (a cap on page-locked memory).
            (default: :obj:`None`, no cap)

    Attributes:
        allocs, frees (int): blocks handed out and given back so far.
        unknown_frees (int): frees of pointers this allocator never handed
            out (a bug if ever non-zero).
        failures (int): allocations answered with NULL.
    """

    def __init__(self, *, pinned: bool, limit_bytes: int | None = None):
        self.pinned = bool(pinned)
        self.limit_bytes = None if limit_bytes is None else int(limit_bytes)
        self._lock = threading.Lock()
        self._blocks: dict[int, tuple[torch.Tensor, int]] = {}  # address handed out -> (storage, bytes asked)
        self._live_bytes = 0
        self.allocs = 0
        self.frees = 0
        self.unknown_frees = 0
        self.failures = 0
        self._failure: tuple[str, BaseException | None] | None = None
        # The callbacks and the struct live as long as this object, which
        # lives as long as the process (_ALL).
        self._alloc_fn = _lib.gf_alloc_fn(self._alloc)
        self._free_fn = _lib.gf_free_fn(self._free)
        self.struct = _lib.gf_allocator(alloc=self._alloc_fn, free=self._free_fn)
        with _ALL_LOCK:
            _ALL.append(self)

    def __repr__(self) -> str:
        kind = "pinned" if self.pinned else "pageable"
        return f"HostAllocator({kind}, {self.live_blocks} live blocks, {self.live_bytes} bytes)"

    # -- the callbacks (library threads and deleters) --------------------------------

    def _storage(self, nbytes: int) -> torch.Tensor:
        return torch.empty(nbytes, dtype=torch.uint8, pin_memory=self.pinned)

    def _alloc(self, _user: Any, nbytes: int, alignment: int) -> int | None:
        try:
            with self._lock:
                if self.limit_bytes is not None and self._live_bytes + nbytes > self.limit_bytes:
                    raise MemoryError(
                        f"the allocator's limit of {self.limit_bytes} bytes would be passed "
                        f"({self._live_bytes} bytes live)"
                    )
                self._live_bytes += nbytes  # reserved: concurrent callers see it
            try:
                storage = self._storage(nbytes)
                address = storage.data_ptr()
                if alignment > 1 and address % alignment:
                    storage = self._storage(nbytes + alignment - 1)
                    address = -(-storage.data_ptr() // alignment) * alignment
            except BaseException:
                with self._lock:
                    self._live_bytes -= nbytes
                raise
            with self._lock:
                self._blocks[address] = (storage, nbytes)
                self.allocs += 1
            return address
        except BaseException as err:  # noqa: BLE001 - a callback must not raise: NULL fails the batch
            kind = "page-locked" if self.pinned else "host"
            message = f"{kind} memory of {nbytes} bytes could not be allocated: {type(err).__name__}: {err}"
            try:
                with self._lock:
                    self.failures += 1
                    self._failure = (message, err)
            except BaseException:  # noqa: BLE001
                pass
            return None

    def _free(self, _user: Any, address: int | None, nbytes: int) -> None:
        entry = None
        try:
            with self._lock:
                entry = self._blocks.pop(address or 0, None)
                if entry is None:
                    self.unknown_frees += 1
                else:
                    self._live_bytes -= entry[1]
                    self.frees += 1
        except BaseException:  # noqa: BLE001 - a callback must not raise
            pass
        del entry  # the storage goes back to PyTorch here, outside the lock

    # -- for the loaders and the tests ----------------------------------------------

    @property
    def live_blocks(self) -> int:
        with self._lock:
            return len(self._blocks)

    @property
    def live_bytes(self) -> int:
        with self._lock:
            return self._live_bytes

    def owns(self, tensor: torch.Tensor) -> bool:
        """Whether every byte of ``tensor`` (a CPU tensor) lies in one live
        block of this allocator."""
        if tensor.numel() == 0:
            return True
        start = tensor.data_ptr()
        end = start + tensor.numel() * tensor.element_size()
        with self._lock:
            return any(base <= start and end <= base + size for base, (_, size) in self._blocks.items())

    @property
    def last_failure(self) -> str | None:
        """What the latest failed allocation said, or None."""
        with self._lock:
            return self._failure[0] if self._failure is not None else None

    def explain(self, err: GraphferryError) -> GraphferryError:
        """The library's ``GF_ENOMEM`` error ``err`` (its host allocator
        returned NULL), with the cause this allocator recorded; other errors
        as they are."""
        with self._lock:
            failure = self._failure
        if err.code != GF_ENOMEM or failure is None:
            return err
        out = OutOfMemoryError(GF_ENOMEM, f"{err.message} (graphferry's host allocator: {failure[0]})")
        out.__cause__ = failure[1]
        return out


# Every allocator ever made: the library may call one after its loaders closed.
_ALL: list[HostAllocator] = []
_ALL_LOCK = threading.Lock()
_SHARED: dict[bool, HostAllocator] = {}


def shared_allocator(pinned: bool) -> HostAllocator:
    """The process's allocator of page-locked (``pinned``) or ordinary
    memory, shared by every loader that asks for it."""
    with _ALL_LOCK:
        allocator = _SHARED.get(bool(pinned))
    if allocator is None:
        if pinned:
            torch.cuda.init()  # the library's threads allocate: CUDA is initialised here, in Python, first
        allocator = HostAllocator(pinned=pinned)
        with _ALL_LOCK:
            allocator = _SHARED.setdefault(bool(pinned), allocator)
    return allocator


def cuda_ready(what: str) -> bool:
    """Whether page-locked memory can be had (CUDA is available); if not,
    warns as torch's DataLoader does for ``pin_memory=True`` without an
    accelerator, naming ``what`` asked for it."""
    if torch.cuda.is_available():
        return True
    warnings.warn(
        f"{what} is set but no accelerator is found (torch.cuda.is_available() is False): the batches "
        "come from graphferry's host allocator in ordinary memory, not page-locked",
        stacklevel=5,  # the caller of the loader's constructor
    )
    return False


# -- interpreter exit ------------------------------------------------------------------

_users: weakref.WeakSet[Any] = weakref.WeakSet()
_hooks: list[tuple[int, Callable[[], None]]] = []


def register_user(loader: Any) -> None:
    """Closes ``loader`` (an engine loader opened with a :class:`HostAllocator`)
    at exit, before the interpreter finalizes: its threads call the
    allocator."""
    _users.add(loader)


def on_exit(order: int, hook: Callable[[], None]) -> None:
    """Runs ``hook`` at exit, before the loaders close (``order`` < 0) or
    after (``order`` > 0), in increasing order."""
    _hooks.append((order, hook))


@atexit.register
def _at_exit() -> None:
    def close_users() -> None:
        for loader in list(_users):
            loader.close()

    for _, hook in sorted([*_hooks, (0, close_users)], key=lambda h: h[0]):
        try:
            hook()
        except Exception:  # noqa: BLE001 - every hook runs
            pass

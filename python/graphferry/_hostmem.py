"""Host memory for the engine's batches: :class:`HostAllocator` is a host
pool of the C API (``gf_host_pool``, handed to the engine loaders as their
``gf_loader_options.allocator``): memory the library maps and owns, its
allocation and release plain C inside the library, so that no Python runs
per buffer. For a GPU consumer (``pinned=True``) every mapping of the pool
is page-locked once (``cudaHostRegister`` through
``torch.cuda.cudart()``), when the first batch written into it is taken
(:meth:`HostAllocator.step`, on the consumer's thread), and the pool is
fenced: a buffer whose tensors are gone is handed out again only after an
event recorded on the consumer's stream after that has completed, so that
the consumer's ``non_blocking`` copies from it (queued, not yet run) read
what the batch held. CPU-only runs take the same path without the
page-locking and the fences. A page-locked pool lives as long as the
process (its registration does).
"""

from __future__ import annotations

import bisect
import ctypes
import threading
import warnings
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

import torch

from ._native import lib as _lib
from .errors import GF_ENOMEM, GraphferryError, OutOfMemoryError

__all__ = ["HostAllocator", "shared_allocator", "cuda_ready"]

_CHUNKS_AT_ONCE = 256
_CUDA_HOST_REGISTER_PORTABLE = 1


def _cuda_page_lock(address: int, size: int) -> None:
    torch.cuda.check_error(torch.cuda.cudart().cudaHostRegister(address, size, _CUDA_HOST_REGISTER_PORTABLE))


def _cuda_stream() -> Any:
    return torch.cuda.current_stream()


def _close(pool: int) -> None:
    if not _lib.in_forked_child():  # a forked child leaves its parent's pools alone
        _lib.gf_host_pool_close(pool)


class HostAllocator:
    """The memory of a loader's batches: a host pool of the library's
    (``gf_host_pool``), page-locked for a GPU consumer (``pinned``) or not.

    Args:
        pinned (bool): every mapping page-locked (needs CUDA) and the pool
            fenced on the consumer's current CUDA stream.
        limit_bytes (int, optional): fail an allocation that would take the
            live buffers past this many bytes (a cap on page-locked memory).
            (default: :obj:`None`, no cap)
        poison (bool): fill a buffer with ``0xA5`` bytes when it becomes
            reusable (tests: a reader that still holds it sees it change).
        page_lock (callable, optional): ``page_lock(address, size)`` for
            each new mapping (default with ``pinned``: ``cudaHostRegister``).
        stream (callable, optional): returns the consumer's stream, whose
            ``record_event()`` returns an event with ``query()``; given, the
            pool is fenced (default with ``pinned``: the current CUDA stream).

    Attributes:
        allocs, frees (int): buffers handed out and given back so far.
        unknown_frees (int): frees of buffers not handed out (a bug if ever
            non-zero).
        failures (int): allocations refused.
    """

    def __init__(
        self,
        *,
        pinned: bool,
        limit_bytes: int | None = None,
        poison: bool = False,
        page_lock: Callable[[int, int], None] | None = None,
        stream: Callable[[], Any] | None = None,
    ):
        self.pinned = bool(pinned)
        if self.pinned:
            try:
                torch.cuda.init()  # here, in Python, before any page-locking
            except Exception as err:
                raise RuntimeError(f"page-locked memory needs CUDA: {err}") from err
            page_lock = page_lock or _cuda_page_lock
            stream = stream or _cuda_stream
        self.limit_bytes = None if limit_bytes is None else int(limit_bytes)
        self._page_lock = page_lock
        self._stream = stream
        flags = (_lib.GF_HOST_POOL_FENCED if stream is not None else 0) | (_lib.GF_HOST_POOL_POISON if poison else 0)
        if self.limit_bytes is not None:
            flags |= _lib.GF_HOST_POOL_LIMIT
        options = _lib.gf_host_pool_options(flags=flags, limit_bytes=self.limit_bytes or 0)
        pool = ctypes.c_void_p()
        self.struct = _lib.gf_allocator()
        _lib.gf_host_pool_open(ctypes.byref(options), ctypes.byref(pool), ctypes.byref(self.struct))
        self._pool = pool.value
        self._lock = threading.Lock()
        self._chunks: list[tuple[int, int]] = []  # (start, end), sorted; a pool unmaps none while open
        self._fences: deque[tuple[int, Any]] = deque()  # (fence, its event), oldest first
        if self.pinned:
            _PAGE_LOCKED.append(self)  # never closed: its registration lasts as long as the process
        else:
            weakref.finalize(self, _close, self._pool)

    def __repr__(self) -> str:
        kind = "pinned" if self.pinned else "pageable"
        return f"HostAllocator({kind}, {self.live_blocks} live blocks, {self.live_bytes} bytes)"

    def step(self) -> None:
        """At each batch taken, on the consumer's thread: page-locks the
        pool's new mappings (before the batch's tensors are handed out) and,
        fenced, reports the fences whose events completed and records a new
        one on the consumer's stream, after the copies it queued so far."""
        with self._lock:
            self._take_chunks()
            if self._stream is None:
                return
            passed = 0
            while self._fences and self._fences[0][1].query():
                passed = self._fences.popleft()[0]
            fence = ctypes.c_uint64()
            _lib.gf_host_pool_fence(self._pool, passed, ctypes.byref(fence))
            self._fences.append((fence.value, self._stream().record_event()))

    def _take_chunks(self) -> None:
        ptrs = (ctypes.c_void_p * _CHUNKS_AT_ONCE)()
        lens = (ctypes.c_size_t * _CHUNKS_AT_ONCE)()
        n = ctypes.c_int64(_CHUNKS_AT_ONCE)
        while n.value == _CHUNKS_AT_ONCE:
            _lib.gf_host_pool_new_chunks(self._pool, ptrs, lens, _CHUNKS_AT_ONCE, ctypes.byref(n))
            for i in range(n.value):
                if self._page_lock is not None:
                    self._page_lock(ptrs[i], lens[i])
                bisect.insort(self._chunks, (ptrs[i], ptrs[i] + lens[i]))

    # -- for the loaders and the tests ----------------------------------------------

    def _stats(self) -> Any:
        out = _lib.gf_host_pool_statistics()
        _lib.gf_host_pool_stats(self._pool, ctypes.byref(out))
        return out

    allocs = property(lambda self: self._stats().allocs)
    frees = property(lambda self: self._stats().frees)
    unknown_frees = property(lambda self: self._stats().bad_frees)
    failures = property(lambda self: self._stats().failures)
    live_blocks = property(lambda self: self._stats().live_buffers)
    live_bytes = property(lambda self: self._stats().live_bytes)
    waiting = property(lambda self: self._stats().waiting)

    def owns(self, tensor: torch.Tensor) -> bool:
        """Whether every byte of ``tensor`` (a CPU tensor) lies in one
        mapping of this pool."""
        if tensor.numel() == 0:
            return True
        start = tensor.data_ptr()
        end = start + tensor.numel() * tensor.element_size()
        with self._lock:
            self._take_chunks()
            i = bisect.bisect_right(self._chunks, (start, float("inf"))) - 1
            return i >= 0 and self._chunks[i][0] <= start and end <= self._chunks[i][1]

    @property
    def last_failure(self) -> str | None:
        """What the latest refused allocation was, or None."""
        st = self._stats()
        if st.failures == 0:
            return None
        kind = "page-locked" if self.pinned else "host"
        what = f"{kind} memory of {st.last_failure_bytes} bytes could not be allocated"
        if st.last_failure_errno == 0:
            return f"{what}: the pool's limit of {self.limit_bytes} bytes would be passed ({st.live_bytes} bytes live)"
        return f"{what}: mmap failed with errno {st.last_failure_errno}"

    def explain(self, err: GraphferryError) -> GraphferryError:
        """The library's ``GF_ENOMEM`` error ``err`` (its host allocator
        returned NULL), with the cause this pool recorded; other errors as
        they are."""
        failure = self.last_failure
        if err.code != GF_ENOMEM or failure is None:
            return err
        out = OutOfMemoryError(GF_ENOMEM, f"{err.message} (graphferry's host allocator: {failure})")
        out.__cause__ = MemoryError(failure)
        return out


_PAGE_LOCKED: list[HostAllocator] = []
_SHARED: dict[bool, HostAllocator] = {}
_SHARED_LOCK = threading.Lock()


def shared_allocator(pinned: bool) -> HostAllocator:
    """The process's pool of page-locked (``pinned``) or ordinary memory,
    shared by every loader that asks for it."""
    with _SHARED_LOCK:
        if bool(pinned) not in _SHARED:
            _SHARED[bool(pinned)] = HostAllocator(pinned=pinned)
        return _SHARED[bool(pinned)]


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

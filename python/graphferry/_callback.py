"""A Python callable as the engine's per-batch callback (``gf_batch_callback``,
include/graphferry.h): the engine calls it on the thread making each batch,
ahead of the training loop, with the batch's ids and key, and makes the batch
with the ids it returns. An exception it raises fails the batch with a
message that marks it; :func:`reraise` turns the engine's error for that
batch, where the consumer meets it, back into the exception itself, chained
to the engine's error (which names the batch)."""

from __future__ import annotations

import atexit
import ctypes
import functools
import itertools
import re
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import torch

from ._native import lib as _lib
from ._native.dlpack import ExportedTensor
from .errors import GF_EINVAL, GraphferryError

__all__ = ["BatchCallback", "reraise", "close_at_exit"]

_marks = itertools.count(1)
_MARK = re.compile(r" \[Python exception (\d+)\]")
# Exceptions kept per callback (of batches made ahead that no consumer reached).
_KEPT = 16


def _call(fn: Callable, what: str, raised: dict, lock: threading.Lock, _user, key, inp, _max, output, message, size):
    # The thunk's body, given its state: the thunk references no
    # BatchCallback (no cycle for a collection on an engine thread).
    try:
        t = _lib.DLTensor.from_address(inp)  # const DLTensor *input
        n, data = int(t.shape[0]), t.data
        ids = torch.empty(0, dtype=torch.int64)
        if n > 0:
            ids = torch.frombuffer((ctypes.c_int64 * n).from_address(data), dtype=torch.int64).clone()
        out = ExportedTensor(fn(ids, int(key)), f"{what}'s result")
        output[0] = out.pointer
        out.consumed()  # torch's deleter, called by the engine once it copied the ids
        return 0
    except BaseException as exc:  # noqa: BLE001 - a callback must not raise: handed to the consumer
        mark = next(_marks)
        with lock:
            raised[mark] = exc
            while len(raised) > _KEPT:
                raised.pop(next(iter(raised)))
        tail = f" [Python exception {mark}]".encode()
        head = f"{what} raised {type(exc).__name__}: {exc}".encode(errors="replace")
        text = head[: max(int(size) - len(tail) - 1, 0)] + tail
        ctypes.memmove(message, text + b"\0", min(len(text) + 1, int(size)))
        return GF_EINVAL


class BatchCallback:
    """``fn(ids, key)`` as a ``gf_batch_callback`` (:attr:`struct`), alive
    as long as what was opened with it: given a batch's ids (an int64
    tensor) and key, ``fn`` returns int64 or int32 ids (anything
    :func:`torch.as_tensor` takes); ``what`` names it in messages."""

    def __init__(self, fn: Callable[[torch.Tensor, int], Any], what: str):
        self._raised: dict[int, BaseException] = {}
        self._lock = threading.Lock()
        self._thunk = _lib.gf_batch_callback_fn(functools.partial(_call, fn, what, self._raised, self._lock))
        self.struct = _lib.gf_batch_callback(fn=self._thunk)


def reraise(callbacks: Sequence[BatchCallback], err: GraphferryError) -> NoReturn:
    """Raises the exception one of ``callbacks``' functions raised that
    failed the engine call ``err`` (chained to ``err``), else ``err``."""
    exc = None
    if mark := _MARK.search(err.message):
        for callback in callbacks:
            with callback._lock:
                exc = callback._raised.pop(int(mark[1]), None)
            if exc is not None:
                break
    if exc is not None and exc.__cause__ is None:
        exc.__cause__ = err
    raise err if exc is None else exc


# Loaders whose engine threads call Python (a callback), closed at exit
# before the interpreter finalizes: an engine thread must not call into a
# finalizing interpreter.
_users: weakref.WeakSet[Any] = weakref.WeakSet()


def close_at_exit(loader: Any) -> None:
    """Closes ``loader`` at interpreter exit, before Python finalizes."""
    _users.add(loader)


@atexit.register
def _close_users() -> None:
    for loader in list(_users):
        try:
            loader.close()
        except Exception:  # noqa: BLE001 - every loader closes
            pass

"""Long single library calls that Ctrl-C stops (issue 23).

A ctypes call runs no Python signal handler until it returns, so a long one
(opening a large dataset, a large random walk or sample) would hold Ctrl-C
for seconds. :func:`call` runs it on a worker thread bound to a fresh
``gf_cancel`` token while the main thread waits in short slices; a
KeyboardInterrupt (or any exception a signal handler raises) there cancels
the token, the library stops the call at its next check (GF_ECANCELED,
nothing left allocated), and the exception is raised once the worker has
returned. A call that finished first has its result released by
``discard``. Off the main thread (no signal reaches it) the call runs
directly.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from typing import Any

from ._native import lib as _lib
from .errors import GF_ECANCELED, GraphferryError

# How long each wait of the main thread lasts (s): Ctrl-C's latency before
# the cancellation is asked for.
WAIT_S = 0.02
# How long an interrupted call may take to notice its token (s) before the
# exception is raised anyway; the worker then releases what the call
# returns, and its token is left allocated (the call may still read it).
GIVE_UP_S = 0.9


def call(
    run: Callable[[], Any], discard: Callable[[Any], None] | None = None, give_up_s: float | None = GIVE_UP_S
) -> Any:
    """Returns ``run()`` (a status-returning library call that checks the
    thread's cancel token), interruptible by Ctrl-C as described above.
    ``give_up_s=None`` waits for the call however long it takes to stop:
    for writers, which remove what they wrote before returning."""
    if threading.current_thread() is not threading.main_thread():
        return run()
    tok = ctypes.c_void_p()
    _lib.gf_cancel_new(ctypes.byref(tok))
    state: dict[str, Any] = {}
    lock = threading.Lock()

    def work() -> None:
        try:
            _lib.gf_cancel_bind(tok)
            try:
                state["value"] = run()
            finally:
                _lib.gf_cancel_bind(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            state["error"] = exc
        with lock:
            state["done"] = True
            abandoned = state.get("abandoned", False)
        if abandoned and "value" in state and discard is not None:
            discard(state["value"])
        finished.set()

    # Waited for through an Event, not Thread.join: a join interrupted by
    # KeyboardInterrupt can mark a running thread as stopped (CPython 3.11).
    finished = threading.Event()
    worker = threading.Thread(target=work, name="graphferry-call", daemon=True)
    worker.start()
    interrupt: BaseException | None = None
    deadline = None
    while not finished.is_set():
        try:
            finished.wait(WAIT_S)
        except BaseException as exc:  # KeyboardInterrupt, or a handler's exception
            if interrupt is None:
                interrupt = exc
                _lib.gf_cancel_request(tok)
                deadline = None if give_up_s is None else time.monotonic() + give_up_s
            continue
        if deadline is not None and time.monotonic() > deadline:
            with lock:
                if not state.get("done"):
                    state["abandoned"] = True
                    raise interrupt  # the token stays allocated: the call may still read it
    _lib.gf_cancel_free(tok)
    if interrupt is not None:
        if "value" in state and discard is not None:
            discard(state["value"])
        err = state.get("error")
        if err is not None and not (isinstance(err, GraphferryError) and err.code == GF_ECANCELED):
            raise interrupt from err
        raise interrupt
    if "error" in state:
        err = state.pop("error")
        raise err
    return state.get("value")

"""Which graphferry library this process loads, and the fence around the CUDA one.

``pip install ./python`` ships ``lib/libgraphferry.so`` (the engine on the
CPU) and, when it could be built, ``lib/libgraphferry_cuda.so`` (the same
engine with the CUDA backend). Exactly one of them is loaded per process, at
``import graphferry`` (two Go runtimes cannot share a process):

- unset, ``cpu`` or ``auto``: the CPU library, whatever GPUs the machine has.
  The CUDA library has not yet been proven on a GPU, and no loader needs it,
  so no process loads it unless asked.
- ``GRAPHFERRY_BACKEND=cuda``: the CUDA library, after a check of the driver
  that cannot end the process (:func:`probe_driver`), or a
  :class:`BackendError` saying why it cannot be used.

The CUDA library needs the driver's ``libcuda.so.1`` to load at all, and the
CUDA binding it links (gorgonia.org/cu) initialises the driver while the
library loads and ends the process when that fails. So, before loading it,
graphferry loads the driver itself with ctypes and initialises it
(``cuInit`` is idempotent): any failure there is a Python exception naming
the cause (no driver, no device, a driver that fails to start). The device
itself (its architecture, the driver's version against the kernels' PTX, the
PTX accepted by the JIT) is checked on first use, on the device then chosen
(PyTorch's current device by default): :func:`check_device`. Nothing here
imports torch's CUDA state or changes it: ``torch.cuda`` is asked for the
current device only when it is already initialised, and graphferry's CUDA
calls push and pop their context, leaving the caller's current context (and
so PyTorch's current device) as they found it.

``GRAPHFERRY_LIB_PATH`` (a file) bypasses the choice.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ENV_BACKEND = "GRAPHFERRY_BACKEND"
CPU_LIB = "libgraphferry.so"
CUDA_LIB = "libgraphferry_cuda.so"
#: Written beside the libraries by python/setup.py when the CUDA library was not built: why.
CUDA_MISSING = "libgraphferry_cuda.missing"
DRIVER_LIB = "libcuda.so.1"
BACKENDS = ("auto", "cpu", "cuda")

#: The backend chosen by :func:`library_path` in this process ("cpu",
#: "cuda" or "explicit"), None before the library is chosen.
BACKEND: str | None = None

#: What :func:`probe_driver` found when the CUDA backend was chosen.
DRIVER: dict[str, Any] | None = None

#: Why the backend asked for could not load, in ``graphferry info``, which
#: loads the CPU library and reports it (:func:`_reporting`); elsewhere it raises.
ERROR = ""


class BackendError(RuntimeError):
    """The requested backend cannot be used in this process."""


# ---------------------------------------------------------------------------
# The driver, before the CUDA library is loaded
# ---------------------------------------------------------------------------

_CUDA_ERROR_NO_DEVICE = 100
_CUDA_ERROR_INSUFFICIENT_DRIVER = 35


def _driver_error_name(drv: ctypes.CDLL, code: int) -> str:
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    try:
        if drv.cuGetErrorName(code, ctypes.byref(name)) != 0 or not name.value:
            return f"CUDA error {code}"
        s = f"{name.value.decode()} ({code})"
        if drv.cuGetErrorString(code, ctypes.byref(text)) == 0 and text.value:
            s += ": " + text.value.decode()
        return s
    except AttributeError:
        return f"CUDA error {code}"


def probe_driver(libname: str = DRIVER_LIB) -> dict[str, Any]:
    """Loads the CUDA driver with ctypes and initialises it; returns
    ``{"driver_version": int, "devices": int}`` or raises
    :class:`BackendError` naming why the CUDA backend cannot start here.
    Creates no context: PyTorch's CUDA state is untouched."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    where = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
    try:
        drv = ctypes.CDLL(libname)
    except OSError as err:
        raise BackendError(
            f"graphferry: {ENV_BACKEND}=cuda, but the NVIDIA driver library {libname} cannot be loaded ({err}): "
            f"this machine has no NVIDIA driver. Use {ENV_BACKEND}=cpu."
        ) from None
    rc = drv.cuInit(0)
    if rc == _CUDA_ERROR_NO_DEVICE:
        raise BackendError(f"graphferry: {ENV_BACKEND}=cuda, but the driver sees no CUDA device{where}.")
    if rc == _CUDA_ERROR_INSUFFICIENT_DRIVER:
        raise BackendError(
            f"graphferry: {ENV_BACKEND}=cuda, but the NVIDIA driver is too old to initialise "
            f"({_driver_error_name(drv, rc)}); update the driver."
        )
    if rc != 0:
        why = _driver_error_name(drv, rc)
        raise BackendError(f"graphferry: {ENV_BACKEND}=cuda, but the NVIDIA driver failed to initialise: {why}.")
    version, count = ctypes.c_int(0), ctypes.c_int(0)
    rc = drv.cuDriverGetVersion(ctypes.byref(version))
    if rc != 0:
        raise BackendError(f"graphferry: cuDriverGetVersion failed: {_driver_error_name(drv, rc)}")
    rc = drv.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0:
        raise BackendError(f"graphferry: cuDeviceGetCount failed: {_driver_error_name(drv, rc)}")
    if count.value == 0:
        raise BackendError(f"graphferry: {ENV_BACKEND}=cuda, but the driver sees no CUDA device{where}.")
    return {"driver_version": version.value, "devices": count.value}


# ---------------------------------------------------------------------------
# The choice
# ---------------------------------------------------------------------------


def requested(environ: Mapping[str, str] = os.environ) -> str:
    """The backend ``GRAPHFERRY_BACKEND`` asks for: "cpu" or "cuda"."""
    raw = environ.get(ENV_BACKEND, "")
    value = raw.strip().lower() or "cpu"
    if value not in BACKENDS:
        raise BackendError(f"graphferry: {ENV_BACKEND}={raw!r} is not one of " + ", ".join(BACKENDS))
    return "cpu" if value == "auto" else value


def choose(
    libdir: Path,
    environ: Mapping[str, str] = os.environ,
    probe: Callable[[], dict[str, Any]] = probe_driver,
) -> tuple[str, Path, dict[str, Any] | None]:
    """Returns (backend, library path, driver facts or None) for a package
    whose libraries are in ``libdir``, as ``GRAPHFERRY_BACKEND`` in
    ``environ`` asks; ``probe`` checks the driver (called only for "cuda")."""
    backend = requested(environ)
    if backend == "cpu":
        return "cpu", libdir / CPU_LIB, None
    cuda_path = libdir / CUDA_LIB
    if not cuda_path.is_file():
        raise BackendError(
            f"graphferry: {ENV_BACKEND}=cuda, but {cuda_path} was not built {cuda_missing(libdir)}".rstrip()
            + ". Install graphferry's wheel, which carries it, or build from source with NVRTC available "
            "(torch's nvidia-cuda-nvrtc-cu12: pip install --no-build-isolation, torch installed first) and "
            f"without GRAPHFERRY_BUILD_CUDA=0 (in a checkout: make lib-cuda); or use {ENV_BACKEND}=cpu."
        )
    return "cuda", cuda_path, probe()


def library_path(libdir: Path, explicit: bool = False) -> Path:
    """The library this process loads from ``libdir`` (see :func:`choose`);
    records the backend in :data:`BACKEND`. With ``explicit`` (a
    ``GRAPHFERRY_LIB_PATH`` was given) nothing is chosen: the CPU library is
    only the fallback path, and :data:`BACKEND` is "explicit"."""
    global BACKEND, DRIVER
    if explicit:
        BACKEND = "explicit"
        return libdir / CPU_LIB
    global ERROR
    try:
        BACKEND, path, DRIVER = choose(libdir)
    except BackendError as err:
        if not _reporting():
            raise
        ERROR, BACKEND, path = str(err), "cpu", libdir / CPU_LIB
    return path


def _reporting(argv: Any = None) -> bool:
    """True in ``graphferry info`` (``python -m graphferry info``: while -m
    locates the package, ``sys.argv[0]`` is "-m"), which reports a backend
    that cannot load instead of ending in a traceback (the package is
    imported before the command runs)."""
    argv = sys.argv if argv is None else argv
    return argv[1:2] == ["info"] and (argv[0] == "-m" or os.path.basename(argv[0]) == "graphferry")


def cuda_missing(libdir: Path) -> str:
    """Why ``libdir`` holds no CUDA library, "(<as its build recorded it>)", or ""."""
    why = libdir / CUDA_MISSING
    return f"({why.read_text().strip()})" if why.is_file() else ""


# ---------------------------------------------------------------------------
# Devices (the CUDA library's hooks are declared in lib.py: CudaHooks)
# ---------------------------------------------------------------------------


def device_ordinal(device: Any = None) -> int:
    """The CUDA device ordinal of ``device`` (an int, "cuda", "cuda:N" or a
    ``torch.device``); None means PyTorch's current device when PyTorch has
    initialised CUDA, else 0 (asking PyTorch would initialise it)."""
    if device is None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            return int(torch.cuda.current_device())
        return 0
    if isinstance(device, bool):
        raise TypeError(f"device must be an int, 'cuda[:N]' or a torch.device, not {device!r}")
    if isinstance(device, int):
        ordinal = device
    else:
        text = str(device)
        kind, _, index = text.partition(":")
        if kind != "cuda":
            raise ValueError(f"device {device!r} is not a CUDA device")
        if not index:
            return device_ordinal(None)
        try:
            ordinal = int(index)
        except ValueError:
            raise ValueError(f"device {device!r} is not a CUDA device") from None
    if ordinal < 0:
        raise ValueError(f"device ordinal {ordinal} is negative")
    return ordinal


_checked: dict[int, dict[str, Any]] = {}
_checked_lock = threading.Lock()


def check_device(hooks: Any, device: Any = None) -> dict[str, Any]:
    """Checks, once per device, that graphferry's CUDA backend works on it
    (the device exists, its architecture is sm_70 or newer, the driver is
    new enough for the kernels' PTX, the driver accepts the PTX) and returns
    what it found; raises :class:`BackendError` naming why not."""
    ordinal = device_ordinal(device)
    with _checked_lock:
        if ordinal not in _checked:
            _checked[ordinal] = hooks.check(ordinal)
        return dict(_checked[ordinal])

"""Which graphferry library this process loads: the CPU one or the CUDA one.

``pip install ./python`` ships ``lib/libgraphferry.so`` (the engine on the
CPU) and, when it could be built, ``lib/libgraphferry_cuda.so`` (the same
engine with the CUDA backend). Exactly one of them is loaded per process, at
``import graphferry``:

- ``GRAPHFERRY_BACKEND=cpu``: the CPU library.
- ``GRAPHFERRY_BACKEND=cuda``: the CUDA library; an error when it was not
  built or no GPU is usable (``torch.cuda.is_available()`` is False).
- unset or ``auto``: the CUDA library when it was built and a GPU is usable,
  else the CPU library.

A CPU-only process never loads the CUDA library: that library needs the
driver's ``libcuda.so.1`` to load at all, and the CUDA bindings it links
(gorgonia.org/cu) initialise the driver when it loads and end the process
when that fails. ``GRAPHFERRY_LIB_PATH`` (a file) bypasses the choice.

torch is imported only to ask whether a GPU is usable, and only when the
CUDA library exists and the choice depends on it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Callable

ENV_BACKEND = "GRAPHFERRY_BACKEND"
CPU_LIB = "libgraphferry.so"
CUDA_LIB = "libgraphferry_cuda.so"
BACKENDS = ("auto", "cpu", "cuda")

#: The backend chosen by :func:`library_path` in this process ("cpu" or
#: "cuda"), None before the library is chosen.
BACKEND: str | None = None


class BackendError(RuntimeError):
    """The requested backend cannot be used in this process."""


def gpu_usable() -> bool:
    """True when PyTorch is installed and sees a usable CUDA GPU."""
    try:
        import torch
    except ImportError:
        return False
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # a broken driver install counts as no GPU
        return False


def choose(
    libdir: Path,
    environ: Mapping[str, str] = os.environ,
    gpu: Callable[[], bool] = gpu_usable,
) -> tuple[str, Path]:
    """Returns (backend, library path) for a package whose libraries are in
    ``libdir``, as ``GRAPHFERRY_BACKEND`` in ``environ`` asks; ``gpu`` says
    whether a GPU is usable (called only when the answer matters)."""
    requested = environ.get(ENV_BACKEND, "").strip().lower() or "auto"
    if requested not in BACKENDS:
        raise BackendError(
            f"graphferry: {ENV_BACKEND}={environ.get(ENV_BACKEND)!r} is not one of " + ", ".join(BACKENDS)
        )
    cpu_path, cuda_path = libdir / CPU_LIB, libdir / CUDA_LIB
    if requested == "cpu":
        return "cpu", cpu_path
    if requested == "cuda":
        if not cuda_path.is_file():
            raise BackendError(
                f"graphferry: {ENV_BACKEND}=cuda, but the CUDA library {cuda_path} was not built. "
                "Install graphferry with the CUDA library (pip install ./python with NVRTC "
                "available, i.e. torch's nvidia-cuda-nvrtc-cu12, and without "
                "GRAPHFERRY_BUILD_CUDA=0; or make lib-cuda), or use "
                f"{ENV_BACKEND}=cpu."
            )
        if not gpu():
            raise BackendError(
                f"graphferry: {ENV_BACKEND}=cuda, but no GPU is usable in this process "
                "(torch.cuda.is_available() is False). Use a machine with an NVIDIA GPU and "
                f"driver, or {ENV_BACKEND}=cpu."
            )
        return "cuda", cuda_path
    if cuda_path.is_file() and gpu():
        return "cuda", cuda_path
    return "cpu", cpu_path


def library_path(libdir: Path, explicit: bool = False) -> Path:
    """The library this process loads from ``libdir`` (see :func:`choose`);
    records the backend in :data:`BACKEND`. With ``explicit`` (a
    ``GRAPHFERRY_LIB_PATH`` was given) nothing is chosen: the CPU library is
    only the fallback path, and :data:`BACKEND` is "explicit"."""
    global BACKEND
    if explicit:
        BACKEND = "explicit"
        return libdir / CPU_LIB
    BACKEND, path = choose(libdir)
    return path

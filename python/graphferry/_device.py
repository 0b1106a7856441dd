"""Mode 2 (sampling and gathering on the GPU) for the DGL and PyG loaders:
which mode a loader runs in, and the engine options it opens with.

Mode 2 runs only when asked (:func:`choose_mode`), for a CUDA ``device``:

- ``sample_on="cuda"``: the CUDA library samples and gathers on the device;
  batches arrive as device tensors through DLPack, the consumer's stream
  waiting on the producer's event. The topology goes to device memory when
  it fits (else pinned host memory read in place), and as many feature rows
  as fit in free device memory less ``reserve_bytes`` (nodes of highest
  in-degree first); the rest are read in place.
- ``use_uva=True`` (DGL): mode 2 with the topology and every feature row
  in pinned host memory, read in place by the kernels (nothing copied to
  the device up front), as DGL's UVA sampling reads a pinned graph.
  Pinned host memory is the dataset's mapped files and the caller's
  tensors, page-locked in place; what the engine built itself (a topology
  from edges, renumbered node data) is first copied into pinned memory
  (``docs/limitations.md``).
- otherwise (``sample_on=None`` or ``"cpu"``): mode 1, the CPU engine
  samples and gathers into page-locked memory and the batches are handed
  to the device. The path never depends on the machine (its free memory,
  the library loaded).

Asking for mode 2 with the CPU library loaded raises
:class:`graphferry.BackendError` saying to set ``GRAPHFERRY_BACKEND=cuda``
before importing graphferry. With a CPU (or no) ``device``, ``sample_on``
must be None or ``"cpu"`` and ``use_uva`` False.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._native import backend as _backend
from ._native import lib as _lib
from ._native.backend import BackendError

SAMPLE_ON = (None, "cpu", "cuda")


@dataclass(frozen=True)
class DeviceOptions:
    """The engine's device options (``gf_loader_options.device`` and the
    fields after it) of a mode-2 loader."""

    ordinal: int
    topology: int = _lib.GF_TOPOLOGY_AUTO
    cache_bytes: int = -1  # -1: auto; 0: every row read in place
    reserve_bytes: int = 0


@dataclass(frozen=True)
class ModeChoice:
    """What :func:`choose_mode` picked: ``sample_on`` ``"cpu"`` (mode 1, or
    CPU training without a device) or ``"cuda"`` (mode 2, with ``device``
    the engine's options), and why."""

    sample_on: str
    reason: str
    device: DeviceOptions | None = None


def choose_mode(
    device: Any,
    *,
    sample_on: str | None = None,
    use_uva: bool = False,
    reserve_bytes: int = 0,
    backend: str | None = None,
) -> ModeChoice:
    """The mode a loader with ``device`` runs in (see the module's
    docstring); ``backend`` is the library loaded (None: this process's)."""
    if sample_on not in SAMPLE_ON:
        raise ValueError(f"sample_on must be None, 'cpu' or 'cuda' (got {sample_on!r})")
    if not isinstance(use_uva, bool):
        raise TypeError(f"use_uva must be a bool (got {type(use_uva).__name__})")
    if isinstance(reserve_bytes, bool) or not isinstance(reserve_bytes, int) or reserve_bytes < 0:
        raise ValueError(f"reserve_bytes must be an int >= 0 (got {reserve_bytes!r})")
    kind = None if device is None else getattr(device, "type", str(device).partition(":")[0])
    what = "sample_on='cuda'" if sample_on == "cuda" else "use_uva=True"
    if kind != "cuda":
        if sample_on == "cuda" or use_uva:
            raise ValueError(f"{what} samples on a GPU: give device='cuda' (device is {device!r})")
        return ModeChoice("cpu", "no CUDA device: the CPU engine")
    if use_uva and sample_on == "cpu":
        raise ValueError("use_uva=True samples on the GPU, sample_on='cpu' on the CPU: give one of them")
    if sample_on != "cuda" and not use_uva:
        why = "sample_on='cpu'" if sample_on == "cpu" else "device='cuda' without sample_on='cuda'"
        return ModeChoice("cpu", f"{why}: mode 1 (CPU sampling, the pinned hand-off to the device)")
    backend = ("cuda" if _lib.CUDA is not None else str(_backend.BACKEND)) if backend is None else backend
    if backend != "cuda":
        raise BackendError(
            f"graphferry: {what} samples on the GPU, which needs graphferry's CUDA backend, but this process "
            f"loaded the {backend} library: set GRAPHFERRY_BACKEND=cuda before importing graphferry "
            "(or use sample_on='cpu')"
        )
    index = getattr(device, "index", None)
    ordinal = _backend.device_ordinal(index if index is not None else None)
    if use_uva:
        return ModeChoice(
            "cuda",
            "use_uva=True: mode 2, topology and features read in place from pinned host memory",
            DeviceOptions(ordinal, _lib.GF_TOPOLOGY_PINNED, 0, 0),
        )
    options = DeviceOptions(ordinal, _lib.GF_TOPOLOGY_AUTO, -1, reserve_bytes)
    return ModeChoice("cuda", "sample_on='cuda': mode 2", options)

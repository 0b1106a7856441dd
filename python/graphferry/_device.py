"""Mode 2 (sampling and gathering on the GPU) for the DGL and PyG loaders:
which mode ``device="cuda"`` picks, and the engine options it opens with.

The choice (:func:`choose_mode`), for a CUDA ``device``:

- ``sample_on="cpu"``: mode 1 (the CPU engine samples and gathers into
  page-locked memory; the prefetch step copies to the device).
- ``sample_on="cuda"``: mode 2 (the CUDA library samples and gathers on
  the device; batches arrive as device tensors through DLPack, the
  consumer's stream waiting on the producer's event). The topology goes to
  device memory when it fits (else pinned host memory read in place), and
  as many feature rows as fit in free device memory less ``reserve_bytes``
  (nodes of highest in-degree first); the rest are read in place.
- ``use_uva=True`` (DGL): mode 2 with the topology and every feature row
  in pinned host memory, read in place by the kernels (nothing copied to
  the device up front), as DGL's UVA sampling reads a pinned graph.
  Pinned host memory is the dataset's mapped files and the caller's
  tensors, page-locked in place; what the engine built itself (a topology
  from edges, renumbered node data) is first copied into pinned memory
  (``docs/limitations.md``).
- neither (``sample_on=None``): mode 2 when the CUDA library is loaded and
  the graph (topology and the requested node data) fits in the device's
  free memory less ``reserve_bytes``; mode 1 otherwise.

Asking for mode 2 with the CPU library loaded raises
:class:`graphferry.BackendError` saying to set ``GRAPHFERRY_BACKEND=cuda``
before importing graphferry. With a CPU (or no) ``device``, ``sample_on``
must be None or ``"cpu"`` and ``use_uva`` False.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from ._native import backend as _backend
from ._native import lib as _lib
from ._native.backend import BackendError

SAMPLE_ON = (None, "cpu", "cuda")

# bytes of the topology per node and per edge (indptr; indices and edge ids)
_TOPOLOGY_NODE_BYTES = 8
_TOPOLOGY_EDGE_BYTES = 16


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


def graph_bytes(num_nodes: int, num_edges: int, node_data_bytes: int = 0) -> int:
    """The device memory a graph takes in mode 2 when all of it is placed:
    its topology and ``node_data_bytes`` of node data."""
    return _TOPOLOGY_NODE_BYTES * (num_nodes + 1) + _TOPOLOGY_EDGE_BYTES * num_edges + node_data_bytes


def free_device_bytes(ordinal: int) -> int:
    """The free memory of CUDA device ``ordinal``: PyTorch's view when it
    sees the device, else the device's total memory as the CUDA library's
    check reports it (the fake driver of the tests)."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        free, _ = torch.cuda.mem_get_info(ordinal)
        return int(free)
    if _lib.CUDA is None:
        return 0
    return int(_backend.check_device(_lib.CUDA, ordinal)["total_memory_bytes"])


def _backend_name() -> str:
    return "cuda" if _lib.CUDA is not None else str(_backend.BACKEND)


def choose_mode(
    device: Any,
    *,
    sample_on: str | None = None,
    use_uva: bool = False,
    graph_size: int | None = None,
    free_bytes: int | None = None,
    reserve_bytes: int = 0,
    backend: str | None = None,
) -> ModeChoice:
    """The mode a loader with ``device`` runs in (see the module's
    docstring). ``graph_size`` is :func:`graph_bytes` of the graph;
    ``free_bytes`` the device's free memory (None: :func:`free_device_bytes`,
    asked only when mode 2 is possible); ``backend`` the library loaded
    (None: this process's)."""
    if sample_on not in SAMPLE_ON:
        raise ValueError(f"sample_on must be None, 'cpu' or 'cuda' (got {sample_on!r})")
    if not isinstance(use_uva, bool):
        raise TypeError(f"use_uva must be a bool (got {type(use_uva).__name__})")
    if isinstance(reserve_bytes, bool) or not isinstance(reserve_bytes, int) or reserve_bytes < 0:
        raise ValueError(f"reserve_bytes must be an int >= 0 (got {reserve_bytes!r})")
    kind = None if device is None else getattr(device, "type", str(device).partition(":")[0])
    if kind != "cuda":
        if sample_on == "cuda" or use_uva:
            what = "sample_on='cuda'" if sample_on == "cuda" else "use_uva=True"
            raise ValueError(f"{what} samples on a GPU: give device='cuda' (device is {device!r})")
        return ModeChoice("cpu", "no CUDA device: the CPU engine")
    if use_uva and sample_on == "cpu":
        raise ValueError("use_uva=True samples on the GPU, sample_on='cpu' on the CPU: give one of them")
    backend = _backend_name() if backend is None else backend
    index = getattr(device, "index", None)
    ordinal = _backend.device_ordinal(index if index is not None else None)
    if sample_on == "cpu":
        return ModeChoice("cpu", "sample_on='cpu': mode 1 (CPU sampling, copies to the device)")
    if sample_on == "cuda" or use_uva:
        if backend != "cuda":
            what = "sample_on='cuda'" if sample_on == "cuda" else "use_uva=True"
            raise BackendError(
                f"graphferry: {what} samples on the GPU, which needs graphferry's CUDA backend, but this process "
                f"loaded the {backend} library: set GRAPHFERRY_BACKEND=cuda before importing graphferry "
                "(or use sample_on='cpu')"
            )
        if use_uva:
            return ModeChoice(
                "cuda",
                "use_uva=True: mode 2, topology and features read in place from pinned host memory",
                DeviceOptions(ordinal, _lib.GF_TOPOLOGY_PINNED, 0, 0),
            )
        return ModeChoice(
            "cuda",
            "sample_on='cuda': mode 2",
            DeviceOptions(ordinal, _lib.GF_TOPOLOGY_AUTO, -1, reserve_bytes),
        )
    if backend != "cuda":
        return ModeChoice(
            "cpu", f"mode 1: the {backend} library is loaded (GRAPHFERRY_BACKEND=cuda samples on the GPU)"
        )
    if graph_size is None:
        return ModeChoice("cpu", "mode 1: the graph's size is unknown")
    free = free_device_bytes(ordinal) if free_bytes is None else free_bytes
    if graph_size + reserve_bytes > free:
        return ModeChoice(
            "cpu",
            f"mode 1: the graph ({graph_size} bytes) and the reserve ({reserve_bytes} bytes) do not fit "
            f"in the device's {free} free bytes",
        )
    return ModeChoice(
        "cuda",
        f"mode 2: the graph ({graph_size} bytes) fits in the device's {free} free bytes",
        DeviceOptions(ordinal, _lib.GF_TOPOLOGY_DEVICE, -1, reserve_bytes),
    )

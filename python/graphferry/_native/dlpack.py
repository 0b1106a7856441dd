"""DLPack across the ctypes boundary, without copies (the structs are declared
in :mod:`graphferry._native.lib`).

Three directions, as include/graphferry.h defines them:

* Outputs (``DLManagedTensor *`` returned by the library, owned by the
  caller): wrapped in a :class:`ManagedTensor`, which speaks the array API's
  ``__dlpack__`` protocol and is handed to :func:`torch.from_dlpack`. A
  consumer that asks for DLPack 1.x (``max_version=(1, ...)``, torch >= 2.9)
  gets a ``"dltensor_versioned"`` capsule of a ``DLManagedTensorVersioned``
  (converted by ``gf_tensor_to_versioned``, no copy); one that does not
  (torch 2.2) gets the legacy ``"dltensor"`` capsule. The consumer takes
  ownership and renames the capsule ``"used_..."``; the capsule's destructor
  calls the deleter only if the capsule still carries its first name, that
  is, if no consumer took it (dlpack's python_spec).
* Borrowed inputs (``const DLTensor *``): :class:`BorrowedTensor` builds a
  DLTensor struct that points at a contiguous CPU tensor's memory and keeps the
  tensor alive for as long as the struct is.
* Owned inputs (``DLManagedTensor *`` whose ownership moves on success, as in
  ``gf_graph_set_node_data``): :class:`ExportedTensor` takes torch's own
  ``to_dlpack`` capsule; :meth:`ExportedTensor.consumed` renames it to
  ``"used_dltensor"`` so that torch does not free it a second time.
"""

from __future__ import annotations

import ctypes
import warnings
from typing import Any

import numpy as np
import torch
import torch.utils.dlpack

from . import lib
from .lib import (
    DLPACK_DELETER,
    DLPACK_MAJOR_VERSION,
    DLDataType,
    DLDevice,
    DLManagedTensor,
    DLManagedTensorVersioned,
    DLTensor,
    PyCapsule_Destructor,
    PyCapsule_GetPointer,
    PyCapsule_GetPointer_raw,
    PyCapsule_IsValid,
    PyCapsule_New,
    PyCapsule_SetName,
    kDLBfloat,
    kDLBool,
    kDLComplex,
    kDLCPU,
    kDLCUDA,
    kDLFloat,
    kDLInt,
    kDLUInt,
)

__all__ = [
    "DeviceTensor",
    "ManagedTensor",
    "BorrowedTensor",
    "ExportedTensor",
    "as_cpu_tensor",
    "borrow",
    "ref_or_null",
    "tensor_from_managed",
]

# Capsule names must outlive the capsules: module-level constants do.
_DLTENSOR = b"dltensor"
_USED_DLTENSOR = b"used_dltensor"
_DLTENSOR_VERSIONED = b"dltensor_versioned"
_USED_DLTENSOR_VERSIONED = b"used_dltensor_versioned"


@PyCapsule_Destructor
def _capsule_destructor(capsule: int) -> None:
    # Module-level so that it lives as long as any capsule that points at it.
    # Runs when a capsule is collected: frees the tensor only if no consumer
    # renamed (took) it.
    if PyCapsule_IsValid(capsule, _DLTENSOR):
        managed = PyCapsule_GetPointer_raw(capsule, _DLTENSOR)
        if managed:
            _call_deleter(managed)


def _call_deleter(managed: int) -> None:
    deleter = DLManagedTensor.from_address(managed).deleter
    if deleter:
        DLPACK_DELETER(deleter)(managed)


@PyCapsule_Destructor
def _versioned_capsule_destructor(capsule: int) -> None:
    # As _capsule_destructor, for "dltensor_versioned" capsules.
    if PyCapsule_IsValid(capsule, _DLTENSOR_VERSIONED):
        managed = PyCapsule_GetPointer_raw(capsule, _DLTENSOR_VERSIONED)
        if managed:
            _call_versioned_deleter(managed)


def _call_versioned_deleter(managed: int) -> None:
    # The deleter sits at the same place in every DLPack 1.x and later
    # layout, so it may be called whatever the tensor's version.
    deleter = DLManagedTensorVersioned.from_address(managed).deleter
    if deleter:
        DLPACK_DELETER(deleter)(managed)


_CAPSULE_DESTRUCTOR_PTR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value
_VERSIONED_CAPSULE_DESTRUCTOR_PTR = ctypes.cast(_versioned_capsule_destructor, ctypes.c_void_p).value


def _capsule(managed: int, max_version: tuple[int, int] | None) -> Any:
    """A capsule handing the ``DLManagedTensor *`` over: a DLPack 1.x
    ``"dltensor_versioned"`` one when the consumer's ``max_version`` allows,
    else a legacy ``"dltensor"`` one. On failure ``managed`` is still the
    caller's."""
    if max_version is not None and max_version[0] >= DLPACK_MAJOR_VERSION:
        out = ctypes.c_void_p()
        lib.gf_tensor_to_versioned(managed, ctypes.byref(out))
        return PyCapsule_New(out.value, _DLTENSOR_VERSIONED, _VERSIONED_CAPSULE_DESTRUCTOR_PTR)
    return PyCapsule_New(managed, _DLTENSOR, _CAPSULE_DESTRUCTOR_PTR)


class ManagedTensor:
    """A tensor the library returned (a ``DLManagedTensor *`` the caller
    owns), offered to any DLPack consumer through the array API's
    ``__dlpack__`` / ``__dlpack_device__`` protocol.

    ``__dlpack__`` hands the tensor over once: with ``max_version`` of major
    1 or more (DLPack 1.x consumers such as torch >= 2.9) as a
    ``"dltensor_versioned"`` capsule of a ``DLManagedTensorVersioned``
    (version 1.1, flag ``IS_COPIED``: the memory is the consumer's alone),
    otherwise as a legacy ``"dltensor"`` capsule. A tensor never handed over
    is freed with this object.
    """

    __slots__ = ("_managed",)

    def __init__(self, managed: int):
        if not managed:
            raise ValueError("ManagedTensor: NULL DLManagedTensor")
        self._managed: int | None = managed

    def __dlpack_device__(self) -> tuple[int, int]:
        return (kDLCPU, 0)

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        # stream: CPU memory needs no synchronisation. copy: the memory is
        # already the consumer's alone, so handing it over satisfies both
        # copy=True and copy=False.
        if dl_device is not None and tuple(dl_device) != (kDLCPU, 0):
            raise BufferError(f"graphferry tensors are CPU tensors; cannot export to device {tuple(dl_device)}")
        managed = self._managed
        if managed is None:
            raise BufferError("this graphferry tensor was already exported through __dlpack__")
        capsule = _capsule(managed, max_version)  # raises, keeping managed ours
        self._managed = None
        return capsule

    def __del__(self) -> None:
        managed, self._managed = getattr(self, "_managed", None), None
        if managed:
            _call_deleter(managed)


class DeviceTensor:
    """A device tensor of a mode-2 batch (``kDLCUDA``), still in its batch:
    ``__dlpack__(stream=S)`` makes the consumer's stream ``S`` wait for the
    batch's ready event (``gf_batch_wait_stream``: the host does not wait),
    then takes the tensor out as a capsule; the memory is reused only after
    the work queued on ``S`` when its deleter ran. ``stream`` follows the
    array API's CUDA convention: None or 1 the legacy default stream, 2 the
    per-thread default stream, -1 no wait (the consumer orders its reads
    itself and finishes them before deleting the tensor), any other int a
    ``CUstream``; 0 is refused as ambiguous. ``torch.from_dlpack`` passes
    its current stream. Once only, while the batch is open."""

    __slots__ = ("_batch", "_take", "_ordinal")

    def __init__(self, batch: int, take: Any, ordinal: int):
        self._batch: int | None = batch
        self._take = take  # () -> DLManagedTensor * (the legacy tensor, ours)
        self._ordinal = ordinal

    def __dlpack_device__(self) -> tuple[int, int]:
        return (kDLCUDA, self._ordinal)

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        if dl_device is not None and tuple(dl_device) != (kDLCUDA, self._ordinal):
            raise BufferError(
                f"this graphferry tensor is on CUDA device {self._ordinal}; cannot export to {tuple(dl_device)}"
            )
        if copy:
            raise BufferError("graphferry hands device tensors over without a copy (copy=True is not offered)")
        batch = self._batch
        if batch is None:
            raise BufferError("this graphferry tensor was already exported through __dlpack__")
        if stream is None:
            stream = 1  # the legacy default stream (the array API's default for CUDA)
        if isinstance(stream, bool) or not isinstance(stream, int):
            raise TypeError(f"stream must be an int or None (got {type(stream).__name__})")
        if stream == 0:
            raise ValueError(
                "stream=0 is ambiguous for CUDA: pass 1 (legacy default), 2 (per-thread default) or a CUstream"
            )
        if stream != -1:
            lib.gf_batch_wait_stream(batch, stream)
        managed = self._take()
        self._batch = None
        try:
            return _capsule(managed, max_version)
        except BaseException:
            _call_deleter(managed)
            raise


def tensor_from_managed(managed: int) -> torch.Tensor:
    """Wraps a ``DLManagedTensor *`` the caller owns as a torch tensor.

    Ownership moves to the returned tensor, whose memory is the library's
    (no copy); torch calls the deleter when the tensor is freed. The tensor
    travels as DLPack 1.x when this torch asks for it (see
    :class:`ManagedTensor`). If torch refuses the tensor, it is freed.
    """
    if not managed:
        raise ValueError("tensor_from_managed: NULL DLManagedTensor")
    return torch.from_dlpack(ManagedTensor(managed))


# torch dtype -> (DLDataTypeCode, bits)
_DTYPE_CODES: dict[torch.dtype, tuple[int, int]] = {
    torch.bool: (kDLBool, 8),
    torch.uint8: (kDLUInt, 8),
    torch.int8: (kDLInt, 8),
    torch.int16: (kDLInt, 16),
    torch.int32: (kDLInt, 32),
    torch.int64: (kDLInt, 64),
    torch.float16: (kDLFloat, 16),
    torch.bfloat16: (kDLBfloat, 16),
    torch.float32: (kDLFloat, 32),
    torch.float64: (kDLFloat, 64),
    torch.complex64: (kDLComplex, 64),
    torch.complex128: (kDLComplex, 128),
}
for _name, _code in (("uint16", (kDLUInt, 16)), ("uint32", (kDLUInt, 32)), ("uint64", (kDLUInt, 64))):
    if hasattr(torch, _name):  # torch >= 2.3
        _DTYPE_CODES[getattr(torch, _name)] = _code


def as_cpu_tensor(obj: Any, name: str) -> torch.Tensor:
    """Returns ``obj`` as a contiguous CPU torch tensor, sharing its memory.

    Accepts a :class:`torch.Tensor`, a :class:`numpy.ndarray` or a list/tuple/
    range of numbers. Only the Python type and the device are checked here;
    dtype, shape and values are the library's to validate.

    Raises:
        TypeError: ``obj`` is of another type, or a non-CPU tensor (this
            version of graphferry is CPU-only).
    """
    if isinstance(obj, torch.Tensor):
        tensor = obj
    elif isinstance(obj, np.ndarray):
        try:
            with warnings.catch_warnings():
                # Read-only arrays (np.load with mmap_mode="r") are fine: the
                # library never writes to its inputs.
                warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
                tensor = torch.from_numpy(np.ascontiguousarray(obj))
        except TypeError as err:
            raise TypeError(f"'{name}': numpy dtype {obj.dtype} has no torch equivalent ({err})") from None
    elif isinstance(obj, (list, tuple, range)):
        tensor = torch.as_tensor(obj)
    else:
        raise TypeError(f"'{name}': expected a torch.Tensor or numpy.ndarray (got '{type(obj).__name__}')")
    if tensor.device.type != "cpu":
        raise TypeError(
            f"'{name}': expected a CPU tensor; this version of graphferry is CPU-only "
            f"(got a tensor on '{tensor.device}')"
        )
    return tensor.detach().contiguous()


class BorrowedTensor:
    """A ``DLTensor`` describing a contiguous CPU tensor, for borrowed inputs.

    The struct points at the tensor's memory; this object keeps the tensor and
    the shape array alive, so keep it referenced until the C call returns.
    """

    __slots__ = ("tensor", "_shape", "dltensor")

    def __init__(self, obj: Any, name: str):
        tensor = as_cpu_tensor(obj, name)
        try:
            code, bits = _DTYPE_CODES[tensor.dtype]
        except KeyError:
            raise TypeError(f"'{name}': dtype {tensor.dtype} cannot be described in DLPack") from None
        self.tensor = tensor
        self._shape = (ctypes.c_int64 * max(tensor.dim(), 1))(*tensor.shape)
        self.dltensor = DLTensor(
            data=tensor.data_ptr() or None,
            device=DLDevice(kDLCPU, 0),
            ndim=tensor.dim(),
            dtype=DLDataType(code, bits, 1),
            shape=ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64)),
            strides=None,  # compact row-major
            byte_offset=0,
        )

    @property
    def ref(self):
        """A ``const DLTensor *`` for ctypes (``ctypes.byref``)."""
        return ctypes.byref(self.dltensor)


def borrow(obj: Any, name: str) -> BorrowedTensor | None:
    """:class:`BorrowedTensor` of ``obj``, or None (a NULL pointer) for None."""
    return None if obj is None else BorrowedTensor(obj, name)


def ref_or_null(borrowed: BorrowedTensor | None):
    return None if borrowed is None else borrowed.ref


class ExportedTensor:
    """A ``DLManagedTensor *`` of a CPU tensor, for inputs whose ownership moves.

    Made with torch's own ``to_dlpack``, so the memory is shared and torch's
    deleter releases it. If the callee took ownership, call :meth:`consumed`;
    otherwise dropping this object lets torch's capsule destructor free it.
    """

    __slots__ = ("tensor", "capsule", "pointer")

    def __init__(self, obj: Any, name: str):
        self.tensor = as_cpu_tensor(obj, name)
        self.capsule = torch.utils.dlpack.to_dlpack(self.tensor)
        self.pointer = PyCapsule_GetPointer(self.capsule, _DLTENSOR)

    def consumed(self) -> None:
        """Marks the capsule as taken so torch never calls the deleter."""
        PyCapsule_SetName(self.capsule, _USED_DLTENSOR)

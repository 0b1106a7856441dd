"""DLPack across the boundary: library outputs as legacy or versioned
(DLPack 1.x) capsules, read back with ctypes since torch 2.2 only imports
legacy ones, and versioned tensors as node-data input."""

from __future__ import annotations

import ctypes

import pytest
import torch

import graphferry
from graphferry._native import dlpack as _dlpack
from graphferry._native import lib as _lib
from graphferry._native.dlpack import ManagedTensor
from graphferry._native.lib import (
    DLPACK_FLAG_BITMASK_IS_COPIED,
    DLManagedTensor,
    DLManagedTensorVersioned,
)
from graphferry.errors import InvalidArgumentError, TypeMismatchError

_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName", ctypes.pythonapi))


@pytest.fixture
def graph():
    g = graphferry.Graph.from_coo(torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 3, 0]))
    g.set_node_data("feat", torch.arange(12, dtype=torch.float32).reshape(4, 3))
    yield g
    g.close()


def _legacy_node_data(graph, name: str) -> int:
    out = ctypes.c_void_p()
    _lib.gf_graph_get_node_data(graph._handle, name.encode(), ctypes.byref(out))
    return out.value


def _read(managed: DLManagedTensorVersioned) -> torch.Tensor:
    t = managed.dl_tensor
    assert t.dtype.code == _lib.kDLFloat and t.dtype.bits == 32 and t.dtype.lanes == 1
    assert t.device.device_type == _lib.kDLCPU and not t.strides
    shape = [t.shape[i] for i in range(t.ndim)]
    n = 1
    for s in shape:
        n *= s
    values = (ctypes.c_float * n).from_address(t.data)
    return torch.tensor(list(values)).reshape(shape)


def test_versioned_capsule(graph):
    want = graph.get_node_data("feat")
    producer = ManagedTensor(_legacy_node_data(graph, "feat"))
    assert producer.__dlpack_device__() == (_lib.kDLCPU, 0)
    capsule = producer.__dlpack__(max_version=(1, 1))
    assert _name(capsule) == b"dltensor_versioned"
    managed = DLManagedTensorVersioned.from_address(_pointer(capsule, b"dltensor_versioned"))
    assert (managed.version.major, managed.version.minor) == (1, 1)
    assert managed.flags == DLPACK_FLAG_BITMASK_IS_COPIED and managed.deleter
    assert torch.equal(_read(managed), want)
    with pytest.raises(BufferError, match="already exported"):
        producer.__dlpack__(max_version=(1, 1))
    del capsule  # not consumed: its destructor calls the versioned deleter


def test_versioned_capsule_consumed(graph):
    capsule = ManagedTensor(_legacy_node_data(graph, "feat")).__dlpack__(max_version=(2, 0))
    address = _pointer(capsule, b"dltensor_versioned")
    # What a consumer does: rename, then call the deleter when done.
    assert _set_name(capsule, b"used_dltensor_versioned") == 0
    del capsule  # consumed: the destructor must not free it
    _dlpack._call_versioned_deleter(address)


def test_legacy_capsule_by_default(graph):
    want = graph.get_node_data("feat")
    for kwargs in ({}, {"max_version": (0, 8)}, {"max_version": None, "copy": True}):
        capsule = ManagedTensor(_legacy_node_data(graph, "feat")).__dlpack__(**kwargs)
        assert _name(capsule) == b"dltensor"
        assert torch.equal(torch.utils.dlpack.from_dlpack(capsule), want)
    # torch.from_dlpack speaks the protocol (torch 2.2 asks for legacy)
    assert torch.equal(torch.from_dlpack(ManagedTensor(_legacy_node_data(graph, "feat"))), want)


def test_wrong_device_keeps_the_tensor(graph):
    producer = ManagedTensor(_legacy_node_data(graph, "feat"))
    with pytest.raises(BufferError, match="CPU"):
        producer.__dlpack__(dl_device=(_lib.kDLCUDA, 0))
    assert torch.equal(torch.from_dlpack(producer), graph.get_node_data("feat"))
    del producer
    ManagedTensor(_legacy_node_data(graph, "feat"))  # dropped unexported: freed


def test_versioned_node_data_round_trip(graph):
    out = ctypes.c_void_p()
    _lib.gf_graph_get_node_data_versioned(graph._handle, b"feat", ctypes.byref(out))
    managed = DLManagedTensorVersioned.from_address(out.value)
    assert (managed.version.major, managed.version.minor) == (1, 1)
    # Input: on success graphferry owns it and calls its deleter later.
    _lib.gf_graph_set_node_data_versioned(graph._handle, b"copy", out.value)
    assert torch.equal(graph.get_node_data("copy"), graph.get_node_data("feat"))
    with pytest.raises(InvalidArgumentError, match="gf_graph_get_node_data_versioned: no node data"):
        _lib.gf_graph_get_node_data_versioned(graph._handle, b"nope", ctypes.byref(out))


def test_versioned_input_of_another_major_version(graph):
    data = torch.arange(4, dtype=torch.float32)
    shape = (ctypes.c_int64 * 1)(4)
    managed = DLManagedTensorVersioned()
    managed.version.major, managed.version.minor = 2, 0
    managed.dl_tensor.data = data.data_ptr()
    managed.dl_tensor.device.device_type = _lib.kDLCPU
    managed.dl_tensor.ndim = 1
    managed.dl_tensor.dtype.code, managed.dl_tensor.dtype.bits, managed.dl_tensor.dtype.lanes = 2, 32, 1
    managed.dl_tensor.shape = shape
    with pytest.raises(TypeMismatchError, match="DLPack version 2.0"):
        _lib.gf_graph_set_node_data_versioned(graph._handle, b"x", ctypes.addressof(managed))
    assert "x" not in graph.node_data_names()


def test_to_versioned_refuses_foreign_tensors():
    foreign = DLManagedTensor()
    out = ctypes.c_void_p()
    with pytest.raises(InvalidArgumentError, match="not made by graphferry"):
        _lib.gf_tensor_to_versioned(ctypes.addressof(foreign), ctypes.byref(out))
    assert out.value is None

"""graphferry._compat: each version-dependent answer checked against the
installed torch and torch_geometric themselves, so that the tests of both
environments (python/requirements.txt and python/requirements-latest.txt)
catch a rule that no longer holds."""

from __future__ import annotations

import pytest
import torch

from graphferry import _compat


@pytest.mark.parametrize(
    "version, want",
    [("2.15.0+cu132", (2, 15)), ("2.8.0.post1", (2, 8)), ("2.2.1", (2, 2)), ("3.0", (3, 0))],
)
def test_version_tuple(version, want):
    assert _compat.version_tuple(version) == want


def test_version_tuple_refuses_garbage():
    with pytest.raises(ValueError, match="not a version"):
        _compat.version_tuple("nightly")


def test_pyg_edge_index_rule_matches_pyg_filter_data():
    """PyG's NodeLoader builds every batch with loader.utils.filter_data: our
    rule must say what it does to edge_index on the installed PyG."""
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import Data
    from torch_geometric.loader.utils import filter_data

    data = Data(x=torch.randn(3, 2), edge_index=torch.tensor([[0, 1], [1, 2]]))
    out = filter_data(data, torch.tensor([1, 0]), torch.tensor([1]), torch.tensor([0]), torch.tensor([0]))
    try:
        from torch_geometric.edge_index import EdgeIndex
    except ImportError:
        wrapped = False
    else:
        wrapped = isinstance(out.edge_index, EdgeIndex)
    assert _compat.pyg_loaders_wrap_edge_index() == wrapped


def test_neighbor_loader_edge_index_type_follows_pyg():
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import Data

    import graphferry.pyg as gfpyg

    data = Data(x=torch.randn(4, 2), edge_index=torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]]))
    loader = gfpyg.NeighborLoader(data, [2], batch_size=2, seed=0)
    batch = next(iter(loader))
    loader.close()
    if _compat.pyg_loaders_wrap_edge_index():
        from torch_geometric.edge_index import EdgeIndex

        assert isinstance(batch.edge_index, EdgeIndex)
    else:
        assert type(batch.edge_index) is torch.Tensor


class _Producer:
    """A DLPack producer that records what torch.from_dlpack asks of it and
    hands out a torch tensor's capsule made with the same arguments."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.calls = []

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()

    def __dlpack__(self, **kwargs):
        self.calls.append(dict(kwargs))
        return self.tensor.__dlpack__(**kwargs)


def test_versioned_dlpack_flag_matches_what_torch_asks():
    """torch_imports_versioned_dlpack() is True exactly when torch's
    from_dlpack asks a producer for DLPack >= 1.0 (max_version), and then the
    versioned capsule it gets back imports without a copy."""
    src = torch.arange(6, dtype=torch.int64)
    producer = _Producer(src)
    out = torch.from_dlpack(producer)
    assert out.data_ptr() == src.data_ptr() and torch.equal(out, src)
    first = producer.calls[0]
    asks_versioned = tuple(first.get("max_version") or (0, 0)) >= (1, 0)
    assert _compat.torch_imports_versioned_dlpack() == asks_versioned
    if asks_versioned:
        assert len(producer.calls) == 1, "torch took the versioned capsule at the first call"
        assert _compat.PyCapsule_GetName(src.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"

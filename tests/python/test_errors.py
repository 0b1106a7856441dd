"""Bad input at the Python boundary: the engine's validation surfaces as the
right exception with its message naming the argument, and the graph stays
usable afterwards."""

from __future__ import annotations

import ctypes
import pickle

import pytest
import torch

import graphferry
from graphferry._native import lib as _lib
from graphferry.errors import (
    GF_EBADHANDLE,
    GF_EINVAL,
    GF_EIO,
    GF_ENOMEM,
    GF_ESTATE,
    GF_ETYPE,
    GraphferryError,
    InvalidArgumentError,
    OutOfMemoryError,
    StorageError,
    TypeMismatchError,
    error_for_status,
)

from conftest import check_subgraph, edge_table


@pytest.fixture
def still_works(tiny, tiny_graph):
    """Call after an error: the same graph still samples correctly."""
    edges = edge_table(tiny.src, tiny.dst)

    def check():
        seeds = torch.tensor([3, 0, 12])
        sub = graphferry.sample_neighbors(tiny_graph, seeds, [3, 2], seed=4)
        check_subgraph(sub, seeds, [3, 2], edges, frontier="all")
        assert tiny_graph.num_nodes == tiny.num_nodes

    return check


def test_exception_hierarchy():
    assert issubclass(InvalidArgumentError, GraphferryError) and issubclass(InvalidArgumentError, ValueError)
    assert issubclass(TypeMismatchError, GraphferryError) and issubclass(TypeMismatchError, TypeError)
    assert issubclass(GraphferryError, RuntimeError)
    assert graphferry.InvalidArgumentError is InvalidArgumentError
    err = error_for_status(GF_ESTATE, "gf_batch_take: field 0 (layer 0) was already taken")
    assert type(err) is GraphferryError and err.code == GF_ESTATE
    assert str(err) == "gf_batch_take: field 0 (layer 0) was already taken"
    assert type(error_for_status(GF_EINVAL, "m")) is InvalidArgumentError
    assert type(error_for_status(GF_ETYPE, "m")) is TypeMismatchError
    again = pickle.loads(pickle.dumps(error_for_status(GF_EINVAL, "m")))
    assert type(again) is InvalidArgumentError and again.code == GF_EINVAL
    assert _lib.gf_status_str(GF_EINVAL) == b"invalid argument"


# -- graph construction ---------------------------------------------------------


def test_non_monotone_indptr():
    with pytest.raises(InvalidArgumentError, match="indptr") as info:
        graphferry.Graph.from_csc(torch.tensor([0, 2, 1, 3]), torch.tensor([0, 1, 2]))
    assert info.value.code == GF_EINVAL
    assert str(info.value).startswith("gf_graph_from_csc")


def test_index_out_of_range():
    with pytest.raises(InvalidArgumentError, match="indices"):
        graphferry.Graph.from_csc(torch.tensor([0, 1, 2]), torch.tensor([0, 7]))


def test_float_indices():
    with pytest.raises(TypeMismatchError, match="indices") as info:
        graphferry.Graph.from_csc(torch.tensor([0, 1, 2]), torch.tensor([0.0, 1.0]))
    assert info.value.code == GF_ETYPE
    assert isinstance(info.value, TypeError)


def test_two_dimensional_indptr():
    with pytest.raises((InvalidArgumentError, TypeMismatchError), match="indptr"):
        graphferry.Graph.from_csc(torch.tensor([[0, 1], [1, 2]]), torch.tensor([0, 1]))


def test_coo_length_mismatch():
    with pytest.raises(InvalidArgumentError, match="dst|src"):
        graphferry.Graph.from_coo(torch.tensor([0, 1, 2]), torch.tensor([1, 2]))


def test_open_missing_path(tmp_path):
    with pytest.raises(OSError, match="gf_graph_open") as info:
        graphferry.Graph.open(tmp_path / "nothing-here")
    assert isinstance(info.value, StorageError) and isinstance(info.value, GraphferryError)
    assert info.value.code == GF_EIO
    assert "nothing-here" in str(info.value)


# GF_EIO and GF_ENOMEM are also the built-in exceptions for their kind of
# failure, carrying the engine's message as their text.
@pytest.mark.parametrize(
    "code, cls, builtin",
    [(GF_EIO, StorageError, OSError), (GF_ENOMEM, OutOfMemoryError, MemoryError)],
)
def test_io_and_memory_errors_are_builtin_exceptions(code, cls, builtin):
    message = "gf_graph_open: feat.bin: read 0 of 4096 bytes at offset 8192"
    err = error_for_status(code, message)
    assert type(err) is cls and isinstance(err, builtin) and isinstance(err, GraphferryError)
    assert err.code == code and err.message == message and str(err) == message
    assert graphferry.StorageError is StorageError and graphferry.OutOfMemoryError is OutOfMemoryError
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is cls and again.code == code and str(again) == message
    # The errcheck of every binding raises them for the status.
    with pytest.raises(builtin) as info:
        _lib._check_ok(code, _lib.gf_sample.foreign, ())
    assert type(info.value) is cls and info.value.code == code


def test_bad_partition_argument(tiny):
    with pytest.raises(ValueError, match="partition"):
        graphferry.Graph.from_coo(tiny.src, tiny.dst, partition="metis")
    with pytest.raises(InvalidArgumentError):
        graphferry.Graph.from_coo(
            tiny.src, tiny.dst, num_nodes=tiny.num_nodes, num_patches=2, partition=torch.full((tiny.num_nodes,), 5)
        )


def test_python_types_rejected_before_c(tiny):
    with pytest.raises(TypeError, match="indptr"):
        graphferry.Graph.from_csc({"a": 1}, tiny.indices)
    with pytest.raises(TypeError, match="CPU"):
        graphferry.Graph.from_csc(torch.empty(3, dtype=torch.int64, device="meta"), tiny.indices)
    with pytest.raises(TypeError):
        graphferry.Graph(1234)


# -- sampling -------------------------------------------------------------------


def test_seed_out_of_range(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="seeds") as info:
        graphferry.sample_neighbors(tiny_graph, torch.tensor([0, 1000]), [2])
    assert "gf_sample" in str(info.value)
    still_works()
    with pytest.raises(InvalidArgumentError, match="seeds"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([-1]), [2])
    still_works()


def test_duplicate_seed(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="duplicate"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([4, 4]), [2])
    still_works()
    with pytest.raises(InvalidArgumentError, match=r"seeds\[1\]"):
        graphferry.Loader(tiny_graph, torch.tensor([1, 1]), [2], batch_size=1)
    still_works()


def test_duplicate_seed_message_names_the_argument(tiny_graph):
    with pytest.raises(InvalidArgumentError, match=r"seeds\[1\]"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([4, 4]), [2])


def test_empty_fanouts(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="(?i)fan"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([1]), [])
    still_works()


@pytest.mark.parametrize("bad", [-2, -7])  # 0 is valid: no neighbours for that hop
def test_bad_fanout(tiny_graph, still_works, bad):
    with pytest.raises(InvalidArgumentError, match=rf"fanouts\[1\] = {bad}"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([1]), [2, bad])
    still_works()


def test_fanout_zero_samples_no_neighbours(tiny_graph):
    seeds = torch.tensor([1, 4, 7])
    sub = graphferry.sample_neighbors(tiny_graph, seeds, [0, 2, 0])
    assert sub.hop_counts.tolist()[:2] == [3, 0]
    first, second, third = sub.blocks
    assert first.num_edges == 0 and first.indptr.tolist() == [0, 0, 0, 0]
    assert (first.num_dst, first.num_src) == (3, 3)
    assert second.num_dst == 3 and second.num_edges > 0
    assert third.num_edges == 0 and third.num_src == third.num_dst + third.dst_offset


def test_fanout_beyond_int32(tiny_graph, still_works):
    with pytest.raises(ValueError, match="int32"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([1]), [2**40])
    with pytest.raises(TypeError, match="fanouts"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([1]), [2.5])
    still_works()


def test_float_seeds(tiny_graph, still_works):
    with pytest.raises(TypeMismatchError, match="seeds"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([1.0, 2.0]), [2])
    still_works()


def test_two_dimensional_seeds(tiny_graph, still_works):
    with pytest.raises((InvalidArgumentError, TypeMismatchError), match="seeds"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([[1, 2]]), [2])
    still_works()


def test_unknown_frontier(tiny_graph):
    with pytest.raises(ValueError, match="frontier"):
        graphferry.sample_neighbors(tiny_graph, torch.tensor([1]), [2], frontier="some")


# -- node data ------------------------------------------------------------------


def test_node_data_wrong_rows(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="gf_graph_set_node_data"):
        tiny_graph.set_node_data("feat", torch.zeros(tiny_graph.num_nodes + 1, 2))
    assert "feat" not in tiny_graph.node_data_names()
    still_works()


def test_node_data_bad_dtype(tiny_graph, still_works):
    with pytest.raises(TypeMismatchError, match="gf_graph_set_node_data"):
        tiny_graph.set_node_data("c", torch.zeros(tiny_graph.num_nodes, dtype=torch.complex64))
    still_works()


def test_node_data_bad_name(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="name"):
        tiny_graph.set_node_data("", torch.zeros(tiny_graph.num_nodes))
    with pytest.raises(TypeError, match="name"):
        tiny_graph.set_node_data(3, torch.zeros(tiny_graph.num_nodes))
    with pytest.raises(ValueError, match="NUL"):
        tiny_graph.set_node_data("a\0b", torch.zeros(tiny_graph.num_nodes))
    still_works()


def test_unknown_node_data(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="nope"):
        tiny_graph.get_node_data("nope")
    still_works()


def test_unknown_feature_name_in_loader(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="nope"):
        graphferry.Loader(tiny_graph, torch.arange(10), [2], batch_size=4, feature_names=["nope"])
    with pytest.raises(InvalidArgumentError, match="nope"):
        graphferry.Loader(tiny_graph, torch.arange(10), [2], batch_size=4, label_names=["nope"])
    still_works()


def test_bad_batch_size(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        graphferry.Loader(tiny_graph, torch.arange(10), [2], batch_size=0)
    still_works()


def test_loader_seed_out_of_range(tiny_graph, still_works):
    with pytest.raises(InvalidArgumentError, match="seeds"):
        graphferry.Loader(tiny_graph, torch.tensor([1, 2, 99]), [2], batch_size=2)
    still_works()


# -- handles --------------------------------------------------------------------


def test_closed_graph(tiny):
    g = graphferry.Graph.from_csc(tiny.indptr, tiny.indices)
    g.close()
    g.close()  # idempotent
    with pytest.raises(GraphferryError) as info:
        g.num_nodes  # noqa: B018 - the property itself raises
    assert info.value.code == GF_EBADHANDLE
    with pytest.raises(GraphferryError) as info:
        graphferry.sample_neighbors(g, torch.tensor([1]), [2])
    assert info.value.code == GF_EBADHANDLE
    with pytest.raises(GraphferryError):
        g.set_node_data("x", torch.zeros(tiny.num_nodes))
    with pytest.raises(GraphferryError):
        graphferry.Loader(g, torch.arange(3), [2])
    assert repr(g) == "Graph(closed)"
    # the process survives, and new graphs work
    with graphferry.Graph.from_csc(tiny.indptr, tiny.indices) as g2:
        assert g2.num_nodes == tiny.num_nodes


def test_stale_and_foreign_handles_in_c(tiny):
    """The C API's promise: a closed or foreign handle gives GF_EBADHANDLE,
    never a crash."""
    g = graphferry.Graph.from_csc(tiny.indptr, tiny.indices)
    loader = graphferry.Loader(g, torch.arange(4), [2], batch_size=2)
    out = ctypes.c_int64()
    # a loader handle is not a graph
    with pytest.raises(GraphferryError) as info:
        _lib.gf_graph_num_nodes(loader.handle, ctypes.byref(out))
    assert info.value.code == GF_EBADHANDLE
    stale = g.handle
    g.close()
    assert loader.closed  # children close before their parent
    with pytest.raises(GraphferryError) as info:
        _lib.gf_graph_num_nodes(stale, ctypes.byref(out))
    assert info.value.code == GF_EBADHANDLE
    _lib.gf_graph_close(stale)  # closing twice is detected and ignored
    _lib.gf_graph_close(None)
    # not a graphferry handle at all
    junk = ctypes.create_string_buffer(256)
    with pytest.raises(GraphferryError) as info:
        _lib.gf_graph_num_nodes(ctypes.addressof(junk), ctypes.byref(out))
    assert info.value.code == GF_EBADHANDLE


def test_closed_loader(tiny_graph, still_works):
    loader = graphferry.Loader(tiny_graph, torch.arange(10), [2], batch_size=4)
    loader.close()
    with pytest.raises(GraphferryError) as info:
        iter(loader)
    assert info.value.code == GF_EBADHANDLE
    with pytest.raises(GraphferryError):
        len(loader)
    still_works()


def test_graph_not_picklable(tiny_graph):
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(tiny_graph)


# -- loaders --------------------------------------------------------------------


def test_num_workers_sets_the_engine_threads(tiny, tiny_graph):
    """num_workers > 0 (DGL's examples pass 4) forks nothing: it is the
    engine's sampling threads; bad values raise as torch's DataLoader does."""
    dgl = pytest.importorskip("dgl")
    import multiprocessing

    import graphferry.dgl as gfdgl

    sampler = dgl.dataloading.NeighborSampler([2, 2])
    loader = gfdgl.DataLoader(tiny_graph, torch.arange(10), sampler, batch_size=4, num_workers=3)
    assert loader._options.num_threads == 3 and len(list(loader)) == 3
    assert not multiprocessing.active_children()
    # num_threads alone, or both alike, stay as they were
    assert gfdgl.DataLoader(tiny_graph, torch.arange(10), sampler, num_threads=2)._options.num_threads == 2
    assert (
        gfdgl.DataLoader(tiny_graph, torch.arange(10), sampler, num_workers=2, num_threads=2)._options.num_threads == 2
    )
    with pytest.raises(ValueError, match="non-negative"):
        gfdgl.DataLoader(tiny_graph, torch.arange(10), sampler, num_workers=-1)
    with pytest.raises(TypeError, match="'num_workers' must be an int"):
        gfdgl.DataLoader(tiny_graph, torch.arange(10), sampler, num_workers=True)
    with pytest.raises(ValueError, match="give one of them"):
        gfdgl.DataLoader(tiny_graph, torch.arange(10), sampler, num_workers=2, num_threads=4)

    pytest.importorskip("torch_geometric")
    from torch_geometric.data import Data

    import graphferry.pyg as gfpyg

    data = Data(x=torch.randn(tiny.num_nodes, 2), edge_index=torch.stack([tiny.src, tiny.dst]))
    loader = gfpyg.NeighborLoader(data, [2], batch_size=4, num_workers=2)
    assert loader._options.num_threads == 2 and len(list(loader)) == len(loader)
    with pytest.raises(ValueError, match="non-negative"):
        gfpyg.NeighborLoader(data, [2], num_workers=-1)
    assert not multiprocessing.active_children()


def test_dgl_loader_unknown_feature(tiny, still_works):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    gd = dgl.graph((tiny.src, tiny.dst), num_nodes=tiny.num_nodes)
    gd.ndata["feat"] = torch.randn(tiny.num_nodes, 2)
    sampler = dgl.dataloading.NeighborSampler([2], prefetch_node_feats=["missing_feat"])
    with pytest.raises(InvalidArgumentError, match="missing_feat"):
        gfdgl.DataLoader(gd, torch.arange(10), sampler, batch_size=4)
    still_works()


def test_dgl_unsupported_sampler_options(tiny):
    dgl = pytest.importorskip("dgl")
    import graphferry.dgl as gfdgl

    gd = dgl.graph((tiny.src, tiny.dst), num_nodes=tiny.num_nodes)
    with pytest.raises(ValueError, match="edge_dir"):
        gfdgl.DataLoader(gd, torch.arange(4), dgl.dataloading.NeighborSampler([2], edge_dir="out"))
    with pytest.raises(TypeError, match="NeighborSampler"):
        gfdgl.DataLoader(gd, torch.arange(4), object())
    with pytest.raises(ValueError, match="use_uva"):
        gfdgl.DataLoader(gd, torch.arange(4), gfdgl.NeighborSampler([2]), use_uva=True)

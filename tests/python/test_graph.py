"""graphferry.Graph construction, node data round trips and sampling invariants."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import graphferry
from graphferry._native import lib as _lib

from conftest import check_subgraph, csc_of_coo, edge_table


def full_neighbourhood(g: graphferry.Graph, num_nodes: int) -> dict[int, list[int]]:
    """dst -> sorted edge ids into it, read back from the engine with fan-out -1."""
    sub = graphferry.sample_neighbors(g, torch.arange(num_nodes), [-1])
    blk = sub.blocks[0]
    dst = sub.nodes[blk.dst_positions()]
    out: dict[int, list[int]] = {v: [] for v in range(num_nodes)}
    for v, e in zip(dst.tolist(), blk.edge_ids.tolist()):
        out[v].append(e)
    return {v: sorted(es) for v, es in out.items()}


def expected_neighbourhood(dst: torch.Tensor, num_nodes: int, edge_ids=None) -> dict[int, list[int]]:
    ids = torch.arange(dst.numel()) if edge_ids is None else edge_ids
    out: dict[int, list[int]] = {v: [] for v in range(num_nodes)}
    for v, e in zip(dst.tolist(), ids.tolist()):
        out[v].append(e)
    return {v: sorted(es) for v, es in out.items()}


# -- construction -------------------------------------------------------------


def test_version():
    assert graphferry.__version__.split(".")[0] == graphferry.library_version().split(".")[0]
    assert _lib.gf_version_number() // 1000000 == int(graphferry.__version__.split(".")[0])
    assert os.path.isfile(graphferry.library_path())


def test_from_csc(tiny, tiny_graph):
    g = tiny_graph
    assert g.num_nodes == tiny.num_nodes
    assert g.num_edges == tiny.src.numel()
    assert g.num_patches == 1
    assert g.node_data_names() == []
    assert full_neighbourhood(g, tiny.num_nodes) == expected_neighbourhood(tiny.dst, tiny.num_nodes)
    assert "num_nodes=40" in repr(g)


def test_from_csc_default_edge_ids_are_csc_positions(tiny):
    with graphferry.Graph.from_csc(tiny.indptr, tiny.indices) as g:
        got = full_neighbourhood(g, tiny.num_nodes)
    # without edge_ids, edge j of the CSC has id j
    dst = torch.arange(tiny.num_nodes).repeat_interleave(tiny.indptr[1:] - tiny.indptr[:-1])
    assert got == expected_neighbourhood(dst, tiny.num_nodes)


def test_from_csc_accepts_numpy_and_int32(tiny):
    with graphferry.Graph.from_csc(
        tiny.indptr.numpy().astype(np.int32),
        tiny.indices.numpy().astype(np.int32),
        edge_ids=tiny.edge_ids.numpy(),
    ) as g:
        assert g.num_edges == tiny.src.numel()
        assert full_neighbourhood(g, tiny.num_nodes) == expected_neighbourhood(tiny.dst, tiny.num_nodes)


def test_from_csr(tiny):
    indptr, indices, eids = csc_of_coo(tiny.dst, tiny.src, tiny.num_nodes)  # CSR = CSC of the reverse
    with graphferry.Graph.from_csr(indptr, indices, edge_ids=eids) as g:
        assert g.num_edges == tiny.src.numel()
        assert full_neighbourhood(g, tiny.num_nodes) == expected_neighbourhood(tiny.dst, tiny.num_nodes)


def test_from_coo(tiny):
    with graphferry.Graph.from_coo(tiny.src, tiny.dst, num_nodes=tiny.num_nodes) as g:
        assert g.num_nodes == tiny.num_nodes
        assert g.num_edges == tiny.src.numel()
        assert full_neighbourhood(g, tiny.num_nodes) == expected_neighbourhood(tiny.dst, tiny.num_nodes)
    # num_nodes defaults to max id + 1 (node 39 is isolated in `tiny`)
    with graphferry.Graph.from_coo(tiny.src, tiny.dst) as g:
        assert g.num_nodes == int(torch.maximum(tiny.src.max(), tiny.dst.max())) + 1


def test_from_coo_removals():
    src = torch.tensor([0, 0, 1, 2, 2, 2])
    dst = torch.tensor([1, 1, 1, 0, 0, 2])
    with graphferry.Graph.from_coo(src, dst) as g:
        assert g.num_edges == 6
    with graphferry.Graph.from_coo(src, dst, remove_duplicates=True) as g:
        assert g.num_edges == 4
    with graphferry.Graph.from_coo(src, dst, remove_self_loops=True) as g:
        assert g.num_edges == 4
    with graphferry.Graph.from_coo(src, dst, remove_duplicates=True, remove_self_loops=True) as g:
        assert g.num_edges == 2


@pytest.mark.parametrize("partition", ["range", "random", "given"])
def test_patches_keep_the_graph(tiny, partition):
    part = partition
    if partition == "given":
        part = torch.arange(tiny.num_nodes) % 3
    with graphferry.Graph.from_coo(
        tiny.src, tiny.dst, num_nodes=tiny.num_nodes, num_patches=3, partition=part, seed=5
    ) as g:
        assert g.num_patches == 3
        assert full_neighbourhood(g, tiny.num_nodes) == expected_neighbourhood(tiny.dst, tiny.num_nodes)
        feat = torch.randn(tiny.num_nodes, 4)
        g.set_node_data("feat", feat)
        assert torch.equal(g.get_node_data("feat"), feat)  # original order despite renumbering


def test_from_dgl(tiny):
    dgl = pytest.importorskip("dgl")
    gd = dgl.graph((tiny.src, tiny.dst), num_nodes=tiny.num_nodes)
    gd.ndata["feat"] = torch.randn(tiny.num_nodes, 3)
    gd.ndata["label"] = torch.arange(tiny.num_nodes)
    with graphferry.Graph.from_dgl(gd) as g:
        assert g.num_nodes == gd.num_nodes() and g.num_edges == gd.num_edges()
        assert g.node_data_names() == ["feat", "label"]
        assert torch.equal(g.get_node_data("feat"), gd.ndata["feat"])
        assert torch.equal(g.get_node_data("label"), gd.ndata["label"])
        # edge ids are DGL's
        sub = graphferry.sample_neighbors(g, torch.arange(tiny.num_nodes), [-1])
        blk = sub.blocks[0]
        u, v = gd.find_edges(blk.edge_ids)
        assert torch.equal(u, sub.nodes[blk.indices]) and torch.equal(v, sub.nodes[blk.dst_positions()])
    with pytest.raises(TypeError, match="DGLGraph"):
        graphferry.Graph.from_dgl("not a graph")


def test_from_pyg(tiny):
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import Data

    x = torch.randn(tiny.num_nodes, 5)
    y = torch.randint(0, 3, (tiny.num_nodes,))
    mask = torch.rand(tiny.num_nodes) < 0.5
    data = Data(x=x, y=y, train_mask=mask, edge_index=torch.stack([tiny.src, tiny.dst]))
    with graphferry.Graph.from_pyg(data) as g:
        assert g.num_nodes == tiny.num_nodes and g.num_edges == tiny.src.numel()
        assert g.node_data_names() == ["train_mask", "x", "y"]
        assert torch.equal(g.get_node_data("x"), x)
        assert torch.equal(g.get_node_data("y"), y)
        assert torch.equal(g.get_node_data("train_mask"), mask)
        assert torch.equal(g.train_idx, mask.nonzero().view(-1))
        assert g.val_idx is None
        # edge ids are edge_index columns
        assert full_neighbourhood(g, tiny.num_nodes) == expected_neighbourhood(tiny.dst, tiny.num_nodes)


def test_open_dataset_dir(cora_dir, cora_npy):
    with graphferry.Graph.open(cora_dir) as g:
        assert g.num_nodes == 2708
        assert g.num_edges == len(cora_npy.indices)
        names = g.node_data_names()
        for name in ("feat", "label", "train_mask", "val_mask", "test_mask"):
            assert name in names
        assert torch.equal(g.get_node_data("feat"), torch.from_numpy(cora_npy.feat))
        assert torch.equal(g.get_node_data("label").to(torch.int64), torch.from_numpy(cora_npy.label))
        assert torch.equal(g.train_idx, torch.from_numpy(np.sort(cora_npy.train_idx)))
        assert torch.equal(g.val_idx, torch.from_numpy(np.sort(cora_npy.val_idx)))
        assert torch.equal(g.test_idx, torch.from_numpy(np.sort(cora_npy.test_idx)))
        # the topology is the npy CSC (in-neighbours)
        src, dst = cora_npy.coo()
        edges = edge_table(src, dst)
        seeds = torch.from_numpy(cora_npy.train_idx[:32])
        sub = graphferry.sample_neighbors(g, seeds, [-1])
        got = sorted(zip(sub.nodes[sub.blocks[0].indices].tolist(), sub.nodes[sub.blocks[0].dst_positions()].tolist()))
        want = sorted((int(s), int(d)) for s, d in edges.tolist() if d in set(seeds.tolist()))
        assert got == want


def test_open_partitioned(cora_dir):
    with graphferry.Graph.open(cora_dir, num_patches=4, partition="random", seed=1) as g:
        assert g.num_patches == 4 and g.num_nodes == 2708


def test_convert_cli(cora_npy, tmp_path):
    dst = tmp_path / "cora_cli"
    proc = subprocess.run(
        [sys.executable, "-m", "graphferry", "convert", str(cora_npy.path), str(dst)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "2708 nodes" in proc.stdout
    with graphferry.Graph.open(dst) as g:
        assert g.num_nodes == 2708


def test_convert_cli_reports_errors(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "graphferry", "convert", str(tmp_path / "missing"), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "gf_dataset_convert_npy" in proc.stderr


# -- node data ----------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype",
    [
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.float64,
        torch.int64,
        torch.int32,
        torch.int8,
        torch.uint8,
        torch.bool,
    ],
)
def test_node_data_round_trip(tiny_graph, dtype):
    n = tiny_graph.num_nodes
    if dtype == torch.bool:
        value = torch.rand(n) < 0.5
    elif dtype.is_floating_point:
        value = torch.randn(n, 7).to(dtype)
    else:
        value = torch.randint(-100 if dtype != torch.uint8 else 0, 100, (n, 2)).to(dtype)
    tiny_graph.set_node_data("x", value)
    got = tiny_graph.get_node_data("x")
    assert got.dtype == dtype
    assert torch.equal(got, value)


def test_node_data_from_numpy_and_views(tiny_graph):
    n = tiny_graph.num_nodes
    arr = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    arr.setflags(write=False)  # read-only, as np.load(mmap_mode="r") gives
    tiny_graph.set_node_data("np", arr)
    assert torch.equal(tiny_graph.get_node_data("np"), torch.from_numpy(arr))
    wide = torch.randn(n, 6)
    tiny_graph.set_node_data("strided", wide[:, ::2])  # made contiguous on the way in
    assert torch.equal(tiny_graph.get_node_data("strided"), wide[:, ::2])
    grad = torch.randn(n, 2, requires_grad=True)
    tiny_graph.set_node_data("grad", grad)
    assert torch.equal(tiny_graph.get_node_data("grad"), grad.detach())


def test_node_data_names_replace_and_copy(tiny_graph):
    n = tiny_graph.num_nodes
    tiny_graph.set_node_data("b", torch.zeros(n))
    tiny_graph.set_node_data("a", torch.ones(n))
    assert tiny_graph.node_data_names() == ["a", "b"]
    tiny_graph.set_node_data("a", torch.full((n,), 2.0))
    assert tiny_graph.node_data_names() == ["a", "b"]
    got = tiny_graph.get_node_data("a")
    assert bool((got == 2).all())
    got.fill_(5)  # a copy: the graph keeps its data
    assert bool((tiny_graph.get_node_data("a") == 2).all())


def test_node_data_tensors_outlive_graph(tiny):
    g = graphferry.Graph.from_csc(tiny.indptr, tiny.indices)
    g.set_node_data("f", torch.arange(tiny.num_nodes, dtype=torch.float32))
    out = g.get_node_data("f")
    sub = graphferry.sample_neighbors(g, torch.tensor([3]), [5])
    g.close()
    assert g.closed
    assert torch.equal(out, torch.arange(tiny.num_nodes, dtype=torch.float32))
    assert int(sub.nodes[0]) == 3 and sub.blocks[0].indptr.numel() == 2


def test_many_outputs_are_freed(tiny_graph):
    # DLPack deleters run as tensors die (no leak, no double free).
    tiny_graph.set_node_data("f", torch.randn(tiny_graph.num_nodes, 64))
    for _ in range(500):
        t = tiny_graph.get_node_data("f")
        del t


# -- sampling -----------------------------------------------------------------


@pytest.mark.parametrize("frontier", ["all", "new"])
@pytest.mark.parametrize("fanouts", [[3], [2, 3], [4, -1, 2], [-1, -1]])
def test_sampling_invariants_tiny(tiny, tiny_graph, frontier, fanouts):
    edges = edge_table(tiny.src, tiny.dst)
    for seeds in ([3], [0, 5, 7], list(range(0, 40, 3)), [39, 3]):
        sub = graphferry.sample_neighbors(tiny_graph, torch.tensor(seeds), fanouts, frontier=frontier, seed=11)
        check_subgraph(sub, seeds, fanouts, edges, frontier=frontier)


@pytest.mark.parametrize("frontier", ["all", "new"])
def test_sampling_invariants_patches(tiny, frontier):
    edges = edge_table(tiny.src, tiny.dst)
    with graphferry.Graph.from_coo(
        tiny.src, tiny.dst, num_nodes=tiny.num_nodes, num_patches=4, partition="random", seed=3
    ) as g:
        seeds = torch.tensor([17, 3, 0, 25])
        sub = graphferry.sample_neighbors(g, seeds, [3, 2], frontier=frontier, seed=1)
        check_subgraph(sub, seeds, [3, 2], edges, frontier=frontier)


def test_sampling_invariants_cora(cora_graph, cora_npy):
    src, dst = cora_npy.coo()
    edges = edge_table(src, dst)
    seeds = torch.from_numpy(cora_npy.train_idx[:64])
    for frontier in ("all", "new"):
        sub = graphferry.sample_neighbors(cora_graph, seeds, [10, 5], frontier=frontier, seed=2)
        check_subgraph(sub, seeds, [10, 5], edges, frontier=frontier)


def test_sampling_with_replacement(tiny, tiny_graph):
    edges = edge_table(tiny.src, tiny.dst)
    sub = graphferry.sample_neighbors(tiny_graph, torch.tensor([3, 4]), [30], replace=True, seed=1)
    check_subgraph(sub, [3, 4], [30], edges, frontier="all", replace=True)
    deg = sub.blocks[0].indptr.diff()
    assert int(deg[0]) == 30  # node 3 is a hub: 30 draws with replacement


def test_sampling_is_deterministic(tiny_graph):
    seeds = torch.tensor([3, 1, 8])
    a = graphferry.sample_neighbors(tiny_graph, seeds, [2, 2], seed=42)
    b = graphferry.sample_neighbors(tiny_graph, seeds, [2, 2], seed=42)
    assert torch.equal(a.nodes, b.nodes)
    for x, y in zip(a.blocks, b.blocks):
        assert torch.equal(x.edge_ids, y.edge_ids)
    draws = {
        tuple(graphferry.sample_neighbors(tiny_graph, torch.tensor([3]), [2], seed=s).blocks[0].edge_ids.tolist())
        for s in range(20)
    }
    assert len(draws) > 1, "different seeds give different samples"


def test_block_edge_index(tiny_graph):
    sub = graphferry.sample_neighbors(tiny_graph, torch.tensor([3, 5]), [4, 4], frontier="new", seed=0)
    for blk in sub.blocks:
        ei = blk.edge_index()
        assert ei.shape == (2, blk.num_edges)
        assert torch.equal(ei[0], blk.indices)


def test_loader_generic(tiny, tiny_graph):
    edges = edge_table(tiny.src, tiny.dst)
    tiny_graph.set_node_data("feat", torch.randn(tiny.num_nodes, 3))
    tiny_graph.set_node_data("label", torch.arange(tiny.num_nodes))
    seeds = torch.arange(0, 39)
    loader = graphferry.Loader(
        tiny_graph, seeds, [3, 2], batch_size=8, shuffle=True, seed=1, feature_names=["feat"], label_names=["label"]
    )
    assert len(loader) == 5
    seen = []
    for sub in loader:
        bs = sub.batch_size
        check_subgraph(sub, sub.nodes[:bs], [3, 2], edges, frontier="all")
        assert torch.equal(seeds[sub.input_index], sub.nodes[:bs])
        assert torch.equal(sub.node_data["feat"], tiny_graph.get_node_data("feat")[sub.nodes])
        assert torch.equal(sub.labels["label"], sub.nodes[:bs])
        seen.append(sub.nodes[:bs])
    assert sorted(torch.cat(seen).tolist()) == seeds.tolist()
    loader.close()
    loader.close()  # idempotent
    assert loader.closed


def test_sample_options_validated_once():
    import dataclasses

    opts = graphferry.SampleOptions([3, torch.tensor(2)], replace=1, scheme="layer", seed=7)
    assert opts.fanouts == (3, 2) and opts.replace is True and opts.seed == 7
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.seed = 8
    assert opts.replace_fields(seed=8).seed == 8 and opts.seed == 7
    assert opts == graphferry.SampleOptions((3, 2), replace=True, scheme="layer", seed=7)
    with pytest.raises(ValueError, match="frontier"):
        graphferry.SampleOptions([2], frontier="some")
    with pytest.raises(ValueError, match="scheme"):
        opts.replace_fields(scheme="edge")
    with pytest.raises(TypeError, match="fanouts"):
        graphferry.SampleOptions("22")
    with pytest.raises(ValueError, match=r"fanouts\[1\]' = 4294967296"):
        graphferry.SampleOptions([1, 2**32])
    with pytest.raises(TypeError, match="seed"):
        graphferry.SampleOptions([1], seed=1.5)
    c, _keep = graphferry.SampleOptions([4, -1, 2], biased=True, num_threads=3, seed=-1).to_c()
    assert (c.num_hops, [c.fanouts[i] for i in range(3)], c.biased, c.num_threads) == (3, [4, -1, 2], 1, 3)
    assert c.seed == 2**64 - 1


def test_sample_with_options_is_sample_neighbors(tiny_graph):
    from graphferry.sampling import sample_with_options

    seeds = torch.arange(0, 39, 3)
    a = graphferry.sample_neighbors(tiny_graph, seeds, [3, 2], frontier="new", seed=5)
    b = sample_with_options(tiny_graph, seeds, graphferry.SampleOptions([3, 2], frontier="new", seed=5))
    assert torch.equal(a.nodes, b.nodes)
    assert all(torch.equal(x.edge_ids, y.edge_ids) for x, y in zip(a.blocks, b.blocks))
    opts = graphferry.SampleOptions([3, 2], seed=5)
    one = graphferry.Loader.from_options(tiny_graph, seeds, opts, batch_size=4)
    two = graphferry.Loader(tiny_graph, seeds, [3, 2], batch_size=4, seed=5)
    for x, y in zip(one, two):
        assert torch.equal(x.nodes, y.nodes)
    one.close()
    two.close()


def test_closed_loader_and_closed_graph_say_so(tiny):
    g = graphferry.Graph.from_csc(tiny.indptr, tiny.indices, edge_ids=tiny.edge_ids)
    loader = graphferry.Loader(g, torch.arange(30), [2], batch_size=4)
    it = iter(loader)
    next(it)
    loader.close()
    with pytest.raises(graphferry.GraphferryError, match="the loader was closed"):
        next(it)  # mid-epoch: an error, not a short epoch
    with pytest.raises(graphferry.GraphferryError, match="the loader was closed"):
        iter(loader)
    loader = graphferry.Loader(g, torch.arange(30), [2], batch_size=4)
    it = iter(loader)
    next(it)
    g.close()
    with pytest.raises(graphferry.GraphferryError, match="graph was closed"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)  # reported once; the epoch is over
    with pytest.raises(graphferry.GraphferryError, match="graph was closed") as info:
        len(loader)
    assert "NULL" not in str(info.value)
    with pytest.raises(graphferry.GraphferryError, match="graph was closed"):
        graphferry.Loader(g, torch.arange(30), [2])


# -- library lookup -------------------------------------------------------------


def _package_copy(tmp_path, version=None):
    pkg = tmp_path / "graphferry"
    shutil.copytree(os.path.dirname(graphferry.__file__), pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    if version is not None:
        (pkg / "_version.py").write_text(f'__version__ = "{version}"\n')
    return tmp_path


def _import_in_subprocess(path, env_lib):
    env = dict(os.environ, PYTHONPATH=str(path))
    env.pop("GRAPHFERRY_LIB_PATH", None)
    if env_lib is not None:
        env["GRAPHFERRY_LIB_PATH"] = env_lib
    return subprocess.run(
        [sys.executable, "-c", "import graphferry; print(graphferry.library_path())"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(path),
        timeout=120,
    )


def test_library_not_found_names_the_paths(tmp_path):
    path = _package_copy(tmp_path)
    proc = _import_in_subprocess(path, "/nonexistent/libgraphferry.so")
    assert proc.returncode != 0
    assert "FileNotFoundError" in proc.stderr
    assert "/nonexistent/libgraphferry.so" in proc.stderr
    assert str(path / "graphferry" / "lib" / "libgraphferry.so") in proc.stderr


def test_library_from_env(tmp_path):
    path = _package_copy(tmp_path)
    proc = _import_in_subprocess(path, graphferry.library_path())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == graphferry.library_path()


def test_major_version_mismatch_refused(tmp_path):
    path = _package_copy(tmp_path, version="97.0.0")
    proc = _import_in_subprocess(path, graphferry.library_path())
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "major version 97" in proc.stderr


# -- Arrow ----------------------------------------------------------------------


def test_from_arrow_and_open_ipc(tiny, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.feather as feather

    table = pa.table({"src": pa.array(tiny.src.numpy()), "dst": pa.array(tiny.dst.numpy().astype(np.int32))})
    with graphferry.Graph.from_arrow(table, num_nodes=tiny.num_nodes) as g:
        assert g.num_edges == tiny.src.numel()
        assert full_neighbourhood(g, tiny.num_nodes) == expected_neighbourhood(tiny.dst, tiny.num_nodes)
    path = tmp_path / "edges.arrow"
    feather.write_feather(table, str(path), compression="uncompressed")
    with graphferry.Graph.open(path) as g:
        assert g.num_edges == tiny.src.numel()
        assert full_neighbourhood(g, g.num_nodes) == expected_neighbourhood(tiny.dst, g.num_nodes)
    bad = pa.table({"a": pa.array([0, 1])})
    with pytest.raises(graphferry.InvalidArgumentError, match="src"):
        graphferry.Graph.from_arrow(bad)
    with pytest.raises(TypeError, match="pyarrow"):
        graphferry.Graph.from_arrow({"src": [0]})


def test_generate_tiny_and_cli(tmp_path):
    """graphferry.generate writes a dataset Graph.open reads, reproducibly
    from its seed; the CLI does the same; a bad preset names the choices."""
    import subprocess
    import sys

    a, b = tmp_path / "a", tmp_path / "b"
    graphferry.generate("tiny", a, seed=7)
    graphferry.generate("tiny", b, seed=7, num_threads=1)
    with graphferry.Graph.open(a) as ga, graphferry.Graph.open(b) as gb:
        assert ga.num_nodes == 1024 and ga.num_edges > 4 * ga.num_nodes
        assert ga.num_edges == gb.num_edges
        assert torch.equal(ga.get_node_data("feat"), gb.get_node_data("feat"))
        assert torch.equal(ga.get_node_data("label"), gb.get_node_data("label"))
        assert ga.train_idx.numel() > 0 and ga.get_node_data("label").unique().numel() > 1
        sub = graphferry.sample_neighbors(ga, ga.train_idx[:16], [5, 5])
        assert torch.equal(sub.nodes[:16], ga.train_idx[:16])
    with pytest.raises(graphferry.InvalidArgumentError, match="products-like"):
        graphferry.generate("huge", tmp_path / "c")
    out = subprocess.run(
        [sys.executable, "-m", "graphferry", "generate", "tiny", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "1024 nodes" in out.stdout

"""Shared fixtures of the Python tests: a tiny random graph and the Cora dataset.

Datasets come from testdata.py: the repository's own copies (Cora derived from
examples/data/cora, CiteSeer and PubMed from tests/data), or the shared
datasets where they exist; no test skips for want of them on a plain clone.

The tests run against the installed package (`pip install -e ./python`, which
builds libgraphferry.so into python/graphferry/lib/). Without an install,
python/ is put on sys.path and the library is looked up as the package does
($GRAPHFERRY_LIB_PATH, then python/graphferry/lib/libgraphferry.so).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import testdata
import torch

REPO = Path(__file__).resolve().parents[2]
# The shared .npy datasets where they exist (testdata.shared_datasets_dir), for
# datasets the repository does not ship; testdata.dataset_dir(name) finds the
# shipped ones everywhere.
DATASETS_DIR = testdata.shared_datasets_dir() or REPO.parent / "shared" / "datasets"

_HOW_TO_BUILD = (
    "graphferry's Python tests need the package and its library: run "
    "`pip install -e ./python` in the repository root (it builds libgraphferry.so with Go), "
    "or `make lib` and set GRAPHFERRY_LIB_PATH to the built libgraphferry.so"
)


def _import_graphferry():
    try:
        import graphferry  # noqa: F401
    except ModuleNotFoundError as err:
        if err.name != "graphferry":
            raise
        sys.path.insert(0, str(REPO / "python"))
        import graphferry  # noqa: F401
    return graphferry


try:
    graphferry = _import_graphferry()
except (ImportError, OSError) as err:  # FileNotFoundError is an OSError
    pytest.exit(f"{_HOW_TO_BUILD}.\nImporting graphferry failed: {err}", returncode=4)


# ---------------------------------------------------------------------------
# Frameworks that must be there
# ---------------------------------------------------------------------------

# A user's own run skips what needs a framework that is not installed, with
# the reason; `make test` names the modules its environment installs
# (GRAPHFERRY_TEST_REQUIRE, comma-separated), and there a missing or broken
# one fails the tests that need it instead of quietly dropping them.
REQUIRED = {m.strip() for m in os.environ.get("GRAPHFERRY_TEST_REQUIRE", "").split(",") if m.strip()}
_importorskip = pytest.importorskip


def _import_or_fail(modname: str, *args, **kwargs):
    if modname.split(".")[0] in REQUIRED:
        # no skip: an ImportError here fails the collection or the test
        return importlib.import_module(modname)
    return _importorskip(modname, *args, **kwargs)


pytest.importorskip = _import_or_fail


# ---------------------------------------------------------------------------
# The cgocheck2 pass
# ---------------------------------------------------------------------------

# `make test` runs each test once: the tests marked `boundary` against a
# library built with GOEXPERIMENT=cgocheck2, which checks every pointer
# crossing between Go and C (entry points and their errors, DLPack in and out
# with the deleters, Arrow, the loaders' threads), the others against the
# shipped library (`make test-py` runs them all against it). Every test is
# marked but those below, which repeat the crossings other tests make once, at
# volume, or make none, or must load the installed library: under cgocheck2
# they would multiply the pass's time and check nothing more. New test files
# are in the pass unless listed here.
NOT_BOUNDARY = {
    "test_accuracy.py": "trains GraphSAGE through the loaders the loader tests cover, for minutes",
    "test_dgl_crosscheck.py": "150 repetitions of one sample_neighbors call, for statistics",
    "test_bench.py": "the benchmark suite: the same loaders, timed",
    "test_soak.py": "rounds of the crossings other tests make once (the C soak runs under cgocheck2)",
    "test_packaging.py": "builds wheels; loads no library",
    "test_testdata.py": "reads the test data; calls no library",
    "test_link_train.py": "trains link prediction through the edge loader test_link_dgl.py covers, for minutes",
    "test_info.py": "runs python -m graphferry info in fresh interpreters, which load the installed library",
    "test_version.py": "compares version strings; one gf_version call",
    "test_docs.py": "the documentation's examples: loaders and samples the loader tests cover",
    "test_torchrun.py": "trains in torchrun's processes, which load the library test_distributed_pyg.py covers",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name not in NOT_BOUNDARY:
            item.add_marker(pytest.mark.boundary)


# ---------------------------------------------------------------------------
# A tiny graph
# ---------------------------------------------------------------------------


@dataclass
class TinyGraph:
    """A random directed graph (with some self-loops and duplicate edges)."""

    num_nodes: int
    src: torch.Tensor  # edge i: src[i] -> dst[i], edge id i
    dst: torch.Tensor
    indptr: torch.Tensor  # in-neighbour CSC of the same edges
    indices: torch.Tensor
    edge_ids: torch.Tensor  # CSC position -> edge id

    def in_edges(self) -> dict[int, tuple[int, int]]:
        """edge id -> (src, dst)."""
        return {i: (int(s), int(d)) for i, (s, d) in enumerate(zip(self.src, self.dst))}


def csc_of_coo(src: torch.Tensor, dst: torch.Tensor, num_nodes: int):
    order = torch.argsort(dst, stable=True)
    counts = torch.bincount(dst, minlength=num_nodes)
    indptr = torch.zeros(num_nodes + 1, dtype=torch.int64)
    indptr[1:] = torch.cumsum(counts, 0)
    return indptr, src[order].contiguous(), order.to(torch.int64)


def make_tiny(num_nodes: int = 40, num_edges: int = 240, seed: int = 7) -> TinyGraph:
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_nodes, (num_edges,), generator=gen)
    dst = torch.randint(0, num_nodes, (num_edges,), generator=gen)
    # a hub with many in-neighbours, and node num_nodes-1 isolated
    hub = torch.arange(0, num_nodes - 1)
    src = torch.cat([src, hub])
    dst = torch.cat([dst, torch.full_like(hub, 3)])
    keep = (src != num_nodes - 1) & (dst != num_nodes - 1)
    src, dst = src[keep].contiguous(), dst[keep].contiguous()
    indptr, indices, edge_ids = csc_of_coo(src, dst, num_nodes)
    return TinyGraph(num_nodes, src, dst, indptr, indices, edge_ids)


@pytest.fixture(scope="module")
def sigint_raises_keyboardinterrupt():
    """For the tests of what Ctrl-C does (``usefixtures``): the handler they
    test, Python's default_int_handler, whatever this process inherited:
    started with SIGINT ignored (nohup, a runner in the background) Python
    installs none, and the signal would do nothing. Child processes then
    start with the default disposition (a handler does not survive exec; an
    ignored signal would). Module scope: before any module fixture starts a
    child."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def tiny() -> TinyGraph:
    return make_tiny()


@pytest.fixture
def tiny_graph(tiny):
    """A fresh graphferry.Graph of `tiny` (from CSC), closed after the test."""
    g = graphferry.Graph.from_csc(tiny.indptr, tiny.indices, edge_ids=tiny.edge_ids)
    yield g
    g.close()


# ---------------------------------------------------------------------------
# Cora
# ---------------------------------------------------------------------------


@dataclass
class Npy:
    path: Path
    indptr: np.ndarray
    indices: np.ndarray
    feat: np.ndarray
    label: np.ndarray
    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray

    @property
    def num_nodes(self) -> int:
        return len(self.indptr) - 1

    def coo(self) -> tuple[torch.Tensor, torch.Tensor]:
        indptr = torch.from_numpy(self.indptr)
        dst = torch.arange(self.num_nodes).repeat_interleave(indptr[1:] - indptr[:-1])
        return torch.from_numpy(self.indices), dst


@pytest.fixture(scope="session")
def cora_npy() -> Npy:
    path = testdata.dataset_dir("cora")
    load = lambda name: np.load(path / f"{name}.npy")  # noqa: E731
    return Npy(path, *(load(n) for n in ("indptr", "indices", "feat", "label", "train_idx", "val_idx", "test_idx")))


@pytest.fixture(scope="session")
def cora_dir(cora_npy, tmp_path_factory) -> Path:
    """Cora converted into a graphferry dataset directory."""
    dst = tmp_path_factory.mktemp("cora_gf")
    graphferry.convert_npy(cora_npy.path, dst)
    return dst


@pytest.fixture(scope="session")
def cora_graph(cora_dir):
    g = graphferry.Graph.open(cora_dir)
    yield g
    g.close()


@pytest.fixture(scope="session")
def cora_dgl(cora_npy):
    dgl = pytest.importorskip("dgl")
    src, dst = cora_npy.coo()
    g = dgl.graph((src, dst), num_nodes=cora_npy.num_nodes)
    g.ndata["feat"] = torch.from_numpy(cora_npy.feat)
    g.ndata["label"] = torch.from_numpy(cora_npy.label)
    mask = torch.zeros(cora_npy.num_nodes, dtype=torch.bool)
    mask[torch.from_numpy(cora_npy.train_idx)] = True
    g.ndata["train_mask"] = mask
    return g


@pytest.fixture(scope="session")
def cora_pyg(cora_npy):
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import Data

    src, dst = cora_npy.coo()
    mask = torch.zeros(cora_npy.num_nodes, dtype=torch.bool)
    mask[torch.from_numpy(cora_npy.train_idx)] = True
    return Data(
        x=torch.from_numpy(cora_npy.feat),
        y=torch.from_numpy(cora_npy.label),
        edge_index=torch.stack([src, dst]),
        train_mask=mask,
        edge_weight=torch.arange(src.numel(), dtype=torch.float32),
    )


# ---------------------------------------------------------------------------
# Shared checks
# ---------------------------------------------------------------------------


def edge_table(src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    """[E, 2] (src, dst) by edge id, for vectorised edge checks."""
    return torch.stack([src, dst], dim=1)


def check_subgraph(sub, seeds, fanouts, edges: torch.Tensor, *, frontier: str, replace=False):
    """The invariants of a graphferry.SampledSubgraph against the graph's
    edges ([E, 2] (src, dst) by edge id): seeds first, the hop structure of
    `frontier`, every sampled edge exists with its id, and without replacement
    each destination gets min(in-degree, fan-out) distinct edges."""
    seeds = torch.as_tensor(seeds)
    nodes = sub.nodes
    full_deg = torch.bincount(edges[:, 1], minlength=int(nodes.max()) + 1)
    assert nodes.dtype == torch.int64
    assert torch.equal(nodes[: len(seeds)], seeds), "seeds first, in order"
    assert nodes.unique().numel() == nodes.numel(), "each node once"
    assert sub.hop_counts.tolist()[0] == len(seeds)
    assert int(sub.hop_counts.sum()) == nodes.numel()
    assert len(sub.hop_counts) == len(fanouts) + 1 == len(sub.blocks) + 1
    counts = sub.hop_counts.tolist()
    for h, (blk, fan) in enumerate(zip(sub.blocks, fanouts)):
        reached = sum(counts[: h + 2])  # nodes known after hop h
        assert blk.num_src == reached, f"hop {h}: sources are the nodes known after it"
        if frontier == "all":
            assert blk.dst_offset == 0
            assert blk.num_dst == sum(counts[: h + 1]), f"hop {h}: destinations are all earlier nodes"
        else:
            assert blk.dst_offset == sum(counts[:h])
            assert blk.num_dst == counts[h], f"hop {h}: destinations are the previous hop's new nodes"
        indptr, indices, eids = blk.indptr, blk.indices, blk.edge_ids
        assert indptr.numel() == blk.num_dst + 1
        assert int(indptr[0]) == 0 and int(indptr[-1]) == indices.numel() == eids.numel()
        assert bool((indptr[1:] >= indptr[:-1]).all())
        if indices.numel():
            assert int(indices.min()) >= 0 and int(indices.max()) < blk.num_src
        deg = indptr[1:] - indptr[:-1]
        if fan >= 0:
            assert bool((deg <= fan).all()), f"hop {h}: fan-out {fan} respected"
        # every sampled edge exists, with this id, from that source to that destination
        src_ids = nodes[indices]
        dst_ids = nodes[blk.dst_positions()]
        assert torch.equal(edges[eids], torch.stack([src_ids, dst_ids], dim=1)), f"hop {h}: edges exist"
        if not replace:
            want = full_deg[nodes[blk.dst_offset : blk.dst_offset + blk.num_dst]]
            if fan >= 0:
                want = want.clamp(max=fan)
            assert torch.equal(deg, want), f"hop {h}: min(in-degree, fan-out) edges per node"
            dst_pos = blk.dst_positions()
            pairs = dst_pos * (edges.size(0) + 1) + eids
            assert pairs.unique().numel() == pairs.numel(), f"hop {h}: no edge twice without replacement"
        # first-reached nodes of hop h are sources of hop h
        new = nodes[sum(counts[: h + 1]) : reached]
        assert set(new.tolist()) <= set(src_ids.tolist())
    return True


def in_degrees(num_nodes: int, dst: torch.Tensor) -> torch.Tensor:
    return torch.bincount(dst, minlength=num_nodes)


@pytest.fixture(scope="module")
def cora() -> Path:
    """The shipped Cora (examples/data/cora), or a skip when it is missing."""
    path = REPO / "examples" / "data" / "cora"
    if not (path / "graphferry.json").exists():
        pytest.skip("examples/data/cora is not available")
    return path


def wait_made_ahead(engine, batches: int = 3, timeout: float = 10.0) -> int:
    """The batches an engine loader's loader stage has finished in its
    current epoch, once it reached ``batches`` or ``timeout`` seconds passed
    while the calling (training) thread held no work: how the tests see
    that batches are made ahead of their consumer."""
    import time

    deadline = time.monotonic() + timeout
    while engine.stats().current.loader.batches < batches and time.monotonic() < deadline:
        time.sleep(0.01)
    return engine.stats().current.loader.batches

"""``python -m graphferry partition``: per-rank folders on CiteSeer for each
method and layout, checked against the source dataset (every node and edge
accounted for, id mappings, rows, co-partitioned seeds, the self-reliant
L-hop neighbourhood by a BFS) and METIS's edge cut against random's."""

from __future__ import annotations

import json
from collections import deque

import numpy as np
import pyarrow.ipc
import pytest
import testdata

import graphferry
from graphferry import partition
from graphferry.__main__ import main

PARTS = 3
HOPS = 2


def _edges(path) -> tuple[np.ndarray, np.ndarray]:
    """src, dst of a dataset's edges.arrow; the row is the edge id."""
    with pyarrow.ipc.open_file(str(path / "edges.arrow")) as reader:
        table = reader.read_all()
    return table.column("src").to_numpy(), table.column("dst").to_numpy()


@pytest.fixture(scope="module")
def citeseer(tmp_path_factory):
    dst = tmp_path_factory.mktemp("citeseer") / "gf"
    graphferry.convert_npy(testdata.dataset_dir("citeseer"), dst)
    with graphferry.Graph.open(dst) as g:
        data = {name: g.get_node_data(name).clone() for name in g.node_data_names()}
    src, dstn = _edges(dst)
    return dst, data, src, dstn


def _method_or_skip(method):
    if method == "metis":
        pytest.importorskip("pymetis")


def _bfs_depth(src, dst, n, roots, hops) -> dict[int, int]:
    """Hops from the nearest root following in-edges backwards."""
    ins = [[] for _ in range(n)]
    for u, v in zip(src.tolist(), dst.tolist()):
        ins[v].append(u)
    depth = {int(r): 0 for r in roots}
    queue = deque(depth)
    while queue:
        v = queue.popleft()
        if depth[v] == hops:
            continue
        for u in ins[v]:
            if u not in depth:
                depth[u] = depth[v] + 1
                queue.append(u)
    return depth


@pytest.mark.parametrize("layout", ["dsp", "self-reliant", "hybrid"])
@pytest.mark.parametrize("method", ["metis", "random", "range", "ldg"])
def test_partition_folders(citeseer, tmp_path, method, layout):
    _method_or_skip(method)
    src_dir, data, src, dst = citeseer
    n, e = len(data["label"]), len(src)
    out = tmp_path / "parts"
    meta = partition.partition(src_dir, out, parts=PARTS, method=method, layout=layout, hops=HOPS, seed=3)
    assert meta == json.loads((out / "partition.json").read_text())
    assert (meta["method"], meta["parts"], meta["layout"], meta["num_nodes"], meta["num_edges"]) == (
        method,
        PARTS,
        layout,
        n,
        e,
    )
    assign = np.load(out / "assignment.npy")
    assert assign.shape == (n,) and assign.min() >= 0 and assign.max() < PARTS
    assert meta["edge_cut"] == int((assign[src] != assign[dst]).sum())
    assert set(meta["edge_cuts"]) >= {"range", "random", method}

    owner_seen = np.zeros(n, dtype=np.int64)
    edge_seen = np.zeros(e, dtype=np.int64)
    seeds = {k: np.zeros(n, dtype=np.int64) for k in ("train_mask", "val_mask", "test_mask")}
    src_np, dst_np = src, dst
    for r, info in enumerate(meta["ranks"]):
        part = out / f"part-{r}"
        assert info["dir"] == f"part-{r}"
        gid = np.load(part / "global_ids.npy")
        geid = np.load(part / "global_eids.npy")
        owned = info["num_owned"]
        # Id mapping: a bijection onto distinct source nodes, owned ones first.
        assert len(np.unique(gid)) == len(gid) == info["num_nodes"]
        assert (assign[gid[:owned]] == r).all() and (assign[gid[owned:]] != r).all()
        assert (np.diff(gid[:owned]) > 0).all()
        owner_seen[gid[:owned]] += 1
        lsrc, ldst = _edges(part)
        assert len(lsrc) == len(geid) == info["num_edges"]
        # Every local edge is the source edge its global id names.
        assert (src_np[geid] == gid[lsrc]).all() and (dst_np[geid] == gid[ldst]).all()
        np.add.at(edge_seen, geid, 1)
        with graphferry.Graph.open(part, verify=True) as g:
            assert g.num_nodes == info["num_nodes"]
            local = {name: g.get_node_data(name) for name in g.node_data_names()}
        assert (local["label"].numpy() == data["label"].numpy()[gid]).all()
        for key, count in seeds.items():
            mask = local[key].numpy().astype(bool)
            assert not mask[owned:].any(), f"{key} set on a node rank {r} does not own"
            assert (mask[:owned] == data[key].numpy()[gid[:owned]].astype(bool)).all()
            count[gid[mask]] += 1
        if layout == "self-reliant":
            feat = local["feat"].numpy()
            assert info["feature_file"] == "feat.bin" and len(feat) == len(gid)
            assert not (part / "feat.npy").exists()
        else:
            feat = np.load(part / "feat.npy")
            assert info["feature_file"] == "feat.npy" and len(feat) == owned
            assert "feat" not in local
        assert np.array_equal(feat, data["feat"].numpy()[gid[: len(feat)]])
        indeg_local = np.bincount(ldst, minlength=len(gid))
        indeg = np.bincount(dst_np, minlength=n)
        if layout == "dsp":
            assert (indeg_local[:owned] == indeg[gid[:owned]]).all()
            assert (indeg_local[owned:] == 0).all()
        elif layout == "hybrid":
            assert len(gid) == n and len(lsrc) == e
        else:
            is_seed = sum(data[k].numpy() for k in seeds).astype(bool)
            roots = [v for v in gid[:owned].tolist() if is_seed[v]]
            depth = _bfs_depth(src_np, dst_np, n, roots, HOPS)
            pos = {v: i for i, v in enumerate(gid.tolist())}
            missing = [v for v in depth if v not in pos]
            assert not missing, f"rank {r} lacks {len(missing)} nodes of its {HOPS}-hop neighbourhood"
            inner = [v for v, d in depth.items() if d < HOPS]
            assert all(indeg_local[pos[v]] == indeg[v] for v in inner)
    assert (owner_seen == 1).all(), "every node is owned by exactly one rank"
    if layout == "dsp":
        assert (edge_seen == 1).all(), "every edge is held by exactly one rank"
    elif layout == "hybrid":
        assert (edge_seen == PARTS).all()
    for key, count in seeds.items():
        assert (count == data[key].numpy().astype(np.int64)).all(), f"each {key} seed on exactly one rank"


def test_metis_cut_below_random_and_range(citeseer, tmp_path, capsys):
    pytest.importorskip("pymetis")
    src_dir = citeseer[0]
    cuts = {}
    for method in ("metis", "random", "range"):
        out = tmp_path / method
        assert main(["partition", str(src_dir), str(out), "--parts", "4", "--method", method, "--quiet"]) == 0
        printed = capsys.readouterr().out
        meta = json.loads((out / "partition.json").read_text())
        cuts[method] = meta["edge_cut"]
        assert f"edge cut {meta['edge_cut']} of {meta['num_edges']}" in printed
        assert f"random {meta['edge_cuts']['random']}" in printed
        if method == "metis":
            assert (
                meta["edge_cuts"]["random"]
                == json.loads((tmp_path / "metis" / "partition.json").read_text())["edge_cuts"]["random"]
            )
    assert cuts["metis"] < cuts["random"]
    assert cuts["metis"] < cuts["range"]


def test_partition_errors(citeseer, tmp_path, capsys):
    src_dir = citeseer[0]
    with pytest.raises(ValueError, match="parts"):
        partition.partition(src_dir, tmp_path / "x", parts=0, method="range")
    with pytest.raises(ValueError, match="method"):
        partition.partition(src_dir, tmp_path / "x", parts=2, method="kahip")
    with pytest.raises(ValueError, match="layout"):
        partition.partition(src_dir, tmp_path / "x", parts=2, method="range", layout="pagraph")
    with pytest.raises(ValueError, match="hops"):
        partition.partition(src_dir, tmp_path / "x", parts=2, method="range", hops=-1)
    assert (
        main(["partition", str(tmp_path / "missing"), str(tmp_path / "y"), "--parts", "2", "--method", "random"]) == 1
    )
    assert "graphferry partition" in capsys.readouterr().err


def test_engine_rejects_bad_assignment(citeseer, tmp_path):
    """The C entry point checks what Python hands it."""
    import ctypes

    import torch

    from graphferry._native.dlpack import borrow

    src_dir, data = citeseer[0], citeseer[1]
    n = len(data["label"])
    for bad, match in ((torch.zeros(n - 1, dtype=torch.int64), "entries"), (torch.full((n,), 5), "out of range")):
        t = borrow(bad, "assignment")
        opts = partition.gf_partition_options(method=2, num_parts=2, assignment=ctypes.pointer(t.dltensor), layout=0)
        with pytest.raises(graphferry.GraphferryError, match=match):
            partition.gf_dataset_partition(bytes(src_dir), bytes(tmp_path / "z"), ctypes.byref(opts))


def test_progress_reaches_python(citeseer, tmp_path, monkeypatch):
    """The engine calls back after each rank's folder (from its own thread)."""
    seen = []

    class Recorder:
        n = 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, k):
            self.n += k
            seen.append(self.n)

    monkeypatch.setattr(partition, "_bar", lambda total, desc, quiet: Recorder())
    partition.partition(citeseer[0], tmp_path / "p", parts=4, method="random", layout="hybrid")
    assert seen == [1, 2, 3, 4]


def test_output_folder_refused_unless_asked(citeseer, tmp_path, capsys):
    """Issue 34: partition, convert and generate wrote into any folder (the
    source's own, one inside it, its parent, one holding other files).
    Each is refused naming the folder; overwrite=True (--overwrite) replaces
    only what the tool writes."""
    src_dir = citeseer[0]
    for dst, why in [
        (src_dir, "is the source folder"),
        (src_dir / "parts", "is inside the source folder"),
        (src_dir.parent, "holds the source folder"),
    ]:
        with pytest.raises(graphferry.errors.InvalidArgumentError, match=f"output folder {dst} {why}"):
            partition.partition(src_dir, dst, parts=2, method="range")
        assert not (src_dir / "part-0").exists() and not (src_dir / "parts").exists()
    used = tmp_path / "used"
    used.mkdir()
    (used / "notes.txt").write_text("mine")
    args = ["partition", str(src_dir), str(used), "--parts", "2", "--method", "range"]
    assert main(args) == 1
    assert f"the output folder {used} is not empty (holds notes.txt)" in capsys.readouterr().err
    assert main([*args, "--overwrite"]) == 0
    written = ["assignment.npy", "new_to_old.npy", "old_to_new.npy", "part-0", "part-1", "partition.json"]
    assert sorted(p.name for p in used.iterdir()) == sorted([*written, "notes.txt"])

    # The dataset writers, through Python and the command line.
    with pytest.raises(graphferry.errors.InvalidArgumentError, match="holds a dataset or a partition"):
        graphferry.generate("tiny", src_dir)
    with pytest.raises(graphferry.errors.InvalidArgumentError, match="holds a dataset or a partition"):
        graphferry.convert_npy(testdata.dataset_dir("citeseer"), used / "part-0")
    gen = tmp_path / "gen"
    graphferry.generate("tiny", gen)
    (gen / "notes.txt").write_text("mine")
    assert main(["generate", "tiny", str(gen), "--seed", "3"]) == 1
    assert "--overwrite" in capsys.readouterr().err
    assert main(["generate", "tiny", str(gen), "--seed", "3", "--overwrite"]) == 0
    assert (gen / "notes.txt").read_text() == "mine"
    graphferry.convert_npy(testdata.dataset_dir("citeseer"), gen, overwrite=True)
    with graphferry.Graph.open(gen) as g:
        assert g.num_nodes == 3327


def test_ldg_with_a_memory_limit_and_resume_from_the_command_line(citeseer, tmp_path, capsys):
    """The streaming partitioner (issue 35) through the command line: a
    memory limit below what its assignment needs is refused up front; a
    folder holding an interrupted run's progress file is written into with
    --resume (a run that does not match it starts over), refused without."""
    src_dir = citeseer[0]
    out = tmp_path / "ldg"
    args = ["partition", str(src_dir), str(out), "--parts", "3", "--method", "ldg", "--quiet"]
    assert main([*args, "--memory-limit", "100"]) == 1
    assert "memory limit of 100 bytes is below" in capsys.readouterr().err
    assert main([*args, "--memory-limit", str(1 << 30)]) == 0
    meta = json.loads((out / "partition.json").read_text())
    assert meta["method"] == "ldg" and meta["parts"] == 3
    (out / "partition.progress.json").write_text("{}")  # what an interrupted run leaves (here: matching nothing)
    assert main(args) == 1
    assert "or ask to overwrite" in capsys.readouterr().err
    assert main([*args, "--resume"]) == 0
    assert json.loads((out / "partition.json").read_text()) == meta
    assert not (out / "partition.progress.json").exists()

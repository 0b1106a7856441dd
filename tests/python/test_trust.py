"""Issue 23 ("Trust the bytes"): the findings of a trial as a new user would
run it, each a test that failed before its fix: unclear messages, inputs
quietly rounded, tools that hang on a pipe or read /dev/zero without end,
damage laundered into fresh checksums."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import graphferry
from graphferry import partition
from graphferry.__main__ import main

REPO = Path(__file__).resolve().parents[2]
CORA = REPO / "examples" / "data" / "cora"


@pytest.fixture
def cora_copy(tmp_path) -> Path:
    dst = tmp_path / "cora"
    shutil.copytree(CORA, dst)
    return dst


# -- the messages and the float list ----------------------------------------


@pytest.mark.parametrize("side", [0, 1])
def test_hetero_from_coo_refuses_float_lists(side):
    """A list of floats is refused naming the value, never truncated to
    int64 (it was: 1.5 became 1)."""
    pair = [[0, 1], [1, 0]]
    pair[side] = [0.0, 1.5]
    with pytest.raises(TypeError, match=rf"\[{side}\]' must hold integer ids \(got 1\.5 at position 1"):
        graphferry.HeteroGraph.from_coo({"a": 3}, {("a", "r", "a"): tuple(pair)})
    # An integral float is refused too (Graph.from_coo refuses float dtypes).
    with pytest.raises(TypeError, match=r"got 1\.0 at position 0"):
        graphferry.HeteroGraph.from_coo({"a": 3}, {("a", "r", "a"): ([1.0], [0])})
    with graphferry.HeteroGraph.from_coo({"a": 3}, {("a", "r", "a"): ([0, 1], [1, 2])}) as g:
        assert g.num_edges(("a", "r", "a")) == 2


def test_closed_graph_says_closed():
    g = graphferry.Graph.from_coo(torch.tensor([0, 1]), torch.tensor([1, 0]))
    g.close()
    with pytest.raises(graphferry.GraphferryError, match=r"gf_graph_num_nodes: the graph is closed") as info:
        _ = g.num_nodes
    assert "NULL" not in str(info.value)
    with pytest.raises(graphferry.GraphferryError, match="the graph is closed"):
        graphferry.sample_neighbors(g, torch.tensor([0]), [1])


@pytest.mark.parametrize("parts", [2**31 - 1, 5_000_000_000, 10**11])
@pytest.mark.parametrize("method", ["metis", "range"])
def test_partition_huge_parts(cora_copy, tmp_path, capsys, parts, method):
    """A huge --parts is a clear error before anything is written (metis
    raised "Caught an unknown exception!", range wrote folders until the
    disk filled, 5e9 wrapped through int32)."""
    out = tmp_path / "out"
    argv = ["partition", str(cora_copy), str(out), "--parts", str(parts), "--method", method, "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"parts must be an integer from 1 to 65536 (got {parts})" in err
    assert not out.exists()


def test_partition_metis_more_parts_than_nodes(tmp_path):
    pytest.importorskip("pymetis")
    src = tmp_path / "tiny"
    graphferry.generate("tiny", src)
    with pytest.raises(ValueError, match="metis cannot split 1024 nodes into 2000 parts"):
        partition.partition(src, tmp_path / "out", parts=2000, method="metis")
    assert not (tmp_path / "out").exists()


# -- the tools ----------------------------------------------------------------


def _run_cli(*args, timeout=60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run(
        [sys.executable, "-m", "graphferry", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


@pytest.fixture
def typed_copy(tmp_path) -> Path:
    path = tmp_path / "hetero-tiny"
    graphferry.generate("hetero-tiny", path)
    return path


def _pipe_meta(path: Path) -> None:
    (path / "graphferry.json").unlink()
    os.mkfifo(path / "graphferry.json")


def test_tools_refuse_a_pipe_for_graphferry_json(cora_copy, typed_copy, tmp_path):
    """A named pipe as graphferry.json is refused at once (verify,
    HeteroGraph.open and partition waited for a writer forever)."""
    _pipe_meta(cora_copy)
    _pipe_meta(typed_copy)
    out = _run_cli("verify", cora_copy, timeout=30)
    assert out.returncode == 1 and "is not a regular file (a named pipe)" in out.stderr, out.stderr
    with pytest.raises(OSError, match="is not a regular file"):
        graphferry.HeteroGraph.open(typed_copy)
    out = _run_cli("partition", cora_copy, tmp_path / "parts", "--parts", "2", "--method", "metis", timeout=30)
    assert out.returncode == 1 and "is not a regular file" in out.stderr, out.stderr
    assert not (tmp_path / "parts").exists()


def test_verify_bounds_dev_zero(cora_copy):
    """graphferry.json linked to /dev/zero: refused, not read until the
    process is killed."""
    (cora_copy / "graphferry.json").unlink()
    (cora_copy / "graphferry.json").symlink_to("/dev/zero")
    out = _run_cli("verify", cora_copy, timeout=30)
    assert out.returncode == 1 and "is not a regular file (a character device)" in out.stderr, out.stderr


def test_deeply_nested_json(cora_copy, typed_copy, capsys):
    for path in (cora_copy, typed_copy):
        (path / "graphferry.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["verify", str(cora_copy)]) == 1
    assert "nested too deeply" in capsys.readouterr().err
    with pytest.raises(ValueError, match="nested too deeply"):
        graphferry.HeteroGraph.open(typed_copy)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m["node_types"][1].pop("name"), r"node_types\[1\] has no 'name'"),
        (lambda m: m["node_types"][0].update(name=7), r"node_types\[0\]\.name must be a non-empty string \(got 7\)"),
        (lambda m: m["edge_types"][2].pop("rel"), r"edge_types\[2\] has no 'rel'"),
        (lambda m: m["edge_types"][0].update(num_edges=-1), r"edge_types\[0\]\.num_edges must be an integer >= 0"),
        (lambda m: m.update(node_types=[3]), r"node_types\[0\] must be an object"),
    ],
)
def test_typed_meta_fields_named(typed_copy, edit, message):
    """A typed dataset missing a node type's "name" (or another field) is a
    ValueError naming the entry and the field (a bare KeyError('name'))."""
    meta_path = typed_copy / "graphferry.json"
    meta = json.loads(meta_path.read_text())
    edit(meta)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=message):
        graphferry.HeteroGraph.open(typed_copy)


@pytest.mark.parametrize("method", ["range", "metis"])
def test_partition_verifies_its_source_first(cora_copy, tmp_path, method, capsys):
    """partition refuses a source that fails verify before writing anything
    (it copied the damage into rank folders under fresh checksums)."""
    if method == "metis":
        pytest.importorskip("pymetis")
    feat = cora_copy / "feat.bin"
    data = bytearray(feat.read_bytes())
    data[len(data) // 2] ^= 0x10
    feat.write_bytes(bytes(data))
    argv = ["partition", str(cora_copy), str(tmp_path / "parts"), "--parts", "2", "--method", method, "--quiet"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "feat.bin" in err and "CRC-32C" in err, err
    assert not (tmp_path / "parts").exists()


# -- no silent short epoch ----------------------------------------------------


def test_superseded_iterator_raises(tmp_path):
    """A second iter() on the same graphferry.Loader supersedes the first
    epoch: the first iterator raises at its next step (it stopped quietly,
    one batch of 22 into its epoch, as if the epoch were complete)."""
    with graphferry.Graph.open(CORA) as g:
        loader = graphferry.Loader(g, torch.arange(g.num_nodes), [3], batch_size=128, seed=1)
        first = iter(loader)
        next(first)
        second = iter(loader)
        with pytest.raises(graphferry.GraphferryError, match="this epoch was superseded before its end") as info:
            next(first)
        assert info.value.status_name == "GF_ESTATE"
        with pytest.raises(StopIteration):  # an iterator that raised is over
            next(first)
        assert sum(1 for _ in second) == len(loader)  # the new epoch is whole
        # An epoch iterated to its end and a later one: nothing raises.
        assert sum(1 for _ in loader) == len(loader)
        loader.close()


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m["feature"].update(shape=[m["feature"]["shape"][0], 1, m["feature"]["shape"][1]]),
        lambda m: m.pop("feature"),
        lambda m: m.update(feature=None),
    ],
    ids=["reshaped", "removed", "null"],
)
def test_declarations_edited_refused(tmp_path, edit):
    """graphferry.json edited by hand but self-consistent (the feature
    declared 3-D over the same bytes, its entry removed or null) is refused;
    it was served re-shaped, or as a dataset without features."""
    path = tmp_path / "tiny"
    graphferry.generate("tiny", path)
    meta = json.loads((path / "graphferry.json").read_text())
    edit(meta)
    (path / "graphferry.json").write_text(json.dumps(meta))
    with pytest.raises(OSError, match="edited by hand; rewrite the dataset with graphferry's tools"):
        graphferry.Graph.open(path)
    # The shipped Cora predates the declared sum: it opens as before.
    with graphferry.Graph.open(CORA) as g:
        assert g.num_nodes == 2708


@pytest.mark.parametrize("files", ["absent", "empty"])
def test_declarations_checked_without_file_sums(tmp_path, files):
    """Issue 34: with "files" absent or empty, a dtype edit of graphferry.json
    opened silently (the check covered only datasets with file sums); the
    same dataset without its file sums still opens."""
    path = tmp_path / "tiny"
    graphferry.generate("tiny", path)
    meta = json.loads((path / "graphferry.json").read_text())
    if files == "absent":
        del meta["files"]
    else:
        meta["files"] = {}
    (path / "graphferry.json").write_text(json.dumps(meta))
    with graphferry.Graph.open(path) as g:
        assert g.get_node_data("feat").dtype == torch.float32
    meta["feature"]["dtype"] = "int32"
    (path / "graphferry.json").write_text(json.dumps(meta))
    with pytest.raises(OSError, match="edited by hand; rewrite the dataset with graphferry's tools"):
        graphferry.Graph.open(path)


# -- verified as read -----------------------------------------------------------


def test_feature_block_verified_as_read(tmp_path):
    """A byte of feat.bin changed in place while a loader iterates: the first
    batch that reads its block fails, naming the file and the block."""
    path = tmp_path / "tiny"
    graphferry.generate("tiny", path)
    feat = path / "feat.bin"
    with graphferry.Graph.open(path) as g:
        loader = graphferry.Loader(g, torch.arange(g.num_nodes), [3], batch_size=64, feature_names=["feat"])
        with open(feat, "r+b") as f:  # in place: the map shares the file
            f.seek(1000)
            byte = f.read(1)
            f.seek(1000)
            f.write(bytes([byte[0] ^ 0x08]))
        with pytest.raises(OSError, match=r"feat\.bin: block 0 \(bytes 0 to 65535\) has CRC-32C"):
            for _ in loader:
                pass
        loader.close()


def test_old_dataset_warns_once(cora_copy):
    """A dataset without block sums (Cora as graphferry wrote it before it
    recorded them: no "blocks", no "declared") opens and says once that its
    features are not verified as read."""
    import warnings

    from graphferry import _metafile

    meta = json.loads((cora_copy / "graphferry.json").read_text())
    del meta["blocks"], meta["declared"]
    (cora_copy / "graphferry.json").write_text(json.dumps(meta, indent=2))
    _metafile._warned.clear()
    with pytest.warns(UserWarning, match="records no per-block checksums"):
        graphferry.Graph.open(cora_copy).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graphferry.Graph.open(cora_copy).close()
        graphferry.Graph.open(cora_copy, verify=True).close()


# -- distributed: a failing rank named --------------------------------------------

_RANK = r"""
import sys, torch, torch.distributed as dist, graphferry
from graphferry import distributed
rank, port, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
comm = distributed.TorchComm(timeout=20)
g = graphferry.Graph.open(path, num_patches=2, partition="random", seed=5)
loader = distributed.DistributedLoader(g, torch.arange(g.num_nodes), [5, 5], comm=comm, batch_size=64, seed=1)
for i, sub in enumerate(loader):
    if rank == 1 and i == 1:
        raise RuntimeError("rank 1 fails on purpose")
"""


def test_failing_rank_named_to_the_others(tmp_path):
    """A rank whose exception escapes while its distributed loader is open
    exits with that exception (status 1, no SIGABRT), and the other rank's
    error names it and its exception (it said only that Gloo's connection
    was closed by the peer)."""
    from test_distributed import _free_port

    path = tmp_path / "tiny"
    graphferry.generate("tiny", path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    port = str(_free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RANK, str(r), port, str(path)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(2)
    ]
    outs = []
    for p in procs:
        try:
            outs.append(p.communicate(timeout=120)[0])
        finally:
            p.kill()
    assert [p.returncode for p in procs] == [1, 1], outs
    assert "RuntimeError: rank 1 fails on purpose" in outs[1]
    assert "rank 1 failed: RuntimeError: rank 1 fails on purpose" in outs[0], outs[0]

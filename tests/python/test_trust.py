"""Issue 23 ("Trust the bytes"): the findings of a trial as a new user would
run it, each a test that failed before its fix: unclear messages, inputs
quietly rounded, tools that hang on a pipe or read /dev/zero without end,
damage laundered into fresh checksums."""

from __future__ import annotations

import shutil
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

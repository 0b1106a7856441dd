"""The typed (heterogeneous) dataset layout from Python: generate("hetero-tiny"),
open it, read its types and per-type node data, verify it, and check that its
relations are numbered the way DGL numbers a heterograph's."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

import graphferry


@pytest.fixture(scope="module")
def hetero_tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("typed") / "hetero-tiny"
    graphferry.generate("hetero-tiny", path)
    return path


def _meta(path):
    with open(path / "graphferry.json", encoding="utf-8") as f:
        return json.load(f)


def test_generate_writes_types(hetero_tiny):
    meta = _meta(hetero_tiny)
    ntypes = [t["name"] for t in meta["node_types"]]
    assert ntypes == ["author", "field_of_study", "institution", "paper"]
    etypes = [(t["src"], t["rel"], t["dst"]) for t in meta["edge_types"]]
    assert ("author", "writes", "paper") in etypes and ("paper", "rev_writes", "author") in etypes
    assert etypes == sorted(etypes), "relations in canonical order"
    assert sum(t["num_nodes"] for t in meta["node_types"]) == meta["num_nodes"]
    assert sum(t["num_edges"] for t in meta["edge_types"]) == meta["num_edges"]
    # Every data file is checksummed, the per-type ones included.
    for entry in meta["node_data"] + meta["edge_data"]:
        assert entry["file"] in meta["files"]


def test_open_typed_dataset(hetero_tiny):
    meta = _meta(hetero_tiny)
    counts = {t["name"]: t["num_nodes"] for t in meta["node_types"]}
    offsets = np.concatenate([[0], np.cumsum([t["num_nodes"] for t in meta["node_types"]])])
    with graphferry.Graph.open(hetero_tiny, num_patches=3, partition="random", seed=1) as g:
        assert g.num_nodes == meta["num_nodes"]
        assert g.num_edges == meta["num_edges"]
        assert g.num_types == (4, 7)
        names = g.node_data_names()
        for ntype, width in {"author": 8, "field_of_study": 4, "institution": 4, "paper": 16}.items():
            assert f"{ntype}/feat" in names
            feat = g.get_node_data(f"{ntype}/feat")
            assert feat.shape == (counts[ntype], width) and feat.dtype == torch.float32
        label = g.get_node_data("label")
        paper = list(counts).index("paper")
        lo, hi = int(offsets[paper]), int(offsets[paper + 1])
        paper_label = g.get_node_data("paper/label")
        assert torch.equal(label[lo:hi], paper_label)
        assert (label[:lo] == -1).all() and (label[hi:] == -1).all()
        train = g.get_node_data("paper/train_mask").bool()
        assert torch.equal(g.get_node_data("train_mask")[lo:hi].bool(), train)
        years = g.get_node_data("time")[lo:hi]
        assert years.dtype == torch.int64 and (years >= 2000).all() and (years <= 2020).all()
        with pytest.raises(graphferry.GraphferryError, match="row per node"):
            g.set_node_data("paper/bad", torch.zeros(3))


def test_generate_is_reproducible_across_threads(tmp_path):
    graphferry.generate("hetero-tiny", tmp_path / "a", num_threads=1)
    graphferry.generate("hetero-tiny", tmp_path / "b", num_threads=2)
    assert _meta(tmp_path / "a")["files"] == _meta(tmp_path / "b")["files"]
    graphferry.generate("hetero-tiny", tmp_path / "c", seed=9)
    assert _meta(tmp_path / "a")["files"] != _meta(tmp_path / "c")["files"]


def test_verify_typed_dataset(hetero_tiny):
    out = subprocess.run(
        [sys.executable, "-m", "graphferry", "verify", str(hetero_tiny)], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert "node.paper.feat.bin" in out.stdout and "edge.time.bin" in out.stdout


def test_damaged_typed_file_is_named(hetero_tiny, tmp_path):
    import shutil

    copy = tmp_path / "ds"
    shutil.copytree(hetero_tiny, copy)
    path = copy / "node.author.feat.bin"
    data = bytearray(path.read_bytes())
    data[5] ^= 0x10
    path.chmod(0o644)
    path.write_bytes(bytes(data))
    with pytest.raises(graphferry.GraphferryError, match="node.author.feat.bin"):
        graphferry.Graph.open(copy, verify=True)


def test_relation_order_matches_dgl(hetero_tiny):
    dgl = pytest.importorskip("dgl")
    meta = _meta(hetero_tiny)
    etypes = [(t["src"], t["rel"], t["dst"]) for t in meta["edge_types"]]
    data = {et: (torch.tensor([0]), torch.tensor([0])) for et in etypes}
    hg = dgl.heterograph(data, num_nodes_dict={t["name"]: t["num_nodes"] for t in meta["node_types"]})
    assert hg.canonical_etypes == etypes
    assert hg.ntypes == [t["name"] for t in meta["node_types"]]


@pytest.mark.parametrize("temporal", ["node", "edge"])
def test_dataset_times_reach_the_engine(hetero_tiny, temporal):
    # Opening sets the node and edge times: temporal sampling from papers
    # with a cut-off year reaches no node later than it (edge times are the
    # later of their ends' times, so the edge variant holds it too).
    from graphferry.sampling import sample_neighbors

    meta = _meta(hetero_tiny)
    offsets = np.concatenate([[0], np.cumsum([t["num_nodes"] for t in meta["node_types"]])])
    paper = [t["name"] for t in meta["node_types"]].index("paper")
    with graphferry.Graph.open(hetero_tiny, num_patches=2) as g:
        node_time = g.get_node_data("time")
        seeds = torch.arange(int(offsets[paper]), int(offsets[paper]) + 16)
        cut = torch.full((16,), 2010, dtype=torch.int64)
        sub = sample_neighbors(
            g, seeds, [-1, -1], frontier="new", disjoint=True, temporal=temporal, seed_times=cut, seed=3
        )
        reached = sub.nodes[sub.batch_size :]
        assert reached.numel() > 0
        assert (node_time[reached] <= 2010).all()
        untimed = sample_neighbors(g, seeds, [-1, -1], frontier="new", disjoint=True, seed=3)
        assert (node_time[untimed.nodes[untimed.batch_size :]] > 2010).any(), "the cut-off excludes something"


def _open_typed_arrow(path, types=None, **kw):
    # gf_graph_open_typed_arrow has no Python wrapper yet: bind it here with
    # the package's own binder (its C prototype is in graphferry.h).
    import ctypes

    from graphferry._native import lib as _lib
    from graphferry.graph import _graph_options

    @_lib.cfunc(
        "gf_graph_open_typed_arrow",
        [ctypes.c_char_p, ctypes.c_char_p, _lib.gf_graph_options_p, _lib.c_void_pp],
        ctypes.c_int,
    )
    def gf_graph_open_typed_arrow(path, types_json, options, out_graph, /): ...

    opts, _keep = _graph_options(**kw)
    tj = None if types is None else json.dumps(types).encode()
    return graphferry.Graph._make(
        lambda out: gf_graph_open_typed_arrow(str(path).encode(), tj, ctypes.byref(opts), out)
    )


def _edges(g):
    """(global src, global dst, edge id) of every edge, sorted."""
    from graphferry.sampling import sample_neighbors

    sub = sample_neighbors(g, torch.arange(g.num_nodes), [-1])
    b = sub.blocks[0]
    dst = sub.nodes[b.dst_offset : b.dst_offset + b.num_dst].repeat_interleave(b.indptr.diff())
    rows = torch.stack([sub.nodes[b.indices], dst, b.edge_ids], 1).tolist()
    return sorted(map(tuple, rows))


@pytest.mark.parametrize("etype_as", ["index", "names", "triples", "pandas"])
def test_typed_arrow_from_pyarrow(hetero_tiny, tmp_path, etype_as):
    # hetero-tiny's edges, written by pyarrow as a typed edge table (type-
    # local ids, relations interleaved, the types in the schema metadata),
    # open as the same typed graph with the same edge ids.
    pa = pytest.importorskip("pyarrow")
    feather = pytest.importorskip("pyarrow.feather")
    meta = _meta(hetero_tiny)
    nodes = np.concatenate([[0], np.cumsum([t["num_nodes"] for t in meta["node_types"]])])
    edges = np.concatenate([[0], np.cumsum([t["num_edges"] for t in meta["edge_types"]])])
    ntype = {t["name"]: i for i, t in enumerate(meta["node_types"])}
    table = feather.read_table(hetero_tiny / "edges.arrow")
    src, dst = table["src"].to_numpy(), table["dst"].to_numpy()
    rel = np.searchsorted(edges, np.arange(len(src)), side="right") - 1
    # Interleave the relations (round-robin) while each keeps its own order.
    rank = np.zeros(len(src))
    for r in range(len(edges) - 1):
        rank[edges[r] : edges[r + 1]] = np.arange(edges[r + 1] - edges[r])
    order = np.lexsort((rel, rank))
    ets = meta["edge_types"]
    lsrc = src[order] - nodes[[ntype[ets[r]["src"]] for r in rel[order]]]
    ldst = dst[order] - nodes[[ntype[ets[r]["dst"]] for r in rel[order]]]
    names = {
        "index": None,
        "names": [t["rel"] for t in ets],
        "triples": [f"{t['src']}:{t['rel']}:{t['dst']}" for t in ets],
        "pandas": [t["rel"] for t in ets],
    }[etype_as]
    if names is None:
        etype = pa.array(rel[order].astype(np.int32))
    elif etype_as == "pandas":
        import pandas as pd

        etype = pa.array(pd.Categorical([names[r] for r in rel[order]]))
    else:
        etype = pa.array([names[r] for r in rel[order]]).dictionary_encode()
    types = {"node_types": meta["node_types"], "edge_types": [dict(t, num_edges=0) for t in ets]}
    out = pa.table({"src": lsrc, "dst": pa.array(ldst.astype(np.int32)), "etype": etype})
    out = out.replace_schema_metadata({"graphferry.types": json.dumps(types)})
    feather.write_feather(out, tmp_path / "typed.arrow")
    with graphferry.Graph.open(hetero_tiny) as want, _open_typed_arrow(tmp_path / "typed.arrow", num_patches=2) as got:
        assert got.num_types == (4, 7)
        assert _edges(got) == _edges(want)


def test_typed_arrow_errors(tmp_path):
    pa = pytest.importorskip("pyarrow")
    feather = pytest.importorskip("pyarrow.feather")
    t = pa.table({"src": [0, 1], "dst": [1, 0], "etype": pa.array(["buys", "sells"]).dictionary_encode()})
    feather.write_feather(t, tmp_path / "t.arrow")
    with pytest.raises(graphferry.GraphferryError, match='no "graphferry.types" metadata'):
        _open_typed_arrow(tmp_path / "t.arrow")
    types = {
        "node_types": [{"name": "user", "num_nodes": 2}, {"name": "item", "num_nodes": 2}],
        "edge_types": [{"src": "user", "rel": "buys", "dst": "item"}],
    }
    with pytest.raises(graphferry.GraphferryError, match='"sells" names no relation'):
        _open_typed_arrow(tmp_path / "t.arrow", types)

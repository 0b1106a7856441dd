"""The test datasets the repository carries (testdata.py) are the shared datasets, bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pytest
import testdata

# name -> (nodes, edges, feature shape or None, split sizes): the README of the shared datasets
SIZES = {
    "cora": (2708, 10556, (2708, 1433), (140, 500, 1000)),
    "citeseer": (3327, 9104, (3327, 3703), (120, 500, 1000)),
    "pubmed": (19717, 88648, None, (60, 500, 1000)),
}
FILES = ("indptr", "indices", "feat", "label", "train_idx", "val_idx", "test_idx")


@pytest.mark.parametrize("name", testdata.SHIPPED)
def test_unpacked_dataset_is_valid(name, tmp_path):
    d = testdata.unpack(name, tmp_path / name)
    n, e, feat_shape, splits = SIZES[name]
    indptr, indices = np.load(d / "indptr.npy"), np.load(d / "indices.npy")
    assert indptr.dtype == indices.dtype == np.int64
    assert indptr.shape == (n + 1,) and indptr[0] == 0 and indptr[-1] == e and (np.diff(indptr) >= 0).all()
    assert indices.shape == (e,) and indices.min() >= 0 and indices.max() < n
    meta = json.loads((d / "meta.json").read_text())
    assert (meta["num_nodes"], meta["num_edges"]) == (n, e)
    label = np.load(d / "label.npy")
    assert label.dtype == np.int64 and label.shape == (n,) and label.max() < meta["num_classes"]
    for split, size in zip(("train_idx", "val_idx", "test_idx"), splits):
        idx = np.load(d / f"{split}.npy")
        assert idx.dtype == np.int64 and idx.shape == (size,) and (label[idx] >= 0).all(), split
    if feat_shape is None:
        assert not (d / "feat.npy").exists()
    else:
        feat = np.load(d / "feat.npy")
        assert feat.dtype == np.float32 and feat.shape == feat_shape


@pytest.mark.parametrize("name", testdata.SHIPPED)
def test_unpacked_dataset_equals_shared(name, tmp_path):
    shared = testdata.shared_dataset(name)
    if shared is None:
        pytest.skip(
            f"no shared {name} to compare with (GRAPHFERRY_DATASETS unset and no shared/datasets beside the checkout)"
        )
    d = testdata.unpack(name, tmp_path / name)
    for f in FILES:
        if not (shared / f"{f}.npy").exists():
            assert not (d / f"{f}.npy").exists(), f
            continue
        want, got = np.load(shared / f"{f}.npy"), np.load(d / f"{f}.npy")
        assert want.dtype == got.dtype and want.shape == got.shape and np.array_equal(want, got), f
    want, got = (shared / "meta.json").read_bytes(), (d / "meta.json").read_bytes()
    if name == "cora":  # the shipped dataset keeps meta.json's content, not its bytes
        assert json.loads(want) == json.loads(got)
    else:
        assert want == got


def test_example_without_dataset_names_the_shipped_one(tmp_path):
    """The examples, pointed at a folder without a dataset, say where the
    shipped Cora is and how to convert one, naming no path outside the
    repository."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("examples_common", testdata.REPO / "examples" / "common.py")
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    with pytest.raises(SystemExit) as exc:
        common.open_dataset(str(tmp_path))
    msg = str(exc.value)
    import graphferry

    assert str(graphferry.dataset_path("cora")) in msg, msg  # the Cora the package ships
    assert "python -m graphferry convert" in msg and "/work/" not in msg.replace(str(testdata.REPO), "")


def test_shipped_cora_opens_without_warning():
    """The shipped Cora records its per-block sums and its declared sum
    (issue 23): Graph.open verifies its feat.bin as read and has nothing
    to warn about, in the demo or in any test that opens it."""
    import os
    import warnings

    import graphferry
    from graphferry import _metafile

    cora = testdata.REPO / "examples" / "data" / "cora"
    meta = json.loads((cora / "graphferry.json").read_text())
    assert meta.get("blocks") and meta.get("declared"), "the shipped graphferry.json lacks its block or declared sum"
    _metafile._warned.discard(os.path.realpath(cora))  # warned once per process: forget an earlier open
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with graphferry.Graph.open(cora) as g:
            assert g.num_edges == 10556


def test_shipped_cora_is_what_convert_writes(tmp_path):
    """The shipped Cora is exactly what ``python -m graphferry convert``
    writes from its .npy form (graphferry.json included, byte for byte):
    it went through our own tools, and can be written again by them."""
    import graphferry

    cora = testdata.REPO / "examples" / "data" / "cora"
    src = testdata.unpack("cora", tmp_path / "npy")
    graphferry.convert_npy(src, tmp_path / "gf")
    for f in ("edges.arrow", "nodes.arrow", "feat.bin", "feat.bin.pages", "graphferry.json"):
        assert (tmp_path / "gf" / f).read_bytes() == (cora / f).read_bytes(), f

"""Packs the small datasets the tests need into this folder, from the shared .npy datasets.

    python tests/data/pack.py /path/to/shared/datasets

writes ``citeseer.npz`` and ``pubmed.npz``: each dataset whole (graph, labels, split,
CiteSeer's binary features, meta.json), in small integer types, as NumPy's
compressed archive. ``tests/python/testdata.py`` unpacks them into the .npy
layout (int64 graph and ids, float32 features) bit for bit, and
``test_testdata.py`` checks that against the originals wherever they exist.
Cora is not packed here: the repository ships it (examples/data/cora) and the
tests derive its .npy layout from that.
"""

from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _small(a: np.ndarray, dtype) -> np.ndarray:
    out = a.astype(dtype)
    if not np.array_equal(out, a):
        raise SystemExit(f"values do not fit {np.dtype(dtype)}")
    return out


def pack(src: str, name: str) -> str:
    d = os.path.join(src, name)
    load = lambda f: np.load(os.path.join(d, f + ".npy"))  # noqa: E731
    indptr, indices = load("indptr"), load("indices")
    arrays = {
        "meta_json": np.frombuffer(open(os.path.join(d, "meta.json"), "rb").read(), dtype=np.uint8),
        "degree": _small(np.diff(indptr), np.uint16),
        "indices": _small(indices, np.uint16),
        "label": _small(load("label"), np.int8),
    }
    for split in ("train_idx", "val_idx", "test_idx"):
        arrays[split] = _small(load(split), np.uint16)
    if os.path.exists(os.path.join(d, "feat.npy")):
        feat = load("feat")
        if not np.isin(feat, (0.0, 1.0)).all():
            raise SystemExit(f"{name}: features are not binary")
        rows, cols = np.nonzero(feat)  # row-major order
        arrays["feat_shape"] = np.array(feat.shape, dtype=np.int64)
        arrays["feat_row_counts"] = _small(np.bincount(rows, minlength=feat.shape[0]), np.uint16)
        arrays["feat_cols"] = _small(cols, np.uint16)
    out = os.path.join(HERE, name + ".npz")
    np.savez_compressed(out, **arrays)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    for name in ("citeseer", "pubmed"):
        path = pack(sys.argv[1], name)
        print(f"{path}: {os.path.getsize(path)} bytes")

"""Where the Python tests find their datasets, so that a plain clone runs every test.

The tests read three datasets in the .npy layout of the shared datasets
(``indptr.npy``, ``indices.npy``, ``feat.npy``, ``label.npy``,
``{train,val,test}_idx.npy``, ``meta.json``; README "Test data"):

* ``cora``: derived from the Cora the repository ships for the demo
  (``examples/data/cora``, our dataset layout);
* ``citeseer`` and ``pubmed``: unpacked from ``tests/data/*.npz`` (each whole,
  about 180 KB; ``tests/data/pack.py`` made them).

Where the shared datasets exist, they are read instead: ``$GRAPHFERRY_DATASETS``
when set, else the first ``shared/datasets`` folder beside the checkout or
beside a folder above it. The two sources hold the same arrays bit for bit
(``test_testdata.py`` checks it wherever both exist). Larger datasets that are
not shipped (facebook_page, github, squirrel) are only ever read from there.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ("cora", "citeseer", "pubmed")
_SHIPPED_CORA = REPO / "examples" / "data" / "cora"
_PACKED = REPO / "tests" / "data"
_SPLITS = ("train_idx", "val_idx", "test_idx")

_unpacked_root: Path | None = None


def shared_datasets_dir() -> Path | None:
    """$GRAPHFERRY_DATASETS when set, else the first shared/datasets beside the
    checkout or beside a folder above it, else None."""
    env = os.environ.get("GRAPHFERRY_DATASETS")
    if env:
        return Path(env)
    for parent in REPO.parents:
        cand = parent / "shared" / "datasets"
        if cand.is_dir():
            return cand
    return None


def shared_dataset(name: str) -> Path | None:
    """The shared copy of dataset ``name`` (.npy layout), or None."""
    root = shared_datasets_dir()
    if root is not None and (root / name / "indptr.npy").is_file():
        return root / name
    return None


def unpack(name: str, dst: Path) -> Path:
    """Writes the repository's copy of ``name`` into ``dst`` in the .npy layout
    (the dtypes of the shared datasets) and returns ``dst``."""
    if name not in SHIPPED:
        raise ValueError(f"the repository ships no {name!r} (it ships {', '.join(SHIPPED)})")
    dst.mkdir(parents=True, exist_ok=True)
    if name == "cora":
        arrays, meta = _from_shipped_cora()
    else:
        arrays, meta = _from_npz(_PACKED / f"{name}.npz")
    for key, a in arrays.items():
        np.save(dst / f"{key}.npy", a)
    (dst / "meta.json").write_bytes(meta)
    return dst


def dataset_dir(name: str) -> Path | None:
    """The .npy folder of dataset ``name``: the shared copy where it exists,
    else the repository's, unpacked once per process into a temporary folder
    (removed at exit); None when neither has it."""
    shared = shared_dataset(name)
    if shared is not None or name not in SHIPPED:
        return shared
    global _unpacked_root
    if _unpacked_root is None:
        _unpacked_root = Path(tempfile.mkdtemp(prefix="graphferry-testdata-"))
        atexit.register(shutil.rmtree, _unpacked_root, True)
    dst = _unpacked_root / name
    if not (dst / "meta.json").is_file():  # meta.json is written last
        unpack(name, dst)
    return dst


def where(name: str) -> str:
    """Where dataset ``name`` comes from, for messages."""
    shared = shared_dataset(name)
    if shared is not None:
        return str(shared)
    return f"the repository's copy ({'examples/data/cora' if name == 'cora' else f'tests/data/{name}.npz'})"


def _from_shipped_cora():
    import pyarrow.feather

    info = json.loads((_SHIPPED_CORA / "graphferry.json").read_text())
    n = int(info["num_nodes"])
    edges = pyarrow.feather.read_table(_SHIPPED_CORA / "edges.arrow", columns=["src", "dst"])
    src = edges.column("src").to_numpy().astype(np.int64)
    dst = edges.column("dst").to_numpy().astype(np.int64)
    # edge id = row = position in the in-neighbour CSC: rows sorted by destination
    if not (np.diff(dst) >= 0).all():
        raise ValueError(f"{_SHIPPED_CORA}/edges.arrow is not in CSC order")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=indptr[1:])
    nodes = pyarrow.feather.read_table(_SHIPPED_CORA / "nodes.arrow")
    shape = tuple(info["feature"]["shape"])
    feat = np.fromfile(_SHIPPED_CORA / info["feature"]["file"], dtype=np.float32).reshape(shape)
    arrays = {
        "indptr": indptr,
        "indices": src,
        "feat": feat,
        "label": nodes.column("label").to_numpy().astype(np.int64),
    }
    for split in _SPLITS:
        mask = nodes.column(split.replace("_idx", "_mask")).to_numpy()
        arrays[split] = np.flatnonzero(mask).astype(np.int64)
    return arrays, json.dumps(info["source"], indent=2).encode()


def _from_npz(path: Path):
    z = np.load(path)
    indptr = np.zeros(z["degree"].size + 1, dtype=np.int64)
    np.cumsum(z["degree"], dtype=np.int64, out=indptr[1:])
    arrays = {"indptr": indptr, "indices": z["indices"].astype(np.int64)}
    if "feat_shape" in z:
        feat = np.zeros(tuple(z["feat_shape"]), dtype=np.float32)
        rows = np.repeat(np.arange(feat.shape[0]), z["feat_row_counts"].astype(np.int64))
        feat[rows, z["feat_cols"].astype(np.int64)] = 1.0
        arrays["feat"] = feat
    arrays["label"] = z["label"].astype(np.int64)
    for split in _SPLITS:
        arrays[split] = z[split].astype(np.int64)
    return arrays, z["meta_json"].tobytes()

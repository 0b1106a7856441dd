"""Benchmark graphs: the real .npy datasets, graphferry's generated presets,
and a small in-Python R-MAT generator (for tests, and as a stand-in while
``graphferry.generate`` is not available).

Every graph is held as a :class:`BenchGraph`: the in-neighbour CSC topology
(``indices[indptr[v]:indptr[v+1]]`` = sources of the edges into ``v``), float32
features, int64 labels (``-1`` = unlabelled) and the seed list that every
system is given. The DGL graph, the GraphBolt graph, the PyG ``Data`` and the
graphferry ``Graph`` are built from it once and cached on it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

# Graph500 R-MAT parameters.
GRAPH500 = (0.57, 0.19, 0.19, 0.05)

# Python stand-ins of graphferry's generator presets: (log2 nodes, undirected
# edge factor, feature dim, classes, train fraction). Used only when
# graphferry.generate does not exist.
PY_PRESETS = {
    "tiny": (8, 8, 16, 4, 0.5),
    "small": (15, 8, 100, 16, 0.6),
    "products-like": (21, 28, 100, 47, 0.08),  # ~2.1M nodes, ~115M directed edges
    "papers-like": (22, 16, 128, 172, 0.011),  # ~4.2M nodes, ~130M directed edges (scaled down)
}


@dataclass
class BenchGraph:
    name: str
    indptr: torch.Tensor  # int64 [N+1], in-neighbour CSC
    indices: torch.Tensor  # int64 [E]
    feat: torch.Tensor  # float32 [N, F]
    label: torch.Tensor  # int64 [N]
    seeds: torch.Tensor  # int64, the seed list every system gets
    source: str  # where it came from (for the report)
    seeds_kind: str = "train"
    gf_graph: Any = None  # a graphferry.Graph when opened from disk
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def num_nodes(self) -> int:
        return self.indptr.numel() - 1

    @property
    def num_edges(self) -> int:
        return self.indices.numel()

    @property
    def feat_dim(self) -> int:
        return self.feat.shape[1]

    @property
    def num_classes(self) -> int:
        return int(self.label.max()) + 1 if self.label.numel() else 1

    def dst(self) -> torch.Tensor:
        if "dst" not in self._cache:
            counts = self.indptr[1:] - self.indptr[:-1]
            self._cache["dst"] = torch.repeat_interleave(
                torch.arange(self.num_nodes, dtype=torch.int64), counts, output_size=self.num_edges
            )
        return self._cache["dst"]

    def dgl(self):
        """The DGL graph (edges u -> v, ndata feat/label), edge ids = CSC positions."""
        if "dgl" not in self._cache:
            import dgl

            g = dgl.graph((self.indices, self.dst()), num_nodes=self.num_nodes)
            g.ndata["feat"] = self.feat
            g.ndata["label"] = self.label
            self._cache["dgl"] = g
        return self._cache["dgl"]

    def dgl_topology(self):
        """The same DGL graph without node data (sampling-only runs)."""
        if "dgl_topo" not in self._cache:
            import dgl

            self._cache["dgl_topo"] = dgl.graph((self.indices, self.dst()), num_nodes=self.num_nodes)
        return self._cache["dgl_topo"]

    def graphbolt(self):
        if "gb" not in self._cache:
            import dgl.graphbolt as gb

            self._cache["gb"] = gb.fused_csc_sampling_graph(self.indptr, self.indices)
        return self._cache["gb"]

    def pyg(self, with_features: bool = True):
        key = "pyg" if with_features else "pyg_topo"
        if key not in self._cache:
            from torch_geometric.data import Data

            edge_index = torch.stack([self.indices, self.dst()])
            if with_features:
                self._cache[key] = Data(x=self.feat, y=self.label, edge_index=edge_index, num_nodes=self.num_nodes)
            else:
                self._cache[key] = Data(edge_index=edge_index, num_nodes=self.num_nodes)
        return self._cache[key]

    def graphferry(self):
        """The graphferry Graph with node data "feat" and "label"."""
        if self.gf_graph is None:
            import graphferry

            g = graphferry.Graph.from_csc(self.indptr, self.indices)
            g.set_node_data("feat", self.feat)
            g.set_node_data("label", self.label)
            self.gf_graph = g
        return self.gf_graph

    def graphferry_topology(self):
        """A graphferry Graph with no node data (for the PyG-format sampling-only run,
        whose loader gathers every node attribute it finds)."""
        if "gf_topo" not in self._cache:
            import graphferry

            self._cache["gf_topo"] = graphferry.Graph.from_csc(self.indptr, self.indices)
        return self._cache["gf_topo"]

    def release_baselines(self) -> None:
        """Drops the baselines' copies of the graph (DGL, GraphBolt, PyG and
        the helper tensors), keeping graphferry's: on the presets each copy is
        gigabytes, and the next graph's must fit beside what stays."""
        for key in ("dgl", "dgl_topo", "gb", "pyg", "pyg_topo", "dst"):
            self._cache.pop(key, None)

    def close(self) -> None:
        for key in ("gf_topo",):
            g = self._cache.pop(key, None)
            if g is not None:
                g.close()
        if self.gf_graph is not None:
            self.gf_graph.close()
            self.gf_graph = None
        self._cache.clear()


def _random_features(num_nodes: int, dim: int, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(num_nodes, dim, generator=gen, dtype=torch.float32)


def seeded_subset(seeds: torch.Tensor, k: int, seed: int) -> torch.Tensor:
    """A seeded random ``k`` of ``seeds``, sorted (``--max-seeds``)."""
    perm = torch.randperm(seeds.numel(), generator=torch.Generator().manual_seed(seed))
    return seeds[perm[:k]].sort().values


def choose_seeds(train: torch.Tensor | None, num_nodes: int, batch_size: int, min_batches: int = 4):
    """The training split when it makes at least ``min_batches`` batches,
    else every node (the Planetoid splits are 60-140 nodes: one batch)."""
    if train is not None and train.numel() >= min_batches * batch_size:
        return train.to(torch.int64), "train"
    return torch.arange(num_nodes, dtype=torch.int64), "all nodes"


def load_npy(path: Path, batch_size: int, default_feat_dim: int = 128, seed: int = 0) -> BenchGraph:
    """A dataset in the .npy layout of ../shared/datasets. Datasets without
    dense features get seeded random float32 features of meta.json's
    ``feature_dim`` (or ``default_feat_dim``)."""
    path = Path(path)
    meta = json.loads((path / "meta.json").read_text()) if (path / "meta.json").exists() else {}
    indptr = torch.from_numpy(np.load(path / "indptr.npy")).to(torch.int64)
    indices = torch.from_numpy(np.load(path / "indices.npy")).to(torch.int64)
    n = indptr.numel() - 1
    source = f"{path} (npy)"
    if (path / "feat.npy").exists():
        feat = torch.from_numpy(np.load(path / "feat.npy")).to(torch.float32)
    else:
        dim = meta.get("feature_dim") or default_feat_dim
        feat = _random_features(n, int(dim), seed)
        source += f", random float32 features dim {dim} (none stored)"
    label = (
        torch.from_numpy(np.load(path / "label.npy")).to(torch.int64)
        if (path / "label.npy").exists()
        else torch.zeros(n, dtype=torch.int64)
    )
    train = torch.from_numpy(np.load(path / "train_idx.npy")) if (path / "train_idx.npy").exists() else None
    seeds, kind = choose_seeds(train, n, batch_size)
    return BenchGraph(path.name, indptr, indices, feat, label, seeds, source, kind)


# -- R-MAT ---------------------------------------------------------------------


def rmat_edges(scale: int, num_edges: int, seed: int = 0, probs=GRAPH500, chunk: int = 1 << 22):
    """``num_edges`` R-MAT edges (Graph500 parameters) on ``2**scale`` nodes, as
    (src, dst) int64 arrays, node ids randomly permuted."""
    a, b, c, _ = probs
    rng = np.random.default_rng(seed)
    srcs, dsts = [], []
    for start in range(0, num_edges, chunk):
        m = min(chunk, num_edges - start)
        src = np.zeros(m, dtype=np.int64)
        dst = np.zeros(m, dtype=np.int64)
        for level in range(scale):
            r = rng.random(m, dtype=np.float32)
            right = (r >= a) & (r < a + b) | (r >= a + b + c)  # quadrants b, d: dst bit
            down = r >= a + b  # quadrants c, d: src bit
            bit = np.int64(1) << (scale - 1 - level)
            src |= down * bit
            dst |= right * bit
        srcs.append(src)
        dsts.append(dst)
    perm = rng.permutation(1 << scale).astype(np.int64)
    return perm[np.concatenate(srcs)], perm[np.concatenate(dsts)]


def csc_from_edges(src: np.ndarray, dst: np.ndarray, num_nodes: int, symmetrize: bool = True):
    """In-neighbour CSC (sorted, duplicates and self-loops removed)."""
    if symmetrize:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    keep = src != dst
    key = np.unique(dst[keep] * num_nodes + src[keep])  # sorted by dst, then src
    dst_s, src_s = key // num_nodes, key % num_nodes
    indptr = np.zeros(num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst_s, minlength=num_nodes), out=indptr[1:])
    return torch.from_numpy(indptr), torch.from_numpy(src_s.astype(np.int64))


def python_rmat(preset: str, batch_size: int, seed: int = 0) -> BenchGraph:
    """An R-MAT graph generated in Python with the parameters of ``PY_PRESETS``."""
    scale, edge_factor, dim, classes, train_frac = PY_PRESETS[preset]
    n = 1 << scale
    src, dst = rmat_edges(scale, edge_factor * n, seed)
    indptr, indices = csc_from_edges(src, dst, n)
    del src, dst
    feat = _random_features(n, dim, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    label = torch.randint(0, classes, (n,), generator=gen, dtype=torch.int64)
    train = torch.randperm(n, generator=gen)[: max(1, int(round(train_frac * n)))].sort().values
    seeds, kind = choose_seeds(train, n, batch_size, min_batches=1 if preset == "tiny" else 4)
    return BenchGraph(
        f"rmat-{preset}",
        indptr,
        indices,
        feat,
        label,
        seeds,
        f"R-MAT scale {scale}, edge factor {edge_factor}, Graph500 (a,b,c,d)={GRAPH500}, seed {seed} "
        "(Python stand-in: graphferry.generate not available)",
        kind,
    )


# -- graphferry's generator ------------------------------------------------------


def have_generator() -> bool:
    import graphferry

    return hasattr(graphferry, "generate")


def open_generated_dir(preset: str, cache_dir: Path, seed: int = 0) -> tuple[Path, dict]:
    """The folder of ``preset`` in ``cache_dir`` (generated there once with
    graphferry.generate) and its ``graphferry.json``."""
    import graphferry

    path = Path(cache_dir) / f"{preset}-seed{seed}"
    if not (path / "graphferry.json").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        graphferry.generate(preset, str(tmp), seed=seed)
        os.replace(tmp, path)
    return path, json.loads((path / "graphferry.json").read_text())


def open_generated(preset: str, cache_dir: Path, batch_size: int, seed: int = 0) -> BenchGraph:
    """Generates ``preset`` once into ``cache_dir`` with graphferry.generate and
    opens it: graphferry reads it memory-mapped, the baselines get the edge
    table as CSC and the features memory-mapped."""
    import pyarrow as pa
    import pyarrow.ipc

    import graphferry

    path, meta = open_generated_dir(preset, cache_dir, seed)
    g = graphferry.Graph.open(path)
    n = g.num_nodes
    with pa.memory_map(str(path / "edges.arrow")) as source:
        table = pa.ipc.open_file(source).read_all()
    src = torch.from_numpy(table.column("src").to_numpy().astype(np.int64, copy=False))
    dst = torch.from_numpy(table.column("dst").to_numpy().astype(np.int64, copy=False))
    del table
    order = torch.argsort(dst, stable=True)
    indices = src[order]
    counts = torch.bincount(dst, minlength=n)
    del src, dst, order
    indptr = torch.zeros(n + 1, dtype=torch.int64)
    torch.cumsum(counts, 0, out=indptr[1:])
    fm = meta.get("feature")
    if fm:
        arr = np.memmap(
            path / fm.get("file", "feat.bin"),
            dtype=np.dtype(fm.get("dtype", "float32")),
            mode="r",
            shape=tuple(fm["shape"]),
        )
        feat = torch.from_numpy(np.ascontiguousarray(arr)).to(torch.float32)
    else:
        feat = g.get_node_data("feat").to(torch.float32)
    names = g.node_data_names()
    label = g.get_node_data("label").to(torch.int64) if "label" in names else torch.zeros(n, dtype=torch.int64)
    train = g.train_idx
    seeds, kind = choose_seeds(train, n, batch_size, min_batches=1 if preset == "tiny" else 4)
    return BenchGraph(
        f"gen-{preset}",
        indptr,
        indices,
        feat,
        label,
        seeds,
        f"graphferry.generate({preset!r}, seed={seed}) at {path}",
        kind,
        gf_graph=g,
    )


def load_preset(preset: str, cache_dir: Path, batch_size: int, seed: int = 0, allow_python: bool = True):
    """graphferry's generator when it exists, else the Python stand-in (or None)."""
    if have_generator():
        return open_generated(preset, cache_dir, batch_size, seed)
    if allow_python and preset in PY_PRESETS:
        return python_rmat(preset, batch_size, seed)
    return None

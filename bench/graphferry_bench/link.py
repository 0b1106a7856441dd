"""Link-prediction mode: edge loaders on a graph's edges, graphferry's DGL and
PyG edge loaders beside DGL's own, and on the same graph the node loaders
(graphferry.pyg's beside graphferry.dgl's and DGL's), in one process run.

Every graph is held as a :class:`LinkGraph`, the way a link-prediction script
holds its training graph: both directions of every undirected edge, edge
``e`` and ``e + E`` reverses of each other, node features, and the seed
edges every loader is given. Each loader makes batches of ``batch_size``
seed edges, one uniform negative per seed edge (DGL's ``Uniform(1)``, PyG's
``neg_sampling="binary"``), fan-outs ``[10, 10]``; the DGL loaders exclude
each batch's seed edges and their reverses from the neighbour sampling
(``exclude="reverse_id"``; PyG's ``LinkNeighborLoader`` has no exclusion).

Two modes are timed, one after the other; within a mode the loaders'
epochs are interleaved (round ``r`` runs epoch ``r`` of every loader in
turn, so that drifts in the machine's load hit all alike):

* ``sample``: the loader asked for no features; each batch's structure is
  touched (pair graphs and blocks, or ``edge_index``), as a training step
  would read it;
* ``features``: the loader asked for the node features the way users ask:
  DGL's ``NeighborSampler(prefetch_node_feats=["feat"])`` (read from
  ``blocks[0].srcdata["feat"]``), PyG a ``Data`` with ``x`` (read from
  ``batch.x``).

Ratios are DGL's edge loader's time / the loader's, from the same run.

The node loaders (:func:`bench_nodes`) are the suite's own systems
(:mod:`.systems`: DGL's DataLoader, graphferry.dgl and graphferry.pyg,
pipelined) timed by :func:`.measure.bench_graph` in the sampling mode, on the
graph as the suite opens it, with the suite's full-run settings (batches of
1024, fan-outs [15, 10, 5], at most 30 batches an epoch).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import data, measure, systems

MODES = ("sample", "features")
BATCH_SIZE = 512
FANOUTS = [10, 10]  # from the seeds outwards (symmetric here: DGL's order is the same)
BASELINE = "DGL edge loader"
GOAL = 2.0  # the goal: graphferry's edge loaders at least 2x DGL's

HERE = Path(__file__).resolve().parent.parent  # bench/
DEFAULT_DATA = HERE.parent.parent / "shared" / "datasets"
DEFAULT_CACHE = HERE / ".cache"
DEFAULT_DATASETS = "citeseer,gen:products-like"
# products-like has 60M undirected edges: a seeded random 60 batches of
# seed edges an epoch keep every loader and mode in about two minutes.
DEFAULT_MAX_SEEDS = 60 * BATCH_SIZE

# The node loaders: the suite's full-run settings, sampling epochs only.
NODE_SYSTEMS = (systems.DGLClassic, systems.GraphferryDGL, systems.GraphferryPyG)
NODE_BATCH_SIZE = 1024
NODE_FANOUTS = [15, 10, 5]
NODE_MAX_SEEDS = 30 * NODE_BATCH_SIZE
NODE_GOAL = 1.10  # the goal: graphferry.pyg's sampling epoch within 10% of graphferry.dgl's


@dataclass
class LinkGraph:
    name: str
    source: str
    num_nodes: int
    edge_index: torch.Tensor  # int64 [2, 2E]: edge e is edge_index[:, e]; e and e + E are reverses
    feat: torch.Tensor  # float32 [N, F]
    seeds: torch.Tensor  # int64 seed edge ids, the same for every loader
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def num_edges(self) -> int:
        return self.edge_index.size(1)

    def reverse_eids(self) -> torch.Tensor:
        if "reverse" not in self._cache:
            half = self.num_edges // 2
            self._cache["reverse"] = torch.cat([torch.arange(half, 2 * half), torch.arange(0, half)])
        return self._cache["reverse"]

    def dgl(self):
        """The DGL graph with ``ndata["feat"]`` (one for both modes: without
        prefetching, neither DGL's loader nor ours reads it)."""
        if "dgl" not in self._cache:
            import dgl

            g = dgl.graph((self.edge_index[0], self.edge_index[1]), num_nodes=self.num_nodes)
            g.ndata["feat"] = self.feat
            self._cache["dgl"] = g
        return self._cache["dgl"]

    def pyg_data(self) -> Any:
        """PyG's input: a ``Data`` with ``x`` (one for both modes: PyG's
        loaders gather every node attribute a ``Data`` has, so PyG's own
        loader samples and gathers in both)."""
        if "pyg" not in self._cache:
            from torch_geometric.data import Data

            self._cache["pyg"] = Data(edge_index=self.edge_index, x=self.feat, num_nodes=self.num_nodes)
        return self._cache["pyg"]

    def graphferry_pyg_input(self, with_features: bool) -> Any:
        """graphferry.pyg's input: in the features mode :meth:`pyg_data`
        (graphferry gathers ``x`` on its threads); in the sampling mode the
        ``graphferry.Graph`` graphferry.dgl converted :meth:`dgl` to (the same
        edges and edge ids), as PyG's remote backend with an empty
        FeatureStore, so that no node data is gathered (a loader given the
        ``Graph`` itself gathers its node data): products-like has no memory
        for a second conversion beside DGL's own graph and graphferry.dgl's."""
        if with_features:
            return self.pyg_data()
        import graphferry.pyg
        from graphferry.dgl.convert import as_graph

        return _NoFeatures(), graphferry.pyg.GraphStore(as_graph(self.dgl()))

    def seed_pairs(self) -> torch.Tensor:
        """The seed edges as PyG's ``edge_label_index`` ([2, B])."""
        return self.edge_index[:, self.seeds]

    def release(self) -> None:
        self._cache.clear()


def from_pairs(name: str, source: str, num_nodes: int, u: Any, v: Any, feat: torch.Tensor) -> LinkGraph:
    """The training graph of the undirected edges ``u[i] - v[i]``: both
    directions, edge ``i`` and ``i + len(u)`` reverses; every edge a seed."""
    e = len(u)
    edge_index = torch.empty(2, 2 * e, dtype=torch.int64)
    for row, (a, b) in enumerate(((u, v), (v, u))):
        edge_index[row, :e] = torch.from_numpy(np.asarray(a, dtype=np.int64))
        edge_index[row, e:] = torch.from_numpy(np.asarray(b, dtype=np.int64))
    return LinkGraph(name, source, num_nodes, edge_index, feat, torch.arange(2 * e))


def load_npy(path: Path) -> LinkGraph:
    """A dataset in the .npy layout (CiteSeer): its undirected edges, once
    each, self-loops dropped."""
    indptr = np.load(path / "indptr.npy").astype(np.int64)
    indices = np.load(path / "indices.npy").astype(np.int64)
    n = indptr.size - 1
    dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    u, v = np.minimum(indices, dst), np.maximum(indices, dst)
    keep = u != v
    pairs = np.unique(u[keep] * n + v[keep])
    feat = torch.from_numpy(np.load(path / "feat.npy")).to(torch.float32)
    return from_pairs(path.name, f"{path} (npy)", n, pairs // n, pairs % n, feat)


def load_preset(preset: str, cache_dir: Path, seed: int = 0) -> LinkGraph:
    """graphferry's generated preset (generated once into ``cache_dir``): its
    edge table holds every undirected edge both ways; the ``src < dst`` half
    gives each once."""
    import pyarrow as pa
    import pyarrow.ipc

    from .data import open_generated_dir

    path, meta = open_generated_dir(preset, cache_dir, seed)
    with pa.memory_map(str(path / "edges.arrow")) as f:
        table = pa.ipc.open_file(f).read_all()
    src = table.column("src").to_numpy()
    dst = table.column("dst").to_numpy()
    del table
    half = src < dst
    u, v = src[half], dst[half]
    del src, dst, half
    fm = meta["feature"]
    dtype = np.dtype(fm["dtype"])
    # float32 features stay mapped (copy-on-write: page cache, not this
    # process's memory; the loaders only read them).
    arr = np.memmap(path / fm["file"], dtype=dtype, mode="c" if dtype == np.float32 else "r", shape=tuple(fm["shape"]))
    feat = torch.from_numpy(arr if dtype == np.float32 else np.array(arr, dtype=np.float32))
    return from_pairs(
        f"gen-{preset}", f"graphferry.generate({preset!r}, seed={seed}) at {path}", meta["num_nodes"], u, v, feat
    )


# -- the loaders ---------------------------------------------------------------------


@dataclass
class Touched:
    """What one batch held: sampled edges (blocks or edge_index), pairs
    (positives and negatives), feature bytes read."""

    edges: int
    pairs: int
    feature_bytes: int


class EdgeSystem:
    name = "?"
    is_graphferry = True
    note = ""

    def __init__(self, lg: LinkGraph, fanouts: Sequence[int], batch_size: int, seed: int):
        self.lg, self.fanouts, self.batch_size, self.seed = lg, list(fanouts), batch_size, seed
        self._loaders: dict[str, Any] = {}

    def loader(self, mode: str) -> Iterable:
        if mode not in self._loaders:
            self._loaders[mode] = self.make(mode == "features")
        return self._loaders[mode]

    def make(self, features: bool) -> Iterable:
        raise NotImplementedError

    def touch(self, batch: Any, features: bool) -> Touched:
        raise NotImplementedError

    def close_mode(self, mode: str) -> None:
        dl = self._loaders.pop(mode, None)
        close = getattr(dl, "close", None)
        if close is not None:
            close()

    def close(self) -> None:
        for dl in self._loaders.values():
            close = getattr(dl, "close", None)
            if close is not None:
                close()
        self._loaders.clear()


class _DGLStyle(EdgeSystem):
    """A DGL-style edge loader with DGL's own ``as_edge_prediction_sampler``
    (graphferry's DataLoader takes it as it is: the one-line swap)."""

    def sampler(self, features: bool):
        import dgl

        neighbor = dgl.dataloading.NeighborSampler(
            list(reversed(self.fanouts)), prefetch_node_feats=["feat"] if features else None
        )
        return dgl.dataloading.as_edge_prediction_sampler(
            neighbor,
            exclude="reverse_id",
            reverse_eids=self.lg.reverse_eids(),
            negative_sampler=dgl.dataloading.negative_sampler.Uniform(1),
        )

    def touch(self, batch, features):
        _, pair, neg, blocks = batch
        nbytes = 0
        if features:
            x = blocks[0].srcdata["feat"]
            nbytes = x.numel() * x.element_size()
        return Touched(sum(b.num_edges() for b in blocks), pair.num_edges() + neg.num_edges(), nbytes)


class DGLEdgeLoader(_DGLStyle):
    name = BASELINE
    is_graphferry = False
    note = "dgl.dataloading.DataLoader + as_edge_prediction_sampler, num_workers=0"

    def make(self, features):
        import dgl

        torch.manual_seed(self.seed)
        return dgl.dataloading.DataLoader(
            self.lg.dgl(), self.lg.seeds, self.sampler(features), batch_size=self.batch_size, shuffle=True
        )


class GraphferryDGLEdge(_DGLStyle):
    name = "graphferry.dgl"
    note = "graphferry.dgl.DataLoader with DGL's as_edge_prediction_sampler, engine threads"

    def make(self, features):
        import graphferry.dgl

        return graphferry.dgl.DataLoader(
            self.lg.dgl(),
            self.lg.seeds,
            self.sampler(features),
            batch_size=self.batch_size,
            shuffle=True,
            seed=self.seed,
        )


def _no_features_class() -> type:
    from torch_geometric.data import FeatureStore

    class NoFeatures(FeatureStore):
        """A FeatureStore holding nothing: batches of the topology alone."""

        def _put_tensor(self, tensor: Any, attr: Any) -> bool:
            raise NotImplementedError("the sampling mode's FeatureStore holds nothing")

        def _get_tensor(self, attr: Any) -> Any:
            return None

        def _remove_tensor(self, attr: Any) -> bool:
            return False

        def _get_tensor_size(self, attr: Any) -> Any:
            return None

        def get_all_tensor_attrs(self) -> list:
            return []

    return NoFeatures


def _NoFeatures() -> Any:  # noqa: N802 - a class made on first use (torch_geometric imported late)
    return _no_features_class()()


class _PyGStyle(EdgeSystem):
    def touch(self, batch, features):
        nbytes = 0
        if features:
            nbytes = batch.x.numel() * batch.x.element_size()
        return Touched(int(batch.edge_index.size(1)), int(batch.edge_label_index.size(1)), nbytes)


class GraphferryPyGLink(_PyGStyle):
    name = "graphferry.pyg"
    note = 'graphferry.pyg.LinkNeighborLoader, neg_sampling="binary", engine threads (no edge exclusion, as PyG)'

    def make(self, features):
        import graphferry.pyg

        return graphferry.pyg.LinkNeighborLoader(
            self.lg.graphferry_pyg_input(features),
            self.fanouts,
            edge_label_index=self.lg.seed_pairs(),
            neg_sampling="binary",
            batch_size=self.batch_size,
            shuffle=True,
            seed=self.seed,
        )


class PyGLinkNeighborLoader(_PyGStyle):
    name = "PyG LinkNeighborLoader"
    is_graphferry = False
    note = 'torch_geometric.loader.LinkNeighborLoader, neg_sampling="binary"'

    def make(self, features):
        from torch_geometric.loader import LinkNeighborLoader

        torch.manual_seed(self.seed)
        return LinkNeighborLoader(
            self.lg.pyg_data(),
            self.fanouts,
            edge_label_index=self.lg.seed_pairs(),
            neg_sampling="binary",
            batch_size=self.batch_size,
            shuffle=True,
        )


ALL_SYSTEMS = [DGLEdgeLoader, GraphferryDGLEdge, GraphferryPyGLink, PyGLinkNeighborLoader]
PYG_MISSING = (
    "PyG LinkNeighborLoader: not measured (needs pyg-lib or torch-sparse, not installable from the package index)"
)


def available(cls) -> tuple[bool, str]:
    if cls is PyGLinkNeighborLoader and systems.pyg_backend() is None:
        return False, PYG_MISSING
    return True, ""


# -- timing ---------------------------------------------------------------------------


class _Run:
    def __init__(self, system: EdgeSystem, mode: str):
        self.system, self.mode = system, mode
        self.times: list[float] = []
        self.batches = self.edges = self.pairs = self.fbytes = 0

    def epoch(self, timed: bool) -> None:
        features = self.mode == "features"
        system = self.system
        loader = system.loader(self.mode)
        n = edges = pairs = fbytes = 0
        t0 = time.perf_counter()
        for batch in loader:
            t = system.touch(batch, features)
            n, edges, pairs, fbytes = n + 1, edges + t.edges, pairs + t.pairs, fbytes + t.feature_bytes
        dt = time.perf_counter() - t0
        if timed:
            self.times.append(dt)
            self.batches, self.edges, self.pairs, self.fbytes = n, edges, pairs, fbytes

    def result(self) -> dict:
        out = measure.summarise(self.times)
        out.update(batches=self.batches, sampled_edges=self.edges, pairs=self.pairs, feature_bytes=self.fbytes)
        return out


def bench_graph(
    lg: LinkGraph,
    classes: Sequence[type],
    *,
    fanouts: Sequence[int] = FANOUTS,
    batch_size: int = BATCH_SIZE,
    epochs: int = 5,
    warmup: int = 1,
    seed: int = 0,
    modes: Sequence[str] = MODES,
    tick: Callable[[str], None] = lambda desc: None,
) -> dict:
    """Every loader on one graph, mode after mode (the sampling mode first),
    the loaders' epochs interleaved within a mode; per loader and mode the
    epoch times, and the ratios DGL / this. A mode's loaders are closed
    before the next mode's open (on products-like the features mode's
    copies of the graph would not fit beside the sampling mode's)."""
    instances = [cls(lg, fanouts, batch_size, seed) for cls in classes]
    runs = [_Run(s, m) for m in modes for s in instances]
    load_before = _loadavg()
    try:
        for mode in modes:
            for r in range(warmup + epochs):
                for run in runs:
                    if run.mode == mode:
                        run.epoch(timed=r >= warmup)
                        tick(f"{lg.name} epoch {r + 1}/{warmup + epochs}: {run.system.name} [{run.mode}]")
            for system in instances:
                system.close_mode(mode)
            gc.collect()
    finally:
        for s in instances:
            s.close()
    results = {}
    for s in instances:
        results[s.name] = {
            "graphferry": s.is_graphferry,
            "note": s.note,
            "modes": {run.mode: run.result() for run in runs if run.system is s},
        }
    base = results.get(BASELINE)
    for entry in results.values():
        if entry["graphferry"] and base is not None:
            entry["ratios"] = {m: measure.ratio(base["modes"].get(m), entry["modes"].get(m)) for m in modes}
    return {
        "graph": lg.name,
        "source": lg.source,
        "num_nodes": lg.num_nodes,
        "num_edges": lg.num_edges,
        "feat_dim": int(lg.feat.shape[1]),
        "num_seeds": int(lg.seeds.numel()),
        "batch_size": batch_size,
        "fanouts": list(fanouts),
        "epochs": epochs,
        "warmup": warmup,
        "load_average": {"before": load_before, "after": _loadavg()},
        "results": results,
    }


def bench_nodes(
    bg: data.BenchGraph,
    classes: Sequence[type] = NODE_SYSTEMS,
    *,
    fanouts: Sequence[int] = NODE_FANOUTS,
    batch_size: int = NODE_BATCH_SIZE,
    epochs: int = 5,
    warmup: int = 1,
    seed: int = 0,
    tick: Callable[[str], None] = lambda desc: None,
) -> dict:
    """The node loaders on one graph (sampling epochs, interleaved, by
    :func:`.measure.bench_graph`), and graphferry.pyg's median epoch over
    graphferry.dgl's (``pyg_over_dgl``, the issue's goal: at most
    :data:`NODE_GOAL`)."""
    load_before = _loadavg()
    results = measure.bench_graph(
        bg,
        classes,
        fanouts=list(fanouts),
        batch_size=batch_size,
        hidden=0,
        epochs=epochs,
        warmup=warmup,
        seed=seed,
        tick=tick,
        modes=("sample",),
    )
    pyg, dgl = results.get(systems.GraphferryPyG.name), results.get(systems.GraphferryDGL.name)
    over = None
    if pyg is not None and dgl is not None:
        # pyg / dgl on the medians, spread [min(pyg)/max(dgl), max(pyg)/min(dgl)]
        over = measure.ratio(pyg["modes"]["sample"], dgl["modes"]["sample"])
    return {
        "graph": bg.name,
        "source": bg.source,
        "num_nodes": bg.num_nodes,
        "num_edges": bg.num_edges,
        "num_seeds": int(bg.seeds.numel()),
        "seeds_kind": bg.seeds_kind,
        "batch_size": batch_size,
        "fanouts": list(fanouts),
        "epochs": epochs,
        "warmup": warmup,
        "load_average": {"before": load_before, "after": _loadavg()},
        "results": results,
        "pyg_over_dgl": over,
    }


def goals(doc: dict) -> list[dict]:
    """The issue's goals, each with what was measured and whether it is met:
    per graph, each graphferry edge loader at least :data:`GOAL` x DGL's in
    each mode; graphferry.pyg's node sampling epoch at most
    :data:`NODE_GOAL` x graphferry.dgl's."""
    out = []
    for run in doc.get("runs", []):
        for name, entry in run["results"].items():
            for mode, r in entry.get("ratios", {}).items():
                if r is not None:
                    out.append(
                        {
                            "graph": run["graph"],
                            "goal": f"{name} [{mode}] >= {GOAL:g}x DGL edge loader",
                            "measured": r["ratio"],
                            "met": r["ratio"] >= GOAL,
                        }
                    )
    for run in doc.get("nodes", []):
        over = run.get("pyg_over_dgl")
        if over is not None:
            out.append(
                {
                    "graph": run["graph"],
                    "goal": f"graphferry.pyg node epoch <= {NODE_GOAL:g}x graphferry.dgl's",
                    "measured": over["ratio"],
                    "met": over["ratio"] <= NODE_GOAL,
                }
            )
    return out


def _loadavg() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


# -- report ---------------------------------------------------------------------------


def _s(m: dict | None) -> str:
    if not m:
        return "—"
    return f"{m['median_s']:.3f} ({m['min_s']:.3f}–{m['max_s']:.3f})"


def _r(r: dict | None) -> str:
    if not r:
        return "—"
    return f"{r['ratio']:.2f}× ({r['low']:.2f}–{r['high']:.2f})"


def to_markdown(doc: dict) -> str:
    meta = doc["meta"]
    lines = [
        "# graphferry benchmark (link prediction)",
        "",
        f"{meta['time']}, {meta['machine']}, {meta['cpus']} CPUs; torch {meta['torch']}, dgl {meta['dgl']}, "
        f"torch_geometric {meta['torch_geometric']}, graphferry {meta['graphferry']}. Command: `{meta['command']}`"
        + "".join(f", {k}={v}" for k, v in meta.get("env", {}).items())
        + ".",
        "",
        "## Goals",
        "",
        "| graph | goal | measured | met |",
        "|---|---|---:|---|",
    ]
    for g in doc.get("goals", []):
        lines.append(f"| {g['graph']} | {g['goal']} | {g['measured']:.2f}× | {'yes' if g['met'] else 'no'} |")
    lines += [
        "",
        "## Edge loaders",
        "",
        f"Seed edges in batches of {meta['batch_size']}, one uniform negative each, fan-outs {meta['fanouts']}; the "
        'DGL loaders exclude the seed edges and their reverses (`exclude="reverse_id"`). The sampling mode, then '
        "the features mode, the loaders' epochs interleaved within a mode; figures are medians (min–max) of "
        "the timed epochs after a warm-up; ratios are DGL's edge "
        "loader's time / the loader's, with the spread [min(DGL)/max(this), max(DGL)/min(this)]. The goal: at "
        f"least {GOAL:g}× in both modes.",
        "",
        "- sampling: the loader asked for no features; each batch's pair graphs and blocks (or `edge_index`) read.",
        '- sampling + features: DGL `NeighborSampler(prefetch_node_feats=["feat"])`, `blocks[0].srcdata["feat"]` '
        "read; PyG a `Data` with `x`, `batch.x` read (graphferry.pyg's sampling mode: the graphferry.Graph "
        "converted from the DGL graph, whose node data its LinkNeighborLoader does not gather).",
    ]
    lines += [f"- {note}" for note in meta.get("notes", [])]
    lines.append("")
    for run in doc["runs"]:
        la = run["load_average"]
        lines += [
            f"### {run['graph']}: {run['num_nodes']:,} nodes, {run['num_edges']:,} edges (both directions), "
            f"feat dim {run['feat_dim']}, {run['num_seeds']:,} seed edges",
            "",
            f"Source: {run['source']}. {run['epochs']} timed epochs after {run['warmup']} warm-up; load average "
            f"(1, 5, 15 min) {la['before']} before, {la['after']} after.",
            "",
            "| loader | batches | sampling s/epoch | DGL / this | sampling + features s/epoch | DGL / this "
            "| sampled edges/epoch | features MB/epoch |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, e in run["results"].items():
            m, r = e["modes"], e.get("ratios", {})
            any_mode = next(iter(m.values()))
            fb = m.get("features", {}).get("feature_bytes")
            lines.append(
                f"| {name} | {any_mode['batches']} | {_s(m.get('sample'))} | {_r(r.get('sample'))} | "
                f"{_s(m.get('features'))} | {_r(r.get('features'))} | {any_mode['sampled_edges']:,} | "
                f"{'—' if fb is None else f'{fb / 1e6:.1f}'} |"
            )
        lines.append("")
    if doc.get("nodes"):
        lines += [
            "## Node loaders (sampling epochs)",
            "",
            "The suite's systems (bench/graphferry_bench/systems.py) in its sampling mode: no features, each batch's "
            "blocks (or `edge_index`) read; epochs interleaved. The goal: graphferry.pyg's median epoch at most "
            f"{NODE_GOAL:g}× graphferry.dgl's.",
            "",
        ]
        for run in doc["nodes"]:
            la = run["load_average"]
            over = run.get("pyg_over_dgl")
            lines += [
                f"### {run['graph']}: {run['num_nodes']:,} nodes, {run['num_edges']:,} edges, "
                f"{run['num_seeds']:,} seeds ({run['seeds_kind']}), batches of {run['batch_size']}, "
                f"fan-outs {run['fanouts']}",
                "",
                f"Source: {run['source']}. {run['epochs']} timed epochs after {run['warmup']} warm-up; load average "
                f"(1, 5, 15 min) {la['before']} before, {la['after']} after.",
                "",
                "| loader | batches | sampling s/epoch | DGL DataLoader / this |",
                "|---|---:|---:|---:|",
            ]
            for name, e in run["results"].items():
                m = e["modes"].get("sample")
                r = e.get("ratios", {}).get("DGL DataLoader", {}) or {}
                lines.append(f"| {name} | {m['batches'] if m else '—'} | {_s(m)} | {_r(r.get('sampling'))} |")
            if over is not None:
                lines += [
                    "",
                    f"graphferry.pyg / graphferry.dgl: {over['ratio']:.3f} ({over['low']:.3f}–{over['high']:.3f}).",
                ]
            lines.append("")
    return "\n".join(lines)


# -- command line -----------------------------------------------------------------------


def load_graphs(names: Sequence[str], data_dir: Path, cache_dir: Path, max_seeds: int, seed: int, echo=print):
    """The link graphs of ``names`` (``gen:PRESET`` or a dataset under
    ``data_dir``), each with at most ``max_seeds`` seed edges, and notes."""
    graphs, notes = [], []
    for name in names:
        lg = load_link_graph(name, data_dir, cache_dir, seed, notes, echo)
        if lg is None:
            continue
        if max_seeds > 0 and lg.seeds.numel() > max_seeds:
            lg.seeds = data.seeded_subset(lg.seeds, max_seeds, seed)
            notes.append(
                f"{lg.name}: seed edges limited to a random {max_seeds:,} of its {lg.num_edges:,} (--max-seeds)"
            )
        graphs.append(lg)
    return graphs, notes


def load_link_graph(name: str, data_dir: Path, cache_dir: Path, seed: int, notes: list, echo=print):
    if name.startswith("gen:"):
        echo(f"bench: generating/opening preset {name[4:]!r} ...")
        return load_preset(name[4:], cache_dir, seed)
    path = Path(data_dir) / name
    if not (path / "indptr.npy").exists():
        notes.append(f"{name}: not measured (dataset not found at {path})")
        echo(f"bench: {notes[-1]}")
        return None
    return load_npy(path)


def load_node_graph(name: str, data_dir: Path, cache_dir: Path, seed: int, notes: list, echo=print):
    """The suite's :class:`.data.BenchGraph` of ``name``, its seeds limited
    to :data:`NODE_MAX_SEEDS` (None when the dataset is missing)."""
    if name.startswith("gen:"):
        bg = data.load_preset(name[4:], cache_dir, NODE_BATCH_SIZE, seed)
    else:
        path = Path(data_dir) / name
        bg = data.load_npy(path, NODE_BATCH_SIZE, seed=seed) if (path / "indptr.npy").exists() else None
    if bg is None:
        return None
    if bg.seeds.numel() > NODE_MAX_SEEDS:
        bg.seeds = data.seeded_subset(bg.seeds, NODE_MAX_SEEDS, seed)
        notes.append(
            f"{bg.name} (node loaders): seeds limited to a random {NODE_MAX_SEEDS} of its {bg.seeds_kind} nodes"
        )
    return bg


def run(
    graphs: Sequence[LinkGraph | Callable[[], LinkGraph | None]],
    out: Path,
    *,
    epochs: int,
    warmup: int = 1,
    seed: int = 0,
    notes=(),
    echo=print,
    progress=True,
    node_graphs: Sequence[Callable[[], data.BenchGraph | None]] = (),
    node_epochs: int | None = None,
    command: str = "",
) -> dict:
    """Every available edge loader on each of ``graphs`` (a graph, or a
    function that loads it when its turn comes, so that one graph at a time
    is held), then the node loaders on each of ``node_graphs`` (functions
    loading a :class:`.data.BenchGraph`), ``node_epochs`` timed epochs
    each (default ``epochs``); writes ``results.json`` and ``results.md``
    into ``out`` and returns the document."""
    import dgl
    import torch_geometric
    from tqdm import tqdm

    import graphferry

    notes = notes if isinstance(notes, list) else list(notes)  # the loaders below may add to it
    chosen = []
    for cls in ALL_SYSTEMS:
        ok, why = available(cls)
        if ok:
            chosen.append(cls)
        else:
            notes.append(why)
            echo(f"bench: {why}")
    nodes_chosen = [cls for cls in NODE_SYSTEMS if systems.available(cls)[0]]
    node_epochs = epochs if node_epochs is None else node_epochs
    bar = tqdm(
        total=len(graphs) * len(chosen) * len(MODES) * (warmup + epochs)
        + len(node_graphs) * len(nodes_chosen) * (warmup + node_epochs),
        disable=not progress,
        file=sys.stderr,
        unit="epoch",
    )

    def tick(desc):
        bar.set_description_str(desc[:70])
        bar.update(1)

    runs, nodes = [], []
    for item in graphs:
        lg = item() if callable(item) else item
        if lg is None:
            continue
        runs.append(bench_graph(lg, chosen, epochs=epochs, warmup=warmup, seed=seed, tick=tick))
        lg.release()
        del lg
    for load in node_graphs:
        bg = load()
        if bg is None:
            continue
        try:
            nodes.append(bench_nodes(bg, nodes_chosen, epochs=node_epochs, warmup=warmup, seed=seed, tick=tick))
        finally:
            bg.close()
    bar.close()
    doc = {
        "meta": {
            "mode": "link",
            "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "machine": platform.platform(),
            "cpus": os.cpu_count(),
            "command": command,
            # the Go runtime's memory settings, when set (they trade GC work for memory)
            "env": {k: os.environ[k] for k in ("GOGC", "GOMEMLIMIT") if k in os.environ},
            "torch": torch.__version__,
            "dgl": dgl.__version__,
            "torch_geometric": torch_geometric.__version__,
            "graphferry": f"{graphferry.__version__} (library {graphferry.library_version()})",
            "batch_size": BATCH_SIZE,
            "fanouts": FANOUTS,
            "seed": seed,
            "systems": [c.name for c in chosen],
            "node_systems": [c.name for c in nodes_chosen],
            "notes": notes,
        },
        "runs": runs,
        "nodes": nodes,
    }
    doc["goals"] = goals(doc)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    (out / "results.md").write_text(to_markdown(doc) + "\n")
    return doc


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/link_bench.py", description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=DEFAULT_DATASETS, help="comma-separated: names under --data, or gen:PRESET")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="directory of the .npy datasets")
    ap.add_argument("--cache", default=str(DEFAULT_CACHE), help="where generated presets are written once")
    ap.add_argument("--out", default=str(HERE / "results" / "link"))
    ap.add_argument("--epochs", type=int, default=5, help="timed epochs per loader and mode")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-seeds", type=int, default=DEFAULT_MAX_SEEDS, help="bound each graph's seed edges (0: all)")
    ap.add_argument("--no-nodes", action="store_true", help="skip the node loaders")
    ap.add_argument(
        "--node-epochs",
        type=int,
        default=15,
        help="timed epochs of the node loaders (a fraction of a second each with graphferry: more epochs, "
        "a steadier median on a loaded machine)",
    )
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    names = [n for n in args.datasets.split(",") if n]
    data_dir, cache_dir = Path(args.data), Path(args.cache)
    notes: list[str] = []

    def link_loader(name):
        def load():
            graphs, more = load_graphs([name], data_dir, cache_dir, args.max_seeds, args.seed)
            notes.extend(more)
            return graphs[0] if graphs else None

        return load

    missing = [n for n in names if not n.startswith("gen:") and not (data_dir / n / "indptr.npy").exists()]
    for n in missing:
        notes.append(f"{n}: not measured (dataset not found at {data_dir / n})")
        print(f"bench: {notes[-1]}")
    names = [n for n in names if n not in missing]
    if not names:
        print("bench: no graph to measure", file=sys.stderr)
        return 1
    node_graphs = []
    if not args.no_nodes:
        node_graphs = [lambda n=n: load_node_graph(n, data_dir, cache_dir, args.seed, notes) for n in names]
    doc = run(
        [link_loader(n) for n in names],
        Path(args.out),
        epochs=args.epochs,
        warmup=args.warmup,
        seed=args.seed,
        notes=notes,
        progress=not args.no_progress,
        node_graphs=node_graphs,
        node_epochs=args.node_epochs,
        command=" ".join(["python", "bench/link_bench.py", *(sys.argv[1:] if argv is None else argv)]),
    )
    print(to_markdown(doc))
    return 0

"""Timing: epochs per system and mode, the epoch-time breakdown, ratios, and
graphferry's scaling sweeps.

Breakdown of an epoch (medians over the timed epochs, after warm-up):

* sampling = epoch time in mode "sample";
* loading  = epoch time in mode "load" minus sampling (the extra wall time that
  gathering features and labels adds; near 0 where a pipeline overlaps it);
* training = epoch time in mode "train" minus epoch time in mode "load".

Ratios are baseline time / graphferry time, both measured in the same run.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

from .data import BenchGraph
from .systems import MODES, System, Trainer


def summarise(times: Sequence[float]) -> dict:
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "times_s": list(times),
    }


class _Run:
    """One (system, mode): its epoch starter, trainer and collected figures."""

    def __init__(self, system: System, mode: str, trainer: Trainer | None):
        self.system, self.mode, self.trainer = system, mode, trainer
        self.start_epoch = system.epochs(mode)
        self.times: list[float] = []
        self.edges = self.fbytes = self.batches = 0

    def epoch(self, timed: bool) -> None:
        n_edges = n_bytes = n_batches = 0
        trainer = self.trainer
        t0 = time.perf_counter()
        for batch in self.start_epoch():
            n_batches += 1
            n_edges += batch.num_edges
            if batch.x is not None:
                n_bytes += batch.x.numel() * batch.x.element_size()
            if trainer is not None:
                trainer.step(batch)
        dt = time.perf_counter() - t0
        if timed:
            self.times.append(dt)
            self.edges, self.fbytes, self.batches = n_edges, n_bytes, n_batches

    def result(self) -> dict:
        out = summarise(self.times)
        out.update(sampled_edges=self.edges, feature_bytes=self.fbytes, batches=self.batches)
        if self.mode == "sample":
            out["edges_per_s"] = self.edges / out["median_s"] if out["median_s"] > 0 else None
        return out


def breakdown(modes: dict) -> dict:
    """Sampling / loading / training seconds per epoch from the modes' medians."""
    s = modes.get("sample", {}).get("median_s")
    ld = modes.get("load", {}).get("median_s")
    t = modes.get("train", {}).get("median_s")
    out = {"sampling_s": s, "loading_s": None, "training_s": None, "epoch_s": t}
    if ld is not None:
        out["loading_s"] = max(0.0, ld - s) if s is not None else ld
    if t is not None and ld is not None:
        out["training_s"] = max(0.0, t - ld)
    return out


def ratio(base: dict | None, ours: dict | None) -> dict | None:
    """base / ours on the medians, with the spread [min(base)/max(ours), max(base)/min(ours)]."""
    if not base or not ours or ours.get("median_s", 0) <= 0:
        return None
    return {
        "ratio": base["median_s"] / ours["median_s"],
        "low": base["min_s"] / ours["max_s"],
        "high": base["max_s"] / ours["min_s"],
    }


def loading_ratio(base_load: float | None, ours_load: float | None, min_s: float = 1e-3) -> float | None:
    if base_load is None or ours_load is None or ours_load < min_s:
        return None  # graphferry's loading is overlapped (or too small to divide by)
    return base_load / ours_load


def bench_graph(
    bg: BenchGraph,
    systems: Sequence[type],
    *,
    fanouts,
    batch_size,
    hidden,
    epochs,
    warmup,
    seed=0,
    tick=lambda desc: None,
    modes: Sequence[str] = MODES,
) -> dict:
    """Every system on one graph: per-mode timings, breakdown, ratios.

    Epochs are interleaved (round r runs epoch r of every system and mode in
    turn), so that drifts in the machine's load hit all systems alike."""
    instances, runs = [], []
    try:
        for cls in systems:
            system = cls(bg, fanouts, batch_size, seed)
            instances.append(system)
            for mode in MODES:
                if mode in system.modes and mode in modes:
                    trainer = None
                    if mode == "train":
                        trainer = Trainer(system.fmt, bg.feat_dim, hidden, bg.num_classes, len(fanouts), seed)
                    runs.append(_Run(system, mode, trainer))
        for r in range(warmup + epochs):
            for run in runs:
                run.epoch(timed=r >= warmup)
                tick(f"{bg.name} epoch {r + 1}/{warmup + epochs}: {run.system.name} [{run.mode}]")
    finally:
        for system in instances:
            system.close()
    results = {}
    for system in instances:
        modes = {run.mode: run.result() for run in runs if run.system is system}
        results[system.name] = {
            "format": system.fmt,
            "graphferry": system.is_graphferry,
            "note": system.note,
            "modes": modes,
            "breakdown": breakdown(modes),
        }
    add_ratios(results)
    return results


def bench_ticks(systems: Sequence[type], epochs: int, warmup: int, modes: Sequence[str] = MODES) -> int:
    return sum(len([m for m in cls.modes if m in modes]) for cls in systems) * (epochs + warmup)


REFERENCES = ("DGL DataLoader", "DGL DataLoader (num_workers=2)", "DGL GraphBolt", "PyG NeighborLoader")


def add_ratios(results: dict) -> None:
    """On each graphferry entry: ``ratios[baseline] = {sampling, epoch, loading}``,
    baseline / graphferry."""
    for entry in results.values():
        if not entry["graphferry"]:
            continue
        entry["ratios"] = {}
        for base_name in REFERENCES:
            base = results.get(base_name)
            if base is None:
                continue
            entry["ratios"][base_name] = {
                "sampling": ratio(base["modes"].get("sample"), entry["modes"].get("sample")),
                "epoch": ratio(base["modes"].get("train"), entry["modes"].get("train")),
                "loading": loading_ratio(base["breakdown"]["loading_s"], entry["breakdown"]["loading_s"]),
            }
        for feature_name in ("torch index_select (features only)", "memcpy ceiling (features only)"):
            feature_base = results.get(feature_name)
            if feature_base is not None:
                entry["ratios"][feature_name] = {
                    "sampling": None,
                    "epoch": None,
                    "loading": loading_ratio(feature_base["breakdown"]["loading_s"], entry["breakdown"]["loading_s"]),
                }


# -- graphferry scaling --------------------------------------------------------------------


def _loader_epoch_times(bg: BenchGraph, fanouts, batch_size, num_threads, epochs, warmup, seed, tick):
    import graphferry

    loader = graphferry.Loader(
        bg.graphferry_topology(),
        bg.seeds,
        fanouts,
        batch_size=batch_size,
        shuffle=True,
        seed=seed,
        num_threads=num_threads,
    )
    try:
        times, edges = [], 0
        for e in range(warmup + epochs):
            n = 0
            t0 = time.perf_counter()
            for sub in loader:
                n += sum(b.num_edges for b in sub.blocks)
            dt = time.perf_counter() - t0
            if e >= warmup:
                times.append(dt)
                edges = n
            tick()
    finally:
        loader.close()
    out = summarise(times)
    out.update(
        sampled_edges=edges,
        edges_per_s=edges / out["median_s"] if out["median_s"] > 0 else None,
        batches=-(-bg.seeds.numel() // batch_size),
    )
    out["us_per_seed"] = 1e6 * out["median_s"] / max(1, bg.seeds.numel())
    return out


def scaling(
    bg: BenchGraph,
    *,
    fanouts,
    batch_size,
    threads,
    batch_sizes,
    fanout_sweep,
    epochs,
    warmup,
    seed=0,
    tick=lambda desc: None,
) -> dict:
    """graphferry.Loader (sampling only) against threads, batch size and fan-out.

    Thread count goes through graphferry.Loader(num_threads=...):
    graphferry.dgl.DataLoader and graphferry.pyg.NeighborLoader do not take it."""
    t = lambda what: lambda: tick(f"{bg.name}: scaling {what}")  # noqa: E731
    out = {
        "graph": bg.name,
        "via": "graphferry.Loader (sampling only, no features), median epoch",
        "fanouts": list(fanouts),
        "batch_size": batch_size,
        "threads": [],
        "batch_size_sweep": [],
        "fanout_sweep": [],
    }
    for k in threads:
        r = _loader_epoch_times(bg, fanouts, batch_size, k, epochs, warmup, seed, t(f"threads={k}"))
        out["threads"].append({"num_threads": k, **r})
    for b in batch_sizes:
        r = _loader_epoch_times(bg, fanouts, b, 0, epochs, warmup, seed, t(f"batch={b}"))
        out["batch_size_sweep"].append({"batch_size": b, **r})
    for f in fanout_sweep:
        r = _loader_epoch_times(bg, f, batch_size, 0, epochs, warmup, seed, t(f"fanouts={f}"))
        out["fanout_sweep"].append({"fanouts": list(f), **r})
    return out


def scaling_ticks(threads, batch_sizes, fanout_sweep, epochs, warmup) -> int:
    return (len(threads) + len(batch_sizes) + len(fanout_sweep)) * (epochs + warmup)

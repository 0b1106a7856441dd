"""Command line of the suite: ``python bench/run.py [--quick|--full] [--datasets ...] [--out DIR]``."""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch

from . import data, measure, report, systems

HERE = Path(__file__).resolve().parent.parent  # bench/
DEFAULT_DATA = HERE.parent.parent / "shared" / "datasets"
DEFAULT_CACHE = HERE / ".cache"


@dataclass
class Config:
    mode: str = "quick"
    fanouts: list = field(default_factory=lambda: [15, 10, 5])
    batch_size: int = 1024
    hidden: int = 256
    epochs: int = 3
    warmup: int = 1
    seed: int = 0
    threads: list = field(default_factory=lambda: [1, 2])
    batch_sizes: list = field(default_factory=lambda: [256, 1024, 4096])
    fanout_sweep: list = field(default_factory=lambda: [[5, 5, 5], [10, 10, 5], [15, 10, 5], [25, 15, 10]])
    scaling_epochs: int = 3
    systems: list = field(default_factory=lambda: list(systems.ALL_SYSTEMS))
    modes: tuple = field(default_factory=lambda: tuple(systems.MODES))


QUICK_DATASETS = "cora,pubmed,gen:small"
FULL_DATASETS = "gen:products-like,gen:papers-like"
# --full samples a seeded random 30 batches of 1024 train nodes per epoch on
# each preset: every system and mode, training included, then fits in about
# half an hour on a 2-core machine (all train nodes would take hours).
FULL_MAX_SEEDS = 30720


def _versions() -> dict:
    import dgl
    import torch_geometric

    import graphferry

    return {
        "torch": torch.__version__,
        "dgl": dgl.__version__,
        "torch_geometric": torch_geometric.__version__,
        "graphferry": f"{graphferry.__version__} (library {graphferry.library_version()})",
    }


def run_suite(
    graphs: Sequence[data.BenchGraph],
    cfg: Config,
    out: Path,
    *,
    scaling_graph: str | None = None,
    progress: bool = True,
    notes: Sequence[str] = (),
    echo=print,
) -> dict:
    """Measures every available system on every graph (and graphferry's
    scaling on ``scaling_graph``, default the largest), writes
    ``results.json``, ``results.md`` and the PNGs into ``out``; returns the
    document."""
    from tqdm import tqdm

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    notes = list(notes)
    chosen = []
    for cls in cfg.systems:
        ok, why = systems.available(cls)
        if ok:
            chosen.append(cls)
        else:
            notes.append(why)
            echo(f"bench: {why}")
    if any(g.num_nodes > 0 for g in graphs) and systems.GraphferryDGL in chosen:
        notes.append(
            "graphferry threads: graphferry.dgl.DataLoader and graphferry.pyg.NeighborLoader take no "
            "num_threads (the engine uses every core); the thread scaling is measured through "
            "graphferry.Loader(num_threads=...)."
        )
    notes.append(
        "graphferry (sequential) = graphferry.sample_neighbors per batch in the main thread, then torch "
        "index_select of the node data read once with Graph.get_node_data; nothing runs ahead. "
        "(pipelined) = the loaders, sampler and loader stages on the engine's threads, queue capacity 2."
    )
    sc_graph = None
    if graphs and cfg.threads is not None:
        sc_graph = next((g for g in graphs if g.name == scaling_graph), None) or max(graphs, key=lambda g: g.num_edges)
    total = len(graphs) * measure.bench_ticks(chosen, cfg.epochs, cfg.warmup, cfg.modes)
    if sc_graph is not None:
        total += measure.scaling_ticks(cfg.threads, cfg.batch_sizes, cfg.fanout_sweep, cfg.scaling_epochs, 1)
    bar = tqdm(total=total, disable=not progress, file=sys.stderr, dynamic_ncols=True, unit="epoch")

    def tick(desc: str) -> None:
        bar.set_description_str(desc[:70])
        bar.update(1)

    runs = []
    for g in graphs:
        results = measure.bench_graph(
            g,
            chosen,
            fanouts=cfg.fanouts,
            batch_size=cfg.batch_size,
            hidden=cfg.hidden,
            epochs=cfg.epochs,
            warmup=cfg.warmup,
            seed=cfg.seed,
            tick=tick,
            modes=cfg.modes,
        )
        runs.append(
            {
                "graph": g.name,
                "source": g.source,
                "num_nodes": g.num_nodes,
                "num_edges": g.num_edges,
                "feat_dim": g.feat_dim,
                "num_classes": g.num_classes,
                "seeds_kind": g.seeds_kind,
                "num_seeds": int(g.seeds.numel()),
                "fanouts": list(cfg.fanouts),
                "batch_size": cfg.batch_size,
                "results": results,
            }
        )
        # Memory for the next graph: only the scaling graph is used again,
        # and only through graphferry.
        g.release_baselines()
        gc.collect()
    sc = None
    if sc_graph is not None:
        sc = measure.scaling(
            sc_graph,
            fanouts=cfg.fanouts,
            batch_size=cfg.batch_size,
            threads=cfg.threads,
            batch_sizes=cfg.batch_sizes,
            fanout_sweep=cfg.fanout_sweep,
            epochs=cfg.scaling_epochs,
            warmup=1,
            seed=cfg.seed,
            tick=tick,
        )
    bar.close()

    meta = {
        "mode": cfg.mode,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        **_versions(),
        "fanouts": cfg.fanouts,
        "batch_size": cfg.batch_size,
        "hidden": cfg.hidden,
        "layers": len(cfg.fanouts),
        "epochs": cfg.epochs,
        "warmup": cfg.warmup,
        "seed": cfg.seed,
        "systems": [c.name for c in chosen],
        "notes": notes,
    }
    doc = {"meta": meta, "runs": runs, "scaling": sc, "plots": []}
    plots = [out / "breakdown.png"]
    report.plot_breakdown(runs, plots[0])
    if sc is not None:
        plots += report.plot_scaling(sc, out)
    doc["plots"] = [str(p) for p in plots]
    report.write_json(doc, out / "results.json")
    md = report.to_markdown(doc)
    (out / "results.md").write_text(md + "\n")
    return doc


def load_graphs(names: Sequence[str], data_dir: Path, cache_dir: Path, batch_size: int, seed: int, echo=print):
    graphs, notes = [], []
    if not data.have_generator():
        notes.append(
            "graphferry.generate is not available: the generated graphs are the suite's Python R-MAT "
            "stand-in (Graph500 parameters), not graphferry's generator presets."
        )
    for name in names:
        if name.startswith("gen:"):
            preset = name[4:]
            echo(f"bench: generating/opening preset {preset!r} ...")
            g = data.load_preset(preset, cache_dir, batch_size, seed)
            if g is None:
                notes.append(f"{name}: not measured (no generator for preset {preset!r})")
                echo(f"bench: {notes[-1]}")
                continue
        else:
            path = Path(data_dir) / name
            if not (path / "indptr.npy").exists():
                notes.append(f"{name}: not measured (dataset not found at {path})")
                echo(f"bench: {notes[-1]}")
                continue
            g = data.load_npy(path, batch_size, seed=seed)
        graphs.append(g)
    return graphs, notes


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench/run.py", description=__doc__)
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--quick", action="store_true", help=f"minutes: {QUICK_DATASETS} (default)")
    which.add_argument("--full", action="store_true", help=f"the generator presets: {FULL_DATASETS}")
    ap.add_argument("--datasets", help="comma-separated: names under --data, or gen:PRESET")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="directory of the .npy datasets")
    ap.add_argument("--cache", default=str(DEFAULT_CACHE), help="where generated presets are written once")
    ap.add_argument("--out", default=str(HERE / "results"))
    ap.add_argument("--epochs", type=int, help="timed epochs per system and mode (default 3)")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--fanouts", default="15,10,5", help="from the seeds outwards")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-scaling", action="store_true", help="skip the threads / batch / fan-out sweeps")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument(
        "--modes",
        default=",".join(systems.MODES),
        help="which epochs to time: sample (sampling only), load (+ features), train (+ a step)",
    )
    ap.add_argument(
        "--max-seeds",
        type=int,
        default=None,
        help="bound each graph's seed list (a seeded random subset), to keep big graphs in budget "
        f"(default: all seeds with --quick, {FULL_MAX_SEEDS} with --full; 0: all)",
    )
    ap.add_argument("--systems", help="comma-separated names of the systems to run (default: all)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")

    full = bool(args.full)
    if args.max_seeds is None:
        args.max_seeds = FULL_MAX_SEEDS if full else 0
    cfg = Config(
        mode="full" if full else "quick",
        fanouts=[int(x) for x in args.fanouts.split(",")],
        batch_size=args.batch_size,
        hidden=args.hidden,
        warmup=args.warmup,
        seed=args.seed,
        epochs=args.epochs or 3,
    )
    if full:
        cfg.batch_sizes = [256, 1024, 4096, 16384]
        cfg.scaling_epochs = 3
    if args.no_scaling:
        cfg.threads = None
    cfg.modes = tuple(m for m in args.modes.split(",") if m)
    unknown = set(cfg.modes) - set(systems.MODES)
    if unknown:
        ap.error(f"--modes: unknown {sorted(unknown)} (choose from {list(systems.MODES)})")
    if args.systems:
        wanted = [n.strip() for n in args.systems.split(",")]
        by_name = {c.name: c for c in systems.ALL_SYSTEMS}
        missing = [n for n in wanted if n not in by_name]
        if missing:
            ap.error(f"--systems: unknown {missing} (have {sorted(by_name)})")
        cfg.systems = [by_name[n] for n in wanted]
    names = (args.datasets or (FULL_DATASETS if full else QUICK_DATASETS)).split(",")
    graphs, notes = load_graphs(names, Path(args.data), Path(args.cache), cfg.batch_size, cfg.seed)
    if not graphs:
        print("bench: no graph to measure", file=sys.stderr)
        return 1
    if args.max_seeds > 0:
        for g in graphs:
            if g.seeds.numel() > args.max_seeds:
                g.seeds = data.seeded_subset(g.seeds, args.max_seeds, cfg.seed)
                notes.append(
                    f"{g.name}: seeds limited to a random {args.max_seeds} of its {g.seeds_kind} nodes (--max-seeds)"
                )
    scaling_graph = next((g.name for g in graphs if g.name.startswith(("gen-", "rmat-"))), None)
    doc = run_suite(
        graphs, cfg, Path(args.out), scaling_graph=scaling_graph, progress=not args.no_progress, notes=notes
    )
    for g in graphs:
        g.close()
    print(report.to_markdown(doc))
    print(
        f"\nbench: wrote {Path(args.out) / 'results.json'}, {Path(args.out) / 'results.md'} and "
        f"{', '.join(Path(p).name for p in doc['plots'])} in {args.out}"
    )
    return 0

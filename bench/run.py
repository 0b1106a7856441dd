"""Quick benchmark: graphferry's loaders beside DGL's, measured in one run.

For each real dataset in ../shared/datasets it measures, per epoch over a seed
set, the sampling-only time (no features) of

* DGL's classic ``dgl.dataloading.DataLoader`` + ``NeighborSampler``,
* ``graphferry.dgl.DataLoader`` with the same DGL sampler object (blocks built
  as real DGL blocks, so the work delivered is the same), and
* ``graphferry.pyg.NeighborLoader`` (PyG-shaped ``Data`` batches),

and reports medians over several epochs after a warm-up, with the spread, and
the ratio baseline / graphferry. Absolute times drift on shared machines; the
ratios taken in the same run are the figures to quote.

Usage: python bench/run.py [--quick] [--datasets pubmed,cora] [--out bench/results]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "datasets"


def load_npy(path: Path):
    indptr = torch.from_numpy(np.load(path / "indptr.npy"))
    indices = torch.from_numpy(np.load(path / "indices.npy"))
    train = torch.from_numpy(np.load(path / "train_idx.npy"))
    return indptr, indices, train


def time_epochs(make_iter, epochs: int, warmup: int = 1):
    """Runs warm-up epochs, then `epochs` timed ones; returns seconds per epoch."""
    for _ in range(warmup):
        for _ in make_iter():
            pass
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        n = 0
        for _ in make_iter():
            n += 1
        times.append(time.perf_counter() - t0)
    return times


def summarise(times):
    med = statistics.median(times)
    return {"median_s": med, "min_s": min(times), "max_s": max(times), "epochs": len(times)}


def bench_dataset(name: str, path: Path, fanouts, batch_size: int, epochs: int, seeds_kind: str):
    import dgl
    import graphferry
    import graphferry.dgl
    import graphferry.pyg
    from torch_geometric.data import Data

    indptr, indices, train = load_npy(path)
    n = indptr.numel() - 1
    seeds = train if seeds_kind == "train" else torch.arange(n)
    # DGL graph: edges u -> v for u in indices[indptr[v]:indptr[v+1]]
    dst = torch.repeat_interleave(torch.arange(n), indptr[1:] - indptr[:-1])
    g = dgl.graph((indices, dst), num_nodes=n)
    results = {}

    sampler = dgl.dataloading.NeighborSampler(list(reversed(fanouts)))
    dl = dgl.dataloading.DataLoader(g, seeds, sampler, batch_size=batch_size, shuffle=True, drop_last=False)
    results["dgl"] = summarise(time_epochs(lambda: iter(dl), epochs))

    dl_workers = dgl.dataloading.DataLoader(
        g, seeds, sampler, batch_size=batch_size, shuffle=True, drop_last=False, num_workers=2
    )
    results["dgl (num_workers=2)"] = summarise(time_epochs(lambda: iter(dl_workers), epochs))

    gfg = graphferry.Graph.from_dgl(g)
    gl = graphferry.dgl.DataLoader(gfg, seeds, sampler, batch_size=batch_size, shuffle=True, seed=0)
    results["graphferry.dgl"] = summarise(time_epochs(lambda: iter(gl), epochs))

    data = Data(edge_index=torch.stack([indices, dst]), num_nodes=n)
    pl = graphferry.pyg.NeighborLoader(data, list(fanouts), input_nodes=seeds, batch_size=batch_size, shuffle=True)
    results["graphferry.pyg"] = summarise(time_epochs(lambda: iter(pl), epochs))

    base = results["dgl"]["median_s"]
    for k, v in results.items():
        v["dgl_over_this"] = base / v["median_s"]
    return {
        "dataset": name,
        "num_nodes": n,
        "num_edges": int(indices.numel()),
        "seeds": seeds_kind,
        "num_seeds": int(seeds.numel()),
        "fanouts": list(fanouts),
        "batch_size": batch_size,
        "results": results,
    }


def to_markdown(runs) -> str:
    lines = [
        "| dataset | seeds | fan-outs | loader | median s/epoch | min-max | DGL / this |",
        "|---|---|---|---|---:|---|---:|",
    ]
    for r in runs:
        for k, v in r["results"].items():
            lines.append(
                f"| {r['dataset']} | {r['seeds']} ({r['num_seeds']}) | {r['fanouts']} | {k} | "
                f"{v['median_s']:.4f} | {v['min_s']:.4f}-{v['max_s']:.4f} | {v['dgl_over_this']:.2f} |"
            )
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer epochs")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--datasets", default="cora,citeseer,pubmed")
    ap.add_argument("--fanouts", default="15,10,5")
    ap.add_argument("--batch-size", type=int, default=1024)
    ap.add_argument("--out", default=str(HERE / "results"))
    args = ap.parse_args(argv)
    data = Path(args.data)
    if not data.is_dir():
        print(f"bench: dataset directory {data} not found; nothing to measure", file=sys.stderr)
        return 1
    epochs = 3 if args.quick else 10
    fanouts = [int(x) for x in args.fanouts.split(",")]
    runs = []
    for name in args.datasets.split(","):
        for seeds_kind in ("train", "all"):
            print(f"bench: {name}, seeds={seeds_kind}, fanouts={fanouts} ...", flush=True)
            runs.append(bench_dataset(name, data / name, fanouts, args.batch_size, epochs, seeds_kind))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "torch": torch.__version__,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    (out / "sampling.json").write_text(json.dumps({"meta": meta, "runs": runs}, indent=2))
    md = to_markdown(runs)
    (out / "sampling.md").write_text(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

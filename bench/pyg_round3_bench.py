"""Sampling epochs of issue 33's new PyG loaders beside a baseline, in one
process run, the loaders' epochs interleaved (round ``r`` runs epoch ``r``
of each in turn):

* ``random_node``: ``graphferry.pyg.RandomNodeLoader`` beside PyG's own
  ``RandomNodeLoader`` (plain torch_geometric: it runs here), on a random
  homogeneous graph and on a two-type heterogeneous one;
* ``hgt``: ``graphferry.pyg.HGTLoader`` beside ``graphferry.pyg.NeighborLoader``
  on the same heterogeneous graph and seeds (PyG's ``HGTLoader`` needs
  ``torch_sparse``, which cannot be installed here, so the baseline is our
  neighbour loader, with fan-outs that sample about as many nodes).

An epoch iterates every batch (no training step). Reported: each loader's
median epoch time, its ratio to the baseline's from the same run, the
batches' mean node count, and the machine's CPUs and load average (the
machine is shared: read ratios, not absolute times). Nothing is asserted.

    python bench/pyg_round3_bench.py [--kind random_node|hgt|all] [--epochs 5] [--out bench/results/pyg_round3]
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

import torch
from torch_geometric.data import Data, HeteroData
from torch_geometric.loader import RandomNodeLoader as PyGRandomNodeLoader

import graphferry.pyg as gp

HERE = Path(__file__).resolve().parent


def homogeneous(n: int, e: int, dim: int) -> Data:
    g = torch.Generator().manual_seed(1)
    return Data(
        x=torch.randn(n, dim, generator=g),
        y=torch.randint(0, 10, (n,), generator=g),
        edge_index=torch.randint(0, n, (2, e), generator=g),
    )


def heterogeneous(n: int, e: int, dim: int) -> HeteroData:
    g = torch.Generator().manual_seed(2)
    na = n // 4
    data = HeteroData()
    data["paper"].x = torch.randn(n, dim, generator=g)
    data["author"].x = torch.randn(na, dim, generator=g)
    data["paper", "cites", "paper"].edge_index = torch.randint(0, n, (2, e), generator=g)
    writes = torch.stack([torch.randint(0, na, (e // 2,), generator=g), torch.randint(0, n, (e // 2,), generator=g)])
    data["author", "writes", "paper"].edge_index = writes
    data["paper", "written_by", "author"].edge_index = writes.flip(0)
    return data


def nodes_of(batch) -> int:
    return int(batch.num_nodes)


def run(loaders: dict, epochs: int) -> dict:
    times = {name: [] for name in loaders}
    nodes = {name: [] for name in loaders}
    for _ in range(epochs):
        for name, loader in loaders.items():
            t0 = time.perf_counter()
            count = []
            for batch in loader:
                count.append(nodes_of(batch))
            times[name].append(time.perf_counter() - t0)
            nodes[name] = count
    return {
        name: {
            "median_s": statistics.median(ts),
            "epochs_s": ts,
            "batches": len(nodes[name]),
            "mean_nodes": statistics.fmean(nodes[name]) if nodes[name] else 0.0,
        }
        for name, ts in times.items()
    }


def cases(kind: str, args) -> list[tuple[str, str, dict]]:
    """(name, baseline, loaders) of each case of ``kind``."""
    out = []
    if kind in ("random_node", "all"):
        data = homogeneous(args.nodes, args.edges, args.dim)
        hetero = heterogeneous(args.nodes, args.edges, args.dim)
        for name, d in (("random_node", data), ("random_node_hetero", hetero)):
            torch.manual_seed(0)
            out.append(
                (
                    name,
                    "PyG RandomNodeLoader",
                    {
                        "graphferry RandomNodeLoader": gp.RandomNodeLoader(d, num_parts=args.parts, shuffle=True),
                        "PyG RandomNodeLoader": PyGRandomNodeLoader(d, num_parts=args.parts, shuffle=True),
                    },
                )
            )
    if kind in ("hgt", "all"):
        hetero = heterogeneous(args.nodes, args.edges, args.dim)
        seeds = ("paper", torch.arange(0, args.nodes, 4))
        kw = {"input_nodes": seeds, "batch_size": 256, "shuffle": True, "seed": 3}
        out.append(
            (
                "hgt",
                "graphferry NeighborLoader",
                {
                    "graphferry HGTLoader": gp.HGTLoader(hetero, num_samples=[1024, 1024], **kw),
                    "graphferry NeighborLoader": gp.NeighborLoader(hetero, [5, 3], **kw),
                },
            )
        )
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", default="all", choices=["random_node", "hgt", "all"])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--parts", type=int, default=20)
    ap.add_argument("--out", default=str(HERE / "results" / "pyg_round3"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, baseline, loaders in cases(args.kind, args):
        before = os.getloadavg()
        results = run(loaders, args.epochs)
        after = os.getloadavg()
        base = results[baseline]["median_s"]
        for r in results.values():
            r["baseline_over_this"] = base / r["median_s"] if r["median_s"] > 0 else None
        record = {
            "case": name,
            "baseline": baseline,
            "graph": {"nodes": args.nodes, "edges": args.edges, "dim": args.dim},
            "epochs": args.epochs,
            "cpus": os.cpu_count(),
            "loadavg_before": before,
            "loadavg_after": after,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "results": results,
        }
        (out / f"{name}.json").write_text(json.dumps(record, indent=2) + "\n")
        lines = [
            f"# {name}: sampling epochs beside {baseline}",
            "",
            f"{args.nodes} nodes, {args.edges} edges, {args.dim}-dim features, {args.epochs} epochs interleaved; "
            f"{os.cpu_count()} CPUs, load average {before[0]:.1f} before / {after[0]:.1f} after (shared machine).",
            "",
            "| loader | batches | mean nodes | median epoch (s) | baseline / this |",
            "|---|---|---|---|---|",
        ]
        for loader, r in results.items():
            lines.append(
                f"| {loader} | {r['batches']} | {r['mean_nodes']:.0f} | {r['median_s']:.3f} | "
                f"{r['baseline_over_this']:.2f} |"
            )
        (out / f"{name}.md").write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

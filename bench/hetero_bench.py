"""Heterogeneous sampling benchmark (issue 13): graphferry vs DGL's NeighborSampler, one run, JSON + Markdown.

    python bench/hetero_bench.py --out bench/results/hetero [--papers 100000] [--epochs 3]

On one DGL heterograph (examples/train_hetero.py's seeded citation graph: papers, authors, institutions,
fields, 8 relations with their reverses), per epoch over the training papers, per-relation fan-outs
[10, 10] (every relation, DGL order), sampling only, in one process and one run:

- dgl: ``dgl.dataloading.DataLoader`` + ``NeighborSampler`` (num_workers=0), blocks as DGL makes them;
- graphferry.dgl: ``graphferry.dgl.DataLoader`` on the same DGL graph: the engine samples on its threads,
  the consumer thread makes the same heterogeneous DGL blocks;
- graphferry engine: ``graphferry.Loader`` on the converted graph, the engine's batches without DGL blocks
  (what the sampling itself costs).

Every system sees the same seeds, fan-outs and batch size; the figure is the median epoch over --epochs
timed epochs after one warm-up epoch, and the ratio is DGL's median / that system's.

Node data (issue 29), the same engine loader with every type's ``feat`` per batch, in the same run:

- Python-held: the data kept in Python, each batch's rows of each type gathered on the consumer thread
  (``feat[ntype][type-local ids of the batch]``, what ``HeteroGraph.batch_rows`` did for data handed in
  from DGL, PyG or ``set_node_data`` before the engine held it);
- engine-held: the same tensors handed to the engine once (``HeteroGraph.set_node_data``, not copied) and
  gathered with each batch on the engine's threads, ahead of the consumer.

The ratio is the Python-held median / the engine-held one.
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))

from train_hetero import hetero_data, to_dgl  # noqa: E402

BATCH = 1024
FANOUTS = [10, 10]


def _block_edges(blocks) -> int:
    return sum(b.num_edges() for b in blocks)


def _epochs(run, epochs: int) -> dict:
    """One warm-up epoch, then ``epochs`` timed ones; ``run()`` returns (batches, sampled edges)."""
    run()
    times, batches, edges = [], 0, 0
    for _ in range(epochs):
        t0 = time.perf_counter()
        batches, edges = run()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return {
        "median_s": med,
        "min_s": min(times),
        "max_s": max(times),
        "times_s": times,
        "batches": batches,
        "sampled_edges": edges,
        "edges_per_second": edges / med if med > 0 else None,
    }


def bench(papers: int, epochs: int, threads: int, seed: int = 0) -> dict:
    import dgl

    import graphferry
    import graphferry.dgl
    from graphferry.dgl import as_hetero_graph

    data = hetero_data(seed=seed, num_papers=papers, num_authors=papers // 2, num_institutions=max(papers // 100, 10))
    g = to_dgl(data)
    seeds = {"paper": data["train_idx"]}
    fanouts = [{et: k for et in g.canonical_etypes} for k in FANOUTS]
    sampler = dgl.dataloading.NeighborSampler(fanouts)
    torch.manual_seed(seed)

    def loop(loader):
        def run():
            n = e = 0
            for _, _, blocks in loader:
                n += 1
                e += _block_edges(blocks)
            return n, e

        return run

    results = []
    dgl_loader = dgl.dataloading.DataLoader(g, seeds, sampler, batch_size=BATCH, shuffle=True)
    results.append({"system": "dgl", **_epochs(loop(dgl_loader), epochs)})
    ours = graphferry.dgl.DataLoader(g, seeds, sampler, batch_size=BATCH, shuffle=True, seed=seed, num_threads=threads)
    results.append({"system": "graphferry.dgl", **_epochs(loop(ours), epochs)})
    ours.close()

    hg = as_hetero_graph(g)
    relation_fanouts = tuple(reversed(hg.relation_fanouts(fanouts)))
    engine = graphferry.Loader.from_options(
        hg.graph,
        hg.to_global_nodes(seeds),
        graphferry.SampleOptions((), relation_fanouts=relation_fanouts, seed=seed, num_threads=threads),
        batch_size=BATCH,
        shuffle=True,
    )

    def engine_run():
        n = e = 0
        for sub in engine:
            n += 1
            e += sum(b.num_edges for b in sub.blocks)
        return n, e

    results.append({"system": "graphferry engine (no DGL blocks)", **_epochs(engine_run, epochs)})
    engine.close()
    base = results[0]["median_s"]
    for r in results:
        r["dgl_over_this"] = base / r["median_s"] if r["median_s"] > 0 else None

    # Node data: gathered in Python per batch vs by the engine ahead.
    feat = {nt: g.nodes[nt].data["feat"] for nt in g.ntypes}
    names = hg.engine_names({nt: ["feat"] for nt in g.ntypes})
    options = graphferry.SampleOptions((), relation_fanouts=relation_fanouts, seed=seed, num_threads=threads)
    seeds_global = hg.to_global_nodes(seeds)

    def data_run(engine_held: bool):
        loader = graphferry.Loader.from_options(
            hg.graph, seeds_global, options, batch_size=BATCH, shuffle=True, feature_names=names if engine_held else ()
        )

        def run():
            n = nbytes = 0
            for sub in loader:
                tv = sub.typed
                for t, nt in enumerate(hg.node_types):
                    if engine_held:
                        rows = sub.node_data[f"{nt}/feat"]
                    else:
                        rows = feat[nt][tv.nodes[tv.node_offsets[t] : tv.node_offsets[t + 1]]]
                    nbytes += rows.numel() * rows.element_size()
                n += 1
            return n, nbytes

        try:
            return _epochs(run, epochs)
        finally:
            loader.close()

    data_results = [
        {"system": "Python-held data, gathered per batch on the consumer thread", **data_run(False)},
        {"system": "engine-held data, gathered ahead on the engine's threads", **data_run(True)},
    ]
    data_ratio = data_results[0]["median_s"] / data_results[1]["median_s"]
    return {
        "graph": {
            "num_nodes": {nt: g.num_nodes(nt) for nt in g.ntypes},
            "num_edges": {"/".join(et): g.num_edges(et) for et in g.canonical_etypes},
            "seeds": {"paper": int(data["train_idx"].numel())},
        },
        "fanouts_per_relation": FANOUTS,
        "batch_size": BATCH,
        "epochs": epochs,
        "threads": threads if threads > 0 else os.cpu_count(),
        "machine": f"{platform.node()} ({os.cpu_count()} cores)",
        # Other work on the machine skews timings (DGL's OpenMP threads most):
        # the 1, 5 and 15 minute load averages when the run ended.
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "torch": torch.__version__,
        "dgl": dgl.__version__,
        "graphferry": graphferry.__version__,
        "systems": results,
        # _epochs' "sampled_edges" holds the feature bytes of an epoch here.
        "node_data": {"systems": data_results, "python_over_engine": data_ratio},
    }


def markdown(res: dict) -> str:
    g = res["graph"]
    lines = [
        "# Heterogeneous sampling: graphferry vs DGL's NeighborSampler",
        "",
        f"{res['machine']}, engine threads {res['threads']}; DGL {res['dgl']}, torch {res['torch']}. "
        f"Graph: {sum(g['num_nodes'].values())} nodes of {len(g['num_nodes'])} types, "
        f"{sum(g['num_edges'].values())} edges of {len(g['num_edges'])} relations; seeds: "
        f"{g['seeds']['paper']} papers, batch {res['batch_size']}, fan-outs {res['fanouts_per_relation']} per "
        f"relation (DGL order); sampling only, median of {res['epochs']} epochs after a warm-up; one run"
        + (f" (load average {res['load_average'][0]:.1f} at its end)." if res.get("load_average") else "."),
        "",
        "| system | median s/epoch | min-max | batches | sampled edges | M edges/s | DGL / this |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for r in res["systems"]:
        lines.append(
            f"| {r['system']} | {r['median_s']:.4f} | {r['min_s']:.4f}-{r['max_s']:.4f} | {r['batches']} | "
            f"{r['sampled_edges']} | {r['edges_per_second'] / 1e6:.2f} | {r['dgl_over_this']:.2f} |"
        )
    nd = res["node_data"]
    lines += [
        "",
        "## Node data: held in Python vs held by the engine (issue 29)",
        "",
        "The same engine loader, every node type's `feat` per batch (rows of the batch's nodes of each type); "
        "median s/epoch, same run as above.",
        "",
        "| node data | median s/epoch | min-max | batches | feature MB/epoch | Python-held / this |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for r in nd["systems"]:
        lines.append(
            f"| {r['system']} | {r['median_s']:.4f} | {r['min_s']:.4f}-{r['max_s']:.4f} | {r['batches']} | "
            f"{r['sampled_edges'] / 1e6:.1f} | {nd['systems'][0]['median_s'] / r['median_s']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "hetero"))
    ap.add_argument("--papers", type=int, default=100_000, help="papers; the graph scales with it")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="graphferry's threads; <= 0 uses every core")
    args = ap.parse_args(argv)
    res = bench(args.papers, args.epochs, args.threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(res, indent=2) + "\n")
    (out / "results.md").write_text(markdown(res))
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())

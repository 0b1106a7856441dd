"""Output: the JSON of raw figures, the Markdown tables, the PNG plots."""

from __future__ import annotations

import json
import math
from pathlib import Path

HEADLINE_BASELINES = ("DGL DataLoader", "DGL DataLoader (num_workers=2)", "DGL GraphBolt", "PyG NeighborLoader")


def _s(entry: dict | None) -> str:
    if not entry:
        return "—"
    return f"{entry['median_s']:.3f} ({entry['min_s']:.3f}–{entry['max_s']:.3f})"


def _num(x: float | None, fmt: str = "{:.3f}") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)


def _ratio(r: dict | None) -> str:
    if not r:
        return "—"
    return f"{r['ratio']:.2f}× ({r['low']:.2f}–{r['high']:.2f})"


def graph_table(run: dict) -> list[str]:
    lines = [
        f"### {run['graph']}: {run['num_nodes']:,} nodes, {run['num_edges']:,} edges, feat dim {run['feat_dim']}, "
        f"seeds: {run['seeds_kind']} ({run['num_seeds']:,}), batch {run['batch_size']}, fan-outs {run['fanouts']}",
        "",
        f"Source: {run['source']}",
        "",
        "| system | sampling s/epoch | loading s/epoch | training s/epoch | epoch s (train) | Medges/s (sampling) "
        "| features MB/epoch |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, e in run["results"].items():
        b, m = e["breakdown"], e["modes"]
        eps = m.get("sample", {}).get("edges_per_s")
        fbytes = m.get("load", {}).get("feature_bytes")
        lines.append(
            f"| {name} | {_s(m.get('sample'))} | {_num(b['loading_s'])} | {_num(b['training_s'])} | "
            f"{_s(m.get('train'))} | {_num(eps / 1e6 if eps else None, '{:.2f}')} | "
            f"{_num(fbytes / 1e6 if fbytes is not None else None, '{:.1f}')} |"
        )
    lines.append("")
    return lines


def headline_table(runs: list) -> list[str]:
    lines = [
        "| graph | graphferry | baseline | sampling: baseline / graphferry | epoch: baseline / graphferry "
        "| loading: baseline / graphferry |",
        "|---|---|---|---:|---:|---:|",
    ]
    for run in runs:
        for name, e in run["results"].items():
            if not e["graphferry"]:
                continue
            for base, r in e.get("ratios", {}).items():
                lines.append(
                    f"| {run['graph']} | {name} | {base} | {_ratio(r['sampling'])} | {_ratio(r['epoch'])} | "
                    f"{_num(r['loading'], '{:.2f}×')} |"
                )
    lines.append("")
    return lines


def scaling_tables(sc: dict) -> list[str]:
    lines = [f"### Scaling of graphferry sampling on {sc['graph']} ({sc['via']})", ""]
    lines += ["| threads | s/epoch | Medges/s | speed-up vs 1 thread |", "|---:|---:|---:|---:|"]
    base = next((t["median_s"] for t in sc["threads"] if t["num_threads"] == 1), None)
    for t in sc["threads"]:
        label = t["num_threads"] if t["num_threads"] > 0 else "all cores"
        speed = base / t["median_s"] if base and t["median_s"] > 0 else None
        lines.append(f"| {label} | {_s(t)} | {_num(t['edges_per_s'] / 1e6, '{:.2f}')} | {_num(speed, '{:.2f}×')} |")
    lines += [
        "",
        f"Batch-size sweep (fan-outs {sc['fanouts']}, all cores):",
        "",
        "| batch size | batches | s/epoch | Medges/s | µs per seed |",
        "|---:|---:|---:|---:|---:|",
    ]
    for t in sc["batch_size_sweep"]:
        lines.append(
            f"| {t['batch_size']} | {t['batches']} | {_s(t)} | {_num(t['edges_per_s'] / 1e6, '{:.2f}')} | "
            f"{t['us_per_seed']:.1f} |"
        )
    lines += [
        "",
        f"Fan-out sweep (batch {sc['batch_size']}, all cores):",
        "",
        "| fan-outs | sampled edges/epoch | s/epoch | Medges/s | µs per seed |",
        "|---|---:|---:|---:|---:|",
    ]
    for t in sc["fanout_sweep"]:
        lines.append(
            f"| {t['fanouts']} | {t['sampled_edges']:,} | {_s(t)} | "
            f"{_num(t['edges_per_s'] / 1e6, '{:.2f}')} | {t['us_per_seed']:.1f} |"
        )
    lines.append("")
    return lines


def to_markdown(doc: dict) -> str:
    meta = doc["meta"]
    lines = [
        f"# graphferry benchmark ({meta['mode']})",
        "",
        f"{meta['time']}, {meta['machine']}, {meta['cpus']} CPUs; torch {meta['torch']}, dgl {meta['dgl']}, "
        f"torch_geometric {meta['torch_geometric']}, graphferry {meta['graphferry']}. GraphSAGE {meta['layers']} "
        f"layers (mean), hidden {meta['hidden']}, Adam; fan-outs {meta['fanouts']} from the seeds; batch "
        f"{meta['batch_size']}; {meta['epochs']} timed epochs after {meta['warmup']} warm-up, epochs of all systems "
        "interleaved; figures are medians (min–max).",
        "",
        "Breakdown: sampling = epoch with sampling only; loading = (epoch with features and labels) − sampling; "
        "training = (epoch with a training step per batch) − (epoch with features). Ratios are baseline time / "
        "graphferry time from the same run, with the spread [min(baseline)/max(graphferry), "
        "max(baseline)/min(graphferry)]; a loading ratio is left out where graphferry's loading is overlapped "
        "(< 1 ms).",
        "",
    ]
    for note in meta.get("notes", []):
        lines.append(f"- {note}")
    if meta.get("notes"):
        lines.append("")
    lines += ["## Headline ratios", ""] + headline_table(doc["runs"])
    lines += ["## Per graph", ""]
    for run in doc["runs"]:
        lines += graph_table(run)
    if doc.get("scaling"):
        lines += ["## Scaling", ""] + scaling_tables(doc["scaling"])
    if doc.get("plots"):
        lines += ["## Plots", ""] + [f"- {p}" for p in doc["plots"]] + [""]
    return "\n".join(lines)


def write_json(doc: dict, path: Path) -> None:
    path.write_text(json.dumps(doc, indent=2, default=float) + "\n")


# -- plots ---------------------------------------------------------------------------------


def plot_breakdown(runs: list, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(1, len(runs))
    fig, axes = plt.subplots(n, 1, figsize=(10, 3.2 * n), squeeze=False)
    colors = {"sampling": "#4c72b0", "loading": "#dd8452", "training": "#55a868"}
    for ax, run in zip(axes[:, 0], runs):
        names = [k for k, e in run["results"].items() if e["breakdown"]["epoch_s"] is not None]
        left = [0.0] * len(names)
        for part in ("sampling", "loading", "training"):
            vals = [run["results"][k]["breakdown"][f"{part}_s"] or 0.0 for k in names]
            ax.barh(names, vals, left=left, color=colors[part], label=part)
            left = [a + b for a, b in zip(left, vals)]
        for i, k in enumerate(names):
            t = run["results"][k]["modes"]["train"]
            ax.errorbar(
                t["median_s"],
                i,
                xerr=[[t["median_s"] - t["min_s"]], [t["max_s"] - t["median_s"]]],
                fmt="none",
                ecolor="black",
                capsize=3,
            )
        ax.invert_yaxis()
        ax.set_xlabel("seconds per epoch (median; bar = min–max of the whole epoch)")
        ax.set_title(f"{run['graph']}: epoch-time breakdown")
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _line(path: Path, xs, ys, lows, highs, xlabel, title, xticks=None, log_x=False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(
        xs, ys, yerr=[[y - lo for y, lo in zip(ys, lows)], [hi - y for y, hi in zip(ys, highs)]], marker="o", capsize=3
    )
    if log_x:
        ax.set_xscale("log", base=2)
    if xticks is not None:
        ax.set_xticks(xs)
        ax.set_xticklabels(xticks)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("sampled edges per second (millions)")
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _eps(rows):
    ys = [r["sampled_edges"] / r["median_s"] / 1e6 for r in rows]
    lows = [r["sampled_edges"] / r["max_s"] / 1e6 for r in rows]
    highs = [r["sampled_edges"] / r["min_s"] / 1e6 for r in rows]
    return ys, lows, highs


def plot_scaling(sc: dict, out: Path) -> list[Path]:
    paths = []
    rows = sc["threads"]
    p = out / "throughput_threads.png"
    _line(
        p,
        [r["num_threads"] for r in rows],
        *_eps(rows),
        "sampling threads (graphferry.Loader num_threads)",
        f"graphferry sampling throughput vs threads ({sc['graph']})",
    )
    paths.append(p)
    rows = sc["batch_size_sweep"]
    p = out / "throughput_batch_size.png"
    _line(
        p,
        [r["batch_size"] for r in rows],
        *_eps(rows),
        "batch size (seeds)",
        f"graphferry sampling throughput vs batch size ({sc['graph']}, fan-outs {sc['fanouts']})",
        log_x=True,
    )
    paths.append(p)
    rows = sc["fanout_sweep"]
    p = out / "throughput_fanout.png"
    _line(
        p,
        list(range(len(rows))),
        *_eps(rows),
        "fan-outs (from the seeds)",
        f"graphferry sampling throughput vs fan-out ({sc['graph']}, batch {sc['batch_size']})",
        xticks=[str(r["fanouts"]) for r in rows],
    )
    paths.append(p)
    return paths

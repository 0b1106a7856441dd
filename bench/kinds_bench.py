"""Every loader kind's sampling epoch beside its framework counterpart, in
one run (issue 29: every kind stands on the one engine path, so every kind
should be measured).

For each kind, graphferry's loader and the counterpart that runs on this
machine yield the same kind of batch from the same graph, seeds and
sampler settings; their epochs are interleaved (round ``r`` runs epoch
``r`` of each), the first round is a warm-up, and the median of the rest
is reported with the ratio ``counterpart / graphferry``. Nothing is
trained: this is the loading side alone (the consumer only touches each
batch). Nothing here is asserted.

Counterparts: DGL 2.1's own ``dgl.dataloading.DataLoader`` for the DGL
kinds, with the very sampler object given to graphferry's. PyG's own
loaders cannot run here (PyG's ``NeighborLoader``, ``LinkNeighborLoader``,
``GraphSAINT*``, ``ShaDowKHopSampler`` and ``ClusterLoader`` need pyg-lib
or torch-sparse, which are published only on data.pyg.org, out of this
machine's reach), so each PyG kind is set beside DGL's loader doing the
same sampling (the nearest counterpart that runs), and the table says so.

    python bench/kinds_bench.py [--dataset pubmed|cora] [--epochs 6] [--out bench/results/kinds]
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
from typing import Any, Callable

import dgl
import torch
from torch_geometric.data import Data, HeteroData

import graphferry
import graphferry.dgl as gdgl
import graphferry.pyg as gpyg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from graphferry_bench.data import load_npy  # noqa: E402

BATCH = 512
FANOUTS = [10, 5]
SEED = 7


def load(name: str) -> dict:
    """The graph as COO, features, labels and seed nodes."""
    shared = HERE.parent.parent / "shared" / "datasets" / name
    if name != "cora" and shared.exists():
        bg = load_npy(shared, BATCH)
        indptr, indices = bg.indptr, bg.indices
        dst = torch.arange(bg.num_nodes).repeat_interleave(indptr[1:] - indptr[:-1])
        return dict(name=bg.name, src=indices, dst=dst, n=bg.num_nodes, feat=bg.feat, label=bg.label.clamp(min=0))
    g = graphferry.Graph.open(str(HERE.parent / "examples" / "data" / "cora"))
    src, dst, _ = g.edges()
    out = dict(
        name="Cora", src=src, dst=dst, n=g.num_nodes, feat=g.get_node_data("feat"), label=g.get_node_data("label")
    )
    g.close()
    return out


def build(c: dict) -> dict:
    gen = torch.Generator().manual_seed(5)
    n, na = c["n"], max(c["n"] // 8, 16)
    wa, wp = torch.randint(0, na, (4 * na,), generator=gen), torch.randint(0, n, (4 * na,), generator=gen)
    g = dgl.graph((c["src"], c["dst"]), num_nodes=n)
    g.ndata["feat"], g.ndata["label"] = c["feat"], c["label"]
    hg = dgl.heterograph(
        {
            ("paper", "cites", "paper"): (c["src"], c["dst"]),
            ("author", "writes", "paper"): (wa, wp),
            ("paper", "written_by", "author"): (wp, wa),
        },
        num_nodes_dict={"paper": n, "author": na},
    )
    afeat = torch.randn(na, c["feat"].shape[1], generator=gen)
    hg.nodes["paper"].data["feat"], hg.nodes["author"].data["feat"] = c["feat"], afeat
    data = Data(x=c["feat"], y=c["label"], edge_index=torch.stack([c["src"], c["dst"]]), num_nodes=n)
    hdata = HeteroData()
    hdata["paper"].x, hdata["author"].x = c["feat"], afeat
    hdata["paper", "cites", "paper"].edge_index = torch.stack([c["src"], c["dst"]])
    hdata["author", "writes", "paper"].edge_index = torch.stack([wa, wp])
    hdata["paper", "written_by", "author"].edge_index = torch.stack([wp, wa])
    seeds = torch.randperm(n, generator=gen)[: min(n, 16 * BATCH)]
    eids = torch.randperm(c["src"].numel(), generator=gen)[: min(c["src"].numel(), 16 * BATCH)]
    return dict(g=g, hg=hg, data=data, hdata=hdata, seeds=seeds, eids=eids, n=n)


def kinds(d: dict, scratch: Path) -> dict[str, tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """kind -> (counterpart's name, graphferry's loader, the counterpart)."""
    dl = dgl.dataloading
    g, hg, seeds, eids = d["g"], d["hg"], d["seeds"], d["eids"]
    nodes = lambda: dl.NeighborSampler(FANOUTS, prefetch_node_feats=["feat"], prefetch_labels=["label"])  # noqa: E731
    hnodes = lambda: dl.NeighborSampler(FANOUTS, prefetch_node_feats={"paper": ["feat"]})  # noqa: E731
    edges = lambda: dl.as_edge_prediction_sampler(  # noqa: E731
        dl.NeighborSampler(FANOUTS, prefetch_node_feats=["feat"]),
        negative_sampler=dl.negative_sampler.Uniform(1),
        exclude="self",
    )
    saint = {
        "node": lambda: dl.SAINTSampler("node", 4 * BATCH, prefetch_ndata=["feat"]),
        "edge": lambda: dl.SAINTSampler("edge", 4 * BATCH, prefetch_ndata=["feat"]),
        "walk": lambda: dl.SAINTSampler("walk", (BATCH, 3), prefetch_ndata=["feat"]),
    }
    parts = 64
    cluster = dl.ClusterGCNSampler(g, parts, cache_path=str(scratch / "cluster.pkl"), prefetch_ndata=["feat"])
    shadow = lambda: dl.ShaDowKHopSampler(FANOUTS, prefetch_node_feats=["feat"])  # noqa: E731
    kw = dict(batch_size=BATCH, shuffle=True)

    def pair(graph, items, make_sampler, **extra):
        args = dict(kw, **extra)
        return (
            lambda: gdgl.DataLoader(graph, items, make_sampler(), seed=SEED, **args),
            lambda: dl.DataLoader(graph, items, make_sampler(), **args),
        )

    out: dict[str, tuple[str, Callable, Callable]] = {}
    out["dgl node"] = ("DGL DataLoader", *pair(g, seeds, nodes))
    out["dgl node, heterograph"] = ("DGL DataLoader", *pair(hg, {"paper": seeds}, hnodes))
    out["dgl edge"] = ("DGL DataLoader", *pair(g, eids, edges))
    for mode, make in saint.items():
        out[f"dgl SAINT {mode}"] = ("DGL DataLoader", *pair(g, torch.arange(16), make, batch_size=1))
    out["dgl ClusterGCN"] = ("DGL DataLoader", *pair(g, torch.arange(parts), lambda: cluster, batch_size=4))
    out["dgl ShaDow"] = ("DGL DataLoader", *pair(g, seeds, shadow))

    data, hdata = d["data"], d["hdata"]
    pyg_kw = dict(batch_size=BATCH, shuffle=True)
    out["pyg NeighborLoader"] = (
        "DGL DataLoader (same sampling; PyG's needs pyg-lib)",
        lambda: gpyg.NeighborLoader(data, FANOUTS, input_nodes=seeds, **pyg_kw),
        pair(g, seeds, nodes)[1],
    )
    out["pyg NeighborLoader, HeteroData"] = (
        "DGL DataLoader (same sampling; PyG's needs pyg-lib)",
        lambda: gpyg.NeighborLoader(hdata, FANOUTS, input_nodes=("paper", seeds), **pyg_kw),
        pair(hg, {"paper": seeds}, hnodes)[1],
    )
    label_index = data.edge_index[:, eids]
    out["pyg LinkNeighborLoader"] = (
        "DGL DataLoader (same sampling; PyG's needs pyg-lib)",
        lambda: gpyg.LinkNeighborLoader(data, FANOUTS, edge_label_index=label_index, neg_sampling_ratio=1.0, **pyg_kw),
        pair(g, eids, edges)[1],
    )
    bare = Data(x=data.x, edge_index=data.edge_index, num_nodes=data.num_nodes)
    saint_pyg = {
        "node": lambda: gpyg.GraphSAINTNodeSampler(bare, batch_size=4 * BATCH, num_steps=16, log=False),
        "edge": lambda: gpyg.GraphSAINTEdgeSampler(bare, batch_size=4 * BATCH, num_steps=16, log=False),
        "walk": lambda: gpyg.GraphSAINTRandomWalkSampler(
            bare, batch_size=BATCH, walk_length=3, num_steps=16, log=False
        ),
    }
    for mode, make in saint_pyg.items():
        out[f"pyg GraphSAINT {mode}"] = (
            "DGL DataLoader (same draw; PyG's needs torch-sparse)",
            make,
            pair(g, torch.arange(16), saint[mode], batch_size=1)[1],
        )
    out["pyg ShaDowKHopSampler"] = (
        "DGL DataLoader (same sampling; PyG's needs torch-sparse)",
        lambda: gpyg.ShaDowKHopSampler(bare, depth=2, num_neighbors=FANOUTS[0], node_idx=seeds, **pyg_kw),
        pair(g, seeds, shadow)[1],
    )
    cluster_data = gpyg.ClusterData(bare, num_parts=parts, log=False)
    out["pyg ClusterLoader"] = (
        "DGL DataLoader (ClusterGCN; PyG's needs torch-sparse)",
        lambda: gpyg.ClusterLoader(cluster_data, batch_size=4, shuffle=True),
        pair(g, torch.arange(parts), lambda: cluster, batch_size=4)[1],
    )
    return out


def touch(batch: Any) -> int:
    """What a consumer does at the least: looks at every tensor's size."""
    if isinstance(batch, torch.Tensor):
        return batch.numel()
    if isinstance(batch, (list, tuple)):
        return sum(touch(b) for b in batch)
    if isinstance(batch, dict):
        return sum(touch(b) for b in batch.values())
    return 1


def epoch(loader: Any) -> float:
    t = time.perf_counter()
    for b in loader:
        touch(b)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="pubmed")
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--only", default="", help="run the kinds whose name contains this")
    ap.add_argument("--out", default=str(HERE / "results" / "kinds"))
    args = ap.parse_args()
    torch.manual_seed(SEED)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    c = load(args.dataset)
    d = build(c)
    rows = []
    load_before = os.getloadavg()[0]
    for kind, (base_name, ours_make, base_make) in kinds(d, out).items():
        if args.only and args.only not in kind:
            continue
        ours, base = ours_make(), base_make()
        times = {"graphferry": [], "base": []}
        for r in range(args.epochs + 1):
            for who, loader in (("graphferry", ours), ("base", base)):
                t = epoch(loader)
                if r:
                    times[who].append(t)
        if hasattr(ours, "close"):
            ours.close()
        med = {k: statistics.median(v) for k, v in times.items()}
        row = dict(kind=kind, baseline=base_name, graphferry_s=med["graphferry"], baseline_s=med["base"])
        row["ratio"] = med["base"] / med["graphferry"]
        rows.append(row)
        print(
            f"{kind:34s} graphferry {med['graphferry']:.3f}s  {base_name}: {med['base']:.3f}s  {row['ratio']:.2f}x",
            flush=True,
        )
    meta = dict(
        dataset=c["name"],
        nodes=c["n"],
        edges=int(c["src"].numel()),
        batch_size=BATCH,
        fanouts=FANOUTS,
        epochs=args.epochs,
        cpus=len(os.sched_getaffinity(0)),
        load_before=load_before,
        load_after=os.getloadavg()[0],
        python=platform.python_version(),
        torch=torch.__version__,
        dgl=dgl.__version__,
    )
    (out / "kinds.json").write_text(json.dumps(dict(meta=meta, rows=rows), indent=1))
    lines = [
        f"Sampling epochs of every loader kind on {c['name']} ({c['n']} nodes, {meta['edges']} edges), batches of "
        f"{BATCH}, fan-outs {FANOUTS}; median of {args.epochs} interleaved epochs after a warm-up; "
        f"{meta['cpus']} CPUs, load {load_before:.1f} before and {meta['load_after']:.1f} after.",
        "",
        "| kind | graphferry (s) | counterpart | counterpart (s) | counterpart / graphferry |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['kind']} | {r['graphferry_s']:.3f} | {r['baseline']} | {r['baseline_s']:.3f} | {r['ratio']:.2f}x |"
        )
    (out / "kinds.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

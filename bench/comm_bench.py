"""Distributed exchanges (issue 29): the engine's messages through TorchComm in place vs the old copying path.

    python bench/comm_bench.py --out bench/results/comm [--epochs 5] [--batch 256]

Two ranks (processes, Gloo over 127.0.0.1) load Cora partitioned into two dsp rank folders: each batch is
sampled collectively and the node features of the other rank's nodes (1,433 float32 a row) are fetched from
it, so the exchanges carry megabytes. In one run, epochs alternate between:

- in place: ``TorchComm`` as shipped: the engine's C block reaches ``all_to_all_single`` as DLPack tensors
  (``gf_comm.all_to_all_dl``), one copy each way (the engine's, into and out of its block);
- copying: the path before issue 29, rebuilt here only: the messages gathered into a fresh tensor
  (``torch.cat``) and the answer copied from torch's output into the engine's block (``memmove``), four
  copies in all;

and after the epochs each rank replays the same exchanges (the same byte counts, in order) with plain
``torch.distributed.all_to_all_single`` over torch-owned tensors: the floor, what the transport alone takes.

Per system: the time the engine's data-exchange callbacks took (the median over epochs of their sum), the
exchange bytes each rank sent and received, their rate (bytes / that time), and the median epoch. Ratios
are against the floor. Sampling and timing run on the same two cores, so machine load (noted) moves them.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.multiprocessing as mp

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

import graphferry  # noqa: E402
from graphferry import distributed  # noqa: E402
from graphferry.partition import partition  # noqa: E402

CORA = REPO / "examples" / "data" / "cora"
FANOUTS = [10, 10]
SYSTEMS = ("in place", "copying")


class BenchComm(distributed.TorchComm):
    """TorchComm timing its data exchanges; ``copying`` rebuilds the old path."""

    copying = False

    def __init__(self, **kw):
        super().__init__(**kw)
        self.spent, self.moved, self.splits = 0.0, 0, []

    def _c_all_to_all(self, *args):
        t0 = time.perf_counter()
        rc = super()._c_all_to_all(*args)
        self.spent += time.perf_counter() - t0
        return rc

    def all_to_all_into(self, send, send_splits, recv_splits, out):
        self.moved += sum(send_splits) + sum(recv_splits)
        self.splits.append((list(send_splits), list(recv_splits)))
        if not self.copying:
            return super().all_to_all_into(send, send_splits, recv_splits, out)
        gathered = torch.cat(list(torch.split(send, send_splits)))  # the old torch.cat of per-rank views
        got = torch.empty(sum(recv_splits), dtype=torch.uint8)
        super().all_to_all_into(gathered, send_splits, recv_splits, got)
        out.copy_(got)  # the old memmove into the engine's memory
        return None


def _floor(comm: BenchComm, splits: list) -> float:
    """Seconds plain all_to_all_single takes for the same exchanges."""
    import torch.distributed as dist

    t0 = time.perf_counter()
    for ss, rs in splits:
        out = torch.empty(sum(rs), dtype=torch.uint8)
        dist.all_to_all_single(out, torch.empty(sum(ss), dtype=torch.uint8), rs, ss, group=comm.group)
    return time.perf_counter() - t0


def _worker(rank: int, port: int, path: str, epochs: int, batch: int, results) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=2,
            timeout=datetime.timedelta(seconds=120),
        )
        comm = BenchComm(timeout=120, method="all_to_all")
        part = distributed.PartGraph.open(path, rank=rank)
        seeds = torch.arange(part.num_nodes, dtype=torch.int64)  # every node of the whole graph, on every rank
        loader = distributed.DistributedLoader(
            part, seeds, FANOUTS, comm=comm, batch_size=batch, seed=1, feature_names=["feat"], num_threads=1
        )
        rows = {s: [] for s in SYSTEMS}
        for e in range(epochs + 1):  # epoch 0 warms up
            for system in SYSTEMS:
                comm.copying = system == "copying"
                comm.spent, comm.moved, comm.splits = 0.0, 0, []
                dist.barrier(group=comm.group)
                t0 = time.perf_counter()
                batches = sum(1 for _ in loader.epoch(e))
                took = time.perf_counter() - t0
                if e:
                    rows[system].append((took, comm.spent, comm.moved, len(comm.splits), batches))
        splits = comm.splits
        loader.close()
        floors = []
        for _ in range(epochs):
            dist.barrier(group=comm.group)
            floors.append(_floor(comm, splits))
        results.put((rank, "ok", {"rows": rows, "floor_s": floors, "floor_moved": comm.moved, "floor_n": len(splits)}))
        part.close()
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        import traceback

        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "comm"))
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch", type=int, default=256)
    args = ap.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "cora-dsp"
        partition(CORA, dst, parts=2, method="random", layout="dsp", seed=0)
        ctx = mp.get_context("spawn")
        results = ctx.Queue()
        port = _free_port()
        procs = [
            ctx.Process(target=_worker, args=(r, port, str(dst), args.epochs, args.batch, results)) for r in range(2)
        ]
        for p in procs:
            p.start()
        out = {}
        for _ in procs:
            rank, status, payload = results.get(timeout=1800)
            if status != "ok":
                raise SystemExit(f"rank {rank}: {payload}")
            out[rank] = payload
        for p in procs:
            p.join()
    load_after = os.getloadavg()
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "torch": torch.__version__,
            "graphferry": graphferry.__version__,
            "loadavg_before": load_before,
            "loadavg_after": load_after,
        },
        "config": {"dataset": "Cora, 2 dsp rank folders (random)", "fanouts": FANOUTS, "batch": args.batch},
        "epochs": args.epochs,
        "ranks": {},
    }
    lines = [
        "# Distributed exchanges: in place vs the old copying path (issue 29)",
        "",
        f"`python bench/comm_bench.py --epochs {args.epochs} --batch {args.batch}`: two ranks over Gloo on one "
        f"host ({os.cpu_count()} CPUs), Cora in two dsp rank folders, fan-outs {FANOUTS}, features fetched from "
        f"the other rank. Load average (1/5/15 min) {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f} "
        f"before, {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} after; torch {torch.__version__}.",
        "",
        "Exchange time: the median over epochs of the time the engine's data-exchange callbacks took; rate: the "
        "bytes each rank sent and received / that time; floor: plain `all_to_all_single` of the same byte "
        "counts over torch-owned tensors.",
        "",
        "| rank | system | exchanges | MB moved | exchange time (ms) | GB/s | vs floor | median epoch (ms) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for rank in sorted(out):
        rows, floors = out[rank]["rows"], out[rank]["floor_s"]
        floor = statistics.median(floors)
        r = {"floor_s": floors}
        for system in SYSTEMS:
            epochs_s = [t for t, *_ in rows[system]]
            spent = statistics.median([s for _, s, *_ in rows[system]])
            _, _, moved, count, _ = rows[system][-1]
            r[system] = {"epochs": rows[system], "exchange_s": spent, "moved": moved, "exchanges": count}
            lines.append(
                f"| {rank} | {system} | {count} | {moved / 1e6:.1f} | {spent * 1e3:.1f} | {moved / spent / 1e9:.2f} "
                f"| {spent / floor:.2f}x | {statistics.median(epochs_s) * 1e3:.0f} |"
            )
        moved = out[rank]["floor_moved"]
        lines.append(
            f"| {rank} | floor (all_to_all_single) | {out[rank]['floor_n']} | {moved / 1e6:.1f} "
            f"| {floor * 1e3:.1f} | {moved / floor / 1e9:.2f} | 1.00x | |"
        )
        r["ratio_copying_over_in_place"] = r["copying"]["exchange_s"] / r["in place"]["exchange_s"]
        report["ranks"][rank] = r
    ratios = [report["ranks"][k]["ratio_copying_over_in_place"] for k in sorted(out)]
    lines += ["", "Copying / in place, exchange time: " + ", ".join(f"rank {k} {v:.2f}x" for k, v in enumerate(ratios))]
    os.makedirs(args.out, exist_ok=True)
    Path(args.out, "results.json").write_text(json.dumps(report, indent=1) + "\n")
    Path(args.out, "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

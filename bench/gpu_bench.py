"""GPU sampling and gathering benchmark (issue 9, issue 19 mode 2): one run, JSON + Markdown.

    python bench/gpu_bench.py --out bench/results/gpu [--dataset DIR] [--preset products-like]

On a GPU machine (tests/gpu/run.sh calls it), per epoch over all train seeds,
GraphSAGE fan-outs [15, 10, 5], batch 1024, sampling only:

- graphferry GPU, the device sampler stage: the CUDA library's gfcuda_epoch
  hook (cuda/bench.go, EpochBench): a pipeline over the device sampler
  (its workers' streams, one host synchronisation per batch), batches in
  device memory, from Start to the last batch; the same epoch with the
  batches copied to the host; its first batches compared with the CPU
  engine's pipeline for identity.
- gather bandwidth per tier (the same hook, GatherRows): the gather kernel
  over the dataset's features, rows of the hot tier (device memory), of the
  cold tier (pinned host memory read in place) and of both, beside
  device-to-device and pinned host-to-device copies measured in the same
  run through the same library.
- graphferry CPU: graphferry.Loader at 16 threads, in a child process with
  GRAPHFERRY_BACKEND=cpu (one library per process).
- PyTorch GPU baseline: the vectorised sampler below (with replacement,
  torch.unique to relabel), the comparison issue 9 measured.
- device copy bandwidth through torch: pinned host->device, device->device.
- mode 1 (CPU sampling, GPU training), in a child process on the CPU
  library (mode 1 needs no CUDA build): the same GraphSAGE (PyG SAGEConv,
  hidden 256) trained over an epoch three ways, medians of --train-repeats
  epochs: the training-only floor (the batches staged on the device
  beforehand, in chunks); graphferry.pyg.NeighborLoader with the
  synchronous copy in the training loop (batch.to(device)); and mode 1,
  graphferry.pyg.PrefetchLoader over the same loader (page-locked batches
  copied on a side stream while the one before trains).

The issue's goals are reported against: sampling epoch <= 30 ms; hot-tier
gather >= 80% of device copy bandwidth; zero-copy gather >= 70% of pinned
copy bandwidth; mode 1 epoch <= 1.5x the training-only floor.

--device cpu leaves out what needs a GPU (graphferry GPU, the copies) and runs
the PyTorch baseline on the CPU: a dry run of the script without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
FANOUTS = [15, 10, 5]
BATCH = 1024


def load_csc(dataset: Path, device: str):
    """The dataset's graph as CSC (in-neighbours) on device, and its train ids."""
    import pyarrow.ipc as ipc

    meta = json.loads((dataset / "graphferry.json").read_text())
    n = int(meta["num_nodes"])
    edges = ipc.open_file(str(dataset / "edges.arrow")).read_all()
    with warnings.catch_warnings():  # Arrow's buffers are read-only; torch only reads them
        warnings.simplefilter("ignore", UserWarning)
        src = torch.from_numpy(edges.column("src").to_numpy()).to(device)
        dst = torch.from_numpy(edges.column("dst").to_numpy()).to(device)
    order = torch.argsort(dst, stable=True)
    indices = src[order].contiguous()
    counts = torch.bincount(dst, minlength=n)
    indptr = torch.zeros(n + 1, dtype=torch.int64, device=device)
    indptr[1:] = torch.cumsum(counts, 0)
    nodes = ipc.open_file(str(dataset / "nodes.arrow")).read_all()
    train = torch.from_numpy(nodes.column("train_mask").to_numpy()).nonzero().flatten().to(device)
    return indptr, indices, train


def torch_sample(indptr, indices, seeds, fanouts, gen):
    """The vectorised baseline: per hop, fanout uniform draws WITH replacement
    for every frontier node (none for degree 0), then torch.unique over the
    nodes so far and the new ones relabels them; every node is the next
    frontier (DGL blocks). Returns the number of sampled edges."""
    nodes, edges = seeds, 0
    for f in fanouts:
        start = indptr[nodes]
        deg = indptr[nodes + 1] - start
        has = deg > 0
        start, deg = start[has], deg[has]
        r = (torch.rand(start.numel(), f, device=start.device, generator=gen) * deg[:, None]).long()
        nbrs = indices[(start[:, None] + r).flatten()]
        edges += nbrs.numel()
        nodes, _ = torch.unique(torch.cat([nodes, nbrs]), return_inverse=True)
    return edges


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def bench_torch(dataset: Path, device: str, max_batches: int) -> dict:
    indptr, indices, train = load_csc(dataset, device)
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    perm = train[torch.randperm(train.numel(), device=device, generator=gen)]
    batches = list(perm.split(BATCH))
    if max_batches:
        batches = batches[:max_batches]
    torch_sample(indptr, indices, batches[0], FANOUTS, gen)  # warm-up
    sync(device)
    t0 = time.perf_counter()
    edges = sum(torch_sample(indptr, indices, b, FANOUTS, gen) for b in batches)
    sync(device)
    dt = time.perf_counter() - t0
    return {
        "system": f"PyTorch vectorised sampler ({device}, with replacement)",
        "batches": len(batches),
        "seconds": dt,
        "sampled_edges": edges,
        "edges_per_second": edges / dt,
    }


def bench_copies() -> dict:
    n = 256 << 20
    host = torch.empty(n, dtype=torch.uint8).pin_memory()
    dev = torch.empty(n, dtype=torch.uint8, device="cuda")
    dev2 = torch.empty_like(dev)
    out = {}
    for name, fn in (
        ("h2d_pinned_bytes_per_second", lambda: dev.copy_(host, non_blocking=True)),
        ("d2d_read_plus_write_bytes_per_second", lambda: dev2.copy_(dev)),
    ):
        fn()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            best = min(best, time.perf_counter() - t0)
        out[name] = n / best * (2 if name.startswith("d2d") else 1)
    return out


GATHER_ROWS = 1 << 20


def bench_graphferry_gpu(dataset: Path, max_batches: int) -> tuple[list[dict], dict | None]:
    import graphferry
    from graphferry._native import lib as _lib

    if _lib.CUDA is None:
        raise RuntimeError(
            f"graphferry loaded the {graphferry.backend()} library, not the CUDA one (GRAPHFERRY_BACKEND=cuda)"
        )
    cfg = {
        "Dataset": str(dataset),
        "Fanouts": FANOUTS,
        "BatchSize": BATCH,
        "MaxBatches": max_batches,
        "Seed": 1,
        "Compare": 8,
        "CPUThreads": 16,
        "Workers": 0,
        "Placement": "auto",
        "GatherRows": GATHER_ROWS,
    }
    res = _lib.CUDA.epoch(torch.cuda.current_device(), cfg)
    gather = res.pop("gather", None)
    device = dict(res, system=f"graphferry GPU device stage ({res['workers']} streams, batches in device memory)")
    host = {
        "system": "graphferry GPU device stage (batches copied to the host)",
        "batches": res["batches"],
        "seconds": res["host_output_seconds"],
        "sampled_edges": res["sampled_edges"],
        "edges_per_second": res["sampled_edges"] / res["host_output_seconds"],
    }
    return [device, host], gather


_CPU_CHILD = r"""
import json, sys, time
import graphferry
from graphferry._native import backend as _backend
ds, fanouts = sys.argv[1], json.loads(sys.argv[2])
batch, threads, max_batches = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
assert _backend.BACKEND == "cpu", _backend.BACKEND
g = graphferry.Graph.open(ds)
loader = graphferry.Loader(g, g.train_idx, fanouts, batch_size=batch, shuffle=True, seed=1, num_threads=threads)
def epoch():
    n = e = 0
    for sub in loader:
        e += sum(b.indices.numel() for b in sub.blocks)
        n += 1
        if max_batches and n == max_batches:
            break
    return n, e
epoch()  # warm-up
t0 = time.perf_counter(); n, e = epoch(); dt = time.perf_counter() - t0
print(json.dumps({"system": f"graphferry CPU ({threads} threads)", "batches": n, "seconds": dt,
                  "sampled_edges": e, "edges_per_second": e / dt}))
"""


def bench_graphferry_cpu(dataset: Path, threads: int, max_batches: int) -> dict:
    env = dict(os.environ, GRAPHFERRY_BACKEND="cpu")
    env.pop("GRAPHFERRY_LIB_PATH", None)
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            _CPU_CHILD,
            str(dataset),
            json.dumps(FANOUTS),
            str(BATCH),
            str(threads),
            str(max_batches),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if out.returncode != 0:
        raise RuntimeError(f"graphferry CPU child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# Mode 1: GraphSAGE trained over graphferry's PyG loader three ways (see the
# module's docstring), in a child on the CPU library. Prints one JSON line.
_MODE1_CHILD = r"""
import json, statistics, sys, time
import torch
import torch.nn.functional as F
from torch_geometric.nn import SAGEConv
import graphferry
from graphferry._native import backend as _backend
from graphferry.pyg import NeighborLoader, PrefetchLoader
ds, fanouts, device = sys.argv[1], json.loads(sys.argv[2]), torch.device(sys.argv[3])
batch, threads, max_batches, repeats = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
assert _backend.BACKEND == "cpu", _backend.BACKEND
meta = json.loads(open(f"{ds}/graphferry.json").read())
g = graphferry.Graph.open(ds)
feat = meta["feature"]["shape"][1]
classes = int(meta["num_classes"])
torch.manual_seed(0)

class SAGE(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.convs = torch.nn.ModuleList(SAGEConv(a, b) for a, b in zip(dims, dims[1:]))
    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.relu(x)
        return x

model = SAGE([feat, 256, 256, classes]).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

def step(b):
    opt.zero_grad(set_to_none=True)
    out = model(b.feat, b.edge_index)[: b.batch_size]
    F.cross_entropy(out, b.label[: b.batch_size].long()).backward()
    opt.step()

def sync():
    if device.type == "cuda":
        torch.cuda.synchronize(device)

def loader():
    return NeighborLoader(g, fanouts, batch_size=batch, input_nodes=g.train_idx, shuffle=True, seed=1,
                          num_threads=threads)

def limited(it, most):
    for n, b in enumerate(it):
        if most and n == most:
            return
        yield b

def floor(most, chunk=32):
    # Training only: the epoch's batches staged on the device beforehand, a chunk at a time.
    seconds, n, staged = 0.0, 0, []
    def train(staged):
        sync(); t0 = time.perf_counter()
        for b in staged:
            step(b)
        sync()
        return time.perf_counter() - t0
    with loader() as lo:
        for b in limited(lo, most):
            staged.append(b.to(device))
            n += 1
            if len(staged) == chunk:
                seconds += train(staged); staged = []
        if staged:
            seconds += train(staged)
    return n, seconds

def through(make, most):
    with loader() as lo:
        sync(); t0 = time.perf_counter(); n = 0
        for b in limited(make(lo), most):
            step(b.to(device))  # on the device already through the prefetch step: no copy
            n += 1
        sync()
        return n, time.perf_counter() - t0

rows = [
    ("training only (batches pre-staged on the device)", floor),
    ("graphferry CPU loader, synchronous copy in the loop", lambda most: through(lambda lo: lo, most)),
    ("graphferry mode 1 (page-locked, side-stream prefetch)",
     lambda most: through(lambda lo: PrefetchLoader(lo, device), most)),
]
out = []
for name, fn in rows:
    fn(min(10, max_batches) if max_batches else 10)  # warm-up: the first batches
    runs = [fn(max_batches) for _ in range(repeats)]
    out.append({"system": name, "batches": runs[0][0], "seconds": statistics.median(r[1] for r in runs),
                "runs": [r[1] for r in runs]})
base = out[0]["seconds"]
for r in out:
    r["of_floor"] = r["seconds"] / base if base > 0 else None
print(json.dumps({"device": str(device), "threads": threads, "rows": out}))
"""


def bench_mode1(dataset: Path, device: str, threads: int, max_batches: int, repeats: int) -> dict:
    env = dict(os.environ, GRAPHFERRY_BACKEND="cpu")
    env.pop("GRAPHFERRY_LIB_PATH", None)
    args = [str(dataset), json.dumps(FANOUTS), device, str(BATCH), str(threads), str(max_batches), str(repeats)]
    out = subprocess.run(
        [sys.executable, "-c", _MODE1_CHILD, *args], env=env, capture_output=True, text=True, timeout=240
    )
    if out.returncode != 0:
        raise RuntimeError(f"mode 1 child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def markdown(res: dict) -> str:
    lines = [
        f"# GPU sampling benchmark ({res['dataset_name']})",
        "",
        f"{res['machine']}; fan-outs {FANOUTS}, batch {BATCH}, all train seeds, sampling only; one run.",
        "",
        "| system | batches | epoch (s) | sampled edges | edges/s |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in res["systems"]:
        if "error" in r:
            lines.append(f"| {r['system']} | failed: {r['error'][:200]} | | | |")
            continue
        lines.append(
            f"| {r['system']} | {r['batches']} | {r['seconds']:.4f} | {r['sampled_edges']} | "
            f"{r['edges_per_second'] / 1e6:.1f} M |"
        )
    lines.append("")
    for k, v in res.get("copies", {}).items():
        lines.append(f"- torch {k}: {v / 1e9:.1f} GB/s")
    gpu = next((r for r in res["systems"] if "compared_batches" in r), None)
    if gpu:
        lines.append(
            f"- graphferry GPU: topology in {gpu['placement']} memory ({gpu['topology_bytes'] >> 20} MiB); "
            f"{gpu['host_syncs_per_batch']:.2f} host synchronisations per batch; first {gpu['compared_batches']} "
            f"batches identical to the CPU engine's: {gpu['identical']}; pools {gpu['pool_bytes'] >> 20} MiB; "
            f"graph placed in {gpu['graph_upload_seconds']:.2f} s"
        )
    g = res.get("gather")
    if g:
        lines += [
            "",
            f"## Gather ({g['rows_per_gather']} random rows of {g['row_bytes']} bytes, {g['width']}-byte words)",
            "",
            "| what | GB/s |",
            "| --- | ---: |",
            f"| gather, hot tier (device memory) | {g['hot_gather_bytes_per_second'] / 1e9:.1f} |",
            f"| gather, cold tier (pinned host, zero-copy) | {g['zero_copy_gather_bytes_per_second'] / 1e9:.1f} |",
            f"| gather, both tiers (half the nodes hot) | {g['mixed_gather_bytes_per_second'] / 1e9:.1f} |",
            f"| device-to-device copy | {g['d2d_copy_bytes_per_second'] / 1e9:.1f} |",
            f"| pinned host-to-device copy | {g['h2d_pinned_copy_bytes_per_second'] / 1e9:.1f} |",
        ]
        if g.get("cold_copied"):
            lines.append("")
            lines.append(
                "(the features are on the Go heap or the driver refused to register them: "
                "the cold tier is a pinned copy, not the mapped feat.bin)"
            )
    m1 = res.get("mode1")
    if m1:
        lines += [
            "",
            f"## Training, mode 1 (GraphSAGE hidden 256 on {m1['device']}, {m1['threads']} sampling threads, medians)",
            "",
            "| what | batches | epoch (s) | x floor |",
            "| --- | ---: | ---: | ---: |",
        ]
        for r in m1["rows"]:
            lines.append(f"| {r['system']} | {r['batches']} | {r['seconds']:.3f} | {r['of_floor']:.2f} |")
    elif "mode1_error" in res:
        lines += ["", f"## Training, mode 1: failed: {res['mode1_error'][:300]}"]
    lines += ["", "## Goals (issue 19)", ""]
    for goal in res.get("goals", []):
        lines.append(f"- {goal}")
    return "\n".join(lines) + "\n"


def goals(res: dict) -> list[str]:
    """The issue's goals, each with what this run measured."""
    out = []
    gpu = next((r for r in res["systems"] if "compared_batches" in r), None)
    if gpu:
        ok = gpu["seconds"] <= 0.030
        out.append(f"sampling epoch <= 30 ms: {gpu['seconds'] * 1e3:.1f} ms: {'MET' if ok else 'NOT MET'}")
    else:
        out.append("sampling epoch <= 30 ms: not measured")
    g = res.get("gather")
    if g:
        out.append(
            f"hot-tier gather >= 80% of device copy bandwidth: {100 * g['hot_of_d2d']:.0f}%: "
            f"{'MET' if g['hot_of_d2d'] >= 0.8 else 'NOT MET'}"
        )
        out.append(
            f"zero-copy gather >= 70% of pinned copy bandwidth: {100 * g['zero_copy_of_h2d']:.0f}%: "
            f"{'MET' if g['zero_copy_of_h2d'] >= 0.7 else 'NOT MET'}"
        )
    else:
        out.append("gather goals: not measured")
    m1 = res.get("mode1")
    if m1 and m1["device"].startswith("cuda"):
        ratio = m1["rows"][2]["of_floor"]
        out.append(
            f"mode 1 epoch <= 1.5x the training-only floor: {ratio:.2f}x: {'MET' if ratio <= 1.5 else 'NOT MET'}"
        )
    else:
        out.append("mode 1 epoch <= 1.5x the floor: not measured")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "gpu"))
    ap.add_argument("--dataset", help="an existing graphferry dataset (default: generate --preset)")
    ap.add_argument("--preset", default="products-like")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--max-batches", type=int, default=0, help="0: the whole epoch")
    ap.add_argument("--cpu-threads", type=int, default=16)
    ap.add_argument("--train-repeats", type=int, default=3, help="timed epochs per mode-1 row (median)")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dataset = Path(args.dataset) if args.dataset else Path("/tmp") / f"graphferry-{args.preset}"
    if not args.dataset and not (dataset / "graphferry.json").is_file():
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "graphferry", "generate", args.preset, str(dataset)],
            check=True,
            env=dict(os.environ, GRAPHFERRY_BACKEND="cpu"),
        )
        print(f"generated {args.preset} in {time.perf_counter() - t0:.1f} s", flush=True)
    machine = platform.node()
    if args.device == "cuda":
        machine = f"{torch.cuda.get_device_name()} ({os.cpu_count()} cores)"
    res = {
        "dataset": str(dataset),
        "dataset_name": args.dataset or args.preset,
        "machine": machine,
        "fanouts": FANOUTS,
        "batch_size": BATCH,
        "torch": torch.__version__,
        "systems": [],
    }
    runs = [
        ("graphferry CPU", lambda: bench_graphferry_cpu(dataset, args.cpu_threads, args.max_batches)),
        ("PyTorch", lambda: bench_torch(dataset, args.device, args.max_batches)),
    ]
    if args.device == "cuda":
        runs.insert(0, ("graphferry GPU", lambda: bench_graphferry_gpu(dataset, args.max_batches)))
    failed = False
    for name, fn in runs:
        print(f"== {name}", flush=True)
        try:
            r = fn()
        except Exception as err:  # keep the other measurements
            failed = True
            r = {"system": name, "error": f"{type(err).__name__}: {err}"}
        if isinstance(r, tuple):  # graphferry GPU: its systems and the gather
            r, res["gather"] = r
            print(json.dumps({"gather": res["gather"]}), flush=True)
        for x in r if isinstance(r, list) else [r]:
            print(json.dumps(x), flush=True)
            res["systems"].append(x)
    print("== mode 1 (GraphSAGE training)", flush=True)
    try:
        res["mode1"] = bench_mode1(dataset, args.device, args.cpu_threads, args.max_batches, args.train_repeats)
        print(json.dumps({"mode1": res["mode1"]}), flush=True)
    except Exception as err:  # keep the other measurements
        failed = True
        res["mode1_error"] = f"{type(err).__name__}: {err}"
        print(res["mode1_error"], flush=True)
    if args.device == "cuda":
        res["copies"] = bench_copies()
    res["goals"] = goals(res)
    (out / "results.json").write_text(json.dumps(res, indent=2) + "\n")
    (out / "results.md").write_text(markdown(res))
    print(markdown(res))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Issue 21's benchmark: features larger than memory, in a memory-limited
control group.

    python bench/disk_bench.py --out bench/results/disk [--dataset DIR] [--limit 1G]

Every configuration runs in its own process inside a child of this
process's cgroup v1 memory group with its own memory.limit_in_bytes (page
cache counts against it), started with the dataset's pages dropped from the
page cache (posix_fadvise DONTNEED), over the same seeds, fan-outs and batch
size, for --epochs epochs (sampling + feature loading; the consumer only
touches the features):

  gf-disk/<policy>/<size>  graphferry's disk tier (direct reads, io_uring or
                           pread workers) under a CPU cache of each policy
                           and size
  gf-mmap                  graphferry with today's memory-mapped feat.bin
  mmap-index_select        graphferry sampling without features, then a plain
                           numpy.memmap of feat.bin and torch.index_select
  mmap-random-index_select the same with madvise(MADV_RANDOM) on the mapping
                           (page faults read one page, not the device's
                           read-ahead around it)
  fio-floor                the disk's own random-read rate (fio, O_DIRECT,
                           io_uring) at the disk tier's request size and
                           queue depth, on feat.bin
  gf-disk-blocks/...       with --compare-verify: each disk tier run again
  gf-disk-unverified/...   on copies of the dataset (hard links) whose
                           graphferry.json records no page sums (the tier
                           then reads a row's whole 256 KiB block first,
                           once per block) or no sums at all (rows read
                           unchecked); the gf-disk runs check every page
                           read against feat.bin.pages

Writes disk.json, disk.md and (with matplotlib) disk.png into --out. The
dataset defaults to the "disk-small" preset (4.1 GB of features), generated
into bench/.cache on first use.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHILD_FLAG = "--child"


# -- the configurations (run in a child process) ------------------------------


def _seeds(ds: Path, n: int, seed: int):
    import numpy as np
    import torch

    import graphferry

    with graphferry.Graph.open(ds, feature_tier="disk", cache_bytes=0) as g:
        train = g.get_node_data("train_mask").nonzero().flatten()
    rng = np.random.default_rng(seed)
    return torch.from_numpy(np.sort(rng.choice(train.numpy(), size=min(n, len(train)), replace=False)))


def child(cfg: dict) -> dict:
    import numpy as np
    import torch

    import graphferry

    ds = Path(cfg["dataset"])
    seeds = _seeds(ds, cfg["seeds"], cfg["seed"])
    kind = cfg["kind"]
    opts = {}
    if kind == "gf-disk":
        opts = {"feature_tier": "disk", "cache_policy": cfg["policy"], "cache_bytes": cfg["cache_bytes"]}
    elif kind == "gf-mmap":
        opts = {"feature_tier": "memory"}
    else:
        opts = {"feature_tier": "disk", "cache_bytes": 0}  # the graphferry sampler only; feat.bin stays unread
    g = graphferry.Graph.open(ds, **opts)
    plain = kind in ("mmap-index_select", "mmap-random-index_select")
    feats = [] if plain else ["feat"]
    loader = graphferry.Loader(
        g,
        seeds,
        cfg["fanouts"],
        batch_size=cfg["batch_size"],
        shuffle=True,
        seed=cfg["seed"],
        feature_names=feats,
        num_threads=cfg["threads"],
    )
    mm = None
    if plain:
        meta = json.loads((ds / "graphferry.json").read_text())
        mm = np.memmap(ds / "feat.bin", dtype=np.float32, mode="r", shape=tuple(meta["feature"]["shape"]))
        if kind == "mmap-random-index_select":
            mm._mmap.madvise(mmap.MADV_RANDOM)
        import warnings

        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        mm = torch.from_numpy(mm)
    epochs = []
    for _ in range(cfg["epochs"]):
        ru0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        rows = 0
        check = 0.0
        for b in loader:
            x = b.node_data["feat"] if mm is None else torch.index_select(mm, 0, b.nodes)
            rows += x.shape[0]
            check += float(x[:, 0].sum())
        wall = time.perf_counter() - t0
        ru = resource.getrusage(resource.RUSAGE_SELF)
        s = loader.stats().current
        epochs.append(
            {
                "wall_s": wall,
                "rows": rows,
                "checksum": check,
                "loader_busy_s": s.loader.busy,
                "sampler_busy_s": s.sampler.busy,
                "rows_hot": s.rows_hot,
                "rows_cache": s.rows_cache,
                "rows_disk": s.rows_disk,
                "bytes_disk": s.bytes_disk,
                "bytes_disk_read": s.bytes_disk_read,
                "disk_requests": s.disk_requests,
                "cache_hit_rate": s.cache_hit_rate,
                "major_faults": ru.ru_majflt - ru0.ru_majflt,
                "blocks_in": ru.ru_inblock - ru0.ru_inblock,  # 512-byte blocks read by the process
            }
        )
    plan = g.memory_plan
    loader.close()
    g.close()
    status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return {"epochs": epochs, "plan": plan, "vm_hwm_kb": int(status["VmHWM"].split()[0])}


# -- the control group --------------------------------------------------------


class Cgroup:
    """A child of this process's cgroup v1 memory group with its own limit."""

    def __init__(self, limit: int):
        base = None
        for line in open("/proc/self/cgroup"):
            _, ctrls, path = line.strip().split(":", 2)
            if "memory" in ctrls.split(","):
                base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
        if base is None or not base.is_dir():
            raise SystemExit("no cgroup v1 memory controller here (/proc/self/cgroup names none)")
        self.dir = base / f"graphferry-disk-bench-{os.getpid()}"
        self.dir.mkdir()
        (self.dir / "memory.limit_in_bytes").write_text(str(limit))
        self.limit = int((self.dir / "memory.limit_in_bytes").read_text())

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        (self.dir / "memory.max_usage_in_bytes").write_text("0")
        (self.dir / "memory.failcnt").write_text("0")
        # The shell joins the group, then becomes the command.
        cmd = ["sh", "-c", f'echo $$ > {self.dir}/cgroup.procs && exec "$@"', "sh", *argv]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)

    def peak(self) -> tuple[int, int]:
        return int((self.dir / "memory.max_usage_in_bytes").read_text()), int((self.dir / "memory.failcnt").read_text())

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.dir.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def older_copy(ds: Path, keep_blocks: bool) -> Path:
    """ds as a dataset of an earlier version: the same files (hard links)
    and graphferry.json without its page sums (keep_blocks: the disk tier
    checks whole 256 KiB blocks) or without any block or page sums (rows
    read unchecked), and without its declared sum."""
    dst = ds.parent / (ds.name + ("-blocks" if keep_blocks else "-unverified"))
    if not dst.exists():
        dst.mkdir()
        for f in ds.iterdir():
            if f.name != "graphferry.json":
                os.link(f, dst / f.name)
        meta = json.loads((ds / "graphferry.json").read_text())
        blocks = meta.pop("blocks", None)
        if keep_blocks and blocks:
            blocks.pop("pages", None)
            blocks.pop("page_size", None)
            meta["blocks"] = blocks
        meta.pop("declared", None)
        (dst / "graphferry.json").write_text(json.dumps(meta))
    return dst


def drop_cache(ds: Path) -> None:
    """Drops the dataset's pages from the page cache (clean pages: others'
    caches stay)."""
    for f in ds.iterdir():
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def read_ahead(ds: Path) -> int | None:
    """The read-ahead of the device holding ds (a mapping's page faults read
    this much around the faulting page)."""
    dev = os.stat(ds).st_dev
    try:
        link = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}").resolve()
        for d in (link, link.parent):
            if (d / "queue" / "read_ahead_kb").exists():
                return int((d / "queue" / "read_ahead_kb").read_text())
    except OSError:
        pass
    return None


def fio_floor(cg: Cgroup, path: Path, bs: int, depth: int, jobs: int, seconds: int, span: int = 0) -> dict:
    """fio's random-read rate on path; span > 0 reads only its first span
    bytes (a region as large as the disk tier's working set)."""
    fio = shutil.which("fio")
    if fio is None:
        return {"error": "fio is not installed"}
    argv = [
        fio,
        "--name=floor",
        f"--filename={path}",
        *([f"--size={span}"] if span else []),
        "--rw=randread",
        f"--bs={bs}",
        f"--iodepth={depth}",
        f"--numjobs={jobs}",
        "--group_reporting",
        "--direct=1",
        "--ioengine=io_uring",
        f"--runtime={seconds}",
        "--time_based",
        "--readonly",
        "--output-format=json",
    ]
    out = cg.run(argv, timeout=seconds + 60)
    if out.returncode != 0:
        return {"error": out.stderr.strip()[-500:]}
    r = json.loads(out.stdout)["jobs"][0]["read"]
    return {
        "iops": r["iops"],
        "bytes_per_s": r["bw_bytes"],
        "mean_latency_us": r["lat_ns"]["mean"] / 1e3,
        "bs": bs,
        "iodepth": depth,
        "numjobs": jobs,
        "span_bytes": span,
    }


# -- the parent ----------------------------------------------------------------


def parse_size(s: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * units[s[-1].upper()]) if s[-1].upper() in units else int(s)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "disk"))
    ap.add_argument("--dataset", help="a graphferry dataset (default: the disk-small preset in bench/.cache)")
    ap.add_argument("--limit", default="1G", help="the control group's memory limit")
    ap.add_argument(
        "--cache-sizes", default="32M,8M,2M", help="the disk tier's CPU cache sizes (an epoch reads ~15 MB of rows)"
    )
    ap.add_argument("--policies", default="s3fifo,sieve,lru")
    ap.add_argument("--seeds", type=int, default=4096)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--fanouts", default="10,5")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3, help="epochs of the disk tier runs (the first warms the cache)")
    ap.add_argument("--mmap-epochs", type=int, default=1, help="epochs of the mapped runs (slow: minutes each)")
    ap.add_argument("--no-mapped", action="store_true", help="only the disk tier runs and the floor (a repeat)")
    ap.add_argument(
        "--compare-verify",
        action="store_true",
        help="each disk tier run also on copies with block sums only and with no sums (rows read unchecked)",
    )
    ap.add_argument("--fio-seconds", type=int, default=15)
    ap.add_argument("--timeout", type=float, default=900)
    args = ap.parse_args()

    ds = Path(args.dataset) if args.dataset else REPO / "bench" / ".cache" / "disk-small"
    if not (ds / "graphferry.json").exists():
        import graphferry

        t0 = time.perf_counter()
        graphferry.generate("disk-small", ds)
        print(f"generated disk-small in {time.perf_counter() - t0:.1f} s", flush=True)
    limit = parse_size(args.limit)
    base = {
        "dataset": str(ds),
        "seeds": args.seeds,
        "seed": 7,
        "batch_size": args.batch_size,
        "fanouts": [int(x) for x in args.fanouts.split(",")],
        "threads": args.threads,
        "epochs": args.epochs,
    }
    configs = []
    for c in args.cache_sizes.split(","):
        for p in args.policies.split(","):
            disk = dict(base, kind="gf-disk", policy=p, cache_bytes=parse_size(c), name=f"gf-disk/{p}/{c}")
            configs.append(disk)
            if args.compare_verify:  # interleaved: the same load on each
                for keep, kind in ((True, "blocks"), (False, "unverified")):
                    configs.append(dict(disk, dataset=str(older_copy(ds, keep)), name=f"gf-disk-{kind}/{p}/{c}"))
    mapped = dict(base, epochs=args.mmap_epochs)
    configs += (
        []
        if args.no_mapped
        else [
            dict(mapped, kind="gf-mmap", name="gf-mmap"),
            dict(mapped, kind="mmap-index_select", name="mmap-index_select"),
            dict(mapped, kind="mmap-random-index_select", name="mmap-random-index_select"),
        ]
    )

    cg = Cgroup(limit)
    results: dict = {
        "dataset": str(ds),
        "feature_bytes": (ds / "feat.bin").stat().st_size,
        "limit_bytes": cg.limit,
        "cgroup": str(cg.dir),
        "settings": base,
        "machine": {"cpus": os.cpu_count(), "load_avg_at_start": os.getloadavg(), "read_ahead_kb": read_ahead(ds)},
        "runs": {},
    }
    try:
        for cfg in configs:
            drop_cache(ds)
            out = cg.run([sys.executable, __file__, CHILD_FLAG, json.dumps(cfg)], timeout=args.timeout)
            peak, failcnt = cg.peak()
            if out.returncode != 0:
                res = {"error": f"exit {out.returncode}: {out.stderr.strip()[-800:]}"}
            else:
                res = json.loads(out.stdout.strip().splitlines()[-1])
            res.update(cgroup_peak_bytes=peak, cgroup_failcnt=failcnt)
            results["runs"][cfg["name"]] = res
            last = res.get("epochs", [{}])[-1]
            print(f"{cfg['name']}: {last.get('wall_s', res.get('error'))}", flush=True)
        # The floor: at the disk tier's mean request size (rounded to 4 KiB)
        # and queue depth.
        disk_runs = [r for n, r in results["runs"].items() if n.startswith("gf-disk") and "epochs" in r]
        req = [e["bytes_disk_read"] / e["disk_requests"] for r in disk_runs for e in r["epochs"] if e["disk_requests"]]
        bs = max(4096, int(round(sum(req) / len(req) / 4096)) * 4096) if req else 4096
        drop_cache(ds)
        # One reader serves a batch's misses at queue depth 64; the loader
        # may overlap batches: the floor is the faster of one and
        # --threads jobs (the harder goal).
        floors = [fio_floor(cg, ds / "feat.bin", bs, 64, j, args.fio_seconds) for j in sorted({1, args.threads})]
        results["floors"] = floors
        results["floor"] = max(floors, key=lambda f: f.get("iops", 0))
        results["floor"]["cgroup_peak_bytes"] = cg.peak()[0]
        print(f"floor: {results['floor']}", flush=True)
        # A virtual disk whose host caches reads what was read lately
        # faster than the whole file at random: the tier's epochs re-read
        # one working set (about the first epoch's bytes). The floor over a
        # region that large is the stricter one there.
        span = max((r["epochs"][0]["bytes_disk_read"] for r in disk_runs), default=0)
        if span:
            span = -(-span // (1 << 20)) << 20
            drop_cache(ds)
            results["floor_ws"] = fio_floor(cg, ds / "feat.bin", bs, 64, args.threads, args.fio_seconds, span)
            print(f"working-set floor: {results['floor_ws']}", flush=True)
    finally:
        cg.remove()
    results["machine"]["load_avg_at_end"] = os.getloadavg()
    summarize(results)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "disk.json").write_text(json.dumps(results, indent=2))
    (out / "disk.md").write_text(markdown(results))
    plot(results, out / "disk.png")
    print((out / "disk.md").read_text())
    return 0


def summarize(res: dict) -> None:
    """Ratios: today's mapping and the mmap baseline over each run, on the
    first epoch (every run starts cold: the same work) and, where both ran
    it, on the last; each run's last epoch over the floor's time for its
    disk requests."""
    runs = res["runs"]
    floor = res.get("floor", {})
    ok = {n: r for n, r in runs.items() if "epochs" in r}
    for r in ok.values():
        first, last = r["epochs"][0], r["epochs"][-1]
        s = {}
        for key, name in (
            ("gf_mmap", "gf-mmap"),
            ("mmap_index_select", "mmap-index_select"),
            ("mmap_random", "mmap-random-index_select"),
        ):
            other = ok.get(name, {}).get("epochs")
            if other:
                s[f"epoch1_speedup_vs_{key}"] = other[0]["wall_s"] / first["wall_s"]
                if len(other) == len(r["epochs"]):
                    s[f"last_speedup_vs_{key}"] = other[-1]["wall_s"] / last["wall_s"]
        if last["disk_requests"] and floor.get("iops"):
            t = last["disk_requests"] / floor["iops"]
            s["floor_s"] = t
            s["wall_over_floor"] = last["wall_s"] / t
            s["loader_busy_over_floor"] = last["loader_busy_s"] / t
        ws = res.get("floor_ws", {})
        if last["disk_requests"] and ws.get("iops"):
            t = last["disk_requests"] / ws["iops"]
            s["wall_over_ws_floor"] = last["wall_s"] / t
            s["loader_busy_over_ws_floor"] = last["loader_busy_s"] / t
        # Every epoch after the first (warm cache) together: a longer
        # measurement of the same configuration (--epochs), each epoch's
        # start and end included.
        warm = r["epochs"][1:]
        reqs = sum(e["disk_requests"] for e in warm)
        for key, fl in (("floor", floor), ("ws_floor", ws)):
            if reqs and fl.get("iops"):
                s[f"warm_wall_over_{key}"] = sum(e["wall_s"] for e in warm) / (reqs / fl["iops"])
        r["summary"] = s


def markdown(res: dict) -> str:
    gib = 1 << 30
    lines = [
        "# Disk tier: features larger than memory (issue 21)",
        "",
        f"Dataset `{res['dataset']}`: feat.bin {res['feature_bytes'] / gib:.2f} GiB; cgroup v1 memory limit "
        f"{res['limit_bytes'] / gib:.2f} GiB (page cache counted), {res['feature_bytes'] / res['limit_bytes']:.1f}x "
        f"smaller than the features. Settings: {json.dumps(res['settings'])}. Load average at start/end: "
        f"{res['machine']['load_avg_at_start']} / {res['machine']['load_avg_at_end']} on {res['machine']['cpus']} "
        f"CPUs; the device's read_ahead_kb: {res['machine'].get('read_ahead_kb')}.",
        "",
        "Each run starts with the dataset dropped from the page cache; the speedups compare first epochs (all "
        "cold: the same work); cache hit rate, rows and requests are of the last epoch (the first warms the cache).",
        "",
        "| run | epoch 1 s | last epoch s | rows | cache hit rate | disk rows | disk requests | bytes read / row "
        "bytes | major faults | MB read | epoch 1 vs gf-mmap | epoch 1 vs mmap index_select | epoch 1 vs mmap "
        "MADV_RANDOM | wall / floor | "
        "loader busy / floor | "
        "wall / ws floor | loader busy / ws floor | epochs 2+ wall / floor | epochs 2+ wall / ws floor | "
        "cgroup peak MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in res["runs"].items():
        if "epochs" not in r:
            lines.append(f"| {name} | error: {r['error'][:200]} |" + " |" * 18)
            continue
        e0, e = r["epochs"][0], r["epochs"][-1]
        s = r.get("summary", {})
        ratio = f"{e['bytes_disk_read'] / e['bytes_disk']:.2f}" if e["bytes_disk"] else "-"
        hit = f"{e['cache_hit_rate']:.3f}" if e["rows_cache"] + e["rows_disk"] else "-"

        def f(k, s=s):
            return f"{s[k]:.2f}" if k in s else "-"

        lines.append(
            f"| {name} | {e0['wall_s']:.2f} | {e['wall_s']:.2f} | {e['rows']} | {hit} | {e['rows_disk']} | "
            f"{e['disk_requests']} | {ratio} | {e['major_faults']} | {e['blocks_in'] * 512 / 1e6:.1f} | "
            f"{f('epoch1_speedup_vs_gf_mmap')}x | {f('epoch1_speedup_vs_mmap_index_select')}x | "
            f"{f('epoch1_speedup_vs_mmap_random')}x | "
            f"{f('wall_over_floor')} | {f('loader_busy_over_floor')} | "
            f"{f('wall_over_ws_floor')} | {f('loader_busy_over_ws_floor')} | "
            f"{f('warm_wall_over_floor')} | {f('warm_wall_over_ws_floor')} | {r['cgroup_peak_bytes'] / (1 << 20):.0f} |"
        )
    runs = res["runs"]
    trios = [
        (n, n.replace("gf-disk/", "gf-disk-blocks/", 1), n.replace("gf-disk/", "gf-disk-unverified/", 1))
        for n in runs
        if n.startswith("gf-disk/")
    ]
    trios = [t for t in trios if all("epochs" in runs.get(n, {}) for n in t)]
    if trios:
        lines += [
            "",
            "Checked disk reads: each run checking every page read against feat.bin.pages (pages), the same run "
            "on a copy recording only the 256 KiB block sums (blocks: a block read and checked whole the first "
            "time a row in it misses the cache) and on one recording neither (unchecked).",
            "",
            "| run | epoch | pages s | blocks s | unchecked s | pages / unchecked | blocks / unchecked | "
            "pages MB read | blocks MB read | unchecked MB read |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for a, b, c in trios:
            for i, (ea, eb, ec) in enumerate(zip(runs[a]["epochs"], runs[b]["epochs"], runs[c]["epochs"])):
                lines.append(
                    f"| {a} | {i + 1} | {ea['wall_s']:.2f} | {eb['wall_s']:.2f} | {ec['wall_s']:.2f} | "
                    f"{ea['wall_s'] / ec['wall_s']:.2f} | {eb['wall_s'] / ec['wall_s']:.2f} | "
                    f"{ea['bytes_disk_read'] / 1e6:.1f} | {eb['bytes_disk_read'] / 1e6:.1f} | "
                    f"{ec['bytes_disk_read'] / 1e6:.1f} |"
                )
    fl = res.get("floor", {})
    lines += [
        "",
        f"Floor (fio randread, O_DIRECT, io_uring, queue depth {fl.get('iodepth')} x {fl.get('numjobs')} jobs, on "
        "feat.bin, in the same cgroup): ",
    ]
    if "iops" in fl:
        lines[-1] += f"{fl['iops']:.0f} requests/s of {fl['bs']} B ({fl['bytes_per_s'] / 1e6:.1f} MB/s), "
        lines[-1] += f"mean latency {fl['mean_latency_us']:.0f} us."
    else:
        lines[-1] += f"not measured: {fl.get('error')}"
    ws = res.get("floor_ws", {})
    if "iops" in ws:
        lines += [
            "",
            f"Working-set floor (the same, {ws['numjobs']} jobs, over the first {ws['span_bytes'] >> 20} MiB of "
            f"feat.bin: as large as the disk tier's first epoch read): {ws['iops']:.0f} requests/s, mean latency "
            f"{ws['mean_latency_us']:.0f} us.",
        ]
    lines += [
        "",
        "`wall / floor` is the last epoch's time over the time the floor needs for that epoch's disk requests "
        "(sampling included: an upper bound on the disk tier's overhead); `loader busy / floor` puts the feature "
        "stage's busy time over it (the time during which at least one of the loader's gathers runs: the disk "
        "tier gathers one batch ahead). `ws floor`: the same over the working-set floor, the stricter one on a "
        "disk whose host caches recent reads (the tier's epochs re-read one working set; the floor reads the "
        "whole file at random). `epochs 2+`: every epoch after the first together over the floor's time for "
        "their requests (a longer measurement of the same configuration: `--epochs`; each epoch's start and its "
        "last batch, which nothing overlaps, included).",
        "",
    ]
    return "\n".join(lines)


def plot(res: dict, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    names = [n for n, r in res["runs"].items() if "epochs" in r]
    walls = [res["runs"][n]["epochs"][0]["wall_s"] for n in names]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.barh(names, walls)
    ax.set_xscale("log")
    ax.set_xlabel("first epoch, s, log scale (cold; lower is better)")
    gib = 1 << 30
    ax.set_title(f"features {res['feature_bytes'] / gib:.1f} GiB, memory limit {res['limit_bytes'] / gib:.1f} GiB")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == CHILD_FLAG:
        print(json.dumps(child(json.loads(sys.argv[2]))))
        sys.exit(0)
    sys.exit(main())

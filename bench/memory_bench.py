"""What opening a dataset and dropping loaders cost in memory (issue 34).

For each tree given (``--tree LABEL=DIR``: a checkout with its
build/libgraphferry.so and python/; run the baseline's and the change's in
one run, on one machine):

- open: products-like (or ``--dataset``) without its CSC files, so that the
  topology is built from edges.arrow, with ``memory_budget`` 3 GiB: the
  process's resident memory (VmRSS, and RssAnon: what no reclaim can take
  back) before, at its peak during the open (sampled every 20 ms), right
  after and 3 s later, against ``memory_plan``'s topology and node columns
  and the report's "opening: held at most"; and a budget of 0.5 GiB (refused
  up front, or not).
- cgroup: the same open and 20 batches of a Loader in a child cgroup v1
  memory group of 4 GiB (page cache counts; ``--cgroup`` names the parent,
  the group is removed after): exit status 137 is killed for memory.
- drop: ``--rounds`` disk-tier graphs and loaders on the "small" preset
  (generated into ``--tmp``), each taken 3 batches into an epoch and dropped
  without close() and without gc.collect(): the peak and final resident
  memory and the descriptors left open, before and after a collection.

Results: ``--out``/memory.json and memory.md, with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_OPEN = r"""
import json, sys, threading, time
import graphferry
path, budget = sys.argv[1], int(sys.argv[2])
def st():
    d = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon"): d[k] = int(v.split()[0]) << 10
    return d
before = st(); peak = dict(before); stop = []
def watch():
    while not stop:
        for k, v in st().items(): peak[k] = max(peak[k], v)
        time.sleep(0.02)
threading.Thread(target=watch, daemon=True).start()
t0 = time.perf_counter()
try:
    g = graphferry.Graph.open(path, memory_budget=budget)
except graphferry.GraphferryError as e:
    print(json.dumps({"refused": str(e)})); sys.exit(0)
took = time.perf_counter() - t0
after = st(); time.sleep(3); later = st(); stop.append(1)
out = {"open_s": took, "before": before, "peak": peak, "after": after, "later": later, "plan": g.memory_plan}
out["report"] = g.memory_report()
if len(sys.argv) > 3:  # and a few batches, as training would
    lo = graphferry.Loader(g, g.train_idx, [10, 5], batch_size=1024, feature_names=["feat"], label_names=["label"])
    for i, b in enumerate(lo):
        if i == 19: break
    out["batches"] = i + 1
print(json.dumps(out))
"""

_DROP = r"""
import gc, json, os, sys
import psutil, graphferry
path, rounds = sys.argv[1], int(sys.argv[2])
p = psutil.Process()
def fds(): return len(os.listdir("/proc/self/fd"))
start, fd0, peak = p.memory_info().rss, fds(), 0
for r in range(rounds):
    g = graphferry.Graph.open(path, feature_tier="disk", cache_bytes=64 << 20)
    lo = graphferry.Loader(g, g.train_idx, [10, 10], batch_size=1024, shuffle=True, seed=r, feature_names=["feat"])
    it = iter(lo)
    for _ in range(3): b = next(it)
    del g, lo, it, b
    peak = max(peak, p.memory_info().rss)
end, fd1 = p.memory_info().rss, fds()
gc.collect()
print(json.dumps({"rss_start": start, "rss_peak": peak, "rss_end": end, "fds_left": fd1 - fd0,
                  "fds_left_after_gc": fds() - fd0, "rss_after_gc": p.memory_info().rss}))
"""


def _run(tree: str, code: str, *args: str, preexec=None) -> tuple[int, str, str]:
    root = Path(tree)
    env = dict(
        os.environ, GRAPHFERRY_LIB_PATH=str(root / "build" / "libgraphferry.so"), PYTHONPATH=str(root / "python")
    )
    out = subprocess.run(  # noqa: PLW1510 - the status is a result
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, preexec_fn=preexec
    )
    return out.returncode, out.stdout, out.stderr


def _cgroup(parent: str, limit: int):
    """A child memory group of parent limited to limit bytes: its path and a
    preexec that moves the child process into it."""
    path = Path("/sys/fs/cgroup/memory") / parent.strip("/") / f"gf-membench-{os.getpid()}"
    path.mkdir()
    (path / "memory.limit_in_bytes").write_text(str(limit))

    def enter():
        (path / "cgroup.procs").write_text(str(os.getpid()))

    return path, enter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, help="LABEL=DIR of a built checkout")
    ap.add_argument("--dataset", required=True, help="products-like without CSC files")
    ap.add_argument("--tmp", required=True, help="a folder for the small preset")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--cgroup", default=None, help="the parent memory cgroup (default: this process's)")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "memory"))
    a = ap.parse_args()
    import graphferry

    small = Path(a.tmp) / "small"
    if not small.exists():
        graphferry.generate("small", small)
    parent = a.cgroup or next(line.split(":")[2].strip() for line in open("/proc/self/cgroup") if ":memory:" in line)
    results = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}, "runs": {}}
    for spec in a.tree:
        label, lib = spec.split("=", 1)
        r = results["runs"][label] = {}
        rc, out, err = _run(lib, _OPEN, a.dataset, str(3 << 30))
        r["open_3GiB"] = json.loads(out) if rc == 0 else {"rc": rc, "stderr": err[-2000:]}
        rc, out, err = _run(lib, _OPEN, a.dataset, str(1 << 29))
        r["open_0.5GiB"] = json.loads(out) if rc == 0 else {"rc": rc, "stderr": err[-2000:]}
        path, enter = _cgroup(parent, 4 << 30)
        try:
            rc, out, err = _run(lib, _OPEN, a.dataset, str(3 << 30), "loader", preexec=enter)
            peak = int((path / "memory.max_usage_in_bytes").read_text())
        finally:
            time.sleep(0.5)
            path.rmdir()
        r["cgroup_4GiB"] = {"rc": rc, "max_usage": peak, **(json.loads(out) if rc == 0 else {"stderr": err[-2000:]})}
        rc, out, err = _run(lib, _DROP, str(small), str(a.rounds))
        r["drop"] = json.loads(out) if rc == 0 else {"rc": rc, "stderr": err[-2000:]}
        print(label, json.dumps(r, default=str)[:2000], flush=True)
    results["machine"]["load_after"] = os.getloadavg()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "memory.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "memory.md").write_text(_markdown(results, a))
    print((out / "memory.md").read_text())


def _markdown(res: dict, a) -> str:
    mib = lambda b: f"{b / (1 << 20):.0f}"  # noqa: E731
    m = res["machine"]
    lines = [
        "# Memory: opening products-like without CSC files, and dropped loaders (issue 34)",
        "",
        f"{m['cpus']} cores; load average {', '.join(f'{x:.1f}' for x in m['load_before'])} before, "
        f"{', '.join(f'{x:.1f}' for x in m['load_after'])} after (a shared machine: other work ran). "
        f"`python bench/memory_bench.py --tree ... --dataset {Path(a.dataset).name} --rounds {a.rounds}`.",
        "",
        "## Open with memory_budget = 3 GiB (MiB; growth from before the open)",
        "",
        "| lib | open s | peak RSS | peak anon | RSS after 3 s | anon after 3 s | plan: topology + node columns "
        "| plan: resident | report: opening held | budget 0.5 GiB | 4 GiB cgroup: status, max usage |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in res["runs"].items():
        o = r["open_3GiB"]
        if "plan" not in o:
            lines.append(f"| {label} | failed: {o} |")
            continue
        b, p, later, plan = o["before"], o["peak"], o["later"], o["plan"]
        held = next((x.split("at most ")[1].split(" (")[0] for x in o["report"].splitlines() if "opening:" in x), "-")
        small = r["open_0.5GiB"]
        refused = "refused" if "refused" in small else "opened"
        cg = r["cgroup_4GiB"]
        lines.append(
            f"| {label} | {o['open_s']:.1f} | {mib(p['VmRSS'] - b['VmRSS'])} | {mib(p['RssAnon'] - b['RssAnon'])} | "
            f"{mib(later['VmRSS'] - b['VmRSS'])} | {mib(later['RssAnon'] - b['RssAnon'])} | "
            f"{mib(plan['topology_bytes'] + plan['node_column_bytes'])} | "
            f"{mib(plan['topology_bytes'] + plan['node_column_bytes'] + plan['sampling_bytes'])} | "
            f"{held} | {refused} | "
            f"{cg['rc']}{' (killed)' if cg['rc'] == -9 or cg['rc'] == 137 else ''}, {mib(cg['max_usage'])} |"
        )
    lines += [
        "",
        f"## {a.rounds} disk-tier graphs and loaders on the small preset dropped mid-epoch, "
        "no close(), no gc.collect()",
        "",
        "| lib | RSS at start | peak | end | after gc.collect() | fds left | fds left after gc.collect() |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, r in res["runs"].items():
        d = r["drop"]
        if "rss_peak" not in d:
            lines.append(f"| {label} | failed: {d} |")
            continue
        lines.append(
            f"| {label} | {mib(d['rss_start'])} | {mib(d['rss_peak'])} | {mib(d['rss_end'])} | "
            f"{mib(d['rss_after_gc'])} | {d['fds_left']} | {d['fds_left_after_gc']} |"
        )
    lines += [
        "",
        "Descriptors left after a collection are the Go runtime's poller (an epoll and an eventfd, opened once",
        "per process by the first file the engine opens), not the loaders'.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

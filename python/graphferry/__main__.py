"""graphferry's command line: the graphferry command (python -m graphferry runs the same).

Datasets: convert a .npy folder, generate a synthetic graph, add CSC files,
verify checksums, partition for several processes. Bug reports: info.
graphferry COMMAND --help describes each command, with an example.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import textwrap
from collections.abc import Sequence

import graphferry
from graphferry import _info, partition
from graphferry._metafile import read_object
from graphferry._native import backend

# Each command: what runs it (its docstring is the command's description: one
# source), its line in `graphferry --help`, an example.
_COMMANDS = {
    "convert": ("convert_npy", "convert a .npy dataset folder into a graphferry dataset",
                "graphferry convert my_npy_graph/ my_graph/"),
    "generate": ("generate", "write a synthetic R-MAT dataset from a preset", "graphferry generate small /tmp/small"),
    "csc": ("write_csc", "add the CSC files to a dataset (graphs larger than memory)", "graphferry csc /tmp/small"),
    "verify": ("_verify", "check a dataset's files against their recorded sizes and CRC-32C",
               "graphferry verify /tmp/small"),
    "partition": ("partition", "split a dataset into one folder per rank for multi-process training",
                  "graphferry partition /tmp/small /tmp/small-2 --parts 2 --method random"),
    "info": ("_info", "print what a bug report needs", "graphferry info --json > report.json"),
}  # fmt: skip


def _description(name: str) -> str:
    """The docstring of what runs command ``name``, as terminal text: up to
    its Args, reST markup dropped, paragraphs wrapped, lists kept."""
    what = _COMMANDS[name][0]
    doc = inspect.getdoc(getattr(graphferry, what, None) or globals()[what]).split("\nArgs:")[0]
    doc = re.sub(r":\w+:`~?([^`]*)`", r"\1", doc).replace("``", "")
    paragraphs = [p if p.startswith("* ") else textwrap.fill(" ".join(p.split()), 79) for p in doc.split("\n\n")]
    if name == "generate":
        paragraphs.append(
            "presets (size on disk):\n" + "\n".join(f"  {k:16} {v}" for k, v in graphferry.PRESETS.items())
        )
    return "\n\n".join(paragraphs)


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (docs/reference/cli.md shows its help)."""
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="graphferry", description=__doc__, epilog="example:\n  graphferry info", formatter_class=raw
    )
    library = f"library {graphferry.library_version()} at {graphferry.library_path()}"
    parser.add_argument("--version", action="version", version=f"graphferry {graphferry.__version__} ({library})")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    cmd = {
        name: sub.add_parser(name, help=brief, description=_description(name), epilog=f"example:\n  {example}",
                             formatter_class=raw)
        for name, (_, brief, example) in _COMMANDS.items()
    }  # fmt: skip
    cmd["convert"].add_argument("src", help="folder in the .npy layout")
    cmd["generate"].add_argument("preset", choices=list(graphferry.PRESETS), metavar="PRESET", help="a preset above")
    for name in ("convert", "generate", "partition"):
        cmd[name].add_argument("src" if name == "partition" else "dst", help="dataset folder")
    cmd["partition"].add_argument("dst", help="folder to write part-<r>/, partition.json, assignment.npy")
    cmd["generate"].add_argument("--seed", type=int, default=0, help="0 keeps the preset's seed")
    for name in ("convert", "generate", "partition"):
        cmd[name].add_argument(
            "--overwrite", action="store_true", help="write into a used folder, replacing its outputs"
        )
    for name in ("csc", "verify"):
        cmd[name].add_argument("dir", help="graphferry dataset folder")
    part = cmd["partition"]
    part.add_argument("--parts", type=int, required=True, help="number of ranks (>= 1)")
    part.add_argument(
        "--method",
        choices=("metis", "random", "range", "ldg"),
        default="metis",
        help="node assignment: METIS (the default; needs pip install 'graphferry[partition]'), random from "
        "--seed, consecutive id ranges, or ldg (one streaming pass: graphs larger than --memory-limit)",
    )
    part.add_argument("--layout", choices=("dsp", "self-reliant", "hybrid"), default="dsp", help="see above")
    part.add_argument("--hops", type=int, default=2, help="L of the self-reliant layout (default 2)")
    part.add_argument("--seed", type=int, default=0, help="seed of random (and METIS's randomisation)")
    part.add_argument("--quiet", action="store_true", help="no progress bars")
    part.add_argument("--resume", action="store_true", help="go on with a run that was interrupted in DST")
    part.add_argument(
        "--memory-limit", type=int, default=0, metavar="BYTES", help="the memory it may use (0: no bound)"
    )
    cmd["info"].add_argument("--json", action="store_true", help="one JSON object instead of name: value lines")
    cmd["info"].add_argument("--no-gpu", action="store_true", help="do not probe the NVIDIA driver")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "verify":
        return _verify(args.dir)
    if args.command == "partition":
        return _partition(args)
    if args.command == "info":
        facts = _info.collect(probe=not args.no_gpu)
        print(json.dumps(facts, indent=2) if args.json else _info.format_facts(facts))
        if backend.ERROR:  # only this command gets this far with a backend that cannot load
            print(f"graphferry info: BackendError: {backend.ERROR}", file=sys.stderr)
        return 1 if backend.ERROR else 0
    args.dst = args.dir if args.command == "csc" else args.dst
    try:
        if args.command == "convert":
            graphferry.convert_npy(args.src, args.dst, overwrite=args.overwrite)
        elif args.command == "csc":
            graphferry.write_csc(args.dir)
        else:
            graphferry.generate(args.preset, args.dst, seed=args.seed, overwrite=args.overwrite)
    except graphferry.GraphferryError as err:
        print(f"graphferry {args.command}: {err}", file=sys.stderr)
        return 1
    with graphferry.Graph.open(args.dst) as g:
        print(f"wrote {args.dst}: {g.num_nodes} nodes, {g.num_edges} edges, node data {g.node_data_names()}")
    return 0


def _partition(args) -> int:
    """``partition SRC DST``: writes the rank folders, prints the edge cuts."""
    names = ("parts", "method", "layout", "hops", "seed", "quiet", "overwrite", "resume", "memory_limit")
    options = {k: getattr(args, k) for k in names}
    try:
        meta = partition.partition(args.src, args.dst, **options)
    except (graphferry.GraphferryError, ValueError, ImportError, OSError) as err:
        hint = "; METIS needs pip install 'graphferry[partition]' (or --method random)" * isinstance(err, ImportError)
        print(f"graphferry partition: {err}{hint}", file=sys.stderr)
        return 1
    print(f"wrote {args.dst}: {partition.summary(meta)}")
    return 0


def _verify(path: str) -> int:
    """Checks every file's size and CRC-32C against graphferry.json, and that
    the dataset opens; exit status 1 names the bad file."""
    meta_path = os.path.join(path, "graphferry.json")
    try:
        files = read_object(meta_path).get("files") or {}
    except (OSError, ValueError) as err:
        print(f"graphferry verify: {meta_path}: {err}", file=sys.stderr)
        return 1
    if not isinstance(files, dict):
        print(f"graphferry verify: {meta_path}: 'files' must be an object", file=sys.stderr)
        return 1
    try:
        with graphferry.Graph.open(path, verify=True) as g:
            counts = f"{g.num_nodes} nodes, {g.num_edges} edges"
    except (graphferry.GraphferryError, OSError, MemoryError) as err:
        print(f"graphferry verify: {err}", file=sys.stderr)
        return 1
    if not files:
        print(
            f"{path}: carries no checksums (written before graphferry recorded them): "
            f"only sizes and structure were checked; {counts}. Convert or generate it "
            "again to record them."
        )
        return 0
    print(f"{path}: ok: size and CRC-32C of {', '.join(sorted(files))} match; {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

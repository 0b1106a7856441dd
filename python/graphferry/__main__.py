"""graphferry's command line: the graphferry command (python -m graphferry runs the same).

Datasets: convert a .npy folder, generate a synthetic graph, add CSC files,
verify checksums, partition for several processes. Bug reports: info.
graphferry COMMAND --help describes each command, with an example.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Sequence

import graphferry
from graphferry import _info, partition
from graphferry._metafile import read_object

_PARTITION_HELP = """\
Every DST/part-<r>/ is a graphferry dataset over the rank's local nodes (its
owned nodes first, in increasing original id, then the other nodes it holds),
with global_ids.npy (local node -> original node) and global_eids.npy (local
edge -> original edge). Labels are copied for every local node; train/val/test
masks are set on owned nodes only (each seed on exactly one rank, its owner).

layouts:
  dsp           owned nodes with all their in-edges; sources owned elsewhere
                follow as halo nodes (no in-edges). Features of owned nodes
                only, in feat.npy [num_owned, ...]; sampling exchanges the rest.
  self-reliant  owned nodes plus the --hops-hop in-neighbourhood of the owned
                train/val/test seeds, with every in-edge of every node closer
                than --hops to a seed; features of every local node in
                feat.bin (sampling up to --hops hops needs no exchange).
  hybrid        every node and edge on every rank; features of owned nodes
                only, in feat.npy (one feature exchange per batch).

DST/partition.json records method, layout, per-rank counts, every file's size
and CRC-32C, and the edge cut of this method beside range's and random's.
METIS (the default method) needs pymetis and pyarrow:
pip install 'graphferry[partition]'.
"""

# (name, one-line help, description, example): what `graphferry NAME --help` shows.
_COMMANDS = {
    "convert": (
        "convert a .npy dataset folder into a graphferry dataset",
        "Reads SRC in the .npy layout (indptr.npy and indices.npy: the in-neighbour CSR; optional feat.npy, "
        "label.npy, train_idx.npy, val_idx.npy, test_idx.npy; meta.json with name, num_nodes, num_edges, "
        "num_classes) and writes DST, which graphferry.Graph.open reads, with each file's size and CRC-32C.",
        "graphferry convert my_npy_graph/ my_graph/",
    ),
    "generate": (
        "write a synthetic R-MAT dataset from a preset",
        "Writes an R-MAT (Kronecker) power-law graph with random features, learnable labels and a "
        "train/val/test split, reproducible from --seed. Presets (size on disk):\n"
        + "\n".join(f"  {name:16} {what}" for name, what in graphferry.PRESETS.items()),
        "graphferry generate small /tmp/small",
    ),
    "csc": (
        "add the CSC files to a dataset (graphs larger than memory)",
        "Writes the topology of DIR as CSC files: opening it then maps them read-only instead of building "
        "the graph from edges.arrow. Writing them needs the memory of a normal open.",
        "graphferry csc /tmp/small",
    ),
    "verify": (
        "check a dataset's files against their recorded sizes and CRC-32C",
        "Checks every file's size and CRC-32C against graphferry.json, and that the dataset opens; "
        "exit status 1 names the bad file.",
        "graphferry verify /tmp/small",
    ),
    "partition": (
        "split a dataset into one folder per rank for multi-process training",
        _PARTITION_HELP,
        "graphferry partition /tmp/small /tmp/small-2 --parts 2 --method random",
    ),
    "version": (
        "print the package's and the library's versions",
        "Prints the package's version, the loaded library's version and its path.",
        "graphferry version",
    ),
    "info": (
        "print what a bug report needs",
        "Prints the package's and the library's versions, the library's path and build id, the backend "
        "loaded and why, the CPUs, the Python, torch, DGL and PyG versions and whether each imports, "
        "and the GPUs the NVIDIA driver sees (probed in a child process). Exit status 1 when the "
        "backend GRAPHFERRY_BACKEND asks for cannot be loaded (the report says why).",
        "graphferry info --json > report.json",
    ),
}


def _add(sub, name: str, *args) -> argparse.ArgumentParser:
    brief, description, example = _COMMANDS[name]
    # Paragraphs wrapped to the terminal's usual width; indented lines (lists) kept.
    lines = [line if line.startswith(" ") else textwrap.fill(line, 79) for line in description.split("\n")]
    parser = sub.add_parser(
        name,
        help=brief,
        description="\n".join(lines),
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for arg, text in args:
        parser.add_argument(arg, help=text)
    return parser


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (docs/reference/cli.md is generated from it)."""
    parser = argparse.ArgumentParser(
        prog="graphferry",
        description=__doc__,
        epilog="example:\n  graphferry info",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"graphferry {graphferry.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add(sub, "convert", ("src", "folder in the .npy layout"), ("dst", "dataset folder to write (created if missing)"))
    generate = _add(sub, "generate")
    generate.add_argument("preset", choices=list(graphferry.PRESETS), metavar="PRESET", help="one of the presets above")
    generate.add_argument("dst", help="dataset folder to write (created if missing)")
    generate.add_argument("--seed", type=int, default=0, help="0 keeps the preset's seed")
    _add(sub, "csc", ("dir", "graphferry dataset folder"))
    _add(sub, "verify", ("dir", "graphferry dataset folder"))
    part = _add(
        sub,
        "partition",
        ("src", "graphferry dataset folder to partition"),
        ("dst", "folder to write part-<r>/, partition.json, assignment.npy (created if missing)"),
    )
    part.add_argument("--parts", type=int, required=True, help="number of ranks (>= 1)")
    part.add_argument(
        "--method",
        choices=("metis", "random", "range"),
        default="metis",
        help="node assignment: METIS via pymetis (default), random from --seed, or consecutive id ranges",
    )
    part.add_argument(
        "--layout",
        choices=("dsp", "self-reliant", "hybrid"),
        default="dsp",
        help="what each rank's folder holds (see above; default dsp)",
    )
    part.add_argument("--hops", type=int, default=2, help="L of the self-reliant layout (default 2)")
    part.add_argument("--seed", type=int, default=0, help="seed of random (and METIS's randomisation)")
    part.add_argument("--quiet", action="store_true", help="no progress bars")
    _add(sub, "version")
    info = _add(sub, "info")
    info.add_argument("--json", action="store_true", help="one JSON object instead of name: value lines")
    info.add_argument("--no-gpu", action="store_true", help="do not probe the NVIDIA driver")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in ("convert", "generate", "csc"):
        if args.command == "csc":
            args.dst = args.dir
        try:
            if args.command == "convert":
                graphferry.convert_npy(args.src, args.dst)
            elif args.command == "csc":
                graphferry.write_csc(args.dir)
            else:
                graphferry.generate(args.preset, args.dst, seed=args.seed)
        except graphferry.GraphferryError as err:
            print(f"graphferry {args.command}: {err}", file=sys.stderr)
            return 1
        with graphferry.Graph.open(args.dst) as g:
            print(f"wrote {args.dst}: {g.num_nodes} nodes, {g.num_edges} edges, node data {g.node_data_names()}")
        return 0
    if args.command == "verify":
        return _verify(args.dir)
    if args.command == "partition":
        return _partition(args)
    if args.command == "info":
        facts = _info.collect(probe=not args.no_gpu)
        print(json.dumps(facts, indent=2) if args.json else _info.format_facts(facts))
        if _info.backend_error():
            print(f"graphferry info: BackendError: {_info.backend_error()}", file=sys.stderr)
            return 1
        return 0
    print(
        f"graphferry {graphferry.__version__} (library {graphferry.library_version()} at {graphferry.library_path()})"
    )
    return 0


def _partition(args) -> int:
    """``partition SRC DST``: writes the rank folders, prints the edge cuts."""
    try:
        meta = partition.partition(
            args.src,
            args.dst,
            parts=args.parts,
            method=args.method,
            layout=args.layout,
            hops=args.hops,
            seed=args.seed,
            quiet=args.quiet,
        )
    except (graphferry.GraphferryError, ValueError, ImportError, OSError) as err:
        print(f"graphferry partition: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.dst}: {partition.summary(meta)}")
    return 0


def _verify(path: str) -> int:
    """``verify DIR``: 0 and a short report when every recorded checksum
    matches and the dataset opens, 1 and the library's message (naming the
    file) otherwise."""
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

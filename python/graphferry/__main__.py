"""Command line: ``python -m graphferry convert SRC DST``, ``python -m graphferry
generate PRESET DST``, ``python -m graphferry csc DIR``, ``python -m graphferry verify DIR``,
``python -m graphferry partition SRC DST --parts N``, ``python -m graphferry version`` and
``python -m graphferry info`` (what a bug report needs: versions, library, backend, CPUs, GPUs)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

import graphferry
from graphferry import _info, partition
from graphferry._metafile import read_object


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m graphferry", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    convert = sub.add_parser(
        "convert",
        help="convert a .npy dataset directory (indptr.npy, indices.npy, feat.npy, "
        "label.npy, *_idx.npy, meta.json) into a graphferry dataset directory",
    )
    convert.add_argument("src", help="directory in the .npy layout")
    convert.add_argument("dst", help="graphferry dataset directory to write (created if missing)")
    convert.add_argument("--overwrite", action="store_true", help="write into a used folder, replacing its output")
    generate = sub.add_parser(
        "generate",
        help="write a synthetic R-MAT dataset (tiny, small, products-like, papers-like)",
    )
    generate.add_argument("preset", help="tiny, small, products-like, papers-like, disk-small or papers100M-like")
    generate.add_argument("dst", help="graphferry dataset directory to write (created if missing)")
    generate.add_argument("--seed", type=int, default=0, help="0 keeps the preset's seed")
    generate.add_argument("--overwrite", action="store_true", help="write into a used folder, replacing its output")
    csc = sub.add_parser(
        "csc",
        help="add the CSC files to a graphferry dataset directory: opening it then maps the topology "
        "read-only instead of building it from edges.arrow (graphs larger than memory)",
    )
    csc.add_argument("dir", help="graphferry dataset directory")
    verify = sub.add_parser(
        "verify",
        help="check a graphferry dataset directory: every file's size and CRC-32C against "
        "graphferry.json, and that it opens (exit status 1 names the bad file)",
    )
    verify.add_argument("dir", help="graphferry dataset directory")
    part = sub.add_parser(
        "partition",
        help="split a graphferry dataset into one folder per rank (DST/part-<r>/) for multi-process training",
        description=_PARTITION_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    part.add_argument("src", help="graphferry dataset directory to partition")
    part.add_argument("dst", help="directory to write part-<r>/, partition.json, assignment.npy (created if missing)")
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
    part.add_argument("--overwrite", action="store_true", help="write into a used folder, replacing its output")
    sub.add_parser("version", help="print the package and library versions")
    info = sub.add_parser(
        "info",
        help="print what a bug report needs: versions, library path and build id, backend and why, "
        "CPUs, torch/DGL/PyG versions, GPUs the driver sees",
    )
    info.add_argument("--json", action="store_true", help="one JSON object instead of name: value lines")
    info.add_argument("--no-gpu", action="store_true", help="do not probe the NVIDIA driver")
    args = parser.parse_args(argv)
    if args.command in ("convert", "generate", "csc"):
        if args.command == "csc":
            args.dst = args.dir
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
    if args.command == "verify":
        return _verify(graphferry, args.dir)
    if args.command == "partition":
        return _partition(graphferry, args)
    if args.command == "info":
        facts = _info.collect(probe=not args.no_gpu)
        print(json.dumps(facts, indent=2) if args.json else _info.format_facts(facts))
        return 0
    print(
        f"graphferry {graphferry.__version__} (library {graphferry.library_version()} at {graphferry.library_path()})"
    )
    return 0


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
"""


def _partition(graphferry, args) -> int:
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
            overwrite=args.overwrite,
        )
    except (graphferry.GraphferryError, ValueError, ImportError, OSError) as err:
        print(f"graphferry partition: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.dst}: {partition.summary(meta)}")
    return 0


def _verify(graphferry, path: str) -> int:
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

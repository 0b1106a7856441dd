"""Command line: ``python -m graphferry convert SRC DST``, ``python -m graphferry
generate PRESET DST``, ``python -m graphferry verify DIR`` and ``python -m graphferry
version``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


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
    generate = sub.add_parser(
        "generate",
        help="write a synthetic R-MAT dataset (tiny, small, products-like, papers-like)",
    )
    generate.add_argument("preset", help="tiny, small, products-like or papers-like")
    generate.add_argument("dst", help="graphferry dataset directory to write (created if missing)")
    generate.add_argument("--seed", type=int, default=0, help="0 keeps the preset's seed")
    verify = sub.add_parser(
        "verify",
        help="check a graphferry dataset directory: every file's size and CRC-32C against "
        "graphferry.json, and that it opens (exit status 1 names the bad file)",
    )
    verify.add_argument("dir", help="graphferry dataset directory")
    sub.add_parser("version", help="print the package and library versions")
    args = parser.parse_args(argv)

    import graphferry

    if args.command in ("convert", "generate"):
        try:
            if args.command == "convert":
                graphferry.convert_npy(args.src, args.dst)
            else:
                graphferry.generate(args.preset, args.dst, seed=args.seed)
        except graphferry.GraphferryError as err:
            print(f"graphferry {args.command}: {err}", file=sys.stderr)
            return 1
        with graphferry.Graph.open(args.dst) as g:
            print(f"wrote {args.dst}: {g.num_nodes} nodes, {g.num_edges} edges, node data {g.node_data_names()}")
        return 0
    if args.command == "verify":
        return _verify(graphferry, args.dir)
    print(
        f"graphferry {graphferry.__version__} (library {graphferry.library_version()} at {graphferry.library_path()})"
    )
    return 0


def _verify(graphferry, path: str) -> int:
    """``verify DIR``: 0 and a short report when every recorded checksum
    matches and the dataset opens, 1 and the library's message (naming the
    file) otherwise."""
    meta_path = os.path.join(path, "graphferry.json")
    try:
        with open(meta_path, "rb") as f:
            files = json.load(f).get("files") or {}
    except (OSError, ValueError, AttributeError) as err:
        print(f"graphferry verify: {meta_path}: {err}", file=sys.stderr)
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

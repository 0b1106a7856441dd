"""METIS assignments for bench/dspbytes (``go run ./bench/dspbytes`` runs it).

Usage: python metis.py CACHE_DIR PARTS [PARTS ...]

Reads the CSC that dspbytes cached in CACHE_DIR (indptr.npy, indices.npy)
and writes CACHE_DIR/metis-<P>.npy (int64, the part of every node) and
CACHE_DIR/metis-<P>.json (seconds taken, METIS's own edge cut) with
pymetis, the library ``python -m graphferry partition --method metis``
uses. The generated presets are undirected (every edge stored both ways,
no self-loops, no repeated edges), so the in-neighbour CSC is already the
symmetric adjacency METIS wants and is handed over as it is.
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import pymetis


def main(argv):
    cache = Path(argv[1])
    xadj = np.load(cache / "indptr.npy")
    adjncy = np.load(cache / "indices.npy")
    for parts in map(int, argv[2:]):
        t0 = time.perf_counter()
        cut, membership = pymetis.part_graph(parts, pymetis.CSRAdjacency(xadj, adjncy))
        secs = time.perf_counter() - t0
        np.save(cache / f"metis-{parts}.npy", np.asarray(membership, dtype=np.int64))
        info = {"parts": parts, "seconds": secs, "metis_edge_cut": int(cut)}
        (cache / f"metis-{parts}.json").write_text(json.dumps(info))
        print(f"metis: {parts} parts in {secs:.1f} s, cut {cut}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main(sys.argv)

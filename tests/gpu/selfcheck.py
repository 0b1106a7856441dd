"""Compare the CUDA kernels' batches with the CPU engine's on the GPU.

    python tests/gpu/selfcheck.py [--nodes N] [--batches B] [--seed S] [--lib PATH]

Loads libgraphferry_cuda.so with ctypes (no torch, so that compute-sanitizer
sees only graphferry's work) and calls its gfcuda_selfcheck hook: generated
graphs, every scheme the GPU offers, int32 and int64 sources (cuda/selfcheck.go).
Prints the JSON report; exits 1 on any difference or error.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=3000)
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lib", default=str(REPO / "python" / "graphferry" / "lib" / "libgraphferry_cuda.so"))
    args = ap.parse_args()
    lib = ctypes.CDLL(args.lib)
    lib.gfcuda_selfcheck.argtypes = [ctypes.c_int64, ctypes.c_int32, ctypes.c_uint64, ctypes.c_char_p, ctypes.c_size_t]
    buf = ctypes.create_string_buffer(1 << 16)
    rc = lib.gfcuda_selfcheck(args.nodes, args.batches, args.seed, buf, len(buf))
    print(("selfcheck ok: " if rc == 0 else "selfcheck FAILED: ") + buf.value.decode(), flush=True)
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

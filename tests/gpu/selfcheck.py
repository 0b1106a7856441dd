"""Compare the CUDA kernels' batches with the CPU engine's on the GPU, then make the deliberate faults.

    python tests/gpu/selfcheck.py [--nodes N] [--batches B] [--seed S] [--device D] [--lib PATH]

Loads libgraphferry_cuda.so with ctypes (no torch, so that compute-sanitizer
sees only graphferry's work) and calls its hooks: gfcuda_selfcheck
(generated graphs, every scheme the GPU offers, int32 and int64 sources:
cuda/selfcheck.go), then gfcuda_fault for each deliberate fault (a node
outside the graph, caught on the device; a launch the driver refuses), each
of which must be reported, then gfcuda_selfcheck again: the device must still
work. Prints the reports; exits 1 on any difference or error. Run it on a
machine with a GPU only: the library's CUDA binding ends the process when
the driver cannot start (graphferry itself checks first; this script does not).
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
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--lib", default=str(REPO / "python" / "graphferry" / "lib" / "libgraphferry_cuda.so"))
    args = ap.parse_args()
    lib = ctypes.CDLL(args.lib)
    lib.gfcuda_selfcheck.argtypes = [
        ctypes.c_int32,
        ctypes.c_int64,
        ctypes.c_int32,
        ctypes.c_uint64,
        ctypes.c_char_p,
        ctypes.c_size_t,
    ]
    lib.gfcuda_fault.argtypes = [ctypes.c_int32, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    buf = ctypes.create_string_buffer(1 << 16)
    failed = False

    def selfcheck(when: str) -> None:
        nonlocal failed
        rc = lib.gfcuda_selfcheck(args.device, args.nodes, args.batches, args.seed, buf, len(buf))
        print(f"selfcheck {when}: " + ("ok: " if rc == 0 else "FAILED: ") + buf.value.decode(), flush=True)
        failed |= rc != 0

    selfcheck("before the faults")
    for kind in (b"node", b"launch"):
        rc = lib.gfcuda_fault(args.device, kind, buf, len(buf))
        print(f"fault {kind.decode()}: " + ("reported: " if rc == 0 else "FAILED: ") + buf.value.decode(), flush=True)
        failed |= rc != 0
    selfcheck("after the faults")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""graphferry's own check of the GPU (graphferry.cuda_check), for tests/gpu/run.sh.

    GRAPHFERRY_BACKEND=cuda python tests/gpu/check_device.py --real|--fake

Prints the report (device, compute capability, driver, PTX ISA and target,
build id) and exits 1 unless the check passed, the CUDA library's build id
is the loaded library's, and the driver is the real one (--real, on the GPU
machine) or the fake one of cuda/fakedriver (--fake, the dry run).
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--real", action="store_true")
    which.add_argument("--fake", action="store_true")
    args = ap.parse_args()
    import graphferry

    report = graphferry.cuda_check()
    print(json.dumps(report, indent=1), flush=True)
    if report["build_id"] != graphferry.library_build_id():
        print(f"check_device: the report's build id {report['build_id']} is not the library's", file=sys.stderr)
        return 1
    if bool(report["fake_driver"]) != args.fake:
        want = "the fake driver" if args.fake else "the real NVIDIA driver"
        print(f"check_device: expected {want} (LD_LIBRARY_PATH?)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Print a directory holding cuda.h (the CUDA driver API header) for cgo.

Usage: python cuda/tools/cuda_include.py BUILD_DIR

It is the include directory of the nvidia-cuda-runtime-cu12 wheel installed
with torch when that has cuda.h; otherwise the wheel is fetched from the
package index (`pip download --no-deps`) into BUILD_DIR and unpacked there.
No CUDA toolkit or GPU is needed.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import zipfile

WHEEL = "nvidia-cuda-runtime-cu12==12.4.127"


def installed() -> str | None:
    try:
        import nvidia.cuda_runtime  # type: ignore
    except ImportError:
        return None
    for base in nvidia.cuda_runtime.__path__:
        inc = os.path.join(base, "include")
        if os.path.isfile(os.path.join(inc, "cuda.h")):
            return inc
    return None


def fetched(build: str) -> str:
    dest = os.path.join(build, "cuda-runtime-wheel")
    inc = os.path.join(dest, "nvidia", "cuda_runtime", "include")
    if os.path.isfile(os.path.join(inc, "cuda.h")):
        return inc
    os.makedirs(dest, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", dest, WHEEL], check=True)
    wheels = glob.glob(os.path.join(dest, "nvidia_cuda_runtime_cu12-*.whl"))
    if not wheels:
        sys.exit("cuda_include.py: pip download gave no nvidia-cuda-runtime-cu12 wheel")
    with zipfile.ZipFile(wheels[0]) as z:
        for name in z.namelist():
            if name.startswith("nvidia/cuda_runtime/include/"):
                z.extract(name, dest)
    if not os.path.isfile(os.path.join(inc, "cuda.h")):
        sys.exit("cuda_include.py: the wheel has no cuda.h")
    return inc


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(installed() or fetched(sys.argv[1]))


if __name__ == "__main__":
    main()

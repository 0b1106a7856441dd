"""Compile cuda/kernels/all.cu to PTX for compute_70 with NVRTC (no GPU needed).

Usage: python cuda/tools/ptx.py OUT.ptx [--arch compute_70]

NVRTC comes with the nvidia-cuda-nvrtc-cu12 wheel (a torch dependency), found
through the `nvidia` namespace package of the running interpreter, or at
$GRAPHFERRY_NVRTC (a path to libnvrtc.so*). --fmad=false: the kernels round
every floating-point operation as the CPU engine does.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import sys
from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "kernels"


def find_nvrtc() -> str:
    env = os.environ.get("GRAPHFERRY_NVRTC")
    if env:
        return env
    try:
        import nvidia.cuda_nvrtc  # type: ignore
    except ImportError:
        sys.exit("ptx.py: NVRTC not found: install nvidia-cuda-nvrtc-cu12 or set GRAPHFERRY_NVRTC")
    for base in nvidia.cuda_nvrtc.__path__:
        libs = sorted(glob.glob(os.path.join(base, "lib", "libnvrtc.so*")))
        libs = [p for p in libs if "builtins" not in p]
        if libs:
            return libs[0]
    sys.exit("ptx.py: libnvrtc.so not found in the nvidia-cuda-nvrtc package")


def compile_ptx(arch: str) -> bytes:
    nvrtc = ctypes.CDLL(find_nvrtc())
    nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(rc: int, what: str) -> None:
        if rc != 0:
            sys.exit(f"ptx.py: {what}: {nvrtc.nvrtcGetErrorString(rc).decode()}")

    src = (KERNELS / "all.cu").read_bytes()
    prog = ctypes.c_void_p()
    check(nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src, b"all.cu", 0, None, None), "nvrtcCreateProgram")
    opts = [f"--gpu-architecture={arch}".encode(), b"--fmad=false", b"-std=c++17", f"-I{KERNELS}".encode()]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    if log.value.strip():
        sys.stderr.write(log.value.decode(errors="replace") + "\n")
    check(rc, "compiling cuda/kernels/all.cu")
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    check(nvrtc.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return ptx.value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--arch", default="compute_70")
    args = ap.parse_args()
    ptx = compile_ptx(args.arch)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(ptx)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()

"""Builds the Go engine into the package while installing it.

`pip install ./python` (or `pip install -e ./python`) runs `build_go`, a
sub-command of `build`, which runs

    capi/build.sh <pkg>/graphferry/lib/libgraphferry.so

(go build -buildmode=c-shared ./capi with the checkout's source id compiled in)

in the repository root (the parent of python/). <pkg> is the build directory
for a wheel and the source tree for an editable install. The library is not a
Python extension module, but the distribution says it has ext modules so that
the wheel is platform-specific (py3-none-<platform>).

Environment: GRAPHFERRY_GO names the go binary (default: `go` on PATH, then
/usr/local/go/bin/go); GRAPHFERRY_GOFLAGS adds flags to `go build`;
GRAPHFERRY_SOURCE_ROOT overrides the repository root. In an sdist
(`make sdist`) the Go sources sit in gosrc/ beside this file and are the
root. GRAPHFERRY_PREBUILT names a folder holding libgraphferry.so (and
libgraphferry_cuda.so when built) to package instead of building them: `make
wheel` passes build/, which `make lib lib-cuda` filled.

A wheel (not an editable install) also carries the C header
(graphferry/include/graphferry.h, dlpack.h, graphferry-valgrind.supp), so
that C programs can build against the library inside it, and the small
datasets of graphferry/data/ (in a checkout a link to examples/data/: Cora),
which zip compresses (15 MB installed, 0.14 MB in the wheel). Its libraries
are stripped (`strip`: no debug information or symbol table; the exported
functions stay), as go build -ldflags='-s -w' would.

It also builds lib/libgraphferry_cuda.so (the engine with the CUDA backend,
cuda/tools/build.sh: no GPU needed, but NVRTC from torch's
nvidia-cuda-nvrtc-cu12 in the building interpreter, hence
--no-build-isolation) when it can; graphferry loads it only when asked
(GRAPHFERRY_BACKEND=cuda, graphferry/_native/backend.py). GRAPHFERRY_BUILD_CUDA=0 skips it, =1 makes a
failure to build it an error (default: a warning, which pip shows only with
-v; so the reason is also written to lib/libgraphferry_cuda.missing, which
`graphferry info` and GRAPHFERRY_BACKEND=cuda's error repeat).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Command, setup
from setuptools.command.build import build
from setuptools.dist import Distribution

try:  # setuptools >= 70.1
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - older setuptools
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # no wheel package: keep the default command
        bdist_wheel = None

HERE = Path(__file__).resolve().parent
LIB_REL = Path("graphferry") / "lib" / "libgraphferry.so"
DATA = HERE / "graphferry" / "data"  # a checkout's link to examples/data, an sdist's copy
CUDA_MISSING = "libgraphferry_cuda.missing"  # graphferry/_native/backend.py reads it


HEADERS = ("graphferry.h", "dlpack.h", "graphferry-valgrind.supp")
GO_NEEDED = (
    "graphferry: installing from source builds libgraphferry.so with the Go toolchain (go 1.26 or newer, "
    "https://go.dev/dl/ or `conda install -c conda-forge go`; Debian's and Ubuntu's golang-go packages are "
    "older) and a C compiler (gcc or clang); {why}. Install Go and put `go` on PATH or set GRAPHFERRY_GO to "
    "the go binary. Or install a prebuilt wheel, which needs neither (Linux x86_64, glibc 2.17 or newer): "
    "pip install --only-binary=graphferry graphferry"
)


def _is_root(root: Path) -> bool:
    return (root / "go.mod").is_file() and (root / "capi").is_dir()


def _repo_root() -> Path:
    given = os.environ.get("GRAPHFERRY_SOURCE_ROOT")
    candidates = [Path(given)] if given else [HERE.parent, HERE / "gosrc"]  # a checkout, an sdist
    for root in candidates:
        if _is_root(root):
            return root.resolve()
    raise SystemExit(
        f"graphferry: cannot build libgraphferry.so: none of {', '.join(map(str, candidates))} has go.mod and capi/ "
        "(install from a checkout of the repository or from graphferry's sdist, or set GRAPHFERRY_SOURCE_ROOT)"
    )


def _go() -> str:
    given = os.environ.get("GRAPHFERRY_GO")
    if given:
        found = shutil.which(given)
        if not found:
            raise SystemExit(GO_NEEDED.format(why=f"GRAPHFERRY_GO={given} is not an executable"))
        return found
    go = shutil.which("go")
    if not go and Path("/usr/local/go/bin/go").is_file():
        go = "/usr/local/go/bin/go"
    if not go:
        raise SystemExit(GO_NEEDED.format(why="`go` is not on PATH (nor at /usr/local/go/bin/go)"))
    return go


class build_go(Command):
    """Builds libgraphferry.so with `go build -buildmode=c-shared`."""

    description = "build the graphferry Go engine as a C shared library"
    user_options = []

    def initialize_options(self) -> None:
        self.build_lib = None
        self.editable_mode = False

    def finalize_options(self) -> None:
        self.set_undefined_options("build", ("build_lib", "build_lib"))

    def _target(self) -> Path:
        if self.editable_mode:
            return HERE / LIB_REL
        # Absolute: go build and build.sh run in the repository root, not here.
        return (Path(self.build_lib) / LIB_REL).resolve()

    def run(self) -> None:
        target = self._target()
        target.parent.mkdir(parents=True, exist_ok=True)
        if not self.editable_mode:
            self._copy_shipped(target.parent.parent)
        prebuilt = os.environ.get("GRAPHFERRY_PREBUILT")
        if prebuilt:
            self._copy_prebuilt(Path(prebuilt), target)
        else:
            # capi/build.sh: go build -buildmode=c-shared with the source id.
            cmd = ["bash", "capi/build.sh", str(target)]
            cmd += shlex.split(os.environ.get("GRAPHFERRY_GOFLAGS", ""))
            env = dict(os.environ, GO=_go())
            self.announce("running " + " ".join(shlex.quote(c) for c in cmd), level=2)
            subprocess.run(cmd, cwd=_repo_root(), env=env, check=True)
            self._build_cuda(target.with_name("libgraphferry_cuda.so"))
        if not self.editable_mode:
            self._strip(target.parent)

    def _copy_shipped(self, package: Path) -> None:
        """The C header into include/, the shipped datasets into data/."""
        src = _repo_root() / "include"
        (package / "include").mkdir(parents=True, exist_ok=True)
        for name in HEADERS:
            shutil.copyfile(src / name, package / "include" / name)
        if DATA.is_dir():
            shutil.copytree(DATA, package / "data", dirs_exist_ok=True)

    def _strip(self, libdir: Path) -> None:
        """Strips the packaged libraries (debug information and symbol table;
        the dynamic symbols, which the loader and the C API use, stay)."""
        strip = shutil.which(os.environ.get("STRIP", "strip"))
        libs = sorted(libdir.glob("*.so"))
        if not strip:
            self.warn(f"graphferry: no `strip` on PATH: {', '.join(p.name for p in libs)} keep their debug information")
            return
        for lib in libs:
            subprocess.run([strip, "--strip-all", str(lib)], check=True)

    def _copy_prebuilt(self, src: Path, target: Path) -> None:
        """Packages the libraries `make lib lib-cuda` built into ``src``."""
        if not (src / target.name).is_file():
            raise SystemExit(f"graphferry: GRAPHFERRY_PREBUILT={src} holds no {target.name} (run make lib)")
        for name in (target.name, "libgraphferry_cuda.so"):
            if (src / name).is_file():
                self.announce(f"packaging {src / name}", level=2)
                shutil.copyfile(src / name, target.with_name(name))
            elif os.environ.get("GRAPHFERRY_BUILD_CUDA") == "1":
                raise SystemExit(f"graphferry: GRAPHFERRY_PREBUILT={src} holds no {name} (run make lib-cuda)")

    def _build_cuda(self, target: Path) -> None:
        mode = os.environ.get("GRAPHFERRY_BUILD_CUDA", "")
        missing = target.with_name(CUDA_MISSING)
        missing.unlink(missing_ok=True)
        if mode == "0":
            missing.write_text("GRAPHFERRY_BUILD_CUDA=0 was set when graphferry was built\n")
            return
        cmd = ["bash", "cuda/tools/build.sh", str(target)]
        env = dict(os.environ, PYTHON=sys.executable, GO=_go())
        proc = subprocess.run(
            cmd, cwd=_repo_root(), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if proc.returncode == 0:
            return
        tail = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
        why = f"cuda/tools/build.sh failed with status {proc.returncode}: {tail}"
        if mode == "1":
            raise SystemExit(f"graphferry: building libgraphferry_cuda.so failed: {why}\n{proc.stdout[-3000:]}")
        missing.write_text(why + "\n")
        bar = "*" * 78
        self.warn(
            f"\n{bar}\ngraphferry: libgraphferry_cuda.so NOT built, only the CPU library is installed:\n  {why}\n"
            "It needs NVRTC from torch's CUDA wheels in the building interpreter: install torch first, then\n"
            "  pip install --no-build-isolation graphferry-<version>.tar.gz\n"
            f"(GRAPHFERRY_BUILD_CUDA=1 makes this an error, =0 silences it)\n{bar}"
        )

    def get_outputs(self) -> list[str]:
        if self.editable_mode:
            return []
        target = self._target()
        cuda = target.with_name("libgraphferry_cuda.so")
        package = target.parent.parent
        shipped = [package / "include" / name for name in HEADERS]
        shipped += sorted(p for p in (package / "data").rglob("*") if p.is_file())
        shipped += [p for p in (cuda, target.with_name(CUDA_MISSING)) if p.is_file()]
        return [str(target)] + [str(p) for p in shipped]

    def get_output_mapping(self) -> dict[str, str]:
        return {}


class build_with_go(build):
    sub_commands = build.sub_commands + [("build_go", None)]


cmdclass = {"build": build_with_go, "build_go": build_go}

if bdist_wheel is not None:

    class bdist_wheel_platform(bdist_wheel):
        """Platform wheel (the .so is native) that does not depend on the
        Python ABI (it is loaded with ctypes): py3-none-<platform>."""

        def finalize_options(self) -> None:
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self) -> tuple[str, str, str]:
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = bdist_wheel_platform


class BinaryDistribution(Distribution):
    def has_ext_modules(self) -> bool:
        return True


setup(
    distclass=BinaryDistribution,
    cmdclass=cmdclass,
)

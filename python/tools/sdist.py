"""Builds graphferry's source distribution: the Python package and, in gosrc/,
the Go sources that python/setup.py builds libgraphferry.so from when the
sdist is installed (so installing it needs Go 1.26 and a C compiler, and
says so clearly when Go is missing: setup.py's GO_NEEDED).

The sdist's tree is staged in a fresh folder: python/'s pyproject.toml,
setup.py, README.md and graphferry/ (without its built lib/), and gosrc/ with
the tracked files of engine/, capi/, cuda/, include/, go.mod and go.sum
(git ls-files; every file of those folders but build products where there is
no git). setuptools' own build_sdist then packs it.

    python python/tools/sdist.py OUTDIR       (make sdist: OUTDIR = dist)

Standard library and setuptools only.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GO_PATHS = ("engine", "capi", "cuda", "include", "go.mod", "go.sum")
PYTHON_FILES = ("pyproject.toml", "setup.py", "README.md", "LICENSE")
MANIFEST = """\
# The Go sources setup.py builds libgraphferry.so from (python/tools/sdist.py).
graft gosrc
graft graphferry/data
prune graphferry/lib
global-exclude __pycache__ *.py[cod] *.so
"""
BUILT = (".so", ".ptx", ".test", ".o")


def go_files(root: Path = ROOT) -> list[str]:
    """The Go sources to ship, relative to ``root``."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--", *GO_PATHS],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for p in GO_PATHS:
            path = root / p
            found = [path] if path.is_file() else sorted(path.rglob("*"))
            files += [str(f.relative_to(root)) for f in found if f.is_file()]
    # capi/graphferry.map.o is a source (a linker version script's object), not a product.
    return [f for f in files if not f.endswith(BUILT) or f.endswith(".map.o")]


def stage(dst: Path, root: Path = ROOT) -> Path:
    """Writes the sdist's tree into ``dst``; returns it."""
    py = root / "python"
    for name in PYTHON_FILES:
        shutil.copy2(py / name, dst / name)
    shutil.copytree(
        py / "graphferry", dst / "graphferry", ignore=shutil.ignore_patterns("lib", "include", "__pycache__")
    )
    for rel in go_files(root):
        target = dst / "gosrc" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    (dst / "MANIFEST.in").write_text(MANIFEST)
    return dst


def build(outdir: Path) -> Path:
    """Stages and packs the sdist into ``outdir``; returns its path."""
    outdir = outdir.resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="graphferry-sdist-") as tmp:
        src = stage(Path(tmp))
        code = f"from setuptools import build_meta; print(build_meta.build_sdist({str(outdir)!r}))"
        proc = subprocess.run([sys.executable, "-c", code], cwd=src, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"sdist: setuptools failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        return outdir / proc.stdout.strip().splitlines()[-1]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print(build(Path(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Installing the package prints no setuptools warnings (they used to scroll past on every
`make demo` and `make test`): the editable wheel `pip install -e ./python` builds, and the
regular wheel, are built here through setuptools' PEP 517/660 hooks, with a stand-in for
`go build` (the library itself is not what is tested)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytest.importorskip("setuptools")
pytest.importorskip("wheel")

FAKE_GO = """#!/bin/sh
# stands in for `go build ... -o OUT ./capi`: writes OUT
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then shift; echo fake > "$1"; fi
  shift
done
"""


@pytest.fixture
def source(tmp_path):
    """A copy of python/ beside what setup.py checks for (go.mod, capi/) and runs
    (capi/build.sh, which hashes the source folders with capi/source_id.sh)."""
    root = tmp_path / "repo"
    shutil.copytree(
        REPO / "python", root / "python", ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "lib")
    )  # as cloned
    for name in ("go.mod", "go.sum"):
        shutil.copy(REPO / name, root / name)
    for folder in ("capi", "engine", "cuda", "include"):
        (root / folder).mkdir()
    for script in ("build.sh", "source_id.sh"):
        shutil.copy(REPO / "capi" / script, root / "capi" / script)
    for header in ("graphferry.h", "dlpack.h", "graphferry-valgrind.supp"):  # a wheel carries them
        shutil.copy(REPO / "include" / header, root / "include" / header)
    go = tmp_path / "go"
    go.write_text(FAKE_GO)
    go.chmod(0o755)
    return root, go


@pytest.mark.parametrize("hook", ["build_editable", "build_wheel"])
def test_build_prints_no_warnings(source, tmp_path, hook):
    root, go = source
    out = tmp_path / "dist"
    out.mkdir()
    code = textwrap.dedent(f"""
        import warnings
        warnings.simplefilter("always")
        from setuptools import build_meta
        print(build_meta.{hook}({str(out)!r}))
    """)
    env = dict(os.environ, GRAPHFERRY_GO=str(go), GRAPHFERRY_BUILD_CUDA="0")  # no CUDA library here
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root / "python", env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Warning" not in proc.stderr, proc.stderr[-4000:]
    (wheel,) = out.glob("*.whl")
    if hook == "build_wheel":
        names = zipfile.ZipFile(wheel).namelist()
        assert "graphferry/lib/libgraphferry.so" in names
        # Every module of every subpackage of python/graphferry, and nothing of python/tools.
        package = REPO / "python" / "graphferry"
        for module in package.rglob("*.py"):
            assert f"graphferry/{module.relative_to(package).as_posix()}" in names, module
        assert not any(n.startswith("tools/") for n in names), names

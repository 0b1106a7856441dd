"""One version: the header's GF_VERSION_* (the source), GF_VERSION_STRING,
the package's __version__ (also the wheel's), the loaded library's
gf_version(), CHANGELOG.md's first heading, and a previous release's header
kept for the ABI test (python/tools/version.py)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphferry

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "python" / "tools" / "version.py"


def _tool(root: Path | None = None):
    spec = importlib.util.spec_from_file_location("gf_version_tool", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if root is not None:
        mod.HEADER = root / "include" / "graphferry.h"
        mod.PACKAGE = root / "python" / "graphferry" / "_version.py"
        mod.CHANGELOG = root / "CHANGELOG.md"
        mod.ABI_DIR = root / "tests" / "c" / "abi"
    return mod


def test_every_place_states_one_version():
    proc = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    version = proc.stdout.strip()
    assert graphferry.__version__ == version
    assert graphferry.library_version() == version  # gf_version(), compiled from the header


@pytest.fixture
def tree(tmp_path):
    for rel in ("include/graphferry.h", "python/graphferry/_version.py", "CHANGELOG.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    shutil.copytree(REPO / "tests" / "c" / "abi", tmp_path / "tests" / "c" / "abi")
    return tmp_path


def test_check_names_each_disagreement(tree):
    tool = _tool(tree)
    assert tool.problems() == []
    current = tool.version()
    pkg = tree / "python" / "graphferry" / "_version.py"
    pkg.write_text(pkg.read_text().replace(current, "9.9.9"))
    log = tree / "CHANGELOG.md"
    log.write_text(log.read_text().replace(f"## {current}", "## 0.0.1", 1))
    found = tool.problems()
    assert len(found) == 2, found
    assert "_version.py: __version__ is '9.9.9'" in found[0] and "CHANGELOG.md" in found[1], found


def test_set_bumps_header_and_package_together(tree):
    tool = _tool(tree)
    major = tool.version().split(".")[0]
    tool.set_version(f"{major}.99.1")
    text = tool.HEADER.read_text()
    assert tool.version() == f"{major}.99.1" and f'#define GF_VERSION_STRING "{major}.99.1"' in text
    assert f'__version__ = "{major}.99.1"' in tool.PACKAGE.read_text()
    # Only the changelog's heading is left to write.
    assert [p for p in tool.problems() if "CHANGELOG" not in p] == []
    # A new major version leaves the kept header of another major: the ABI test must move on.
    tool.set_version(f"{int(major) + 1}.0.0")
    assert any("same major version" in p for p in tool.problems())


def test_previous_release_header_is_as_released():
    """tests/c/abi/<version>/ holds the header of that release verbatim
    (SOURCE names the commit); checked against git where history is at hand."""
    tool = _tool()
    for d in (REPO / "tests" / "c" / "abi").iterdir():
        if not d.is_dir():
            continue
        commit = (d / "SOURCE").read_text().split("include/ of commit", 1)[1].split()[0]
        for name in ("graphferry.h", "dlpack.h"):
            proc = subprocess.run(
                ["git", "-C", str(REPO), "show", f"{commit}:include/{name}"], capture_output=True, timeout=60
            )
            if proc.returncode != 0:
                pytest.skip(f"no git history here ({proc.stderr.decode().strip()[:200]})")
            assert proc.stdout == (d / name).read_bytes(), f"{d / name} differs from {commit}"
        assert tool.header_version((d / "graphferry.h").read_text()) == d.name

"""Installing the package prints no setuptools warnings (they used to scroll past on every
`make demo` and `make test`): the editable wheel `pip install -e ./python` builds, and the
regular wheel, are built here through setuptools' PEP 517/660 hooks, with a stand-in for
`go build` (the library itself is not what is tested). Also what a package index and a
new user read: the license and metadata, the extras' pins against the compatibility
table, the one address, the presets against the engine's, the environment variables
against their page, and the library's glibc symbol versions (manylinux_2_28 or older)."""

from __future__ import annotations

import os
import re
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
    # No CUDA library here; `true` stands in for strip (the stand-in library is no ELF file).
    env = dict(os.environ, GRAPHFERRY_GO=str(go), GRAPHFERRY_BUILD_CUDA="0", STRIP="true")
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
        # The license and the shipped dataset (examples/data/cora, through python/graphferry/data).
        assert "graphferry-0.3.0.dist-info/licenses/LICENSE" in names or any(
            n.endswith(".dist-info/licenses/LICENSE") for n in names
        ), names
        assert "graphferry/data/cora/graphferry.json" in names and "graphferry/data/cora/feat.bin" in names
        missing = zipfile.ZipFile(wheel).read("graphferry/lib/libgraphferry_cuda.missing").decode()
        assert missing == "GRAPHFERRY_BUILD_CUDA=0 was set when graphferry was built\n"  # graphferry info says so
        meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert "License-Expression: Apache-2.0" in meta and "Project-URL: Source, " in meta, meta[:2000]


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11, as the project's environment
    return tomllib.loads((REPO / "python" / "pyproject.toml").read_text())


def test_license_is_apache_2():
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert (REPO / "python" / "LICENSE").resolve() == (REPO / "LICENSE").resolve()  # one file, linked
    project = _pyproject()["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]


def test_extras_match_the_compatibility_table():
    """The [dgl] row of docs/compatibility.md states the versions the [dgl] extra pins."""
    extras = _pyproject()["project"]["optional-dependencies"]
    pins = dict(re.match(r"([\w-]+)==(.+)", r).groups() for r in extras["dgl"] if "==" in r)
    assert pins["dgl"] == "2.1.0" and pins["torch"] and pins["torchdata"]
    table = (REPO / "docs" / "compatibility.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith('| `pip install "graphferry[dgl]"`'))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == pins["torch"] and cells[3] == pins["dgl"], row
    for name, path in (("requirements.txt", "python/requirements.txt"), ("latest", "python/requirements-latest.txt")):
        row = next(line for line in table.splitlines() if line.startswith("| `python/requirements") and name in line)
        cells = [c.strip() for c in row.strip("|").split("|")]
        text = (REPO / path).read_text()
        for cell, dist in ((cells[2], "torch"), (cells[3], "dgl"), (cells[4], "torch_geometric|torch-geometric")):
            found = re.search(rf"^(?:{dist})==(\S+)$", text, re.M)
            assert (found.group(1) if found else "—") == cell, (path, dist, row)


def test_one_address():
    """Every github.com / readthedocs.io address the pages give is one of pyproject's URLs."""
    urls = set(_pyproject()["project"]["urls"].values())
    pages = [REPO / "README.md", REPO / "python" / "README.md", *(REPO / "docs").rglob("*.md")]
    address = re.compile(r"https://(?:github\.com/graphferry|graphferry\.readthedocs\.io)[^\s)`'\"]*")
    for page in pages:
        for url in address.findall(page.read_text()):
            assert url.rstrip(".,") in urls, f"{page}: {url} is not in python/pyproject.toml's [project.urls]"


def test_presets_are_the_engines():
    import graphferry

    source = (REPO / "engine" / "gen" / "preset.go").read_text()
    body = source[source.index("func Presets() map[string]Preset {") :].split("\n}\n", 1)[0]
    engine = re.findall(r'^\t\t"([\w-]+)":', body, re.M)
    assert sorted(graphferry.PRESETS) == sorted(engine)


def test_environment_page_lists_every_variable():
    """Every GRAPHFERRY_ variable read by the package, the engine, the C API, the
    CUDA backend and the build is on docs/reference/environment.md."""
    read = set()
    for folder, suffixes in (("python", (".py",)), ("engine", (".go",)), ("capi", (".go", ".c")),
                             ("cuda", (".go", ".py", ".sh")), ("bench", (".py", ".go"))):  # fmt: skip
        for path in (REPO / folder).rglob("*"):
            if path.suffix in suffixes and "build" not in path.parts:
                read |= set(re.findall(r"GRAPHFERRY_[A-Z0-9_]+", path.read_text(errors="replace")))
    read -= {"GRAPHFERRY_H", "GRAPHFERRY_SHIM_H", "GRAPHFERRY_GUARD_H"}  # include guards
    page = (REPO / "docs" / "reference" / "environment.md").read_text()
    missing = sorted(v for v in read if f"`{v}`" not in page)
    assert not missing, f"read but not on docs/reference/environment.md: {missing}"


def test_library_needs_nothing_newer_than_glibc_2_28():
    """The libraries' libc symbol versions allow manylinux_2_28 (torch's): the pthread
    functions and dlsym are bound to their GLIBC_2.2.5 versions (capi/glibc_compat_linux_amd64.c)."""
    import graphferry

    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.fail("objdump (binutils) is needed to read the library's symbol versions")
    lib = Path(graphferry.library_path())
    for path in [lib, lib.with_name("libgraphferry_cuda.so")]:
        if not path.is_file():
            continue
        out = subprocess.run([objdump, "-T", str(path)], capture_output=True, text=True, check=True).stdout
        versions = {tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_(\d+(?:\.\d+)+)", out)}
        newer = sorted(v for v in versions if v > (2, 28))
        assert versions and not newer, f"{path} needs GLIBC {newer}"


def test_build_without_the_cuda_library_says_so_and_records_why(source, tmp_path):
    """An sdist built where the CUDA library cannot be (here: no CUDA sources)
    installs the CPU library, warns in a banner, and records why beside the
    libraries, which graphferry info and GRAPHFERRY_BACKEND=cuda repeat (pip
    shows a build's output only with -v)."""
    root, go = source
    out = tmp_path / "dist"
    out.mkdir()
    code = f"from setuptools import build_meta; print(build_meta.build_wheel({str(out)!r}))"
    env = {k: v for k, v in os.environ.items() if k != "GRAPHFERRY_BUILD_CUDA"}
    env.update(GRAPHFERRY_GO=str(go), STRIP="true")
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root / "python", env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "libgraphferry_cuda.so NOT built, only the CPU library is installed" in proc.stderr, proc.stderr[-4000:]
    (wheel,) = out.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "graphferry/lib/libgraphferry.so" in names and "graphferry/lib/libgraphferry_cuda.so" not in names
    why = zipfile.ZipFile(wheel).read("graphferry/lib/libgraphferry_cuda.missing").decode()
    assert why.startswith("cuda/tools/build.sh failed with status "), why

"""The wheel `make wheel` built (dist/), as a user gets it: installed into a
fresh virtual environment where no Go toolchain is on PATH and the checkout's
python/ is not importable, it trains the demo (examples/train_dgl.py on the
shipped Cora), the `graphferry` command answers, every example of the
documentation runs from an empty folder (tests/python/docsnippets.py), and a
C program (tests/c/test_capi.c) builds against the header inside the wheel
and runs on the library inside it. The wheel's libraries are stripped and
its tag is manylinux_2_28 or older (torch's). The sdist (`make sdist`)
refuses to install without Go, saying what is needed.

torch, DGL and numpy come from the environment running this test (.venv):
its site-packages is appended to the fresh environment's path (a .pth line,
so nothing of it is installed twice and its editable graphferry is not
seen), and the wheel goes in with --no-deps.

    make test-wheel       (make wheel sdist, then pytest tests/wheel)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("GRAPHFERRY_DIST", REPO / "dist"))
VERSION = re.search(r'^__version__ = "([^"]+)"', (REPO / "python/graphferry/_version.py").read_text(), re.M).group(1)
CLEAN_PATH = "/usr/bin:/bin"  # where cc is; no go


def _one(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    if len(found) != 1:
        pytest.fail(f"expected one {pattern} in {DIST}, found {[p.name for p in found]}: run make wheel sdist")
    return found[0]


@pytest.fixture(scope="module")
def wheel() -> Path:
    return _one(f"graphferry-{VERSION}-py3-none-manylinux_*_x86_64.whl")


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel):
    """A fresh venv holding the wheel, seeing this environment's packages
    (test_fresh.py installs the extras from the package index instead)."""
    root = tmp_path_factory.mktemp("wheelenv")
    env_dir = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=300,
    )
    site = Path(
        subprocess.check_output(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    (site / "zz_outer_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GRAPHFERRY_", "GO", "PYTHON", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "CGO_"))
    }
    env["PATH"] = f"{env_dir / 'bin'}:{CLEAN_PATH}"
    assert shutil.which("go", path=env["PATH"]) is None
    return py, site, env, root


def _run(cmd, env, cwd, timeout=600):
    proc = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{cmd}: exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for name in (
        "graphferry/lib/libgraphferry.so",
        "graphferry/lib/libgraphferry_cuda.so",
        "graphferry/include/graphferry.h",
        "graphferry/include/dlpack.h",
        "graphferry/include/graphferry-valgrind.supp",
        "graphferry/__main__.py",
    ):
        assert name in names, name
    header = zipfile.ZipFile(wheel).read("graphferry/include/graphferry.h")
    assert header == (REPO / "include" / "graphferry.h").read_bytes()
    assert f'#define GF_VERSION_STRING "{VERSION}"'.encode() in header
    meta = zipfile.ZipFile(wheel).read(f"graphferry-{VERSION}.dist-info/WHEEL").decode()
    assert "Root-Is-Purelib: false" in meta and f"Tag: py3-none-{wheel.name.split('-py3-none-')[1][:-4]}" in meta
    assert f"graphferry-{VERSION}.dist-info/licenses/LICENSE" in names
    assert "graphferry/data/cora/graphferry.json" in names
    points = zipfile.ZipFile(wheel).read(f"graphferry-{VERSION}.dist-info/entry_points.txt").decode()
    assert "graphferry = graphferry.__main__:main" in points


def test_wheel_is_manylinux_2_28_or_older_and_stripped(wheel, tmp_path):
    glibc = tuple(int(x) for x in re.search(r"manylinux_(\d+)_(\d+)_x86_64", wheel.name).groups())
    assert glibc <= (2, 28), wheel.name
    from elftools.elf.elffile import ELFFile  # pyelftools: auditwheel's dependency

    for name in ("libgraphferry.so", "libgraphferry_cuda.so"):
        path = tmp_path / name
        path.write_bytes(zipfile.ZipFile(wheel).read(f"graphferry/lib/{name}"))
        with path.open("rb") as f:
            elf = ELFFile(f)
            sections = {s.name for s in elf.iter_sections()}
            assert ".symtab" not in sections and not any(s.startswith(".debug") for s in sections), (name, sections)
            assert elf.get_section_by_name(".dynsym").num_symbols() > 80  # the C API stays exported


def test_installed_package_is_the_wheels(venv):
    py, site, env, root = venv
    out = _run([py, "-m", "graphferry", "info", "--json"], env, root)
    facts = json.loads(out)
    assert facts["graphferry"] == facts["library_version"] == VERSION
    assert Path(facts["library_path"]).parent == site / "graphferry" / "lib"
    assert facts["cuda_library"] == str(site / "graphferry" / "lib" / "libgraphferry_cuda.so")
    assert facts["backend"] == "cpu" and re.fullmatch(r"[0-9a-f]{16}", facts["library_build_id"])
    assert facts["torch"] != "not installed" and facts["dgl"] != "not installed"


def test_console_command(venv):
    py, site, env, root = venv
    empty = root / "empty"
    empty.mkdir(exist_ok=True)
    version = _run(["graphferry", "--version"], env, empty).strip()
    assert version == f"graphferry {VERSION} (library {VERSION} at {site / 'graphferry' / 'lib' / 'libgraphferry.so'})"
    out = _run(["graphferry", "info", "--no-gpu"], env, empty)
    assert f"graphferry: {VERSION}" in out and "dgl_imports: yes" in out and "torch_geometric_imports: yes" in out
    for command in ("convert", "generate", "csc", "verify", "partition", "info"):
        assert "example:\n  graphferry " in _run(["graphferry", command, "--help"], env, empty), command


def test_documented_examples_from_an_empty_folder(venv):
    """Every Python and C example of the README, python/README.md and docs/,
    run by the wheel's interpreter in an empty folder."""
    py, site, env, root = venv
    empty = root / "docs-examples"
    empty.mkdir(exist_ok=True)
    out = _run([py, REPO / "tests" / "python" / "docsnippets.py"], env, empty, timeout=1200)
    report = json.loads(out.split("docsnippets report: ", 1)[1].splitlines()[0])
    assert report and all(s in ("ran", "c: ran") for statuses in report.values() for s in statuses), report
    assert list(empty.iterdir()) == [], "an example wrote into the working folder"


def test_demo_trains_from_the_wheel(venv):
    py, site, env, root = venv
    out = _run(
        [py, REPO / "examples" / "train_dgl.py", "--dataset", REPO / "examples" / "data" / "cora", "--epochs", "4"],
        env,
        root,
    )
    acc = float(re.search(r"^test accuracy: ([\d.]+)%", out, re.M).group(1))
    assert acc > 40.0, out[-2000:]  # 7 classes: a model that learned nothing scores about 14-30%


def test_c_program_against_the_wheel(venv):
    py, site, env, root = venv
    include, lib = site / "graphferry" / "include", site / "graphferry" / "lib"
    exe = root / "test_capi"
    cc = shutil.which("cc", path=CLEAN_PATH)
    _run(
        [
            cc,
            "-std=c99",
            "-D_DEFAULT_SOURCE",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pthread",
            f"-I{include}",
            "-o",
            exe,
            REPO / "tests" / "c" / "test_capi.c",
            f"-L{lib}",
            "-lgraphferry",
            f"-Wl,-rpath,{lib}",
        ],
        env,
        root,
    )
    out = _run([exe], env, root)
    assert re.search(r"test_capi: \d+ passed, 0 failed", out), out[-2000:]


def test_sdist_says_go_is_needed(venv):
    py, site, env, root = venv
    sdist = _one(f"graphferry-{VERSION}.tar.gz")
    names = tarfile.open(sdist).getnames()
    top = f"graphferry-{VERSION}"
    for name in (
        "setup.py",
        "pyproject.toml",
        "gosrc/go.mod",
        "gosrc/capi/build.sh",
        "gosrc/include/graphferry.h",
        "graphferry/__init__.py",
        "graphferry/data/cora/graphferry.json",
        "LICENSE",
    ):
        assert f"{top}/{name}" in names, name
    assert not any("/lib/" in n and n.endswith(".so") for n in names)
    env = dict(env, GRAPHFERRY_GO=str(root / "no-such-go"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--target",
            str(root / "from-sdist"),
            str(sdist),
        ],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "installing from source builds libgraphferry.so with the Go toolchain (go 1.26" in text, text[-3000:]
    assert f"GRAPHFERRY_GO={root / 'no-such-go'} is not an executable" in text, text[-3000:]


@pytest.mark.skipif(
    os.environ.get("GRAPHFERRY_TEST_SDIST_BUILD") != "1", reason="builds the library from the sdist: make test-sdist"
)
def test_sdist_builds_with_go(venv):
    """The sdist installed from source, Go found on PATH: the library it builds
    from gosrc/ has the checkout's build id (the same sources)."""
    py, site, env, root = venv
    sdist = _one(f"graphferry-{VERSION}.tar.gz")
    go = shutil.which("go") or "/usr/local/go/bin/go"
    target = root / "from-sdist-go"
    env = dict(env, PATH=f"{Path(go).parent}:{env['PATH']}", GRAPHFERRY_BUILD_CUDA="0")
    for key in ("GOPATH", "GOMODCACHE", "GOCACHE", "HOME"):  # the Go caches of this machine, if set
        if key in os.environ:
            env[key] = os.environ[key]
    _run([sys.executable, "-m", "pip", "--python", py, "install", "--quiet", "--no-deps", "--no-index",
          "--no-build-isolation", "--target", target, sdist], env, root)  # fmt: skip
    facts = json.loads(_run([py, "-m", "graphferry", "info", "--json", "--no-gpu"], dict(env, PYTHONPATH=target), root))
    assert facts["library_path"] == str(target / "graphferry" / "lib" / "libgraphferry.so")
    want = subprocess.run(["bash", REPO / "capi" / "source_id.sh", REPO], capture_output=True, text=True).stdout
    assert facts["library_build_id"] == want.strip()


def test_cuda_library_only_behind_the_fence(venv):
    """The wheel's CUDA library loads only with GRAPHFERRY_BACKEND=cuda and a
    driver that initialises (here the fake driver of make fakecuda, which
    make test-wheel builds); a driver that sees no device is a clean
    BackendError, not a dead process."""
    py, site, env, root = venv
    fake = REPO / "build" / "fakecuda"
    if not (fake / "libcuda.so.1").is_file():
        pytest.fail(f"the fake CUDA driver is not built: make fakecuda (looked in {fake})")
    cuda_env = dict(env, GRAPHFERRY_BACKEND="cuda", LD_LIBRARY_PATH=str(fake), GF_FAKECUDA_DEVICES="1")
    facts = json.loads(_run([py, "-m", "graphferry", "info", "--json"], cuda_env, root))
    assert facts["backend"] == "cuda" and facts["library_path"] == facts["cuda_library"], facts
    assert facts["backend_reason"].startswith("GRAPHFERRY_BACKEND=cuda, and the NVIDIA driver initialised")
    assert facts["gpu"]["visible"] and facts["gpu"]["devices"] == 1
    proc = subprocess.run(
        [py, "-m", "graphferry", "info", "--json"],
        env=dict(cuda_env, GF_FAKECUDA_DEVICES="0"),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1 and "BackendError" in proc.stderr, proc.stderr[-2000:]
    assert "the driver sees no CUDA device" in proc.stderr

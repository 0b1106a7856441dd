"""Backend selection (graphferry/_backend.py): which library a process loads.

The selection rules are tested on choose() with a GPU predicate; the
guarantee that matters most, that a process without a usable GPU never loads
(dlopens) the CUDA library, is tested end to end in fresh interpreters that
import and use a copy of the package whose lib/ holds both libraries, reading
/proc/self/maps. CUDA_VISIBLE_DEVICES="" hides any GPU from those children,
so the test means the same on a GPU machine. GPU-marked tests need one.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import graphferry
from graphferry import _backend
from graphferry._backend import BackendError, choose

REPO = Path(__file__).resolve().parents[2]


def _libdir(tmp_path: Path, cuda: bool) -> Path:
    d = tmp_path / "lib"
    d.mkdir()
    (d / _backend.CPU_LIB).write_bytes(b"cpu")
    if cuda:
        (d / _backend.CUDA_LIB).write_bytes(b"cuda")
    return d


def _no_gpu_call() -> bool:
    raise AssertionError("the GPU check must not run here")


@pytest.mark.parametrize("value", ["", "auto", "AUTO", " auto "])
def test_auto_picks_cuda_only_with_library_and_gpu(tmp_path, value):
    both = _libdir(tmp_path, cuda=True)
    env = {_backend.ENV_BACKEND: value} if value else {}
    assert choose(both, env, lambda: True) == ("cuda", both / _backend.CUDA_LIB)
    assert choose(both, env, lambda: False) == ("cpu", both / _backend.CPU_LIB)


def test_auto_without_cuda_library_never_asks_for_a_gpu(tmp_path):
    cpu_only = _libdir(tmp_path, cuda=False)
    assert choose(cpu_only, {}, _no_gpu_call) == ("cpu", cpu_only / _backend.CPU_LIB)


def test_cpu_requested(tmp_path):
    both = _libdir(tmp_path, cuda=True)
    assert choose(both, {_backend.ENV_BACKEND: "cpu"}, _no_gpu_call) == ("cpu", both / _backend.CPU_LIB)


def test_cuda_requested(tmp_path):
    both = _libdir(tmp_path, cuda=True)
    assert choose(both, {_backend.ENV_BACKEND: "cuda"}, lambda: True)[0] == "cuda"
    with pytest.raises(BackendError, match="no GPU is usable"):
        choose(both, {_backend.ENV_BACKEND: "cuda"}, lambda: False)


def test_cuda_requested_without_library(tmp_path):
    cpu_only = _libdir(tmp_path, cuda=False)
    with pytest.raises(BackendError, match="was not built"):
        choose(cpu_only, {_backend.ENV_BACKEND: "cuda"}, lambda: True)


def test_invalid_backend(tmp_path):
    with pytest.raises(BackendError, match="GRAPHFERRY_BACKEND='gpu' is not one of auto, cpu, cuda"):
        choose(_libdir(tmp_path, cuda=True), {_backend.ENV_BACKEND: "gpu"}, lambda: True)


# ---------------------------------------------------------------------------
# Fresh processes
# ---------------------------------------------------------------------------

_CHILD = r"""
import json, sys
try:
    import graphferry
    from graphferry import _backend
    g = graphferry.Graph.from_coo([0, 1, 2, 3], [1, 2, 3, 0], num_nodes=4)
    sub = graphferry.sample_neighbors(g, [0, 1], [2, 2])
    outcome = {"backend": _backend.BACKEND, "library": graphferry.library_path()}
except Exception as err:
    outcome = {"error": type(err).__name__ + ": " + str(err)}
maps = open("/proc/self/maps").read()
outcome["maps_cuda"] = "libgraphferry_cuda" in maps
outcome["maps_cpu"] = "libgraphferry.so" in maps
print(json.dumps(outcome))
"""


def _cuda_library() -> Path | None:
    for p in (
        REPO / "build" / "libgraphferry_cuda.so",
        REPO / "python" / "graphferry" / "lib" / "libgraphferry_cuda.so",
    ):
        if p.is_file():
            return p
    return None


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    """A copy of the package whose lib/ has the loaded CPU library and the
    CUDA library (the real one when built, else a placeholder file, which
    could not be loaded either)."""
    root = tmp_path_factory.mktemp("pkg")
    src = Path(graphferry.__file__).resolve().parent
    shutil.copytree(src, root / "graphferry", ignore=shutil.ignore_patterns("lib", "__pycache__"))
    lib = root / "graphferry" / "lib"
    lib.mkdir()
    # The CPU library: the one loaded here, unless this process (on a GPU)
    # loaded the CUDA one; then the package's own CPU library.
    cpu = Path(graphferry.library_path())
    if _backend.BACKEND == "cuda":
        cpu = src / "lib" / _backend.CPU_LIB
    shutil.copy(cpu, lib / _backend.CPU_LIB)
    cuda = _cuda_library()
    if cuda is not None:
        shutil.copy(cuda, lib / _backend.CUDA_LIB)
    else:
        (lib / _backend.CUDA_LIB).write_bytes(b"not a library: loading it would fail")
    return root


def _run_child(root: Path, backend: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GRAPHFERRY_LIB_PATH", _backend.ENV_BACKEND)}
    env["PYTHONPATH"] = str(root)
    env["CUDA_VISIBLE_DEVICES"] = ""  # no usable GPU in the child, whatever the machine
    if backend is not None:
        env[_backend.ENV_BACKEND] = backend
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", [None, "auto", "cpu"])
def test_cpu_process_never_loads_the_cuda_library(package_copy, backend):
    res = _run_child(package_copy, backend)
    assert "error" not in res, res
    assert res["backend"] == "cpu"
    assert res["library"].endswith("/graphferry/lib/libgraphferry.so")
    assert res["maps_cpu"] and not res["maps_cuda"]


def test_cuda_requested_without_gpu_is_a_clear_error(package_copy):
    res = _run_child(package_copy, "cuda")
    assert res["error"].startswith("BackendError: graphferry: GRAPHFERRY_BACKEND=cuda, but no GPU is usable"), res
    assert not res["maps_cuda"] and not res["maps_cpu"]


# ---------------------------------------------------------------------------
# On a GPU (tests/gpu/run.sh)
# ---------------------------------------------------------------------------


def _gpu() -> bool:
    return _backend.gpu_usable()


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu(), reason="needs a usable CUDA GPU")
@pytest.mark.skipif(_cuda_library() is None, reason="needs the CUDA library (make lib-cuda)")
def test_gpu_process_loads_the_cuda_library(package_copy):
    env = {k: v for k, v in os.environ.items() if k not in ("GRAPHFERRY_LIB_PATH", _backend.ENV_BACKEND)}
    env["PYTHONPATH"] = str(package_copy)
    out = subprocess.run(
        [sys.executable, "-c", "import torch; torch.zeros(1, device='cuda')\n" + _CHILD],
        env=env,
        cwd=package_copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert "error" not in res, res
    assert res["backend"] == "cuda" and res["maps_cuda"] and not res["maps_cpu"]

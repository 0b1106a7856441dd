"""`python -m graphferry info`: each field of the report a user pastes into a
bug report, checked against what this process and the machine say; the GPU
line against the fake CUDA driver (make fakecuda), which the probe reaches in
a child interpreter."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import graphferry
from graphferry import _info
from graphferry._native import backend as _backend

REPO = Path(__file__).resolve().parents[2]
FAKE_DRIVER = REPO / "build" / "fakecuda"
HEADER = REPO / "include" / "graphferry.h"


def _env(**extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GRAPHFERRY_LIB_PATH", _backend.ENV_BACKEND, "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")
        and not k.startswith("GF_FAKECUDA")
    }
    env.update(extra)
    return env


def _info_json(env: dict, *flags: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "graphferry", "info", "--json", *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def fake_driver() -> Path:
    if not (FAKE_DRIVER / "libcuda.so.1").is_file():
        pytest.fail(f"the fake CUDA driver is not built: make fakecuda (looked in {FAKE_DRIVER})")
    return FAKE_DRIVER


def test_info_fields(fake_driver):
    facts = _info_json(_env(LD_LIBRARY_PATH=str(fake_driver), GF_FAKECUDA_DEVICES="2", GF_FAKECUDA_DRIVER="12345"))
    header = HEADER.read_text()
    version = re.search(r'#define GF_VERSION_STRING "([^"]+)"', header).group(1)
    assert facts["graphferry"] == graphferry.__version__ == version
    assert facts["library_version"] == version
    assert facts["library_path"] == graphferry.library_path() and Path(facts["library_path"]).is_file()
    assert re.fullmatch(r"[0-9a-f]{16}", facts["library_build_id"]), facts["library_build_id"]
    assert facts["library_build_id"] == graphferry.library_build_id()
    assert facts["backend"] == "cpu"
    assert facts["backend_reason"].startswith("GRAPHFERRY_BACKEND is unset"), facts["backend_reason"]
    assert facts["cpu_count"] == os.cpu_count()
    assert facts["cpus_usable"] == len(os.sched_getaffinity(0))
    assert facts["python"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}.")
    for dist, label in _info.DISTRIBUTIONS:
        try:
            want = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            want = "not installed"
        assert facts[label] == want, label
    torch = pytest.importorskip("torch")
    assert facts["torch"] == torch.__version__.split("+")[0] or facts["torch"] == torch.__version__
    assert facts["cuda_visible_devices"] == "unset"
    assert facts["gpu"] == {"visible": True, "driver_version": 12345, "devices": 2}


def test_info_text_has_every_field():
    proc = subprocess.run(
        [sys.executable, "-m", "graphferry", "info", "--no-gpu"],
        env=_env(GRAPHFERRY_BACKEND="auto"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    keys = [line.split(":", 1)[0] for line in proc.stdout.splitlines()]
    assert keys == list(_info.collect(probe=False)), proc.stdout
    assert f"graphferry: {graphferry.__version__}" in proc.stdout
    assert "backend: cpu\nbackend_reason: GRAPHFERRY_BACKEND=auto: the CPU library is loaded" in proc.stdout
    assert "gpu: none visible: not probed (--no-gpu)" in proc.stdout


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({"GF_FAKECUDA_DEVICES": "0"}, "the driver sees no CUDA device (CUDA_VISIBLE_DEVICES=''"),
        ({"GF_FAKECUDA_INIT_ERROR": "35"}, "the NVIDIA driver is too old"),
    ],
)
def test_info_gpu_not_visible(fake_driver, monkeypatch, extra, reason):
    # The probe's child interpreter inherits this environment (it imports no torch: fast).
    for key, value in dict(LD_LIBRARY_PATH=str(fake_driver), CUDA_VISIBLE_DEVICES="", **extra).items():
        monkeypatch.setenv(key, value)
    got = _info.probe_gpu()
    assert got["visible"] is False and reason in got["reason"], got


def test_info_explicit_library():
    lib = graphferry.library_path()
    facts = _info_json(_env(GRAPHFERRY_LIB_PATH=lib), "--no-gpu")
    assert facts["backend"] == "explicit"
    assert facts["backend_reason"] == f"GRAPHFERRY_LIB_PATH={lib} names the library"


def test_info_survives_a_probe_that_crashes(monkeypatch):
    # A driver that ends its process (abort, segfault) costs the report one line.
    monkeypatch.setattr(_info, "_PROBE", "import os; os.abort()")
    got = _info.probe_gpu()
    assert got["visible"] is False and "status -6" in got["reason"], got
    monkeypatch.setattr(_info, "_PROBE", "import time; time.sleep(30)")
    got = _info.probe_gpu(timeout=1)
    assert got == {"visible": False, "reason": "the driver probe did not answer within 1 s"}


def test_info_reports_a_backend_that_cannot_load(fake_driver, tmp_path):
    """GRAPHFERRY_BACKEND=cuda where the driver sees no device: `graphferry
    info` still prints the whole report (the CPU library loaded for it, the
    reason as backend_reason), says BackendError on stderr, exits 1, and
    prints no traceback; importing graphferry anywhere else still raises."""
    env = _env(GRAPHFERRY_BACKEND="cuda", LD_LIBRARY_PATH=str(fake_driver), GF_FAKECUDA_DEVICES="0")
    proc = subprocess.run(
        [sys.executable, "-m", "graphferry", "info", "--no-gpu"], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "graphferry info: BackendError: graphferry: GRAPHFERRY_BACKEND=cuda" in proc.stderr
    assert "the driver sees no CUDA device" in proc.stderr
    keys = [line.split(":", 1)[0] for line in proc.stdout.splitlines()]
    assert keys == list(_info.collect(probe=False)), proc.stdout
    assert "(this report loaded the CPU library instead)" in proc.stdout and "backend: cpu" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-c", "import graphferry"], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert proc.returncode == 1 and "BackendError" in proc.stderr


@pytest.mark.parametrize(
    ("argv", "reporting"),
    [
        (["/venv/bin/graphferry", "info", "--json"], True),
        (["-m", "info"], True),  # python -m graphferry info, while the package is located
        (["/venv/bin/graphferry", "version"], False),
        (["-m", "version"], False),
        (["train.py", "info"], False),
        (["/venv/bin/graphferry"], False),
    ],
)
def test_only_the_info_command_reports_instead_of_raising(argv, reporting):
    assert _backend._reporting(argv) is reporting


def test_info_says_whether_each_framework_imports(tmp_path):
    """A DGL that is installed but does not import (as `pip install torch dgl`
    gives with today's torch) is reported so, beside its version."""
    fake = tmp_path / "dgl"
    fake.mkdir()
    (fake / "__init__.py").write_text("import torchdata.datapipes_that_moved\n")
    env = _env(PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    facts = _info_json(env, "--no-gpu")
    assert facts["dgl"] == importlib.metadata.version("dgl")  # installed: the version, as before
    assert facts["dgl_imports"].startswith("no: ModuleNotFoundError: No module named 'torchdata"), facts
    assert facts["torch_imports"] == "yes" and facts["torch_geometric_imports"] == "yes"


def test_cli_version_and_help():
    from graphferry.__main__ import _COMMANDS, build_parser

    out = subprocess.run(
        [sys.executable, "-m", "graphferry", "--version"], capture_output=True, text=True, timeout=300, check=True
    )
    library = f"library {graphferry.library_version()} at {graphferry.library_path()}"
    assert out.stdout.strip() == f"graphferry {graphferry.__version__} ({library})"
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sorted(sub.choices) == sorted(_COMMANDS)
    for name, command in sub.choices.items():
        text = command.format_help()
        assert command.description and f"example:\n  graphferry {name}" in text, name
    generate = sub.choices["generate"].format_help()
    for preset, what in graphferry.PRESETS.items():
        assert f"  {preset:16} {what}" in generate

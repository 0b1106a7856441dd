"""The GPU script's strictness (tests/gpu/run.sh and tests/gpu/outcome.py),
tested here where no GPU is: a skipped test, a run of no tests, a binary
built from other sources must each fail the GPU check. make test also runs
the whole script with --dry-run (make test-cuda)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gpu_outcome", REPO / "tests" / "gpu" / "outcome.py")
outcome = importlib.util.module_from_spec(_spec)
sys.modules["gpu_outcome"] = outcome  # dataclasses look their module up
_spec.loader.exec_module(outcome)

_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?>'
    '<testsuites><testsuite name="pytest" tests="{n}">{cases}</testsuite></testsuites>'
)


def _junit(*kinds: str) -> str:
    cases = []
    for i, kind in enumerate(kinds):
        inner = {
            "pass": "",
            "skip": '<skipped message="no GPU"/>',
            "fail": '<failure message="x"/>',
            "error": "<error/>",
        }[kind]
        cases.append(f'<testcase classname="tests.gpu.test_gpu" name="t{i}">{inner}</testcase>')
    return _JUNIT.format(n=len(kinds), cases="".join(cases))


def test_junit_passes_only_when_every_test_ran_and_passed():
    assert outcome.junit(_junit("pass", "pass")).verdict(2)[0]
    for kinds in (("pass", "skip"), ("pass", "fail"), ("error",), ()):
        ok, line = outcome.junit(_junit(*kinds)).verdict(1)
        assert not ok, (kinds, line)
    ok, line = outcome.junit(_junit("pass", "pass")).verdict(3)
    assert not ok and "at least 3" in line
    ok, line = outcome.junit(_junit("pass", "skip")).verdict(1)
    assert "skipped (a check that did not happen): tests.gpu.test_gpu::t1" in line


def test_gotest_passes_only_when_every_test_ran_and_passed():
    good = "=== RUN   TestGPUA\n--- PASS: TestGPUA (0.00s)\n=== RUN   TestGPUB\n--- PASS: TestGPUB (0.01s)\nPASS\n"
    assert outcome.gotest(good).verdict(2)[0]
    skipped = good.replace("--- PASS: TestGPUB", "--- SKIP: TestGPUB")
    assert not outcome.gotest(skipped).verdict(1)[0]
    assert not outcome.gotest("testing: warning: no tests to run\nPASS\n").verdict(0)[0]
    assert not outcome.gotest(good.replace("\nPASS\n", "\nFAIL\n")).verdict(1)[0]
    crashed = "=== RUN   TestGPUA\n--- PASS: TestGPUA (0.00s)\n=== RUN   TestGPUB\nSIGSEGV: segmentation violation\n"
    assert not outcome.gotest(crashed).verdict(1)[0]
    sub = "    --- FAIL: TestGPUA/case (0.00s)\n--- FAIL: TestGPUA (0.00s)\nFAIL\n"
    out = outcome.gotest(sub)
    assert out.failed == 2 and not out.verdict(1)[0]


def test_buildid_needs_exactly_one_id():
    assert outcome.buildid(b"\x00gfbuild:0123456789abcdef\x00") == "0123456789abcdef"
    assert outcome.buildid(b"gfbuild:0123456789abcdef gfbuild:0123456789abcdef") == "0123456789abcdef"
    assert outcome.buildid(b"gfbuild:0123456789abcdef gfbuild:unknown") is None
    assert outcome.buildid(b"no id here") is None


def _built() -> list[Path]:
    files = [
        REPO / "python" / "graphferry" / "lib" / "libgraphferry.so",
        REPO / "python" / "graphferry" / "lib" / "libgraphferry_cuda.so",
        REPO / "build" / "gpu" / "cuda.test",
    ]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        pytest.fail("build them first (make lib lib-cuda): " + ", ".join(missing))
    return files


def _run_builds(libdir: Path, test_bin: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            "bash",
            "tests/gpu/run.sh",
            "--dry-run",
            "--only",
            "builds",
            "--lib-dir",
            str(libdir),
            "--test-bin",
            str(test_bin),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_run_sh_accepts_binaries_of_this_checkout_and_refuses_others(tmp_path):
    cpu, cuda, test_bin = _built()
    good = tmp_path / "good"
    good.mkdir()
    shutil.copy(cpu, good / cpu.name)
    shutil.copy(cuda, good / cuda.name)
    res = _run_builds(good, test_bin)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS  builds" in res.stdout
    stale = tmp_path / "stale"
    stale.mkdir()
    shutil.copy(cpu, stale / cpu.name)
    data = cuda.read_bytes()
    want = outcome.buildid(data)
    assert want is not None
    (stale / cuda.name).write_bytes(data.replace(f"gfbuild:{want}".encode(), b"gfbuild:0000000000000000"))
    res = _run_builds(stale, test_bin)
    assert res.returncode == 1, res.stdout
    assert f"STALE   {stale / cuda.name}: built from other sources (0000000000000000, want {want})" in res.stdout
    assert "FAIL (exit 1)  builds" in res.stdout
    (stale / cpu.name).unlink()
    res = _run_builds(stale, test_bin)
    assert res.returncode == 1 and f"MISSING {stale / cpu.name}" in res.stdout


def test_run_sh_keeps_to_its_time_budget():
    """A step reached with less than 10 s of the budget left fails as not
    run (the whole script stays within the device call's limit)."""
    _built()
    res = subprocess.run(
        ["bash", "tests/gpu/run.sh", "--dry-run", "--only", "builds"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, GF_GPU_BUDGET="5"),
    )
    assert res.returncode == 1, res.stdout
    assert re.search(r"=== builds: not run: [0-5]s left of the 5s budget", res.stdout), res.stdout
    assert "FAIL (not run: out of time)  builds" in res.stdout

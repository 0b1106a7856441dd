"""`make test` fails a test whose framework cannot be imported instead of
skipping it (conftest.py's GRAPHFERRY_TEST_REQUIRE); a plain run skips."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO

NOT_THERE = "graphferry_no_such_framework"


def _run(tmp_path, require: str | None) -> subprocess.CompletedProcess:
    suite = REPO / "tests" / "python"
    (tmp_path / "conftest.py").write_text(  # loads the suite's conftest, its importorskip rule included
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(suite)!r})\n"
        f"spec = importlib.util.spec_from_file_location('gf_suite_conftest', {str(suite / 'conftest.py')!r})\n"
        "mod = sys.modules['gf_suite_conftest'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(mod)\n"
    )
    (tmp_path / "test_needs_it.py").write_text(
        f"import pytest\nfw = pytest.importorskip({NOT_THERE!r})\n\n\ndef test_it():\n    pass\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "GRAPHFERRY_TEST_REQUIRE"}
    if require is not None:
        env["GRAPHFERRY_TEST_REQUIRE"] = require
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )


def test_a_required_framework_that_is_missing_fails(tmp_path):
    out = _run(tmp_path, f"dgl,{NOT_THERE}")
    assert out.returncode != 0, out.stdout
    assert "ModuleNotFoundError" in out.stdout and NOT_THERE in out.stdout


def test_without_the_requirement_it_is_skipped(tmp_path):
    out = _run(tmp_path, None)
    assert out.returncode in (0, 5), out.stdout  # 5: the one module skipped, no test collected
    assert "1 skipped" in out.stdout

"""The documentation's examples as a user runs them: every ```python block of
a page (docs/, README.md and python/README.md, the package index's page), in order, in one namespace per page, in the
current working directory (the tests make it an empty folder: nothing of the
checkout is at hand but the installed package); every ```c block is a whole
program, built against the header and the library of the installed package
and run on the shipped Cora.

tests/python/test_docs.py runs them in the project's environment (every
block must run); tests/wheel/test_fresh.py runs this file as a script in
fresh environments that hold only ``graphferry[dgl]`` or
``graphferry[pyg]``, where a block that needs the framework not installed
(it raises ModuleNotFoundError for it, or NameError for what a skipped block
defines) is skipped and the blocks after it still run; test_fresh.py checks
that every block ran in one of the two, so a PyG example that leans on a
DGL one fails there.

    python tests/python/docsnippets.py [--missing-ok dgl,torch_geometric]
        prints {page: [status per block]} as JSON on a line of its own
        (read_report); exit 1 if a block failed

Standard library and graphferry only (no pytest: the fresh environments
have none).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted((REPO / "docs").rglob("*.md")) + [REPO / "README.md", REPO / "python" / "README.md"]
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
REPORT = "docsnippets report: "


def read_report(output: str) -> dict[str, list[str]]:
    """The report :func:`main` printed in ``output``."""
    return json.loads(next(line for line in output.splitlines() if line.startswith(REPORT))[len(REPORT) :])


def blocks(page: Path, lang: str) -> list[str]:
    """The bodies of ``page``'s fenced blocks of language ``lang``."""
    return [body for kind, body in _FENCE.findall(page.read_text()) if kind == lang]


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def _not_installed(err: BaseException, missing_ok: tuple[str, ...]) -> str | None:
    """The module ``err`` says is missing, when it is one of ``missing_ok``
    and really not installed; else None."""
    while err is not None:
        if isinstance(err, ModuleNotFoundError) and err.name:
            top = err.name.split(".")[0]
            if top in missing_ok and importlib.util.find_spec(top) is None:
                return top
        err = err.__cause__ or err.__context__
    return None


def run_python(page: Path, missing_ok: tuple[str, ...] = ()) -> list[str]:
    """Runs ``page``'s Python blocks in one namespace; returns "ran" or
    "skipped: needs <module>" per block. Raises AssertionError naming the
    block that failed."""
    namespace = {"__name__": f"docs_{page.stem}"}
    statuses = []
    for i, code in enumerate(blocks(page, "python")):
        try:
            exec(compile(code, f"{page_id(page)}[python block {i}]", "exec"), namespace)
        except Exception as err:
            needs = _not_installed(err, missing_ok)
            skipped = [s for s in statuses if s.startswith("skipped")]
            if needs is None and isinstance(err, NameError) and skipped:
                # A name a skipped block defines: skipped too (test_fresh.py checks that every
                # block runs in one of the environments, so a PyG block that leans on a DGL one fails).
                statuses.append(f"skipped: after {skipped[0]}")
                continue
            if needs is None:
                raise AssertionError(f"{page_id(page)}, python block {i} failed:\n{code}") from err
            statuses.append(f"skipped: needs {needs}")
            continue
        statuses.append("ran")
    return statuses


def run_c(page: Path, workdir: Path) -> list[str]:
    """Builds and runs each of ``page``'s C blocks against the installed
    package's header and library, on the shipped Cora."""
    import graphferry

    lib = Path(graphferry.library_path())
    include = Path(graphferry.__file__).resolve().parent / "include"  # a wheel's; a checkout's is include/
    if not (include / "graphferry.h").is_file():
        include = REPO / "include"
    statuses = []
    for i, code in enumerate(blocks(page, "c")):
        src, exe = workdir / f"example{i}.c", workdir / f"example{i}"
        src.write_text(code)
        cc = os.environ.get("CC", "cc")
        subprocess.run(
            [cc, "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{include}", "-o", str(exe), str(src),
             f"-L{lib.parent}", f"-l:{lib.name}", f"-Wl,-rpath,{lib.parent}"],
            check=True, timeout=120,
        )  # fmt: skip
        proc = subprocess.run(
            [str(exe), graphferry.dataset_path("cora")], capture_output=True, text=True, timeout=120, cwd=workdir
        )
        if proc.returncode != 0:
            raise AssertionError(f"{page_id(page)}, c block {i}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        statuses.append("ran")
    return statuses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--missing-ok", default="", help="comma-separated modules whose blocks may be skipped")
    args = parser.parse_args(argv)
    missing_ok = tuple(m for m in args.missing_ok.split(",") if m)
    report: dict[str, list[str]] = {}
    failed = False
    for page in PAGES:
        if not (blocks(page, "python") or blocks(page, "c")):
            continue
        try:
            statuses = run_python(page, missing_ok)
            with tempfile.TemporaryDirectory() as tmp:
                statuses += [f"c: {s}" for s in run_c(page, Path(tmp))]
        except Exception:  # reported; the run goes on to the next page
            traceback.print_exc()
            statuses, failed = ["failed"], True
        report[page_id(page)] = statuses
    print(REPORT + json.dumps(report))  # one line, after whatever the examples printed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

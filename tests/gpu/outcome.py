"""Reads a test run's outcome strictly, for tests/gpu/run.sh.

    python tests/gpu/outcome.py junit FILE [--min N]   pytest's --junitxml report
    python tests/gpu/outcome.py gotest FILE [--min N]  a Go test binary's -test.v output
    python tests/gpu/outcome.py buildid FILE           the "gfbuild:<id>" a binary carries

For junit and gotest it prints one line (tests, passed, failed, errors,
skipped) and exits 1 unless at least N tests ran (default 1), none failed,
none erred and none was skipped: on the GPU machine a skipped test is a check
that did not happen, so the GPU script must not report it as a pass. buildid
prints the id (16 hex digits, or "unknown") and exits 1 when there is none.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Outcome:
    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    skipped_names: list[str] = field(default_factory=list)
    failed_names: list[str] = field(default_factory=list)

    def verdict(self, minimum: int) -> tuple[bool, str]:
        line = (
            f"{self.tests} tests: {self.passed} passed, {self.failed} failed, {self.errors} errors, "
            f"{self.skipped} skipped"
        )
        problems = []
        if self.tests < minimum:
            problems.append(f"expected at least {minimum} tests to run")
        if self.failed or self.errors:
            problems.append("failures: " + ", ".join(self.failed_names[:10]))
        if self.skipped:
            problems.append("skipped (a check that did not happen): " + ", ".join(self.skipped_names[:10]))
        if problems:
            return False, line + " -- FAIL: " + "; ".join(problems)
        return True, line


def junit(text: str) -> Outcome:
    """Counts the test cases of a pytest junit XML report."""
    out = Outcome()
    root = ET.fromstring(text)
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        out.tests += 1
        if case.find("skipped") is not None:
            out.skipped += 1
            out.skipped_names.append(name)
        elif case.find("failure") is not None:
            out.failed += 1
            out.failed_names.append(name)
        elif case.find("error") is not None:
            out.errors += 1
            out.failed_names.append(name)
        else:
            out.passed += 1
    return out


_GO_RESULT = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (\S+)")


def gotest(text: str) -> Outcome:
    """Counts the tests (subtests included) of a Go test binary's -test.v
    output; a binary that printed "no tests to run", or that ended without
    its final PASS, counts as an error."""
    out = Outcome()
    for line in text.splitlines():
        m = _GO_RESULT.match(line)
        if not m:
            continue
        kind, name = m.groups()
        out.tests += 1
        if kind == "PASS":
            out.passed += 1
        elif kind == "FAIL":
            out.failed += 1
            out.failed_names.append(name)
        else:
            out.skipped += 1
            out.skipped_names.append(name)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if "testing: warning: no tests to run" in text:
        out.errors += 1
        out.failed_names.append("(no tests to run)")
    elif not lines or lines[-1] != "PASS":
        out.errors += 1
        out.failed_names.append("(the binary did not end with PASS)")
    return out


_BUILD_ID = re.compile(rb"gfbuild:([0-9a-f]{16}|unknown)")


def buildid(data: bytes) -> str | None:
    """The source id a binary was built with; None when it holds none, or
    several different ones (then it cannot say which sources it came from)."""
    found = {m.group(1).decode() for m in _BUILD_ID.finditer(data)}
    return found.pop() if len(found) == 1 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["junit", "gotest", "buildid"])
    ap.add_argument("file")
    ap.add_argument("--min", type=int, default=1, help="fewest tests that must have run")
    args = ap.parse_args(argv)
    path = Path(args.file)
    if args.kind == "buildid":
        found = buildid(path.read_bytes()) if path.is_file() else None
        print(found or "none")
        return 0 if found else 1
    if not path.is_file():
        print(f"outcome: {path} does not exist: the step produced no report -- FAIL")
        return 1
    text = path.read_text(errors="replace")
    try:
        out = junit(text) if args.kind == "junit" else gotest(text)
    except ET.ParseError as err:
        print(f"outcome: {path} is not a junit report ({err}) -- FAIL")
        return 1
    ok, line = out.verdict(args.min)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""graphferry's one version, and every place that states it.

The header is the source: ``GF_VERSION_MAJOR``, ``_MINOR`` and ``_PATCH`` in
include/graphferry.h (the library's gf_version() is compiled from them). The
other places repeat it and are checked against it:

* ``GF_VERSION_STRING`` in the same header;
* python/graphferry/_version.py (the package's ``__version__``, which is also
  the wheel's and the sdist's version: python/pyproject.toml reads it);
* the first release heading of CHANGELOG.md (``## 0.2.0 - <date>``);
* tests/c/abi/<release>/: release headers kept for the ABI test; the newest
  is not newer than this version (it may be this version's own, kept while
  main has not moved past it) and of the same major version (the ABI promise).

    python python/tools/version.py            print the version
    python python/tools/version.py --check    exit 1 naming each place that disagrees
    python python/tools/version.py --set X.Y.Z  rewrite the header and _version.py

Standard library only; ``make test`` runs ``--check`` (tests/python/test_version.py).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "graphferry.h"
PACKAGE = ROOT / "python" / "graphferry" / "_version.py"
CHANGELOG = ROOT / "CHANGELOG.md"
ABI_DIR = ROOT / "tests" / "c" / "abi"

_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def header_version(text: str) -> str:
    """MAJOR.MINOR.PATCH from a header's GF_VERSION_* macros."""
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define GF_VERSION_{name} (\d+)$", text, re.M)
        if not m:
            raise ValueError(f"no #define GF_VERSION_{name} in the header")
        parts.append(m.group(1))
    return ".".join(parts)


def version() -> str:
    """The version (from include/graphferry.h)."""
    return header_version(HEADER.read_text())


def _key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in _VERSION.match(v).groups())


def problems() -> list[str]:
    """Each place that disagrees with the header's version, one line each."""
    want = version()
    found = []
    text = HEADER.read_text()
    m = re.search(r'^#define GF_VERSION_STRING "([^"]*)"$', text, re.M)
    if not m or m.group(1) != want:
        found.append(f"{HEADER}: GF_VERSION_STRING is {m and m.group(1)!r}, GF_VERSION_* say {want}")
    m = re.search(r'^__version__ = "([^"]*)"$', PACKAGE.read_text(), re.M)
    if not m or m.group(1) != want:
        found.append(f"{PACKAGE}: __version__ is {m and m.group(1)!r}, the header says {want}")
    m = re.search(r"^## (\S+)", CHANGELOG.read_text(), re.M) if CHANGELOG.is_file() else None
    if not m or m.group(1) != want:
        found.append(f"{CHANGELOG}: the first release heading is {m and m.group(1)!r}, the header says {want}")
    olds = sorted((d.name for d in ABI_DIR.iterdir() if d.is_dir() and _VERSION.match(d.name)), key=_key)
    if not olds:
        found.append(f"{ABI_DIR}: no previous release's header")
    else:
        prev = olds[-1]
        old = header_version((ABI_DIR / prev / "graphferry.h").read_text())
        if old != prev:
            found.append(f"{ABI_DIR / prev}: its header says {old}")
        if _key(prev) > _key(want) or _key(prev)[0] != _key(want)[0]:
            found.append(f"{ABI_DIR / prev}: a kept release must not be newer than {want}, of the same major version")
    return found


def set_version(new: str) -> None:
    """Rewrites the header's GF_VERSION_* and GF_VERSION_STRING and _version.py."""
    if not _VERSION.match(new):
        raise SystemExit(f"version {new!r} is not MAJOR.MINOR.PATCH")
    major, minor, patch = new.split(".")
    text = HEADER.read_text()
    for name, value in (("MAJOR", major), ("MINOR", minor), ("PATCH", patch)):
        text = re.sub(rf"^#define GF_VERSION_{name} \d+$", f"#define GF_VERSION_{name} {value}", text, flags=re.M)
    text = re.sub(r'^#define GF_VERSION_STRING "[^"]*"$', f'#define GF_VERSION_STRING "{new}"', text, flags=re.M)
    HEADER.write_text(text)
    pkg = re.sub(r'^__version__ = "[^"]*"$', f'__version__ = "{new}"', PACKAGE.read_text(), flags=re.M)
    PACKAGE.write_text(pkg)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="check every place against the header")
    parser.add_argument("--set", metavar="X.Y.Z", help="rewrite the header and _version.py")
    args = parser.parse_args(argv)
    if args.set:
        set_version(args.set)
    if args.check:
        found = problems()
        for line in found:
            print(line, file=sys.stderr)
        if found:
            return 1
    print(version())
    return 0


if __name__ == "__main__":
    sys.exit(main())

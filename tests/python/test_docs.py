"""The documentation's examples run (docs/, README.md) from an empty folder,
with nothing of the checkout at hand but the package (docsnippets.py):
every ```python block of a page, in order, in one namespace per page; every
```c block is a whole program, built against the header and the library and
run on the shipped Cora. Also: each section heading the README had before it
was shortened is a heading of some page (nothing was lost in the move), and
the README links only to pages that exist. `make docs` builds the site with
warnings as errors.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docsnippets import PAGES, blocks, page_id, run_c, run_python

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)

# The README's section headings before issue 22 moved its reference into docs/.
README_HEADINGS_BEFORE = [
    "Set-up (fresh machine: Go 1.26, Python 3.11, a C compiler)",
    "Test data",
    "valgrind",
    "Swapping the loader",
    "Heterogeneous graphs and temporal sampling",
    "What it does",
    "Loader memory and statistics",
    "Many processes (torch.distributed)",
    "Interrupting a loader",
    "Each rank opens its own folder",
    "Partitioning for several processes (offline)",
    "What it does not do (yet)",
    "Where the code is",
    "Status",
]


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python")], ids=page_id)
def test_python_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an empty folder: the examples need only the package
    assert run_python(page) == ["ran"] * len(blocks(page, "python"))


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "c")], ids=page_id)
def test_c_examples_run(page, tmp_path):
    assert run_c(page, tmp_path) == ["ran"] * len(blocks(page, "c"))


def _headings(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text())
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def test_readme_sections_moved_into_docs():
    found = set().union(*(_headings(p) for p in DOCS.rglob("*.md")))
    missing = [h for h in README_HEADINGS_BEFORE if h not in found]
    assert not missing, f"README sections with no heading in docs/: {missing}"


def test_readme_links_exist():
    text = (REPO / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (REPO / target).exists(), f"README links to {target}, which does not exist"

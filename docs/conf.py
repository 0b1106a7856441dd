"""Sphinx configuration of graphferry's documentation (make docs).

Pages are Markdown (MyST); the Python reference comes from the docstrings
(autodoc) of the package in this checkout's python/, the C reference is the
header itself. Built with -W (warnings are errors) by make docs, which
make test runs; the Python examples of the pages run as tests
(tests/python/test_docs.py).
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))  # document this checkout's package

project = "graphferry"
author = "the graphferry authors"
copyright = "2026, the graphferry authors"
release = re.search(r'^__version__ = "([^"]+)"', (ROOT / "python/graphferry/_version.py").read_text(), re.M).group(1)
version = release

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
# Optional packages the reference imports (graphferry.dgl, graphferry.pyg) are
# installed in the project's environment: nothing is mocked.

html_theme = "alabaster"
html_title = f"graphferry {release}"
html_static_path = []


# ---------------------------------------------------------------------------
# Docstrings that are not valid reStructuredText
# ---------------------------------------------------------------------------
#
# Many docstrings are written as plain text (indented lists and
# continuation lines that reST reads as block quotes, `**kwargs` read as
# unclosed bold). Such a docstring would make -W fail, or render garbled, so
# it is shown verbatim, as written, in a literal block; a docstring that is
# valid reST renders as reST. Which docstrings are verbatim is written to
# build/docs-verbatim.txt, the list to shorten by fixing their markup.

from docutils.core import publish_doctree  # noqa: E402
from docutils.utils import SystemMessage  # noqa: E402

_ROLE = re.compile(r":(?:[\w-]+:)?[\w-]+:`([^`]*)`")
_VERBATIM: list[str] = []


def _valid_rst(lines: list[str]) -> bool:
    text = _ROLE.sub(r"``\1``", "\n".join(lines))  # Sphinx's roles are valid; docutils alone does not know them
    try:
        publish_doctree(
            text,
            settings_overrides={
                "report_level": 5,
                "halt_level": 2,
                "warning_stream": False,
                "file_insertion_enabled": False,
            },
        )
    except SystemMessage:
        return False
    return True


def _docstring(app, what, name, obj, options, lines):
    if not lines or _valid_rst(lines):
        return
    _VERBATIM.append(name)
    body = ["    " + line if line.strip() else "" for line in lines]
    lines[:] = ["::", ""] + body + [""]


def _report(app, exception):
    if exception is None:
        out = Path(app.outdir).parent / "docs-verbatim.txt"
        out.write_text("".join(f"{name}\n" for name in sorted(set(_VERBATIM))))


def setup(app):
    app.connect("autodoc-process-docstring", _docstring)
    app.connect("build-finished", _report)

"""Sphinx configuration of graphferry's documentation (make docs).

Pages are Markdown (MyST); the Python reference comes from the docstrings
(autodoc, Google style through napoleon: sections become parameter lists) of
the package in this checkout's python/, one page per public class and
function (autosummary, generated into reference/api/ at each build); the C
reference, the command line's page and the project's addresses are read from
their one source (include/graphferry.h, graphferry.__main__, python/pyproject.toml)
by _ext/gfdocs.py and below. Types of torch, DGL, PyG and NumPy link to
their documentation without fetching anything (_EXTERNAL below): the build
needs no network. Built with -W (warnings are errors) by make docs, which
make test runs; the Python examples of the pages run as tests
(tests/python/test_docs.py). `make docs-linkcheck` checks every external link
(needs the network).
"""

import re
import sys
from pathlib import Path

import tomllib
from docutils import nodes

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))  # document this checkout's package
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
URLS = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]["urls"]

project = "graphferry"
author = "the graphferry authors"
copyright = "2026, the graphferry authors"
release = re.search(r'^__version__ = "([^"]+)"', (ROOT / "python/graphferry/_version.py").read_text(), re.M).group(1)
version = release

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon", "gfdocs"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}  # .rst: autosummary's pages
exclude_patterns = ["_build", "_templates"]
templates_path = ["_templates"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "substitution"]
# {{ repository }} in a page: the address in python/pyproject.toml.
myst_substitutions = {"repository": URLS["Source"]}

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
autosummary_generate = True
autosummary_imported_members = True
autosummary_ignore_module_all = False  # a module's __all__ is its public API
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # Attributes: as fields (valid reST without Sphinx's directives)
napoleon_use_param = True
napoleon_use_rtype = True
# Optional packages the reference imports (graphferry.dgl, graphferry.pyg) are
# installed in the project's environment: nothing is mocked.

html_theme = "alabaster"
html_title = f"graphferry {release}"
html_static_path = []
html_theme_options = {"page_width": "1180px", "sidebar_width": "240px"}  # parameter lists fit
html_context = {"project_urls": URLS}

linkcheck_timeout = 30

# ---------------------------------------------------------------------------
# Types of other projects, linked without fetching their inventories
# ---------------------------------------------------------------------------
#
# A docstring's type (``torch.Tensor``, ``dgl.DGLGraph``,
# ``torch_geometric.data.Data``) that no page of ours defines becomes a link
# to that project's page for it: a name of _EXTERNAL, else by its package's
# prefix.

_EXTERNAL = {
    "torch.Tensor": "https://pytorch.org/docs/stable/tensors.html#torch.Tensor",
    "torch.device": "https://pytorch.org/docs/stable/tensor_attributes.html#torch.device",
    "torch.dtype": "https://pytorch.org/docs/stable/tensor_attributes.html#torch.dtype",
    "torch.utils.data.DataLoader": "https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader",
    "torch.utils.data.Dataset": "https://pytorch.org/docs/stable/data.html#torch.utils.data.Dataset",
    "torch.utils.data.dataloader.DataLoader": "https://pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader",
    "torch.int64": "https://pytorch.org/docs/stable/tensor_attributes.html#torch.dtype",
    "dgl.heterograph.DGLGraph": "https://docs.dgl.ai/en/latest/generated/dgl.DGLGraph.html",
}
_PREFIXES = {
    "torch.": "https://pytorch.org/docs/stable/generated/{name}.html",
    "dgl.": "https://docs.dgl.ai/en/latest/generated/{name}.html",
    "torch_geometric.": "https://pytorch-geometric.readthedocs.io/en/latest/generated/{name}.html",
    "numpy.": "https://numpy.org/doc/stable/reference/generated/{name}.html",
}


def external_url(name: str) -> str | None:
    """The documentation page of another project's ``name``, or None."""
    if name.startswith("np."):
        name = "numpy." + name[3:]
    if name in _EXTERNAL:
        return _EXTERNAL[name]
    parts = name.split(".")
    if parts[0] == "torch_geometric" or parts[:2] == ["dgl", "dataloading"]:
        # Documented at their package: torch_geometric.sampler.base.BaseSampler is torch_geometric.sampler.BaseSampler.
        name = ".".join(parts[:2] + parts[-1:])
    for prefix, url in _PREFIXES.items():
        if name.startswith(prefix):
            return url.format(name=name)
    return None


def _missing_reference(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    url = external_url(node.get("reftarget", ""))
    if url is None:
        return None
    ref = nodes.reference("", "", internal=False, refuri=url, reftitle=node["reftarget"])
    ref.append(contnode)
    return ref


# ---------------------------------------------------------------------------
# Docstrings that are not valid reStructuredText
# ---------------------------------------------------------------------------
#
# Many docstrings are written as plain text (indented lists and
# continuation lines that reST reads as block quotes, `**kwargs` read as
# unclosed bold). Such a docstring would make -W fail, or render garbled, so
# it is shown verbatim, as written, in a literal block; a docstring that is
# valid reST renders as reST. Which docstrings are verbatim is written to
# build/docs/docs-verbatim.txt, the list to shorten by fixing their markup
# (tests/python/test_docs_reference.py holds the main classes off it).

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
    except Exception:  # one of Sphinx's directives, which needs the build's state: Sphinx judges it
        return True
    return True


def _docstring(app, what, name, obj, options, lines):
    if not lines or _valid_rst(lines):
        return
    _VERBATIM.append(name)
    body = ["    " + line if line.strip() else "" for line in lines]
    lines[:] = ["::", ""] + body + [""]


def _report(app, exception):
    if exception is None:
        out = Path(app.outdir).parent / "docs-verbatim.txt"  # build/docs/ beside html/
        out.write_text("".join(f"{name}\n" for name in sorted(set(_VERBATIM))))


def setup(app):
    app.connect("missing-reference", _missing_reference)
    app.connect("autodoc-process-docstring", _docstring)
    app.connect("build-finished", _report)

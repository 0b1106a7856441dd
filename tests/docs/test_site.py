"""The documentation site `make docs` built (build/docs/html), as a reader
gets it: the main classes' pages carry their parameter lists (napoleon read
their Google-style sections), no docstring was shown verbatim, every C
function of the header has its own anchor on the C reference page, every
command has its --help on the command-line page, and torch's, DGL's and PyG's
types link to their documentation.

    make docs       (builds the site, then runs this)
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "build" / "docs" / "html"

MAIN_CLASSES = [
    "graphferry.Graph",
    "graphferry.Loader",
    "graphferry.HeteroGraph",
    "graphferry.dgl.DataLoader",
    "graphferry.dgl.NeighborSampler",
    "graphferry.pyg.NeighborLoader",
    "graphferry.pyg.LinkNeighborLoader",
    "graphferry.pyg.Sampler",
    "graphferry.distributed.TorchComm",
]


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no documentation site at {SITE}: run make docs")
    return SITE


@pytest.mark.parametrize("name", MAIN_CLASSES)
def test_main_class_has_a_page_with_its_parameters(site, name):
    html = (site / "reference" / "api" / f"{name}.html").read_text()
    assert f'id="{name}"' in html, f"{name}'s page does not define it"
    assert re.search(r'<dt class="field-\w+">Parameters', html), f"{name}'s page has no parameter list"


def test_no_docstring_shown_verbatim(site):
    verbatim = (site.parent / "docs-verbatim.txt").read_text().split()
    assert verbatim == [], f"docstrings shown as raw text (not valid reST after napoleon): {verbatim}"


def test_every_c_function_has_an_anchor(site):
    header = (REPO / "include" / "graphferry.h").read_text()
    functions = re.findall(r"^GF_API [^;]*?\b(gf_\w+)\(", header, re.M | re.S)
    html = (site / "reference" / "c.html").read_text()
    missing = [f for f in functions if f'id="c.{f}"' not in html]
    assert len(functions) > 80 and not missing, f"C functions without an anchor: {missing}"


def test_every_command_has_its_help(site):
    from graphferry.__main__ import _COMMANDS

    text = html.unescape(re.sub(r"<[^>]+>", "", (site / "reference" / "cli.html").read_text()))
    for name, (_, _, example) in _COMMANDS.items():
        assert f"usage: graphferry {name}" in text and example in text, name


def test_external_types_link_to_their_documentation(site):
    pages = " ".join(p.read_text() for p in (site / "reference" / "api").glob("*.html"))
    for url in (
        "https://pytorch.org/docs/stable/tensors.html#torch.Tensor",
        "https://docs.dgl.ai/en/latest/generated/dgl.DGLGraph.html",
        "https://pytorch-geometric.readthedocs.io/en/latest/generated/torch_geometric.data.Data.html",
    ):
        assert f'href="{url}"' in pages, url

"""The package's layout: every import points downward (no cycle), no module
imports another inside a function, graphferry.dgl and graphferry.pyg stay
lazy, the old flat module paths still import, and python/README.md's map of
the modules is the package's, bottom up. python/tools/importgraph.py checks
the first two from the source (``make lint`` runs it); here it runs on the
package and on copies with a cycle and a hidden import planted."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "python" / "graphferry"
TOOL = REPO / "python" / "tools" / "importgraph.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("importgraph", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules["importgraph"] = module  # for its dataclasses
    spec.loader.exec_module(module)
    return module


importgraph = _load_tool()


def _run(package: Path) -> subprocess.CompletedProcess:
    """The tool as ``make lint`` runs it."""
    return subprocess.run([sys.executable, str(TOOL), str(package)], capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "graphferry"
    shutil.copytree(PACKAGE, dst, ignore=shutil.ignore_patterns("lib", "__pycache__"))
    return dst


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + textwrap.dedent(text))


def test_package_imports_point_downward():
    assert importgraph.check(PACKAGE) == []
    proc = _run(PACKAGE)
    assert proc.returncode == 0, proc.stderr


def test_the_graph_is_read_as_written():
    modules = importgraph.find_modules(PACKAGE)
    for module in modules.values():
        importgraph.read_imports(module, modules)
    edges = importgraph.graph(modules)
    # A relative "from . import x" of a module, of a name, and from a subpackage.
    assert "graphferry._native.lib" in edges["graphferry._native.dlpack"]
    assert "graphferry.sampling" in edges["graphferry.dgl.node"]
    assert {"graphferry.dgl.dataloader", "graphferry.dgl.edge"} <= edges["graphferry.dgl"]
    # The bottom imports nothing of the package but errors and the version.
    assert edges["graphferry._native.lib"] == {"graphferry._native.backend", "graphferry.errors", "graphferry._version"}
    assert edges["graphferry._native.backend"] == set()


def test_catches_a_planted_cycle(tmp_path):
    package = _copy(tmp_path)
    # sampling imports the bindings; the bindings importing sampling closes a loop.
    _append(package / "_native" / "lib.py", "\nfrom ..sampling import Loader  # planted\n")
    (problem,) = importgraph.check(package)
    # The shortest loop, and the other modules on loops through it.
    assert problem.startswith("import cycle: graphferry._native.lib -> graphferry.sampling -> graphferry._native.lib")
    assert "graphferry.graph" in problem and "graphferry._native.dlpack" in problem
    proc = _run(package)
    assert proc.returncode == 1 and "import cycle" in proc.stderr


def test_catches_a_longer_cycle_through_a_package(tmp_path):
    package = _copy(tmp_path)
    # graphferry.dgl.blocks importing the package graphferry.dgl, whose
    # __init__ imports dataloader -> node -> blocks.
    _append(package / "dgl" / "blocks.py", "\nfrom . import DataLoader  # planted\n")
    (problem,) = importgraph.check(package)
    assert problem.startswith("import cycle: graphferry.dgl -> ")
    assert "graphferry.dgl.blocks" in problem


def test_catches_imports_inside_functions(tmp_path):
    package = _copy(tmp_path)
    _append(
        package / "graph.py",
        """

        def _planted_internal():
            from .sampling import Loader  # a hidden cycle's usual shape

            return Loader


        def _planted_stdlib():
            import json

            return json


        def _optional():
            import dgl  # optional dependencies may be imported where needed

            return dgl
        """,
    )
    problems = importgraph.check(package)
    assert len(problems) == 3, problems
    assert "graphferry.graph imports graphferry.sampling inside a function" in problems[0]
    assert "graphferry.graph imports json inside a function" in problems[1]
    # and the cycle the first one hid (sampling imports graph at the top)
    assert problems[2].startswith("import cycle: graphferry.graph -> graphferry.sampling -> graphferry.graph")
    assert _run(package).returncode == 1


def test_relative_imports_resolve(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from ..a import x\nfrom .. import c\n")
    (pkg / "c.py").write_text("import pkg.sub\n")
    modules = importgraph.find_modules(pkg)
    for module in modules.values():
        importgraph.read_imports(module, modules)
    edges = importgraph.graph(modules)
    assert edges == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.sub.b"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.a", "pkg.c"},
        "pkg.c": {"pkg.sub"},
    }
    assert importgraph.check(pkg) == ["import cycle: pkg.a -> pkg.sub.b -> pkg.a"]


def test_dgl_and_pyg_are_imported_on_first_use():
    code = textwrap.dedent("""
        import sys
        import graphferry
        assert "dgl" not in sys.modules and "torch_geometric" not in sys.modules, "imported eagerly"
        assert "graphferry.dgl" not in sys.modules and "graphferry.pyg" not in sys.modules
        assert graphferry.pyg.NeighborLoader.__name__ == "NeighborLoader"
        assert "torch_geometric" in sys.modules and "dgl" not in sys.modules
        assert graphferry.dgl.DataLoader.__name__ == "DataLoader"
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.parametrize(
    ("old", "names"),
    [
        ("graphferry.dgl_hetero", ["HeteroDataLoader", "to_hetero_blocks", "as_hetero_graph", "is_hetero_input"]),
        ("graphferry.dgl_link", ["EdgePredictionSampler", "as_edge_prediction_sampler", "EdgeDataLoader"]),
        ("graphferry.pyg_link", ["LinkNeighborLoader"]),
    ],
)
def test_old_module_paths_still_import(old, names):
    """The flat modules that became parts of graphferry.dgl and graphferry.pyg
    import, saying they are deprecated, and give the same objects."""
    pytest.importorskip("dgl" if "dgl" in old else "torch_geometric")
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert any(issubclass(w.category, DeprecationWarning) and old in str(w.message) for w in caught)
    new = importlib.import_module(old.split("_")[0])
    for name in names:
        assert getattr(module, name) is (getattr(new, name, None) or getattr(new.convert, name)), name


def _readme_layout() -> list[str]:
    """The modules python/README.md's "Layout" lists, in its order, as dotted
    names; a subpackage stands after its modules (its __init__ imports them)."""
    text = (REPO / "python" / "README.md").read_text()
    block = text.split("## Layout", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    order: list[str] = []
    packages: list[tuple[int, str]] = []  # (indent, dotted name) of the folders open
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        while packages and indent <= packages[-1][0]:
            order.append(packages.pop()[1])
        first = line.split()[0]
        if first.endswith("/"):
            parent = packages[-1][1] + "." if packages else ""
            packages.append((indent, parent + first.rstrip("/")))
            continue
        prefix = packages[-1][1] if packages else ""
        for word in line.split("  "):
            word = word.strip()
            if word.endswith(".py") and " " not in word:
                name = word[: -len(".py")]
                order.append(prefix if name == "__init__" else f"{prefix}.{name}")
    while packages:
        order.append(packages.pop()[1])
    return list(dict.fromkeys(order))


def test_readme_layout_lists_every_module_bottom_up():
    order = _readme_layout()
    modules = importgraph.find_modules(PACKAGE)
    for module in modules.values():
        importgraph.read_imports(module, modules)
    assert sorted(order) == sorted(modules), "python/README.md's Layout lists other modules than the package has"
    position = {name: i for i, name in enumerate(order)}
    for name, targets in importgraph.graph(modules).items():
        for target in targets:
            assert position[target] < position[name], f"{name} imports {target}, listed after it in python/README.md"

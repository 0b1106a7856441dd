"""The import graph of a Python package, checked: which of its modules import
which (at module level and inside functions), read from the source with
``ast`` (nothing is imported).

It fails (exit status 1, one line per problem) on

* a cycle among the package's modules: every import must point downward,
  towards the modules that import nothing of the package above them;
* an import inside a function of the package: of one of its own modules
  (the usual way to hide a cycle) or of anything else, but the optional
  third-party packages of ``OPTIONAL`` (imported where they are needed, so
  that the package imports without them).

``--show`` prints the graph, each module with the modules it imports.

    python python/tools/importgraph.py python/graphferry [--show]

``make lint`` runs it; tests/python/test_importgraph.py too, with a planted
cycle.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Third-party packages that a function may import: optional dependencies of
# graphferry, imported where they are needed so that the package imports
# without them (python/pyproject.toml's extras, and the tools of partition.py).
OPTIONAL = frozenset({"dgl", "torch_geometric", "pyarrow", "pymetis", "tqdm"})


@dataclass
class Import:
    """One import statement's target, where it stands."""

    target: str  # the module imported (for a package's module: its full name)
    line: int
    in_function: bool


@dataclass
class Module:
    name: str
    path: Path
    is_package: bool
    imports: list[Import] = field(default_factory=list)


def find_modules(root: Path) -> dict[str, Module]:
    """Every module of the package in ``root`` (a folder with
    ``__init__.py``), by its dotted name; folders without ``__init__.py``
    are not packages and are left out."""
    root = root.resolve()
    if not (root / "__init__.py").is_file():
        raise SystemExit(f"importgraph: {root} is not a package (no __init__.py)")
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if any(not (root.parent.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts))):
            continue  # inside a folder that is not a package
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        modules[name] = Module(name, path, is_package)
    return modules


def _walk(node: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node below ``node``, and whether it stands inside a function
    (a class body runs at import, as module level does)."""
    for child in ast.iter_child_nodes(node):
        yield child, in_function
        inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from _walk(child, inner)


def _resolve(module: Module, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import ...`` in ``module``."""
    if level == 0:
        return name or ""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def read_imports(module: Module, modules: dict[str, Module]) -> None:
    """Fills ``module.imports``: each statement's targets, a ``from X import
    y`` naming module ``X.y`` when that is one of the package's modules."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
    for node, in_function in _walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                module.imports.append(Import(alias.name, node.lineno, in_function))
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node.level, node.module)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                module.imports.append(Import(full if full in modules else base, node.lineno, in_function))


def _internal(target: str, modules: dict[str, Module]) -> str | None:
    """The package's module that ``target`` names (the longest prefix that
    is one), or None for a module from outside."""
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        if name in modules:
            return name
    return None


def graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (module level and in functions)."""
    edges: dict[str, set[str]] = {name: set() for name in modules}
    for module in modules.values():
        for imp in module.imports:
            target = _internal(imp.target, modules)
            if target is not None:
                edges[module.name].add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[tuple[list[str], set[str]]]:
    """One cycle (a list of modules, the first repeated at the end) per
    strongly connected component that has one, with the component: every
    module on some cycle through the first (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[list[str], set[str]]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges[v]:
                found.append((_cycle_in(v, component, edges), component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(edges) + 100))
    try:
        for v in sorted(edges):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def _cycle_in(start: str, component: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A path from ``start`` back to itself within ``component`` (breadth
    first: a shortest one)."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(edges[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, start]
                if w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    return [start, start]  # not reached: start is on a cycle of its component


def check(root: Path) -> list[str]:
    """The problems of the package in ``root``: its import cycles and its
    imports inside functions (see the module's docstring); empty when none."""
    modules = find_modules(root)
    for module in modules.values():
        read_imports(module, modules)
    problems = []
    for module in sorted(modules.values(), key=lambda m: m.name):
        seen = set()
        for imp in module.imports:
            if not imp.in_function or (imp.line, imp.target) in seen:
                continue
            seen.add((imp.line, imp.target))
            where = f"{module.path}:{imp.line}"
            if _internal(imp.target, modules) is not None:
                problems.append(
                    f"{where}: {module.name} imports {imp.target} inside a function "
                    "(import it at the top; a cycle means a shared piece needs a module of its own)"
                )
            elif imp.target.split(".")[0] not in OPTIONAL:
                problems.append(
                    f"{where}: {module.name} imports {imp.target} inside a function "
                    f"(only the optional {', '.join(sorted(OPTIONAL))} may be)"
                )
    for cycle, component in cycles(graph(modules)):
        rest = sorted(component - set(cycle))
        also = f" (and through {', '.join(rest)})" if rest else ""
        problems.append("import cycle: " + " -> ".join(cycle) + also)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", type=Path, help="the package's folder, e.g. python/graphferry")
    parser.add_argument("--show", action="store_true", help="print each module with the modules it imports")
    args = parser.parse_args(argv)
    if args.show:
        modules = find_modules(args.package)
        for module in modules.values():
            read_imports(module, modules)
        for name, targets in sorted(graph(modules).items()):
            print(f"{name}: {', '.join(sorted(targets)) or '-'}")
    problems = check(args.package)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"importgraph: {len(problems)} problem(s) in {args.package}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

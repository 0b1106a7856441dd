"""Sphinx directives of graphferry's documentation that read their pages'
content from the one source of each fact:

- ``gf-header``: the C reference from include/graphferry.h: each section
  banner a heading, each ``GF_API`` declaration a ``c:function`` (an anchor
  per function, listed in the index) with the comment above it, each option
  struct a ``c:struct`` with its source, everything else as written.
- ``gf-cli``: the command line's ``--help`` of every command, from the
  parser (graphferry.__main__.build_parser).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from docutils.statemachine import StringList
from sphinx.util.nodes import nested_parse_with_titles

_BANNER = re.compile(r"^/\* -{20,} \*/$")
_TITLE = re.compile(r"^/\* (\S.*?)\s*\*/$")
_INLINE_TITLE = re.compile(r"^/\* -{4} (.+?) -+ \*/$")
_OPEN_TITLE = re.compile(r"^/\* -{20,}$")
_STRUCT = re.compile(r"^typedef struct (\w+) \{")
_OPAQUE = re.compile(r"^typedef struct (\w+) \1;$")


def _comment_text(lines: list[str]) -> list[str]:
    """A C comment's text without its delimiters and leading stars."""
    out = []
    for line in lines:
        line = line.strip()
        line = re.sub(r"^/\*+ ?", "", line)
        line = re.sub(r"\s*\*/$", "", line)
        line = re.sub(r"^\* ?", "", line)
        out.append(line)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def _items(text: str) -> list[tuple[str, list[str], list[str]]]:
    """The header as (kind, comment lines, code lines), kind one of
    "section", "function", "struct", "type", "code"."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if _BANNER.match(line))  # after the include guard and macros
    end = max(i for i, line in enumerate(lines) if line.startswith("#ifdef __cplusplus"))
    items, comment, code = [], [], []
    i = start

    def flush() -> None:
        nonlocal comment, code
        if code:
            first = code[0]
            if first.startswith("GF_API"):
                kind = "function"
            elif _STRUCT.match(first):
                kind = "struct"
            elif _OPAQUE.match(first):
                kind = "type"
            else:
                kind = "code"
            items.append((kind, _comment_text(comment), code))
        elif comment:
            items.append(("code", _comment_text(comment), []))
        comment, code = [], []

    while i < end:
        line = lines[i]
        if _BANNER.match(line) and i + 2 < end and _BANNER.match(lines[i + 2]):
            flush()
            items.append(("section", [_TITLE.match(lines[i + 1]).group(1)], []))
            i += 3
            continue
        m = _INLINE_TITLE.match(line)
        if m or (_OPEN_TITLE.match(line) and not code):
            flush()
            if m:
                items.append(("section", [m.group(1)], []))
                i += 1
                continue
            j = i + 1  # "/* ----\n * Title\n *\n * text ... */": a section with an introduction
            items.append(("section", [_comment_text([lines[j]])[0]], []))
            block = []
            j += 1
            while not lines[j - 1].rstrip().endswith("*/"):
                block.append(lines[j])
                j += 1
            items.append(("code", _comment_text(block), []))
            i = j
            continue
        stripped = line.strip()
        if not stripped:
            if code and (code[-1].rstrip().endswith((";", "*/")) or code[-1].startswith("#")):
                flush()
            elif comment and not code:
                items.append(("code", _comment_text(comment), []))
                comment = []
            i += 1
            continue
        if not code and stripped.startswith("/*"):
            while True:
                comment.append(lines[i])
                if lines[i].rstrip().endswith("*/"):
                    break
                i += 1
            i += 1
            continue
        code.append(line)
        i += 1
    flush()
    return items


def header_rst(path: Path) -> list[str]:
    """The reST of the C reference for the header at ``path``."""
    out: list[str] = []

    def literal(text: list[str]) -> None:
        if text:
            out.extend(["::", ""] + ["   " + t if t else "" for t in text] + [""])

    for kind, comment, code in _items(path.read_text()):
        if kind == "section":
            out.extend([comment[0], "-" * len(comment[0]), ""])
        elif kind == "function":
            # One directive per comment; several declarations under one comment share it.
            decls = [d.strip().removeprefix("GF_API").strip() for d in " ".join(c.strip() for c in code).split(";")]
            decls = [d for d in decls if d]
            out.append(f".. c:function:: {decls[0]}")
            out.extend(" " * len(".. c:function:: ") + d for d in decls[1:])
            out.append("")
            out.extend("   " + line for line in (["::", ""] + ["   " + t if t else "" for t in comment] + [""]))
        elif kind in ("struct", "type"):
            name = (_STRUCT.match(code[0]) or _OPAQUE.match(code[0])).group(1)
            out.extend([f".. c:type:: {name}", ""])
            body = (["::", ""] + ["   " + t if t else "" for t in comment] + [""]) if comment else []
            if kind == "struct":
                body += [".. code-block:: c", ""] + ["   " + c if c.strip() else "" for c in code] + [""]
            out.extend("   " + line if line else "" for line in body)
        else:
            literal(comment)
            if code:
                out.extend([".. code-block:: c", ""] + ["   " + c if c.strip() else "" for c in code] + [""])
    return out


class HeaderDirective(Directive):
    """``.. gf-header:: PATH`` (relative to the page)."""

    required_arguments = 1

    def run(self):
        env = self.state.document.settings.env
        path = (Path(env.doc2path(env.docname)).parent / self.arguments[0]).resolve()
        env.note_dependency(str(path))
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(header_rst(path), str(path)), container)
        return container.children


def cli_rst() -> list[str]:
    """Every command's --help, as literal blocks under a heading each."""
    from graphferry.__main__ import build_parser

    parser = build_parser()
    out = ["``graphferry --help``", "-" * 21, "", "::", ""]
    out += ["   " + line if line else "" for line in parser.format_help().splitlines()] + [""]
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command in sub.choices.items():
        title = f"``graphferry {name}``"
        out += [title, "-" * len(title), "", "::", ""]
        out += ["   " + line if line else "" for line in command.format_help().splitlines()] + [""]
    return out


class CliDirective(Directive):
    """``.. gf-cli::``"""

    def run(self):
        container = nodes.container()
        nested_parse_with_titles(self.state, StringList(cli_rst(), "graphferry.__main__"), container)
        return container.children


def setup(app):
    app.add_directive("gf-header", HeaderDirective)
    app.add_directive("gf-cli", CliDirective)
    return {"parallel_read_safe": True}

"""The C boundary's one source (python/tools/cgen.py): include/graphferry.h
derives the Python bindings, capi's C shims and layout tables; a change to
the header moves all of them together, and the kept release headers hold
the header to the ABI promise."""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphferry._native import lib as _lib

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "python" / "tools" / "cgen.py"


def _tool():
    spec = importlib.util.spec_from_file_location("gf_cgen_tool", TOOL)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


cgen = _tool()


@pytest.fixture
def tree(tmp_path):
    """A scratch copy of what the generator reads and writes."""
    for rel in ("include", "tests/c/abi"):
        shutil.copytree(REPO / rel, tmp_path / rel)
    (tmp_path / "capi").mkdir()
    for path in (REPO / "capi").glob("*.c"):
        shutil.copy(path, tmp_path / "capi")
    shutil.copy(REPO / cgen.GO_LAYOUTS, tmp_path / cgen.GO_LAYOUTS)
    for rel in (cgen.PY_LIB, cgen.PY_ERRORS):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def test_derived_files_are_current():
    proc = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_header_change_moves_bindings_shims_and_layouts_together(tree, capsys):
    assert cgen.main(["--check", "--root", str(tree)]) == 0
    header = tree / cgen.HEADER
    # A new option appended to gf_loader_options (today's layout marked as an
    # earlier one), a new constant and a new function whose doc block says it
    # may return GF_DONE.
    _edit(
        header,
        "  int32_t coo;\n} gf_loader_options;",
        "  int32_t coo;\n  /* -- an earlier layout ends here -- */\n  int32_t frob_level;\n} gf_loader_options;",
    )
    _edit(
        header,
        "#define GF_TOPOLOGY_PINNED 2\n",
        "#define GF_TOPOLOGY_PINNED 2\n#define GF_FROB_HARD 7 /* frobs hard */\n",
    )
    _edit(
        header,
        "GF_API void gf_loader_close(gf_loader *loader);\n",
        "GF_API void gf_loader_close(gf_loader *loader);\n\n"
        "/* gf_loader_frob frobs the loader.\n * Returns GF_OK, GF_DONE (nothing left to frob), GF_EBADHANDLE. */\n"
        "GF_API int gf_loader_frob(gf_loader *loader, const int64_t *levels, gf_batch **out_batch);\n",
    )
    assert cgen.main(["--check", "--root", str(tree)]) == 1
    stale = capsys.readouterr().err
    for rel in (cgen.PY_LIB, cgen.C_SHIMS, cgen.GO_LAYOUTS):
        assert rel in stale, stale
    assert cgen.main(["--root", str(tree)]) == 0
    lib = (tree / cgen.PY_LIB).read_text()
    assert '("frob_level", ctypes.c_int32),' in lib
    assert "GF_FROB_HARD = 7  # frobs hard" in lib
    binding = 'gf_loader_frob=_bind("gf_loader_frob",[ctypes.c_void_p,ctypes.POINTER(ctypes.c_int64),c_void_pp],'
    assert binding + "ctypes.c_int,_checker(GF_DONE))" in "".join(lib.split())
    shims = (tree / cgen.C_SHIMS).read_text()
    assert (
        "int gf_loader_frob(gf_loader *loader, const int64_t *levels, gf_batch **out_batch) {\n"
        "  GF_GUARD();\n  return gfgo_loader_frob((uintptr_t)loader, (int64_t *)levels, (uintptr_t *)out_batch);\n}"
    ) in shims
    # gf_loader_options's layouts: 11, 12, 13 fields, and now today's 19.
    assert (
        'newLayout("gf_loader_options", C.gf_loader_options{}, 11, 12, 13, 19)' in (tree / cgen.GO_LAYOUTS).read_text()
    )
    assert cgen.main(["--check", "--root", str(tree)]) == 0
    # A shim written by hand in capi/*.c is left out of the generated ones.
    (tree / "capi" / "frob.c").write_text("int gf_loader_frob(gf_loader *loader, const int64_t *levels,\n")
    assert cgen.main(["--root", str(tree)]) == 0
    assert "gf_loader_frob" not in (tree / cgen.C_SHIMS).read_text()


def test_release_headers_hold_the_abi(tree, capsys):
    header = tree / cgen.HEADER
    text = header.read_text()
    # 0.2.0's gf_edge_sampler_options ended with negative_weights: its mark goes.
    mark = "  /* -- an earlier layout ends here -- */\n"
    _edit(header, "  const DLTensor *negative_weights;\n" + mark, "  const DLTensor *negative_weights;\n")
    assert cgen.main(["--root", str(tree)]) == 1
    assert "gf_edge_sampler_options: 0.2.0's layout ends after negative_weights; mark it" in capsys.readouterr().err
    # A field moved, a signature changed, a function removed.
    header.write_text(text)
    _edit(header, "  int32_t replace;\n", "")
    _edit(header, "  int32_t frontier;\n", "  int32_t frontier;\n  int32_t replace;\n")
    _edit(header, "GF_API int gf_loader_start(gf_loader *loader, uint64_t epoch);", "")
    _edit(
        header,
        "GF_API int gf_loader_num_batches(const gf_loader *loader, int64_t *out);",
        "GF_API int gf_loader_num_batches(const gf_loader *loader, int32_t *out);",
    )
    assert cgen.main(["--root", str(tree)]) == 1
    err = capsys.readouterr().err
    assert "gf_sample_options: 0.1.0's fields are not a prefix of today's" in err
    assert "0.1.0's function gf_loader_start is gone" in err
    assert "gf_loader_num_batches: its signature differs from 0.1.0's (a changed call needs a _v2)" in err


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_bindings_match_the_compiler(tmp_path):
    """Every struct of the header, as the C compiler lays it out, is the
    generated ctypes struct: sizeof and each field's offset."""
    h = cgen.read_headers(REPO)
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "graphferry.h"', "int main(void) {"]
    for s in h.structs.values():
        name = s.name if s.name in h.opaque or not s.name.startswith("Arrow") else f"struct {s.name}"
        lines.append(f'  printf("{s.name} %zu\\n", sizeof({name}));')
        lines += [f'  printf("{s.name}.{f.name} %zu\\n", offsetof({name}, {f.name}));' for f in s.fields]
    lines += ["  return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run(["cc", "-std=c99", f"-I{REPO / 'include'}", "-o", str(exe), str(src)], check=True, timeout=120)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, timeout=60).stdout
    compiled = dict(line.rsplit(" ", 1) for line in out.splitlines())
    assert len(compiled) > 200
    for key, value in compiled.items():
        struct, _, field = key.partition(".")
        cls = getattr(_lib, struct)
        got = getattr(cls, field).offset if field else ctypes.sizeof(cls)
        assert got == int(value), f"{key}: ctypes {got}, C {value}"

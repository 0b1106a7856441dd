"""What ``python -m graphferry info`` reports: the facts a bug report needs.

The package's and the library's versions, the library's path and build id,
the backend this process loaded and why, the CPUs, the Python, torch, DGL and
PyG versions installed and whether each imports, and what the NVIDIA driver
sees. Nothing here imports torch, DGL or PyG (their versions are read from the
installed distributions' metadata, their imports tried in a child
interpreter: an installed DGL that does not import is the commonest report)
and nothing initialises CUDA in this process: the driver is probed
in a child interpreter (:func:`graphferry._native.backend.probe_driver`, run
from its file without importing graphferry), so that a driver that hangs or
ends its process costs the report one line, not the report.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from ._native import backend as _backend
from ._native import lib as _lib
from ._version import __version__

#: The distributions whose versions are reported (distribution name, label).
DISTRIBUTIONS = (("torch", "torch"), ("dgl", "dgl"), ("torch_geometric", "torch_geometric"), ("numpy", "numpy"))

#: The frameworks whose imports are tried (in this order, in one child).
FRAMEWORKS = ("torch", "dgl", "torch_geometric")

#: Seconds the child that probes the driver may take.
PROBE_TIMEOUT = 60.0

#: Seconds the child that imports the frameworks may take (torch, DGL and PyG
#: from a cold page cache on a busy machine: over a minute).
IMPORT_TIMEOUT = 300.0

_IMPORTS = """
import importlib, json, sys
def tried(name):
    try: return importlib.import_module(name) and "yes"
    except Exception as err: return f"no: {type(err).__name__}: {err}"
print(json.dumps({name: tried(name) for name in sys.argv[1:]}))
"""

_PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("gf_backend_probe", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
try:
    print(json.dumps(mod.probe_driver()))
except mod.BackendError as err:
    print(json.dumps({"error": str(err)}))
"""


def _distribution_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def backend_reason(environ: Any = os.environ) -> str:
    """Why this process loaded the library it did, in one sentence."""
    if _backend.ERROR:
        return f"{_backend.ERROR} (this report loaded the CPU library instead)"
    chosen = _backend.BACKEND
    if chosen == "explicit":
        return f"{_lib.ENV_LIB_PATH}={environ.get(_lib.ENV_LIB_PATH, '')} names the library"
    raw = environ.get(_backend.ENV_BACKEND)
    said = f"{_backend.ENV_BACKEND}={raw}" if raw else f"{_backend.ENV_BACKEND} is unset"
    if chosen == "cuda":
        drv = _backend.DRIVER or {}
        return (
            f"{said}, and the NVIDIA driver initialised (driver version {drv.get('driver_version')}, "
            f"{drv.get('devices')} device(s))"
        )
    return f"{said}: the CPU library is loaded unless {_backend.ENV_BACKEND}=cuda asks for the CUDA one"


def _child(code: str, args: list[str], timeout: float, what: str) -> tuple[dict[str, Any] | None, str]:
    """Runs ``code`` in a child interpreter: the last line it prints, as
    JSON, or None and why not (a child that hangs or crashes costs one line)."""
    try:
        proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"the {what} did not answer within {timeout:g} s"
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or [""])[-1]
        return None, f"the {what} ended with status {proc.returncode} {tail}".strip()
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def probe_gpu(timeout: float = PROBE_TIMEOUT) -> dict[str, Any]:
    """What the NVIDIA driver sees, asked in a child interpreter: ``visible``
    (bool), ``devices`` and ``driver_version`` when visible, else ``reason``."""
    found, why = _child(_PROBE, [_backend.__file__], timeout, "driver probe")
    if found is None:
        return {"visible": False, "reason": why}
    if "error" in found:
        # probe_driver speaks to a user who asked for the CUDA backend; here
        # only its finding matters.
        reason = found["error"].removeprefix(f"graphferry: {_backend.ENV_BACKEND}=cuda, but ")
        return {"visible": False, "reason": reason.removesuffix(f" Use {_backend.ENV_BACKEND}=cpu.")}
    return {"visible": True, **found}


def framework_imports(timeout: float = IMPORT_TIMEOUT) -> dict[str, str]:
    """Whether each framework of :data:`FRAMEWORKS` imports, tried in a child
    interpreter: "yes", "no: <the error>", "not installed" or "unknown: <why>"."""
    names = [n for n in FRAMEWORKS if importlib.util.find_spec(n) is not None]
    found, why = _child(_IMPORTS, names, timeout, "frameworks' import") if names else ({}, "")
    return {n: (found or {}).get(n, f"unknown: {why}") if n in names else "not installed" for n in FRAMEWORKS}


def collect(probe: bool = True) -> dict[str, Any]:
    """Every fact of the report, as a dict (``python -m graphferry info --json``)."""
    libdir = Path(_lib.__file__).resolve().parent.parent / "lib"
    cuda_lib = libdir / _backend.CUDA_LIB  # else: "not installed", and why when the build recorded it
    cuda = str(cuda_lib) if cuda_lib.is_file() else f"not installed {_backend.cuda_missing(libdir)}".rstrip()
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = os.cpu_count()
    facts: dict[str, Any] = {
        "graphferry": __version__,
        "library_version": _lib.LIB_VERSION,
        "library_path": str(_lib.LIB_PATH),
        "library_build_id": _lib.LIB_BUILD_ID,
        "backend": _backend.BACKEND,
        "backend_reason": backend_reason(),
        "cuda_library": cuda,
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
    }
    for dist, label in DISTRIBUTIONS:
        facts[label] = _distribution_version(dist)
    for name, imports in framework_imports().items():
        facts[f"{name}_imports"] = imports
    facts["cuda_visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
    facts["gpu"] = probe_gpu() if probe else {"visible": False, "reason": "not probed (--no-gpu)"}
    return facts


def format_facts(facts: dict[str, Any]) -> str:
    """The report as ``name: value`` lines."""
    lines = []
    for key, value in facts.items():
        if key == "gpu":
            if value.get("visible"):
                value = f"{value['devices']} device(s), driver version {value['driver_version']}"
            else:
                value = f"none visible: {value['reason']}"
        lines.append(f"{key}: {value}")
    return "\n".join(lines)

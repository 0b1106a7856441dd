"""Tags a graphferry wheel for the oldest manylinux its shared objects satisfy.

setuptools names the wheel ``py3-none-linux_x86_64``, a tag the package
index refuses. ``auditwheel show`` reads the ELF files inside (their libc
symbol versions and the libraries they need) and names the oldest manylinux
policy the wheel is consistent with; this retags the wheel to it with
``wheel tags`` (the files inside stay byte for byte as built: nothing is
grafted or patched) and runs ``auditwheel show`` again on the result to
check that the tag in the name is one auditwheel agrees with.

The CUDA library needs the NVIDIA driver's ``libcuda.so.1``, which a wheel
never carries and manylinux does not list, so auditwheel's overall tag for
the wheel is plain ``linux_x86_64``. The tag taken is auditwheel's
``sym_tag`` (the libc symbol versions of every shared object, the CUDA
library's included), on the condition that the driver is the only library
outside manylinux's list that any of them needs (as ``auditwheel repair
--exclude libcuda.so.1`` would allow).

    python python/tools/wheeltag.py WHEEL OUTDIR     prints the tagged wheel's path

Needs auditwheel and wheel (python/requirements.txt pins them).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The one library outside the wheel and manylinux's list that it may need:
#: the NVIDIA driver, which the CUDA library links and only loads under
#: GRAPHFERRY_BACKEND=cuda (graphferry/_native/backend.py).
DRIVER = "libcuda.so.1"
_POLICY = re.compile(r"^manylinux_\d+_\d+_\w+$")


def audit(wheel: Path) -> dict:
    """``auditwheel show --json WHEEL``, parsed."""
    proc = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", "--json", str(wheel)], capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        raise SystemExit(f"wheeltag: auditwheel show {wheel} failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout)


def policy(wheel: Path) -> str:
    """The oldest manylinux tag that every shared object of ``wheel``
    satisfies: auditwheel's tag from their libc symbol versions, provided
    that the only library they need beyond manylinux's list is the driver's.
    Raises SystemExit naming what stands in the way."""
    found = audit(wheel)
    plat = found["sym_tag"]
    if not _POLICY.match(plat):
        raise SystemExit(f"wheeltag: {wheel}'s libc symbols satisfy no manylinux policy (auditwheel: {plat})")
    external = set(found["external_libs"])
    if external - {DRIVER}:
        raise SystemExit(f"wheeltag: {wheel} needs {sorted(external)}, which a manylinux wheel cannot assume")
    if external:
        blocking = found["policy_upgrades"].get(plat, {}).get("libs_to_eliminate", [])
        if set(blocking) - {DRIVER}:
            raise SystemExit(f"wheeltag: for {plat}, auditwheel would also remove {sorted(blocking)}")
    elif found["overall_tag"] != plat:
        raise SystemExit(f"wheeltag: auditwheel tags {wheel} {found['overall_tag']}, its symbols {plat}")
    return plat


def tag(wheel: Path, outdir: Path) -> Path:
    """Retags ``wheel`` into ``outdir`` for :func:`policy`; returns the new
    wheel's path, checked again by auditwheel."""
    plat = policy(wheel)
    outdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / wheel.name
        shutil.copy2(wheel, work)
        proc = subprocess.run(
            [sys.executable, "-m", "wheel", "tags", "--remove", "--platform-tag", plat, str(work)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            raise SystemExit(f"wheeltag: wheel tags failed:\n{proc.stdout}\n{proc.stderr}")
        (tagged,) = Path(tmp).glob(f"*-{plat}.whl")
        out = outdir / tagged.name
        shutil.move(str(tagged), out)
    again = policy(out)
    if again != plat or not out.name.endswith(f"-py3-none-{plat}.whl"):
        raise SystemExit(f"wheeltag: auditwheel finds {out} consistent with {again}, not {plat}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    print(tag(Path(argv[0]), Path(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

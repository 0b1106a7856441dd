"""The fence around the CUDA library (graphferry/_native/backend.py).

What matters most: a process loads the CUDA library only when asked
(GRAPHFERRY_BACKEND=cuda), whether or not a GPU is visible; asking without a
usable GPU raises a clear error, never a process exit; the library's CUDA
calls leave the caller's CUDA state as they found it. These are tested end to
end in fresh interpreters that import a copy of the package whose lib/ holds
both libraries, reading /proc/self/maps, and, for the CUDA side, against the
fake driver of cuda/fakedriver (make fakecuda): a host-memory libcuda.so.1
whose devices, driver version and failures the environment sets. The same
tests marked ``gpu`` run against the real driver in tests/gpu/run.sh.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import graphferry
from graphferry._native import backend as _backend
from graphferry._native.backend import BackendError, choose, device_ordinal

REPO = Path(__file__).resolve().parents[2]
FAKE_DRIVER = REPO / "build" / "fakecuda"


def _libdir(tmp_path: Path, cuda: bool) -> Path:
    d = tmp_path / "lib"
    d.mkdir()
    (d / _backend.CPU_LIB).write_bytes(b"cpu")
    if cuda:
        (d / _backend.CUDA_LIB).write_bytes(b"cuda")
    return d


def _no_probe() -> dict:
    raise AssertionError("the driver must not be probed unless the CUDA backend is asked for")


@pytest.mark.parametrize("value", ["", "auto", "AUTO", " cpu ", "cpu"])
def test_cpu_unless_asked(tmp_path, value):
    both = _libdir(tmp_path, cuda=True)
    env = {_backend.ENV_BACKEND: value} if value else {}
    assert choose(both, env, _no_probe) == ("cpu", both / _backend.CPU_LIB, None)


def test_cuda_requested_probes_the_driver(tmp_path):
    both = _libdir(tmp_path, cuda=True)
    facts = {"driver_version": 12040, "devices": 1}
    assert choose(both, {_backend.ENV_BACKEND: "cuda"}, lambda: facts) == ("cuda", both / _backend.CUDA_LIB, facts)

    def no_driver() -> dict:
        raise BackendError("no driver here")

    with pytest.raises(BackendError, match="no driver here"):
        choose(both, {_backend.ENV_BACKEND: "cuda"}, no_driver)


def test_cuda_requested_without_library(tmp_path):
    with pytest.raises(BackendError, match="was not built"):
        choose(_libdir(tmp_path, cuda=False), {_backend.ENV_BACKEND: "cuda"}, _no_probe)


def test_invalid_backend(tmp_path):
    with pytest.raises(BackendError, match="GRAPHFERRY_BACKEND='gpu' is not one of auto, cpu, cuda"):
        choose(_libdir(tmp_path, cuda=True), {_backend.ENV_BACKEND: "gpu"}, _no_probe)


def test_device_ordinal():
    assert device_ordinal(3) == 3
    assert device_ordinal("cuda:2") == 2
    assert device_ordinal("cuda") in (0, device_ordinal(None))
    for bad in ("cpu", "cuda:x", -1, True):
        with pytest.raises((ValueError, TypeError)):
            device_ordinal(bad)


def test_probe_without_a_driver_is_a_clear_error():
    with pytest.raises(BackendError, match=r"libgraphferry-no-such-driver\.so\.1 cannot be loaded"):
        _backend.probe_driver("libgraphferry-no-such-driver.so.1")


def test_cuda_check_on_the_cpu_library_is_a_clear_error():
    if graphferry.backend() == "cuda":
        pytest.skip("this process loaded the CUDA library")
    with pytest.raises(BackendError, match="GRAPHFERRY_BACKEND=cuda is set before graphferry is imported"):
        graphferry.cuda_check()


# ---------------------------------------------------------------------------
# Fresh processes
# ---------------------------------------------------------------------------

_CHILD = r"""
import json, sys
try:
    import graphferry
    from graphferry._native import backend as _backend
    g = graphferry.Graph.from_coo([0, 1, 2, 3], [1, 2, 3, 0], num_nodes=4)
    sub = graphferry.sample_neighbors(g, [0, 1], [2, 2])
    loader = graphferry.Loader(g, [0, 1, 2, 3], [2, 2], batch_size=2)
    batches = sum(1 for _ in loader)
    outcome = {"backend": _backend.BACKEND, "library": graphferry.library_path(), "batches": batches}
except Exception as err:
    outcome = {"error": type(err).__name__ + ": " + str(err)}
maps = open("/proc/self/maps").read()
outcome["maps_cuda"] = "libgraphferry_cuda" in maps
outcome["maps_cpu"] = "libgraphferry.so" in maps
outcome["maps_driver"] = "libcuda.so" in maps
print(json.dumps(outcome))
"""


def _cuda_library() -> Path | None:
    for p in (
        REPO / "build" / "libgraphferry_cuda.so",
        REPO / "python" / "graphferry" / "lib" / "libgraphferry_cuda.so",
    ):
        if p.is_file():
            return p
    return None


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    """A copy of the package whose lib/ has the CPU library and the CUDA
    library (make lib-cuda builds it; make test does)."""
    cuda = _cuda_library()
    if cuda is None:
        pytest.fail("the CUDA library is not built: make lib-cuda")
    root = tmp_path_factory.mktemp("pkg")
    src = Path(graphferry.__file__).resolve().parent
    shutil.copytree(src, root / "graphferry", ignore=shutil.ignore_patterns("lib", "__pycache__"))
    lib = root / "graphferry" / "lib"
    lib.mkdir()
    shutil.copy(src / "lib" / _backend.CPU_LIB, lib / _backend.CPU_LIB)
    shutil.copy(cuda, lib / _backend.CUDA_LIB)
    return root


@pytest.fixture(scope="module")
def fake_driver() -> Path:
    if not (FAKE_DRIVER / "libcuda.so.1").is_file():
        pytest.fail(f"the fake CUDA driver is not built: make fakecuda (looked in {FAKE_DRIVER})")
    return FAKE_DRIVER


def _child_env(root: Path, backend: str | None, driver: Path | None = None, **extra: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GRAPHFERRY_LIB_PATH", _backend.ENV_BACKEND, "LD_LIBRARY_PATH") and not k.startswith("GF_FAKECUDA")
    }
    env["PYTHONPATH"] = str(root)
    if driver is not None:
        env["LD_LIBRARY_PATH"] = str(driver)
    if backend is not None:
        env[_backend.ENV_BACKEND] = backend
    env.update(extra)
    return env


def _run(root: Path, code: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=300)
    # A Go runtime's fatal error leads its stderr (the goroutines follow): show both ends.
    err = out.stderr if len(out.stderr) <= 6000 else f"{out.stderr[:3000]}\n[...]\n{out.stderr[-3000:]}"
    assert out.returncode == 0, f"exit {out.returncode}\nstdout: {out.stdout[-3000:]}\nstderr: {err}"
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", [None, "auto", "cpu"])
def test_cpu_process_never_loads_the_cuda_library(package_copy, backend):
    res = _run(package_copy, _CHILD, _child_env(package_copy, backend, CUDA_VISIBLE_DEVICES=""))
    assert "error" not in res, res
    assert res["backend"] == "cpu" and res["batches"] == 2
    assert res["library"].endswith("/graphferry/lib/libgraphferry.so")
    assert res["maps_cpu"] and not res["maps_cuda"]


_DRIVER_UNTOUCHED = r"""
import ctypes, json
# The fake driver's counters exist only once cuInit ran: -1 means nobody
# initialised the driver in this process.
stats = (ctypes.c_int64 * 16)()
outcome["driver_initialised"] = ctypes.CDLL("libcuda.so.1").gf_fakecuda_stats(0, stats) == 0
print(json.dumps(outcome))
"""


def test_visible_gpu_does_not_load_the_cuda_library(package_copy, fake_driver):
    """A GPU that the driver and PyTorch both report changes nothing unless
    the CUDA backend is asked for: the CUDA library is not loaded and the
    driver is not even initialised (PyTorch's import maps libcuda itself)."""
    code = "import torch\ntorch.cuda.is_available = lambda: True\n" + _CHILD + _DRIVER_UNTOUCHED
    res = _run(package_copy, code, _child_env(package_copy, None, fake_driver))
    assert "error" not in res, res
    assert res["backend"] == "cpu"
    assert res["maps_cpu"] and not res["maps_cuda"]
    assert res["driver_initialised"] is False


def test_cuda_requested_without_driver_is_a_clear_error(package_copy):
    res = _run(package_copy, _CHILD, _child_env(package_copy, "cuda"))
    assert res["error"].startswith(
        "BackendError: graphferry: GRAPHFERRY_BACKEND=cuda, but the NVIDIA driver library"
    ), res
    assert "this machine has no NVIDIA driver" in res["error"]
    assert not res["maps_cuda"] and not res["maps_cpu"]


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"GF_FAKECUDA_INIT_ERROR": "100"}, "the driver sees no CUDA device"),
        ({"GF_FAKECUDA_DEVICES": "0"}, "the driver sees no CUDA device"),
        ({"GF_FAKECUDA_INIT_ERROR": "35"}, "the NVIDIA driver is too old to initialise"),
        ({"GF_FAKECUDA_INIT_ERROR": "999"}, "failed to initialise: CUDA_ERROR_UNKNOWN (999)"),
    ],
)
def test_driver_failures_are_clear_errors_not_exits(package_copy, fake_driver, knobs, message):
    res = _run(package_copy, _CHILD, _child_env(package_copy, "cuda", fake_driver, **knobs))
    assert "error" in res and res["error"].startswith("BackendError"), res
    assert message in res["error"], res
    assert not res["maps_cuda"] and not res["maps_cpu"]


# A child that loads the CUDA library over the fake driver, checks devices,
# and watches the calling thread's current CUDA context around every call.
_CUDA_CHILD = textwrap.dedent(
    r"""
    import ctypes, json, os, sys
    out = {}
    try:
        import graphferry
        from graphferry._native import lib as _lib
        drv = ctypes.CDLL("libcuda.so.1")
        def current():
            c = ctypes.c_void_p()
            assert drv.cuCtxGetCurrent(ctypes.byref(c)) == 0
            return c.value
        out["backend"] = graphferry.backend()
        checks = json.loads(os.environ.get("CHECKS", "[0]"))
        out["checks"] = []
        for ordinal in checks:
            try:
                out["checks"].append(graphferry.cuda_check(ordinal))
            except graphferry.BackendError as err:
                out["checks"].append({"error": str(err)})
        if os.environ.get("DISCIPLINE"):
            dev = ctypes.c_int()
            assert drv.cuDeviceGet(ctypes.byref(dev), 1) == 0
            user = ctypes.c_void_p()
            assert drv.cuCtxCreate_v2(ctypes.byref(user), 0, dev) == 0  # pushed: current
            before = current()
            calls = {
                "check 0": lambda: _lib.CUDA.check(0),
                "check 1": lambda: _lib.CUDA.check(1),
                "selfcheck": lambda: _lib.CUDA.selfcheck(0, 400, 1, 3),
                "fault node": lambda: _lib.CUDA.fault(0, "node"),
                "fault launch": lambda: _lib.CUDA.fault(1, "launch"),
                "cpu api": lambda: graphferry.sample_neighbors(
                    graphferry.Graph.from_coo([0, 1, 2], [1, 2, 0], num_nodes=3), [0], [2]),
            }
            out["after"] = {}
            for name, fn in calls.items():
                res = fn()
                out["after"][name] = current() == before
                if name.startswith("fault"):
                    out[name] = res
            out["selfcheck"] = _lib.CUDA.selfcheck(0, 400, 1, 3)
    except Exception as err:
        out["error"] = type(err).__name__ + ": " + str(err)
    maps = open("/proc/self/maps").read()
    out["maps_cuda"] = "libgraphferry_cuda" in maps
    out["maps_cpu"] = "libgraphferry.so" in maps
    print(json.dumps(out))
    """
)


def test_cuda_backend_over_the_fake_driver(package_copy, fake_driver):
    env = _child_env(package_copy, "cuda", fake_driver, GF_FAKECUDA_DEVICES="2", CHECKS="[0, 1, 2]")
    res = _run(package_copy, _CUDA_CHILD, env)
    assert "error" not in res, res
    assert res["backend"] == "cuda" and res["maps_cuda"] and not res["maps_cpu"]
    ok0, ok1, bad = res["checks"]
    for ordinal, rep in ((0, ok0), (1, ok1)):
        assert rep["ordinal"] == ordinal and rep["fake_driver"] is True, rep
        assert rep["ptx_target"] == "sm_70" and rep["compute_major"] >= 7, rep
        assert rep["build_id"] == graphferry.library_build_id() != "unknown"
    assert "device 2 does not exist: the driver sees 2 device(s)" in bad["error"]


def test_cuda_calls_leave_the_callers_context(package_copy, fake_driver):
    """With a context of the caller's own current (on device 1), every
    graphferry call, on device 0 or 1, leaves it current; the deliberate
    faults are reported naming the kernel, and sampling works after them."""
    env = _child_env(package_copy, "cuda", fake_driver, GF_FAKECUDA_DEVICES="2", DISCIPLINE="1")
    res = _run(package_copy, _CUDA_CHILD, env)
    assert "error" not in res, res
    assert res["after"] and all(res["after"].values()), res["after"]
    assert "kernel gf_count: frontier node 1099511627776 is outside the graph" in res["fault node"]
    assert "gf_count" in res["fault launch"] and "CUDA_ERROR_INVALID_VALUE" in res["fault launch"]
    assert res["selfcheck"]["Schemes"] == 144


_HOOK_FAILURES = textwrap.dedent(
    r"""
    import ctypes, json
    import graphferry, torch
    from graphferry import _device, sampling
    from graphferry._native import lib as _lib
    drv = ctypes.CDLL("libcuda.so.1")
    out = {}
    def attempt(name, fn):
        try:
            out[name] = fn()
        except Exception as err:
            out[name] = "error: " + str(err)
    # The fault hook's GPU cannot let go of its primary context at Close.
    drv.gf_fakecuda_fail.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    assert drv.gf_fakecuda_fail(b"cuDevicePrimaryCtxRelease", 0, 1, 201) == 0
    attempt("close", lambda: _lib.CUDA.fault(0, "node"))
    # A panic inside a hook disables the CUDA side for the process.
    attempt("panic", lambda: _lib.CUDA.fault(0, "panic"))
    attempt("after", lambda: _lib.CUDA.check(0))
    g = graphferry.Graph.from_coo([0, 1, 2], [1, 2, 0], num_nodes=3)
    attempt("loader", lambda: sampling.Loader.from_options(
        g, torch.tensor([0, 1]), graphferry.SampleOptions([2], seed=1), batch_size=2, device=_device.DeviceOptions(0)))
    attempt("cpu api", lambda: graphferry.sample_neighbors(g, [0], [2]).nodes.tolist())
    print(json.dumps(out, default=str))
    """
)


def test_cuda_hooks_report_close_errors_and_a_panic_disables_them(package_copy, fake_driver):
    """A hook reports an error of the GPU's Close (here releasing the
    primary context fails) instead of dropping it; a hook that panics reports
    the panic and disables the CUDA side of the library: later hooks and
    device loaders are refused saying why, the CPU engine still works.
    Before the fix the Close error was dropped and hooks ran on after a
    panic."""
    res = _run(package_copy, _HOOK_FAILURES, _child_env(package_copy, "cuda", fake_driver))
    assert res["close"].startswith("error: ") and "releasing the primary context" in res["close"], res
    assert res["panic"].startswith("error: ") and "deliberate panic" in res["panic"], res
    assert "disabled in this process: gfcuda_fault panicked" in res["after"], res
    assert "disabled in this process" in res["loader"], res
    assert res["cpu api"] == [0, 2], res


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        (
            {"GF_FAKECUDA_DRIVER": "11080"},
            "the NVIDIA driver is too old: it supports CUDA 11.8, and graphferry's kernels (PTX ISA 8.1) "
            "need CUDA 12.1 or newer (driver 530.30.02 or newer)",
        ),
        ({"GF_FAKECUDA_CC": "6.1"}, "has compute capability 6.1; graphferry's kernels need 7.0 or newer"),
    ],
)
def test_unusable_device_is_a_clear_error(package_copy, fake_driver, knobs, message):
    res = _run(package_copy, _CUDA_CHILD, _child_env(package_copy, "cuda", fake_driver, **knobs))
    assert "error" not in res, res
    assert message in res["checks"][0]["error"], res


def test_cuda_hooks_refuse_a_forked_child(package_copy, fake_driver):
    code = textwrap.dedent(
        r"""
        import ctypes, json, os
        import graphferry
        from graphferry._native import lib as _lib
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            buf = ctypes.create_string_buffer(512)
            rc = _lib.CUDA._check(0, buf, len(buf))  # the raw C hook: its own guard
            try:
                _lib.CUDA.check(0)
                py = "no error"
            except graphferry.BackendError as err:
                py = str(err)
            os.write(w, json.dumps({"rc": rc, "c": buf.value.decode(), "py": py}).encode())
            os._exit(0)
        os.waitpid(pid, 0)
        print(os.read(r, 4096).decode())
        """
    )
    res = _run(package_copy, code, _child_env(package_copy, "cuda", fake_driver))
    assert res["rc"] == 1 and "forked" in res["c"], res
    assert "forked child" in res["py"], res


# ---------------------------------------------------------------------------
# On a GPU (tests/gpu/run.sh runs these with GRAPHFERRY_BACKEND=cuda)
# ---------------------------------------------------------------------------


def _gpu_and_cuda_backend() -> bool:
    return graphferry.backend() == "cuda"


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_and_cuda_backend(), reason="needs GRAPHFERRY_BACKEND=cuda on a GPU machine")
def test_gpu_process_loads_the_cuda_library_only_when_asked(package_copy):
    for backend, cuda in ((None, False), ("cuda", True)):
        code = "import torch; torch.zeros(1, device='cuda')\n" + _CHILD
        res = _run(package_copy, code, _child_env(package_copy, backend))
        assert "error" not in res, res
        assert res["maps_cuda"] is cuda and res["maps_cpu"] is not cuda, res

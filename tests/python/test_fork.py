"""A process forked after graphferry was loaded gets GraphferryError on every
call, promptly, instead of hanging on threads it does not have."""

from __future__ import annotations

import ctypes
import json
import os
import select
import signal
import time

import pytest
import torch

import graphferry
from graphferry._native import lib as _lib
from graphferry.errors import GF_EFORK, GraphferryError

TIMEOUT_S = 60


def run_in_fork(child_fn) -> dict:
    """Runs child_fn() in a forked child and returns the dict it returns,
    sent back through a pipe; fails (instead of hanging) after TIMEOUT_S."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        code = 0
        try:
            os.close(read_fd)
            try:
                result = child_fn()
            except BaseException as err:  # report, do not raise
                result = {"child_error": f"{type(err).__name__}: {err}"}
            os.write(write_fd, json.dumps(result).encode())
            os.close(write_fd)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write_fd)
    chunks = []
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                pytest.fail(f"the forked child did not answer within {TIMEOUT_S}s (hung in graphferry?)")
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}"
    return json.loads(b"".join(chunks).decode())


def attempt(fn) -> dict:
    try:
        value = fn()
    except GraphferryError as err:
        return {"raised": type(err).__name__, "code": err.code, "message": str(err)}
    except BaseException as err:
        return {"raised": type(err).__name__, "message": str(err)}
    return {"raised": None, "value": repr(value)}


def test_calls_in_forked_child_raise(tiny):
    g = graphferry.Graph.from_csc(tiny.indptr, tiny.indices)
    g.set_node_data("feat", torch.randn(tiny.num_nodes, 2))
    loader = graphferry.Loader(g, torch.arange(10), [2], batch_size=4, feature_names=["feat"])
    it = iter(loader)
    next(it)  # the engine's threads are running when we fork
    handle = g.handle

    def child():
        out = ctypes.c_int64()
        return {
            "num_nodes": attempt(lambda: g.num_nodes),
            "sample": attempt(lambda: graphferry.sample_neighbors(g, torch.tensor([1]), [2])),
            "from_coo": attempt(lambda: graphferry.Graph.from_coo(tiny.src, tiny.dst)),
            "get_node_data": attempt(lambda: g.get_node_data("feat")),
            "loader_next": attempt(lambda: next(it)),
            "new_epoch": attempt(lambda: iter(loader)),
            "version": attempt(lambda: _lib.gf_version_number()),
            # the C library's own guard, below the Python one
            "raw_status": _lib.gf_graph_num_nodes.raw(handle, ctypes.byref(out)),
            "raw_sample_closed": attempt(lambda: (g.close(), loader.close())),
        }

    result = run_in_fork(child)
    assert "child_error" not in result, result
    for name in ("num_nodes", "sample", "from_coo", "get_node_data", "loader_next", "new_epoch", "version"):
        r = result[name]
        assert r["raised"] == "GraphferryError", (name, r)
        assert r["code"] == GF_EFORK, (name, r)
        assert "forked child" in r["message"], (name, r)
    assert result["raw_status"] == GF_EFORK, "the C library returns GF_EFORK in a forked child"
    # closing in the child does nothing (and does not hang)
    assert result["raw_sample_closed"]["raised"] is None, result["raw_sample_closed"]

    # the parent is unaffected
    assert g.num_nodes == tiny.num_nodes
    rest = list(it)
    assert sum(s.batch_size for s in rest) == 6
    loader.close()
    g.close()


def test_torch_dataloader_fork_worker_fails_cleanly(tiny):
    """A forked DataLoader worker calling the sampler fails with graphferry's
    fork error (not a hang)."""
    pytest.importorskip("torch_geometric")
    from torch_geometric.data import Data
    from torch_geometric.loader import NodeLoader

    import graphferry.pyg as gfpyg

    data = Data(x=torch.randn(tiny.num_nodes, 2), edge_index=torch.stack([tiny.src, tiny.dst]))
    loader = NodeLoader(
        data,
        node_sampler=gfpyg.Sampler(data, [2]),
        batch_size=4,
        num_workers=1,
        multiprocessing_context="fork",
        timeout=TIMEOUT_S,
    )
    with pytest.raises(Exception) as info:
        next(iter(loader))
    assert "forked child" in str(info.value)
    assert "GraphferryError" in str(info.value) or isinstance(info.value, GraphferryError)


def test_batches_freed_in_forked_child(tiny):
    """Tensors of batches the parent received can be dropped in a forked child
    (their deleters release the buffers without the library's pool), and the
    parent's loader goes on."""
    g = graphferry.Graph.from_csc(tiny.indptr, tiny.indices)
    g.set_node_data("big", torch.ones(tiny.num_nodes, 1 << 16))  # 256 KiB rows: pooled buffers
    loader = graphferry.Loader(g, torch.arange(12), [3], batch_size=4, feature_names=["big"])
    it = iter(loader)
    first = next(it)
    assert first.node_data["big"].numel() * 4 >= 1 << 20
    del first  # back to the pool
    held = next(it)

    total = float(held.node_data["big"].sum())

    def child():  # no torch compute here: torch's thread pool does not survive fork
        import gc

        nonlocal held
        held = None
        gc.collect()
        return {"dropped": True}

    result = run_in_fork(child)
    assert result == {"dropped": True}, result
    assert float(held.node_data["big"].sum()) == total
    assert sum(s.batch_size for s in it) == 4
    del held
    loader.close()
    g.close()

"""Every subgraph loader kind on the one engine path (issue 29): DGL's
SAINTSampler (node, edge, walk), ClusterGCNSampler and ShaDowKHopSampler
through graphferry.dgl.DataLoader, and PyG's GraphSAINT samplers (node,
edge, walk), ShaDowKHopSampler and ClusterLoader. Each runs its epochs
through EngineLoader: state_dict mid-epoch then load_state_dict on a new
loader (here, and in a fresh process) yields exactly the remaining batches;
pin_memory=True / a CUDA device take the one hand-off path; shuffled epochs
run on one engine loader (never reopened). And PyG NeighborLoader's
induced and bidirectional edge lists, made by the engine's threads, equal
what the Python code made of the same directional samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from subgraph_kinds import digest, graph_data, make

import graphferry._hostmem as _hostmem
import graphferry._loader as _loader
import graphferry.pyg as gp
from graphferry.pyg import base as pyg_base

dgl = pytest.importorskip("dgl")
pytest.importorskip("pymetis")


CUDA = torch.cuda.is_available()
HERE = Path(__file__).resolve().parent

KINDS = [
    "dgl_saint_node",
    "dgl_saint_edge",
    "dgl_saint_walk",
    "dgl_cluster",
    "dgl_shadow",
    "pyg_saint_node",
    "pyg_saint_edge",
    "pyg_saint_walk",
    "pyg_shadow",
    "pyg_cluster",
]


def same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert digest(x) == digest(y)


@pytest.mark.parametrize("kind", KINDS)
def test_state_dict_mid_epoch_resumes_the_rest(kind):
    """state_dict after k batches of the second epoch, a new loader with
    the same arguments, load_state_dict: exactly the batches the first
    loader went on to yield, then the epoch after as it would have come."""
    loader = make(kind)
    list(loader)  # epoch 0
    it = iter(loader)
    k = 2
    head = [next(it) for _ in range(k)]
    state = loader.state_dict()
    assert state["epoch"] == 1 and state["batches_yielded"] == k
    json.dumps(state)  # a plain dict (saved with a checkpoint)
    rest = list(it)
    following = list(loader)
    assert len(head) + len(rest) == len(loader) and rest
    other = make(kind)
    other.load_state_dict(state)
    same(list(other), rest)
    if kind not in ("pyg_shadow", "pyg_cluster"):
        # (a torch-ordered epoch after that is torch's generator's next
        # order, which the caller restores, as with PyG's own loaders)
        same(list(other), following)
    loader.close()
    other.close()


@pytest.mark.parametrize("kind", ["pyg_cluster", "pyg_shadow", "dgl_cluster", "dgl_saint_edge"])
def test_resume_in_a_fresh_process(kind, tmp_path):
    """The state saved here, loaded by a loader made in a fresh Python
    process: the rest of the interrupted epoch (a torch-ordered epoch's
    order travels in the state)."""
    loader = make(kind)
    it = iter(loader)
    next(it)
    next(it)
    state = loader.state_dict()
    rest = [digest(b) for b in it]
    (tmp_path / "state.json").write_text(json.dumps(state))
    script = f"""
import json, sys
sys.path.insert(0, {str(HERE)!r})
from subgraph_kinds import digest, make
loader = make({kind!r})
loader.load_state_dict(json.loads(open(sys.argv[1]).read()))
json.dump([digest(b) for b in loader], open(sys.argv[2], "w"))
"""
    env_path = str(Path(_loader.__file__).resolve().parents[1])
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            str(tmp_path / "state.json"),
            str(tmp_path / "rest.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": env_path},
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "rest.json").read_text()) == rest
    loader.close()


@pytest.mark.parametrize("kind", KINDS)
def test_pinned_hand_off_is_the_engine_path(kind):
    """PyG's pin_memory=True: the engine writes the batches into the shared
    page-locked allocator (ordinary memory without CUDA) and the epoch is
    the engine path's _Epoch; DGL's: on the CPU the batches come through
    the same _Epoch, with a CUDA device through the prefetch step's
    _DeviceEpoch from page-locked memory (no .to(device) of their own)."""
    if kind.startswith("pyg"):
        if CUDA:
            pinned = make(kind, shuffle=False, pin_memory=True)
        else:
            with pytest.warns(UserWarning, match="no accelerator"):
                pinned = make(kind, shuffle=False, pin_memory=True)
        alloc = pinned._transfer.allocator
        assert alloc is _hostmem.shared_allocator(CUDA) and pinned._transfer.device is None
        plain = make(kind, shuffle=False)
        it = iter(pinned)
        assert isinstance(it, _loader._Epoch)
        got = list(it)
        same(got, list(plain))
        key = "edge_index"
        assert all(alloc.owns(b[key]) for b in got)
        assert pinned._loaders and all(lo.allocator is alloc for lo in pinned._loaders)
        if CUDA:
            assert all(b[key].is_pinned() for b in got)
        pinned.close()
        plain.close()
        return
    loader = make(kind)
    assert isinstance(iter(loader), _loader._Epoch)
    if CUDA:
        gpu = make(kind, device="cuda")
        it = iter(gpu)
        assert isinstance(it, _loader._DeviceEpoch)
        first = next(it)
        assert all(lo.allocator is not None and lo.allocator.pinned for lo in gpu._loaders)
        graph = first[2] if isinstance(first, tuple) else first
        assert graph.device.type == "cuda"
        gpu.close()
    loader.close()


@pytest.mark.parametrize("kind", KINDS)
def test_shuffled_epochs_run_on_one_engine_loader(kind):
    """Three shuffled epochs: one engine loader, started three times (its
    statistics count them), the batches differing between epochs; close()
    from another thread while the loop waits gives a clear error."""
    loader = make(kind)
    epochs = [list(loader) for _ in range(3)]
    assert len(loader._loaders) == 1
    engine = loader._loaders[0]
    assert loader._last_loader is engine and not engine.closed
    st = loader.stats()
    assert st.epochs == 3 and st.total.consumer.batches == 3 * len(loader)
    assert any(digest(a) != digest(b) for a, b in zip(epochs[0], epochs[1]))
    loader.close()


def test_close_from_another_thread_and_reopen_of_pyg_loaders():
    """A PyG subgraph loader closed mid-epoch: the epoch raises a clear
    error; the next epoch reopens the engine's threads (PyG's loaders are
    reusable after close)."""
    import threading

    from graphferry import GraphferryError

    loader = make("pyg_cluster", shuffle=False)
    it = iter(loader)
    next(it)
    t = threading.Thread(target=loader.close)
    t.start()
    t.join()
    with pytest.raises(GraphferryError, match="closed"):
        list(it)
    assert len(list(loader)) == len(loader)


# ---------------------------------------------------------------------------
# NeighborLoader's induced and bidirectional edge lists, by the engine


def _stable_bidirectional(row, col, edge):
    """PyG's to_bidirectional with a stable sort (whose pick among a pair's
    ids torch's unstable sort leaves open): the reference of the engine's."""
    r = torch.cat([row, col])
    c = torch.cat([col, row])
    e = torch.cat([edge, edge])
    n = int(max(r.max(), c.max())) + 1 if r.numel() else 1
    key = c * n + r
    key, perm = key.sort(stable=True)
    last = torch.ones_like(key, dtype=torch.bool)
    last[:-1] = key[1:] != key[:-1]
    return r[perm][last], c[perm][last], e[perm][last]


@pytest.mark.parametrize("kind,disjoint", [("induced", False), ("bidirectional", False), ("bidirectional", True)])
def test_engine_induced_and_bidirectional_equal_the_python_results(kind, disjoint):
    data = graph_data(n=150)
    kw = dict(batch_size=16, shuffle=True, seed=5, disjoint=disjoint)
    ours = gp.NeighborLoader(data, [4, 3], subgraph_type=kind, **kw)
    plain = gp.NeighborLoader(data, [4, 3], **kw)
    assert ours._loaders[0]._coo == {"induced": 3, "bidirectional": 2}[kind]  # the engine makes them
    n = 0
    for a, b in zip(ours, plain):
        graph = plain._graph
        out = pyg_base.Output(b.n_id, b.edge_index[0], b.edge_index[1], b.e_id, b.get("batch"), None, None)
        ref = pyg_base.finish(out, graph, kind)  # what the Python code made
        assert torch.equal(a.n_id, b.n_id)
        assert torch.equal(a.edge_index[0], ref.row) and torch.equal(a.edge_index[1], ref.col)
        assert "num_sampled_nodes" not in a and "num_sampled_edges" not in a
        assert torch.equal(a.edge_weight, data.edge_weight[a.e_id]) and torch.equal(a.x, data.x[a.n_id])
        if kind == "induced":
            assert torch.equal(a.e_id, ref.edge)
        else:
            row, col, edge = _stable_bidirectional(out.row, out.col, out.edge)
            assert torch.equal(a.edge_index[0], row) and torch.equal(a.edge_index[1], col)
            assert torch.equal(a.e_id, edge)
            # where a pair has one id, the Python result's id is the engine's
            ids: dict = {}
            for r, c, e in zip(
                torch.cat([out.row, out.col]).tolist(),
                torch.cat([out.col, out.row]).tolist(),
                torch.cat([out.edge, out.edge]).tolist(),
            ):
                ids.setdefault((r, c), set()).add(e)
            for i, (r, c) in enumerate(zip(row.tolist(), col.tolist())):
                if len(ids[(r, c)]) == 1:
                    assert int(ref.edge[i]) == int(a.e_id[i])
        n += 1
    assert n == len(ours)
    ours.close()
    plain.close()


def test_a_torch_order_that_is_not_a_permutation_is_refused():
    """PyG's ClusterLoader with a torch sampler that drops clusters: the
    engine takes an epoch's order only as a permutation, and says so."""
    from graphferry import GraphferryError

    loader = make("pyg_cluster", shuffle=False, sampler=torch.utils.data.SubsetRandomSampler(range(3)))
    with pytest.raises(GraphferryError, match="want a permutation"):
        list(loader)
    loader.close()

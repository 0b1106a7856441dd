"""Resumable loaders: state_dict() / load_state_dict() (torchdata's
StatefulDataLoader protocol) on graphferry.Loader, the DGL and PyG loaders and
distributed loaders.

A run is interrupted after k batches, k drawn at random (seeded) over two
epochs; its state goes to a fresh process, which opens the loader again (with
another thread and patch count, on the disk tier or not) and yields the rest.
The batches of both, concatenated, must equal an uninterrupted
run's, bit for bit; the resumed process samples only the batches it yields.
"""

from __future__ import annotations

import hashlib
import json
import random
import traceback

import pytest
import torch
import torch.multiprocessing as mp
from test_distributed import _free_port, _td, collect

import graphferry
from graphferry import distributed

from conftest import REPO

CORA = REPO / "examples" / "data" / "cora"
SEEDS = torch.arange(0, 2700, 5, dtype=torch.int64)  # 540 seeds: 9 batches of 64
EPOCHS = 2
JOIN_S = 120


def _hash(*tensors: torch.Tensor) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()


def _open_graph(cfg: dict) -> graphferry.Graph:
    return graphferry.Graph.open(
        CORA,
        num_patches=cfg.get("patches", 1),
        partition="random" if cfg.get("patches", 1) > 1 else "range",
        seed=3,
        feature_tier=cfg.get("tier", "auto"),
        cache_bytes=1 << 20 if cfg.get("tier") == "disk" else None,
    )


def _loader(kind: str, g: graphferry.Graph, cfg: dict, comm=None):
    """The loader of kind and a function digesting one of its batches."""
    threads = cfg.get("threads", 1)
    if kind == "loader":
        cls = distributed.DistributedLoader if comm is not None else graphferry.Loader
        extra = {"comm": comm} if comm is not None else {}
        loader = cls(
            g,
            SEEDS,
            [5, 3],
            batch_size=64,
            shuffle=True,
            seed=11,
            feature_names=["feat"],
            label_names=["label"],
            num_threads=threads,
            **extra,
        )
        return loader, lambda s: _hash(s.nodes, s.hop_counts, *(b.indices for b in s.blocks), s.node_data["feat"])
    if kind == "dgl":
        import graphferry.dgl as gdgl

        sampler = gdgl.NeighborSampler([3, 5], prefetch_node_feats=["feat"], prefetch_labels=["label"])
        loader = gdgl.DataLoader(g, SEEDS, sampler, batch_size=64, shuffle=True, seed=11, num_threads=threads)
        return loader, lambda b: _hash(b[0], b[1], b[2][0].srcdata["feat"], *b[2][-1].edges())
    import graphferry.pyg as gpyg

    loader = gpyg.NeighborLoader(
        g, num_neighbors=[5, 3], input_nodes=SEEDS, batch_size=64, shuffle=True, seed=11, num_threads=threads
    )
    return loader, lambda b: _hash(b.n_id, b.edge_index, b.feat)


def _phase(kind: str, cfg: dict, k: int | None, state: dict | None, comm=None) -> tuple[list[str], dict | None]:
    """Runs EPOCHS epochs of a fresh loader: interrupted after k batches
    (returning their digests and the state), or resumed from state (the
    rest)."""
    g = _open_graph(cfg)
    loader, digest = _loader(kind, g, cfg, comm)
    out: list[str] = []
    if state is None:

        def stop() -> tuple[list[str], dict]:
            saved = json.loads(json.dumps(loader.state_dict()))  # what a checkpoint file holds
            loader.close()  # as the process would at a crash: nothing more is delivered
            return out, saved

        if k == 0:
            return stop()
        for _ in range(EPOCHS):
            for batch in loader:  # a training step, then a checkpoint
                out.append(digest(batch))
                if len(out) == k:
                    return stop()
        return stop()
    loader.load_state_dict(state)
    first = state["epoch"] if state["epoch"] is not None else state["next_epoch"]
    for _ in range(EPOCHS - first):
        out += [digest(b) for b in loader]
    assert loader.state_dict()["next_epoch"] == EPOCHS
    # Only the batches yielded were sampled: none of those before the state.
    assert loader.stats().total.sampler.batches == len(out)
    loader.close()
    return out, None


def _child(kind: str, cfg: dict, k, state, results) -> None:
    try:
        results.put(("ok", _phase(kind, cfg, k, state)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def _in_fresh_process(kind: str, cfg: dict, k=None, state=None):
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    p = ctx.Process(target=_child, args=(kind, cfg, k, state, results), daemon=True)
    p.start()
    try:
        status, payload = results.get(timeout=JOIN_S)
    finally:
        p.join(timeout=10)
        if p.is_alive():
            p.kill()
    assert status == "ok", payload
    return payload


@pytest.mark.parametrize(
    "kind, before, after",
    [
        ("loader", {"threads": 1}, {"threads": 2, "patches": 3}),  # single thread, resumed multi-threaded
        ("loader", {"threads": 2}, {"threads": 1, "tier": "disk"}),  # multi-threaded, resumed on the disk tier
        ("dgl", {"threads": 2, "tier": "disk"}, {"threads": 1}),
        ("pyg", {"threads": 1}, {"threads": 2, "patches": 2}),
    ],
)
def test_resume_in_a_fresh_process(kind, before, after):
    whole, _ = _phase(kind, {"threads": 1}, None, None)
    n = len(whole) // EPOCHS
    assert n == 9 and len(set(whole)) == len(whole)
    rng = random.Random(f"{kind}-{before}")
    for k in sorted({rng.randrange(0, EPOCHS * n + 1) for _ in range(4)} | {0, n, EPOCHS * n}):
        # In this process, on fresh loaders (cheap): every k drawn.
        first, state = _phase(kind, before, k, None)
        rest, _ = _phase(kind, after, None, state)
        assert first + rest == whole, f"interrupted after {k} batches (in process)"
    for k in [rng.randrange(1, EPOCHS * n)]:
        # The state crosses a restart: saved here (as JSON, _phase), the rest
        # in a fresh process (one spawn a case keeps the test short).
        first, state = _phase(kind, before, k, None)
        assert len(first) == k
        if state["epoch"] is None:  # between epochs
            assert state["next_epoch"] * n == k
        else:
            assert state["epoch"] * n + state["batches_yielded"] == k
        rest, _ = _in_fresh_process(kind, after, state=state)
        assert first + rest == whole, f"interrupted after {k} batches"


def test_state_dict_in_process():
    """The same loader, and a second one, resume; a state of other settings
    is refused, naming them; load_state_dict drops the epoch in progress."""
    g = _open_graph({})
    cfg = {"threads": 1}
    loader, digest = _loader("loader", g, cfg)
    ref = [digest(b) for b in loader]
    assert loader.state_dict()["epoch"] is None and loader.state_dict()["next_epoch"] == 1
    it = loader.epoch(0)
    got = [digest(next(it)) for _ in range(4)]
    state = loader.state_dict()
    assert (state["epoch"], state["batches_yielded"]) == (0, 4)
    loader.load_state_dict(state)  # the same loader: the epoch restarts at batch 4
    assert got + [digest(b) for b in loader] == ref
    other = graphferry.Loader(g, SEEDS, [5, 3], batch_size=32, shuffle=True, seed=11, feature_names=["feat"])
    with pytest.raises(ValueError, match="batch_size 64 .this loader: 32"):
        other.load_state_dict(state)
    reseeded = graphferry.Loader(g, SEEDS, [5, 3], batch_size=64, shuffle=True, seed=12, feature_names=["feat"])
    with pytest.raises(ValueError, match="seed"):
        reseeded.load_state_dict(state)
    with pytest.raises(ValueError, match="not a graphferry loader state"):
        other.load_state_dict({"epoch": 0})
    bad = dict(state, batches_yielded=99)
    with pytest.raises(ValueError, match="outside"):
        loader.load_state_dict(bad)
    # Resuming at the end of an epoch yields nothing more of it, then the next.
    loader.load_state_dict(dict(state, batches_yielded=len(loader)))
    assert list(loader) == []
    assert loader.state_dict()["next_epoch"] == 1
    for lo in (loader, other, reseeded):
        lo.close()
    g.close()


def _rank(rank: int, size: int, port: int, k, state, cfg, results) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=_td(30)
        )
        comm = distributed.TorchComm(timeout=20)
        cfg = dict(cfg, patches=size)
        if state:
            # Another rank's state is refused, naming the rank.
            g = _open_graph(cfg)
            loader, _ = _loader("loader", g, cfg, comm)
            try:
                loader.load_state_dict(state[1 - rank])
                raise AssertionError(f"rank {rank} took rank {1 - rank}'s state")
            except ValueError as err:
                assert f"rank {1 - rank} (this loader: {rank})" in str(err), err
            loader.close()
            g.close()
        results.put((rank, "ok", _phase("loader", cfg, k, state[rank] if state else None, comm)))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def _ranks(size: int, k, state, cfg) -> dict:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_rank, args=(r, size, port, k, state, cfg, results), daemon=True) for r in range(size)]
    out = collect(procs, results, JOIN_S)
    assert sorted(out) == list(range(size)), out
    for r, (status, payload) in out.items():
        assert status == "ok", f"rank {r}: {payload}"
    return {r: payload for r, (_, payload) in out.items()}


def test_resume_ranks():
    """Two ranks over Gloo interrupted after the same k batches (training
    steps run in lockstep) resume in fresh processes, with another thread
    count, each with its own state: each rank's batches are its share of the
    single-process epochs; a rank's state refuses another rank."""
    g = _open_graph({})
    loader, digest = _loader("loader", g, {"threads": 1})
    per_epoch = [[digest(b) for b in loader] for _ in range(EPOCHS)]  # G = 9 batches an epoch
    loader.close()
    g.close()
    size, n_group = 2, len(per_epoch[0])
    share = -(-n_group // size)  # 5 a rank, rank 1 padded with batch 0
    want = {
        r: [per_epoch[e][(j * size + r) % n_group] for e in range(EPOCHS) for j in range(share)] for r in range(size)
    }
    k = random.Random(5).randrange(1, EPOCHS * share)
    first = _ranks(size, k, None, {"threads": 1})
    states = {r: first[r][1] for r in range(size)}
    assert states[0]["fingerprint"]["rank"] == 0 and states[1]["fingerprint"]["world_size"] == 2
    rest = _ranks(size, None, states, {"threads": 2})
    for r in range(size):
        assert first[r][0] + rest[r][0] == want[r], f"rank {r}, interrupted after {k}"

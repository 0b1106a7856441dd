"""graphferry.distributed over per-rank folders: each rank opens only its own part.

Ranks are processes spawned with torch.multiprocessing over Gloo on 127.0.0.1.
The partitions (dsp, hybrid, self-reliant) are written by the parent with
graphferry.partition. For dsp and hybrid, each rank's batches, node data
fetched from the owning ranks included, must equal the single-process loader's
batches ``rank, rank + size, ...`` (padded) on the whole dataset, bit for bit;
a self-reliant rank samples its own seeds with no exchange.
"""

from __future__ import annotations

import time
import traceback
from pathlib import Path

import pytest
import testdata
import torch
import torch.multiprocessing as mp
from test_distributed import BATCH, EPOCHS, FANOUTS, _free_port, _loader_kwargs, _td, digest

import graphferry
from graphferry import distributed
from graphferry.partition import partition

JOIN_S = 120


def _worker(rank: int, size: int, port: int, jobs: list, results) -> None:
    """One rank: runs every job (name, partition dir, seeds or None) on its part."""
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=_td(30)
        )
        comm = distributed.TorchComm(timeout=20)
        out = {}
        for name, path, seeds in jobs:
            part = distributed.PartGraph.open(path, rank)
            assert part.rank == rank and part.num_parts == size
            if part.layout == "self-reliant":
                own = part.train_idx
                loader = distributed.DistributedLoader(part, own, FANOUTS, comm=comm, **_loader_kwargs())
                owned = set(own.tolist())
                counts = []
                for epoch in range(EPOCHS):
                    n = 0
                    for sub in loader.epoch(epoch):
                        assert set(sub.nodes[: sub.hop_counts[0]].tolist()) <= owned
                        assert sub.node_data["feat"].shape[0] == sub.nodes.shape[0]
                        n += 1
                    counts.append(n)
                out[name] = (len(loader), counts, int(own.numel()))
            else:
                gathered = distributed.global_seeds(part, comm, "train_mask")
                loader = distributed.DistributedLoader(part, seeds, FANOUTS, comm=comm, **_loader_kwargs())
                got = [[digest(sub) for sub in loader.epoch(e)] for e in range(EPOCHS)]
                # Plain lists: a tensor would cross the queue as shared memory
                # that dies with this process.
                out[name] = (len(loader), got, gathered.tolist(), part.num_owned, part.num_edges)
            loader.close()
            part.close()
        results.put((rank, "ok", out))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def _run(size: int, jobs: list) -> dict[int, tuple]:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, size, port, jobs, results), daemon=True) for r in range(size)]
    for p in procs:
        p.start()
    out: dict[int, tuple] = {}
    deadline = time.monotonic() + JOIN_S
    try:
        while len(out) < size and time.monotonic() < deadline:
            try:
                rank, status, payload = results.get(timeout=1)
            except Exception:  # queue.Empty
                if all(not p.is_alive() for p in procs) and results.empty():
                    break
                continue
            out[rank] = (status, payload)
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
    codes = [p.exitcode for p in procs]
    assert sorted(out) == list(range(size)), f"ranks that reported: {sorted(out)}, exit codes {codes}: {out}"
    for rank in range(size):
        assert out[rank][0] == "ok", out[rank][1]
    return {rank: out[rank][1] for rank in range(size)}


def _reference(path: Path, seeds: torch.Tensor) -> tuple[list[list[str]], torch.Tensor, int]:
    g = graphferry.Graph.open(path)
    try:
        loader = graphferry.Loader(g, seeds, FANOUTS, **_loader_kwargs())
        return [[digest(sub) for sub in loader.epoch(e)] for e in range(EPOCHS)], g.train_idx, g.num_edges
    finally:
        g.close()


@pytest.fixture(scope="module")
def citeseer_dir(tmp_path_factory) -> Path:
    src = testdata.dataset_dir("citeseer")
    if src is None:
        pytest.skip("CiteSeer is not available")
    dst = tmp_path_factory.mktemp("citeseer_gf")
    graphferry.convert_npy(src, dst)
    return dst


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("tiny_gf")
    graphferry.generate("tiny", dst, seed=3)
    return dst


def _check_equal(out: dict, name: str, size: int, ref: list[list[str]], train_idx: torch.Tensor, num_edges: int):
    total = len(ref[0])
    per_rank = -(-total // size)
    owned = 0
    for rank in range(size):
        got_per_rank, got, gathered, num_owned, part_edges = out[rank][name]
        assert got_per_rank == per_rank
        assert gathered == train_idx.tolist(), f"{name}: global_seeds on rank {rank}"
        owned += num_owned
        if "dsp" in name:
            assert part_edges < num_edges, f"{name}: rank {rank} holds every edge"
        for e in range(EPOCHS):
            want = [ref[e][(k * size + rank) % total] for k in range(per_rank)]
            assert got[e] == want, f"{name}: rank {rank} of {size}, epoch {e}"
    return owned


def test_two_ranks_open_their_own_folders(citeseer_dir, tiny_dir, tmp_path):
    cite_seeds = torch.arange(0, 2800, 7, dtype=torch.int64)  # 7 batches: padding on 2 ranks
    tiny_seeds = torch.arange(0, 1024, 3, dtype=torch.int64)
    jobs, refs = [], {}
    for name, src, layout, method, seeds in [
        ("citeseer-dsp", citeseer_dir, "dsp", "random", cite_seeds),
        ("citeseer-hybrid", citeseer_dir, "hybrid", "range", cite_seeds),
        ("tiny-dsp", tiny_dir, "dsp", "random", tiny_seeds),
    ]:
        dst = tmp_path / name
        partition(src, dst, parts=2, method=method, layout=layout, seed=1)
        jobs.append((name, str(dst), seeds))
        refs[name] = _reference(src, seeds)
    self_reliant = tmp_path / "citeseer-self-reliant"
    partition(citeseer_dir, self_reliant, parts=2, method="random", layout="self-reliant", hops=2, seed=1)
    jobs.append(("citeseer-self-reliant", str(self_reliant), None))

    out = _run(2, jobs)
    for name, (ref, train_idx, num_edges) in refs.items():
        owned = _check_equal(out, name, 2, ref, train_idx, num_edges)
        assert owned == graphferry.Graph.open(citeseer_dir if "citeseer" in name else tiny_dir).num_nodes
    # Self-reliant: every rank runs the largest rank's number of batches.
    (n0, counts0, own0), (n1, counts1, own1) = out[0]["citeseer-self-reliant"], out[1]["citeseer-self-reliant"]
    assert n0 == n1 == max(-(-own0 // BATCH), -(-own1 // BATCH))
    assert counts0 == counts1 == [n0] * EPOCHS


@pytest.mark.slow
def test_four_ranks_dsp(citeseer_dir, tmp_path):
    seeds = torch.arange(0, 2800, 7, dtype=torch.int64)
    dst = tmp_path / "citeseer-dsp4"
    partition(citeseer_dir, dst, parts=4, method="random", layout="dsp", seed=2)
    ref, train_idx, num_edges = _reference(citeseer_dir, seeds)
    out = _run(4, [("citeseer-dsp4", str(dst), seeds)])
    _check_equal(out, "citeseer-dsp4", 4, ref, train_idx, num_edges)


def test_part_open_errors(citeseer_dir, tmp_path):
    dst = tmp_path / "p"
    partition(citeseer_dir, dst, parts=2, method="range", layout="dsp")
    with pytest.raises(graphferry.GraphferryError, match=r"rank = 5 is outside \[0, 2\)"):
        distributed.PartGraph.open(dst, 5)
    with pytest.raises(graphferry.GraphferryError):
        distributed.PartGraph.open(citeseer_dir, 0)
    part = distributed.PartGraph.open(dst, 1, verify=True)
    assert part.layout == "dsp" and part.num_owned == part.owned_nodes().numel()
    assert part.get_node_data("feat").shape[0] == part.num_owned
    train = part.train_idx
    assert bool((train >= part.owned_nodes()[0]).all())
    with pytest.raises(graphferry.GraphferryError, match="not a graph handle"):
        part.set_node_data("x", torch.zeros(part.num_nodes))  # a whole-graph call
    part.close()
    part.close()

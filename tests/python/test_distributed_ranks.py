"""graphferry.distributed over per-rank folders: each rank opens only its own part.

Ranks are processes spawned with torch.multiprocessing over Gloo on 127.0.0.1.
The partitions (dsp, hybrid, self-reliant) are written by the parent with
graphferry.partition. For dsp and hybrid, each rank's batches, node data
fetched from the owning ranks included, must equal the single-process loader's
batches ``rank, rank + size, ...`` (padded) on the whole dataset, bit for bit;
a self-reliant rank samples its own seeds with no exchange.
"""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest
import testdata
import torch
import torch.multiprocessing as mp
from test_distributed import BATCH, EPOCHS, FANOUTS, _dgl_epochs, _free_port, _loader_kwargs, _td, collect, digest

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
            if name.endswith("-dgl"):
                out[name] = _dgl_epochs(part, seeds, comm)  # graphferry.dgl.DataLoader(part, ..., comm=comm)
            elif part.layout == "self-reliant":
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
    out = collect(procs, results, JOIN_S)
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
    # graphferry.dgl.DataLoader over a part, against the same loader on the whole graph.
    jobs.append(("citeseer-dsp-dgl", jobs[0][1], cite_seeds))
    g = graphferry.Graph.open(citeseer_dir)
    dgl_ref = _dgl_epochs(g, cite_seeds)
    g.close()
    self_reliant = tmp_path / "citeseer-self-reliant"
    partition(citeseer_dir, self_reliant, parts=2, method="random", layout="self-reliant", hops=2, seed=1)
    jobs.append(("citeseer-self-reliant", str(self_reliant), None))

    out = _run(2, jobs)
    for name, (ref, train_idx, num_edges) in refs.items():
        owned = _check_equal(out, name, 2, ref, train_idx, num_edges)
        assert owned == graphferry.Graph.open(citeseer_dir if "citeseer" in name else tiny_dir).num_nodes
    total = len(dgl_ref[0])
    for rank in (0, 1):
        for e in range(EPOCHS):
            want = [dgl_ref[e][(k * 2 + rank) % total] for k in range(-(-total // 2))]
            assert out[rank]["citeseer-dsp-dgl"][e] == want, f"dgl: rank {rank}, epoch {e}"
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


# ---------------------------------------------------------------------------
# Training: 2 ranks with DDP over their own dsp folders of Cora.

CORA = Path(__file__).resolve().parents[2] / "examples" / "data" / "cora"
TRAIN_FANOUTS = [10, 10]
TRAIN_EPOCHS = 15


class _Sage(torch.nn.Module):
    """Two GraphSAGE-mean layers over the engine's blocks, in plain torch."""

    def __init__(self, in_feats: int, hidden: int, classes: int):
        super().__init__()
        self.self_w = torch.nn.ModuleList([torch.nn.Linear(in_feats, hidden), torch.nn.Linear(hidden, classes)])
        self.neigh_w = torch.nn.ModuleList(
            [torch.nn.Linear(in_feats, hidden, bias=False), torch.nn.Linear(hidden, classes, bias=False)]
        )

    def forward(self, sub, x: torch.Tensor) -> torch.Tensor:
        h = x / x.sum(1, keepdim=True).clamp(min=1)
        for i, block in enumerate(reversed(sub.blocks)):  # outermost hop first
            counts = (block.indptr[1:] - block.indptr[:-1]).clamp(min=1).unsqueeze(1)
            agg = torch.zeros(block.num_dst, h.shape[1]).index_add_(
                0, block.dst_positions() - block.dst_offset, h[block.indices]
            )
            dst = h[block.dst_offset : block.dst_offset + block.num_dst]
            h = self.self_w[i](dst) + self.neigh_w[i](agg / counts)
            if i == 0:
                h = torch.relu(h)
        return h


def _train(loader_of, epochs: int, ddp: bool):
    """Trains _Sage on the batches of loader_of("train"), returns the model."""
    torch.manual_seed(0)
    model = _Sage(1433, 32, 7)
    if ddp:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    train = loader_of("train_mask")
    for epoch in range(epochs):
        model.train()
        for sub in train.epoch(epoch):
            loss = torch.nn.functional.cross_entropy(model(sub, sub.node_data["feat"]), sub.labels["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
    train.close()
    return model


def _correct(model, loader) -> tuple[int, int]:
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for sub in loader.epoch(0):
            pred = model(sub, sub.node_data["feat"]).argmax(1)
            correct += int((pred == sub.labels["label"]).sum())
            total += int(sub.hop_counts[0])
    loader.close()
    return correct, total


def _train_worker(rank: int, size: int, port: int, path: str, results) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=_td(60)
        )
        comm = distributed.TorchComm(timeout=30)
        part = distributed.PartGraph.open(path, rank)
        kw = dict(feature_names=["feat"], label_names=["label"], num_threads=1)

        def loader_of(mask: str, shuffle: bool = True, batch: int = 16):
            seeds = distributed.global_seeds(part, comm, mask)
            return distributed.DistributedLoader(
                part, seeds, TRAIN_FANOUTS, comm=comm, batch_size=batch, shuffle=shuffle, seed=1, **kw
            )

        model = _train(loader_of, TRAIN_EPOCHS, ddp=True)
        # 1000 test nodes in batches of 100: 10 batches, 5 per rank, no padding.
        correct, total = _correct(model.module, loader_of("test_mask", shuffle=False, batch=100))
        counts = torch.tensor([correct, total], dtype=torch.int64)
        dist.all_reduce(counts)
        results.put((rank, "ok", counts.tolist()))
        part.close()
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


@pytest.mark.slow  # two trainings, about 20 s on 2 cores: make test-accuracy, beside the other training runs
def test_two_rank_training_matches_single_process(tmp_path):
    if not (CORA / "graphferry.json").exists():
        pytest.skip("examples/data/cora is not available")
    g = graphferry.Graph.open(CORA)
    kw = dict(feature_names=["feat"], label_names=["label"], num_threads=1)

    def loader_of(mask: str, shuffle: bool = True, batch: int = 32):
        seeds = g._mask_index(mask)
        return graphferry.Loader(g, seeds, TRAIN_FANOUTS, batch_size=batch, shuffle=shuffle, seed=1, **kw)

    model = _train(loader_of, TRAIN_EPOCHS, ddp=False)
    correct, total = _correct(model, loader_of("test_mask", shuffle=False, batch=100))
    g.close()
    single = correct / total

    dst = tmp_path / "cora-dsp"
    partition(CORA, dst, parts=2, method="random", layout="dsp", seed=0)
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_train_worker, args=(r, 2, port, str(dst), results), daemon=True) for r in range(2)]
    for p in procs:
        p.start()
    out = {}
    try:
        for _ in range(2):
            rank, status, payload = results.get(timeout=JOIN_S)
            out[rank] = (status, payload)
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
    for rank in (0, 1):
        assert out[rank][0] == "ok", out[rank][1]
    correct2, total2 = out[0][1]
    assert out[1][1] == out[0][1]
    assert total2 == total == 1000
    two = correct2 / total2
    # Two ranks of 16 seeds a step with averaged gradients against one
    # process of 32: different batches, the same amount of training.
    print(f"accuracy: one process {single:.3f}, two ranks {two:.3f}")
    assert single > 0.7 and two > 0.7, (single, two)
    assert abs(single - two) < 0.05, (single, two)

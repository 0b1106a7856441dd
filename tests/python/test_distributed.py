"""graphferry.distributed: ranks as processes over torch.distributed (Gloo).

Two (and four) ranks are spawned with torch.multiprocessing (start method "spawn": the
engine must never run in a forked child) on Gloo over 127.0.0.1, on CiteSeer.
Each rank's batches must equal the single-process loader's batches
``rank, rank + 2, ...`` (padded), bit for bit; a rank that raises must make
the other fail with a clear error within the group's time-out, not hang.
"""

from __future__ import annotations

import hashlib
import socket
import time
import traceback
from pathlib import Path

import pytest
import testdata
import torch
import torch.multiprocessing as mp

import graphferry
from graphferry import distributed

FANOUTS = [5, 3]
BATCH = 64
SEED = 17
EPOCHS = 2
JOIN_S = 90  # every scenario ends well within this, or the test fails


def digest(sub: graphferry.SampledSubgraph) -> str:
    """A hash of everything a batch holds."""
    h = hashlib.sha256()
    tensors = [sub.nodes, sub.hop_counts, sub.input_index]
    for b in sub.blocks:
        tensors += [b.indptr, b.indices, b.edge_ids]
    tensors += [sub.node_data["feat"], sub.labels["label"]]
    for t in tensors:
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()


def _loader_kwargs() -> dict:
    return dict(
        batch_size=BATCH,
        shuffle=True,
        seed=SEED,
        feature_names=["feat"],
        label_names=["label"],
        num_threads=1,
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, size: int, port: int, path: str, seeds: torch.Tensor, scenario: str, results) -> None:
    """One rank: its epochs' digests (or its error) go to results."""
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=_td(30)
        )
        comm = distributed.TorchComm(timeout=20, method="p2p" if scenario == "p2p" else "auto")
        g = graphferry.Graph.open(path, num_patches=size, partition="random", seed=5)
        if scenario == "dgl":
            out = _dgl_epochs(g, seeds, comm)
            results.put((rank, "ok", (comm.method, len(out[0]), out)))
            dist.destroy_process_group()
            return
        loader = distributed.DistributedLoader(g, seeds, FANOUTS, comm=comm, **_loader_kwargs())
        out = []
        for epoch in range(EPOCHS):
            got = []
            for i, sub in enumerate(loader.epoch(epoch)):
                if scenario == "raise" and rank == 1 and i == 1:
                    raise RuntimeError("rank 1 fails on purpose")
                got.append(digest(sub))
            out.append(got)
        results.put((rank, "ok", (comm.method, len(loader), out)))
        loader.close()
        g.close()
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def _dgl_epochs(g: graphferry.Graph, seeds: torch.Tensor, comm=None) -> list[list[str]]:
    """Digests of graphferry.dgl.DataLoader's epochs (with comm: this rank's share)."""
    import graphferry.dgl as gdgl

    sampler = gdgl.NeighborSampler(list(reversed(FANOUTS)), prefetch_node_feats=["feat"], prefetch_labels=["label"])
    loader = gdgl.DataLoader(g, seeds, sampler, batch_size=BATCH, shuffle=True, seed=SEED, comm=comm, num_threads=1)
    out = []
    for _ in range(EPOCHS):
        got = []
        for input_nodes, output_nodes, blocks in loader:
            h = hashlib.sha256()
            for t in [input_nodes, output_nodes, blocks[0].srcdata["feat"], blocks[-1].dstdata["label"]]:
                h.update(t.contiguous().numpy().tobytes())
            for b in blocks:
                for t in b.edges():
                    h.update(t.numpy().tobytes())
            got.append(h.hexdigest())
        out.append(got)
    loader.close()
    return out


def _td(seconds: float):
    import datetime

    return datetime.timedelta(seconds=seconds)


def _run(size: int, path: Path, seeds: torch.Tensor, scenario: str) -> dict[int, tuple]:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(target=_worker, args=(r, size, port, str(path), seeds, scenario, results), daemon=True)
        for r in range(size)
    ]
    return collect(procs, results, JOIN_S)


def collect(procs: list, results, join_s: float, exit_s: float = 5) -> dict[int, tuple]:
    """Starts the ranks' processes and returns what each reported on
    results, ``rank -> (status, payload)``, once every rank has or join_s
    passed; then waits at most exit_s for each to exit, and kills it."""
    for p in procs:
        p.start()
    out: dict[int, tuple] = {}
    deadline = time.monotonic() + join_s
    try:
        while len(out) < len(procs) and time.monotonic() < deadline:
            try:
                rank, status, payload = results.get(timeout=1)
            except Exception:  # queue.Empty
                if all(not p.is_alive() for p in procs) and results.empty():
                    break
                continue
            out[rank] = (status, payload)
    finally:
        for p in procs:
            p.join(timeout=exit_s)
            if p.is_alive():
                p.kill()
    return out


@pytest.fixture(scope="module")
def citeseer_dir(tmp_path_factory) -> Path:
    src = testdata.dataset_dir("citeseer")
    if src is None:
        pytest.skip("CiteSeer is not available")
    dst = tmp_path_factory.mktemp("citeseer_gf")
    graphferry.convert_npy(src, dst)
    return dst


@pytest.fixture(scope="module")
def seeds() -> torch.Tensor:
    # 400 seeds spread over CiteSeer's 3,327 nodes: 7 batches of 64, which 2
    # ranks do not divide (padding).
    return torch.arange(0, 2800, 7, dtype=torch.int64)


def _reference(path: Path, seeds: torch.Tensor) -> list[list[str]]:
    g = graphferry.Graph.open(path)
    try:
        loader = graphferry.Loader(g, seeds, FANOUTS, **_loader_kwargs())
        return [[digest(sub) for sub in loader.epoch(e)] for e in range(EPOCHS)]
    finally:
        g.close()


@pytest.mark.parametrize(("size", "scenario"), [(2, "auto"), (2, "p2p"), (4, "auto")])
def test_ranks_equal_single_process(citeseer_dir, seeds, size, scenario):
    ref = _reference(citeseer_dir, seeds)
    total = len(ref[0])
    assert total == 7
    out = _run(size, citeseer_dir, seeds, scenario)
    assert sorted(out) == list(range(size)), f"ranks that reported: {out}"
    per_rank = -(-total // size)  # the ranks short of a batch are padded
    for rank in range(size):
        status, payload = out[rank]
        assert status == "ok", payload
        method, got_per_rank, got = payload
        assert method == ("p2p" if scenario == "p2p" else "all_to_all")
        assert got_per_rank == per_rank
        for e in range(EPOCHS):
            want = [ref[e][(k * size + rank) % total] for k in range(per_rank)]
            assert got[e] == want, f"rank {rank} of {size}, epoch {e}"


def test_rank_that_raises_fails_the_other(citeseer_dir, seeds):
    start = time.monotonic()
    out = _run(2, citeseer_dir, seeds, "raise")
    elapsed = time.monotonic() - start
    assert sorted(out) == [0, 1], f"ranks that reported: {out}"
    assert out[1][0] == "error" and "rank 1 fails on purpose" in out[1][1]
    status, payload = out[0]
    assert status == "error", "rank 0 finished although rank 1 died"
    # The engine's error names the failed exchange and the host's message.
    assert "gf_comm" in payload and "rank 0 of 2" in payload, payload
    assert elapsed < JOIN_S


def test_arguments_checked_without_torch_distributed(citeseer_dir, seeds):
    # A Communicator subclass that never exchanges: argument errors come first.
    class Never(distributed.Communicator):
        pass

    g = graphferry.Graph.open(citeseer_dir, num_patches=2)
    try:
        with pytest.raises(TypeError, match="'comm' must be"):
            distributed.DistributedLoader(g, seeds, FANOUTS, comm=object(), seed=1)
        with pytest.raises(ValueError, match="num_patches=3"):
            distributed.DistributedLoader(g, seeds, FANOUTS, comm=Never(0, 3), seed=1)
        with pytest.raises(ValueError, match="rank"):
            Never(2, 2)
        # A communicator whose exchanges raise: the consumer gets the message.
        loader = distributed.DistributedLoader(g, seeds, FANOUTS, comm=Never(0, 2), seed=1, batch_size=BATCH)
        with pytest.raises(graphferry.GraphferryError, match="rank 0 of 2: NotImplementedError"):
            next(iter(loader))
        loader.close()
    finally:
        g.close()


def test_torchcomm_needs_init():
    import torch.distributed as dist

    if dist.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(RuntimeError, match="init_process_group first"):
        distributed.TorchComm()


def test_dgl_dataloader_with_comm(citeseer_dir, seeds):
    pytest.importorskip("dgl")
    g = graphferry.Graph.open(citeseer_dir)
    try:
        ref = _dgl_epochs(g, seeds)
    finally:
        g.close()
    total = len(ref[0])
    out = _run(2, citeseer_dir, seeds, "dgl")
    assert sorted(out) == [0, 1], f"ranks that reported: {out}"
    for rank in (0, 1):
        status, payload = out[rank]
        assert status == "ok", payload
        _method, per_rank, got = payload
        assert per_rank == 4
        for e in range(EPOCHS):
            assert got[e] == [ref[e][(k * 2 + rank) % total] for k in range(per_rank)], f"rank {rank} epoch {e}"


def _settle_worker(port: int, results) -> None:
    """One rank: what TorchComm._settle says about its exchanges' tensors."""
    import torch.distributed as dist

    try:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1, timeout=_td(30))
        comm = distributed.TorchComm(timeout=20)
        for _ in range(20):  # tensors the callers drop at once
            comm.exchange_sizes(torch.arange(1, dtype=torch.int64))
            comm.all_to_all(torch.arange(8, dtype=torch.uint8), [8], [8])
        released = comm._settle(timeout=5.0)
        left = len(comm._given)
        kept = comm.all_to_all(torch.arange(8, dtype=torch.uint8), [8], [8])  # a caller still holds this one
        start = time.monotonic()
        waited_for_held = not comm._settle(timeout=0.2) and time.monotonic() - start >= 0.2
        del kept
        after_release = comm._settle(timeout=5.0)
        results.put((0, "ok", (released, left, waited_for_held, after_release)))
        del comm  # settles, then lets the group go
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((0, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def test_torchcomm_settles_its_tensors_before_its_group_goes():
    # torch < 2.8: a Gloo group destroyed while its worker still releases a
    # collective's tensor (dropped by Python first) deadlocks the process, so a
    # TorchComm waits until Gloo let go of every tensor it gave the group
    # before the group can go (its end, interpreter exit). The wait ends when
    # they are released and is bounded when a caller keeps one.
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    proc = ctx.Process(target=_settle_worker, args=(_free_port(), results), daemon=True)
    out = collect([proc], results, JOIN_S)
    assert out.get(0, ("missing", None))[0] == "ok", out
    assert out[0][1] == (True, 0, True, True)
    assert proc.exitcode == 0


class _Spy:
    """torch.distributed as a TorchComm calls it, noting the memory (data
    pointer, bytes) of every uint8 tensor handed to a transfer."""

    def __init__(self, dist):
        self._dist = dist
        self.handed: list[tuple[str, int, int]] = []

    def __getattr__(self, name: str):
        return getattr(self._dist, name)

    def _note(self, what: str, *tensors) -> None:
        self.handed += [(what, t.data_ptr(), t.numel()) for t in tensors if t.dtype == torch.uint8 and t.numel()]

    def all_to_all_single(self, out, inp, *args, **kwargs):
        self._note("recv", out)
        self._note("send", inp)
        return self._dist.all_to_all_single(out, inp, *args, **kwargs)

    def isend(self, t, *args, **kwargs):
        self._note("send", t)
        return self._dist.isend(t, *args, **kwargs)

    def irecv(self, t, *args, **kwargs):
        self._note("recv", t)
        return self._dist.irecv(t, *args, **kwargs)


def _engine_memory_worker(rank: int, port: int, path: str, seeds: torch.Tensor, method: str, results) -> None:
    """One of two ranks: its batches' digests, whether every byte it handed
    to torch.distributed lay in the engine's exchange memory, and digests of
    the messages read straight from that memory (sent per peer, received per
    peer, by exchange)."""
    import ctypes

    import torch.distributed as dist

    from graphferry._native.lib import DLManagedTensor

    class EngineMemory(distributed.TorchComm):
        def _c_all_to_all(self, user, send, send_sizes, recv, recv_sizes):
            self._dist.handed.clear()  # the size exchange's
            self.blocks = []  # the engine's send and recv memory: (address, bytes)
            for p, sizes in ((send, send_sizes), (recv, recv_sizes)):
                t = DLManagedTensor.from_address(p).dl_tensor
                self.blocks.append((t.data or 0, t.shape[0], sizes[: self.size]))
            rc = super()._c_all_to_all(user, send, send_sizes, recv, recv_sizes)
            messages = []
            for address, _n, sizes in self.blocks:  # read where the engine reads them
                at, parts = address, []
                for n in sizes:
                    parts.append(hashlib.sha256(ctypes.string_at(at, n) if n else b"").hexdigest())
                    at += n
                messages.append(parts)
            self.exchanges.append(messages)
            inside = True
            for kind, ptr, n in self._dist.handed:  # in the engine's send block, or its recv block
                address, size, _ = self.blocks[kind == "recv"]
                inside = inside and address <= ptr and ptr + n <= address + size
            self.in_place.append((inside, len(self._dist.handed)))
            return rc

    try:
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=2,
            timeout=_td(30),
        )
        comm = EngineMemory(timeout=20, method=method)
        comm._dist, comm.exchanges, comm.in_place = _Spy(dist), [], []
        g = graphferry.Graph.open(path, num_patches=2, partition="random", seed=5)
        loader = distributed.DistributedLoader(g, seeds, FANOUTS, comm=comm, **_loader_kwargs())
        out = [[digest(sub) for sub in loader.epoch(e)] for e in range(EPOCHS)]
        loader.close()
        g.close()
        results.put((rank, "ok", (out, comm.in_place, comm.exchanges)))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


@pytest.mark.parametrize("method", ["all_to_all", "p2p"])
def test_exchanges_move_the_engines_memory_in_place(citeseer_dir, seeds, method):
    # The engine hands TorchComm its exchange memory as DLPack tensors
    # (gf_comm.all_to_all_dl) and every byte torch.distributed sends or
    # receives lies in it: sent from the engine's send block, received into
    # its recv block, where the engine reads it (no copy in Python). What a
    # rank reads from its recv block is what the other wrote to its send
    # block, and the batches are the single process's.
    ref = _reference(citeseer_dir, seeds)
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(
            target=_engine_memory_worker,
            args=(r, port, str(citeseer_dir), seeds, method, results),
            daemon=True,
        )
        for r in range(2)
    ]
    out = collect(procs, results, JOIN_S)
    assert sorted(out) == [0, 1], f"ranks that reported: {out}"
    for rank in (0, 1):
        assert out[rank][0] == "ok", out[rank][1]
    got = {rank: out[rank][1] for rank in (0, 1)}
    for rank in (0, 1):
        batches, in_place, _ = got[rank]
        for e in range(EPOCHS):
            assert batches[e] == [ref[e][(k * 2 + rank) % 7] for k in range(4)], f"rank {rank} epoch {e}"
        assert in_place, "no data exchange"
        assert all(inside for inside, _ in in_place), in_place
        assert sum(n for _, n in in_place) > 0, "nothing handed to torch.distributed"
    ex0, ex1 = got[0][2], got[1][2]
    assert len(ex0) == len(ex1)
    for k, ((sent0, recv0), (sent1, recv1)) in enumerate(zip(ex0, ex1)):
        assert recv1[0] == sent0[1] and recv0[1] == sent1[0], f"exchange {k}"
        assert recv0[0] == sent0[0] and recv1[1] == sent1[1], f"exchange {k}: a rank's own message"

"""graphferry.pyg.NeighborLoader with comm=: ranks as processes over a partitioned Cora.

Two ranks are spawned (torch.multiprocessing, "spawn") on Gloo over 127.0.0.1;
each opens only its own folder of a dsp partition of examples/data/cora
(graphferry.partition, as ``python -m graphferry partition`` writes it), or the
whole graph with one patch per rank. Each rank's ``Data`` batches, node
attributes fetched from the owning rank included, must equal the
single-process ``graphferry.pyg.NeighborLoader`` batches ``rank, rank + 2,
...`` (padded) on the whole graph, field for field, as the engine promises for
its distributed loaders. The same holds for typed batches over a replicated
``graphferry.HeteroGraph``: PyG's NeighborLoader and LinkNeighborLoader
(binary and triplet negatives) and graphferry.dgl's node and edge DataLoader.
"""

from __future__ import annotations

import hashlib
import time
import traceback
import warnings
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from test_distributed import _free_port, _td, collect, digest

import graphferry
from graphferry import distributed
from graphferry.partition import partition

pytest.importorskip("torch_geometric")

CORA = Path(__file__).resolve().parents[2] / "examples" / "data" / "cora"
NUM_NEIGHBORS = [5, 3]
BATCH = 32
SEED = 11
EPOCHS = 2
JOIN_S = 120
# graphferry.Loader's settings for the engine's own DistributedLoader.
ENGINE_KW = dict(
    batch_size=BATCH,
    shuffle=True,
    seed=SEED,
    feature_names=["feat"],
    label_names=["label"],
    num_threads=2,
)


def _hetero_graph(num_patches: int = 1) -> graphferry.HeteroGraph:
    """test_hetero_pyg's typed graph (three node types, five relations)."""
    from test_hetero_pyg import NUM, make_hetero

    data = make_hetero()
    edges = {et: tuple(data[et].edge_index) for et in data.edge_types}
    return graphferry.HeteroGraph.from_coo(NUM, edges, num_patches=num_patches, partition="random", seed=3)


def _read_epochs(loader, digest_of) -> list[list[str]]:
    """``digest_of(batch)`` of every batch of EPOCHS epochs of loader, which
    is closed after."""
    try:
        return [[digest_of(b) for b in loader] for _ in range(EPOCHS)]
    finally:
        loader.close()


def _hetero_epochs(hetero, comm=None) -> list[list[str]]:
    """Digests of typed batches: per type n_id, per relation edge_index and e_id."""
    from test_hetero_pyg import FANOUTS

    from graphferry.pyg import NeighborLoader

    def digest_of(b) -> str:
        h = hashlib.sha256()
        for nt in b.node_types:
            h.update(b[nt].n_id.numpy().tobytes() + repr(list(b[nt].num_sampled_nodes)).encode())
        for et in b.edge_types:
            h.update(b[et].edge_index.numpy().tobytes() + b[et].e_id.numpy().tobytes())
        return h.hexdigest()

    loader = NeighborLoader(
        hetero,
        FANOUTS,
        input_nodes="paper",
        batch_size=16,
        shuffle=True,
        seed=SEED,
        num_threads=1,
        comm=comm,
    )
    return _read_epochs(loader, digest_of)


def _dgl_hetero_epochs(hetero, comm=None) -> list[list[str]]:
    """Digests of graphferry.dgl.DataLoader's typed batches over the same graph."""
    import graphferry.dgl as gdgl

    def digest_of(batch) -> str:
        input_nodes, output_nodes, blocks = batch
        h = hashlib.sha256()
        for nodes in (input_nodes, output_nodes):
            for nt in sorted(nodes):
                h.update(nt.encode() + nodes[nt].numpy().tobytes())
        for block in blocks:
            for et in block.canonical_etypes:
                for t in block.edges(etype=et):
                    h.update(repr(et).encode() + t.numpy().tobytes())
        return h.hexdigest()

    sampler = gdgl.NeighborSampler([2, 3])
    seeds = {"paper": torch.arange(60)}
    loader = gdgl.DataLoader(hetero, seeds, sampler, batch_size=16, shuffle=True, seed=SEED, num_threads=1, comm=comm)
    return _read_epochs(loader, digest_of)


def _typed_digest(tensors: dict) -> str:
    """A hash of ``{name: tensor}`` in name order."""
    h = hashlib.sha256()
    for name in sorted(tensors):
        h.update(name.encode() + tensors[name].contiguous().numpy().tobytes())
    return h.hexdigest()


def _hetero_link_epochs(hetero, neg: str, comm=None) -> list[list[str]]:
    """Digests of graphferry.pyg.LinkNeighborLoader's typed batches (every
    tensor of every node and edge type's store) over the writes pairs."""
    from test_hetero_pyg import FANOUTS, WRITES

    from graphferry.pyg import LinkNeighborLoader

    def digest_of(b) -> str:
        return _typed_digest(
            {f"{st._key}.{key}": v for st in b.stores for key, v in st.items() if isinstance(v, torch.Tensor)}
        )

    loader = LinkNeighborLoader(
        hetero, FANOUTS, edge_label_index=WRITES, neg_sampling=neg, batch_size=32, shuffle=True, seed=SEED,
        num_threads=1, comm=comm,
    )  # fmt: skip
    return _read_epochs(loader, digest_of)


def _dgl_hetero_edge_epochs(hetero, comm=None) -> list[list[str]]:
    """Digests of graphferry.dgl.DataLoader's typed edge batches (seed edges
    of two types, their reverses excluded, two uniform negatives each)."""
    import dgl
    from test_hetero_pyg import CITES, REV_WRITES, WRITES

    import graphferry.dgl as gdgl

    def digest_of(batch) -> str:
        input_nodes, pair, neg, blocks = batch
        tensors = {f"in.{nt}": ids for nt, ids in input_nodes.items()}
        for name, g in [("pair", pair), ("neg", neg)] + [(f"block{i}", b) for i, b in enumerate(blocks)]:
            for et in g.canonical_etypes:
                src, dst = g.edges(etype=et)
                tensors[f"{name}.{et}.src"], tensors[f"{name}.{et}.dst"] = src, dst
                if name != "neg":
                    tensors[f"{name}.{et}.eid"] = g.edges[et].data[dgl.EID]
        return _typed_digest(tensors)

    sampler = gdgl.as_edge_prediction_sampler(
        gdgl.NeighborSampler([2, 3]),
        exclude="reverse_types",
        reverse_etypes={WRITES: REV_WRITES, REV_WRITES: WRITES},
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(2),
    )
    seeds = {WRITES: torch.arange(0, 150, 2), CITES: torch.arange(0, 200, 3)}
    loader = gdgl.DataLoader(hetero, seeds, sampler, batch_size=32, shuffle=True, seed=SEED, num_threads=1, comm=comm)
    return _read_epochs(loader, digest_of)


def NODE_TIME(n: int) -> torch.Tensor:  # noqa: N802 - a constant's recipe
    return (torch.arange(n) * 7) % 50


def _temporal(seeds: torch.Tensor) -> dict:
    """PyG's temporal sampling over a graphferry.Graph's node times."""
    return dict(time_attr="node", input_time=(torch.arange(seeds.numel()) * 11) % 50)


FIELDS = (
    "x",
    "y",
    "feat",
    "label",
    "train_mask",
    "test_mask",
    "n_id",
    "e_id",
    "input_id",
    "batch",
    "seed_time",
)


def pyg_digest(data) -> str:
    """A hash of everything a PyG batch holds that the ranks must agree on."""
    h = hashlib.sha256()
    for key in FIELDS:
        if key in data:
            h.update(key.encode())
            h.update(data[key].contiguous().numpy().tobytes())
    h.update(data.edge_index.as_tensor().contiguous().numpy().tobytes())
    h.update(
        repr(
            (
                data.batch_size,
                list(data.num_sampled_nodes),
                list(data.num_sampled_edges),
            )
        ).encode()
    )
    return h.hexdigest()


def _epochs(data, seeds: torch.Tensor, comm=None, **kwargs) -> tuple[int, list[list[str]]]:
    """len() and the batches' digests of each epoch; with ``workers=True``
    also the engine's sampler workers."""
    from graphferry.pyg import NeighborLoader

    workers = kwargs.pop("workers", False)
    kwargs.setdefault("num_threads", 1)
    loader = NeighborLoader(
        data,
        NUM_NEIGHBORS,
        input_nodes=seeds,
        batch_size=BATCH,
        shuffle=True,
        seed=SEED,
        comm=comm,
        **kwargs,
    )
    try:
        out = len(loader), [[pyg_digest(b) for b in loader] for _ in range(EPOCHS)]
        return (*out, loader._loaders[0].stats().workers) if workers else out
    finally:
        loader.close()


def _worker(rank: int, size: int, port: int, part_dir: str, seeds: torch.Tensor, results) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo",
            init_method=f"tcp://127.0.0.1:{port}",
            rank=rank,
            world_size=size,
            timeout=_td(30),
        )
        comm = distributed.TorchComm(timeout=20)
        out = {}
        part = distributed.PartGraph.open(part_dir, rank)
        out["dsp"] = _epochs(part, seeds, comm)
        out["dsp-disjoint"] = _epochs(part, seeds, comm, disjoint=True)
        # A part holds no times: each rank gives its own nodes' (a collective).
        part.set_node_time(NODE_TIME(part.num_nodes)[part.owned_nodes()], comm)
        out["dsp-temporal"] = _epochs(part, seeds, comm, **_temporal(seeds))
        # seed=None: rank 0's draw, the same on every rank (checked by the parent).
        from graphferry.pyg import NeighborLoader

        shared = NeighborLoader(part, NUM_NEIGHBORS, input_nodes=seeds, batch_size=BATCH, comm=comm)
        out["seed"] = shared._seed
        shared.close()
        # Several sampler workers per rank, their exchanges ordered by the
        # engine's coordinator over the TorchComm's control messages.
        coordinated = distributed.TorchComm(timeout=20, coordinated=True)
        out["dsp-2-workers"] = _epochs(part, seeds, coordinated, num_workers=2, num_threads=0, workers=True)
        out["dsp-3-threads"] = _epochs(part, seeds, coordinated, num_threads=3, workers=True)
        loader = distributed.DistributedLoader(part, seeds, NUM_NEIGHBORS, comm=coordinated, **ENGINE_KW)
        out["engine-2-workers"] = [[digest(sub) for sub in loader.epoch(e)] for e in range(EPOCHS)]
        out["engine-workers"] = loader.stats().workers
        loader.close()
        # Closed mid-epoch (every rank): the coordinator's waiting recv gives up.
        loader = distributed.DistributedLoader(part, seeds, NUM_NEIGHBORS, comm=coordinated, **ENGINE_KW)
        next(iter(loader))
        start = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader.close()
        out["close"] = (time.monotonic() - start, [str(w.message) for w in caught])
        part.close()
        g = graphferry.Graph.open(CORA, num_patches=size, partition="random", seed=5)
        out["replicated"] = _epochs(g, seeds, comm)
        g.set_node_time(NODE_TIME(g.num_nodes))
        out["replicated-temporal"] = _epochs(g, seeds, comm, **_temporal(seeds))
        g.close()
        hetero = _hetero_graph(num_patches=size)
        out["hetero"] = _hetero_epochs(hetero, comm)
        for neg in ("binary", "triplet"):
            out[f"hetero-link-{neg}"] = _hetero_link_epochs(hetero, neg, comm)
        if _has_dgl():
            out["hetero-dgl"] = _dgl_hetero_epochs(hetero, comm)
            out["hetero-dgl-edges"] = _dgl_hetero_edge_epochs(hetero, comm)
        hetero.close()
        results.put((rank, "ok", out))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def _has_dgl() -> bool:
    try:
        import dgl  # noqa: F401
    except ImportError:
        return False
    return True


def test_two_ranks_equal_single_process(cora, tmp_path):
    g = graphferry.Graph.open(cora)
    seeds = g.train_idx  # 140 seeds: 5 batches of 32, which 2 ranks do not divide (padding)
    _, ref = _epochs(g, seeds)
    _, ref_disjoint = _epochs(g, seeds, disjoint=True)
    assert ref_disjoint != ref
    g.set_node_time(NODE_TIME(g.num_nodes))
    _, ref_temporal = _epochs(g, seeds, **_temporal(seeds))
    assert ref_temporal != ref_disjoint
    hetero = _hetero_graph()
    ref_hetero = _hetero_epochs(hetero)  # 60 papers: 4 batches of 16
    assert len(set(ref_hetero[0])) == 4 and ref_hetero[0] != ref_hetero[1]
    ref_dgl_hetero = _dgl_hetero_epochs(hetero) if _has_dgl() else None
    assert ref_dgl_hetero is None or len(set(ref_dgl_hetero[0])) == 4
    # Typed edge batches: 150 writes pairs, 5 batches of 32 (padding); DGL's
    # 75 + 67 seed edges, 5 batches of 32.
    ref_typed_edges = {f"hetero-link-{neg}": _hetero_link_epochs(hetero, neg) for neg in ("binary", "triplet")}
    if _has_dgl():
        ref_typed_edges["hetero-dgl-edges"] = _dgl_hetero_edge_epochs(hetero)
    for name, epochs in ref_typed_edges.items():
        assert len(set(epochs[0])) == 5 and epochs[0] != epochs[1], name
    hetero.close()
    loader = graphferry.Loader(g, seeds, NUM_NEIGHBORS, **{**ENGINE_KW, "num_threads": 1})
    engine_ref = [[digest(sub) for sub in loader.epoch(e)] for e in range(EPOCHS)]
    loader.close()
    g.close()
    total = len(ref[0])
    assert total == 5 and len(set(ref[0])) == total and ref[0] != ref[1]  # distinct batches, reshuffled
    dst = tmp_path / "cora-dsp"
    partition(cora, dst, parts=2, method="random", layout="dsp", seed=1)

    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_worker, args=(r, 2, port, str(dst), seeds, results), daemon=True) for r in (0, 1)]
    out = collect(procs, results, JOIN_S)
    assert sorted(out) == [0, 1], f"ranks that reported: {out}"
    per_rank = -(-total // 2)
    for rank in (0, 1):
        status, payload = out[rank]
        assert status == "ok", payload
        for name in ("dsp", "replicated", "dsp-2-workers", "dsp-3-threads"):
            n, got = payload[name][:2]
            assert n == per_rank, name
            for e in range(EPOCHS):
                want = [ref[e][(k * 2 + rank) % total] for k in range(per_rank)]
                assert got[e] == want, f"{name}: rank {rank}, epoch {e}"
        # The coordinated loaders did sample with several workers.
        assert payload["dsp-2-workers"][2] == 2 and payload["dsp-3-threads"][2] == 3
        assert payload["engine-workers"] == 2
        _close_s, caught = payload["close"]  # the time is the log's, not an assertion
        assert not caught, payload["close"]
        for e in range(EPOCHS):
            want = [engine_ref[e][(k * 2 + rank) % total] for k in range(per_rank)]
            assert payload["engine-2-workers"][e] == want, f"engine: rank {rank}, epoch {e}"
            want = [ref_disjoint[e][(k * 2 + rank) % total] for k in range(per_rank)]
            assert payload["dsp-disjoint"][1][e] == want, f"disjoint: rank {rank}, epoch {e}"
            want = [ref_temporal[e][(k * 2 + rank) % total] for k in range(per_rank)]
            assert payload["replicated-temporal"][1][e] == want, f"temporal: rank {rank}, epoch {e}"
            assert payload["dsp-temporal"][1][e] == want, f"temporal on parts: rank {rank}, epoch {e}"
            want = [ref_hetero[e][k * 2 + rank] for k in range(2)]
            assert payload["hetero"][e] == want, f"typed: rank {rank}, epoch {e}"
            if ref_dgl_hetero is not None:
                want = [ref_dgl_hetero[e][k * 2 + rank] for k in range(2)]
                assert payload["hetero-dgl"][e] == want, f"typed DGL: rank {rank}, epoch {e}"
            for name, ref_edges in ref_typed_edges.items():
                want = [ref_edges[e][(k * 2 + rank) % 5] for k in range(3)]
                assert payload[name][e] == want, f"{name}: rank {rank}, epoch {e}"
    assert out[0][1]["seed"] == out[1][1]["seed"]


def test_comm_arguments_checked(cora):
    from torch_geometric.data import Data

    from graphferry.pyg import NeighborLoader

    class Never(distributed.Communicator):  # never exchanges: argument errors come first
        pass

    g = graphferry.Graph.open(cora, num_patches=2)
    try:
        with pytest.raises(NotImplementedError, match="must be a graphferry.Graph"):
            NeighborLoader(
                Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2),
                [2],
                comm=Never(0, 2),
                seed=1,
            )
        with pytest.raises(NotImplementedError, match="directional subgraphs only"):
            NeighborLoader(g, [2], subgraph_type="induced", comm=Never(0, 2), seed=1)
        with pytest.raises(ValueError, match="num_patches=3"):
            NeighborLoader(g, [2], comm=Never(0, 3), seed=1)
        # A communicator whose exchanges raise: the consumer gets the message.
        loader = NeighborLoader(g, [2], input_nodes=g.train_idx, batch_size=BATCH, comm=Never(0, 2), seed=1)
        with pytest.raises(graphferry.GraphferryError, match="rank 0 of 2: NotImplementedError"):
            next(iter(loader))
        loader.close()
        if _has_dgl():  # DGL's loader takes a graphferry.HeteroGraph with comm=, not a DGL heterograph
            import dgl

            import graphferry.dgl as gdgl

            hg = dgl.heterograph({("a", "r", "b"): ([0, 1], [1, 0]), ("b", "s", "a"): ([0], [1])})
            with pytest.raises(
                NotImplementedError,
                match="graphferry.HeteroGraph opened with num_patches",
            ):
                gdgl.DataLoader(hg, {"a": [0]}, gdgl.NeighborSampler([1]), comm=Never(0, 2), seed=1)
    finally:
        g.close()


def test_part_times_checked(cora, tmp_path):
    """A part's times: the whole vector without a communicator, checked by
    name (the collective is in test_two_ranks_equal_single_process)."""
    dst = tmp_path / "parts"
    partition(cora, dst, parts=2, method="random", layout="dsp", seed=1)
    part = distributed.PartGraph.open(dst, 0)
    try:
        part.set_node_time(NODE_TIME(part.num_nodes))
        with pytest.raises(
            graphferry.InvalidArgumentError,
            match=r"node times have 5 entries, want one per node of the whole graph \(2708\)",
        ):
            part.set_node_time(NODE_TIME(5))
        with pytest.raises(graphferry.TypeMismatchError, match="time must be int64"):
            part.set_node_time(NODE_TIME(part.num_nodes).float())
        with pytest.raises(graphferry.InvalidArgumentError, match="edge times have 3 entries"):
            part.set_edge_time(NODE_TIME(3))
        with pytest.raises(TypeError, match="'comm' must be a graphferry.distributed.Communicator"):
            part.set_node_time(NODE_TIME(part.num_owned), comm="world")
    finally:
        part.close()

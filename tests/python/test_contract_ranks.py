"""The loader contract (test_contract.py) for the kinds that take ``comm=``,
on two ranks (Gloo, two spawned processes, each holding Cora): the core
DistributedLoader, DGL's node and edge DataLoader, PyG's NeighborLoader and
LinkNeighborLoader. On every rank and for every kind: the batches are made
ahead of the consumer, a state saved mid-epoch resumes on a fresh loader
with exactly the batches not yet yielded, and the statistics count every
stage. (Closing and Ctrl-C across ranks: test_cancel.py; a resume in a
fresh process per rank: test_resume.py.)"""

from __future__ import annotations

import traceback

import pytest
import torch
import torch.multiprocessing as mp
from contract_kinds import CORA, digest
from test_distributed import _free_port, _td, collect

from conftest import wait_made_ahead

pytest.importorskip("dgl")
pytest.importorskip("torch_geometric")

KINDS = ["core", "dgl-node", "dgl-edge", "pyg-neighbor", "pyg-link"]
RESUME_AT = 2
JOIN_S = 300


def _open(kind: str, g, comm):
    import dgl

    import graphferry.dgl as gdgl
    import graphferry.pyg as gpyg
    from graphferry import distributed

    seeds = torch.arange(0, g.num_nodes, 4)
    if kind == "core":
        return distributed.DistributedLoader(
            g, seeds, [4, 3], batch_size=64, shuffle=True, seed=5, feature_names=["feat"], comm=comm
        )
    if kind == "dgl-node":
        sampler = dgl.dataloading.NeighborSampler([3, 4], prefetch_node_feats=["feat"])
        return gdgl.DataLoader(g, seeds, sampler, batch_size=64, shuffle=True, seed=5, comm=comm)
    eids = torch.arange(0, g.num_edges, 11)
    if kind == "dgl-edge":
        sampler = gdgl.as_edge_prediction_sampler(
            gdgl.NeighborSampler([3, 4]), exclude="self", negative_sampler=dgl.dataloading.negative_sampler.Uniform(1)
        )
        return gdgl.DataLoader(g, eids, sampler, batch_size=64, shuffle=True, seed=5, comm=comm)
    if kind == "pyg-neighbor":
        return gpyg.NeighborLoader(g, [4, 3], input_nodes=seeds, batch_size=64, shuffle=True, seed=5, comm=comm)
    src, dst, _ = g.edges()
    pairs = torch.stack([src[eids], dst[eids]])
    return gpyg.LinkNeighborLoader(
        g, [4, 3], edge_label_index=pairs, neg_sampling_ratio=1.0, batch_size=64, shuffle=True, seed=5, comm=comm
    )


def _check(kind: str, g, comm) -> dict:
    """The contract's points on this rank; what failed, by name."""
    failed = {}
    loader = _open(kind, g, comm)
    it = iter(loader)
    next(it)
    if wait_made_ahead(loader, batches=2, timeout=60) < 2:
        failed["made ahead"] = "the engine made no batch while the consumer held one"
    list(it)  # the rest of epoch 0, so that both ranks end it together
    first, second = [digest(b) for b in loader], []
    for i, b in enumerate(loader):
        if i == RESUME_AT - 1:
            state = loader.state_dict()
        second.append(digest(b))
    cur = loader.stats().current
    if not cur.sampler.batches == cur.loader.batches == cur.consumer.batches == len(second) > 0:
        failed["statistics"] = f"{cur.sampler.batches}, {cur.loader.batches}, {cur.consumer.batches}, {len(second)}"
    loader.close()
    fresh = _open(kind, g, comm)
    fresh.load_state_dict(state)
    rest = [digest(b) for b in fresh]
    fresh.close()
    if len(second) <= RESUME_AT or rest != second[RESUME_AT:] or first == second:
        failed["resume"] = f"{len(rest)} batches after the state, of {len(second)}; equal: {rest == second[RESUME_AT:]}"
    return failed


def _rank(rank: int, size: int, port: int, results) -> None:
    import torch.distributed as dist

    import graphferry
    from graphferry import distributed

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=_td(60)
        )
        comm = distributed.TorchComm(timeout=60)
        g = graphferry.Graph.open(CORA, num_patches=size)
        out = {kind: _check(kind, g, comm) for kind in KINDS}
        g.close()
        results.put((rank, "ok", out))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


@pytest.fixture(scope="module")
def ranks() -> dict:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_rank, args=(r, 2, port, results), daemon=True) for r in range(2)]
    out = collect(procs, results, JOIN_S)
    assert sorted(out) == [0, 1], out
    for r, (status, payload) in out.items():
        assert status == "ok", f"rank {r}: {payload}"
    return {r: payload for r, (_, payload) in out.items()}


@pytest.mark.parametrize("kind", KINDS)
def test_the_contract_holds_on_two_ranks(ranks, kind):
    for rank, failed in ranks.items():
        assert failed[kind] == {}, f"rank {rank}: {failed[kind]}"

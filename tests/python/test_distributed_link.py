"""The edge (link-prediction) loaders with comm=: ranks as processes over Cora.

Two ranks are spawned (torch.multiprocessing, "spawn") on Gloo over
127.0.0.1. Each opens the shipped Cora either whole with one patch per rank
(replicated) or only its own folder of a dsp partition
(graphferry.partition), and reads epochs of ``graphferry.pyg.LinkNeighborLoader``
and of graphferry.dgl's edge ``DataLoader`` (``as_edge_prediction_sampler``)
with ``comm=``. The ranks' batches together must be the single-process
loader's batches for the same seed: rank ``r`` gets batches ``r, r + 2, ...``
of the single-process epoch (padded), field for field: pairs, negatives,
labels, sampled subgraph, node features (fetched from the owning rank on a
dsp part). DGL's ``exclude="self"`` (the seed edges left out of each batch's
sampling, by global edge id) is among them, with per-source and
``GlobalUniform`` negatives: on a dsp part the seed edges' endpoints, the
exclusions and whether ``GlobalUniform``'s candidate pairs are edges cross the
ranks.
"""

from __future__ import annotations

import hashlib
import traceback
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from test_distributed import _free_port, _td, collect
from test_distributed_pyg import _has_dgl

import graphferry
from graphferry import distributed
from graphferry.partition import partition

pytest.importorskip("torch_geometric")

CORA = Path(__file__).resolve().parents[2] / "examples" / "data" / "cora"
NUM_NEIGHBORS = [5, 3]
BATCH = 64
SEED = 23
EPOCHS = 2
JOIN_S = 150
# 300 seed edges: 5 batches of 64, which 2 ranks do not divide (padding).
NUM_SEEDS = 300

PYG_FIELDS = (
    "feat",
    "label",
    "n_id",
    "e_id",
    "input_id",
    "edge_label_index",
    "edge_label",
    "src_index",
    "dst_pos_index",
    "dst_neg_index",
)


def _seed_edges(g: graphferry.Graph) -> tuple[torch.Tensor, torch.Tensor]:
    """Every 17th edge of ``g`` (edge ids, and their ``[2, N]`` pairs)."""
    src, dst, eids = g.edges()
    pick = torch.arange(0, src.numel(), 17)[:NUM_SEEDS]
    return eids[pick].contiguous(), torch.stack([src[pick], dst[pick]])


def pyg_digest(data) -> str:
    """A hash of everything a PyG link batch holds that the ranks must agree on."""
    h = hashlib.sha256()
    for key in PYG_FIELDS:
        if key in data:
            h.update(key.encode())
            h.update(data[key].contiguous().numpy().tobytes())
    index = data.edge_index
    h.update((index.as_tensor() if hasattr(index, "as_tensor") else index).contiguous().numpy().tobytes())
    h.update(repr((list(data.num_sampled_nodes), list(data.num_sampled_edges))).encode())
    return h.hexdigest()


def _pyg_epochs(data, pairs: torch.Tensor, neg: str, comm=None, **kwargs) -> tuple[int, list[list[str]]]:
    """len() and the digests of each epoch of a LinkNeighborLoader."""
    from graphferry.pyg import LinkNeighborLoader

    loader = LinkNeighborLoader(
        data,
        NUM_NEIGHBORS,
        edge_label_index=pairs,
        neg_sampling=neg,
        batch_size=BATCH,
        shuffle=True,
        seed=SEED,
        num_threads=1,
        comm=comm,
        **kwargs,
    )
    try:
        return len(loader), [[pyg_digest(b) for b in loader] for _ in range(EPOCHS)]
    finally:
        loader.close()


def _dgl_epochs(g, eids: torch.Tensor, comm=None, negative=None) -> tuple[int, list[list[str]]]:
    """len() and the digests of each epoch of graphferry.dgl's edge DataLoader
    (negatives: ``Uniform(2)`` unless given)."""
    import dgl

    import graphferry.dgl as gdgl

    sampler = gdgl.as_edge_prediction_sampler(
        gdgl.NeighborSampler(list(reversed(NUM_NEIGHBORS)), prefetch_node_feats=["feat"]),
        exclude="self",
        negative_sampler=negative or dgl.dataloading.negative_sampler.Uniform(2),
    )
    loader = gdgl.DataLoader(g, eids, sampler, batch_size=BATCH, shuffle=True, seed=SEED, num_threads=1, comm=comm)
    out = []
    try:
        for _ in range(EPOCHS):
            got = []
            for input_nodes, pair, neg, blocks in loader:
                h = hashlib.sha256()
                tensors = [input_nodes, pair.ndata[dgl.NID], pair.edata[dgl.EID], blocks[0].srcdata["feat"]]
                tensors += [*pair.edges(), *neg.edges()]
                for b in blocks:
                    tensors += [*b.edges(), b.edata[dgl.EID]]
                for t in tensors:
                    h.update(t.contiguous().numpy().tobytes())
                got.append(h.hexdigest())
            out.append(got)
        return len(loader), out
    finally:
        loader.close()


def _node_time(n: int) -> torch.Tensor:
    return (torch.arange(n) * 7) % 50


def _run_all(data, eids: torch.Tensor, pairs: torch.Tensor, comm=None) -> dict:
    out = {
        "pyg-binary": _pyg_epochs(data, pairs, "binary", comm),
        "pyg-triplet": _pyg_epochs(data, pairs, "triplet", comm),
    }
    # Temporal over node times (a part is given its ranks' own: a collective).
    if isinstance(data, distributed.PartGraph):
        data.set_node_time(_node_time(data.num_nodes)[data.owned_nodes()], comm)
    else:
        data.set_node_time(_node_time(data.num_nodes))
    times = (torch.arange(pairs.shape[1]) * 13) % 50 + 10
    out["pyg-temporal"] = _pyg_epochs(data, pairs, "binary", comm, time_attr="node", edge_label_time=times)
    if _has_dgl():
        import dgl

        out["dgl"] = _dgl_epochs(data, eids, comm)
        # GlobalUniform rejects the pairs that are edges of the whole graph:
        # on a dsp part the owners are asked per batch.
        global_uniform = dgl.dataloading.negative_sampler.GlobalUniform(3, replace=True)
        out["dgl-global"] = _dgl_epochs(data, eids, comm, global_uniform)
    return out


def _worker(rank: int, size: int, port: int, part_dir: str, eids, pairs, results) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=_td(30)
        )
        comm = distributed.TorchComm(timeout=20)
        out = {}
        part = distributed.PartGraph.open(part_dir, rank)
        out["dsp"] = _run_all(part, eids, pairs, comm)
        part.close()
        g = graphferry.Graph.open(CORA, num_patches=size, partition="random", seed=5)
        out["replicated"] = _run_all(g, eids, pairs, comm)
        g.close()
        results.put((rank, "ok", out))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def test_two_ranks_equal_single_process(cora, tmp_path):
    g = graphferry.Graph.open(cora)
    eids, pairs = _seed_edges(g)
    ref = _run_all(g, eids, pairs)
    g.close()
    total = -(-NUM_SEEDS // BATCH)
    for name, (n, epochs) in ref.items():
        # distinct batches, reshuffled: a rank that got the wrong one shows
        assert n == total and len(set(epochs[0])) == total and epochs[0] != epochs[1], name
    assert ref["pyg-temporal"][1] != ref["pyg-binary"][1]  # the times matter
    dst = tmp_path / "cora-dsp"
    partition(cora, dst, parts=2, method="random", layout="dsp", seed=1)

    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(target=_worker, args=(r, 2, port, str(dst), eids, pairs, results), daemon=True) for r in (0, 1)
    ]
    out = collect(procs, results, JOIN_S)
    assert sorted(out) == [0, 1], f"ranks that reported: {out}"
    per_rank = -(-total // 2)
    for rank in (0, 1):
        status, payload = out[rank]
        assert status == "ok", payload
        for layout in ("dsp", "replicated"):
            assert sorted(payload[layout]) == sorted(ref), layout
            for name, (n, got) in payload[layout].items():
                assert n == per_rank, f"{layout} {name}"
                for e in range(EPOCHS):
                    want = [ref[name][1][e][(k * 2 + rank) % total] for k in range(per_rank)]
                    assert got[e] == want, f"{layout} {name}: rank {rank}, epoch {e}"


class _Never(distributed.Communicator):
    """A communicator that never exchanges (its exchanges raise
    NotImplementedError): argument errors come first."""


def test_comm_arguments_checked(cora, tmp_path):
    """What the edge loaders do not serve with comm= is refused by name,
    before any exchange."""
    from torch_geometric.data import Data

    from graphferry.pyg import LinkNeighborLoader

    g = graphferry.Graph.open(cora, num_patches=2)
    try:
        pairs = torch.tensor([[0, 1], [1, 2]])
        with pytest.raises(NotImplementedError, match="graphferry.Graph"):
            LinkNeighborLoader(Data(edge_index=pairs, num_nodes=3), [2], comm=_Never(0, 2), seed=1)
        with pytest.raises(NotImplementedError, match="directional"):
            LinkNeighborLoader(g, [2], edge_label_index=pairs, subgraph_type="induced", comm=_Never(0, 2), seed=1)
        with pytest.raises(ValueError, match="num_patches=3"):
            distributed.DistributedEdgeLoader(
                g, pairs[0], pairs[1], graphferry.SampleOptions([2], seed=1), comm=_Never(0, 3), mode="pyg"
            )
        hetero = graphferry.HeteroGraph.from_coo(
            {"a": 2, "b": 2}, {("a", "to", "b"): (torch.tensor([0, 1]), torch.tensor([1, 0]))}, num_patches=2
        )
        # A typed graph's edge loader is served (its first exchange raises
        # here), on a graph opened with one patch per rank.
        with pytest.raises(ValueError, match="num_patches=3"):
            next(iter(LinkNeighborLoader(hetero, [2], edge_label_index=("a", "to", "b"), comm=_Never(0, 3), seed=1)))
        typed = LinkNeighborLoader(hetero, [2], edge_label_index=("a", "to", "b"), comm=_Never(0, 2), seed=1)
        with pytest.raises(graphferry.GraphferryError, match="rank 0 of 2: NotImplementedError"):
            next(iter(typed))
        typed.close()
        if _has_dgl():
            import dgl

            import graphferry.dgl as gdgl

            sampler = gdgl.as_edge_prediction_sampler(gdgl.NeighborSampler([2]), exclude=lambda eids: eids)
            with pytest.raises(NotImplementedError, match="callable"):
                gdgl.DataLoader(g, torch.arange(4), sampler, comm=_Never(0, 2), seed=1)
            with pytest.raises(NotImplementedError, match="callable"):
                gdgl.DataLoader(hetero, {("a", "to", "b"): torch.arange(2)}, sampler, comm=_Never(0, 2), seed=1)
            hg = dgl.heterograph({("a", "to", "b"): ([0, 1], [1, 0]), ("b", "back", "a"): ([0], [1])})
            with pytest.raises(NotImplementedError, match="graphferry.HeteroGraph opened with num_patches"):
                gdgl.DataLoader(
                    hg,
                    {("a", "to", "b"): torch.arange(2)},
                    gdgl.as_edge_prediction_sampler(gdgl.NeighborSampler([2])),
                    comm=_Never(0, 2),
                    seed=1,
                )
        hetero.close()
        # A rank part: what its edge loaders do not serve.
        dst = tmp_path / "cora-dsp"
        partition(cora, dst, parts=2, method="random", layout="dsp", seed=1)
        part = distributed.PartGraph.open(dst, 0)
        times = dict(time_attr="node", edge_label_time=torch.tensor([1, 2]))
        # Temporal sampling needs the part's times, which a partition does not carry.
        with pytest.raises(graphferry.GraphferryError, match="needs the node times, which a partition does not carry"):
            next(iter(LinkNeighborLoader(part, [2], edge_label_index=pairs, comm=_Never(0, 2), seed=1, **times)))
        links = LinkNeighborLoader(part, [2], edge_label_index=pairs, comm=_Never(0, 2), seed=1)
        with pytest.raises(NotImplementedError, match="only its part"):
            links(torch.tensor([0]))
        links.close()
        part.close()
        # The engine's first exchange raises: the consumer gets the message.
        loader = LinkNeighborLoader(g, [2], edge_label_index=pairs, batch_size=1, comm=_Never(0, 2), seed=1)
        with pytest.raises(graphferry.GraphferryError, match="rank 0 of 2: NotImplementedError"):
            next(iter(loader))
        loader.close()
    finally:
        g.close()

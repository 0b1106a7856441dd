"""Typed (heterogeneous) datasets partitioned into rank folders.

``python -m graphferry partition`` writes a typed dataset's parts (the types
in ``partition.json``, the per-type node data per rank); a rank's
:class:`~graphferry.distributed.PartGraph` opens typed, and over two Gloo
ranks a :class:`~graphferry.distributed.DistributedLoader` on the dsp parts
gives the single-process loader's typed batches on the whole dataset, bit
for bit, with the per-type node data fetched from the owners equal to the
rows of the whole arrays at each batch's typed view; so do PyG's and DGL's
heterogeneous loaders over a rank's part (``HeteroData`` and heterograph
blocks with every type's node data), in the same two spawned ranks.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import traceback
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from test_distributed import _free_port, _td, collect

import graphferry
from graphferry import distributed
from graphferry.__main__ import main

RELATION_FANOUTS = [[3, 2, -1, 2, 0, 3, 1], [2, 1, 2, 0, 2, 1, 2]]
FEATS, LABELS = ["paper/feat", "author/feat"], ["paper/label"]
EPOCHS = 2
JOIN_S = 120


@pytest.fixture(scope="module")
def typed_dir(tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("hetero_tiny") / "gf"
    graphferry.generate("hetero-tiny", dst, seed=3)
    return dst


@pytest.fixture(scope="module")
def typed_parts(typed_dir, tmp_path_factory) -> Path:
    dst = tmp_path_factory.mktemp("hetero_parts") / "parts"
    assert (
        main(
            ["partition", str(typed_dir), str(dst), "--parts", "2", "--method", "random", "--layout", "dsp", "--quiet"]
        )
        == 0
    )
    return dst


def _kwargs(feature_names: list[str], label_names: list[str]) -> dict:
    return dict(
        relation_fanouts=RELATION_FANOUTS,
        batch_size=32,
        shuffle=True,
        seed=17,
        feature_names=feature_names,
        label_names=label_names,
        num_threads=1,
    )


def _digest(sub: graphferry.SampledSubgraph, per_type: dict[str, torch.Tensor]) -> str:
    """A hash of the batch's topology, typed view, "time" rows and the
    per-type rows given."""
    h = hashlib.sha256()
    tensors = [sub.nodes, sub.hop_counts, sub.input_index, sub.node_data["time"]]
    for b in sub.blocks:
        tensors += [b.indptr, b.indices, b.edge_ids]
    tv = sub.typed
    tensors += [tv.nodes, tv.order, torch.tensor(tv.node_offsets), tv.hop_counts]
    for tb in tv.blocks:
        tensors += [torch.tensor(tb.num_dst + tb.num_src + tb.dst_rank + tb.edge_offsets), tb.src, tb.dst, tb.edge_ids]
        tensors += [tb.indptr]
    for name in sorted(per_type):
        tensors.append(per_type[name])
    for t in tensors:
        h.update(t.contiguous().numpy().tobytes())
        h.update(str(tuple(t.shape)).encode())
    return h.hexdigest()


def _whole_rows(sub: graphferry.SampledSubgraph, arrays: dict, types: list[str]) -> dict[str, torch.Tensor]:
    """The per-type rows a caller of the replicated loader gathers: the
    whole arrays at the batch's typed view (labels: its seeds of the type)."""
    tv, out = sub.typed, {}
    for k, names in enumerate([FEATS, LABELS]):
        for name in names:
            t = types.index(name.split("/")[0])
            ids = tv.nodes[tv.node_offsets[t] : tv.node_offsets[t + 1]]
            if k == 1:
                ids = ids[: int(tv.hop_counts[t, 0])]
            out[name] = arrays[name][ids]
    return out


def test_partition_typed_folders(typed_dir, typed_parts):
    meta = json.loads((typed_parts / "partition.json").read_text())
    src = json.loads((typed_dir / "graphferry.json").read_text())
    assert meta["node_types"] == src["node_types"]
    assert meta["edge_types"] == src["edge_types"]
    offsets = np.cumsum([0] + [t["num_nodes"] for t in src["node_types"]])
    names = [t["name"] for t in src["node_types"]]
    g = graphferry.Graph.open(typed_dir)
    try:
        whole = {name: g.get_node_data(name) for name in g.node_data_names() if "/" in name}
    finally:
        g.close()
    seen = {name: 0 for name in whole}
    for rank in range(2):
        info = meta["ranks"][rank]
        assert {a["node_type"] + "/" + a["name"] for a in info["node_data"]} == set(whole)
        part = distributed.PartGraph.open(typed_parts, rank, verify=True)
        try:
            assert part.num_types == (4, 7)
            assert part.node_types == names
            assert part.edge_types == [(t["src"], t["rel"], t["dst"]) for t in src["edge_types"]]
            owned = part.owned_nodes().numpy()
            for name, value in whole.items():
                t = names.index(name.split("/")[0])
                mine = owned[(owned >= offsets[t]) & (owned < offsets[t + 1])] - offsets[t]
                rows = part.get_node_data(name)
                assert torch.equal(rows, value[torch.from_numpy(mine)]), (rank, name)
                seen[name] += rows.shape[0]
        finally:
            part.close()
    assert seen == {name: value.shape[0] for name, value in whole.items()}, "every row on one rank"


def test_typed_part_mismatch_named(typed_parts, tmp_path):
    """A partition.json whose types disagree with the folders names the
    problem (a relation whose edges do not join its types)."""
    import shutil

    dst = tmp_path / "parts"
    shutil.copytree(typed_parts, dst)
    meta = json.loads((dst / "partition.json").read_text())
    meta["edge_types"][0]["dst"] = meta["edge_types"][0]["src"]
    (dst / "partition.json").write_text(json.dumps(meta))
    with pytest.raises(graphferry.GraphferryError, match="does not match its types") as err:
        distributed.PartGraph.open(dst, 0)
    assert "goes from node" in str(err.value)


def test_typed_rank_folder_opened_as_hetero_graph_named(typed_parts):
    """A rank's folder opened as a typed dataset says what it is."""
    with pytest.raises(ValueError, match=r"rank's folder of the partition .*PartGraph\.open"):
        graphferry.HeteroGraph.open(typed_parts / "part-0")


def test_typed_part_hetero_view(typed_parts):
    """A typed part as the heterogeneous loaders' graph: the whole graph's
    types and counts; its node data is never read whole (a part holds its
    own rows), and its loaders need the other ranks (comm=)."""
    from graphferry.pyg import NeighborLoader

    part = distributed.PartGraph.open(typed_parts, 0)
    try:
        view = part.hetero_view()
        assert view.graph is part and view.num_nodes() == part.num_nodes
        assert view.num_edges() == json.loads((typed_parts / "partition.json").read_text())["num_edges"]
        assert view.engine_names({"paper": ["feat"]}) == ("paper/feat",)
        assert "paper/label" in view.engine_names()
        with pytest.raises(ValueError, match=r"only its own rows of 'paper/feat'"):
            view.get_node_data("paper", "feat")
        with pytest.raises(ValueError, match="give comm="):
            NeighborLoader(part, [2, 2], input_nodes=("paper", torch.arange(4)), batch_size=2)
        view.close()  # the part is its caller's
        assert not part.closed
    finally:
        part.close()


def _hash_tensors(h, items) -> None:
    """Hashes ``(name, value)`` pairs in name order: tensors by dtype, shape
    and bytes, other values by repr."""
    for name, value in sorted(items, key=lambda kv: str(kv[0])):
        h.update(str(name).encode())
        if isinstance(value, torch.Tensor):
            value = value.as_subclass(torch.Tensor) if type(value) is not torch.Tensor else value
            h.update(f"{value.dtype}{tuple(value.shape)}".encode() + value.contiguous().numpy().tobytes())
        else:
            h.update(repr(value).encode())


def _pyg_digest(batch) -> str:
    """Every attribute of every node and edge store of a ``HeteroData``."""
    h = hashlib.sha256()
    for key, store in list(batch.node_items()) + list(batch.edge_items()):
        h.update(repr(key).encode())
        _hash_tensors(h, store.items())
    return h.hexdigest()


def _dgl_digest(batch) -> str:
    """``(input_nodes, output_nodes, blocks)``: the id dicts, every block's
    edges per relation with their data and every type's node data."""
    input_nodes, output_nodes, blocks = batch
    h = hashlib.sha256()
    for nodes in (input_nodes, output_nodes):
        _hash_tensors(h, nodes.items())
    for block in blocks:
        for et in block.canonical_etypes:
            h.update(repr(et).encode())
            _hash_tensors(h, zip("uve", block.edges(etype=et, form="all", order="eid")))
            _hash_tensors(h, block.edges[et].data.items())
        for nt in block.srctypes:
            _hash_tensors(h, block.srcnodes[nt].data.items())
        for nt in block.dsttypes:
            _hash_tensors(h, block.dstnodes[nt].data.items())
    return h.hexdigest()


def _pyg_loader(graph, local_seeds: torch.Tensor, comm=None, **kwargs):
    """graphferry.pyg.NeighborLoader's typed batches of the paper seeds."""
    from graphferry.pyg import NeighborLoader

    return NeighborLoader(
        graph,
        {et: [f1, f0] for et, f0, f1 in zip(_edge_types(graph), *RELATION_FANOUTS)},
        input_nodes=("paper", local_seeds),
        batch_size=32,
        shuffle=True,
        seed=17,
        num_threads=1,
        comm=comm,
        **kwargs,
    )


def _node_time(ids: torch.Tensor) -> torch.Tensor:
    """The test's node times, by global id."""
    return ids * 7 % 50


def _temporal(num_seeds: int) -> dict:
    """A temporal loader's arguments: node times, one time per seed."""
    return {"time_attr": "node", "input_time": torch.arange(num_seeds) * 11 % 50 + 5}


def _dgl_loader(graph, local_seeds: torch.Tensor, comm=None):
    """graphferry.dgl.DataLoader's typed blocks of the paper seeds, every
    type's feat and the papers' label prefetched."""
    import graphferry.dgl as gdgl

    ets = _edge_types(graph)
    sampler = gdgl.NeighborSampler(
        [dict(zip(ets, hop)) for hop in RELATION_FANOUTS], prefetch_node_feats=["feat"], prefetch_labels=["label"]
    )
    return gdgl.DataLoader(
        graph, {"paper": local_seeds}, sampler, batch_size=32, shuffle=True, seed=17, num_threads=1, comm=comm
    )


WRITES, REV_WRITES, CITES = (
    ("author", "writes", "paper"),
    ("paper", "rev_writes", "author"),
    ("paper", "cites", "paper"),
)


def _pyg_link_loader(graph, pairs: torch.Tensor, comm=None):
    """graphferry.pyg.LinkNeighborLoader's typed batches of writes pairs
    (type-local ids), binary negatives."""
    from graphferry.pyg import LinkNeighborLoader

    return LinkNeighborLoader(
        graph,
        {et: [f1, f0] for et, f0, f1 in zip(_edge_types(graph), *RELATION_FANOUTS)},
        edge_label_index=(WRITES, pairs),
        neg_sampling="binary",
        batch_size=32,
        shuffle=True,
        seed=17,
        num_threads=1,
        comm=comm,
    )


def _dgl_edge_loader(graph, comm=None):
    """graphferry.dgl.DataLoader's typed edge batches: seed edges of two
    types, their reverses excluded, two uniform negatives each."""
    import dgl

    import graphferry.dgl as gdgl

    ets = _edge_types(graph)
    sampler = gdgl.as_edge_prediction_sampler(
        gdgl.NeighborSampler([dict(zip(ets, hop)) for hop in RELATION_FANOUTS]),
        exclude="reverse_types",
        reverse_etypes={WRITES: REV_WRITES, REV_WRITES: WRITES},
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(2),
    )
    seeds = {WRITES: torch.arange(0, 600, 5), CITES: torch.arange(0, 900, 7)}
    return gdgl.DataLoader(graph, seeds, sampler, batch_size=32, shuffle=True, seed=17, num_threads=1, comm=comm)


def _dgl_edge_digest(batch) -> str:
    """``(input_nodes, pair_graph, neg_pair_graph, blocks)``."""
    input_nodes, pair, neg, blocks = batch
    h = hashlib.sha256()
    _hash_tensors(h, input_nodes.items())
    for g in [pair, neg, *blocks]:
        for et in g.canonical_etypes:
            h.update(repr(et).encode())
            _hash_tensors(h, zip("uv", g.edges(etype=et)))
            _hash_tensors(h, g.edges[et].data.items())
    return h.hexdigest()


def _edge_types(graph) -> list:
    return [tuple(et) for et in graph.edge_types]


def _epochs(loader, digest_of) -> list[list[str]]:
    try:
        return [[digest_of(b) for b in loader] for _ in range(EPOCHS)]
    finally:
        loader.close()


def _worker(
    rank: int, size: int, port: int, path: str, seeds: list[int], offset: int, pairs: torch.Tensor, results
) -> None:
    import torch.distributed as dist

    try:
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=size, timeout=_td(30)
        )
        comm = distributed.TorchComm(timeout=20)
        part = distributed.PartGraph.open(path, rank)
        assert distributed.global_seeds(part, comm, "paper/train_mask").tolist() == seeds
        loader = distributed.DistributedLoader(
            part, torch.tensor(seeds), [3, 2], comm=comm, **_kwargs(["time", *FEATS], LABELS)
        )
        got: dict[str, list] = {"loader": []}
        for epoch in range(EPOCHS):
            rows = []
            for sub in loader.epoch(epoch):
                per_type = {name: sub.node_data[name] for name in FEATS}
                per_type.update({name: sub.labels[name] for name in LABELS})
                rows.append(_digest(sub, per_type))
            got["loader"].append(rows)
        loader.close()
        # PyG's and DGL's heterogeneous loaders over the part: every
        # type's node data comes from its owners with each batch.
        local = torch.tensor(seeds) - offset
        got["pyg"] = _epochs(_pyg_loader(part, local, comm), _pyg_digest)
        got["pyg-link"] = _epochs(_pyg_link_loader(part, pairs, comm), _pyg_digest)
        if importlib.util.find_spec("dgl") is not None:
            got["dgl"] = _epochs(_dgl_loader(part, local, comm), _dgl_digest)
            got["dgl-edge"] = _epochs(_dgl_edge_loader(part, comm), _dgl_edge_digest)
        # Temporal typed batches: the ranks give the part their own nodes'
        # times (a collective), every rank then holds every node's.
        part.set_node_time(_node_time(part.owned_nodes()), comm)
        got["pyg-temporal"] = _epochs(_pyg_loader(part, local, comm, **_temporal(local.numel())), _pyg_digest)
        part.close()
        results.put((rank, "ok", got))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


@pytest.fixture(scope="module")
def typed_seeds(typed_dir) -> tuple[list[int], int]:
    """The paper training seeds (global ids) and the papers' id offset."""
    g = graphferry.Graph.open(typed_dir)
    try:
        node_types = json.loads((typed_dir / "graphferry.json").read_text())["node_types"]
        names = [t["name"] for t in node_types]
        offset = sum(t["num_nodes"] for t in node_types[: names.index("paper")])
        return (torch.nonzero(g.get_node_data("paper/train_mask")).flatten() + offset).tolist(), offset
    finally:
        g.close()


@pytest.fixture(scope="module")
def writes_pairs(typed_dir) -> torch.Tensor:
    """Every 7th writes edge (type-local ids), the link loaders' pairs."""
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        src, dst = hg.edges(WRITES)
    return torch.stack([src[::7], dst[::7]])


@pytest.fixture(scope="module")
def two_ranks(typed_parts, typed_seeds, writes_pairs) -> dict[int, dict]:
    """What each of two spawned Gloo ranks read from its typed dsp part:
    ``rank -> {"loader" | "pyg" | "dgl" | "pyg-link" | "dgl-edge" |
    "pyg-temporal": digests per epoch}``."""
    size = 2
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(
            target=_worker, args=(r, size, port, str(typed_parts), *typed_seeds, writes_pairs, results), daemon=True
        )
        for r in range(size)
    ]
    out = collect(procs, results, JOIN_S)
    assert sorted(out) == [0, 1], out
    for rank in range(size):
        status, got = out[rank]
        assert status == "ok", got
    return {rank: out[rank][1] for rank in range(size)}


def _check_shares(ref: list[list[str]], got: dict[int, dict], key: str) -> None:
    """Rank r's epoch is batches r, r + size, ... of the single process's
    (the last ones padded from the start)."""
    size, total = len(got), len(ref[0])
    assert total > 2
    for rank in range(size):
        for e in range(EPOCHS):
            want = [ref[e][(k * size + rank) % total] for k in range(-(-total // size))]
            assert got[rank][key][e] == want, f"{key}: rank {rank} epoch {e}"


def test_typed_parts_two_ranks_match_single_process(typed_dir, typed_seeds, two_ranks):
    seeds = typed_seeds[0]
    g = graphferry.Graph.open(typed_dir)
    try:
        node_types = json.loads((typed_dir / "graphferry.json").read_text())["node_types"]
        names = [t["name"] for t in node_types]
        arrays = {name: g.get_node_data(name) for name in FEATS + LABELS}
        loader = graphferry.Loader(g, torch.tensor(seeds), [3, 2], **_kwargs(["time"], []))
        ref = [[_digest(sub, _whole_rows(sub, arrays, names)) for sub in loader.epoch(e)] for e in range(EPOCHS)]
        loader.close()
    finally:
        g.close()
    _check_shares(ref, two_ranks, "loader")


def test_pyg_hetero_loader_on_typed_parts(typed_dir, typed_seeds, two_ranks):
    """graphferry.pyg.NeighborLoader(part, ..., input_nodes=("paper", ids),
    comm=): the HeteroData batches (every type's node data included) of the
    one-process loader over the whole typed dataset, rank by rank."""
    seeds, offset = typed_seeds
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        loader = _pyg_loader(hg, torch.tensor(seeds) - offset)
        batch = next(iter(loader))
        loader.close()
        assert {"feat", "label", "train_mask"} <= set(batch["paper"].keys())  # the digests cover node data
        ref = _epochs(_pyg_loader(hg, torch.tensor(seeds) - offset), _pyg_digest)
    _check_shares(ref, two_ranks, "pyg")


def test_dgl_hetero_loader_on_typed_parts(typed_dir, typed_seeds, two_ranks):
    """graphferry.dgl.DataLoader(part, {"paper": ids}, sampler, comm=): the
    one-process loader's heterograph blocks with the prefetched feat of
    every type and the papers' label, rank by rank."""
    pytest.importorskip("dgl")
    seeds, offset = typed_seeds
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        loader = _dgl_loader(hg, torch.tensor(seeds) - offset)
        _, _, blocks = next(iter(loader))
        loader.close()
        ref = _epochs(_dgl_loader(hg, torch.tensor(seeds) - offset), _dgl_digest)
        assert "feat" in blocks[0].srcnodes["author"].data and "label" in blocks[-1].dstnodes["paper"].data
    _check_shares(ref, two_ranks, "dgl")


def test_pyg_temporal_hetero_loader_on_typed_parts(typed_dir, typed_seeds, two_ranks):
    """Temporal typed batches on typed parts (node times shared by the
    ranks, PartGraph.set_node_time(own, comm)): the one-process temporal
    heterogeneous loader's, rank by rank; the times do filter."""
    seeds, offset = typed_seeds
    local = torch.tensor(seeds) - offset
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        off = hg.node_offsets
        hg.set_node_time({nt: _node_time(torch.arange(off[t], off[t + 1])) for t, nt in enumerate(hg.node_types)})
        ref = _epochs(_pyg_loader(hg, local, **_temporal(local.numel())), _pyg_digest)
        untimed = _epochs(_pyg_loader(hg, local, disjoint=True), _pyg_digest)
    assert ref[0] != untimed[0]
    _check_shares(ref, two_ranks, "pyg-temporal")


def test_pyg_link_loader_on_typed_parts(typed_dir, writes_pairs, two_ranks):
    """graphferry.pyg.LinkNeighborLoader(part, ..., edge_label_index=(writes,
    pairs), comm=): the one-process typed link batches (every type's node
    data, fetched from the owners), rank by rank."""
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        loader = _pyg_link_loader(hg, writes_pairs)
        batch = next(iter(loader))
        loader.close()
        assert "feat" in batch["author"] and "edge_label" in batch[WRITES]  # the digests cover them
        ref = _epochs(_pyg_link_loader(hg, writes_pairs), _pyg_digest)
    _check_shares(ref, two_ranks, "pyg-link")


def test_dgl_edge_loader_on_typed_parts(typed_dir, two_ranks):
    """graphferry.dgl.DataLoader(part, {etype: eids}, edge sampler, comm=):
    the one-process typed edge batches (seed edges resolved with the other
    ranks, reverses excluded, negatives per type), rank by rank."""
    pytest.importorskip("dgl")
    with graphferry.HeteroGraph.open(typed_dir) as hg:
        ref = _epochs(_dgl_edge_loader(hg), _dgl_edge_digest)
    _check_shares(ref, two_ranks, "dgl-edge")

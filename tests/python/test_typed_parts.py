"""Typed (heterogeneous) datasets partitioned into rank folders.

``python -m graphferry partition`` writes a typed dataset's parts (the types
in ``partition.json``, the per-type node data per rank); a rank's
:class:`~graphferry.distributed.PartGraph` opens typed, and over two Gloo
ranks a :class:`~graphferry.distributed.DistributedLoader` on the dsp parts
gives the single-process loader's typed batches on the whole dataset, bit
for bit, with the per-type node data fetched from the owners equal to the
rows of the whole arrays at each batch's typed view.
"""

from __future__ import annotations

import hashlib
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


def _worker(rank: int, size: int, port: int, path: str, seeds: list[int], results) -> None:
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
        got = []
        for epoch in range(EPOCHS):
            rows = []
            for sub in loader.epoch(epoch):
                per_type = {name: sub.node_data[name] for name in FEATS}
                per_type.update({name: sub.labels[name] for name in LABELS})
                rows.append(_digest(sub, per_type))
            got.append(rows)
        loader.close()
        part.close()
        results.put((rank, "ok", got))
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        results.put((rank, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"))


def test_typed_parts_two_ranks_match_single_process(typed_dir, typed_parts):
    g = graphferry.Graph.open(typed_dir)
    try:
        node_types = json.loads((typed_dir / "graphferry.json").read_text())["node_types"]
        names = [t["name"] for t in node_types]
        arrays = {name: g.get_node_data(name) for name in FEATS + LABELS}
        offset = sum(t["num_nodes"] for t in node_types[: names.index("paper")])
        seeds = (torch.nonzero(g.get_node_data("paper/train_mask")).flatten() + offset).tolist()
        loader = graphferry.Loader(g, torch.tensor(seeds), [3, 2], **_kwargs(["time"], []))
        ref = [[_digest(sub, _whole_rows(sub, arrays, names)) for sub in loader.epoch(e)] for e in range(EPOCHS)]
        loader.close()
    finally:
        g.close()
    size = 2
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    procs = [
        ctx.Process(target=_worker, args=(r, size, port, str(typed_parts), seeds, results), daemon=True)
        for r in range(size)
    ]
    out = collect(procs, results, JOIN_S)
    assert sorted(out) == [0, 1], out
    total = len(ref[0])
    assert total > 2
    for rank in range(size):
        status, got = out[rank]
        assert status == "ok", got
        for e in range(EPOCHS):
            want = [ref[e][(k * size + rank) % total] for k in range(-(-total // size))]
            assert got[e] == want, f"rank {rank} epoch {e}"

"""Every loader kind of graphferry, built the same way in any process, for
the loader contract (test_contract.py): each kind is a function that opens
one loader over Cora (or a heterograph made from it) with a fixed seed, so
that a fresh process opens the same loader and a state saved in one
process resumes in another.

Run as a script (``python contract_kinds.py STATES OUT``), it is the fresh
process of the contract's resume check: for each kind in STATES (a
``torch.save`` of ``{kind: state}``) it opens the loader, loads the state,
and writes the digests of the batches the next ``iter()`` yields to OUT.
"""

from __future__ import annotations

import hashlib
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORA = REPO / "examples" / "data" / "cora"

SEED = 11
BATCH = 96

# ---------------------------------------------------------------------------
# The data, made once per process


_cache: dict[str, Any] = {}


def _cora() -> dict:
    if "cora" not in _cache:
        import graphferry

        g = graphferry.Graph.open(CORA)
        src, dst, _ = g.edges()
        n = g.num_nodes
        feat = g.get_node_data("feat").clone()
        label = g.get_node_data("label").clone()
        g.close()
        _cache["cora"] = dict(src=src, dst=dst, n=n, feat=feat, label=label, seeds=torch.arange(0, n, 4))
    return _cache["cora"]


def _authors() -> dict:
    """A second node type for the heterogeneous kinds: authors writing papers."""
    if "authors" not in _cache:
        gen = torch.Generator().manual_seed(5)
        na, e = 400, 3000
        n = _cora()["n"]
        _cache["authors"] = dict(
            n=na,
            src=torch.randint(0, na, (e,), generator=gen),
            dst=torch.randint(0, n, (e,), generator=gen),
            feat=torch.randn(na, 16, generator=gen),
        )
    return _cache["authors"]


def dgl_graph() -> Any:
    import dgl

    c = _cora()
    g = dgl.graph((c["src"], c["dst"]), num_nodes=c["n"])
    g.ndata["feat"], g.ndata["label"] = c["feat"], c["label"]
    return g


def dgl_hetero() -> Any:
    import dgl

    c, a = _cora(), _authors()
    hg = dgl.heterograph(
        {
            ("paper", "cites", "paper"): (c["src"], c["dst"]),
            ("author", "writes", "paper"): (a["src"], a["dst"]),
            ("paper", "written_by", "author"): (a["dst"], a["src"]),
        },
        num_nodes_dict={"paper": c["n"], "author": a["n"]},
    )
    hg.nodes["paper"].data["feat"], hg.nodes["paper"].data["label"] = c["feat"], c["label"]
    hg.nodes["author"].data["feat"] = a["feat"]
    return hg


def pyg_data() -> Any:
    from torch_geometric.data import Data

    c = _cora()
    data = Data(x=c["feat"], y=c["label"], edge_index=torch.stack([c["src"], c["dst"]]), num_nodes=c["n"])
    data.time = torch.arange(c["n"]) % 50
    return data


def pyg_hetero() -> Any:
    from torch_geometric.data import HeteroData

    c, a = _cora(), _authors()
    data = HeteroData()
    data["paper"].x, data["paper"].y = c["feat"], c["label"]
    data["author"].x = a["feat"]
    data["paper", "cites", "paper"].edge_index = torch.stack([c["src"], c["dst"]])
    data["author", "writes", "paper"].edge_index = torch.stack([a["src"], a["dst"]])
    data["paper", "written_by", "author"].edge_index = torch.stack([a["dst"], a["src"]])
    return data


# ---------------------------------------------------------------------------
# The kinds: name -> (framework, opener). An opener takes keyword arguments
# of the contract's own (pin_memory=True) and returns the loader.


def _dgl_loader(graph: Any, items: Any, sampler: Any, **kw: Any) -> Any:
    import graphferry.dgl as gdgl

    kw.setdefault("batch_size", BATCH)
    kw.setdefault("shuffle", True)
    return gdgl.DataLoader(graph, items, sampler, seed=SEED, **kw)


def _dgl_neighbor() -> Any:
    import dgl

    return dgl.dataloading.NeighborSampler([5, 3], prefetch_node_feats=["feat"], prefetch_labels=["label"])


def _dgl_edge(exclude: Any, shadow: bool = False) -> Any:
    import dgl

    nodes = dgl.dataloading.ShaDowKHopSampler([5, 3], prefetch_node_feats=["feat"]) if shadow else None
    return dgl.dataloading.as_edge_prediction_sampler(
        nodes or dgl.dataloading.NeighborSampler([5, 3]),
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(1),
        exclude=exclude,
    )


def _exclude_self(eids: torch.Tensor) -> torch.Tensor:
    return eids


def _torch_seeded(make: Callable[[], Any]) -> Any:
    """PyG's loaders draw their seed from torch's generator when made."""
    torch.manual_seed(SEED)
    return make()


def _pyg(cls_name: str, data: Any, **kw: Any) -> Any:
    import graphferry.pyg as gpyg

    return _torch_seeded(lambda: getattr(gpyg, cls_name)(data, **kw))


def _cluster_loader(**kw: Any) -> Any:
    import graphferry.pyg as gpyg

    data = pyg_data()
    data.time = None
    del data.time
    cluster = gpyg.ClusterData(data, num_parts=24, log=False)
    return _torch_seeded(lambda: gpyg.ClusterLoader(cluster, batch_size=3, shuffle=True, **kw))


def _dgl_cluster(**kw: Any) -> Any:
    import dgl

    g = dgl_graph()
    sampler = dgl.dataloading.ClusterGCNSampler(g, 24, cache_path=str(_scratch() / "cluster_gcn.pkl"))
    return _dgl_loader(g, torch.arange(24), sampler, batch_size=3, **kw)


def _scratch() -> Path:
    if "scratch" not in _cache:
        import tempfile

        _cache["scratch"] = Path(tempfile.mkdtemp(prefix="gf_contract_"))
    return _cache["scratch"]


def _seed_nodes() -> torch.Tensor:
    return _cora()["seeds"]


def _seed_edges() -> torch.Tensor:
    return torch.arange(0, _cora()["src"].numel(), 9)


def _hetero_seeds() -> dict:
    return {"paper": _seed_nodes()}


KINDS: dict[str, tuple[str, Callable[..., Any]]] = {
    "core": (
        "core",
        lambda **kw: __import__("graphferry").Loader(
            _gf_graph(),
            _seed_nodes(),
            [5, 3],
            batch_size=BATCH,
            shuffle=True,
            seed=SEED,
            feature_names=["feat"],
            label_names=["label"],
            **kw,
        ),
    ),
    "dgl-node": ("dgl", lambda **kw: _dgl_loader(dgl_graph(), _seed_nodes(), _dgl_neighbor(), **kw)),
    "dgl-node-hetero": (
        "dgl",
        lambda **kw: _dgl_loader(
            dgl_hetero(),
            _hetero_seeds(),
            __import__("dgl").dataloading.NeighborSampler([5, 3], prefetch_node_feats={"paper": ["feat"]}),
            **kw,
        ),
    ),
    "dgl-edge": ("dgl", lambda **kw: _dgl_loader(dgl_graph(), _seed_edges(), _dgl_edge("self"), **kw)),
    "dgl-edge-callable-exclude": (
        "dgl",
        lambda **kw: _dgl_loader(dgl_graph(), _seed_edges(), _dgl_edge(_exclude_self), **kw),
    ),
    "dgl-edge-hetero": (
        "dgl",
        lambda **kw: _dgl_loader(
            dgl_hetero(), {"cites": _seed_edges(), "writes": torch.arange(0, 3000, 3)}, _dgl_edge(None), **kw
        ),
    ),
    "dgl-edge-shadow": (
        "dgl",
        lambda **kw: _dgl_loader(dgl_graph(), _seed_edges(), _dgl_edge("self", shadow=True), **kw),
    ),
    "dgl-edge-shadow-hetero": (
        "dgl",
        lambda **kw: _dgl_loader(
            dgl_hetero(), {"cites": _seed_edges(), "writes": torch.arange(0, 3000, 3)}, _dgl_edge(None, True), **kw
        ),
    ),
    "dgl-saint-node": (
        "dgl",
        lambda **kw: _dgl_loader(
            dgl_graph(), torch.arange(8), __import__("dgl").dataloading.SAINTSampler("node", 300), batch_size=1, **kw
        ),
    ),
    "dgl-saint-edge": (
        "dgl",
        lambda **kw: _dgl_loader(
            dgl_graph(), torch.arange(8), __import__("dgl").dataloading.SAINTSampler("edge", 300), batch_size=1, **kw
        ),
    ),
    "dgl-saint-walk": (
        "dgl",
        lambda **kw: _dgl_loader(
            dgl_graph(),
            torch.arange(8),
            __import__("dgl").dataloading.SAINTSampler("walk", (100, 3)),
            batch_size=1,
            **kw,
        ),
    ),
    "dgl-cluster-gcn": ("dgl", lambda **kw: _dgl_cluster(**kw)),
    "dgl-shadow": (
        "dgl",
        lambda **kw: _dgl_loader(
            dgl_graph(), _seed_nodes(), __import__("dgl").dataloading.ShaDowKHopSampler([5, 3]), **kw
        ),
    ),
    "pyg-neighbor": (
        "pyg",
        lambda **kw: _pyg(
            "NeighborLoader",
            pyg_data(),
            num_neighbors=[5, 3],
            input_nodes=_seed_nodes(),
            batch_size=BATCH,
            shuffle=True,
            **kw,
        ),
    ),
    "pyg-neighbor-disjoint": (
        "pyg",
        lambda **kw: _pyg(
            "NeighborLoader",
            pyg_data(),
            num_neighbors=[5, 3],
            input_nodes=_seed_nodes(),
            batch_size=BATCH,
            shuffle=True,
            disjoint=True,
            **kw,
        ),
    ),
    "pyg-neighbor-temporal": (
        "pyg",
        lambda **kw: _pyg(
            "NeighborLoader",
            pyg_data(),
            num_neighbors=[5, 3],
            input_nodes=_seed_nodes(),
            input_time=torch.full((_seed_nodes().numel(),), 40),
            time_attr="time",
            batch_size=BATCH,
            shuffle=True,
            **kw,
        ),
    ),
    "pyg-neighbor-induced": (
        "pyg",
        lambda **kw: _pyg(
            "NeighborLoader",
            pyg_data(),
            num_neighbors=[5, 3],
            input_nodes=_seed_nodes(),
            batch_size=BATCH,
            shuffle=True,
            subgraph_type="induced",
            **kw,
        ),
    ),
    "pyg-neighbor-hetero": (
        "pyg",
        lambda **kw: _pyg(
            "NeighborLoader",
            pyg_hetero(),
            num_neighbors=[5, 3],
            input_nodes=("paper", _seed_nodes()),
            batch_size=BATCH,
            shuffle=True,
            **kw,
        ),
    ),
    "pyg-link": (
        "pyg",
        lambda **kw: _pyg(
            "LinkNeighborLoader",
            pyg_data(),
            num_neighbors=[5, 3],
            edge_label_index=pyg_data().edge_index[:, ::9],
            neg_sampling_ratio=1.0,
            batch_size=BATCH,
            shuffle=True,
            **kw,
        ),
    ),
    "pyg-link-hetero": (
        "pyg",
        lambda **kw: _pyg(
            "LinkNeighborLoader",
            pyg_hetero(),
            num_neighbors=[5, 3],
            edge_label_index=(("paper", "cites", "paper"), pyg_hetero()["paper", "cites", "paper"].edge_index[:, ::9]),
            neg_sampling_ratio=1.0,
            batch_size=BATCH,
            shuffle=True,
            **kw,
        ),
    ),
    "pyg-saint-node": (
        "pyg",
        lambda **kw: _pyg("GraphSAINTNodeSampler", _no_time(), batch_size=300, num_steps=8, log=False, **kw),
    ),
    "pyg-saint-edge": (
        "pyg",
        lambda **kw: _pyg("GraphSAINTEdgeSampler", _no_time(), batch_size=300, num_steps=8, log=False, **kw),
    ),
    "pyg-saint-walk": (
        "pyg",
        lambda **kw: _pyg(
            "GraphSAINTRandomWalkSampler", _no_time(), batch_size=100, walk_length=3, num_steps=8, log=False, **kw
        ),
    ),
    "pyg-shadow": (
        "pyg",
        lambda **kw: _pyg(
            "ShaDowKHopSampler",
            _no_time(),
            depth=2,
            num_neighbors=5,
            node_idx=_seed_nodes(),
            batch_size=BATCH,
            shuffle=True,
            **kw,
        ),
    ),
    "pyg-cluster": ("pyg", lambda **kw: _cluster_loader(**kw)),
    "pyg-hgt": (
        "pyg",
        lambda **kw: _pyg(
            "HGTLoader",
            pyg_hetero(),
            num_samples=[40, 20],
            input_nodes=("paper", _seed_nodes()),
            batch_size=BATCH,
            shuffle=True,
            **kw,
        ),
    ),
    "pyg-random-node": ("pyg", lambda **kw: _pyg("RandomNodeLoader", _no_time(), num_parts=12, shuffle=True, **kw)),
    "pyg-random-node-hetero": (
        "pyg",
        lambda **kw: _pyg("RandomNodeLoader", pyg_hetero(), num_parts=12, shuffle=True, **kw),
    ),
}


def _no_time() -> Any:
    data = pyg_data()
    del data.time
    return data


def _gf_graph() -> Any:
    if "gf" not in _cache:
        import graphferry

        _cache["gf"] = graphferry.Graph.open(CORA)
    return _cache["gf"]


def open_kind(kind: str, **kw: Any) -> Any:
    """A fresh loader of ``kind``."""
    return KINDS[kind][1](**kw)


# ---------------------------------------------------------------------------
# Digests: a batch of any kind (tensors in tuples, lists and dicts, DGL
# graphs and blocks, PyG's Data and HeteroData) as one hex string.


def digest(batch: Any) -> str:
    h = hashlib.sha256()
    _walk(batch, h)
    return h.hexdigest()


def _walk(obj: Any, h: Any) -> None:
    if isinstance(obj, torch.Tensor):
        t = obj.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        return
    if isinstance(obj, np.ndarray):
        _walk(torch.from_numpy(np.ascontiguousarray(obj)), h)
        return
    if isinstance(obj, (list, tuple)):
        h.update(f"L{len(obj)}".encode())
        for x in obj:
            _walk(x, h)
        return
    if isinstance(obj, dict):
        h.update(f"D{len(obj)}".encode())
        for k in sorted(obj, key=repr):
            h.update(repr(k).encode())
            _walk(obj[k], h)
        return
    mod = type(obj).__module__ or ""
    if mod.startswith("dgl"):
        _walk_dgl(obj, h)
        return
    if mod.startswith("torch_geometric"):
        h.update(type(obj).__name__.encode())
        _walk(obj.to_dict(), h)
        return
    h.update(repr(obj).encode())


def _walk_dgl(g: Any, h: Any) -> None:
    import dgl

    h.update(type(g).__name__.encode())
    for side, types, nodes, count in (
        ("src", g.srctypes, g.srcnodes, g.num_src_nodes),
        ("dst", g.dsttypes, g.dstnodes, g.num_dst_nodes),
    ):
        for nt in types:
            h.update(f"{side}{nt}{count(nt)}".encode())
            _walk({k: v for k, v in nodes[nt].data.items() if k != dgl.NTYPE}, h)
    for et in g.canonical_etypes:
        h.update(repr(et).encode())
        _walk(g.edges(form="all", etype=et, order="eid"), h)
        _walk(dict(g.edges[et].data), h)


# ---------------------------------------------------------------------------
# The fresh process of the resume check


def child_main(states_path: str, out_path: str) -> None:
    states = torch.load(states_path)
    out: dict[str, Any] = {}
    for kind, state in states.items():
        try:
            loader = open_kind(kind)
            loader.load_state_dict(state)
            out[kind] = [digest(b) for b in loader]
            loader.close()
        except Exception:  # noqa: BLE001 - reported per kind by the test
            out[kind] = {"error": traceback.format_exc()}
    Path(out_path).write_text(json.dumps(out))


if __name__ == "__main__":
    child_main(sys.argv[1], sys.argv[2])

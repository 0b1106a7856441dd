"""The subgraph loaders of every kind (test_subgraph_engine_path.py),
built the same way in the tests and in the fresh processes they start."""

from __future__ import annotations

import os
import tempfile

import torch
from torch_geometric.data import Data


def graph_data(n=90, seed=3):
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n, (600,), generator=gen)
    dst = torch.randint(0, n, (600,), generator=gen)
    e = src.numel()
    return Data(
        x=torch.randn(n, 3, generator=gen),
        y=torch.arange(n) % 4,
        nid=torch.arange(n),
        edge_index=torch.stack([src, dst]),
        eid=torch.arange(e),
        edge_weight=torch.rand(e, generator=gen),
        num_nodes=n,
    )


_CLUSTER = {}


def make(kind, shuffle=True, **kw):
    """A loader of ``kind`` (shuffled where the kind shuffles)."""
    import dgl

    import graphferry.dgl as gfdgl
    import graphferry.pyg as gp

    data = graph_data()
    if kind.startswith("dgl"):
        g = dgl.graph((data.edge_index[0], data.edge_index[1]), num_nodes=data.num_nodes)
        g.ndata["feat"] = data.x
        g.edata["w"] = data.edge_weight
        if kind.startswith("dgl_saint"):
            mode = kind.rsplit("_", 1)[1]
            budget = (5, 3) if mode == "walk" else 15
            sampler = dgl.dataloading.SAINTSampler(mode, budget, prefetch_ndata=["feat"], prefetch_edata=["w"])
            return gfdgl.DataLoader(g, torch.arange(14), sampler, batch_size=2, seed=7, **kw)
        if kind == "dgl_cluster":
            path = os.path.join(tempfile.gettempdir(), "gf_subgraph_engine_path_parts.pkl")
            sampler = dgl.dataloading.ClusterGCNSampler(g, 12, cache_path=path, prefetch_ndata=["feat"])
            return gfdgl.DataLoader(
                g,
                torch.arange(12),
                sampler,
                batch_size=2,
                shuffle=shuffle,
                seed=7,
                **kw,
            )
        sampler = dgl.dataloading.ShaDowKHopSampler([3, 2], prefetch_node_feats=["feat"])
        return gfdgl.DataLoader(g, torch.arange(40), sampler, batch_size=4, shuffle=shuffle, seed=7, **kw)
    torch.manual_seed(11)  # the PyG loaders' seeds and torch's shuffles come from torch's generator
    if kind.startswith("pyg_saint"):
        mode = kind.rsplit("_", 1)[1]
        cls = {
            "node": gp.GraphSAINTNodeSampler,
            "edge": gp.GraphSAINTEdgeSampler,
            "walk": gp.GraphSAINTRandomWalkSampler,
        }[mode]
        extra = {"walk_length": 2} if mode == "walk" else {}
        return cls(data, batch_size=10, num_steps=7, log=False, **extra, **kw)
    if kind == "pyg_shadow":
        return gp.ShaDowKHopSampler(data, 2, 3, node_idx=torch.arange(50), batch_size=7, shuffle=shuffle, **kw)
    if "cd" not in _CLUSTER:
        _CLUSTER["cd"] = gp.ClusterData(data, num_parts=10, log=False)
    return gp.ClusterLoader(_CLUSTER["cd"], batch_size=2, shuffle=shuffle, **kw)


def digest(batch):
    """The tensors of one batch of any kind, in a fixed order."""
    import dgl

    out = []

    def add(x):
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, dgl.DGLGraph):
            out.extend(x.edges())
            out.extend(x.ndata[k] for k in sorted(x.ndata.keys()))
            out.extend(x.edata[k] for k in sorted(x.edata.keys()))
        elif isinstance(x, (list, tuple)):
            for y in x:
                add(y)
        elif hasattr(x, "keys"):  # a PyG Data / Batch
            for k in sorted(x.keys()):
                add(x[k])
        else:  # a number
            out.append(torch.tensor(x))

    add(batch)
    return [t.tolist() for t in out]

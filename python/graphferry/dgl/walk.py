"""Random walks as ``dgl.sampling.random_walk`` makes them, by graphferry's
collective walk."""

from __future__ import annotations

from typing import Any

import dgl
import torch

from .. import _cache
from .convert import check_homogeneous, topology_signature

__all__ = ["random_walk"]


def random_walk(
    g: Any,
    nodes: Any,
    *,
    length: int,
    prob: str | None = None,
    restart_prob: float = 0.0,
    return_eids: bool = False,
    seed: int | None = None,
):
    r"""Random walks as ``dgl.sampling.random_walk`` makes them on a
    homogeneous graph, by graphferry's collective walk: each step moves from
    a node to one of its successors (along out-edges, as DGL does), uniformly
    or, with ``prob``, in proportion to ``g.edata[prob]``.

    Args:
        g (dgl.DGLGraph): a homogeneous graph.
        nodes (Tensor): start nodes.
        length (int): steps per walk.
        prob (str, optional): edata field of non-negative edge weights.
            (default: :obj:`None`)
        restart_prob (float): probability of jumping back to the start node
            at each step. (default: :obj:`0.0`)
        return_eids (bool): also return the edge id of every step.
            (default: :obj:`False`)
        seed (int, optional): seed of the random streams. (default:
            :obj:`None`, drawn from torch's generator)

    Returns:
        ``(traces, types)`` or, with ``return_eids``, ``(traces, eids,
        types)``, as DGL's: ``traces`` int64 ``[len(nodes), length + 1]``
        padded with ``-1`` after a walk stops (at a node without successors,
        where DGL stops too), ``eids`` ``[len(nodes), length]`` with ``-1``
        for restarts and stopped walks, ``types`` the node type of each
        column (all 0).
    """
    if not isinstance(g, dgl.DGLGraph):
        raise TypeError(f"expected a 'dgl.DGLGraph' (got '{type(g).__name__}')")
    check_homogeneous(g)
    if prob is not None and prob not in g.edata:
        raise KeyError(f"'prob': the DGLGraph has no edata field '{prob}' (it has {sorted(g.edata.keys())})")

    def edges():
        src, dst = g.edges(order="eid")
        return src, dst, g.num_nodes(), None if prob is None else g.edata[prob]

    traces, eids = _cache.walk_reversed(
        g,
        topology_signature(g, prob),
        edges,
        nodes,
        length,
        biased=prob is not None,
        restart_prob=restart_prob,
        seed=seed,
    )
    types = torch.zeros(traces.shape[1], dtype=torch.int64)
    return (traces, eids, types) if return_eids else (traces, types)

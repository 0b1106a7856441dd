"""Random walks in the manner of ``torch_cluster.random_walk`` (which PyG's
``Node2Vec`` uses), by graphferry's collective walk."""

from __future__ import annotations

import torch

from .. import _cache
from .._native.dlpack import as_cpu_tensor

__all__ = ["random_walk"]


def random_walk(
    edge_index: torch.Tensor,
    start: torch.Tensor,
    walk_length: int,
    p: float = 1.0,
    q: float = 1.0,
    num_nodes: int | None = None,
    return_edge_indices: bool = False,
    restart_prob: float = 0.0,
    seed: int | None = None,
):
    r"""Uniform random walks in the manner of ``torch_cluster.random_walk``
    (which PyG's ``Node2Vec`` uses), by graphferry's collective walk: from
    each node of ``start``, ``walk_length`` steps, each to a uniformly drawn
    target of the current node's out-edges (``edge_index[0]`` = source).

    Args:
        edge_index (Tensor): ``[2, E]`` edges, row 0 the sources.
        start (Tensor): start nodes.
        walk_length (int): steps per walk.
        p, q (float): node2vec's return and in-out parameters; only
            ``p = q = 1`` (unbiased walks) is supported.
        num_nodes (int, optional): number of nodes. (default: :obj:`None`,
            the largest id + 1)
        return_edge_indices (bool): also return the column of ``edge_index``
            taken by every step. (default: :obj:`False`)
        restart_prob (float): probability of jumping back to the start node
            at each step. (default: :obj:`0.0`)
        seed (int, optional): seed of the random streams. (default:
            :obj:`None`, drawn from torch's generator)

    Returns:
        ``node_seq`` int64 ``[len(start), walk_length + 1]`` (and, with
        ``return_edge_indices``, ``edge_seq`` ``[len(start), walk_length]``).
        A walk that reaches a node without out-edges stops: the rest of its
        row is ``-1`` (``torch_cluster`` repeats the node instead), and so are
        the edge entries of stopped walks and restarts.
    """
    if p != 1.0 or q != 1.0:
        raise NotImplementedError(
            f"graphferry.pyg.random_walk supports unbiased walks only (p = q = 1; got p={p}, q={q})"
        )
    edge_index = as_cpu_tensor(edge_index, "edge_index")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"'edge_index' must have shape [2, E] (got {list(edge_index.shape)})")
    node_seq, edge_seq = _cache.walk_reversed(
        edge_index,
        (_cache.tensor_signature(edge_index), num_nodes),
        lambda: (edge_index[0], edge_index[1], num_nodes, None),
        start,
        walk_length,
        biased=False,
        restart_prob=restart_prob,
        seed=seed,
    )
    return (node_seq, edge_seq) if return_edge_indices else node_seq

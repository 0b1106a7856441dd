r"""PyG's ``torch_geometric.loader.ShaDowKHopSampler`` served by the engine
(PyG's needs ``torch_sparse``'s ``ego_k_hop_sample_adj``): every seed of a
batch gets a subgraph of its own, the ``depth``-hop in-neighbourhood the
engine samples around it (disjoint sampling, ``num_neighbors`` per node and
hop) and every edge of the graph among those nodes (the engine's
induced-subgraph call on the batch's nodes, each edge then given to every
subgraph holding both its ends), batched as PyG batches them.

.. code-block:: python

    loader = graphferry.pyg.ShaDowKHopSampler(data, depth=2, num_neighbors=5,
                                              node_idx=data.train_mask, batch_size=64)
    for batch in loader:
        out = model(batch.x, batch.edge_index, batch.batch, batch.root_n_id)
        loss = F.cross_entropy(out, batch.y)  # y: the roots' labels
"""

from __future__ import annotations

import copy
import numbers
from typing import Any

import torch
from torch_geometric.data import Batch

from .._options import SampleOptions
from .._subgraph import in_process_kwargs
from ..sampling import induced_subgraph, random_seed, sample_with_options
from .subgraph import check_edge_index, sort_coo, topology_graph

__all__ = ["ShaDowKHopSampler"]


class ShaDowKHopSampler(torch.utils.data.DataLoader):
    r"""PyG's ``ShaDowKHopSampler`` by the engine: batches of ``node_idx``,
    each seed's own subgraph, as a ``Batch`` with PyG's fields: ``batch``
    (the subgraph of every node), ``ptr``, ``root_n_id`` (each seed's
    position), ``edge_index`` (positions in the batch, sorted by source then
    target), node-level tensors indexed to the nodes (``y``: the roots'
    rows only), edge-level tensors to the edges, the others copied.

    A subgraph's nodes are the seed and what ``depth`` hops of sampling
    reach from it (in increasing id order), each hop expanding the nodes the
    hop before reached first (PyG expands every node it reached in that hop,
    again if reached before); ``num_neighbors`` in-neighbours per node and
    hop, all of them where it has fewer, ``-1`` all of them (PyG takes none).

    Args:
        data (torch_geometric.data.Data): the graph, with ``edge_index`` on
            the CPU.
        depth (int): hops.
        num_neighbors (int): in-neighbours sampled per node and hop.
        node_idx (Tensor, optional): the seeds: ids, or a bool mask.
            (default: :obj:`None`: every node)
        replace (bool): sample with replacement. (default: :obj:`False`)
        **kwargs: torch ``DataLoader`` arguments (``batch_size``,
            ``shuffle``, ...). ``num_workers > 0`` sets the engine's sampling
            threads: nothing is forked; the worker-only arguments are
            ignored.
    """

    def __init__(
        self,
        data: Any,
        depth: int,
        num_neighbors: int,
        node_idx: torch.Tensor | None = None,
        replace: bool = False,
        **kwargs: Any,
    ):
        kwargs, self.num_threads = in_process_kwargs(kwargs)
        edge_index = check_edge_index(data, "ShaDowKHopSampler")
        for name, value, least in (("depth", depth, 0), ("num_neighbors", num_neighbors, -1)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
                raise ValueError(f"ShaDowKHopSampler's '{name}' must be an int >= {least} (got {value!r})")
        self.data = copy.copy(data)
        self.depth = int(depth)
        self.num_neighbors = int(num_neighbors)
        self.replace = bool(replace)
        self.num_nodes = int(data.num_nodes)
        self.num_edges = int(edge_index.size(1))
        self.graph = topology_graph(data, edge_index, self.num_nodes)
        if node_idx is None:
            node_idx = torch.arange(self.num_nodes)
        elif node_idx.dtype == torch.bool:
            node_idx = node_idx.nonzero(as_tuple=False).view(-1)
        self.node_idx = node_idx
        super().__init__(node_idx.tolist(), collate_fn=self.__collate__, **kwargs)

    def __collate__(self, n_id: list) -> Batch:
        seeds = torch.as_tensor(n_id, dtype=torch.int64)
        n, b = self.num_nodes, seeds.numel()
        options = SampleOptions(
            [self.num_neighbors] * max(self.depth, 1),
            replace=self.replace,
            frontier="new",
            disjoint=True,
            seed=random_seed(),
            num_threads=self.num_threads,
        )
        if self.depth > 0:
            sub = sample_with_options(self.graph, seeds, options)
            sample_batch, sample_nodes = sub.batch, sub.nodes
        else:  # the roots alone (the engine samples one hop or more)
            sample_batch, sample_nodes = torch.arange(b), seeds
        # every subgraph's distinct nodes, in increasing id order, one
        # subgraph after the other
        keys = (sample_batch * n + sample_nodes).unique()
        batch, node = keys // n, keys % n
        ptr = torch.zeros(b + 1, dtype=torch.int64)
        torch.cumsum(torch.bincount(batch, minlength=b), 0, out=ptr[1:])
        root_n_id = torch.searchsorted(keys, torch.arange(b) * n + seeds)
        row, col, e_id = self._edges(batch, node)
        out = Batch(batch=batch, ptr=ptr)
        out.root_n_id = root_n_id
        out.edge_index = torch.stack([row, col], dim=0)
        for k, v in self.data:
            if k in ("edge_index", "adj_t", "num_nodes", "batch", "ptr"):
                continue
            rows_of = v.size(0) if isinstance(v, torch.Tensor) and v.dim() > 0 else None
            if k == "y" and rows_of == self.num_nodes:
                out[k] = v[node][root_n_id]
            elif rows_of == self.num_nodes:
                out[k] = v[node]
            elif rows_of == self.num_edges:
                out[k] = v[e_id]
            else:
                out[k] = v
        return out

    def _edges(self, batch: torch.Tensor, node: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Every subgraph's induced edges as positions in the batch (entry
        ``j`` is node ``node[j]`` of subgraph ``batch[j]``; entries sorted
        by subgraph, then node), with their edge ids: the engine induces
        the subgraph of the batch's distinct nodes once, and each of its
        edges belongs to every subgraph holding both its ends."""
        distinct = node.unique()
        u = max(int(distinct.numel()), 1)
        src, dst, eid = induced_subgraph(self.graph, distinct)
        at = torch.searchsorted(distinct, node)  # each entry's position in distinct
        # the entries of each distinct node, grouped: CSR over distinct
        by_node = torch.argsort(at, stable=True)
        counts = torch.bincount(at, minlength=u)
        starts = torch.cumsum(counts, 0) - counts
        # one candidate per (edge, subgraph holding its source)
        per_edge = counts[src]
        edge = torch.repeat_interleave(torch.arange(src.numel()), per_edge)
        first = torch.repeat_interleave(starts[src] - (torch.cumsum(per_edge, 0) - per_edge), per_edge)
        row = by_node[first + torch.arange(edge.numel())]
        # kept where the same subgraph holds the target
        keys = batch * u + at  # sorted, as the entries are
        want = batch[row] * u + dst[edge]
        col = torch.searchsorted(keys, want).clamp_(max=max(keys.numel() - 1, 0))
        keep = keys[col] == want if keys.numel() else want[:0] == 0
        return sort_coo(row[keep], col[keep], eid[edge[keep]], int(node.numel()))

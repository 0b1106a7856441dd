r"""PyG's ``torch_geometric.loader.ShaDowKHopSampler`` served by the engine's
ShaDow loader (PyG's needs ``torch_sparse``'s ``ego_k_hop_sample_adj``)."""

from __future__ import annotations

import copy
import numbers
from typing import Any

import torch
from torch_geometric.data import Batch

from .._options import SampleOptions
from .._subgraph import SubgraphLoader, SubgraphSample
from ..sampling import random_seed
from .convert import as_graph
from .subgraph import HeldAttributes, SubgraphEpochs, check_edge_index, in_process_kwargs

__all__ = ["ShaDowKHopSampler"]


class ShaDowKHopSampler(SubgraphEpochs, torch.utils.data.DataLoader):
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
    The engine samples, makes the subgraphs induced and gathers the
    attributes it holds on its threads, ahead of the training loop, the
    seeds in torch's sampler's order (PyG's shuffle).

    .. code-block:: python

        loader = graphferry.pyg.ShaDowKHopSampler(data, depth=2, num_neighbors=5,
                                                  node_idx=data.train_mask, batch_size=64)
        for batch in loader:
            out = model(batch.x, batch.edge_index, batch.batch, batch.root_n_id)
            loss = F.cross_entropy(out, batch.y)  # y: the roots' labels

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
        self.graph = as_graph(data)  # with the node attributes, which the engine gathers
        if node_idx is None:
            node_idx = torch.arange(self.num_nodes)
        elif node_idx.dtype == torch.bool:
            node_idx = node_idx.nonzero(as_tuple=False).view(-1)
        self.node_idx = node_idx
        # every batch's samples come from this seed (torch's generator
        # gives it, as PyG's draws come from torch's) and the epoch
        self.seed = random_seed()
        super().__init__(node_idx.tolist(), **kwargs)
        self._open_subgraphs(self.graph, torch.as_tensor(node_idx, dtype=torch.int64))

    def _engine(self, allocator: Any = None) -> SubgraphLoader:
        """The engine's ShaDow loader over the seeds (each epoch in torch's
        sampler's order)."""
        self._held = HeldAttributes(self.data, self.graph, self.num_nodes, self.num_edges)
        options = SampleOptions(
            [self.num_neighbors] * self.depth if self.depth > 0 else [0],  # fan-out 0: the roots alone
            replace=self.replace,
            frontier="new",
            disjoint=True,
            seed=self.seed,
            num_threads=self.num_threads,
        )
        return SubgraphLoader(
            self.graph,
            torch.as_tensor(self.node_idx, dtype=torch.int64),
            kind="khop",
            options=options,
            edge_order="src_dst",
            batch_size=self.batch_size,
            drop_last=self.drop_last,
            feature_names=self._held.node_names,
            edge_feature_names=self._held.edge_names,
            allocator=allocator,
        )

    def _convert(self, sample: SubgraphSample) -> Batch:
        """PyG's ``Batch`` of one engine batch."""
        seeds, n = sample.seeds, self.num_nodes
        b = seeds.numel()
        batch, node = sample.batch, sample.nodes
        ptr = torch.zeros(b + 1, dtype=torch.int64)
        torch.cumsum(torch.bincount(batch, minlength=b), 0, out=ptr[1:])
        # each root's position: its subgraph's nodes are sorted
        root_n_id = torch.searchsorted(batch * n + node, torch.arange(b) * n + seeds)
        out = Batch(batch=batch, ptr=ptr)
        out.root_n_id = root_n_id
        out.edge_index = sample.edge_index
        for k, v in self.data:
            if k in ("edge_index", "adj_t", "num_nodes", "batch", "ptr"):
                continue
            rows = self._held.rows(k, v, sample) if isinstance(v, torch.Tensor) else None
            if k == "y" and rows is not None and v.size(0) == self.num_nodes:
                out[k] = rows[root_n_id]
            else:
                out[k] = rows if rows is not None else v
        return out

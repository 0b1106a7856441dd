r"""graphferry as PyG's ``LinkNeighborLoader`` (link prediction).

:class:`LinkNeighborLoader` yields ``torch_geometric.data.Data`` with the
fields of PyG's: the sampled subgraph (node attributes indexed by ``n_id``,
edge attributes by ``e_id``, ``edge_index`` in local ids),
``num_sampled_nodes``, ``num_sampled_edges``, ``input_id`` (the positions
of the batch's pairs in ``edge_label_index``) and, by negative sampling mode:

- none or ``"binary"``: ``edge_label_index`` (local ids; the positives, then
  ``ceil(amount * B)`` negatives) and ``edge_label`` (the given labels, or
  ones, then zeros; given labels starting at 0 are shifted by one, as PyG
  does, so that 0 means negative);
- ``"triplet"``: ``src_index``, ``dst_pos_index`` and ``dst_neg_index``
  (``[B, amount]``, squeezed when ``amount == 1``).

The engine draws the negatives (from its own random streams: PyG's
distribution, not its values), takes the sorted unique nodes of the pairs as
seeds and samples their neighbourhood, in one call per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch_geometric.data import Data
from torch_geometric.loader.utils import filter_data
from torch_geometric.sampler import NegativeSampling

from ._link import EdgeSampler
from ._loader import refuse_workers
from ._options import SampleOptions
from ._resource import Closeable
from .graph import Graph
from .sampling import random_seed

__all__ = ["LinkNeighborLoader"]


class LinkNeighborLoader(Closeable):
    r"""A ``torch_geometric.loader.LinkNeighborLoader`` backed by the engine.

    Args:
        data (torch_geometric.data.Data or graphferry.Graph): the graph (a
            ``Data`` is converted once and cached).
        num_neighbors (list of int): neighbours per hop from the seeds.
        edge_label_index (Tensor, optional): ``[2, N]`` the seed pairs.
            (default: :obj:`None`, ``data.edge_index``)
        edge_label (Tensor, optional): one label per pair.
        replace (bool): sample with replacement. (default: :obj:`False`)
        neg_sampling (str or NegativeSampling, optional): ``"binary"``,
            ``"triplet"`` or a ``NegativeSampling`` (its ``weight`` must be
            None). (default: :obj:`None`)
        neg_sampling_ratio (float, optional): PyG's older form of
            ``NegativeSampling("binary", neg_sampling_ratio)``.
        weight_attr (str, optional): edge weights for biased sampling.
        transform (callable, optional): applied to every batch.
        batch_size, shuffle, drop_last: as torch's DataLoader.
        seed (int, optional): seed of shuffling, negatives and sampling.
            (default: drawn from torch's generator)
        num_workers (int): must be 0. (default: :obj:`0`)
        num_threads (int): the engine's threads (<= 0: every core).

    Temporal sampling (``edge_label_time``, ``time_attr``), ``disjoint=True``
    and heterogeneous graphs are refused.
    """

    def __init__(
        self,
        data: Any,
        num_neighbors: Sequence[int],
        edge_label_index: Any = None,
        edge_label: Any = None,
        edge_label_time: Any = None,
        replace: bool = False,
        subgraph_type: Any = "directional",
        disjoint: bool = False,
        temporal_strategy: str = "uniform",
        neg_sampling: Any = None,
        neg_sampling_ratio: float | None = None,
        time_attr: str | None = None,
        weight_attr: str | None = None,
        transform: Any = None,
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        seed: int | None = None,
        num_workers: int = 0,
        num_threads: int = 0,
        **kwargs: Any,
    ):
        from .pyg import _num_neighbors, _weight_attr, as_graph

        self._sampler: EdgeSampler | None = None
        refuse_workers(num_workers)
        for name in kwargs:
            if name not in ("persistent_workers", "pin_memory", "prefetch_factor", "filter_per_worker", "directed"):
                raise TypeError(f"LinkNeighborLoader got an unexpected keyword argument '{name}'")
        if edge_label_time is not None or time_attr is not None:
            raise NotImplementedError("graphferry's LinkNeighborLoader does not sample temporally")
        if disjoint:
            raise NotImplementedError("graphferry's LinkNeighborLoader does not support disjoint=True")
        if str(getattr(subgraph_type, "value", subgraph_type)) != "directional":
            raise NotImplementedError(f"subgraph_type={subgraph_type!r}: only 'directional' is supported")
        if neg_sampling_ratio is not None and neg_sampling_ratio > 0:
            if neg_sampling is not None:
                raise ValueError("give neg_sampling or neg_sampling_ratio, not both")
            neg_sampling = NegativeSampling("binary", neg_sampling_ratio)
        self.neg_sampling = NegativeSampling.cast(neg_sampling) if neg_sampling is not None else None
        weights = [getattr(self.neg_sampling, w, None) for w in ("weight", "src_weight", "dst_weight")]
        if self.neg_sampling is not None and any(w is not None for w in weights):
            raise NotImplementedError("NegativeSampling(weight=...) is not supported by graphferry yet")
        self.data = data
        self.transform = transform
        self.batch_size = int(batch_size)
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be positive (got {batch_size})")
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.weight_attr = _weight_attr(weight_attr)
        graph = as_graph(data, self.weight_attr)
        if edge_label_index is None:
            if not isinstance(data, Data):
                raise ValueError("edge_label_index is required with a graphferry.Graph")
            edge_label_index = data.edge_index
        if isinstance(edge_label_index, (tuple, list)) and not isinstance(edge_label_index, torch.Tensor):
            raise TypeError("graphferry supports homogeneous graphs only (got an edge type with edge_label_index)")
        edge_label_index = torch.as_tensor(edge_label_index)
        if edge_label_index.dim() != 2 or edge_label_index.size(0) != 2:
            raise ValueError(f"edge_label_index must be [2, N] (got shape {tuple(edge_label_index.shape)})")
        self.edge_label_index = edge_label_index.to(torch.int64)
        mode = None if self.neg_sampling is None else self.neg_sampling.mode.value
        if edge_label is not None:
            edge_label = torch.as_tensor(edge_label)
            if mode == "triplet":
                raise ValueError("'edge_label' needs to be undefined for 'triplet'-based negative sampling")
            if mode == "binary" and edge_label.numel() > 0 and edge_label.min() == 0:
                edge_label = edge_label + 1  # as PyG: 0 now means negative
        self.edge_label = edge_label
        self.seed = random_seed() if seed is None else int(seed)
        amount = 0.0 if self.neg_sampling is None else float(self.neg_sampling.amount)
        self._amount = amount
        options = SampleOptions(
            _num_neighbors(num_neighbors),
            replace=replace,
            frontier="new",
            biased=self.weight_attr is not None,
            seed=self.seed,
            num_threads=num_threads,
        )
        self._graph: Graph = graph
        self._sampler = EdgeSampler(graph, options, mode="pyg", negative=mode, amount=amount)
        self._epoch = 0

    def __len__(self) -> int:
        n = self.edge_label_index.size(1)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Any:
        if self._sampler is None:
            raise ValueError("this LinkNeighborLoader was closed")
        epoch = self._epoch
        self._epoch += 1
        n = self.edge_label_index.size(1)
        if self.shuffle:
            gen = torch.Generator().manual_seed((self.seed * 1_000_003 + epoch) & (2**63 - 1))
            order = torch.randperm(n, generator=gen)
        else:
            order = torch.arange(n)
        return (
            self._batch(order[i * self.batch_size : (i + 1) * self.batch_size], (epoch << 32) | i)
            for i in range(len(self))
        )

    def __call__(self, index: Any) -> Data:
        """The batch of the pairs at positions ``index`` of
        ``edge_label_index`` (batch key 0), as PyG's loaders offer."""
        return self._batch(torch.as_tensor(index, dtype=torch.int64), 0)

    def _batch(self, input_id: torch.Tensor, key: int) -> Data:
        if self._sampler is None:
            raise ValueError("this LinkNeighborLoader was closed")
        from .pyg import _edge_index

        pairs = self.edge_label_index[:, input_id]
        s = self._sampler.sample(pairs[0].contiguous(), pairs[1].contiguous(), key=key)
        sub = s.sub
        row, col, edge = _edge_index(sub)
        node = sub.nodes
        if isinstance(self.data, Data):
            out = filter_data(self.data, node, row, col, edge, None)
        else:
            out = Data(num_nodes=node.numel(), edge_index=torch.stack([row, col]))
        out.n_id = node
        out.e_id = edge
        out.num_sampled_nodes = sub.hop_counts.tolist()
        out.num_sampled_edges = [b.num_edges for b in sub.blocks]
        out.input_id = input_id
        num_pos = input_id.numel()
        mode = None if self.neg_sampling is None else self.neg_sampling.mode.value
        if mode == "triplet":
            out.src_index = s.src_index
            out.dst_pos_index = s.dst_pos_index
            out.dst_neg_index = s.dst_neg_index.view(num_pos, -1).squeeze(-1)
            for key_ in ("edge_label_index", "edge_label_time"):
                if key_ in out:
                    del out[key_]
        else:
            out.edge_label_index = torch.stack([s.pos_src, s.pos_dst])
            label = self.edge_label[input_id] if self.edge_label is not None else None
            if mode == "binary":
                num_neg = s.pos_src.numel() - num_pos
                if label is None:
                    label = torch.ones(num_pos)
                label = torch.cat([label, label.new_zeros((num_neg,) + label.shape[1:])])
            if label is not None:
                out.edge_label = label
            elif "edge_label" in out:
                del out["edge_label"]
        return self.transform(out) if self.transform is not None else out

    def close(self) -> None:
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.close()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"

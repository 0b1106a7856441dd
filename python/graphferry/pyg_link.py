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

With a ``HeteroData`` (or :class:`graphferry.HeteroGraph`), the pairs are of
one edge type (``edge_label_index=edge_type`` or ``(edge_type, [2, N] pairs
or None)``, as PyG's) and the batch is a ``HeteroData``: the fields above
are on the edge type (``edge_label_index``, ``edge_label``, ``input_id``;
``edge_label_index`` in positions among the source and destination types'
nodes), or, for ``"triplet"``, ``src_index`` on the source type and
``dst_pos_index``/``dst_neg_index`` on the destination type. Negatives are
then drawn in Python from a generator seeded per batch (uniform nodes of the
source and destination types, PyG's distribution).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch_geometric.data import Data, HeteroData
from torch_geometric.loader.utils import filter_data
from torch_geometric.sampler import NegativeSampling

from ._link import EdgeSampler
from ._loader import refuse_workers
from ._options import SampleOptions
from ._pyg_hetero import as_hetero_graph, filter_batch
from ._resource import Closeable
from .graph import Graph
from .hetero import HeteroGraph
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

    Temporal sampling (``edge_label_time``, ``time_attr``) and
    ``disjoint=True`` are refused. A ``HeteroData`` gives ``HeteroData``
    batches (see the module's docstring); ``num_neighbors`` is then a list or
    a dict of edge type -> list, as in :class:`graphferry.pyg.NeighborLoader`.
    """

    def __new__(cls, data: Any = None, *args: Any, **kwargs: Any) -> LinkNeighborLoader:
        if cls is LinkNeighborLoader and isinstance(data, (HeteroData, HeteroGraph)):
            cls = _HeteroLinkNeighborLoader
        return super().__new__(cls)

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


def _negatives(neg_sampling: Any) -> tuple[str | None, float]:
    """(mode, amount) of a ``NegativeSampling`` (None: no negatives)."""
    if neg_sampling is None:
        return None, 0.0
    return neg_sampling.mode.value, float(neg_sampling.amount)


class _HeteroLinkNeighborLoader(LinkNeighborLoader):
    """:class:`LinkNeighborLoader` over a ``HeteroData`` or
    :class:`graphferry.HeteroGraph` (``LinkNeighborLoader(hetero_data, ...)``
    makes one)."""

    def __init__(
        self,
        data: Any,
        num_neighbors: Any,
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
        from .pyg import _hetero_options, _subgraph_type, _weight_attr

        self._sampler = None
        self._hetero: HeteroGraph | None = None
        refuse_workers(num_workers)
        for name in kwargs:
            if name not in ("persistent_workers", "pin_memory", "prefetch_factor", "filter_per_worker", "directed"):
                raise TypeError(f"LinkNeighborLoader got an unexpected keyword argument '{name}'")
        if edge_label_time is not None or time_attr is not None:
            raise NotImplementedError("graphferry's LinkNeighborLoader does not sample temporally")
        if disjoint:
            raise NotImplementedError("graphferry's LinkNeighborLoader does not support disjoint=True")
        self.subgraph_type = _subgraph_type(subgraph_type, kwargs.get("directed", True))
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
        hetero = as_hetero_graph(data, self.weight_attr)
        self.input_type, pairs = self._edge_label_index(hetero, edge_label_index)
        self.edge_label_index = pairs
        mode, self._amount = _negatives(self.neg_sampling)
        if edge_label is not None:
            edge_label = torch.as_tensor(edge_label)
            if edge_label.size(0) != pairs.size(1):
                raise ValueError(f"'edge_label' has {edge_label.size(0)} labels for {pairs.size(1)} pairs")
            if mode == "triplet":
                raise ValueError("'edge_label' needs to be undefined for 'triplet'-based negative sampling")
            if mode == "binary" and edge_label.numel() > 0 and edge_label.min() == 0:
                edge_label = edge_label + 1  # as PyG: 0 now means negative
        self.edge_label = edge_label
        self.seed = random_seed() if seed is None else int(seed)
        self._options = _hetero_options(
            hetero,
            num_neighbors,
            replace=replace,
            biased=self.weight_attr is not None,
            scheme="node",
            layer_without_replacement=False,
            exclude_edges=None,
            disjoint=False,
            temporal=None,
            temporal_strategy="uniform",
            seed=self.seed,
            num_threads=num_threads,
        )
        self._hetero = hetero
        self._graph = hetero.graph
        self._sampler = hetero  # open marker: close() forgets it (the graph stays with its owner)
        self._epoch = 0

    def _edge_label_index(
        self, hetero: HeteroGraph, edge_label_index: Any
    ) -> tuple[tuple[str, str, str], torch.Tensor]:
        """PyG's heterogeneous ``edge_label_index``: an edge type (its
        pairs are its edges) or ``(edge type, [2, N] pairs or None)``."""
        if edge_label_index is None:
            raise ValueError(
                "'edge_label_index' is needed for a heterogeneous graph: an edge type or (edge type, pairs) "
                f"(edge types: {hetero.edge_types})"
            )
        if isinstance(edge_label_index, str) or (
            isinstance(edge_label_index, tuple) and all(isinstance(p, str) for p in edge_label_index)
        ):
            etype, pairs = edge_label_index, None
        elif isinstance(edge_label_index, (tuple, list)) and len(edge_label_index) == 2:
            etype, pairs = edge_label_index
        else:
            raise TypeError(
                "'edge_label_index' of a heterogeneous graph must be an edge type or (edge type, pairs) "
                f"(got '{type(edge_label_index).__name__}')"
            )
        if isinstance(etype, tuple) and len(etype) == 2:  # PyG's (src, dst) shorthand
            matches = [et for et in hetero.edge_types if (et[0], et[2]) == etype]
            if len(matches) != 1:
                raise ValueError(f"edge type {etype} names {len(matches)} edge types ({matches}); give (src, rel, dst)")
            etype = matches[0]
        etype = hetero.canonical_etype(etype)  # ValueError naming an unknown edge type
        if pairs is None:  # every edge of the type
            if isinstance(self.data, HeteroData):
                return etype, torch.as_tensor(self.data[etype].edge_index).to(torch.int64)
            return etype, torch.stack(hetero.edges(etype))
        pairs = torch.as_tensor(pairs)
        if pairs.dim() != 2 or pairs.size(0) != 2 or pairs.is_floating_point():
            raise ValueError(f"edge_label_index must be [2, N] integer pairs (got {tuple(pairs.shape)}, {pairs.dtype})")
        pairs = pairs.to(torch.int64)
        hetero.to_global(etype[0], pairs[0])  # ValueError naming an id out of range
        hetero.to_global(etype[2], pairs[1])
        return etype, pairs

    def _batch(self, input_id: torch.Tensor, key: int) -> HeteroData:
        if self._hetero is None:
            raise ValueError("this LinkNeighborLoader was closed")
        from .pyg import _mix, _sample, _split

        hetero, (src_t, _, dst_t) = self._hetero, self.input_type
        pairs = self.edge_label_index[:, input_id]
        src, dst = pairs[0], pairs[1]
        num_pos = src.numel()
        mode, amount = _negatives(self.neg_sampling)
        gen = torch.Generator().manual_seed(_mix(self.seed, -1 - key))
        label = self.edge_label[input_id] if self.edge_label is not None else None
        if mode == "binary":
            num_neg = math.ceil(num_pos * amount)
            src = torch.cat([src, torch.randint(hetero.num_nodes(src_t), (num_neg,), generator=gen)])
            dst = torch.cat([dst, torch.randint(hetero.num_nodes(dst_t), (num_neg,), generator=gen)])
            if label is None:
                label = torch.ones(num_pos)
            label = torch.cat([label, label.new_zeros((num_neg,) + label.shape[1:])])
        elif mode == "triplet":
            num_neg = math.ceil(num_pos * amount)
            dst = torch.cat([dst, torch.randint(hetero.num_nodes(dst_t), (num_neg,), generator=gen)])
        # The seeds: the sorted unique nodes of the pairs, per type (as PyG).
        if src_t != dst_t:
            src_u, src_inv = src.unique(return_inverse=True)
            dst_u, dst_inv = dst.unique(return_inverse=True)
            seeds = torch.cat([hetero.to_global(src_t, src_u), hetero.to_global(dst_t, dst_u)])
        else:
            both, inv = torch.cat([src, dst]).unique(return_inverse=True)
            src_inv, dst_inv = inv[: src.numel()], inv[src.numel() :]
            seeds = hetero.to_global(src_t, both)
        out = _sample(hetero.graph, seeds, self._options, _mix(self.seed, key), "directional")
        data = filter_batch(self.data, hetero, _split(hetero, out, self.subgraph_type))
        data[self.input_type].input_id = input_id
        if mode == "triplet":
            data[src_t].src_index = src_inv
            data[dst_t].dst_pos_index = dst_inv[:num_pos]
            data[dst_t].dst_neg_index = dst_inv[num_pos:].view(num_pos, -1).squeeze(-1)
            for name in ("edge_label_index", "edge_label", "edge_label_time"):
                if name in data[self.input_type]:
                    del data[self.input_type][name]
        else:
            data[self.input_type].edge_label_index = torch.stack([src_inv, dst_inv])
            if label is not None:
                data[self.input_type].edge_label = label
            elif "edge_label" in data[self.input_type]:
                del data[self.input_type]["edge_label"]
        return self.transform(data) if self.transform is not None else data

    def close(self) -> None:
        self._hetero = None
        self._sampler = None

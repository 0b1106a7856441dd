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

from .._link import EdgeSampler
from .._loader import loader_seed, mix_seed, refuse_workers
from .._resource import Closeable
from ..hetero import HeteroGraph
from .base import check_weight_attr, edge_index, num_neighbors_list, sample, sample_options, split, subgraph_type_of
from .convert import as_graph, as_hetero_graph, is_hetero
from .hetero import filter_batch

__all__ = ["LinkNeighborLoader"]

# torch DataLoader and PyG loader arguments that only tune worker processes: accepted and ignored.
_IGNORED = ("persistent_workers", "pin_memory", "prefetch_factor", "filter_per_worker", "directed")


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
    One class for both: it branches on ``data``.
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
        self._sampler: EdgeSampler | HeteroGraph | None = None
        self._hetero: HeteroGraph | None = None
        refuse_workers(num_workers)
        for name in kwargs:
            if name not in _IGNORED:
                raise TypeError(f"LinkNeighborLoader got an unexpected keyword argument '{name}'")
        if edge_label_time is not None or time_attr is not None:
            raise NotImplementedError("graphferry's LinkNeighborLoader does not sample temporally")
        if disjoint:
            raise NotImplementedError("graphferry's LinkNeighborLoader does not support disjoint=True")
        per_type = is_hetero(data)
        if per_type:
            self.subgraph_type = subgraph_type_of(subgraph_type, kwargs.get("directed", True))
        elif str(getattr(subgraph_type, "value", subgraph_type)) != "directional":
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
        self.weight_attr = check_weight_attr(weight_attr)
        mode, self._amount = _negatives(self.neg_sampling)
        hetero = None
        if per_type:
            hetero = as_hetero_graph(data, self.weight_attr)
            self.input_type, self.edge_label_index = self._edge_label_index(hetero, edge_label_index)
        else:
            graph = as_graph(data, self.weight_attr)
            self.edge_label_index = self._pairs(data, edge_label_index)
        self.edge_label = self._labels(edge_label, mode, self.edge_label_index.size(1) if per_type else None)
        self.seed = int(loader_seed(seed))
        options = sample_options(
            hetero,
            num_neighbors if per_type else num_neighbors_list(num_neighbors),
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
        if hetero is not None:
            self._options = options
            self._hetero = hetero
            self._graph = hetero.graph
            self._sampler = hetero  # open marker: close() forgets it (the graph stays with its owner)
        else:
            self._graph = graph
            self._sampler = EdgeSampler(graph, options, mode="pyg", negative=mode, amount=self._amount)
        self._epoch = 0

    @staticmethod
    def _pairs(data: Any, edge_label_index: Any) -> torch.Tensor:
        """A homogeneous graph's ``edge_label_index``: ``[2, N]`` pairs (by
        default ``data.edge_index``)."""
        if edge_label_index is None:
            if not isinstance(data, Data):
                raise ValueError("edge_label_index is required with a graphferry.Graph")
            edge_label_index = data.edge_index
        if isinstance(edge_label_index, (tuple, list)) and not isinstance(edge_label_index, torch.Tensor):
            raise TypeError("graphferry supports homogeneous graphs only (got an edge type with edge_label_index)")
        edge_label_index = torch.as_tensor(edge_label_index)
        if edge_label_index.dim() != 2 or edge_label_index.size(0) != 2:
            raise ValueError(f"edge_label_index must be [2, N] (got shape {tuple(edge_label_index.shape)})")
        return edge_label_index.to(torch.int64)

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

    @staticmethod
    def _labels(edge_label: Any, mode: str | None, num_pairs: int | None) -> torch.Tensor | None:
        """``edge_label`` checked against the negative sampling mode (and,
        on a heterogeneous graph, the ``num_pairs`` pairs), shifted by one
        for binary negatives as PyG does."""
        if edge_label is None:
            return None
        edge_label = torch.as_tensor(edge_label)
        if num_pairs is not None and edge_label.size(0) != num_pairs:
            raise ValueError(f"'edge_label' has {edge_label.size(0)} labels for {num_pairs} pairs")
        if mode == "triplet":
            raise ValueError("'edge_label' needs to be undefined for 'triplet'-based negative sampling")
        if mode == "binary" and edge_label.numel() > 0 and edge_label.min() == 0:
            edge_label = edge_label + 1  # as PyG: 0 now means negative
        return edge_label

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

    def _batch(self, input_id: torch.Tensor, key: int) -> Data | HeteroData:
        if self._sampler is None:
            raise ValueError("this LinkNeighborLoader was closed")
        if self._hetero is not None:
            return self._batch_per_type(input_id, key)
        return self._batch_of_pairs(input_id, key)

    def _batch_of_pairs(self, input_id: torch.Tensor, key: int) -> Data:
        """A homogeneous graph's batch: the engine draws the negatives."""
        pairs = self.edge_label_index[:, input_id]
        s = self._sampler.sample(pairs[0].contiguous(), pairs[1].contiguous(), key=key)
        sub = s.sub
        row, col, edge = edge_index(sub)
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

    def _batch_per_type(self, input_id: torch.Tensor, key: int) -> HeteroData:
        """A heterogeneous graph's batch: the negatives are drawn here."""
        hetero, (src_t, _, dst_t) = self._hetero, self.input_type
        pairs = self.edge_label_index[:, input_id]
        src, dst = pairs[0], pairs[1]
        num_pos = src.numel()
        mode, amount = _negatives(self.neg_sampling)
        gen = torch.Generator().manual_seed(mix_seed(self.seed, -1 - key))
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
        out = sample(hetero.graph, seeds, self._options, mix_seed(self.seed, key), "directional", per_type=True)
        data = filter_batch(self.data, hetero, split(hetero, out, self.subgraph_type))
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
        sampler, self._sampler = self._sampler, None
        self._hetero = None
        if isinstance(sampler, EdgeSampler):
            sampler.close()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


def _negatives(neg_sampling: Any) -> tuple[str | None, float]:
    """(mode, amount) of a ``NegativeSampling`` (None: no negatives)."""
    if neg_sampling is None:
        return None, 0.0
    return neg_sampling.mode.value, float(neg_sampling.amount)

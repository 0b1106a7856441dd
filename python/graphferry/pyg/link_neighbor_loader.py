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

The engine's edge loader (``gf_edge_loader_open``) makes the batches on its
own threads, ahead of the training loop: it shuffles the pairs every epoch,
draws the negatives (from its own random streams: PyG's distribution, not its
values), takes the sorted unique nodes of the pairs as seeds, samples their
neighbourhood and gathers the node attributes and edge attributes (e.g.
``edge_attr``) the graph holds; the training thread only wraps the arrays.

With a ``HeteroData`` (or :class:`graphferry.HeteroGraph`), the pairs are of
one edge type (``edge_label_index=edge_type`` or ``(edge_type, [2, N] pairs
or None)``, as PyG's) and the batch is a ``HeteroData``: the fields above
are on the edge type (``edge_label_index``, ``edge_label``, ``input_id``;
``edge_label_index`` in positions among the source and destination types'
nodes), or, for ``"triplet"``, ``src_index`` on the source type and
``dst_pos_index``/``dst_neg_index`` on the destination type. The engine
draws the negatives among the nodes of the edge type's source and
destination types (PyG's distribution), from the same random streams as on
a homogeneous graph.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from torch_geometric.data import Data, HeteroData
from torch_geometric.edge_index import EdgeIndex
from torch_geometric.loader.utils import filter_custom_store, filter_data
from torch_geometric.sampler import NegativeSampling

from .._link import EdgeLoader, EdgeSample, EdgeSampler
from .._loader import (
    EngineLoader,
    comm_timeout,
    engine_edge_data,
    loader_seed,
    sync_edge_data,
    torch_loader_kwargs,
    worker_threads,
)
from .._native.dlpack import as_cpu_tensor
from .._transfer import pin_transfer
from ..distributed import DistributedEdgeLoader, PartGraph, _shared_seed
from ..graph import Graph, pyg_node_attrs
from ..hetero import HeteroGraph
from .base import (
    COO,
    check_flags,
    check_weight_attr,
    directional,
    edge_index,
    finish,
    link_negatives,
    made,
    num_neighbors_list,
    sample_options,
    split,
    subgraph_type_of,
)
from .convert import check_data, is_hetero, time_level, time_tensor
from .hetero import filter_batch
from .neighbor_loader import check_comm_data
from .stores import engine_graph, is_hetero_stores

__all__ = ["LinkNeighborLoader"]

_EMPTY = torch.empty(0, dtype=torch.int64)

# PyG loader arguments that only tune worker processes: accepted and ignored
# (torch DataLoader's too: torch_loader_kwargs).
_IGNORED = ("filter_per_worker", "directed")


class LinkNeighborLoader(EngineLoader):
    r"""A ``torch_geometric.loader.LinkNeighborLoader`` backed by the
    engine's edge loader (batches made on its threads, ahead of the loop).

    Args:
        data (torch_geometric.data.Data, graphferry.Graph or tuple): the
            graph (a ``Data`` is converted once and cached), or PyG's
            ``(FeatureStore, GraphStore)`` pair (the store's graph is
            sampled, the features read from the ``FeatureStore``;
            ``edge_label_index`` is then ``(None, pairs)``, or ``(edge
            type, pairs)`` for typed edges, whose batches are
            ``HeteroData``; ``time_attr`` names FeatureStore tensors, as in
            :class:`graphferry.pyg.NeighborLoader`).
        num_neighbors (list of int): neighbours per hop from the seeds.
        edge_label_index (Tensor, optional): ``[2, N]`` the seed pairs.
            (default: :obj:`None`, ``data.edge_index``)
        edge_label (Tensor, optional): one label per pair.
        replace (bool): sample with replacement. (default: :obj:`False`)
        neg_sampling (str or NegativeSampling, optional): ``"binary"``,
            ``"triplet"`` or a ``NegativeSampling``, weighted or not (newer
            PyG's ``src_weight`` and ``dst_weight`` must then be the same
            for binary negatives; on a heterogeneous graph one weight per
            node of the drawn type, as PyG's).
            (default: :obj:`None`)
        neg_sampling_ratio (float, optional): PyG's older form of
            ``NegativeSampling("binary", neg_sampling_ratio)``.
        weight_attr (str, optional): edge weights for biased sampling.
        transform (callable, optional): applied to every batch.
        batch_size, shuffle, drop_last, num_workers, queue_capacity, num_threads, pin_memory: as in
            :class:`graphferry.pyg.NeighborLoader`.
        seed (int, optional): seed of shuffling, negatives and sampling.
            (default: drawn from torch's generator)
        comm (graphferry.distributed.Communicator, optional): sample
            across processes, one rank each, as
            :class:`graphferry.distributed.DistributedEdgeLoader` does:
            ``data`` is a :class:`graphferry.Graph` or
            :class:`graphferry.HeteroGraph` opened with
            ``num_patches=comm.size`` or this rank's
            :class:`graphferry.distributed.PartGraph` (dsp or hybrid),
            ``edge_label_index`` the pairs of the whole graph (the same on
            every rank), and each rank gets every ``comm.size``-th batch of
            the single-process epoch, the same ``Data`` or ``HeteroData``
            (padded: see :mod:`graphferry.distributed`). Directional;
            homogeneous on a part (temporal once the part has its times:
            ``PartGraph.set_node_time``); ``seed=None`` takes rank 0's
            draw.
            (default: :obj:`None`)

    ``subgraph_type`` is PyG's (``"directional"``, ``"bidirectional"``,
    ``"induced"``) on homogeneous and heterogeneous graphs alike.
    ``disjoint=True`` gives every pair end, negatives included, its own
    subgraph, with ``batch`` (each node's pair, PyG's seed position modulo
    the positives; on a heterogeneous graph the seed's position among the
    seeds of its type). Temporal sampling (disjoint, as PyG's):
    ``time_attr`` names the node or edge times of ``data`` (per type on a
    heterogeneous graph), ``edge_label_time`` gives one time per pair (the
    seed time of both its ends and of its negatives; the batch's
    ``edge_label_time``, or ``seed_time`` with triplet negatives, on the
    source and destination node types of a ``HeteroData``),
    ``temporal_strategy`` is ``"uniform"`` or ``"last"``; under node times
    every negative is not later than its pair's time (drawn again as PyG's
    ``neg_sample`` does, then the earliest node). A ``HeteroData`` gives ``HeteroData``
    batches (see the module's docstring); ``num_neighbors`` is then a list or
    a dict of edge type -> list, as in :class:`graphferry.pyg.NeighborLoader`.
    One class for both: it branches on ``data``. ``loader(index)`` makes the
    batch of the pairs at positions ``index`` in the caller's thread.
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
        queue_capacity: int = 2,
        num_threads: int = 0,
        comm: Any = None,
        **kwargs: Any,
    ):
        self._loaders = []
        self._sampler: EdgeSampler | None = None
        self._hetero: HeteroGraph | None = None
        self.comm = comm
        timeout = kwargs.get("timeout", 0)
        num_threads = worker_threads(num_workers, num_threads)
        transfer = pin_transfer(kwargs.pop("pin_memory", False), kwargs.pop("pin_memory_device", ""))
        # PyG's LinkNeighborLoader arguments past transform: is_sorted and
        # filter_per_worker change nothing here (checked); a sampler output
        # transform or a given neighbor_sampler are NodeLoader-side hooks the
        # edge batches do not take yet (refused when set, accepted at None).
        check_flags(kwargs.pop("is_sorted", False), kwargs.get("filter_per_worker"))
        for name in ("transform_sampler_output", "neighbor_sampler"):
            if kwargs.pop(name, None) is not None:
                raise NotImplementedError(f"graphferry's LinkNeighborLoader does not take '{name}' (only None)")
        generator = torch_loader_kwargs({k: v for k, v in kwargs.items() if k not in _IGNORED}, type(self).__name__)
        check_data(data)
        if (edge_label_time is not None) != (time_attr is not None):
            # PyG's LinkNeighborLoader refuses the same, in these words.
            given, hint = "set", "'edge_label_time' is set while 'time_attr' is not, give 'time_attr'"
            if time_attr is not None:
                given, hint = "not set", "'time_attr' is set while 'edge_label_time' is not, give 'edge_label_time'"
            raise ValueError(
                f"Received conflicting 'edge_label_time' and 'time_attr' arguments: 'edge_label_time' is {given} "
                f"while 'time_attr' is {'not set' if time_attr is None else 'set'}. Both arguments must be provided "
                f"for temporal sampling: {hint}"
            )
        per_type = is_hetero(data) or is_hetero_stores(data)
        self.time_attr = time_attr
        self._temporal = time_level(data, time_attr)
        self.temporal_strategy = temporal_strategy
        # Temporal sampling is disjoint, as PyG's.
        self.disjoint = bool(disjoint) or self._temporal is not None
        self.subgraph_type = subgraph_type_of(subgraph_type, kwargs.get("directed", True))
        if comm is not None:
            check_comm_data(data, self.subgraph_type)
        if neg_sampling_ratio is not None and neg_sampling_ratio > 0:
            if neg_sampling is not None:
                raise ValueError("give neg_sampling or neg_sampling_ratio, not both")
            neg_sampling = NegativeSampling("binary", neg_sampling_ratio)
        self.neg_sampling = NegativeSampling.cast(neg_sampling) if neg_sampling is not None else None
        # Under node times the engine keeps negatives not later than their
        # seed, as PyG's neg_sample.
        self._mode, self._amount, weights = link_negatives(self.neg_sampling)
        self.data = data
        self.transform = transform
        self.batch_size = int(batch_size)
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be positive (got {batch_size})")
        self.shuffle, self.drop_last = bool(shuffle), bool(drop_last)
        self.weight_attr = check_weight_attr(weight_attr)
        self._node_attrs: list[str] = []
        self._edge_attrs: list[str] = []
        # PyG's (FeatureStore, GraphStore): features read from the store
        self._stores: tuple | None = data if isinstance(data, tuple) else None
        # PyG's e_id order of a GraphStore (per edge type for typed edges)
        graph, hetero, self._edge_perm = engine_graph(data, self.weight_attr, time_attr)
        if per_type:
            if self._stores is None:
                self._node_attrs = list(hetero.engine_names())  # gathered by the engine with each batch
            self._hetero = hetero
            self.input_type, self.edge_label_index = self._edge_label_index(hetero, edge_label_index)
            # The pairs in global ids: the engine draws the negatives among
            # the nodes of the pairs' types.
            src = hetero.to_global(self.input_type[0], self.edge_label_index[0])
            dst = hetero.to_global(self.input_type[2], self.edge_label_index[1])
        else:
            self.edge_label_index = self._pairs(data, edge_label_index)
            src, dst = self.edge_label_index[0].contiguous(), self.edge_label_index[1].contiguous()
            if isinstance(data, Data):
                # What the engine gathers on its threads: the node attributes
                # the graph holds and the edge attributes handed to it.
                held = set(graph.node_data_names())
                self._node_attrs = [n for n in pyg_node_attrs(data) if n in held]
                self._edge_attrs = sync_edge_data(graph, _edge_attrs(data))
            elif isinstance(data, Graph):
                self._node_attrs = graph.node_data_names()  # every node attribute the graph holds, as NeighborLoader
        self.edge_label = self._labels(edge_label, self._mode, self.edge_label_index.size(1) if per_type else None)
        self.edge_label_time = None
        if edge_label_time is not None:
            self.edge_label_time = time_tensor(as_cpu_tensor(edge_label_time, "edge_label_time"), "'edge_label_time'")
            if self.edge_label_time.numel() != self.edge_label_index.size(1):
                raise ValueError(
                    f"'edge_label_time' has {self.edge_label_time.numel()} times for "
                    f"{self.edge_label_index.size(1)} pairs (want one per pair)"
                )
        if comm is not None and seed is None:  # the same on every rank
            seed = _shared_seed(comm, int(loader_seed(None, generator=generator)))
        self.seed = int(loader_seed(seed, generator=generator))
        options = sample_options(
            self._hetero,
            num_neighbors if per_type else num_neighbors_list(num_neighbors),
            replace=replace,
            biased=self.weight_attr is not None,
            scheme="node",
            layer_without_replacement=False,
            exclude_edges=None,
            disjoint=self.disjoint,
            temporal=self._temporal,
            temporal_strategy=temporal_strategy,
            seed=self.seed,
            num_threads=num_threads,
        )
        self._pair_ends = (src, dst)
        self._edge_args = dict(mode="pyg", negative=self._mode, amount=self._amount, negative_weights=weights)
        loader_args = dict(
            batch_size=self.batch_size, shuffle=self.shuffle, drop_last=self.drop_last, queue_capacity=queue_capacity
        )

        def open_loader(**memory: Any) -> EdgeLoader:
            if self._edge_attrs:
                # Edge attributes replaced since: handed to the engine.
                self._edge_attrs = sync_edge_data(graph, _edge_attrs(data))
            distributed = dict(comm=comm, timeout=comm_timeout(comm, timeout)) if comm is not None else {}
            return (DistributedEdgeLoader if comm is not None else EdgeLoader)(
                graph,
                src,
                dst,
                options,
                **distributed,
                **self._edge_args,
                feature_names=self._node_attrs,
                edge_feature_names=self._edge_attrs,
                # PyG's edge_index, made by the engine as subgraph_type asks
                # (directional with comm; a typed batch is split there, its
                # induced edges too)
                coo=COO[self.subgraph_type] if self._hetero is None or self.subgraph_type == "induced" else 0,
                seed_times=self.edge_label_time,  # temporal: one per pair, shuffled with them
                **loader_args,
                **memory,
            )

        # Opened on first use: a bad pair is reported when the loader is
        # iterated, as PyG reports it.
        self._open_engine(
            graph,
            src,
            options,
            opener=open_loader,
            eager=False,
            transfer=transfer,
            timeout=0 if comm is not None else timeout,
        )

    @staticmethod
    def _pairs(data: Any, edge_label_index: Any) -> torch.Tensor:
        """A homogeneous graph's ``edge_label_index``: ``[2, N]`` pairs (by
        default ``data.edge_index``)."""
        if edge_label_index is None:
            if not isinstance(data, Data):
                raise ValueError("edge_label_index is required with a graphferry.Graph or a (FeatureStore, GraphStore)")
            edge_label_index = data.edge_index
        if isinstance(edge_label_index, tuple) and len(edge_label_index) == 2 and edge_label_index[0] is None:
            edge_label_index = edge_label_index[1]  # PyG's (edge type None, pairs), as with stores
            if edge_label_index is None:
                raise ValueError("edge_label_index is required with a (FeatureStore, GraphStore)")
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
            if len(matches) > 1:
                raise ValueError(f"edge type {etype} names {len(matches)} edge types ({matches}); give (src, rel, dst)")
            # As PyG's HeteroData: the one stored type, else (src, 'to', dst)
            etype = matches[0] if matches else (etype[0], "to", etype[1])
        if pairs is None or tuple(etype) in hetero.edge_types or len(etype) != 3:
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
        self._check_open()
        n = self.edge_label_index.size(1)
        batches = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.comm is not None and batches > 0:  # this rank's share, padded
            return -(-batches // self.comm.size)
        return batches

    def __call__(self, index: Any) -> Data | HeteroData:
        """The batch of the pairs at positions ``index`` of
        ``edge_label_index`` (batch key 0), as PyG's loaders offer, made in
        the caller's thread."""
        self._check_open()
        if isinstance(self._graph, PartGraph):
            raise NotImplementedError(
                "loader(index) samples in this process, which holds only its part of the graph: iterate the loader"
            )
        index = torch.as_tensor(index, dtype=torch.int64)
        if self._sampler is None:
            self._sampler = EdgeSampler(self._graph, self._options, **self._edge_args)
        src, dst = self._pair_ends
        times = self.edge_label_time[index].contiguous() if self.edge_label_time is not None else None
        s = self._sampler.sample(src[index].contiguous(), dst[index].contiguous(), key=0, seed_times=times)
        s.input_id = index[s.input_id]  # positions among the pairs of edge_label_index
        return self._convert(s)

    def _convert(self, s: EdgeSample) -> Data | HeteroData:
        """PyG's batch of one engine edge batch."""
        out = self._batch_per_type(s) if self._hetero is not None else self._batch_of_pairs(s)
        num_pos = s.input_id.numel()
        store = out[self.input_type] if self._hetero is not None else out
        store.input_id = s.input_id
        times = self.edge_label_time[s.input_id] if self.edge_label_time is not None else None
        if self._mode == "triplet":
            src_store = out[self.input_type[0]] if self._hetero is not None else out
            dst_store = out[self.input_type[2]] if self._hetero is not None else out
            src_store.src_index = s.src_index
            dst_store.dst_pos_index = s.dst_pos_index
            dst_store.dst_neg_index = s.dst_neg_index.view(num_pos, -1).squeeze(-1)
            for name in ("edge_label_index", "edge_label", "edge_label_time"):
                if name in store:
                    del store[name]
            # PyG's: the pairs' times (None removes it); on a HeteroData on
            # the source and destination types.
            for seed_store in (src_store, dst_store) if self._hetero is not None else (store,):
                seed_store.seed_time = times
        else:
            store.edge_label_index = torch.stack([s.pos_src, s.pos_dst])
            label = self.edge_label[s.input_id] if self.edge_label is not None else None
            if self._mode == "binary":
                num_neg = s.pos_src.numel() - num_pos
                if label is None:
                    label = torch.ones(num_pos)
                label = torch.cat([label, label.new_zeros((num_neg,) + label.shape[1:])])
            if label is not None:
                store.edge_label = label
            elif "edge_label" in store:
                del store["edge_label"]
            if times is not None:  # PyG's: each pair's time, the negatives' repeated from the positives'
                store.edge_label_time = times.repeat(-(-s.pos_src.numel() // num_pos))[: s.pos_src.numel()]
            elif "edge_label_time" in store:
                del store["edge_label_time"]
        return self.transform(out) if self.transform is not None else out

    def _batch_of_pairs(self, s: EdgeSample) -> Data:
        """The subgraph of a homogeneous graph's batch: node and edge
        attributes the engine gathered taken as they are, the others
        indexed here (as PyG's filter_data)."""
        sub = s.sub
        node = sub.nodes
        source = self.data
        out, kind = made(sub, directional(sub), self.subgraph_type)
        out = finish(out, self._graph, kind)
        if self._stores is not None:
            # PyG's filter_custom_store: the features read from the FeatureStore.
            batch = filter_custom_store(*self._stores, node, out.row, out.col, out.edge)
            batch.n_id, batch.batch = node, out.batch
            batch.e_id = self._edge_perm[out.edge] if self._edge_perm is not None else out.edge
            batch.num_sampled_nodes, batch.num_sampled_edges = out.num_sampled_nodes, out.num_sampled_edges
            return batch
        if self.subgraph_type != "directional":
            # As PyG's sampler: the directional sample made bidirectional
            # or induced, its per-hop counts dropped; the attributes of its
            # edges indexed here.
            if isinstance(source, Data):
                pruned = copy.copy(source)
                for name in sub.node_data:
                    del pruned[name]
                batch = filter_data(pruned, node, out.row, out.col, out.edge, None)
                for name in sub.node_data:
                    batch[name] = sub.node_data[name]
            else:
                batch = Data(num_nodes=node.numel(), edge_index=torch.stack([out.row, out.col]))
            batch.n_id, batch.e_id, batch.batch = node, out.edge, out.batch
            batch.num_sampled_nodes = batch.num_sampled_edges = None
            return batch
        row, col, edge = edge_index(sub)
        # PyG's edge_index, [2, E]: the engine's own buffer when it made one.
        index = sub.coo[0] if sub.coo is not None else torch.stack([row, col])
        if isinstance(source, Data):
            edge_data = {
                name: value
                for name, value in sub.edge_data.items()
                if engine_edge_data(self._graph, name, getattr(source, name, None))
            }
            taken = list(sub.node_data) + list(edge_data)
            pruned = copy.copy(source)
            for name in taken:
                del pruned[name]
            # PyG's filter_data for the attributes the engine did not gather
            # (its edge_index is replaced by the engine's, made as PyG makes
            # it: sorted by target).
            out = filter_data(pruned, node, _EMPTY, _EMPTY, edge, None)
            for name in taken:
                out[name] = sub.node_data[name] if name in sub.node_data else edge_data[name]
            n = node.numel()
            out.edge_index = EdgeIndex(index, sparse_size=(n, n), sort_order="col")
        else:
            out = Data(num_nodes=node.numel(), edge_index=index)
            for name, value in sub.node_data.items():  # a graphferry.Graph's node data
                out[name] = value
        out.n_id = node
        out.e_id = edge
        out.batch = getattr(sub, "batch", None)  # disjoint: each node's pair (None removes it, as in PyG)
        out.num_sampled_nodes = sub.hop_counts.tolist()
        out.num_sampled_edges = [b.num_edges for b in sub.blocks]
        return out

    def _batch_per_type(self, s: EdgeSample) -> HeteroData:
        """The subgraph of a heterogeneous graph's batch, split by type."""
        hetero = self._hetero
        out = split(hetero, *made(s.sub, directional(s.sub, per_type=True), self.subgraph_type))
        return filter_batch(self.data, hetero, out, self._edge_perm, rows=s.sub.node_data)

    def close(self) -> None:
        """Stops the engine's threads of this loader. Idempotent."""
        super().close()
        sampler, self._sampler = getattr(self, "_sampler", None), None
        if sampler is not None:
            sampler.close()

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


def _edge_attrs(data: Data) -> dict[str, torch.Tensor]:
    """The edge-level tensor attributes of ``data`` (one row per edge:
    ``edge_attr``, weights, ...) but ``edge_index``."""
    out = {}
    for key in data.edge_attrs():
        value = data[key]
        if key == "edge_index" or not isinstance(value, torch.Tensor) or value.dim() == 0:
            continue
        if data.__cat_dim__(key, value) == 0 and value.size(0) == data.num_edges:
            out[key] = value
    return out

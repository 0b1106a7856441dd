r"""graphferry as DGL's edge-level loader (link prediction).

:func:`as_edge_prediction_sampler` wraps a neighbour sampler as DGL's does
(DGL's own ``dgl.dataloading.as_edge_prediction_sampler(...)`` object is
accepted too); :class:`graphferry.dgl.DataLoader` given such a sampler and
seed EDGE ids yields ``(input_nodes, pair_graph, neg_pair_graph, blocks)``
(without a negative sampler: ``(input_nodes, pair_graph, blocks)``), like
``dgl.dataloading.DataLoader``; on a heterograph (:class:`HeteroEdgeBatches`)
per type, as DGL's. Inside it DGL's ``ShaDowKHopSampler`` gives a subgraph
in place of the blocks: the one induced on the sample, without the batch's
excluded edges, made by the engine too (``GF_COO_SUBGRAPH``).

.. code-block:: python

    sampler = graphferry.dgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([10, 10]), exclude="reverse_id",
        reverse_eids=reverse_eids,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(5))
    loader = graphferry.dgl.DataLoader(g, train_eids, sampler, batch_size=512, shuffle=True)
    for input_nodes, pair_graph, neg_pair_graph, blocks in loader:
        ...

The engine's edge loader (``gf_edge_loader_open``) shuffles the seed edges
every epoch and, on its own threads, draws the negatives (from its random
streams: DGL's distribution, not its values), compacts the pairs
(``dgl.compact_graphs``' order), leaves the excluded edges out, samples and
gathers; the training thread only wraps arrays into DGL graphs. One
difference is kept on purpose: with excluded edges, each node draws its
``k`` neighbours among the edges that are not excluded, where DGL draws
``k`` and then drops the excluded ones (DGL's blocks may then hold fewer
than ``k`` edges for a node; ours hold ``min(k, allowed)``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dgl
import torch

from .._callback import BatchCallback
from .._link import EdgeLoader, EdgeSample, EdgeSampler
from .._loader import engine_edge_data, sync_edge_data
from .._native import lib as _lib
from .._options import SampleOptions
from .._resource import Closeable
from ..distributed import DistributedEdgeLoader, PartGraph, is_typed_part
from ..graph import Graph
from ..hetero import HeteroGraph
from .blocks import to_blocks, to_hetero_blocks
from .convert import as_graph, as_hetero_graph, check_prefetch, sync_node_data
from .hetero import hetero_options
from .node import dgl_subgraph, drop_replaced_node_data, lazy_node_data, neighbor_options
from .sampler import sampler_settings

__all__ = ["EdgePredictionSampler", "as_edge_prediction_sampler", "is_edge_sampler", "EdgeBatches", "HeteroEdgeBatches"]


@dataclass(eq=False)
class EdgePredictionSampler:
    r"""The settings of :func:`as_edge_prediction_sampler`, with the meaning
    of DGL's ``dgl.dataloading.EdgePredictionSampler``."""

    sampler: Any
    exclude: Any = None
    reverse_eids: Any = None
    reverse_etypes: Any = None
    negative_sampler: Any = None
    prefetch_labels: Any = None

    def __post_init__(self):
        self.prefetch_labels = list(self.prefetch_labels or [])

    def __repr__(self) -> str:
        return (
            f"EdgePredictionSampler(exclude={self.exclude!r}, negative_sampler={type(self.negative_sampler).__name__})"
        )


def as_edge_prediction_sampler(
    sampler: Any,
    exclude: Any = None,
    reverse_eids: Any = None,
    reverse_etypes: Any = None,
    negative_sampler: Any = None,
    prefetch_labels: Any = None,
) -> EdgePredictionSampler:
    r"""DGL's ``as_edge_prediction_sampler`` for :class:`graphferry.dgl.DataLoader`.

    Args:
        sampler: a ``dgl.dataloading.NeighborSampler``,
            :class:`graphferry.dgl.NeighborSampler` or
            ``dgl.dataloading.ShaDowKHopSampler`` (a subgraph for blocks).
        exclude (str or callable, optional): ``None``, ``"self"`` (the
            batch's seed edges are never sampled), ``"reverse_id"`` (nor
            their reverses, ``reverse_eids[eid]``), on heterographs
            ``"reverse_types"`` (nor the edges of the same ids of
            ``reverse_etypes[etype]``), or a callable given the batch's seed
            edges (``{etype: ids}`` on a heterograph) that returns the edge
            ids to leave out (as DGL's; called on the engine's threads, its
            exception raised at its batch). (default: :obj:`None`)
        reverse_eids (Tensor or dict, optional): int64 ``[E]`` (a
            heterograph: ``{etype: Tensor}``), for ``"reverse_id"``.
        reverse_etypes (dict, optional): ``{etype: reverse etype}``, for
            ``"reverse_types"``.
        negative_sampler: ``dgl.dataloading.negative_sampler.Uniform(k)``,
            ``PerSourceUniform(k)``, ``GlobalUniform(k, exclude_self_loops,
            replace)`` (homogeneous graphs) or None.
        prefetch_labels (list of str, optional): edge data wanted on
            ``pair_graph.edata`` (every edge field of the DGLGraph is
            attached lazily anyway).
    """
    settings = EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler, prefetch_labels)
    edge_settings(settings)  # errors surface here, as DGL's checks do
    return settings


def check_edge_comm(graph: Any, per_type: bool, edge: EdgeSettings) -> None:
    """What the edge ``DataLoader`` samples with ``comm=``: a
    :class:`graphferry.Graph` or :class:`graphferry.HeteroGraph` opened with
    one patch per rank or a rank's :class:`~graphferry.distributed.PartGraph`
    (typed or not), with the engine's own exclusion (not a callable)."""
    if per_type or isinstance(graph, HeteroGraph):
        if not isinstance(graph, HeteroGraph) and not is_typed_part(graph):
            raise NotImplementedError(
                "with comm=, a heterograph is a graphferry.HeteroGraph opened with num_patches=comm.size "
                "or a rank's PartGraph of a typed partition (a DGL heterograph is converted for one process)"
            )
    elif not isinstance(graph, Graph):
        raise NotImplementedError(
            "with comm=, the edge DataLoader takes a graphferry.Graph opened with num_patches=comm.size or a "
            f"graphferry.distributed.PartGraph (got '{type(graph).__name__}')"
        )
    if edge.exclude_fn is not None or edge.shadow:
        raise NotImplementedError(
            "with comm=, 'exclude' is None, 'self' or 'reverse_id' (a callable is served in one process) "
            "and the node sampler makes blocks (a ShaDowKHopSampler is served in one process)"
        )


def is_edge_sampler(obj: Any) -> bool:
    """Whether ``obj`` is ours or DGL's edge prediction sampler."""
    return isinstance(obj, (EdgePredictionSampler, dgl.dataloading.EdgePredictionSampler))


def _negative(neg: Any) -> tuple[str | None, int, int]:
    """(the engine's negative sampler, k, its flags) of DGL's ``negative_sampler``."""
    ns = dgl.dataloading.negative_sampler
    if neg is None:
        return None, 0, 0
    if isinstance(neg, ns.PerSourceUniform):
        return "per_source_uniform", int(neg.k), 0
    if isinstance(neg, ns.GlobalUniform):
        flags = (0 if neg.exclude_self_loops else _lib.GF_NEG_KEEP_SELF_LOOPS) | (
            _lib.GF_NEG_REPLACE if neg.replace else 0
        )
        return "global_uniform", int(neg.k), flags
    raise TypeError(
        "graphferry draws negatives itself: negative_sampler must be DGL's Uniform(k), "
        f"PerSourceUniform(k) or GlobalUniform(k, exclude_self_loops, replace), or None (got '{type(neg).__name__}')"
    )


def _edge_ids(value: Any, what: str) -> torch.Tensor:
    """``value`` as int64 edge ids (a tensor or a sequence of ints)."""
    try:
        ids = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"{what} must be edge ids (got '{type(value).__name__}')") from err
    if ids.dtype.is_floating_point or ids.dtype == torch.bool or ids.dtype.is_complex:
        raise TypeError(f"{what} must be integer edge ids (got {ids.dtype})")
    return ids.to(torch.int64).view(-1).contiguous()


def _exclusion(exclude_fn: Callable | None, idtype: torch.dtype, hg: HeteroGraph | None = None) -> BatchCallback | None:
    """DGL's callable ``exclude`` as the engine's exclude callback: given a
    batch's seed edge ids, the ids it names (ids in the graph's idtype; on
    a heterograph ``{etype: type-local ids}`` in and out, as DGL calls it).
    It references none of the loader's objects (no cycle through them)."""
    if exclude_fn is None:
        return None

    def excluded(eids: torch.Tensor, key: int) -> torch.Tensor:
        if hg is None:
            return _edge_ids(exclude_fn(eids.to(idtype)), "the exclude callable's result")
        rel, local = hg.to_local_edge(eids)
        given = {et: local[rel == r].to(idtype) for r, et in enumerate(hg.edge_types) if bool((rel == r).any())}
        out = exclude_fn(given)
        if not isinstance(out, Mapping):
            raise TypeError(f"the exclude callable must return a dict {{etype: edge ids}} (got '{type(out).__name__}')")
        parts = [hg.edge_to_global(et, _edge_ids(v, f"the exclude callable's ids of {et}")) for et, v in out.items()]
        return torch.cat(parts) if parts else torch.empty(0, dtype=torch.int64)

    return BatchCallback(excluded, "the exclude callable")


@dataclass
class EdgeSettings:
    """What an edge prediction sampler asks for: the node sampler's
    settings, the negatives (the engine's sampler name, ``k`` and its
    flags), ``exclude`` (None, ``"self"``, ``"reverse_id"`` or
    ``"reverse_types"``, or None with ``exclude_fn`` for DGL's callable
    form) and ``reverse`` (``reverse_eids`` for ``"reverse_id"``,
    ``reverse_etypes`` for ``"reverse_types"``); ``shadow``: a ShaDowKHopSampler inside."""

    node: Any
    negative: str | None
    k: int
    negative_flags: int
    exclude: str | None
    reverse: Any
    exclude_fn: Callable[[Any], Any] | None = None
    shadow: bool = False


def edge_settings(sampler: Any) -> EdgeSettings:
    """The :class:`EdgeSettings` of ours or DGL's EdgePredictionSampler.
    Checks what needs no graph; the loaders check the rest."""
    if not is_edge_sampler(sampler):
        raise TypeError(f"expected an edge prediction sampler (got '{type(sampler).__name__}')")
    settings = sampler_settings(sampler.sampler)
    exclude = sampler.exclude
    exclude_fn = None
    if callable(exclude):
        exclude, exclude_fn = None, exclude
    elif exclude not in (None, "self", "reverse_id", "reverse_types"):
        raise ValueError(
            "graphferry's edge loader takes exclude=None, 'self', 'reverse_id', 'reverse_types' "
            f"or a callable (got {exclude!r})"
        )
    reverse = None
    if exclude == "reverse_id":
        reverse = getattr(sampler, "reverse_eids", None)
        if reverse is None:
            raise ValueError("exclude='reverse_id' needs reverse_eids")
    elif exclude == "reverse_types":
        reverse = getattr(sampler, "reverse_etypes", None)
        if not isinstance(reverse, Mapping):
            raise ValueError("exclude='reverse_types' needs reverse_etypes, a dict {etype: reverse etype}")
    negative, k, flags = _negative(sampler.negative_sampler)
    shadow = isinstance(sampler.sampler, dgl.dataloading.ShaDowKHopSampler)
    return EdgeSettings(settings, negative, k, flags, exclude, reverse, exclude_fn, shadow)


class EdgeBatches(Closeable):
    r"""The edge batches of :class:`graphferry.dgl.DataLoader` on a
    homogeneous graph with an edge prediction sampler: what the engine's edge
    loader is opened with (:meth:`options`, :meth:`engine_loader`) and what
    each of its batches becomes (:meth:`convert`): ``(input_nodes,
    pair_graph, neg_pair_graph, blocks)`` (without a negative sampler
    ``(input_nodes, pair_graph, blocks)``). A DGLGraph's node and edge data
    reach the blocks and pair graphs through DGL's lazy frames, as with DGL's
    loader; the sampler's ``prefetch_edge_feats`` are gathered by the
    engine, on its threads, into the blocks' ``edata``. Made of the graph
    (a homogeneous ``dgl.DGLGraph`` or :class:`graphferry.Graph`), the seed
    edge ids and the sampler's :func:`edge_settings`.
    """

    def __init__(self, graph: Any, indices: Any, edge: EdgeSettings):
        if edge.exclude == "reverse_types":
            raise ValueError("exclude='reverse_types' needs a heterograph (edge types); use 'reverse_id' here")
        self.dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else None
        settings = edge.node
        eids = indices if isinstance(indices, torch.Tensor) else torch.as_tensor(indices)
        self.seeds = eids.to(torch.int64).contiguous()
        self.graph = as_graph(graph, settings.prob)
        reverse = None if edge.reverse is None else torch.as_tensor(edge.reverse).to(torch.int64).contiguous()
        self._set_edge_args(edge, edge.exclude, reverse)
        self.edge_feature_names = self._edge_features(settings.prefetch_edge_feats)
        # prefetch_node_feats: gathered by the engine on its threads (into
        # the loader's host memory, page-locked for a GPU), as for node batches.
        wanted = list(dict.fromkeys(settings.prefetch_node_feats))
        lazy = lazy_node_data(self.graph, self.dgl_graph, wanted)
        self.feature_names = [n for n in wanted if n not in lazy]

    def _set_edge_args(self, edge: EdgeSettings, exclude: str | None, reverse: Any, hg: Any = None) -> None:
        """What the engine makes every batch with (the sampler's settings,
        the engine's exclusion and reverse map, DGL's exclude callable)."""
        self._sampler: EdgeSampler | None = None
        self.settings, self._has_negative, self.shadow = edge.node, edge.negative is not None, edge.shadow
        self.idtype = self.dgl_graph.idtype if self.dgl_graph is not None else torch.int64
        self._edge_args = dict(
            mode="dgl",
            negative=edge.negative,
            amount=edge.k,
            negative_flags=edge.negative_flags,
            exclude=exclude,
            reverse_eids=reverse,
            exclude_callback=_exclusion(edge.exclude_fn, self.idtype, hg),
        )

    def _edge_features(self, names: list[str]) -> list[str]:
        """The prefetched edge data the engine gathers: a DGLGraph's
        ``edata`` handed to the engine, or a graphferry.Graph's own."""
        if not names:
            return []
        g = self.dgl_graph
        if g is None:
            return list(names)  # the graph's edge data (Graph.set_edge_data); the engine names a missing one
        check_prefetch(g.edata, names, "edata")
        return sync_edge_data(self.graph, {n: g.edata[n] for n in names})

    def options(self, seed: Any, num_threads: int) -> SampleOptions:
        """The engine's sampling options, kept for :meth:`sample` too."""
        self._options = neighbor_options(self.settings, seed, num_threads)
        return self._options

    def engine_loader(self, comm: Any = None, timeout: Any = None, **loader_args: Any) -> EdgeLoader:
        """A new engine edge loader over the seeds (``loader_args``:
        batch_size, shuffle, drop_last, queue_capacity); with ``comm``, this
        rank's share of the group's epochs
        (:class:`~graphferry.distributed.DistributedEdgeLoader`, bounded by
        ``timeout``)."""
        if self.dgl_graph is not None and self.settings.prefetch_edge_feats:
            # Edge data replaced since: handed to the engine (its idle
            # loaders are closed for it); what it cannot take stays lazy.
            self.edge_feature_names = self._edge_features(self.settings.prefetch_edge_feats)
        if self.dgl_graph is not None and self.feature_names:
            sync_node_data(self.graph, self.dgl_graph, self.feature_names)  # node data replaced since
        if comm is not None:
            loader_args.update(comm=comm, timeout=timeout)
        if self.shadow:
            loader_args["coo"] = _lib.GF_COO_SUBGRAPH  # the induced subgraph, without the excluded edges
        return (DistributedEdgeLoader if comm is not None else EdgeLoader)(
            self.graph,
            self.seeds,
            None,
            self._options,
            **self._edge_args,
            feature_names=self.feature_names,
            edge_feature_names=self.edge_feature_names,
            **loader_args,
        )

    def sample(self, eids: Any, key: int = 0) -> tuple:
        """The batch of the seed edge ids ``eids`` (on a heterograph
        ``{etype: ids}`` or global ids) under batch key ``key`` (what one
        step of an epoch yields), drawn in the caller's thread."""
        if isinstance(eids, Mapping):
            eids = torch.cat([self.hetero_graph.edge_to_global(et, ids) for et, ids in eids.items()])
        if isinstance(self.graph, PartGraph) or self.shadow:
            raise NotImplementedError(
                "sample() draws blocks in this process: iterate the loader (for a rank's part of the graph, "
                "or a ShaDowKHopSampler's subgraphs)"
            )
        eids = torch.as_tensor(eids).to(torch.int64).contiguous()
        if self._sampler is None:
            self._sampler = EdgeSampler(self.graph, self._options, **self._edge_args)
        return self.convert(self._sampler.sample(eids, key=key))

    def _edge_data(self, sample: EdgeSample) -> dict[str, torch.Tensor]:
        """The engine-gathered edge data of ``sample`` that is still the
        graph's (a replaced ``edata`` column is served lazily)."""
        g, sub = self.dgl_graph, sample.sub
        out = {}
        for name, rows in sub.edge_data.items():
            if g is None or engine_edge_data(self.graph, name, g.edata[name] if name in g.edata else None):
                out[name] = rows
        return out

    def _sampled(self, sample: EdgeSample) -> tuple[torch.Tensor, Any]:
        """``(input_nodes, blocks)`` of one engine batch, or ShaDow's
        ``(input_nodes, subgraph)`` (the engine's, the gathered data on it)."""
        g, idtype, sub = self.dgl_graph, self.idtype, sample.sub
        drop_replaced_node_data(self.graph, g, sub.node_data)
        if self.shadow:
            subg = dgl_subgraph(g, sub.nodes, *sub.coo, idtype)
            subg.ndata.update(sub.node_data)
            subg.edata.update(self._edge_data(sample))
            return subg.ndata[dgl.NID], subg
        blocks = to_blocks(sub, g, idtype=idtype)
        for name, rows in self._edge_data(sample).items():
            per_hop = torch.split(rows, [b.num_edges for b in sub.blocks])
            for block, part in zip(blocks, reversed(per_hop)):  # blocks[0] is the last hop
                block.edata[name] = part
        return (blocks[0].srcdata[dgl.NID] if blocks else sub.seeds.to(idtype)), blocks

    def convert(self, sample: EdgeSample) -> tuple:
        """DGL's tuple of one engine edge batch."""
        g, idtype = self.dgl_graph, self.idtype
        input_nodes, blocks = self._sampled(sample)
        seeds = sample.sub.seeds.to(idtype)
        n = len(seeds)
        pair = dgl_subgraph(g, seeds, torch.stack([sample.pos_src, sample.pos_dst]), sample.edge_ids, idtype)
        if self._has_negative:
            neg = dgl.graph((sample.neg_src.to(idtype), sample.neg_dst.to(idtype)), num_nodes=n, idtype=idtype)
            neg.ndata[dgl.NID] = seeds
            return input_nodes, pair, neg, blocks
        return input_nodes, pair, blocks

    def close(self) -> None:
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.close()


class HeteroEdgeBatches(EdgeBatches):
    r"""The edge batches of :class:`graphferry.dgl.DataLoader` given a DGL
    heterograph (or a :class:`graphferry.HeteroGraph`), seed edges ``{etype:
    eids}`` and an edge prediction sampler. What DGL's loader yields:
    ``input_nodes`` (``{ntype: ids}`` over every node type), ``pair_graph``
    and ``neg_pair_graph`` (heterographs over every edge type, holding the
    batch's seed edges, resp. negatives, per type, compacted together as
    ``dgl.compact_graphs`` does) and heterogeneous ``blocks``
    (:func:`graphferry.dgl.blocks.to_hetero_blocks`), made by the engine
    on the typed graph (see the module's doc); ``"reverse_id"`` (with
    ``reverse_eids`` as ``{etype: Tensor}``) and ``"reverse_types"`` become
    one reverse map over the global edge ids, built once here.
    """

    def __init__(self, graph: Any, indices: Any, edge: EdgeSettings):
        hg = self.hetero_graph = as_hetero_graph(graph, edge.node.prob)
        self.dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else hg.dgl_graph
        if not isinstance(indices, Mapping):
            if hg.num_relations != 1:
                raise TypeError(
                    f"the graph has edge types {hg.edge_types}: give the seed edges as a dict {{etype: eids}} "
                    f"(got '{type(indices).__name__}')"
                )
            indices = {hg.edge_types[0]: indices}
        if not indices:
            raise ValueError("'indices' is an empty dict: give the seed edges of at least one edge type")
        # DGL's batches list each type's seeds in the order of the dict's keys.
        self.seeds = torch.cat([hg.edge_to_global(et, ids) for et, ids in indices.items()]).contiguous()
        self.graph = hg.graph
        self._set_edge_args(edge, *self._reverse_map(hg, edge.exclude, edge.reverse), hg)
        self.edge_feature_names = []  # per-type edge data reaches the blocks through DGL's frames
        self.feature_names = []  # per-type node data too

    def options(self, seed: Any, num_threads: int) -> SampleOptions:
        self._options = hetero_options(self.hetero_graph, self.settings, seed, num_threads)
        return self._options

    @staticmethod
    def _reverse_map(hg: HeteroGraph, exclude: str | None, reverse: Any) -> tuple[str | None, torch.Tensor | None]:
        """The engine's exclusion: ``"reverse_id"`` (per type: a reverse id
        of the same type) and ``"reverse_types"`` (the same id of the
        reverse type) both become ``"reverse_id"`` with a map over the global
        edge ids (``-1``: no reverse)."""
        if exclude not in ("reverse_id", "reverse_types"):
            return exclude, None
        rev = torch.full((hg.num_edges(),), -1, dtype=torch.int64)
        if exclude == "reverse_id":
            if not isinstance(reverse, Mapping):
                raise TypeError("exclude='reverse_id' on a heterograph needs reverse_eids as a dict {etype: Tensor}")
            for et, local in reverse.items():
                r = hg.etype_index(et)
                local = torch.as_tensor(local).to(torch.int64)
                if local.numel() != hg.num_edges(hg.edge_types[r]):
                    raise ValueError(
                        f"reverse_eids[{hg.edge_types[r]}] has {local.numel()} entries; "
                        f"the edge type has {hg.num_edges(hg.edge_types[r])} edges"
                    )
                lo = int(hg.edge_offsets[r])
                rev[lo : lo + local.numel()] = local + lo
        else:
            for et, rev_et in reverse.items():
                r, q = hg.etype_index(et), hg.etype_index(rev_et)
                n = min(hg.num_edges(hg.edge_types[r]), hg.num_edges(hg.edge_types[q]))
                lo, qlo = int(hg.edge_offsets[r]), int(hg.edge_offsets[q])
                rev[lo : lo + n] = torch.arange(qlo, qlo + n)
        return "reverse_id", rev

    def convert(self, sample: EdgeSample) -> tuple:
        """DGL's tuple of one engine edge batch of the heterograph."""
        hg, idtype, g = self.hetero_graph, self.idtype, self.dgl_graph
        lazy = g is not None and (
            any(len(g.nodes[nt].data) for nt in g.ntypes) or any(len(g.edges[et].data) for et in g.canonical_etypes)
        )
        # The engine split the batch by type: each type's nodes (type-local
        # ids), its seeds first; pair indices are positions among them.
        tv = sample.sub.typed
        counts = tv.hop_counts[:, 0].tolist()
        nids = {nt: tv.nodes_of(t).to(idtype) for t, nt in enumerate(hg.node_types)}
        seed_nids = {nt: nids[nt][: counts[t]] for t, nt in enumerate(hg.node_types)}

        def graph(nodes: dict, src: torch.Tensor, dst: torch.Tensor, off: list, eids: Any = None) -> Any:
            """Relation r's edges ``off[r]:off[r + 1]`` over ``nodes``, g's data lazily."""
            off = off or [0] * (hg.num_relations + 1)
            cut = {et: slice(off[r], off[r + 1]) for r, et in enumerate(hg.edge_types)}
            data = {et: (src[at].to(idtype), dst[at].to(idtype)) for et, at in cut.items()}
            out = dgl.heterograph(data, {nt: len(ids) for nt, ids in nodes.items()}, idtype=idtype)
            eids = {} if eids is None else {et: eids[at].to(idtype) for et, at in cut.items()}
            if lazy and eids:
                dgl.utils.set_new_frames(
                    out,
                    node_frames=dgl.utils.extract_node_subframes(g, [nodes[nt] for nt in g.ntypes]),
                    edge_frames=dgl.utils.extract_edge_subframes(g, [eids[et] for et in g.canonical_etypes]),
                )
                return out
            for nt in hg.node_types:
                out.nodes[nt].data[dgl.NID] = nodes[nt]
            for et, ids in eids.items():
                out.edges[et].data[dgl.EID] = ids
            return out

        pair = graph(seed_nids, sample.pos_src, sample.pos_dst, sample.pos_offsets.tolist(), sample.edge_ids)
        if self.shadow:  # the engine's induced subgraph: one block over every node, split by relation
            tb = tv.blocks[0]
            blocks = graph(nids, tb.src, tb.dst, tb.edge_offsets, tb.edge_ids)
            input_nodes = nids
        else:
            blocks = to_hetero_blocks(sample.sub, hg, idtype=idtype, g=g)
            input_nodes = blocks[0].srcdata[dgl.NID] if blocks else seed_nids
        if not self._has_negative:
            return input_nodes, pair, blocks
        neg = graph(seed_nids, sample.neg_src, sample.neg_dst, sample.neg_offsets.tolist())
        return input_nodes, pair, neg, blocks

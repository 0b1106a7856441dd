"""The batches of :class:`graphferry.dgl.DataLoader` on a homogeneous graph
with a node sampler (node classification): the engine samples DGL's
message-flow blocks and gathers the prefetched node data on its threads, and
each batch becomes ``(input_nodes, output_nodes, blocks)``, real DGL blocks
in the graph's idtype."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import dgl
import torch

from .. import _cache
from .._options import SampleOptions
from ..errors import GF_EINVAL, InvalidArgumentError
from ..sampling import SampledSubgraph, induced_subgraph
from .blocks import to_blocks
from .convert import as_graph, sync_node_data
from .sampler import NeighborSampler

__all__ = [
    "NodeBlocks",
    "ShadowBatches",
    "ClusterBatches",
    "SubgraphBatches",
    "induced_dgl",
    "check_homogeneous_settings",
    "neighbor_options",
    "lazy_node_data",
    "drop_replaced_node_data",
]


def check_homogeneous_settings(settings: Any) -> None:
    """Raises for per-edge-type fan-outs on a homogeneous loader."""
    if any(isinstance(f, Mapping) for f in settings.fanouts):
        raise TypeError(
            "per-edge-type fan-outs ({etype: k} dicts) need a heterogeneous graph: give a DGL heterograph "
            "or a graphferry.HeteroGraph"
        )


def neighbor_options(settings: NeighborSampler, seed: Any, num_threads: int) -> SampleOptions:
    """The engine's options for a DGL node sampler's ``settings`` on a
    homogeneous graph (the node and the edge loaders share them): DGL's
    message-flow blocks, fan-outs reversed (the engine counts hops from the
    seeds)."""
    return SampleOptions(
        list(reversed(settings.fanouts)),  # the engine counts hops from the seeds
        replace=settings.replace,
        frontier="all",
        scheme=settings.scheme,
        biased=settings.prob is not None,
        layer_without_replacement=settings.layer_without_replacement,
        layer_dependency=settings.layer_dependency,
        exclude_edges=settings.exclude_edges,
        seed=seed,
        num_threads=num_threads,
    )


def lazy_node_data(graph: Any, g: Any, wanted: list[str]) -> list[str]:
    """Of the node data ``wanted`` (a sampler's prefetched names), those the
    engine cannot gather, served by DGL's lazy columns instead (a dtype it
    does not carry: with DGL's warning); the others are handed to the engine
    graph ``graph`` from the DGLGraph ``g`` (None: a graphferry.Graph, whose
    own node data the engine gathers). A name ``g`` lacks raises."""
    if g is None:
        return []
    missing = [n for n in wanted if n not in g.ndata]
    if missing:
        raise InvalidArgumentError(
            GF_EINVAL, f"the DGLGraph has no ndata field {missing} to prefetch (it has {sorted(g.ndata)})"
        )
    sync_node_data(graph, g, wanted)
    held = set(graph.node_data_names())
    lazy = [n for n in wanted if n not in held]
    if lazy:
        warnings.warn(
            f"graphferry cannot gather node data {lazy} on its threads (a dtype the engine "
            "does not carry); the blocks serve it through DGL's lazy columns",
            stacklevel=4,  # the caller of graphferry.dgl.DataLoader(...)
        )
    return lazy


def drop_replaced_node_data(graph: Any, g: Any, *data: dict) -> None:
    """Removes from a batch's engine-gathered node data (``data``: name ->
    rows) what the DGLGraph ``g`` replaced since the engine got it: the lazy
    columns then serve g's current data."""
    if g is None:
        return
    sources = graph._dgl_sources
    for rows in data:
        for name in list(rows):
            value = g.ndata[name] if name in g.ndata else None
            if value is None or sources.get(name) != _cache.tensor_signature(value):
                del rows[name]


class NodeBlocks:
    """How :class:`graphferry.dgl.DataLoader` makes a homogeneous graph's
    node batches: what the engine loader is opened with (:attr:`graph`,
    :attr:`seeds`, :meth:`options`, the node data it gathers) and what each
    of its batches becomes (:meth:`convert`).

    Node data a ``dgl.DGLGraph`` replaces after the loader was made
    (``g.ndata["feat"] = h``) is served from the new tensor: each epoch hands
    the replaced tensors to the engine (:meth:`before_epoch`), and a batch
    whose tensor changed since serves it through DGL's lazy columns.
    """

    def __init__(self, graph: Any, indices: Any, settings: NeighborSampler):
        check_homogeneous_settings(settings)
        self.settings = settings
        self.dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else None
        self.idtype = self.dgl_graph.idtype if self.dgl_graph is not None else torch.int64
        self.graph = as_graph(graph, settings.prob)
        seeds = indices if isinstance(indices, torch.Tensor) else torch.as_tensor(indices)
        if seeds.dtype == torch.int32:
            seeds = seeds.to(torch.int64)  # the engine takes int64 ids; outputs are in the graph's idtype
        self.seeds = seeds
        wanted = list(dict.fromkeys(settings.prefetch_node_feats + settings.prefetch_labels))
        if settings.prefetch_edge_feats:
            # Edge data reaches the blocks through DGL's frames, attached
            # lazily like DGL's own: only a DGLGraph has them.
            if self.dgl_graph is None:
                raise ValueError(
                    "prefetch_edge_feats needs the dgl.DGLGraph (a graphferry.Graph holds no edge data); "
                    f"got prefetch_edge_feats={settings.prefetch_edge_feats}"
                )
            missing = [n for n in settings.prefetch_edge_feats if n not in self.dgl_graph.edata]
            if missing:
                raise InvalidArgumentError(
                    GF_EINVAL,
                    f"the DGLGraph has no edata field {missing} to prefetch (it has {sorted(self.dgl_graph.edata)})",
                )
        lazy = lazy_node_data(self.graph, self.dgl_graph, wanted)
        self.feature_names = [n for n in settings.prefetch_node_feats if n not in lazy]
        self.label_names = [n for n in settings.prefetch_labels if n not in lazy]

    def options(self, seed: Any, num_threads: int) -> SampleOptions:
        return neighbor_options(self.settings, seed, num_threads)

    def user_error(self, err: Any) -> Any:
        """The engine's error as the user should read it: as it is."""
        return err

    def before_epoch(self) -> None:
        """Hands the engine the node data ``g.ndata`` replaced since."""
        if self.dgl_graph is not None:
            sync_node_data(self.graph, self.dgl_graph, self.feature_names + self.label_names)

    def convert(self, sub: SampledSubgraph) -> tuple:
        """``(input_nodes, output_nodes, blocks)`` of one engine batch."""
        g = self.dgl_graph
        drop_replaced_node_data(self.graph, g, sub.node_data, sub.labels)
        blocks = to_blocks(sub, g, idtype=self.idtype)
        return blocks[0].srcdata[dgl.NID], blocks[-1].dstdata[dgl.NID], blocks


def induced_dgl(graph: Any, g: Any, nodes: torch.Tensor, idtype: Any) -> Any:
    """The subgraph of ``graph`` induced on ``nodes`` (the engine's call,
    ``gf_graph_induced_subgraph``) as ``dgl.DGLGraph.subgraph`` gives it:
    nodes in the given order, edges by source then edge id, ``dgl.NID``/``dgl.EID`` and
    the data of the DGLGraph ``g`` (None: a graphferry graph) attached
    lazily."""
    src, dst, eids = induced_subgraph(graph, nodes)
    # DGL's subgraph lists the edges by source (in the nodes' order), then edge id.
    order = torch.argsort(src * (int(eids.max()) + 1 if eids.numel() else 1) + eids)
    src, dst, eids = src[order], dst[order], eids[order]
    subg = dgl.graph((src.to(idtype), dst.to(idtype)), num_nodes=nodes.numel(), idtype=idtype)
    ids = nodes.to(idtype)
    if g is not None:
        dgl.utils.set_new_frames(
            subg,
            node_frames=dgl.utils.extract_node_subframes(g, [ids]),
            edge_frames=dgl.utils.extract_edge_subframes(g, [eids.to(idtype)]),
        )
    else:
        subg.ndata[dgl.NID] = ids
        subg.edata[dgl.EID] = eids.to(idtype)
    return subg


class SubgraphBatches:
    """Batches of :class:`graphferry.dgl.DataLoader` made in the caller's
    thread, one subgraph each, by the engine's calls (no sampling runs
    ahead): DGL's ``ClusterGCNSampler`` (:class:`ClusterBatches`) and
    ``SAINTSampler`` (:class:`graphferry.dgl.saint.SaintBatches`). A subclass
    sets :attr:`graph` (the engine graph), :attr:`seeds` (what is batched)
    and :meth:`batch`."""

    graph: Any
    seeds: torch.Tensor

    def batch(self, seeds: torch.Tensor, seed: Any, key: int) -> Any:
        """The subgraph of the batch of ``seeds``; ``key`` (``(epoch << 32) |
        i`` for batch ``i``) and the loader's ``seed`` make its random
        draws."""
        raise NotImplementedError

    def epoch(self, number: int, seed: Any, batch_size: int, shuffle: bool, drop_last: bool, finish: Any) -> Any:
        """Epoch ``number``: the seeds batched (shuffled by torch from
        ``seed`` and ``number`` when ``shuffle``), each batch's subgraph
        made here; ``finish`` is applied to every batch."""
        n = self.seeds.numel()
        order = torch.arange(n)
        if shuffle:
            generator = torch.Generator().manual_seed((int(seed) * 1_000_003 + number) & 0x7FFF_FFFF_FFFF_FFFF)
            order = torch.randperm(n, generator=generator)
        stop = n - n % batch_size if drop_last else n
        for i, lo in enumerate(range(0, stop, batch_size)):
            yield finish(self.batch(self.seeds[order[lo : lo + batch_size]], seed, (number << 32) | i))


class ClusterBatches(SubgraphBatches):
    """The batches of :class:`graphferry.dgl.DataLoader` with DGL's
    ``ClusterGCNSampler``: the seeds are partition ids of the sampler's
    METIS partition (computed by DGL when the sampler was made), and each
    batch is the subgraph the engine induces on the nodes of its partitions
    (``gf_graph_induced_subgraph``), in the sampler's node order, as DGL's
    ``ClusterGCNSampler.sample`` gives it."""

    def __init__(self, graph: Any, indices: Any, sampler: Any):
        self.dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else None
        self.idtype = self.dgl_graph.idtype if self.dgl_graph is not None else torch.int64
        self.graph = as_graph(graph)
        self.seeds = torch.as_tensor(indices).to(torch.int64).view(-1)
        self.offsets = torch.as_tensor(sampler.partition_offset).to(torch.int64)
        self.node_ids = torch.as_tensor(sampler.partition_node_ids).to(torch.int64)
        k = self.offsets.numel() - 1
        if self.seeds.numel() and (int(self.seeds.min()) < 0 or int(self.seeds.max()) >= k):
            raise ValueError(f"partition ids out of range [0, {k}) (the ClusterGCNSampler has {k} partitions)")

    def batch(self, parts: torch.Tensor, seed: Any = None, key: int = 0) -> Any:
        nodes = torch.cat([self.node_ids[self.offsets[i] : self.offsets[i + 1]] for i in parts.tolist()])
        return induced_dgl(self.graph, self.dgl_graph, nodes, self.idtype)


class ShadowBatches(NodeBlocks):
    """The batches of :class:`graphferry.dgl.DataLoader` with DGL's
    ``ShaDowKHopSampler``: the engine samples the k-hop neighbourhood of the
    seeds as DGL's does (each hop expands every node reached so far, fan-outs
    applied from the last) and gathers the prefetched node data on its
    threads; each batch becomes DGL's ``(input_nodes, output_nodes,
    subgraph)``, the subgraph induced on the sampled nodes (the engine's
    induced-subgraph call, ``gf_graph_induced_subgraph``, in the training
    thread), its nodes in the sample's order (seeds first), its edges in
    the order ``dgl.DGLGraph.subgraph`` gives them, with ``dgl.NID``,
    ``dgl.EID`` and the graph's data attached lazily, as DGL attaches them."""

    def convert(self, sub: SampledSubgraph) -> tuple:
        g, idtype = self.dgl_graph, self.idtype
        subg = induced_dgl(self.graph, g, sub.nodes, idtype)
        ids = subg.ndata[dgl.NID]
        sources = getattr(self.graph, "_dgl_sources", {})
        for name, value in sub.node_data.items():  # gathered by the engine: taken as they are
            if g is None or (name in g.ndata and sources.get(name) == _cache.tensor_signature(g.ndata[name])):
                subg.ndata[name] = value
        return ids, sub.seeds.to(idtype), subg

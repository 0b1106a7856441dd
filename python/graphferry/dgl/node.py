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

from .._loader import engine_edge_data, engine_node_data, sync_edge_data
from .._options import SampleOptions
from .._subgraph import SubgraphLoader, SubgraphSample
from ..sampling import SampledSubgraph, induced_subgraph
from .blocks import to_blocks
from .convert import as_graph, check_prefetch, sync_node_data
from .sampler import NeighborSampler

__all__ = [
    "NodeBlocks",
    "ShadowBatches",
    "ClusterBatches",
    "SubgraphBatches",
    "induced_dgl",
    "dgl_subgraph",
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
    check_prefetch(g.ndata, wanted, "ndata")
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
    for rows in data:
        for name in list(rows):
            if not engine_node_data(graph, name, g.ndata[name] if name in g.ndata else None):
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
            check_prefetch(self.dgl_graph.edata, settings.prefetch_edge_feats, "edata")
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
    return dgl_subgraph(g, nodes, torch.stack([src[order], dst[order]]), eids[order], idtype)


def dgl_subgraph(g: Any, nodes: torch.Tensor, edge_index: torch.Tensor, eids: torch.Tensor, idtype: Any) -> Any:
    """The DGLGraph of a subgraph the engine made (``edge_index``: positions
    in ``nodes``, in the order to keep; ``eids`` the edges' ids), with
    ``dgl.NID``/``dgl.EID`` and the data of the DGLGraph ``g`` (None: a
    graphferry graph) attached lazily, as ``dgl.DGLGraph.subgraph``
    attaches them."""
    subg = dgl.graph((edge_index[0].to(idtype), edge_index[1].to(idtype)), num_nodes=nodes.numel(), idtype=idtype)
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
    """Batches of :class:`graphferry.dgl.DataLoader` that are one subgraph
    each: DGL's ``ClusterGCNSampler`` (:class:`ClusterBatches`) and
    ``SAINTSampler`` (:class:`graphferry.dgl.saint.SaintBatches`). A
    subclass sets :attr:`graph` (the engine graph), :attr:`seeds` (what is
    batched), :attr:`dgl_graph`, :attr:`idtype`, :attr:`prefetch_ndata`
    and :attr:`prefetch_edata`, and :meth:`engine_draw`: the engine's
    subgraph loader (:meth:`engine_loader`, opened by the DataLoader's
    engine path) makes the batches ahead on its threads -- node sets,
    induced subgraphs, the prefetched data -- and :meth:`convert` turns
    each into DGL's subgraph."""

    graph: Any
    seeds: torch.Tensor
    dgl_graph: Any = None
    idtype: Any = torch.int64
    prefetch_ndata: list = []
    prefetch_edata: list = []
    shuffles = True  # whether the DataLoader's shuffle permutes the seeds
    _loader: SubgraphLoader | None = None  # the engine loader opened last

    def __init__(self, graph: Any, indices: Any, sampler: Any):
        self.dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else None
        self.idtype = self.dgl_graph.idtype if self.dgl_graph is not None else torch.int64
        self.graph = as_graph(graph)
        self.seeds = torch.as_tensor(indices).view(-1)
        self.prefetch_ndata = list(getattr(sampler, "prefetch_ndata", None) or [])
        self.prefetch_edata = list(getattr(sampler, "prefetch_edata", None) or [])
        if self.dgl_graph is None and self.prefetch_edata:
            raise ValueError(
                "prefetch_edata needs the dgl.DGLGraph (a graphferry.Graph holds no edge data); "
                f"got prefetch_edata={self.prefetch_edata}"
            )

    def engine_draw(self) -> dict:  # pragma: no cover - always overridden
        """The :class:`~graphferry._subgraph.SubgraphLoader` keywords of the
        engine's node sets (``kind``, ...)."""
        raise NotImplementedError

    def engine_items(self, seeds: torch.Tensor) -> torch.Tensor:
        """What the engine loader batches: the seeds."""
        return seeds

    def prepare(self) -> None:
        """Hands the engine the prefetched data it can gather (the rest is
        served by DGL's lazy columns, with DGL's warning)."""
        g = self.dgl_graph
        lazy = lazy_node_data(self.graph, g, self.prefetch_ndata) if g is not None else []
        self._engine_ndata = [n for n in self.prefetch_ndata if n not in lazy]
        self.before_epoch()

    def before_epoch(self) -> None:
        """Hands the engine the prefetched data the DGLGraph replaced since
        (idle engine loaders reopen with it)."""
        g = self.dgl_graph
        self._engine_edata = []
        if g is None:
            return
        sync_node_data(self.graph, g, self._engine_ndata)
        self._engine_edata = sync_edge_data(self.graph, {n: g.edata[n] for n in self.prefetch_edata})

    def engine_loader(self, seeds: torch.Tensor, seed: Any, num_threads: int, **kwargs: Any) -> SubgraphLoader:
        """The engine's loader of these batches over ``seeds``, drawing from
        ``seed``, gathering the prefetched data the engine holds; ``kwargs``:
        batching and memory, as :class:`~graphferry._subgraph.SubgraphLoader`
        takes them."""
        self._loader = SubgraphLoader(
            self.graph,
            self.engine_items(seeds),
            **self.engine_draw(),
            edge_order="src_eid",
            seed=int(seed),
            feature_names=self._engine_ndata,
            edge_feature_names=self._engine_edata,
            num_threads=num_threads,
            **kwargs,
        )
        return self._loader

    def convert(self, sample: SubgraphSample) -> Any:
        """The DGLGraph of one engine batch, as ``dgl.DGLGraph.subgraph``
        gives it (the engine lists the edges in its order), with the
        gathered data in place of the lazy columns."""
        g = self.dgl_graph
        subg = dgl_subgraph(g, sample.nodes, sample.edge_index, sample.edge_ids, self.idtype)
        drop_replaced_node_data(self.graph, g, sample.node_data)
        for name, rows in sample.node_data.items():
            subg.ndata[name] = rows
        for name, rows in sample.edge_data.items():
            if engine_edge_data(self.graph, name, g.edata[name]):  # not replaced since
                subg.edata[name] = rows
        # DGL's loader prefetches these: read now, not when first used
        for name in self.prefetch_ndata:
            subg.ndata[name] = subg.ndata[name]
        for name in self.prefetch_edata:
            subg.edata[name] = subg.edata[name]
        return subg


class ClusterBatches(SubgraphBatches):
    """The batches of :class:`graphferry.dgl.DataLoader` with DGL's
    ``ClusterGCNSampler``: the seeds are partition ids of the sampler's
    METIS partition (computed by DGL when the sampler was made), and each
    batch is the subgraph the engine induces on the nodes of its partitions,
    in the sampler's node order, as DGL's ``ClusterGCNSampler.sample`` gives
    it, made ahead on the engine's threads with ``prefetch_ndata`` /
    ``prefetch_edata`` (the engine's subgraph loader over the parts)."""

    def __init__(self, graph: Any, indices: Any, sampler: Any):
        super().__init__(graph, indices, sampler)
        self.seeds = self.seeds.to(torch.int64)
        self.offsets = torch.as_tensor(sampler.partition_offset).to(torch.int64)
        self.node_ids = torch.as_tensor(sampler.partition_node_ids).to(torch.int64)
        k = self.offsets.numel() - 1
        if self.seeds.numel() and (int(self.seeds.min()) < 0 or int(self.seeds.max()) >= k):
            raise ValueError(f"partition ids out of range [0, {k}) (the ClusterGCNSampler has {k} partitions)")

    def engine_draw(self) -> dict:
        return dict(kind="parts", part_offsets=self.offsets, part_nodes=self.node_ids)


class ShadowBatches(NodeBlocks):
    """The batches of :class:`graphferry.dgl.DataLoader` with DGL's
    ``ShaDowKHopSampler``: DGL's ``(input_nodes, output_nodes, subgraph)``,
    the k-hop sample (seeds first) made induced, in ``dgl.DGLGraph.subgraph``'s
    order, by the engine's ShaDow loader ahead of the training loop (with
    ``comm=``, induced here), DGL's data attached lazily as DGL attaches it."""

    def engine_loader(self, seeds: torch.Tensor, options: SampleOptions, **kwargs: Any) -> SubgraphLoader:
        """The engine's ShaDow loader over ``seeds`` (``kwargs``: batching, memory)."""
        names = dict(feature_names=self.feature_names, label_names=self.label_names)
        return SubgraphLoader(self.graph, seeds, kind="khop", options=options, edge_order="src_eid", **names, **kwargs)

    def convert(self, sub: SampledSubgraph | SubgraphSample) -> tuple:
        g, idtype = self.dgl_graph, self.idtype
        if isinstance(sub, SubgraphSample):  # made induced by the engine, ahead
            subg = dgl_subgraph(g, sub.nodes, sub.edge_index, sub.edge_ids, idtype)
        else:  # a distributed loader's sample: induced here
            subg = induced_dgl(self.graph, g, sub.nodes, idtype)
        ids = subg.ndata[dgl.NID]
        drop_replaced_node_data(self.graph, g, sub.node_data)
        for name, value in sub.node_data.items():  # gathered by the engine: taken as they are
            subg.ndata[name] = value
        return ids, sub.seeds.to(idtype), subg

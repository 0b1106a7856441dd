r"""graphferry as DGL's node-classification loader on heterogeneous graphs.

:class:`graphferry.dgl.DataLoader` given a DGL heterograph (or a
:class:`graphferry.HeteroGraph`), a dict of seeds ``{ntype: ids}`` and a
``NeighborSampler`` whose fan-outs are ints or ``{etype: k}`` dicts yields
``(input_nodes, output_nodes, blocks)`` as DGL's own loader does:

* ``blocks`` are heterogeneous DGL blocks over every node type and every
  canonical edge type (a relation with no sampled edge is there, empty), each
  type's destination nodes first among its source nodes; ``dgl.NID`` per node
  type and ``dgl.EID`` per edge type hold type-local ids in the graph's idtype;
* ``input_nodes`` is ``blocks[0].srcdata[dgl.NID]`` (a dict over every node
  type) and ``output_nodes`` the batch's seeds per type (only the types that
  have seeds in the batch, as DGL);
* node data: from a DGL heterograph every block carries all of its node and
  edge data, attached lazily through DGL's frames (as DGL's sampler attaches
  them); from a :class:`~graphferry.HeteroGraph` without a DGL graph the
  ``prefetch_node_feats`` of each type go on ``blocks[0].srcdata`` and the
  ``prefetch_labels`` on ``blocks[-1].dstdata``.

The engine samples over the graph's global ids (one typed CSC): frontier node
``v`` draws, for every relation into ``v``'s type, that relation's fan-out of
its in-edges of that relation, as DGL's per-edge-type fan-outs.

.. code-block:: python

    sampler = dgl.dataloading.NeighborSampler([{"cites": 10, "writes": 5, "rev_writes": 5}] * 2)
    loader = graphferry.dgl.DataLoader(g, {"paper": train_idx}, sampler, batch_size=1024, shuffle=True)
    for input_nodes, output_nodes, blocks in loader:
        h = model(blocks, {nt: blocks[0].srcnodes[nt].data["feat"] for nt in blocks[0].srctypes})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dgl
import torch

from . import _cache
from ._loader import EngineLoader
from ._options import SampleOptions
from .errors import GraphferryError, error_for_status
from .hetero import HeteroGraph
from .sampling import SampledSubgraph, random_seed

__all__ = ["HeteroDataLoader", "to_hetero_blocks", "as_hetero_graph", "is_hetero_input"]


def is_hetero_input(graph: Any, indices: Any, sampler: Any = None) -> bool:
    """Whether a loader over ``graph`` and ``indices`` takes the
    heterogeneous path: a :class:`HeteroGraph`, a DGL graph with several
    node or edge types, or a dict of seeds."""
    if isinstance(graph, HeteroGraph) or isinstance(indices, Mapping):
        return True
    return isinstance(graph, dgl.DGLGraph) and not graph.is_homogeneous


# -- blocks ------------------------------------------------------------------

_block_parts: tuple | None = None


def _parts() -> tuple:
    """DGL's low-level block constructors (as graphferry.dgl._csc_block uses
    them), or () if this DGL lacks them."""
    global _block_parts
    if _block_parts is None:
        try:
            from dgl import graph_index, heterograph_index
            from dgl.heterograph import DGLBlock
            from dgl.utils import toindex

            _block_parts = (graph_index, heterograph_index, DGLBlock, toindex)
        except (ImportError, AttributeError):
            _block_parts = ()
    return _block_parts


_EMPTY = {torch.int64: torch.empty(0, dtype=torch.int64), torch.int32: torch.empty(0, dtype=torch.int32)}


def _hetero_block(
    hg: HeteroGraph,
    num_src: list[int],
    num_dst: list[int],
    csc: list[tuple[torch.Tensor, torch.Tensor]],
):
    """A DGL block over every node type (``hg.node_types`` order, as source
    and as destination types) and every relation (``hg.edge_types`` order),
    relation ``r`` given as CSC ``(indptr, indices)`` over its destination
    type's nodes; block edge ``i`` of a relation is its CSC position ``i``.

    Built with the order of ``hg`` (which for a converted DGL graph is that
    graph's: its frames line up), not ``dgl.create_block``'s sorted order,
    and without its per-call checks (a scan of every index array)."""
    parts = _parts()
    T = hg.num_node_types
    if not parts:
        data = {}
        for r, et in enumerate(hg.edge_types):
            indptr, indices = csc[r]
            data[et] = ("csc", (indptr, indices, _EMPTY[indices.dtype]))
        block = dgl.create_block(
            data,
            num_src_nodes=dict(zip(hg.node_types, num_src)),
            num_dst_nodes=dict(zip(hg.node_types, num_dst)),
        )
        if block.srctypes != hg.node_types or block.canonical_etypes != hg.edge_types:
            raise NotImplementedError(
                "this DGL lacks the block constructors graphferry uses, and dgl.create_block reorders the "
                "types of this graph; name node and edge types in sorted order"
            )
        return block
    graph_index, hgi, block_cls, toindex = parts
    meta = graph_index.from_coo(2 * T, hg.relation_src_type, [T + d for d in hg.relation_dst_type], True)
    units = []
    for r in range(hg.num_relations):
        indptr, indices = csc[r]
        s, d = hg.relation_src_type[r], hg.relation_dst_type[r]
        units.append(
            hgi.create_unitgraph_from_csr(
                2, num_src[s], num_dst[d], indptr, indices, _EMPTY[indices.dtype], ["coo", "csr", "csc"], True
            )
        )
    index = hgi.create_heterograph_from_relations(meta, units, toindex(list(num_src) + list(num_dst), "int64"))
    return block_cls(index, (list(hg.node_types), list(hg.node_types)), [et[1] for et in hg.edge_types])


def to_hetero_blocks(
    sub: SampledSubgraph,
    hg: HeteroGraph,
    *,
    idtype: torch.dtype = torch.int64,
    g: Any = None,
    node_feats: Mapping[str, Sequence[str]] | None = None,
    labels: Mapping[str, Sequence[str]] | None = None,
) -> list:
    r"""Heterogeneous DGL blocks of a ``frontier="all"`` sample over ``hg``'s
    global ids, outermost first (``blocks[i]`` is hop ``L - 1 - i``).

    Each block has every node type as source and destination type and every
    relation of ``hg`` (empty when no edge of it was sampled). A type's
    nodes keep their order in ``sub.nodes``, so each type's destination
    nodes come first among its source nodes. ``dgl.NID`` (per node type) and
    ``dgl.EID`` (per edge type) are type-local ids in ``idtype``.

    Args:
        sub (SampledSubgraph): the sample (global node and edge ids).
        hg (HeteroGraph): the graph it was drawn from.
        idtype (torch.dtype): the blocks' idtype. (default: :obj:`torch.int64`)
        g (dgl.DGLGraph, optional): the DGL graph ``hg`` was converted from;
            every block then carries all of its node and edge data, attached
            lazily through DGL's frames. (default: :obj:`None`)
        node_feats (dict, optional): ``{ntype: names}`` of ``hg``'s node data
            put on ``blocks[0].srcdata``. (default: :obj:`None`)
        labels (dict, optional): ``{ntype: names}`` put on
            ``blocks[-1].dstdata``. (default: :obj:`None`)
    """
    T, R = hg.num_node_types, hg.num_relations
    tv = sub.typed
    if tv is None:
        raise ValueError(
            "to_hetero_blocks needs a sample of a typed graph (SampledSubgraph.typed): sample hg.graph "
            "with graphferry's sample_neighbors or Loader"
        )
    if len(tv.node_offsets) != T + 1:
        raise ValueError(f"the sample has {len(tv.node_offsets) - 1} node types; the graph has {T}")

    def as_idtype(x: torch.Tensor) -> torch.Tensor:
        return x if idtype == torch.int64 else x.to(idtype)

    # The engine split the batch by type and relation (in its sampler
    # threads); here the arrays are only sliced and wrapped.
    by_type = as_idtype(tv.nodes)
    by_type = [by_type[tv.node_offsets[t] : tv.node_offsets[t + 1]] for t in range(T)]
    lazy = g is not None and (
        any(len(g.nodes[nt].data) for nt in g.ntypes) or any(len(g.edges[et].data) for et in g.canonical_etypes)
    )
    blocks = []
    for tb in reversed(tv.blocks):
        num_src, num_dst = tb.num_src, tb.num_dst
        if any(tb.dst_rank):
            raise ValueError("to_hetero_blocks needs a frontier='all' sample (each block's destinations first)")
        src_all, eid_all, indptr_all = as_idtype(tb.src), as_idtype(tb.edge_ids), as_idtype(tb.indptr)
        starts = tb.indptr_starts(hg.relation_dst_type)
        csc, edge_ids = [], []
        for r in range(R):
            lo, hi = tb.edge_offsets[r], tb.edge_offsets[r + 1]
            csc.append((indptr_all[starts[r] : starts[r + 1]], src_all[lo:hi]))
            edge_ids.append(eid_all[lo:hi])
        block = _hetero_block(hg, num_src, num_dst, csc)
        src_ids = [by_type[t][: num_src[t]] for t in range(T)]
        dst_ids = [by_type[t][: num_dst[t]] for t in range(T)]
        if lazy:
            dgl.utils.set_new_frames(
                block,
                node_frames=dgl.utils.extract_node_subframes_for_block(g, src_ids, dst_ids),
                edge_frames=dgl.utils.extract_edge_subframes(g, edge_ids),
            )
        else:
            for t, nt in enumerate(hg.node_types):
                block.srcnodes[nt].data[dgl.NID] = src_ids[t]
                block.dstnodes[nt].data[dgl.NID] = dst_ids[t]
            for r, et in enumerate(hg.edge_types):
                block.edges[et].data[dgl.EID] = edge_ids[r]
        blocks.append(block)
    if blocks:
        first, last = blocks[0], blocks[-1]
        for nt, names in (node_feats or {}).items():
            ids = first.srcnodes[nt].data[dgl.NID]
            for name in names:
                first.srcnodes[nt].data[name] = hg.get_node_data(nt, name)[ids.long()]
        for nt, names in (labels or {}).items():
            ids = last.dstnodes[nt].data[dgl.NID]
            for name in names:
                last.dstnodes[nt].data[name] = hg.get_node_data(nt, name)[ids.long()]
    return blocks


# -- graph conversion -----------------------------------------------------------


def _signature(g: Any, prob: str | None) -> Any:
    """What a converted heterograph depends on: its types, sizes and weights."""
    weights = None
    if prob is not None:
        weights = tuple(
            _cache.tensor_signature(g.edges[et].data[prob]) if prob in g.edges[et].data else None
            for et in g.canonical_etypes
        )
    return (
        tuple(g.ntypes),
        tuple(g.canonical_etypes),
        tuple(g.num_nodes(nt) for nt in g.ntypes),
        tuple(g.num_edges(et) for et in g.canonical_etypes),
        prob,
        weights,
    )


def as_hetero_graph(graph: Any, prob: str | None = None) -> HeteroGraph:
    """``graph`` if it is a :class:`HeteroGraph`, else the (cached)
    conversion of a ``dgl.DGLGraph`` with the weights of ``edata[prob]``."""
    if isinstance(graph, HeteroGraph):
        return graph
    if isinstance(graph, dgl.DGLGraph):
        if prob is not None and not any(prob in graph.edges[et].data for et in graph.canonical_etypes):
            raise KeyError(f"'prob': no edge type of the DGLGraph has an edata field '{prob}'")
        return _cache.cached_graph(
            graph,
            _signature(graph, prob),
            lambda: HeteroGraph.from_dgl(graph, edge_weights=prob),
            kind="hetero",
        )
    raise TypeError(f"expected a 'dgl.DGLGraph' or 'graphferry.HeteroGraph' (got '{type(graph).__name__}')")


def _per_type_names(names: Any, hg: HeteroGraph, what: str) -> dict[str, list[str]]:
    """DGL's prefetch lists: a list (each type that has the data) or a dict
    ``{ntype: names}``; as ``{ntype: names}`` over ``hg``'s node data."""
    if not names:
        return {}
    if isinstance(names, Mapping):
        out = {}
        for nt, ns in names.items():
            hg.ntype_index(nt)
            ns = [ns] if isinstance(ns, str) else list(ns)
            missing = [n for n in ns if not hg.has_node_data(nt, n)]
            if missing:
                raise ValueError(
                    f"'{what}': node type '{nt}' has no node data {missing} (it has {hg.node_data_names(nt)})"
                )
            out[nt] = ns
        return out
    names = [names] if isinstance(names, str) else list(names)
    out = {nt: [n for n in names if hg.has_node_data(nt, n)] for nt in hg.node_types}
    missing = [n for n in names if not any(n in ns for ns in out.values())]
    if missing:
        raise ValueError(f"'{what}': no node type has node data {missing}")
    return {nt: ns for nt, ns in out.items() if ns}


# -- the loader ---------------------------------------------------------------------


def _hetero_exclude(exclude: Any, hg: HeteroGraph) -> Any:
    """``exclude_edges`` as global edge ids: a dict ``{etype: local ids}``
    (DGL's form for heterographs), or already global ids."""
    if exclude is None or not isinstance(exclude, Mapping):
        return exclude
    parts = [hg.edge_to_global(et, ids) for et, ids in exclude.items()]
    return torch.cat(parts) if parts else None


def hetero_options(hg: HeteroGraph, settings: Any, seed: int, num_threads: int) -> SampleOptions:
    """The engine's options for a DGL node sampler's ``settings`` over
    ``hg`` (the node and the edge loaders on heterographs share them)."""
    if settings.scheme not in ("node", "labor"):
        raise NotImplementedError(
            "graphferry samples heterographs node-wise (NeighborSampler) or with LABOR-0 (LaborSampler), "
            f"not layer-wise (got scheme '{settings.scheme}')"
        )
    hops = hg.relation_fanouts(settings.fanouts)
    return SampleOptions(
        (),  # the hops are those of relation_fanouts
        relation_fanouts=tuple(reversed(hops)),  # the engine counts hops from the seeds
        replace=settings.replace,
        frontier="all",
        scheme=settings.scheme,
        layer_dependency=settings.layer_dependency,
        biased=settings.prob is not None,
        exclude_edges=_hetero_exclude(settings.exclude_edges, hg),
        seed=seed,
        num_threads=num_threads,
    )


class HeteroDataLoader(EngineLoader):
    r"""The heterogeneous path of :class:`graphferry.dgl.DataLoader` (see
    the module docstring); made by ``graphferry.dgl.DataLoader(...)`` when
    the graph is a DGL heterograph or a :class:`~graphferry.HeteroGraph`, or
    the seeds are a dict. Its arguments are those of
    :class:`graphferry.dgl.DataLoader`, with:

    Args:
        graph (dgl.DGLGraph or graphferry.HeteroGraph): the graph; a
            DGLGraph is converted once (:meth:`HeteroGraph.from_dgl`) and
            cached.
        indices (dict): ``{ntype: ids}`` (type-local ids, or a bool mask
            over the type); a tensor is accepted for a graph with a single
            node type. Batches mix the types, as DGL's.
        graph_sampler: a ``dgl.dataloading.NeighborSampler``, a
            ``dgl.dataloading.LaborSampler`` (LABOR-0, each relation's
            neighbours kept with probability ``min(1, k / in-degree in that
            relation)``) or :class:`graphferry.dgl.NeighborSampler`, fan-outs as ints or
            ``{etype: k}`` dicts (every relation, as DGL requires), ``prob``
            naming an edata field (relations without it are sampled
            uniformly, as DGL), ``exclude_edges`` as ``{etype: ids}``.
    """

    def __init__(
        self,
        graph: Any,
        indices: Any,
        graph_sampler: Any,
        device: str | torch.device | None = None,
        use_ddp: bool = False,
        ddp_seed: int = 0,
        batch_size: int = 1,
        drop_last: bool = False,
        shuffle: bool = False,
        use_prefetch_thread: bool | None = None,
        use_alternate_streams: bool | None = None,
        pin_prefetcher: bool | None = None,
        use_uva: bool = False,
        gpu_cache: Any = None,
        *,
        seed: int | None = None,
        queue_capacity: int = 2,
        num_threads: int = 0,
        comm: Any = None,
        **kwargs: Any,
    ):
        from .dgl import _check_loader_kwargs, _ddp_seeds, _sampler_settings, _user_order_error

        self._loaders = []
        generator = _check_loader_kwargs(kwargs, use_uva)
        if comm is not None:
            raise NotImplementedError("graphferry samples heterographs in one process: comm= is not supported")
        settings = _sampler_settings(graph_sampler)
        self.graph = graph
        self.indices = indices
        self.graph_sampler = graph_sampler
        self.settings = settings
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.use_ddp = bool(use_ddp)
        self.ddp_seed = ddp_seed
        self.device = torch.device("cpu" if device is None else device)
        # A HeteroGraph must already carry its weights (as a graphferry.Graph).
        hg = as_hetero_graph(graph, settings.prob)
        self.hetero_graph = hg
        self._dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else hg.dgl_graph
        self._idtype = self._dgl_graph.idtype if self._dgl_graph is not None else torch.int64
        if not isinstance(indices, Mapping):
            if hg.num_node_types != 1:
                raise TypeError(
                    f"the graph has node types {hg.node_types}: give the seeds as a dict {{ntype: ids}} "
                    f"(got '{type(indices).__name__}')"
                )
            indices = {hg.node_types[0]: indices}
        if not indices:
            raise ValueError("'indices' is an empty dict: give the seeds of at least one node type")
        self._seed_types = [hg.node_types[hg.ntype_index(nt)] for nt in indices]
        seeds = hg.to_global_nodes(indices)
        if self.use_ddp:
            seeds = _ddp_seeds(seeds, drop_last)
        if seed is None:
            if self.use_ddp:
                seed = ddp_seed
            elif generator is not None:
                seed = int(torch.randint(0, 2**63 - 1, (), generator=generator))
        if settings.prefetch_edge_feats and self._dgl_graph is None:
            raise ValueError(
                "prefetch_edge_feats needs a DGL graph (a graphferry.HeteroGraph holds no edge data); "
                f"got prefetch_edge_feats={settings.prefetch_edge_feats}"
            )
        if self._dgl_graph is None:
            self._node_feats = _per_type_names(settings.prefetch_node_feats_raw, hg, "prefetch_node_feats")
            self._labels = _per_type_names(settings.prefetch_labels_raw, hg, "prefetch_labels")
        else:  # DGL's frames carry all of the graph's data
            self._node_feats, self._labels = {}, {}
            for what, names in (
                ("prefetch_node_feats", settings.prefetch_node_feats_raw),
                ("prefetch_labels", settings.prefetch_labels_raw),
            ):
                _per_type_names(names, hg, what)  # errors for data the graph lacks, as the homogeneous path
        options = hetero_options(hg, settings, random_seed() if seed is None else seed, num_threads)
        try:
            self._open_engine(
                hg.graph,
                seeds,
                options,
                batch_size=batch_size,
                shuffle=shuffle,
                drop_last=drop_last,
                queue_capacity=queue_capacity,
            )
        except GraphferryError as err:
            if settings.prob is not None and isinstance(graph, HeteroGraph) and "weights" in err.message:
                err = error_for_status(
                    err.code,
                    f"{err.message} (prob={settings.prob!r} on a graphferry.HeteroGraph samples by the weights it "
                    "holds: give them with HeteroGraph.from_coo(edge_weights=...) or set_edge_weights)",
                )
            raise _user_order_error(err, len(settings.fanouts)) from None

    def _convert(self, sub: SampledSubgraph) -> tuple:
        hg = self.hetero_graph
        blocks = to_hetero_blocks(
            sub, hg, idtype=self._idtype, g=self._dgl_graph, node_feats=self._node_feats, labels=self._labels
        )
        # A dict over every node type (a tensor for a single one, as DGL's).
        input_nodes = blocks[0].srcdata[dgl.NID] if blocks else hg.nodes_by_type(sub.nodes)
        last = blocks[-1] if blocks else None
        output_nodes = {}
        for nt in self._seed_types:
            if last is not None:
                ids = last.dstnodes[nt].data[dgl.NID]
            else:
                ids = hg.nodes_by_type(sub.seeds)[nt].to(self._idtype)
            if ids.numel():
                output_nodes[nt] = ids
        if self.device.type != "cpu":
            blocks = [b.to(self.device) for b in blocks]
            if isinstance(input_nodes, Mapping):
                input_nodes = {k: v.to(self.device) for k, v in input_nodes.items()}
            else:
                input_nodes = input_nodes.to(self.device)
            output_nodes = {k: v.to(self.device) for k, v in output_nodes.items()}
        return input_nodes, output_nodes, blocks


def check_homogeneous_settings(settings: Any) -> None:
    """Raises for per-edge-type fan-outs on a homogeneous loader."""
    if any(isinstance(f, Mapping) for f in settings.fanouts):
        raise TypeError(
            "per-edge-type fan-outs ({etype: k} dicts) need a heterogeneous graph: give a DGL heterograph "
            "or a graphferry.HeteroGraph"
        )

r"""graphferry as DGL's node-classification data loader.

:class:`DataLoader` replaces ``dgl.dataloading.DataLoader`` for neighbour
sampling: the engine samples (collective sampling over the graph's patches)
and gathers features on its own threads, and each batch arrives as DGL's
``(input_nodes, output_nodes, blocks)`` with real ``dgl.create_block``
blocks.

.. code-block:: python

    import dgl, graphferry.dgl
    sampler = dgl.dataloading.NeighborSampler([10, 10],
                                              prefetch_node_feats=["feat"],
                                              prefetch_labels=["label"])
    loader = graphferry.dgl.DataLoader(g, train_nids, sampler,
                                       batch_size=1024, shuffle=True)
    for input_nodes, output_nodes, blocks in loader:
        logits = model(blocks, blocks[0].srcdata["feat"])
        loss = F.cross_entropy(logits, blocks[-1].dstdata["label"])

Heterographs: a DGL heterograph (or a :class:`graphferry.HeteroGraph`), seeds
``{ntype: ids}`` and fan-outs ``[{etype: k}, ...]`` give DGL's heterogeneous
blocks (:mod:`graphferry.dgl_hetero`).

DGL's ``NeighborSampler(prob="w")`` (or ``mask="m"``) samples in proportion
to ``g.edata["w"]`` (0/1 for a mask): the weights are set on the converted
graph and the engine samples biased, never taking an edge of weight 0.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import dgl
import torch

from . import _cache, _loader
from ._loader import EngineLoader, refuse_workers
from ._options import SampleOptions, check_scheme, fanout_values
from .errors import GF_EINVAL, GF_ESTATE, GraphferryError, InvalidArgumentError, error_for_status
from .graph import Graph
from .sampling import SampledSubgraph, _names, random_seed

__all__ = ["NeighborSampler", "DataLoader", "to_blocks", "random_walk"]


class NeighborSampler:
    r"""Neighbour sampling settings with the meaning of DGL's
    ``dgl.dataloading.NeighborSampler``: ``fanouts[i]`` is the fan-out of
    ``blocks[i]``, so the LAST entry applies to the seeds (DGL order);
    ``-1`` takes all neighbours.

    Args:
        fanouts (list of int): fan-out per layer, outermost first (with
            ``scheme="layer"``: the sampling budget of each whole layer). On
            a heterogeneous graph an entry may be a dict ``{etype: k}`` with
            every edge type, as DGL's (see :mod:`graphferry.dgl_hetero`).
        replace (bool): sample with replacement. (default: :obj:`False`)
        prob (str, optional): the name of an ``edata`` field holding edge
            weights, as in DGL: neighbours are sampled with probability
            proportional to them, and edges of weight 0 never. When the
            loader is given a ``dgl.DGLGraph``, the weights are taken from
            ``g.edata[prob]`` (set on the converted graph); when it is given a
            :class:`graphferry.Graph`, that graph must already have weights
            (:meth:`graphferry.Graph.set_edge_weights`), and ``prob`` only
            switches biased sampling on. (default: :obj:`None`)
        mask (str, optional): the name of a bool ``edata`` field, as in DGL:
            only edges whose mask is True are sampled. graphferry samples it
            as weights 0/1 (biased sampling), like DGL; mutually exclusive
            with ``prob``. (default: :obj:`None`)
        exclude_edges (Tensor, optional): int64 edge ids that are never
            sampled (e.g. the target edges of link prediction).
            (default: :obj:`None`)
        prefetch_node_feats (list of str, optional): node data put on
            ``blocks[0].srcdata``; on a heterogeneous graph also a dict
            ``{ntype: names}``, as DGL's. (default: :obj:`None`)
        prefetch_labels (list of str, optional): node data put on
            ``blocks[-1].dstdata`` (a dict on a heterograph, as above).
            (default: :obj:`None`)
        prefetch_edge_feats (list of str, optional): edge data wanted on
            every block's ``edata``; as in DGL, blocks made from a
            ``dgl.DGLGraph`` carry all of its edge data anyway (attached
            lazily). (default: :obj:`None`)
        scheme (str): ``"node"`` (node-wise, DGL's ``NeighborSampler``),
            ``"layer"`` (layer-wise, see :func:`graphferry.sample_neighbors`)
            or ``"labor"`` (LABOR-0, DGL's ``LaborSampler``: each neighbour
            of a destination ``v`` is kept with probability
            ``min(1, fanout / in_degree(v))``, from one random variate per
            neighbour shared by every destination of the batch).
            (default: :obj:`"node"`)
        layer_without_replacement (bool): with ``scheme="layer"``, draw
            distinct nodes per layer. (default: :obj:`False`)
        layer_dependency (bool): with ``scheme="labor"``, every layer uses
            the same variates, as DGL's ``LaborSampler(layer_dependency=True)``.
            (default: :obj:`False`)

    .. code-block:: python

        g.edata["w"] = weights
        sampler = graphferry.dgl.NeighborSampler([10, 10], prob="w",
                                                 prefetch_node_feats=["feat"])
        loader = graphferry.dgl.DataLoader(g, train_nids, sampler, batch_size=1024)
    """

    def __init__(
        self,
        fanouts: Sequence[int],
        *,
        replace: bool = False,
        prob: str | None = None,
        mask: str | None = None,
        exclude_edges: Any = None,
        prefetch_node_feats: Sequence[str] | None = None,
        prefetch_labels: Sequence[str] | None = None,
        prefetch_edge_feats: Sequence[str] | None = None,
        scheme: str = "node",
        layer_without_replacement: bool = False,
        layer_dependency: bool = False,
    ):
        _check_fanouts(fanouts)
        if prob is not None and mask is not None:
            raise ValueError(
                f"'prob' and 'mask' are mutually exclusive (got prob={prob!r}, mask={mask!r}); "
                "multiply the probability by the mask instead"
            )
        weights = prob if prob is not None else mask
        if weights is not None and not isinstance(weights, str):
            raise TypeError(f"'prob' and 'mask' must name an edata field (got '{type(weights).__name__}')")
        check_scheme(scheme)
        self.fanouts = list(fanouts)
        self.replace = bool(replace)
        self.prob = weights  # as DGL: prob or mask
        self.exclude_edges = exclude_edges
        # As given (a dict {ntype: names} is the heterogeneous form), and as
        # one list of names for the homogeneous loaders.
        self.prefetch_node_feats_raw = _per_type_or_names(prefetch_node_feats, "prefetch_node_feats")
        self.prefetch_labels_raw = _per_type_or_names(prefetch_labels, "prefetch_labels")
        self.prefetch_node_feats = _flat_names(self.prefetch_node_feats_raw)
        self.prefetch_labels = _flat_names(self.prefetch_labels_raw)
        self.prefetch_edge_feats = _names(prefetch_edge_feats, "prefetch_edge_feats")
        self.scheme = scheme
        self.layer_without_replacement = bool(layer_without_replacement)
        self.layer_dependency = bool(layer_dependency)

    def __repr__(self) -> str:
        return (
            f"NeighborSampler(fanouts={self.fanouts}, replace={self.replace}, prob={self.prob!r}, "
            f"scheme={self.scheme!r}, prefetch_node_feats={self.prefetch_node_feats}, "
            f"prefetch_labels={self.prefetch_labels})"
        )


def _check_fanouts(fanouts: Any) -> None:
    """Python types only (the engine checks values): a list of ints, or of
    ints and ``{etype: k}`` dicts (heterographs; checked against the graph's
    edge types by :meth:`graphferry.HeteroGraph.relation_fanouts`)."""
    if isinstance(fanouts, (list, tuple)) and any(isinstance(f, Mapping) for f in fanouts):
        fanout_values([f for f in fanouts if not isinstance(f, Mapping)])
        return
    fanout_values(fanouts)


def _per_type_or_names(names: Any, what: str) -> Any:
    if isinstance(names, Mapping):
        return {nt: _names(ns, f"{what}[{nt!r}]") for nt, ns in names.items()}
    return _names(names, what)


def _flat_names(names: Any) -> list[str]:
    if isinstance(names, Mapping):
        return list(dict.fromkeys(n for ns in names.values() for n in ns))
    return list(names)


def _sampler_settings(sampler: Any) -> NeighborSampler:
    if isinstance(sampler, NeighborSampler):
        return sampler
    labor = getattr(dgl.dataloading, "LaborSampler", None)
    if labor is not None and isinstance(sampler, labor):
        return _labor_settings(sampler)
    if isinstance(sampler, dgl.dataloading.NeighborSampler):
        if getattr(sampler, "edge_dir", "in") != "in":
            raise ValueError(f"graphferry samples in-neighbours only (got edge_dir='{sampler.edge_dir}')")
        prob = getattr(sampler, "prob", None)  # DGL stores `prob or mask` here
        if prob is not None and not isinstance(prob, str):
            raise TypeError(
                "graphferry reads edge weights from an edata field: 'prob'/'mask' must be its "
                f"name (got '{type(prob).__name__}')"
            )
        return NeighborSampler(
            list(sampler.fanouts),
            replace=bool(sampler.replace),
            prob=prob,
            prefetch_node_feats=_dgl_names(sampler.prefetch_node_feats),
            prefetch_labels=_dgl_names(sampler.prefetch_labels),
            prefetch_edge_feats=_flat_names(_dgl_names(sampler.prefetch_edge_feats)),
        )
    raise TypeError(
        "expected a 'dgl.dataloading.NeighborSampler' or 'graphferry.dgl.NeighborSampler' "
        f"(got '{type(sampler).__name__}')"
    )


def _dgl_names(names: Any) -> Any:
    """A DGL prefetch setting (None, a list, or a dict per type) as a list or dict."""
    if isinstance(names, Mapping):
        return dict(names)
    return list(names or [])


def _labor_settings(sampler: Any) -> NeighborSampler:
    """Our settings for DGL's ``LaborSampler``: LABOR-0, uniform, with or
    without layer dependency. What graphferry does not implement is refused
    by name rather than sampled differently."""
    if getattr(sampler, "edge_dir", "in") != "in":
        raise ValueError(f"graphferry samples in-neighbours only (got edge_dir='{sampler.edge_dir}')")
    if getattr(sampler, "prob", None) is not None:
        raise NotImplementedError(
            f"graphferry's LaborSampler is uniform LABOR-0: prob={sampler.prob!r} (weighted LABOR, whose "
            "blocks carry edata['edge_weights']) is not supported; drop prob, or use "
            "dgl.dataloading.NeighborSampler(prob=...) for weighted neighbour sampling"
        )
    importance = int(getattr(sampler, "importance_sampling", 0))
    if importance != 0:
        raise NotImplementedError(
            f"graphferry implements LABOR-0 only: importance_sampling={importance} (LABOR-{importance} "
            "or LABOR-*, whose blocks carry edata['edge_weights']) is not supported; use importance_sampling=0"
        )
    # DGL keeps batch_dependency in cnt[1] (default 1: fresh variates per batch).
    cnt = getattr(sampler, "cnt", None)
    dependency = int(cnt[1]) if cnt is not None else 1
    if dependency != 1:
        raise NotImplementedError(
            f"graphferry draws fresh LABOR variates for every batch: batch_dependency={dependency} "
            "is not supported; use batch_dependency=1 (the default)"
        )
    return NeighborSampler(
        list(sampler.fanouts),
        prefetch_node_feats=list(sampler.prefetch_node_feats or []),
        prefetch_labels=list(sampler.prefetch_labels or []),
        prefetch_edge_feats=list(sampler.prefetch_edge_feats or []),
        scheme="labor",
        layer_dependency=bool(sampler.layer_dependency),
    )


def _check_homogeneous(g: Any) -> None:
    if not g.is_homogeneous:
        raise TypeError(
            f"graphferry supports homogeneous graphs only (got node types {g.ntypes} and edge types {g.etypes})"
        )


def _topology_signature(g: Any, prob: str | None = None) -> Any:
    """What a converted graph depends on: the topology and the weights. Node
    data is kept in step separately (:func:`_sync_node_data`), so that
    replacing a feature tensor does not convert the whole graph again."""
    return (
        g.num_nodes(),
        g.num_edges(),
        None if prob is None else (prob, _cache.tensor_signature(g.edata[prob])),
    )


def _convert_dgl(g: Any, prob: str | None) -> Graph:
    graph = Graph.from_dgl(g, edge_weights=prob)
    # The node data the engine holds, as of which tensor (see _sync_node_data).
    held = set(graph.node_data_names())
    graph._dgl_sources = {
        name: _cache.tensor_signature(value)
        for name, value in g.ndata.items()
        if isinstance(value, torch.Tensor) and name in held
    }
    return graph


def as_graph(graph: Any, prob: str | None = None) -> Graph:
    """``graph`` if it is a :class:`graphferry.Graph`, else the (cached)
    conversion of a homogeneous ``dgl.DGLGraph``, with the edge weights of
    ``graph.edata[prob]`` when ``prob`` is given."""
    if isinstance(graph, dgl.DGLGraph):
        _check_homogeneous(graph)
        if prob is not None and prob not in graph.edata:
            raise KeyError(f"'prob': the DGLGraph has no edata field '{prob}' (it has {sorted(graph.edata.keys())})")
    return _cache.as_graph(
        graph,
        dgl.DGLGraph,
        "dgl.DGLGraph",
        lambda: _topology_signature(graph, prob),
        lambda: _convert_dgl(graph, prob),
    )


def _sync_node_data(graph: Graph, g: Any, names: Sequence[str]) -> None:
    """Puts ``g.ndata[name]`` into the engine graph for each of ``names``
    whose tensor was replaced (or changed in place) since the engine got it.

    The engine refuses to replace node data while loaders are open on the
    graph, so the idle engine loaders of every graphferry loader on it are
    closed first (they reopen on their next epoch). When some epoch is still
    being iterated the replacement waits for a later epoch; meanwhile the
    batches serve the new tensor through DGL's lazy columns (see
    :meth:`DataLoader._convert`), so the data served is always current."""
    sources = getattr(graph, "_dgl_sources", None)
    if sources is None:
        return
    for name in names:
        value = g.ndata.get(name) if name in g.ndata else None
        if not isinstance(value, torch.Tensor):
            continue
        signature = _cache.tensor_signature(value)
        if sources.get(name) == signature or graph.skipped_node_data.get(name) == signature:
            continue
        _loader.release_idle_loaders(graph)
        try:
            graph.set_node_data(name, value)
        except TypeError:  # a dtype the engine does not carry: served by DGL's columns
            graph.skipped_node_data[name] = signature
            continue
        except GraphferryError as err:
            if err.code == GF_ESTATE:  # a loader is mid-epoch: a later epoch retries
                continue
            raise
        sources[name] = signature


def random_walk(
    g: Any,
    nodes: Any,
    *,
    length: int,
    prob: str | None = None,
    restart_prob: float = 0.0,
    return_eids: bool = False,
    seed: int | None = None,
):
    r"""Random walks as ``dgl.sampling.random_walk`` makes them on a
    homogeneous graph, by graphferry's collective walk: each step moves from
    a node to one of its successors (along out-edges, as DGL does), uniformly
    or, with ``prob``, in proportion to ``g.edata[prob]``.

    Args:
        g (dgl.DGLGraph): a homogeneous graph.
        nodes (Tensor): start nodes.
        length (int): steps per walk.
        prob (str, optional): edata field of non-negative edge weights.
            (default: :obj:`None`)
        restart_prob (float): probability of jumping back to the start node
            at each step. (default: :obj:`0.0`)
        return_eids (bool): also return the edge id of every step.
            (default: :obj:`False`)
        seed (int, optional): seed of the random streams. (default:
            :obj:`None`, drawn from torch's generator)

    Returns:
        ``(traces, types)`` or, with ``return_eids``, ``(traces, eids,
        types)``, as DGL's: ``traces`` int64 ``[len(nodes), length + 1]``
        padded with ``-1`` after a walk stops (at a node without successors,
        where DGL stops too), ``eids`` ``[len(nodes), length]`` with ``-1``
        for restarts and stopped walks, ``types`` the node type of each
        column (all 0).
    """
    if not isinstance(g, dgl.DGLGraph):
        raise TypeError(f"expected a 'dgl.DGLGraph' (got '{type(g).__name__}')")
    _check_homogeneous(g)
    if prob is not None and prob not in g.edata:
        raise KeyError(f"'prob': the DGLGraph has no edata field '{prob}' (it has {sorted(g.edata.keys())})")

    def edges():
        src, dst = g.edges(order="eid")
        return src, dst, g.num_nodes(), None if prob is None else g.edata[prob]

    traces, eids = _cache.walk_reversed(
        g,
        _topology_signature(g, prob),
        edges,
        nodes,
        length,
        biased=prob is not None,
        restart_prob=restart_prob,
        seed=seed,
    )
    types = torch.zeros(traces.shape[1], dtype=torch.int64)
    return (traces, eids, types) if return_eids else (traces, types)


# An empty edge-id array tells DGL that block edge i is CSC position i,
# which is what our indices are; it saves an arange per block.
_NO_EIDS = {torch.int64: torch.empty(0, dtype=torch.int64), torch.int32: torch.empty(0, dtype=torch.int32)}
_block_parts: tuple | None = None


def _csc_block(indptr: torch.Tensor, indices: torch.Tensor, num_src: int, num_dst: int):
    # The block's idtype is that of indptr and indices (int64 or int32).
    """``dgl.create_block(("csc", (indptr, indices, [])), num_src, num_dst)``
    built the way ``create_block`` builds it, minus its Python-side checks
    (a scan of ``indices`` for its maximum, the per-call metagraph): the
    engine's blocks are valid by construction, and at ~10^5 edges per hop
    those checks cost about as much as the sampling of the hop. Falls back
    to ``dgl.create_block`` if this DGL lacks the pieces."""
    global _block_parts
    if _block_parts is None:
        try:
            from dgl import graph_index, heterograph_index
            from dgl.heterograph import DGLBlock
            from dgl.utils import toindex

            meta = graph_index.from_coo(2, [0], [1], True)  # SRC/_N -> DST/_N
            _block_parts = (heterograph_index, DGLBlock, toindex, meta)
        except (ImportError, AttributeError):
            _block_parts = ()
    if not _block_parts:
        return dgl.create_block(
            ("csc", (indptr, indices, _NO_EIDS[indices.dtype])), num_src_nodes=num_src, num_dst_nodes=num_dst
        )
    hgi, block_cls, toindex, meta = _block_parts
    unit = hgi.create_unitgraph_from_csr(
        2, num_src, num_dst, indptr, indices, _NO_EIDS[indices.dtype], ["coo", "csr", "csc"], True
    )
    index = hgi.create_heterograph_from_relations(meta, [unit], toindex([num_src, num_dst], "int64"))
    return block_cls(index, (["_N"], ["_N"]), ["_E"])


def to_blocks(sub: SampledSubgraph, g: Any = None, *, idtype: torch.dtype = torch.int64) -> list:
    r"""DGL blocks of a ``frontier="all"`` sample, outermost first:
    ``blocks[i]`` is hop ``L - 1 - i`` (DGL's ``blocks[0]`` is the layer
    farthest from the seeds). Block node ids are in ``srcdata[dgl.NID]`` /
    ``dstdata[dgl.NID]``, edge ids in ``edata[dgl.EID]``; ``sub.node_data``
    goes on ``blocks[0].srcdata`` and ``sub.labels`` on ``blocks[-1].dstdata``.

    With the ``dgl.DGLGraph`` ``g`` the sample was drawn from, every block
    also carries all of ``g``'s node data (``srcdata``, ``dstdata``) and edge
    data (``edata``) as DGL's own sampler attaches them: lazily, through
    DGL's frames, read from ``g`` when first used. ``idtype`` (the graph's)
    is the type of the blocks and their ids.
    """
    nodes = sub.nodes if idtype == torch.int64 else sub.nodes.to(idtype)
    lazy = g is not None and (len(g.ndata) > 0 or len(g.edata) > 0)
    blocks = []
    for hop in reversed(sub.blocks):
        indptr, indices, eids = hop.indptr, hop.indices, hop.edge_ids
        if idtype != torch.int64:
            indptr, indices, eids = indptr.to(idtype), indices.to(idtype), eids.to(idtype)
        block = _csc_block(indptr, indices, hop.num_src, hop.num_dst)
        src, dst = nodes[: hop.num_src], nodes[: hop.num_dst]
        if lazy:
            # DGL's own helpers: subframes of g's frames (columns indexed on
            # first use), with dgl.NID / dgl.EID set.
            dgl.utils.set_new_frames(
                block,
                node_frames=dgl.utils.extract_node_subframes_for_block(g, [src], [dst]),
                edge_frames=dgl.utils.extract_edge_subframes(g, [eids]),
            )
        else:
            block.srcdata[dgl.NID] = src
            block.dstdata[dgl.NID] = dst
            block.edata[dgl.EID] = eids
        blocks.append(block)
    if blocks:
        num_src = blocks[0].num_src_nodes()
        for name, value in sub.node_data.items():
            blocks[0].srcdata[name] = value[:num_src]
        for name, value in sub.labels.items():
            blocks[-1].dstdata[name] = value
    return blocks


# DataLoader arguments of DGL (and of torch's DataLoader, which DGL passes
# them to) that only tune machinery graphferry replaces with its own
# pipeline: accepted and ignored.
_IGNORED = {
    "use_prefetch_thread",  # DGL's feature-slicing thread: the engine gathers on its own threads
    "use_alternate_streams",  # CUDA streams of DGL's prefetcher
    "pin_prefetcher",  # pinning of DGL's prefetched features
    "gpu_cache",  # DGL's HugeCTR GPU feature cache
    "persistent_workers",  # torch worker processes (graphferry has none)
    "prefetch_factor",  # batches per torch worker: see queue_capacity
    "timeout",  # for torch workers
    "worker_init_fn",  # torch never calls it without workers
    "multiprocessing_context",  # for torch workers
    "pin_memory",  # torch's pinning of the sampler's outputs (CPU-only here)
    "pin_memory_device",
    "in_order",  # order of torch workers' batches: ours always arrive in order
}
# torch DataLoader arguments that would replace DGL's own batching: DGL
# refuses them too (its dataset is an IterableDataset with its own collate).
_REFUSED = {"sampler", "batch_sampler", "collate_fn"}


def _ddp_seeds(indices: torch.Tensor, drop_last: bool) -> torch.Tensor:
    """This rank's seeds under ``use_ddp=True``, split as DGL splits them:
    rank ``r`` of ``w`` takes the ``r``-th of ``w`` contiguous equal slices
    (``floor(n / w)`` seeds with ``drop_last``, else ``ceil(n / w)``), so
    every rank has the same number of batches. A short last slice is padded
    to that size; DGL pads it with repeats of the rank's own seeds, graphferry
    with the first seeds of the whole set (a batch's seeds must be
    distinct), as torch's DistributedSampler pads."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError(
            "use_ddp=True needs an initialised torch.distributed process group "
            "(torch.distributed.init_process_group), as DGL's DataLoader does"
        )
    return ddp_split(indices, dist.get_rank(), dist.get_world_size(), drop_last)


def ddp_split(indices: torch.Tensor, rank: int, world_size: int, drop_last: bool) -> torch.Tensor:
    """The seeds of ``rank`` among ``world_size`` ranks (see :func:`_ddp_seeds`)."""
    n = len(indices)
    per_rank = n // world_size if drop_last else -(-n // world_size)
    lo, hi = rank * per_rank, (rank + 1) * per_rank
    local = indices[lo:hi]
    if len(local) < per_rank:
        local = torch.cat([local, indices[: per_rank - len(local)]])
    return local


_FANOUT_INDEX = re.compile(r"fanouts?\[(\d+)\]")


def _user_order_error(err: GraphferryError, num_layers: int) -> GraphferryError:
    """``err`` with the engine's hop numbers (from the seeds) turned into
    the user's (DGL's ``fanouts[i]`` is ``blocks[i]``, the seeds' last)."""

    def flip(match: re.Match) -> str:
        return f"fanouts[{num_layers - 1 - int(match.group(1))}]"

    message = _FANOUT_INDEX.sub(flip, err.message)
    if message == err.message:
        return err
    return error_for_status(err.code, message + " (DGL order: fanouts[i] samples blocks[i])")


def _check_loader_kwargs(kwargs: dict, use_uva: bool) -> Any:
    """Checks the DataLoader keywords graphferry does not use (the homogeneous
    and heterogeneous loaders alike) and returns ``generator`` (or None)."""
    refuse_workers(kwargs.pop("num_workers", 0))
    generator = kwargs.pop("generator", None)
    for name in kwargs:
        if name in _REFUSED:
            raise ValueError(
                f"graphferry.dgl.DataLoader does not take '{name}': it batches the seeds itself, "
                "as dgl.dataloading.DataLoader does"
            )
        if name not in _IGNORED:
            raise TypeError(f"graphferry.dgl.DataLoader got an unexpected keyword argument '{name}'")
    if use_uva:
        raise ValueError("use_uva=True is not supported: this version of graphferry is CPU-only")
    return generator


class DataLoader(EngineLoader):
    r"""DGL-style mini-batch loader backed by the graphferry engine.

    Yields ``(input_nodes, output_nodes, blocks)`` like
    ``dgl.dataloading.DataLoader`` with a ``NeighborSampler``: ``blocks`` are
    real DGL blocks (``blocks[0]`` the outermost layer) in the graph's
    idtype; ``prefetch_node_feats`` arrive on ``blocks[0].srcdata`` and
    ``prefetch_labels`` on ``blocks[-1].dstdata``, gathered by the engine,
    and, as with DGL, every block also carries all of the graph's node and
    edge data, attached lazily. Each :func:`iter` is a new, independent
    epoch (two iterators of one loader run two epochs, as DGL's do),
    shuffled from ``seed`` and the epoch number.

    Node data replaced after the loader was made (``g.ndata["feat"] = h``)
    is served from the new tensor: each epoch hands the replaced tensors to
    the engine, and a batch whose tensor changed since serves it through
    DGL's lazy columns.

    Args:
        graph (dgl.DGLGraph or graphferry.Graph): the graph; a DGLGraph is
            converted once (its topology and node data) and cached.
        indices (Tensor): ids of the seed nodes.
        graph_sampler: a ``dgl.dataloading.NeighborSampler`` (its
            ``fanouts``, ``replace``, ``prob`` (or ``mask``), and prefetch
            lists are read), a ``dgl.dataloading.LaborSampler`` (LABOR-0:
            its ``fanouts``, ``layer_dependency`` and prefetch lists; ``prob``,
            ``importance_sampling`` other than 0 and ``batch_dependency``
            other than 1 raise ``NotImplementedError``) or a
            :class:`graphferry.dgl.NeighborSampler`.
            With ``prob`` the weights come from ``graph.edata[prob]`` (a
            ``graphferry.Graph`` must already have them).
        device (str or torch.device, optional): where outputs are moved.
            (default: :obj:`None`, the graph's device: the CPU)
        use_ddp (bool): split the seeds across the ``torch.distributed``
            ranks as DGL does, the same number of batches on each.
            (default: :obj:`False`)
        ddp_seed (int): with ``use_ddp``, the seed of shuffling and sampling
            when ``seed`` is not given (the same on every rank).
            (default: :obj:`0`)
        comm (graphferry.distributed.Communicator, optional): sample
            across the ranks with the collective sampling primitive instead
            of splitting the seeds: ``graph`` must be a ``graphferry.Graph``
            opened with ``num_patches=comm.size``, and each rank gets every
            ``comm.size``-th batch of the single-process epoch, padded (see
            :mod:`graphferry.distributed`). Iterate one epoch at a time, to
            its end, on every rank. (default: :obj:`None`)
        batch_size (int): seeds per batch. (default: :obj:`1`)
        drop_last (bool): drop the last, smaller batch. (default: :obj:`False`)
        shuffle (bool): reshuffle the seeds every epoch. (default: :obj:`False`)
        use_prefetch_thread, use_alternate_streams, pin_prefetcher, gpu_cache:
            DGL's prefetcher settings; accepted and ignored (the engine
            gathers on its own threads).
        use_uva (bool): unsupported in this CPU-only version; must be False.
            (default: :obj:`False`)
        seed (int, optional): seed of shuffling and sampling.
            (default: :obj:`None`, drawn from torch's generator, or from
            ``generator`` when given)
        queue_capacity (int): batches buffered per pipeline stage.
            (default: :obj:`2`)
        num_threads (int): the engine's sampling threads; ``<= 0`` uses every
            core. (default: :obj:`0`)
        **kwargs: torch ``DataLoader`` arguments, as DGL passes them on:
            ``num_workers`` must be 0 (graphferry samples on its own
            threads); ``generator`` seeds the shuffles when ``seed`` is not
            given; ``persistent_workers``, ``prefetch_factor``, ``timeout``,
            ``worker_init_fn``, ``multiprocessing_context``, ``pin_memory``
            and ``pin_memory_device`` only tune torch's workers and are
            ignored; ``sampler``, ``batch_sampler`` and ``collate_fn`` are
            refused (as DGL's loader does its own batching).
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
        self._loaders = []
        generator = _check_loader_kwargs(kwargs, use_uva)
        self.graph = graph
        self.indices = indices
        self.graph_sampler = graph_sampler
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.use_ddp = bool(use_ddp)
        self.ddp_seed = ddp_seed
        self.device = torch.device("cpu" if device is None else device)
        settings = _sampler_settings(graph_sampler)
        check_homogeneous_settings(settings)
        self.settings = settings
        self._dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else None
        self._idtype = self._dgl_graph.idtype if self._dgl_graph is not None else torch.int64
        engine_graph = as_graph(graph, settings.prob)
        seeds = indices if isinstance(indices, torch.Tensor) else torch.as_tensor(indices)
        if seeds.dtype == torch.int32:
            seeds = seeds.to(torch.int64)  # the engine takes int64 ids; outputs are in the graph's idtype
        if self.use_ddp and comm is None:
            seeds = _ddp_seeds(seeds, drop_last)
        if seed is None:
            if self.use_ddp or comm is not None:
                seed = ddp_seed
            elif generator is not None:
                seed = int(torch.randint(0, 2**63 - 1, (), generator=generator))
        wanted = list(dict.fromkeys(settings.prefetch_node_feats + settings.prefetch_labels))
        if settings.prefetch_edge_feats:
            # Edge data reaches the blocks through DGL's frames, attached
            # lazily like DGL's own: only a DGLGraph has them.
            if self._dgl_graph is None:
                raise ValueError(
                    "prefetch_edge_feats needs the dgl.DGLGraph (a graphferry.Graph holds no edge data); "
                    f"got prefetch_edge_feats={settings.prefetch_edge_feats}"
                )
            missing = [n for n in settings.prefetch_edge_feats if n not in self._dgl_graph.edata]
            if missing:
                raise InvalidArgumentError(
                    GF_EINVAL,
                    f"the DGLGraph has no edata field {missing} to prefetch (it has {sorted(self._dgl_graph.edata)})",
                )
        if self._dgl_graph is not None:
            missing = [n for n in wanted if n not in self._dgl_graph.ndata]
            if missing:
                raise InvalidArgumentError(
                    GF_EINVAL,
                    f"the DGLGraph has no ndata field {missing} to prefetch (it has {sorted(self._dgl_graph.ndata)})",
                )
            _sync_node_data(engine_graph, self._dgl_graph, wanted)
        # Node data the engine cannot gather (a dtype it does not carry, or
        # not in the graph yet) is served by DGL's lazy columns instead.
        held = set(engine_graph.node_data_names())
        self._lazy_names = [n for n in wanted if n not in held and self._dgl_graph is not None]
        if self._lazy_names:
            warnings.warn(
                f"graphferry cannot gather node data {self._lazy_names} on its threads (a dtype the engine "
                "does not carry); the blocks serve it through DGL's lazy columns",
                stacklevel=2,
            )
        options = SampleOptions(
            list(reversed(settings.fanouts)),  # the engine counts hops from the seeds
            replace=settings.replace,
            frontier="all",
            scheme=settings.scheme,
            biased=settings.prob is not None,
            layer_without_replacement=settings.layer_without_replacement,
            layer_dependency=settings.layer_dependency,
            exclude_edges=settings.exclude_edges,
            seed=random_seed() if seed is None else seed,
            num_threads=num_threads,
        )
        try:
            self._open_engine(
                engine_graph,
                seeds,
                options,
                batch_size=batch_size,
                shuffle=shuffle,
                drop_last=drop_last,
                queue_capacity=queue_capacity,
                feature_names=[n for n in settings.prefetch_node_feats if n not in self._lazy_names],
                label_names=[n for n in settings.prefetch_labels if n not in self._lazy_names],
                comm=comm,
            )
        except GraphferryError as err:
            raise _user_order_error(err, len(settings.fanouts)) from None

    def _before_epoch(self) -> None:
        if self._dgl_graph is not None:
            _sync_node_data(
                self._graph,
                self._dgl_graph,
                list(self._loader_args["feature_names"]) + list(self._loader_args["label_names"]),
            )

    def _convert(self, sub: SampledSubgraph) -> tuple:
        g = self._dgl_graph
        if g is not None:
            # Tensors replaced since the engine got them: leave them to the
            # lazy columns, which read g's current data.
            sources = self._graph._dgl_sources
            for data in (sub.node_data, sub.labels):
                for name in list(data):
                    value = g.ndata[name] if name in g.ndata else None
                    if value is None or sources.get(name) != _cache.tensor_signature(value):
                        del data[name]
        blocks = to_blocks(sub, g, idtype=self._idtype)
        input_nodes = blocks[0].srcdata[dgl.NID]
        output_nodes = blocks[-1].dstdata[dgl.NID]
        if self.device.type != "cpu":
            blocks = [b.to(self.device) for b in blocks]
            input_nodes = input_nodes.to(self.device)
            output_nodes = output_nodes.to(self.device)
        return input_nodes, output_nodes, blocks


# Edge-level loading (link prediction): DataLoader given an edge prediction sampler becomes an EdgeDataLoader.
from .dgl_hetero import HeteroDataLoader, check_homogeneous_settings, is_hetero_input  # noqa: E402
from .dgl_link import EdgeDataLoader, EdgePredictionSampler, as_edge_prediction_sampler, dispatching_new  # noqa: E402


def _dispatching_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """``DataLoader.__new__``: a heterograph (or dict seeds) makes a
    :class:`~graphferry.dgl_hetero.HeteroDataLoader`; an edge prediction
    sampler an :class:`EdgeDataLoader`."""
    edge_loader = dispatching_new(cls, *args, **kwargs)
    if edge_loader is not None:
        return edge_loader
    graph = args[0] if args else kwargs.get("graph")
    indices = args[1] if len(args) > 1 else kwargs.get("indices")
    if is_hetero_input(graph, indices):
        return HeteroDataLoader(*args, **kwargs)
    return object.__new__(cls)


DataLoader.__new__ = _dispatching_new  # type: ignore[method-assign]
__all__ += ["HeteroDataLoader"]
__all__ += ["as_edge_prediction_sampler", "EdgePredictionSampler", "EdgeDataLoader"]

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

DGL's ``NeighborSampler(prob="w")`` (or ``mask="m"``) samples in proportion
to ``g.edata["w"]`` (0/1 for a mask): the weights are set on the converted
graph and the engine samples biased, never taking an edge of weight 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dgl
import torch

from . import _cache
from ._resource import Closeable, MappedIterator
from .graph import Graph
from .sampling import Loader, SampledSubgraph, _fanout_array, _names, _scheme, random_seed, refuse_workers
from .sampling import random_walk as _random_walk

__all__ = ["NeighborSampler", "DataLoader", "to_blocks", "random_walk"]


class NeighborSampler:
    r"""Neighbour sampling settings with the meaning of DGL's
    ``dgl.dataloading.NeighborSampler``: ``fanouts[i]`` is the fan-out of
    ``blocks[i]``, so the LAST entry applies to the seeds (DGL order);
    ``-1`` takes all neighbours.

    Args:
        fanouts (list of int): fan-out per layer, outermost first (with
            ``scheme="layer"``: the sampling budget of each whole layer).
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
            ``blocks[0].srcdata``. (default: :obj:`None`)
        prefetch_labels (list of str, optional): node data put on
            ``blocks[-1].dstdata``. (default: :obj:`None`)
        scheme (str): ``"node"`` (node-wise, DGL's) or ``"layer"``
            (layer-wise, see :func:`graphferry.sample_neighbors`).
            (default: :obj:`"node"`)
        layer_without_replacement (bool): with ``scheme="layer"``, draw
            distinct nodes per layer. (default: :obj:`False`)

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
        scheme: str = "node",
        layer_without_replacement: bool = False,
    ):
        _fanout_array(fanouts)  # Python types only; the engine checks values
        if prob is not None and mask is not None:
            raise ValueError(
                f"'prob' and 'mask' are mutually exclusive (got prob={prob!r}, mask={mask!r}); "
                "multiply the probability by the mask instead"
            )
        weights = prob if prob is not None else mask
        if weights is not None and not isinstance(weights, str):
            raise TypeError(f"'prob' and 'mask' must name an edata field (got '{type(weights).__name__}')")
        _scheme(scheme)
        self.fanouts = list(fanouts)
        self.replace = bool(replace)
        self.prob = weights  # as DGL: prob or mask
        self.exclude_edges = exclude_edges
        self.prefetch_node_feats = _names(prefetch_node_feats, "prefetch_node_feats")
        self.prefetch_labels = _names(prefetch_labels, "prefetch_labels")
        self.scheme = scheme
        self.layer_without_replacement = bool(layer_without_replacement)

    def __repr__(self) -> str:
        return (
            f"NeighborSampler(fanouts={self.fanouts}, replace={self.replace}, prob={self.prob!r}, "
            f"scheme={self.scheme!r}, prefetch_node_feats={self.prefetch_node_feats}, "
            f"prefetch_labels={self.prefetch_labels})"
        )


def _sampler_settings(sampler: Any) -> NeighborSampler:
    if isinstance(sampler, NeighborSampler):
        return sampler
    if isinstance(sampler, dgl.dataloading.NeighborSampler):
        if getattr(sampler, "edge_dir", "in") != "in":
            raise ValueError(f"graphferry samples in-neighbours only (got edge_dir='{sampler.edge_dir}')")
        prob = getattr(sampler, "prob", None)  # DGL stores `prob or mask` here
        if prob is not None and not isinstance(prob, str):
            raise TypeError(
                "graphferry reads edge weights from an edata field: 'prob'/'mask' must be its "
                f"name (got '{type(prob).__name__}')"
            )
        if getattr(sampler, "prefetch_edge_feats", None):
            raise ValueError(
                f"graphferry does not gather edge features (got prefetch_edge_feats={sampler.prefetch_edge_feats})"
            )
        if any(isinstance(f, dict) for f in sampler.fanouts):
            raise TypeError("graphferry supports homogeneous graphs only (got per-edge-type fan-outs)")
        return NeighborSampler(
            list(sampler.fanouts),
            replace=bool(sampler.replace),
            prob=prob,
            prefetch_node_feats=list(sampler.prefetch_node_feats or []),
            prefetch_labels=list(sampler.prefetch_labels or []),
        )
    raise TypeError(
        "expected a 'dgl.dataloading.NeighborSampler' or 'graphferry.dgl.NeighborSampler' "
        f"(got '{type(sampler).__name__}')"
    )


def _dgl_signature(g: Any, prob: str | None = None) -> Any:
    return (
        g.num_nodes(),
        g.num_edges(),
        tuple(
            (name, _cache.tensor_signature(value))
            for name, value in sorted(g.ndata.items())
            if isinstance(value, torch.Tensor)
        ),
        None if prob is None else (prob, _cache.tensor_signature(g.edata[prob])),
    )


def as_graph(graph: Any, prob: str | None = None) -> Graph:
    """``graph`` if it is a :class:`graphferry.Graph`, else the (cached)
    conversion of a ``dgl.DGLGraph``, with the edge weights of
    ``graph.edata[prob]`` when ``prob`` is given."""
    if isinstance(graph, Graph):
        return graph
    if isinstance(graph, dgl.DGLGraph):
        if prob is not None and prob not in graph.edata:
            raise KeyError(f"'prob': the DGLGraph has no edata field '{prob}' (it has {sorted(graph.edata.keys())})")
        return _cache.cached_graph(graph, _dgl_signature(graph, prob), lambda: Graph.from_dgl(graph, edge_weights=prob))
    raise TypeError(f"expected a 'dgl.DGLGraph' or 'graphferry.Graph' (got '{type(graph).__name__}')")


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
    if prob is not None and prob not in g.edata:
        raise KeyError(f"'prob': the DGLGraph has no edata field '{prob}' (it has {sorted(g.edata.keys())})")

    # graphferry walks along in-edges: walk the reversed graph, whose edge
    # ids are the same.
    def convert() -> Graph:
        src, dst = g.edges(order="eid")
        return Graph.from_coo(dst, src, num_nodes=g.num_nodes(), edge_weights=None if prob is None else g.edata[prob])

    reverse = _cache.cached_graph(g, _dgl_signature(g, prob), convert, kind="reverse")
    traces, eids = _random_walk(
        reverse,
        nodes,
        length,
        restart_prob=restart_prob,
        biased=prob is not None,
        seed=random_seed() if seed is None else seed,
    )
    types = torch.zeros(traces.shape[1], dtype=torch.int64)
    return (traces, eids, types) if return_eids else (traces, types)


# An empty edge-id array tells DGL that block edge i is CSC position i,
# which is what our indices are; it saves an arange per block.
_NO_EIDS = torch.empty(0, dtype=torch.int64)
_block_parts: tuple | None = None


def _csc_block(indptr: torch.Tensor, indices: torch.Tensor, num_src: int, num_dst: int):
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
        return dgl.create_block(("csc", (indptr, indices, _NO_EIDS)), num_src_nodes=num_src, num_dst_nodes=num_dst)
    hgi, block_cls, toindex, meta = _block_parts
    unit = hgi.create_unitgraph_from_csr(2, num_src, num_dst, indptr, indices, _NO_EIDS, ["coo", "csr", "csc"], True)
    index = hgi.create_heterograph_from_relations(meta, [unit], toindex([num_src, num_dst], "int64"))
    return block_cls(index, (["_N"], ["_N"]), ["_E"])


def to_blocks(sub: SampledSubgraph) -> list:
    r"""DGL blocks of a ``frontier="all"`` sample, outermost first:
    ``blocks[i]`` is hop ``L - 1 - i`` (DGL's ``blocks[0]`` is the layer
    farthest from the seeds). Block node ids are in ``srcdata[dgl.NID]`` /
    ``dstdata[dgl.NID]``, edge ids in ``edata[dgl.EID]``; ``sub.node_data``
    goes on ``blocks[0].srcdata`` and ``sub.labels`` on ``blocks[-1].dstdata``.
    """
    nodes = sub.nodes
    blocks = []
    for hop in reversed(sub.blocks):
        block = _csc_block(hop.indptr, hop.indices, hop.num_src, hop.num_dst)
        block.srcdata[dgl.NID] = nodes[: hop.num_src]
        block.dstdata[dgl.NID] = nodes[: hop.num_dst]
        block.edata[dgl.EID] = hop.edge_ids
        blocks.append(block)
    if blocks:
        num_src = blocks[0].num_src_nodes()
        for name, value in sub.node_data.items():
            blocks[0].srcdata[name] = value[:num_src]
        for name, value in sub.labels.items():
            blocks[-1].dstdata[name] = value
    return blocks


class DataLoader(Closeable):
    r"""DGL-style mini-batch loader backed by the graphferry engine.

    Yields ``(input_nodes, output_nodes, blocks)`` like
    ``dgl.dataloading.DataLoader`` with a ``NeighborSampler``: ``blocks`` are
    real ``dgl.create_block`` blocks (``blocks[0]`` the outermost layer),
    ``prefetch_node_feats`` arrive on ``blocks[0].srcdata`` and
    ``prefetch_labels`` on ``blocks[-1].dstdata``. Each :func:`iter` is a new
    epoch, shuffled from ``seed`` and the epoch number; breaking out of an
    epoch and iterating again is fine.

    Args:
        graph (dgl.DGLGraph or graphferry.Graph): the graph; a DGLGraph is
            converted once (with all of its ``ndata``) and cached.
        indices (Tensor): int64 ids of the seed nodes.
        graph_sampler: a ``dgl.dataloading.NeighborSampler`` (its
            ``fanouts``, ``replace``, ``prob`` (or ``mask``: DGL keeps
            either in ``prob``), ``prefetch_node_feats`` and
            ``prefetch_labels`` are read) or a
            :class:`graphferry.dgl.NeighborSampler`. With ``prob`` the
            weights come from ``graph.edata[prob]`` (a ``graphferry.Graph``
            must already have them) and sampling is biased.
        batch_size (int): seeds per batch. (default: :obj:`1`)
        shuffle (bool): reshuffle the seeds every epoch. (default: :obj:`False`)
        drop_last (bool): drop the last, smaller batch. (default: :obj:`False`)
        seed (int, optional): seed of shuffling and sampling.
            (default: :obj:`None`, drawn from torch's generator)
        num_workers (int): must be 0: graphferry samples on its own threads.
            (default: :obj:`0`)
        queue_capacity (int): batches buffered per pipeline stage.
            (default: :obj:`2`)
        num_threads (int): the engine's sampling threads; ``<= 0`` uses every
            core. (default: :obj:`0`)
        device (str or torch.device): where outputs are moved.
            (default: :obj:`"cpu"`)
        use_uva (bool): unsupported in this CPU-only version; must be False.
            (default: :obj:`False`)
    """

    def __init__(
        self,
        graph: Any,
        indices: Any,
        graph_sampler: Any,
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        seed: int | None = None,
        num_workers: int = 0,
        queue_capacity: int = 2,
        num_threads: int = 0,
        device: str | torch.device = "cpu",
        use_uva: bool = False,
    ):
        self._loader: Loader | None = None
        refuse_workers(num_workers)
        if use_uva:
            raise ValueError("use_uva=True is not supported: this version of graphferry is CPU-only")
        self.graph = graph
        self.indices = indices
        self.graph_sampler = graph_sampler
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.device = torch.device(device)
        settings = _sampler_settings(graph_sampler)
        self._graph = as_graph(graph, settings.prob)
        self._loader = Loader(
            self._graph,
            indices,
            list(reversed(settings.fanouts)),  # the engine counts hops from the seeds
            batch_size=batch_size,
            shuffle=shuffle,
            drop_last=drop_last,
            replace=settings.replace,
            frontier="all",
            seed=seed,
            queue_capacity=queue_capacity,
            num_threads=num_threads,
            feature_names=settings.prefetch_node_feats,
            label_names=settings.prefetch_labels,
            scheme=settings.scheme,
            biased=settings.prob is not None,
            layer_without_replacement=settings.layer_without_replacement,
            exclude_edges=settings.exclude_edges,
        )

    def __len__(self) -> int:
        return len(self._loader)

    def __iter__(self) -> MappedIterator:
        return MappedIterator(self._convert, iter(self._loader))

    def _convert(self, sub: SampledSubgraph) -> tuple:
        blocks = to_blocks(sub)
        input_nodes = blocks[0].srcdata[dgl.NID]
        output_nodes = blocks[-1].dstdata[dgl.NID]
        if self.device.type != "cpu":
            blocks = [b.to(self.device) for b in blocks]
            input_nodes = input_nodes.to(self.device)
            output_nodes = output_nodes.to(self.device)
        return input_nodes, output_nodes, blocks

    def close(self) -> None:
        """Stops the engine's threads for this loader. Idempotent."""
        if self._loader is not None:
            self._loader.close()

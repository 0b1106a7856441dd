"""DGL's node samplers read as graphferry's settings: :class:`NeighborSampler`
(DGL's ``NeighborSampler`` arguments and graphferry's own schemes), and the
reading of DGL's ``NeighborSampler`` and ``LaborSampler`` objects
(:func:`sampler_settings`). Nothing here needs a graph: the loaders check the
settings against theirs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dgl

from .._options import check_scheme, fanout_values
from ..sampling import _names

__all__ = ["NeighborSampler", "sampler_settings"]


class NeighborSampler:
    r"""Neighbour sampling settings with the meaning of DGL's
    ``dgl.dataloading.NeighborSampler``: ``fanouts[i]`` is the fan-out of
    ``blocks[i]``, so the LAST entry applies to the seeds (DGL order);
    ``-1`` takes all neighbours.

    Args:
        fanouts (list of int): fan-out per layer, outermost first (with
            ``scheme="layer"``: the sampling budget of each whole layer). On
            a heterogeneous graph an entry may be a dict ``{etype: k}`` with
            every edge type, as DGL's (see :mod:`graphferry.dgl.hetero`).
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


def sampler_settings(sampler: Any) -> NeighborSampler:
    """``sampler`` (ours, or DGL's ``NeighborSampler`` or ``LaborSampler``)
    as our :class:`NeighborSampler`."""
    if isinstance(sampler, NeighborSampler):
        return sampler
    labor = getattr(dgl.dataloading, "LaborSampler", None)
    if labor is not None and isinstance(sampler, labor):
        return _labor_settings(sampler)
    shadow = getattr(dgl.dataloading, "ShaDowKHopSampler", None)
    if shadow is not None and isinstance(sampler, shadow):
        return NeighborSampler(
            list(sampler.fanouts),
            replace=bool(sampler.replace),
            prob=_prob_name(sampler.prob),
            prefetch_node_feats=_dgl_names(sampler.prefetch_node_feats),
            prefetch_edge_feats=_flat_names(_dgl_names(sampler.prefetch_edge_feats)),
        )
    if isinstance(sampler, dgl.dataloading.NeighborSampler):
        if getattr(sampler, "edge_dir", "in") != "in":
            raise ValueError(f"graphferry samples in-neighbours only (got edge_dir='{sampler.edge_dir}')")
        return NeighborSampler(
            list(sampler.fanouts),
            replace=bool(sampler.replace),
            prob=_prob_name(getattr(sampler, "prob", None)),  # DGL stores `prob or mask` here
            prefetch_node_feats=_dgl_names(sampler.prefetch_node_feats),
            prefetch_labels=_dgl_names(sampler.prefetch_labels),
            prefetch_edge_feats=_flat_names(_dgl_names(sampler.prefetch_edge_feats)),
        )
    raise TypeError(
        "expected a 'dgl.dataloading.NeighborSampler' or 'graphferry.dgl.NeighborSampler' "
        f"(got '{type(sampler).__name__}')"
    )


def _prob_name(prob: Any) -> str | None:
    """DGL's ``prob`` (or ``mask``): the name of an edata field, or None."""
    if prob is not None and not isinstance(prob, str):
        raise TypeError(
            "graphferry reads edge weights from an edata field: 'prob'/'mask' must be its "
            f"name (got '{type(prob).__name__}')"
        )
    return prob


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

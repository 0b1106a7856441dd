"""What :mod:`graphferry.pyg`'s sampler and loaders share: PyG's sampling
arguments read once (``num_neighbors``, ``subgraph_type``, ``disjoint``,
``time_attr`` and the seeds' times, ``weight_attr``), the engine's options for
a homogeneous or a heterogeneous graph (:func:`sample_options`), and one
sampled batch in PyG's terms (:class:`Output`): its edges as PyG's COO
``edge_index``, made bidirectional or induced as ``subgraph_type`` asks, split
per type for a heterogeneous graph (:func:`split`).
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch_geometric.data import Data, HeteroData
from torch_geometric.sampler import HeteroSamplerOutput, SamplerOutput
from torch_geometric.sampler.utils import to_bidirectional

from .._device import ModeChoice, choose_mode
from .._native import lib as _lib
from .._native.dlpack import as_cpu_tensor
from .._options import SampleOptions, fanout_values
from .._transfer import prefetch_transfer
from ..graph import Graph
from ..hetero import HeteroGraph
from ..sampling import SampledSubgraph, TypedView, induced_subgraph, sample_with_options
from .convert import store_times, time_level, time_tensor
from .hetero import hetero_fanouts, split_output, split_typed

SUBGRAPH_TYPES = ("directional", "bidirectional", "induced")

# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


def num_neighbors_list(num_neighbors: Any) -> list[int]:
    values = num_neighbors
    if not isinstance(values, dict):  # a dict's .values is a method
        values = getattr(num_neighbors, "values", num_neighbors)  # torch_geometric NumNeighbors
    if isinstance(values, dict):
        raise TypeError(
            "per-edge-type num_neighbors need a heterogeneous graph (a HeteroData or graphferry.HeteroGraph); "
            "this graph is homogeneous: give a list of ints"
        )
    return list(fanout_values(values, "num_neighbors"))


def check_weight_attr(weight_attr: Any) -> str | None:
    if weight_attr is not None and not isinstance(weight_attr, str):
        raise TypeError(f"'weight_attr' must name an edge attribute (got '{type(weight_attr).__name__}')")
    return weight_attr


def subgraph_type_of(subgraph_type: Any, directed: bool = True) -> str:
    value = getattr(subgraph_type, "value", subgraph_type)  # torch_geometric.sampler.SubgraphType
    if not isinstance(value, str) or value not in SUBGRAPH_TYPES:
        raise ValueError(f"'subgraph_type' must be one of {', '.join(SUBGRAPH_TYPES)} (got {subgraph_type!r})")
    if not directed:
        # As PyG: directed=False is the deprecated spelling of "induced".
        warnings.warn(
            "The usage of the 'directed' argument is deprecated. Use `subgraph_type='induced'` instead.",
            stacklevel=3,
        )
        value = "induced"
    return value


def _temporal_strategy(strategy: Any) -> str:
    if strategy not in ("uniform", "last"):
        raise ValueError(f"'temporal_strategy' must be 'uniform' or 'last' (got {strategy!r})")
    return strategy


def _disjoint_flag(disjoint: Any, subgraph_type: str) -> bool:
    disjoint = bool(disjoint)
    if disjoint and subgraph_type == "induced":
        # PyG refuses the combination too.
        raise ValueError("'disjoint' sampling is not supported together with subgraph_type='induced'")
    return disjoint


def sampling_settings(
    data: Any, subgraph_type: Any, directed: bool, disjoint: Any, time_attr: Any, temporal_strategy: Any
) -> tuple[str, str | None, str, bool]:
    """PyG's ``subgraph_type`` (and its deprecated ``directed``),
    ``time_attr``, ``temporal_strategy`` and ``disjoint``, checked, as
    ``(subgraph type, where the times live or None, temporal strategy,
    disjoint)``. Temporal sampling is disjoint, as PyG's ``NeighborSampler``
    makes it."""
    kind = subgraph_type_of(subgraph_type, directed)
    temporal = time_level(data, time_attr)
    strategy = _temporal_strategy(temporal_strategy)
    return kind, temporal, strategy, _disjoint_flag(bool(disjoint) or temporal is not None, kind)


def seed_times(
    data: Any, level: str | None, time_attr: str | None, input_time: Any, nodes: torch.Tensor, input_type: Any = None
) -> torch.Tensor | None:
    """The time of every seed of ``nodes`` for temporal sampling (None
    without): ``input_time`` when given, else the seeds' own node times, as
    PyG takes them. ``nodes`` are the seeds' ids in ``data`` (type-local,
    of ``input_type``, for a ``HeteroData``)."""
    if level is None:
        if input_time is not None:
            raise ValueError(
                "seed times ('input_time') were given but the sampling is not temporal: give 'time_attr' too"
            )
        return None
    if input_time is not None:
        times = time_tensor(as_cpu_tensor(input_time, "input_time"), "'input_time'")
        if times.numel() != nodes.numel():
            raise ValueError(f"'input_time' has {times.numel()} times for {nodes.numel()} seeds (want one per seed)")
        return times
    if level == "edge":
        raise ValueError(
            f"temporal sampling by edge time ('{time_attr}' is an edge attribute) needs the seeds' times: "
            "give 'input_time'"
        )
    if isinstance(data, Data):
        return time_tensor(data[time_attr], f"data.{time_attr}")[nodes]
    if isinstance(data, (HeteroData, tuple)):
        if isinstance(data, tuple):  # PyG's (FeatureStore, GraphStore): the FeatureStore's times
            times = store_times(data, time_attr).get(input_type)
        else:
            store = data[input_type]
            times = time_tensor(store[time_attr], f"data['{input_type}'].{time_attr}") if time_attr in store else None
        if times is None:
            raise ValueError(
                f"input node type '{input_type}' has no node time '{time_attr}': give 'input_time' for its seeds"
            )
        return times[nodes]
    raise ValueError(
        f"temporal sampling on a graphferry.{type(data).__name__} needs the seeds' times: give 'input_time'"
    )


def link_negatives(neg_sampling: Any) -> tuple[str | None, float, torch.Tensor | None]:
    """(mode, amount, node weights or None) of PyG's ``NegativeSampling``
    (None: no negatives), as the engine's edge sampler takes them. PyG's
    ``weight`` (``src_weight``/``dst_weight`` in newer PyG) draws negatives
    in proportion to it; the engine draws both ends by one weight vector, so
    binary negatives with different source and destination weights are
    refused."""
    if neg_sampling is None:
        return None, 0.0, None
    mode = neg_sampling.mode.value
    weights = getattr(neg_sampling, "weight", None)
    if weights is None and (hasattr(neg_sampling, "src_weight") or hasattr(neg_sampling, "dst_weight")):
        src, dst = getattr(neg_sampling, "src_weight", None), getattr(neg_sampling, "dst_weight", None)
        if mode == "triplet":  # only destinations are drawn
            weights = dst
        elif src is not None or dst is not None:
            if src is None or dst is None or not (src is dst or torch.equal(src, dst)):
                raise NotImplementedError(
                    "binary negatives with different src_weight and dst_weight: graphferry draws both ends "
                    "with one weight vector (give the same tensor to both)"
                )
            weights = dst
    if weights is not None:
        weights = as_cpu_tensor(weights, "NegativeSampling weight")
    return mode, float(neg_sampling.amount), weights


def check_transforms(transform: Any, transform_sampler_output: Any) -> tuple[Any, Any]:
    """PyG's ``transform`` (applied to each batch) and
    ``transform_sampler_output`` (applied to each sampler output before the
    batch is made of it), each None or a callable."""
    for name, value in (("transform", transform), ("transform_sampler_output", transform_sampler_output)):
        if value is not None and not callable(value):
            raise TypeError(f"'{name}' must be callable (got '{type(value).__name__}')")
    return transform, transform_sampler_output


def check_flags(is_sorted: Any, filter_per_worker: Any) -> tuple[bool, bool | None]:
    """PyG's ``is_sorted`` (a hint that ``edge_index`` is sorted by column:
    the engine converts the graph once either way, so it changes nothing) and
    ``filter_per_worker`` (where PyG joins the features, in its worker
    processes or the main one: graphferry has no workers, the engine joins
    them on its threads), checked and kept."""
    if not isinstance(is_sorted, bool):
        raise TypeError(f"'is_sorted' must be a bool (got '{type(is_sorted).__name__}')")
    if filter_per_worker is not None and not isinstance(filter_per_worker, bool):
        raise TypeError(f"'filter_per_worker' must be a bool or None (got '{type(filter_per_worker).__name__}')")
    return is_sorted, filter_per_worker


def given_input_id(input_id: Any, num_seeds: int) -> torch.Tensor:
    """PyG's ``input_id`` (the seeds' own ids, one per seed in their order)."""
    ids = as_cpu_tensor(input_id, "input_id").to(torch.int64).view(-1)
    if ids.numel() != num_seeds:
        raise ValueError(f"'input_id' has {ids.numel()} ids for {num_seeds} seeds (want one per seed)")
    return ids


# ---------------------------------------------------------------------------
# The engine's options
# ---------------------------------------------------------------------------


def sample_options(
    hetero: HeteroGraph | None,
    num_neighbors: Any,
    *,
    replace: bool,
    biased: bool,
    scheme: str,
    layer_without_replacement: bool,
    exclude_edges: Any,
    disjoint: bool,
    temporal: str | None,
    temporal_strategy: str,
    seed: int,
    num_threads: int = 0,
) -> SampleOptions:
    """PyG's sampling as the engine's options, PyG's frontier (each hop
    expands the nodes first reached in the hop before): for a homogeneous
    graph (``hetero`` None) ``num_neighbors`` is a list per hop; for
    ``hetero``, PyG's ``num_neighbors`` per relation (:func:`hetero_fanouts`)
    and ``exclude_edges`` may be a dict of edge type -> relation-local ids."""
    if hetero is None:
        fanouts, relation_fanouts = num_neighbors, None
        timing = _disjoint_options(disjoint, temporal, temporal_strategy)
    elif hetero.num_relations == 0:
        # No edge types: the engine graph is untyped and has no edges, so
        # every sample is its seeds (PyG's batches of the seeds alone); the
        # hops are those of num_neighbors.
        fanouts, relation_fanouts = (0,) * len(hetero_fanouts(hetero, num_neighbors)), None
        exclude_edges = None
        timing = _disjoint_options(disjoint, temporal, temporal_strategy)
    else:
        # (None for zero hops: the seeds alone)
        relation_fanouts = hetero_fanouts(hetero, num_neighbors) or None
        # Ignored by the engine with relation_fanouts; kept as the per-hop
        # maximum for whoever reads the options.
        fanouts = tuple(-1 if -1 in hop else max(hop, default=0) for hop in relation_fanouts or ())
        if isinstance(exclude_edges, dict):  # {edge type: relation-local edge ids}
            parts = [hetero.edge_to_global(et, ids) for et, ids in exclude_edges.items()]
            exclude_edges = torch.cat(parts) if parts else None
        timing = dict(disjoint=disjoint, temporal=temporal, temporal_strategy=temporal_strategy)
    return SampleOptions(
        fanouts,
        relation_fanouts=relation_fanouts,
        replace=replace,
        frontier="new",
        scheme=scheme,
        biased=biased,
        layer_without_replacement=layer_without_replacement,
        exclude_edges=exclude_edges,
        seed=seed,
        num_threads=num_threads,
        **timing,
    )


def _disjoint_options(disjoint: bool, temporal: str | None, temporal_strategy: str) -> dict[str, Any]:
    """The disjoint and temporal fields of :class:`SampleOptions` (left out
    when neither is asked for)."""
    if not disjoint:
        return {}
    fields: dict[str, Any] = {"disjoint": True}
    if temporal is not None:
        fields.update(temporal=temporal, temporal_strategy=temporal_strategy)
    return fields


# ---------------------------------------------------------------------------
# One sampled batch in PyG's terms
# ---------------------------------------------------------------------------


@dataclass
class Output:
    """One sampled batch in PyG's terms (the fields of ``SamplerOutput``).
    ``row``, ``col`` and ``edge`` are None for a sample whose split by type
    the engine made (``typed``) when the caller only splits it
    (:func:`directional` with ``per_type``)."""

    node: torch.Tensor
    row: torch.Tensor | None
    col: torch.Tensor | None
    edge: torch.Tensor | None
    batch: torch.Tensor | None
    num_sampled_nodes: list[int] | None
    num_sampled_edges: list[int] | None
    # The engine's split by type and relation (samples of typed graphs).
    typed: TypedView | None = None
    # ``[row, col]`` as one [2, E] tensor when the engine made it (``row``
    # and ``col`` are its rows): PyG's ``edge_index`` without a copy.
    index: torch.Tensor | None = None

    def to_pyg(self, metadata: Any = None) -> SamplerOutput:
        """PyG's ``SamplerOutput`` of this (homogeneous) sample."""
        return SamplerOutput(
            node=self.node,
            row=self.row,
            col=self.col,
            edge=self.edge,
            batch=self.batch,
            num_sampled_nodes=self.num_sampled_nodes,
            num_sampled_edges=self.num_sampled_edges,
            metadata=metadata,
        )

    @classmethod
    def of_pyg(cls, out: SamplerOutput) -> Output:
        """A (homogeneous) sample of PyG's ``SamplerOutput``."""
        return cls(out.node, out.row, out.col, out.edge, out.batch, out.num_sampled_nodes, out.num_sampled_edges)


def edge_index(sub: SampledSubgraph) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(row, col, edge)``: the sampled edges hop after hop, their sources
    and targets as positions in ``sub.nodes`` (PyG's COO ``edge_index`` is
    ``[row, col]``), and their original edge ids. The targets of every hop
    are expanded from the blocks' CSC in one ``repeat_interleave`` (each
    hop's destinations are consecutive positions), on the training thread,
    unless the engine made them (``sub.coo``)."""
    if sub.coo is not None:
        index, edge = sub.coo
        return index[0], index[1], edge
    blocks = sub.blocks
    if not blocks:
        empty = torch.empty(0, dtype=torch.int64)
        return empty, empty, empty
    row = torch.cat([b.indices for b in blocks])
    targets = torch.cat([torch.arange(b.dst_offset, b.dst_offset + b.num_dst, dtype=torch.int64) for b in blocks])
    in_degrees = torch.cat([b.indptr[1:] - b.indptr[:-1] for b in blocks])
    col = targets.repeat_interleave(in_degrees, output_size=row.numel())
    return row, col, torch.cat([b.edge_ids for b in blocks])


# gf_loader_options.coo of each subgraph_type: the edge list the engine makes
# on its threads, ahead of the consumer.
COO = {"directional": _lib.GF_COO_SAMPLED, "bidirectional": _lib.GF_COO_BIDIRECTIONAL, "induced": _lib.GF_COO_INDUCED}


def directional(sub: SampledSubgraph, *, per_type: bool = False) -> Output:
    """``sub`` in PyG's terms; a disjoint sample (the engine's: nodes hop by
    hop and within a hop seed by seed) brings its ``batch``. With
    ``per_type`` (the caller splits the sample by type: :func:`split`) the
    COO edges are left out when the engine split the sample already: the
    split does not read them."""
    row = col = edge = None
    if not (per_type and sub.typed is not None):
        row, col, edge = edge_index(sub)
    return Output(
        sub.nodes,
        row,
        col,
        edge,
        getattr(sub, "batch", None),
        sub.hop_counts.tolist(),
        [b.num_edges for b in sub.blocks],
        sub.typed,
        sub.coo[0] if sub.coo is not None and row is not None else None,
    )


def made(sub: SampledSubgraph, out: Output, subgraph_type: str) -> tuple[Output, str]:
    """``(out, subgraph_type)`` of ``sub``'s sample: when the engine made its
    edge list as ``subgraph_type`` asks (``sub.coo``; a typed batch's induced
    edges are its typed view's), the counts per hop are dropped, as PyG's
    bidirectional and induced outputs have none, and nothing is left to
    apply (``"directional"``)."""
    if sub.coo is not None and subgraph_type != "directional":
        return dataclasses.replace(out, num_sampled_nodes=None, num_sampled_edges=None), "directional"
    return out, subgraph_type


def finish(out: Output, graph: Graph, subgraph_type: str) -> Output:
    """Applies ``subgraph_type`` to a directional sample, as PyG's
    ``NeighborSampler`` does: the counts per hop no longer apply to the
    other two kinds and become None."""
    if subgraph_type == "bidirectional":
        row, col, edge = to_bidirectional(
            row=out.row, col=out.col, rev_row=out.row, rev_col=out.col, edge_id=out.edge, rev_edge_id=out.edge
        )
        return Output(out.node, row, col, edge, out.batch, None, None)
    if subgraph_type == "induced":
        row, col, edge = induced_subgraph(graph, out.node)
        return Output(out.node, row, col, edge, out.batch, None, None)
    return out


def sample(
    graph: Graph,
    seeds: torch.Tensor,
    options: SampleOptions,
    key: int,
    subgraph_type: str,
    seed_times: torch.Tensor | None = None,
    *,
    per_type: bool = False,
) -> Output:
    """Samples around ``seeds`` in the caller's thread (disjoint and
    temporal as ``options`` say) with the random streams the engine derives
    from ``options.seed`` and the batch key ``key``; ``per_type`` as
    :func:`directional`."""
    changes: dict[str, Any] = {"batch_key": key}
    if seed_times is not None:
        changes["seed_times"] = seed_times
    out = directional(sample_with_options(graph, seeds, options.replace_fields(**changes)), per_type=per_type)
    return finish(out, graph, subgraph_type)


def split(hetero: HeteroGraph, out: Output, subgraph_type: str) -> HeteroSamplerOutput:
    """A directional sample over the global ids of ``hetero`` as PyG's
    per-type output, made bidirectional or induced as PyG's heterogeneous
    sampler does (``bidirectional`` pairs an edge type with its reverse type,
    PyG's ``HeteroSamplerOutput.to_bidirectional``)."""
    if subgraph_type == "induced":
        out = finish(out, hetero.graph, "induced")
    if out.typed is not None:  # split by the engine, in its threads
        split = split_typed(hetero, out.typed, batch=out.batch)
        if out.num_sampled_nodes is None:  # the engine's induced edges (made): no counts per hop
            split.num_sampled_nodes = split.num_sampled_edges = None
    else:  # induced edges: split here
        split = split_output(
            hetero,
            out.node,
            out.row,
            out.col,
            out.edge,
            batch=out.batch,
            hop_counts=out.num_sampled_nodes,
            edges_per_hop=out.num_sampled_edges,
        )
    return split.to_bidirectional() if subgraph_type == "bidirectional" else split


def device_choice(loader: Any, device: Any, sample_on: str | None, transfer: Any) -> dict[str, Any]:
    """The mode of a PyG loader with ``device`` (:func:`graphferry._device.choose_mode`),
    set as ``loader.mode``; returns the engine's ``transfer=`` and
    ``device=`` (mode 2) arguments. Mode 2 serves homogeneous ``Data``
    (engine-gathered attributes, no temporal or disjoint sampling)."""
    if device is None and sample_on is None:
        loader.mode = ModeChoice("cpu", "no device: batches on the CPU")
        return {"transfer": transfer}
    device = torch.device(device) if device is not None else None
    plain = loader._hetero is None and loader._stores is None and not loader._temporal and not loader.disjoint
    mode = loader.mode = choose_mode(device, sample_on=sample_on)
    if mode.device is None:
        if device is not None and device.type == "cuda":
            return {"transfer": prefetch_transfer(device)}  # mode 1
        return {"transfer": transfer}
    if not plain:
        raise NotImplementedError(
            "sampling on the GPU (mode 2) serves homogeneous Data without temporal or disjoint sampling"
        )
    return {"transfer": None, "device": mode.device}

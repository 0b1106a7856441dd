"""The heterogeneous side of PyG's output: a sample over the global ids of a
:class:`~graphferry.HeteroGraph` split into PyG's per-type output
(``HeteroSamplerOutput`` and the ``HeteroData`` batch PyG's
``NodeLoader.filter_fn`` makes of it), and the readers of the arguments that
only heterogeneous loaders take (``num_neighbors`` per edge type,
``input_nodes=(node type, ids)``). Splitting keeps the order of the nodes
within each type (the seeds first, then hop by hop, as PyG's heterogeneous
sampler orders them) and of the edges within each relation (``col`` sorted,
as PyG's ``EdgeIndex(sort_order="col")`` claims).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch_geometric.data import HeteroData
from torch_geometric.edge_index import EdgeIndex
from torch_geometric.loader.utils import filter_custom_hetero_store, filter_hetero_data
from torch_geometric.sampler import HeteroSamplerOutput

from .. import _loader
from .._native.dlpack import as_cpu_tensor
from ..hetero import HeteroGraph
from ..sampling import TypedView

__all__ = [
    "split_output",
    "split_typed",
    "hetero_fanouts",
    "input_nodes_of",
    "filter_batch",
    "build_batch",
]


def _etype_key(hg: HeteroGraph, key: Any) -> Any:
    """PyG also writes an edge type as ``"src__rel__dst"``."""
    if isinstance(key, str) and key.count("__") == 2:
        parts = tuple(key.split("__"))
        if parts in hg.edge_types:
            return parts
    return key


def hetero_fanouts(hg: HeteroGraph, num_neighbors: Any) -> tuple[tuple[int, ...], ...]:
    """PyG's ``num_neighbors`` (a list: every edge type; a dict of edge
    type -> list, every edge type given; or a ``NumNeighbors``, whose
    ``default`` fills the edge types left out) as per-hop, per-relation
    fan-outs."""
    default = None
    values = num_neighbors
    if not isinstance(values, (Mapping, list, tuple, torch.Tensor)) and hasattr(values, "values"):
        default = getattr(num_neighbors, "default", None)  # torch_geometric.sampler.NumNeighbors
        values = num_neighbors.values
    if isinstance(values, Mapping):
        given = {_etype_key(hg, k): v for k, v in values.items()}
        seen = {hg.etype_index(k) for k in given}  # ValueError for an unknown edge type
        missing = [et for r, et in enumerate(hg.edge_types) if r not in seen]
        if missing:
            if default is None:
                raise ValueError(
                    f"'num_neighbors': no number of neighbours for edge types {missing} "
                    "(give every edge type, or a list for all of them)"
                )
            given.update({et: list(default) for et in missing})
        if not given:
            if hg.num_relations == 0:
                return ()  # no edge type to give, as PyG takes it: no hop
            raise ValueError("'num_neighbors' is empty")
        return hg.relation_fanouts(given)
    if isinstance(values, torch.Tensor):
        values = values.tolist()
    if isinstance(values, (list, tuple)):
        if any(isinstance(v, Mapping) for v in values):
            raise TypeError("'num_neighbors' is a list of ints or a dict of edge type -> list of ints")
        return hg.relation_fanouts(list(values))
    raise TypeError(
        f"'num_neighbors' must be a list of ints or a dict of edge type -> list of ints "
        f"(got '{type(num_neighbors).__name__}')"
    )


def input_nodes_of(hg: HeteroGraph, input_nodes: Any) -> tuple[str, torch.Tensor, torch.Tensor | None]:
    """PyG's heterogeneous ``input_nodes`` (a node type, or ``(node type,
    ids or bool mask or None)``) as ``(input type, type-local seeds,
    input_id)``; ``input_id`` is the node ids for a mask and None otherwise
    (the positions), as PyG's ``get_input_nodes``."""
    if input_nodes is None:
        raise ValueError(
            "'input_nodes' is needed for a heterogeneous graph: a node type or (node type, ids or mask) "
            f"(node types: {hg.node_types})"
        )
    if isinstance(input_nodes, str):
        node_type, nodes = input_nodes, None
    elif isinstance(input_nodes, (list, tuple)) and len(input_nodes) == 2 and isinstance(input_nodes[0], str):
        node_type, nodes = input_nodes
    else:
        raise TypeError(
            "'input_nodes' of a heterogeneous graph must be a node type or a (node type, ids or mask) pair "
            f"(got '{type(input_nodes).__name__}')"
        )
    if node_type not in hg.node_types:
        raise ValueError(f"'input_nodes': unknown node type '{node_type}' (node types: {hg.node_types})")
    count = hg.num_nodes(node_type)
    if nodes is None:
        return node_type, torch.arange(count), None
    nodes = as_cpu_tensor(nodes, "input_nodes") if not isinstance(nodes, torch.Tensor) else nodes.cpu()
    if nodes.dtype == torch.bool:
        if nodes.numel() != count:
            raise ValueError(
                f"'input_nodes': the mask of node type '{node_type}' has {nodes.numel()} entries; "
                f"the type has {count} nodes"
            )
        ids = nodes.nonzero().view(-1)
        return node_type, ids, ids
    if nodes.is_floating_point() or nodes.is_complex():
        raise TypeError(f"'input_nodes' must hold integer ids or be a bool mask (got dtype {nodes.dtype})")
    ids = nodes.reshape(-1).to(torch.int64)
    hg.to_global(node_type, ids)  # ValueError naming an id out of range
    return node_type, ids, None


def _group(keys: torch.Tensor, num_keys: int) -> tuple[torch.Tensor, list[int], list[int]]:
    """The stable order that groups ``keys`` (ints in ``[0, num_keys)``),
    and each group's start and size in it."""
    counts = torch.bincount(keys, minlength=num_keys)
    order = torch.argsort(keys, stable=True)
    starts = (torch.cumsum(counts, 0) - counts).tolist()
    return order, starts, counts.tolist()


def split_output(
    hg: HeteroGraph,
    node: torch.Tensor,
    row: torch.Tensor,
    col: torch.Tensor,
    edge: torch.Tensor,
    *,
    batch: torch.Tensor | None = None,
    hop_counts: Sequence[int] | None = None,
    edges_per_hop: Sequence[int] | None = None,
) -> HeteroSamplerOutput:
    r"""Splits any sample over the global ids of ``hg`` into PyG's per-type
    ``HeteroSamplerOutput``, on the caller's thread. The engine's samples
    carry their split already (:func:`split_typed`, made in the engine's
    threads); this is for edges the engine did not sample
    (``subgraph_type="induced"``).

    Args:
        node: global node ids, each sampled node once (the seeds first).
        row, col: source and destination of each sampled edge, as positions
            in ``node``.
        edge: the global edge id of each sampled edge.
        batch: the seed position each node belongs to (disjoint samples).
        hop_counts: the number of nodes per level (seeds, then those first
            reached in each hop), or None (no per-hop counts, as after
            ``subgraph_type="induced"``).
        edges_per_hop: the number of edges per hop, or None.

    Returns:
        ``node``, ``batch`` and ``num_sampled_nodes`` per node type,
        ``row``/``col`` (type-local positions: source among the source
        type's nodes, destination among the destination type's),
        ``edge`` (relation-local edge ids) and ``num_sampled_edges`` per
        edge type; every type is present, empty when nothing was sampled.
    """
    num_types, num_rels = hg.num_node_types, hg.num_relations
    types, local = hg.split_nodes(node)
    order, starts, counts = _group(types, num_types)
    # Position of every node among the nodes of its type (order kept).
    pos = torch.empty_like(types)
    pos[order] = torch.arange(node.numel(), dtype=torch.int64) - torch.repeat_interleave(
        torch.tensor(starts, dtype=torch.int64), torch.tensor(counts, dtype=torch.int64), output_size=node.numel()
    )
    grouped = local[order]
    node_dict = {nt: grouped[starts[t] : starts[t] + counts[t]] for t, nt in enumerate(hg.node_types)}
    batch_dict = None
    if batch is not None:
        grouped_batch = batch[order]
        batch_dict = {nt: grouped_batch[starts[t] : starts[t] + counts[t]] for t, nt in enumerate(hg.node_types)}
    rel, local_edge = hg.to_local_edge(edge)
    e_order, e_starts, e_counts = _group(rel, num_rels)
    src_pos, dst_pos, grouped_edge = pos[row[e_order]], pos[col[e_order]], local_edge[e_order]
    row_dict, col_dict, edge_dict = {}, {}, {}
    for r, et in enumerate(hg.edge_types):
        lo, hi = e_starts[r], e_starts[r] + e_counts[r]
        row_dict[et], col_dict[et], edge_dict[et] = src_pos[lo:hi], dst_pos[lo:hi], grouped_edge[lo:hi]
    num_sampled_nodes = num_sampled_edges = None
    if hop_counts is not None:
        levels = len(hop_counts)
        level = torch.repeat_interleave(
            torch.arange(levels), torch.as_tensor(list(hop_counts), dtype=torch.int64), output_size=node.numel()
        )
        per = torch.bincount(types * levels + level, minlength=num_types * levels).view(num_types, levels)
        num_sampled_nodes = {nt: per[t].tolist() for t, nt in enumerate(hg.node_types)}
    if edges_per_hop is not None:
        hops = len(edges_per_hop)
        hop = torch.repeat_interleave(
            torch.arange(hops), torch.as_tensor(list(edges_per_hop), dtype=torch.int64), output_size=edge.numel()
        )
        per = torch.bincount(rel * hops + hop, minlength=num_rels * hops).view(num_rels, hops)
        num_sampled_edges = {et: per[r].tolist() for r, et in enumerate(hg.edge_types)}
    return HeteroSamplerOutput(
        node=node_dict,
        row=row_dict,
        col=col_dict,
        edge=edge_dict,
        batch=batch_dict,
        num_sampled_nodes=num_sampled_nodes,
        num_sampled_edges=num_sampled_edges,
    )


def split_typed(hg: HeteroGraph, typed: TypedView, *, batch: torch.Tensor | None = None) -> HeteroSamplerOutput:
    r"""PyG's per-type ``HeteroSamplerOutput`` of an engine sample of
    ``hg``'s graph, from its typed view (the split the engine made with the
    batch): every type's nodes in their sample order, every relation's edges
    hop by hop and within a hop destination by destination, ``row``/``col``
    as positions among the source/destination type's nodes, ``edge``
    relation-local, counts per hop; the same output as :func:`split_output`
    of the sample's edges.

    Args:
        typed: the sample's :attr:`SampledSubgraph.typed`.
        batch: the sample's ``batch`` (disjoint samples), or None.
    """
    if len(typed.node_offsets) != hg.num_node_types + 1:
        raise ValueError(f"the sample has {len(typed.node_offsets) - 1} node types; the graph has {hg.num_node_types}")
    off = typed.node_offsets
    node_dict = {nt: typed.nodes[off[t] : off[t + 1]] for t, nt in enumerate(hg.node_types)}
    batch_dict = None
    if batch is not None:
        grouped = batch[typed.order]
        batch_dict = {nt: grouped[off[t] : off[t + 1]] for t, nt in enumerate(hg.node_types)}
    blocks = typed.blocks
    row_dict, col_dict, edge_dict, num_sampled_edges = {}, {}, {}, {}
    for r, et in enumerate(hg.edge_types):
        parts = [tb.edges_of(r) for tb in blocks]
        if len(blocks) == 1:
            (tb,), (sl,) = blocks, parts
            row, col, edge = tb.src[sl], tb.dst[sl], tb.edge_ids[sl]
        elif blocks:
            row = torch.cat([tb.src[sl] for tb, sl in zip(blocks, parts)])
            col = torch.cat([tb.dst[sl] for tb, sl in zip(blocks, parts)])
            edge = torch.cat([tb.edge_ids[sl] for tb, sl in zip(blocks, parts)])
        else:
            row, col, edge = (torch.empty(0, dtype=torch.int64) for _ in range(3))
        row_dict[et], col_dict[et], edge_dict[et] = row, col, edge
        num_sampled_edges[et] = [sl.stop - sl.start for sl in parts]
    per_type = typed.hop_counts.tolist()
    return HeteroSamplerOutput(
        node=node_dict,
        row=row_dict,
        col=col_dict,
        edge=edge_dict,
        batch=batch_dict,
        num_sampled_nodes={nt: per_type[t] for t, nt in enumerate(hg.node_types)},
        num_sampled_edges=num_sampled_edges,
    )


def _data_of_graph(
    hg: HeteroGraph, out: HeteroSamplerOutput, rows: Mapping[str, torch.Tensor] | None = None
) -> HeteroData:
    """The ``HeteroData`` of a sample of a :class:`HeteroGraph` (no
    ``HeteroData`` behind it): its node data per type (the ``rows`` the
    engine fetched with the batch, ``"<ntype>/<name>"``, else gathered), and
    every edge type's ``edge_index``."""
    data = HeteroData()
    for nt in hg.node_types:
        ids = out.node[nt]
        names = hg.node_data_names(nt)
        for name in names:
            value = (rows or {}).get(f"{nt}/{name}")
            data[nt][name] = value if value is not None else hg.get_node_data(nt, name)[ids]
        if not names:
            data[nt].num_nodes = ids.numel()
    for et in hg.edge_types:
        size = (out.node[et[0]].numel(), out.node[et[2]].numel())
        data[et].edge_index = EdgeIndex(torch.stack([out.row[et], out.col[et]]), sparse_size=size, sort_order="col")
    return data


def filter_batch(
    source: Any,
    hg: HeteroGraph,
    out: HeteroSamplerOutput,
    edge_perm: Mapping[Any, torch.Tensor | None] | None = None,
    custom_cls: Any = None,
    rows: Mapping[str, torch.Tensor] | None = None,
) -> HeteroData:
    """The ``HeteroData`` PyG's loaders make of ``out`` before adding their
    seed fields: node attributes per type indexed by ``n_id``, edge
    attributes by ``e_id``, ``edge_index`` per edge type, and the counts and
    ``batch`` per type. ``source`` a ``(FeatureStore, GraphStore)`` pair:
    the attributes are read from the FeatureStore (``custom_cls`` the batch's
    class), and ``e_id`` is in the GraphStore's order (``edge_perm``), as
    PyG's ``NodeLoader`` makes them. ``rows``: node data the engine
    gathered with the batch (``"<ntype>/<name>"``): taken as it is, not
    gathered again (of a ``HeteroData``: while the attribute is the tensor
    the engine holds)."""
    if isinstance(source, HeteroData):
        # The rows the engine gathered of the attributes as they are now;
        # PyG's filter indexes the rest (and what was replaced since).
        fresh = {
            tuple(key.split("/", 1)): value
            for key, value in (rows or {}).items()
            if _loader.engine_node_data(hg.graph, key, source[key.split("/", 1)[0]].get(key.split("/", 1)[1]))
        }
        if fresh:
            source = copy.copy(source)  # its stores' dicts are copies
            for nt, name in fresh:
                del source[nt][name]
        # filter_hetero_data fills in the types it is not given; the
        # dicts are copied so that ``out`` stays as it was.
        data = filter_hetero_data(source, dict(out.node), dict(out.row), dict(out.col), dict(out.edge))
        for (nt, name), value in fresh.items():
            data[nt][name] = value
    elif isinstance(source, tuple):
        data = filter_custom_hetero_store(*source, out.node, out.row, out.col, out.edge, custom_cls)
    else:
        data = _data_of_graph(hg, out, rows)
    for nt, ids in out.node.items():
        data[nt].n_id = ids
    for et, ids in out.edge.items():
        if ids is not None:
            perm = None if edge_perm is None else edge_perm.get(et)
            data[et].e_id = ids if perm is None else perm[ids]
    data.set_value_dict("batch", out.batch)
    data.set_value_dict("num_sampled_nodes", out.num_sampled_nodes)
    data.set_value_dict("num_sampled_edges", out.num_sampled_edges)
    return data


def build_batch(
    source: Any,
    hg: HeteroGraph,
    out: HeteroSamplerOutput,
    input_type: str,
    input_id: torch.Tensor,
    seed_time: torch.Tensor | None,
    edge_perm: Mapping[Any, torch.Tensor | None] | None = None,
    custom_cls: Any = None,
    rows: Mapping[str, torch.Tensor] | None = None,
) -> HeteroData:
    """The ``HeteroData`` batch PyG's ``NodeLoader.filter_fn`` makes of
    ``out``: :func:`filter_batch`, and ``input_id``, ``seed_time`` and
    ``batch_size`` on the input type."""
    data = filter_batch(source, hg, out, edge_perm, custom_cls, rows)
    data[input_type].input_id = input_id
    data[input_type].seed_time = seed_time
    data[input_type].batch_size = int(input_id.numel())
    return data

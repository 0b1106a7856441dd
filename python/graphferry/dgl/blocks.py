"""Engine samples as DGL blocks: :func:`to_blocks` (a homogeneous graph) and
:func:`to_hetero_blocks` (a heterograph, every node and edge type), built
with DGL's low-level constructors (``dgl.create_block`` when this DGL lacks
them) and carrying the graph's node and edge data through DGL's lazy frames
as DGL's own samplers do; :func:`to_device` for a loader's batch, and
:func:`move_batch`, its copy in the GPU data path's prefetch step.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import dgl
import torch
from dgl.frame import Column

from .. import _transfer
from ..hetero import HeteroGraph
from ..sampling import SampledSubgraph

__all__ = ["to_blocks", "to_hetero_blocks", "to_device", "move_batch"]

# DGL's low-level block constructors, which dgl.create_block calls after its
# Python-side checks (a scan of every index array for its maximum, a new
# metagraph per call): the engine's blocks are valid by construction, and at
# ~10^5 edges per hop those checks cost about as much as the sampling of the
# hop. A DGL without them gets dgl.create_block.
try:
    from dgl import graph_index, heterograph_index
    from dgl.heterograph import DGLBlock
    from dgl.utils import toindex

    _UNIT_META = graph_index.from_coo(2, [0], [1], True)  # the metagraph SRC/_N -> DST/_N
    _LOW_LEVEL = True
except (ImportError, AttributeError):
    _LOW_LEVEL = False

# An empty edge-id array tells DGL that block edge i is CSC position i,
# which is what our indices are; it saves an arange per block.
_NO_EIDS = {torch.int64: torch.empty(0, dtype=torch.int64), torch.int32: torch.empty(0, dtype=torch.int32)}


def _no_eids(indices: torch.Tensor) -> torch.Tensor:
    """The empty edge-id array on the device of ``indices`` (mode 2's
    blocks are CUDA tensors)."""
    if indices.device.type == "cpu":
        return _NO_EIDS[indices.dtype]
    return torch.empty(0, dtype=indices.dtype, device=indices.device)


def _csc_block(indptr: torch.Tensor, indices: torch.Tensor, num_src: int, num_dst: int):
    # The block's idtype is that of indptr and indices (int64 or int32).
    """``dgl.create_block(("csc", (indptr, indices, [])), num_src, num_dst)``
    built the way ``create_block`` builds it, minus its checks (see above)."""
    if not _LOW_LEVEL:
        return dgl.create_block(
            ("csc", (indptr, indices, _no_eids(indices))), num_src_nodes=num_src, num_dst_nodes=num_dst
        )
    unit = heterograph_index.create_unitgraph_from_csr(
        2, num_src, num_dst, indptr, indices, _no_eids(indices), ["coo", "csr", "csc"], True
    )
    index = heterograph_index.create_heterograph_from_relations(
        _UNIT_META, [unit], toindex([num_src, num_dst], "int64")
    )
    return DGLBlock(index, (["_N"], ["_N"]), ["_E"])


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
    T = hg.num_node_types
    if not _LOW_LEVEL:
        data = {}
        for r, et in enumerate(hg.edge_types):
            indptr, indices = csc[r]
            data[et] = ("csc", (indptr, indices, _NO_EIDS[indices.dtype]))
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
    meta = graph_index.from_coo(2 * T, hg.relation_src_type, [T + d for d in hg.relation_dst_type], True)
    units = []
    for r in range(hg.num_relations):
        indptr, indices = csc[r]
        s, d = hg.relation_src_type[r], hg.relation_dst_type[r]
        units.append(
            heterograph_index.create_unitgraph_from_csr(
                2, num_src[s], num_dst[d], indptr, indices, _NO_EIDS[indices.dtype], ["coo", "csr", "csc"], True
            )
        )
    index = heterograph_index.create_heterograph_from_relations(
        meta, units, toindex(list(num_src) + list(num_dst), "int64")
    )
    return DGLBlock(index, (list(hg.node_types), list(hg.node_types)), [et[1] for et in hg.edge_types])


def to_hetero_blocks(
    sub: SampledSubgraph,
    hg: HeteroGraph,
    *,
    idtype: torch.dtype = torch.int64,
    g: Any = None,
    node_feats: Mapping[str, Sequence[str]] | None = None,
    labels: Mapping[str, Sequence[str]] | None = None,
    rows: Mapping[str, torch.Tensor] | None = None,
    label_rows: Mapping[str, torch.Tensor] | None = None,
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
        rows, label_rows (dict, optional): the node data and labels the
            engine gathered with the batch (``sub.node_data``, ``sub.labels``:
            ``"<ntype>/<name>"``, as every loader's batch carries them); a
            sample without them (``sample_neighbors``) reads ``hg``'s.
            (default: :obj:`None`)
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
        rows, label_rows = rows or {}, label_rows or {}
        for frames, wanted, fetched in ((first.srcnodes, node_feats, rows), (last.dstnodes, labels, label_rows)):
            for nt, names in (wanted or {}).items():
                frame, n = frames[nt].data, frames[nt].data[dgl.NID].numel()
                for name in names:
                    key = f"{nt}/{name}"
                    # The engine's rows (labels that are features: the seeds'
                    # rows lead); a sample without them reads hg's array.
                    value = fetched.get(key, rows.get(key))
                    frame[name] = value[:n] if value is not None else hg.get_node_data(nt, name)[frame[dgl.NID].long()]
    return blocks


def to_device(batch: tuple, device: torch.device) -> tuple:
    """``batch`` (a loader's tuple of id tensors, ``{type: ids}`` dicts, pair
    graphs and lists of blocks) on ``device``."""
    return tuple(_to(x, device) for x in batch)


def _to(x: Any, device: torch.device) -> Any:
    if isinstance(x, list):
        return [b.to(device) for b in x]
    if isinstance(x, Mapping):
        return {k: v.to(device) for k, v in x.items()}
    return x.to(device)


def move_batch(batch: tuple, device: torch.device) -> tuple:
    """The prefetch step's copy of a loader's batch to ``device`` (on the
    current stream, every copy non-blocking): tensors as they are, each DGL
    graph through its ``to`` with the data the batch brought (the engine's
    node data and labels, the ids) copied now rather than on first use on
    the training stream; the graph's own data attached lazily stays lazy, as
    with DGL's prefetcher."""
    return _transfer.to_device(batch, device, _graph_to)


def _graph_to(g: Any, device: torch.device) -> Any:
    out = g.to(device, non_blocking=True)
    for frame in itertools.chain(out._node_frames, out._edge_frames):
        for column in frame._columns.values():
            if isinstance(column, Column) and column.index is None:
                column.data  # noqa: B018 - materialises the column: its copy, issued here
    return out

r"""Heterogeneous graphs: :class:`HeteroGraph`, the typed graph that the DGL
and PyG loaders share.

The engine holds ONE homogeneous in-neighbour CSC over a global id space and
the type offsets (issue 13's design, DGL's ``to_homogeneous`` numbering):

* node type ``t`` (``node_types[t]``) owns the consecutive global node ids
  ``[node_offsets[t], node_offsets[t + 1])``; its node ``i`` (type-local id,
  the id DGL's ``g.nodes[ntype]`` and PyG's ``data[ntype]`` use) is the global
  node ``node_offsets[t] + i``;
* relation ``r`` (``edge_types[r]``, a canonical ``(src type, name, dst
  type)``) owns the global edge ids ``[edge_offsets[r], edge_offsets[r + 1])``
  and its edge ``j`` is the global edge ``edge_offsets[r] + j``.

The type of a node or of an edge is an offset lookup on its global id. The
engine holds the typed model: the offsets, the node type names and the
canonical relations (``gf_graph_types_json``); a :class:`HeteroGraph` is a
view of it. Node data of a type is engine node data ``"<ntype>/<name>"``,
type-local rows (:meth:`HeteroGraph.set_node_data` hands a tensor to the
engine, not copied), which the loaders gather with each batch on the
engine's threads.

.. code-block:: python

    import graphferry
    hg = graphferry.HeteroGraph.from_coo(
        {"paper": 4, "author": 2},
        {("author", "writes", "paper"): (torch.tensor([0, 1]), torch.tensor([2, 3])),
         ("paper", "cites", "paper"): (torch.tensor([0, 1]), torch.tensor([1, 2]))})
    seeds = hg.to_global("paper", torch.tensor([2, 3]))
    hops = hg.relation_fanouts([{"writes": 2, "cites": 5}, {"writes": 1, "cites": 1}])
"""

from __future__ import annotations

import contextlib
import json
import os
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Union

import numpy as np
import torch

from ._metafile import read_object
from ._native import lib as _lib
from ._resource import Closeable
from .graph import Graph, Partition, _as_int, c_string

__all__ = ["HeteroGraph", "EdgeType"]

EdgeType = tuple[str, str, str]
# A relation as a user names it: the canonical triple, or its name alone
# when no other relation has that name (as DGL accepts).
EdgeTypeKey = Union[str, tuple[str, str, str]]

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
# A node or edge without a time (its type was given none) is never filtered
# out by temporal sampling: it gets the earliest time there is.
NO_TIME = -(2**63)


def _ids(value: Any, what: str) -> torch.Tensor:
    """``value`` (Tensor, ndarray, list or int) as a 1-D int64 CPU tensor."""
    if isinstance(value, np.ndarray):
        value = torch.from_numpy(value)
    elif not isinstance(value, torch.Tensor):
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            value = [int(value)]
        try:
            # No dtype here: torch.as_tensor(..., dtype=int64) would truncate
            # 1.5 to 1; a float in the list makes a float tensor, refused below.
            value_in, value = value, torch.as_tensor(value)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"'{what}' must be a tensor of integer ids (got '{type(value).__name__}')") from None
        if value.is_floating_point():
            flat = np.asarray(value_in, dtype=np.float64).reshape(-1)
            odd = np.flatnonzero(flat != np.trunc(flat))
            at = int(odd[0]) if len(odd) else 0
            raise TypeError(
                f"'{what}' must hold integer ids (got {float(flat[at])!r} at position {at}: a list of "
                "floats is refused, never rounded)"
            )
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        raise TypeError(f"'{what}' must hold integer ids (got dtype {value.dtype})")
    if value.dim() != 1:
        if value.dim() == 0:
            value = value.reshape(1)
        else:
            raise ValueError(f"'{what}' must be 1-D (got shape {list(value.shape)})")
    if value.device.type != "cpu":
        value = value.cpu()
    return value.to(torch.int64)


def _check_range(ids: torch.Tensor, upper: int, what: str) -> None:
    """Raises ValueError naming the first id of ``ids`` outside ``[0, upper)``."""
    if ids.numel() == 0:
        return
    bad = (ids < 0) | (ids >= upper)
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        raise ValueError(f"{what}: id {int(ids[first])} (at position {first}) is out of range [0, {upper})")


def _fanout_int(value: Any, what: str) -> int:
    value = _as_int(value, what)
    if not _INT32_MIN <= value <= _INT32_MAX:
        raise ValueError(f"'{what}' = {value} does not fit in an int32")
    if value < -1:
        raise ValueError(f"'{what}' = {value}: a fan-out is -1 (all neighbours), 0 (none) or positive")
    return value


def _offsets(counts: Sequence[int]) -> torch.Tensor:
    out = torch.zeros(len(counts) + 1, dtype=torch.int64)
    if counts:
        out[1:] = torch.tensor(list(counts), dtype=torch.int64).cumsum(0)
    return out


def _engine_types(graph: Graph, types: Mapping[str, Any] | None = None) -> dict:
    """The engine's typed model of ``graph`` (``gf_graph_types_json``'s
    form), after setting it to ``types`` when given."""
    if types is not None:
        _lib.gf_graph_set_types_json(graph.handle, json.dumps(types).encode("utf-8"))
    return json.loads(c_string(lambda out: _lib.gf_graph_types_json(graph.handle, out)))


class HeteroGraph(Closeable):
    r"""A heterogeneous graph held by the graphferry engine: a view of a
    typed :class:`~graphferry.Graph` (:attr:`graph`, global ids as in the
    module docstring) and of its types' names, which the engine holds.

    Make one with :meth:`from_coo`, :meth:`from_dgl` or :meth:`open` (PyG's
    ``HeteroData`` goes through :func:`graphferry.pyg.from_pyg`). It owns
    its :attr:`graph`: :meth:`close` (or a ``with`` block) releases both.

    Attributes:
        graph (Graph): the engine graph over the global ids.
        node_types (list of str): the node types, in type-index order.
        edge_types (list of (str, str, str)): the canonical edge types
            (relations), in relation-index (= global edge id) order.
        node_offsets (Tensor): int64 ``[T + 1]``, see the module docstring.
        edge_offsets (Tensor): int64 ``[R + 1]``.
        relation_src_type, relation_dst_type (list of int): the source and
            destination node type index of each relation.
    """

    def __init__(self, *args: Any, _owner: object = None):
        if _owner is not _CONSTRUCTOR_TOKEN or len(args) != 2:
            raise TypeError(
                "graphferry.HeteroGraph cannot be constructed directly; use HeteroGraph.from_coo, "
                "from_dgl or open (or graphferry.pyg.from_pyg)"
            )
        # (the graph, its typed model in gf_graph_types_json's form)
        graph, types = args
        self.graph: Graph = graph
        self.node_types = [t["name"] for t in types["node_types"]]
        self.edge_types = [(t["src"], t["rel"], t["dst"]) for t in types["edge_types"]]
        self._ntype_index = {nt: i for i, nt in enumerate(self.node_types)}
        self._etype_index: dict[Any, int] = {}
        names: dict[str, list[int]] = {}
        for r, et in enumerate(self.edge_types):
            self._etype_index[et] = r
            names.setdefault(et[1], []).append(r)
        # A relation name alone names its relation only when unique (DGL's rule).
        self._name_index = {name: rs[0] for name, rs in names.items() if len(rs) == 1}
        self._ambiguous = {name: rs for name, rs in names.items() if len(rs) > 1}
        self.relation_src_type = [self._ntype_index[et[0]] for et in self.edge_types]
        self.relation_dst_type = [self._ntype_index[et[2]] for et in self.edge_types]
        self.node_offsets = _offsets([t["num_nodes"] for t in types["node_types"]])
        self.edge_offsets = _offsets([t["num_edges"] for t in types["edge_types"]])
        # The tensors handed to the engine as node data, by engine name (what
        # get_node_data returns for them: the caller's own tensor).
        self._given: dict[str, torch.Tensor] = {}
        self._dgl_ref: Any = None
        self.part: Any = None  # a typed rank part this graph is a view of (_of_part)

    # -- constructors ---------------------------------------------------------

    @classmethod
    def from_coo(
        cls,
        num_nodes: Mapping[str, int],
        edges: Mapping[EdgeType, tuple[Any, Any]],
        *,
        edge_weights: Mapping[EdgeTypeKey, Any] | None = None,
        node_time: Mapping[str, Any] | None = None,
        edge_time: Mapping[EdgeTypeKey, Any] | None = None,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
    ) -> HeteroGraph:
        r"""Builds a heterogeneous graph from per-type edge lists.

        Node types are numbered in the order of ``num_nodes``, relations in
        the order of ``edges``; edge ``j`` of relation ``r`` (``src[j] ->
        dst[j]``, type-local ids) becomes global edge ``edge_offsets[r] + j``.

        Args:
            num_nodes (dict): node type -> number of nodes.
            edges (dict): canonical edge type ``(src type, name, dst type)``
                -> ``(src, dst)``, integer tensors of type-local ids.
            edge_weights (dict, optional): edge type -> float ``[E_r]``
                weights for biased sampling (a bool mask counts as 0/1);
                relations left out weigh 1 (uniform within the relation).
                (default: :obj:`None`)
            node_time (dict, optional): node type -> int64 ``[N_t]`` times
                for temporal sampling; types left out are never filtered.
                (default: :obj:`None`)
            edge_time (dict, optional): edge type -> int64 ``[E_r]`` times.
                (default: :obj:`None`)
            num_patches, partition, seed: as in
                :meth:`graphferry.Graph.from_csc` (``partition`` given as a
                tensor is indexed by global node id).

        Raises:
            ValueError: an edge type naming an unknown node type, ids out of
                range, or mismatched lengths.
            TypeError: a malformed argument.
        """
        if not isinstance(num_nodes, Mapping):
            raise TypeError(f"'num_nodes' must be a dict of node type -> count (got '{type(num_nodes).__name__}')")
        if not isinstance(edges, Mapping):
            raise TypeError(f"'edges' must be a dict of edge type -> (src, dst) (got '{type(edges).__name__}')")
        node_types, counts = [], []
        for nt, n in num_nodes.items():
            if not isinstance(nt, str):
                raise TypeError(f"node types must be str (got {nt!r})")
            n = _as_int(n, f"num_nodes[{nt!r}]")
            if n < 0:
                raise ValueError(f"num_nodes[{nt!r}] must be >= 0 (got {n})")
            node_types.append(nt)
            counts.append(n)
        offsets = dict(zip(node_types, np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).tolist()))
        edge_types, edge_counts, srcs, dsts = [], [], [], []
        for et, pair in edges.items():
            if not (isinstance(et, tuple) and len(et) == 3 and all(isinstance(p, str) for p in et)):
                raise TypeError(f"edge types must be (src type, name, dst type) tuples of str (got {et!r})")
            for end in (et[0], et[2]):
                if end not in offsets:
                    raise ValueError(f"edge type {et}: unknown node type '{end}' (node types: {node_types})")
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise TypeError(f"edges[{et}] must be a pair (src, dst) (got '{type(pair).__name__}')")
            src, dst = _ids(pair[0], f"edges[{et}][0]"), _ids(pair[1], f"edges[{et}][1]")
            if src.numel() != dst.numel():
                raise ValueError(f"edges[{et}]: src has {src.numel()} ids and dst {dst.numel()}")
            _check_range(src, num_nodes[et[0]], f"edges[{et}] source ('{et[0]}')")
            _check_range(dst, num_nodes[et[2]], f"edges[{et}] destination ('{et[2]}')")
            edge_types.append(et)
            edge_counts.append(src.numel())
            srcs.append(src + offsets[et[0]])
            dsts.append(dst + offsets[et[2]])
        total = int(sum(counts))
        src = torch.cat(srcs) if srcs else torch.empty(0, dtype=torch.int64)
        dst = torch.cat(dsts) if dsts else torch.empty(0, dtype=torch.int64)
        graph = Graph.from_coo(src, dst, num_nodes=total, num_patches=num_patches, partition=partition, seed=seed)
        types = {
            "node_types": [{"name": nt, "num_nodes": n} for nt, n in zip(node_types, counts)],
            "edge_types": [
                {"src": s, "rel": r, "dst": d, "num_edges": n} for (s, r, d), n in zip(edge_types, edge_counts)
            ],
        }
        try:
            if edge_types:
                types = _engine_types(graph, types)
            # else: nothing for the engine to type (it types graphs with
            # relations): every sample is its seeds, split by the offsets here.
            hetero = cls(graph, types, _owner=_CONSTRUCTOR_TOKEN)
        except BaseException:
            graph.close()
            raise
        try:
            if edge_weights is not None:
                hetero.set_edge_weights(edge_weights)
            if node_time is not None:
                hetero.set_node_time(node_time)
            if edge_time is not None:
                hetero.set_edge_time(edge_time)
        except BaseException:
            hetero.close()
            raise
        return hetero

    @classmethod
    def from_dgl(
        cls,
        g: Any,
        *,
        edge_weights: str | None = None,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
    ) -> HeteroGraph:
        r"""Converts a DGL heterograph on the CPU (a homogeneous one works
        too: one node and one edge type). Types keep DGL's numbering
        (``g.ntypes``, ``g.canonical_etypes``) and edge ids DGL's per-type
        ids, so the global ids are those of ``dgl.to_homogeneous(g)``. Node
        data of every type (``g.nodes[ntype].data``) is shared, not copied;
        :attr:`dgl_graph` refers to ``g`` (weakly).

        Args:
            g (dgl.DGLGraph): the graph.
            edge_weights (str, optional): the name of an ``edata`` field
                holding the weights (or a bool mask) for biased sampling, as
                DGL's ``NeighborSampler(prob=...)``; relations without that
                field are sampled uniformly, as DGL does.
                (default: :obj:`None`)
            num_patches, partition, seed: as in :meth:`from_coo`.
        """
        import dgl  # optional dependency

        if not isinstance(g, dgl.DGLGraph):
            raise TypeError(f"expected a 'dgl.DGLGraph' (got '{type(g).__name__}')")
        if g.device.type != "cpu":
            raise TypeError(
                f"expected a dgl.DGLGraph on the CPU; this version of graphferry is CPU-only "
                f"(got a graph on '{g.device}')"
            )
        if edge_weights is not None and not isinstance(edge_weights, str):
            raise TypeError(f"'edge_weights' must name an edata field (got '{type(edge_weights).__name__}')")
        num_nodes = {nt: g.num_nodes(nt) for nt in g.ntypes}
        edges = {}
        weights = {}
        for et in g.canonical_etypes:
            edges[et] = g.edges(etype=et, order="eid")
            if edge_weights is not None and edge_weights in g.edges[et].data:
                weights[et] = g.edges[et].data[edge_weights]
        if edge_weights is not None and not weights:
            raise KeyError(f"'edge_weights': no edge type of the DGLGraph has an edata field '{edge_weights}'")
        hetero = cls.from_coo(
            num_nodes,
            edges,
            edge_weights=weights or None,
            num_patches=num_patches,
            partition=partition,
            seed=seed,
        )
        try:
            for nt in g.ntypes:
                for name, value in g.nodes[nt].data.items():
                    if isinstance(value, torch.Tensor):
                        with contextlib.suppress(TypeError):  # a dtype the engine lacks: DGL's frames serve it
                            hetero.set_node_data(nt, name, value)
        except BaseException:
            hetero.close()
            raise
        hetero._dgl_ref = weakref.ref(g)
        return hetero

    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        *,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
        verify: bool = False,
    ) -> HeteroGraph:
        r"""Opens a typed graphferry dataset directory (its
        ``graphferry.json`` lists ``node_types`` and ``edge_types``; the
        engine sets the types on the graph it opens). Node data of type
        ``T`` is the engine's ``"T/<name>"``. Arguments as in
        :meth:`graphferry.Graph.open`."""
        meta_path = os.path.join(os.fspath(path), "graphferry.json")
        try:
            meta = read_object(meta_path)
        except FileNotFoundError:
            raise FileNotFoundError(f"'{path}' is not a graphferry dataset directory (no graphferry.json)") from None
        if not meta.get("node_types") or "edge_types" not in meta:
            parent = os.path.dirname(os.path.abspath(os.fspath(path)))
            if os.path.exists(os.path.join(os.fspath(path), "global_ids.npy")) and os.path.exists(
                os.path.join(parent, "partition.json")
            ):
                raise ValueError(
                    f"'{path}' is a rank's folder of the partition in '{parent}' (its types are the "
                    "partition's): open it with graphferry.distributed.PartGraph.open(partition_dir, rank)"
                )
            raise ValueError(
                f"'{meta_path}' describes an untyped dataset (no 'node_types'/'edge_types'); "
                "open it with graphferry.Graph.open"
            )
        graph = Graph.open(path, num_patches=num_patches, partition=partition, seed=seed, verify=verify)
        try:
            return cls(graph, _engine_types(graph), _owner=_CONSTRUCTOR_TOKEN)
        except BaseException:
            graph.close()
            raise

    @classmethod
    def _of_part(cls, part: Graph, node_offsets: Sequence[int], edge_counts: Sequence[int]) -> HeteroGraph:
        """A typed :class:`~graphferry.distributed.PartGraph` as a view
        (``PartGraph.hetero_view``): the whole graph's types and counts, the
        part sampling them. The view owns nothing; its node data is the
        part's loaders' (fetched per batch), never read whole."""
        if not part.node_types:
            raise ValueError(
                "the part is of an untyped partition: its loaders are the homogeneous ones "
                "(partition a typed dataset for heterogeneous batches)"
            )
        counts = [int(b) - int(a) for a, b in zip(node_offsets[:-1], node_offsets[1:])]
        types = {
            "node_types": [{"name": nt, "num_nodes": n} for nt, n in zip(part.node_types, counts)],
            "edge_types": [
                {"src": s, "rel": r, "dst": d, "num_edges": n} for (s, r, d), n in zip(part.edge_types, edge_counts)
            ],
        }
        view = cls(part, types, _owner=_CONSTRUCTOR_TOKEN)
        view.part = part
        return view

    @property
    def dgl_graph(self) -> Any:
        """The DGL graph this graph was converted from (:meth:`from_dgl`)
        while it lives, else None. Held weakly: the conversion cache maps a
        DGL graph to its HeteroGraph, which must not keep it alive."""
        return self._dgl_ref() if self._dgl_ref is not None else None

    # -- names and sizes ------------------------------------------------------

    @property
    def num_node_types(self) -> int:
        return len(self.node_types)

    @property
    def num_relations(self) -> int:
        return len(self.edge_types)

    @property
    def closed(self) -> bool:
        return self.graph.closed

    def ntype_index(self, ntype: str) -> int:
        """The index of node type ``ntype``; ValueError naming the known
        types if there is none."""
        index = self._ntype_index.get(ntype) if isinstance(ntype, str) else None
        if index is None:
            raise ValueError(f"unknown node type {ntype!r} (node types: {self.node_types})")
        return index

    def etype_index(self, etype: EdgeTypeKey) -> int:
        """The relation index of ``etype``: a canonical ``(src, name, dst)``
        or a relation name that no other relation has."""
        if isinstance(etype, tuple):
            index = self._etype_index.get(etype)
        elif isinstance(etype, str):
            if etype in self._ambiguous:
                raise ValueError(
                    f"edge type name '{etype}' is ambiguous: it names "
                    f"{[self.edge_types[r] for r in self._ambiguous[etype]]}; use the canonical (src, name, dst)"
                )
            index = self._name_index.get(etype)
        else:
            raise TypeError(f"an edge type is a str or a (src, name, dst) tuple (got '{type(etype).__name__}')")
        if index is None:
            raise ValueError(f"unknown edge type {etype!r} (edge types: {self.edge_types})")
        return index

    def canonical_etype(self, etype: EdgeTypeKey) -> EdgeType:
        """``etype`` as its canonical ``(src type, name, dst type)``."""
        return self.edge_types[self.etype_index(etype)]

    def num_nodes(self, ntype: str | None = None) -> int:
        """The number of nodes of ``ntype`` (all types when None)."""
        if ntype is None:
            return int(self.node_offsets[-1])
        t = self.ntype_index(ntype)
        return int(self.node_offsets[t + 1] - self.node_offsets[t])

    def num_edges(self, etype: EdgeTypeKey | None = None) -> int:
        """The number of edges of ``etype`` (all relations when None)."""
        if etype is None:
            return int(self.edge_offsets[-1])
        r = self.etype_index(etype)
        return int(self.edge_offsets[r + 1] - self.edge_offsets[r])

    # -- id maths -------------------------------------------------------------

    def to_global(self, ntype: str, local_ids: Any) -> torch.Tensor:
        """int64 global node ids of the type-local ids ``local_ids`` of
        ``ntype`` (ValueError for an id out of range)."""
        t = self.ntype_index(ntype)
        ids = _ids(local_ids, f"ids of node type '{ntype}'")
        lo, hi = int(self.node_offsets[t]), int(self.node_offsets[t + 1])
        _check_range(ids, hi - lo, f"node type '{ntype}'")
        return ids + lo

    def to_global_nodes(self, nodes: Mapping[str, Any]) -> torch.Tensor:
        """The global ids of ``{ntype: local ids}``, concatenated in the
        dict's order (the order DGL's loader batches a dict of seeds in). A
        bool tensor is a mask over the type's nodes."""
        if not isinstance(nodes, Mapping):
            raise TypeError(f"expected a dict of node type -> ids (got '{type(nodes).__name__}')")
        parts = []
        for ntype, ids in nodes.items():
            if isinstance(ids, torch.Tensor) and ids.dtype == torch.bool:
                if ids.numel() != self.num_nodes(ntype):
                    raise ValueError(
                        f"the mask of node type '{ntype}' has {ids.numel()} entries; the type has "
                        f"{self.num_nodes(ntype)} nodes"
                    )
                ids = ids.nonzero().view(-1)
            parts.append(self.to_global(ntype, ids))
        return torch.cat(parts) if parts else torch.empty(0, dtype=torch.int64)

    def edge_to_global(self, etype: EdgeTypeKey, local_ids: Any) -> torch.Tensor:
        """int64 global edge ids of the edges ``local_ids`` of ``etype``."""
        r = self.etype_index(etype)
        ids = _ids(local_ids, f"edge ids of {self.edge_types[r]}")
        lo, hi = int(self.edge_offsets[r]), int(self.edge_offsets[r + 1])
        _check_range(ids, hi - lo, f"edge type {self.edge_types[r]}")
        return ids + lo

    def node_type_of(self, global_ids: Any) -> torch.Tensor:
        """int64 node type index of each global node id."""
        ids = _ids(global_ids, "global node ids")
        _check_range(ids, self.num_nodes(), "global node ids")
        return torch.searchsorted(self.node_offsets[1:], ids, right=True)

    def split_nodes(self, global_ids: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(type index, type-local id)`` of each global node id, int64."""
        ids = _ids(global_ids, "global node ids")
        types = self.node_type_of(ids)
        return types, ids - self.node_offsets[types]

    def nodes_by_type(self, global_ids: Any, *, all_types: bool = True) -> dict[str, torch.Tensor]:
        """``{ntype: type-local ids}`` of ``global_ids``, each type's ids in
        their order in ``global_ids``; with ``all_types=False`` only the
        types present."""
        types, local = self.split_nodes(global_ids)
        out = {}
        for t, nt in enumerate(self.node_types):
            sel = local[types == t]
            if all_types or sel.numel():
                out[nt] = sel
        return out

    def relation_of(self, edge_ids: Any) -> torch.Tensor:
        """int64 relation index of each global edge id."""
        ids = _ids(edge_ids, "global edge ids")
        _check_range(ids, self.num_edges(), "global edge ids")
        return torch.searchsorted(self.edge_offsets[1:], ids, right=True)

    def to_local_edge(self, edge_ids: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(relation index, relation-local edge id)`` of each global edge
        id, int64."""
        ids = _ids(edge_ids, "global edge ids")
        rel = self.relation_of(ids)
        return rel, ids - self.edge_offsets[rel]

    def edges(self, etype: EdgeTypeKey) -> tuple[torch.Tensor, torch.Tensor]:
        """``(src, dst)``: the type-local endpoints of every edge of
        ``etype``, in edge id order (the engine exports them in one call,
        ``gf_graph_edges``)."""
        src, dst, _ = self.graph.edges("coo", relation=self.etype_index(etype))
        return src, dst

    def to_dgl(self) -> Any:
        """This graph as a DGL heterograph (int64 ids): its relations with
        their edge ids, and the node data of every type in
        ``g.nodes[ntype].data``."""
        import dgl  # optional dependency

        g = dgl.heterograph(
            {et: self.edges(et) for et in self.edge_types},
            num_nodes_dict={nt: self.num_nodes(nt) for nt in self.node_types},
        )
        for nt in self.node_types:
            for name in self.node_data_names(nt):
                g.nodes[nt].data[name] = self.get_node_data(nt, name)
        return g

    # -- fan-outs --------------------------------------------------------------

    def relation_fanouts(self, fanouts: Any, *, default: int | None = None) -> tuple[tuple[int, ...], ...]:
        r"""Per-hop, per-relation fan-outs (``SampleOptions.relation_fanouts``)
        from what DGL and PyG users write. Hops stay in the order given (DGL's
        loader reverses its list: the engine counts hops from the seeds).

        Args:
            fanouts: one of

                * an int: one hop, that fan-out for every relation;
                * a dict ``{etype: int}``: one hop (DGL's dict fan-out);
                * a dict ``{etype: [int, ...]}``: one entry per hop (PyG's
                  ``num_neighbors``; every list of the same length);
                * a list whose items are ints or ``{etype: int}`` dicts: one
                  hop each (DGL's ``NeighborSampler`` fan-outs).

                ``etype`` is a canonical ``(src, name, dst)`` or a relation
                name that no other relation has. ``-1`` takes every
                neighbour, ``0`` none.
            default (int, optional): the fan-out of relations a dict leaves
                out; when None (as DGL) every relation must be given.
                (default: :obj:`None`)

        Returns:
            ``result[h][r]``: the fan-out of relation ``r`` at hop ``h``.

        Raises:
            ValueError: an unknown or ambiguous edge type, a relation given
                twice or left out, lists of different lengths, a fan-out
                below ``-1``.
        """
        if default is not None:
            default = _fanout_int(default, "default")
        if isinstance(fanouts, Mapping):
            values = list(fanouts.values())
            lists = [isinstance(v, (list, tuple)) or isinstance(v, torch.Tensor) and v.dim() == 1 for v in values]
            if values and all(lists):
                return self._per_relation_lists(fanouts, default)
            if any(lists):
                raise TypeError("a fan-out dict maps every edge type to an int, or every edge type to a list")
            return (self._one_hop(fanouts, default, "fanouts"),)
        if isinstance(fanouts, (str, bytes)) or (
            isinstance(fanouts, tuple) and fanouts and all(isinstance(p, str) for p in fanouts)
        ):
            pass  # fall through to the error below: an edge type is no fan-out
        elif isinstance(fanouts, (int, np.integer)) and not isinstance(fanouts, bool):
            return ((_fanout_int(fanouts, "fanouts"),) * self.num_relations,)
        elif isinstance(fanouts, (list, tuple)):
            hops = []
            for h, item in enumerate(fanouts):
                if isinstance(item, Mapping):
                    hops.append(self._one_hop(item, default, f"fanouts[{h}]"))
                else:
                    hops.append((_fanout_int(item, f"fanouts[{h}]"),) * self.num_relations)
            return tuple(hops)
        raise TypeError(
            "fan-outs are an int, a dict of edge type -> int (or -> list of int) or a list of ints/dicts "
            f"(got '{type(fanouts).__name__}')"
        )

    def _relations_of_keys(self, keys: Sequence[Any], what: str) -> list[int]:
        rels = []
        seen: dict[int, Any] = {}
        for key in keys:
            r = self.etype_index(key)
            if r in seen:
                raise ValueError(f"{what}: edge type {self.edge_types[r]} given twice (as {seen[r]!r} and {key!r})")
            seen[r] = key
            rels.append(r)
        return rels

    def _fill_missing(self, given: dict[int, int], default: int | None, what: str) -> tuple[int, ...]:
        missing = [self.edge_types[r] for r in range(self.num_relations) if r not in given]
        if missing and default is None:
            raise ValueError(
                f"{what}: no fan-out for edge types {missing}; give every edge type (as DGL requires) or a default"
            )
        return tuple(given.get(r, default) for r in range(self.num_relations))  # type: ignore[misc]

    def _one_hop(self, fanouts: Mapping[Any, Any], default: int | None, what: str) -> tuple[int, ...]:
        rels = self._relations_of_keys(list(fanouts.keys()), what)
        given = {r: _fanout_int(v, f"{what}[{k!r}]") for r, (k, v) in zip(rels, fanouts.items())}
        return self._fill_missing(given, default, what)

    def _per_relation_lists(self, fanouts: Mapping[Any, Any], default: int | None) -> tuple[tuple[int, ...], ...]:
        rels = self._relations_of_keys(list(fanouts.keys()), "fanouts")
        lists = {}
        for r, (k, v) in zip(rels, fanouts.items()):
            values = v.tolist() if isinstance(v, torch.Tensor) else list(v)
            lists[r] = [_fanout_int(x, f"fanouts[{k!r}][{h}]") for h, x in enumerate(values)]
        lengths = {len(v) for v in lists.values()}
        if len(lengths) != 1:
            # PyG's wording (NumNeighbors), which its users' tests match on
            raise ValueError(
                f"Number of hops must be the same across all edge types (got {len(lengths)} different number of "
                "hops; give every edge type the same number of hops: "
                + ", ".join(f"{self.edge_types[r]}: {len(v)}" for r, v in lists.items())
                + ")"
            )
        num_hops = lengths.pop()
        return tuple(
            self._fill_missing({r: v[h] for r, v in lists.items()}, default, f"fanouts (hop {h})")
            for h in range(num_hops)
        )

    # -- data per type ---------------------------------------------------------

    def set_node_data(self, ntype: str, name: str, tensor: Any) -> None:
        """Hands ``tensor`` (one row per node of ``ntype``, type-local order)
        to the engine as node data ``name`` of ``ntype`` (engine name
        ``"<ntype>/<name>"``), not copied: the loaders gather its rows with
        each batch on the engine's threads. Replacing data that open loaders
        read is refused (``GF_ESTATE``): close them first."""
        t = self.ntype_index(ntype)
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a str (got '{type(name).__name__}')")
        if isinstance(tensor, np.ndarray):
            tensor = torch.from_numpy(tensor)
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(f"node data must be a tensor (got '{type(tensor).__name__}')")
        rows = int(self.node_offsets[t + 1] - self.node_offsets[t])
        if tensor.dim() == 0 or tensor.shape[0] != rows:
            raise ValueError(
                f"node data '{name}' of node type '{ntype}' must have {rows} rows (got shape {list(tensor.shape)})"
            )
        self.graph.set_node_data(f"{ntype}/{name}", tensor)
        self._given[f"{ntype}/{name}"] = tensor

    def node_data_names(self, ntype: str) -> list[str]:
        """The names of ``ntype``'s node data (engine names
        ``"<ntype>/<name>"``), sorted."""
        self.ntype_index(ntype)
        prefix = ntype + "/"
        return sorted(n[len(prefix) :] for n in self.graph.node_data_names() if n.startswith(prefix))

    def has_node_data(self, ntype: str, name: str) -> bool:
        return name in self.node_data_names(ntype)

    def get_node_data(self, ntype: str, name: str) -> torch.Tensor:
        """Node data ``name`` of ``ntype``, one row per node of the type: the
        tensor handed in (:meth:`set_node_data`, a DGL graph's), else a copy
        of the engine's (a dataset's)."""
        self.ntype_index(ntype)
        key = f"{ntype}/{name}"
        if self.part is not None:
            raise ValueError(
                f"a typed rank part holds only its own rows of '{key}': its loaders fetch each batch's "
                f"rows from their owners (PartGraph.get_node_data('{key}') gives the rank's own)"
            )
        if key not in self.graph.node_data_names():
            raise KeyError(f"node type '{ntype}' has no node data '{name}' (it has {self.node_data_names(ntype)})")
        given = self._given.get(key)
        return given if given is not None else self.graph.get_node_data(key)

    def engine_names(self, names: Mapping[str, Sequence[str]] | None = None) -> tuple[str, ...]:
        """The engine names ``"<ntype>/<name>"`` of ``names`` (``{ntype:
        names}``; all node data when None), which the loaders gather with
        each batch (a typed part's: from their owners)."""
        if names is None:
            names = {nt: self.node_data_names(nt) for nt in self.node_types}
        return tuple(f"{nt}/{name}" for nt, ns in names.items() for name in ns)

    def _concat_edges(self, per_type: Mapping[EdgeTypeKey, Any], fill: Any, what: str, dtype: Any) -> torch.Tensor:
        """One tensor over the global edge ids from ``{etype: [E_r]}``;
        relations left out get ``fill``."""
        if not isinstance(per_type, Mapping):
            raise TypeError(f"'{what}' must be a dict of edge type -> tensor (got '{type(per_type).__name__}')")
        rels = self._relations_of_keys(list(per_type.keys()), what)
        parts: list[torch.Tensor | None] = [None] * self.num_relations
        for r, value in zip(rels, per_type.values()):
            if isinstance(value, np.ndarray):
                value = torch.from_numpy(value)
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"{what}[{self.edge_types[r]}] must be a tensor (got '{type(value).__name__}')")
            n = int(self.edge_offsets[r + 1] - self.edge_offsets[r])
            if value.dim() != 1 or value.numel() != n:
                raise ValueError(f"{what}[{self.edge_types[r]}] must have shape [{n}] (got {list(value.shape)})")
            parts[r] = value
        if dtype is None:  # weights: the widest float given
            dtype = torch.float64 if any(p is not None and p.dtype == torch.float64 for p in parts) else torch.float32
        out = []
        for r, p in enumerate(parts):
            if p is None:
                n = int(self.edge_offsets[r + 1] - self.edge_offsets[r])
                out.append(torch.full((n,), fill, dtype=dtype))
            else:
                out.append(p.to(dtype))
        return torch.cat(out) if out else torch.empty(0, dtype=dtype)

    def set_edge_weights(self, weights: Mapping[EdgeTypeKey, Any]) -> None:
        """Edge weights for biased sampling, per edge type (``[E_r]``, float
        or a bool mask); relations left out weigh 1, which samples them
        uniformly (per-relation sampling is independent)."""
        for et, value in weights.items() if isinstance(weights, Mapping) else ():
            if isinstance(value, torch.Tensor) and (
                value.is_complex() or not (value.is_floating_point() or value.dtype == torch.bool)
            ):
                raise TypeError(f"edge_weights[{et!r}] must be float or bool (got dtype {value.dtype})")
        self.graph.set_edge_weights(self._concat_edges(weights, 1.0, "edge_weights", None))

    def _time(self, value: Any, what: str) -> torch.Tensor:
        if isinstance(value, np.ndarray):
            value = torch.from_numpy(value)
        if not isinstance(value, torch.Tensor) or value.is_floating_point() or value.dtype == torch.bool:
            raise TypeError(f"{what} must be an integer tensor of times (got {getattr(value, 'dtype', type(value))})")
        return value.to(torch.int64)

    def set_node_time(self, times: Mapping[str, Any]) -> None:
        """Node times (int64 ``[N_t]`` per node type) for temporal sampling;
        the nodes of types left out are never filtered out."""
        if not isinstance(times, Mapping):
            raise TypeError(f"'node_time' must be a dict of node type -> tensor (got '{type(times).__name__}')")
        out = torch.full((self.num_nodes(),), NO_TIME, dtype=torch.int64)
        for ntype, value in times.items():
            t = self.ntype_index(ntype)
            value = self._time(value, f"node_time['{ntype}']")
            lo, hi = int(self.node_offsets[t]), int(self.node_offsets[t + 1])
            if value.dim() != 1 or value.numel() != hi - lo:
                raise ValueError(f"node_time['{ntype}'] must have shape [{hi - lo}] (got {list(value.shape)})")
            out[lo:hi] = value
        self.graph.set_node_time(out)

    def set_edge_time(self, times: Mapping[EdgeTypeKey, Any]) -> None:
        """Edge times (int64 ``[E_r]`` per edge type) for temporal sampling;
        the edges of relations left out are never filtered out."""
        if isinstance(times, Mapping):
            times = {et: self._time(v, f"edge_time[{et!r}]") for et, v in times.items()}
        self.graph.set_edge_time(self._concat_edges(times, NO_TIME, "edge_time", torch.int64))

    # -- lifetime ----------------------------------------------------------------

    def close(self) -> None:
        """Releases the engine graph (and the loaders open on it). Idempotent.
        A typed part's view releases nothing: the part is its caller's."""
        graph = getattr(self, "graph", None)
        if graph is not None and getattr(self, "part", None) is None:
            graph.close()

    def __reduce__(self):
        raise TypeError("a graphferry.HeteroGraph cannot be pickled: it holds a handle into this process's engine")

    def __repr__(self) -> str:
        if self.closed:
            return "HeteroGraph(closed)"
        nodes = {nt: self.num_nodes(nt) for nt in self.node_types}
        edges = {et: self.num_edges(et) for et in self.edge_types}
        return f"HeteroGraph(num_nodes={nodes}, num_edges={edges}, num_patches={self.graph.num_patches})"


_CONSTRUCTOR_TOKEN = object()

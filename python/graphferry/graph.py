"""graphferry.Graph: one engine graph handle (topology plus named node data)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import weakref
from typing import Any, Callable, Union

import numpy as np
import torch

from . import _interrupt
from ._metafile import warn_if_unverified
from ._native import lib as _lib
from ._native.dlpack import BorrowedTensor, ExportedTensor, borrow, ref_or_null, tensor_from_managed
from ._resource import Closeable

_EDGE_LAYOUTS = {"coo": _lib.GF_EDGES_COO, "csc": _lib.GF_EDGES_CSC}

__all__ = ["Graph", "convert_npy"]

TensorLike = Union[torch.Tensor, np.ndarray]
Partition = Union[str, TensorLike]


# The disk tier's CPU cache policies (Graph.open's cache_policy).
_CACHE_POLICIES = {"s3fifo": _lib.GF_CACHE_S3FIFO, "sieve": _lib.GF_CACHE_SIEVE, "lru": _lib.GF_CACHE_LRU}


def _graph_options(
    *,
    num_nodes: int | None = None,
    num_patches: int = 1,
    partition: Partition = "range",
    seed: int = 0,
    flags: int = 0,
    remove_duplicates: bool = False,
    remove_self_loops: bool = False,
) -> tuple[_lib.gf_graph_options, Any]:
    """Builds gf_graph_options; returns it and what must stay alive with it."""
    flags |= _lib.GF_GRAPH_REMOVE_DUPLICATES if remove_duplicates else 0
    flags |= _lib.GF_GRAPH_REMOVE_SELF_LOOPS if remove_self_loops else 0
    assignment = None
    if isinstance(partition, str):
        methods = {"range": _lib.GF_PARTITION_RANGE, "random": _lib.GF_PARTITION_RANDOM}
        if partition not in methods:
            raise ValueError(
                f"'partition' must be 'range', 'random' or a tensor of patch ids per node (got '{partition}')"
            )
        method = methods[partition]
    else:
        assignment = borrow(partition, "partition")
        method = _lib.GF_PARTITION_GIVEN
    opts = _lib.gf_graph_options(
        num_patches=_as_int(num_patches, "num_patches"),
        partition=method,
        seed=_as_int(seed, "seed") & 0xFFFFFFFFFFFFFFFF,
        assignment=ctypes.pointer(assignment.dltensor) if assignment is not None else None,
        num_nodes=0 if num_nodes is None else _as_int(num_nodes, "num_nodes"),
        flags=flags,
    )
    return opts, assignment


def _as_int(value: Any, name: str) -> int:
    # Only the Python type is checked; the library validates the value.
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_floating_point():
            return int(value.item())
        raise TypeError(f"'{name}' must be an int (got '{type(value).__name__}')")
    return int(value)


def _encode_name(name: Any, what: str = "name") -> bytes:
    if not isinstance(name, str):
        raise TypeError(f"'{what}' must be a str (got '{type(name).__name__}')")
    if "\0" in name:
        raise ValueError(f"'{what}' must not contain NUL characters (got {name!r})")
    return name.encode("utf-8")


def _int_list(values: Any, name: str) -> list[int]:
    """A sequence (or 1-D tensor) of ints as a list, each checked by
    :func:`_as_int`."""
    if isinstance(values, (torch.Tensor, np.ndarray)):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"'{name}' must be a sequence of ints (got '{type(values).__name__}')")
    out = [_as_int(v, f"{name}[{i}]") for i, v in enumerate(values)]
    if not out and name.endswith("offsets"):
        raise ValueError(f"'{name}' is empty (want at least 2 offsets)")
    return out


def _scalar(fn: Callable[..., Any], handle: Any, ctype: Any = ctypes.c_int64) -> int:
    """What ``fn(handle, &out)`` writes into a ``ctype``."""
    out = ctype()
    fn(handle, ctypes.byref(out))
    return out.value


def c_string(fn: Callable[[Any], Any]) -> str:
    """The C string ``fn(&out)`` hands over (``gf_free`` frees it)."""
    out = ctypes.c_void_p()
    fn(ctypes.byref(out))
    try:
        return ctypes.string_at(out.value).decode("utf-8") if out.value else ""
    finally:
        _lib.gf_free(out.value)


def _weights(weights: TensorLike) -> BorrowedTensor:
    """Borrows a weight tensor; a bool mask counts as weights 0/1."""
    borrowed = BorrowedTensor(weights, "weights")
    if borrowed.tensor.dtype == torch.bool:
        borrowed = BorrowedTensor(borrowed.tensor.to(torch.float32), "weights")
    return borrowed


class Graph(Closeable):
    r"""A graph held by the graphferry engine: its topology (in-neighbour CSC,
    split into patches) and named node data such as features and labels.

    Every node id that crosses this API is an ORIGINAL id (the caller's
    numbering). Make one with :meth:`from_csc`, :meth:`from_csr`,
    :meth:`from_coo`, :meth:`from_dgl`, :meth:`from_pyg` or :meth:`open`.
    Release it with :meth:`close` or a ``with`` block; loaders opened on it are
    closed first.

    .. code-block:: python

        import graphferry
        with graphferry.Graph.from_coo(src, dst) as g:
            g.set_node_data("feat", x)
            sub = graphferry.sample_neighbors(g, seeds, [10, 5])
    """

    def __init__(self, handle: int, *, _owner: object = None):
        if _owner is not _CONSTRUCTOR_TOKEN:
            raise TypeError(
                "graphferry.Graph cannot be constructed directly; use Graph.from_csc, "
                "from_coo, from_dgl, from_pyg or open"
            )
        self._handle: int | None = handle
        self._exit_stack = contextlib.ExitStack()  # its children's close (_add_child)
        #: Node data a conversion left out (:meth:`from_dgl`), for a dtype
        #: the engine does not carry: name -> what was left out.
        self.skipped_node_data: dict[str, Any] = {}

    # -- constructors ---------------------------------------------------------

    @classmethod
    def _make(cls, build: Callable[[Any], int]) -> Graph:
        out = ctypes.c_void_p()
        build(ctypes.byref(out))
        return cls(out.value, _owner=_CONSTRUCTOR_TOKEN)

    @classmethod
    def from_csc(
        cls,
        indptr: TensorLike,
        indices: TensorLike,
        *,
        edge_ids: TensorLike | None = None,
        num_nodes: int | None = None,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
        edge_weights: TensorLike | None = None,
    ) -> Graph:
        r"""Builds a graph from in-neighbour CSC arrays: the sources of the
        edges into node ``v`` are ``indices[indptr[v]:indptr[v+1]]``.

        Args:
            indptr (Tensor): int64 ``[N+1]`` (int32 is widened).
            indices (Tensor): int64 ``[E]``, each in ``[0, N)``.
            edge_ids (Tensor, optional): int64 ``[E]`` edge ids.
                (default: :obj:`None`, meaning ``0..E-1``)
            num_nodes (int, optional): ignored for CSC (``N`` is
                ``len(indptr) - 1``). (default: :obj:`None`)
            num_patches (int): number of patches. (default: :obj:`1`)
            partition (str or Tensor): ``"range"``, ``"random"`` or an int64
                tensor of patch ids per node. (default: :obj:`"range"`)
            seed (int): seed of ``"random"`` partitioning. (default: :obj:`0`)
            edge_weights (Tensor, optional): float32/float64 weight of each
                edge, indexed by EDGE ID, for biased sampling; passed to
                :meth:`set_edge_weights`. (default: :obj:`None`)
        """
        args = (indptr, indices, edge_ids, num_nodes, num_patches, partition, seed, edge_weights)
        return cls._from_compressed(_lib.gf_graph_from_csc, *args)

    @classmethod
    def from_csr(
        cls,
        indptr: TensorLike,
        indices: TensorLike,
        *,
        edge_ids: TensorLike | None = None,
        num_nodes: int | None = None,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
        edge_weights: TensorLike | None = None,
    ) -> Graph:
        r"""Builds a graph from out-neighbour CSR arrays: the destinations of
        the edges out of node ``u`` are ``indices[indptr[u]:indptr[u+1]]``.
        Edge ids default to CSR positions. Arguments as in :meth:`from_csc`.
        """
        args = (indptr, indices, edge_ids, num_nodes, num_patches, partition, seed, edge_weights)
        return cls._from_compressed(_lib.gf_graph_from_csr, *args)

    @classmethod
    def _from_compressed(
        cls, fn, indptr, indices, edge_ids, num_nodes, num_patches, partition, seed, edge_weights
    ) -> Graph:
        opts, keep = _graph_options(num_nodes=num_nodes, num_patches=num_patches, partition=partition, seed=seed)
        a, b, c = borrow(indptr, "indptr"), borrow(indices, "indices"), borrow(edge_ids, "edge_ids")
        graph = cls._make(lambda out: fn(a.ref, b.ref, ref_or_null(c), ctypes.byref(opts), out))
        return graph._with_weights(edge_weights)

    def _with_weights(self, edge_weights: TensorLike | None) -> Graph:
        """Sets ``edge_weights`` (if any) on a new graph, closing it on failure."""
        if edge_weights is not None:
            try:
                self.set_edge_weights(edge_weights)
            except BaseException:
                self.close()
                raise
        return self

    @classmethod
    def from_coo(
        cls,
        src: TensorLike,
        dst: TensorLike,
        *,
        num_nodes: int | None = None,
        remove_duplicates: bool = False,
        remove_self_loops: bool = False,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
        edge_weights: TensorLike | None = None,
    ) -> Graph:
        r"""Builds a graph from edge lists ``src[i] -> dst[i]``; edge ``i``
        gets id ``i``.

        Args:
            src (Tensor): int64 ``[E]`` source ids (int32 is widened).
            dst (Tensor): int64 ``[E]`` destination ids.
            num_nodes (int, optional): number of nodes.
                (default: :obj:`None`, meaning max id + 1)
            remove_duplicates (bool): keep only the first of equal
                ``(src, dst)`` pairs. (default: :obj:`False`)
            remove_self_loops (bool): drop edges ``v -> v``.
                (default: :obj:`False`)
            num_patches, partition, seed: as in :meth:`from_csc`.
            edge_weights (Tensor, optional): float32/float64 ``[E]``, the
                weight of edge ``i`` (``src[i] -> dst[i]``), for biased
                sampling (see :meth:`set_edge_weights`). (default: :obj:`None`)
        """
        opts, keep = _graph_options(
            num_nodes=num_nodes, num_patches=num_patches, partition=partition, seed=seed,
            remove_duplicates=remove_duplicates, remove_self_loops=remove_self_loops,
        )  # fmt: skip
        a, b = borrow(src, "src"), borrow(dst, "dst")
        graph = cls._make(lambda out: _lib.gf_graph_from_coo(a.ref, b.ref, ctypes.byref(opts), out))
        return graph._with_weights(edge_weights)

    @classmethod
    def from_arrow(
        cls,
        table: Any,
        *,
        num_nodes: int | None = None,
        remove_duplicates: bool = False,
        remove_self_loops: bool = False,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
    ) -> Graph:
        r"""Builds a graph from an edge table (a ``pyarrow.Table`` or
        ``RecordBatch`` with int64/int32 columns ``src`` and ``dst``, and an
        optional float ``weight``), passed through the Arrow C Data Interface;
        row ``i`` is edge ``i``. Other arguments as in :meth:`from_coo`.
        """
        import pyarrow as pa  # optional dependency

        if isinstance(table, pa.Table):
            batches = table.combine_chunks().to_batches()
            batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)
        elif isinstance(table, pa.RecordBatch):
            batch = table
        else:
            raise TypeError(f"expected a 'pyarrow.Table' or 'pyarrow.RecordBatch' (got '{type(table).__name__}')")
        opts, keep = _graph_options(
            num_nodes=num_nodes, num_patches=num_patches, partition=partition, seed=seed,
            remove_duplicates=remove_duplicates, remove_self_loops=remove_self_loops,
        )  # fmt: skip
        schema, array = _lib.ArrowSchema(), _lib.ArrowArray()
        batch._export_to_c(ctypes.addressof(array), ctypes.addressof(schema))
        try:
            return cls._make(
                lambda out: _lib.gf_graph_from_arrow(ctypes.byref(schema), ctypes.byref(array), ctypes.byref(opts), out)
            )
        finally:
            # On GF_OK graphferry has released both; on failure they are ours.
            _lib.arrow_release(array)
            _lib.arrow_release(schema)

    @classmethod
    def open(
        cls,
        path: str | os.PathLike,
        *,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
        verify: bool = False,
        memory_budget: int | None = None,
        feature_tier: str = "auto",
        cache_policy: str = "s3fifo",
        cache_bytes: int | None = None,
    ) -> Graph:
        r"""Opens a graph stored on disk (memory-mapped): a graphferry dataset
        directory (node data ``"feat"``, ``"label"``, ``"train_mask"``,
        ``"val_mask"``, ``"test_mask"`` when present) or an Arrow IPC file
        holding an edge table with columns ``src`` and ``dst``.

        For a dataset directory, ``memory_budget`` (bytes) says how much
        memory the graph may keep resident: the topology, the other node
        columns and the loaders' working memory stay resident, and
        ``feat.bin`` stays memory-mapped when it fits beside them, else it
        is read from disk with direct reads (``O_DIRECT``; io_uring where
        the kernel allows it, else a pool of pread workers, neighbouring
        rows coalesced) under a CPU cache of what the budget leaves.
        :attr:`memory_plan` and :meth:`memory_report` say what was decided.
        A budget below what opening holds is refused (:class:`MemoryError`).
        ``feature_tier`` forces ``"memory"`` or ``"disk"``; ``cache_policy``
        is the CPU cache's eviction policy (``"s3fifo"``, ``"sieve"`` or
        ``"lru"``) and ``cache_bytes`` its size (default: what the budget
        leaves; none without a budget).

        The sizes of a dataset's files, and the CRC-32C of its Arrow tables
        (read whole anyway), are compared with those recorded in its
        ``graphferry.json`` at every open, and each 256 KiB block of
        ``feat.bin`` (and of the typed arrays) is checked against its recorded
        CRC-32C the first time a gather reads it. With ``verify=True``
        (dataset directories only) every file is read whole and checked at
        open. A damaged or changed file raises an error naming it (and the
        block). Datasets written before checksums were recorded open either
        way (``python -m graphferry verify DIR`` says so); those without
        block checksums warn once.
        """
        flags = _lib.GF_GRAPH_VERIFY_CHECKSUMS if verify else 0
        opts, keep = _graph_options(num_patches=num_patches, partition=partition, seed=seed, flags=flags)
        tiers = {"auto": _lib.GF_TIER_AUTO, "memory": _lib.GF_TIER_MEMORY, "disk": _lib.GF_TIER_DISK}
        if feature_tier not in tiers:
            raise ValueError(f"'feature_tier' must be one of {sorted(tiers)} (got {feature_tier!r})")
        if cache_policy not in _CACHE_POLICIES:
            raise ValueError(f"'cache_policy' must be one of {sorted(_CACHE_POLICIES)} (got {cache_policy!r})")
        opts.memory_budget = 0 if memory_budget is None else _as_int(memory_budget, "memory_budget")
        opts.feature_tier = tiers[feature_tier]
        opts.cache_policy = _CACHE_POLICIES[cache_policy]
        opts.cache_bytes = 0 if cache_bytes is None else _as_int(cache_bytes, "cache_bytes")
        encoded = os.fsencode(path)
        out = ctypes.c_void_p()
        _interrupt.call(  # Ctrl-C stops a long open (see _interrupt)
            lambda: _lib.gf_graph_open(encoded, ctypes.byref(opts), ctypes.byref(out)),
            discard=lambda _: _lib.gf_graph_close(out.value),
        )
        graph = cls(out.value, _owner=_CONSTRUCTOR_TOKEN)
        if not verify:
            warn_if_unverified(path)
        return graph

    @classmethod
    def from_dgl(
        cls,
        g: Any,
        *,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
        edge_weights: None | str | TensorLike = None,
    ) -> Graph:
        r"""Converts a homogeneous :class:`dgl.DGLGraph` on the CPU. Its edge
        ids are DGL's, and every tensor in ``g.ndata`` becomes node data under
        the same name.

        A field whose dtype the engine does not carry (e.g. complex) is
        left out; :attr:`skipped_node_data` says which and why.

        Args:
            g (dgl.DGLGraph): the graph.
            num_patches, partition, seed: as in :meth:`from_csc`.
            edge_weights (str or Tensor, optional): the edge weights for
                biased sampling: the name of an ``g.edata`` field (as DGL's
                ``NeighborSampler(prob=...)``) or a tensor indexed by DGL edge
                id; a bool mask counts as weights 0/1 (see
                :meth:`set_edge_weights`). (default: :obj:`None`)
        """
        import dgl  # optional dependency

        if not isinstance(g, dgl.DGLGraph):
            raise TypeError(f"expected a 'dgl.DGLGraph' (got '{type(g).__name__}')")
        if not g.is_homogeneous:
            raise TypeError(
                f"expected a homogeneous dgl.DGLGraph (got node types {g.ntypes} and edge types {g.etypes})"
            )
        if g.device.type != "cpu":
            raise TypeError(
                f"expected a dgl.DGLGraph on the CPU; this version of graphferry is CPU-only "
                f"(got a graph on '{g.device}')"
            )
        if isinstance(edge_weights, str):
            if edge_weights not in g.edata:
                raise KeyError(
                    f"'edge_weights': the DGLGraph has no edata field '{edge_weights}' "
                    f"(it has {sorted(g.edata.keys())})"
                )
            edge_weights = g.edata[edge_weights]
        indptr, indices, eids = g.adj_tensors("csc")
        if eids is None or eids.numel() != indices.numel():
            eids = None
        graph = cls.from_csc(
            indptr,
            indices,
            edge_ids=eids,
            num_patches=num_patches,
            partition=partition,
            seed=seed,
            edge_weights=edge_weights,
        )
        try:
            for name, value in g.ndata.items():
                if not isinstance(value, torch.Tensor):
                    continue
                try:
                    graph.set_node_data(name, value)
                except TypeError:
                    # A dtype the engine does not carry (e.g. complex): that
                    # field is left out, not the whole graph.
                    graph.skipped_node_data[name] = _tensor_signature(value)
        except BaseException:
            graph.close()
            raise
        return graph

    @classmethod
    def from_pyg(
        cls,
        data: Any,
        *,
        num_patches: int = 1,
        partition: Partition = "range",
        seed: int = 0,
        edge_weights: None | str | TensorLike = None,
    ) -> Graph:
        r"""Converts a :class:`torch_geometric.data.Data` on the CPU.
        ``edge_index`` (row 0 = source, row 1 = target) gives the edges, edge
        ``i`` having id ``i`` (its column); every node-level tensor attribute
        (``x``, ``y``, masks, ...) becomes node data under its name.

        Args:
            data (torch_geometric.data.Data): the graph (without
                ``edge_index``, a graph without edges).
            num_patches, partition, seed: as in :meth:`from_csc`.
            edge_weights (str or Tensor, optional): the edge weights for
                biased sampling: the name of an edge attribute of ``data``
                (as PyG's ``weight_attr``, e.g. ``"edge_weight"``) or a
                ``[num_edges]`` tensor, one weight per column of
                ``edge_index`` (see :meth:`set_edge_weights`).
                (default: :obj:`None`)
        """
        from torch_geometric.data import Data  # optional dependency

        if not isinstance(data, Data):
            raise TypeError(f"expected a 'torch_geometric.data.Data' (got '{type(data).__name__}')")
        edge_index = getattr(data, "edge_index", None)
        if edge_index is None:  # no edges, as PyG's samplers read it
            edge_index = torch.empty(2, 0, dtype=torch.int64)
        if not isinstance(edge_index, torch.Tensor):
            raise TypeError(
                f"expected 'data.edge_index' to be a tensor of shape [2, num_edges] (got '{type(edge_index).__name__}')"
            )
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"expected 'data.edge_index' of shape [2, num_edges] (got {list(edge_index.shape)})")
        if isinstance(edge_weights, str):
            value = getattr(data, edge_weights, None)
            if not isinstance(value, torch.Tensor):
                raise KeyError(
                    f"'edge_weights': the Data has no tensor attribute '{edge_weights}' (got '{type(value).__name__}')"
                )
            edge_weights = value
        graph = cls.from_coo(
            edge_index[0],
            edge_index[1],
            num_nodes=data.num_nodes,
            num_patches=num_patches,
            partition=partition,
            seed=seed,
            edge_weights=edge_weights,
        )
        try:
            for name in pyg_node_attrs(data):
                graph.set_node_data(name, data[name])
        except BaseException:
            graph.close()
            raise
        return graph

    # -- properties ----------------------------------------------------------

    @property
    def handle(self) -> int | None:
        """The ``gf_graph *`` as an int, or None once closed."""
        return self._handle

    @property
    def closed(self) -> bool:
        return self._handle is None

    @property
    def num_nodes(self) -> int:
        return _scalar(_lib.gf_graph_num_nodes, self._handle)

    @property
    def num_edges(self) -> int:
        return _scalar(_lib.gf_graph_num_edges, self._handle)

    @property
    def num_patches(self) -> int:
        return _scalar(_lib.gf_graph_num_patches, self._handle, ctypes.c_int32)

    # -- node data -----------------------------------------------------------

    @property
    def memory_plan(self) -> dict[str, Any]:
        """What :meth:`open` decided about memory (``gf_graph_memory_plan``):
        ``feature_tier`` (``"memory"``: ``feat.bin`` memory-mapped, or
        ``"disk"``), the ``budget`` and the sizes in bytes it counted
        (``topology_bytes``, ``node_column_bytes``, ``sampling_bytes``: the
        resident part; ``feature_bytes``), and on the disk tier the CPU
        cache's ``cache_bytes`` and ``cache_policy`` and whether reads are
        ``direct`` and go through ``io_uring``."""
        out = _lib.gf_memory_plan()
        _lib.gf_graph_memory_plan(self.handle, ctypes.byref(out))
        policies = {v: k for k, v in _CACHE_POLICIES.items()}
        return {
            "feature_tier": "disk" if out.feature_tier == _lib.GF_TIER_DISK else "memory",
            "budget": int(out.budget),
            "num_nodes": int(out.num_nodes),
            "num_edges": int(out.num_edges),
            "topology_bytes": int(out.topology_bytes),
            "node_column_bytes": int(out.node_column_bytes),
            "sampling_bytes": int(out.sampling_bytes),
            "feature_bytes": int(out.feature_bytes),
            "cache_bytes": int(out.cache_bytes),
            "cache_policy": policies.get(int(out.cache_policy), str(out.cache_policy)),
            "direct": bool(out.direct),
            "io_uring": bool(out.io_uring),
        }

    def memory_report(self) -> str:
        """:attr:`memory_plan` in words (``gf_graph_memory_report``): the
        budget, the counts, what is resident, where features are read from
        and why."""
        return c_string(lambda out: _lib.gf_graph_memory_report(self.handle, out))

    def node_data_names(self) -> list[str]:
        """The names of the node data, sorted."""
        text = c_string(lambda out: _lib.gf_graph_node_data_names(self._handle, out))
        return text.split("\n") if text else []

    def set_node_data(self, name: str, tensor: TensorLike) -> None:
        r"""Stores ``tensor`` as node data ``name`` (row ``v`` = node ``v`` in
        original ids), replacing any entry of that name. The memory is shared
        with the engine (DLPack, no copy unless the engine renumbers); floating
        features keep their dtype (float32, float16, bfloat16, float64).
        """
        encoded = _encode_name(name)
        exported = ExportedTensor(tensor, "tensor")
        _lib.gf_graph_set_node_data(self._handle, encoded, exported.pointer)
        exported.consumed()

    def set_edge_data(self, name: str, tensor: TensorLike) -> None:
        r"""Stores ``tensor`` as edge data ``name``: row ``e`` is the edge
        whose id is ``e`` (DGL's ``g.edata``, PyG's ``edge_attr``), so it has
        one row per edge id. Edge loaders gather it for every batch's sampled
        edges, on the engine's threads. The memory is shared with the engine
        (DLPack, never copied: edge ids are not renumbered).
        """
        encoded = _encode_name(name)
        exported = ExportedTensor(tensor, "tensor")
        _lib.gf_graph_set_edge_data(self._handle, encoded, exported.pointer)
        exported.consumed()

    def edges(self, layout: str = "coo", *, relation: int = -1) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        r"""The graph's edges in one call (``gf_graph_edges``), int64:
        ``layout="coo"`` gives ``(src, dst, edge_ids)``, one entry per edge in
        increasing edge id order (for a graph built from a COO: the arrays it
        was built from); ``layout="csc"`` gives ``(indptr, indices,
        edge_ids)``, the in-neighbours of each node in id order. With
        ``relation`` (a typed graph's relation index), the edges of that
        relation in type-local node ids and relation-local edge ids."""
        if layout not in _EDGE_LAYOUTS:
            raise ValueError(f"'layout' must be 'coo' or 'csc' (got {layout!r})")
        first, second, eids = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        _lib.gf_graph_edges(
            self._handle,
            _EDGE_LAYOUTS[layout],
            _as_int(relation, "relation"),
            ctypes.byref(first),
            ctypes.byref(second),
            ctypes.byref(eids),
        )
        return tensor_from_managed(first.value), tensor_from_managed(second.value), tensor_from_managed(eids.value)

    def set_edge_weights(self, weights: TensorLike) -> None:
        r"""Sets the weight of every edge, for biased sampling
        (``biased=True`` of :func:`~graphferry.sample_neighbors`,
        :class:`~graphferry.Loader` and :func:`~graphferry.random_walk`):
        ``weights[e]`` is the weight of the edge whose id is ``e``. Replaces
        earlier weights; the engine copies them.

        Args:
            weights (Tensor): float32 or float64 ``[E]`` (at least one entry
                per edge id), finite and ``>= 0``; an edge of weight 0 is
                never sampled when sampling is biased. A bool tensor (an edge
                mask, as DGL's ``mask``) counts as weights 0/1.

        Raises:
            InvalidArgumentError: a wrong length, or a negative or non-finite
                weight.
            TypeMismatchError: another dtype.
            GraphferryError: (``GF_ESTATE``) loaders are open on the graph.
        """
        borrowed = _weights(weights)  # kept alive across the call
        _lib.gf_graph_set_edge_weights(self._handle, borrowed.ref)

    def set_source_weights(self, weights: TensorLike) -> None:
        r"""Sets per-node weights for biased sampling: every edge ``u -> v``
        gets the weight ``weights[u]`` of its source, stored beside the edge
        as DSP does, so that ``v``'s neighbour ``u`` is taken with probability
        ``weights[u] / sum(weights[w] for w in v's in-neighbours)``. Replaces
        earlier weights.

        Args:
            weights (Tensor): float32 or float64 ``[num_nodes]`` (or bool),
                finite and ``>= 0``, indexed by node id.

        Raises: as :meth:`set_edge_weights`.
        """
        borrowed = _weights(weights)  # kept alive across the call
        _lib.gf_graph_set_source_weights(self._handle, borrowed.ref)

    # -- typed (heterogeneous) graphs and times ---------------------------------

    def set_types(
        self,
        node_offsets: Any,
        edge_offsets: Any,
        relation_src_type: Any,
        relation_dst_type: Any,
    ) -> None:
        r"""Makes the graph typed (heterogeneous), replacing earlier types.

        The graph is one graph over a global id space (DGL's
        ``to_homogeneous`` numbering): node type ``t`` owns the original ids
        ``[node_offsets[t], node_offsets[t+1])``; relation ``r``, from nodes
        of type ``relation_src_type[r]`` to nodes of type
        ``relation_dst_type[r]``, owns the edge ids
        ``[edge_offsets[r], edge_offsets[r+1])``; every node's in-edges are
        grouped by relation in increasing order (an edge list given relation
        by relation, edge id = position, gives exactly that). The types are
        named by their index (a :class:`~graphferry.HeteroGraph` names them).

        Args:
            node_offsets (sequence of int): ``T+1`` values from 0 to
                ``num_nodes``.
            edge_offsets (sequence of int): ``R+1`` values from 0 to
                ``num_edges``.
            relation_src_type, relation_dst_type (sequence of int): ``R``
                node type indices each.

        Raises:
            InvalidArgumentError: offsets or types out of range, an edge
                whose end points' types are not its relation's, or in-edges
                not grouped by relation (the message names the node).
            GraphferryError: (``GF_ESTATE``) loaders are open on the graph.
        """
        nodes = _int_list(node_offsets, "node_offsets")
        edges = _int_list(edge_offsets, "edge_offsets")
        src = _int_list(relation_src_type, "relation_src_type")
        dst = _int_list(relation_dst_type, "relation_dst_type")
        num_rel = len(edges) - 1
        if len(src) != num_rel or len(dst) != num_rel:
            raise ValueError(
                f"relation_src_type and relation_dst_type need one entry per relation ({num_rel}); "
                f"got {len(src)} and {len(dst)}"
            )
        for name, values, bits in (
            ("node_offsets", nodes, 64),
            ("edge_offsets", edges, 64),
            ("relation_src_type", src, 32),
            ("relation_dst_type", dst, 32),
        ):
            for i, v in enumerate(values):
                if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
                    raise ValueError(f"'{name}[{i}]' = {v} does not fit in an int{bits}")
        node_array = (ctypes.c_int64 * max(len(nodes), 1))(*nodes)
        edge_array = (ctypes.c_int64 * max(len(edges), 1))(*edges)
        src_array = (ctypes.c_int32 * max(len(src), 1))(*src)
        dst_array = (ctypes.c_int32 * max(len(dst), 1))(*dst)
        _lib.gf_graph_set_types(
            self._handle,
            len(nodes) - 1,
            node_array,
            num_rel,
            edge_array,
            src_array,
            dst_array,
        )

    @property
    def num_types(self) -> tuple[int, int]:
        """``(number of node types, number of relations)``; ``(0, 0)`` for an
        untyped graph."""
        nt, nr = ctypes.c_int32(), ctypes.c_int32()
        _lib.gf_graph_num_types(self._handle, ctypes.byref(nt), ctypes.byref(nr))
        return nt.value, nr.value

    def set_node_time(self, time: TensorLike) -> None:
        """Sets the time of every node (int64 ``[num_nodes]``, by original
        id; copied) for temporal sampling (``temporal="node"``).

        Raises:
            InvalidArgumentError: a wrong length. TypeMismatchError: not int64.
            GraphferryError: (``GF_ESTATE``) loaders are open on the graph.
        """
        borrowed = BorrowedTensor(time, "time")
        _lib.gf_graph_set_node_time(self._handle, borrowed.ref)

    def set_edge_time(self, time: TensorLike) -> None:
        """Sets the time of every edge (int64, indexed by edge id: more
        entries than the largest edge id; copied) for temporal sampling
        (``temporal="edge"``). Raises as :meth:`set_node_time`."""
        borrowed = BorrowedTensor(time, "time")
        _lib.gf_graph_set_edge_time(self._handle, borrowed.ref)

    def get_node_data(self, name: str) -> torch.Tensor:
        """A copy of the node data ``name``, rows in original node order."""
        out = ctypes.c_void_p()
        _lib.gf_graph_get_node_data(self._handle, _encode_name(name), ctypes.byref(out))
        return tensor_from_managed(out.value)

    def _mask_index(self, name: str) -> torch.Tensor | None:
        if name not in self.node_data_names():
            return None
        return self.get_node_data(name).nonzero(as_tuple=False).view(-1)

    @property
    def train_idx(self) -> torch.Tensor | None:
        """int64 ids of the nodes in ``"train_mask"``, or None without one."""
        return self._mask_index("train_mask")

    @property
    def val_idx(self) -> torch.Tensor | None:
        """int64 ids of the nodes in ``"val_mask"``, or None without one."""
        return self._mask_index("val_mask")

    @property
    def test_idx(self) -> torch.Tensor | None:
        """int64 ids of the nodes in ``"test_mask"``, or None without one."""
        return self._mask_index("test_mask")

    # -- lifetime ------------------------------------------------------------

    def _free(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None and not _lib.in_forked_child():
            _lib.gf_graph_close(handle)

    def _add_child(self, child: Any) -> None:
        """Registers ``child.close`` to run before this graph is freed.

        A weak reference, so that the child can be collected before its graph.
        """
        ref = weakref.ref(child)

        def close_child() -> None:
            obj = ref()
            if obj is not None:
                obj.close()

        self._exit_stack.callback(close_child)

    def close(self) -> None:
        """Closes loaders opened on this graph, then releases the graph.
        Idempotent."""
        try:  # not a stack callback: a bound method there is a reference cycle
            self._exit_stack.close()
        finally:
            self._free()

    def __reduce__(self):
        raise TypeError(
            "a graphferry.Graph cannot be pickled or sent to another process: it is a handle "
            "into this process's engine (and graphferry does not run in forked workers)"
        )

    def __repr__(self) -> str:
        if self._handle is None:
            return "Graph(closed)"
        return (
            f"Graph(num_nodes={self.num_nodes}, num_edges={self.num_edges}, "
            f"num_patches={self.num_patches}, node_data={self.node_data_names()})"
        )


_CONSTRUCTOR_TOKEN = object()


def _tensor_signature(tensor: torch.Tensor) -> tuple:
    """Which tensor, in which version (as graphferry._cache compares them)."""
    return (tensor.data_ptr(), tuple(tensor.shape), str(tensor.dtype), tensor._version)


def pyg_node_attrs(data: Any) -> list[str]:
    """The node-level tensor attributes of a PyG ``Data`` (x, y, masks, ...)."""
    names = []
    for key in data.node_attrs():
        if key == "edge_index":
            continue
        value = data[key]
        if isinstance(value, torch.Tensor) and value.dim() >= 1:
            names.append(key)
    return sorted(names)


def convert_npy(src_dir: str | os.PathLike, dst_dir: str | os.PathLike, *, overwrite: bool = False) -> None:
    """Converts a dataset in the ``.npy`` layout (``indptr.npy``,
    ``indices.npy``, optional ``feat.npy``, ``label.npy``, ``train_idx.npy``,
    ``val_idx.npy``, ``test_idx.npy``, ``meta.json``) in ``src_dir`` into a
    graphferry dataset directory ``dst_dir`` (created if missing), which
    :meth:`Graph.open` reads. ``dst_dir`` must be empty or new, and not
    ``src_dir``, inside or above it, unless ``overwrite`` (its dataset files
    are replaced, nothing else)."""
    src, dst, opts = os.fsencode(src_dir), os.fsencode(dst_dir), _lib.gf_output_options(overwrite=bool(overwrite))
    # Ctrl-C stops it; the call removes what it wrote (waited for).
    _interrupt.call(lambda: _lib.gf_dataset_convert_npy_into(src, dst, ctypes.byref(opts)), give_up_s=None)


def write_csc(path: str | os.PathLike) -> None:
    """Adds the CSC files of the graphferry dataset at ``path``
    (``csc_indptr.bin``, ``csc_indices.bin``, ``csc_edge_ids.bin`` when edge
    ids are not CSC positions; ``gf_dataset_write_csc``): :meth:`Graph.open`
    then maps them read-only instead of building the graph from
    ``edges.arrow``, so a topology larger than memory stays usable (one
    patch, range partitioning; :attr:`Graph.memory_plan` reports it as
    mapped). Writing them needs the memory of a normal open."""
    _lib.gf_dataset_write_csc(os.fsencode(path))


#: The presets of :func:`generate` (engine/gen/preset.go), each with what it
#: writes and its size on disk; ``graphferry generate --help`` prints them.
PRESETS = {
    "tiny": "1,024 nodes, 12K edges, 16 features, 8 classes (0.1 MB)",
    "small": "65,536 nodes, 1.8M edges, 64 features, 16 classes (21 MB)",
    "products-like": "ogbn-products' size: 2.45M nodes, 120M edges, 100 features, 47 classes (1.5 GB)",
    "papers-like": "4M nodes, 100M edges, 128 features, 172 classes (2.5 GB)",
    "disk-small": "8M nodes, 32M edges, 128 features, topology as CSC files (4.4 GB)",
    "papers100M-like": "ogbn-papers100M's shape: 111M nodes, 1.6B edges, 128 features, CSC files (over 57 GB)",
    "hetero-tiny": "typed, ogbn-mag's types and relations: 947 nodes, 13K edges (0.2 MB)",
    "hetero-small": "typed, ogbn-mag / 16: 121K nodes, 2.3M edges (65 MB)",
    "mag-like": "typed, ogbn-mag's counts: 1.94M nodes, 40M edges (about 1 GB)",
}


def generate(
    preset: str, path: str | os.PathLike, *, seed: int = 0, num_threads: int = 0, overwrite: bool = False
) -> None:
    r"""Writes a synthetic dataset directory that :meth:`Graph.open` reads:
    an R-MAT (Kronecker) power-law graph with the Graph500 probabilities
    (one per relation for the typed presets), stored in both directions,
    random features (node data ``"feat"``),
    learnable labels (``"label"``) and a train/val/test split (masks),
    generated by the engine in parallel and reproducible from ``seed``.

    Args:
        preset (str): one of :data:`PRESETS` (what each writes and its size
            on disk). The typed presets have ogbn-mag's node types (author,
            field_of_study, institution, paper) and relations
            (affiliated_with, writes, cites stored both ways, has_topic, with
            ``rev_`` reverses); a typed dataset's ``graphferry.json`` lists
            ``"node_types"`` and ``"edge_types"`` (in global id order); its
            node data per type is named ``"<type>/<name>"`` (``"paper/feat"``,
            ``"paper/label"``, ``"paper/train_mask"``, ...) with one row per
            node of the type; ``"time"`` holds node timestamps (paper years)
            by global id, and the graph's edge timestamps are set on opening.
            ``disk-small`` and ``papers100M-like`` are written in bounded
            memory, the topology as CSC files that :meth:`Graph.open` maps (no
            ``edges.arrow``; graphs larger than memory).
        path (str): directory to write (created if missing).
        seed (int): ``0`` keeps the preset's own seed. (default: :obj:`0`)
        num_threads (int): ``<= 0`` uses every core; the output does not
            depend on it. (default: :obj:`0`)
        overwrite (bool): write into a ``path`` that is not empty (its
            dataset files replaced, nothing else). (default: :obj:`False`)
    """
    if not isinstance(preset, str):
        raise TypeError(f"'preset' must be a str (got '{type(preset).__name__}')")
    seed, num_threads = _as_int(seed, "seed"), _as_int(num_threads, "num_threads")
    opts = _lib.gf_output_options(overwrite=bool(overwrite))
    _lib.gf_dataset_generate_into(preset.encode(), os.fsencode(path), seed, num_threads, ctypes.byref(opts))

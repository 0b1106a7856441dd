"""What graphferry's PyG subgraph loaders (:mod:`.shadow`,
:mod:`.graph_saint`, :mod:`.cluster`) share: :class:`SubgraphEpochs`, their
epochs on the engine's subgraph loader through the one iteration path; the
``Data``'s checked ``edge_index``; and :class:`HeldAttributes`: which of a
``Data``'s attributes the engine's subgraph loader gathers on its threads."""

from __future__ import annotations

from typing import Any

import torch
from torch_geometric.data import Data

from .._loader import EngineLoader, engine_edge_data, sync_edge_data, worker_threads
from .._transfer import pin_transfer
from ..graph import Graph
from .convert import as_graph

__all__ = ["check_edge_index", "HeldAttributes", "SubgraphEpochs", "in_process_kwargs"]


def in_process_kwargs(kwargs: dict) -> tuple[dict, int]:
    """The torch ``DataLoader`` keywords of a PyG subgraph loader (a torch
    ``DataLoader`` itself) as graphferry's runs them, and the engine's
    threads: ``num_workers > 0`` sets them (:func:`~graphferry._loader.worker_threads`),
    nothing is forked, so the worker-only keywords are dropped, as are
    ``dataset`` and ``collate_fn`` (PyG's GraphSAINT loaders drop them too)."""
    threads = worker_threads(kwargs.get("num_workers", 0))
    dropped = {"num_workers", "persistent_workers", "prefetch_factor", "worker_init_fn", "multiprocessing_context"}
    return {k: v for k, v in kwargs.items() if k not in dropped | {"dataset", "collate_fn"}}, threads


class SubgraphEpochs(EngineLoader):
    """Base of graphferry's PyG subgraph loaders (each also a torch
    ``DataLoader``, as PyG's are): every epoch runs on one engine subgraph
    loader (:meth:`_engine`, opened once and reopened only when the
    ``Data``'s attributes were replaced) through
    :class:`~graphferry._loader.EngineLoader`'s iteration, so that the
    batches are made ahead, ``state_dict``/``load_state_dict`` resume
    mid-epoch, ``pin_memory=True`` hands them over page-locked, Ctrl-C and
    a close from another thread end a waiting step, and ``stats()`` reports
    every stage. Loaders that keep torch's sampler's order (PyG's shuffle)
    give it to the engine as each epoch's order (:meth:`_epoch_order`).
    :meth:`close` stops the engine's threads; the next epoch reopens them."""

    _torch_order = True

    def _open_subgraphs(self, graph: Graph, items: torch.Tensor) -> None:
        """Opens the engine loader (:meth:`_engine`) over ``items`` with the
        torch ``DataLoader``'s ``pin_memory`` (read after its ``__init__``)."""
        self._open_engine(
            graph,
            items,
            None,
            opener=self._engine,
            transfer=pin_transfer(self.pin_memory, self.pin_memory_device),
            timeout=self.timeout,
        )

    def _engine(self, allocator: Any = None) -> Any:  # pragma: no cover - always overridden
        raise NotImplementedError

    def _before_epoch(self) -> None:
        """Reopens the engine loader when the ``Data``'s attributes were
        replaced (its node attributes reconverted, an edge attribute
        replaced)."""
        graph = as_graph(self.data)
        if graph is not self.graph or self._held.replaced():
            self.release_idle()
            self.graph = self._graph = graph

    def _epoch_order(self) -> torch.Tensor | None:
        """torch's order of the items, drawn as torch's ``DataLoader``
        iteration draws it (its iterator's base seed, then the sampler's
        order), so that ``torch.manual_seed`` gives PyG's batches."""
        if not self._torch_order:
            return None
        torch.empty((), dtype=torch.int64).random_(generator=self.generator)
        return torch.as_tensor(list(self.sampler), dtype=torch.int64)

    @property
    def _loader(self) -> Any:
        """The engine loader of the latest epoch."""
        return getattr(self, "_last_loader", None)

    def close(self) -> None:
        """Stops the engine's threads of this loader; the next epoch
        restarts them (an epoch being iterated raises on its next step)."""
        super().close()
        self._closed = False


class HeldAttributes:
    """The tensor attributes of a ``Data`` with one row per node or per
    edge, and those of them the engine graph (the ``Data`` converted as
    PyG's ``NeighborLoader`` converts it: its node attributes are node
    data) gathers for a subgraph loader's batches: node attributes it
    holds, edge attributes handed to it (:func:`sync_edge_data`). A batch
    takes the engine's rows while the ``Data`` holds the same tensors, and
    indexes the attribute itself otherwise (replaced since, or a dtype the
    engine does not carry)."""

    def __init__(self, data: Any, graph: Graph, num_nodes: int, num_edges: int):
        self.data, self.graph, self.num_nodes, self.num_edges = data, graph, num_nodes, num_edges
        held = set(graph.node_data_names())
        self.node_names = [key for key, _ in self.attrs(num_nodes) if key in held]
        self.edge_names = sync_edge_data(graph, dict(self.attrs(num_edges)))

    def attrs(self, rows: int) -> list[tuple[str, torch.Tensor]]:
        """The ``Data``'s tensor attributes with ``rows`` rows (but the
        topology)."""
        return [
            (key, item)
            for key, item in self.data
            if key not in ("edge_index", "num_nodes")
            and isinstance(item, torch.Tensor)
            and item.dim() > 0
            and item.size(0) == rows
        ]

    def replaced(self) -> bool:
        """Whether an edge attribute handed to the engine was replaced."""
        return not all(engine_edge_data(self.graph, k, self.data[k]) for k in self.edge_names)

    def rows(self, key: str, item: torch.Tensor, sample: Any) -> torch.Tensor | None:
        """The rows of attribute ``key`` (``item``) for one engine batch
        ``sample`` (a :class:`~graphferry._subgraph.SubgraphSample`): the
        engine's, or indexed here; None for an attribute of neither
        level."""
        if item.dim() == 0:
            return None
        if item.size(0) == self.num_nodes:
            rows = sample.node_data.get(key)
            return rows if rows is not None else item[sample.nodes]
        if item.size(0) == self.num_edges:
            rows = sample.edge_data.get(key)
            if rows is None or not engine_edge_data(self.graph, key, item):
                rows = item[sample.edge_ids]
            return rows
        return None


def check_edge_index(data: Any, owner: str) -> torch.Tensor:
    """``data.edge_index`` of a ``Data`` on the CPU, checked."""
    if not isinstance(data, Data):
        raise TypeError(f"{owner} takes a 'torch_geometric.data.Data' (got '{type(data).__name__}')")
    edge_index = getattr(data, "edge_index", None)
    if edge_index is None:
        raise ValueError(
            f"{owner} needs 'data.edge_index' (an 'adj_t' SparseTensor needs torch_sparse, which graphferry "
            "does not use)"
        )
    if not isinstance(edge_index, torch.Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{owner}: 'data.edge_index' must be a tensor of shape [2, num_edges]")
    if edge_index.is_cuda:
        raise ValueError(f"{owner}: 'data.edge_index' must be on the CPU (as PyG's loaders require)")
    return edge_index

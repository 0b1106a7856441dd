"""graphferry as PyG's ``NeighborLoader``: :class:`NeighborLoader` runs the
engine's own pipeline (sampling and feature gathering on its threads) and
yields the ``Data`` (or ``HeteroData``) batches that
``torch_geometric.loader.NeighborLoader`` yields."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch_geometric.data import Data, FeatureStore, HeteroData
from torch_geometric.edge_index import EdgeIndex
from torch_geometric.loader.utils import filter_custom_store, filter_edge_store_, get_input_nodes, index_select
from torch_geometric.sampler import HeteroSamplerOutput, SamplerOutput
from torch_geometric.sampler import NeighborSampler as PyGNeighborSampler

from .._loader import EngineLoader, call_key, comm_timeout, loader_seed, torch_loader_kwargs, worker_threads
from .._native.dlpack import as_cpu_tensor
from .._transfer import pin_transfer
from ..distributed import PartGraph, _shared_seed
from ..graph import Graph, pyg_node_attrs
from ..hetero import HeteroGraph
from ..sampling import SampledSubgraph
from .base import (
    COO,
    Output,
    check_flags,
    check_transforms,
    check_weight_attr,
    device_choice,
    directional,
    finish,
    given_input_id,
    made,
    num_neighbors_list,
    sample,
    sample_options,
    sampling_settings,
    seed_times,
    split,
)
from .convert import check_data, check_node_rows, is_hetero, time_tensor
from .hetero import build_batch, input_nodes_of
from .neighbor_sampler import Sampler
from .stores import engine_graph, is_hetero_stores

__all__ = ["NeighborLoader"]


# The sampling settings a loader takes from a given ``neighbor_sampler``.
SAMPLER_SETTINGS = (
    "num_neighbors",
    "replace",
    "subgraph_type",
    "disjoint",
    "temporal_strategy",
    "time_attr",
    "weight_attr",
)


def settings_of_sampler(sampler: Any, data: Any) -> dict[str, Any]:
    """The sampling settings of PyG's ``neighbor_sampler`` argument: a
    :class:`graphferry.pyg.Sampler` of the same ``data`` (every setting,
    its seed included), or PyG's own ``NeighborSampler`` (its fan-outs,
    ``replace``, ``subgraph_type``, ``disjoint`` and ``temporal_strategy``;
    its times and weights are tensors, not attribute names: give
    ``time_attr``/``weight_attr`` to a graphferry sampler instead)."""
    if isinstance(sampler, Sampler):
        if sampler.data is not data:
            raise ValueError("'neighbor_sampler' samples another graph: make it over this loader's data")
        names = SAMPLER_SETTINGS + ("scheme", "layer_without_replacement", "exclude_edges", "seed")
        return {name: getattr(sampler, name) for name in names}
    if isinstance(sampler, PyGNeighborSampler):
        for name in ("node_time", "edge_time", "edge_weight"):
            if getattr(sampler, name, None) is not None:
                raise NotImplementedError(
                    f"a PyG NeighborSampler with {name} as 'neighbor_sampler': give the loader "
                    "time_attr/weight_attr (or a graphferry.pyg.Sampler) instead"
                )
        if getattr(sampler, "sample_direction", "forward") != "forward":
            raise NotImplementedError("a PyG NeighborSampler with sample_direction='backward' is not supported")
        return dict(
            num_neighbors=sampler.num_neighbors.values,
            replace=sampler.replace,
            subgraph_type=sampler.subgraph_type,
            disjoint=sampler.disjoint,
            temporal_strategy=sampler.temporal_strategy,
            time_attr=None,
            weight_attr=None,
        )
    raise TypeError(
        "'neighbor_sampler' must be a graphferry.pyg.Sampler or a torch_geometric.sampler.NeighborSampler "
        f"(got '{type(sampler).__name__}')"
    )


def check_comm_data(data: Any, subgraph_type: str) -> None:
    """What a loader with ``comm=`` samples: a :class:`graphferry.Graph` or
    :class:`graphferry.HeteroGraph` (opened with one patch per rank) or a
    rank's :class:`~graphferry.distributed.PartGraph`, directionally."""
    if not isinstance(data, (Graph, HeteroGraph)):
        raise NotImplementedError(
            "with comm=, 'data' must be a graphferry.Graph or HeteroGraph opened with num_patches=comm.size or a "
            f"graphferry.distributed.PartGraph (got '{type(data).__name__}')"
        )
    if subgraph_type != "directional":
        raise NotImplementedError(
            "with comm=, graphferry samples directional subgraphs only (bidirectional and induced ones need "
            "the whole topology in this process)"
        )


class NeighborLoader(EngineLoader):
    r"""A ``torch_geometric.loader.NeighborLoader`` backed by the graphferry
    engine's pipeline (sampling and feature gathering on its own threads).

    Yields ``torch_geometric.data.Data`` with the fields PyG's loader gives:
    every node-level attribute (``x``, ``y``, masks, NumPy arrays, ...)
    gathered for all sampled nodes, edge-level attributes indexed by
    ``e_id``, ``edge_index`` (local ids, row = source, col = target),
    ``n_id``, ``e_id``, ``batch_size``, ``num_sampled_nodes`` and
    ``num_sampled_edges`` (lists, per hop), ``input_id``, and with
    ``disjoint=True`` ``batch``. The seeds are the first ``batch_size``
    nodes. Like PyG's loaders, ``loader(index)`` samples one batch from the
    seeds at positions ``index`` of ``input_nodes``.

    Args:
        data (torch_geometric.data.Data, graphferry.Graph or tuple): the
            graph; a ``Data`` is converted once and cached. Or, as PyG's
            remote backends, a ``(FeatureStore, GraphStore)`` pair: the
            graph of the ``GraphStore`` is sampled (a :class:`GraphStore`
            directly, any other converted once) and the node features are
            read from the ``FeatureStore``; ``input_nodes`` is then needed
            as in PyG (here, None means every node). A ``GraphStore`` of
            typed edges gives ``HeteroData`` batches (node types: the
            FeatureStore's groups, then those only edge types name; a type's
            count from its edges' ``size``, else its FeatureStore rows, else
            its largest id; no edge attributes, as PyG's stores). With a
            pair, ``time_attr`` names the FeatureStore's times, as PyG reads
            them: per node type (node times) or per edge type (edge times),
            or, homogeneous, one tensor: node times when it has a row per
            node, else edge times (in the GraphStore's edge order).
        num_neighbors (list of int): neighbours per hop from the seeds.
        input_nodes (Tensor, optional): seed node ids, or a bool mask.
            (default: :obj:`None`, all nodes)
        batch_size (int): seeds per batch. (default: :obj:`1`)
        shuffle (bool): reshuffle the seeds every epoch. (default: :obj:`False`)
        drop_last (bool): drop the last, smaller batch. (default: :obj:`False`)
        replace (bool): sample with replacement. (default: :obj:`False`)
        subgraph_type (str): ``"directional"``, ``"bidirectional"`` or
            ``"induced"``, as in :class:`Sampler`. (default:
            :obj:`"directional"`)
        disjoint (bool): each seed its own subgraph, as in :class:`Sampler`
            (a seed may repeat in ``input_nodes``). (default: :obj:`False`)
        directed (bool): PyG's deprecated spelling: ``False`` is
            ``subgraph_type="induced"``. (default: :obj:`True`)
        time_attr (str, optional): temporal sampling, as in :class:`Sampler`:
            the node or edge attribute of ``data`` holding integer times.
            Makes the sampling disjoint. (default: :obj:`None`)
        input_time (Tensor, optional): the time of each seed of
            ``input_nodes`` (one per seed, in their order); by default each
            seed's own node time (needed with edge times). The batch's
            ``seed_time`` holds them, as in PyG. (default: :obj:`None`)
        temporal_strategy (str): ``"uniform"`` or ``"last"``, as in
            :class:`Sampler`. (default: :obj:`"uniform"`)
        weight_attr (str, optional): the edge attribute of ``data`` holding
            edge weights, for biased sampling, as in :class:`Sampler`.
            (default: :obj:`None`)
        scheme, layer_without_replacement, exclude_edges: as in
            :class:`Sampler` (defaults: ``"node"``, False, None).
        seed (int, optional): seed of shuffling and sampling.
            (default: :obj:`None`, drawn from torch's generator)
        num_workers (int): torch's worker processes, here the engine's
            sampling threads (as ``num_threads``): no process is forked,
            graphferry samples and gathers on its own threads.
            (default: :obj:`0`, ``num_threads``)
        queue_capacity (int): batches buffered per pipeline stage.
            (default: :obj:`2`)
        num_threads (int): the engine's sampling threads; ``<= 0`` uses every
            core. (default: :obj:`0`)
        pin_memory (bool): torch's ``DataLoader`` argument, which PyG's
            loaders pass on: every batch comes out in page-locked memory, for
            asynchronous copies to a GPU (``batch.to(device,
            non_blocking=True)``, or :class:`graphferry.pyg.PrefetchLoader`,
            which also overlaps them with training). The engine writes the
            batch there itself (no copy): graphferry's host allocator takes
            page-locked memory from PyTorch; what the training thread
            derives from it (e.g. ``edge_index``) is pinned as torch does.
            Without CUDA, as torch, a warning and ordinary memory.
            (default: :obj:`False`)
        pin_memory_device (str): torch's; ``""`` or a CUDA device.
            (default: :obj:`""`)
        device (str or torch.device, optional): a CUDA device: batches come
            out on it. Mode 1 (the CPU engine into page-locked memory,
            copied on a side stream as :class:`graphferry.pyg.PrefetchLoader`
            does) unless ``sample_on="cuda"`` asks for mode 2 (the CUDA
            library samples and gathers there; device tensors through DLPack
            on PyTorch's current stream); see :mod:`graphferry._device`.
            ``self.mode`` says which.
            (default: :obj:`None`: batches on the CPU)
        sample_on (str, optional): with a CUDA ``device``, ``"cpu"`` (mode 1)
            or ``"cuda"`` (mode 2; needs ``GRAPHFERRY_BACKEND=cuda``, else
            :class:`graphferry.BackendError`). Mode 2 serves homogeneous
            ``Data`` without temporal or disjoint sampling.
            (default: :obj:`None`: mode 1)
        transform (callable, optional): applied to every batch, as PyG's.
            (default: :obj:`None`)
        transform_sampler_output (callable, optional): applied to every
            sampler output (a ``SamplerOutput`` or ``HeteroSamplerOutput``
            whose ``metadata`` is ``(input_id, seed_time)``) before the batch
            is made of it, as PyG applies it. (default: :obj:`None`)
        is_sorted (bool): PyG's hint that ``edge_index`` is sorted by
            column; the engine converts the graph once either way, so it
            changes nothing. (default: :obj:`False`)
        filter_per_worker (bool, optional): where PyG joins the features
            (worker processes or the main one); graphferry has no workers and
            joins them on the engine's threads: checked and kept.
            (default: :obj:`None`)
        neighbor_sampler (optional): a :class:`graphferry.pyg.Sampler` over
            ``data`` or PyG's ``NeighborSampler`` (without times or
            weights) whose settings replace the sampling arguments, as in
            PyG. (default: :obj:`None`)
        custom_cls (optional): with a ``(FeatureStore, GraphStore)`` pair,
            the class of the batches, as PyG's. (default: :obj:`None`)
        input_id (Tensor, optional): the seeds' ids in the batches'
            ``input_id``, as PyG's ``NodeLoader``. (default: :obj:`None`)
        comm (graphferry.distributed.Communicator, optional): sample
            together with the other ranks, one rank per process, as
            :class:`graphferry.distributed.DistributedLoader` does: ``data``
            is then a :class:`graphferry.Graph` or
            :class:`graphferry.HeteroGraph` opened with
            ``num_patches=comm.size`` or this rank's
            :class:`graphferry.distributed.PartGraph` (a typed partition's
            gives ``HeteroData``, every type's node data fetched from the
            owners with each batch), ``input_nodes`` the
            seeds of the whole graph (the same on every rank), and each rank
            gets every ``comm.size``-th batch of the single-process epoch,
            the same ``Data`` (padded: see :mod:`graphferry.distributed`).
            Directional sampling, disjoint or not, and temporal over the
            graph's times (a rank's part once given them:
            ``PartGraph.set_node_time``; bidirectional and induced subgraphs
            need the whole topology in this process); ``seed=None``
            takes rank 0's draw. Torch's ``timeout`` (seconds, or a
            ``datetime.timedelta``) then bounds each exchange (0: the
            communicator's own). (default: :obj:`None`)
        **kwargs: torch ``DataLoader`` arguments, as PyG passes them on:
            ``generator`` seeds the shuffles when ``seed`` is not given;
            ``timeout`` bounds the wait for each batch (RuntimeError, the
            epoch goes on; 0: none); ``persistent_workers``,
            ``prefetch_factor``, ``multiprocessing_context`` and
            ``in_order`` only tune torch's workers and are ignored
            (``worker_init_fn`` must be None: there is no worker process to
            call it in); ``sampler`` and ``batch_sampler`` are refused.

    With a ``HeteroData`` (or a :class:`graphferry.HeteroGraph`) as
    ``data`` it yields ``HeteroData`` batches as PyG's heterogeneous
    ``NeighborLoader`` does: per node type every node attribute gathered,
    ``n_id`` and ``num_sampled_nodes`` (per hop), per edge type
    ``edge_index`` (row: positions among the source type's nodes, col: among
    the destination type's), edge attributes, ``e_id`` and
    ``num_sampled_edges``, and on the input type ``input_id``,
    ``batch_size`` (and ``seed_time``); ``batch`` per node type when
    disjoint. Then ``num_neighbors`` is a list (every edge type) or a dict
    of edge type -> list (every edge type given), ``input_nodes`` a node
    type or ``(node_type, ids or bool mask)``, ``time_attr`` may name node
    attributes of several node types (types without it are never filtered
    out) or edge attributes, and ``exclude_edges`` is a dict of edge type
    -> edge ids of that type (or global ids). One class for both, as PyG's
    ``NeighborLoader``: it branches on ``data``.
    """

    def __init__(
        self,
        data: Any,
        num_neighbors: Sequence[int],
        input_nodes: Any = None,
        input_time: Any = None,
        replace: bool = False,
        subgraph_type: Any = "directional",
        disjoint: bool = False,
        temporal_strategy: str = "uniform",
        time_attr: str | None = None,
        weight_attr: str | None = None,
        transform: Callable | None = None,
        transform_sampler_output: Callable | None = None,
        is_sorted: bool = False,
        filter_per_worker: bool | None = None,
        neighbor_sampler: Any = None,
        directed: bool = True,
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        scheme: str = "node",
        layer_without_replacement: bool = False,
        exclude_edges: Any = None,
        seed: int | None = None,
        num_workers: int = 0,
        queue_capacity: int = 2,
        num_threads: int = 0,
        custom_cls: Any = None,
        input_id: Any = None,
        pin_memory: bool = False,
        pin_memory_device: str = "",
        device: Any = None,
        sample_on: str | None = None,
        comm: Any = None,
        **kwargs: Any,
    ):
        self._loaders = []
        timeout = kwargs.get("timeout", 0)
        num_threads = worker_threads(num_workers, num_threads)
        transfer = pin_transfer(pin_memory, pin_memory_device)
        generator = torch_loader_kwargs(kwargs, type(self).__name__)
        self.transform, self.transform_sampler_output = check_transforms(transform, transform_sampler_output)
        self.is_sorted, self.filter_per_worker = check_flags(is_sorted, filter_per_worker)
        self.custom_cls = custom_cls
        if neighbor_sampler is not None:
            # As PyG: the given sampler's settings replace the loader's.
            given = settings_of_sampler(neighbor_sampler, data)
            num_neighbors, replace, directed = given["num_neighbors"], given["replace"], True
            subgraph_type, disjoint = given["subgraph_type"], given["disjoint"]
            time_attr, temporal_strategy = given["time_attr"], given["temporal_strategy"]
            weight_attr, exclude_edges = given["weight_attr"], given.get("exclude_edges", exclude_edges)
            scheme = given.get("scheme", scheme)
            layer_without_replacement = given.get("layer_without_replacement", layer_without_replacement)
            seed = given.get("seed") if seed is None else seed
        self.neighbor_sampler = neighbor_sampler
        check_data(data)
        self.data = data
        self.comm = comm
        per_type = is_hetero(data) or is_hetero_stores(data)
        self.num_neighbors = num_neighbors if per_type else num_neighbors_list(num_neighbors)
        if input_time is not None and time_attr is None:
            raise ValueError("'input_time' is given but 'time_attr' is not: temporal sampling needs both")
        self.subgraph_type, self._temporal, self.temporal_strategy, self.disjoint = sampling_settings(
            data, subgraph_type, directed, disjoint, time_attr, temporal_strategy
        )
        if comm is not None:
            check_comm_data(data, self.subgraph_type)
        self.time_attr = time_attr
        self.batch_size = batch_size
        self.weight_attr = check_weight_attr(weight_attr)
        self._stores: tuple[FeatureStore, Any] | None = data if isinstance(data, tuple) else None
        self._node_attrs: list[str] = []
        self._other_node_attrs: list[str] = []
        self._graph_node_data: dict[str, torch.Tensor] = {}
        self._input_time = (
            None if input_time is None else time_tensor(as_cpu_tensor(input_time, "input_time"), "'input_time'")
        )
        if isinstance(data, Data):
            check_node_rows(data)
        graph, self._hetero, self._edge_perm = engine_graph(data, self.weight_attr, time_attr)
        seeds = self._seeds_per_type(data, input_nodes) if per_type else self._seeds_of(data, graph, input_nodes)
        if input_id is not None and input_nodes is not None:  # NodeLoader's: the seeds' own ids
            self._input_id = given_input_id(input_id, seeds.numel())
        if comm is not None and seed is None:  # the same on every rank
            seed = _shared_seed(comm, int(loader_seed(None, generator=generator)))
        self._seed = int(loader_seed(seed, generator=generator))
        self._calls = 0
        options = sample_options(
            self._hetero,
            self.num_neighbors,
            replace=replace,
            biased=self.weight_attr is not None,
            scheme=scheme,
            layer_without_replacement=layer_without_replacement,
            exclude_edges=exclude_edges,
            disjoint=self.disjoint,
            temporal=self._temporal,
            temporal_strategy=self.temporal_strategy,
            seed=self._seed,
            num_threads=num_threads,
        )
        choice = device_choice(self, device, sample_on, transfer)
        if "device" in choice and comm is not None:
            raise NotImplementedError("sampling on the GPU (mode 2) serves single-process loaders: not comm=")
        self._open_engine(
            graph,
            seeds,
            options,
            batch_size=batch_size,
            shuffle=shuffle,
            drop_last=drop_last,
            queue_capacity=queue_capacity,
            # Without stores, the engine gathers every node attribute it holds.
            feature_names=self._node_attrs if self._stores is None else (),
            seed_times=self._seed_times,
            **choice,
            # PyG's edge_index, made by the engine's threads, bidirectional or
            # induced as subgraph_type asks (a typed batch is split there, its
            # induced edges too; a device sampler makes its own batches; a
            # distributed loader's batches are built from their blocks).
            coo=COO[self.subgraph_type]
            if (self._hetero is None or self.subgraph_type == "induced") and "device" not in choice and comm is None
            else 0,
            comm=comm,
            comm_timeout=comm_timeout(comm, timeout),
            timeout=timeout,
        )

    def _seeds_of(self, data: Any, graph: Graph, input_nodes: Any) -> torch.Tensor:
        """The seeds of a homogeneous ``data``: a ``Data``, a
        :class:`graphferry.Graph` or a ``(FeatureStore, GraphStore)`` pair;
        with the node attributes to gather and the seeds' ``input_id`` and
        times."""
        if isinstance(data, tuple):
            index_of: Any = data
            if input_nodes is None:
                input_nodes = torch.arange(graph.num_nodes)
        else:
            if isinstance(data, Data):
                self._node_attrs = pyg_node_attrs(data)
                # Node attributes the engine does not hold (e.g. NumPy
                # arrays, memory maps): indexed per batch, as PyG's
                # filter_node_store_ indexes them.
                self._other_node_attrs = [
                    key
                    for key in data.keys()
                    if key not in self._node_attrs and (key == "num_nodes" or data._store.is_node_attr(key))
                ]
            else:
                self._node_attrs = graph.node_data_names()
            index_of = data if isinstance(data, Data) else Data(num_nodes=graph.num_nodes)
        # Seeds and input_id as PyG's own loaders make them (None: all nodes;
        # a bool mask: its nonzero ids, input_id the node ids; ids: input_id
        # the positions, left None here).
        if input_nodes is not None and not isinstance(input_nodes, torch.Tensor):
            input_nodes = as_cpu_tensor(input_nodes, "input_nodes")
        _, seeds, self._input_id = get_input_nodes(index_of, input_nodes)[:3]
        self._seed_times = seed_times(data, self._temporal, self.time_attr, self._input_time, seeds)
        return seeds

    def _seeds_per_type(self, data: Any, input_nodes: Any) -> torch.Tensor:
        """The seeds (global ids) of a ``HeteroData`` or
        :class:`graphferry.HeteroGraph`, ``input_nodes`` being ``(node type,
        ids or mask)``; with the input type and the seeds' ``input_id`` and
        times."""
        hetero = self._hetero
        if self._stores is None:
            # Every type's node data comes with each batch, gathered by the
            # engine (a typed part's from the owners).
            self._node_attrs = list(hetero.engine_names())
        self._input_type, local, self._input_id = input_nodes_of(hetero, input_nodes)
        self._seed_times = seed_times(data, self._temporal, self.time_attr, self._input_time, local, self._input_type)
        return hetero.to_global(self._input_type, local)

    def _next_key(self) -> int:
        self._calls += 1
        return call_key(self._calls)

    def _batch_index(self, index: Any) -> torch.Tensor:
        self._check_open()
        if not isinstance(index, torch.Tensor):
            index = torch.tensor(index, dtype=torch.long)
        return index

    def _seed_time_of(self, positions: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """(the times the engine samples with, the batch's ``seed_time`` as
        PyG sets it: ``input_time`` when given, else None)."""
        times = self._seed_times[positions] if self._seed_times is not None else None
        given = self._input_time[positions] if self._input_time is not None else None
        return times, given

    def __call__(self, index: Any) -> Data | HeteroData:
        """Samples one batch from the seeds at positions ``index`` of
        ``input_nodes`` (as PyG's ``NodeLoader.__call__``), in the caller's
        thread."""
        index = self._batch_index(index)
        if isinstance(self._graph, PartGraph):
            raise NotImplementedError(
                "loader(index) samples in this process, which holds only its part of the graph: iterate the loader"
            )
        seeds = self._seeds[index]
        input_id = self._input_id[index] if self._input_id is not None else index
        times, given = self._seed_time_of(index)
        per_type = self._hetero is not None
        out = sample(self._graph, seeds, self._options, self._next_key(), "directional", times, per_type=per_type)
        return self._batch(out, {}, input_id, given, self.subgraph_type)

    def _convert(self, sub: SampledSubgraph) -> Data | HeteroData:
        positions = sub.input_index
        input_id = self._input_id[positions] if self._input_id is not None else positions
        out, kind = made(sub, directional(sub, per_type=self._hetero is not None), self.subgraph_type)
        return self._batch(out, sub.node_data, input_id, self._seed_time_of(positions)[1], kind)

    def _batch(
        self,
        out: Output,
        node_data: dict[str, torch.Tensor],
        input_id: torch.Tensor,
        seed_time: torch.Tensor | None,
        subgraph_type: str,
    ) -> Data | HeteroData:
        """The batch of a sample ``out``, ``subgraph_type`` applied to it
        (``"directional"``: as it is): a ``HeteroData`` split by type, or a ``Data``; as PyG's
        ``NodeLoader.filter_fn``, ``transform_sampler_output`` is applied to
        the sampler's output before the batch is made of it, and
        ``transform`` to the batch."""
        if self._hetero is not None:
            output = self._sampler_output(split(self._hetero, out, subgraph_type))
            if self.transform_sampler_output is not None:
                nodes = dict(output.node)
                output.metadata = (input_id, seed_time)
                output = self._transformed(output, HeteroSamplerOutput)
                input_id, seed_time = output.metadata[:2]
                if any(output.node.get(nt) is not ids for nt, ids in nodes.items()):
                    node_data = {}  # the engine fetched the rows of other nodes
            data = build_batch(
                self.data,
                self._hetero,
                output,
                self._input_type,
                input_id,
                seed_time,
                self._edge_perm,
                self.custom_cls,
                rows=node_data,
            )
        else:
            out = finish(out, self._graph, subgraph_type)
            if self.transform_sampler_output is not None:
                given = self._transformed(out.to_pyg((input_id, seed_time)), SamplerOutput)
                if given.node is not out.node:  # the engine gathered the rows of other nodes
                    node_data = {}
                input_id, seed_time = given.metadata[:2]
                out = Output.of_pyg(given)
            data = self._build(out, node_data, input_id, seed_time)
        return data if self.transform is None else self.transform(data)

    def _sampler_output(self, output: HeteroSamplerOutput) -> HeteroSamplerOutput:
        """A heterogeneous batch's sampler output as this loader's sampler
        gives it (PyG's NeighborSampler's: as it is)."""
        return output

    def _transformed(self, output: Any, kind: type) -> Any:
        output = self.transform_sampler_output(output)
        if not isinstance(output, kind):
            # PyG's NodeLoader.filter_fn raises the same for an output it cannot join.
            raise TypeError(f"'{type(self).__name__}' found invalid type: '{type(output)}'")
        return output

    def _node_data_of_graph(self, name: str) -> torch.Tensor:
        # Read once: gathering in this thread needs the whole column.
        if name not in self._graph_node_data:
            self._graph_node_data[name] = self._graph.get_node_data(name)
        return self._graph_node_data[name]

    def _build(
        self,
        out: Output,
        node_data: dict[str, torch.Tensor],
        input_id: torch.Tensor,
        seed_time: torch.Tensor | None = None,
    ) -> Data:
        """The ``Data`` PyG's ``NodeLoader.filter_fn`` makes of ``out`` (a
        sample of a homogeneous graph, ``subgraph_type`` applied); node data
        the engine gathered is taken as it is."""
        node, row, col, edge = out.node, out.row, out.col, out.edge
        source = self.data
        if self._stores is not None:
            data = filter_custom_store(*self._stores, node, row, col, edge, self.custom_cls)
            if self._edge_perm is not None:
                edge = self._edge_perm[edge]
        elif isinstance(source, Data):
            # PyG's filter_data, except that the node attributes the engine
            # gathered are taken as they are rather than gathered again.
            data = copy.copy(source)
            for key in self._node_attrs + self._other_node_attrs:
                if key in node_data:
                    data[key] = node_data[key]
                elif key == "num_nodes":
                    data.num_nodes = node.numel()
                else:
                    value = source[key]
                    data[key] = index_select(value, node, dim=source.__cat_dim__(key, value))
            filter_edge_store_(source._store, data._store, row, col, edge)
        else:
            data = Data(num_nodes=node.numel())
            for key in self._node_attrs:
                data[key] = node_data[key] if key in node_data else self._node_data_of_graph(key)[node]
            # As PyG's filter_edge_store_: the targets (col) are sorted.
            index = out.index if out.index is not None else torch.stack([row, col])
            data.edge_index = EdgeIndex(index, sparse_size=data.size(), sort_order="col")
        data.n_id = node
        data.e_id = edge
        data.batch = out.batch  # None (no disjoint) removes it, as in PyG
        data.num_sampled_nodes = out.num_sampled_nodes
        data.num_sampled_edges = out.num_sampled_edges
        data.input_id = input_id
        data.seed_time = seed_time  # None (no input_time) removes it, as in PyG
        data.batch_size = int(input_id.numel())
        return data

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"

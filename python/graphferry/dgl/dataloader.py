"""graphferry's :class:`DataLoader`, in place of ``dgl.dataloading.DataLoader``:
the arguments every input shares (DGL's and torch's ``DataLoader``
arguments, the seed, ``use_ddp``) read once, then the batches made by the
kind of input it was given: node batches of a homogeneous graph
(:mod:`.node`), of a heterograph (:mod:`.hetero`), or edge batches
(:mod:`.edge`)."""

from __future__ import annotations

import re
from typing import Any

import dgl
import torch
import torch.distributed as dist
from dgl._ffi.base import is_tensor_adaptor_enabled

from .._device import choose_mode
from .._link import EdgeSample
from .._loader import EngineLoader, comm_timeout, loader_seed, torch_loader_kwargs, worker_threads
from .._transfer import dgl_transfer
from ..distributed import is_typed_part
from ..errors import GraphferryError, error_for_status
from ..hetero import HeteroGraph
from ..sampling import SampledSubgraph
from .blocks import move_batch, to_device
from .convert import is_hetero_input
from .edge import EdgeBatches, HeteroEdgeBatches, check_edge_comm, edge_settings, is_edge_sampler
from .hetero import HeteroBlocks
from .node import ClusterBatches, NodeBlocks, ShadowBatches, SubgraphBatches
from .saint import SaintBatches
from .sampler import sampler_settings

__all__ = ["DataLoader", "ddp_split"]


def check_loader_kwargs(kwargs: dict) -> Any:
    """Checks the DataLoader keywords graphferry does not use (every kind of
    input alike) and returns ``generator`` (or None): torch's and DGL's
    ``gpu_cache`` (its HugeCTR feature cache) are ignored; ``sampler``,
    ``batch_sampler`` and ``collate_fn`` refused, as DGL refuses them (its
    dataset is an IterableDataset with its own collate)."""
    generator = torch_loader_kwargs(
        kwargs,
        "graphferry.dgl.DataLoader",
        ignored=("gpu_cache",),
        refused=("sampler", "batch_sampler", "collate_fn"),
        why="it batches the seeds itself, as dgl.dataloading.DataLoader does",
    )
    if kwargs.get("pin_memory"):
        # DGL sets torch's pin_memory itself (to pin_prefetcher) and refuses it.
        raise TypeError(
            "graphferry.dgl.DataLoader got pin_memory=True: as in DGL, page-locked batches are "
            "pin_prefetcher's (on by default with device='cuda')"
        )
    return generator


def ddp_seeds(indices: torch.Tensor, drop_last: bool) -> torch.Tensor:
    """This rank's seeds under ``use_ddp=True``, split as DGL splits them:
    rank ``r`` of ``w`` takes the ``r``-th of ``w`` contiguous equal slices
    (``floor(n / w)`` seeds with ``drop_last``, else ``ceil(n / w)``), so
    every rank has the same number of batches. A short last slice is padded
    to that size; DGL pads it with repeats of the rank's own seeds, graphferry
    with the first seeds of the whole set (a batch's seeds must be
    distinct), as torch's DistributedSampler pads."""
    if not (dist.is_available() and dist.is_initialized()):
        raise RuntimeError(
            "use_ddp=True needs an initialised torch.distributed process group "
            "(torch.distributed.init_process_group), as DGL's DataLoader does"
        )
    return ddp_split(indices, dist.get_rank(), dist.get_world_size(), drop_last)


def ddp_split(indices: torch.Tensor, rank: int, world_size: int, drop_last: bool) -> torch.Tensor:
    """The seeds of ``rank`` among ``world_size`` ranks (see :func:`ddp_seeds`)."""
    n = len(indices)
    per_rank = n // world_size if drop_last else -(-n // world_size)
    lo, hi = rank * per_rank, (rank + 1) * per_rank
    local = indices[lo:hi]
    if len(local) < per_rank:
        local = torch.cat([local, indices[: per_rank - len(local)]])
    return local


_FANOUT_INDEX = re.compile(r"fanouts?\[(\d+)\]")


def user_order_error(err: GraphferryError, num_layers: int) -> GraphferryError:
    """``err`` with the engine's hop numbers (from the seeds) turned into
    the user's (DGL's ``fanouts[i]`` is ``blocks[i]``, the seeds' last)."""

    def flip(match: re.Match) -> str:
        return f"fanouts[{num_layers - 1 - int(match.group(1))}]"

    message = _FANOUT_INDEX.sub(flip, err.message)
    if message == err.message:
        return err
    return error_for_status(err.code, message + " (DGL order: fanouts[i] samples blocks[i])")


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

    One class for every input, as DGL's ``DataLoader``, branching on it:

    * a homogeneous graph and a node sampler: the batches above
      (:class:`~graphferry.dgl.node.NodeBlocks`);
    * a DGL heterograph or a :class:`graphferry.HeteroGraph` (or seeds
      ``{ntype: ids}``): heterogeneous blocks, every node and edge type
      (:class:`~graphferry.dgl.hetero.HeteroBlocks`);
    * DGL's ``ShaDowKHopSampler`` on a homogeneous graph: DGL's
      ``(input_nodes, output_nodes, subgraph)``, the engine's k-hop sample
      and the subgraph it induces, made ahead on the engine's threads
      (:class:`~graphferry.dgl.node.ShadowBatches`);
    * DGL's ``ClusterGCNSampler`` (seeds: partition ids): the subgraph the
      engine induces on the batch's partitions, made ahead on the engine's
      threads (:class:`~graphferry.dgl.node.ClusterBatches`);
    * DGL's ``SAINTSampler`` (modes ``'node'``, ``'edge'``, ``'walk'``;
      seeds: DGL's placeholders, one subgraph a batch): the nodes the
      engine draws as DGL's sampler defines the draw, and the subgraph it
      induces on them, made ahead on its threads, reproducible from
      ``seed`` (:class:`~graphferry.dgl.saint.SaintBatches`);
    * an edge prediction sampler (:func:`as_edge_prediction_sampler`, or
      DGL's) and seed EDGE ids (``{etype: eids}`` on a heterograph):
      ``(input_nodes, pair_graph, neg_pair_graph, blocks)``
      (:mod:`graphferry.dgl.edge`), and :meth:`sample` draws the batch of
      given seed edges.

    Node data replaced after the loader was made (``g.ndata["feat"] = h``)
    is served from the new tensor: each epoch hands the replaced tensors to
    the engine, and a batch whose tensor changed since serves it through
    DGL's lazy columns.

    Args:
        graph (dgl.DGLGraph or graphferry.Graph): the graph; a DGLGraph is
            converted once (its topology and node data) and cached.
        indices (Tensor or dict): ids of the seed nodes; on a heterograph
            ``{ntype: ids}`` (type-local ids, or a bool mask over the type; a
            tensor for a graph with a single node type); with an edge
            prediction sampler, the seed edge ids (``{etype: eids}`` on a
            heterograph).
        graph_sampler: a ``dgl.dataloading.NeighborSampler`` (its
            ``fanouts``, ``replace``, ``prob`` (or ``mask``), and prefetch
            lists are read), a ``dgl.dataloading.LaborSampler`` (LABOR-0:
            its ``fanouts``, ``layer_dependency`` and prefetch lists; ``prob``,
            ``importance_sampling`` other than 0 and ``batch_dependency``
            other than 1 raise ``NotImplementedError``) or a
            :class:`graphferry.dgl.NeighborSampler`.
            With ``prob`` the weights come from ``graph.edata[prob]`` (a
            ``graphferry.Graph`` must already have them).
        device (str or torch.device, optional): where outputs are moved. A
            CUDA device (``"cuda"``: the current one) takes the GPU data
            path: each batch, sampled and gathered on the CPU into
            page-locked memory, is copied to the device while the batch
            before it trains (see ``pin_prefetcher``,
            ``use_alternate_streams`` and ``use_prefetch_thread``); it needs
            no CUDA build of graphferry. (default: :obj:`None`, the graph's
            device: the CPU)
        use_ddp (bool): split the seeds (seed nodes, or seed edges with an
            edge prediction sampler) across the ``torch.distributed`` ranks
            as DGL does, the same number of batches on each.
            (default: :obj:`False`)
        ddp_seed (int): with ``use_ddp``, the seed of shuffling and sampling
            when ``seed`` is not given (the same on every rank).
            (default: :obj:`0`)
        comm (graphferry.distributed.Communicator, optional): sample
            across the ranks with the collective sampling primitive instead
            of splitting the seeds: ``graph`` must be a ``graphferry.Graph``
            or ``graphferry.HeteroGraph`` opened with
            ``num_patches=comm.size`` (or a rank's
            ``graphferry.distributed.PartGraph``; a typed partition's gives
            heterogeneous blocks, as a ``HeteroGraph``), and each rank gets every
            ``comm.size``-th batch of the single-process epoch, padded (see
            :mod:`graphferry.distributed`). Iterate one epoch at a time, to
            its end, on every rank. (default: :obj:`None`)
        timeout (float or datetime.timedelta): torch's "timeout for
            collecting a batch": a batch not ready within it raises
            RuntimeError (the epoch goes on); ``0``: no bound. With
            ``comm``, the bound on each exchange with the other ranks (a
            rank that does not answer within it is named; ``0``: the
            communicator's own, ``TorchComm(timeout=...)``). (default: :obj:`0`)
        batch_size (int): seeds per batch. (default: :obj:`1`)
        drop_last (bool): drop the last, smaller batch. (default: :obj:`False`)
        shuffle (bool): reshuffle the seeds every epoch. (default: :obj:`False`)
        use_prefetch_thread (bool, optional): accepted and kept as DGL
            keeps it; either way the copies of batch k+1 to a CUDA
            ``device`` are issued when batch k is handed over (no thread:
            the engine's threads sample and gather ahead). (default:
            :obj:`None`: True with a CUDA ``device``; True with another
            device raises ValueError, as in DGL)
        use_alternate_streams (bool, optional): with a CUDA ``device``, the
            copies run on a stream of their own while the previous batch
            trains; the training stream waits for them on an event, never
            the host. (default: :obj:`None`: True with a CUDA ``device``
            when DGL's TensorAdaptor is available, as in DGL; asked for
            without it, turned off with DGL's warning)
        pin_prefetcher (bool, optional): with a CUDA ``device``, the engine
            writes every batch (blocks, ids, node data, labels) into its
            page-locked pool, which the device copies asynchronously. (default: :obj:`None`: True with a CUDA
            ``device``; True with another device raises ValueError, as in
            DGL)
        gpu_cache: DGL's HugeCTR feature cache; accepted and ignored.
        use_uva (bool): with a CUDA ``device``, mode 2 with the graph in
            pinned host memory: the CUDA library samples and gathers on the
            GPU, its kernels reading the topology and every feature row in
            place (UVA), as DGL's UVA sampling reads a pinned graph. Needs
            ``GRAPHFERRY_BACKEND=cuda`` (else :class:`graphferry.BackendError`);
            with another device raises ValueError. (default: :obj:`False`)
        sample_on (str, optional): with a CUDA ``device``, ``"cpu"`` (mode 1:
            the CPU engine, copies to the device) or ``"cuda"`` (mode 2: the
            CUDA library samples and gathers on the device, batches arriving
            as device tensors through DLPack on PyTorch's current stream;
            needs ``GRAPHFERRY_BACKEND=cuda``, else
            :class:`graphferry.BackendError`). :obj:`None` is mode 1: the
            GPU samples only when asked (see :mod:`graphferry._device`);
            ``self.mode`` says which and why. Mode 2 serves homogeneous node loaders (node-wise sampling)
            in one process. (default: :obj:`None`)
        seed (int, optional): seed of shuffling and sampling.
            (default: :obj:`None`, drawn from torch's generator, or from
            ``generator`` when given)
        queue_capacity (int): batches buffered per pipeline stage.
            (default: :obj:`2`)
        num_threads (int): the engine's sampling threads; ``<= 0`` uses every
            core. (default: :obj:`0`)
        **kwargs: torch ``DataLoader`` arguments, as DGL passes them on:
            ``num_workers > 0`` sets the engine's sampling threads (as
            ``num_threads``): no worker process is forked, the engine
            samples and gathers on its own threads; ``generator`` seeds the shuffles when ``seed`` is not
            given; ``persistent_workers``, ``prefetch_factor``,
            ``multiprocessing_context`` and ``pin_memory_device`` only tune
            torch's workers and are ignored (``worker_init_fn`` must be None:
            there is no worker process to call it in),
            as is ``pin_memory=False`` (``pin_memory=True`` raises
            TypeError: DGL sets it to ``pin_prefetcher``); ``sampler``,
            ``batch_sampler`` and ``collate_fn`` are refused (as DGL's loader
            does its own batching).
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
        sample_on: str | None = None,
        **kwargs: Any,
    ):
        self._loaders = []
        self._blocks: NodeBlocks | HeteroBlocks | SubgraphBatches | None = None
        self._edges: EdgeBatches | None = None
        timeout = kwargs.get("timeout", 0)
        num_threads = worker_threads(kwargs.pop("num_workers", 0), num_threads)
        generator = check_loader_kwargs(kwargs)
        self.graph = graph
        self.indices = indices
        self.graph_sampler = graph_sampler
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.use_ddp = bool(use_ddp)
        self.ddp_seed = ddp_seed
        per_type = is_hetero_input(graph, indices)
        edges = is_edge_sampler(graph_sampler)
        # mode 2 only when asked (graphferry._device); decided first, so
        # that asking for it without the CUDA library says so
        self.mode = choose_mode(None if device is None else torch.device(device), sample_on=sample_on, use_uva=use_uva)
        # As DGL keeps them: resolved.
        self.device, settings, transfer = dgl_transfer(
            device,
            use_prefetch_thread=use_prefetch_thread,
            use_alternate_streams=use_alternate_streams,
            pin_prefetcher=pin_prefetcher,
            tensor_adaptor=is_tensor_adaptor_enabled(),
        )
        self.pin_prefetcher, self.use_prefetch_thread, self.use_alternate_streams = settings
        if self.mode.device is not None:
            dl = dgl.dataloading
            subgraphs = (dl.ClusterGCNSampler, dl.ShaDowKHopSampler, dl.SAINTSampler)
            refused = [
                ("heterographs", per_type),
                ("edge batches", edges),
                (type(graph_sampler).__name__, isinstance(graph_sampler, subgraphs)),
                ("comm=", comm is not None),
            ]
            what = next((what for what, given in refused if given), None)
            if what is not None:
                raise NotImplementedError(f"sampling on the GPU (mode 2) serves homogeneous node loaders: not {what}")
            transfer = None  # batches are made on the device
        self._transfer = transfer
        self._subgraphs: SubgraphBatches | None = None
        batching = dict(batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, queue_capacity=queue_capacity)
        one_by_one = {dgl.dataloading.ClusterGCNSampler: ClusterBatches, dgl.dataloading.SAINTSampler: SaintBatches}
        kind = next((k for s, k in one_by_one.items() if isinstance(graph_sampler, s)), None)
        if kind is not None:
            # One subgraph a batch (METIS partitions, GraphSAINT's draws):
            # the engine's subgraph loader makes them ahead.
            if per_type or comm is not None:
                raise NotImplementedError(
                    f"graphferry serves {type(graph_sampler).__name__} on a homogeneous graph in one process"
                )
            if int(batch_size) <= 0:
                raise ValueError(f"batch_size must be positive (got {batch_size})")
            batches = self._blocks = self._subgraphs = kind(graph, indices, graph_sampler)
            if self.use_ddp:
                batches.seeds = ddp_seeds(batches.seeds, drop_last)
            self.seed = loader_seed(seed, shared=ddp_seed if self.use_ddp else None, generator=generator)
            batches.prepare()
            batching["shuffle"] = shuffle and batches.shuffles
            seeds = batches.seeds
            self._open_engine(
                batches.graph,
                seeds,
                None,
                opener=lambda **memory: batches.engine_loader(seeds, self.seed, num_threads, **batching, **memory),
                transfer=transfer,
                timeout=timeout,
            )
            return
        if comm is not None and edges:
            check_edge_comm(graph, per_type, edge_settings(graph_sampler))
        elif comm is not None and per_type and not isinstance(graph, HeteroGraph) and not is_typed_part(graph):
            raise NotImplementedError(
                "with comm=, a heterograph is a graphferry.HeteroGraph opened with num_patches=comm.size "
                "or a rank's PartGraph of a typed partition (a DGL heterograph is converted for one process)"
            )
        # The seed is drawn (from torch's generator or the given one) once
        # the input is read: a loader that cannot be made draws nothing.
        shared = ddp_seed if self.use_ddp or comm is not None else None  # the same on every rank
        if edges:
            if int(batch_size) <= 0:  # the engine loader opens on first use: checked here
                raise ValueError(f"batch_size must be positive (got {batch_size})")
            batches = HeteroEdgeBatches if per_type else EdgeBatches
            edge_batches = self._edges = batches(graph, indices, edge_settings(graph_sampler))
            self.hetero_graph = getattr(edge_batches, "hetero_graph", None)
            if self.use_ddp and comm is None:  # this rank's seed edges, split as DGL splits them
                edge_batches.seeds = ddp_seeds(edge_batches.seeds, drop_last)
            self.seed = loader_seed(seed, shared=shared, generator=generator)
            options = edge_batches.options(self.seed, num_threads)
            # Opened on first use: a bad seed edge is reported when the
            # loader is iterated, as DGL reports it.
            self._open_engine(
                edge_batches.graph,
                edge_batches.seeds,
                options,
                opener=lambda **memory: edge_batches.engine_loader(
                    comm=comm, timeout=comm_timeout(comm, timeout), **batching, **memory
                ),
                eager=False,
                transfer=transfer,
                timeout=0 if comm is not None else timeout,
            )
            return
        self.settings = sampler_settings(graph_sampler)
        kind = HeteroBlocks if per_type else NodeBlocks
        if isinstance(graph_sampler, dgl.dataloading.ShaDowKHopSampler):  # (input_nodes, output_nodes, subgraph)
            if per_type:
                raise NotImplementedError("graphferry's ShaDowKHopSampler batches are for homogeneous graphs")
            kind = ShadowBatches
        blocks = self._blocks = kind(graph, indices, self.settings)
        self.hetero_graph = getattr(blocks, "hetero_graph", None)
        seeds = blocks.seeds
        if self.use_ddp and comm is None:
            seeds = ddp_seeds(seeds, drop_last)
        self.seed = loader_seed(seed, shared=shared, generator=generator)
        options = blocks.options(self.seed, num_threads)
        opener = None
        if isinstance(blocks, ShadowBatches) and comm is None:
            # the engine's ShaDow loader: the subgraphs made induced ahead
            opener = lambda **memory: blocks.engine_loader(seeds, options, **batching, **memory)  # noqa: E731
        try:
            self._open_engine(
                blocks.graph,
                seeds,
                options,
                **batching,
                feature_names=blocks.feature_names,
                label_names=blocks.label_names,
                comm=comm,
                comm_timeout=comm_timeout(comm, timeout),
                timeout=timeout,
                opener=opener,
                transfer=transfer,
                device=self.mode.device,
            )
        except GraphferryError as err:
            raise user_order_error(blocks.user_error(err), len(self.settings.fanouts)) from None

    def _before_epoch(self) -> None:
        if self._blocks is not None:
            self._blocks.before_epoch()

    def _convert(self, sub: SampledSubgraph | EdgeSample) -> tuple:
        batch = self._edges.convert(sub) if self._edges is not None else self._blocks.convert(sub)
        if self._transfer is not None or self.device.type == "cpu":
            return batch  # a CUDA device: copied by the prefetch step
        return to_device(batch, self.device)

    def _move(self, batch: tuple, device: torch.device) -> tuple:
        return move_batch(batch, device)

    def sample(self, eids: Any, key: int = 0) -> tuple:
        """With an edge prediction sampler: the batch of the seed edges
        ``eids`` (edge ids; ``{etype: ids}`` or global edge ids on a
        heterograph) under batch key ``key`` (what one step of an epoch
        yields, batch ``i`` of epoch ``e`` having key ``(e << 32) | i``),
        drawn in the caller's thread."""
        if self._edges is None:
            raise TypeError("DataLoader.sample draws the batch of given seed edges: give an edge prediction sampler")
        self._check_open()
        batch = self._edges.sample(eids, key=key)
        return batch if self.device.type == "cpu" else to_device(batch, self.device)

    def close(self) -> None:
        """Stops the engine's threads of this loader. Idempotent."""
        super().close()
        edges = getattr(self, "_edges", None)
        if edges is not None:
            edges.close()

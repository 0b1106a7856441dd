"""PyG's ``HGTLoader`` by the engine: the Heterogeneous Graph Transformer's
sampling (Hu et al., WWW 2020; PyG runs ``torch_sparse``'s ``hgt_sample``),
drawn by the engine's subgraph loader (``GF_SUBGRAPH_HGT``) ahead of the
training loop, on the one iteration path."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch_geometric.sampler import HeteroSamplerOutput

from .._loader import EngineLoader, loader_seed, torch_loader_kwargs, worker_threads
from .._subgraph import SubgraphLoader
from .._transfer import pin_transfer
from .base import check_flags, check_transforms
from .convert import as_hetero_graph, is_hetero
from .neighbor_loader import NeighborLoader

__all__ = ["HGTLoader"]


class HGTLoader(NeighborLoader):
    r"""PyG's ``HGTLoader`` (same arguments and ``HeteroData`` batches):
    around every batch of seeds, ``num_samples[node_type][h]`` nodes of each
    type drawn in hop ``h`` among the in-neighbours of the nodes sampled so
    far, by squared budget (engine/subload/hgt.go), then the subgraph they
    all induce (``torch_sparse`` keeps at most 50 in-edges of a destination
    there; this keeps them all). Every type's nodes in the order they were
    sampled (the seeds first), every edge type's edges by destination. The
    engine gathers every type's node attributes with the batch; ``n_id``,
    ``e_id``, ``input_id`` and ``batch_size`` as PyG's (no per-hop counts).

    Args:
        data (HeteroData or graphferry.HeteroGraph): the graph.
        num_samples (list of int or dict): nodes drawn per hop, for every
            node type (a list) or per node type (a dict; types left out
            draw none), every type the same number of hops.
        input_nodes (str or tuple): the seeds' node type, or ``(node type,
            ids or bool mask or None)``.
        is_sorted, transform, transform_sampler_output, filter_per_worker:
            as PyG's ``NodeLoader``.
        batch_size, shuffle, drop_last, seed, num_workers, pin_memory: as
            :class:`graphferry.pyg.NeighborLoader`'s (``num_workers`` sets
            the engine's threads), and so are the other keyword arguments.
    """

    def __init__(
        self,
        data: Any,
        num_samples: Any,
        input_nodes: Any,
        is_sorted: bool = False,
        transform: Callable | None = None,
        transform_sampler_output: Callable | None = None,
        filter_per_worker: bool | None = None,
        *,
        batch_size: int = 1,
        shuffle: bool = False,
        drop_last: bool = False,
        seed: int | None = None,
        num_workers: int = 0,
        queue_capacity: int = 2,
        num_threads: int = 0,
        pin_memory: bool = False,
        pin_memory_device: str = "",
        **kwargs: Any,
    ):
        self._loaders = []
        num_threads = worker_threads(num_workers, num_threads)
        transfer = pin_transfer(pin_memory, pin_memory_device)
        generator = torch_loader_kwargs(kwargs, type(self).__name__)
        self.transform, self.transform_sampler_output = check_transforms(transform, transform_sampler_output)
        self.is_sorted, self.filter_per_worker = check_flags(is_sorted, filter_per_worker)
        if not is_hetero(data):
            # PyG's HGTSampler refuses the same
            raise NotImplementedError(f"'{type(self).__name__}' does not support a data object of type {type(data)}")
        self.data, self.batch_size = data, batch_size
        self.custom_cls = self.comm = self.neighbor_sampler = self.time_attr = self._temporal = None
        self.subgraph_type, self.disjoint, self._stores, self._edge_perm = "directional", False, None, None
        self._input_time = None
        hetero = self._hetero = as_hetero_graph(data)
        seeds = self._seeds_per_type(data, input_nodes)
        self.num_samples = _num_samples(hetero.node_types, num_samples)
        table = torch.tensor(
            [[self.num_samples.get(nt, [0] * self._hops)[h] for nt in hetero.node_types] for h in range(self._hops)],
            dtype=torch.int64,
        )
        self._seed = int(loader_seed(seed, generator=generator))
        self._calls = 0
        args = dict(batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, queue_capacity=queue_capacity)

        def open_loader(allocator: Any = None) -> SubgraphLoader:
            return SubgraphLoader(
                hetero.graph,
                seeds,
                kind="hgt",
                num_samples=table,
                seed=self._seed,
                feature_names=self._node_attrs,
                num_threads=num_threads,
                allocator=allocator,
                **args,
            )

        EngineLoader._open_engine(self, hetero.graph, seeds, None, opener=open_loader, transfer=transfer)

    @property
    def _hops(self) -> int:
        return len(next(iter(self.num_samples.values()), []))

    def __call__(self, index: Any) -> Any:
        raise NotImplementedError(
            "graphferry's HGTLoader draws its batches on the engine's threads: iterate the loader "
            "(loader(index) is not offered)"
        )

    def _sampler_output(self, output: HeteroSamplerOutput) -> HeteroSamplerOutput:
        """PyG's HGTSampler's output: the types with nodes, the edge types
        with edges, no counts per hop."""
        keep = {et for et, ids in output.edge.items() if ids.numel()}
        return HeteroSamplerOutput(
            node={nt: ids for nt, ids in output.node.items() if ids.numel()},
            row={et: v for et, v in output.row.items() if et in keep},
            col={et: v for et, v in output.col.items() if et in keep},
            edge={et: v for et, v in output.edge.items() if et in keep},
            batch=None,
        )


def _num_samples(node_types: list[str], num_samples: Any) -> dict[str, list[int]]:
    """PyG's ``num_samples``: a list for every node type or a dict per
    node type, each type the same number of hops."""
    if isinstance(num_samples, (list, tuple)):
        num_samples = {nt: num_samples for nt in node_types}
    if not isinstance(num_samples, Mapping):
        raise TypeError(f"'num_samples' must be a list of ints or a dict of node type -> list (got {num_samples!r})")
    out = {}
    for nt, values in num_samples.items():
        if nt not in node_types:
            raise ValueError(f"'num_samples': unknown node type '{nt}' (node types: {node_types})")
        out[nt] = [int(v) for v in values]
    if len({len(v) for v in out.values()}) > 1:
        raise ValueError(
            "Number of hops must be the same across all node types in 'num_samples' (got "
            + ", ".join(f"'{nt}': {len(v)}" for nt, v in out.items())
            + ")"
        )
    return out

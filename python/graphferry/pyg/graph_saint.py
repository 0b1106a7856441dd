r"""PyG's GraphSAINT loaders (``torch_geometric.loader.GraphSAINTNodeSampler``,
``GraphSAINTEdgeSampler``, ``GraphSAINTRandomWalkSampler``) served by the
engine's subgraph loader: PyG's need ``torch_sparse`` (its ``SparseTensor``
and its walks), which graphferry does not use."""

from __future__ import annotations

import itertools
import os.path as osp
from typing import Any

import torch

from .._subgraph import SubgraphLoader, SubgraphSample
from ..sampling import random_seed
from .convert import as_graph
from .subgraph import HeldAttributes, SubgraphEpochs, check_edge_index, in_process_kwargs

# Added to the loader's seed for the normalisation estimate's draws, so
# that they are not the training epochs'.
_NORM_SEED = 0x6E6F726D

__all__ = ["GraphSAINTSampler", "GraphSAINTNodeSampler", "GraphSAINTEdgeSampler", "GraphSAINTRandomWalkSampler"]


class GraphSAINTSampler(SubgraphEpochs, torch.utils.data.DataLoader):
    r"""PyG's ``GraphSAINTSampler`` base class, by the engine: ``num_steps``
    batches an epoch, each the ``Data`` PyG's yields of a node set drawn as
    the subclass's PyG counterpart draws it: the subgraph the engine
    induces on it, its nodes in increasing id order, its edges sorted by
    source then target (PyG's ``SparseTensor`` order), every node- and
    edge-level tensor indexed to them, and with ``sample_coverage > 0``
    PyG's ``node_norm``/``edge_norm``. The engine's threads make the
    batches ahead of the training loop. The seed is drawn from torch's
    default generator when the loader is made (``torch.manual_seed`` before
    it makes its epochs reproducible).

    .. code-block:: python

        loader = graphferry.pyg.GraphSAINTRandomWalkSampler(data, batch_size=6000, walk_length=2,
                                                            num_steps=5, sample_coverage=100)
        for batch in loader:
            out = model(batch.x, batch.edge_index, batch.edge_norm * batch.edge_weight)
            loss = (F.nll_loss(out, batch.y, reduction="none") * batch.node_norm)[batch.train_mask].sum()

    Args:
        data (torch_geometric.data.Data): the graph, with ``edge_index`` on
            the CPU (no ``node_norm``/``edge_norm`` attribute).
        batch_size (int): the sampler's budget (roots, nodes or edges drawn;
            see the subclass).
        num_steps (int): subgraphs per epoch. (default: :obj:`1`)
        sample_coverage (int): with ``> 0``, the normalisation of PyG's
            (``node_norm``, ``edge_norm`` on every batch) estimated from
            subgraphs drawn until every node was sampled that many times on
            average. (default: :obj:`0`)
        save_dir (str, optional): where the normalisation is saved and
            read back, under PyG's file name. (default: :obj:`None`)
        log (bool): a progress bar while estimating it. (default: :obj:`True`)
        **kwargs: torch ``DataLoader`` arguments (``shuffle``,
            ``pin_memory``, ...). ``num_workers`` is accepted: nothing is
            forked (the engine's library must not cross a fork), the
            subgraphs are made in the calling process; the worker-only
            arguments are ignored.
    """

    _torch_order = False  # num_steps draws, in the engine's order

    def __init__(
        self,
        data: Any,
        batch_size: int,
        num_steps: int = 1,
        sample_coverage: int = 0,
        save_dir: str | None = None,
        log: bool = True,
        **kwargs: Any,
    ):
        kwargs, self.num_threads = in_process_kwargs(kwargs)
        edge_index = check_edge_index(data, type(self).__name__)
        for name in ("node_norm", "edge_norm"):
            if name in data:
                raise ValueError(f"{type(self).__name__}: the Data has '{name}' already (the loader sets it)")
        self.num_steps = num_steps
        self._batch_size = batch_size
        self.sample_coverage = sample_coverage
        self.save_dir = save_dir
        self.log = log
        self.N = int(data.num_nodes)
        self.E = int(edge_index.size(1))
        self.edge_index = edge_index
        self.row, self.col = edge_index[0].to(torch.int64), edge_index[1].to(torch.int64)
        self.data = data
        # The engine graph with the Data's node attributes (as PyG's
        # NeighborLoader converts it): the engine gathers them.
        self.graph = as_graph(data)
        self.seed = random_seed()  # from torch's generator, as PyG's draws are
        super().__init__(self, batch_size=1, collate_fn=self._convert, **kwargs)
        self._open_subgraphs(self.graph, torch.arange(max(int(self.num_steps), 0)))
        if self.sample_coverage > 0:
            path = osp.join(save_dir or "", self._filename)
            if save_dir is not None and osp.exists(path):
                self.node_norm, self.edge_norm = torch.load(path)
            else:
                self.node_norm, self.edge_norm = self._compute_norm()
                if save_dir is not None:
                    torch.save((self.node_norm, self.edge_norm), path)

    @property
    def _filename(self) -> str:
        return f"{self.__class__.__name__.lower()}_{self.sample_coverage}.pt"

    def _draw(self) -> dict:
        """The engine's draw of this sampler (``SubgraphLoader``'s kind,
        weighting and budget)."""
        raise NotImplementedError

    def _engine(self, allocator: Any = None, seed: int | None = None) -> SubgraphLoader:
        """An engine loader of ``num_steps`` batches an epoch, edges sorted
        by source then target as PyG's ``SparseTensor`` lists them; the
        training epochs' (no ``seed``) gather the node and edge attributes
        the engine holds on its threads."""
        nodes, edges = [], []
        if seed is None:
            seed = self.seed
            self._held = HeldAttributes(self.data, self.graph, self.N, self.E)
            nodes, edges = self._held.node_names, self._held.edge_names
        return SubgraphLoader(
            self.graph,
            torch.arange(max(int(self.num_steps), 0)),  # placeholders: one batch each
            **self._draw(),
            edge_order="src_dst",
            seed=seed,
            batch_size=1,
            feature_names=nodes,
            edge_feature_names=edges,
            num_threads=self.num_threads,
            allocator=allocator,
        )

    def __getitem__(self, idx: int) -> Any:
        raise TypeError(
            f"graphferry's {type(self).__name__} draws its subgraphs on the engine's threads, ahead of the "
            "training loop: iterate the loader (no batch is drawn by index)"
        )

    def _convert(self, sample: SubgraphSample) -> Any:
        node_idx, edge_idx = sample.nodes, sample.edge_ids
        data = self.data.__class__()
        data.num_nodes = node_idx.size(0)
        data.edge_index = sample.edge_index
        for key, item in self.data:
            if key in ("edge_index", "num_nodes"):
                continue
            rows = self._held.rows(key, item, sample) if isinstance(item, torch.Tensor) else None
            data[key] = rows if rows is not None else item
        if self.sample_coverage > 0:
            data.node_norm = self.node_norm[node_idx]
            data.edge_norm = self.edge_norm[edge_idx]
        return data

    def _norm_samples(self) -> Any:
        """The normalisation estimate's draws, ``(node_idx, edge_idx)`` of
        each subgraph: the engine's epochs 0, 1, ... of the loader's seed
        plus a constant (not the training epochs' draws)."""
        if self.num_steps <= 0:
            return
        loader = self._engine(seed=(self.seed + _NORM_SEED) & 0xFFFF_FFFF_FFFF_FFFF)
        try:
            for epoch in itertools.count():
                for sample in loader.epoch(epoch):
                    yield sample.nodes, sample.edge_ids
        finally:
            loader.close()

    def _compute_norm(self) -> tuple[torch.Tensor, torch.Tensor]:
        """PyG's estimate: subgraphs drawn ``num_steps`` at a time until
        ``N * sample_coverage`` nodes were sampled; ``node_norm[v]`` is
        (subgraphs drawn) / (subgraphs holding v) / N, ``edge_norm[e]`` the
        count of e's source over the count of e (clamped to 1e4; 0.1 where
        neither was drawn)."""
        node_count = torch.zeros(self.N, dtype=torch.float)
        edge_count = torch.zeros(self.E, dtype=torch.float)
        bar = None
        if self.log:
            from tqdm import tqdm

            bar = tqdm(total=self.N * self.sample_coverage, desc="Compute GraphSAINT normalization")
        num_samples = total_sampled_nodes = 0
        draws = self._norm_samples()
        while total_sampled_nodes < self.N * self.sample_coverage and self.num_steps > 0:
            for _ in range(self.num_steps):
                node_idx, edge_idx = next(draws)
                node_count[node_idx] += 1
                edge_count[edge_idx] += 1
                total_sampled_nodes += node_idx.size(0)
                if bar is not None:
                    bar.update(node_idx.size(0))
            num_samples += self.num_steps
        draws.close()
        if bar is not None:
            bar.close()
        edge_norm = (node_count[self.row] / edge_count).clamp_(0, 1e4)
        edge_norm[torch.isnan(edge_norm)] = 0.1
        node_count[node_count == 0] = 0.1
        node_norm = num_samples / node_count / self.N
        return node_norm, edge_norm


class GraphSAINTNodeSampler(GraphSAINTSampler):
    r"""PyG's ``GraphSAINTNodeSampler``: ``batch_size`` nodes drawn with
    replacement, each the source of an edge drawn uniformly (so in
    proportion to its out-degree), the distinct ones kept (see
    :class:`GraphSAINTSampler`); the engine's draws."""

    def _draw(self) -> dict:
        if self.E == 0:
            raise ValueError("GraphSAINTNodeSampler draws the sources of edges: the graph has none")
        return dict(kind="nodes", weighting="out_degree", budget=self._batch_size)


class GraphSAINTEdgeSampler(GraphSAINTSampler):
    r"""PyG's ``GraphSAINTEdgeSampler``: ``batch_size`` edges drawn with
    replacement, edge ``u -> v`` with probability in proportion to PyG's
    weight ``in_degree(u) + out_degree(v)`` (PyG's code; the paper's
    ``1/deg(u) + 1/deg(v)`` is DGL's ``SAINTSampler('edge')``), and the ends
    of the edges drawn kept (see :class:`GraphSAINTSampler`); the engine's
    draws (PyG draws the same distribution with a ``[batch_size, E]``
    random matrix)."""

    def _draw(self) -> dict:
        return dict(kind="edges", weighting="degree_sum", budget=self._batch_size)


class GraphSAINTRandomWalkSampler(GraphSAINTSampler):
    r"""PyG's ``GraphSAINTRandomWalkSampler``: ``batch_size`` roots drawn
    uniformly and a walk of ``walk_length`` steps along out-edges from each
    (the engine's walks), every node visited kept (see
    :class:`GraphSAINTSampler`). A walk that reaches a node without
    out-edges stops there (``torch_cluster`` stays on it): the same nodes.

    Args:
        walk_length (int): steps per walk.
    """

    def __init__(
        self,
        data: Any,
        batch_size: int,
        walk_length: int,
        num_steps: int = 1,
        sample_coverage: int = 0,
        save_dir: str | None = None,
        log: bool = True,
        **kwargs: Any,
    ):
        self.walk_length = walk_length
        super().__init__(data, batch_size, num_steps, sample_coverage, save_dir, log, **kwargs)

    @property
    def _filename(self) -> str:
        return f"{self.__class__.__name__.lower()}_{self.walk_length}_{self.sample_coverage}.pt"

    def _draw(self) -> dict:
        return dict(kind="walks", budget=self._batch_size, walk_length=self.walk_length)

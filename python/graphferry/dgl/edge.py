r"""graphferry as DGL's edge-level loader (link prediction).

:func:`as_edge_prediction_sampler` wraps a neighbour sampler as DGL's does;
:class:`graphferry.dgl.DataLoader` given such a sampler and seed EDGE ids
yields ``(input_nodes, pair_graph, neg_pair_graph, blocks)`` (without a
negative sampler: ``(input_nodes, pair_graph, blocks)``), like
``dgl.dataloading.DataLoader``. The engine draws the negatives, compacts the
pairs (``dgl.compact_graphs``' node order), leaves the batch's excluded
edges out of neighbour sampling and samples, in one call per batch.

.. code-block:: python

    sampler = graphferry.dgl.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler([10, 10]), exclude="reverse_id",
        reverse_eids=reverse_eids,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(5))
    loader = graphferry.dgl.DataLoader(g, train_eids, sampler, batch_size=512, shuffle=True)
    for input_nodes, pair_graph, neg_pair_graph, blocks in loader:
        ...

DGL's own ``dgl.dataloading.as_edge_prediction_sampler(...)`` object is
accepted too. Supported: ``exclude`` None, ``"self"`` or ``"reverse_id"``,
and DGL's ``Uniform(k)``, ``PerSourceUniform(k)`` and ``GlobalUniform(k)``
(its defaults: no self-loops, without replacement). Negatives come from the
engine's random streams, not torch's: they are as DGL's in distribution, not
value by value.

On a heterograph (a DGL heterograph, a :class:`graphferry.HeteroGraph`, or
seed edges given as ``{etype: eids}``) the loader is a
heterogeneous (:class:`HeteroEdgeBatches`): as DGL's, it yields ``input_nodes`` per node
type, ``pair_graph`` / ``neg_pair_graph`` heterographs over every edge type
and heterogeneous blocks; ``exclude`` may also be ``"reverse_types"`` (with
``reverse_etypes``), ``reverse_eids`` is ``{etype: Tensor}``, and the
negatives are ``Uniform(k)`` / ``PerSourceUniform(k)`` per seed edge type.

The edge batches are drawn here, in Python (:class:`EdgeBatches`,
:class:`HeteroEdgeBatches`); :class:`graphferry.dgl.DataLoader` holds one
when its sampler is an edge prediction sampler, as DGL's ``DataLoader`` holds
its sampler.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dgl
import torch

from .._link import EdgeSampler
from .._loader import mix_seed
from .._resource import Closeable
from ..hetero import HeteroGraph
from ..sampling import sample_with_options
from .blocks import to_blocks, to_device, to_hetero_blocks
from .convert import as_graph, as_hetero_graph
from .hetero import hetero_options
from .node import neighbor_options
from .sampler import sampler_settings

__all__ = ["EdgePredictionSampler", "as_edge_prediction_sampler", "is_edge_sampler", "EdgeBatches", "HeteroEdgeBatches"]


class EdgePredictionSampler:
    r"""The settings of :func:`as_edge_prediction_sampler`, with the meaning
    of DGL's ``dgl.dataloading.EdgePredictionSampler``."""

    def __init__(
        self,
        sampler: Any,
        exclude: Any = None,
        reverse_eids: Any = None,
        reverse_etypes: Any = None,
        negative_sampler: Any = None,
        prefetch_labels: Any = None,
    ):
        self.sampler = sampler
        self.exclude = exclude
        self.reverse_eids = reverse_eids
        self.reverse_etypes = reverse_etypes
        self.negative_sampler = negative_sampler
        self.prefetch_labels = list(prefetch_labels or [])

    def __repr__(self) -> str:
        return (
            f"EdgePredictionSampler(exclude={self.exclude!r}, negative_sampler={type(self.negative_sampler).__name__})"
        )


def as_edge_prediction_sampler(
    sampler: Any,
    exclude: Any = None,
    reverse_eids: Any = None,
    reverse_etypes: Any = None,
    negative_sampler: Any = None,
    prefetch_labels: Any = None,
) -> EdgePredictionSampler:
    r"""DGL's ``as_edge_prediction_sampler`` for :class:`graphferry.dgl.DataLoader`.

    Args:
        sampler: a ``dgl.dataloading.NeighborSampler`` or
            :class:`graphferry.dgl.NeighborSampler`.
        exclude (str, optional): ``None``, ``"self"`` (the batch's seed
            edges are never sampled), ``"reverse_id"`` (nor their reverses,
            ``reverse_eids[eid]``) or, on heterographs, ``"reverse_types"``
            (nor the edges of the same ids of ``reverse_etypes[etype]``).
            (default: :obj:`None`)
        reverse_eids (Tensor or dict, optional): int64 ``[E]`` (a
            heterograph: ``{etype: Tensor}``), for ``"reverse_id"``.
        reverse_etypes (dict, optional): ``{etype: reverse etype}``, for
            ``"reverse_types"``.
        negative_sampler: ``dgl.dataloading.negative_sampler.Uniform(k)``,
            ``PerSourceUniform(k)``, ``GlobalUniform(k)`` (homogeneous
            graphs) or None.
        prefetch_labels (list of str, optional): edge data wanted on
            ``pair_graph.edata`` (every edge field of the DGLGraph is
            attached lazily anyway).
    """
    settings = EdgePredictionSampler(sampler, exclude, reverse_eids, reverse_etypes, negative_sampler, prefetch_labels)
    edge_settings(settings)  # errors surface here, as DGL's checks do
    return settings


def is_edge_sampler(obj: Any) -> bool:
    """Whether ``obj`` is ours or DGL's edge prediction sampler."""
    return isinstance(obj, (EdgePredictionSampler, dgl.dataloading.EdgePredictionSampler))


def _negative(neg: Any) -> tuple[str | None, int]:
    ns = dgl.dataloading.negative_sampler
    if neg is None:
        return None, 0
    if isinstance(neg, ns.PerSourceUniform):
        return "per_source_uniform", int(neg.k)
    if isinstance(neg, ns.GlobalUniform):
        if not neg.exclude_self_loops or neg.replace:
            raise NotImplementedError(
                "graphferry implements GlobalUniform with its defaults only "
                f"(exclude_self_loops=True, replace=False; got {neg.exclude_self_loops}, {neg.replace})"
            )
        return "global_uniform", int(neg.k)
    raise TypeError(
        "graphferry draws negatives itself: negative_sampler must be DGL's Uniform(k), "
        f"PerSourceUniform(k) or GlobalUniform(k), or None (got '{type(neg).__name__}')"
    )


def edge_settings(sampler: Any) -> tuple[Any, str | None, int, str | None, Any]:
    """(node sampler settings, negative, k, exclude, reverse) of ours or
    DGL's EdgePredictionSampler; ``reverse`` is ``reverse_eids`` for
    ``"reverse_id"``, ``reverse_etypes`` for ``"reverse_types"``, else None.
    Checks what needs no graph; the loaders check the rest."""
    if not is_edge_sampler(sampler):
        raise TypeError(f"expected an edge prediction sampler (got '{type(sampler).__name__}')")
    settings = sampler_settings(sampler.sampler)
    exclude = sampler.exclude
    if exclude not in (None, "self", "reverse_id", "reverse_types"):
        raise ValueError(
            "graphferry's edge loader takes exclude=None, 'self', 'reverse_id' or 'reverse_types' "
            f"(got {exclude!r}); a callable would run Python per batch"
        )
    reverse = None
    if exclude == "reverse_id":
        reverse = getattr(sampler, "reverse_eids", None)
        if reverse is None:
            raise ValueError("exclude='reverse_id' needs reverse_eids")
    elif exclude == "reverse_types":
        reverse = getattr(sampler, "reverse_etypes", None)
        if not isinstance(reverse, Mapping):
            raise ValueError("exclude='reverse_types' needs reverse_etypes, a dict {etype: reverse etype}")
    negative, k = _negative(sampler.negative_sampler)
    return settings, negative, k, exclude, reverse


class EdgeBatches(Closeable):
    r"""The batches of :class:`graphferry.dgl.DataLoader` on a homogeneous
    graph with an edge prediction sampler: ``(input_nodes, pair_graph,
    neg_pair_graph, blocks)`` (without a negative sampler ``(input_nodes,
    pair_graph, blocks)``) of every ``batch_size`` seed edge ids, drawn by
    the engine's edge sampler one batch per call. A DGLGraph's node and edge
    data reach the blocks and pair graphs through DGL's lazy frames, as with
    DGL's loader.

    Made in two steps, as the loader's seed is drawn once its input is read:
    the constructor checks the input, :meth:`open` opens the engine's edge
    sampler with the seed.

    Args:
        graph (dgl.DGLGraph or graphferry.Graph): the graph (homogeneous).
        indices (Tensor): the seed edge ids.
        settings: :func:`edge_settings` of the edge prediction sampler.
        batch_size, drop_last, shuffle, device: as DGL's DataLoader.
    """

    def __init__(
        self,
        graph: Any,
        indices: Any,
        settings: tuple,
        *,
        batch_size: int,
        drop_last: bool,
        shuffle: bool,
        device: torch.device,
    ):
        self._sampler: EdgeSampler | None = None
        self._given = graph, settings
        settings, negative, k, exclude, reverse = settings
        if exclude == "reverse_types":
            raise ValueError("exclude='reverse_types' needs a heterograph (edge types); use 'reverse_id' here")
        self._batching(batch_size, drop_last, shuffle, device, graph if isinstance(graph, dgl.DGLGraph) else None)
        self._has_negative = negative is not None
        eids = indices if isinstance(indices, torch.Tensor) else torch.as_tensor(indices)
        self.indices = eids.to(torch.int64).contiguous()
        self._epoch = 0

    def _batching(self, batch_size: int, drop_last: bool, shuffle: bool, device: torch.device, dgl_graph: Any) -> None:
        """What both kinds of edge batches take alike: the batching, and the
        DGL graph whose idtype and data the batches carry (None: int64)."""
        self.batch_size = int(batch_size)
        if self.batch_size <= 0:
            raise ValueError(f"batch_size must be positive (got {batch_size})")
        self.drop_last = bool(drop_last)
        self.shuffle = bool(shuffle)
        self.device = device
        self._dgl_graph = dgl_graph
        self._idtype = dgl_graph.idtype if dgl_graph is not None else torch.int64

    def open(self, seed: Any, num_threads: int) -> None:
        """Opens the engine's edge sampler: ``seed`` roots shuffling,
        negatives and sampling; ``num_threads`` are the engine's threads
        (<= 0: every core)."""
        graph, (settings, negative, k, exclude, reverse) = self._given
        self.seed = int(seed)
        self._graph = as_graph(graph, settings.prob)
        options = neighbor_options(settings, self.seed, num_threads)
        if reverse is not None:
            reverse = torch.as_tensor(reverse).to(torch.int64).contiguous()
        self._sampler = EdgeSampler(
            self._graph, options, mode="dgl", negative=negative, amount=k, exclude=exclude, reverse_eids=reverse
        )

    def __len__(self) -> int:
        n = len(self.indices)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self, epoch: int) -> torch.Tensor:
        if not self.shuffle:
            return self.indices
        gen = torch.Generator().manual_seed((self.seed * 1_000_003 + epoch) & (2**63 - 1))
        return self.indices[torch.randperm(len(self.indices), generator=gen)]

    def __iter__(self) -> Any:
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        epoch = self._epoch
        self._epoch += 1
        order = self._order(epoch)
        return (self._batch(order[i * self.batch_size : (i + 1) * self.batch_size], epoch, i) for i in range(len(self)))

    def sample(self, eids: Any, key: int = 0) -> tuple:
        """The batch of the seed edge ids ``eids`` under batch key ``key``
        (what one step of an epoch yields)."""
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        eids = torch.as_tensor(eids).to(torch.int64).contiguous()
        return self._convert(eids, self._sampler.sample(eids, key=key))

    def _batch(self, eids: torch.Tensor, epoch: int, index: int) -> tuple:
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        return self._convert(eids, self._sampler.sample(eids, key=(epoch << 32) | index))

    def _convert(self, eids: torch.Tensor, sample: Any) -> tuple:
        g, idtype = self._dgl_graph, self._idtype
        blocks = to_blocks(sample.sub, g, idtype=idtype)
        seeds = sample.sub.seeds.to(idtype)
        n = len(seeds)
        pair = dgl.graph((sample.pos_src.to(idtype), sample.pos_dst.to(idtype)), num_nodes=n, idtype=idtype)
        out_eids = eids.to(idtype)
        if g is not None and (len(g.ndata) > 0 or len(g.edata) > 0):
            dgl.utils.set_new_frames(
                pair,
                node_frames=dgl.utils.extract_node_subframes(g, [seeds]),
                edge_frames=dgl.utils.extract_edge_subframes(g, [out_eids]),
            )
        else:
            pair.ndata[dgl.NID] = seeds
            pair.edata[dgl.EID] = out_eids
        input_nodes = blocks[0].srcdata[dgl.NID] if blocks else seeds
        if self._has_negative:
            neg = dgl.graph((sample.neg_src.to(idtype), sample.neg_dst.to(idtype)), num_nodes=n, idtype=idtype)
            neg.ndata[dgl.NID] = seeds
            out = (input_nodes, pair, neg, blocks)
        else:
            out = (input_nodes, pair, blocks)
        if self.device.type != "cpu":
            out = to_device(out, self.device)
        return out

    def close(self) -> None:
        sampler, self._sampler = self._sampler, None
        if sampler is not None:
            sampler.close()


class HeteroEdgeBatches(EdgeBatches):
    r"""The batches of :class:`graphferry.dgl.DataLoader` given a DGL
    heterograph (or a :class:`graphferry.HeteroGraph`), seed edges ``{etype:
    eids}`` and an edge prediction sampler. What DGL's loader yields:
    ``input_nodes`` (``{ntype: ids}`` over every node type), ``pair_graph``
    and ``neg_pair_graph`` (heterographs over every edge type, holding the
    batch's seed edges, resp. negatives, per type, compacted together as
    ``dgl.compact_graphs`` does) and heterogeneous ``blocks``
    (:func:`graphferry.dgl.blocks.to_hetero_blocks`).

    The pairs are built here, in Python (a batch's worth of ids); the
    negatives (DGL's ``Uniform(k)`` / ``PerSourceUniform(k)`` per seed edge
    type: the seed's source, ``k`` destinations uniform over the edge type's
    destination type) come from a torch generator seeded by the loader's
    seed and the batch key, so batches repeat under a seed. The excluded
    edges (``"self"``, ``"reverse_id"`` with ``reverse_eids`` as
    ``{etype: Tensor}``, ``"reverse_types"`` with ``reverse_etypes``) are
    left out of neighbour sampling by the engine.
    """

    def __init__(
        self,
        graph: Any,
        indices: Any,
        settings: tuple,
        *,
        batch_size: int,
        drop_last: bool,
        shuffle: bool,
        device: torch.device,
    ):
        self._sampler = None
        self._settings = settings[0]
        settings, negative, k, exclude, reverse = settings
        if negative == "global_uniform":
            raise NotImplementedError(
                "graphferry's edge loader on heterographs draws Uniform(k) / PerSourceUniform(k) negatives; "
                "GlobalUniform is supported on homogeneous graphs only"
            )
        hg = as_hetero_graph(graph, settings.prob)
        self.hetero_graph = hg
        dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else hg.dgl_graph
        self._batching(batch_size, drop_last, shuffle, device, dgl_graph)
        self._negative_k = k if negative is not None else 0
        self._has_negative = negative is not None
        if not isinstance(indices, Mapping):
            if hg.num_relations != 1:
                raise TypeError(
                    f"the graph has edge types {hg.edge_types}: give the seed edges as a dict {{etype: eids}} "
                    f"(got '{type(indices).__name__}')"
                )
            indices = {hg.edge_types[0]: indices}
        if not indices:
            raise ValueError("'indices' is an empty dict: give the seed edges of at least one edge type")
        # DGL's batches list each type's seeds in the order of the dict's keys.
        self._seed_rels = [hg.etype_index(et) for et in indices]
        self.indices = torch.cat([hg.edge_to_global(et, ids) for et, ids in indices.items()])
        self._exclude = exclude
        self._reverse = self._reverse_map(hg, exclude, reverse)
        self._endpoints: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self._epoch = 0

    def open(self, seed: Any, num_threads: int) -> None:
        self.seed = int(seed)
        self._options = hetero_options(self.hetero_graph, self._settings, self.seed, num_threads)
        self._fixed_exclude = self._options.exclude_edges
        self._sampler = self.hetero_graph  # open marker: close() forgets it (the graph stays with its owner)

    @staticmethod
    def _reverse_map(hg: HeteroGraph, exclude: str | None, reverse: Any) -> dict[int, Any]:
        """``"reverse_id"``: {relation: reverse eids (local, same type)};
        ``"reverse_types"``: {relation: reverse relation}."""
        if exclude == "reverse_id":
            if not isinstance(reverse, Mapping):
                raise TypeError("exclude='reverse_id' on a heterograph needs reverse_eids as a dict {etype: Tensor}")
            out = {}
            for et, rev in reverse.items():
                r = hg.etype_index(et)
                rev = torch.as_tensor(rev).to(torch.int64)
                if rev.numel() != hg.num_edges(hg.edge_types[r]):
                    raise ValueError(
                        f"reverse_eids[{hg.edge_types[r]}] has {rev.numel()} entries; "
                        f"the edge type has {hg.num_edges(hg.edge_types[r])} edges"
                    )
                out[r] = rev
            return out
        if exclude == "reverse_types":
            return {hg.etype_index(et): hg.etype_index(rev) for et, rev in reverse.items()}
        return {}

    def _ends(self, r: int, local: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Type-local (src, dst) of the edges ``local`` of relation ``r``."""
        if self._dgl_graph is not None:
            src, dst = self._dgl_graph.find_edges(local.to(self._idtype), etype=self.hetero_graph.edge_types[r])
            return src.to(torch.int64), dst.to(torch.int64)
        if r not in self._endpoints:  # read once from the engine
            self._endpoints[r] = self.hetero_graph.edges(self.hetero_graph.edge_types[r])
        src, dst = self._endpoints[r]
        return src[local], dst[local]

    def sample(self, eids: Any, key: int = 0) -> tuple:
        """The batch of the seed edges ``eids`` (``{etype: ids}``, or global
        edge ids) under batch key ``key`` (what one step of an epoch
        yields)."""
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        if isinstance(eids, Mapping):
            eids = torch.cat([self.hetero_graph.edge_to_global(et, ids) for et, ids in eids.items()])
        return self._sample_global(torch.as_tensor(eids).to(torch.int64), key)

    def _batch(self, eids: torch.Tensor, epoch: int, index: int) -> tuple:
        if self._sampler is None:
            raise ValueError("this EdgeDataLoader was closed")
        return self._sample_global(eids, (epoch << 32) | index)

    def _sample_global(self, eids: torch.Tensor, key: int) -> tuple:
        hg, idtype = self.hetero_graph, self._idtype
        rel, local = hg.to_local_edge(eids)
        order = [r for r in self._seed_rels if bool((rel == r).any())]
        order += [r for r in sorted(set(rel.tolist())) if r not in order]  # sample() may name other types
        seed_edges = {r: local[rel == r] for r in order}
        gen = torch.Generator().manual_seed(mix_seed(self.seed, -1 - key))
        pos, neg = {}, {}
        for r, ids in seed_edges.items():
            src, dst = self._ends(r, ids)
            pos[r] = (src, dst)
            if self._has_negative:
                k = self._negative_k
                n_dst = hg.num_nodes(hg.node_types[hg.relation_dst_type[r]])
                neg[r] = (src.repeat_interleave(k), torch.randint(n_dst, (ids.numel() * k,), generator=gen))
        num_nodes = {nt: hg.num_nodes(nt) for nt in hg.node_types}

        def hetero(edges: dict) -> Any:
            data = {}
            for r, et in enumerate(hg.edge_types):
                s, d = edges.get(r, (_EMPTY, _EMPTY))
                data[et] = (s.to(idtype), d.to(idtype))
            return dgl.heterograph(data, num_nodes, idtype=idtype)

        if self._has_negative:
            pair, neg_pair = dgl.compact_graphs([hetero(pos), hetero(neg)])
        else:
            pair, neg_pair = dgl.compact_graphs(hetero(pos)), None
        seed_nids = {nt: pair.nodes[nt].data[dgl.NID] for nt in hg.node_types}
        seeds = torch.cat([hg.to_global(nt, seed_nids[nt]) for nt in hg.node_types])
        edge_ids = {et: seed_edges.get(r, _EMPTY).to(idtype) for r, et in enumerate(hg.edge_types)}
        options = self._options.replace_fields(seed=mix_seed(self.seed, key), exclude_edges=self._excluded(seed_edges))
        sub = sample_with_options(hg.graph, seeds, options)
        g = self._dgl_graph
        blocks = to_hetero_blocks(sub, hg, idtype=idtype, g=g)
        if g is not None and (
            any(len(g.nodes[nt].data) for nt in g.ntypes) or any(len(g.edges[et].data) for et in g.canonical_etypes)
        ):
            dgl.utils.set_new_frames(
                pair,
                node_frames=dgl.utils.extract_node_subframes(g, [seed_nids[nt] for nt in g.ntypes]),
                edge_frames=dgl.utils.extract_edge_subframes(g, [edge_ids[et] for et in g.canonical_etypes]),
            )
        else:
            for et in hg.edge_types:
                pair.edges[et].data[dgl.EID] = edge_ids[et]
        input_nodes = blocks[0].srcdata[dgl.NID] if blocks else seed_nids
        out = (input_nodes, pair, neg_pair, blocks) if self._has_negative else (input_nodes, pair, blocks)
        if self.device.type != "cpu":
            out = to_device(out, self.device)
        return out

    def _excluded(self, seed_edges: dict[int, torch.Tensor]) -> torch.Tensor | None:
        """Global ids of the edges the batch leaves out of sampling: the
        sampler's ``exclude_edges`` plus the seeds (and their reverses)."""
        hg = self.hetero_graph
        parts = [] if self._fixed_exclude is None else [torch.as_tensor(self._fixed_exclude).to(torch.int64)]
        if self._exclude is not None:
            for r, ids in seed_edges.items():
                parts.append(hg.edge_to_global(hg.edge_types[r], ids))
                if self._exclude == "reverse_id" and r in self._reverse:
                    parts.append(hg.edge_to_global(hg.edge_types[r], self._reverse[r][ids]))
                elif self._exclude == "reverse_types" and r in self._reverse:
                    parts.append(hg.edge_to_global(hg.edge_types[self._reverse[r]], ids))
        return torch.cat(parts) if parts else None

    def close(self) -> None:
        self._sampler = None


_EMPTY = torch.empty(0, dtype=torch.int64)

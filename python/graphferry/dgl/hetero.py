r"""graphferry as DGL's node-classification loader on heterogeneous graphs.

:class:`graphferry.dgl.DataLoader` given a DGL heterograph (or a
:class:`graphferry.HeteroGraph`), a dict of seeds ``{ntype: ids}`` and a
``NeighborSampler`` whose fan-outs are ints or ``{etype: k}`` dicts yields
``(input_nodes, output_nodes, blocks)`` as DGL's own loader does:

* ``blocks`` are heterogeneous DGL blocks over every node type and every
  canonical edge type (a relation with no sampled edge is there, empty), each
  type's destination nodes first among its source nodes; ``dgl.NID`` per node
  type and ``dgl.EID`` per edge type hold type-local ids in the graph's idtype;
* ``input_nodes`` is ``blocks[0].srcdata[dgl.NID]`` (a dict over every node
  type) and ``output_nodes`` the batch's seeds per type (only the types that
  have seeds in the batch, as DGL);
* node data: the ``prefetch_node_feats`` of each type go on
  ``blocks[0].srcdata`` and the ``prefetch_labels`` on ``blocks[-1].dstdata``,
  gathered by the engine with each batch (a DGL heterograph's data is handed
  to the engine once, not copied, and again when the graph replaces it);
  from a DGL heterograph every block also carries all of its node and edge
  data, attached lazily through DGL's frames (as DGL's sampler attaches
  them).

The engine samples over the graph's global ids (one typed CSC): frontier node
``v`` draws, for every relation into ``v``'s type, that relation's fan-out of
its in-edges of that relation, as DGL's per-edge-type fan-outs.

.. code-block:: python

    sampler = dgl.dataloading.NeighborSampler([{"cites": 10, "writes": 5, "rev_writes": 5}] * 2)
    loader = graphferry.dgl.DataLoader(g, {"paper": train_idx}, sampler, batch_size=1024, shuffle=True)
    for input_nodes, output_nodes, blocks in loader:
        h = model(blocks, {nt: blocks[0].srcnodes[nt].data["feat"] for nt in blocks[0].srctypes})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dgl
import torch

from .. import _loader
from .._options import SampleOptions
from ..errors import GraphferryError, error_for_status
from ..hetero import HeteroGraph
from ..sampling import SampledSubgraph
from .blocks import to_hetero_blocks
from .convert import as_hetero_graph
from .sampler import NeighborSampler

__all__ = ["HeteroBlocks", "hetero_options"]


def _per_type_names(names: Any, hg: HeteroGraph, has: Any, what: str) -> dict[str, list[str]]:
    """DGL's prefetch lists: a list (each type that has the data) or a dict
    ``{ntype: names}``; as ``{ntype: names}``, ``has(ntype)`` being the
    names a type has."""
    if not names:
        return {}
    if isinstance(names, Mapping):
        out = {}
        for nt, ns in names.items():
            hg.ntype_index(nt)
            ns = [ns] if isinstance(ns, str) else list(ns)
            missing = [n for n in ns if n not in has(nt)]
            if missing:
                raise ValueError(f"'{what}': node type '{nt}' has no node data {missing} (it has {sorted(has(nt))})")
            out[nt] = ns
        return out
    names = [names] if isinstance(names, str) else list(names)
    out = {nt: [n for n in names if n in has(nt)] for nt in hg.node_types}
    missing = [n for n in names if not any(n in ns for ns in out.values())]
    if missing:
        raise ValueError(f"'{what}': no node type has node data {missing}")
    return {nt: ns for nt, ns in out.items() if ns}


def _hetero_exclude(exclude: Any, hg: HeteroGraph) -> Any:
    """``exclude_edges`` as global edge ids: a dict ``{etype: local ids}``
    (DGL's form for heterographs), or already global ids."""
    if exclude is None or not isinstance(exclude, Mapping):
        return exclude
    parts = [hg.edge_to_global(et, ids) for et, ids in exclude.items()]
    return torch.cat(parts) if parts else None


def hetero_options(hg: HeteroGraph, settings: Any, seed: int, num_threads: int) -> SampleOptions:
    """The engine's options for a DGL node sampler's ``settings`` over
    ``hg`` (the node and the edge loaders on heterographs share them)."""
    if settings.scheme not in ("node", "labor"):
        raise NotImplementedError(
            "graphferry samples heterographs node-wise (NeighborSampler) or with LABOR-0 (LaborSampler), "
            f"not layer-wise (got scheme '{settings.scheme}')"
        )
    hops = hg.relation_fanouts(settings.fanouts)
    return SampleOptions(
        (),  # the hops are those of relation_fanouts
        relation_fanouts=tuple(reversed(hops)),  # the engine counts hops from the seeds
        replace=settings.replace,
        frontier="all",
        scheme=settings.scheme,
        layer_dependency=settings.layer_dependency,
        biased=settings.prob is not None,
        exclude_edges=_hetero_exclude(settings.exclude_edges, hg),
        seed=seed,
        num_threads=num_threads,
    )


class HeteroBlocks:
    """How :class:`graphferry.dgl.DataLoader` makes a heterograph's node
    batches (see the module's docstring): what the engine loader is opened
    with (:attr:`graph`, :attr:`seeds` as global ids, :meth:`options`) and
    what each of its batches becomes (:meth:`convert`).

    ``graph`` is a DGL graph (converted once, :meth:`HeteroGraph.from_dgl`,
    and cached) or a :class:`~graphferry.HeteroGraph`, which must already
    carry its weights (as a :class:`graphferry.Graph`); ``indices`` are
    ``{ntype: ids}`` (type-local ids, or a bool mask over the type), a
    tensor for a graph with a single node type. Batches mix the types, as
    DGL's.
    """

    feature_names: tuple = ()  # per-type node data the engine gathers (HeteroGraph.engine_names)
    label_names: tuple = ()

    def __init__(self, graph: Any, indices: Any, settings: NeighborSampler):
        self.settings = settings
        self.given_graph = graph
        hg = self.hetero_graph = as_hetero_graph(graph, settings.prob)
        self.graph = hg.graph
        self.dgl_graph = graph if isinstance(graph, dgl.DGLGraph) else hg.dgl_graph
        self.idtype = self.dgl_graph.idtype if self.dgl_graph is not None else torch.int64
        if not isinstance(indices, Mapping):
            if hg.num_node_types != 1:
                raise TypeError(
                    f"the graph has node types {hg.node_types}: give the seeds as a dict {{ntype: ids}} "
                    f"(got '{type(indices).__name__}')"
                )
            indices = {hg.node_types[0]: indices}
        if not indices:
            raise ValueError("'indices' is an empty dict: give the seeds of at least one node type")
        self._seed_types = [hg.node_types[hg.ntype_index(nt)] for nt in indices]
        self.seeds = hg.to_global_nodes(indices)
        if settings.prefetch_edge_feats and self.dgl_graph is None:
            raise ValueError(
                "prefetch_edge_feats needs a DGL graph (a graphferry.HeteroGraph holds no edge data); "
                f"got prefetch_edge_feats={settings.prefetch_edge_feats}"
            )
        g = self.dgl_graph
        has = hg.node_data_names if g is None else (lambda nt: list(g.nodes[nt].data.keys()))
        self._node_feats = _per_type_names(settings.prefetch_node_feats_raw, hg, has, "prefetch_node_feats")
        self._labels = _per_type_names(settings.prefetch_labels_raw, hg, has, "prefetch_labels")
        if g is not None:
            # The DGL graph's data goes to the engine (once, not copied; again
            # when g replaces it); what it cannot take (a dtype it does not
            # carry) is served by DGL's lazy frames, as the rest of g's data.
            held = set(self._sync())
            self._node_feats, self._labels = (
                {nt: [n for n in ns if f"{nt}/{n}" in held] for nt, ns in d.items()}
                for d in (self._node_feats, self._labels)
            )
        # The engine gathers the rows with each batch (a typed part's: from
        # their owners); labels that are features too are the seeds' rows.
        self.feature_names = hg.engine_names(self._node_feats)
        self.label_names = tuple(
            n for n in hg.engine_names(self._labels) if hg.part is not None or n not in self.feature_names
        )

    def _current(self) -> dict[str, Any]:
        """The DGL graph's prefetched tensors as they are now, by engine name."""
        g = self.dgl_graph
        names = [(nt, n) for d in (self._node_feats, self._labels) for nt, ns in d.items() for n in ns]
        return {f"{nt}/{n}": g.nodes[nt].data.get(n) for nt, n in names}

    def _sync(self) -> list[str]:
        """Hands the engine the DGL graph's tensors it does not hold as they
        are now; the engine names of those it holds."""
        return _loader.sync_node_data(self.graph, self._current())

    def _fresh(self, names: dict[str, list[str]]) -> dict[str, list[str]]:
        """Of ``names``, those whose engine rows are the DGL graph's data as it
        is now (what g replaced since is served by its lazy frames)."""
        if self.dgl_graph is None:
            return names
        now = self._current()
        return {
            nt: [n for n in ns if _loader.engine_node_data(self.graph, f"{nt}/{n}", now[f"{nt}/{n}"])]
            for nt, ns in names.items()
        }

    def options(self, seed: Any, num_threads: int) -> SampleOptions:
        return hetero_options(self.hetero_graph, self.settings, seed, num_threads)

    def before_epoch(self) -> None:
        """Hands the engine the DGL graph's data replaced since."""
        if self.dgl_graph is not None:
            self._sync()

    def user_error(self, err: GraphferryError) -> GraphferryError:
        """The engine's error, saying where the weights come from when
        ``prob`` was given with a :class:`~graphferry.HeteroGraph`."""
        if self.settings.prob is not None and isinstance(self.given_graph, HeteroGraph) and "weights" in err.message:
            return error_for_status(
                err.code,
                f"{err.message} (prob={self.settings.prob!r} on a graphferry.HeteroGraph samples by the weights it "
                "holds: give them with HeteroGraph.from_coo(edge_weights=...) or set_edge_weights)",
            )
        return err

    def convert(self, sub: SampledSubgraph) -> tuple:
        """``(input_nodes, output_nodes, blocks)`` of one engine batch, as
        DGL's: heterogeneous blocks over every type, ``input_nodes`` a dict
        over every node type, ``output_nodes`` the seeds of the types the
        batch has."""
        hg = self.hetero_graph
        blocks = to_hetero_blocks(
            sub,
            hg,
            idtype=self.idtype,
            g=self.dgl_graph,
            node_feats=self._fresh(self._node_feats),
            labels=self._fresh(self._labels),
            rows=sub.node_data,
            label_rows=sub.labels,
        )
        # A dict over every node type (a tensor for a single one, as DGL's).
        input_nodes = blocks[0].srcdata[dgl.NID] if blocks else hg.nodes_by_type(sub.nodes)
        last = blocks[-1] if blocks else None
        output_nodes = {}
        for nt in self._seed_types:
            if last is not None:
                ids = last.dstnodes[nt].data[dgl.NID]
            else:
                ids = hg.nodes_by_type(sub.seeds)[nt].to(self.idtype)
            if ids.numel():
                output_nodes[nt] = ids
        return input_nodes, output_nodes, blocks

r"""graphferry as DGL's node-classification data loader.

:class:`DataLoader` replaces ``dgl.dataloading.DataLoader`` for neighbour
sampling: the engine samples (collective sampling over the graph's patches)
and gathers features on its own threads, and each batch arrives as DGL's
``(input_nodes, output_nodes, blocks)`` with real ``dgl.create_block``
blocks.

.. code-block:: python

    import dgl, graphferry.dgl
    sampler = dgl.dataloading.NeighborSampler([10, 10],
                                              prefetch_node_feats=["feat"],
                                              prefetch_labels=["label"])
    loader = graphferry.dgl.DataLoader(g, train_nids, sampler,
                                       batch_size=1024, shuffle=True)
    for input_nodes, output_nodes, blocks in loader:
        logits = model(blocks, blocks[0].srcdata["feat"])
        loss = F.cross_entropy(logits, blocks[-1].dstdata["label"])

Heterographs: a DGL heterograph (or a :class:`graphferry.HeteroGraph`), seeds
``{ntype: ids}`` and fan-outs ``[{etype: k}, ...]`` give DGL's heterogeneous
blocks (:mod:`graphferry.dgl.hetero`). Link prediction: an edge prediction
sampler (:func:`as_edge_prediction_sampler`) and seed edge ids give DGL's
edge batches (:mod:`graphferry.dgl.edge`).

DGL's ``NeighborSampler(prob="w")`` (or ``mask="m"``) samples in proportion
to ``g.edata["w"]`` (0/1 for a mask): the weights are set on the converted
graph and the engine samples biased, never taking an edge of weight 0.

The package is laid out as DGL's ``dgl.dataloading``, each module importing
only those above it in this list:

* :mod:`.sampler`: DGL's node samplers read as graphferry's settings;
* :mod:`.convert`: DGL graphs as engine graphs, converted once and cached;
* :mod:`.blocks`: engine samples as DGL blocks;
* :mod:`.node` and :mod:`.hetero`: the node batches of a homogeneous graph
  (DGL's ShaDow and ClusterGCN samplers' too) and of a heterograph;
  :mod:`.edge`: edge prediction samplers and their batches; :mod:`.saint`:
  DGL's ``SAINTSampler``'s batches;
* :mod:`.dataloader`: :class:`DataLoader`, one class for every input, as
  DGL's; :mod:`.walk`: :func:`random_walk`.
"""

from __future__ import annotations

from .blocks import to_blocks, to_hetero_blocks
from .convert import as_graph, as_hetero_graph
from .dataloader import DataLoader, ddp_split
from .edge import EdgePredictionSampler, as_edge_prediction_sampler
from .sampler import NeighborSampler
from .walk import random_walk

# The names the heterogeneous and the edge-level loaders had as classes of
# their own: graphferry.dgl.DataLoader makes every kind of batch now.
HeteroDataLoader = EdgeDataLoader = HeteroEdgeDataLoader = DataLoader

__all__ = [
    "NeighborSampler",
    "DataLoader",
    "to_blocks",
    "random_walk",
    "as_edge_prediction_sampler",
    "EdgePredictionSampler",
    "as_graph",
    "as_hetero_graph",
    "to_hetero_blocks",
    "ddp_split",
    "HeteroDataLoader",
    "EdgeDataLoader",
]

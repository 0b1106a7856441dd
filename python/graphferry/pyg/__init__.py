r"""graphferry as PyTorch Geometric's neighbour sampler and loader.

Two ways in:

* :class:`Sampler` is a ``torch_geometric.sampler.BaseSampler``, so PyG's own
  ``NodeLoader`` composes with it (PyG then joins the features):

  .. code-block:: python

      from torch_geometric.loader import NodeLoader
      loader = NodeLoader(data, node_sampler=graphferry.pyg.Sampler(data, [10, 10]),
                          input_nodes=data.train_mask, batch_size=128)

  and, for link prediction, PyG's own ``LinkNeighborLoader`` (its
  ``neighbor_sampler``) or ``LinkLoader`` (its ``link_sampler``):
  :meth:`Sampler.sample_from_edges` draws binary or triplet negatives and
  samples around the pairs in one engine call.

* :class:`NeighborLoader` runs the engine's own pipeline (sampling and
  feature gathering on its threads) and yields the ``Data`` objects that
  ``torch_geometric.loader.NeighborLoader`` yields:

  .. code-block:: python

      loader = graphferry.pyg.NeighborLoader(data, [10, 10], batch_size=128,
                                             input_nodes=data.train_mask, shuffle=True)
      for batch in loader:
          out = model(batch.x, batch.edge_index)[:batch.batch_size]
          loss = F.cross_entropy(out, batch.y[:batch.batch_size])

Training on a GPU: ``pin_memory=True`` makes the loaders' batches
page-locked (the engine writes them there), and :class:`PrefetchLoader`
copies each batch to the device on a side stream while the one before it
trains:

.. code-block:: python

    loader = graphferry.pyg.PrefetchLoader(graphferry.pyg.NeighborLoader(data, [10, 10], batch_size=1024),
                                           device="cuda")

Both take PyG's ``subgraph_type`` (``"directional"``, ``"bidirectional"``,
``"induced"``) and ``disjoint``; the loader is callable
(``loader(index)``) like PyG's, and takes a ``(FeatureStore, GraphStore)``
pair, with :class:`GraphStore` serving a graphferry graph to PyG's
remote-backend interface.

Both take a ``HeteroData`` too (or a :class:`graphferry.HeteroGraph`, see
:func:`from_pyg`), with ``num_neighbors`` per edge type and
``input_nodes=(node_type, ids or mask)``, and yield ``HeteroData`` batches
as PyG's heterogeneous loaders do:

.. code-block:: python

    loader = graphferry.pyg.NeighborLoader(
        hetero_data, {("author", "writes", "paper"): [10, 5], ("paper", "cites", "paper"): [5, 5],
                      ("paper", "rev_writes", "author"): [3, 3]},
        input_nodes=("paper", hetero_data["paper"].train_mask), batch_size=128)
    for batch in loader:
        out = model(batch.x_dict, batch.edge_index_dict)["paper"][:batch["paper"].batch_size]

Temporal sampling is PyG's: ``time_attr`` names a node attribute (the
nodes' times) or an edge attribute (the edges' times), ``input_time`` gives
each seed's time (by default the seed's own node time), and only neighbours
(edges) not later than their subgraph's seed time are sampled, drawn
uniformly (``temporal_strategy="uniform"``) or the latest first
(``"last"``). Temporal sampling is disjoint: every seed gets its own
subgraph, as in PyG.

The package is laid out as PyG's ``sampler`` and ``loader`` packages are, each
module importing only those above it in this list:

* :mod:`.convert`: ``Data`` and ``HeteroData`` as engine graphs, converted
  once and cached;
* :mod:`.hetero`: the per-type split of a heterogeneous sample and its
  ``HeteroData`` batch;
* :mod:`.base`: what the sampler and the loaders share: PyG's arguments read
  once, the engine's options, one sample in PyG's terms;
* :mod:`.stores`: :class:`GraphStore`, PyG's remote-backend interface;
* :mod:`.neighbor_sampler`: :class:`Sampler`; :mod:`.neighbor_loader`:
  :class:`NeighborLoader`; :mod:`.hgt_loader`: :class:`HGTLoader` (the
  engine's HGT draws); :mod:`.link_neighbor_loader`:
  :class:`LinkNeighborLoader`; :mod:`.walk`: :func:`random_walk`;
  :mod:`.prefetch`: :class:`PrefetchLoader`, the GPU data path;
* :mod:`.subgraph`: what the subgraph loaders share; :mod:`.shadow`:
  :class:`ShaDowKHopSampler`; :mod:`.graph_saint`: the
  ``GraphSAINT*Sampler`` loaders; :mod:`.cluster`: :class:`ClusterData`
  and :class:`ClusterLoader` (METIS by ``pymetis``); :mod:`.random_node_loader`:
  :class:`RandomNodeLoader`. PyG's own need
  ``torch_sparse`` or ``pyg-lib``; these use the engine's walks, samples
  and induced subgraphs.

Each public class takes a homogeneous graph (``Data``, :class:`graphferry.Graph`)
or a heterogeneous one (``HeteroData``, :class:`graphferry.HeteroGraph`) and
branches on it, as PyG's own classes do.
"""

from __future__ import annotations

from .base import SUBGRAPH_TYPES
from .cluster import ClusterData, ClusterLoader
from .convert import as_graph, as_hetero_graph, from_pyg
from .graph_saint import GraphSAINTEdgeSampler, GraphSAINTNodeSampler, GraphSAINTRandomWalkSampler, GraphSAINTSampler
from .hgt_loader import HGTLoader
from .link_neighbor_loader import LinkNeighborLoader
from .neighbor_loader import NeighborLoader
from .neighbor_sampler import Sampler
from .prefetch import PrefetchLoader
from .random_node_loader import RandomNodeLoader
from .shadow import ShaDowKHopSampler
from .stores import GraphStore
from .walk import random_walk

__all__ = [
    "Sampler",
    "NeighborLoader",
    "GraphStore",
    "as_graph",
    "from_pyg",
    "random_walk",
    "LinkNeighborLoader",
    "PrefetchLoader",
    "as_hetero_graph",
    "SUBGRAPH_TYPES",
    "ShaDowKHopSampler",
    "ClusterData",
    "ClusterLoader",
    "GraphSAINTSampler",
    "GraphSAINTNodeSampler",
    "GraphSAINTEdgeSampler",
    "GraphSAINTRandomWalkSampler",
    "RandomNodeLoader",
    "HGTLoader",
]

"""The engine's typed view of a typed graph's sample (SampledSubgraph.typed,
GF_FIELD_TYPED_*): the same split by node type and relation as the plain
Python split of the sample (graphferry.pyg.hetero.split_output, still used for induced
subgraphs), for synchronous samples and loader batches, frontier "all" and
"new", disjoint or not; absent on untyped graphs."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("torch_geometric")

from test_hetero_pyg import make_hetero  # noqa: E402

import graphferry  # noqa: E402
import graphferry.pyg as gfpyg  # noqa: E402
from graphferry.pyg import base as pyg_base  # noqa: E402
from graphferry.pyg import hetero as _pyg_hetero  # noqa: E402


def _same(a, b) -> None:
    """Two HeteroSamplerOutputs hold the same tensors and counts."""
    assert a.node.keys() == b.node.keys() and a.row.keys() == b.row.keys()
    for k in a.node:
        assert torch.equal(a.node[k], b.node[k]), k
        if a.batch is not None or b.batch is not None:
            assert torch.equal(a.batch[k], b.batch[k]), k
    for k in a.row:
        assert torch.equal(a.row[k], b.row[k]), k
        assert torch.equal(a.col[k], b.col[k]), k
        assert torch.equal(a.edge[k], b.edge[k]), k
    assert a.num_sampled_nodes == b.num_sampled_nodes
    assert a.num_sampled_edges == b.num_sampled_edges


def _python_split(hg, sub):
    out = pyg_base.directional(sub)
    return _pyg_hetero.split_output(
        hg,
        out.node,
        out.row,
        out.col,
        out.edge,
        batch=out.batch,
        hop_counts=out.num_sampled_nodes,
        edges_per_hop=out.num_sampled_edges,
    )


@pytest.mark.parametrize(
    "options",
    [
        {"frontier": "all"},
        {"frontier": "new"},
        {"frontier": "new", "disjoint": True},
    ],
)
def test_typed_view_is_the_python_split(options):
    data = make_hetero(3)
    with gfpyg.from_pyg(data, num_patches=3, partition="random") as hg:
        seeds = torch.cat([hg.to_global("paper", torch.tensor([3, 17, 42, 8])), hg.to_global("author", [5, 1])])
        if options.get("disjoint"):
            seeds = torch.cat([seeds, seeds[:2]])
        fanouts = hg.relation_fanouts([3, 2])
        sub = graphferry.sample_neighbors(hg.graph, seeds, [], relation_fanouts=fanouts, seed=4, **options)
        assert sub.typed is not None and len(sub.typed.blocks) == 2
        _same(_pyg_hetero.split_typed(hg, sub.typed, batch=sub.batch), _python_split(hg, sub))
        # every typed node is the sample's node at its order position
        tv = sub.typed
        types, local = hg.split_nodes(sub.nodes[tv.order])
        assert torch.equal(local, tv.nodes)
        assert types.tolist() == sorted(types.tolist())
        assert tv.hop_counts.sum(0).tolist() == sub.hop_counts.tolist()

        loader = graphferry.Loader.from_options(
            hg.graph,
            seeds,
            graphferry.SampleOptions((), relation_fanouts=fanouts, seed=2, **options),
            batch_size=3,
            shuffle=True,
        )
        with loader:
            n = 0
            for sub in loader:
                assert sub.typed is not None
                _same(_pyg_hetero.split_typed(hg, sub.typed, batch=sub.batch), _python_split(hg, sub))
                n += 1
            assert n == len(loader)


def test_no_typed_view_on_untyped_graphs():
    g = graphferry.Graph.from_coo(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0]), num_nodes=3)
    with g:
        sub = graphferry.sample_neighbors(g, torch.tensor([0]), [2])
        assert sub.typed is None
        with graphferry.Loader(g, torch.tensor([0, 1]), [2], batch_size=2) as loader:
            assert all(sub.typed is None for sub in loader)

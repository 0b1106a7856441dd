"""graphferry.HeteroGraph: type offsets, id maths, fan-out dicts, node data
per type, and conversion of DGL heterographs into the global COO in relation
order (DGL's to_homogeneous numbering)."""

from __future__ import annotations

import pytest
import torch

import graphferry

HeteroGraph = graphferry.HeteroGraph

WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")
REV = ("paper", "rev_writes", "author")


def _edges():
    return {
        WRITES: (torch.tensor([0, 1, 1, 2]), torch.tensor([0, 0, 3, 4])),
        CITES: (torch.tensor([1, 2, 3]), torch.tensor([0, 0, 1])),
        REV: (torch.tensor([0, 0, 3, 4]), torch.tensor([0, 1, 1, 2])),
    }


@pytest.fixture
def hg():
    with HeteroGraph.from_coo({"paper": 5, "author": 3}, _edges()) as g:
        yield g


def test_offsets_and_sizes(hg):
    assert hg.node_types == ["paper", "author"]
    assert hg.edge_types == [WRITES, CITES, REV]
    assert hg.node_offsets.tolist() == [0, 5, 8]
    assert hg.edge_offsets.tolist() == [0, 4, 7, 11]
    assert hg.node_offsets.dtype == hg.edge_offsets.dtype == torch.int64
    assert hg.relation_src_type == [1, 0, 0]
    assert hg.relation_dst_type == [0, 0, 1]
    assert (hg.num_nodes("paper"), hg.num_nodes("author"), hg.num_nodes()) == (5, 3, 8)
    assert (hg.num_edges(WRITES), hg.num_edges("cites"), hg.num_edges()) == (4, 3, 11)
    assert hg.graph.num_nodes == 8 and hg.graph.num_edges == 11
    assert hg.graph.num_types == (2, 3)


def test_global_coo_in_relation_order(hg):
    """Global edge e of the engine graph is edge e - edge_offsets[r] of
    relation r, with endpoints shifted by their types' node offsets."""
    sub = graphferry.sample_neighbors(hg.graph, torch.arange(8), [-1])
    block = sub.blocks[0]
    src = sub.nodes[block.indices]
    dst = sub.nodes[block.dst_positions()]
    got = {int(e): (int(s), int(d)) for s, d, e in zip(src, dst, block.edge_ids)}
    want = {}
    for r, et in enumerate(hg.edge_types):
        s, d = _edges()[et]
        for j in range(len(s)):
            gs = int(s[j]) + int(hg.node_offsets[hg.relation_src_type[r]])
            gd = int(d[j]) + int(hg.node_offsets[hg.relation_dst_type[r]])
            want[int(hg.edge_offsets[r]) + j] = (gs, gd)
    assert got == want


def test_id_maths(hg):
    assert hg.to_global("author", torch.tensor([0, 2])).tolist() == [5, 7]
    assert hg.to_global("paper", [4]).tolist() == [4]
    assert hg.to_global("author", 1).tolist() == [6]
    types, local = hg.split_nodes(torch.tensor([0, 4, 5, 7]))
    assert types.tolist() == [0, 0, 1, 1] and local.tolist() == [0, 4, 0, 2]
    assert hg.node_type_of([6]).tolist() == [1]
    by_type = hg.nodes_by_type(torch.tensor([6, 2, 5, 0]))
    assert by_type["paper"].tolist() == [2, 0] and by_type["author"].tolist() == [1, 0]
    assert list(hg.nodes_by_type(torch.tensor([1]), all_types=False)) == ["paper"]
    rel, local_e = hg.to_local_edge(torch.tensor([0, 3, 4, 6, 7, 10]))
    assert rel.tolist() == [0, 0, 1, 1, 2, 2] and local_e.tolist() == [0, 3, 0, 2, 0, 3]
    assert hg.relation_of([5]).tolist() == [1]
    assert hg.edge_to_global(REV, torch.tensor([1, 3])).tolist() == [8, 10]
    seeds = hg.to_global_nodes({"author": torch.tensor([2]), "paper": torch.tensor([1, 0])})
    assert seeds.tolist() == [7, 1, 0]
    mask = torch.tensor([False, True, False, False, True])
    assert hg.to_global_nodes({"paper": mask}).tolist() == [1, 4]
    # Round trip on every id.
    types, local = hg.split_nodes(torch.arange(8))
    back = torch.cat([hg.to_global(nt, local[types == t]) for t, nt in enumerate(hg.node_types)])
    assert back.tolist() == list(range(8))


def test_id_errors(hg):
    with pytest.raises(ValueError, match=r"unknown node type 'venue'.*\['paper', 'author'\]"):
        hg.to_global("venue", [0])
    with pytest.raises(ValueError, match=r"node type 'author': id 3 \(at position 1\) is out of range \[0, 3\)"):
        hg.to_global("author", [0, 3])
    with pytest.raises(ValueError, match="out of range"):
        hg.to_global("paper", [-1])
    with pytest.raises(ValueError, match=r"global node ids: id 8"):
        hg.split_nodes([8])
    with pytest.raises(ValueError, match=r"global edge ids: id 11"):
        hg.relation_of([11])
    with pytest.raises(TypeError, match="integer ids"):
        hg.to_global("paper", torch.tensor([0.5]))
    with pytest.raises(ValueError, match="unknown edge type"):
        hg.edge_to_global(("paper", "writes", "author"), [0])
    with pytest.raises(ValueError, match="mask of node type 'paper' has 2 entries"):
        hg.to_global_nodes({"paper": torch.tensor([True, False])})


def test_relation_fanouts_forms(hg):
    # A DGL list of dicts, keys by name or canonical triple.
    assert hg.relation_fanouts([{"writes": 2, CITES: 3, "rev_writes": -1}, 5]) == ((2, 3, -1), (5, 5, 5))
    assert hg.relation_fanouts(4) == ((4, 4, 4),)
    assert hg.relation_fanouts({WRITES: 1, CITES: 0, REV: 2}) == ((1, 0, 2),)
    # PyG's dict of lists.
    assert hg.relation_fanouts({WRITES: [1, 2], CITES: [3, 4], REV: [5, 6]}) == ((1, 3, 5), (2, 4, 6))
    assert hg.relation_fanouts({WRITES: torch.tensor([1, 2]), CITES: [3, 4]}, default=0) == ((1, 3, 0), (2, 4, 0))
    assert hg.relation_fanouts([{"cites": 7}], default=-1) == ((-1, 7, -1),)
    assert hg.relation_fanouts((10, 10, 10)) == ((10,) * 3,) * 3


def test_relation_fanouts_errors(hg):
    with pytest.raises(ValueError, match=r"unknown edge type 'follows'"):
        hg.relation_fanouts({"follows": 1, "writes": 1, "cites": 1, "rev_writes": 1})
    with pytest.raises(ValueError, match=r"fanouts\[1\]: no fan-out for edge types \[\('paper', 'rev_writes'"):
        hg.relation_fanouts([3, {"writes": 1, "cites": 1}])
    with pytest.raises(ValueError, match="given twice"):
        hg.relation_fanouts({"writes": 1, WRITES: 2, "cites": 1, "rev_writes": 1})
    with pytest.raises(ValueError, match="same number of hops"):
        hg.relation_fanouts({WRITES: [1, 2], CITES: [1], REV: [1, 2]})
    with pytest.raises(ValueError, match=r"'fanouts\[0\]\['cites'\]' = -2"):
        hg.relation_fanouts([{"writes": 1, "cites": -2, "rev_writes": 1}])
    with pytest.raises(ValueError, match="int32"):
        hg.relation_fanouts(2**40)
    with pytest.raises(TypeError, match="fan-outs are"):
        hg.relation_fanouts("writes")
    with pytest.raises(TypeError, match="fan-outs are"):
        hg.relation_fanouts(WRITES)
    with pytest.raises(TypeError, match="every edge type to an int, or every edge type to a list"):
        hg.relation_fanouts({WRITES: [1], CITES: 1, REV: 1})


def test_ambiguous_relation_name():
    edges = {
        ("a", "to", "b"): (torch.tensor([0]), torch.tensor([0])),
        ("b", "to", "a"): (torch.tensor([0]), torch.tensor([0])),
    }
    with HeteroGraph.from_coo({"a": 1, "b": 1}, edges) as g:
        with pytest.raises(ValueError, match="'to' is ambiguous"):
            g.relation_fanouts({"to": 1})
        assert g.relation_fanouts({("a", "to", "b"): 1, ("b", "to", "a"): 2}) == ((1, 2),)


def test_from_coo_errors():
    with pytest.raises(ValueError, match=r"unknown node type 'venue'"):
        HeteroGraph.from_coo({"paper": 2}, {("paper", "at", "venue"): ([0], [0])})
    with pytest.raises(ValueError, match=r"destination \('paper'\): id 2 \(at position 0\) is out of range \[0, 2\)"):
        HeteroGraph.from_coo({"paper": 2}, {CITES: ([0], [2])})
    with pytest.raises(ValueError, match="src has 2 ids and dst 1"):
        HeteroGraph.from_coo({"paper": 2}, {CITES: ([0, 1], [1])})
    with pytest.raises(TypeError, match=r"\(src type, name, dst type\)"):
        HeteroGraph.from_coo({"paper": 2}, {"cites": ([0], [1])})
    with pytest.raises(ValueError, match=r"num_nodes\['paper'\] must be >= 0"):
        HeteroGraph.from_coo({"paper": -1}, {})
    with pytest.raises(ValueError, match=r"edge_weights\[\('paper', 'cites', 'paper'\)\] must have shape \[1\]"):
        HeteroGraph.from_coo({"paper": 2}, {CITES: ([0], [1])}, edge_weights={CITES: torch.ones(2)})
    with pytest.raises(TypeError, match="cannot be constructed directly"):
        HeteroGraph(None, [], [], [], [])


def test_node_data_per_type(hg):
    feat = torch.randn(3, 4)
    hg.set_node_data("author", "feat", feat)
    assert hg.get_node_data("author", "feat") is feat
    assert hg.node_data_names("author") == ["feat"] and hg.node_data_names("paper") == []
    assert hg.has_node_data("author", "feat") and not hg.has_node_data("paper", "feat")
    with pytest.raises(
        ValueError, match=r"node data 'feat' of node type 'paper' must have 5 rows \(got shape \[3, 4\]\)"
    ):
        hg.set_node_data("paper", "feat", feat)
    with pytest.raises(KeyError, match="has no node data 'x'"):
        hg.get_node_data("paper", "x")


def test_edge_weights_cover_every_relation(hg):
    """Weights of one relation; the others weigh 1 (uniform), so biased
    sampling never takes a weight-0 edge of that relation and still samples
    the others."""
    hg.set_edge_weights({"writes": torch.tensor([0.0, 1.0, 1.0, 1.0])})
    sub = graphferry.sample_neighbors(hg.graph, torch.tensor([0]), [-1], biased=True)
    eids = set(sub.blocks[0].edge_ids.tolist())
    assert 0 not in eids and {1, 4, 5} <= eids
    with pytest.raises(TypeError, match="float or bool"):
        hg.set_edge_weights({"writes": torch.tensor([0, 1, 1, 1])})


def test_close_and_pickle(hg):
    import pickle

    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(hg)
    assert "paper" in repr(hg)
    hg.close()
    hg.close()
    assert hg.closed and repr(hg) == "HeteroGraph(closed)"


# -- DGL ---------------------------------------------------------------------


def _dgl_graph(idtype=torch.int64):
    dgl = pytest.importorskip("dgl")
    g = dgl.heterograph(
        {
            ("user", "follows", "user"): (torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 3, 0])),
            ("user", "writes", "paper"): (torch.tensor([0, 1, 2, 3, 0]), torch.tensor([0, 1, 2, 0, 3])),
            ("paper", "cites", "paper"): (torch.tensor([0, 1, 2]), torch.tensor([1, 2, 3])),
            ("inst", "employs", "user"): (torch.tensor([1]), torch.tensor([2])),
        },
        num_nodes_dict={"user": 4, "paper": 5, "inst": 2},
        idtype=idtype,
    )
    g.nodes["paper"].data["feat"] = torch.randn(5, 3)
    g.edges["writes"].data["w"] = torch.tensor([1.0, 0.0, 2.0, 1.0, 1.0])
    return g


def test_from_dgl_matches_to_homogeneous():
    dgl = pytest.importorskip("dgl")
    g = _dgl_graph(torch.int32)
    with HeteroGraph.from_dgl(g) as hg:
        assert hg.node_types == g.ntypes
        assert hg.edge_types == g.canonical_etypes
        assert hg.dgl_graph is g
        assert hg.get_node_data("paper", "feat") is g.nodes["paper"].data["feat"]
        homo = dgl.to_homogeneous(g)
        src, dst = homo.edges(order="eid")
        sub = graphferry.sample_neighbors(hg.graph, torch.arange(hg.num_nodes()), [-1])
        b = sub.blocks[0]
        got = {
            int(e): (int(s), int(d)) for s, d, e in zip(sub.nodes[b.indices], sub.nodes[b.dst_positions()], b.edge_ids)
        }
        assert got == {e: (int(s), int(d)) for e, (s, d) in enumerate(zip(src, dst))}
        assert hg.node_offsets.tolist() == [0] + torch.tensor([g.num_nodes(nt) for nt in g.ntypes]).cumsum(0).tolist()


def test_from_dgl_weights_and_errors():
    g = _dgl_graph()
    with HeteroGraph.from_dgl(g, edge_weights="w") as hg:
        # The weight-0 edge (writes 1: user 1 -> paper 1) is never sampled;
        # the other relations without "w" still are.
        seeds = hg.to_global("paper", torch.arange(5))
        sub = graphferry.sample_neighbors(hg.graph, seeds, [-1], biased=True)
        rel, local = hg.to_local_edge(sub.blocks[0].edge_ids)
        writes = hg.etype_index("writes")
        assert 1 not in local[rel == writes].tolist()
        assert (rel == hg.etype_index("cites")).sum() == 3
    with pytest.raises(KeyError, match="no edge type of the DGLGraph has an edata field 'p'"):
        HeteroGraph.from_dgl(g, edge_weights="p")
    with pytest.raises(TypeError, match="expected a 'dgl.DGLGraph'"):
        HeteroGraph.from_dgl(object())


def test_edges_and_to_dgl_round_trip(hg):
    for et in hg.edge_types:
        src, dst = hg.edges(et)
        want_src, want_dst = _edges()[et]
        assert src.tolist() == want_src.tolist() and dst.tolist() == want_dst.tolist()
    pytest.importorskip("dgl")
    hg.set_node_data("author", "feat", torch.arange(6.0).view(3, 2))
    g = hg.to_dgl()
    assert g.canonical_etypes == sorted(hg.edge_types) and sorted(g.ntypes) == sorted(hg.node_types)
    for et in hg.edge_types:
        s, d = g.edges(etype=et, order="eid")
        assert s.tolist() == _edges()[et][0].tolist() and d.tolist() == _edges()[et][1].tolist()
    assert torch.equal(g.nodes["author"].data["feat"], torch.arange(6.0).view(3, 2))

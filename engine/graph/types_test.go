package graph

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// typedFixture: node types A = [0, 3), B = [3, 6); relations 0: A->B,
// 1: B->B, 2: B->A, given relation by relation.
func typedFixture(t *testing.T) (*CSC, *Types, [][2]int64) {
	edges := [][2]int64{
		{0, 3}, {1, 4}, {2, 3}, {0, 5}, // relation 0
		{4, 3}, {5, 3}, {3, 4}, // relation 1
		{3, 0}, {4, 0}, {5, 2}, // relation 2
	}
	var src, dst []int64
	for _, e := range edges {
		src, dst = append(src, e[0]), append(dst, e[1])
	}
	g, err := FromCOO(src, dst, nil, COOOptions{NumNodes: 6})
	require.NoError(t, err)
	ty := &Types{NodeOffsets: []int64{0, 3, 6}, EdgeOffsets: []int64{0, 4, 7, 10}, RelSrc: []int32{0, 1, 1}, RelDst: []int32{1, 1, 0}}
	return g, ty, edges
}

func TestTypesValidateAndSegments(t *testing.T) {
	g, ty, _ := typedFixture(t)
	require.NoError(t, ty.Validate(g, nil))
	require.NoError(t, ty.Validate(g.Wide(), nil))
	require.Equal(t, 2, ty.NumNodeTypes())
	require.Equal(t, 3, ty.NumRelations())
	require.Equal(t, []int32{0, 0, 0, 1, 1, 1}, []int32{ty.NodeType(0), ty.NodeType(1), ty.NodeType(2), ty.NodeType(3), ty.NodeType(4), ty.NodeType(5)})
	for e, want := range []int32{0, 0, 0, 0, 1, 1, 1, 2, 2, 2} {
		require.Equal(t, want, ty.Relation(int64(e)))
	}
	require.Equal(t, [][]int32{{2}, {0, 1}}, ty.RelationsByDst())
	// Node 3's in-edges: 0 and 2 (relation 0), 4 and 5 (relation 1).
	a, b := g.Indptr[3], g.Indptr[4]
	lo, hi := ty.Segment(g, a, b, 0)
	require.Equal(t, []int64{0, 2}, ids(g, lo, hi))
	lo, hi = ty.Segment(g, a, b, 1)
	require.Equal(t, []int64{4, 5}, ids(g, lo, hi))
	lo, hi = ty.Segment(g, a, b, 2)
	require.Equal(t, lo, hi)
	// Identity edge ids (EdgeIDs nil) search by position.
	id := &CSC{NumNodes: 2, Indptr: []int64{0, 0, 3}, Indices: []int64{0, 0, 1}}
	ti := &Types{NodeOffsets: []int64{0, 2}, EdgeOffsets: []int64{0, 1, 3}, RelSrc: []int32{0, 0}, RelDst: []int32{0, 0}}
	require.NoError(t, ti.Validate(id, nil))
	lo, hi = ti.Segment(id, 0, 3, 1)
	require.Equal(t, [2]int64{1, 3}, [2]int64{lo, hi})
	require.Nil(t, (*Types)(nil).Clone())
	c := ty.Clone()
	c.NodeOffsets[1] = 9
	require.Equal(t, int64(3), ty.NodeOffsets[1], "Clone copies")
}

func ids(g *CSC, lo, hi int64) []int64 {
	var out []int64
	for p := lo; p < hi; p++ {
		out = append(out, g.EdgeID(p))
	}
	return out
}

func TestTypesValidateRenumbered(t *testing.T) {
	g, ty, _ := typedFixture(t)
	// Swap nodes 0 <-> 5 and 1 <-> 4 by hand: rows and sources in new ids,
	// lists in their original order, original edge ids.
	newToOld := []int64{5, 4, 2, 3, 1, 0}
	oldToNew := []int64{5, 4, 2, 3, 1, 0}
	indptr := []int64{0}
	var indices, eids []int64
	for nv := range int64(6) {
		v := newToOld[nv]
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			indices = append(indices, oldToNew[g.Source(p)])
			eids = append(eids, g.EdgeID(p))
		}
		indptr = append(indptr, int64(len(indices)))
	}
	r := &CSC{NumNodes: 6, Indptr: indptr, Indices: indices, EdgeIDs: eids}
	require.NoError(t, ty.Validate(r, newToOld))
	require.Error(t, ty.Validate(r, nil), "without the numbering the types do not match")
}

func TestTypesValidateErrors(t *testing.T) {
	g, ty, edges := typedFixture(t)
	mod := func(f func(*Types)) *Types {
		c := ty.Clone()
		f(c)
		return c
	}
	cases := []struct {
		ty  *Types
		msg string
	}{
		{mod(func(c *Types) { c.NodeOffsets[0] = 1 }), "node_offsets[0] = 1, want 0"},
		{mod(func(c *Types) { c.NodeOffsets = []int64{0, 4, 3, 6} }), "node_offsets[2] = 3 is less than"},
		{mod(func(c *Types) { c.NodeOffsets[2] = 5 }), "node_offsets[2] = 5, want the number of nodes (6)"},
		{mod(func(c *Types) { c.EdgeOffsets[3] = 11 }), "edge_offsets[3] = 11, want the number of edges (10)"},
		{mod(func(c *Types) { c.NodeOffsets = []int64{6} }), "node_offsets has 1 entries"},
		{mod(func(c *Types) { c.RelSrc = c.RelSrc[:2] }), "relation_src_type has 2 entries"},
		{mod(func(c *Types) { c.RelDst[1] = 2 }), "relation_dst_type[1] = 2 is out of range [0, 2)"},
		{mod(func(c *Types) { c.RelSrc[0] = -1 }), "relation_src_type[0] = -1 is out of range"},
		{mod(func(c *Types) { c.RelSrc[0] = 1 }), "edge 0 of relation 0 starts at node 0 of type 0, but the relation's source type is 1"},
		{mod(func(c *Types) { c.RelDst[2] = 1 }), "ends at node 0 of type 0, but the relation's destination type is 1"},
		// Relation 1 claims ids [4, 8): edge 7 (3 -> 0) lands in relation 1,
		// whose destination type is B.
		{mod(func(c *Types) { c.EdgeOffsets = []int64{0, 4, 8, 10} }), "edge 7 of relation 1 ends at node 0"},
	}
	for _, c := range cases {
		require.ErrorContains(t, c.ty.Validate(g, nil), c.msg)
	}
	require.ErrorContains(t, (*Types)(nil).CheckShape(1, 1), "types are nil")
	// Not grouped: node 3's list given as relation 1 before relation 0.
	var src, dst []int64
	order := []int{4, 0, 1, 2, 3, 5, 6, 7, 8, 9}
	for _, i := range order {
		src, dst = append(src, edges[i][0]), append(dst, edges[i][1])
	}
	ids := make([]int64, len(order))
	for i, o := range order {
		ids[i] = int64(o)
	}
	bad, err := FromCOO(src, dst, nil, COOOptions{NumNodes: 6})
	require.NoError(t, err)
	for p := range bad.EdgeIDs {
		bad.EdgeIDs[p] = ids[bad.EdgeIDs[p]]
	}
	require.ErrorContains(t, ty.Validate(bad, nil), "node 3's in-edges are not grouped by relation: edge 0 (relation 0) follows an edge of relation 1")
	// Edge ids beyond the edge count (after removing duplicates, say).
	big := &CSC{NumNodes: 6, Indptr: slices.Clone(g.Indptr), Indices32: g.Indices32, EdgeIDs: slices.Clone(g.EdgeIDs)}
	big.EdgeIDs[0] = 10
	require.ErrorContains(t, ty.Validate(big, nil), "edge ids must be below the number of edges 10")
}

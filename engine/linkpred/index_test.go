package linkpred

import (
	"math/rand/v2"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/stretchr/testify/require"
)

func mustIndex(t testing.TB, src, dst []int64, n int64) *EdgeIndex {
	t.Helper()
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: n})
	require.NoError(t, err)
	idx, err := NewEdgeIndex(g, 0)
	require.NoError(t, err)
	return idx
}

func randomEdges(r *rand.Rand, n int64, e int) (src, dst []int64) {
	src, dst = make([]int64, e), make([]int64, e)
	for i := range src {
		src[i], dst[i] = r.Int64N(n), r.Int64N(n)
	}
	return src, dst
}

// wide returns the graph of src -> dst in int64 storage with edge ids
// given explicitly (ids[i] for edge i), rows in input order.
func wideGraph(t testing.TB, src, dst, ids []int64, n int64) *graph.CSC {
	t.Helper()
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: n})
	require.NoError(t, err)
	g = g.Wide()
	if ids != nil {
		eids := make([]int64, len(g.EdgeIDs))
		for p, e := range g.EdgeIDs {
			eids[p] = ids[e]
		}
		g = &graph.CSC{NumNodes: g.NumNodes, Indptr: g.Indptr, Indices: g.Indices, EdgeIDs: eids}
	}
	require.NoError(t, g.Validate())
	return g
}

func TestEndpointsAndHasEdgeMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n, e = 60, 900
	src, dst := randomEdges(r, n, e)
	edges := map[[2]int64]bool{}
	for i := range src {
		edges[[2]int64{src[i], dst[i]}] = true
	}
	perm := r.Perm(e)
	sparseIDs := make([]int64, e)
	denseIDs := make([]int64, e)
	for i, p := range perm {
		denseIDs[i] = int64(p)
		sparseIDs[i] = int64(p)*1_000_003 + 7
	}
	cases := map[string]struct {
		g   *graph.CSC
		ids []int64 // id of input edge i
	}{
		"compact, ids = input order": {mustIndex(t, src, dst, n).g, nil},
		"wide, ids = input order":    {wideGraph(t, src, dst, nil, n), nil},
		"wide, permuted ids":         {wideGraph(t, src, dst, denseIDs, n), denseIDs},
		"wide, sparse ids":           {wideGraph(t, src, dst, sparseIDs, n), sparseIDs},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			idx, err := NewEdgeIndex(c.g, 3)
			require.NoError(t, err)
			eids := make([]int64, 0, 2*e)
			var want Pairs
			for _, i := range r.Perm(e) {
				id := int64(i)
				if c.ids != nil {
					id = c.ids[i]
				}
				eids = append(eids, id)
				want.Src = append(want.Src, src[i])
				want.Dst = append(want.Dst, dst[i])
			}
			got, err := idx.Endpoints(eids)
			require.NoError(t, err)
			require.Equal(t, want, got)
			for u := range int64(n) {
				for v := range int64(n) {
					require.Equal(t, edges[[2]int64{u, v}], idx.HasEdge(u, v), "%d->%d", u, v)
				}
			}
			require.False(t, idx.HasEdge(-1, 0))
			require.False(t, idx.HasEdge(0, n))
		})
	}
}

// A graph whose rows are already sorted answers from its own storage.
func TestHasEdgeSortedRowsUseTheGraph(t *testing.T) {
	idx := mustIndex(t, []int64{0, 1, 2, 0}, []int64{1, 1, 1, 2}, 3)
	require.True(t, idx.HasEdge(2, 1))
	require.False(t, idx.HasEdge(1, 2))
	require.Nil(t, idx.sorted32)
	require.Nil(t, idx.sorted64)
	// Sorted destinations give identity edge ids (EdgeIDs nil).
	require.Nil(t, idx.g.EdgeIDs)
	pos, err := idx.Endpoints([]int64{3, 0})
	require.NoError(t, err)
	require.Equal(t, Pairs{Src: []int64{0, 0}, Dst: []int64{2, 1}}, pos)
	_, err = idx.Endpoints([]int64{4})
	require.ErrorContains(t, err, "ids[0] = 4 is not an edge of the graph (4 edges)")

	idx = mustIndex(t, []int64{2, 0, 1}, []int64{1, 1, 1}, 3)
	require.True(t, idx.HasEdge(0, 1))
	require.NotNil(t, idx.sorted32)
	require.Equal(t, []int32{2, 0, 1}, idx.g.Indices32, "the graph is not modified")
}

func TestEndpointsErrors(t *testing.T) {
	idx := mustIndex(t, dglSrc, dglDst, 10)
	_, err := idx.Endpoints([]int64{0, 1, 6, 7})
	require.ErrorContains(t, err, "seed edge ids[2] = 6 is not an edge of the graph (6 edges)")
	_, err = idx.Endpoints([]int64{-1})
	require.ErrorContains(t, err, "seed edge ids[0] = -1")

	g := wideGraph(t, []int64{0, 1, 2}, []int64{1, 2, 0}, []int64{4, 9, 4}, 3)
	idx, err = NewEdgeIndex(g, 0)
	require.NoError(t, err)
	_, err = idx.Endpoints([]int64{9})
	require.ErrorContains(t, err, "graph edge ids are not unique: id 4")
	g = wideGraph(t, []int64{0, 1, 2}, []int64{1, 2, 0}, []int64{1 << 40, 9, 1 << 40}, 3)
	idx, err = NewEdgeIndex(g, 0)
	require.NoError(t, err)
	_, err = idx.Endpoints([]int64{9})
	require.ErrorContains(t, err, "id 1099511627776 is at positions")

	_, err = NewEdgeIndex(nil, 0)
	require.ErrorContains(t, err, "graph is nil")
	_, err = NewEdgeIndex(&graph.CSC{NumNodes: 3, Indptr: []int64{0}}, 0)
	require.ErrorContains(t, err, "1 row pointers for 3 nodes")
}

// The first bad id is reported whatever the thread count and chunking.
func TestEndpointsReportsTheFirstBadID(t *testing.T) {
	idx := mustIndex(t, dglSrc, dglDst, 10)
	eids := make([]int64, 10000)
	eids[7777], eids[9000], eids[123] = 99, 100, 101
	defer setGrain(16)()
	_, err := idx.Endpoints(eids)
	require.ErrorContains(t, err, "ids[123] = 101")
}

func setGrain(g int) func() {
	old := grain
	grain = g
	return func() { grain = old }
}

// randomIndex indexes a random graph with n nodes and e edges (fixed seed).
func randomIndex(t testing.TB, n int64, e int) *EdgeIndex {
	src, dst := randomEdges(rand.New(rand.NewPCG(uint64(n), uint64(e))), n, e)
	return mustIndex(t, src, dst, n)
}

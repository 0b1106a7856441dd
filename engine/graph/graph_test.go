package graph

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// useWideStorage makes the builders and Compact keep int64 storage for the
// rest of the test (not for parallel tests).
func useWideStorage(t testing.TB) {
	old := compactLimit
	compactLimit = 0
	t.Cleanup(func() { compactLimit = old })
}

// randomEdges returns e random edges over n nodes.
func randomEdges(r *rand.Rand, n int64, e int) (src, dst []int64) {
	src, dst = make([]int64, e), make([]int64, e)
	for i := range src {
		src[i], dst[i] = r.Int64N(n), r.Int64N(n)
	}
	return src, dst
}

func TestStorageAccessors(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	src, dst := randomEdges(r, 300, 100_000)
	wide := naiveCOO(src, dst, nil, COOOptions{NumNodes: 300})
	require.False(t, wide.IsCompact())
	compact := wide.Compact()
	require.NoError(t, compact.Validate())
	require.True(t, compact.IsCompact())
	assert.Nil(t, compact.Indices)
	assert.Same(t, &wide.Indptr[0], &compact.Indptr[0], "Compact shares Indptr")
	assert.Same(t, &wide.EdgeIDs[0], &compact.EdgeIDs[0], "Compact shares EdgeIDs")
	assert.Same(t, compact, compact.Compact(), "already compact")
	back := compact.Wide()
	assert.Same(t, back, back.Wide())
	assert.Equal(t, wide.Indices, back.Indices)

	e := wide.NumEdges()
	require.Equal(t, e, compact.NumEdges())
	pos := make([]int64, 1000)
	for i := range pos {
		pos[i] = r.Int64N(e / 2)
	}
	base := e / 3
	want := make([]int64, len(pos))
	for i, p := range pos {
		want[i] = wide.Indices[base+p]
	}
	for _, g := range []*CSC{wide, compact} {
		for p := range e {
			require.Equal(t, wide.Indices[p], g.Source(p))
		}
		got := make([]int64, len(pos))
		g.Sources(base, pos, got)
		assert.Equal(t, want, got)
		inPlace := append([]int64(nil), pos...)
		g.Sources(base, inPlace, inPlace)
		assert.Equal(t, want, inPlace, "out aliasing pos")
		dst := make([]int64, 500)
		g.CopySources(dst, 1000, 1500)
		assert.Equal(t, wide.Indices[1000:1500], dst)
	}

	useWideStorage(t)
	assert.Same(t, wide, wide.Compact(), "too many nodes for int32")
}

func TestValidateCompact(t *testing.T) {
	ok := func() *CSC {
		return &CSC{NumNodes: 3, Indptr: []int64{0, 2, 2, 3}, Indices32: []int32{1, 2, 0}}
	}
	require.NoError(t, ok().Validate())
	require.NoError(t, (&CSC{Indptr: []int64{0}, Indices32: []int32{}}).Validate(), "empty compact graph")
	tests := []struct {
		name   string
		modify func(g *CSC)
		msg    string
	}{
		{"both storages", func(g *CSC) { g.Indices = []int64{1, 2, 0} }, "graph: CSC has both Indices (3 entries) and Indices32 (3 entries); exactly one may hold the sources"},
		{"index negative", func(g *CSC) { g.Indices32[1] = -2 }, "graph: CSC indices[1]=-2 is out of range [0, 3)"},
		{"index too large", func(g *CSC) { g.Indices32[2] = 3 }, "graph: CSC indices[2]=3 is out of range [0, 3)"},
		{"indptr end", func(g *CSC) { g.Indices32 = g.Indices32[:2] }, "graph: CSC indptr[3]=3, want len(indices)=2"},
		{"edge ids length", func(g *CSC) { g.EdgeIDs = []int64{1} }, "graph: CSC len(edgeIDs)=1, want len(indices)=3 (or nil)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := ok()
			tc.modify(g)
			require.EqualError(t, g.Validate(), tc.msg)
		})
	}
}

// TestBuildersWideAndCompact checks that FromCOO and FromCSR give the same
// graph whichever storage they pick.
func TestBuildersWideAndCompact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 2000
	src, dst := randomEdges(r, n, 200_000)
	w := make([]float32, len(src))
	for i := range w {
		w[i] = r.Float32()
	}
	opts := []COOOptions{{}, {RemoveDuplicates: true, RemoveSelfLoops: true}, {RemoveDuplicates: true, Threads: 3}}
	var compact []*CSC
	for _, opt := range opts {
		g, err := FromCOO(src, dst, w, opt)
		require.NoError(t, err)
		require.True(t, g.IsCompact())
		compact = append(compact, g)
	}
	indptr := make([]int64, n+1)
	for _, s := range src {
		indptr[s+1]++
	}
	for u := range n {
		indptr[u+1] += indptr[u]
	}
	fill := append([]int64(nil), indptr[:n]...)
	csrInd := make([]int64, len(src))
	for i, s := range src {
		csrInd[fill[s]] = dst[i]
		fill[s]++
	}
	csrC, err := FromCSR(n, indptr, csrInd, nil, nil)
	require.NoError(t, err)
	require.True(t, csrC.IsCompact())

	useWideStorage(t)
	for i, opt := range opts {
		g, err := FromCOO(src, dst, w, opt)
		require.NoError(t, err)
		require.False(t, g.IsCompact())
		requireSameCSC(t, g, compact[i])
		requireSameCSC(t, naiveCOO(src, dst, w, opt), g)
	}
	csrW, err := FromCSR(n, indptr, csrInd, nil, nil)
	require.NoError(t, err)
	require.False(t, csrW.IsCompact())
	requireSameCSC(t, csrW, csrC)
}

// A windowed CSC holds the rows of its window only: Span and InDegree read
// them by node id, every other node has no in-edges, and Validate checks
// the window lies among the nodes and the sources among all of them.
func TestWindowedRows(t *testing.T) {
	// 10 nodes; rows 4, 5, 6 held: 4 <- {0, 9}, 5 <- {}, 6 <- {5}.
	g := &CSC{NumNodes: 10, Windowed: true, RowBase: 4, Indptr: []int64{0, 2, 2, 3}, Indices: []int64{0, 9, 5}}
	require.NoError(t, g.Validate())
	lo, hi := g.HeldRows()
	assert.Equal(t, [2]int64{4, 7}, [2]int64{lo, hi})
	for v, want := range map[int64][2]int64{0: {0, 0}, 3: {0, 0}, 4: {0, 2}, 5: {2, 2}, 6: {2, 3}, 7: {0, 0}, 9: {0, 0}, -1: {0, 0}, 10: {0, 0}} {
		a, b := g.Span(v)
		assert.Equal(t, want, [2]int64{a, b}, "node %d", v)
		assert.Equal(t, want[1]-want[0], g.InDegree(v), "node %d", v)
	}
	c := g.Compact()
	require.NoError(t, c.Validate())
	assert.True(t, c.Windowed)
	assert.Equal(t, int64(4), c.RowBase)
	assert.Equal(t, c.RowBase, c.Wide().RowBase)

	// An unwindowed graph: every row, RowBase 0.
	full := &CSC{NumNodes: 3, Indptr: []int64{0, 1, 1, 2}, Indices: []int64{2, 0}}
	require.NoError(t, full.Validate())
	a, b := full.Span(2)
	assert.Equal(t, [2]int64{1, 2}, [2]int64{a, b})

	for name, bad := range map[string]struct {
		g    *CSC
		want string
	}{
		"past the nodes":  {&CSC{NumNodes: 5, Windowed: true, RowBase: 4, Indptr: []int64{0, 0, 0}}, "window of 2 rows from 4 is outside the 5 nodes"},
		"negative base":   {&CSC{NumNodes: 5, Windowed: true, RowBase: -1, Indptr: []int64{0}}, "outside the 5 nodes"},
		"no indptr":       {&CSC{NumNodes: 5, Windowed: true}, "outside the 5 nodes"},
		"base unwindowed": {&CSC{NumNodes: 2, RowBase: 1, Indptr: []int64{0, 0, 0}}, "RowBase=1 on a graph that is not windowed"},
		"source out":      {&CSC{NumNodes: 5, Windowed: true, RowBase: 1, Indptr: []int64{0, 1}, Indices: []int64{5}}, "indices[0]=5 is out of range [0, 5)"},
		"compact source":  {&CSC{NumNodes: 5, Windowed: true, RowBase: 1, Indptr: []int64{0, 1}, Indices32: []int32{7}}, "indices[0]=7 is out of range [0, 5)"},
		"end":             {&CSC{NumNodes: 5, Windowed: true, RowBase: 1, Indptr: []int64{0, 2}, Indices: []int64{1}}, "indptr[1]=2, want len(indices)=1"},
	} {
		assert.ErrorContains(t, bad.g.Validate(), bad.want, name)
	}
}

package graph

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveCOO is the reference CSC build: row v lists, in input order, the
// edges i with dst[i] == v that the options keep.
func naiveCOO(src, dst []int64, w []float32, opt COOOptions) *CSC {
	n := opt.NumNodes
	if n <= 0 {
		n = 0
		for i := range src {
			n = max(n, src[i]+1, dst[i]+1)
		}
	}
	rows := make([][]int64, n) // edge positions per row
	for i := range src {
		if opt.RemoveSelfLoops && src[i] == dst[i] {
			continue
		}
		rows[dst[i]] = append(rows[dst[i]], int64(i))
	}
	g := &CSC{NumNodes: n, Indptr: make([]int64, n+1), Indices: []int64{}, EdgeIDs: []int64{}}
	if w != nil {
		g.Weights = []float32{}
	}
	for v, row := range rows {
		seen := map[int64]bool{}
		for _, i := range row {
			if opt.RemoveDuplicates && seen[src[i]] {
				continue
			}
			seen[src[i]] = true
			g.Indices = append(g.Indices, src[i])
			g.EdgeIDs = append(g.EdgeIDs, i)
			if w != nil {
				g.Weights = append(g.Weights, w[i])
			}
		}
		g.Indptr[v+1] = int64(len(g.Indices))
	}
	return g
}

// sources returns the sources of g (either storage) as int64.
func sources(g *CSC) []int64 {
	out := make([]int64, g.NumEdges())
	g.CopySources(out, 0, g.NumEdges())
	return out
}

// edgeIDs returns the edge ids of g with the nil (identity) case expanded.
func edgeIDs(g *CSC) []int64 {
	out := make([]int64, g.NumEdges())
	for p := range out {
		out[p] = g.EdgeID(int64(p))
	}
	return out
}

// requireSameSlice compares two slices with slices.Equal (reflect-based
// comparison is very slow under -race) and reports the first difference.
func requireSameSlice[T comparable](t *testing.T, want, got []T, name string) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	require.Equal(t, len(want), len(got), "len(%s)", name)
	for i := range want {
		require.Equal(t, want[i], got[i], "%s[%d]", name, i)
	}
}

// requireSameCSC checks that got equals want exactly (up to nil vs. empty
// slices and nil vs. identity edge ids).
func requireSameCSC(t *testing.T, want, got *CSC) {
	t.Helper()
	require.NoError(t, got.Validate())
	require.Equal(t, want.NumNodes, got.NumNodes, "NumNodes")
	requireSameSlice(t, want.Indptr, got.Indptr, "Indptr")
	requireSameSlice(t, sources(want), sources(got), "sources")
	requireSameSlice(t, edgeIDs(want), edgeIDs(got), "EdgeIDs")
	require.Equal(t, want.Weights == nil, got.Weights == nil, "Weights nil-ness")
	requireSameSlice(t, want.Weights, got.Weights, "Weights")
}

func TestFromCOOTable(t *testing.T) {
	tests := []struct {
		name     string
		src, dst []int64
		w        []float32
		opt      COOOptions
		indptr   []int64
		indices  []int64
		eids     []int64 // nil: identity
	}{
		{name: "empty", indptr: []int64{0}},
		{name: "empty with nodes", opt: COOOptions{NumNodes: 3}, indptr: []int64{0, 0, 0, 0}},
		{name: "isolated nodes", src: []int64{0}, dst: []int64{2}, opt: COOOptions{NumNodes: 5},
			indptr: []int64{0, 0, 0, 1, 1, 1}, indices: []int64{0}},
		{name: "inferred size", src: []int64{4, 1}, dst: []int64{0, 0},
			indptr: []int64{0, 2, 2, 2, 2, 2}, indices: []int64{4, 1}},
		{name: "stable order", src: []int64{3, 1, 2, 0, 1}, dst: []int64{1, 0, 1, 1, 0},
			indptr: []int64{0, 2, 5, 5, 5}, indices: []int64{1, 1, 3, 2, 0}, eids: []int64{1, 4, 0, 2, 3}},
		{name: "duplicates kept", src: []int64{1, 0, 1, 1}, dst: []int64{0, 1, 0, 0},
			indptr: []int64{0, 3, 4}, indices: []int64{1, 1, 1, 0}, eids: []int64{0, 2, 3, 1}},
		{name: "duplicates removed", src: []int64{1, 0, 1, 1}, dst: []int64{0, 1, 0, 0}, opt: COOOptions{RemoveDuplicates: true},
			indptr: []int64{0, 1, 2}, indices: []int64{1, 0}, eids: []int64{0, 1}},
		{name: "self-loops kept", src: []int64{0, 1, 1}, dst: []int64{0, 0, 1},
			indptr: []int64{0, 2, 3}, indices: []int64{0, 1, 1}},
		{name: "self-loops removed", src: []int64{0, 1, 1}, dst: []int64{0, 0, 1}, opt: COOOptions{RemoveSelfLoops: true},
			indptr: []int64{0, 1, 1}, indices: []int64{1}, eids: []int64{1}},
		{name: "both removed", src: []int64{2, 2, 0, 2, 0}, dst: []int64{2, 0, 0, 0, 2}, opt: COOOptions{RemoveSelfLoops: true, RemoveDuplicates: true},
			indptr: []int64{0, 1, 1, 2}, indices: []int64{2, 0}, eids: []int64{1, 4}},
		{name: "weights follow edges", src: []int64{0, 1}, dst: []int64{1, 0}, w: []float32{0.5, 2},
			indptr: []int64{0, 1, 2}, indices: []int64{1, 0}, eids: []int64{1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := FromCOO(tc.src, tc.dst, tc.w, tc.opt)
			require.NoError(t, err)
			require.NoError(t, g.Validate())
			assert.Equal(t, tc.indptr, g.Indptr)
			assert.True(t, g.IsCompact(), "small graphs get int32 storage")
			assert.Nil(t, g.Indices)
			assert.Equal(t, len(tc.indices), int(g.NumEdges()))
			if len(tc.indices) > 0 {
				assert.Equal(t, tc.indices, sources(g))
			}
			wantIDs := tc.eids
			if wantIDs == nil {
				wantIDs = make([]int64, len(tc.indices))
				for i := range wantIDs {
					wantIDs[i] = int64(i)
				}
			}
			assert.Equal(t, wantIDs, edgeIDs(g))
			requireSameCSC(t, naiveCOO(tc.src, tc.dst, tc.w, tc.opt), g)
		})
	}
}

func TestFromCOOSortedInputHasIdentityEdgeIDs(t *testing.T) {
	g, err := FromCOO([]int64{1, 2, 0}, []int64{0, 0, 2}, nil, COOOptions{})
	require.NoError(t, err)
	assert.Nil(t, g.EdgeIDs, "dst already sorted: edge ids are CSC positions")
	// With a dropped self-loop the ids are no longer positions.
	g, err = FromCOO([]int64{0, 2, 0}, []int64{0, 0, 2}, nil, COOOptions{RemoveSelfLoops: true})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, g.EdgeIDs)
}

func TestFromCOOErrors(t *testing.T) {
	tests := []struct {
		name     string
		src, dst []int64
		w        []float32
		opt      COOOptions
		msg      string
	}{
		{"length mismatch", []int64{0, 1}, []int64{0}, nil, COOOptions{}, "len(src)=2 does not equal len(dst)=1"},
		{"weights mismatch", []int64{0}, []int64{0}, []float32{1, 2}, COOOptions{}, "len(weights)=2"},
		{"negative src", []int64{0, -1}, []int64{0, 0}, nil, COOOptions{}, "src[1]=-1 is negative"},
		{"negative dst", []int64{0, 1}, []int64{0, -7}, nil, COOOptions{}, "dst[1]=-7 is negative"},
		{"src too large", []int64{0, 5}, []int64{0, 0}, nil, COOOptions{NumNodes: 5}, "src[1]=5 is out of range [0, 5)"},
		{"dst too large", []int64{0}, []int64{9}, nil, COOOptions{NumNodes: 3}, "dst[0]=9 is out of range [0, 3)"},
		{"NaN weight", []int64{0, 1}, []int64{1, 0}, []float32{1, float32(math.NaN())}, COOOptions{}, "weights[1]=NaN is not finite"},
		{"Inf weight", []int64{0}, []int64{1}, []float32{float32(math.Inf(1))}, COOOptions{}, "weights[0]=+Inf is not finite"},
		{"negative weight", []int64{0}, []int64{1}, []float32{-1}, COOOptions{}, "weights[0]=-1 is negative"},
		{"huge id", []int64{0}, []int64{math.MaxInt64 - 1}, nil, COOOptions{}, "exceeds MaxNodes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := FromCOO(tc.src, tc.dst, tc.w, tc.opt)
			require.Error(t, err)
			assert.Nil(t, g)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// randomCOO returns e random edges over n nodes with many duplicates and
// self-loops, plus weights.
func randomCOO(r *rand.Rand, n, e int64) (src, dst []int64, w []float32) {
	src, dst, w = make([]int64, e), make([]int64, e), make([]float32, e)
	for i := range src {
		src[i], dst[i], w[i] = r.Int64N(n), r.Int64N(n), float32(r.IntN(100))
	}
	return
}

func TestFromCOOParallelMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Big enough to be split into several chunks; small n gives long rows
	// (the sort-based duplicate search) and many duplicates.
	for _, n := range []int64{7, 300, 50000} {
		src, dst, w := randomCOO(r, n, 150_000)
		for _, opt := range []COOOptions{{}, {RemoveDuplicates: true}, {RemoveSelfLoops: true, RemoveDuplicates: true}, {NumNodes: n + 10}} {
			want := naiveCOO(src, dst, w, opt)
			for _, threads := range []int{1, 3, 8} {
				opt.Threads = threads
				g, err := FromCOO(src, dst, w, opt)
				require.NoError(t, err)
				requireSameCSC(t, want, g)
			}
		}
	}
}

func TestFromCSC(t *testing.T) {
	indptr, indices := []int64{0, 1, 3}, []int64{1, 0, 1}
	g, err := FromCSC(2, indptr, indices, nil, nil)
	require.NoError(t, err)
	assert.Same(t, &indices[0], &g.Indices[0], "FromCSC must not copy")
	assert.Equal(t, int64(3), g.NumEdges())
	assert.Equal(t, int64(2), g.InDegree(1))

	_, err = FromCSC(2, []int64{0, 1, 3}, []int64{1, 0, 2}, nil, nil)
	require.EqualError(t, err, "graph: CSC indices[2]=2 is out of range [0, 2)")
}

func TestValidateErrors(t *testing.T) {
	ok := func() *CSC {
		return &CSC{NumNodes: 3, Indptr: []int64{0, 2, 2, 3}, Indices: []int64{1, 2, 0}, EdgeIDs: []int64{5, 6, 7}, Weights: []float32{1, 0, 2}}
	}
	require.NoError(t, ok().Validate())
	require.NoError(t, (&CSC{Indptr: []int64{0}}).Validate(), "empty graph")
	tests := []struct {
		name   string
		modify func(g *CSC)
		msg    string
	}{
		{"nil", nil, "graph: CSC is nil"},
		{"negative nodes", func(g *CSC) { g.NumNodes = -1 }, "graph: CSC NumNodes=-1 is negative"},
		{"indptr length", func(g *CSC) { g.Indptr = g.Indptr[:3] }, "graph: CSC len(indptr)=3, want NumNodes+1=4"},
		{"indptr start", func(g *CSC) { g.Indptr[0] = 1 }, "graph: CSC indptr[0]=1, want 0"},
		{"indptr decreasing", func(g *CSC) { g.Indptr[2] = 1 }, "graph: CSC indptr[2]=1 is less than indptr[1]=2 (indptr must be non-decreasing)"},
		{"indptr end", func(g *CSC) { g.Indptr[3] = 2 }, "graph: CSC indptr[3]=2, want len(indices)=3"},
		{"index negative", func(g *CSC) { g.Indices[1] = -2 }, "graph: CSC indices[1]=-2 is out of range [0, 3)"},
		{"index too large", func(g *CSC) { g.Indices[2] = 3 }, "graph: CSC indices[2]=3 is out of range [0, 3)"},
		{"edge ids length", func(g *CSC) { g.EdgeIDs = g.EdgeIDs[:2] }, "graph: CSC len(edgeIDs)=2, want len(indices)=3 (or nil)"},
		{"edge id negative", func(g *CSC) { g.EdgeIDs[0] = -1 }, "graph: CSC edgeIDs[0]=-1 is negative"},
		{"weights length", func(g *CSC) { g.Weights = g.Weights[:1] }, "graph: CSC len(weights)=1, want len(indices)=3 (or nil)"},
		{"weight NaN", func(g *CSC) { g.Weights[2] = float32(math.NaN()) }, "graph: CSC weights[2]=NaN is not finite (weights must be finite and >= 0)"},
		{"weight Inf", func(g *CSC) { g.Weights[2] = float32(math.Inf(1)) }, "graph: CSC weights[2]=+Inf is not finite (weights must be finite and >= 0)"},
		{"weight negative", func(g *CSC) { g.Weights[1] = -0.5 }, "graph: CSC weights[1]=-0.5 is negative (weights must be finite and >= 0)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var g *CSC
			if tc.modify != nil {
				g = ok()
				tc.modify(g)
			}
			require.EqualError(t, g.Validate(), tc.msg)
		})
	}
}

func TestValidateLargeReportsFirstError(t *testing.T) {
	// Several chunks, errors in two of them: the earliest must be reported.
	n := int64(1 << 18)
	g := &CSC{NumNodes: n, Indptr: make([]int64, n+1), Indices: make([]int64, n)}
	for v := range n {
		g.Indptr[v+1] = v + 1
	}
	require.NoError(t, g.Validate())
	g.Indices[n-5] = n
	g.Indices[n/2+3] = -1
	require.EqualError(t, g.Validate(), "graph: CSC indices[131075]=-1 is out of range [0, 262144)")
	g.Indptr[n-1] = 0
	g.Indptr[100] = 0
	require.EqualError(t, g.Validate(), "graph: CSC indptr[100]=0 is less than indptr[99]=99 (indptr must be non-decreasing)")
}

// naiveCSR transposes an out-neighbour CSR into CSC the obvious way.
func naiveCSR(n int64, indptr, indices, eids []int64, w []float32) *CSC {
	var src, dst []int64
	for u := range n {
		for p := indptr[u]; p < indptr[u+1]; p++ {
			src = append(src, u)
			dst = append(dst, indices[p])
		}
	}
	g := naiveCOO(src, dst, w, COOOptions{NumNodes: n})
	if eids != nil {
		for i, p := range g.EdgeIDs {
			g.EdgeIDs[i] = eids[p]
		}
	}
	return g
}

func TestFromCSR(t *testing.T) {
	// 0->1, 0->2, 1->2, 2->0, 2->2, 3 isolated.
	indptr := []int64{0, 2, 3, 5, 5}
	indices := []int64{1, 2, 2, 0, 2}
	g, err := FromCSR(4, indptr, indices, nil, nil)
	require.NoError(t, err)
	require.NoError(t, g.Validate())
	assert.Equal(t, []int64{0, 1, 2, 5, 5}, g.Indptr)
	assert.True(t, g.IsCompact())
	assert.Equal(t, []int64{2, 0, 0, 1, 2}, sources(g))
	assert.Equal(t, []int64{3, 0, 1, 2, 4}, g.EdgeIDs)

	eids := []int64{10, 11, 12, 13, 14}
	w := []float32{1, 2, 3, 4, 5}
	g, err = FromCSR(4, indptr, indices, eids, w)
	require.NoError(t, err)
	assert.Equal(t, []int64{13, 10, 11, 12, 14}, g.EdgeIDs)
	assert.Equal(t, []float32{4, 1, 2, 3, 5}, g.Weights)

	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int64{1, 10, 5000} {
		e := int64(150_000)
		deg := make([]int64, n)
		for range e {
			deg[r.Int64N(n)]++
		}
		ip := make([]int64, n+1)
		for u := range n {
			ip[u+1] = ip[u] + deg[u]
		}
		ind, ids, ws := make([]int64, e), make([]int64, e), make([]float32, e)
		for i := range ind {
			ind[i], ids[i], ws[i] = r.Int64N(n), r.Int64N(1<<40), r.Float32()
		}
		got, err := FromCSR(n, ip, ind, ids, ws)
		require.NoError(t, err)
		requireSameCSC(t, naiveCSR(n, ip, ind, ids, ws), got)
		got, err = FromCSR(n, ip, ind, nil, nil)
		require.NoError(t, err)
		requireSameCSC(t, naiveCSR(n, ip, ind, nil, nil), got)
	}
}

func TestFromCSRErrors(t *testing.T) {
	_, err := FromCSR(2, []int64{0, 2, 1}, []int64{0}, nil, nil)
	require.EqualError(t, err, "graph: CSR indptr[2]=1 is less than indptr[1]=2 (indptr must be non-decreasing)")
	_, err = FromCSR(2, []int64{0, 1, 2}, []int64{0, 2}, nil, nil)
	require.EqualError(t, err, "graph: CSR indices[1]=2 is out of range [0, 2)")
	_, err = FromCSR(2, []int64{0, 1}, nil, nil, nil)
	require.EqualError(t, err, "graph: CSR len(indptr)=2, want NumNodes+1=3")
}

// FuzzFromCOO builds a graph from fuzzed bytes (each pair of bytes is one
// edge over at most 256 nodes) and checks the invariants and the edge
// multiset against the naive build.
func FuzzFromCOO(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint8(0))
	f.Add([]byte{0, 1, 1, 0, 1, 0, 2, 2}, uint8(3), uint8(3))
	f.Add([]byte{5, 5, 5, 5, 1, 5, 5, 1, 1, 5}, uint8(0), uint8(2))
	f.Add([]byte{5, 5, 5, 5, 1, 5, 5, 1, 1, 5, 0, 0}, uint8(0), uint8(128|4|3))
	f.Fuzz(func(t *testing.T, data []byte, numNodes uint8, flags uint8) {
		e := len(data) / 2
		src, dst := make([]int64, e), make([]int64, e)
		var w []float32
		if flags&4 != 0 {
			w = make([]float32, e)
		}
		for i := range e {
			src[i], dst[i] = int64(data[2*i]), int64(data[2*i+1])
			if w != nil {
				w[i] = float32(data[2*i]) / 4
			}
		}
		if flags&128 != 0 {
			useWideStorage(t)
		}
		opt := COOOptions{
			NumNodes:         int64(numNodes),
			RemoveSelfLoops:  flags&1 != 0,
			RemoveDuplicates: flags&2 != 0,
			Threads:          int(flags>>3)%4 + 1,
		}
		g, err := FromCOO(src, dst, w, opt)
		if opt.NumNodes > 0 {
			for i := range e {
				if src[i] >= opt.NumNodes || dst[i] >= opt.NumNodes {
					require.Error(t, err)
					return
				}
			}
		}
		require.NoError(t, err)
		require.NoError(t, g.Validate())
		want := naiveCOO(src, dst, w, opt)
		requireSameCSC(t, want, g)
		// Multiset of (src, dst, eid): every kept edge is a real input edge.
		seen := map[int64]bool{}
		for v := range g.NumNodes {
			for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
				id := g.EdgeID(p)
				require.False(t, seen[id], "edge id %d twice", id)
				seen[id] = true
				require.Equal(t, src[id], g.Source(p))
				require.Equal(t, dst[id], v)
			}
		}
	})
}

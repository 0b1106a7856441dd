package partition

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
)

// randomGraph returns a weighted graph with n nodes and e random edges
// (duplicates and self-loops included) whose edge ids are input positions.
func randomGraph(t *testing.T, r *rand.Rand, n, e int64) *graph.CSC {
	t.Helper()
	src, dst, w := make([]int64, e), make([]int64, e), make([]float32, e)
	for i := range src {
		src[i], dst[i], w[i] = r.Int64N(n), r.Int64N(n), float32(i)
	}
	g, err := graph.FromCOO(src, dst, w, graph.COOOptions{NumNodes: n})
	require.NoError(t, err)
	return g
}

// checkPartition verifies every property Build promises for p built from g.
func checkPartition(t *testing.T, g *graph.CSC, p *Partitioned, np int, assign func(old int64) int) {
	t.Helper()
	n := g.NumNodes
	require.Equal(t, np, p.NumPatches())
	require.Equal(t, n, p.NumNodes())
	require.Equal(t, int64(0), p.Offsets[0])
	require.True(t, slices.IsSorted(p.Offsets), "offsets must be non-decreasing")
	require.NoError(t, p.Graph.Validate())
	require.True(t, p.Graph.IsCompact(), "small graphs come out with int32 sources")

	newToOld := p.NewToOld
	if newToOld == nil {
		require.Nil(t, p.OldToNew)
		newToOld = make([]int64, n)
		for i := range newToOld {
			newToOld[i] = int64(i)
		}
	}
	oldToNew := make([]int64, n)
	for i, o := range newToOld {
		oldToNew[o] = int64(i)
	}
	if p.OldToNew != nil {
		require.True(t, slices.Equal(oldToNew, p.OldToNew), "OldToNew is the inverse of NewToOld")
	}
	for q := range np {
		lo, hi := p.PatchRange(q)
		for v := lo; v < hi; v++ {
			if got := p.Owner(v); got != q {
				t.Fatalf("Owner(%d)=%d, want %d", v, got, q)
			}
			if got := assign(newToOld[v]); got != q {
				t.Fatalf("original node %d is in patch %d, want %d", newToOld[v], q, got)
			}
			if v > lo && newToOld[v-1] >= newToOld[v] {
				t.Fatalf("patch %d must keep increasing original ids: %d then %d", q, newToOld[v-1], newToOld[v])
			}
		}
	}
	// Row new(v) is row v, mapped, in the same order, with the same edge ids
	// and weights.
	for old := range n {
		nv := oldToNew[old]
		a, b := g.Indptr[old], g.Indptr[old+1]
		c, d := p.Graph.Indptr[nv], p.Graph.Indptr[nv+1]
		require.Equal(t, b-a, d-c, "degree of node %d", old)
		for j := range b - a {
			if oldToNew[g.Source(a+j)] != p.Graph.Source(c+j) || g.EdgeID(a+j) != p.Graph.EdgeID(c+j) || g.Weights[a+j] != p.Graph.Weights[c+j] {
				t.Fatalf("node %d (new %d): neighbour %d differs", old, nv, j)
			}
		}
	}
	// Round trips.
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	got := slices.Clone(ids)
	require.NoError(t, p.ToNew(got, got)) // aliasing
	require.True(t, slices.Equal(oldToNew, got), "ToNew")
	require.NoError(t, p.ToOld(got, got))
	require.True(t, slices.Equal(ids, got), "ToOld(ToNew(ids)) == ids")
}

func TestBuildRange(t *testing.T) {
	g := randomGraph(t, rand.New(rand.NewPCG(1, 1)), 10, 40)
	for _, np := range []int{0, 1, 3, 10, 13} {
		p, err := Build(g, Options{Method: Range, NumPatches: np})
		require.NoError(t, err)
		assert.Same(t, g, p.Graph, "Range keeps the graph")
		assert.Nil(t, p.NewToOld)
		want := max(np, 1)
		checkPartition(t, g, p, want, func(old int64) int {
			for q := range want {
				if old >= int64(q)*10/int64(want) && old < int64(q+1)*10/int64(want) {
					return q
				}
			}
			return -1
		})
	}
	p, err := Build(g, Options{Method: Range, NumPatches: 4})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 2, 5, 7, 10}, p.Offsets)
}

func TestBuildGiven(t *testing.T) {
	// 0->1, 2->1, 3->0, 1->3, 1->2 with explicit edge ids.
	g, err := graph.FromCSC(4, []int64{0, 1, 3, 4, 5}, []int64{3, 2, 0, 1, 1}, []int64{10, 11, 12, 13, 14}, []float32{1, 2, 3, 4, 5})
	require.NoError(t, err)
	assign := []int64{1, 0, 1, 0}
	p, err := Build(g, Options{Method: Given, NumPatches: 3, Assignment: assign})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 2, 4, 4}, p.Offsets)
	assert.Equal(t, []int64{1, 3, 0, 2}, p.NewToOld)
	assert.Equal(t, []int64{2, 0, 3, 1}, p.OldToNew)
	// new 0 = old 1 (sources 2, 0 -> new 3, 2), new 1 = old 3 (source 1 -> 0),
	// new 2 = old 0 (source 3 -> 1), new 3 = old 2 (source 1 -> 0).
	assert.Equal(t, []int64{0, 2, 3, 4, 5}, p.Graph.Indptr)
	assert.Equal(t, []int32{3, 2, 0, 1, 0}, p.Graph.Indices32)
	assert.Nil(t, p.Graph.Indices)
	assert.Equal(t, []int64{11, 12, 14, 10, 13}, p.Graph.EdgeIDs)
	assert.Equal(t, []float32{2, 3, 5, 1, 4}, p.Graph.Weights)
	assert.Equal(t, 1, p.Owner(3))
	assert.Equal(t, 1, p.Owner(2))
	assert.Equal(t, 0, p.Owner(1))
	assert.Equal(t, -1, p.Owner(4))
	assert.Equal(t, -1, p.Owner(-1))
	checkPartition(t, g, p, 3, func(old int64) int { return int(assign[old]) })

	// An already sorted assignment is the identity numbering.
	p, err = Build(g, Options{Method: Given, NumPatches: 2, Assignment: []int64{0, 0, 1, 1}})
	require.NoError(t, err)
	assert.Nil(t, p.NewToOld)
	// The identity keeps g's arrays, with the int64 sources compacted.
	assert.Same(t, &g.Indptr[0], &p.Graph.Indptr[0])
	assert.Same(t, &g.EdgeIDs[0], &p.Graph.EdgeIDs[0])
	assert.Equal(t, []int32{3, 2, 0, 1, 1}, p.Graph.Indices32)
	assert.Nil(t, p.Graph.Indices)
	assert.Equal(t, []int64{0, 2, 4}, p.Offsets)
	checkPartition(t, g, p, 2, func(old int64) int { return int(old / 2) })
	// A compact input is kept as is.
	c := g.Compact()
	p, err = Build(c, Options{Method: Given, NumPatches: 2, Assignment: []int64{0, 0, 1, 1}})
	require.NoError(t, err)
	assert.Same(t, c, p.Graph)
}

func TestBuildMaterializesEdgeIDs(t *testing.T) {
	// nil EdgeIDs (ids == positions) must become explicit after renumbering.
	g, err := graph.FromCSC(3, []int64{0, 1, 2, 3}, []int64{1, 2, 0}, nil, nil)
	require.NoError(t, err)
	p, err := Build(g, Options{Method: Given, NumPatches: 2, Assignment: []int64{1, 1, 0}})
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 0, 1}, p.Graph.EdgeIDs)
	assert.Equal(t, []int32{1, 2, 0}, p.Graph.Indices32)
	assert.Nil(t, p.Graph.Weights)
}

func TestBuildRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	g := randomGraph(t, r, 100_000, 300_000)
	p, err := Build(g, Options{Method: Random, NumPatches: 7, Seed: 42})
	require.NoError(t, err)
	checkPartition(t, g, p, 7, func(old int64) int { return int(randomPatch(42, old, 7)) })
	// Roughly balanced.
	for q := range 7 {
		lo, hi := p.PatchRange(q)
		assert.InDelta(t, 100_000/7, hi-lo, 1000, "patch %d size", q)
	}
	// Deterministic, and independent of the thread count.
	p2, err := Build(g, Options{Method: Random, NumPatches: 7, Seed: 42})
	require.NoError(t, err)
	assert.True(t, slices.Equal(p.NewToOld, p2.NewToOld))
	prev := setProcs(t, 1)
	p3, err := Build(g, Options{Method: Random, NumPatches: 7, Seed: 42})
	setProcs(t, prev)
	require.NoError(t, err)
	assert.True(t, slices.Equal(p.NewToOld, p3.NewToOld))
	assert.True(t, slices.Equal(p.Graph.Indices32, p3.Graph.Indices32))
	// Another seed gives another assignment.
	p4, err := Build(g, Options{Method: Random, NumPatches: 7, Seed: 43})
	require.NoError(t, err)
	assert.False(t, slices.Equal(p.NewToOld, p4.NewToOld))
	// More patches than nodes.
	small := randomGraph(t, r, 5, 12)
	p5, err := Build(small, Options{Method: Random, NumPatches: 20, Seed: 1})
	require.NoError(t, err)
	checkPartition(t, small, p5, 20, func(old int64) int { return int(randomPatch(1, old, 20)) })
}

func TestBuildEmptyGraph(t *testing.T) {
	g, err := graph.FromCSC(0, []int64{0}, nil, nil, nil)
	require.NoError(t, err)
	for _, m := range []Method{Range, Random} {
		p, err := Build(g, Options{Method: m, NumPatches: 3})
		require.NoError(t, err)
		assert.Equal(t, []int64{0, 0, 0, 0}, p.Offsets)
		assert.Equal(t, -1, p.Owner(0))
	}
}

func TestBuildErrors(t *testing.T) {
	g, err := graph.FromCSC(3, []int64{0, 1, 2, 3}, []int64{1, 2, 0}, nil, nil)
	require.NoError(t, err)
	bad := &graph.CSC{NumNodes: 2, Indptr: []int64{0, 1, 2}, Indices: []int64{0, 5}}
	tests := []struct {
		g   *graph.CSC
		opt Options
		msg string
	}{
		{nil, Options{}, "partition: graph is nil"},
		{bad, Options{}, "partition: graph: CSC indices[1]=5 is out of range [0, 2)"},
		{g, Options{NumPatches: -2}, "partition: NumPatches=-2 is negative"},
		{g, Options{Method: Method(9)}, "partition: unknown Method 9"},
		{g, Options{Method: Given, Assignment: []int64{0, 0, 0}}, "partition: NumPatches must be set (>= 1) for the Given method"},
		{g, Options{Method: Given, NumPatches: 2, Assignment: []int64{0, 1}}, "partition: len(Assignment)=2, want the number of nodes 3"},
		{g, Options{Method: Given, NumPatches: 2, Assignment: []int64{0, 2, 1}}, "partition: Assignment[1]=2 is out of range [0, 2) (NumPatches=2)"},
		{g, Options{Method: Given, NumPatches: 2, Assignment: []int64{0, 1, -1}}, "partition: Assignment[2]=-1 is out of range [0, 2) (NumPatches=2)"},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p, err := Build(tc.g, tc.opt)
			require.EqualError(t, err, tc.msg)
			assert.Nil(t, p)
		})
	}
}

func TestIDMappingErrors(t *testing.T) {
	g := randomGraph(t, rand.New(rand.NewPCG(9, 9)), 2708, 5000)
	for _, m := range []Method{Range, Random} {
		p, err := Build(g, Options{Method: m, NumPatches: 4, Seed: 3})
		require.NoError(t, err)
		ids := []int64{0, 5, 2707, 9999, -1}
		out := make([]int64, len(ids))
		require.EqualError(t, p.ToNew(ids, out), "partition: node id 9999 at position 3 is out of range [0, 2708)")
		assert.Equal(t, make([]int64, len(ids)), out, "out untouched on error")
		require.EqualError(t, p.ToOld(ids[4:], out[4:]), "partition: node id -1 at position 0 is out of range [0, 2708)")
		require.EqualError(t, p.ToNew(ids, out[:2]), "partition: len(out)=2, want len(ids)=5")
		require.NoError(t, p.ToNew(ids[:3], out[:3]))
		if m == Range {
			assert.Equal(t, ids[:3], out[:3])
		} else {
			assert.Equal(t, []int64{p.OldToNew[0], p.OldToNew[5], p.OldToNew[2707]}, out[:3])
		}
	}
}

func TestPermuteRows(t *testing.T) {
	src := []byte("aaabbbcccddd")
	dst := make([]byte, 9)
	require.NoError(t, PermuteRows(dst, src, 3, []int64{3, 0, 2}))
	assert.Equal(t, "dddaaaccc", string(dst))

	dst = make([]byte, len(src))
	require.NoError(t, PermuteRows(dst, src, 3, nil))
	assert.Equal(t, string(src), string(dst))

	require.EqualError(t, PermuteRows(make([]byte, 6), src, 3, []int64{0, 4}), "partition: newToOld[1]=4 is out of range [0, 4) (rows of src)")
	require.EqualError(t, PermuteRows(make([]byte, 5), src, 3, []int64{0, 1}), "partition: len(dst)=5, want 2 rows of 3 bytes = 6")
	require.EqualError(t, PermuteRows(make([]byte, 6), src[:11], 3, []int64{0, 1}), "partition: len(src)=11 is not a multiple of rowBytes=3")
	require.EqualError(t, PermuteRows(dst, src, -1, nil), "partition: rowBytes=-1 is negative")
	require.EqualError(t, PermuteRows(dst[:2], src, 3, nil), "partition: len(dst)=2, want len(src)=12 (identity permutation)")

	// Large, parallel: feature rows follow the renumbering.
	g := randomGraph(t, rand.New(rand.NewPCG(2, 3)), 100_000, 1000)
	p, err := Build(g, Options{Method: Random, NumPatches: 3, Seed: 8})
	require.NoError(t, err)
	const rb = 8
	feat := make([]byte, 100_000*rb)
	for v := range int64(100_000) {
		for j := range int64(rb) {
			feat[v*rb+j] = byte(v*7 + j)
		}
	}
	out := make([]byte, len(feat))
	require.NoError(t, PermuteRows(out, feat, rb, p.NewToOld))
	for i, o := range p.NewToOld {
		if !slices.Equal(feat[o*rb:(o+1)*rb], out[int64(i)*rb:int64(i+1)*rb]) {
			t.Fatalf("row %d is not source row %d", i, o)
		}
	}
}

// TestBuildEitherStorage checks that Build gives the same compact result for
// an input with int64 or int32 sources, on the identity and the renumbered
// paths.
func TestBuildEitherStorage(t *testing.T) {
	c := randomGraph(t, rand.New(rand.NewPCG(4, 4)), 5000, 40_000)
	require.True(t, c.IsCompact())
	w := c.Wide()
	require.False(t, w.IsCompact())
	for _, opt := range []Options{
		{Method: Range, NumPatches: 3},
		{Method: Random, NumPatches: 1},
		{Method: Random, NumPatches: 5, Seed: 7},
	} {
		pc, err := Build(c, opt)
		require.NoError(t, err)
		pw, err := Build(w, opt)
		require.NoError(t, err)
		for _, p := range []*Partitioned{pc, pw} {
			require.True(t, p.Graph.IsCompact(), "%v", opt)
			require.Nil(t, p.Graph.Indices)
		}
		assert.True(t, slices.Equal(pc.Graph.Indices32, pw.Graph.Indices32), "%v", opt)
		assert.True(t, slices.Equal(pc.Graph.Indptr, pw.Graph.Indptr), "%v", opt)
		assert.True(t, slices.Equal(pc.Graph.EdgeIDs, pw.Graph.EdgeIDs), "%v", opt)
		assert.True(t, slices.Equal(pc.Graph.Weights, pw.Graph.Weights), "%v", opt)
		assert.True(t, slices.Equal(pc.NewToOld, pw.NewToOld), "%v", opt)
		checkPartition(t, w, pw, max(opt.NumPatches, 1), func(old int64) int {
			if opt.Method == Range {
				for q := range int64(opt.NumPatches) {
					if old < (q+1)*5000/int64(opt.NumPatches) {
						return int(q)
					}
				}
			}
			return int(randomPatch(opt.Seed, old, int64(opt.NumPatches)))
		})
	}
}

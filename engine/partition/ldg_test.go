package partition

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
)

// communities returns k groups of m nodes, dense inside (each node linked
// both ways to 6 random nodes of its group) and a ring of single edges
// between consecutive groups, with the group members interleaved in id
// order (node v is in group v % k) so that ranges cut everything.
func communities(t *testing.T, k, m int64) *graph.CSC {
	r := rand.New(rand.NewPCG(3, 5))
	var src, dst []int64
	for v := range k * m {
		for range 3 {
			u := (r.Int64N(m))*k + v%k
			src, dst = append(src, u, v), append(dst, v, u)
		}
	}
	for g := range k {
		u, v := g, (g+1)%k
		src, dst = append(src, u, v), append(dst, v, u)
	}
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: k * m, RemoveSelfLoops: true})
	require.NoError(t, err)
	return g
}

func cut(g *graph.CSC, assign []int64) (c int64) {
	for v := range g.NumNodes {
		lo, hi := g.Span(v)
		for p := lo; p < hi; p++ {
			if assign[g.Source(p)] != assign[v] {
				c++
			}
		}
	}
	return c
}

// TestLDGKeepsCommunities checks LDG's promises: every node placed, no
// patch above its capacity (nodes and in-edges), the same assignment every run and from Build,
// and fewer cut edges than range or random where the graph has
// communities.
func TestLDGKeepsCommunities(t *testing.T) {
	g := communities(t, 4, 200)
	opt := Options{Method: LDG, NumPatches: 4}
	a, err := Assignment(g, opt)
	require.NoError(t, err)
	again, err := Assignment(g, opt)
	require.NoError(t, err)
	require.Equal(t, a, again)
	weight := make([]int64, 4) // nodes and in-edges
	for v, q := range a {
		require.GreaterOrEqual(t, q, int64(0))
		weight[q] += 1 + g.InDegree(int64(v))
	}
	for _, w := range weight {
		assert.LessOrEqual(t, float64(w), float64(g.NumNodes+g.NumEdges())/4*(1+LDGSlack))
	}
	ranged, err := Assignment(g, Options{Method: Range, NumPatches: 4})
	require.NoError(t, err)
	random, err := Assignment(g, Options{Method: Random, NumPatches: 4, Seed: 1})
	require.NoError(t, err)
	t.Logf("cut: ldg %d, range %d, random %d of %d edges", cut(g, a), cut(g, ranged), cut(g, random), g.NumEdges())
	assert.Less(t, 3*cut(g, a), 2*cut(g, random)) // one pass, each node seeing only its placed neighbours
	assert.Less(t, 3*cut(g, a), 2*cut(g, ranged))

	p, err := Build(g, opt)
	require.NoError(t, err)
	given, err := Build(g, Options{Method: Given, NumPatches: 4, Assignment: a})
	require.NoError(t, err)
	assert.Equal(t, given.Offsets, p.Offsets)
	assert.Equal(t, given.NewToOld, p.NewToOld)
	assert.Equal(t, "ldg", LDG.String())

	// Range's assignment is Build's ranges.
	pr, err := Build(g, Options{Method: Range, NumPatches: 3})
	require.NoError(t, err)
	ar, err := Assignment(g, Options{Method: Range, NumPatches: 3})
	require.NoError(t, err)
	for q := range 3 {
		for v := pr.Offsets[q]; v < pr.Offsets[q+1]; v++ {
			require.Equal(t, int64(q), ar[v])
		}
	}
	_, err = Assignment(g, Options{Method: Given, NumPatches: 2, Assignment: []int64{1}})
	assert.ErrorContains(t, err, "len(Assignment)=1")
	_, err = Assignment(nil, opt)
	assert.ErrorContains(t, err, "graph is nil")
	_, err = Assignment(g, Options{Method: Method(9)})
	assert.ErrorContains(t, err, "unknown Method 9")
}

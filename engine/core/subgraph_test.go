package core

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
)

// inducedEdge is one edge of an induced subgraph: local endpoints and id.
type inducedEdge struct{ src, dst, id int64 }

// inducedRef computes the induced subgraph of nodes from the COO list, apart
// from any Graph: edge i of testCOO has id i.
func inducedRef(nodes []int64) []inducedEdge {
	src, dst := testCOO()
	pos := map[int64]int64{}
	for i, v := range nodes {
		pos[v] = int64(i)
	}
	var out []inducedEdge
	for e := range src {
		u, okU := pos[src[e]]
		v, okV := pos[dst[e]]
		if okU && okV {
			out = append(out, inducedEdge{u, v, int64(e)})
		}
	}
	return out
}

func sortedEdges(es []inducedEdge) []inducedEdge {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b inducedEdge) int { return int(a.id - b.id) })
	return es
}

func TestInducedSubgraphMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	nodes := r.Perm(testNodes)[:120]
	ids := make([]int64, len(nodes))
	for i, v := range nodes {
		ids[i] = int64(v)
	}
	want := inducedRef(ids)
	require.NotEmpty(t, want)
	var first []inducedEdge
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g := newTestGraph(t, popt)
			sub, err := g.InducedSubgraph(ids, nil)
			require.NoError(t, err)
			src, dst, eid := i64(sub.Src), i64(sub.Dst), i64(sub.EdgeIDs)
			require.Len(t, dst, len(src))
			require.Len(t, eid, len(src))
			got := make([]inducedEdge, len(src))
			for i := range src {
				got[i] = inducedEdge{src[i], dst[i], eid[i]}
			}
			require.Equal(t, sortedEdges(want), sortedEdges(got))
			// Grouped by target, in the order of nodes.
			require.True(t, slices.IsSorted(dst))
			// The same order on every partitioning.
			if first == nil {
				first = got
			} else {
				require.Equal(t, first, got)
			}
		})
	}
}

func TestInducedSubgraphEdgeCases(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	sub, err := g.InducedSubgraph(nil, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{0}, sub.Src.Shape)
	require.Empty(t, i64(sub.EdgeIDs))

	_, err = g.InducedSubgraph([]int64{1, 5, 1}, nil)
	require.ErrorContains(t, err, "nodes[2] = 1 repeats nodes[0]")
	require.NotErrorIs(t, err, errs.ErrClosed)

	_, err = g.InducedSubgraph([]int64{0, testNodes}, nil)
	require.ErrorContains(t, err, "nodes")

	_, err = g.InducedSubgraph([]int64{-1}, nil)
	require.Error(t, err)

	require.NoError(t, g.Close())
	_, err = g.InducedSubgraph([]int64{0}, nil)
	require.ErrorIs(t, err, errs.ErrClosed)
}

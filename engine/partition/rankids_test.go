package partition

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
)

// TestRankIDsKnowTheirNodes checks a rank's ids (Partitioned.Ranked) on
// the numbering of a Given assignment: the owned range and the halo map
// both ways as the whole maps do, the nodes resolved with WithIDs too (on
// the copy only), and any other node is an error naming it, not a wrong id.
func TestRankIDsKnowTheirNodes(t *testing.T) {
	const n = 12
	assign := []int64{1, 0, 1, 2, 0, 1, 2, 2, 0, 1, 0, 2}
	g, err := graph.FromCOO([]int64{0}, []int64{1}, nil, graph.COOOptions{NumNodes: n})
	require.NoError(t, err)
	whole, err := Build(g, Options{Method: Given, NumPatches: 3, Assignment: assign})
	require.NoError(t, err)
	lo, hi := whole.PatchRange(1)
	owned := whole.NewToOld[lo:hi]
	haloNew := []int64{whole.OldToNew[3], whole.OldToNew[1]} // any order
	haloOrig := []int64{3, 1}
	ranked, err := NewRankIDs(lo, owned, haloNew, haloOrig)
	require.NoError(t, err)
	require.Equal(t, int64(2), ranked.NumHeld())
	p := &Partitioned{Graph: whole.Graph, Offsets: whole.Offsets, Ranked: ranked}
	for v := lo; v < hi; v++ {
		require.Equal(t, whole.NewToOld[v], p.OrigID(v))
		require.Equal(t, v, p.InternalID(whole.NewToOld[v]))
	}
	require.Equal(t, int64(3), p.OrigID(whole.OldToNew[3]))
	require.Equal(t, int64(-1), p.InternalID(3), "a halo node is known by its new id only")
	require.Equal(t, int64(-1), p.OrigID(whole.OldToNew[4]))

	seeds := []int64{4, 3, 0}
	internal := make([]int64, len(seeds))
	for i, v := range seeds {
		internal[i] = whole.OldToNew[v]
	}
	q, err := p.WithIDs(seeds, internal)
	require.NoError(t, err)
	got := make([]int64, len(seeds))
	require.NoError(t, q.ToNew(seeds, got))
	require.Equal(t, internal, got)
	require.NoError(t, q.ToOld(got, got)) // aliasing
	require.Equal(t, seeds, got)
	require.Same(t, p.Graph, q.Graph)
	require.EqualError(t, p.ToNew(seeds, got), "partition: node id 4 at position 0 is not known to this rank (its owner's)")
	require.EqualError(t, q.ToOld([]int64{whole.OldToNew[5], 99}, got[:2]), "partition: node id 99 at position 1 is out of range [0, 12)")

	_, err = q.WithIDs([]int64{4}, []int64{internal[1]})
	require.ErrorContains(t, err, "is mapped to both")
	_, err = p.WithIDs([]int64{4}, nil)
	require.ErrorContains(t, err, "1 original ids for 0 new ids")
	_, err = p.WithIDs([]int64{12}, []int64{0})
	require.ErrorContains(t, err, "out of range [0, 12)")
	_, err = whole.WithIDs(seeds, internal)
	require.ErrorContains(t, err, "holds its maps")
	_, err = NewRankIDs(0, []int64{3, 2}, nil, nil)
	require.ErrorContains(t, err, "not increasing")
	_, err = NewRankIDs(0, nil, []int64{1}, nil)
	require.ErrorContains(t, err, "1 keys for 0 values")
}

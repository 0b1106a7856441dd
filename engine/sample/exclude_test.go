package sample

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
)

// withExclusionForm makes every filter keep its excluded edges as sorted
// positions (sparse) or as a bitmap, for the rest of the test.
func withExclusionForm(t *testing.T, sparse bool) {
	old := sparseExclusion
	sparseExclusion = func(int64, int64) bool { return sparse }
	t.Cleanup(func() { sparseExclusion = old })
}

// The two forms of an exclusion list (a bitmap over the positions, or the
// sorted positions of a short list, such as a link-prediction batch's seed
// edges and their reverses) sample alike: every scheme, a long and a short
// list, on graphs with and without explicit edge ids, one patch and
// renumbered patches.
func TestExclusionFormsSampleAlike(t *testing.T) {
	withGrains(t, 5, 2)
	withIDs, batches, keys, exclude := schemeFixture()
	r := rand.New(rand.NewPCG(5, 6))
	positional := withWeights(r, randomGraph(r, withIDs.NumNodes, withIDs.NumEdges(), false))
	assign := make([]int, withIDs.NumNodes)
	for v := range assign {
		assign[v] = r.IntN(3)
	}
	for gi, g := range []*graph.CSC{withIDs, positional} {
		for _, list := range [][]int64{exclude, exclude[:len(exclude)/40]} {
			for _, c := range schemeConfigs(list) {
				if c.opt.ExcludeEdges == nil {
					continue
				}
				for pi, p := range []*partition.Partitioned{rangePartition(g, 1), renumbered(g, assign, 3)} {
					withExclusionForm(t, false)
					dense := runScheme(t, p, c, c.opt, batches, keys, false)
					withExclusionForm(t, true)
					sparse := runScheme(t, p, c, c.opt, batches, keys, false)
					require.Equal(t, dense, sparse, "graph %d, %s, %d excluded ids, partition %d", gi, c.name, len(list), pi)
				}
			}
		}
	}
}

// A filter of a short list keeps sorted positions, found through the
// inverse of the graph's edge ids (built once, shared by the runtime's
// forks); ids that are no edge of the graph are left out.
func TestShortExclusionKeepsPositions(t *testing.T) {
	g, _, _, _ := schemeFixture()
	rt := mustRuntime(t, rangePartition(g, 1), 2)
	fork, err := rt.Fork(1)
	require.NoError(t, err)
	ids := []int64{g.EdgeIDs[7], g.EdgeIDs[3], g.NumEdges() + 5, -1, g.EdgeIDs[7]}
	f := rt.filterFor(false, ids, 2)
	require.Nil(t, f.excl)
	require.Equal(t, []int64{3, 7}, f.pos)
	c, err := fork.begin(Request{Fanouts: []int{2}, ExcludeEdges: ids}, false, "Request")
	require.NoError(t, err)
	require.True(t, c.filtered)
	require.True(t, c.excluded(3) && c.excluded(7) && !c.excluded(4))
	require.Equal(t, int64(2), c.excludedIn(0, 8))
	require.Equal(t, int64(1), c.excludedIn(4, 8))
	require.Equal(t, int64(0), c.excludedIn(8, g.NumEdges()))
	require.Equal(t, &rt.edgePositions(1)[0], &fork.edgePositions(1)[0], "one inverse for the runtime and its forks")

	none := rt.filterFor(false, []int64{g.NumEdges() + 1}, 2)
	require.False(t, none.any(), "no edge of the graph: nothing excluded")
}

// A CSC whose edge ids repeat an id (a caller may build one) has no dense
// inverse: a short list falls back to the bitmap, which excludes every
// position of the id, as a long list does.
func TestShortExclusionOfRepeatedIDUsesBitmap(t *testing.T) {
	g, _, _, _ := schemeFixture()
	g = &graph.CSC{NumNodes: g.NumNodes, Indptr: g.Indptr, Indices: g.Indices, EdgeIDs: slices.Clone(g.EdgeIDs), Weights: g.Weights}
	g.EdgeIDs[9] = g.EdgeIDs[2]
	rt := mustRuntime(t, rangePartition(g, 1), 2)
	f := rt.filterFor(false, []int64{g.EdgeIDs[2]}, 2)
	require.Nil(t, f.pos)
	require.NotNil(t, f.excl)
	c, err := rt.begin(Request{Fanouts: []int{2}, ExcludeEdges: []int64{g.EdgeIDs[2]}}, false, "Request")
	require.NoError(t, err)
	require.True(t, c.excluded(2) && c.excluded(9) && !c.excluded(3))
	require.Nil(t, rt.edgePositions(2))
}

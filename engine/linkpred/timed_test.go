package linkpred

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBatchTimedKeepsNegativesNotLater: under node times every negative is
// not later than its positive's seed time (negative f belongs to positive
// f % numPos); a seed time before every node falls back to the earliest
// node; the draws are a function of the stream alone.
func TestBatchTimedKeepsNegativesNotLater(t *testing.T) {
	const n = 200
	node := make([]int64, n)
	for v := range node {
		node[v] = int64((v * 7) % 50)
	}
	node[123] = -3 // the earliest node
	pos := Pairs{Src: []int64{1, 2, 3}, Dst: []int64{4, 5, 6}}
	seeds := []int64{10, -3, 40}
	for _, p := range []PyGLinkSampler{
		{Mode: PyGBinaryMode, Amount: 2.5, Disjoint: true},
		{Mode: PyGTripletMode, Amount: 4, Disjoint: true},
	} {
		times := &NodeTimes{Node: TimeVector(node), Seeds: seeds}
		b, err := p.BatchTimed(pos, n, times, Stream{Seed: 3, Key: 9}, 2)
		require.NoError(t, err)
		negs := map[int]int64{} // negative draw index -> node
		if p.Mode == PyGBinaryMode {
			require.Equal(t, 8, b.NumNeg)
			for f := 0; f < b.NumNeg; f++ {
				negs[f] = b.Nodes[b.Index.Src[3+f]]
				require.LessOrEqual(t, node[b.Nodes[b.Index.Dst[3+f]]], seeds[f%3])
			}
		} else {
			for i := 0; i < 3; i++ {
				for j := 0; j < 4; j++ {
					negs[j*3+i] = b.Nodes[b.DstNegIndex[i*4+j]]
				}
			}
		}
		for f, v := range negs {
			require.LessOrEqual(t, node[v], seeds[f%3], "negative %d = %d", f, v)
			if seeds[f%3] == -3 {
				require.Equal(t, int64(123), v)
			}
		}
		again, err := p.BatchTimed(pos, n, times, Stream{Seed: 3, Key: 9}, 1)
		require.NoError(t, err)
		require.Equal(t, b, again)
	}
	_, err := PyGLinkSampler{Mode: PyGBinaryMode, Amount: 1}.BatchTimed(pos, n, &NodeTimes{Node: TimeVector(node), Seeds: seeds[:2]}, Stream{}, 1)
	require.ErrorContains(t, err, "2 seed times for 3 positive pairs")
}

// TestTypeRanks: positions become ranks among the nodes of their type, in
// order, whatever the grouping.
func TestTypeRanks(t *testing.T) {
	ty := typesOf([]int64{3, 4}, [][3]int64{{1, 0, 2}})
	nodes := []int64{5, 6, 0, 2, 3, 0} // type 1, 1, 0, 0, 1, 0
	require.Equal(t, []int64{0, 1, 0, 1, 2, 2}, SeedRanks(nodes, ty))
	list := []int64{4, 0, 5}
	TypeRanks(nodes, ty, list)
	require.Equal(t, []int64{2, 0, 2}, list)
	// Disjoint typed batches: an arange per type, as PyG's.
	pos := Pairs{Src: []int64{4, 6}, Dst: []int64{0, 1}}
	b, err := PyGLinkSampler{Mode: PyGBinaryMode, Amount: 1, Disjoint: true}.BatchTyped(pos, ty, Stream{Seed: 1}, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 1, 2, 3}, b.Index.Src)
	require.Equal(t, []int64{0, 1, 2, 3}, b.Index.Dst)
	require.Equal(t, []int64{4, 6}, b.Nodes[:2])
	require.Equal(t, []int64{0, 1}, b.Nodes[4:6])
}

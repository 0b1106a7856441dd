package linkpred

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// dglGraph is the 10-node graph of the DGL reference runs below: edge i is
// src[i] -> dst[i].
var dglSrc, dglDst = []int64{5, 3, 9, 3, 0, 7}, []int64{2, 8, 1, 4, 6, 6}

// TestCompactDGLMatchesDGL checks CompactDGL against DGL 2.1's
// compact_graphs([g.edge_subgraph(eids, relabel_nodes=False), neg]) on the
// same inputs (values recorded from DGL itself).
func TestCompactDGLMatchesDGL(t *testing.T) {
	idx := mustIndex(t, dglSrc, dglDst, 10)
	pos, err := idx.Endpoints([]int64{3, 0, 2})
	require.NoError(t, err)
	require.Equal(t, Pairs{Src: []int64{3, 5, 9}, Dst: []int64{4, 2, 1}}, pos)

	neg := Pairs{Src: []int64{6, 5, 9, 9}, Dst: []int64{7, 0, 2, 5}}
	c, err := CompactDGL(pos, neg, 10)
	require.NoError(t, err)
	require.Equal(t, []int64{3, 5, 9, 4, 2, 1, 6, 7, 0}, c.Nodes)
	require.Equal(t, Pairs{Src: []int64{0, 1, 2}, Dst: []int64{3, 4, 5}}, c.Pos)
	require.Equal(t, Pairs{Src: []int64{6, 1, 2, 2}, Dst: []int64{7, 8, 4, 1}}, c.Neg)

	// Without a negative sampler, and with a repeated seed edge (DGL keeps
	// it in the pair graph).
	pos, err = idx.Endpoints([]int64{3, 0, 3})
	require.NoError(t, err)
	c, err = CompactDGL(pos, Pairs{}, 10)
	require.NoError(t, err)
	require.Equal(t, []int64{3, 5, 4, 2}, c.Nodes)
	require.Equal(t, Pairs{Src: []int64{0, 1, 0}, Dst: []int64{2, 3, 2}}, c.Pos)
	require.Zero(t, c.Neg.Len())
}

// The PyG cases replay torch_geometric 2.5.3's edge_sample on positives
// (7,2), (3,9), (7,3) of a 12-node graph with its negative draws fixed to
// the values below (values recorded from PyG itself).
var pygPos = Pairs{Src: []int64{7, 3, 7}, Dst: []int64{2, 9, 3}}

func TestPyGBinarySeedsMatchPyG(t *testing.T) {
	neg := Pairs{Src: []int64{0, 3, 11, 3, 5}, Dst: []int64{4, 4, 2, 8, 9}}
	b, err := PyGBinarySeeds(pygPos, neg, 12, false)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 2, 3, 4, 5, 7, 8, 9, 11}, b.Nodes)
	require.Equal(t, []int64{5, 2, 5, 0, 2, 8, 2, 4}, b.Index.Src)
	require.Equal(t, []int64{1, 7, 2, 3, 3, 1, 6, 7}, b.Index.Dst)
	require.Equal(t, 3, b.NumPos)
	require.Equal(t, 5, b.NumNeg)
	require.Equal(t, int64(5), Binary{Amount: 1.5}.NumNegatives(3))

	b, err = PyGBinarySeeds(pygPos, neg, 12, true)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 3, 7, 0, 3, 11, 3, 5, 2, 9, 3, 4, 4, 2, 8, 9}, b.Nodes)
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7}, b.Index.Src)
	require.Equal(t, []int64{8, 9, 10, 11, 12, 13, 14, 15}, b.Index.Dst)

	b, err = PyGBinarySeeds(pygPos, Pairs{}, 12, false)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3, 7, 9}, b.Nodes)
	require.Equal(t, Pairs{Src: []int64{2, 1, 2}, Dst: []int64{0, 3, 1}}, b.Index)
	require.Zero(t, b.NumNeg)
}

func TestPyGTripletSeedsMatchPyG(t *testing.T) {
	neg := []int64{1, 9, 5, 6, 3, 10}
	tr, err := PyGTripletSeeds(pygPos, neg, 2, 12, false)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2, 3, 5, 6, 7, 9, 10}, tr.Nodes)
	require.Equal(t, []int64{5, 2, 5}, tr.SrcIndex)
	require.Equal(t, []int64{1, 6, 2}, tr.DstPosIndex)
	require.Equal(t, []int64{0, 6, 3, 4, 2, 7}, tr.DstNegIndex)

	tr, err = PyGTripletSeeds(pygPos, neg, 2, 12, true)
	require.NoError(t, err)
	require.Equal(t, []int64{7, 3, 7, 2, 9, 3, 1, 9, 5, 6, 3, 10}, tr.Nodes)
	require.Equal(t, []int64{0, 1, 2}, tr.SrcIndex)
	require.Equal(t, []int64{3, 4, 5}, tr.DstPosIndex)
	require.Equal(t, []int64{6, 9, 7, 10, 8, 11}, tr.DstNegIndex)
}

func TestSeedErrorsNameTheInput(t *testing.T) {
	_, err := CompactDGL(Pairs{Src: []int64{1, 2}, Dst: []int64{1}}, Pairs{}, 5)
	require.ErrorContains(t, err, "positive pairs has 2 sources but 1 destinations")
	_, err = CompactDGL(Pairs{Src: []int64{1}, Dst: []int64{1}}, Pairs{Src: []int64{0}, Dst: []int64{5}}, 5)
	require.ErrorContains(t, err, "negative pairs dst[0] = 5 is not a node id (graph has 5 nodes)")
	_, err = PyGBinarySeeds(Pairs{Src: []int64{1, -3}, Dst: []int64{1, 1}}, Pairs{}, 5, false)
	require.ErrorContains(t, err, "edge_label_index src[1] = -3 is not a node id")
	_, err = PyGTripletSeeds(pygPos, []int64{1, 2}, 2, 12, false)
	require.ErrorContains(t, err, "2 negative destinations for 3 positives times amount 2")
	_, err = PyGTripletSeeds(pygPos, []int64{1, 2, 3}, 0, 12, false)
	require.ErrorContains(t, err, "amount = 0")
	_, err = PyGTripletSeeds(pygPos, []int64{1, 2, 12}, 1, 12, false)
	require.ErrorContains(t, err, "negative destinations[2] = 12 is not a node id")
}

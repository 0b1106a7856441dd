package linkpred

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// bidirected returns the graph cat([src, dst]) -> cat([dst, src]), whose
// edge e has reverse e+len(src) (mod 2*len(src)): DGL's documented layout.
func bidirected(t testing.TB, src, dst []int64, n int64) *EdgeIndex {
	return mustIndex(t, append(append([]int64{}, src...), dst...), append(append([]int64{}, dst...), src...), n)
}

func TestDGLEdgeSamplerBatch(t *testing.T) {
	idx := bidirected(t, dglSrc, dglDst, 10)
	s := Stream{Seed: 9, Key: 4}
	eids := []int64{7, 0, 11}
	d := DGLEdgeSampler{Negative: PerSourceUniform{K: 2}, Exclude: ExcludeReverseEdges, Reverse: Reverse{Half: 6}}
	b, err := d.Batch(idx, eids, s, 0)
	require.NoError(t, err)

	// The same steps by hand.
	pos, err := idx.Endpoints(eids)
	require.NoError(t, err)
	require.Equal(t, Pairs{Src: []int64{8, 5, 6}, Dst: []int64{3, 2, 7}}, pos)
	neg, err := PerSourceUniform{K: 2}.Sample(pos.Src, 10, s, 0)
	require.NoError(t, err)
	c, err := CompactDGL(pos, neg, 10)
	require.NoError(t, err)
	require.Equal(t, c, b.Compacted)
	require.Equal(t, []int64{7, 0, 11, 1, 6, 5}, b.ExcludeEdges)
	// The pair graph's endpoints are the seed edges' endpoints.
	for i := range eids {
		require.Equal(t, pos.Src[i], b.Nodes[b.Pos.Src[i]])
		require.Equal(t, pos.Dst[i], b.Nodes[b.Pos.Dst[i]])
	}

	d = DGLEdgeSampler{Negative: GlobalUniform{K: 3, ExcludeSelfLoops: true}, Exclude: ExcludeSelfEdges}
	b, err = d.Batch(idx, eids, s, 0)
	require.NoError(t, err)
	require.Equal(t, eids, b.ExcludeEdges)
	require.Equal(t, 3, b.Pos.Len())
	require.LessOrEqual(t, b.Neg.Len(), 9)
	for i := range b.Neg.Src {
		require.False(t, idx.HasEdge(b.Nodes[b.Neg.Src[i]], b.Nodes[b.Neg.Dst[i]]))
	}

	b, err = DGLEdgeSampler{}.Batch(idx, eids, s, 0)
	require.NoError(t, err)
	require.Nil(t, b.ExcludeEdges)
	require.Zero(t, b.Neg.Len())
	require.Equal(t, []int64{8, 5, 6, 3, 2, 7}, b.Nodes)
}

func TestDGLEdgeSamplerErrors(t *testing.T) {
	idx := mustIndex(t, dglSrc, dglDst, 10)
	cases := []struct {
		d    DGLEdgeSampler
		want string
	}{
		{DGLEdgeSampler{Negative: PerSourceUniform{}}, "negative sampler k = 0"},
		{DGLEdgeSampler{Negative: GlobalUniform{K: -2}}, "negative sampler k = -2"},
		{DGLEdgeSampler{Exclude: 7}, "exclude = 7, must be none (0), self (1) or reverse_id (2)"},
		{DGLEdgeSampler{Exclude: ExcludeReverseEdges, Reverse: Reverse{Half: -1}}, "half = -1"},
		{DGLEdgeSampler{Exclude: ExcludeReverseEdges, Reverse: Reverse{Half: 2}}, "seed edge ids[0] = 5 is outside the reverse edge map (4 entries)"},
	}
	for _, c := range cases {
		_, err := c.d.Batch(idx, []int64{5}, Stream{}, 0)
		require.ErrorContains(t, err, c.want)
	}
	_, err := DGLEdgeSampler{}.Batch(nil, []int64{1}, Stream{}, 0)
	require.ErrorContains(t, err, "edge index is nil")
	_, err = DGLEdgeSampler{}.Batch(idx, []int64{1, 60}, Stream{}, 0)
	require.ErrorContains(t, err, "seed edge ids[1] = 60 is not an edge")
}

func TestPyGLinkSamplerBatch(t *testing.T) {
	s := Stream{Seed: 2, Key: 5}
	p := PyGLinkSampler{Mode: PyGBinaryMode, Amount: 1.5}
	b, err := p.Batch(pygPos, 12, s, 0)
	require.NoError(t, err)
	require.Equal(t, 3, b.NumPos)
	require.Equal(t, 5, b.NumNeg)
	neg, err := Binary{Amount: 1.5}.Sample(3, 12, s, 0)
	require.NoError(t, err)
	want, err := PyGBinarySeeds(pygPos, neg, 12, false)
	require.NoError(t, err)
	require.Equal(t, want.Nodes, b.Nodes)
	require.Equal(t, want.Index, b.Index)

	p = PyGLinkSampler{Mode: PyGTripletMode, Amount: 2, Disjoint: true}
	b, err = p.Batch(pygPos, 12, s, 0)
	require.NoError(t, err)
	negDst, err := Triplet{Amount: 2}.Sample(3, 12, s, 0)
	require.NoError(t, err)
	tr, err := PyGTripletSeeds(pygPos, negDst, 2, 12, true)
	require.NoError(t, err)
	require.Equal(t, PyGBatch{Nodes: tr.Nodes, SrcIndex: tr.SrcIndex, DstPosIndex: tr.DstPosIndex, DstNegIndex: tr.DstNegIndex, NumPos: 3, NumNeg: 6}, b)

	b, err = PyGLinkSampler{}.Batch(pygPos, 12, s, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3, 7, 9}, b.Nodes)
	require.Zero(t, b.NumNeg)

	for _, c := range []struct {
		p    PyGLinkSampler
		want string
	}{
		{PyGLinkSampler{Mode: PyGTripletMode, Amount: 2.5}, "amount = 2.5, must be an integer"},
		{PyGLinkSampler{Mode: PyGBinaryMode, Amount: -1}, "amount = -1, must be positive"},
		{PyGLinkSampler{Mode: 3}, "mode = 3"},
		{PyGLinkSampler{Mode: PyGBinaryMode, Amount: 1, Weights: mustWeights(t, 1)}, "weight vector has 1 entries for 12 nodes"},
	} {
		_, err := c.p.Batch(pygPos, 12, s, 0)
		require.ErrorContains(t, err, c.want)
	}
	_, err = PyGLinkSampler{Mode: PyGTripletMode, Amount: 1}.Batch(Pairs{Src: []int64{1}, Dst: []int64{12}}, 12, s, 0)
	require.ErrorContains(t, err, "edge_label_index dst[0] = 12 is not a node id (graph has 12 nodes)")
}

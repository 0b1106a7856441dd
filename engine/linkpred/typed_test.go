package linkpred

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
)

// typesOf returns types with the given node type sizes and relations
// (src type, dst type, edge count).
func typesOf(sizes []int64, rels [][3]int64) *graph.Types {
	t := &graph.Types{NodeOffsets: []int64{0}, EdgeOffsets: []int64{0}}
	for _, n := range sizes {
		t.NodeOffsets = append(t.NodeOffsets, t.NodeOffsets[len(t.NodeOffsets)-1]+n)
	}
	for _, r := range rels {
		t.RelSrc = append(t.RelSrc, int32(r[0]))
		t.RelDst = append(t.RelDst, int32(r[1]))
		t.EdgeOffsets = append(t.EdgeOffsets, t.EdgeOffsets[len(t.EdgeOffsets)-1]+r[2])
	}
	return t
}

// With the whole id range, the ranged samplers draw what the untyped ones
// draw, value for value.
func TestRangesOfEveryNodeAreTheUntypedSamplers(t *testing.T) {
	s := Stream{Seed: 5, Key: 9}
	const n = 300
	src := []int64{4, 8, 15, 16, 23, 42, 299}
	all := NodeRange{N: n}
	want, err := PerSourceUniform{K: 3}.Sample(src, n, s, 2)
	require.NoError(t, err)
	got, err := PerSourceUniform{K: 3}.SampleRanges(src, []NodeRange{all, all, all, all, all, all, all}, s, 2)
	require.NoError(t, err)
	require.Equal(t, want, got)

	wb, err := Binary{Amount: 2.5}.Sample(40, n, s, 2)
	require.NoError(t, err)
	gb, err := Binary{Amount: 2.5}.SampleRanges(40, all, all, s, 2)
	require.NoError(t, err)
	require.Equal(t, wb, gb)

	wt, err := Triplet{Amount: 3}.Sample(40, n, s, 2)
	require.NoError(t, err)
	gt, err := Triplet{Amount: 3}.SampleRange(40, all, s, 2)
	require.NoError(t, err)
	require.Equal(t, wt, gt)
}

// Negatives stay in their ranges and cover them.
func TestRangedNegativesStayInTheirRanges(t *testing.T) {
	s := Stream{Seed: 1, Key: 2}
	a, b := NodeRange{Lo: 10, N: 5}, NodeRange{Lo: 100, N: 3}
	src := make([]int64, 400)
	dst := make([]NodeRange, len(src))
	for i := range src {
		src[i] = int64(i)
		dst[i] = a
		if i%2 == 1 {
			dst[i] = b
		}
	}
	neg, err := PerSourceUniform{K: 2}.SampleRanges(src, dst, s, 0)
	require.NoError(t, err)
	seen := map[int64]bool{}
	for i, v := range neg.Dst {
		r := dst[i/2]
		require.Equal(t, src[i/2], neg.Src[i])
		require.True(t, v >= r.Lo && v < r.Lo+r.N, "negative %d = %d outside %+v", i, v, r)
		seen[v] = true
	}
	require.Len(t, seen, 8, "every node of both ranges is drawn")

	p, err := Binary{Amount: 50}.SampleRanges(10, a, b, s, 0)
	require.NoError(t, err)
	require.Len(t, p.Src, 500)
	for i := range p.Src {
		require.True(t, p.Src[i] >= 10 && p.Src[i] < 15 && p.Dst[i] >= 100 && p.Dst[i] < 103)
	}
	d, err := Triplet{Amount: 4}.SampleRange(10, b, s, 0)
	require.NoError(t, err)
	require.Len(t, d, 40)
	for _, v := range d {
		require.True(t, v >= 100 && v < 103)
	}

	_, err = PerSourceUniform{K: 1}.SampleRanges([]int64{1}, []NodeRange{{Lo: 3}}, s, 0)
	require.ErrorContains(t, err, "no node")
	_, err = PerSourceUniform{K: 1}.SampleRanges([]int64{1}, nil, s, 0)
	require.ErrorContains(t, err, "ranges")
	_, err = Binary{Amount: 1, Weights: &NodeWeights{}}.SampleRanges(1, a, b, s, 0)
	require.ErrorContains(t, err, "the weight vector has 0 entries for the 5 nodes of the sources' type")
	// Weights by position in the range: a zero weight is never drawn.
	w, err := NewNodeWeights([]float64{1, 0, 2})
	require.NoError(t, err)
	d, err = Triplet{Amount: 20, Weights: w}.SampleRange(10, b, s, 0)
	require.NoError(t, err)
	counts := map[int64]int{}
	for _, v := range d {
		counts[v]++
	}
	require.Zero(t, counts[101])
	require.Greater(t, counts[102], counts[100])
	require.Equal(t, 200, counts[100]+counts[102])
	_, err = Binary{Amount: 1, Weights: w}.SampleRanges(1, a, b, s, 0)
	require.ErrorContains(t, err, "3 entries for the 5 nodes of the sources' type")
	p, err = Binary{Amount: 1, Weights: w}.SampleRanges(50, b, b, s, 0)
	require.NoError(t, err)
	for i := range p.Src {
		require.True(t, p.Src[i] != 101 && p.Dst[i] != 101)
	}
	// The range of every node draws what the untyped weighted samplers draw.
	all := NodeRange{N: 3}
	want, err := Binary{Amount: 2, Weights: w}.Sample(7, 3, s, 0)
	require.NoError(t, err)
	p, err = Binary{Amount: 2, Weights: w}.SampleRanges(7, all, all, s, 0)
	require.NoError(t, err)
	require.Equal(t, want, p)
	wantDst, err := Triplet{Amount: 2, Weights: w}.Sample(7, 3, s, 0)
	require.NoError(t, err)
	d, err = Triplet{Amount: 2, Weights: w}.SampleRange(7, all, s, 0)
	require.NoError(t, err)
	require.Equal(t, wantDst, d)
	_, err = Triplet{Amount: 1}.SampleRange(1, NodeRange{}, s, 0)
	require.ErrorContains(t, err, "no node")
}

// One relation over one node type: DGL's heterogeneous compaction is its
// homogeneous one.
func TestCompactDGLTypedOneTypeIsCompactDGL(t *testing.T) {
	const n = 40
	types := typesOf([]int64{n}, [][3]int64{{0, 0, 100}})
	pos := Pairs{Src: []int64{5, 9, 5, 30}, Dst: []int64{9, 2, 39, 5}}
	neg, err := PerSourceUniform{K: 2}.Sample(pos.Src, n, Stream{Seed: 3}, 0)
	require.NoError(t, err)
	want, err := CompactDGL(pos, neg, n)
	require.NoError(t, err)
	got, err := CompactDGLTyped(pos, neg, []int64{0, 4}, []int64{0, 8}, types)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

func TestCompactDGLTyped(t *testing.T) {
	// Types: paper [0, 5), author [5, 8). Relations: 0 cites paper->paper,
	// 1 writes author->paper, 2 rev_writes paper->author.
	types := typesOf([]int64{5, 3}, [][3]int64{{0, 0, 10}, {1, 0, 10}, {0, 1, 10}})
	pos := Pairs{
		Src: []int64{3, 1, 7, 5, 2}, // cites: 3->4, 1->3; writes: 7->0, 5->4; rev_writes: 2->6
		Dst: []int64{4, 3, 0, 4, 6},
	}
	neg := Pairs{Src: []int64{3, 7}, Dst: []int64{2, 1}} // cites: 3->2; writes: 7->1
	c, err := CompactDGLTyped(pos, neg, []int64{0, 2, 4, 5}, []int64{0, 1, 2, 2}, types)
	require.NoError(t, err)
	// Papers by first appearance: cites src 3, 1, dst 4; writes dst 0;
	// rev_writes src 2; neg cites dst... 2 seen; neg writes dst 1 is new.
	// Authors: writes src 7, 5; rev_writes dst 6.
	require.Equal(t, []int64{3, 1, 4, 0, 2, 7, 5, 6}, c.Nodes)
	for i := range pos.Src {
		require.Equal(t, pos.Src[i], c.Nodes[c.Pos.Src[i]])
		require.Equal(t, pos.Dst[i], c.Nodes[c.Pos.Dst[i]])
	}
	// neg writes dst 1 was already there (cites src 1).
	require.Equal(t, []int64{2, 1}, []int64{c.Nodes[c.Neg.Dst[0]], c.Nodes[c.Neg.Dst[1]]})

	local := [][]int64{append([]int64(nil), c.Pos.Src...), append([]int64(nil), c.Pos.Dst...)}
	require.NoError(t, TypeLocal(c.Nodes, types, local...))
	// Ranks within the type: papers 3,1,4,0,2 -> 0..4; authors 7,5,6 -> 0..2.
	require.Equal(t, []int64{0, 1, 0, 1, 4}, local[0])
	require.Equal(t, []int64{2, 0, 3, 2, 2}, local[1])

	_, err = CompactDGLTyped(pos, neg, []int64{0, 2, 5}, []int64{0, 1, 2, 2}, types)
	require.ErrorContains(t, err, "relation offsets")
	_, err = CompactDGLTyped(pos, neg, []int64{0, 3, 2, 5}, []int64{0, 1, 2, 2}, types)
	require.ErrorContains(t, err, "decrease")
	_, err = CompactDGLTyped(Pairs{Src: []int64{9}, Dst: []int64{0}}, Pairs{}, []int64{0, 1, 1, 1}, nil, types)
	require.ErrorContains(t, err, "not a node id")
	require.ErrorContains(t, TypeLocal([]int64{6, 1}, types), "grouped")
	require.ErrorContains(t, TypeLocal([]int64{1, 6}, types, []int64{2}), "outside")
}

func TestPyGBatchTyped(t *testing.T) {
	s := Stream{Seed: 8, Key: 1}
	// One node type: the typed batch is the untyped one.
	one := typesOf([]int64{60}, [][3]int64{{0, 0, 10}})
	pos := Pairs{Src: []int64{5, 9, 5, 30}, Dst: []int64{9, 2, 59, 5}}
	for _, mode := range []PyGMode{PyGNone, PyGBinaryMode, PyGTripletMode} {
		p := PyGLinkSampler{Mode: mode, Amount: 2}
		want, err := p.Batch(pos, 60, s, 2)
		require.NoError(t, err)
		got, err := p.BatchTyped(pos, one, s, 2)
		require.NoError(t, err)
		require.Equal(t, want, got, "mode %d", mode)
	}
	// author [0, 20) -> paper [20, 50): sources among authors, destinations
	// among papers; indices are ranks within each type's seeds.
	two := typesOf([]int64{20, 30}, [][3]int64{{0, 1, 10}})
	pos = Pairs{Src: []int64{3, 7, 3}, Dst: []int64{25, 21, 49}}
	for _, mode := range []PyGMode{PyGBinaryMode, PyGTripletMode} {
		b, err := PyGLinkSampler{Mode: mode, Amount: 3}.BatchTyped(pos, two, s, 0)
		require.NoError(t, err)
		var authors, papers []int64
		for _, v := range b.Nodes {
			if v < 20 {
				authors = append(authors, v)
			} else {
				papers = append(papers, v)
			}
		}
		require.Equal(t, b.Nodes, append(append([]int64(nil), authors...), papers...), "grouped by type, sorted")
		src, dst := b.Index.Src, b.Index.Dst
		if mode == PyGTripletMode {
			src, dst = b.SrcIndex, b.DstPosIndex
			require.Len(t, b.DstNegIndex, 9)
			for _, d := range b.DstNegIndex {
				require.Less(t, d, int64(len(papers)))
			}
		} else {
			require.Len(t, src, 3+9)
			for i := 3; i < len(src); i++ {
				require.Less(t, src[i], int64(len(authors)))
				require.Less(t, dst[i], int64(len(papers)))
			}
		}
		for i := range pos.Src {
			require.Equal(t, pos.Src[i], authors[src[i]])
			require.Equal(t, pos.Dst[i], papers[dst[i]])
		}
	}
	_, err := PyGLinkSampler{Mode: PyGBinaryMode, Amount: 1}.BatchTyped(Pairs{Src: []int64{3, 25}, Dst: []int64{25, 26}}, two, s, 0)
	require.ErrorContains(t, err, "not of one edge type")
	_, err = PyGLinkSampler{Mode: PyGTripletMode, Amount: 1, Weights: &NodeWeights{}}.BatchTyped(pos, two, s, 0)
	require.ErrorContains(t, err, "the weight vector has 0 entries")
	_, err = PyGLinkSampler{}.BatchTyped(Pairs{Src: []int64{50}, Dst: []int64{0}}, two, s, 0)
	require.ErrorContains(t, err, "not a node id")
}

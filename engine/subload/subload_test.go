package subload_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/stattest"
	"github.com/graphferry/graphferry/engine/subload"
)

// testEdges is a small directed graph with a node without out-edges (5),
// one without any edge (7), a self-loop and a repeated edge.
var testSrc = []int64{0, 0, 1, 2, 2, 3, 3, 4, 6, 6, 1, 2, 0}
var testDst = []int64{1, 2, 2, 0, 3, 4, 5, 5, 6, 0, 3, 3, 1}

const testNodes = 8

// parted returns the test graph in patches patches (randomly assigned
// nodes, so that internal ids differ from original ones).
func parted(t *testing.T, patches int) *partition.Partitioned {
	t.Helper()
	g, err := graph.FromCOO(testSrc, testDst, nil, graph.COOOptions{NumNodes: testNodes})
	require.NoError(t, err)
	p, err := partition.Build(g, partition.Options{Method: partition.Random, NumPatches: patches, Seed: 5})
	require.NoError(t, err)
	return p
}

// induced returns the edges (positions in nodes, edge id) that nodes
// induce in the test graph, by brute force.
func induced(nodes []int64) [][3]int64 {
	var out [][3]int64
	for e := range testSrc {
		i, j := slices.Index(nodes, testSrc[e]), slices.Index(nodes, testDst[e])
		if i >= 0 && j >= 0 {
			out = append(out, [3]int64{int64(i), int64(j), int64(e)})
		}
	}
	return out
}

// coo reads a batch's edges.
func coo(b *pipeline.Batch) [][3]int64 {
	idx, ids := mem.Int64s(b.COO.Index.Data), mem.Int64s(b.COO.EdgeIDs.Data)
	e := len(ids)
	out := make([][3]int64, e)
	for k := range out {
		out[k] = [3]int64{idx[k], idx[e+k], ids[k]}
	}
	return out
}

func make1(t *testing.T, s *subload.Source, pos []int64, key uint64) ([]int64, [][3]int64) {
	t.Helper()
	b, res, err := s.Make(context.Background(), pos, key, nil)
	require.NoError(t, err)
	defer b.Release()
	nodes := slices.Clone(mem.Int64s(b.Nodes.Data))
	require.Equal(t, []int64{0, int64(len(nodes))}, mem.Int64s(b.HopCounts.Data))
	require.Len(t, res.Nodes, len(nodes))
	return nodes, coo(b)
}

func TestBatchesAreInducedSubgraphsInOrder(t *testing.T) {
	kinds := map[string]subload.Options{
		"nodes-dgl": {Kind: subload.Nodes, Weighting: subload.OutDegreeAtLeast1, Budget: 4},
		"nodes-pyg": {Kind: subload.Nodes, Weighting: subload.OutDegree, Budget: 4, Order: subload.BySrcThenDst},
		"edges-dgl": {Kind: subload.Edges, Weighting: subload.InverseDegree, Budget: 3},
		"edges-pyg": {Kind: subload.Edges, Weighting: subload.DegreeSum, Budget: 3, Order: subload.BySrcThenDst},
		"walks":     {Kind: subload.Walks, Budget: 2, WalkLength: 3, Order: subload.ByDstThenEID},
		"parts":     {Kind: subload.Parts, PartOffsets: []int64{0, 3, 5, 8}, PartNodes: []int64{7, 0, 3, 1, 2, 6, 5, 4}},
	}
	for name, opt := range kinds {
		t.Run(name, func(t *testing.T) {
			opt.Seed = 11
			var want [][]int64
			for _, patches := range []int{1, 3} { // the same batches whatever the patches
				s, err := subload.New(parted(t, patches), []int64{2, 0, 1}, opt)
				require.NoError(t, err)
				var got [][]int64
				for key := range uint64(20) {
					nodes, edges := make1(t, s, []int64{int64(key % 3), int64((key + 1) % 3)}, key)
					if opt.Kind != subload.Parts {
						require.True(t, slices.IsSorted(nodes), "drawn node sets are sorted")
					}
					expect := induced(nodes)
					slices.SortFunc(expect, func(a, b [3]int64) int {
						switch opt.Order {
						case subload.BySrcThenEID:
							return cmpAll(a[0]-b[0], a[2]-b[2])
						case subload.BySrcThenDst:
							return cmpAll(a[0]-b[0], a[1]-b[1], a[2]-b[2])
						}
						return cmpAll(a[1]-b[1], a[2]-b[2])
					})
					if len(expect) == 0 {
						expect = [][3]int64{}
					}
					require.Equal(t, expect, edges, "key %d, nodes %v", key, nodes)
					got = append(got, nodes)
				}
				if want == nil {
					want = got
				} else {
					assert.Equal(t, want, got)
				}
			}
		})
	}
}

func cmpAll(d ...int64) int {
	for _, x := range d {
		if x != 0 {
			if x < 0 {
				return -1
			}
			return 1
		}
	}
	return 0
}

func TestPartsBatchIsItsPartsInOrder(t *testing.T) {
	s, err := subload.New(parted(t, 2), []int64{0, 1, 2}, subload.Options{Kind: subload.Parts, PartOffsets: []int64{0, 3, 5, 8}})
	require.NoError(t, err)
	nodes, _ := make1(t, s, []int64{2, 0}, 0)
	assert.Equal(t, []int64{5, 6, 7, 0, 1, 2}, nodes)
	_, _, err = s.Make(context.Background(), []int64{0, 0}, 0, nil)
	require.ErrorContains(t, err, "in two parts of the batch")
	nodes, _ = make1(t, s, []int64{1}, 0) // the failed batch left nothing marked
	assert.Equal(t, []int64{3, 4}, nodes)
}

// One drawn node a batch: its frequency is the node's weight over the
// total (DGL's out-degree, at least 1).
func TestNodeDrawsFollowTheWeights(t *testing.T) {
	s, err := subload.New(parted(t, 3), []int64{0}, subload.Options{Kind: subload.Nodes, Weighting: subload.OutDegreeAtLeast1, Budget: 1, Seed: 3})
	require.NoError(t, err)
	out := make([]float64, testNodes)
	for _, u := range testSrc {
		out[u]++
	}
	var total float64
	for v := range out {
		out[v] = max(out[v], 1)
		total += out[v]
	}
	for v := range out {
		out[v] /= total
	}
	counts := make([]int, testNodes)
	for key := range uint64(4000) {
		nodes, _ := make1(t, s, []int64{0}, key)
		require.Len(t, nodes, 1)
		counts[nodes[0]]++
	}
	stattest.CheckGOF(t, "node draws", counts, out)
}

// The walks go along out-edges: from node 5 (no out-edges) a walk stays
// at 5; node 7 has no edge at all.
func TestWalksFollowOutEdges(t *testing.T) {
	s, err := subload.New(parted(t, 2), make([]int64, 1), subload.Options{Kind: subload.Walks, Budget: 3, WalkLength: 4, Seed: 9})
	require.NoError(t, err)
	for key := range uint64(50) {
		nodes, edges := make1(t, s, []int64{0}, key)
		require.NotEmpty(t, nodes)
		require.LessOrEqual(t, len(nodes), 3*5)
		_ = edges
	}
}

func TestPipelineMakesTheSameBatchesAhead(t *testing.T) {
	p := parted(t, 2)
	opt := subload.Options{Kind: subload.Edges, Weighting: subload.InverseDegree, Budget: 4, Seed: 1}
	epoch := func(workers int) ([][]int64, pipeline.Stats) {
		s, err := subload.New(p, make([]int64, 12), opt)
		require.NoError(t, err)
		store := edgeIDStore(t)
		pl, err := pipeline.NewMaker(s, p, nil, s.NumItems(), pipeline.Options{BatchSize: 2, Workers: workers, EdgeFeatureNames: []string{"id"}, EdgeStore: store}, nil)
		require.NoError(t, err)
		defer pl.Close()
		require.Equal(t, 6, pl.NumBatches())
		require.NoError(t, pl.Start(4))
		var out [][]int64
		for {
			b, err := pl.Next(context.Background())
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			// the edge data is gathered over the COO's edge ids
			require.Equal(t, mem.Int64s(b.COO.EdgeIDs.Data), mem.Int64s(b.EdgeData["id"].Data))
			out = append(out, slices.Clone(mem.Int64s(b.Nodes.Data)))
			b.Release()
		}
		return out, pl.Stats()
	}
	one, _ := epoch(1)
	three, st := epoch(3)
	assert.Equal(t, one, three)
	assert.Len(t, one, 6)
	assert.EqualValues(t, 6, st.Total.Sampler.Batches)
}

func TestOptionsAreChecked(t *testing.T) {
	p := parted(t, 1)
	for msg, opt := range map[string]subload.Options{
		"budget = -1":                {Kind: subload.Nodes, Budget: -1},
		"walk length = -2":           {Kind: subload.Walks, WalkLength: -2},
		"kind 0 is unknown":          {},
		"does not weigh nodes":       {Kind: subload.Nodes, Weighting: subload.DegreeSum},
		"does not weigh edges":       {Kind: subload.Edges, Weighting: subload.OutDegree},
		"must start at 0":            {Kind: subload.Parts},
		"is below offsets":           {Kind: subload.Parts, PartOffsets: []int64{0, 4, 2}},
		"the parts hold 9 nodes":     {Kind: subload.Parts, PartOffsets: []int64{0, 9}},
		"is in two parts":            {Kind: subload.Parts, PartOffsets: []int64{0, 2}, PartNodes: []int64{1, 1}},
		"is not a part id in [0, 1)": {Kind: subload.Parts, PartOffsets: []int64{0, 2}},
		"edge order = 7 is unknown":  {Kind: subload.Nodes, Order: 7},
	} {
		_, err := subload.New(p, []int64{0, 3}, opt)
		require.ErrorContains(t, err, msg)
	}
	empty, err := graph.FromCOO(nil, nil, nil, graph.COOOptions{NumNodes: 3})
	require.NoError(t, err)
	ep, err := partition.Build(empty, partition.Options{})
	require.NoError(t, err)
	_, err = subload.New(ep, nil, subload.Options{Kind: subload.Edges, Weighting: subload.InverseDegree})
	require.ErrorContains(t, err, "no edges to draw from")
	// walks on a graph without edges: every root alone
	s, err := subload.New(ep, []int64{0}, subload.Options{Kind: subload.Walks, Budget: 2, WalkLength: 2})
	require.NoError(t, err)
	nodes, edges := make1(t, s, []int64{0}, 0)
	assert.NotEmpty(t, nodes)
	assert.Empty(t, edges)
}

// edgeIDStore holds "id": one row per edge id, the id itself.
func edgeIDStore(t *testing.T) *feature.Store {
	t.Helper()
	e := len(testSrc)
	buf, ids, err := mem.AllocInt64(mem.Heap{}, e)
	require.NoError(t, err)
	for i := range ids {
		ids[i] = int64(i)
	}
	s := feature.NewStore(int64(e))
	require.NoError(t, s.Set("id", mem.Tensor{DType: mem.Int64, Shape: []int64{int64(e)}, Data: buf}, nil))
	return s
}

// A Drawn batch is the subgraph induced by the distinct ids the caller's
// Draw gives it, called with the batch's key and items; what the Draw gets
// wrong fails that batch only.
func TestDrawnBatchIsTheDrawsSubgraph(t *testing.T) {
	_, err := subload.New(parted(t, 2), []int64{0}, subload.Options{Kind: subload.Drawn})
	require.ErrorContains(t, err, "needs its Draw")

	var gotKey uint64
	var gotItems []int64
	draw := func(_ context.Context, key uint64, items []int64, maxOut int) ([]int64, error) {
		gotKey, gotItems = key, slices.Clone(items)
		require.GreaterOrEqual(t, maxOut, 8*testNodes)
		switch key {
		case 7:
			return []int64{6, 2, 0, 2, 3}, nil // a repeat: kept once
		case 8:
			return []int64{1, testNodes}, nil
		default:
			return nil, io.ErrUnexpectedEOF
		}
	}
	for patches := 1; patches <= 3; patches++ {
		s, err := subload.New(parted(t, patches), []int64{10, 11, 12}, subload.Options{Kind: subload.Drawn, Draw: draw})
		require.NoError(t, err)
		nodes, edges := make1(t, s, []int64{2, 0}, 7)
		assert.Equal(t, uint64(7), gotKey)
		assert.Equal(t, []int64{12, 10}, gotItems, "the batch's items, in batch order")
		assert.Equal(t, []int64{0, 2, 3, 6}, nodes, "distinct, in increasing id order")
		assert.ElementsMatch(t, induced(nodes), edges)

		_, _, err = s.Make(context.Background(), []int64{1}, 8, nil)
		require.ErrorContains(t, err, "the draw of batch 8 gave node 8, outside [0, 8)")
		_, _, err = s.Make(context.Background(), []int64{1}, 9, nil)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		nodes, _ = make1(t, s, []int64{1}, 7) // a failed batch leaves the source as it was
		assert.Equal(t, []int64{0, 2, 3, 6}, nodes)
	}
}

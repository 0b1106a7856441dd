package core

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// typedTestGraph builds a typed graph: types A = [0, 40), B = [40, 100);
// relations 0: A->B, 1: B->B, 2: B->A, edges given relation by relation.
func typedTestGraph(t *testing.T, popt partition.Options) (*Graph, graph.Types) {
	t.Helper()
	ranges := [][4]int64{{0, 40, 40, 100}, {40, 100, 40, 100}, {40, 100, 0, 40}}
	var src, dst []int64
	edgeOff := []int64{0}
	x := uint64(12345)
	next := func(lo, hi int64) int64 {
		x = x*6364136223846793005 + 1442695040888963407
		return lo + int64((x>>33)%uint64(hi-lo))
	}
	for _, r := range ranges {
		for range 150 {
			src, dst = append(src, next(r[0], r[1])), append(dst, next(r[2], r[3]))
		}
		edgeOff = append(edgeOff, int64(len(src)))
	}
	csc, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: 100})
	require.NoError(t, err)
	g, err := New(csc, popt)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	ty := graph.Types{NodeOffsets: []int64{0, 40, 100}, EdgeOffsets: edgeOff, RelSrc: []int32{0, 1, 1}, RelDst: []int32{1, 1, 0}}
	return g, ty
}

func typedPartitions() map[string]partition.Options {
	given := make([]int64, 100)
	for v := range given {
		given[v] = int64((v * 7) % 4)
	}
	return map[string]partition.Options{
		"range1":  {Method: partition.Range, NumPatches: 1},
		"range3":  {Method: partition.Range, NumPatches: 3},
		"random3": {Method: partition.Random, NumPatches: 3, Seed: 5},
		"given4":  {Method: partition.Given, NumPatches: 4, Assignment: given},
	}
}

// TestTypedSampleEveryLayout: types set on every partition method, and
// typed, disjoint and temporal batches that do not depend on the layout.
func TestTypedSampleEveryLayout(t *testing.T) {
	req := sample.Request{RelationFanouts: [][]int{{2, 3, 1}, {1, 1, 2}}, Seed: 4}
	dj := sample.Request{RelationFanouts: [][]int{{2, 3, 1}, {1, 1, 2}}, Frontier: sample.FrontierNew, Disjoint: true,
		Temporal: sample.TemporalNode, Seed: 5}
	nodeTime := make([]int64, 100)
	for v := range nodeTime {
		nodeTime[v] = int64(v*37) % 50
	}
	seeds := []int64{5, 50, 77, 5, 12}
	times := []int64{30, 10, 49, 3, 20}
	var want, wantDj *batchView
	for name, popt := range typedPartitions() {
		g, ty := typedTestGraph(t, popt)
		nt, nr := g.NumTypes()
		require.Equal(t, [2]int{0, 0}, [2]int{nt, nr})
		require.NoError(t, g.SetTypes(ty), name)
		nt, nr = g.NumTypes()
		require.Equal(t, [2]int{2, 3}, [2]int{nt, nr})
		require.Equal(t, &ty, g.Types())
		require.NoError(t, g.SetNodeTime(nodeTime))
		b, err := g.Sample([]int64{5, 50, 77}, req, 2, nil)
		require.NoError(t, err, name)
		got := viewOf(b)
		if want == nil {
			want = got
		}
		require.Equal(t, want, got, "%s: typed batches do not depend on the layout", name)
		b, err = g.SampleTimed(seeds, times, dj, 2, nil)
		require.NoError(t, err, name)
		got = viewOf(b)
		if wantDj == nil {
			wantDj = got
		}
		require.Equal(t, wantDj, got, "%s: disjoint temporal batches do not depend on the layout", name)
		require.Len(t, got.batch, len(got.nodes))
		for i, v := range got.nodes[len(seeds):] {
			require.LessOrEqual(t, nodeTime[v], times[got.batch[len(seeds)+i]], "%s: a node later than its seed time", name)
		}
	}
}

type batchView struct {
	nodes, hops, batch []int64
	edges              [][]int64
}

func viewOf(b *pipeline.Batch) *batchView {
	v := &batchView{nodes: slices.Clone(i64(b.Nodes)), hops: slices.Clone(i64(b.HopCounts))}
	if b.Batch.Data != nil {
		v.batch = slices.Clone(i64(b.Batch))
	}
	for _, blk := range b.Blocks {
		v.edges = append(v.edges, slices.Clone(i64(blk.EdgeIDs)))
	}
	b.Release()
	return v
}

func TestSetTypesErrors(t *testing.T) {
	g, ty := typedTestGraph(t, partition.Options{Method: partition.Random, NumPatches: 3, Seed: 1})
	bad := ty
	bad.RelDst = []int32{1, 1, 1}
	err := g.SetTypes(bad)
	require.ErrorContains(t, err, "but the relation's destination type is 1")
	bad = ty
	bad.NodeOffsets = []int64{0, 40, 99}
	require.ErrorContains(t, g.SetTypes(bad), "node_offsets[2] = 99, want the number of nodes (100)")
	nt, _ := g.NumTypes()
	require.Zero(t, nt, "a failed SetTypes leaves the graph untyped")
	_, err = g.Sample([]int64{1}, sample.Request{RelationFanouts: [][]int{{1, 1, 1}}}, 1, nil)
	require.ErrorContains(t, err, "needs a typed graph")
	require.ErrorContains(t, g.SetNodeTime(make([]int64, 3)), "node times have 3 entries")
	require.ErrorContains(t, g.SetEdgeTime(make([]int64, 3)), "edge times have 3 entries")
	_, err = g.SampleTimed([]int64{1}, []int64{4}, sample.Request{Fanouts: []int{1}}, 1, nil)
	require.ErrorContains(t, err, "not temporal")
	_, err = g.SampleTimed([]int64{1}, []int64{4}, sample.Request{Fanouts: []int{1}, Frontier: sample.FrontierNew, Disjoint: true, Temporal: sample.TemporalEdge}, 1, nil)
	require.ErrorContains(t, err, "needs edge times")

	// Open loaders pin the types and times.
	require.NoError(t, g.SetTypes(ty))
	l, err := g.OpenLoader([]int64{1, 2, 3}, sample.Request{RelationFanouts: [][]int{{1, 1, 1}}}, defaultLoaderNoData(), nil)
	require.NoError(t, err)
	require.ErrorIs(t, g.SetTypes(ty), errs.ErrState)
	require.ErrorIs(t, g.SetNodeTime(make([]int64, 100)), errs.ErrState)
	require.ErrorIs(t, g.SetEdgeTime(make([]int64, 450)), errs.ErrState)
	require.NoError(t, l.Close())
	require.NoError(t, g.SetEdgeTime(make([]int64, 450)))
}

func defaultLoaderNoData() pipeline.Options {
	o := defaultLoader()
	o.FeatureNames, o.LabelNames = nil, nil
	return o
}

// TestTemporalDisjointLoader: a loader with seed times (permuted with the
// seeds) and repeated seeds gives disjoint batches with Batch, the same as
// the synchronous call for each batch's seeds.
func TestTemporalDisjointLoader(t *testing.T) {
	g, ty := typedTestGraph(t, partition.Options{Method: partition.Random, NumPatches: 3, Seed: 2})
	require.NoError(t, g.SetTypes(ty))
	edgeTime := make([]int64, 450)
	for e := range edgeTime {
		edgeTime[e] = int64(e*13) % 40
	}
	require.NoError(t, g.SetEdgeTime(edgeTime))
	seeds := []int64{7, 7, 60, 61, 90, 3, 7}
	times := []int64{10, 30, 5, 39, 20, 25, 0}
	req := sample.Request{Fanouts: []int{3, 2}, Frontier: sample.FrontierNew, Disjoint: true, Temporal: sample.TemporalEdge, Seed: 3}
	lopt := defaultLoaderNoData()
	lopt.BatchSize, lopt.Shuffle, lopt.Seed = 3, true, 9
	_, err := g.OpenLoader(seeds, req, lopt, nil)
	require.ErrorContains(t, err, "needs seed times")
	lopt.SeedTimes = times
	l, err := g.OpenLoader(seeds, req, lopt, mem.NewChecked(mem.Heap{}))
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, l.Start(0))
	var n int
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		idx := i64(b.InputIndex)
		var bs, bt []int64
		for _, q := range idx {
			bs, bt = append(bs, seeds[q]), append(bt, times[q])
		}
		require.Equal(t, bs, i64(b.Seeds))
		n += len(idx)
		batch := i64(b.Batch)
		for _, blk := range b.Blocks {
			indptr, eids := i64(blk.Indptr), i64(blk.EdgeIDs)
			for i := int64(0); i < blk.NumDst; i++ {
				cut := bt[batch[blk.DstOffset+i]]
				for _, e := range eids[indptr[i]:indptr[i+1]] {
					require.LessOrEqual(t, edgeTime[e], cut, "edge %d is later than its subgraph's seed time", e)
				}
			}
		}
		got := viewOf(b)
		require.Len(t, got.batch, len(got.nodes))
		require.Equal(t, bs, got.nodes[:len(bs)])
	}
	require.Equal(t, len(seeds), n)
}

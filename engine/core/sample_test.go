package core

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

func requireSameBatch(t *testing.T, want, got *pipeline.Batch, what string) {
	t.Helper()
	require.Equal(t, i64(want.Seeds), i64(got.Seeds), what)
	require.Equal(t, i64(want.InputIndex), i64(got.InputIndex), what)
	require.Equal(t, i64(want.Nodes), i64(got.Nodes), what)
	require.Equal(t, i64(want.HopCounts), i64(got.HopCounts), what)
	require.Equal(t, len(want.Blocks), len(got.Blocks), what)
	for h := range want.Blocks {
		w, g := want.Blocks[h], got.Blocks[h]
		require.Equal(t, [3]int64{w.NumDst, w.NumSrc, w.DstOffset}, [3]int64{g.NumDst, g.NumSrc, g.DstOffset}, "%s hop %d", what, h)
		require.Equal(t, i64(w.Indptr), i64(g.Indptr), "%s hop %d", what, h)
		require.Equal(t, i64(w.Indices), i64(g.Indices), "%s hop %d", what, h)
		require.Equal(t, i64(w.EdgeIDs), i64(g.EdgeIDs), "%s hop %d", what, h)
	}
}

// Graph.Sample gives what the sample runtime gives when called directly,
// for every numbering; and, in original ids, the same batch for every
// numbering (the engine's promise).
func TestSampleMatchesRuntime(t *testing.T) {
	seeds := []int64{17, 3, 250, 42, 99, 0}
	reqs := map[string]sample.Request{
		"nodewise":  defaultSample(),
		"replace":   {Fanouts: []int{3, -1}, Replace: true, Seed: 9},
		"new":       {Fanouts: []int{2, 2, 2}, Frontier: sample.FrontierNew, Seed: 2},
		"layerwise": {Fanouts: []int{20, 30}, Scheme: sample.LayerWise, Seed: 4},
		"exclude":   {Fanouts: []int{-1}, ExcludeEdges: []int64{0, 5, 9, 100, 7000}, Seed: 1},
		"fanout0":   {Fanouts: []int{0, 3}, Seed: 6},
	}
	ref := refGraph(t)
	for rname, req := range reqs {
		var first *pipeline.Batch
		for pname, popt := range partitions() {
			what := rname + "/" + pname
			g := newTestGraph(t, popt)
			alloc := mem.NewChecked(mem.Heap{})
			got, err := g.Sample(seeds, req, testThreads, alloc)
			require.NoError(t, err, what)

			rt, err := sample.NewRuntime(g.part, comm.NewLocal(g.NumPatches()), sample.RuntimeOptions{Threads: 1})
			require.NoError(t, err)
			internal, err := pipeline.InternalSeeds(g.part, seeds)
			require.NoError(t, err)
			res, err := rt.Sample(context.Background(), req, [][]int64{internal}, []uint64{0})
			require.NoError(t, err)
			want, err := pipeline.Materialize(res[0], seeds, []int64{0, 1, 2, 3, 4, 5}, g.part, nil, nil, nil, nil, 1)
			require.NoError(t, err)
			requireSameBatch(t, want, got, what)

			// Every sampled edge is an edge of the original graph.
			nodes := i64(got.Nodes)
			for _, b := range got.Blocks {
				ip, ix, eid := i64(b.Indptr), i64(b.Indices), i64(b.EdgeIDs)
				for d := range b.NumDst {
					v := nodes[b.DstOffset+d]
					for k := ip[d]; k < ip[d+1]; k++ {
						require.True(t, hasEdge(ref, nodes[ix[k]], v, eid[k]), what)
					}
				}
			}
			if first == nil {
				first = got
			} else {
				requireSameBatch(t, first, got, what+" vs the first numbering")
				got.Release()
			}
		}
		first.Release()
	}
}

// Fan-out 0 samples no neighbour in its hop (DGL's fan-out 0): the block
// has the hop's dst nodes as its only src nodes, and the next hop samples
// from the seeds alone.
func TestSampleFanoutZero(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	seeds := []int64{17, 3, 250}
	b, err := g.Sample(seeds, sample.Request{Fanouts: []int{0, 2}, Seed: 1}, testThreads, nil)
	require.NoError(t, err)
	defer b.Release()
	require.Len(t, b.Blocks, 2)
	require.Equal(t, [3]int64{3, 3, 0}, [3]int64{b.Blocks[0].NumDst, b.Blocks[0].NumSrc, b.Blocks[0].DstOffset})
	require.Equal(t, []int64{0, 0, 0, 0}, i64(b.Blocks[0].Indptr))
	require.Empty(t, i64(b.Blocks[0].Indices))
	require.Equal(t, int64(0), i64(b.HopCounts)[1])
	require.Positive(t, len(i64(b.Blocks[1].Indices)), "the next hop still samples")
}

func TestSampleErrors(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	alloc := mem.NewChecked(mem.Heap{})
	_, err := g.Sample([]int64{1, 300}, defaultSample(), testThreads, alloc)
	require.EqualError(t, err, "seeds[1] = 300 is out of range [0, 300)")
	_, err = g.Sample([]int64{1, 1}, defaultSample(), testThreads, alloc)
	require.ErrorContains(t, err, "duplicates")
	_, err = g.Sample([]int64{1}, sample.Request{Fanouts: []int{3, -2}}, testThreads, alloc)
	require.ErrorContains(t, err, "Fanouts[1] = -2")
	_, err = g.Sample([]int64{1}, sample.Request{}, testThreads, alloc)
	require.ErrorContains(t, err, "Fanouts is empty")
	_, err = g.Sample([]int64{1}, sample.Request{Fanouts: []int{1}, Biased: true}, testThreads, alloc)
	require.ErrorContains(t, err, "weights")
	n, _ := alloc.Outstanding()
	require.Zero(t, n)
}

// Walk traces come back in original ids, every step along an edge of the
// original graph, and are the same for every numbering.
func TestRandomWalkOriginalIDs(t *testing.T) {
	ref := refGraph(t)
	seeds := []int64{5, 5, 120, 299, 0}
	const length = 6
	var first []int64
	for name, popt := range partitions() {
		g := newTestGraph(t, popt)
		w, err := g.RandomWalk(seeds, sample.WalkRequest{Length: length, RestartProb: 0.2, Seed: 3}, testThreads, nil)
		require.NoError(t, err, name)
		require.Equal(t, []int64{int64(len(seeds)), length + 1}, w.Traces.Shape)
		require.Equal(t, []int64{int64(len(seeds)), length}, w.EdgeIDs.Shape)
		tr, ed := i64(w.Traces), i64(w.EdgeIDs)
		steps := 0
		for i, s := range seeds {
			row, erow := tr[i*(length+1):(i+1)*(length+1)], ed[i*length:(i+1)*length]
			require.Equal(t, s, row[0])
			for k := range length {
				if erow[k] >= 0 {
					require.True(t, hasEdge(ref, row[k+1], row[k], erow[k]), "%s: walk %d step %d", name, i, k)
					steps++
				}
			}
		}
		require.Positive(t, steps, name)
		if first == nil {
			first = tr
		} else {
			require.Equal(t, first, tr, name)
		}
	}

	g := newTestGraph(t, partitions()["random3"])
	_, err := g.RandomWalk([]int64{300}, sample.WalkRequest{Length: 1}, testThreads, nil)
	require.ErrorContains(t, err, "seeds: ")
	_, err = g.RandomWalk([]int64{1}, sample.WalkRequest{Length: -1}, testThreads, nil)
	require.ErrorContains(t, err, "length = -1")
	_, err = g.RandomWalk([]int64{1}, sample.WalkRequest{RestartProb: 1.5}, testThreads, nil)
	require.ErrorContains(t, err, "restart probability = 1.5")
	_, err = g.RandomWalk([]int64{1}, sample.WalkRequest{Length: 1}, testThreads, failingAlloc{})
	require.Error(t, err)
}

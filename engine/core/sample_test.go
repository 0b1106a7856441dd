package core

import (
	"context"
	"reflect"
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

// Graph.Sample gives what the sampler chain gives when called directly, for
// every numbering; and, in original ids, the same batch for every numbering
// (the engine's promise).
func TestSampleMatchesSampler(t *testing.T) {
	seeds := []int64{17, 3, 250, 42, 99, 0}
	opts := map[string]sample.Options{
		"nodewise":  defaultSample(),
		"replace":   {Fanouts: []int{3, -1}, Replace: true, Seed: 9},
		"new":       {Fanouts: []int{2, 2, 2}, Frontier: sample.FrontierNew, Seed: 2},
		"layerwise": {Fanouts: []int{20, 30}, Scheme: sample.LayerWise, Seed: 4},
		"exclude":   {Fanouts: []int{-1}, ExcludeEdges: []int64{0, 5, 9, 100, 7000}, Seed: 1},
	}
	ref := refGraph(t)
	for oname, opt := range opts {
		var first *pipeline.Batch
		for pname, popt := range partitions() {
			what := oname + "/" + pname
			g := newTestGraph(t, popt)
			alloc := mem.NewChecked(mem.Heap{})
			got, err := g.Sample(seeds, opt, alloc)
			require.NoError(t, err, what)

			s, err := sample.New(g.part, comm.NewLocal(g.NumPatches()), opt)
			require.NoError(t, err)
			internal, err := pipeline.InternalSeeds(g.part, seeds)
			require.NoError(t, err)
			res, err := s.SampleBatches(context.Background(), [][]int64{internal}, []uint64{0})
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

func TestSampleErrors(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	alloc := mem.NewChecked(mem.Heap{})
	_, err := g.Sample([]int64{1, 300}, defaultSample(), alloc)
	require.EqualError(t, err, "seeds[1] = 300 is out of range [0, 300)")
	_, err = g.Sample([]int64{1, 1}, defaultSample(), alloc)
	require.ErrorContains(t, err, "duplicates")
	_, err = g.Sample([]int64{1}, sample.Options{Fanouts: []int{0}}, alloc)
	require.ErrorContains(t, err, "fanout[0] = 0")
	_, err = g.Sample([]int64{1}, sample.Options{Fanouts: []int{1}, Biased: true}, alloc)
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
		w, err := g.RandomWalk(seeds, WalkOptions{Length: length, RestartProb: 0.2, Seed: 3, Threads: 2}, nil)
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
	_, err := g.RandomWalk([]int64{300}, WalkOptions{Length: 1}, nil)
	require.ErrorContains(t, err, "seeds: ")
	_, err = g.RandomWalk([]int64{1}, WalkOptions{Length: -1}, nil)
	require.ErrorContains(t, err, "length = -1")
	_, err = g.RandomWalk([]int64{1}, WalkOptions{RestartProb: 1.5}, nil)
	require.ErrorContains(t, err, "restart probability = 1.5")
	_, err = g.RandomWalk([]int64{1}, WalkOptions{Length: 1}, failingAlloc{})
	require.Error(t, err)
}

// The sampler key holds every option but the seed: a new field of
// sample.Options must be added to samplerKey (or shown to need no place in
// it) before this test passes again.
func TestSamplerKeyCoversOptions(t *testing.T) {
	require.Equal(t, 9, reflect.TypeOf(sample.Options{}).NumField(),
		"sample.Options changed: update samplerKey and keyOf")
	base := sample.Options{Fanouts: []int{2, 3}, ExcludeEdges: []int64{1}}
	k := keyOf(base)
	seeded := base
	seeded.Seed = 99
	require.Equal(t, k, keyOf(seeded), "the seed is not part of the key")
	for name, change := range map[string]func(*sample.Options){
		"fanouts":  func(o *sample.Options) { o.Fanouts = []int{2, 4} },
		"hops":     func(o *sample.Options) { o.Fanouts = []int{2, 3, 1} },
		"replace":  func(o *sample.Options) { o.Replace = true },
		"frontier": func(o *sample.Options) { o.Frontier = sample.FrontierNew },
		"threads":  func(o *sample.Options) { o.Threads = 3 },
		"biased":   func(o *sample.Options) { o.Biased = true },
		"scheme":   func(o *sample.Options) { o.Scheme = sample.LayerWise },
		"layerWOR": func(o *sample.Options) { o.LayerWithoutReplacement = true },
		"exclude":  func(o *sample.Options) { o.ExcludeEdges = []int64{2} },
		"none":     func(o *sample.Options) { o.ExcludeEdges = nil },
	} {
		o := base
		change(&o)
		require.NotEqual(t, k, keyOf(o), name)
	}
}

package core

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// Node data set in original row order comes back in original row order,
// and is stored in internal order (row i = original node NewToOld[i]).
func TestNodeDataRoundTrip(t *testing.T) {
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g := newTestGraph(t, popt)
			renumbered := g.part.NewToOld != nil
			require.Equal(t, name == "random3" || name == "given4", renumbered)

			feat := testFeatures()
			released := 0
			require.NoError(t, g.SetNodeData("feat", feat, func() { released++ }))
			// A renumbered graph copies the rows and gives the caller's
			// memory back at once; otherwise it keeps it.
			if renumbered {
				require.Equal(t, 1, released)
			} else {
				require.Zero(t, released)
			}
			require.NoError(t, g.SetNodeData("label", testLabels(), nil))
			names, err := g.NodeDataNames()
			require.NoError(t, err)
			require.Equal(t, []string{"feat", "label"}, names)

			got, err := g.NodeData("feat", nil)
			require.NoError(t, err)
			require.Equal(t, feat.DType, got.DType)
			require.Equal(t, feat.Shape, got.Shape)
			require.Equal(t, feat.Data, got.Data)
			got, err = g.NodeData("label", mem.NewChecked(mem.Heap{}))
			require.NoError(t, err)
			require.Equal(t, i64(testLabels()), i64(got))

			stored, ok := g.store.Get("label")
			require.True(t, ok)
			for i, l := range i64(stored) {
				o := int64(i)
				if renumbered {
					o = g.part.NewToOld[i]
				}
				require.Equal(t, labelOf(o), l, "internal row %d", i)
			}

			// Replacing releases the earlier entry (when it was kept).
			require.NoError(t, g.SetNodeData("feat", testFeatures(), nil))
			require.Equal(t, 1, released)
			require.NoError(t, g.Close())
			require.Equal(t, 1, released)
		})
	}
}

func TestNodeDataErrors(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	called := false
	release := func() { called = true }
	err := g.SetNodeData("x", mem.Tensor{DType: mem.Float32, Shape: []int64{5}, Data: make([]byte, 20)}, release)
	require.ErrorContains(t, err, "shape[0] = 5 rows, want one row per node (300)")
	err = g.SetNodeData("x", mem.Tensor{DType: mem.Float32, Data: make([]byte, 4)}, release)
	require.ErrorContains(t, err, "at least 1 dimension")
	err = g.SetNodeData("", testLabels(), release)
	require.ErrorContains(t, err, "name is empty")
	require.False(t, called, "a rejected tensor stays the caller's")

	_, err = g.NodeData("nope", nil)
	require.EqualError(t, err, `no node data named "nope" (have: )`)
	withNodeData(t, g)
	_, err = g.NodeData("nope", nil)
	require.EqualError(t, err, `no node data named "nope" (have: feat, label)`)
	_, err = g.NodeData("feat", failingAlloc{})
	require.ErrorIs(t, err, errs.ErrNoMem)
}

type failingAlloc struct{}

func (failingAlloc) Alloc(int) ([]byte, error) { return nil, errs.ErrNoMem }
func (failingAlloc) Free([]byte)               {}

// Edge weights are given by original edge id, source weights by original
// node id; each lands beside its edge whatever the numbering.
func TestWeightsInOriginalOrder(t *testing.T) {
	ref := refGraph(t)
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g := newTestGraph(t, popt)
			csc := g.part.Graph
			w := make([]float64, testEdges)
			for e := range w {
				w[e] = float64(e) + 0.25
			}
			require.NoError(t, g.SetEdgeWeights(mem.Tensor{DType: mem.Float64, Shape: []int64{testEdges}, Data: f64Bytes(w)}))
			for pos := range csc.NumEdges() {
				require.Equal(t, float32(w[csc.EdgeID(pos)]), csc.Weights[pos])
			}

			ws := make([]float32, testNodes)
			for o := range ws {
				ws[o] = float32(o) * 2
			}
			require.NoError(t, g.SetSourceWeights(mem.Tensor{DType: mem.Float32, Shape: []int64{testNodes}, Data: mem.Bytes(ws)}))
			// Check against the original graph: edge e of ref from u.
			src := map[int64]int64{}
			for pos := range ref.NumEdges() {
				src[ref.EdgeID(pos)] = ref.Source(pos)
			}
			for pos := range csc.NumEdges() {
				require.Equal(t, ws[src[csc.EdgeID(pos)]], csc.Weights[pos])
			}
		})
	}
}

func TestWeightErrors(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	f32 := func(w ...float32) mem.Tensor {
		return mem.Tensor{DType: mem.Float32, Shape: []int64{int64(len(w))}, Data: mem.Bytes(w)}
	}
	full := make([]float32, testEdges)
	err := g.SetEdgeWeights(f32(full[:10]...))
	require.ErrorContains(t, err, "weights has 10 entries but the graph has edge id")
	err = g.SetSourceWeights(f32(full[:10]...))
	require.ErrorContains(t, err, "(want one weight per node id)")
	for _, bad := range []float32{-1, float32(math.NaN()), float32(math.Inf(1))} {
		w := append([]float32(nil), full...)
		w[17] = bad
		err = g.SetEdgeWeights(f32(w...))
		require.ErrorContains(t, err, "weights[17] = ")
	}
	err = g.SetEdgeWeights(mem.Tensor{DType: mem.Int64, Shape: []int64{testEdges}, Data: make([]byte, 8*testEdges)})
	require.ErrorIs(t, err, errs.ErrType)
	err = g.SetEdgeWeights(mem.Tensor{DType: mem.Float32, Shape: []int64{testEdges, 1}, Data: make([]byte, 4*testEdges)})
	require.ErrorContains(t, err, "must be 1-D")
	require.Nil(t, g.part.Graph.Weights, "rejected weights change nothing")
}

// Calls sample on forks of the Graph's one runtime: a fork goes back to the
// pool after a call and serves the next one whatever its request (walks
// included); a call with another thread count, or made while every idle
// fork is in use, takes another; the pool is bounded; new weights drop the
// runtime and its forks, also those in use.
func TestRuntimeForks(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	seeds := []int64{3, 1, 4}
	req := defaultSample()
	b, err := g.Sample(seeds, req, testThreads, nil)
	require.NoError(t, err)
	b.Release()
	base := g.runtimes.base
	require.NotNil(t, base)
	require.Len(t, g.runtimes.idle, 1)
	fork := g.runtimes.idle[0]
	require.NotSame(t, base, fork)
	require.Equal(t, testThreads, fork.Threads())

	req.Seed++
	req.Fanouts = []int{2, 2, 2}
	b, err = g.Sample(seeds, req, testThreads, nil)
	require.NoError(t, err)
	b.Release()
	_, err = g.RandomWalk(seeds, sample.WalkRequest{Length: 3, Seed: 1}, testThreads, nil)
	require.NoError(t, err)
	require.Equal(t, []*sample.Runtime{fork}, g.runtimes.idle, "other requests and walks reuse the fork")

	b, err = g.Sample(seeds, req, 1, nil)
	require.NoError(t, err)
	b.Release()
	require.Len(t, g.runtimes.idle, 2, "another thread count takes another fork")
	require.Same(t, base, g.runtimes.base)

	var taken []*sample.Runtime
	for range maxIdleForks + 2 {
		rt, gen, err := g.runtimes.take(g, testThreads)
		require.NoError(t, err)
		require.NotContains(t, taken, rt, "a fork in use is not handed out twice")
		require.Zero(t, gen)
		taken = append(taken, rt)
	}
	for _, rt := range taken {
		g.runtimes.put(rt, 0)
	}
	require.Len(t, g.runtimes.idle, maxIdleForks)

	inUse, gen, err := g.runtimes.take(g, testThreads)
	require.NoError(t, err)
	require.NoError(t, g.SetEdgeWeights(mem.Tensor{DType: mem.Float32, Shape: []int64{testEdges}, Data: make([]byte, 4*testEdges)}))
	require.Nil(t, g.runtimes.base)
	require.Empty(t, g.runtimes.idle)
	g.runtimes.put(inUse, gen)
	require.Empty(t, g.runtimes.idle, "a fork of the old runtime is not kept")
	b, err = g.Sample(seeds, req, testThreads, nil)
	require.NoError(t, err)
	b.Release()
	require.NotSame(t, base, g.runtimes.base)
}

// A call after new weights samples with them: the same batch as a Graph
// given those weights from the start (layer-wise totals and zero-weight
// filtering are derived from the weights).
func TestSampleSeesNewWeights(t *testing.T) {
	weights := func(keep func(e int) bool) mem.Tensor {
		w := make([]float32, testEdges)
		for e := range w {
			if keep(e) {
				w[e] = 1 + float32(e%5)
			}
		}
		return mem.Tensor{DType: mem.Float32, Shape: []int64{testEdges}, Data: mem.Bytes(w)}
	}
	seeds := []int64{17, 3, 250, 42, 99, 0}
	reqs := []sample.Request{
		{Fanouts: []int{30, 30}, Scheme: sample.LayerWise, Biased: true, Seed: 4},
		{Fanouts: []int{3, 3}, Biased: true, Seed: 4},
	}
	g := newTestGraph(t, partitions()["random3"])
	require.NoError(t, g.SetEdgeWeights(weights(func(int) bool { return true })))
	for _, req := range reqs {
		b, err := g.Sample(seeds, req, testThreads, nil)
		require.NoError(t, err)
		b.Release()
	}
	second := weights(func(e int) bool { return e%3 == 0 })
	require.NoError(t, g.SetEdgeWeights(second))
	fresh := newTestGraph(t, partitions()["random3"])
	require.NoError(t, fresh.SetEdgeWeights(second))
	for _, req := range reqs {
		got, err := g.Sample(seeds, req, testThreads, nil)
		require.NoError(t, err)
		want, err := fresh.Sample(seeds, req, testThreads, nil)
		require.NoError(t, err)
		requireSameBatch(t, want, got, req.Scheme.String())
		got.Release()
		want.Release()
	}
}

func TestOpenDataset(t *testing.T) {
	src, dst := testCOO()
	csc, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: testNodes})
	require.NoError(t, err)
	mask := make([]byte, testNodes)
	for i := range mask {
		mask[i] = byte(i % 2)
	}
	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, &dataset.Dataset{
		Meta:  dataset.Meta{Name: "core", NumClasses: labelOf(testNodes)}, // labels tag their row
		Graph: csc,
		NodeData: map[string]mem.Tensor{
			dataset.FeatKey:      testFeatures(),
			dataset.LabelKey:     testLabels(),
			dataset.TrainMaskKey: {DType: mem.Uint8, Shape: []int64{testNodes}, Data: mask},
		},
	}))
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g, err := Open(dir, popt, graph.COOOptions{}, dataset.OpenOptions{})
			require.NoError(t, err)
			defer g.Close()
			require.Equal(t, int64(testNodes), g.NumNodes())
			require.Equal(t, int64(testEdges), g.NumEdges())
			names, err := g.NodeDataNames()
			require.NoError(t, err)
			require.Subset(t, names, []string{"feat", "label", "train_mask"})
			feat, err := g.NodeData("feat", nil)
			require.NoError(t, err)
			require.Equal(t, testFeatures().Data, feat.Data)
			tm, err := g.NodeData("train_mask", nil)
			require.NoError(t, err)
			require.Equal(t, mask, tm.Data)
		})
	}

	_, err = Open(dir, partition.Options{}, graph.COOOptions{RemoveSelfLoops: true}, dataset.OpenOptions{})
	require.ErrorContains(t, err, "do not apply to a dataset directory")
	_, err = Open(filepath.Join(dir, "missing"), partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "missing")

	// An edge table alone.
	g, err := Open(filepath.Join(dir, dataset.EdgesFile), partition.Options{NumPatches: 2}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(testEdges), g.NumEdges())
	require.Equal(t, 2, g.NumPatches())
	require.NoError(t, g.Close())
}

// After Close every call fails with ErrGraphClosed (errs.ErrClosed), Close
// again does nothing, and the node data is released exactly once.
func TestClosedGraph(t *testing.T) {
	g := newTestGraph(t, partitions()["range1"])
	released := 0
	require.NoError(t, g.SetNodeData("feat", testFeatures(), func() { released++ }))
	require.NoError(t, g.Close())
	require.Equal(t, 1, released)
	require.True(t, g.Closed())
	require.NoError(t, g.Close())
	require.Equal(t, 1, released)

	check := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, ErrGraphClosed)
		require.ErrorIs(t, err, errs.ErrClosed)
		require.EqualError(t, err, "graph was closed")
	}
	check(g.SetNodeData("x", testLabels(), nil))
	_, err := g.NodeData("feat", nil)
	check(err)
	_, err = g.NodeDataNames()
	check(err)
	check(g.SetEdgeWeights(mem.Tensor{DType: mem.Float32, Shape: []int64{testEdges}, Data: make([]byte, 4*testEdges)}))
	check(g.SetSourceWeights(mem.Tensor{DType: mem.Float32, Shape: []int64{testNodes}, Data: make([]byte, 4*testNodes)}))
	_, err = g.Sample([]int64{1}, defaultSample(), testThreads, nil)
	check(err)
	_, err = g.RandomWalk([]int64{1}, sample.WalkRequest{Length: 2}, testThreads, nil)
	check(err)
	_, err = g.OpenLoader([]int64{1}, defaultSample(), defaultLoader(), nil)
	check(err)
	require.Equal(t, int64(testNodes), g.NumNodes(), "the shape stays readable")
	require.False(t, errors.Is(err, errs.ErrState))
}

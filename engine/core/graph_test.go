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

// The sampler is reused across calls whose options differ only in the seed
// (and kept for walks beside it); weights make cached samplers stale.
func TestSamplerCache(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	seeds := []int64{3, 1, 4}
	opt := defaultSample()
	b, err := g.Sample(seeds, opt, nil)
	require.NoError(t, err)
	b.Release()
	require.Len(t, g.samplers.entries, 1)
	first := g.samplers.entries[0].s
	opt.Seed++
	b, err = g.Sample(seeds, opt, nil)
	require.NoError(t, err)
	b.Release()
	require.Len(t, g.samplers.entries, 1)
	require.Same(t, first, g.samplers.entries[0].s, "a new seed reuses the sampler")

	_, err = g.RandomWalk(seeds, WalkOptions{Length: 3, Seed: 1}, nil)
	require.NoError(t, err)
	require.Len(t, g.samplers.entries, 2)
	b, err = g.Sample(seeds, opt, nil)
	require.NoError(t, err)
	b.Release()
	require.Same(t, first, g.samplers.entries[0].s, "walks do not evict the sampler")

	opt.Fanouts = []int{2, 2}
	b, err = g.Sample(seeds, opt, nil)
	require.NoError(t, err)
	b.Release()
	require.NotSame(t, first, g.samplers.entries[0].s, "other fan-outs build another sampler")
	require.Len(t, g.samplers.entries, maxCachedSamplers)

	require.NoError(t, g.SetEdgeWeights(mem.Tensor{DType: mem.Float32, Shape: []int64{testEdges}, Data: make([]byte, 4*testEdges)}))
	require.Empty(t, g.samplers.entries)
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
	_, err = g.Sample([]int64{1}, defaultSample(), nil)
	check(err)
	_, err = g.RandomWalk([]int64{1}, WalkOptions{Length: 2}, nil)
	check(err)
	_, err = g.OpenLoader([]int64{1}, defaultSample(), defaultLoader(), nil)
	check(err)
	require.Equal(t, int64(testNodes), g.NumNodes(), "the shape stays readable")
	require.False(t, errors.Is(err, errs.ErrState))
}

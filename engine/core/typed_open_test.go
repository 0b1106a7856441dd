package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// TestOpenTypedDataset opens hetero-tiny with and without renumbering:
// per-type node data keeps its rows in type order, global node data is
// renumbered as usual, and loaders refuse to gather per-type data.
func TestOpenTypedDataset(t *testing.T) {
	ds, err := gen.Build(gen.Presets()["hetero-tiny"])
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, ds))
	for name, popt := range map[string]partition.Options{
		"range1":  {NumPatches: 1},
		"random3": {Method: partition.Random, NumPatches: 3, Seed: 5},
	} {
		t.Run(name, func(t *testing.T) {
			g, err := Open(dir, popt, graph.COOOptions{}, dataset.OpenOptions{})
			require.NoError(t, err)
			defer g.Close()
			nt, nr := g.NumTypes()
			assert.Equal(t, [2]int{4, 7}, [2]int{nt, nr}, "types set on open")
			assert.Equal(t, mem.Int64s(ds.NodeData["time"].Data), g.typed.nodeTime, "node times set on open")
			assert.Equal(t, mem.Int64s(ds.EdgeData["time"].Data), g.typed.edgeTime, "edge times set on open")
			names, err := g.NodeDataNames()
			require.NoError(t, err)
			for _, want := range []string{"author/feat", "paper/feat", "paper/label", "paper/train_mask", "label", "time", "train_mask"} {
				assert.Contains(t, names, want)
			}
			for _, key := range []string{"paper/feat", "author/feat", "paper/label", "label", "time"} {
				got, err := g.NodeData(key, nil)
				require.NoError(t, err, key)
				assert.Equal(t, ds.NodeData[key].Shape, got.Shape, key)
				assert.Equal(t, ds.NodeData[key].Data, got.Data, key)
			}
			// The row check: per-type data needs its type's row count.
			bad := mem.Tensor{DType: mem.Int8, Shape: []int64{3}, Data: make([]byte, 3)}
			require.ErrorContains(t, g.SetNodeData("paper/x", bad, nil), `want one row per node (947), or one per node of type "paper" (360)`)
			paper := ds.NodeData["paper/label"]
			require.NoError(t, g.SetNodeData("paper/copy", paper, nil))
			got, err := g.NodeData("paper/copy", nil)
			require.NoError(t, err)
			assert.Equal(t, paper.Data, got.Data)
			require.ErrorContains(t, g.store.Gather("paper/feat", make([]byte, 64), []int64{0}, 1), "cannot be gathered by node id")
		})
	}
}

// TestLoaderRefusesPerTypeData checks that a loader asked to gather
// per-type node data (whose rows are not node ids) fails at once.
func TestLoaderRefusesPerTypeData(t *testing.T) {
	ds, err := gen.Build(gen.Presets()["hetero-tiny"])
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, ds))
	g, err := Open(dir, partition.Options{NumPatches: 2}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer g.Close()
	_, err = g.OpenLoader([]int64{0, 1, 2}, sample.Request{Fanouts: []int{2}}, pipeline.Options{BatchSize: 2, FeatureNames: []string{"paper/feat"}}, nil)
	require.ErrorContains(t, err, `"paper/feat" has 360 rows, one per node of its type`)
}

// TestPerTypeNodeDataOnTypedGraph: on a typed graph built without a
// dataset (the engine knows offsets, not names), "<type>/<name>" data is
// accepted with the row count of a node type, and only then.
func TestPerTypeNodeDataOnTypedGraph(t *testing.T) {
	// Types: 2 nodes, then 3; one relation 1 -> 0 type-wise.
	g0, err := graph.FromCOO([]int64{2, 3, 4}, []int64{0, 1, 1}, nil, graph.COOOptions{NumNodes: 5})
	require.NoError(t, err)
	g, err := New(g0, partition.Options{Method: partition.Random, NumPatches: 2, Seed: 1})
	require.NoError(t, err)
	defer g.Close()
	three := mem.Tensor{DType: mem.Int64, Shape: []int64{3}, Data: mem.Bytes([]int64{7, 8, 9})}
	require.ErrorContains(t, g.SetNodeData("b/x", three, nil), "want one row per node (5)", "untyped: no per-type data")
	require.NoError(t, g.SetTypes(graph.Types{NodeOffsets: []int64{0, 2, 5}, EdgeOffsets: []int64{0, 3}, RelSrc: []int32{1}, RelDst: []int32{0}}))
	require.NoError(t, g.SetNodeData("b/x", three, nil))
	got, err := g.NodeData("b/x", nil)
	require.NoError(t, err)
	assert.Equal(t, three.Data, got.Data, "kept in type order")
	require.ErrorContains(t, g.SetNodeData("x", three, nil), "want one row per node (5)")
	four := mem.Tensor{DType: mem.Int8, Shape: []int64{4}, Data: make([]byte, 4)}
	require.ErrorContains(t, g.SetNodeData("b/y", four, nil), "node type offsets [0 2 5]")
}

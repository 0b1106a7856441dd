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

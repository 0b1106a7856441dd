package dataset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/datatest"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// syntheticDataset returns a small weighted dataset with features, the
// standard node columns and a few extra ones (datatest.Synthetic).
func syntheticDataset(t *testing.T) *Dataset {
	g, data := datatest.Synthetic(t)
	return &Dataset{Meta: Meta{Name: "tiny", NumClasses: 3, Source: json.RawMessage(`{"origin":"test"}`)}, Graph: g, NodeData: data}
}

// TestWriteCompactGraph checks that Write stores the same edge table for a
// graph with int32 sources as for the same graph with int64 sources, and
// that Open gives the graph back with int32 sources.
func TestWriteCompactGraph(t *testing.T) {
	wide := syntheticDataset(t)
	compact := syntheticDataset(t)
	compact.Graph = compact.Graph.Compact()
	require.True(t, compact.Graph.IsCompact())
	dw, dc := filepath.Join(t.TempDir(), "wide"), filepath.Join(t.TempDir(), "compact")
	require.NoError(t, Write(dw, wide))
	require.NoError(t, Write(dc, compact))
	bw, err := os.ReadFile(filepath.Join(dw, EdgesFile))
	require.NoError(t, err)
	bc, err := os.ReadFile(filepath.Join(dc, EdgesFile))
	require.NoError(t, err)
	assert.Equal(t, bw, bc, "same edge table")
	d, err := Open(dc)
	require.NoError(t, err)
	defer d.Close()
	assert.True(t, d.Graph.IsCompact())
	assert.Equal(t, datatest.Sources(wide.Graph), datatest.Sources(d.Graph))
}

func TestWriteOpenRoundTrip(t *testing.T) {
	datatest.Set(t, &fileformat.RecordBatchRows, 2) // several record batches in both tables
	want := syntheticDataset(t)
	dir := filepath.Join(t.TempDir(), "ds")
	require.NoError(t, Write(dir, want))

	d, err := Open(dir)
	require.NoError(t, err)
	defer d.Close()
	assert.JSONEq(t, `{"origin":"test"}`, string(d.Meta.Source))
	d.Meta.Source = nil
	require.Len(t, d.Meta.Files, 4) // and the feature file's page sums
	for _, name := range []string{EdgesFile, NodesFile, FeatFile, FeatFile + fileio.PagesSuffix} {
		sum, err := fileio.SumFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, sum, d.Meta.Files[name], name)
		st, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, st.Size(), sum.Size)
	}
	d.Meta.Files = nil
	assert.Equal(t, Meta{
		Format: Format, Version: Version, Name: "tiny", NumNodes: 5, NumEdges: 5, NumClasses: 3,
		Feature: &FeatureMeta{File: FeatFile, DType: "float32", Shape: []int64{5, 3}},
	}, d.Meta)
	// Same CSC; edge ids are now the CSC positions.
	assert.Equal(t, want.Graph.Indptr, d.Graph.Indptr)
	assert.Equal(t, datatest.Sources(want.Graph), datatest.Sources(d.Graph))
	assert.Equal(t, want.Graph.Weights, d.Graph.Weights)
	for p := range d.Graph.NumEdges() {
		assert.Equal(t, p, d.Graph.EdgeID(p))
	}
	for name, w := range want.NodeData {
		got, ok := d.NodeData[name]
		require.True(t, ok, name)
		assert.Equal(t, w, got, name)
	}
	// Defaults for the absent columns.
	assert.Equal(t, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}, d.NodeData[ValMaskKey])
	assert.Equal(t, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}, d.NodeData[TestMaskKey])
	assert.Len(t, d.NodeData, 8)

	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close is idempotent")
	_, ok := d.NodeData[FeatKey]
	assert.False(t, ok, "feat is gone after Close")

	// Rewriting a dataset without features removes feat.bin and says null.
	delete(want.NodeData, FeatKey)
	require.NoError(t, Write(dir, want))
	raw, err := os.ReadFile(filepath.Join(dir, MetaFile))
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"feature": null`)
	assert.NoFileExists(t, filepath.Join(dir, FeatFile))
	d, err = Open(dir)
	require.NoError(t, err)
	assert.Nil(t, d.Meta.Feature)
	assert.NotContains(t, d.NodeData, FeatKey)
	require.NoError(t, d.Close())
}

func TestWriteOpenEmptyAndNoLabels(t *testing.T) {
	dir := t.TempDir()
	g, err := graph.FromCOO(nil, nil, nil, graph.COOOptions{})
	require.NoError(t, err)
	require.NoError(t, Write(dir, &Dataset{Graph: g}))
	d, err := Open(dir)
	require.NoError(t, err)
	assert.Equal(t, int64(0), d.Graph.NumNodes)
	assert.Equal(t, []int64{0}, d.Graph.Indptr)
	assert.Equal(t, []int64{0}, d.NodeData[LabelKey].Shape)

	g, err = graph.FromCOO([]int64{0}, []int64{1}, nil, graph.COOOptions{NumNodes: 3})
	require.NoError(t, err)
	require.NoError(t, Write(dir, &Dataset{Graph: g}))
	d, err = Open(dir)
	require.NoError(t, err)
	assert.Equal(t, mem.Bytes([]int64{-1, -1, -1}), d.NodeData[LabelKey].Data, "missing labels are -1")
	assert.Nil(t, d.Graph.Weights)
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	require.ErrorContains(t, Write(dir, nil), "needs a dataset with a graph")
	bad := syntheticDataset(t)
	bad.NodeData[LabelKey] = mem.Tensor{DType: mem.Int32, Shape: []int64{5}, Data: make([]byte, 20)}
	require.EqualError(t, Write(dir, bad), `dataset: NodeData["label"] is int32[5], want 1-D int64`)
	bad = syntheticDataset(t)
	bad.NodeData["x"] = mem.Tensor{DType: mem.Int8, Shape: []int64{4}, Data: make([]byte, 4)}
	require.EqualError(t, Write(dir, bad), `dataset: NodeData["x"] has shape [4], want 5 rows (one per node)`)
	bad = syntheticDataset(t)
	bad.NodeData["x"] = mem.Tensor{DType: mem.Int8, Shape: []int64{5}, Data: make([]byte, 4)}
	require.EqualError(t, Write(dir, bad), `dataset: NodeData["x"] has 4 bytes, shape [5] of int8 needs 5`)
	bad = syntheticDataset(t)
	bad.NodeData["x"] = mem.Tensor{DType: mem.Int8, Shape: []int64{5, 1, 1}, Data: make([]byte, 5)}
	require.ErrorContains(t, Write(dir, bad), "node columns must be 1-D or 2-D")
	bad = syntheticDataset(t)
	bad.NodeData["x"] = mem.Tensor{DType: mem.BFloat16, Shape: []int64{5}, Data: make([]byte, 10)}
	require.ErrorContains(t, Write(dir, bad), "bfloat16 has no Arrow equivalent")
	bad = syntheticDataset(t)
	bad.Graph.Indices[0] = 7
	require.ErrorContains(t, Write(dir, bad), "indices[0]=7 is out of range [0, 5)")
	assert.NoFileExists(t, filepath.Join(dir, MetaFile), "nothing half-written")
}

func TestOpenErrors(t *testing.T) {
	src := filepath.Join(t.TempDir(), "ds")
	require.NoError(t, Write(src, syntheticDataset(t)))
	// Each case copies the dataset and breaks one thing.
	tests := []struct {
		name    string
		corrupt func(dir string)
		msg     string
	}{
		{"format", func(dir string) { editMeta(t, dir, func(m map[string]any) { m["format"] = "other" }) }, `format "other", want "graphferry-dataset"`},
		{"version", func(dir string) { editMeta(t, dir, func(m map[string]any) { m["version"] = 2 }) }, "version 2 is not supported"},
		{"num_edges", func(dir string) { editMeta(t, dir, func(m map[string]any) { m["num_edges"] = 6 }) }, "edges.arrow has 5 edges, graphferry.json says num_edges=6"},
		// The node table is compared before the edges are read (the edge
		// sort allocates for num_nodes), the feature file before both.
		{"num_nodes too small for edges", func(dir string) {
			editMeta(t, dir, func(m map[string]any) { m["num_nodes"] = 4; delete(m, "feature") })
		}, "has 5 rows, want num_nodes=4"},
		{"num_nodes vs node table", func(dir string) {
			editMeta(t, dir, func(m map[string]any) { m["num_nodes"] = 6; delete(m, "feature") })
		}, `has 5 rows, want num_nodes=6`},
		{"num_nodes vs feature", func(dir string) { editMeta(t, dir, func(m map[string]any) { m["num_nodes"] = 6 }) }, `feature shape [5 3] must start with num_nodes=6`},
		{"feat size", func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, FeatFile), make([]byte, 12), 0o644))
		}, "feat.bin is 12 bytes, graphferry.json says 60: it was truncated, extended or replaced"},
		{"feat size without sums", func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, FeatFile), make([]byte, 12), 0o644))
			editMeta(t, dir, func(m map[string]any) { delete(m, "files") })
		}, "feat.bin has 12 bytes, shape [5 3] of float32 needs 60"},
		{"feat dtype", func(dir string) {
			editMeta(t, dir, func(m map[string]any) { m["feature"].(map[string]any)["dtype"] = "complex64" })
		}, `feature dtype: unknown dtype "complex64"`},
		{"feat path", func(dir string) {
			editMeta(t, dir, func(m map[string]any) { m["feature"].(map[string]any)["file"] = "../x" })
		}, "must be a plain file name"},
		{"missing nodes", func(dir string) { require.NoError(t, os.Remove(filepath.Join(dir, NodesFile))) }, "nodes.arrow"},
		{"missing label column", func(dir string) {
			require.NoError(t, writeNodeTable(filepath.Join(dir, NodesFile), []nodeColumn{{"x", mem.Tensor{DType: mem.Int8, Shape: []int64{5}, Data: make([]byte, 5)}}}, 5))
			editMeta(t, dir, func(m map[string]any) { delete(m, "files") })
		}, `has no column "label"`},
		{"bad json", func(dir string) { require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), []byte("{"), 0o644)) }, "graphferry.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
			tc.corrupt(dir)
			d, err := Open(dir)
			require.ErrorContains(t, err, tc.msg)
			assert.Nil(t, d)
		})
	}
	_, err := Open(t.TempDir())
	require.ErrorContains(t, err, "graphferry.json")
}

// editMeta rewrites graphferry.json in dir through edit.
func editMeta(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	datatest.EditJSON(t, filepath.Join(dir, MetaFile), edit)
}

package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// typedDataset returns a typed dataset: users 0..2 (global 0..2), items
// 0..1 (global 3..4); relation 0 (user, buys, item) = edges 0..2, relation
// 1 (item, rev_buys, user) = edges 3..5.
func typedDataset(t *testing.T) *Dataset {
	t.Helper()
	src := []int64{0, 1, 2, 3, 4, 4}
	dst := []int64{3, 4, 4, 0, 1, 2}
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: 5})
	require.NoError(t, err)
	return &Dataset{
		Meta: Meta{
			Name: "typed", NumClasses: 2,
			NodeTypes: []fileformat.NodeType{{Name: "user", NumNodes: 3}, {Name: "item", NumNodes: 2}},
			EdgeTypes: []fileformat.EdgeType{{Src: "user", Rel: "buys", Dst: "item", NumEdges: 3}, {Src: "item", Rel: "rev_buys", Dst: "user", NumEdges: 3}},
		},
		Graph: g,
		NodeData: map[string]mem.Tensor{
			"user/feat":       {DType: mem.Float32, Shape: []int64{3, 2}, Data: mem.Bytes([]float32{1, 2, 3, 4, 5, 6})},
			"item/feat":       {DType: mem.Float16, Shape: []int64{2, 1}, Data: []byte{1, 2, 3, 4}},
			"item/label":      {DType: mem.Int64, Shape: []int64{2}, Data: mem.Bytes([]int64{1, 0})},
			"item/train_mask": {DType: mem.Uint8, Shape: []int64{2}, Data: []byte{1, 0}},
			TimeKey:           {DType: mem.Int64, Shape: []int64{5}, Data: mem.Bytes([]int64{1, 2, 3, 4, 5})},
			"x/y":             {DType: mem.Int32, Shape: []int64{5}, Data: mem.Bytes([]int32{0, 1, 2, 3, 4})},
		},
		EdgeData: map[string]mem.Tensor{
			TimeKey: {DType: mem.Int64, Shape: []int64{6}, Data: mem.Bytes([]int64{10, 11, 12, 13, 14, 15})},
		},
	}
}

func TestTypedWriteOpen(t *testing.T) {
	d := typedDataset(t)
	dir := t.TempDir()
	require.NoError(t, Write(dir, d))
	got, err := OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)
	defer got.Close()
	assert.Equal(t, d.Meta.NodeTypes, got.Meta.NodeTypes)
	assert.Equal(t, d.Meta.EdgeTypes, got.Meta.EdgeTypes)
	ty, err := got.Types()
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 3, 5}, ty.NodeOffsets)
	assert.Equal(t, []int64{0, 3, 6}, ty.EdgeOffsets)
	assert.Equal(t, []int32{0, 1}, ty.RelSrc)
	assert.Equal(t, []int32{1, 0}, ty.RelDst)
	// Edge ids survive: edge id i is still src[i] -> dst[i].
	g := got.Graph
	for v := range g.NumNodes {
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			id := g.EdgeID(p)
			assert.Equal(t, []int64{0, 1, 2, 3, 4, 4}[id], g.Source(p))
			assert.Equal(t, []int64{3, 4, 4, 0, 1, 2}[id], v)
		}
	}
	for _, name := range []string{"user/feat", "item/feat", "item/label", "item/train_mask", TimeKey, "x/y"} {
		require.Contains(t, got.NodeData, name)
		assert.Equal(t, d.NodeData[name], got.NodeData[name], name)
	}
	assert.Equal(t, d.EdgeData[TimeKey], got.EdgeData[TimeKey])
	// The global columns exist with their defaults.
	assert.Equal(t, []int64{-1, -1, -1, -1, -1}, mem.Int64s(got.NodeData[LabelKey].Data))
	for _, f := range []string{"node.user.feat.bin", "node.item.label.bin", "edge.time.bin"} {
		assert.Contains(t, got.Meta.Files, f)
	}
}

// TestUntypedEdgeDataFollowsEdgeIDs checks that a homogeneous dataset,
// whose edges are written in CSC order (new edge id = CSC position), gets
// its edge arrays reordered to the new ids.
func TestUntypedEdgeDataFollowsEdgeIDs(t *testing.T) {
	d := syntheticDataset(t)
	// Positions 0..4 carry the edge ids 4..0.
	g, err := graph.FromCSC(5, d.Graph.Indptr, d.Graph.Wide().Indices, []int64{4, 3, 2, 1, 0}, nil)
	require.NoError(t, err)
	d.Graph = g
	times := []int64{100, 101, 102, 103, 104} // by edge id
	d.EdgeData = map[string]mem.Tensor{TimeKey: {DType: mem.Int64, Shape: []int64{5}, Data: mem.Bytes(times)}}
	dir := t.TempDir()
	require.NoError(t, Write(dir, d))
	got, err := Open(dir)
	require.NoError(t, err)
	defer got.Close()
	// Position p had id 4-p, time 100+4-p; now its id is p.
	assert.Equal(t, []int64{104, 103, 102, 101, 100}, mem.Int64s(got.EdgeData[TimeKey].Data))
}

func TestTypedWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(d *Dataset)
		msg  string
	}{
		{"unknown dst", func(d *Dataset) { d.Meta.EdgeTypes[0].Dst = "shop" }, `edge_types[0].dst = "shop" is not a node type`},
		{"counts", func(d *Dataset) { d.Meta.NodeTypes[1].NumNodes = 3 }, "node_types count 6 nodes in all, the graph has 5"},
		{"edge counts", func(d *Dataset) { d.Meta.EdgeTypes[0].NumEdges = 2; d.Meta.EdgeTypes[1].NumEdges = 4 }, "edge 2 (relation 1, (\"item\", \"rev_buys\", \"user\")) ends at node 4 of type \"item\""},
		{"rows", func(d *Dataset) { d.NodeData["item/feat"] = d.NodeData["user/feat"] }, `NodeData["item/feat"] has shape [3 2], want 2 rows`},
		{"mask", func(d *Dataset) {
			d.NodeData["item/train_mask"] = mem.Tensor{DType: mem.Uint8, Shape: []int64{2}, Data: []byte{2, 0}}
		}, `NodeData["item/train_mask"]: column "train_mask" row 0: mask value 2`},
		{"label", func(d *Dataset) {
			d.NodeData["item/label"] = mem.Tensor{DType: mem.Int64, Shape: []int64{2}, Data: mem.Bytes([]int64{5, 0})}
		}, "label 5 is outside"},
		{"edge time", func(d *Dataset) {
			d.EdgeData[TimeKey] = mem.Tensor{DType: mem.Int32, Shape: []int64{6}, Data: make([]byte, 24)}
		}, `EdgeData["time"] is int32[6], want 1-D int64`},
		{"edge rows", func(d *Dataset) {
			d.EdgeData["w"] = mem.Tensor{DType: mem.Int32, Shape: []int64{5}, Data: make([]byte, 20)}
		}, `EdgeData["w"] has shape [5], want 6 rows`},
		{"slash", func(d *Dataset) { d.Meta.NodeTypes[0].Name = "a/b"; d.Meta.EdgeTypes[0].Src = "a/b" }, `holds "/"`},
		{"duplicate relation", func(d *Dataset) { d.Meta.EdgeTypes[1] = d.Meta.EdgeTypes[0] }, "repeats edge_types[0]"},
		{"edge types alone", func(d *Dataset) { d.Meta.NodeTypes = nil }, "edge_types without node_types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := typedDataset(t)
			tc.edit(d)
			require.ErrorContains(t, Write(t.TempDir(), d), tc.msg)
		})
	}
}

func TestTypedOpenErrors(t *testing.T) {
	src := filepath.Join(t.TempDir(), "ds")
	require.NoError(t, Write(src, typedDataset(t)))
	nodeTypes := func(m map[string]any) []any { return m["node_types"].([]any) }
	edgeTypes := func(m map[string]any) []any { return m["edge_types"].([]any) }
	entry := func(l []any, i int) map[string]any { return l[i].(map[string]any) }
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		msg  string
	}{
		{"unknown src", func(m map[string]any) { entry(edgeTypes(m), 1)["src"] = "shop" }, `edge_types[1].src = "shop" is not a node type (have "user", "item")`},
		{"node sum", func(m map[string]any) { entry(nodeTypes(m), 0)["num_nodes"] = 4 }, "node_types count 6 nodes in all, num_nodes=5"},
		{"edge sum", func(m map[string]any) { entry(edgeTypes(m), 0)["num_edges"] = 2 }, "edge_types count 5 edges in all, num_edges=6"},
		{"edge split", func(m map[string]any) {
			entry(edgeTypes(m), 0)["num_edges"] = 2
			entry(edgeTypes(m), 1)["num_edges"] = 4
		}, "does not match graphferry.json's types: edge 2 (relation 1"},
		{"swapped types", func(m map[string]any) {
			entry(nodeTypes(m), 0)["num_nodes"] = 2
			entry(nodeTypes(m), 1)["num_nodes"] = 3
		}, "node_data[0].shape [2 1] must start with 3 rows"},
		{"negative", func(m map[string]any) { entry(nodeTypes(m), 0)["num_nodes"] = -1 }, "node_types[0].num_nodes = -1"},
		{"empty name", func(m map[string]any) { entry(nodeTypes(m), 0)["name"] = "" }, "node_types[0] is empty"},
		{"node_data type", func(m map[string]any) { entry(m["node_data"].([]any), 0)["node_type"] = "shop" }, `node_data[0].node_type = "shop" is not a node type`},
		{"node_data file", func(m map[string]any) { entry(m["node_data"].([]any), 0)["file"] = "../etc" }, "must be a plain file name"},
		{"edge_data rows", func(m map[string]any) { entry(m["edge_data"].([]any), 0)["shape"] = []int{5} }, "edge_data[0].shape [5] must start with 6 rows"},
		{"edge_data dtype", func(m map[string]any) { entry(m["edge_data"].([]any), 0)["dtype"] = "int32" }, `edge "time" is int32[6], want 1-D int64`},
		{"node_data untyped", func(m map[string]any) { delete(m, "node_types"); delete(m, "edge_types") }, "node_data needs node_types"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
			editMeta(t, dir, tc.edit)
			d, err := Open(dir)
			require.ErrorContains(t, err, tc.msg)
			assert.Nil(t, d)
		})
	}
	// A damaged per-type file is caught by its checksum.
	dir := filepath.Join(t.TempDir(), "ds")
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	path := filepath.Join(dir, "node.user.feat.bin")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[3] ^= 0x40
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.ErrorContains(t, err, "node.user.feat.bin: CRC-32C")
}

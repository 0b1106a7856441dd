// Package datatest holds helpers shared by the tests of the dataset
// packages (engine/fileformat, engine/dataset, engine/convert,
// engine/rankpart). Only tests import it; it imports graph and mem only,
// so that fileformat's own tests can use it.
package datatest

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// Sources returns the sources of g (either storage) as int64.
func Sources(g *graph.CSC) []int64 {
	out := make([]int64, g.NumEdges())
	g.CopySources(out, 0, g.NumEdges())
	return out
}

// Set sets *p to v for the duration of the test (a package's knob, such
// as fileformat.RecordBatchRows).
func Set[T any](t testing.TB, p *T, v T) {
	old := *p
	*p = v
	t.Cleanup(func() { *p = old })
}

// NPYImage builds a .npy file image with the given format version, header
// dict and data.
func NPYImage(major byte, dict string, data []byte) []byte {
	b := []byte("\x93NUMPY")
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	b = append(b, dict...)
	return append(b, data...)
}

// Synthetic returns the graph and node data of a small weighted dataset
// with features, the standard node columns and a few extra ones: 5 nodes,
// edges u->v 1->0, 3->0, 0->2, 4->2, 2->2 (edge ids 9 to 5, weights 1 to
// 5), nodes 1, 3 and 4 without in-edges; labels in [0, 3).
func Synthetic(t testing.TB) (*graph.CSC, map[string]mem.Tensor) {
	t.Helper()
	g, err := graph.FromCSC(5, []int64{0, 2, 2, 5, 5, 5}, []int64{1, 3, 0, 4, 2}, []int64{9, 8, 7, 6, 5}, []float32{1, 2, 3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	feat := make([]float32, 5*3)
	for i := range feat {
		feat[i] = float32(i) / 2
	}
	return g, map[string]mem.Tensor{
		"feat":       {DType: mem.Float32, Shape: []int64{5, 3}, Data: mem.Bytes(feat)},
		"label":      {DType: mem.Int64, Shape: []int64{5}, Data: mem.Bytes([]int64{0, 2, -1, 1, 0})},
		"train_mask": {DType: mem.Uint8, Shape: []int64{5}, Data: []byte{1, 1, 0, 0, 0}},
		"degree":     {DType: mem.Int32, Shape: []int64{5}, Data: mem.Bytes([]int32{2, 0, 3, 0, 0})},
		"pos":        {DType: mem.Float64, Shape: []int64{5, 2}, Data: mem.Bytes([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})},
		"flag":       {DType: mem.Bool, Shape: []int64{5}, Data: []byte{1, 0, 1, 1, 0}},
	}
}

// EditJSON rewrites the JSON object in the file at path through edit, as a
// hand edit would (what edit does not touch is kept, key order aside).
func EditJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	edit(m)
	raw, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}

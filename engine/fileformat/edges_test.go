package fileformat

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v14/arrow"
	"github.com/apache/arrow/go/v14/arrow/array"
	"github.com/apache/arrow/go/v14/arrow/ipc"
	"github.com/apache/arrow/go/v14/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/datatest"
)

// smallBatches makes the writers split tables into batches of n rows for
// the duration of the test.
func smallBatches(t *testing.T, n int64) { datatest.Set(t, &RecordBatchRows, n) }

var sources = datatest.Sources

// requireSameGraph compares two graphs exactly (edge ids expanded; either
// source storage).
func requireSameGraph(t *testing.T, want, got *graph.CSC) {
	t.Helper()
	require.NoError(t, got.Validate())
	require.Equal(t, want.NumNodes, got.NumNodes)
	require.True(t, slices.Equal(want.Indptr, got.Indptr), "indptr")
	require.True(t, slices.Equal(sources(want), sources(got)), "indices")
	for p := range want.NumEdges() {
		if want.EdgeID(p) != got.EdgeID(p) {
			t.Fatalf("edge id at %d: want %d, got %d", p, want.EdgeID(p), got.EdgeID(p))
		}
	}
	require.True(t, slices.Equal(want.Weights, got.Weights), "weights")
	require.Equal(t, want.Weights == nil, got.Weights == nil)
}

func TestEdgeTableRoundTrip(t *testing.T) {
	smallBatches(t, 1000) // several record batches
	r := rand.New(rand.NewPCG(1, 1))
	const n, e = 500, 4321
	src, dst, w := make([]int64, e), make([]int64, e), make([]float32, e)
	for i := range src {
		src[i], dst[i], w[i] = r.Int64N(n), r.Int64N(n), r.Float32()
	}
	dir := t.TempDir()
	for _, weights := range [][]float32{nil, w} {
		path := filepath.Join(dir, "edges.arrow")
		require.NoError(t, WriteEdgeTable(path, src, dst, weights))
		for _, opt := range []graph.COOOptions{{}, {NumNodes: n + 3, RemoveDuplicates: true, RemoveSelfLoops: true}} {
			want, err := graph.FromCOO(src, dst, weights, opt)
			require.NoError(t, err)
			got, err := ReadEdgeTable(path, opt)
			require.NoError(t, err)
			requireSameGraph(t, want, got)
		}
	}
	// Empty table.
	path := filepath.Join(dir, "empty.arrow")
	require.NoError(t, WriteEdgeTable(path, nil, nil, nil))
	g, err := ReadEdgeTable(path, graph.COOOptions{NumNodes: 4})
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 0, 0, 0, 0}, g.Indptr)

	require.ErrorContains(t, WriteEdgeTable(path, []int64{1}, nil, nil), "len(src)=1 does not equal len(dst)=0")
	require.ErrorContains(t, WriteEdgeTable(path, []int64{1}, []int64{1}, []float32{1, 2}), "len(weight)=2")
	// ID errors come from graph.FromCOO and name the file.
	require.NoError(t, WriteEdgeTable(path, []int64{0, 9}, []int64{1, 1}, nil))
	_, err = ReadEdgeTable(path, graph.COOOptions{NumNodes: 5})
	require.ErrorContains(t, err, "empty.arrow: graph: src[1]=9 is out of range [0, 5)")
}

// writeRecords writes records uncompressed with the plain Arrow writer.
func writeRecords(t *testing.T, path string, recs ...arrow.Record) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(recs[0].Schema()))
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// record builds a record from named columns.
func record(t *testing.T, cols map[string]arrow.Array, order ...string) arrow.Record {
	t.Helper()
	var fields []arrow.Field
	var arrs []arrow.Array
	for _, name := range order {
		fields = append(fields, arrow.Field{Name: name, Type: cols[name].DataType(), Nullable: true})
		arrs = append(arrs, cols[name])
	}
	return array.NewRecord(arrow.NewSchema(fields, nil), arrs, int64(arrs[0].Len()))
}

func int32s(vals []int32, valid []bool) arrow.Array {
	b := array.NewInt32Builder(memory.DefaultAllocator)
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func int64s(vals []int64, valid []bool) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, valid)
	return b.NewArray()
}

func float64s(vals []float64) arrow.Array {
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	return b.NewArray()
}

func strs(vals []string) arrow.Array {
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues(vals, nil)
	return b.NewArray()
}

func TestEdgeTableUncompressedInt32AndExtraColumns(t *testing.T) {
	// Two uncompressed batches, int32 ids, float64 weights, an extra
	// string column, columns in another order.
	r1 := record(t, map[string]arrow.Array{
		"note": strs([]string{"a", "b"}), "dst": int32s([]int32{1, 0}, nil),
		"weight": float64s([]float64{0.5, 2}), "src": int32s([]int32{0, 2}, nil),
	}, "note", "dst", "weight", "src")
	r2 := record(t, map[string]arrow.Array{
		"note": strs([]string{"c"}), "dst": int32s([]int32{1}, nil),
		"weight": float64s([]float64{4}), "src": int32s([]int32{2}, nil),
	}, "note", "dst", "weight", "src")
	path := filepath.Join(t.TempDir(), "e.arrow")
	writeRecords(t, path, r1, r2)
	g, err := ReadEdgeTable(path, graph.COOOptions{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), g.NumNodes)
	assert.Equal(t, []int64{0, 1, 3, 3}, g.Indptr)
	assert.Equal(t, []int64{2, 0, 2}, sources(g))
	assert.Equal(t, []int64{1, 0, 2}, g.EdgeIDs)
	assert.Equal(t, []float32{2, 0.5, 4}, g.Weights)

	g2, err := EdgesFromRecords([]arrow.Record{r1, r2}, graph.COOOptions{})
	require.NoError(t, err)
	requireSameGraph(t, g, g2)
}

func TestEdgesFromRecordsErrors(t *testing.T) {
	ids := func() arrow.Array { return int64s([]int64{0, 1}, nil) }
	tests := []struct {
		name string
		rec  arrow.Record
		msg  string
	}{
		{"missing dst", record(t, map[string]arrow.Array{"src": ids()}, "src"), `edge table has no column "dst" (record batch 0 has [src])`},
		{"src type", record(t, map[string]arrow.Array{"src": float64s([]float64{0, 1}), "dst": ids()}, "src", "dst"), `column "src" has type float64, want int64 or int32`},
		{"weight type", record(t, map[string]arrow.Array{"src": ids(), "dst": ids(), "weight": ids()}, "src", "dst", "weight"), `column "weight" has type int64, want float32 or float64`},
		{"src null", record(t, map[string]arrow.Array{"src": int64s([]int64{0, 1}, []bool{true, false}), "dst": ids()}, "src", "dst"), `column "src" has a null at row 1 (nulls are not allowed)`},
		{"dst null", record(t, map[string]arrow.Array{"src": ids(), "dst": int32s([]int32{0, 1}, []bool{false, true})}, "src", "dst"), `column "dst" has a null at row 0 (nulls are not allowed)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EdgesFromRecords([]arrow.Record{tc.rec}, graph.COOOptions{})
			require.EqualError(t, err, "dataset: "+tc.msg)
		})
	}
	ok := record(t, map[string]arrow.Array{"src": ids(), "dst": ids()}, "src", "dst")
	nulls := record(t, map[string]arrow.Array{"src": ids(), "dst": int64s([]int64{0, 1}, []bool{true, false})}, "src", "dst")
	_, err := EdgesFromRecords([]arrow.Record{ok, nulls}, graph.COOOptions{})
	require.EqualError(t, err, `dataset: column "dst" has a null at row 3 (nulls are not allowed)`, "row index counts across batches")
	weighted := record(t, map[string]arrow.Array{"src": ids(), "dst": ids(), "weight": float64s([]float64{1, 1})}, "src", "dst", "weight")
	_, err = EdgesFromRecords([]arrow.Record{weighted, ok}, graph.COOOptions{})
	require.ErrorContains(t, err, `column "weight" is in some record batches but not in others (batch 1)`)
	g, err := EdgesFromRecords(nil, graph.COOOptions{NumNodes: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(0), g.NumEdges())
}

func TestReadEdgeTableBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{"empty": nil, "garbage": []byte("ARROW1\x00\x00 not really an arrow file ARROW1")} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		_, err := ReadEdgeTable(path, graph.COOOptions{})
		require.ErrorContains(t, err, path)
	}
	_, err := ReadEdgeTable(filepath.Join(dir, "missing"), graph.COOOptions{})
	require.Error(t, err)
}

// FuzzEdgeTable corrupts a valid edge table file: reading it must give the
// right graph or an error, never a panic.
func FuzzEdgeTable(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.arrow")
	if err := WriteEdgeTable(seed, []int64{0, 1, 2, 2}, []int64{1, 2, 0, 0}, []float32{1, 2, 3, 4}); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid, uint16(0), byte(0))
	f.Add(valid, uint16(100), byte(0xff))
	f.Fuzz(func(t *testing.T, data []byte, pos uint16, val byte) {
		if len(data) > 0 {
			data = slices.Clone(data)
			data[int(pos)%len(data)] ^= val
		}
		path := filepath.Join(dir, "f.arrow")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		g, err := ReadEdgeTable(path, graph.COOOptions{NumNodes: 1000})
		if err == nil {
			require.NoError(t, g.Validate())
		}
		if val == 0 && slices.Equal(data, valid) {
			require.NoError(t, err, "the unmodified file must read")
			require.Equal(t, []int64{2, 2, 0, 1}, sources(g))
		}
	})
}

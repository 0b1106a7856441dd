package fileformat

import (
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
)

// typedTypes is the metadata of the typed tables below: users 0..2, items
// 0..1; relation 0 (user, buys, item), relation 1 (item, rev_buys, user).
const typedTypes = `{"node_types":[{"name":"user","num_nodes":3},{"name":"item","num_nodes":2}],` +
	`"edge_types":[{"src":"user","rel":"buys","dst":"item"},{"src":"item","rel":"rev_buys","dst":"user"}]}`

// writeTypedTable writes an Arrow IPC file with src, dst (int64), an etype
// column (dictionary strings when names is not nil, int32 otherwise) and
// the metadata meta (none when empty).
func writeTypedTable(t *testing.T, path string, src, dst []int64, rel []int32, names []string, meta string) {
	t.Helper()
	mp := memory.NewGoAllocator()
	var etype arrow.DataType = arrow.PrimitiveTypes.Int32
	if names != nil {
		etype = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	}
	var md *arrow.Metadata
	if meta != "" {
		m := arrow.NewMetadata([]string{TypesMetaKey}, []string{meta})
		md = &m
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "src", Type: arrow.PrimitiveTypes.Int64},
		{Name: "dst", Type: arrow.PrimitiveTypes.Int64},
		{Name: "etype", Type: etype},
	}, md)
	b := array.NewRecordBuilder(mp, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(src, nil)
	b.Field(1).(*array.Int64Builder).AppendValues(dst, nil)
	if names != nil {
		db := b.Field(2).(*array.BinaryDictionaryBuilder)
		for _, r := range rel {
			require.NoError(t, db.AppendString(names[r]))
		}
	} else {
		b.Field(2).(*array.Int32Builder).AppendValues(rel, nil)
	}
	rec := b.NewRecord()
	defer rec.Release()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema), ipc.WithAllocator(mp))
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// The rows of the tables: relations interleaved.
var (
	tSrc = []int64{0, 1, 0, 2, 1, 1}
	tDst = []int64{1, 0, 0, 1, 2, 1}
	tRel = []int32{0, 1, 1, 0, 1, 0}
)

// checkTypedGraph checks the graph built from the rows above: relation 0
// gets edge ids 0..2 (rows 0, 3, 5), relation 1 ids 3..5 (rows 1, 2, 4).
func checkTypedGraph(t *testing.T, dir string, names []string, meta string, override []byte) {
	t.Helper()
	path := filepath.Join(dir, "typed.arrow")
	writeTypedTable(t, path, tSrc, tDst, tRel, names, meta)
	g, ty, err := ReadTypedEdgeTable(path, override)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 3, 5}, ty.NodeOffsets)
	assert.Equal(t, []int64{0, 3, 6}, ty.EdgeOffsets)
	assert.Equal(t, int64(3), ty.EdgeTypes[1].NumEdges)
	require.NoError(t, ty.CheckGraph(g))
	// edge id -> (global src, global dst)
	want := map[int64][2]int64{
		0: {0, 3 + 1}, 1: {2, 3 + 1}, 2: {1, 3 + 1}, // user -> item rows 0, 3, 5
		3: {3 + 1, 0}, 4: {3 + 0, 0}, 5: {3 + 1, 2}, // item -> user rows 1, 2, 4
	}
	got := map[int64][2]int64{}
	for v := range g.NumNodes {
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			got[g.EdgeID(p)] = [2]int64{g.Source(p), v}
		}
	}
	assert.Equal(t, want, got)
}

func TestTypedEdgeTable(t *testing.T) {
	t.Run("int32 etype, metadata", func(t *testing.T) { checkTypedGraph(t, t.TempDir(), nil, typedTypes, nil) })
	t.Run("dictionary names", func(t *testing.T) { checkTypedGraph(t, t.TempDir(), []string{"buys", "rev_buys"}, typedTypes, nil) })
	t.Run("dictionary triples", func(t *testing.T) {
		checkTypedGraph(t, t.TempDir(), []string{"user:buys:item", "item:rev_buys:user"}, typedTypes, nil)
	})
	t.Run("types given", func(t *testing.T) { checkTypedGraph(t, t.TempDir(), nil, "", []byte(typedTypes)) })
	t.Run("given types win", func(t *testing.T) { checkTypedGraph(t, t.TempDir(), nil, `{"node_types":[]}`, []byte(typedTypes)) })
}

func TestTypedEdgeTableErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src, dst []int64
		rel      []int32
		names    []string
		meta     string
		msg      string
	}{
		{"no metadata", tSrc, tDst, tRel, nil, "", `no "graphferry.types" metadata`},
		{"bad metadata", tSrc, tDst, tRel, nil, `{"node_types":[{"name":"user","num_nodes":3}],"edge_types":[{"src":"user","rel":"buys","dst":"shop"}]}`, `edge_types[0].dst = "shop" is not a node type`},
		{"unknown field", tSrc, tDst, tRel, nil, `{"node_type":[]}`, `unknown field "node_type"`},
		{"relation index", tSrc, tDst, []int32{0, 1, 2, 0, 1, 0}, nil, typedTypes, "row 2: relation index 2 is outside [0, 2)"},
		{"relation name", tSrc, tDst, tRel, []string{"buys", "sells"}, typedTypes, `"sells" names no relation`},
		{"source range", []int64{0, 1, 0, 3, 1, 1}, tDst, tRel, nil, typedTypes, `relation 0 ("user", "buys", "item"): edge 1: source 3 is outside [0, 3) (the "user" nodes)`},
		{"destination range", tSrc, []int64{1, 0, 0, 1, 2, 2}, tRel, nil, typedTypes, `edge 2: destination 2 is outside [0, 2) (the "item" nodes)`},
		{"negative", tSrc, []int64{-1, 0, 0, 1, 2, 1}, tRel, nil, typedTypes, "destination -1 is outside"},
		{"counts", tSrc, tDst, tRel, nil, `{"node_types":[{"name":"user","num_nodes":3},{"name":"item","num_nodes":2}],` +
			`"edge_types":[{"src":"user","rel":"buys","dst":"item","num_edges":2},{"src":"item","rel":"rev_buys","dst":"user"}]}`,
			"edge_types[0].num_edges = 2, but the table has 3 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "typed.arrow")
			writeTypedTable(t, path, tc.src, tc.dst, tc.rel, tc.names, tc.meta)
			g, ty, err := ReadTypedEdgeTable(path, nil)
			require.ErrorContains(t, err, tc.msg)
			assert.Nil(t, g)
			assert.Nil(t, ty)
		})
	}
	// A typed table is not read as an untyped one (its ids are local).
	typed := filepath.Join(t.TempDir(), "typed.arrow")
	writeTypedTable(t, typed, tSrc, tDst, tRel, nil, typedTypes)
	_, err := ReadEdgeTable(typed, graph.COOOptions{})
	require.ErrorContains(t, err, "is a typed edge table")
	// An untyped table has no etype column.
	path := filepath.Join(t.TempDir(), "plain.arrow")
	require.NoError(t, WriteEdgeTable(path, []int64{0}, []int64{1}, nil))
	_, _, err = ReadTypedEdgeTable(path, []byte(typedTypes))
	require.ErrorContains(t, err, `0 columns named "etype"`)
}

// TestTypedFixture keeps tests/data/typed_edges.arrow (read by the C test)
// what it is said to be; GRAPHFERRY_WRITE_FIXTURES=1 writes it again.
func TestTypedFixture(t *testing.T) {
	path := filepath.Join("..", "..", "tests", "data", "typed_edges.arrow")
	if os.Getenv("GRAPHFERRY_WRITE_FIXTURES") == "1" {
		writeTypedTable(t, path, tSrc, tDst, tRel, []string{"buys", "rev_buys"}, typedTypes)
	}
	g, ty, err := ReadTypedEdgeTable(path, nil)
	require.NoError(t, err)
	require.NoError(t, ty.CheckGraph(g))
	assert.Equal(t, []int64{0, 3, 6}, ty.EdgeOffsets)
}

func TestTypedCOOErrors(t *testing.T) {
	ty, err := ParseTypesJSON([]byte(typedTypes))
	require.NoError(t, err)
	_, _, err = TypedCOO(ty, [][]int64{{0}}, [][]int64{{0}}, nil, 0)
	require.ErrorContains(t, err, "2 relations but 1 src and 1 dst lists")
	_, _, err = TypedCOO(ty, [][]int64{{0}, {}}, [][]int64{{0, 1}, {}}, nil, 0)
	require.ErrorContains(t, err, "1 sources but 2 destinations")
	g, out, err := TypedCOO(ty, [][]int64{{0, 2}, {1}}, [][]int64{{1, 1}, {0}}, [][]float32{{1, 2}, {3}}, 1)
	require.NoError(t, err)
	require.NoError(t, out.CheckGraph(g))
	assert.Equal(t, []float32{3}, g.Weights[g.Indptr[0]:g.Indptr[1]], "user 0 gets item 1's edge, weight 3")
}

// FuzzTypedEdgeTable corrupts a valid typed edge table (dictionary etype,
// types in the schema metadata): reading it must give a graph that matches
// its types, or an error, never a panic.
func FuzzTypedEdgeTable(f *testing.F) {
	valid, err := os.ReadFile(filepath.Join("..", "..", "tests", "data", "typed_edges.arrow"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid, uint16(0), byte(0))
	f.Add(valid, uint16(700), byte(0x01))
	f.Add(valid, uint16(1200), byte(0x80))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, pos uint16, val byte) {
		if len(data) > 0 {
			data = slices.Clone(data)
			data[int(pos)%len(data)] ^= val
		}
		path := filepath.Join(dir, "f.arrow")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		g, ty, err := ReadTypedEdgeTable(path, nil)
		if err != nil {
			return
		}
		require.NoError(t, g.Validate())
		require.NoError(t, ty.CheckGraph(g))
		if val == 0 && slices.Equal(data, valid) {
			require.Equal(t, []int64{0, 3, 6}, ty.EdgeOffsets, "the unmodified file reads")
		}
	})
}

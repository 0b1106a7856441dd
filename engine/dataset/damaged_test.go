package dataset

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v14/arrow"
	"github.com/apache/arrow/go/v14/arrow/ipc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// These tests damage dataset files as an unlucky user would (flipped
// bytes, lost metadata, lying sizes, swapped files) and check that each
// damage is an error naming the problem, never a different graph or a
// crash.

// batches returns the parsed record batches of an Arrow IPC file image.
func batches(t *testing.T, file []byte) []*bodyWalk {
	t.Helper()
	_, err := checkArrowFooter(file)
	require.NoError(t, err)
	blocks, err := footerBlocks(file)
	require.NoError(t, err)
	var out []*bodyWalk
	for _, b := range blocks {
		w, err := openBatch(file, b)
		require.NoError(t, err)
		out = append(out, w)
	}
	return out
}

// TestZSTDBodyFlips flips every byte of the compressed buffers of an edge
// table in turn: each flip must give an error or the very same graph (the
// Arrow reader alone reads most of them as a different graph: it never
// reaches the ZSTD frame checksum).
func TestZSTDBodyFlips(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, e = 50, 60
	src, dst, w := make([]int64, e), make([]int64, e), make([]float32, e)
	for i := range src {
		src[i], dst[i], w[i] = r.Int64N(n), r.Int64N(n), float32(r.IntN(4))
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "edges.arrow")
	require.NoError(t, WriteEdgeTable(path, src, dst, w))
	want, err := ReadEdgeTable(path, graph.COOOptions{NumNodes: n})
	require.NoError(t, err)
	valid, err := os.ReadFile(path)
	require.NoError(t, err)

	bs := batches(t, valid)
	require.Len(t, bs, 1)
	b := bs[0]
	require.True(t, b.compressed)
	bodyStart := len(valid) - len(b.body) // not quite: find it below
	for i := range len(valid) - len(b.body) + 1 {
		if slices.Equal(valid[i:i+len(b.body)], b.body) {
			bodyStart = i
			break
		}
	}
	flips, caught := 0, 0
	for j := range b.nBufs {
		off, _ := b.meta.i64(b.buffers + 16*j)
		ln, _ := b.meta.i64(b.buffers + 16*j + 8)
		// Skip the 8-byte uncompressed-size prefix: a changed size is
		// caught by the reader itself.
		for p := bodyStart + int(off) + 8; p < bodyStart+int(off+ln); p++ {
			data := slices.Clone(valid)
			data[p] ^= 0x20
			require.NoError(t, os.WriteFile(path, data, 0o644))
			got, err := ReadEdgeTable(path, graph.COOOptions{NumNodes: n})
			flips++
			if err != nil {
				caught++
				require.ErrorContains(t, err, path)
				continue
			}
			require.Equal(t, sources(want), sources(got), "byte %d flipped: a different graph", p)
			require.Equal(t, want.Indptr, got.Indptr, "byte %d flipped: a different graph", p)
			require.Equal(t, want.Weights, got.Weights, "byte %d flipped: a different graph", p)
		}
	}
	t.Logf("%d flips, %d caught", flips, caught)
	assert.Greater(t, caught, flips/2)
}

// TestHiddenNulls writes an edge table whose src column has a null, then
// sets the column's null count to 0 in the metadata: the Arrow reader then
// skips the validity bitmap and reads the null as node 0.
func TestHiddenNulls(t *testing.T) {
	for _, zstd := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "edges.arrow")
		rec := record(t, map[string]arrow.Array{
			"src": int64s([]int64{1, 2, 0, 3}, []bool{true, true, false, true}),
			"dst": int64s([]int64{0, 1, 2, 3}, nil),
		}, "src", "dst")
		f, err := os.Create(path)
		require.NoError(t, err)
		opts := []ipc.Option{ipc.WithSchema(rec.Schema())}
		if zstd {
			opts = append(opts, ipc.WithZstd())
		}
		wr, err := ipc.NewFileWriter(f, opts...)
		require.NoError(t, err)
		require.NoError(t, wr.Write(rec))
		require.NoError(t, wr.Close())
		require.NoError(t, f.Close())

		_, err = ReadEdgeTable(path, graph.COOOptions{})
		require.ErrorContains(t, err, `column "src" has a null at row 2`)

		data, err := os.ReadFile(path)
		require.NoError(t, err)
		b := batches(t, data)[0]
		nulls, _ := b.meta.i64(b.nodes + 8)
		require.Equal(t, int64(1), nulls)
		binary.LittleEndian.PutUint64(data[b.metaOff+int64(b.nodes)+8:], 0)
		require.NoError(t, os.WriteFile(path, data, 0o644))
		_, err = ReadEdgeTable(path, graph.COOOptions{})
		require.ErrorContains(t, err, `column "src" says it has no nulls, but its validity bitmap marks row 2 (of the record batch) null`, "zstd=%v", zstd)
	}
}

// writeTestDataset writes syntheticDataset to a fresh directory.
func writeTestDataset(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	require.NoError(t, Write(dir, syntheticDataset(t)))
	return dir
}

// flipByte flips one byte of a file in place (its size stays).
func flipByte(t *testing.T, path string, pos int) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[pos%len(data)] ^= 0x01
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func TestChecksums(t *testing.T) {
	dir := writeTestDataset(t)
	d, err := OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)
	require.NoError(t, d.Close())

	// A flipped feature byte: sizes agree, so a plain open succeeds (it
	// does not read feat.bin), a verified one names the file.
	flipByte(t, filepath.Join(dir, FeatFile), 7)
	d, err = Open(dir)
	require.NoError(t, err)
	require.NoError(t, d.Close())
	_, err = OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, FeatFile+": CRC-32C is")
	require.ErrorContains(t, err, "the file is damaged or was changed")

	// The same for a byte of the edge table's footer (which the body
	// checks do not cover).
	dir = writeTestDataset(t)
	path := filepath.Join(dir, EdgesFile)
	st, err := os.Stat(path)
	require.NoError(t, err)
	flipByte(t, path, int(st.Size())-40)
	_, err = OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, EdgesFile+": CRC-32C is")
	// The Arrow tables are read whole at every open: their sums are
	// checked then too, wherever the flipped byte is.
	for _, name := range []string{EdgesFile, NodesFile} {
		dir = writeTestDataset(t)
		flipByte(t, filepath.Join(dir, name), 700)
		_, err = Open(dir)
		require.ErrorIs(t, err, errs.ErrIO)
		require.ErrorContains(t, err, name+": CRC-32C is")
	}

	// Sizes are checked at every open.
	dir = writeTestDataset(t)
	f, err := os.OpenFile(filepath.Join(dir, NodesFile), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = Open(dir)
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, "nodes.arrow is 1867 bytes, graphferry.json says 1866")

	// A dataset written before sums were recorded opens, verified or not.
	dir = writeTestDataset(t)
	editMeta(t, dir, func(m map[string]any) { delete(m, "files") })
	d, err = OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)
	assert.Empty(t, d.Meta.Files)
	require.NoError(t, d.Close())

	// Recorded names are confined like the others.
	for _, name := range []string{"../x", ".", "..", "/etc/passwd", "a/b"} {
		dir = writeTestDataset(t)
		editMeta(t, dir, func(m map[string]any) {
			m["files"].(map[string]any)[name] = map[string]any{"size": 1, "crc32c": "00000000"}
		})
		_, err = Open(dir)
		require.ErrorContains(t, err, "must be a plain file name", name)
	}
}

// TestLyingSizes gives sizes that would make the old reader allocate far
// more than the machine has (Go's fatal out-of-memory error): each must be
// an error before the allocation.
func TestLyingSizes(t *testing.T) {
	defer func(old func() uint64) { totalMemory = old }(totalMemory)
	totalMemory = func() uint64 { return 8 << 30 } // the same on any machine

	// num_nodes 2^32 in graphferry.json: the node table is compared first.
	dir := writeTestDataset(t)
	editMeta(t, dir, func(m map[string]any) { m["num_nodes"] = int64(1) << 32; delete(m, "feature") })
	_, err := Open(dir)
	require.ErrorContains(t, err, "has 5 rows, want num_nodes=4294967296")

	// An edge table whose largest id is 2^32 (node count taken from it).
	path := filepath.Join(t.TempDir(), "edges.arrow")
	require.NoError(t, WriteEdgeTable(path, []int64{0, 1 << 32}, []int64{1, 0}, nil))
	_, err = ReadEdgeTable(path, graph.COOOptions{})
	require.ErrorIs(t, err, errs.ErrNoMem)
	require.ErrorContains(t, err, "a graph of 4294967297 nodes (largest id 4294967296) and 2 edges needs")
	require.ErrorContains(t, err, path)

	// A fixed_size_list width patched to 2^31-1 in nodes.arrow.
	dir = writeTestDataset(t)
	editMeta(t, dir, func(m map[string]any) { delete(m, "files") })
	nodes := filepath.Join(dir, NodesFile)
	require.NoError(t, writeNodeTable(nodes, []nodeColumn{
		{LabelKey, mem.Tensor{DType: mem.Int64, Shape: []int64{5}, Data: make([]byte, 40)}},
		{TrainMaskKey, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}},
		{ValMaskKey, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}},
		{TestMaskKey, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}},
		{"pos", mem.Tensor{DType: mem.Float64, Shape: []int64{5, 77}, Data: make([]byte, 5*77*8)}},
	}, 5))
	data, err := os.ReadFile(nodes)
	require.NoError(t, err)
	width := binary.LittleEndian.AppendUint32(nil, 77)
	patched := 0
	// The width is in the schema message at the start and in the footer,
	// both before the body or after it; the body (ZSTD) is left alone.
	bodies := batches(t, data)
	for i := 0; i+4 <= len(data); i++ {
		inBody := false
		for _, b := range bodies {
			lo := int(b.metaOff) // the body follows the message metadata
			inBody = inBody || (i >= lo && i < lo+len(b.meta)+len(b.body)+8)
		}
		if !inBody && slices.Equal(data[i:i+4], width) {
			binary.LittleEndian.PutUint32(data[i:], 1<<31-1)
			patched++
		}
	}
	require.Equal(t, 2, patched)
	require.NoError(t, os.WriteFile(nodes, data, 0o644))
	_, err = Open(dir)
	require.ErrorContains(t, err, `column "pos": record batch 0 has 5 rows of width 2147483647, but its value buffer holds 385 elements`)
}

// TestNodeValues checks that labels outside [0, num_classes) (other than
// -1) and masks other than 0/1 are refused, on reading and on writing.
func TestNodeValues(t *testing.T) {
	cols := func(label []int64, mask []byte) []nodeColumn {
		return []nodeColumn{
			{LabelKey, mem.Tensor{DType: mem.Int64, Shape: []int64{5}, Data: mem.Bytes(label)}},
			{TrainMaskKey, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: mask}},
			{ValMaskKey, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}},
			{TestMaskKey, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}},
		}
	}
	for _, tc := range []struct {
		label []int64
		mask  []byte
		msg   string
	}{
		{[]int64{0, 1, 3, 2, -1}, []byte{0, 1, 0, 1, 1}, `column "label" row 2: label 3 is outside [0, num_classes=3)`},
		{[]int64{0, 1, -2, 2, -1}, []byte{0, 1, 0, 1, 1}, `column "label" row 2: label -2 is outside`},
		{[]int64{0, 1, 2, 2, -1}, []byte{0, 1, 0, 2, 1}, `column "train_mask" row 3: mask value 2 (want 0 or 1)`},
	} {
		dir := writeTestDataset(t)
		editMeta(t, dir, func(m map[string]any) { delete(m, "files") })
		require.NoError(t, writeNodeTable(filepath.Join(dir, NodesFile), cols(tc.label, tc.mask), 5))
		_, err := Open(dir)
		require.ErrorContains(t, err, tc.msg)

		d := syntheticDataset(t)
		d.NodeData[LabelKey] = mem.Tensor{DType: mem.Int64, Shape: []int64{5}, Data: mem.Bytes(tc.label)}
		d.NodeData[TrainMaskKey] = mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: tc.mask}
		require.ErrorContains(t, Write(t.TempDir(), d), tc.msg)
	}
	d := syntheticDataset(t)
	d.NodeData["split_val_mask"] = mem.Tensor{DType: mem.Uint8, Shape: []int64{5, 2}, Data: []byte{0, 1, 1, 0, 1, 1, 0, 0, 0, 9}}
	require.ErrorContains(t, Write(t.TempDir(), d), `column "split_val_mask" row 4: mask value 9`)
}

// TestUnlistableColumnNames checks that node columns whose names the C API
// could not list (newline, NUL) are refused.
func TestUnlistableColumnNames(t *testing.T) {
	for _, name := range []string{"a\nb", "x\x00"} {
		d := syntheticDataset(t)
		d.NodeData[name] = mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}
		require.ErrorContains(t, Write(t.TempDir(), d), "holds a newline or NUL")

		dir := writeTestDataset(t)
		editMeta(t, dir, func(m map[string]any) { delete(m, "files") })
		d = syntheticDataset(t)
		c, err := nodeColumns(d.NodeData, 5)
		require.NoError(t, err)
		c = append(c, nodeColumn{name, mem.Tensor{DType: mem.Uint8, Shape: []int64{5}, Data: make([]byte, 5)}})
		require.NoError(t, writeNodeTable(filepath.Join(dir, NodesFile), c, 5))
		_, err = Open(dir)
		require.ErrorContains(t, err, "holds a newline or NUL")
	}
}

// FuzzOpenMeta feeds arbitrary graphferry.json contents to Open over a
// valid dataset: it must open it or return an error, never panic, hang or
// allocate what the files do not back.
func FuzzOpenMeta(f *testing.F) {
	dir := filepath.Join(f.TempDir(), "ds")
	g, err := graph.FromCSC(5, []int64{0, 2, 2, 5, 5, 5}, []int64{1, 3, 0, 4, 2}, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	d := &Dataset{Meta: Meta{Name: "f", NumClasses: 3}, Graph: g, NodeData: map[string]mem.Tensor{
		FeatKey:  {DType: mem.Float32, Shape: []int64{5, 2}, Data: make([]byte, 40)},
		LabelKey: {DType: mem.Int64, Shape: []int64{5}, Data: mem.Bytes([]int64{0, 1, 2, -1, 0})},
	}}
	if err := Write(dir, d); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add([]byte(`{"format":"graphferry-dataset","version":1,"num_nodes":4294967296,"num_edges":5}`))
	f.Add([]byte(`{"format":"graphferry-dataset","version":1,"num_nodes":5,"num_edges":5,"files":{"..":{"size":1}}}`))
	f.Add([]byte(`{"format":"graphferry-dataset","version":1,"num_nodes":5,"num_edges":5,"feature":{"file":".","dtype":"float32","shape":[5,9223372036854775807]}}`))
	f.Fuzz(func(t *testing.T, meta []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), meta, 0o644))
		ds, err := OpenWith(dir, OpenOptions{VerifyChecksums: len(meta)%2 == 0})
		if err == nil {
			require.NoError(t, ds.Graph.Validate())
			require.NoError(t, ds.Close())
		}
		if slices.Equal(meta, valid) {
			require.NoError(t, err, "the unmodified dataset must open")
		}
	})
}

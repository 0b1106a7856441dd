package dataset

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// These tests damage dataset files as an unlucky user would (flipped
// bytes, lost metadata, lying sizes, swapped files) and check that each
// damage is an error naming the problem, never a different graph or a
// crash.

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
	defer func(old func() uint64) { fileio.TotalMemory = old }(fileio.TotalMemory)
	fileio.TotalMemory = func() uint64 { return 8 << 30 } // the same on any machine

	// num_nodes 2^32 in graphferry.json: the node table is compared first.
	dir := writeTestDataset(t)
	editMeta(t, dir, func(m map[string]any) { m["num_nodes"] = int64(1) << 32; delete(m, "feature") })
	_, err := Open(dir)
	require.ErrorContains(t, err, "has 5 rows, want num_nodes=4294967296")

	// An edge table whose largest id is 2^32 (node count taken from it).
	path := filepath.Join(t.TempDir(), "edges.arrow")
	require.NoError(t, fileformat.WriteEdgeTable(path, []int64{0, 1 << 32}, []int64{1, 0}, nil))
	_, err = fileformat.ReadEdgeTable(path, graph.COOOptions{})
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
	// The width is in the schema message at the start (after the 8-byte
	// magic, a continuation marker and its length) and in the footer at
	// the end (before its length and the magic); the record batches
	// between them (ZSTD) are left alone.
	schemaEnd := 16 + int(binary.LittleEndian.Uint32(data[12:16]))
	footerStart := len(data) - 10 - int(binary.LittleEndian.Uint32(data[len(data)-10:]))
	for i := 0; i+4 <= len(data); i++ {
		inBatches := i+4 > schemaEnd && i < footerStart
		if !inBatches && slices.Equal(data[i:i+4], width) {
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

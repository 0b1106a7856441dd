package fileformat

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

	"github.com/graphferry/graphferry/engine/graph"
)

// These tests damage Arrow IPC files as an unlucky user would (flipped
// bytes, lost null counts) and check that each damage is an error naming
// the problem, never a different graph or a crash.

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
// reaches the ZSTD frame checksum). The same holds when the file's
// checksum was recorded after the damage (verify accepts the file): the
// frames are checked whether or not a checksum is recorded.
func TestZSTDBodyFlips(t *testing.T) {
	t.Run("unrecorded", func(t *testing.T) { zstdBodyFlips(t, nil) })
	t.Run("recorded after the damage", func(t *testing.T) {
		zstdBodyFlips(t, func([]byte) error { return nil })
	})
}

func zstdBodyFlips(t *testing.T, verify func([]byte) error) {
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
			got, err := ReadEdgeTableVerified(path, graph.COOOptions{NumNodes: n}, verify)
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

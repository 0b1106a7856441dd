package dataset

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/datatest"
)

// Opening counts what it holds (OpenBytes: the node columns and the CSC's
// build) and refuses a MemoryLimit below it before the allocation, naming
// the bytes and the CSC files; with CSC files only the node columns count.
func TestOpenWithinMemoryLimit(t *testing.T) {
	datatest.Set(t, &fileformat.RecordBatchRows, 64) // several record batches
	want := syntheticDataset(t)
	want.Graph.Weights = nil // (CSC files hold none)
	dir := filepath.Join(t.TempDir(), "ds")
	require.NoError(t, Write(dir, want))

	d, err := Open(dir)
	require.NoError(t, err)
	columns := int64(0)
	for name, t := range d.NodeData {
		if name != FeatKey {
			columns += int64(len(t.Data))
		}
	}
	g := d.Graph
	csc := 8*int64(len(g.Indptr)) + 4*int64(len(g.Indices32)) + 8*int64(len(g.Indices)) + 8*int64(len(g.EdgeIDs)) + 4*int64(len(g.Weights))
	held := d.OpenBytes
	require.NoError(t, d.Close())
	require.Greater(t, held, columns+csc, "the node columns, the CSC and the build's counters and batches")

	d, err = OpenWith(dir, OpenOptions{MemoryLimit: held})
	require.NoError(t, err)
	require.Equal(t, held, d.OpenBytes)
	require.NoError(t, d.Close())

	_, err = OpenWith(dir, OpenOptions{MemoryLimit: held - 1})
	require.ErrorIs(t, err, errs.ErrNoMem)
	require.ErrorContains(t, err, "over the memory budget of")
	require.ErrorContains(t, err, "python -m graphferry csc DIR")

	_, err = OpenWith(dir, OpenOptions{MemoryLimit: columns / 2})
	require.ErrorIs(t, err, errs.ErrNoMem)
	require.ErrorContains(t, err, "for its node columns")

	require.NoError(t, WriteCSC(dir))
	d, err = OpenWith(dir, OpenOptions{MemoryLimit: held - 1})
	require.NoError(t, err, "the CSC files are mapped, not built")
	require.Less(t, d.OpenBytes, held-csc)
	require.NoError(t, d.Close())
}

//go:build unix

package dataset

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// TestConfinedFiles checks that dataset files stay inside their directory:
// a symbolic link out of it (to any file of the right size) and the names
// "." and ".." are refused; a link to another file inside it is allowed.
func TestConfinedFiles(t *testing.T) {
	dir := writeTestDataset(t)
	outside := filepath.Join(t.TempDir(), "other.bin")
	require.NoError(t, os.WriteFile(outside, make([]byte, 60), 0o644)) // feat.bin's size
	feat := filepath.Join(dir, FeatFile)
	require.NoError(t, os.Rename(feat, filepath.Join(dir, "feat.v2.bin")))
	require.NoError(t, os.Symlink("feat.v2.bin", feat))
	d, err := OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.NoError(t, err, "a link inside the directory is allowed")
	require.NoError(t, d.Close())

	require.NoError(t, os.Remove(feat))
	require.NoError(t, os.Symlink(outside, feat))
	_, err = Open(dir)
	require.ErrorContains(t, err, "resolves to "+outside+", outside the dataset directory")
	// Also through a relative link and a linked directory.
	require.NoError(t, os.Remove(feat))
	rel, err := filepath.Rel(dir, outside)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(rel, feat))
	_, err = Open(dir)
	require.ErrorContains(t, err, "outside the dataset directory")

	for _, name := range []string{".", "..", "", "sub/feat.bin"} {
		dir := writeTestDataset(t)
		editMeta(t, dir, func(m map[string]any) {
			m["feature"].(map[string]any)["file"] = name
			delete(m, "files")
		})
		_, err := Open(dir)
		require.ErrorContains(t, err, "must be a plain file name", "%q", name)
	}
}

// TestNotRegularFiles puts a named pipe where each dataset file should be:
// open must refuse it at once (opening a FIFO for reading blocks until a
// writer comes, deaf to Ctrl-C). The converter's half is in engine/convert
// (TestConvertRefusesNotRegularFiles).
func TestNotRegularFiles(t *testing.T) {
	for _, name := range []string{MetaFile, EdgesFile, NodesFile, FeatFile} {
		dir := writeTestDataset(t)
		path := filepath.Join(dir, name)
		require.NoError(t, os.Remove(path))
		require.NoError(t, syscall.Mkfifo(path, 0o644))
		_, err := Open(dir)
		require.ErrorContains(t, err, path+" is not a regular file", name)
	}
	dir := writeTestDataset(t)
	require.NoError(t, os.Remove(filepath.Join(dir, NodesFile)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, NodesFile), 0o755))
	_, err := Open(dir)
	require.ErrorContains(t, err, "is not a regular file")

	fifo := filepath.Join(t.TempDir(), "edges.arrow")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, err = fileformat.ReadEdgeTable(fifo, graph.COOOptions{})
	require.ErrorContains(t, err, "is not a regular file")
}

// TestTruncatedFeaturesWhileOpen truncates feat.bin under an open dataset:
// reading the lost rows is an error naming the file, not a crash.
func TestTruncatedFeaturesWhileOpen(t *testing.T) {
	dir := writeTestDataset(t)
	// A feature matrix of several pages, so that a truncation to one page
	// leaves rows to lose.
	d := syntheticDataset(t)
	g, err := graph.FromCOO([]int64{0}, []int64{1}, nil, graph.COOOptions{NumNodes: 4096})
	require.NoError(t, err)
	d.Graph = g
	d.NodeData = map[string]mem.Tensor{FeatKey: {DType: mem.Float32, Shape: []int64{4096, 8}, Data: make([]byte, 4096*8*4)}}
	require.NoError(t, Write(dir, d))
	ds, err := Open(dir)
	require.NoError(t, err)
	defer ds.Close()
	feat := ds.NodeData[FeatKey]
	path := filepath.Join(dir, FeatFile)
	assert.Equal(t, path, feature.MappedFile(feat.Data))

	require.NoError(t, os.Truncate(path, 4096))
	dst := make([]byte, 32)
	require.NoError(t, feature.Gather(dst, feat, []int64{3}, 1), "row 3 is in the first page")
	err = feature.Gather(dst, feat, []int64{4000}, 1)
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, path)
	_, err = OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, "feat.bin is 4096 bytes, graphferry.json says 131072")
}

package dataset

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// blockDataset writes a dataset whose feat.bin spans several blocks: 4096
// rows of 64 float32 (1 MiB, 4 blocks of 256 KiB, 1024 rows a block).
func blockDataset(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	d := syntheticDataset(t)
	g, err := graph.FromCOO([]int64{0, 5, 4000}, []int64{1, 6, 4001}, nil, graph.COOOptions{NumNodes: 4096})
	require.NoError(t, err)
	d.Graph = g
	feat := make([]float32, 4096*64)
	for i := range feat {
		feat[i] = float32(i)
	}
	d.NodeData = map[string]mem.Tensor{FeatKey: {DType: mem.Float32, Shape: []int64{4096, 64}, Data: mem.Bytes(feat)}}
	require.NoError(t, Write(dir, d))
	return dir
}

// writeAt changes the file at path in place (its size, and the mapping of
// an open dataset, stay).
func writeAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// gatherRows gathers rows of feat one at a time, returning the first error.
func gatherRows(feat mem.Tensor, rows ...int64) error {
	dst := make([]byte, feat.RowBytes())
	for _, r := range rows {
		if err := feature.Gather(dst, feat, []int64{r}, 1); err != nil {
			return err
		}
	}
	return nil
}

// TestBlocksVerifiedAsRead: a byte of feat.bin flipped in place (before or
// after the open: the mapping shares the file) is an error at the first
// read of its block, naming the file and the block, while rows of other
// blocks read fine; a block read once is not checked again.
func TestBlocksVerifiedAsRead(t *testing.T) {
	const rowsPerBlock = fileio.BlockSize / (64 * 4)
	for block := range 4 {
		t.Run(fmt.Sprint("block ", block), func(t *testing.T) {
			dir := blockDataset(t)
			d, err := Open(dir)
			require.NoError(t, err)
			defer d.Close()
			require.True(t, d.HasBlockSums())
			feat := d.NodeData[FeatKey]
			path := filepath.Join(dir, FeatFile)
			// Changed while open (a loader iterating): flip one byte of the block.
			off := int64(block)*fileio.BlockSize + 777
			writeAt(t, path, off, []byte{feat.Data[off] ^ 0x10})
			other := int64((block+1)%4) * rowsPerBlock
			require.NoError(t, gatherRows(feat, other, other+rowsPerBlock-1))
			err = gatherRows(feat, int64(block)*rowsPerBlock+5)
			require.ErrorIs(t, err, errs.ErrIO)
			require.ErrorContains(t, err, fmt.Sprintf("%s: block %d (bytes %d to %d) has CRC-32C", path, block, block*fileio.BlockSize, (block+1)*fileio.BlockSize-1))
			require.ErrorContains(t, err, "graphferry.json says")
			// A Copy of the whole array (NodeData read out) checks every block.
			require.ErrorContains(t, feature.Copy(make([]byte, len(feat.Data)), feat.Data), fmt.Sprintf("block %d", block))
		})
	}
	// Same-size rewrite before the open: found at the first read.
	dir := blockDataset(t)
	path := filepath.Join(dir, FeatFile)
	zeros := make([]byte, 4096*64*4)
	require.NoError(t, os.WriteFile(path, zeros, 0o644))
	d, err := Open(dir)
	require.NoError(t, err, "sizes match: the default open reads no feature byte")
	require.ErrorContains(t, gatherRows(d.NodeData[FeatKey], 0), "block 0")
	require.NoError(t, d.Close())
	// verify=True still checks everything at open.
	_, err = OpenWith(dir, OpenOptions{VerifyChecksums: true})
	require.ErrorContains(t, err, "CRC-32C")
}

// TestBlocksOnlyOnce: once read and checked, a block is trusted (a change
// after its first read is not seen: the check is of the first read).
func TestBlocksOnlyOnce(t *testing.T) {
	dir := blockDataset(t)
	d, err := Open(dir)
	require.NoError(t, err)
	defer d.Close()
	feat := d.NodeData[FeatKey]
	require.NoError(t, gatherRows(feat, 3))
	writeAt(t, filepath.Join(dir, FeatFile), 100, []byte{feat.Data[100] ^ 1})
	require.NoError(t, gatherRows(feat, 3))
}

// TestBlocksOldDataset: a graphferry.json without block sums (written
// before they were recorded) opens, without a check as read.
func TestBlocksOldDataset(t *testing.T) {
	dir := blockDataset(t)
	editMeta(t, dir, func(m map[string]any) { delete(m, "blocks"); delete(m, "declared") })
	d, err := Open(dir)
	require.NoError(t, err)
	defer d.Close()
	require.False(t, d.HasBlockSums())
	// Block sums removed but the declared sum kept: a hand edit.
	dir = blockDataset(t)
	editMeta(t, dir, func(m map[string]any) { delete(m, "blocks") })
	_, err = Open(dir)
	require.ErrorContains(t, err, "edited by hand")
}

// TestEveryFileFlipped: one flipped byte anywhere in any data file is an
// error at open or at the first read of the rows, never other data.
func TestEveryFileFlipped(t *testing.T) {
	for _, name := range []string{EdgesFile, NodesFile, FeatFile} {
		for _, frac := range []float64{0, 0.3, 0.77, 0.999} {
			dir := blockDataset(t)
			path := filepath.Join(dir, name)
			st, err := os.Stat(path)
			require.NoError(t, err)
			pos := int64(frac * float64(st.Size()-1))
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			writeAt(t, path, pos, []byte{raw[pos] ^ 0x04})
			d, err := Open(dir)
			if err == nil {
				all := make([]int64, 4096)
				for i := range all {
					all[i] = int64(i)
				}
				err = gatherRows(d.NodeData[FeatKey], all...)
				d.Close()
			}
			require.ErrorIs(t, err, errs.ErrIO, "%s byte %d", name, pos)
		}
	}
}

// TestFeaturePageSums: Write records feat.bin's page sums in
// feat.bin.pages (a CRC-32C per 4 KiB, named in graphferry.json's blocks
// and summed in its files), FeaturePageSums reads them back; a damaged or
// resized page sums file is an error naming it; a dataset written before
// them has none.
func TestFeaturePageSums(t *testing.T) {
	dir := blockDataset(t)
	d, err := Open(dir)
	require.NoError(t, err)
	sums, size, path, err := d.FeaturePageSums(dir)
	require.NoError(t, err)
	require.Equal(t, fileio.PageSize, size)
	require.Equal(t, filepath.Join(dir, FeatFile+fileio.PagesSuffix), path)
	require.Len(t, sums, 1<<20/fileio.PageSize)
	feat := d.NodeData[FeatKey].Data
	for i, s := range sums {
		require.Equal(t, crc32.Checksum(feat[i*size:(i+1)*size], crc32.MakeTable(crc32.Castagnoli)), s, "page %d", i)
	}
	require.Contains(t, d.Meta.Files, FeatFile+fileio.PagesSuffix)
	d.Close()

	writeAt(t, path, 17, []byte{0xff})
	d, err = Open(dir)
	require.NoError(t, err) // read by the disk tier only
	_, _, _, err = d.FeaturePageSums(dir)
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, path+" has 1024 bytes of CRC-32C")
	d.Close()

	dir = blockDataset(t)
	editMeta(t, dir, func(m map[string]any) { delete(m, "blocks"); delete(m, "declared") })
	d, err = Open(dir)
	require.NoError(t, err)
	defer d.Close()
	sums, _, _, err = d.FeaturePageSums(dir)
	require.NoError(t, err)
	require.Nil(t, sums)
}

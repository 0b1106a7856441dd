package rankpart

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/datatest"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// editPartMeta rewrites partition.json through edit, keeping its declared
// sum as it was (a hand edit).
func editPartMeta(t *testing.T, dst string, edit func(m map[string]any)) {
	t.Helper()
	datatest.EditJSON(t, filepath.Join(dst, PartMetaFile), edit)
}

// TestRankFilesChecked: without checksums verified, a global edge id out
// of range, a feat.npy of another dtype (same size), a feature_file of
// another name and a hand-edited partition.json are errors (they were
// served).
func TestRankFilesChecked(t *testing.T) {
	t.Run("global edge id out of range", func(t *testing.T) {
		dst := writeParts(t, LayoutDSP)
		path := filepath.Join(dst, "part-1", GlobalEIDsFile)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		binary.LittleEndian.PutUint64(raw[len(raw)-8:], 1_095_216_666_307)
		require.NoError(t, os.WriteFile(path, raw, 0o644))
		// Id maps are read whole: their sums are checked at every open.
		_, err = OpenPart(dst, 1, dataset.OpenOptions{})
		require.ErrorContains(t, err, "global_eids.npy: CRC-32C is")
		// With the sum recorded anew (an old partition.json without the
		// declared sum): the bound catches it.
		sum, err := fileio.SumFile(path)
		require.NoError(t, err)
		editPartMeta(t, dst, func(m map[string]any) {
			delete(m, "declared")
			m["ranks"].([]any)[1].(map[string]any)["files"].(map[string]any)[GlobalEIDsFile] = sum
		})
		_, err = OpenPart(dst, 1, dataset.OpenOptions{})
		require.ErrorContains(t, err, "= 1095216666307 is outside [0, ")
	})
	t.Run("feat.npy as int32", func(t *testing.T) {
		dst := writeParts(t, LayoutDSP)
		path := filepath.Join(dst, "part-1", OwnedFeatFile)
		a, err := fileformat.ReadNPY(path)
		require.NoError(t, err)
		require.Equal(t, mem.Float32, a.DType)
		tt := a.Tensor()
		tt.Data = append([]byte(nil), tt.Data...)
		tt.DType = mem.Int32
		require.NoError(t, a.Close())
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.NoError(t, fileformat.WriteNPY(path, tt))
		st2, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, st.Size(), st2.Size(), "the same size: only the checksum tells")
		_, err = OpenPart(dst, 1, dataset.OpenOptions{})
		require.ErrorContains(t, err, "feat.npy holds int32 features, the partition's are float32")
	})
	for _, layout := range []Layout{LayoutDSP, LayoutSelfReliant} {
		t.Run("feature_file renamed "+layout.String(), func(t *testing.T) {
			dst := writeParts(t, layout)
			editPartMeta(t, dst, func(m map[string]any) {
				m["ranks"].([]any)[1].(map[string]any)["feature_file"] = "other.npy"
			})
			_, err := OpenPart(dst, 1, dataset.OpenOptions{})
			require.ErrorContains(t, err, `feature_file "other.npy" is not the`)
		})
	}
	t.Run("partition.json edited", func(t *testing.T) {
		dst := writeParts(t, LayoutHybrid)
		editPartMeta(t, dst, func(m map[string]any) {
			m["num_edges"] = m["num_edges"].(float64) * 2 // edge ids would pass up to twice the graph's
		})
		_, err := OpenPart(dst, 1, dataset.OpenOptions{})
		require.ErrorContains(t, err, "edited by hand")
		require.ErrorIs(t, err, errs.ErrIO)
		// Without the declared sum (written before it was recorded): opens.
		editPartMeta(t, dst, func(m map[string]any) { delete(m, "declared") })
		p, err := OpenPart(dst, 1, dataset.OpenOptions{})
		require.NoError(t, err)
		require.NoError(t, p.Close())
	})
}

// TestRankFeatBlocks: a byte of a rank's feat.npy flipped in place is an
// error at the first read of its block (it was served without verify).
func TestRankFeatBlocks(t *testing.T) {
	dst := writeParts(t, LayoutDSP)
	p, err := OpenPart(dst, 1, dataset.OpenOptions{})
	require.NoError(t, err)
	defer p.Close()
	path := filepath.Join(dst, "part-1", OwnedFeatFile)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	st, err := f.Stat()
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{p.OwnedFeat.Data[len(p.OwnedFeat.Data)-1] ^ 0x40}, st.Size()-1)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	dst2 := make([]byte, len(p.OwnedFeat.Data))
	err = feature.Copy(dst2, p.OwnedFeat.Data)
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, "feat.npy: block 0")
}

package rankpart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// writeParts partitions a random dataset into a new folder.
func writeParts(t *testing.T, layout Layout) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "parts")
	_, err := Partition(randomDataset(t, 60, 4), dst, PartitionOptions{Method: partition.Random, Parts: 3, Seed: 2, Layout: layout, Hops: 1})
	require.NoError(t, err)
	return dst
}

func TestOpenPartReadsOneFolder(t *testing.T) {
	for _, layout := range []Layout{LayoutDSP, LayoutSelfReliant, LayoutHybrid} {
		dst := writeParts(t, layout)
		// The other ranks' folders are not read: removing them changes nothing.
		require.NoError(t, os.RemoveAll(filepath.Join(dst, "part-0")))
		require.NoError(t, os.RemoveAll(filepath.Join(dst, "part-2")))
		p, err := OpenPart(dst, 1, dataset.OpenOptions{VerifyChecksums: true})
		require.NoError(t, err, layout)
		require.Equal(t, layout, p.Layout)
		require.Equal(t, p.Info.NumNodes, int64(len(p.GlobalIDs)))
		require.Equal(t, p.Info.NumEdges, int64(len(p.GlobalEIDs)))
		if layout == LayoutSelfReliant {
			require.Nil(t, p.Relabel)
			require.Nil(t, p.OwnedFeat)
		} else {
			// The assignment is not read: the rank's range and the maps
			// say who owns what.
			assign, err := fileformat.ReadNPY(filepath.Join(dst, PartAssignmentFile))
			require.NoError(t, err)
			r := p.Relabel
			require.Len(t, r.Offsets, 4)
			require.Equal(t, p.Info.NumOwned, p.OwnedFeat.Shape[0])
			// The whole maps stay on disk for whoever asks; the rank holds
			// its directory slice of old_to_new.
			n2o, err := fileformat.ReadNPY(filepath.Join(dst, NewToOldFile))
			require.NoError(t, err)
			o2n, err := fileformat.ReadNPY(filepath.Join(dst, OldToNewFile))
			require.NoError(t, err)
			newToOld, oldToNew := mem.Int64s(n2o.Data), mem.Int64s(o2n.Data)
			dlo, dhi := r.DirectoryOffsets[1], r.DirectoryOffsets[2]
			require.Equal(t, oldToNew[dlo:dhi], r.Directory)
			for i, v := range p.GlobalIDs[:p.Info.NumOwned] {
				require.Equal(t, int64(1), mem.Int64s(assign.Data)[v])
				require.Equal(t, r.Offsets[1]+int64(i), r.NewIDs[i])
				require.Equal(t, v, newToOld[r.NewIDs[i]])
			}
			for l, v := range p.GlobalIDs {
				require.Equal(t, r.NewIDs[l], oldToNew[v])
			}
			require.NoError(t, assign.Close())
			require.NoError(t, n2o.Close())
			require.NoError(t, o2n.Close())
		}
		require.NoError(t, p.Close())
		require.NoError(t, p.Close())
	}
}

func TestOpenPartRefusesDamage(t *testing.T) {
	dst := writeParts(t, LayoutDSP)
	_, err := OpenPart(dst, 3, dataset.OpenOptions{})
	require.ErrorContains(t, err, "rank = 3 is outside [0, 3)")
	_, err = OpenPart(dst, -1, dataset.OpenOptions{})
	require.ErrorContains(t, err, "outside")

	// A truncated id map: its size no longer matches partition.json.
	ids := filepath.Join(dst, "part-1", GlobalIDsFile)
	raw, err := os.ReadFile(ids)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(ids, raw[:len(raw)-8], 0o644))
	_, err = OpenPart(dst, 1, dataset.OpenOptions{})
	require.ErrorIs(t, err, errs.ErrIO)
	// The same size, other content: found with checksums.
	bad := append([]byte(nil), raw...)
	bad[len(bad)-1] ^= 0x40
	require.NoError(t, os.WriteFile(ids, bad, 0o644))
	_, err = OpenPart(dst, 1, dataset.OpenOptions{VerifyChecksums: true})
	require.ErrorIs(t, err, errs.ErrIO)
	require.NoError(t, os.WriteFile(ids, raw, 0o644))
	_, err = OpenPart(dst, 1, dataset.OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)

	// Rank folders swapped: partition.json's description catches it.
	metaPath := filepath.Join(dst, PartMetaFile)
	js, err := os.ReadFile(metaPath)
	require.NoError(t, err)
	var m PartMeta
	require.NoError(t, json.Unmarshal(js, &m))
	m.Ranks[0].Dir, m.Ranks[1].Dir = m.Ranks[1].Dir, m.Ranks[0].Dir
	swapped, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(metaPath, swapped, 0o644))
	_, err = OpenPart(dst, 1, dataset.OpenOptions{})
	require.ErrorContains(t, err, `want "part-1"`)

	// Not a partition at all.
	m.Format = "something"
	other, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(metaPath, other, 0o644))
	_, err = OpenPart(dst, 1, dataset.OpenOptions{})
	require.ErrorContains(t, err, `format "something"`)
	require.NoError(t, os.Remove(metaPath))
	_, err = OpenPart(dst, 1, dataset.OpenOptions{})
	require.Error(t, err)
}

package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// A dataset written today has its features' page sums: the disk tier
// checks every page it reads against them (the plan says so), and a byte
// flipped in feat.bin is an error naming the file and the page at the
// first read of its row from disk.
func TestDiskTierChecksPageSums(t *testing.T) {
	dir, _ := tinyDataset(t)
	g, err := OpenWith(dir, partition.Options{NumPatches: 1}, graph.COOOptions{}, OpenOptions{FeatureTier: TierDisk})
	require.NoError(t, err)
	defer g.Close()
	require.Contains(t, g.Plan().Report(), "disk reads verified: every page read, against feat.bin.pages")
	feat := filepath.Join(dir, dataset.FeatFile)
	f, err := os.OpenFile(feat, os.O_RDWR, 0)
	require.NoError(t, err)
	b := make([]byte, 1)
	_, err = f.ReadAt(b, 5000)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{b[0] ^ 1}, 5000)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	l, err := g.OpenLoader([]int64{5000 / 64}, sample.Request{Fanouts: []int{0}}, // the row of byte 5000
		pipeline.Options{BatchSize: 1, FeatureNames: []string{"feat"}}, nil)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, l.Start(0))
	_, err = l.Next(context.Background())
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, feat+": page 1 (bytes 4096 to 8191) has CRC-32C")
}

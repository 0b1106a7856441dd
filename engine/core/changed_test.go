//go:build unix

package core

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// changes are the ways a file of an open graph is written in place at the
// same size (issue 34): rewritten whole (truncated and written again, as
// open(path, "wb") does), zeroed, one byte flipped. Each then sets the
// file's modification time apart (bumped), as a write in a later tick of
// the file system's clock does: within one tick the times may stay equal,
// which only the racy window (fileio.RacyWindow, 0 here) covers.
var changes = map[string]func(t *testing.T, path string){
	"rewritten": func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for i := range b {
			b[i] ^= 0x55
		}
		require.NoError(t, os.WriteFile(path, b, 0o644)) // O_TRUNC: the same inode
		bumped(t, path)
	},
	"zeroed": func(t *testing.T, path string) {
		st, err := os.Stat(path)
		require.NoError(t, err)
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteAt(make([]byte, st.Size()), 0)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		bumped(t, path)
	},
	"byte flipped": func(t *testing.T, path string) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		require.NoError(t, err)
		b := make([]byte, 1)
		_, err = f.ReadAt(b, 1000)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte{b[0] ^ 0x08}, 1000)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		bumped(t, path)
	},
}

// bumped sets the modification time of the file at path apart from any
// it had (see changes).
func bumped(t *testing.T, path string) {
	st, err := os.Stat(path)
	require.NoError(t, err)
	at := st.ModTime().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, at, at))
}

// settled compares file times at once (fileio.RacyWindow 0): the test's
// files are seconds old at most, and without it every epoch start would
// check them again anyway.
func settled(t *testing.T) {
	old := fileio.RacyWindow
	fileio.RacyWindow = 0
	t.Cleanup(func() { fileio.RacyWindow = old })
}

// epochErr runs epoch e of l to its end and returns the error that ended
// it (nil: io.EOF).
func epochErr(t *testing.T, l *Loader, e uint64) error {
	t.Helper()
	require.NoError(t, l.Start(e))
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		b.Release()
	}
}

// A feature file written in place after an epoch read (and verified) every
// block of it: the next epoch fails with an error naming the file, through
// the mapping (no budget, and a budget it fits in) and the disk tier; it
// served the new bytes silently through the mapping. The epoch after an
// unchanged one, and a fresh graph over the unchanged file, still load.
func TestFeatureFileChangedUnderAnOpenGraph(t *testing.T) {
	settled(t)
	tiers := map[string]OpenOptions{
		"memory":           {},
		"memory by budget": {MemoryBudget: 1 << 30},
		"disk":             {FeatureTier: TierDisk},
		"disk, block sums": {FeatureTier: TierDisk}, // no page sums: a dataset of an earlier version
	}
	for tier, opt := range tiers {
		for how, change := range changes {
			t.Run(tier+"/"+how, func(t *testing.T) {
				dir, ds := tinyDataset(t)
				if tier == "disk, block sums" {
					withoutPageSums(t, dir)
				}
				g, err := OpenWith(dir, partition.Options{NumPatches: 1}, graph.COOOptions{}, opt)
				require.NoError(t, err)
				defer g.Close()
				want := TierMemory
				if opt.FeatureTier == TierDisk {
					want = TierDisk
				}
				require.Equal(t, want, g.Plan().FeatureTier)
				seeds := make([]int64, ds.Graph.NumNodes)
				for i := range seeds {
					seeds[i] = int64(i)
				}
				l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{0}},
					pipeline.Options{BatchSize: 100, FeatureNames: []string{"feat"}}, nil)
				require.NoError(t, err)
				defer l.Close()
				require.NoError(t, epochErr(t, l, 0)) // every row read, every block checked
				require.NoError(t, epochErr(t, l, 1)) // unchanged: nothing to say

				feat := filepath.Join(dir, dataset.FeatFile)
				change(t, feat)
				err = epochErr(t, l, 2)
				require.ErrorIs(t, err, errs.ErrIO)
				require.ErrorContains(t, err, feat+": ")
				require.ErrorContains(t, err, "the file is damaged or was changed")
				epoch, delivered, started := l.Position()
				require.Equal(t, []any{uint64(2), 0, true}, []any{epoch, delivered, started})
			})
		}
	}
}

// A CSC file written in place under an open graph whose topology is those
// files mapped: zeroed (every source node 0, a valid graph), rewritten or a
// byte flipped, the next epoch fails at its first batch with an error
// naming the file, where it sampled the new topology silently; nothing is
// sampled from it.
func TestCSCFileChangedUnderAnOpenGraph(t *testing.T) {
	settled(t)
	for _, name := range []string{dataset.CSCIndptrFile, dataset.CSCIndicesFile} {
		for how, change := range changes {
			t.Run(name+"/"+how, func(t *testing.T) {
				dir, ds := tinyDataset(t)
				require.NoError(t, dataset.WriteCSC(dir))
				g, err := OpenWith(dir, partition.Options{NumPatches: 1}, graph.COOOptions{}, OpenOptions{})
				require.NoError(t, err)
				defer g.Close()
				require.True(t, g.Plan().TopologyMapped)
				seeds := make([]int64, ds.Graph.NumNodes)
				for i := range seeds {
					seeds[i] = int64(i)
				}
				l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{-1}, Seed: 1},
					pipeline.Options{BatchSize: 100}, nil)
				require.NoError(t, err)
				defer l.Close()
				require.NoError(t, epochErr(t, l, 0))
				path := filepath.Join(dir, name)
				change(t, path)
				require.NoError(t, l.Start(1))
				_, err = l.Next(context.Background())
				require.ErrorIs(t, err, errs.ErrIO)
				require.ErrorContains(t, err, path+": CRC-32C is ")
				require.ErrorContains(t, err, "it changed while the dataset is open")
			})
		}
	}
}

// A feature file replaced by a rename is no change: the mapping keeps the
// file it was opened with, whose bytes are the ones verified, and the
// epochs go on; the file touched (new times, the same bytes) goes on too.
func TestFeatureFileReplacedOrTouchedGoesOn(t *testing.T) {
	settled(t)
	dir, ds := tinyDataset(t)
	g, err := OpenWith(dir, partition.Options{NumPatches: 1}, graph.COOOptions{}, OpenOptions{})
	require.NoError(t, err)
	defer g.Close()
	seeds := make([]int64, ds.Graph.NumNodes)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{0}}, pipeline.Options{BatchSize: 100, FeatureNames: []string{"feat"}}, nil)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, epochErr(t, l, 0))
	feat := filepath.Join(dir, dataset.FeatFile)
	b, err := os.ReadFile(feat)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(feat, b, 0o644)) // the same bytes, new times
	require.NoError(t, epochErr(t, l, 1))
	require.NoError(t, os.WriteFile(feat+".new", make([]byte, len(b)), 0o644))
	require.NoError(t, os.Rename(feat+".new", feat))
	require.NoError(t, epochErr(t, l, 2))
}

// withoutPageSums rewrites the graphferry.json in dir as a dataset written
// before page sums (and the declared sum) were recorded.
func withoutPageSums(t *testing.T, dir string) {
	path := filepath.Join(dir, dataset.MetaFile)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	blocks := m["blocks"].(map[string]any)
	delete(blocks, "pages")
	delete(blocks, "page_size")
	delete(m, "declared")
	raw, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o644))
}

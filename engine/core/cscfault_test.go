//go:build unix

package core

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// A CSC file truncated while a graph has it mapped: sampling (in the
// caller's goroutine and in the sampler's workers), a loader's epoch and a
// random walk give an error naming the file (errs.ErrIO, feature.ErrFault)
// where the process died of SIGBUS; the graph then closes.
func TestMappedTopologyTruncatedIsAnError(t *testing.T) {
	for _, name := range []string{dataset.CSCIndptrFile, dataset.CSCIndicesFile} {
		for _, threads := range []int{1, 4} {
			dir, _ := tinyDataset(t)
			require.NoError(t, dataset.WriteCSC(dir))
			g, err := OpenWith(dir, partition.Options{NumPatches: 1}, graph.COOOptions{}, OpenOptions{})
			require.NoError(t, err)
			require.True(t, g.Plan().TopologyMapped)
			seeds := make([]int64, 1000)
			for i := range seeds {
				seeds[i] = int64(i)
			}
			req := sample.Request{Fanouts: []int{-1, -1}, Seed: 1}
			b, err := g.Sample(seeds, req, threads, nil)
			require.NoError(t, err) // whole, it samples
			b.Release()

			path := filepath.Join(dir, name)
			require.NoError(t, os.Truncate(path, 0))
			wantErr := func(err error) {
				t.Helper()
				require.ErrorIs(t, err, errs.ErrIO, "%s, %d threads", name, threads)
				require.ErrorIs(t, err, feature.ErrFault)
				require.ErrorContains(t, err, path+": byte ")
				require.ErrorContains(t, err, "truncated or replaced while mapped")
			}
			_, err = g.Sample(seeds, req, threads, nil)
			wantErr(err)
			_, err = g.RandomWalk(seeds, sample.WalkRequest{Length: 20, Seed: 2}, threads, nil)
			wantErr(err)
			l, err := g.OpenLoader(seeds, req, pipeline.Options{BatchSize: 100, Threads: threads}, nil)
			require.NoError(t, err)
			require.NoError(t, l.Start(0))
			_, err = l.Next(context.Background())
			require.NotErrorIs(t, err, io.EOF)
			wantErr(err)
			require.NoError(t, l.Close())
			require.NoError(t, g.Close())
		}
	}
}

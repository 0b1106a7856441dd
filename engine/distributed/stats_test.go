package distributed

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// epochCount is what a consumer counts of an epoch: batches, and the rows
// and bytes of node data they carry (the features of every node, the
// labels of the seeds).
type epochCount struct {
	batches, rows, bytes int64
}

// consumeEpoch reads epoch e of l to its end, counting it.
func consumeEpoch(l *core.Loader, e uint64) (epochCount, error) {
	var c epochCount
	if err := l.Start(e); err != nil {
		return c, err
	}
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, err
		}
		c.batches++
		for _, t := range b.NodeData {
			c.rows += t.Shape[0]
			c.bytes += int64(len(t.Data))
		}
		b.Release()
	}
}

// requireStats checks a distributed loader's statistics after it read one
// epoch (epoch e, its first) that the consumer counted as c: every stage
// passed on every batch, the gathered rows are the consumer's (cold rows
// of host memory), and the clocks ran.
func requireStats(t *testing.T, s pipeline.Stats, workers int, e uint64, c epochCount) {
	t.Helper()
	require.Equal(t, workers, s.Workers)
	require.Equal(t, e, s.Epoch)
	require.Equal(t, int64(1), s.Epochs)
	cur := s.Current
	require.Positive(t, c.batches)
	require.Equal(t, c.batches, cur.Sampler.Batches)
	require.Equal(t, c.batches, cur.Loader.Batches)
	require.Equal(t, c.batches, cur.Consumer.Batches)
	require.Equal(t, c.rows, cur.Gathered.ColdRows)
	require.Zero(t, cur.Gathered.HotRows)
	require.Equal(t, c.bytes, cur.Gathered.Bytes[mem.KindHost])
	require.Positive(t, cur.Sampler.Busy)
	require.Positive(t, cur.Wall)
	require.Equal(t, cur.Consumer.Batches, s.Total.Consumer.Batches)
}

// TestDistLoaderStats: a distributed loader reports its pipeline's
// statistics (they were all zero but the epoch counters before the
// distributed loaders streamed through pipeline.Pipeline), over a host
// communicator (one worker) and a coordinated one (several).
func TestDistLoaderStats(t *testing.T) {
	seeds := make([]int64, 90)
	for i := range seeds {
		seeds[i] = int64(7*i+1) % testNodes
	}
	lopt := defaultLoader()
	lopt.BatchSize = 8
	const size = 2
	for _, workers := range []int{1, 3} {
		l := comm.NewLocal(size)
		mesh := coordinator.NewMesh(size)
		stats := make([]pipeline.Stats, size)
		counts := make([]epochCount, size)
		errc := make(chan error, size)
		var wg sync.WaitGroup
		for r := range size {
			g := newTestGraph(t, partition.Options{Method: partition.Random, NumPatches: size, Seed: 2})
			withNodeData(t, g)
			h, err := comm.NewHost(r, size, l.Exchanger(r))
			require.NoError(t, err)
			var c comm.Comm = h
			o := lopt
			if workers > 1 {
				coord, err := coordinator.New(coordinator.Config{Rank: r, Size: size, Transport: mesh.Endpoint(r)})
				require.NoError(t, err)
				c, err = CoordinatedComm(h, coord) // closed with the loader
				require.NoError(t, err)
				o.Workers = workers
			}
			ld, err := OpenLoader(g, c, seeds, defaultSample(), o, nil)
			require.NoError(t, err)
			require.Zero(t, ld.Stats().Epochs)
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if counts[r], err = consumeEpoch(ld, 4); err != nil {
					errc <- err
				}
				if err := ld.Close(); err != nil {
					errc <- err
				}
				stats[r] = ld.Stats() // also after Close
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			require.NoError(t, err)
		}
		for r := range size {
			require.Equal(t, int64(6), counts[r].batches) // 12 batches, 2 ranks
			requireStats(t, stats[r], workers, 4, counts[r])
		}
	}
}

// TestPartLoaderStats: the loader of a rank's part reports the rows its
// row exchange fetched from their owners (dsp), and a self-reliant part's
// loader those it gathered itself.
func TestPartLoaderStats(t *testing.T) {
	src, seeds := writeTestDataset(t)
	lopt := defaultLoader()
	lopt.BatchSize = 10
	const size = 2
	// A dsp part's loader over a host samples with one worker; a
	// self-reliant one with one per thread (defaultLoader's 2).
	for layout, workers := range map[rankpart.Layout]int{rankpart.LayoutDSP: 1, rankpart.LayoutSelfReliant: 2} {
		dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Range, Parts: size, Layout: layout, Hops: 2})
		l := comm.NewLocal(size)
		stats := make([]pipeline.Stats, size)
		counts := make([]epochCount, size)
		errc := make(chan error, size)
		var wg sync.WaitGroup
		for r := range size {
			p, err := OpenPart(dst, r, dataset.OpenOptions{})
			require.NoError(t, err)
			h, err := comm.NewHost(r, size, l.Exchanger(r))
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer p.Close()
				s := seeds
				if layout == rankpart.LayoutSelfReliant {
					s = ownSeeds(p)
				}
				ld, err := p.OpenLoader(h, s, defaultSample(), lopt, nil)
				if err != nil {
					errc <- err
					return
				}
				defer ld.Close()
				if counts[r], err = consumeEpoch(ld, 0); err != nil {
					errc <- err
				}
				stats[r] = ld.Stats()
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			require.NoError(t, err)
		}
		for r := range size {
			requireStats(t, stats[r], workers, 0, counts[r])
		}
	}
}

// ownSeeds returns the train seeds among the owned nodes of p (none when
// p has no train mask).
func ownSeeds(p *Part) []int64 {
	train, err := p.OwnedNodeData(dataset.TrainMaskKey, nil)
	if err != nil {
		return nil
	}
	var seeds []int64
	for i, v := range p.OwnedNodes() {
		if train.Data[i] != 0 {
			seeds = append(seeds, v)
		}
	}
	return seeds
}

package distributed

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
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

// readOneEpoch opens the loader of each of size ranks (open(r), all at
// once: opening may exchange), reads epoch e of each to its end and closes
// it, and returns each rank's statistics (read after Close) and what its
// consumer counted.
func readOneEpoch(t *testing.T, size int, e uint64, open func(r int) (*core.Loader, error)) ([]pipeline.Stats, []epochCount) {
	t.Helper()
	stats := make([]pipeline.Stats, size)
	counts := make([]epochCount, size)
	errc := make(chan error, 3*size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld, err := open(r)
			if err != nil {
				errc <- err
				return
			}
			if n := ld.Stats().Epochs; n != 0 {
				errc <- fmt.Errorf("rank %d: %d epochs before the first Start", r, n)
			}
			if counts[r], err = consumeEpoch(ld, e); err != nil {
				errc <- err
			}
			if err := ld.Close(); err != nil {
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
	return stats, counts
}

// TestDistLoaderStats: a distributed loader reports its pipeline's
// statistics (they were all zero but the epoch counters before the
// distributed loaders streamed through pipeline.Pipeline), over a host
// communicator (one worker) and a coordinated one (several).
func TestDistLoaderStats(t *testing.T) {
	seeds := make([]int64, 90)
	for i := range seeds {
		seeds[i] = int64(7*i+1) % testgraph.Nodes
	}
	lopt := testgraph.Loader()
	lopt.BatchSize = 8
	const size = 2
	for _, workers := range []int{1, 3} {
		l := comm.NewLocal(size)
		mesh := coordinator.NewMesh(size)
		graphs := make([]*core.Graph, size)
		comms := make([]comm.Comm, size)
		for r := range size {
			graphs[r] = newTestGraph(t, partition.Options{Method: partition.Random, NumPatches: size, Seed: 2})
			withNodeData(t, graphs[r])
			h, err := comm.NewHost(r, size, l.Exchanger(r))
			require.NoError(t, err)
			comms[r] = h
			if workers > 1 {
				coord, err := coordinator.New(coordinator.Config{Rank: r, Size: size, Transport: mesh.Endpoint(r)})
				require.NoError(t, err)
				comms[r], err = CoordinatedComm(h, coord) // closed with the loader
				require.NoError(t, err)
			}
		}
		o := lopt
		o.Workers = workers
		stats, counts := readOneEpoch(t, size, 4, func(r int) (*core.Loader, error) {
			return OpenLoader(graphs[r], comms[r], seeds, testgraph.Sample(), o, nil)
		})
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
	lopt := testgraph.Loader()
	lopt.BatchSize = 10
	const size = 2
	// A dsp part's loader over a host samples with one worker; a
	// self-reliant one with one per thread (testgraph.Loader's 2).
	for layout, workers := range map[rankpart.Layout]int{rankpart.LayoutDSP: 1, rankpart.LayoutSelfReliant: 2} {
		dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Range, Parts: size, Layout: layout, Hops: 2})
		l := comm.NewLocal(size)
		parts := make([]*Part, size)
		for r := range size {
			p, err := OpenPart(dst, r, dataset.OpenOptions{})
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })
			parts[r] = p
		}
		stats, counts := readOneEpoch(t, size, 0, func(r int) (*core.Loader, error) {
			h, err := comm.NewHost(r, size, l.Exchanger(r))
			if err != nil {
				return nil, err
			}
			s := seeds
			if layout == rankpart.LayoutSelfReliant {
				s = ownSeeds(parts[r])
			}
			return parts[r].OpenLoader(h, s, testgraph.Sample(), lopt, nil)
		})
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

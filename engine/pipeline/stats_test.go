package pipeline

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
)

// The default worker count follows the sampler's threads past the old cap
// of 4.
func TestDefaultWorkersFollowThreads(t *testing.T) {
	f := newFixture(t, 1, false, defaultSample)
	s, err := bind(f.p, comm.NewLocal(1), defaultSample, 8)
	require.NoError(t, err)
	pl, err := New(s, f.p, f.store, seedRange(90), defaultOpts(), nil)
	require.NoError(t, err)
	defer pl.Close()
	require.Equal(t, 8, pl.Stats().Workers)
}

// Batch, byte and row counts are exact, per epoch and in total; times add
// up to something for every stage that ran.
func TestStatsCounts(t *testing.T) {
	f := newFixture(t, 3, true, defaultSample)
	opt := defaultOpts()
	opt.Workers = 2
	pl, err := New(f.s, f.p, f.store, seedRange(90), opt, nil)
	require.NoError(t, err)
	defer pl.Close()
	require.Equal(t, Stats{Workers: 2}, pl.Stats())

	var wantBytes, wantRows int64
	for epoch := range uint64(2) {
		require.NoError(t, pl.Start(epoch))
		bs := drain(t, pl)
		var bytes, rows int64
		for _, b := range bs {
			for _, t := range b.NodeData {
				bytes += int64(len(t.Data))
				rows += t.Shape[0]
			}
		}
		releaseAll(bs)
		wantBytes += bytes
		wantRows += rows
		st := pl.Stats()
		require.Equal(t, epoch, st.Epoch)
		require.Equal(t, int64(epoch+1), st.Epochs)
		n := int64(len(bs))
		require.Equal(t, int64(pl.NumBatches()), n)
		for _, c := range []struct {
			c     Counters
			n     int64
			bytes int64
			rows  int64
		}{{st.Current, n, bytes, rows}, {st.Total, n * int64(epoch+1), wantBytes, wantRows}} {
			require.Equal(t, c.n, c.c.Sampler.Batches)
			require.Equal(t, c.n, c.c.Loader.Batches)
			require.Equal(t, c.n, c.c.Consumer.Batches)
			require.Equal(t, [feature.NumTiers]int64{c.bytes, 0, 0}, c.c.Gathered.Bytes)
			require.Equal(t, c.rows, c.c.Gathered.ColdRows)
			require.Zero(t, c.c.Gathered.HotRows)
			require.Zero(t, c.c.HitRate())
			require.Positive(t, c.c.Sampler.Busy)
			require.Positive(t, c.c.Loader.Busy)
			require.Positive(t, c.c.Consumer.Waiting)
			require.Positive(t, c.c.Wall)
		}
		require.GreaterOrEqual(t, st.Total.Wall, st.Current.Wall)
		// The epoch is over: its wall time no longer grows.
		require.Equal(t, st.Current.Wall, pl.Stats().Current.Wall)
	}
}

// tierGatherer serves even ids as hot rows from "device" memory, to check
// that the loader stage adds up a TierGatherer's counts.
type tierGatherer struct{ idGatherer }

func (g tierGatherer) GatherTiers(name string, dst []byte, ids []int64, threads int) (feature.TierCounts, error) {
	var tc feature.TierCounts
	for _, id := range ids {
		if id%2 == 0 {
			tc.HotRows++
			tc.Bytes[mem.KindDevice] += 8
		} else {
			tc.ColdRows++
			tc.Bytes[mem.KindPinned] += 8
		}
	}
	return tc, g.Gather(name, dst, ids, threads)
}

func TestStatsTierGatherer(t *testing.T) {
	f := newFixture(t, 1, false, defaultSample)
	g := tierGatherer{idGatherer{n: f.g.NumNodes}}
	opt := Options{BatchSize: 16, FeatureNames: []string{"id"}, Workers: 3}
	pl, err := New(f.s, f.p, g, seedRange(60), opt, nil)
	require.NoError(t, err)
	defer pl.Close()
	require.NoError(t, pl.Start(0))
	var hot, cold int64
	for {
		b, err := pl.Next(context.Background())
		if err != nil {
			break
		}
		for _, id := range i64(b.NodeData["id"]) {
			if id%2 == 0 {
				hot++
			} else {
				cold++
			}
		}
		b.Release()
	}
	c := pl.Stats().Current
	require.Equal(t, hot, c.Gathered.HotRows)
	require.Equal(t, cold, c.Gathered.ColdRows)
	require.Equal(t, [feature.NumTiers]int64{0, 8 * cold, 8 * hot}, c.Gathered.Bytes)
	require.InDelta(t, float64(hot)/float64(hot+cold), c.HitRate(), 1e-12)
}

func TestWorkerMemory(t *testing.T) {
	require.Equal(t, int64(2*4*1000+40*500+24*100), WorkerMemory(1000, 2, 100, 500))
	require.Equal(t, int64(16*100+40*500+24*100), WorkerMemory(1<<25, 1, 100, 500))
}

package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
)

// overlapGatherer is a store whose "feat" gathers (one per batch) count
// how many run at once; the first one waits, up to a second, for another
// to start, so that a loader gathering ahead is seen to overlap batches.
type overlapGatherer struct {
	*feature.Store
	mu       sync.Mutex
	running  int
	most     int
	started  int
	second   chan struct{}
	waitOnce bool
}

func (g *overlapGatherer) Gather(name string, dst []byte, ids []int64, threads int) error {
	if name != "feat" {
		return g.Store.Gather(name, dst, ids, threads)
	}
	g.mu.Lock()
	g.running++
	g.most = max(g.most, g.running)
	g.started++
	first := g.started == 1 && g.waitOnce
	if g.started == 2 {
		close(g.second)
	}
	g.mu.Unlock()
	if first {
		select {
		case <-g.second:
		case <-time.After(time.Second):
		}
	}
	err := g.Store.Gather(name, dst, ids, threads)
	g.mu.Lock()
	g.running--
	g.mu.Unlock()
	return err
}

// GatherTiers hides the Store's: the loader then calls Gather.
func (g *overlapGatherer) GatherTiers() {}

// With GatherAhead, the loader stage gathers batches at the same time, at
// most GatherAhead+1 of them, and delivers the same batches in the same
// order as without.
func TestGatherAheadSameBatches(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFixture(t, 2, true, defaultSample)
	alloc := mem.NewChecked(nil)
	epoch := func(ahead int, g feature.Gatherer) []*Batch {
		opt := defaultOpts()
		opt.GatherAhead = ahead
		opt.QueueCapacity = 4
		pl, err := New(f.s, f.p, g, seedRange(200), opt, alloc)
		require.NoError(t, err)
		defer func() { require.NoError(t, pl.Close()) }()
		var bs []*Batch
		for e := range uint64(2) {
			require.NoError(t, pl.Start(e))
			bs = drain(t, pl)
			if e == 0 {
				releaseAll(bs)
			}
		}
		st := pl.Stats().Current
		assert.Equal(t, int64(len(bs)), st.Loader.Batches)
		assert.Positive(t, st.Loader.Busy)
		return bs
	}
	want := epoch(0, f.store)
	for _, ahead := range []int{1, 3} {
		g := &overlapGatherer{Store: f.store, second: make(chan struct{}), waitOnce: true}
		got := epoch(ahead, g)
		require.Len(t, got, len(want))
		for i := range want {
			assert.Equal(t, int64(i), got[i].Index)
			tensorsEqual(t, want[i].Nodes, got[i].Nodes, fmt.Sprintf("ahead %d, batch %d nodes", ahead, i))
			for name, w := range want[i].NodeData {
				tensorsEqual(t, w, got[i].NodeData[name], fmt.Sprintf("ahead %d, batch %d %s", ahead, i, name))
			}
		}
		releaseAll(got)
		assert.GreaterOrEqual(t, g.most, 2, "ahead %d: batches gathered at the same time", ahead)
		assert.LessOrEqual(t, g.most, ahead+1, "ahead %d", ahead)
	}
	releaseAll(want)
	n, _ := alloc.Outstanding()
	assert.Zero(t, n)
	settleGoroutines(t, base)
}

// Leaving an epoch early, restarting and closing free the batches gathered
// ahead (TestErrorsAreCarried fails a gather with batches gathered ahead).
func TestGatherAheadStop(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFixture(t, 2, false, defaultSample)
	opt := defaultOpts()
	opt.GatherAhead = 2
	opt.QueueCapacity = 1
	alloc := mem.NewChecked(nil)
	pl, err := New(f.s, f.p, f.store, seedRange(200), opt, alloc)
	require.NoError(t, err)
	for e := range uint64(5) {
		require.NoError(t, pl.Start(e))
		b, err := pl.Next(context.Background())
		require.NoError(t, err)
		checkBatch(t, b)
		b.Release()
	}
	require.NoError(t, pl.Close())
	n, _ := alloc.Outstanding()
	assert.Zero(t, n, "batches gathered ahead of a stopped epoch are freed")

	settleGoroutines(t, base)
}

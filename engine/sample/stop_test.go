package sample

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/mem"
)

// cancellingComm cancels its context right after its call number at
// returned (1: the first hop's or step's shuffle, 2: its reshuffle), so
// that the cancellation lands inside the stage that follows, where only
// the stage's own polling can see it (one rank: no later exchange looks at
// the context).
type cancellingComm struct {
	*comm.Local
	at     int
	cancel context.CancelFunc
	mu     sync.Mutex
	calls  int
}

func (c *cancellingComm) AllToAll(ctx context.Context, rank int, send []mem.Buffer, st mem.Stream) ([]mem.Buffer, error) {
	out, err := c.Local.AllToAll(ctx, rank, send, st)
	c.mu.Lock()
	c.calls++
	if c.calls == c.at {
		c.cancel()
	}
	c.mu.Unlock()
	return out, err
}

// A single hop and a single walk step stop when their call is cancelled
// partway (in the sampling stage: at = 1; in the merge and the walkers'
// update: at = 2), with the context's error naming the hop or the step,
// for one and for several threads; the runtime then gives what a fresh one
// gives. Before, a hop or a step ran to its end and the cancellation was
// seen only at the next exchange (here: never, the call succeeded).
func TestCancelInsideOneHopOrStep(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	g := randomGraph(r, 3000, 300000, true) // 300K neighbours in one hop: several polls
	seeds := make([]int64, g.NumNodes)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	walkers := make([]int64, 200000)
	for i := range walkers {
		walkers[i] = int64(i) % g.NumNodes
	}
	for _, threads := range []int{1, 3} {
		for _, at := range []int{1, 2} {
			ctx, cancel := context.WithCancel(context.Background())
			c := &cancellingComm{Local: comm.NewLocal(1), at: at, cancel: cancel}
			s, err := newSampler(rangePartition(g, 1), c, options{Fanouts: []int{-1}, Threads: threads, Seed: 3})
			require.NoError(t, err)
			_, err = s.SampleBatches(ctx, [][]int64{seeds}, []uint64{0})
			require.ErrorIs(t, err, context.Canceled, "threads %d, at %d", threads, at)
			require.EqualError(t, err, "sample: hop 0: context canceled")
			got := sampleAll(t, s, [][]int64{seeds}, []uint64{0})
			want := sampleAll(t, mustSampler(t, rangePartition(g, 1), options{Fanouts: []int{-1}, Threads: threads, Seed: 3}), [][]int64{seeds}, []uint64{0})
			require.Equal(t, want[0].Nodes, got[0].Nodes)
			require.Equal(t, want[0].Blocks[0].Indices, got[0].Blocks[0].Indices)

			ctx, cancel = context.WithCancel(context.Background())
			c.mu.Lock()
			c.calls, c.at, c.cancel = 0, at, cancel
			c.mu.Unlock()
			_, err = walk(ctx, s, [][]int64{walkers}, []uint64{0}, 1, 0)
			require.ErrorIs(t, err, context.Canceled, "walk: threads %d, at %d", threads, at)
			require.EqualError(t, err, "sample: walk step 0: context canceled")
			w, err := walk(context.Background(), s, [][]int64{walkers[:10]}, []uint64{0}, 1, 0)
			require.NoError(t, err)
			require.Len(t, w[0].Traces, 20)
		}
	}
}

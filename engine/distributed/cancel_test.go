package distributed

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// These tests assert what ends a blocked Next (Close, cancellation, a
// peer's time-out) and with which error, never how fast: the latencies are
// logged, and a call that never returns fails at the watchdog (a hang, not
// a slow machine).
const watchdog = time.Minute

// await is the result of a Next running in the background, or a failure
// when it has not returned after the watchdog.
func await(t *testing.T, done <-chan nextResult) nextResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(watchdog):
		t.Fatalf("Next did not return within %v", watchdog)
		return nextResult{}
	}
}

// stuckLoader opens rank 0's loader of a group of size ranks whose other
// ranks never take part (their side of the Local never exchanges), so that
// its first batch can never arrive: the sampler worker blocks in the size
// exchange of its first collective. c wraps rank 0's Host (nil: the Host
// itself).
func stuckLoader(t *testing.T, size int, opt comm.HostOptions, wrap func(*comm.Host) comm.Comm) (*core.Loader, *mem.Checked) {
	t.Helper()
	g := newTestGraph(t, partition.Options{Method: partition.Range, NumPatches: size})
	withNodeData(t, g)
	h, err := comm.NewHostWith(0, size, comm.NewLocal(size).Exchanger(0), opt)
	require.NoError(t, err)
	var c comm.Comm = h
	if wrap != nil {
		c = wrap(h)
	}
	alloc := mem.NewChecked(mem.Heap{})
	seeds := []int64{1, 2, 3, 4, 5, 6, 7, 8}
	l, err := OpenLoader(g, c, seeds, testgraph.Sample(), testgraph.Loader(), alloc)
	require.NoError(t, err)
	require.NoError(t, l.Start(0))
	return l, alloc
}

type nextResult struct {
	err error
	at  time.Time
}

// nextInBackground calls l.Next(ctx) in a goroutine and checks that it is
// still waiting after a while.
func nextInBackground(t *testing.T, ctx context.Context, l *core.Loader) <-chan nextResult {
	t.Helper()
	done := make(chan nextResult, 1)
	go func() {
		b, err := l.Next(ctx)
		b.Release()
		done <- nextResult{err: err, at: time.Now()}
	}()
	select {
	case r := <-done:
		t.Fatalf("Next returned (%v) although no batch can arrive", r.err)
	case <-time.After(100 * time.Millisecond):
	}
	return done
}

func TestNextUnblocksOnClose(t *testing.T) {
	coordinated := func(h *comm.Host) comm.Comm {
		// Rank 1's coordinator never runs: rank 0 (the leader) waits for
		// its registration, never launching the exchange.
		coord, err := coordinator.New(coordinator.Config{Rank: 0, Size: 2, Transport: coordinator.NewMesh(2).Endpoint(0), Timeout: -1})
		require.NoError(t, err)
		c, err := CoordinatedComm(h, coord)
		require.NoError(t, err)
		return c
	}
	for name, wrap := range map[string]func(*comm.Host) comm.Comm{"host": nil, "coordinated": coordinated} {
		t.Run(name, func(t *testing.T) {
			l, alloc := stuckLoader(t, 2, comm.HostOptions{}, wrap)
			done := nextInBackground(t, context.Background(), l)
			t0 := time.Now()
			if err := l.Close(); name == "coordinated" {
				// The coordinator reports the exchange the close abandoned
				// (its peers fail at once rather than at a time-out).
				require.ErrorIs(t, err, coordinator.ErrFailed)
				require.ErrorContains(t, err, "context done while waiting for its launch")
			} else {
				require.NoError(t, err)
			}
			closed := time.Since(t0)
			r := await(t, done) // Close returns after the Next it interrupted
			t.Logf("%s: Next returned %v after Close began, Close took %v", name, r.at.Sub(t0), closed)
			require.ErrorIs(t, r.err, core.ErrClosedWhileWaiting)
			require.ErrorIs(t, r.err, errs.ErrClosed)
			n, _ := alloc.Outstanding()
			require.Zero(t, n, "every batch buffer was freed")
			// The handle's later calls fail as after any Close.
			_, err := l.Next(context.Background())
			require.ErrorIs(t, err, core.ErrLoaderClosed)
		})
	}
}

func TestNextUnblocksOnContext(t *testing.T) {
	l, alloc := stuckLoader(t, 2, comm.HostOptions{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := nextInBackground(t, ctx, l)
	t0 := time.Now()
	cancel()
	r := await(t, done)
	t.Logf("Next returned %v after its context was cancelled", r.at.Sub(t0))
	require.ErrorIs(t, r.err, context.Canceled)

	// The loader is unchanged: the next Next waits for the same batch (a
	// deadline ends it the same way), and Close still interrupts it.
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	_, err := l.Next(dctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	done = nextInBackground(t, context.Background(), l)
	require.NoError(t, l.Close())
	require.ErrorIs(t, await(t, done).err, core.ErrClosedWhileWaiting)
	n, _ := alloc.Outstanding()
	require.Zero(t, n)
	// A polled wait is waiting time, not the consumer's: no batch was
	// delivered, so the consumer was never busy.
	st := l.Stats()
	require.Zero(t, st.Current.Consumer.Busy)
	require.Zero(t, st.Current.Consumer.Batches)
	require.Greater(t, st.Current.Consumer.Waiting, 150*time.Millisecond)
}

// A rank that never answers fails its peers' Next once the Host's time-out
// has passed, naming it and the time-out.
func TestPeerTimeoutNamesRank(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		size int
		want string
	}{
		{2, "rank 1 did not answer within 300ms"},
		{3, "not every one of ranks [1 2] answered within 300ms"},
	} {
		l, _ := stuckLoader(t, tc.size, comm.HostOptions{Timeout: timeout}, nil)
		t0 := time.Now()
		_, err := l.Next(context.Background())
		took := time.Since(t0)
		t.Logf("%d ranks: Next failed after %v: %v", tc.size, took, err)
		require.ErrorIs(t, err, comm.ErrTimeout)
		require.ErrorIs(t, err, errs.ErrIO)
		require.ErrorContains(t, err, "rank 0 of "+string(rune('0'+tc.size))+", size exchange")
		require.ErrorContains(t, err, tc.want)
		// The loader's exchanges started after Start: it failed because
		// the time-out passed, not before.
		require.GreaterOrEqual(t, took, timeout-10*time.Millisecond)
		// The failure is final and the loader closes.
		_, err2 := l.Next(context.Background())
		require.True(t, errors.Is(err2, comm.ErrTimeout), "%v", err2)
		require.NoError(t, l.Close())
	}
}

// With a coordinator, an exchange the silent rank never registers fails
// every registered rank after the coordinator's time-out, naming it.
func TestCoordinatedTimeoutNamesRank(t *testing.T) {
	const timeout = 300 * time.Millisecond
	l, _ := stuckLoader(t, 2, comm.HostOptions{Timeout: timeout}, func(h *comm.Host) comm.Comm {
		coord, err := coordinator.New(coordinator.Config{Rank: 0, Size: 2, Transport: coordinator.NewMesh(2).Endpoint(0), Timeout: timeout})
		require.NoError(t, err)
		c, err := CoordinatedComm(h, coord)
		require.NoError(t, err)
		return c
	})
	t0 := time.Now()
	_, err := l.Next(context.Background())
	took := time.Since(t0)
	t.Logf("Next failed after %v: %v", took, err)
	require.ErrorIs(t, err, coordinator.ErrMismatch)
	require.ErrorContains(t, err, "registered by rank 0 but not by rank 1 within 300ms")
	require.GreaterOrEqual(t, took, timeout-10*time.Millisecond, "it failed because the time-out passed")
	require.ErrorIs(t, l.Close(), coordinator.ErrMismatch) // the coordinator's failure, once more
}

package comm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/mem"
)

func TestNewHostValidates(t *testing.T) {
	l := NewLocal(2)
	_, err := NewHost(0, 2, nil)
	require.ErrorContains(t, err, "exchanger is nil")
	_, err = NewHost(0, 0, l.Exchanger(0))
	require.ErrorContains(t, err, "size = 0")
	_, err = NewHost(2, 2, l.Exchanger(0))
	require.ErrorContains(t, err, "rank = 2 is out of range [0, 2)")
	h, err := NewHost(1, 2, l.Exchanger(1))
	require.NoError(t, err)
	require.Equal(t, []int{1}, h.LocalRanks())
	require.Equal(t, 2, h.Size())
	_, err = h.Dup()
	require.ErrorIs(t, err, errs.ErrNotSupported)
	_, err = h.AllToAll(context.Background(), 0, make([]mem.Buffer, 2), mem.NoStream)
	require.ErrorContains(t, err, "of rank 1 called for rank 0")
	_, err = h.AllToAll(context.Background(), 1, make([]mem.Buffer, 3), mem.NoStream)
	require.ErrorContains(t, err, "len(send) = 3")
	_, err = h.AllToAll(context.Background(), 1, []mem.Buffer{{}, mem.DeviceBuffer(1, 8, 0)}, mem.NoStream)
	require.ErrorContains(t, err, "host memory only")
	// Argument errors happen before any exchange: the group is still usable.
	require.NoError(t, h.Err())
}

// TestHostRounds runs rounds of variable-sized messages among Host ranks
// over a Local's exchanger and checks every rank receives what each peer
// sent it.
func TestHostRounds(t *testing.T) {
	const size, rounds = 3, 20
	l := NewLocal(size)
	var wg sync.WaitGroup
	errc := make(chan error, size)
	for r := range size {
		h, err := NewHost(r, size, l.Exchanger(r))
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range rounds {
				send := make([]mem.Buffer, size)
				for j := range send {
					send[j] = mem.HostBuffer(payload(k, r, j))
				}
				recv, err := h.AllToAll(context.Background(), r, send, mem.NoStream)
				if err != nil {
					errc <- err
					return
				}
				for j, b := range recv {
					if want := payload(k, j, r); string(b.Bytes()) != string(want) {
						errc <- fmt.Errorf("round %d: rank %d got %v from %d, want %v", k, r, b.Bytes(), j, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
}

type failingExchanger struct {
	sizes, data error
	neg         bool
}

func (f failingExchanger) ExchangeSizes(_ context.Context, _, recv []int64) error {
	if f.neg {
		recv[0] = -5
	}
	return f.sizes
}
func (f failingExchanger) Exchange(_ context.Context, _, _ [][]byte) error { return f.data }

func TestHostFailureIsFinal(t *testing.T) {
	for name, x := range map[string]failingExchanger{
		"sizes":    {sizes: errors.New("peer 1 closed the connection")},
		"data":     {data: errors.New("peer 1 closed the connection")},
		"negative": {neg: true},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := NewHost(0, 2, x)
			require.NoError(t, err)
			_, err = h.AllToAll(context.Background(), 0, make([]mem.Buffer, 2), mem.NoStream)
			require.ErrorIs(t, err, ErrHost)
			require.ErrorIs(t, err, errs.ErrIO)
			require.ErrorContains(t, err, "rank 0 of 2")
			if name == "negative" {
				require.ErrorContains(t, err, "rank 0 announced a message of -5 bytes")
			} else {
				require.ErrorContains(t, err, "peer 1 closed the connection")
			}
			// Final: later calls fail the same way, without calling the host.
			_, err2 := h.AllToAll(context.Background(), 0, make([]mem.Buffer, 2), mem.NoStream)
			require.Equal(t, err, err2)
			require.Equal(t, err, h.Err())
		})
	}
}

func TestHostCancelledBeforeStart(t *testing.T) {
	h, err := NewHost(0, 1, NewLocal(1).Exchanger(0))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.AllToAll(ctx, 0, make([]mem.Buffer, 1), mem.NoStream)
	require.ErrorIs(t, err, context.Canceled)
	// Nothing was exchanged: the communicator still works.
	recv, err := h.AllToAll(context.Background(), 0, []mem.Buffer{mem.HostBuffer([]byte("x"))}, mem.NoStream)
	require.NoError(t, err)
	require.Equal(t, "x", string(recv[0].Bytes()))
}

// A rank whose peer never exchanges: the time-out fails the Host for good,
// naming the silent rank; a cancelled ctx ends the wait the same way.
func TestHostStopsWaiting(t *testing.T) {
	_, err := NewHostWith(0, 2, NewLocal(2).Exchanger(0), HostOptions{Timeout: -time.Second})
	require.ErrorContains(t, err, "time-out = -1s is negative")

	h, err := NewHostWith(0, 2, NewLocal(2).Exchanger(0), HostOptions{Timeout: 100 * time.Millisecond})
	require.NoError(t, err)
	require.Equal(t, 100*time.Millisecond, h.Timeout())
	t0 := time.Now()
	_, err = h.AllToAll(context.Background(), 0, make([]mem.Buffer, 2), mem.NoStream)
	require.GreaterOrEqual(t, time.Since(t0), 100*time.Millisecond)
	require.ErrorIs(t, err, ErrTimeout)
	require.ErrorIs(t, err, ErrHost)
	require.ErrorContains(t, err, "rank 0 of 2, size exchange: comm: no answer within the time-out: rank 1 did not answer within 100ms")
	require.Equal(t, err, h.Err())

	h, err = NewHost(1, 2, NewLocal(2).Exchanger(1))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = h.AllToAll(ctx, 1, make([]mem.Buffer, 2), mem.NoStream)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "rank 1 of 2 stopped waiting for the host's size exchange (the group is out of step)")
	// Final, even with a live context: the exchange was left half done.
	_, err2 := h.AllToAll(context.Background(), 1, make([]mem.Buffer, 2), mem.NoStream)
	require.Equal(t, err, err2)
}

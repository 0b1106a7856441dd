package comm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/mem"
)

// hostBufs wraps byte slices as host buffers (nil stays nil).
func hostBufs(bs [][]byte) []mem.Buffer {
	if bs == nil {
		return nil
	}
	out := make([]mem.Buffer, len(bs))
	for i, b := range bs {
		out[i] = mem.HostBuffer(b)
	}
	return out
}

// payload encodes (round, from, to) repeated a variable number of times.
func payload(round, from, to int) []byte {
	n := (round*7 + from*3 + to) % 5 // 0..4 repetitions, 0 gives a nil buffer
	if n == 0 {
		return nil
	}
	b := make([]byte, 0, 24*n)
	for i := 0; i < n; i++ {
		b = binary.LittleEndian.AppendUint64(b, uint64(round))
		b = binary.LittleEndian.AppendUint64(b, uint64(from))
		b = binary.LittleEndian.AppendUint64(b, uint64(to))
	}
	return b
}

func TestLocalRounds(t *testing.T) {
	for _, size := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			l := NewLocal(size)
			assert.Equal(t, size, l.Size())
			const rounds = 200
			var wg sync.WaitGroup
			errs := make([]error, size)
			for r := 0; r < size; r++ {
				wg.Add(1)
				go func(rank int) {
					defer wg.Done()
					for k := 0; k < rounds; k++ {
						send := make([][]byte, size)
						for j := range send {
							send[j] = payload(k, rank, j)
						}
						recv, err := l.AllToAll(context.Background(), rank, hostBufs(send), mem.NoStream)
						if err != nil {
							errs[rank] = err
							return
						}
						for j := range recv {
							if want := payload(k, j, rank); string(recv[j].Bytes()) != string(want) {
								errs[rank] = fmt.Errorf("round %d rank %d: recv[%d] = %v, want %v", k, rank, j, recv[j], want)
								return
							}
						}
					}
				}(r)
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			l.mu.Lock()
			assert.Empty(t, l.rounds, "every round is collected and forgotten")
			l.mu.Unlock()
		})
	}
}

func TestLocalCancelPropagates(t *testing.T) {
	const size = 4
	l := NewLocal(size)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errs := make([]error, size)
	// Ranks 0..2 call; rank 3 never does, so they block until rank 0's context is cancelled.
	for r := 0; r < size-1; r++ {
		wg.Add(1)
		go func(rank int) {
			defer wg.Done()
			c := context.Background()
			if rank == 0 {
				c = ctx
			}
			_, errs[rank] = l.AllToAll(c, rank, hostBufs(make([][]byte, size)), mem.NoStream)
		}(r)
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ranks still blocked after cancellation")
	}
	assert.ErrorIs(t, errs[0], context.Canceled)
	assert.ErrorIs(t, errs[1], ErrAborted)
	assert.ErrorIs(t, errs[2], ErrAborted)
	assert.ErrorIs(t, errs[1], context.Canceled, "the cause is kept")

	// Later calls, by any rank, fail at once.
	_, err := l.AllToAll(context.Background(), 3, hostBufs(make([][]byte, size)), mem.NoStream)
	assert.ErrorIs(t, err, ErrAborted)
}

func TestLocalCancelledBeforeCall(t *testing.T) {
	l := NewLocal(2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := l.AllToAll(ctx, 0, hostBufs(make([][]byte, 2)), mem.NoStream)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = l.AllToAll(context.Background(), 1, hostBufs(make([][]byte, 2)), mem.NoStream)
	assert.ErrorIs(t, err, ErrAborted)
}

func TestLocalBadArguments(t *testing.T) {
	l := NewLocal(2)
	_, err := l.AllToAll(context.Background(), 2, hostBufs(make([][]byte, 2)), mem.NoStream)
	assert.EqualError(t, err, "comm: rank = 2 is out of range [0, 2)")
	_, err = l.AllToAll(context.Background(), 0, hostBufs(make([][]byte, 2)), mem.NoStream)
	assert.ErrorIs(t, err, ErrAborted, "a broken collective aborts the Local")

	l = NewLocal(2)
	_, err = l.AllToAll(context.Background(), 1, hostBufs(make([][]byte, 3)), mem.NoStream)
	assert.EqualError(t, err, "comm: rank 1: len(send) = 3 (want 2, one buffer per rank)")
	_, err = l.AllToAll(context.Background(), -1, hostBufs(nil), mem.NoStream)
	assert.Error(t, err)

	_, err = NewLocal(0).AllToAll(context.Background(), 0, hostBufs(nil), mem.NoStream)
	assert.EqualError(t, err, "comm: Local has size 0 (want >= 1)")
	var nl *Local
	_, err = nl.AllToAll(context.Background(), 0, hostBufs(nil), mem.NoStream)
	assert.Error(t, err)
}

func TestLocalAbortWakesRankAhead(t *testing.T) {
	// Rank 0 runs ahead into round 1 while rank 1 is still in round 0's
	// aftermath; an abort must wake it.
	l := NewLocal(2)
	var wg sync.WaitGroup
	wg.Add(2)
	var err0 error
	go func() {
		defer wg.Done()
		if _, err := l.AllToAll(context.Background(), 0, hostBufs(make([][]byte, 2)), mem.NoStream); err != nil {
			err0 = err
			return
		}
		_, err0 = l.AllToAll(context.Background(), 0, hostBufs(make([][]byte, 2)), mem.NoStream)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer wg.Done()
		_, err := l.AllToAll(context.Background(), 1, hostBufs(make([][]byte, 2)), mem.NoStream)
		if err != nil {
			return
		}
		cancel()
		_, _ = l.AllToAll(ctx, 1, hostBufs(make([][]byte, 2)), mem.NoStream)
	}()
	wg.Wait()
	assert.True(t, errors.Is(err0, ErrAborted) || err0 == nil, "got %v", err0)
}

// A Dup's rounds are its own: ranks exchanging on l and on its dup at the
// same time never see each other's buffers, and a dup of an aborted Local
// works.
func TestLocalDupIndependent(t *testing.T) {
	const size = 3
	l := NewLocal(size)
	d, err := l.Dup()
	require.NoError(t, err)
	require.Equal(t, size, d.Size())
	var wg sync.WaitGroup
	for _, c := range []Comm{l, d} {
		for r := 0; r < size; r++ {
			wg.Add(1)
			go func(c Comm, r int) {
				defer wg.Done()
				tag := byte(0)
				if c == d {
					tag = 1
				}
				for round := 0; round < 20; round++ {
					send := make([][]byte, size)
					for j := range send {
						send[j] = []byte{tag, byte(r), byte(j), byte(round)}
					}
					recv, err := c.AllToAll(context.Background(), r, hostBufs(send), mem.NoStream)
					if !assert.NoError(t, err) {
						return
					}
					for j, b := range recv {
						assert.Equal(t, []byte{tag, byte(j), byte(r), byte(round)}, b.Bytes())
					}
				}
			}(c, r)
		}
	}
	wg.Wait()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.AllToAll(ctx, 0, hostBufs(make([][]byte, size)), mem.NoStream)
	require.Error(t, err)
	d2, err := l.Dup()
	require.NoError(t, err)
	recv, err := runRound(d2, size)
	require.NoError(t, err)
	require.Len(t, recv, size)
}

// runRound runs one round on c with every rank sending its rank number.
func runRound(c Comm, size int) ([][]mem.Buffer, error) {
	out := make([][]mem.Buffer, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := 0; r < size; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			send := make([][]byte, size)
			for j := range send {
				send[j] = []byte{byte(r)}
			}
			out[r], errs[r] = c.AllToAll(context.Background(), r, hostBufs(send), mem.NoStream)
		}(r)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Local moves host and pinned buffers and refuses device buffers, aborting
// the collective (the other ranks must not wait for a round that cannot
// complete).
func TestLocalMemoryKinds(t *testing.T) {
	l := NewLocal(2)
	require.Equal(t, []int{0, 1}, l.LocalRanks())
	var wg sync.WaitGroup
	wg.Add(1)
	var recv0 []mem.Buffer
	var err0 error
	go func() {
		defer wg.Done()
		recv0, err0 = l.AllToAll(context.Background(), 0, []mem.Buffer{mem.HostBuffer([]byte{1}), mem.PinnedBuffer([]byte{2, 3})}, mem.NoStream)
	}()
	recv1, err := l.AllToAll(context.Background(), 1, []mem.Buffer{mem.PinnedBuffer([]byte{4}), {}}, mem.NoStream)
	wg.Wait()
	require.NoError(t, err0)
	require.NoError(t, err)
	require.Equal(t, []byte{1}, recv0[0].Bytes())
	require.Equal(t, mem.KindPinned, recv0[1].Device().Kind)
	require.Equal(t, []byte{4}, recv0[1].Bytes())
	require.Equal(t, []byte{2, 3}, recv1[0].Bytes())
	require.Equal(t, 0, recv1[1].Len())

	dev := []mem.Buffer{mem.DeviceBuffer(0x1000, 8, 0), {}}
	_, err = l.AllToAll(context.Background(), 0, dev, mem.NoStream)
	require.EqualError(t, err, "comm: rank 0: send[0] is device:0 memory; Local moves host memory only")
	_, err = l.AllToAll(context.Background(), 1, make([]mem.Buffer, 2), mem.NoStream)
	require.ErrorIs(t, err, ErrAborted)
	require.Empty(t, NewLocal(0).LocalRanks())
}

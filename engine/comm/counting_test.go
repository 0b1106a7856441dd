package comm

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/mem"
)

// runRounds runs rounds collectives of payload() messages on every rank of
// c concurrently and returns what each rank received, concatenated.
func runRounds(t *testing.T, c Comm, rounds int) [][]byte {
	t.Helper()
	size := c.Size()
	got := make([][]byte, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range rounds {
				send := make([][]byte, size)
				for j := range send {
					send[j] = payload(k, r, j)
				}
				recv, err := c.AllToAll(context.Background(), r, hostBufs(send), mem.NoStream)
				if err != nil {
					errs[r] = err
					return
				}
				for _, b := range recv {
					got[r] = append(got[r], b.Bytes()...)
				}
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		require.NoError(t, err, "rank %d", r)
	}
	return got
}

func TestCountingCountsEveryRankAndPhase(t *testing.T) {
	const size, rounds = 3, 7
	// Even calls "request", odd calls "answer", as a sampler's hops.
	phase := func(_ int, call int64) string { return [2]string{"request", "answer"}[call%2] }
	c, err := NewCounting(NewLocal(size), phase)
	require.NoError(t, err)
	require.Equal(t, size, c.Size())
	require.Equal(t, []int{0, 1, 2}, c.LocalRanks())

	got := runRounds(t, c, rounds)
	// Results are those of the bare Local.
	want := runRounds(t, NewLocal(size), rounds)
	require.Equal(t, want, got)

	// Expected counts from the payloads themselves.
	wantRank := make([]map[string]Traffic, size)
	for r := range size {
		wantRank[r] = map[string]Traffic{}
		for k := range rounds {
			p := phase(r, int64(k))
			tr := wantRank[r][p]
			tr.Calls++
			for j := range size {
				n := int64(len(payload(k, r, j)))
				switch {
				case j == r:
					tr.SelfBytes += n
				case n > 0:
					tr.Bytes += n
					tr.Messages++
				}
			}
			wantRank[r][p] = tr
		}
	}
	all := map[string]Traffic{}
	var total Traffic
	for r := range size {
		require.Equal(t, wantRank[r], c.RankTraffic(r), "rank %d", r)
		for p, tr := range wantRank[r] {
			all[p] = all[p].Add(tr)
			total = total.Add(tr)
		}
	}
	require.Equal(t, all, c.Traffic())
	require.Equal(t, total, c.Total())
	require.Equal(t, int64(size*rounds), total.Calls)
	require.Positive(t, total.Bytes)
	require.Positive(t, total.SelfBytes)

	c.Reset()
	require.Equal(t, Traffic{}, c.Total())
	require.Empty(t, c.Traffic())
}

func TestCountingNumbersCallsPerRankFromReset(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	phase := func(rank int, call int64) string {
		mu.Lock()
		seen[fmt.Sprint(rank, "/", call)] = true
		mu.Unlock()
		return fmt.Sprint("call", call)
	}
	c, err := NewCounting(NewLocal(2), phase)
	require.NoError(t, err)
	runRounds(t, c, 3)
	require.Len(t, c.Traffic(), 3)
	require.Equal(t, int64(2), c.Traffic()["call2"].Calls)
	c.Reset()
	runRounds(t, c, 1)
	// After Reset the numbering restarts: only call0 again.
	require.Equal(t, map[string]bool{"0/0": true, "0/1": true, "0/2": true, "1/0": true, "1/1": true, "1/2": true}, seen)
	require.Len(t, c.Traffic(), 1)
	require.Equal(t, int64(2), c.Traffic()["call0"].Calls)
}

func TestCountingDupIsCountedWithItsParent(t *testing.T) {
	c, err := NewCounting(NewLocal(2), nil)
	require.NoError(t, err)
	d, err := c.Dup()
	require.NoError(t, err)
	require.IsType(t, &Counting{}, d)
	runRounds(t, d, 2)
	dt := d.(*Counting).Total()
	require.Equal(t, int64(4), dt.Calls)
	// The parent sees its Dup's traffic; its own numbering is untouched.
	require.Equal(t, dt, c.Total())
	runRounds(t, c, 1)
	require.Equal(t, int64(6), c.Total().Calls)
	c.Reset()
	require.Equal(t, Traffic{}, c.Total())
	require.Equal(t, Traffic{}, d.(*Counting).Total())
}

func TestCountingPassesErrorsThrough(t *testing.T) {
	_, err := NewCounting(nil, nil)
	require.Error(t, err)

	c, err := NewCounting(NewLocal(2), nil)
	require.NoError(t, err)
	// A rank out of range is the inner comm's error, and is not counted.
	_, err = c.AllToAll(context.Background(), 5, make([]mem.Buffer, 2), mem.NoStream)
	require.ErrorContains(t, err, "out of range")
	require.Equal(t, Traffic{}, c.Total())
	// The Local is now aborted: later calls fail through the wrapper too.
	_, err = c.AllToAll(context.Background(), 0, make([]mem.Buffer, 2), mem.NoStream)
	require.ErrorIs(t, err, ErrAborted)

	var nilc *Counting
	_, err = nilc.AllToAll(context.Background(), 0, nil, mem.NoStream)
	require.Error(t, err)
}

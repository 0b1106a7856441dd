package par

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestForCoversEveryIndexOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 7} {
		for _, n := range []int{0, 1, 5, 100, 1001} {
			seen := make([]atomic.Int32, n)
			var maxWorker atomic.Int64
			For(n, 7, threads, func(w, lo, hi int) {
				if int64(w) > maxWorker.Load() {
					maxWorker.Store(int64(w))
				}
				for i := lo; i < hi; i++ {
					seen[i].Add(1)
				}
			})
			for i := range seen {
				require.EqualValues(t, 1, seen[i].Load(), "threads %d n %d index %d", threads, n, i)
			}
			require.Less(t, maxWorker.Load(), int64(Threads(threads)))
		}
	}
}

func TestForErrReturnsTheLowestChunksError(t *testing.T) {
	for _, threads := range []int{1, 4} {
		err := ForErr(int64(1000), 10, threads, func(lo, hi int64) error {
			if lo >= 300 && lo%200 == 0 {
				return fmt.Errorf("chunk at %d", lo)
			}
			return nil
		})
		require.EqualError(t, err, "chunk at 400", "threads %d", threads)
	}
	require.NoError(t, ForErr(0, 10, 4, func(lo, hi int) error { return errors.New("never") }))
}

func TestChunksAndRows(t *testing.T) {
	n := int64(3*MinGrain + 17)
	k := ChunkCount(n, 8)
	require.Equal(t, 3, k)
	require.Equal(t, 1, ChunkCount(10, 8))
	var sum atomic.Int64
	Chunks(n, k, func(c int, lo, hi int64) {
		l, h := ChunkBounds(n, k, c)
		require.Equal(t, l, lo)
		require.Equal(t, h, hi)
		sum.Add(hi - lo)
	})
	require.Equal(t, n, sum.Load())

	// Rows: 100 rows, one of them heavy; every row once.
	indptr := make([]int64, 101)
	for r := 1; r <= 100; r++ {
		indptr[r] = indptr[r-1] + 10
		if r == 50 {
			indptr[r] += 4 * MinGrain
		}
	}
	seen := make([]atomic.Int32, 100)
	Rows(indptr, 8, func(lo, hi int64) {
		for r := lo; r < hi; r++ {
			seen[r].Add(1)
		}
	})
	for r := range seen {
		require.EqualValues(t, 1, seen[r].Load(), "row %d", r)
	}
	require.NoError(t, FirstError([]error{nil, nil}))
	require.EqualError(t, FirstError([]error{nil, errors.New("a"), errors.New("b")}), "a")
}

// fakeFault is a panic value like a memory fault's (it carries an address).
type fakeFault struct{ addr uintptr }

func (f fakeFault) Error() string { return "fault" }
func (f fakeFault) Addr() uintptr { return f.addr }

// Workers run with the caller's SetPanicOnFault, and a fault one meets is
// raised again in the caller's goroutine (where a recover turns it into an
// error) after every worker returned, from For, Chunks and Rows.
func TestWorkerFaultReachesCaller(t *testing.T) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	var inherited, ran atomic.Int64
	body := func(lo int64) {
		ran.Add(1)
		if debug.SetPanicOnFault(true) {
			inherited.Add(1)
		}
		if lo == 0 {
			panic(fakeFault{addr: 0x1234})
		}
	}
	loops := map[string]func(){
		"For":    func() { For(int64(64), 1, 4, func(_ int, lo, _ int64) { body(lo) }) },
		"Chunks": func() { Chunks(64, 4, func(_ int, lo, _ int64) { body(lo) }) },
		"Rows": func() {
			indptr := make([]int64, 1<<17)
			for i := range indptr {
				indptr[i] = int64(i)
			}
			Rows(indptr, 4, func(lo, _ int64) { body(lo) })
		},
	}
	for name, loop := range loops {
		inherited.Store(0)
		ran.Store(0)
		var got any
		func() {
			defer func() { got = recover() }()
			loop()
		}()
		require.Equal(t, fakeFault{addr: 0x1234}, got, name)
		require.Equal(t, ran.Load(), inherited.Load(), name)
		require.Greater(t, ran.Load(), int64(1), name)
	}
}

// ForStop covers every index once when stop stays false, and hands out no
// chunk after stop turned true, with one worker and with several.
func TestForStop(t *testing.T) {
	for _, threads := range []int{1, 4} {
		seen := make([]atomic.Int32, 10000)
		ForStop(len(seen), 100, threads, func() bool { return false }, func(_ int, lo, hi int) {
			require.LessOrEqual(t, hi-lo, 100)
			for i := lo; i < hi; i++ {
				seen[i].Add(1)
			}
		})
		for i := range seen {
			require.EqualValues(t, 1, seen[i].Load(), "index %d, %d threads", i, threads)
		}
		var chunks, stopped atomic.Int64
		ForStop(10000, 100, threads, func() bool { return stopped.Load() != 0 }, func(_ int, lo, _ int) {
			if chunks.Add(1) == 5 {
				stopped.Store(1)
			}
		})
		require.Less(t, chunks.Load(), int64(5+threads), "%d threads", threads)
	}
}

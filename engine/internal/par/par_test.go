package par

import (
	"errors"
	"fmt"
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

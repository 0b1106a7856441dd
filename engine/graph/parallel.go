package graph

import (
	"runtime"
	"sort"
	"sync"
)

// minGrain is the smallest amount of work (elements) worth a goroutine.
const minGrain = 1 << 15

// threadCount resolves a Threads option: <= 0 means GOMAXPROCS.
func threadCount(t int) int {
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	return t
}

// chunkCount returns how many chunks to split n elements into with at most
// threads chunks and at least minGrain elements per chunk (always >= 1).
func chunkCount(n int64, threads int) int {
	k := int64(threadCount(threads))
	if m := n / minGrain; m < k {
		k = m
	}
	if k < 1 {
		k = 1
	}
	return int(k)
}

// chunkBounds returns the half-open range of chunk c when n elements are
// split into k nearly equal chunks.
func chunkBounds(n int64, k, c int) (lo, hi int64) {
	return n * int64(c) / int64(k), n * int64(c+1) / int64(k)
}

// parallelChunks splits [0, n) into k chunks and runs fn(c, lo, hi) for
// each, concurrently when k > 1. It returns when all are done.
func parallelChunks(n int64, k int, fn func(c int, lo, hi int64)) {
	if k <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	wg.Add(k)
	for c := 0; c < k; c++ {
		lo, hi := chunkBounds(n, k, c)
		go func() {
			defer wg.Done()
			fn(c, lo, hi)
		}()
	}
	wg.Wait()
}

// parallelRows splits the rows [0, len(indptr)-1) into at most k chunks
// (k <= 0: GOMAXPROCS) holding about the same number of entries (by
// indptr) and runs fn(lo, hi) on each row range concurrently.
func parallelRows(indptr []int64, k int, fn func(lo, hi int64)) {
	n := int64(len(indptr) - 1)
	if n <= 0 {
		return
	}
	work := indptr[n] + n // entries plus a per-row cost
	k = chunkCount(work, k)
	if k <= 1 {
		fn(0, n)
		return
	}
	bounds := make([]int64, k+1)
	bounds[k] = n
	for c := 1; c < k; c++ {
		target := work * int64(c) / int64(k)
		// First row r whose cumulative work indptr[r]+r reaches target.
		bounds[c] = int64(sort.Search(int(n), func(r int) bool { return indptr[r]+int64(r) >= target }))
		if bounds[c] < bounds[c-1] {
			bounds[c] = bounds[c-1]
		}
	}
	var wg sync.WaitGroup
	for c := 0; c < k; c++ {
		lo, hi := bounds[c], bounds[c+1]
		if lo == hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// firstError returns the first non-nil error in errs (chunk order), so that
// a parallel check reports the same error as a sequential one.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

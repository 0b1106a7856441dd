package partition

import (
	"runtime"
	"sort"
	"sync"
)

// minGrain is the smallest amount of work (elements) worth a goroutine.
const minGrain = 1 << 15

// chunkCount returns how many chunks to split n elements into: at most
// GOMAXPROCS, at least minGrain elements each, and always >= 1.
func chunkCount(n int64) int {
	k := int64(runtime.GOMAXPROCS(0))
	if m := n / minGrain; m < k {
		k = m
	}
	return int(max(k, 1))
}

// parallelChunks splits [0, n) into k nearly equal chunks and runs
// fn(c, lo, hi) for each, concurrently when k > 1.
func parallelChunks(n int64, k int, fn func(c int, lo, hi int64)) {
	if k <= 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	wg.Add(k)
	for c := 0; c < k; c++ {
		lo, hi := n*int64(c)/int64(k), n*int64(c+1)/int64(k)
		go func() {
			defer wg.Done()
			fn(c, lo, hi)
		}()
	}
	wg.Wait()
}

// parallelRows splits the rows of a row pointer into chunks holding about
// the same number of entries plus rows, and runs fn(lo, hi) on each
// concurrently.
func parallelRows(indptr []int64, fn func(lo, hi int64)) {
	n := int64(len(indptr) - 1)
	if n <= 0 {
		return
	}
	work := indptr[n] + n
	k := chunkCount(work)
	if k <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	lo := int64(0)
	for c := 1; c <= k; c++ {
		hi := n
		if c < k {
			target := work * int64(c) / int64(k)
			hi = max(lo, int64(sort.Search(int(n), func(r int) bool { return indptr[r]+int64(r) >= target })))
		}
		if hi > lo {
			wg.Add(1)
			go func(lo, hi int64) {
				defer wg.Done()
				fn(lo, hi)
			}(lo, hi)
		}
		lo = hi
	}
	wg.Wait()
}

// prefixSum turns a[1:] from counts into a running sum in place (a[0] is
// left as is and added to everything), in parallel over blocks.
func prefixSum(a []int64) {
	n := int64(len(a) - 1)
	if n <= 0 {
		return
	}
	k := chunkCount(n)
	sums := make([]int64, k)
	parallelChunks(n, k, func(c int, lo, hi int64) {
		var s int64
		for _, x := range a[lo+1 : hi+1] {
			s += x
		}
		sums[c] = s
	})
	run := a[0]
	for c, s := range sums {
		sums[c] = run
		run += s
	}
	parallelChunks(n, k, func(c int, lo, hi int64) {
		run := sums[c]
		for i := lo + 1; i <= hi; i++ {
			run += a[i]
			a[i] = run
		}
	})
}

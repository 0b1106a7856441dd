package sample

import (
	"runtime"
	"sync"
	"sync/atomic"
)

func threadCount(t int) int {
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	return t
}

// parallelFor calls fn(worker, lo, hi) over [0, n) in chunks of about grain
// items, handed out dynamically to at most threads workers (worker is in
// [0, threadCount(threads)) and identifies per-worker scratch). With one
// worker it runs inline.
func parallelFor(n, grain, threads int, fn func(worker, lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	workers := min(threadCount(threads), chunks)
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo := c * grain
				fn(w, lo, min(lo+grain, n))
			}
		}(w)
	}
	wg.Wait()
}

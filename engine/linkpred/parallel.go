package linkpred

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// grain is the number of positions a worker takes at a time. Results never
// depend on it (every position has its own stream); tests change it to
// check that.
var grain = 4096

func threadCount(t int) int {
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	return t
}

// parallelFor calls fn(lo, hi) over [0, n) in chunks of grain positions,
// handed out dynamically to at most threads workers; with one worker (or
// one chunk) it runs inline.
func parallelFor(n, threads int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	g := max(grain, 1)
	chunks := (n + g - 1) / g
	workers := min(threadCount(threads), chunks)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo := c * g
				fn(lo, min(lo+g, n))
			}
		}()
	}
	wg.Wait()
}

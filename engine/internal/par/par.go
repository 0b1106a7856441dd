// Package par holds the engine's parallel loops over index ranges: dynamic
// chunks handed to a bounded set of workers (For, ForErr), a fixed split
// into nearly equal chunks (Chunks) and a split of CSR/CSC rows balanced by
// their entries (Rows).
//
// None of them decides what a result is: callers write each element (or
// each chunk's partial result, combined in chunk order) so that the output
// is the same for any number of threads.
//
// Workers run with the caller's debug.SetPanicOnFault setting, and a
// memory fault a worker meets under it (a mapped file truncated while it
// is read: the sampler's CSC files) is raised again in the caller's
// goroutine once every worker returned, where the caller's recover (a
// feature.Guard) turns it into an error; without it, it would kill the
// process from the worker's goroutine. Other panics stay where they are.
//
// It imports nothing of the engine: it is its lowest layer (engine/layering_test.go).
package par

import (
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
)

// group is a set of worker goroutines that inherit their caller's
// SetPanicOnFault setting and hand a memory fault back to it (Wait).
type group struct {
	wg     sync.WaitGroup
	fault  bool // the caller's SetPanicOnFault
	mu     sync.Mutex
	caught any // the first fault a worker met
}

func newGroup() *group {
	g := &group{fault: debug.SetPanicOnFault(false)}
	debug.SetPanicOnFault(g.fault)
	return g
}

// Go runs fn in a worker.
func (g *group) Go(fn func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer g.catch()
		if g.fault {
			debug.SetPanicOnFault(true)
		}
		fn()
	}()
}

// catch keeps a memory fault (a panic carrying the faulting address, which
// only SetPanicOnFault gives) for Wait and lets other panics go on.
func (g *group) catch() {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(interface{ Addr() uintptr }); !ok || !g.fault {
		panic(r)
	}
	g.mu.Lock()
	if g.caught == nil {
		g.caught = r
	}
	g.mu.Unlock()
}

// Wait waits for the workers and raises a fault one of them met.
func (g *group) Wait() {
	g.wg.Wait()
	if g.caught != nil {
		panic(g.caught)
	}
}

// MinGrain is the smallest amount of work (elements) worth a goroutine for
// the fixed splits (ChunkCount, Rows).
const MinGrain = 1 << 15

// Threads resolves a Threads option: <= 0 means GOMAXPROCS.
func Threads(t int) int {
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	return t
}

// Int is the index type of the loops.
type Int interface{ ~int | ~int64 }

// For calls fn(worker, lo, hi) over [0, n) in chunks of grain items (the
// last one shorter), handed out dynamically to at most Threads(threads)
// workers; worker is in [0, Threads(threads)) and identifies per-worker
// scratch. With one worker (or one chunk) it runs fn(0, 0, n) inline.
func For[T Int](n, grain T, threads int, fn func(worker int, lo, hi T)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	workers := min(T(Threads(threads)), chunks)
	if workers <= 1 {
		fn(0, 0, n)
		return
	}
	var next atomic.Int64
	g := newGroup()
	for w := range int(workers) {
		g.Go(func() {
			for {
				c := T(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo := c * grain
				fn(w, lo, min(lo+grain, n))
			}
		})
	}
	g.Wait()
}

// ForStop is For that stops handing out chunks once stop returns true
// (asked before every chunk, by every worker), so that a long loop of a
// cancelled call ends within a chunk's work. With one worker it runs the
// chunks in order, fn(0, lo, hi) each, instead of one fn(0, 0, n): the
// same calls For's workers make, so the same result. It does not say
// whether it stopped: the caller asks stop again. A nil stop is For.
func ForStop[T Int](n, grain T, threads int, stop func() bool, fn func(worker int, lo, hi T)) {
	if stop == nil {
		For(n, grain, threads, fn)
		return
	}
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	if min(T(Threads(threads)), chunks) <= 1 {
		for lo := T(0); lo < n && !stop(); lo += grain {
			fn(0, lo, min(lo+grain, n))
		}
		return
	}
	For(chunks, 1, threads, func(w int, c0, c1 T) {
		for c := c0; c < c1 && !stop(); c++ {
			fn(w, c*grain, min((c+1)*grain, n))
		}
	})
}

// ForErr runs fn over [0, n) in chunks of grain items like For, and returns
// the error of the lowest failing chunk, so that the error does not depend
// on scheduling. With one worker the chunks run in order and the first
// error stops the loop.
func ForErr[T Int](n, grain T, threads int, fn func(lo, hi T) error) error {
	if n <= 0 {
		return nil
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	if min(T(Threads(threads)), chunks) <= 1 {
		for lo := T(0); lo < n; lo += grain {
			if err := fn(lo, min(n, lo+grain)); err != nil {
				return err
			}
		}
		return nil
	}
	var mu sync.Mutex
	errChunk := T(-1)
	var firstErr error
	For(n, grain, threads, func(_ int, lo, hi T) {
		if err := fn(lo, hi); err != nil {
			mu.Lock()
			if c := lo / grain; errChunk < 0 || c < errChunk {
				errChunk, firstErr = c, err
			}
			mu.Unlock()
		}
	})
	return firstErr
}

// ChunkCount returns how many chunks to split n elements into: at most
// Threads(threads), at least MinGrain elements each, and always >= 1.
func ChunkCount(n int64, threads int) int {
	k := int64(Threads(threads))
	if m := n / MinGrain; m < k {
		k = m
	}
	return int(max(k, 1))
}

// ChunkBounds returns the half-open range of chunk c when n elements are
// split into k nearly equal chunks (as Chunks splits them).
func ChunkBounds(n int64, k, c int) (lo, hi int64) {
	return n * int64(c) / int64(k), n * int64(c+1) / int64(k)
}

// Chunks splits [0, n) into k nearly equal chunks (ChunkBounds) and runs
// fn(c, lo, hi) for each, concurrently when k > 1. It returns when all are
// done.
func Chunks(n int64, k int, fn func(c int, lo, hi int64)) {
	if k <= 1 {
		fn(0, 0, n)
		return
	}
	g := newGroup()
	for c := range k {
		lo, hi := ChunkBounds(n, k, c)
		g.Go(func() { fn(c, lo, hi) })
	}
	g.Wait()
}

// Rows splits the rows [0, len(indptr)-1) of a row pointer into at most
// ChunkCount(entries+rows, threads) ranges holding about the same number of
// entries plus rows, and runs fn(lo, hi) on each non-empty range
// concurrently.
func Rows(indptr []int64, threads int, fn func(lo, hi int64)) {
	n := int64(len(indptr) - 1)
	if n <= 0 {
		return
	}
	work := indptr[n] + n // entries plus a per-row cost
	k := ChunkCount(work, threads)
	if k <= 1 {
		fn(0, n)
		return
	}
	g := newGroup()
	lo := int64(0)
	for c := 1; c <= k; c++ {
		hi := n
		if c < k {
			target := work * int64(c) / int64(k)
			// First row r whose cumulative work indptr[r]+r reaches target.
			hi = max(lo, int64(sort.Search(int(n), func(r int) bool { return indptr[r]+int64(r) >= target })))
		}
		if hi > lo {
			a, b := lo, hi
			g.Go(func() { fn(a, b) })
		}
		lo = hi
	}
	g.Wait()
}

// FirstError returns the first non-nil error of errs (chunk order), so that
// a parallel check reports the error a sequential one would.
func FirstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

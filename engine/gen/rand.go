package gen

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
)

// golden is the SplitMix64 increment (2^64 / phi).
const golden = 0x9e3779b97f4a7c15

// mix is the SplitMix64 finaliser: a bijective 64-bit hash.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// key derives the seed of an independent stream from a seed, a domain tag
// (which kind of stream) and a counter (which element).
func key(seed, tag, i uint64) uint64 {
	return mix(mix(seed^mix(tag*golden)) + (i+1)*golden)
}

// splitmix is a SplitMix64 generator: the counter-based streams of this
// package are splitmix generators started at key(...).
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += golden
	return mix(r.s)
}

// below returns a uniform value in [0, n) (Lemire's multiply-shift; the bias
// is below n/2^64, negligible here).
func (r *splitmix) below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// normal returns an approximately standard normal value: the sum of the
// four 16-bit uniforms of one 64-bit draw, centred and scaled to unit
// variance (Irwin-Hall). It is bounded by about +-3.46, which is fine for
// synthetic features and far cheaper than Box-Muller.
func (r *splitmix) normal() float32 {
	const mean = 4 * 65535 / 2.0
	const invStd = 1.7320508075688772 / 65536 // sqrt(3)/65536: var(sum) = 4*65536^2/12
	w := r.next()
	s := w&0xffff + w>>16&0xffff + w>>32&0xffff + w>>48
	return float32((float64(s) - mean) * invStd)
}

// permutation returns a uniformly random permutation of [0, n) drawn by a
// Fisher-Yates shuffle from the stream key(seed, tag, 0).
func permutation(n int64, seed, tag uint64) []int64 {
	p := make([]int64, n)
	for i := range p {
		p[i] = int64(i)
	}
	r := splitmix{key(seed, tag, 0)}
	for i := n - 1; i > 0; i-- {
		j := int64(r.below(uint64(i + 1)))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// threadCount resolves a Threads option: <= 0 means GOMAXPROCS.
func threadCount(t int) int {
	if t <= 0 {
		t = runtime.GOMAXPROCS(0)
	}
	return t
}

// grain is the number of elements a worker takes at a time.
const grain = 1 << 14

// parallelFor runs fn over [0, n) in blocks of grain elements handed out to
// threads workers. Every element's result must depend only on its index
// (the blocks run in any order), which is what makes the generators
// deterministic whatever the thread count. It returns the error of the
// lowest failing block, if any.
func parallelFor(n int64, threads int, fn func(lo, hi int64) error) error {
	blocks := (n + grain - 1) / grain
	w := min(int64(threadCount(threads)), blocks)
	if w <= 1 {
		for b := int64(0); b < blocks; b++ {
			if err := fn(b*grain, min(n, (b+1)*grain)); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	var mu sync.Mutex
	errBlock := int64(-1)
	var firstErr error
	var wg sync.WaitGroup
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b := next.Add(1) - 1
				if b >= blocks {
					return
				}
				if err := fn(b*grain, min(n, (b+1)*grain)); err != nil {
					mu.Lock()
					if errBlock < 0 || b < errBlock {
						errBlock, firstErr = b, err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

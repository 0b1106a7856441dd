package gen

import (
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/rng"
)

// key derives the seed of an independent stream from a seed, a domain tag
// (which kind of stream) and a counter (which element).
func key(seed, tag, i uint64) uint64 {
	return rng.Mix(rng.Mix(seed^rng.Mix(tag*rng.Golden)) + (i+1)*rng.Golden)
}

// stream returns the generator started at key(seed, tag, i): the
// counter-based streams of this package.
func stream(seed, tag, i uint64) rng.SplitMix64 {
	return rng.SplitMix64{State: key(seed, tag, i)}
}

// normal returns an approximately standard normal value: the sum of the
// four 16-bit uniforms of one 64-bit draw, centred and scaled to unit
// variance (Irwin-Hall). It is bounded by about +-3.46, which is fine for
// synthetic features and far cheaper than Box-Muller.
func normal(r *rng.SplitMix64) float32 {
	const mean = 4 * 65535 / 2.0
	const invStd = 1.7320508075688772 / 65536 // sqrt(3)/65536: var(sum) = 4*65536^2/12
	w := r.Next()
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
	r := stream(seed, tag, 0)
	for i := n - 1; i > 0; i-- {
		j := int64(r.BelowFast(uint64(i + 1)))
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// grain is the number of elements a worker takes at a time.
const grain = 1 << 14

// parallelFor runs fn over [0, n) in blocks of grain elements handed out to
// threads workers (par.ForErr). Every element's result must depend only on
// its index (the blocks run in any order), which is what makes the
// generators deterministic whatever the thread count. It returns the error
// of the lowest failing block, if any.
func parallelFor(n int64, threads int, fn func(lo, hi int64) error) error {
	return par.ForErr(n, grain, threads, fn)
}

// Package rng holds the engine's one pseudo-random generator: SplitMix64
// (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", 2014) and its finaliser, used as a hash.
//
// The engine never shares a generator between tasks: every consumer derives
// a state from a hash of what identifies its task (seed, batch key, hop,
// node id, ...) and draws from a SplitMix64 started there, so that what it
// draws depends on nothing else, not on threads, ranks or scheduling. A
// device implementation draws from the same streams by porting these few
// lines, which is what makes its samples equal to the CPU engine's.
//
// Nothing here may change its output: golden traces (engine/sample) and
// generator tests pin it.
//
// It imports nothing of the engine. It is not internal so that the
// benchmark baselines outside the engine (bench/pull) draw from the same
// generator.
package rng

import (
	"math"
	"math/bits"
)

// Golden is SplitMix64's increment, 2^64 divided by the golden ratio, odd.
const Golden = 0x9e3779b97f4a7c15

// Mix is SplitMix64's output function (Stafford's variant 13 finaliser): a
// bijection of 64-bit words with full avalanche, used as a hash.
func Mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// SplitMix64 is the generator: its State advances by Golden and each output
// is Mix of the new state. The zero value is a valid generator (state 0).
type SplitMix64 struct{ State uint64 }

// Next returns the next 64 random bits.
func (r *SplitMix64) Next() uint64 {
	r.State += Golden
	return Mix(r.State)
}

// Below returns a uniform integer in [0, n), n > 0, exactly (Lemire's nearly
// divisionless method, with rejection).
func (r *SplitMix64) Below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.Next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Next(), n)
		}
	}
	return hi
}

// BelowFast returns an integer in [0, n), n > 0, from one output by a
// multiply-high without rejection: its bias is below n/2^64, which
// synthetic data can ignore and sampling must not (use Below there).
func (r *SplitMix64) BelowFast(n uint64) uint64 {
	hi, _ := bits.Mul64(r.Next(), n)
	return hi
}

// Unit returns a uniform float64 in [0, 1) (53 random bits).
func (r *SplitMix64) Unit() float64 {
	return float64(r.Next()>>11) * 0x1p-53
}

// Exp1 returns an Exp(1) variate, -ln(U) with U uniform in (0, 1].
func (r *SplitMix64) Exp1() float64 {
	return -math.Log(float64(r.Next()>>11+1) * 0x1p-53)
}

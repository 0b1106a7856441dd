package sample

import "math/bits"

// Counter-based randomness. Every sampling task (one frontier node in one
// hop of one batch) gets its own stream whose 64-bit state is a hash of
// (Options.Seed, batch key, hop, original node id). The stream is SplitMix64
// from that state, so what a task draws depends on nothing else: not on the
// rank or thread that runs it, nor on the order in which tasks run.

const golden = 0x9e3779b97f4a7c15

// mix64 is the SplitMix64 / Stafford variant 13 finalizer, a bijection with
// full avalanche.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// streamState derives a task's stream state. Each input goes through the
// finalizer after being folded in, with distinct odd offsets per position,
// so that permuting inputs gives unrelated streams.
func streamState(seed, key, hop, node uint64) uint64 {
	h := mix64(seed + golden)
	h = mix64(h ^ (key + 0x6a09e667f3bcc909))
	h = mix64(h ^ (hop + 0xbb67ae8584caa73b))
	h = mix64(h ^ (node + 0x3c6ef372fe94f82b))
	return h
}

// stream is a SplitMix64 generator.
type stream struct{ s uint64 }

func (r *stream) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// below returns a uniform integer in [0, n), n > 0 (Lemire's nearly
// divisionless method: exact, with rejection).
func (r *stream) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

package linkpred

import "math/bits"

// Stream names the random streams of one batch: every draw of the batch is
// a function of (Seed, Key, sampler kind, position) alone. Key is the
// batch key the loader already uses for neighbour sampling; the kind tag
// keeps negative streams apart from sampling streams of the same batch.
type Stream struct {
	Seed uint64
	Key  uint64
}

// Tags that separate the stream families of the samplers: the same
// (seed, key) gives unrelated draws in each.
const (
	tagPerSource uint64 = 0x6e65672d70737263 // "neg-psrc"
	tagGlobal    uint64 = 0x6e65672d676c6f62 // "neg-glob"
	tagBinary    uint64 = 0x6e65672d62696e61 // "neg-bina"
	tagTriplet   uint64 = 0x6e65672d74726970 // "neg-trip"
)

const golden = 0x9e3779b97f4a7c15

// mix64 is SplitMix64's finaliser (Stafford variant 13), a bijection with
// full avalanche; the same function as engine/sample's.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// root hashes (seed, key, tag) once per call; at then derives a position's
// stream from it with one more finaliser round. Distinct odd offsets per
// input keep permuted inputs apart, as in engine/sample's streamState.
func (s Stream) root(tag uint64) uint64 {
	h := mix64(s.Seed + golden)
	h = mix64(h ^ (s.Key + 0x6a09e667f3bcc909))
	return mix64(h ^ (tag + 0xa54ff53a5f1d36f1))
}

// at returns the stream of draw position pos under root.
func at(root uint64, pos int) splitmix {
	return splitmix{mix64(root ^ (uint64(pos) + 0x510e527fade682d1))}
}

// splitmix is a SplitMix64 generator.
type splitmix struct{ s uint64 }

func (r *splitmix) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// below returns a uniform integer in [0, n), n > 0, exactly (Lemire's
// method with rejection).
func (r *splitmix) below(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}

// unit returns a uniform float64 in [0, 1) (53 random bits).
func (r *splitmix) unit() float64 {
	return float64(r.next()>>11) * 0x1p-53
}

package linkpred

import "github.com/graphferry/graphferry/engine/rng"

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

// root hashes (seed, key, tag) once per call; at then derives a position's
// stream from it with one more finaliser round. Distinct odd offsets per
// input keep permuted inputs apart, as in engine/sample's streamState.
func (s Stream) root(tag uint64) uint64 {
	h := rng.Mix(s.Seed + rng.Golden)
	h = rng.Mix(h ^ (s.Key + 0x6a09e667f3bcc909))
	return rng.Mix(h ^ (tag + 0xa54ff53a5f1d36f1))
}

// at returns the stream of draw position pos under root: the engine's one
// generator (engine/rng), started from a hash of both.
func at(root uint64, pos int) rng.SplitMix64 {
	return rng.SplitMix64{State: rng.Mix(root ^ (uint64(pos) + 0x510e527fade682d1))}
}

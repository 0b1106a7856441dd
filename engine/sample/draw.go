package sample

import (
	"math/bits"
	"slices"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/rng"
)

// The draws: which positions of a neighbour list a task takes, from its
// stream (rng.go), uniformly with or without replacement.

// linearLimit is the sample size up to which Floyd's membership test scans
// the picks so far (kept sorted) instead of using a bitset.
const linearLimit = 32

// drawPositions fills nb with uniform positions in [0, n): independent
// draws with replacement, else len(nb) distinct positions in ascending
// order (Floyd's algorithm, in the variant that suits n and len(nb)).
func drawPositions(r *rng.SplitMix64, n int64, nb []int64, replace bool, scratch *[]uint64) {
	k := int64(len(nb))
	switch {
	case replace:
		for i := range nb {
			nb[i] = int64(r.Below(uint64(n)))
		}
	case n <= 64*smallSetWords:
		floydSmall(r, n, nb)
	case k <= linearLimit:
		floydSorted(r, n, nb)
	default:
		floyd(r, n, nb, scratch)
		slices.Sort(nb)
	}
}

// positionsToIDs turns nb, positions within the neighbour list that starts
// at CSC position base, into node ids in place, and writes the ids of those
// edges into eb[:len(nb)].
func positionsToIDs(g *graph.CSC, base int64, nb, eb []int64) {
	eb = eb[:len(nb)]
	if g.EdgeIDs != nil {
		ids := g.EdgeIDs[base:]
		for i, pos := range nb {
			eb[i] = ids[pos]
		}
	} else {
		for i, pos := range nb {
			eb[i] = base + pos
		}
	}
	g.Sources(base, nb, nb)
}

// smallSetWords is the size of floydSmall's bitset (64*smallSetWords
// positions).
const smallSetWords = 16

// floydSmall writes len(out) distinct positions drawn uniformly from [0, n),
// n <= 64*smallSetWords, in ascending order: Floyd's algorithm (see floyd)
// with a bitset on the stack, read out in order.
func floydSmall(r *rng.SplitMix64, n int64, out []int64) {
	var set [smallSetWords]uint64
	k := int64(len(out))
	for j := n - k; j < n; j++ {
		t := r.Below(uint64(j + 1))
		if set[t>>6]&(1<<(t&63)) != 0 {
			t = uint64(j)
		}
		set[t>>6] |= 1 << (t & 63)
	}
	i := 0
	for w, x := range set[:(n+63)/64] {
		for ; x != 0; x &= x - 1 {
			out[i] = int64(w<<6 + bits.TrailingZeros64(x))
			i++
		}
	}
}

// floydSorted writes len(out) distinct positions drawn uniformly from [0, n)
// in ascending order: the set Floyd's algorithm picks (see floyd), with the
// picks so far kept sorted, which also makes the membership test a scan of
// the sorted prefix. A repeated pick is replaced by j, larger than every
// earlier pick, so it goes last.
func floydSorted(r *rng.SplitMix64, n int64, out []int64) {
	k := int64(len(out))
	for i, j := int64(0), n-k; j < n; i, j = i+1, j+1 {
		t := int64(r.Below(uint64(j + 1)))
		p := i
		for p > 0 && out[p-1] > t {
			p--
		}
		if p > 0 && out[p-1] == t {
			out[i] = j
			continue
		}
		copy(out[p+1:i+1], out[p:i])
		out[p] = t
	}
}

// floyd writes len(out) distinct positions drawn uniformly from [0, n)
// (Robert Floyd's algorithm: one draw per pick), in pick order. It is used
// for samples larger than linearLimit, with a bitset membership test.
func floyd(r *rng.SplitMix64, n int64, out []int64, scratch *[]uint64) {
	k := int64(len(out))
	words := int((n + 63) / 64)
	if len(*scratch) < words {
		*scratch = make([]uint64, words)
	}
	set := *scratch
	for i, j := int64(0), n-k; j < n; i, j = i+1, j+1 {
		t := int64(r.Below(uint64(j + 1)))
		if set[t>>6]&(1<<(t&63)) != 0 {
			t = j
		}
		set[t>>6] |= 1 << (t & 63)
		out[i] = t
	}
	for _, t := range out {
		set[t>>6] = 0
	}
}

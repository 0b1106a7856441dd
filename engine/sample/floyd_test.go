package sample

import (
	"slices"
	"testing"

	"github.com/graphferry/graphferry/engine/rng"
)

// floydRef is Floyd's algorithm in its plain form (linear membership test,
// picks in pick order).
func floydRef(r *rng.SplitMix64, n int64, out []int64) {
	k := int64(len(out))
	for i, j := int64(0), n-k; j < n; i, j = i+1, j+1 {
		t := int64(r.Below(uint64(j + 1)))
		if slices.Contains(out[:i], t) {
			t = j
		}
		out[i] = t
	}
}

// The three Floyd variants draw the same set from the same stream, in
// ascending order once sorted.
func TestFloydVariantsAgree(t *testing.T) {
	for n := int64(1); n <= 3000; n += 1 + n/8 {
		for k := int64(1); k <= n && k <= 200; k += 1 + k/3 {
			for seed := uint64(0); seed < 8; seed++ {
				want := make([]int64, k)
				ref := rng.SplitMix64{State: seed}
				floydRef(&ref, n, want)
				slices.Sort(want)
				check := func(name string, got []int64, r rng.SplitMix64) {
					t.Helper()
					if !slices.Equal(want, got) {
						t.Fatalf("%s n=%d k=%d seed=%d: %v, want %v", name, n, k, seed, got, want)
					}
					if r != ref { // same number of draws
						t.Fatalf("%s n=%d k=%d seed=%d: stream state %x, want %x", name, n, k, seed, r.State, ref.State)
					}
				}
				if n <= 64*smallSetWords {
					got, r := make([]int64, k), rng.SplitMix64{State: seed}
					floydSmall(&r, n, got)
					check("floydSmall", got, r)
				}
				if k <= linearLimit {
					got, r := make([]int64, k), rng.SplitMix64{State: seed}
					floydSorted(&r, n, got)
					check("floydSorted", got, r)
				}
				var scratch []uint64
				got, r := make([]int64, k), rng.SplitMix64{State: seed}
				floyd(&r, n, got, &scratch)
				slices.Sort(got)
				check("floyd", got, r)
				if slices.ContainsFunc(scratch, func(w uint64) bool { return w != 0 }) {
					t.Fatal("floyd left its bitset dirty")
				}
			}
		}
	}
}

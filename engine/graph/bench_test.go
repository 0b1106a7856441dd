package graph

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkFromCOO builds a CSC from 20M random edges over 2M nodes.
func BenchmarkFromCOO(b *testing.B) {
	const n, e = 2_000_000, 20_000_000
	r := rand.New(rand.NewPCG(7, 7))
	src, dst := make([]int64, e), make([]int64, e)
	for i := range src {
		src[i], dst[i] = r.Int64N(n), r.Int64N(n)
	}
	for _, opt := range []COOOptions{{}, {RemoveDuplicates: true, RemoveSelfLoops: true}} {
		b.Run(fmt.Sprintf("dedup=%v", opt.RemoveDuplicates), func(b *testing.B) {
			b.SetBytes(16 * e)
			for b.Loop() {
				if _, err := FromCOO(src, dst, nil, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

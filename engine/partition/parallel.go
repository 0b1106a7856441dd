package partition

import "github.com/graphferry/graphferry/engine/internal/par"

// prefixSum turns a[1:] from counts into a running sum in place (a[0] is
// left as is and added to everything), in parallel over blocks.
func prefixSum(a []int64) {
	n := int64(len(a) - 1)
	if n <= 0 {
		return
	}
	k := par.ChunkCount(n, 0)
	sums := make([]int64, k)
	par.Chunks(n, k, func(c int, lo, hi int64) {
		var s int64
		for _, x := range a[lo+1 : hi+1] {
			s += x
		}
		sums[c] = s
	})
	run := a[0]
	for c, s := range sums {
		sums[c] = run
		run += s
	}
	par.Chunks(n, k, func(c int, lo, hi int64) {
		run := sums[c]
		for i := lo + 1; i <= hi; i++ {
			run += a[i]
			a[i] = run
		}
	})
}

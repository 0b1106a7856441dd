package linkpred

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/stattest"
)

// The goodness-of-fit helpers live in engine/stattest, shared with
// engine/sample's tests.
var (
	chi2SF   = stattest.Chi2SF
	checkGOF = stattest.CheckGOF
)

const minP = stattest.MinP

func uniform(n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	return p
}

// count tallies ids in [0, n).
func count(ids []int64, n int) []int {
	c := make([]int, n)
	for _, v := range ids {
		c[v]++
	}
	return c
}

// pairCells tallies pairs (a[i], b[i]) over an n x n grid.
func pairCells(a, b []int64, n int) []int {
	c := make([]int, n*n)
	for i := range a {
		c[a[i]*int64(n)+b[i]]++
	}
	return c
}

func TestPerSourceUniformIsUniform(t *testing.T) {
	const n = 17
	src := make([]int64, 40000)
	p, err := PerSourceUniform{K: 3}.Sample(src, n, Stream{Seed: 11, Key: 1}, 0)
	require.NoError(t, err)
	checkGOF(t, "per-source: destination", count(p.Dst, n), uniform(n))
	// Successive positions are independent: (dst[i], dst[i+1]) is uniform
	// over the n*n grid.
	const m = 6
	q, err := PerSourceUniform{K: 1}.Sample(make([]int64, 72000), m, Stream{Seed: 12}, 0)
	require.NoError(t, err)
	a, b := make([]int64, 0, len(q.Dst)/2), make([]int64, 0, len(q.Dst)/2)
	for i := 0; i+1 < len(q.Dst); i += 2 {
		a, b = append(a, q.Dst[i]), append(b, q.Dst[i+1])
	}
	checkGOF(t, "per-source: successive positions", pairCells(a, b, m), uniform(m*m))
}

// The same position in successive batches (keys) is independent too.
func TestBatchKeysAreIndependent(t *testing.T) {
	const m = 5
	var a, b []int64
	for key := uint64(0); key < 20000; key += 2 {
		p, err := Triplet{Amount: 1}.Sample(3, m, Stream{Seed: 5, Key: key}, 1)
		require.NoError(t, err)
		q, err := Triplet{Amount: 1}.Sample(3, m, Stream{Seed: 5, Key: key + 1}, 1)
		require.NoError(t, err)
		a, b = append(a, p...), append(b, q...)
	}
	checkGOF(t, "triplet: keys k and k+1", pairCells(a, b, m), uniform(m*m))
}

func TestBinaryIsUniformOverPairs(t *testing.T) {
	const n = 7
	p, err := Binary{Amount: 2.5}.Sample(20000, n, Stream{Seed: 13, Key: 2}, 0)
	require.NoError(t, err)
	require.Equal(t, 50000, p.Len())
	checkGOF(t, "binary: (src, dst)", pairCells(p.Src, p.Dst, n), uniform(n*n))
}

func TestTripletIsUniform(t *testing.T) {
	const n = 23
	d, err := Triplet{Amount: 5}.Sample(10000, n, Stream{Seed: 14, Key: 3}, 0)
	require.NoError(t, err)
	require.Len(t, d, 50000)
	checkGOF(t, "triplet: destination", count(d, n), uniform(n))
}

func TestWeightedDrawsFollowTheWeights(t *testing.T) {
	w := []float64{1, 0, 3, 0.5, 7, 0, 2.25, 1e-3}
	var sum float64
	for _, x := range w {
		sum += x
	}
	prob := make([]float64, len(w))
	for i, x := range w {
		prob[i] = x / sum
	}
	nw := mustWeights(t, w...)
	n := int64(len(w))
	d, err := Triplet{Amount: 2, Weights: nw}.Sample(30000, n, Stream{Seed: 15}, 0)
	require.NoError(t, err)
	checkGOF(t, "weighted triplet", count(d, len(w)), prob)
	p, err := Binary{Amount: 1, Weights: nw}.Sample(60000, n, Stream{Seed: 16}, 0)
	require.NoError(t, err)
	checkGOF(t, "weighted binary: src", count(p.Src, len(w)), prob)
	checkGOF(t, "weighted binary: dst", count(p.Dst, len(w)), prob)

	// One positive weight: every draw is that node.
	one := mustWeights(t, 0, 0, 4, 0)
	d, err = Triplet{Amount: 1, Weights: one}.Sample(1000, 4, Stream{Seed: 17}, 0)
	require.NoError(t, err)
	for _, v := range d {
		require.Equal(t, int64(2), v)
	}
}

// With replacement, each GlobalUniform pair is uniform over the pairs that
// are not edges (and not self-loops when excluded): rejection sampling's
// law.
func TestGlobalUniformIsUniformOverNonEdges(t *testing.T) {
	const n = 6
	src := []int64{0, 1, 2, 3, 3, 5, 4, 2}
	dst := []int64{1, 2, 0, 3, 4, 5, 0, 5}
	idx := mustIndex(t, src, dst, n)
	for _, self := range []bool{false, true} {
		g, err := GlobalUniform{K: 4, ExcludeSelfLoops: self, Replace: true}.Sample(idx, 15000, Stream{Seed: 18, Key: 9}, 0)
		require.NoError(t, err)
		require.Equal(t, 60000, g.Len())
		prob := make([]float64, n*n)
		allowed := 0
		for u := range int64(n) {
			for v := range int64(n) {
				if !idx.HasEdge(u, v) && !(self && u == v) {
					allowed++
				}
			}
		}
		for u := range int64(n) {
			for v := range int64(n) {
				if !idx.HasEdge(u, v) && !(self && u == v) {
					prob[u*n+v] = 1 / float64(allowed)
				}
			}
		}
		checkGOF(t, "global uniform", pairCells(g.Src, g.Dst, n), prob)
	}
}

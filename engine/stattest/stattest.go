// Package stattest holds the goodness-of-fit helpers of the engine's
// statistical tests (engine/sample, engine/linkpred, and bench/pull's): a
// chi-square test of multinomial counts against exact cell probabilities,
// with deterministic seeds, so that a test fails only when a sampler's
// distribution is wrong. Only tests import it; it imports nothing of the
// engine (testify only), and is not internal so that bench/pull's tests can
// use it.
package stattest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Chi2SF is the chi-square survival function P(X >= x) with df degrees of
// freedom: the regularized upper incomplete gamma function Q(df/2, x/2).
func Chi2SF(x float64, df int) float64 {
	return GammaQ(float64(df)/2, x/2)
}

// GammaQ is the regularized upper incomplete gamma function Q(a, x): a
// series for x < a+1, else a continued fraction (modified Lentz).
func GammaQ(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	if x < a+1 {
		sum, del, ap := 1/a, 1/a, a
		for i := 0; i < 10000; i++ {
			ap++
			del *= x / ap
			sum += del
			if math.Abs(del) < math.Abs(sum)*1e-16 {
				break
			}
		}
		return max(0, 1-sum*front)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return front * h
}

// Chi2GOF tests multinomial counts against cell probabilities (summing to
// 1): it returns the statistic, the degrees of freedom and the p-value.
// Cells of probability 0 must be empty (checked by the caller) and are left
// out.
func Chi2GOF(obs []int, prob []float64) (x float64, df int, p float64) {
	total := 0
	for _, o := range obs {
		total += o
	}
	cells := 0
	for i, q := range prob {
		if q == 0 {
			continue
		}
		e := q * float64(total)
		d := float64(obs[i]) - e
		x += d * d / e
		cells++
	}
	df = cells - 1
	return x, df, Chi2SF(x, df)
}

// MinP is the p-value below which a goodness-of-fit test fails. The seeds
// are fixed, so the tests are deterministic; the bound only says that the
// observed frequencies are compatible with the exact distribution.
const MinP = 1e-3

// CheckGOF fails t when counts obs are not compatible (p <= MinP) with
// cell probabilities prob; cells of probability 0 must be empty.
func CheckGOF(t testing.TB, name string, obs []int, prob []float64) {
	t.Helper()
	for i, q := range prob {
		if q == 0 {
			require.Zero(t, obs[i], "%s: cell %d has probability 0", name, i)
		}
	}
	x, df, p := Chi2GOF(obs, prob)
	t.Logf("%s: chi2 = %.2f, df = %d, p = %.4f", name, x, df, p)
	assert.Greater(t, p, MinP, "%s: observed %v vs probabilities %v", name, obs, prob)
}

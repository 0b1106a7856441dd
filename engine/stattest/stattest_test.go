package stattest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChi2SF(t *testing.T) {
	// Reference values (upper-tail critical values of the chi-square law).
	cases := []struct {
		x  float64
		df int
		p  float64
	}{
		{3.841459, 1, 0.05}, {6.634897, 1, 0.01}, {11.0705, 5, 0.05},
		{27.8772, 9, 0.001}, {148.2304, 99, 0.001}, {2, 2, math.Exp(-1)},
		{0.5, 4, 0.9735010}, {0, 3, 1},
	}
	for _, c := range cases {
		assert.InDelta(t, c.p, Chi2SF(c.x, c.df), 1e-5, "x=%v df=%d", c.x, c.df)
	}
}

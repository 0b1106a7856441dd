package rng

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The reference outputs of SplitMix64 from state 1234567 (Vigna's
// splitmix64.c, seeded with x = 1234567).
func TestSplitMix64Reference(t *testing.T) {
	r := SplitMix64{State: 1234567}
	want := []uint64{
		6457827717110365317, 3203168211198807973, 9817491932198370423,
		4593380528125082431, 16408922859458223821,
	}
	for i, w := range want {
		require.Equal(t, w, r.Next(), "output %d", i)
	}
}

func TestBelowIsInRangeAndExact(t *testing.T) {
	r := SplitMix64{State: 7}
	for _, n := range []uint64{1, 2, 3, 7, 1 << 20, 1<<63 + 5} {
		for range 1000 {
			require.Less(t, r.Below(n), n)
			require.Less(t, r.BelowFast(n), n)
		}
	}
	// n = 3 over many draws: each value about a third (a loose bound, so
	// the test is about a wrong range, not about luck).
	var c [3]int
	for range 30000 {
		c[r.Below(3)]++
	}
	for v, k := range c {
		require.InDelta(t, 10000, k, 600, "value %d", v)
	}
}

func TestUnitAndExp1(t *testing.T) {
	r := SplitMix64{State: 9}
	var sum float64
	for range 20000 {
		u := r.Unit()
		require.GreaterOrEqual(t, u, 0.0)
		require.Less(t, u, 1.0)
		e := r.Exp1()
		require.GreaterOrEqual(t, e, 0.0)
		sum += e
	}
	require.InDelta(t, 1.0, sum/20000, 0.05)
}

func TestMixIsTheOutputFunction(t *testing.T) {
	r := SplitMix64{State: 42}
	require.Equal(t, Mix(42+Golden), r.Next())
	s := uint64(42) + Golden
	require.Equal(t, Mix(s+Golden), r.Next())
}

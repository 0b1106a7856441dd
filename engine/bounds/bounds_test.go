package bounds

import (
	"math"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
)

func TestThreads(t *testing.T) {
	require.NoError(t, Threads(0, "threads"))
	require.NoError(t, Threads(-1, "threads"))
	require.NoError(t, Threads(MaxThreads(), "threads"))
	err := Threads(math.MaxInt32, "sample: threads")
	require.EqualError(t, err, "sample: threads = 2147483647 is more than "+itoa(MaxThreads())+" (64 for each of this host's "+itoa(runtime.NumCPU())+" cores)")
	require.NotErrorIs(t, err, errs.ErrNoMem)
}

func TestFractionAndCount(t *testing.T) {
	require.NoError(t, Fraction(1, "f"))
	require.NoError(t, Fraction(0.5, "f"))
	for _, f := range []float64{0, -0.5, 1.5, math.NaN(), math.Inf(1), math.Inf(-1)} {
		require.ErrorContains(t, Fraction(f, "cache: fraction"), "cache: fraction = ", "%v", f)
	}
	require.NoError(t, Count(3, 3, "n", "the nodes"))
	require.EqualError(t, Count(4, 3, "n", "the nodes"), "n = 4 is not in [0, 3] (the nodes)")
	require.Error(t, Count(-1, 3, "n", "the nodes"))
}

// Alloc refuses what does not fit in Memory beside the resident set, and
// in RLIMIT_AS beside the address space; Mul saturates.
func TestAlloc(t *testing.T) {
	require.Equal(t, uint64(math.MaxUint64), Mul(1<<40, 1<<40))
	require.Equal(t, uint64(6), Mul(2, 3))
	require.NoError(t, Alloc(1<<20, "a little"))
	err := Alloc(math.MaxUint64, "everything")
	require.ErrorIs(t, err, errs.ErrNoMem)
	require.ErrorContains(t, err, "everything needs 16.0 EiB, more than the ")

	old := Memory
	t.Cleanup(func() { Memory = old })
	rss, vsize := usage()
	require.Positive(t, rss)
	require.GreaterOrEqual(t, vsize, rss)
	Memory = func() uint64 { return rss + 1<<30 }
	require.NoError(t, Alloc(1<<29, "half a GiB"))
	require.ErrorContains(t, Alloc(2<<30, "two GiB"), "two GiB needs 2.0 GiB, more than the ")

	Memory = old
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_AS, &lim))
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_AS, &lim) })
	low := lim
	low.Cur = vsize + 4<<30
	if lim.Cur < low.Cur {
		t.Skip("the address space limit is lower already")
	}
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_AS, &low))
	err = Alloc(8<<30, "eight GiB")
	require.ErrorIs(t, err, errs.ErrNoMem)
	require.ErrorContains(t, err, "of address space this process may still map (its limit, ulimit -v, is ")
}

func TestMemoryKnown(t *testing.T) {
	require.Positive(t, Memory(), "physical memory or a cgroup limit")
}

func itoa(n int) string { return strconv.Itoa(n) }

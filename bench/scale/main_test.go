package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	childMain() // a measurement's child process: runs it and exits
	partitionChildMain()
	os.Exit(m.Run())
}

// TestRankMemoryFallsWithRanks runs a generated graph's dsp partition at
// 2 and at 8 ranks (goroutines of one child process each) through one
// epoch of every rank's loader, and checks that a rank of 8 holds less
// than half of what a rank of 2 holds: in the memory plan
// (distributed.Memory) and in the resident memory the process measured.
// Nothing is timed.
func TestRankMemoryFallsWithRanks(t *testing.T) {
	cache := t.TempDir()
	spec := graphSpec{Nodes: 300000, EdgeFactor: 2, FeatDim: 8, Seed: 35}
	src := filepath.Join(cache, "graph")
	require.NoError(t, writeGraph(spec, src))
	rows := map[int]rankRow{}
	for _, p := range []int{2, 8} {
		dst := filepath.Join(cache, "parts", string(rune('0'+p)))
		require.NoError(t, partitionInto(src, dst, p))
		row, err := measureRanks(os.Args[0], []string{"-test.run=^$"}, childArgs{Dst: dst, Parts: p, Seeds: 2048, BatchSize: 256, Fanouts: []int{10, 5}})
		require.NoError(t, err)
		t.Logf("%d ranks: %+v", p, row)
		require.Equal(t, p, row.Ranks)
		require.Positive(t, row.Batches)
		require.InDelta(t, float64(spec.Nodes)/float64(p), row.OwnedPerRank, 1)
		rows[p] = row
	}
	two, eight := rows[2], rows[8]
	require.Less(t, 2*eight.PlanBytesPerRank, two.PlanBytesPerRank, "memory plan")
	require.Less(t, 2*eight.RSSBytesPerRank, two.RSSBytesPerRank, "measured resident memory")
}

// TestPartitionUnderMemoryLimit partitions (LDG, dsp) a generated graph
// whose files are over three times the memory limit of the cgroup v1
// memory group its child process runs in (page cache counted), stopped
// after half its ranks and resumed there, and checks that it completes
// and equals an unlimited run (partition.json, assignment, relabelling).
// Skipped, saying why, where no memory group can be made (not root, no
// cgroup v1 memory controller).
func TestPartitionUnderMemoryLimit(t *testing.T) {
	const limit = 128 << 20
	probe, err := newMemoryGroup(limit)
	if err != nil {
		t.Skipf("no cgroup v1 memory group can be made here (%v): the bound this test needs", err)
	}
	require.NoError(t, probe.remove())
	// The child is this program built without the race detector, whose
	// shadow memory would not fit the limit when the tests run under it.
	exe := filepath.Join(t.TempDir(), "scale")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	rep, err := partitionUnderLimit(exe, nil, t.TempDir(),
		streamSpec{Nodes: 200000, EdgeFactor: 4, FeatDim: 512, Parts: 32, Limit: limit})
	require.NoError(t, err)
	t.Logf("%+v", rep)
	require.GreaterOrEqual(t, rep.GraphBytes, 3*rep.MemoryLimitBytes)
	require.True(t, rep.Completed)
	require.True(t, rep.Equal, "the limited, interrupted and resumed run equals the unlimited one")
	require.LessOrEqual(t, rep.MaxUsageBytes, int64(limit)+1<<20) // the group's accounting may pass it by a few pages
	require.Less(t, rep.EdgeCut, rep.RandomCut)
}

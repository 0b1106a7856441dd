package sample

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rng"
	"github.com/stretchr/testify/require"
)

// bigTestsEnv must be "1" for the tests that need a lot of memory to run.
const bigTestsEnv = "GRAPHFERRY_BIG_TESTS"

// requireBigMemory skips t unless GRAPHFERRY_BIG_TESTS=1 is set and
// /proc/meminfo reports at least needGiB of MemAvailable (and not under the
// race detector, whose shadow memory would multiply the footprint).
func requireBigMemory(t *testing.T, needGiB int64) {
	t.Helper()
	if os.Getenv(bigTestsEnv) != "1" {
		t.Skipf("needs about %d GiB of memory: set %s=1 to run it", needGiB, bigTestsEnv)
	}
	if raceEnabled {
		t.Skip("too large for the race detector")
	}
	avail, err := memAvailable()
	if err != nil {
		t.Skipf("cannot read MemAvailable (%v); needs %d GiB", err, needGiB)
	}
	if avail < needGiB<<30 {
		t.Skipf("MemAvailable is %.1f GiB, this test needs %d GiB", float64(avail)/(1<<30), needGiB)
	}
}

// memAvailable returns MemAvailable from /proc/meminfo in bytes.
func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no MemAvailable line")
}

// Layout of the big graph: bigSmall nodes of small degree, then two hubs of
// about 2^30 in-edges each (the second straddles position 2^31), then
// bigSmall more small nodes whose lists lie entirely past 2^31.
const (
	bigSmall = 1000
	bigHubA  = bigSmall     // node id of the first hub
	bigHubB  = bigSmall + 1 // node id of the second hub
	bigNodes = 2*bigSmall + 2
)

// bigSource is the source stored at CSC position pos: a hash of every bit of
// pos, so that reading a wrong (e.g. 32-bit truncated) position shows.
func bigSource(pos int64) int64 {
	return int64((uint64(pos)*rng.Golden)>>40) % bigNodes
}

// bigDegree is the in-degree of node v.
func bigDegree(v int64) int64 {
	switch {
	case v == bigHubA:
		return 1 << 30
	case v == bigHubB:
		return 1<<30 + 7
	case v < bigSmall:
		return v % 5 // some isolated nodes
	default:
		return 1 + v%7
	}
}

// bigGraph builds the graph by hand: int32 sources (about 8 GiB), edge ids
// nil (id == position), filled in parallel.
func bigGraph(t *testing.T) *graph.CSC {
	t.Helper()
	indptr := make([]int64, bigNodes+1)
	for v := range int64(bigNodes) {
		indptr[v+1] = indptr[v] + bigDegree(v)
	}
	e := indptr[bigNodes]
	require.Greater(t, e, int64(math.MaxInt32)+1, "offsets must pass 2^31")
	require.Greater(t, indptr[bigHubB+1], int64(1)<<31, "small nodes after the hubs start past 2^31")
	ind := make([]int32, e)
	k := int64(runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for c := range k {
		lo, hi := e*c/k, e*(c+1)/k
		wg.Go(func() {
			for p := lo; p < hi; p++ {
				ind[p] = int32(bigSource(p))
			}
		})
	}
	wg.Wait()
	return &graph.CSC{NumNodes: bigNodes, Indptr: indptr, Indices32: ind}
}

// TestOffsetsBeyond2to31 samples a graph with more than 2^31 edges held with
// int32 sources and int64 offsets: nodes whose neighbour lists start past
// 2^31 must yield edge ids (== CSC positions) past 2^31 and the sources
// stored there. It needs about 9 GiB (skipped unless GRAPHFERRY_BIG_TESTS=1
// and 14 GiB are available).
func TestOffsetsBeyond2to31(t *testing.T) {
	requireBigMemory(t, 14)
	start := time.Now()
	g := bigGraph(t)
	t.Logf("built %d edges (%.1f GiB of int32 sources) in %v", g.NumEdges(), float64(4*g.NumEdges())/(1<<30), time.Since(start))
	part, err := partition.Build(g, partition.Options{NumPatches: 1})
	require.NoError(t, err)
	require.Same(t, g, part.Graph, "an int32 graph is kept as is")

	late := int64(bigHubB + 1 + 500) // a small node whose list lies past 2^31
	require.Greater(t, g.Indptr[late], int64(1)<<31)
	seeds := [][]int64{
		{late, bigHubB, bigHubA, 3, bigNodes - 1},
		{bigNodes - 2, bigHubB + 1, 4},
	}
	// checkEdge checks one sampled edge u -> v with id id.
	checkEdge := func(u, v, id int64) {
		t.Helper()
		if id < g.Indptr[v] || id >= g.Indptr[v+1] {
			t.Fatalf("edge %d of node %d is outside its list [%d, %d)", id, v, g.Indptr[v], g.Indptr[v+1])
		}
		if want := bigSource(id); u != want {
			t.Fatalf("edge %d (at CSC position %d) of node %d: source %d, want %d", id, id, v, u, want)
		}
	}
	var s *Sampler
	for _, replace := range []bool{false, true} {
		s, err = newSampler(part, comm.NewLocal(1), options{Fanouts: []int{10, 5}, Replace: replace, Seed: 7})
		require.NoError(t, err)
		res, err := s.SampleBatches(context.Background(), seeds, []uint64{1, 2})
		require.NoError(t, err)
		var past, total int
		for bi, r := range res {
			require.Equal(t, seeds[bi], r.Nodes[:len(seeds[bi])])
			for h, b := range r.Blocks {
				for i := range b.NumDst {
					v := r.Nodes[b.DstOffset+i]
					row := b.Indptr[i+1] - b.Indptr[i]
					if want := min(bigDegree(v), int64(s.req.Fanouts[h])); replace && bigDegree(v) > 0 {
						require.Equal(t, int64(s.req.Fanouts[h]), row, "node %d hop %d", v, h)
					} else {
						require.Equal(t, want, row, "node %d hop %d", v, h)
					}
					prev := int64(-1)
					for k := b.Indptr[i]; k < b.Indptr[i+1]; k++ {
						id := b.EdgeIDs[k]
						checkEdge(r.Nodes[b.Indices[k]], v, id)
						if !replace {
							require.Greater(t, id, prev, "node %d: distinct, in list order", v)
							prev = id
						}
						if id > 1<<31 {
							past++
						}
						total++
					}
					if v == late || v == bigNodes-1 || v == bigNodes-2 {
						require.Greater(t, g.Indptr[v], int64(1)<<31)
					}
				}
			}
		}
		require.Greater(t, past, 10, "edges past 2^31 were sampled")
		t.Logf("replace=%v: %d sampled edges checked, %d with ids past 2^31", replace, total, past)
	}

	// Random walks step through the same lists.
	ws, err := walk(context.Background(), s, seeds, []uint64{3, 4}, 4, 0)
	require.NoError(t, err)
	for bi, w := range ws {
		for i := range seeds[bi] {
			tr := w.Traces[i*5 : (i+1)*5]
			es := w.EdgeIDs[i*4 : (i+1)*4]
			for step, id := range es {
				if tr[step] < 0 || bigDegree(tr[step]) == 0 {
					require.Equal(t, int64(-1), id)
					continue
				}
				checkEdge(tr[step+1], tr[step], id)
			}
		}
	}
	t.Logf("total %v", time.Since(start))
}

package sample

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tinyGraph: 6 nodes, edges (src -> dst, id):
//
//	1->0 (100) 2->0 (101) 3->0 (102)
//	4->1 (103) 5->1 (104)
//	0->2 (105) 3->2 (106)
//	5->3 (107)
func tinyGraph() *graph.CSC {
	es := [][2]int64{{1, 0}, {2, 0}, {3, 0}, {4, 1}, {5, 1}, {0, 2}, {3, 2}, {5, 3}}
	edges := make([]edge, len(es))
	for i, e := range es {
		edges[i] = edge{src: e[0], dst: e[1], id: 100 + int64(i)}
	}
	return buildCSC(6, edges, true)
}

func TestTinyAllNeighboursFrontierAll(t *testing.T) {
	for _, p := range []int{1, 2, 3} {
		s := mustSampler(t, rangePartition(tinyGraph(), p), options{Fanouts: []int{-1, -1}, Frontier: FrontierAll})
		res := sampleAll(t, s, [][]int64{{2, 0}}, []uint64{7})[0]
		assert.Equal(t, []int64{2, 0, 3, 1, 5, 4}, res.Nodes)
		assert.Equal(t, []int64{2, 2, 2}, res.HopCounts)
		assert.Equal(t, []Block{
			{Indptr: []int64{0, 2, 5}, Indices: []int64{1, 2, 3, 0, 2}, EdgeIDs: []int64{105, 106, 100, 101, 102}, NumDst: 2, NumSrc: 4},
			{Indptr: []int64{0, 2, 5, 6, 8}, Indices: []int64{1, 2, 3, 0, 2, 4, 5, 4}, EdgeIDs: []int64{105, 106, 100, 101, 102, 107, 103, 104}, NumDst: 4, NumSrc: 6},
		}, res.Blocks, "P=%d", p)
	}
}

func TestTinyAllNeighboursFrontierNew(t *testing.T) {
	for _, p := range []int{1, 2, 6} {
		// A fanout >= every degree takes all neighbours too.
		s := mustSampler(t, rangePartition(tinyGraph(), p), options{Fanouts: []int{3, 5, 1}, Frontier: FrontierNew})
		res := sampleAll(t, s, [][]int64{{2, 0}}, []uint64{7})[0]
		assert.Equal(t, []int64{2, 0, 3, 1, 5, 4}, res.Nodes)
		assert.Equal(t, []int64{2, 2, 2, 0}, res.HopCounts)
		require.Len(t, res.Blocks, 3)
		assert.Equal(t, Block{Indptr: []int64{0, 2, 5}, Indices: []int64{1, 2, 3, 0, 2}, EdgeIDs: []int64{105, 106, 100, 101, 102}, NumDst: 2, NumSrc: 4}, res.Blocks[0])
		assert.Equal(t, Block{Indptr: []int64{0, 1, 3}, Indices: []int64{4, 5, 4}, EdgeIDs: []int64{107, 103, 104}, NumDst: 2, NumSrc: 6, DstOffset: 2}, res.Blocks[1])
		// Hop 2: nodes 5 and 4 have no in-neighbours.
		assert.Equal(t, Block{Indptr: []int64{0, 0, 0}, Indices: []int64{}, EdgeIDs: []int64{}, NumDst: 2, NumSrc: 6, DstOffset: 4}, res.Blocks[2])
	}
}

func TestTinyFanoutOne(t *testing.T) {
	g := tinyGraph()
	for _, replace := range []bool{false, true} {
		opt := options{Fanouts: []int{1}, Replace: replace, Seed: 3}
		s := mustSampler(t, rangePartition(g, 1), opt)
		res := sampleAll(t, s, [][]int64{{0, 4, 1}}, []uint64{1})[0]
		require.NoError(t, checkResult(g, []int64{0, 4, 1}, res, opt))
		// 0 and 1 get one neighbour each, 4 (no in-edges) none.
		assert.Equal(t, []int64{0, 1, 1, 2}, res.Blocks[0].Indptr)
	}
}

func TestEmptyAndNoBatches(t *testing.T) {
	s := mustSampler(t, rangePartition(tinyGraph(), 2), options{Fanouts: []int{2, 2}})
	res, err := s.SampleBatches(context.Background(), nil, nil)
	require.NoError(t, err)
	assert.Empty(t, res)
	res = sampleAll(t, s, [][]int64{{}, {3}}, []uint64{1, 2})
	assert.Empty(t, res[0].Nodes)
	assert.Equal(t, []int64{0, 0, 0}, res[0].HopCounts)
	assert.Equal(t, []int64{0}, res[0].Blocks[0].Indptr)
	assert.Equal(t, []int64{3, 5}, res[1].Nodes[:2])
}

type config struct {
	name string
	opt  options
}

func configs() []config {
	var out []config
	for _, fr := range []Frontier{FrontierAll, FrontierNew} {
		for _, rep := range []bool{false, true} {
			for _, f := range [][]int{{4, 3, 2}, {-1, 2}, {40, 1}, {2, 0, 3}} {
				out = append(out, config{
					name: fmt.Sprintf("%v/replace=%v/%v", fr, rep, f),
					opt:  options{Fanouts: f, Replace: rep, Frontier: fr, Seed: 42},
				})
			}
		}
	}
	return out
}

func TestInvariantsRandomGraphs(t *testing.T) {
	withGrains(t, 7, 3)
	r := rand.New(rand.NewPCG(1, 2))
	for gi := 0; gi < 3; gi++ {
		g := randomGraph(r, 200+int64(gi)*150, 4000, gi%2 == 0)
		batches, keys := randomBatches(r, g.NumNodes, 4, 25)
		for _, c := range configs() {
			t.Run(fmt.Sprintf("g%d/%s", gi, c.name), func(t *testing.T) {
				s := mustSampler(t, rangePartition(g, 3), c.opt)
				res := sampleAll(t, s, batches, keys)
				for i := range res {
					require.NoError(t, checkResult(g, batches[i], res[i], c.opt), "batch %d", i)
				}
			})
		}
	}
}

// The sample of a batch depends only on (Seed, key, seeds, graph): not on the
// number of patches, the numbering, the threads or the other batches.
func TestDeterministicAcrossPatchesAndThreads(t *testing.T) {
	withGrains(t, 5, 2)
	r := rand.New(rand.NewPCG(3, 4))
	g := randomGraph(r, 500, 6000, true)
	batches, keys := randomBatches(r, g.NumNodes, 5, 30)
	for _, c := range configs() {
		t.Run(c.name, func(t *testing.T) {
			ref := sampleAll(t, mustSampler(t, rangePartition(g, 1), c.opt), batches, keys)
			for i := range ref {
				require.NoError(t, checkResult(g, batches[i], ref[i], c.opt))
			}
			for _, p := range []int{1, 2, 3, 8} {
				for _, th := range []int{1, 2, 8} {
					opt := c.opt
					opt.Threads = th
					got := sampleAll(t, mustSampler(t, rangePartition(g, p), opt), batches, keys)
					require.Equal(t, ref, got, "P=%d threads=%d", p, th)
				}
			}
			// A non-identity renumbering (random patch assignment).
			for _, p := range []int{1, 3, 5} {
				assign := make([]int, g.NumNodes)
				for v := range assign {
					assign[v] = r.IntN(p)
				}
				part := renumbered(g, assign, p)
				opt := c.opt
				opt.Threads = 4
				got := sampleAll(t, mustSampler(t, part, opt), toInternal(part, batches), keys)
				require.Equal(t, ref, toOriginal(part, got), "renumbered P=%d", p)
			}
			// One batch at a time gives the same as all at once.
			s := mustSampler(t, rangePartition(g, 2), c.opt)
			for i := range batches {
				got := sampleAll(t, s, batches[i:i+1], keys[i:i+1])
				require.Equal(t, ref[i], got[0])
			}
		})
	}
}

func TestKeysAndSeedChangeTheSample(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	g := randomGraph(r, 300, 6000, false)
	batches, _ := randomBatches(r, g.NumNodes, 1, 50)
	opt := options{Fanouts: []int{3, 3}, Seed: 1}
	s := mustSampler(t, rangePartition(g, 1), opt)
	a := sampleAll(t, s, [][]int64{batches[0], batches[0]}, []uint64{1, 2})
	assert.NotEqual(t, a[0].Blocks[0].EdgeIDs, a[1].Blocks[0].EdgeIDs, "different keys")
	opt.Seed = 2
	b := sampleAll(t, mustSampler(t, rangePartition(g, 1), opt), batches[:1], []uint64{1})
	assert.NotEqual(t, a[0].Blocks[0].EdgeIDs, b[0].Blocks[0].EdgeIDs, "different seeds")
	c := sampleAll(t, s, batches[:1], []uint64{1})
	assert.Equal(t, a[0], c[0], "same key again")
}

// starGraph: node 0 has in-neighbours 1..deg (edge i+1 -> 0 has id i).
func starGraph(deg int64) *graph.CSC {
	edges := make([]edge, deg)
	for i := range edges {
		edges[i] = edge{src: int64(i) + 1, dst: 0, id: int64(i)}
	}
	return buildCSC(deg+1, edges, false)
}

// chi2 returns the chi-square statistic of counts against equal expectations.
func chi2(counts []int) float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	exp := float64(total) / float64(len(counts))
	var x float64
	for _, c := range counts {
		d := float64(c) - exp
		x += d * d / exp
	}
	return x
}

// trials samples node 0 of g once per key and returns every block.
func trials(t *testing.T, g *graph.CSC, opt options, n int) []Block {
	s := mustSampler(t, rangePartition(g, 1), opt)
	batches := make([][]int64, n)
	keys := make([]uint64, n)
	for i := range batches {
		batches[i] = []int64{0}
		keys[i] = uint64(i)
	}
	res := sampleAll(t, s, batches, keys)
	out := make([]Block, n)
	for i, r := range res {
		out[i] = r.Blocks[0]
	}
	return out
}

func TestUniformityWithoutReplacement(t *testing.T) {
	// Critical values at p = 0.001 for the degrees of freedom used here.
	cases := []struct {
		deg, fanout int64
		crit        float64
	}{
		{10, 3, 27.88},   // df 9, linear-scan Floyd
		{100, 40, 148.2}, // df 99, bitset Floyd
	}
	for _, c := range cases {
		const n = 20000
		counts := make([]int, c.deg)
		for _, b := range trials(t, starGraph(c.deg), options{Fanouts: []int{int(c.fanout)}, Seed: 9}, n) {
			require.Len(t, b.EdgeIDs, int(c.fanout))
			for _, e := range b.EdgeIDs {
				counts[e]++
			}
		}
		// Inclusion counts of a k-of-d draw have variance N p (1-p), not the
		// multinomial N p (1 - 1/d): rescale so the statistic is chi-square.
		p := float64(c.fanout) / float64(c.deg)
		x := chi2(counts) * (1 - 1/float64(c.deg)) / (1 - p)
		t.Logf("uniform without replacement, deg %d fanout %d: inclusion: chi2 = %.1f, df = %d, p = %.4f",
			c.deg, c.fanout, x, c.deg-1, chi2SF(x, int(c.deg-1)))
		assert.Less(t, x, c.crit, "inclusion frequencies %v", counts)
	}

	// Every 2-subset of 5 is equally likely (df 9).
	subsets := map[[2]int64]int{}
	for _, b := range trials(t, starGraph(5), options{Fanouts: []int{2}, Seed: 10}, 20000) {
		subsets[[2]int64{b.EdgeIDs[0], b.EdgeIDs[1]}]++
	}
	require.Len(t, subsets, 10)
	var counts []int
	for _, c := range subsets {
		counts = append(counts, c)
	}
	x := chi2(counts)
	t.Logf("uniform without replacement: 2-subsets of 5: chi2 = %.2f, df = 9, p = %.4f", x, chi2SF(x, 9))
	assert.Less(t, x, 27.88, "subset frequencies %v", subsets)
}

func TestUniformityWithReplacement(t *testing.T) {
	counts := make([]int, 7)
	dupSeen := false
	for _, b := range trials(t, starGraph(7), options{Fanouts: []int{5}, Replace: true, Seed: 11}, 10000) {
		require.Len(t, b.EdgeIDs, 5)
		for _, e := range b.EdgeIDs {
			counts[e]++
		}
		s := slices.Clone(b.EdgeIDs)
		slices.Sort(s)
		if len(slices.Compact(s)) < 5 {
			dupSeen = true
		}
	}
	x := chi2(counts)
	t.Logf("uniform with replacement: per-draw neighbour: chi2 = %.2f, df = 6, p = %.4f", x, chi2SF(x, 6))
	assert.Less(t, x, 22.46, "frequencies %v", counts) // df 6, p = 0.001
	assert.True(t, dupSeen, "with replacement repeats must occur")
}

func TestOptionErrors(t *testing.T) {
	cases := []struct {
		opt  options
		want string
	}{
		{options{}, "sample: Request.Fanouts is empty (want one fan-out per hop)"},
		{options{Fanouts: []int{5, -2}}, "sample: Request.Fanouts[1] = -2 is invalid (want >= 0, or -1 for all neighbours)"},
		{options{Fanouts: []int{-7, 0}}, "sample: Request.Fanouts[0] = -7 is invalid (want >= 0, or -1 for all neighbours)"},
		{options{Fanouts: []int{1}, Frontier: 7}, "sample: Request.Frontier = 7 is invalid (want FrontierAll (0) or FrontierNew (1))"},
	}
	p := rangePartition(tinyGraph(), 1)
	for _, c := range cases {
		_, err := newSampler(p, comm.NewLocal(1), c.opt)
		assert.EqualError(t, err, c.want, "Bind checks the request")
	}
	_, err := newSampler(p, comm.NewLocal(1), options{Fanouts: []int{-1, 3, 0}})
	assert.NoError(t, err)
}

func TestNewErrors(t *testing.T) {
	opt := options{Fanouts: []int{2}}
	g := tinyGraph()
	_, err := newSampler(rangePartition(g, 2), comm.NewLocal(3), opt)
	assert.EqualError(t, err, "sample: comm size = 3 does not match the partition's 2 patches")
	_, err = newSampler(nil, comm.NewLocal(1), opt)
	assert.EqualError(t, err, "sample: partition is nil")
	_, err = newSampler(rangePartition(g, 1), nil, opt)
	assert.EqualError(t, err, "sample: comm is nil")
	_, err = newSampler(&partition.Partitioned{Offsets: []int64{0, 6}}, comm.NewLocal(1), opt)
	assert.EqualError(t, err, "sample: partition.Graph is nil")
	_, err = newSampler(&partition.Partitioned{Graph: g, Offsets: []int64{0, 5}}, comm.NewLocal(1), opt)
	assert.EqualError(t, err, "sample: partition.Offsets[1] = 5 (want NumNodes = 6)")
	_, err = newSampler(&partition.Partitioned{Graph: g, Offsets: []int64{0, 4, 3, 6}}, comm.NewLocal(3), opt)
	assert.EqualError(t, err, "sample: partition.Offsets[2] = 3 is less than Offsets[1] = 4")
	_, err = newSampler(&partition.Partitioned{Graph: g, Offsets: []int64{0}}, comm.NewLocal(1), opt)
	assert.EqualError(t, err, "sample: len(partition.Offsets) = 1 (want NumPatches+1 >= 2)")
	_, err = newSampler(&partition.Partitioned{Graph: g, Offsets: []int64{0, 6}, NewToOld: []int64{0}}, comm.NewLocal(1), opt)
	assert.EqualError(t, err, "sample: len(partition.NewToOld) = 1 (want NumNodes = 6, or nil)")
	bad := tinyGraph()
	bad.Indices[0] = 99
	_, err = newSampler(rangePartition(bad, 1), comm.NewLocal(1), opt)
	assert.ErrorContains(t, err, "sample: partition.Graph: graph: CSC indices[0]=99 is out of range")
}

func TestSeedErrors(t *testing.T) {
	s := mustSampler(t, rangePartition(tinyGraph(), 2), options{Fanouts: []int{2}})
	ctx := context.Background()
	_, err := s.SampleBatches(ctx, [][]int64{{0, 1}, {2, 6}}, []uint64{0, 1})
	assert.EqualError(t, err, "sample: batches[1][1] = 6 is out of range [0, 6)")
	_, err = s.SampleBatches(ctx, [][]int64{{-1}}, []uint64{0})
	assert.EqualError(t, err, "sample: batches[0][0] = -1 is out of range [0, 6)")
	_, err = s.SampleBatches(ctx, [][]int64{{0, 3, 1, 3}}, []uint64{0})
	assert.EqualError(t, err, "sample: batches[0][3] = 3 duplicates batches[0][1]")
	_, err = s.SampleBatches(ctx, [][]int64{{0}}, nil)
	assert.EqualError(t, err, "sample: len(keys) = 0 does not match len(batches) = 1")
	// Argument errors leave the sampler usable.
	res := sampleAll(t, s, [][]int64{{0, 3}}, []uint64{0})
	assert.Equal(t, []int64{0, 3}, res[0].Nodes[:2])
	var nilS *Sampler
	_, err = nilS.SampleBatches(ctx, nil, nil)
	assert.Error(t, err)
}

func TestCancelledContext(t *testing.T) {
	s := mustSampler(t, rangePartition(tinyGraph(), 2), options{Fanouts: []int{2}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.SampleBatches(ctx, [][]int64{{0}}, []uint64{0})
	assert.ErrorIs(t, err, context.Canceled)
	// Cancelled before any collective: still usable.
	sampleAll(t, s, [][]int64{{0}}, []uint64{0})
}

// A comm whose rank 1 fails its second call: the error must come back and
// no rank may hang.
type failingComm struct {
	*comm.Local
	mu    sync.Mutex
	calls int
}

func (f *failingComm) AllToAll(ctx context.Context, rank int, send []mem.Buffer, st mem.Stream) ([]mem.Buffer, error) {
	if rank == 1 {
		f.mu.Lock()
		f.calls++
		n := f.calls
		f.mu.Unlock()
		if n == 2 {
			return nil, fmt.Errorf("link down")
		}
	}
	return f.Local.AllToAll(ctx, rank, send, st)
}

func TestCommFailureDoesNotHang(t *testing.T) {
	s, err := newSampler(rangePartition(tinyGraph(), 3), &failingComm{Local: comm.NewLocal(3)}, options{Fanouts: []int{2, 2}})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := s.SampleBatches(context.Background(), [][]int64{{0}, {1}, {2}}, []uint64{0, 1, 2})
		done <- err
	}()
	select {
	case err := <-done:
		assert.ErrorContains(t, err, "link down")
	case <-time.After(10 * time.Second):
		t.Fatal("SampleBatches hung after a comm failure")
	}
}

func TestManyBatchesInWaves(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	g := randomGraph(r, 400, 5000, true)
	batches, keys := randomBatches(r, g.NumNodes, 11, 20)
	opt := options{Fanouts: []int{3, 2}, Frontier: FrontierNew, Seed: 5}
	ref := sampleAll(t, mustSampler(t, rangePartition(g, 1), opt), batches, keys)
	got := sampleAll(t, mustSampler(t, rangePartition(g, 4), opt), batches, keys)
	assert.Equal(t, ref, got)
}

func TestConcurrentCallsAreSerialised(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	g := randomGraph(r, 300, 3000, false)
	batches, keys := randomBatches(r, g.NumNodes, 3, 20)
	opt := options{Fanouts: []int{3, 3}}
	s := mustSampler(t, rangePartition(g, 3), opt)
	ref := sampleAll(t, s, batches, keys)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := s.SampleBatches(context.Background(), batches, keys)
			assert.NoError(t, err)
			assert.Equal(t, ref, got)
		}()
	}
	wg.Wait()
}

func TestMessageDecoding(t *testing.T) {
	_, err := bytesInt64(make([]byte, 7))
	assert.EqualError(t, err, "sample: received a message of 7 bytes (want a multiple of 8)")
	buf := make([]byte, 17)
	copy(buf[1:], int64Bytes([]int64{5, -3}))
	got, err := bytesInt64(buf[1:]) // misaligned: copied
	require.NoError(t, err)
	assert.Equal(t, []int64{5, -3}, got)
}

package cache_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

const numNodes = 300

// fixture: a random graph split into patches (renumbered), a sampler on it
// and a store with rows of three dtypes, each row's bytes a function of the
// node id.
type fixture struct {
	p     *partition.Partitioned
	s     *sample.Sampler
	store *feature.Store
}

func newFixture(t *testing.T, patches int, threads int) *fixture {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 9))
	n := int64(numNodes)
	indptr := make([]int64, n+1)
	var indices []int64
	for v := range n {
		// Skewed in-degrees, so that the degree policy has a clear order.
		for range r.IntN(int(v%17) + 1) {
			indices = append(indices, r.Int64N(n))
		}
		indptr[v+1] = int64(len(indices))
	}
	g, err := graph.FromCSC(n, indptr, indices, nil, nil)
	require.NoError(t, err)
	p, err := partition.Build(g, partition.Options{NumPatches: patches})
	require.NoError(t, err)
	rt, err := sample.NewRuntime(p, comm.NewLocal(patches), sample.RuntimeOptions{Threads: threads})
	require.NoError(t, err)
	s, err := rt.Bind(sample.Request{Fanouts: []int{3, 2}, Seed: 21})
	require.NoError(t, err)
	store := feature.NewStore(n)
	for _, d := range []struct {
		name  string
		dtype mem.DType
		cols  int64
	}{{"f32", mem.Float32, 5}, {"f16", mem.Float16, 3}, {"bf16", mem.BFloat16, 7}} {
		tt := mem.Tensor{DType: d.dtype, Shape: []int64{n, d.cols}}
		tt.Data = make([]byte, int(n)*tt.RowBytes())
		for i := range tt.Data {
			tt.Data[i] = byte(i*31 + i/7)
		}
		require.NoError(t, store.Set(d.name, tt, nil))
	}
	return &fixture{p: p, s: s, store: store}
}

func TestSizeRows(t *testing.T) {
	for _, tc := range []struct {
		s    cache.Size
		want int64
	}{
		{cache.Size{}, 0},
		{cache.Size{Bytes: 1000}, 100},
		{cache.Size{Bytes: 1 << 40}, 500},
		{cache.Size{Fraction: 0.25}, 125},
		{cache.Size{Fraction: 1}, 500},
		{cache.Size{Auto: true, Budget: 3000, Reserve: 1000}, 200},
		{cache.Size{Auto: true, Budget: 1000, Reserve: 3000}, 0},
	} {
		got, err := tc.s.Rows(500, 10)
		require.NoError(t, err, "%+v", tc.s)
		require.Equal(t, tc.want, got, "%+v", tc.s)
	}
	for _, bad := range []cache.Size{{Bytes: -1}, {Fraction: 1.5}, {Auto: true, Budget: -1}} {
		_, err := bad.Rows(500, 10)
		require.Error(t, err, "%+v", bad)
	}
}

func TestRankAndDegree(t *testing.T) {
	require.Equal(t, []int64{1, 3, 0, 2}, cache.Rank([]int64{2, 5, 0, 5}))
	g, err := graph.FromCSC(3, []int64{0, 1, 4, 4}, []int64{2, 0, 1, 2}, nil, nil)
	require.NoError(t, err)
	deg, err := cache.ByInDegree(g)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 3, 0}, deg)
	require.Equal(t, []int64{1, 0, 2}, cache.Rank(deg))
	_, err = cache.ByInDegree(nil)
	require.Error(t, err)
}

// Every tier split, dtype and policy gathers what a plain gather gives, and
// the counts are the hand count of hot ids.
func TestTieredGatherEqualsPlain(t *testing.T) {
	f := newFixture(t, 2, 2)
	deg, err := cache.ByInDegree(f.p.Graph)
	require.NoError(t, err)
	seeds := make([]int64, 120)
	for i := range seeds {
		seeds[i] = int64(i * 2)
	}
	counts, err := pipeline.PreSample(context.Background(), f.s, f.p, seeds, pipeline.Options{BatchSize: 32, Shuffle: true, Seed: 4}, 2)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(1, 2))
	ids := make([]int64, 700) // repeats included, as a batch's labels may not, but features of many batches do
	for i := range ids {
		ids[i] = r.Int64N(numNodes)
	}
	for policy, score := range map[string][]int64{"degree": deg, "presample": counts} {
		order := cache.Rank(score)
		for _, frac := range []float64{0, 0.1, 0.5, 1} {
			rows, err := cache.Size{Fraction: frac}.Rows(numNodes, 1)
			require.NoError(t, err)
			hot := order[:rows]
			tier, err := cache.New(f.store, []string{"f32", "f16", "bf16"}, hot)
			require.NoError(t, err)
			isHot := map[int64]bool{}
			for _, v := range hot {
				isHot[v] = true
			}
			var wantHot int64
			for _, v := range ids {
				if isHot[v] {
					wantHot++
				}
			}
			for _, name := range []string{"f32", "f16", "bf16"} {
				src, _ := f.store.Get(name)
				want := make([]byte, len(ids)*src.RowBytes())
				require.NoError(t, f.store.Gather(name, want, ids, 1))
				got := make([]byte, len(want))
				tc, err := tier.GatherTiers(name, got, ids, 3)
				require.NoError(t, err)
				require.Equal(t, want, got, "%s, %v hot, %s", policy, frac, name)
				require.Equal(t, wantHot, tc.HotRows, "%s, %v hot, %s", policy, frac, name)
				require.Equal(t, int64(len(ids))-wantHot, tc.ColdRows)
				require.Equal(t, [feature.NumTiers]int64{int64(len(want)), 0, 0}, tc.Bytes)
			}
			require.Equal(t, rows*(5*4+3*2+7*2), tier.HotBytes())
		}
	}
}

// The pipeline's statistics report the hit rate a hand count gives.
func TestPipelineHitRate(t *testing.T) {
	f := newFixture(t, 1, 2)
	deg, err := cache.ByInDegree(f.p.Graph)
	require.NoError(t, err)
	hot := cache.Rank(deg)[:60]
	tier, err := cache.New(f.store, []string{"f32"}, hot)
	require.NoError(t, err)
	isHot := map[int64]bool{}
	for _, v := range hot {
		isHot[v] = true
	}
	seeds := make([]int64, 100)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	pl, err := pipeline.New(f.s, f.p, tier, seeds, pipeline.Options{BatchSize: 16, FeatureNames: []string{"f32"}, LabelNames: []string{"f16"}}, nil)
	require.NoError(t, err)
	defer pl.Close()
	require.NoError(t, pl.Start(0))
	var hits, rows int64
	for {
		b, err := pl.Next(context.Background())
		if err != nil {
			require.ErrorContains(t, err, "EOF")
			break
		}
		for _, v := range mem.Int64s(b.Nodes.Data) { // one patch: original = internal ids
			rows++
			if isHot[v] {
				hits++
			}
		}
		rows += b.Seeds.Shape[0] // the labels: an uncached name, all cold
		b.Release()
	}
	c := pl.Stats().Current
	require.Equal(t, hits, c.Gathered.HotRows)
	require.Equal(t, rows-hits, c.Gathered.ColdRows)
	require.Positive(t, hits)
}

// Pre-sampling gives the same counts for a seed, whatever the worker count,
// and other counts for another shuffle seed.
func TestPreSampleDeterministic(t *testing.T) {
	f := newFixture(t, 2, 2)
	seeds := make([]int64, 150)
	for i := range seeds {
		seeds[i] = int64(2 * i)
	}
	run := func(workers int, seed uint64) []int64 {
		c, err := pipeline.PreSample(context.Background(), f.s, f.p, seeds, pipeline.Options{BatchSize: 16, Shuffle: true, Seed: seed, Workers: workers}, 3)
		require.NoError(t, err)
		return c
	}
	a := run(1, 7)
	require.Equal(t, a, run(3, 7))
	require.NotEqual(t, a, run(1, 8))
	var total int64
	for _, c := range a {
		total += c
	}
	require.Greater(t, total, int64(3*len(seeds)), "every seed and some neighbours are read each epoch")
	_, err := pipeline.PreSample(context.Background(), f.s, f.p, seeds, pipeline.Options{BatchSize: 16}, 0)
	require.Error(t, err)
}

func TestNewErrors(t *testing.T) {
	f := newFixture(t, 1, 1)
	_, err := cache.New(nil, nil, nil)
	require.Error(t, err)
	_, err = cache.New(f.store, []string{"nope"}, nil)
	require.ErrorContains(t, err, "nope")
	_, err = cache.New(f.store, nil, []int64{1, 1})
	require.ErrorContains(t, err, "repeats")
	_, err = cache.New(f.store, nil, []int64{numNodes})
	require.ErrorContains(t, err, "out of range")
	tier, err := cache.New(f.store, []string{"f32"}, []int64{3})
	require.NoError(t, err)
	_, err = tier.GatherTiers("f32", make([]byte, 20), []int64{numNodes}, 1)
	require.ErrorContains(t, err, "out of range")
	_, err = tier.GatherTiers("f32", make([]byte, 3), []int64{1}, 1)
	require.Error(t, err)
}

// A pipeline's ReadCounts are the counts PreSample gets by running the
// same epochs, and a pipeline given a Tiered by SetGatherer counts hits.
func TestReadCountsAndSetGatherer(t *testing.T) {
	f := newFixture(t, 2, 2)
	seeds := make([]int64, 150)
	for i := range seeds {
		seeds[i] = int64(2 * i)
	}
	opt := pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 5, FeatureNames: []string{"f32"}}
	want, err := pipeline.PreSample(context.Background(), f.s, f.p, seeds, opt, 3)
	require.NoError(t, err)
	pl, err := pipeline.New(f.s, f.p, f.store, seeds, opt, nil)
	require.NoError(t, err)
	defer pl.Close()
	got, err := pl.ReadCounts(context.Background(), 3)
	require.NoError(t, err)
	require.Equal(t, want, got)
	_, err = pl.ReadCounts(context.Background(), 0)
	require.Error(t, err)

	tier, err := cache.New(f.store, []string{"f32"}, cache.Rank(got)[:30])
	require.NoError(t, err)
	require.NoError(t, pl.SetGatherer(tier))
	require.NoError(t, pl.Start(0))
	for {
		b, err := pl.Next(context.Background())
		if err != nil {
			break
		}
		b.Release()
	}
	require.Positive(t, pl.Stats().Current.Gathered.HotRows)
	other := feature.NewStore(numNodes)
	require.ErrorContains(t, pl.SetGatherer(other), "f32")
	require.Error(t, pl.SetGatherer(nil))
}

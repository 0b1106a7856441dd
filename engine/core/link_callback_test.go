package core

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// excludeCalls records the calls of an exclude callback: the seed edges it
// was given per batch key.
type excludeCalls struct {
	mu    sync.Mutex
	seeds map[uint64][]int64
}

// selfExclusion is an exclude callback that names the batch's own seed
// edges (what linkpred.ExcludeSelfEdges excludes), recording each call.
func (c *excludeCalls) selfExclusion(_ context.Context, key uint64, ids []int64, maxOut int) ([]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seeds == nil {
		c.seeds = map[uint64][]int64{}
	}
	if _, again := c.seeds[key]; again {
		return nil, errors.New("called twice for one batch")
	}
	if len(ids) > maxOut {
		return nil, errors.New("maxOut below the batch's own seed edges")
	}
	c.seeds[key] = slices.Clone(ids)
	return ids, nil
}

// An exclude callback's edges are excluded as the engine's own exclusion of
// the same edges would be: the loader's batches (and the EdgeSampler's) are
// bit for bit those of ExcludeSelfEdges, whatever the partition and
// worker count, and the callback was called once per batch, with its seed
// edges and its batch key.
func TestExcludeCallbackIsTheStaticExclusion(t *testing.T) {
	tc := edgeLoaderCases()[0] // DGL, ExcludeSelfEdges
	static := tc.opt
	for name, popt := range partitions() {
		for _, workers := range []int{1, 3} {
			g := newTestGraph(t, popt)
			lopt := pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 3, Threads: workers, Workers: workers}
			want, err := g.OpenEdgeLoader(tc.items, static, lopt, nil)
			require.NoError(t, err)
			var calls excludeCalls
			opt := static
			opt.DGL.Exclude = linkpred.ExcludeNone
			opt.ExcludeFunc = calls.selfExclusion
			got, err := g.OpenEdgeLoader(tc.items, opt, lopt, nil)
			require.NoError(t, err)
			wb, gb := readEpoch(t, want, 1), readEpoch(t, got, 1)
			require.Len(t, gb, len(wb))
			require.Len(t, calls.seeds, len(gb), "one call per batch")
			for i := range gb {
				require.Equal(t, snapshot(&EdgeBatch{Batch: wb[i]}), snapshot(&EdgeBatch{Batch: gb[i]}), "%s, %d workers, batch %d", name, workers, i)
				key := pipeline.BatchKey(1, int64(i))
				seeds := i64(gb[i].Link[LinkEdgeIDs])
				require.ElementsMatch(t, seeds, calls.seeds[key], "batch %d's call had its seed edges", i)
			}
			require.NoError(t, want.Close())
			require.NoError(t, got.Close())

			es, err := g.NewEdgeSampler(opt)
			require.NoError(t, err)
			ref, err := g.NewEdgeSampler(static)
			require.NoError(t, err)
			a, err := es.SampleDGL([]int64{5, 17, 3}, 99, nil)
			require.NoError(t, err)
			b, err := ref.SampleDGL([]int64{5, 17, 3}, 99, nil)
			require.NoError(t, err)
			require.Equal(t, snapshot(b), snapshot(a))
			require.Equal(t, []int64{5, 17, 3}, calls.seeds[99])
			a.Release()
			b.Release()
			require.NoError(t, es.Close())
			require.NoError(t, ref.Close())
		}
	}
}

// The callback's edges add to the request's and to DGL.Exclude's: with
// ExcludeSelfEdges kept and a callback naming one more edge, that edge is
// never sampled either.
func TestExcludeCallbackAddsToTheExclusion(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	plain, err := g.NewEdgeSampler(EdgeSamplerOptions{Request: linkRequest(), Mode: LinkDGL})
	require.NoError(t, err)
	defer plain.Close()
	b, err := plain.SampleDGL([]int64{5, 17}, 0, nil)
	require.NoError(t, err)
	taken := blockEdges(b)
	b.Release()
	other := taken[len(taken)-1]
	require.NotContains(t, []int64{5, 17}, other)
	extra := func(context.Context, uint64, []int64, int) ([]int64, error) { return []int64{other}, nil }
	es, err := g.NewEdgeSampler(EdgeSamplerOptions{Request: linkRequest(), Mode: LinkDGL,
		DGL: linkpred.DGLEdgeSampler{Exclude: linkpred.ExcludeSelfEdges}, ExcludeFunc: extra})
	require.NoError(t, err)
	defer es.Close()
	b, err = es.SampleDGL([]int64{5, 17}, 0, nil)
	require.NoError(t, err)
	defer b.Release()
	for _, e := range []int64{5, 17, other} {
		require.NotContains(t, blockEdges(b), e)
	}
}

// A callback's error fails its batch: the batches before it arrive, then
// Next returns the error (its message and class kept), and the epoch ends.
// A result that is not edge ids fails the batch with a message naming it.
func TestExcludeCallbackErrorFailsItsBatch(t *testing.T) {
	tc := edgeLoaderCases()[0]
	g := newTestGraph(t, partitions()["range3"])
	failAt := pipeline.BatchKey(0, 2)
	opt := tc.opt
	opt.ExcludeFunc = func(_ context.Context, key uint64, ids []int64, _ int) ([]int64, error) {
		if key == failAt {
			return nil, errs.Errorf(errs.ErrState, "the user's exclusion failed on purpose")
		}
		return ids, nil
	}
	l, err := g.OpenEdgeLoader(tc.items, opt, pipeline.Options{BatchSize: 16, Workers: 2, Threads: 2}, nil)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, l.Start(0))
	for i := range 2 {
		b, err := l.Next(context.Background())
		require.NoError(t, err, "batch %d", i)
		b.Release()
	}
	_, err = l.Next(context.Background())
	require.ErrorContains(t, err, "making batch 2: exclude callback: the user's exclusion failed on purpose")
	require.ErrorIs(t, err, errs.ErrState)

	for _, bad := range []struct {
		out  []int64
		want string
	}{
		{[]int64{3, -1}, "exclude callback: its result[1] = -1 is not an edge id"},
		{[]int64{testEdges}, "is not an edge id (the graph has"},
	} {
		opt.ExcludeFunc = func(context.Context, uint64, []int64, int) ([]int64, error) { return bad.out, nil }
		es, err := g.NewEdgeSampler(opt)
		require.NoError(t, err)
		_, err = es.SampleDGL([]int64{5}, 0, nil)
		require.ErrorContains(t, err, bad.want)
		require.NoError(t, es.Close())
	}
	pyg := edgeLoaderCases()[2].opt
	pyg.ExcludeFunc = opt.ExcludeFunc
	_, err = g.NewEdgeSampler(pyg)
	require.ErrorContains(t, err, "DGL-mode edge samplers only")
}

// An epoch resumed at batch k calls the callback for batches k, k+1, ...
// only, and yields the batches of the uninterrupted epoch from k on.
func TestExcludeCallbackResumedEpoch(t *testing.T) {
	tc := edgeLoaderCases()[0]
	g := newTestGraph(t, partitions()["range3"])
	var all, rest excludeCalls
	opt := tc.opt
	lopt := pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 5, Workers: 2, Threads: 2}
	opt.ExcludeFunc = all.selfExclusion
	full, err := g.OpenEdgeLoader(tc.items, opt, lopt, nil)
	require.NoError(t, err)
	defer full.Close()
	want := readEpoch(t, full, 4)
	opt.ExcludeFunc = rest.selfExclusion
	l, err := g.OpenEdgeLoader(tc.items, opt, lopt, nil)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, l.StartAt(4, 2))
	var got []*pipeline.Batch
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		t.Cleanup(b.Release)
		got = append(got, b)
	}
	require.Len(t, got, len(want)-2)
	for i, b := range got {
		require.Equal(t, snapshot(&EdgeBatch{Batch: want[i+2]}), snapshot(&EdgeBatch{Batch: b}))
	}
	require.Len(t, rest.seeds, len(want)-2)
	for key, seeds := range rest.seeds {
		require.GreaterOrEqual(t, key, pipeline.BatchKey(4, 2))
		require.Equal(t, all.seeds[key], seeds)
	}
}

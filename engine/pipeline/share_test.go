package pipeline

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
)

// digest is what a test compares of a batch: its index, seeds, nodes and
// node data.
func digest(b *Batch) []any {
	out := []any{b.Index, b.Epoch, i64(b.Seeds), i64(b.InputIndex), i64(b.Nodes), i64(b.HopCounts)}
	for _, name := range []string{"feat", "half", "label", "mask"} {
		out = append(out, b.NodeData[name].Shape, b.NodeData[name].Data)
	}
	return out
}

// epochDigests reads epoch e of pl.
func epochDigests(t *testing.T, pl *Pipeline, e uint64) [][]any {
	t.Helper()
	require.NoError(t, pl.Start(e))
	bs := drain(t, pl)
	defer releaseAll(bs)
	out := make([][]any, len(bs))
	for i, b := range bs {
		out[i] = digest(b)
	}
	return out
}

// TestShareDealsTheGroupsBatches: a pipeline with a Share delivers the
// batches (k*Size + Rank) mod G of the pipeline without one, G its batch
// count, ceil(G/Size) of them or the Share's Batches, whatever its
// workers.
func TestShareDealsTheGroupsBatches(t *testing.T) {
	f := newFixture(t, 1, true, defaultSample)
	seeds := seedRange(90)
	opt := defaultOpts()
	opt.BatchSize = 8 // 12 batches
	whole, err := New(f.s, f.p, f.store, seeds, opt, nil)
	require.NoError(t, err)
	defer whole.Close()
	const epoch = 3
	ref := epochDigests(t, whole, epoch)
	require.Len(t, ref, 12)
	for _, tc := range []struct {
		rank, size, batches, workers, want int
	}{
		{0, 1, 0, 2, 12},
		{1, 3, 0, 1, 4},
		{2, 5, 0, 3, 3}, // 12 = 2*5 + 2: rank 2 is padded with batch 0
		{4, 5, 0, 1, 3},
		{0, 1, 17, 2, 17}, // an agreed count beyond G repeats the first
	} {
		o := opt
		o.Workers = tc.workers
		o.Share = &Share{Rank: tc.rank, Size: tc.size, Batches: tc.batches}
		pl, err := New(f.s, f.p, f.store, seeds, o, nil)
		require.NoError(t, err)
		require.Equal(t, tc.want, pl.NumBatches(), "%+v", tc)
		require.Equal(t, tc.workers, pl.Stats().Workers)
		got := epochDigests(t, pl, epoch)
		require.Len(t, got, tc.want)
		for k, d := range got {
			require.Equal(t, ref[(k*tc.size+tc.rank)%12], d, "%+v: batch %d", tc, k)
		}
		c := pl.Stats().Current
		require.Equal(t, int64(tc.want), c.Consumer.Batches)
		require.Equal(t, int64(tc.want), c.Loader.Batches)
		require.Positive(t, c.Gathered.ColdRows)
		_, err = pl.ReadCounts(context.Background(), 1)
		require.ErrorIs(t, err, errs.ErrNotSupported)
		require.NoError(t, pl.Close())
	}
	_, err = New(f.s, f.p, f.store, seeds, Options{BatchSize: 8, Share: &Share{Rank: 3, Size: 3}}, nil)
	require.ErrorContains(t, err, "share rank 3 of 3")
}

// storeRows is a RowLoader that gathers the rows from a feature.Store in
// the worker (what a rank that owns every row would fetch), recording
// which workers called it.
type storeRows struct {
	store   *feature.Store
	workers chan int
}

func (s storeRows) LoadRows(_ context.Context, worker int, b *Batch, nodes []int64, numSeeds int, featureNames, labelNames []string, threads int) (feature.TierCounts, error) {
	s.workers <- worker
	var tc feature.TierCounts
	for k, list := range [][]string{featureNames, labelNames} {
		ids := nodes
		if k == 1 {
			ids = nodes[:numSeeds]
		}
		for _, name := range list {
			src, _ := s.store.Get(name)
			t, err := b.AddNodeData(name, src.DType, len(ids), src.Shape[1:])
			if err != nil {
				return tc, err
			}
			if err := s.store.Gather(name, t.Data, ids, threads); err != nil {
				return tc, err
			}
			tc.Add(feature.HostCounts(len(ids), t.RowBytes()))
		}
	}
	return tc, nil
}

// TestShareRowLoader: a Share's RowLoader loads the node data in the
// sampler workers, in place of the store (New takes none), with the
// batches and statistics of the loader stage's gather; such a pipeline
// takes no gatherer.
func TestShareRowLoader(t *testing.T) {
	f := newFixture(t, 2, true, defaultSample)
	seeds := seedRange(90)
	opt := defaultOpts()
	opt.BatchSize = 8
	opt.Share = &Share{Rank: 1, Size: 2}
	plain, err := New(f.s, f.p, f.store, seeds, opt, nil)
	require.NoError(t, err)
	defer plain.Close()
	want := epochDigests(t, plain, 1)
	for _, workers := range []int{1, 3} {
		rows := storeRows{store: f.store, workers: make(chan int, 100)}
		o := opt
		o.Workers = workers
		o.Share = &Share{Rank: 1, Size: 2, Rows: rows}
		alloc := mem.NewChecked(mem.Heap{})
		pl, err := New(f.s, f.p, nil, seeds, o, alloc)
		require.NoError(t, err)
		require.Equal(t, want, epochDigests(t, pl, 1))
		close(rows.workers)
		seen := map[int]bool{}
		for w := range rows.workers {
			seen[w] = true
		}
		require.Len(t, seen, workers, "every worker loads its batches' rows")
		require.Equal(t, plain.Stats().Current.Gathered, pl.Stats().Current.Gathered)
		require.ErrorIs(t, pl.SetGatherer(f.store), errs.ErrNotSupported)
		require.NoError(t, pl.Close())
		n, _ := alloc.Outstanding()
		require.Zero(t, n)
	}
}

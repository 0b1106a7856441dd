package pipeline

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// seedMaker makes node batches the way New's workers do, as a Maker: its
// items are seeds, and a batch samples the seeds at its positions. A
// pipeline over it must deliver New's batches.
type seedMaker struct {
	s     *sample.Sampler
	seeds []int64 // original ids
	fail  int64   // Make fails for a batch key with this index (-1: never)
}

func (m *seedMaker) Partitioned() *partition.Partitioned { return m.s.Partitioned() }
func (m *seedMaker) Threads() int                        { return m.s.Threads() }
func (m *seedMaker) Recycle(r ...*sample.Result)         { m.s.Recycle(r...) }
func (m *seedMaker) Fork(threads int) (*seedMaker, error) {
	f, err := m.s.Fork(threads)
	return &seedMaker{s: f, seeds: m.seeds, fail: m.fail}, err
}

func (m *seedMaker) Make(ctx context.Context, pos []int64, key uint64, alloc mem.Allocator) (*Batch, *sample.Result, error) {
	if int64(key&0xffffffff) == m.fail {
		return nil, nil, errors.New("made to fail")
	}
	p := m.s.Partitioned()
	seeds := make([]int64, len(pos))
	for i, q := range pos {
		seeds[i] = m.seeds[q]
	}
	internal, err := InternalSeeds(p, seeds)
	if err != nil {
		return nil, nil, err
	}
	res, err := m.s.SampleBatches(ctx, [][]int64{internal}, []uint64{key})
	if err != nil {
		return nil, nil, err
	}
	b, err := Materialize(res[0], seeds, pos, p, nil, nil, nil, alloc, 1)
	if err != nil {
		m.s.Recycle(res...)
		return nil, nil, err
	}
	return b, res[0], nil
}

// edgeStore holds "w": row e = (e, -e) float64, one row per edge id.
func edgeStore(t *testing.T, numEdges int64) *feature.Store {
	t.Helper()
	s := feature.NewStore(numEdges)
	w := make([]float64, 2*numEdges)
	for e := range numEdges {
		w[2*e], w[2*e+1] = float64(e), -float64(e)
	}
	data := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 8*len(w))
	require.NoError(t, s.Set("w", mem.Tensor{DType: mem.Float64, Shape: []int64{numEdges, 2}, Data: data}, nil))
	return s
}

// checkEdgeData checks that b's edge data "w" holds the rows of its blocks'
// edge ids, in block order.
func checkEdgeData(t *testing.T, b *Batch) {
	t.Helper()
	var ids []int64
	for _, blk := range b.Blocks {
		ids = append(ids, i64(blk.EdgeIDs)...)
	}
	require.NotEmpty(t, ids)
	w := b.EdgeData["w"]
	require.Equal(t, []int64{int64(len(ids)), 2}, w.Shape)
	rows := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(w.Data))), len(w.Data)/8)
	for i, e := range ids {
		require.Equal(t, []float64{float64(e), -float64(e)}, rows[2*i:2*i+2], "edge %d (id %d)", i, e)
	}
}

// A maker's pipeline delivers, for any number of workers, what its Make
// gives for (positions, BatchKey), with node data, edge data and
// statistics: here New's very batches.
func TestMakerPipelineIsTheNodePipeline(t *testing.T) {
	f := newFixture(t, 3, true, defaultSample)
	seeds := seedRange(100)
	opt := defaultOpts()
	ref, err := New(f.s, f.p, f.store, seeds, opt, nil)
	require.NoError(t, err)
	defer ref.Close()
	want := epochDigests(t, ref, 2)
	opt.EdgeFeatureNames = []string{"w"}
	opt.EdgeStore = edgeStore(t, f.g.NumEdges())
	for _, workers := range []int{1, 2, 3} {
		opt.Workers = workers
		alloc := mem.NewChecked(mem.Heap{})
		pl, err := NewMaker(&seedMaker{s: f.s, seeds: seeds, fail: -1}, f.p, f.store, len(seeds), opt, alloc)
		require.NoError(t, err)
		require.Equal(t, ref.NumBatches(), pl.NumBatches())
		require.NoError(t, pl.Start(2))
		bs := drain(t, pl)
		got := make([][]any, len(bs))
		for i, b := range bs {
			got[i] = digest(b)
			checkEdgeData(t, b)
		}
		require.Equal(t, want, got, "%d workers", workers)
		st := pl.Stats()
		require.Equal(t, workers, st.Workers)
		require.Equal(t, int64(len(bs)), st.Current.Consumer.Batches)
		require.Positive(t, st.Current.Gathered.Bytes[0])
		releaseAll(bs)
		counts, err := pl.ReadCounts(context.Background(), 2)
		require.NoError(t, err)
		refCounts, err := ref.ReadCounts(context.Background(), 2)
		require.NoError(t, err)
		require.Equal(t, refCounts, counts)
		require.NoError(t, pl.Close())
		n, _ := alloc.Outstanding()
		require.Zero(t, n, "every batch buffer freed")
	}
}

func TestMakerErrors(t *testing.T) {
	f := newFixture(t, 2, false, defaultSample)
	seeds := seedRange(40)
	m := &seedMaker{s: f.s, seeds: seeds, fail: 1}
	opt := defaultOpts()
	pl, err := NewMaker(m, f.p, f.store, len(seeds), opt, nil)
	require.NoError(t, err)
	require.NoError(t, pl.Start(0))
	b, err := pl.Next(context.Background())
	require.NoError(t, err)
	b.Release()
	_, err = pl.Next(context.Background())
	require.ErrorContains(t, err, "making batch 1: made to fail")
	require.NoError(t, pl.Close())

	m.fail = -1
	bad := []Options{
		{BatchSize: 0},
		{BatchSize: 4, SeedTimes: []int64{1}},
		{BatchSize: 4, Share: &Share{Rank: 1, Size: 1}},
		{BatchSize: 4, FeatureNames: []string{"nope"}},
		{BatchSize: 4, EdgeFeatureNames: []string{"w"}},
		{BatchSize: 4, EdgeFeatureNames: []string{"nope"}, EdgeStore: edgeStore(t, f.g.NumEdges())},
		{BatchSize: 4, EdgeFeatureNames: []string{"w", "w"}, EdgeStore: edgeStore(t, f.g.NumEdges())},
		{BatchSize: 4, EdgeFeatureNames: []string{"w"}, EdgeStore: edgeStore(t, 3)},
	}
	for i, o := range bad {
		_, err := NewMaker(m, f.p, f.store, len(seeds), o, nil)
		require.Error(t, err, "options %d", i)
	}
	_, err = NewMaker(m, f.p, f.store, -1, opt, nil)
	require.ErrorContains(t, err, "items")
	other := newFixture(t, 2, false, defaultSample)
	_, err = NewMaker(m, other.p, f.store, len(seeds), opt, nil)
	require.ErrorContains(t, err, "different partition")
	_, err = NewMaker[*seedMaker](nil, f.p, f.store, len(seeds), opt, nil)
	require.ErrorContains(t, err, "nil")
}

// Node pipelines gather edge data too.
func TestNodePipelineEdgeData(t *testing.T) {
	f := newFixture(t, 2, true, defaultSample)
	opt := defaultOpts()
	opt.EdgeFeatureNames = []string{"w"}
	opt.EdgeStore = edgeStore(t, f.g.NumEdges())
	pl, err := New(f.s, f.p, f.store, seedRange(50), opt, nil)
	require.NoError(t, err)
	defer pl.Close()
	require.NoError(t, pl.Start(0))
	bs := drain(t, pl)
	defer releaseAll(bs)
	for _, b := range bs {
		checkEdgeData(t, b)
	}
}

// checkCOO checks b.COO against b's blocks: every edge of Blocks[0], then
// Blocks[1], ..., its source, destination (DstOffset + its CSC row) and id.
func checkCOO(t *testing.T, b *Batch) {
	t.Helper()
	require.NotNil(t, b.COO)
	var row, col, ids []int64
	for _, blk := range b.Blocks {
		indptr := i64(blk.Indptr)
		for v := int64(0); v < blk.NumDst; v++ {
			for p := indptr[v]; p < indptr[v+1]; p++ {
				row = append(row, i64(blk.Indices)[p])
				col = append(col, blk.DstOffset+v)
				ids = append(ids, i64(blk.EdgeIDs)[p])
			}
		}
	}
	require.NotEmpty(t, row)
	require.Equal(t, []int64{2, int64(len(row))}, b.COO.Index.Shape)
	require.Equal(t, append(row, col...), i64(b.COO.Index))
	require.Equal(t, ids, i64(b.COO.EdgeIDs))
}

// Options.COO: the workers add every batch's edges as one edge list, for
// node and maker pipelines, with PyG's frontier (blocks with a DstOffset).
func TestPipelineCOO(t *testing.T) {
	req := defaultSample
	req.Frontier = sample.FrontierNew
	f := newFixture(t, 2, true, req)
	opt := defaultOpts()
	opt.COO = true
	alloc := mem.NewChecked(mem.Heap{})
	seeds := seedRange(60)
	for _, maker := range []bool{false, true} {
		var pl *Pipeline
		var err error
		if maker {
			pl, err = NewMaker(&seedMaker{s: f.s, seeds: seeds, fail: -1}, f.p, f.store, len(seeds), opt, alloc)
		} else {
			pl, err = New(f.s, f.p, f.store, seeds, opt, alloc)
		}
		require.NoError(t, err)
		require.NoError(t, pl.Start(1))
		bs := drain(t, pl)
		offsets := false
		for _, b := range bs {
			checkCOO(t, b)
			offsets = offsets || b.Blocks[len(b.Blocks)-1].DstOffset > 0
			require.Error(t, b.SetCOO(), "a second SetCOO")
		}
		require.True(t, offsets, "PyG's frontier: later hops' destinations start after the seeds")
		releaseAll(bs)
		require.NoError(t, pl.Close())
	}
	n, _ := alloc.Outstanding()
	require.Zero(t, n, "the COO tensors are released with their batches")
}

// materializing is a sampler whose forks make their batches themselves (a
// device backend's): they cannot have the host-side views.
type materializing struct{ *sample.Sampler }

func (m materializing) Fork(threads int) (materializing, error) {
	f, err := m.Sampler.Fork(threads)
	return materializing{f}, err
}

func (materializing) SampleMaterialized(context.Context, MaterializeRequest) ([]Materialized, error) {
	return nil, errors.New("not reached")
}

// A materializing sampler refuses the edge list and edge data, which the
// pipeline computes from host blocks.
func TestMaterializerRefusesCOOAndEdgeData(t *testing.T) {
	f := newFixture(t, 1, false, defaultSample)
	for _, opt := range []Options{
		{BatchSize: 8, COO: true},
		{BatchSize: 8, EdgeFeatureNames: []string{"w"}, EdgeStore: edgeStore(t, f.g.NumEdges())},
	} {
		pl, err := New(materializing{f.s}, f.p, nil, seedRange(20), opt, nil)
		require.NoError(t, err)
		require.NoError(t, pl.Start(0))
		_, err = pl.Next(context.Background())
		require.ErrorContains(t, err, "no edge list (Options.COO) nor edge data")
		require.NoError(t, pl.Close())
	}
}

// groupMaker is a seedMaker that is a GroupMaker: it makes group[rank] and
// records the batch indices of every round it was given.
type groupMaker struct {
	*seedMaker
	log *roundLog // shared by the forks
}

type roundLog struct {
	mu     sync.Mutex
	rounds [][]int64
}

func (m *groupMaker) Fork(threads int) (*groupMaker, error) {
	f, err := m.seedMaker.Fork(threads)
	return &groupMaker{seedMaker: f, log: m.log}, err
}

func (m *groupMaker) MakeGroup(ctx context.Context, group [][]int64, keys []uint64, rank int, alloc mem.Allocator) (*Batch, *sample.Result, error) {
	round := make([]int64, len(keys))
	for j, k := range keys {
		round[j] = int64(k & 0xffffffff)
	}
	m.log.mu.Lock()
	m.log.rounds = append(m.log.rounds, round)
	m.log.mu.Unlock()
	return m.Make(ctx, group[rank], keys[rank], alloc)
}

// A maker's pipeline with a Share deals out the batches of the maker's
// pipeline without one, as New's does; a GroupMaker is given every rank's
// batch of each round.
func TestMakerShare(t *testing.T) {
	f := newFixture(t, 1, true, defaultSample)
	seeds := seedRange(90)
	opt := defaultOpts()
	opt.BatchSize = 8 // 12 batches
	m := &seedMaker{s: f.s, seeds: seeds, fail: -1}
	whole, err := NewMaker(m, f.p, f.store, len(seeds), opt, nil)
	require.NoError(t, err)
	defer whole.Close()
	const epoch, size = 2, 5
	ref := epochDigests(t, whole, epoch)
	require.Len(t, ref, 12)
	for _, workers := range []int{1, 2} {
		for rank := range size {
			log := &roundLog{}
			o := opt
			o.Workers = workers
			o.Share = &Share{Rank: rank, Size: size}
			pl, err := NewMaker(&groupMaker{seedMaker: m, log: log}, f.p, f.store, len(seeds), o, nil)
			require.NoError(t, err)
			got := epochDigests(t, pl, epoch)
			require.NoError(t, pl.Close())
			require.Len(t, got, 3)
			for k := range got {
				require.Equal(t, ref[(k*size+rank)%12], got[k], "workers %d rank %d batch %d", workers, rank, k)
			}
			slices.SortFunc(log.rounds, func(a, b []int64) int { return int(a[0] - b[0]) })
			require.Equal(t, [][]int64{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 0, 1, 2}}, log.rounds)
		}
	}
}

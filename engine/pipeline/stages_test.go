package pipeline

import (
	"context"
	"encoding/binary"
	"io"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// countingSampler is a BatchSampler other than *sample.Sampler: it samples
// through one and counts the waves its forks sample.
type countingSampler struct {
	s     *sample.Sampler
	waves *atomic.Int64
}

func (c *countingSampler) Partitioned() *partition.Partitioned { return c.s.Partitioned() }
func (c *countingSampler) Threads() int                        { return c.s.Threads() }
func (c *countingSampler) LocalRanks() []int                   { return c.s.LocalRanks() }
func (c *countingSampler) Recycle(r ...*sample.Result) {
	c.s.Recycle(r...)
}

func (c *countingSampler) Fork(threads int) (*countingSampler, error) {
	f, err := c.s.Fork(threads)
	if err != nil {
		return nil, err
	}
	return &countingSampler{s: f, waves: c.waves}, nil
}

func (c *countingSampler) SampleBatches(ctx context.Context, batches [][]int64, keys []uint64) ([]*sample.Result, error) {
	c.waves.Add(1)
	return c.s.SampleBatches(ctx, batches, keys)
}

// idGatherer is a Gatherer other than *feature.Store: one int64 column,
// "id", whose row v holds 1000+v (internal id).
type idGatherer struct{ n int64 }

func (g idGatherer) NumNodes() int64 { return g.n }
func (g idGatherer) Names() []string { return []string{"id"} }
func (g idGatherer) Get(name string) (mem.Tensor, bool) {
	if name != "id" {
		return mem.Tensor{}, false
	}
	return mem.Tensor{DType: mem.Int64, Shape: []int64{g.n}}, true
}

func (g idGatherer) Gather(name string, dst []byte, ids []int64, _ int) error {
	for i, v := range ids {
		binary.LittleEndian.PutUint64(dst[8*i:], uint64(1000+v))
	}
	return nil
}

// The pipeline runs any BatchSampler and Gatherer: the batches are those
// of the CPU sampler, the node data the gatherer's.
func TestCustomStages(t *testing.T) {
	f := newFixture(t, 3, true, defaultSample)
	waves := &atomic.Int64{}
	cs := &countingSampler{s: f.s, waves: waves}
	opt := Options{BatchSize: 16, FeatureNames: []string{"id"}, Workers: 2}
	pl, err := New(cs, f.p, idGatherer{f.g.NumNodes}, seedRange(100), opt, nil)
	require.NoError(t, err)
	defer pl.Close()
	ref, err := New(f.s, f.p, f.store, seedRange(100), Options{BatchSize: 16}, nil)
	require.NoError(t, err)
	defer ref.Close()
	require.NoError(t, pl.Start(1))
	require.NoError(t, ref.Start(1))
	got, want := drainRaw(t, pl), drainRaw(t, ref)
	require.Len(t, got, len(want))
	for i, b := range got {
		require.Equal(t, i64(want[i].Nodes), i64(b.Nodes))
		ids := i64(b.NodeData["id"])
		for k, v := range i64(b.Nodes) {
			require.Equal(t, 1000+f.p.OldToNew[v], ids[k], "batch %d node %d", i, k)
		}
	}
	require.EqualValues(t, 3, waves.Load(), "7 batches in waves of 3 ranks")
	releaseAll(got)
	releaseAll(want)
}

// drainRaw reads an epoch to io.EOF without checking the node data.
func drainRaw(t *testing.T, pl *Pipeline) []*Batch {
	t.Helper()
	var out []*Batch
	for {
		b, err := pl.Next(context.Background())
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		out = append(out, b)
	}
}

// A typed nil store is no store: fine without node data, an error with.
func TestTypedNilStore(t *testing.T) {
	f := newFixture(t, 1, false, defaultSample)
	var none *feature.Store
	pl, err := New(f.s, f.p, none, seedRange(10), Options{BatchSize: 4}, nil)
	require.NoError(t, err)
	require.NoError(t, pl.Close())
	_, err = New(f.s, f.p, none, seedRange(10), Options{BatchSize: 4, FeatureNames: []string{"feat"}}, nil)
	require.EqualError(t, err, `pipeline: feature names[0] = "feat" requested but store is nil`)
	var nilSampler *countingSampler
	_, err = New(nilSampler, f.p, f.store, seedRange(10), Options{BatchSize: 4}, nil)
	require.EqualError(t, err, "pipeline: sampler is nil")
}

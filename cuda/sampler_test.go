package cuda

import (
	"context"
	"testing"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/stretchr/testify/require"
)

// TestEmulatedKernelsMatchCPUEngine runs SelfCheck (every scheme the GPU
// offers, int32 and int64 sources, with and without edge ids, 3 patches on
// the CPU side) on the emulated device: the kernels' code must give the CPU
// engine's batches bit for bit.
func TestEmulatedKernelsMatchCPUEngine(t *testing.T) {
	d := startEmu(t)
	cfg := CheckConfig{Nodes: 1500, AvgDegree: 6, Hubs: 3, Patches: 3, Batches: 2, BatchSize: 24, Seed: 7}
	if testing.Short() {
		cfg.Batches = 1
	}
	rep, err := SelfCheck(d, cfg)
	require.NoError(t, err)
	require.Equal(t, 3*len(checkSchemes()), rep.Schemes)
	require.Positive(t, rep.Edges)
	t.Logf("compared %d schemes, %d batches, %d sampled edges", rep.Schemes, rep.Batches, rep.Edges)
}

func smallGraph(t *testing.T) *partition.Partitioned {
	g, err := graph.FromCSC(4, []int64{0, 2, 3, 3, 5}, []int64{1, 2, 0, 0, 1}, nil, []float32{1, 0, 2, 3, 4})
	require.NoError(t, err)
	return &partition.Partitioned{Graph: g, Offsets: []int64{0, 4}}
}

func TestSamplerRejects(t *testing.T) {
	d := startEmu(t)
	p := smallGraph(t)
	_, err := NewSampler(d, p, sample.Request{Fanouts: []int{2}, Scheme: sample.LayerWise})
	require.ErrorContains(t, err, "layer-wise stays on the CPU")
	_, err = NewSampler(d, p, sample.Request{})
	require.ErrorContains(t, err, "Fanouts is empty")
	_, err = NewSampler(nil, p, sample.Request{Fanouts: []int{2}})
	require.ErrorContains(t, err, "device is nil")
	s, err := NewSampler(d, p, sample.Request{Fanouts: []int{2}})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.SampleBatches(1, [][]int64{{0, 4}}, []uint64{0})
	require.ErrorContains(t, err, "out of range")
	_, err = s.SampleBatches(1, [][]int64{{0, 0}}, []uint64{0})
	require.ErrorContains(t, err, "duplicates")
	_, err = s.SampleBatches(1, [][]int64{{0}}, nil)
	require.ErrorContains(t, err, "len(keys)")
}

// TestSamplerEmptyAndPool: an empty batch and a batch whose frontier dies
// out; the second batch of the same shape allocates nothing new.
func TestSamplerEmptyAndPool(t *testing.T) {
	d := startEmu(t)
	p := smallGraph(t)
	s, err := NewSampler(d, p, sample.Request{Fanouts: []int{2, 2, 2}, Frontier: sample.FrontierNew})
	require.NoError(t, err)
	defer s.Close()
	res, err := s.SampleBatches(3, [][]int64{{}, {2}}, []uint64{1, 2})
	require.NoError(t, err)
	require.Empty(t, res[0].Nodes)
	require.Equal(t, []int64{0, 0, 0, 0}, res[0].HopCounts)
	require.Equal(t, []int64{2}, res[1].Nodes) // node 2 has no in-neighbours
	cpu, err := sample.NewRuntime(p, comm.NewLocal(1), sample.RuntimeOptions{})
	require.NoError(t, err)
	req := s.req
	req.Seed = 3
	want, err := cpu.Sample(context.Background(), req, [][]int64{{}, {2}}, []uint64{1, 2})
	require.NoError(t, err)
	for b := range want {
		require.NoError(t, EqualResults(want[b], res[b]), "batch %d", b)
	}
	before := d.Allocs
	_, err = s.SampleBatches(3, [][]int64{{}, {2}}, []uint64{1, 2})
	require.NoError(t, err)
	require.Equal(t, before, d.Allocs, "the pool must serve a repeated batch")
}

func TestPool(t *testing.T) {
	d := startEmu(t)
	p := NewPool(d)
	a, err := p.Get(300)
	require.NoError(t, err)
	require.Equal(t, int64(512), p.Held)
	require.NoError(t, p.Put(a))
	b, err := p.Get(400)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Error(t, p.Put(b+8))
	_, err = p.Get(-1)
	require.Error(t, err)
	require.NoError(t, p.Close())
	require.Zero(t, p.Held)
}

// TestEpochBenchEmulated runs the benchmark's epoch (with its comparison to
// the CPU engine) on the shipped Cora through the emulated device.
func TestEpochBenchEmulated(t *testing.T) {
	d := startEmu(t)
	res, err := EpochBench(d, EpochConfig{Dataset: "../examples/data/cora", Fanouts: []int{5, 3}, BatchSize: 32,
		MaxBatches: 3, Seed: 11, Compare: 3, CPUThreads: 2})
	require.NoError(t, err)
	require.Equal(t, 3, res.Batches)
	require.Equal(t, 3, res.ComparedBatches)
	require.True(t, res.Identical)
	require.Positive(t, res.SampledEdges)
}

// TestScan checks the three-launch scan on sizes around its chunking,
// in place, with an initial value.
func TestScan(t *testing.T) {
	d := startEmu(t)
	s := &Sampler{dev: d, pool: NewPool(d)}
	defer s.pool.Close()
	for _, n := range []int64{0, 1, 63, 64, 65, 4095, 4097, 70000} {
		in := make([]int64, n)
		want := make([]int64, n+1)
		want[0] = 5
		for i := range in {
			in[i] = int64(i%7) - 1
			want[i+1] = want[i] + in[i]
		}
		p, err := s.pool.Get((n + 1) * 8)
		require.NoError(t, err)
		require.NoError(t, d.CopyIn(p, int64Bytes(in)))
		require.NoError(t, s.scan(p, p, n, 5))
		got := make([]int64, n+1)
		require.NoError(t, d.CopyOut(int64Bytes(got), p))
		require.Equal(t, want, got, "n = %d", n)
		require.NoError(t, s.pool.Put(p))
	}
}

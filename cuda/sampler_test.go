package cuda

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
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

// TestEmulatedPipelineMatchesCPUEngine runs PipelineCheck on the emulated
// device: the device sampler stage (batches in device memory and on the
// host) and the mixed mode, with the tiered gatherer, equal the CPU
// engine's pipeline over a feature.Store, batch for batch and row for row,
// and the hot tier served the rows it holds.
func TestEmulatedPipelineMatchesCPUEngine(t *testing.T) {
	d := startEmu(t)
	schemes := 16
	if testing.Short() {
		schemes = 4
	}
	rep, err := PipelineCheck(d, CheckConfig{Nodes: 900, AvgDegree: 5, Hubs: 2, Patches: 3, Batches: 3, BatchSize: 20, Seed: 3}, schemes)
	require.NoError(t, err)
	require.Equal(t, 3*schemes, rep.Schemes)
	require.Equal(t, 3*schemes*2*3, rep.Batches, "3 batches in each of 2 epochs")
}

func smallGraph(t *testing.T) *partition.Partitioned {
	g, err := graph.FromCSC(4, []int64{0, 2, 3, 3, 5}, []int64{1, 2, 0, 0, 1}, nil, []float32{1, 0, 2, 3, 4})
	require.NoError(t, err)
	return &partition.Partitioned{Graph: g, Offsets: []int64{0, 4}}
}

func TestSamplerRejects(t *testing.T) {
	d := startEmu(t)
	p := smallGraph(t)
	for _, c := range []struct {
		req  sample.Request
		want string
	}{
		{sample.Request{Fanouts: []int{2}, Scheme: sample.LayerWise}, "layer-wise stays on the CPU"},
		{sample.Request{}, "Fanouts is empty"},
		{sample.Request{Fanouts: []int{2}, Frontier: sample.FrontierNew, Disjoint: true}, "disjoint and temporal"},
		{sample.Request{Fanouts: []int{2}, RelationFanouts: [][]int{{2}}}, "per-relation"},
	} {
		_, err := NewSampler(d, p, c.req, SamplerOptions{})
		require.ErrorContains(t, err, c.want)
	}
	_, err := NewSampler(nil, p, sample.Request{Fanouts: []int{2}}, SamplerOptions{})
	require.ErrorContains(t, err, "device is nil")
	s, err := NewSampler(d, p, sample.Request{Fanouts: []int{2}}, SamplerOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = s.SampleBatches(ctx, [][]int64{{0, 4}}, []uint64{0})
	require.ErrorContains(t, err, "out of range")
	_, err = s.SampleBatches(ctx, [][]int64{{0, 0}}, []uint64{0})
	require.ErrorContains(t, err, "duplicates")
	_, err = s.SampleBatches(ctx, [][]int64{{0}}, nil)
	require.ErrorContains(t, err, "len(keys)")
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "closing twice is a no-op")
	_, err = s.SampleBatches(ctx, [][]int64{{0}}, []uint64{0})
	require.ErrorContains(t, err, "closed")
}

// cpuBatches samples batches with the CPU engine's sampler of req.
func cpuBatches(t *testing.T, p *partition.Partitioned, req sample.Request, batches [][]int64, keys []uint64) []*sample.Result {
	rt, err := sample.NewRuntime(p, comm.NewLocal(p.NumPatches()), sample.RuntimeOptions{Threads: 2})
	require.NoError(t, err)
	cpu, err := rt.Bind(req)
	require.NoError(t, err)
	want, err := cpu.SampleBatches(context.Background(), batches, keys)
	require.NoError(t, err)
	return want
}

// TestSamplerEmptyAndPool: an empty batch and a batch whose frontier dies
// out; the second batch of the same shape allocates nothing new.
func TestSamplerEmptyAndPool(t *testing.T) {
	d := startEmu(t)
	p := smallGraph(t)
	req := sample.Request{Fanouts: []int{2, 2, 2}, Frontier: sample.FrontierNew, Seed: 3}
	s, err := NewSampler(d, p, req, SamplerOptions{})
	require.NoError(t, err)
	defer s.Close()
	batches, keys := [][]int64{{}, {2}}, []uint64{1, 2}
	res, err := s.SampleBatches(context.Background(), batches, keys)
	require.NoError(t, err)
	require.Empty(t, res[0].Nodes)
	require.Equal(t, []int64{0, 0, 0, 0}, res[0].HopCounts)
	require.Equal(t, []int64{2}, res[1].Nodes) // node 2 has no in-neighbours
	for b, w := range cpuBatches(t, p, req, batches, keys) {
		require.NoError(t, EqualResults(w, res[b]), "batch %d", b)
	}
	before := d.Allocs
	_, err = s.SampleBatches(context.Background(), batches, keys)
	require.NoError(t, err)
	require.Equal(t, before, d.Allocs, "the pool must serve a repeated batch")
}

// productsLike is a generated graph with a few hubs, for the batch-level
// tests.
func productsLike(t *testing.T, nodes int64, seed uint64) *partition.Partitioned {
	r := rand.New(rand.NewPCG(seed, 1))
	g, err := checkGraph(CheckConfig{Nodes: nodes, AvgDegree: 8, Hubs: 2}, r)
	require.NoError(t, err)
	p, err := partition.Build(g, partition.Options{Method: partition.Random, NumPatches: 2, Seed: seed})
	require.NoError(t, err)
	return p
}

// epochSeeds returns n distinct seeds (original ids) of p.
func epochSeeds(p *partition.Partitioned, n int, seed uint64) []int64 {
	seeds := make([]int64, 0, n)
	for _, v := range rand.New(rand.NewPCG(seed, 2)).Perm(int(p.Graph.NumNodes))[:n] {
		seeds = append(seeds, int64(v))
	}
	return seeds
}

// runEpoch streams epoch 0 of pl, checking every batch against want's
// (host) with st, and returns the batches.
func runEpoch(t *testing.T, st Stream, want, pl *pipeline.Pipeline) int {
	require.NoError(t, want.Start(0))
	require.NoError(t, pl.Start(0))
	n := 0
	for {
		w, err := want.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		b, err := pl.Next(context.Background())
		require.NoError(t, err)
		require.NoError(t, EqualBatches(st, w, b), "batch %d", w.Index)
		b.ReleaseAfter(st.Handle())
		w.Release()
		n++
	}
	_, err := pl.Next(context.Background())
	require.ErrorIs(t, err, io.EOF)
	return n
}

// TestOneSyncPerBatch: the device stage reads a batch's sizes and status
// back once ([15, 10, 5], the sizes on the device between the hops); a
// fan-out -1 hop whose bound is larger than MaxHopBytes is sized exactly,
// one more synchronisation, with the same batches.
func TestOneSyncPerBatch(t *testing.T) {
	d := startEmu(t)
	p := productsLike(t, 3000, 5)
	seeds := epochSeeds(p, 300, 5)
	st, err := d.NewStream()
	require.NoError(t, err)
	for _, c := range []struct {
		fanouts  []int
		maxBytes int64
		perBatch int64
	}{{[]int{15, 10, 5}, 0, 1}, {[]int{-1, 3}, 0, 1}, {[]int{-1, -1}, 64 << 10, 3}, {[]int{3, -1}, 64 << 10, 2}} {
		req := sample.Request{Fanouts: c.fanouts, Seed: 9}
		rt, err := sample.NewRuntime(p, comm.NewLocal(p.NumPatches()), sample.RuntimeOptions{Threads: 2})
		require.NoError(t, err)
		cpu, err := rt.Bind(req)
		require.NoError(t, err)
		opt := pipeline.Options{BatchSize: 64, Shuffle: true, Seed: 4, Workers: 2}
		want, err := pipeline.New(cpu, p, nil, seeds, opt, nil)
		require.NoError(t, err)
		s, err := NewSampler(d, p, req, SamplerOptions{MaxHopBytes: c.maxBytes})
		require.NoError(t, err)
		pl, err := pipeline.New(s, p, nil, seeds, opt, nil)
		require.NoError(t, err)
		n := runEpoch(t, st, want, pl)
		require.Equal(t, c.perBatch*int64(n), totalSyncs(s), "fanouts %v", c.fanouts)
		pl.Close()
		want.Close()
		require.NoError(t, s.Close())
	}
}

// TestDeviceBatchesAreDeviceMemory: a device batch's tensors are device
// memory of the sampler's pool, but HopCounts; releasing it gives every
// block back: a warm pool serves a repeated wave without allocating.
func TestDeviceBatchesAreDeviceMemory(t *testing.T) {
	d := startEmu(t)
	p := productsLike(t, 2000, 6)
	seeds := epochSeeds(p, 200, 6)
	s, err := NewSampler(d, p, sample.Request{Fanouts: []int{5, 3}, Seed: 1}, SamplerOptions{})
	require.NoError(t, err)
	defer s.Close()
	pl, err := pipeline.New(s, p, nil, seeds, pipeline.Options{BatchSize: 50, Workers: 2}, mem.NewChecked(nil))
	require.NoError(t, err)
	defer pl.Close()
	epoch := func(e uint64) {
		require.NoError(t, pl.Start(e))
		for {
			b, err := pl.Next(context.Background())
			if errors.Is(err, io.EOF) {
				return
			}
			require.NoError(t, err)
			dev := mem.Device{Kind: mem.KindDevice}
			for _, tt := range []mem.Tensor{b.Seeds, b.InputIndex, b.Nodes, b.Blocks[0].Indptr, b.Blocks[1].Indices, b.Blocks[1].EdgeIDs} {
				require.Equal(t, dev, tt.Device)
				require.NotZero(t, tt.DevicePtr)
				require.Nil(t, tt.Data)
			}
			require.Equal(t, mem.CPU, b.HopCounts.Device)
			require.NotEqual(t, mem.NoEvent, b.Ready())
			require.NotEqual(t, mem.NoStream, b.Stream())
			b.Release()
			require.Zero(t, b.Nodes.DevicePtr, "Release gives device tensors back")
		}
	}
	epoch(0)
	epoch(1)
	wave := pipeline.MaterializeRequest{Batches: [][]int64{{1, 2, 3}, {4, 5}}, Keys: []uint64{1, 2},
		Seeds: [][]int64{{1, 2, 3}, {4, 5}}, InputIndex: [][]int64{{0, 1, 2}, {3, 4}}, Alloc: mem.Heap{}}
	allocs := -1
	for range 2 {
		out, err := s.SampleMaterialized(context.Background(), wave)
		require.NoError(t, err)
		for _, m := range out {
			m.Batch.Release()
		}
		if allocs >= 0 {
			require.Equal(t, allocs, d.Allocs, "a warm pool serves a repeated wave")
		}
		allocs = d.Allocs
	}
}

// TestPoolPutAfter: a block given back after another stream's work is
// handed out again only after the pool's stream waited for that work.
func TestPoolPutAfter(t *testing.T) {
	d := startEmu(t)
	st, err := d.NewStream()
	require.NoError(t, err)
	waits := &countingStream{Stream: st}
	p := NewPool(d, waits)
	a, err := p.Get(300)
	require.NoError(t, err)
	require.Equal(t, int64(512), p.Held())
	other, err := d.NewStream()
	require.NoError(t, err)
	require.NoError(t, p.PutAfter(a, other.Handle()))
	b, err := p.Get(400)
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.Equal(t, 1, waits.waits, "reusing the block waits for the other stream")
	require.NoError(t, p.PutAfter(b, st.Handle())) // the pool's own stream: no wait
	_, err = p.Get(400)
	require.NoError(t, err)
	require.Equal(t, 1, waits.waits)
	require.Error(t, p.Put(b+8))
	_, err = p.Get(-1)
	require.Error(t, err)
	require.NoError(t, p.Close())
	require.Zero(t, p.Held())
	_, err = p.Get(8)
	require.ErrorContains(t, err, "closed")
}

// countingStream counts Wait calls.
type countingStream struct {
	Stream
	waits int
}

func (c *countingStream) Wait(e mem.Event) error {
	c.waits++
	return c.Stream.Wait(e)
}

// TestPlacement: automatic placement follows the free memory; pinned
// topology (copied into pinned allocations on the emulator, which cannot
// register memory in place) samples the same batches.
func TestPlacement(t *testing.T) {
	d := startEmu(t)
	p := productsLike(t, 1200, 8)
	req := sample.Request{Fanouts: []int{4, 4}, Seed: 2}
	arrays := 0 // the topology's arrays: all copied when pinned here
	for _, n := range []int{len(p.Graph.Indptr), len(p.Graph.Indices), len(p.Graph.Indices32), len(p.Graph.EdgeIDs), len(p.NewToOld)} {
		if n > 0 {
			arrays++
		}
	}
	for _, c := range []struct {
		opt    SamplerOptions
		want   Placement
		arrays int
	}{
		{SamplerOptions{}, PlaceDevice, 0},
		{SamplerOptions{Reserve: d.Total - 1000}, PlacePinned, arrays},
		{SamplerOptions{Placement: PlacePinned}, PlacePinned, arrays},
	} {
		s, err := NewSampler(d, p, req, c.opt)
		require.NoError(t, err)
		where, _, copied := s.Placement()
		require.Equal(t, c.want, where)
		require.Equal(t, c.arrays, copied)
		batches := [][]int64{{1, 2, 3, 50, 70}, {9, 400}}
		got, err := s.SampleBatches(context.Background(), batches, []uint64{5, 6})
		require.NoError(t, err)
		for b, w := range cpuBatches(t, p, req, batches, []uint64{5, 6}) {
			require.NoError(t, EqualResults(w, got[b]))
		}
		require.NoError(t, s.Close())
	}
}

// TestDegreeBounds: the bound of a frontier's neighbours is at least the
// sum over any frontier of that size, and exact for the largest degrees.
func TestDegreeBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	indptr := []int64{0}
	for range 500 {
		indptr = append(indptr, indptr[len(indptr)-1]+int64(r.IntN(30)))
	}
	d := newDegreeBounds(indptr)
	deg := func(v int) int64 { return indptr[v+1] - indptr[v] }
	for range 200 {
		k := r.IntN(501)
		f := int64(r.IntN(40)) - 1
		var sum, pos int64
		for _, v := range r.Perm(500)[:k] {
			if f < 0 {
				sum += deg(v)
			} else {
				sum += min(deg(v), f)
			}
			if deg(v) > 0 {
				pos++
			}
		}
		require.GreaterOrEqual(t, d.sum(int64(k), f), sum)
		require.GreaterOrEqual(t, d.positive(int64(k)), pos)
	}
	all := slices.Clone(d.desc)
	require.Equal(t, indptr[500], d.sum(500, -1))
	require.Equal(t, all[0]+all[1]+all[2], d.sum(3, -1))
	require.Equal(t, min(all[0], 7)+min(all[1], 7), d.sum(2, 7))
}

// TestScan checks the scan on sizes around its chunks and levels, in
// place, with an initial value and the total written, the size read on the
// device (below the host's bound).
func TestScan(t *testing.T) {
	d := startEmu(t)
	st, err := d.NewStream()
	require.NoError(t, err)
	m := &batchMem{pool: NewPool(d, st)}
	defer m.pool.Close()
	// Sizes around the chunk (128) and the levels: one level of chunk sums
	// up to 128*128, two up to 128^3, three beyond.
	for _, n := range []int64{0, 1, 127, 128, 129, 16383, 16384, 16385, 70000, 2100000} {
		in := make([]int64, n)
		want := make([]int64, n+1)
		want[0] = 5
		for i := range in {
			in[i] = int64(i%7) - 1
			want[i+1] = want[i] + in[i]
		}
		p, err := m.get((n + 1) * 8)
		require.NoError(t, err)
		words, err := m.get(4 * 8) // lo, hi, init, total
		require.NoError(t, err)
		require.NoError(t, st.CopyIn(p, int64Bytes(in)))
		require.NoError(t, st.CopyIn(words, int64Bytes([]int64{3, n + 3, 5, -1})))
		// The bound (n + 100) is larger than n: the size is the device's.
		require.NoError(t, scan(st, m, p, words, words+8, n+100, words+16, words+24, p))
		got := make([]int64, n+1)
		require.NoError(t, st.CopyOut(int64Bytes(got), p))
		require.Equal(t, want, got, "n = %d", n)
		total := make([]int64, 1)
		require.NoError(t, st.CopyOut(int64Bytes(total), words+24))
		require.Equal(t, want[n], total[0])
		m.release()
	}
}

// TestEpochBenchEmulated runs the benchmark's epoch (with its comparison to
// the CPU engine) and the gather measurement on the shipped Cora through
// the emulated device.
func TestEpochBenchEmulated(t *testing.T) {
	d := startEmu(t)
	res, err := EpochBench(d, EpochConfig{Dataset: "../examples/data/cora", Fanouts: []int{5, 3}, BatchSize: 32,
		MaxBatches: 3, Seed: 11, Compare: 3, CPUThreads: 2, Workers: 2, GatherRows: 500})
	require.NoError(t, err)
	require.Equal(t, 3, res.Batches)
	require.Equal(t, 3, res.ComparedBatches)
	require.True(t, res.Identical)
	require.Positive(t, res.SampledEdges)
	require.Equal(t, 1.0, res.SyncsPerBatch)
	require.Equal(t, "device", res.Placement)
	require.NotNil(t, res.Gather)
	require.Equal(t, int64(1433*4), res.Gather.RowBytes)
	require.Equal(t, int64(4), res.Gather.Width, "Cora's rows are 5732 bytes: 4-byte words")
	for _, v := range []float64{res.Gather.HotBytesPerSecond, res.Gather.ColdBytesPerSecond, res.Gather.D2DBytesPerSecond, res.Gather.H2DBytesPerSecond} {
		require.Positive(t, v)
	}
}

// registerSpy is a Device that counts the arrays it is asked to register
// in place, and those of them on the Go heap.
type registerSpy struct {
	Device
	asked, goHeap int
}

func (d *registerSpy) RegisterHost(b []byte) (Ptr, error) {
	d.asked++
	if !mem.OffHeap(b) {
		d.goHeap++
	}
	return d.Device.RegisterHost(b)
}

// offHeapCopy returns a copy of b in an anonymous memory map marked off
// the Go heap (as a mapped dataset file is), unmarked and unmapped at the
// test's end.
func offHeapCopy[T int64 | int32 | float32 | uint16 | uint64](t *testing.T, s []T) []T {
	t.Helper()
	if len(s) == 0 {
		return s
	}
	b := mem.Bytes(s)
	m, err := syscall.Mmap(-1, 0, len(b), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	require.NoError(t, err)
	copy(m, b)
	unmark := mem.MarkOffHeap(m)
	t.Cleanup(func() {
		unmark()
		require.NoError(t, syscall.Munmap(m))
	})
	return unsafe.Slice((*T)(unsafe.Pointer(&m[0])), len(s))
}

// TestPinnedRegistersOnlyOffHeap: pinned placement and the gatherer's cold
// tier never ask the device to register Go-heap memory in place (they copy
// it into pinned allocations); memory off the Go heap is asked for (the
// emulator refuses, so it is copied too). The batches and rows equal the
// CPU engine's either way.
func TestPinnedRegistersOnlyOffHeap(t *testing.T) {
	spy := &registerSpy{Device: startEmu(t)}
	heap := productsLike(t, 600, 5)
	mapped := *heap
	mg := *heap.Graph
	mg.Indptr, mg.Indices32, mg.EdgeIDs = offHeapCopy(t, mg.Indptr), offHeapCopy(t, mg.Indices32), offHeapCopy(t, mg.EdgeIDs)
	mapped.Graph = &mg
	require.NotNil(t, mg.Indices32, "the partition stores int32 sources")
	require.NotNil(t, mg.EdgeIDs, "the partition keeps the edge ids")
	req := sample.Request{Fanouts: []int{3, 3}, Seed: 4}
	batches, keys := [][]int64{{1, 2, 3, 50}, {9, 400, 599}}, []uint64{7, 8}
	want := cpuBatches(t, heap, req, batches, keys)

	feat := make([]float32, 600*5)
	for i := range feat {
		feat[i] = float32(i) / 3
	}
	ids := []int64{599, 0, 17, 17, 300}
	wantRows := make([]byte, len(ids)*5*4)
	for i, v := range ids {
		copy(wantRows[i*20:], mem.Bytes(feat[v*5:(v+1)*5]))
	}

	// The topology's arrays: indptr, sources, edge ids, and NewToOld (on
	// the Go heap in both cases).
	for _, c := range []struct {
		name  string
		p     *partition.Partitioned
		feat  []float32
		asked int // arrays the device is asked to register
	}{{"go heap", heap, feat, 0}, {"off heap", &mapped, offHeapCopy(t, feat), 3 + 1}} {
		spy.asked, spy.goHeap = 0, 0
		s, err := NewSampler(spy, c.p, req, SamplerOptions{Placement: PlacePinned})
		require.NoError(t, err, c.name)
		_, _, copied := s.Placement()
		require.Equal(t, 4, copied, "%s: every array copied (on the Go heap, or refused by the emulator)", c.name)
		got, err := s.SampleBatches(context.Background(), batches, keys)
		require.NoError(t, err)
		for b := range want {
			require.NoError(t, EqualResults(want[b], got[b]), c.name)
		}
		require.NoError(t, s.Close())

		store := feature.NewStore(600)
		require.NoError(t, store.Set("feat", mem.Tensor{DType: mem.Float32, Shape: []int64{600, 5}, Data: mem.Bytes(c.feat)}, nil))
		gat, err := NewGatherer(spy, store, GatherOptions{})
		require.NoError(t, err)
		require.True(t, gat.tiers["feat"].coldCopied)
		rows := make([]byte, len(wantRows))
		require.NoError(t, gat.Gather("feat", rows, ids, 1))
		require.Equal(t, wantRows, rows, c.name)
		require.NoError(t, gat.Close())

		require.Zero(t, spy.goHeap, "%s: asked to register Go-heap memory", c.name)
		require.Equal(t, c.asked, spy.asked, c.name)
	}
}

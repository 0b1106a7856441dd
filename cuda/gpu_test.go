//go:build cuda

package cuda

// The GPU device's tests, over gorgonia.org/cu and the driver. make test runs
// them here against the fake driver of cuda/fakedriver (make fakecuda;
// LD_LIBRARY_PATH=build/fakecuda); tests/gpu/run.sh runs the same tests,
// built here into build/gpu/cuda.test, against the real driver on a GPU
// machine. Every test is named TestGPU*: run.sh selects them so.

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/gctest"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/stretchr/testify/require"
	"gorgonia.org/cu"
)

func numDevices(t *testing.T) int {
	n, err := cu.NumDevices()
	require.NoError(t, err)
	require.Positive(t, n, "the driver sees no device")
	return n
}

func smallCheck(seed uint64) CheckConfig {
	return CheckConfig{Nodes: 600, AvgDegree: 6, Hubs: 1, Patches: 3, Batches: 1, BatchSize: 32, Seed: seed}
}

func current(t *testing.T) cu.CUContext {
	c, err := cu.CurrentContext()
	require.NoError(t, err)
	return c
}

func TestGPUInfo(t *testing.T) {
	n := numDevices(t)
	t.Logf("test binary %s; driver CUDA %s; %d device(s)", BuildID, cudaVersion(cu.Version()), n)
	for i := 0; i < n; i++ {
		info, err := Probe(i)
		require.NoError(t, err)
		t.Logf("device %d: %+v", i, info)
		require.Equal(t, i, info.Ordinal)
		require.GreaterOrEqual(t, info.ComputeMajor, MinComputeMajor)
		require.Equal(t, "sm_70", info.PTXTarget, "the kernels' PTX targets the oldest supported architecture")
		require.GreaterOrEqual(t, info.DriverVersion, info.NeedDriver)
		if os.Getenv("GF_EXPECT_REAL_DRIVER") == "1" {
			require.False(t, info.FakeDriver, "the fake driver answered where the real one was expected (LD_LIBRARY_PATH?)")
		}
	}
	_, err := Probe(n)
	require.ErrorContains(t, err, "does not exist")
	_, err = Probe(-1)
	require.ErrorContains(t, err, "does not exist")
	_, err = OpenGPU(n)
	require.ErrorContains(t, err, "does not exist")
}

// exercise runs every kind of GPU call on device ordinal and checks after
// each that the thread's current context is still want.
func exercise(t *testing.T, ordinal int, want cu.CUContext) {
	g, err := OpenGPU(ordinal)
	require.NoError(t, err)
	require.Equal(t, want, current(t), "OpenGPU changed the current context")
	p, err := g.Alloc(4096)
	require.NoError(t, err)
	require.Equal(t, want, current(t), "Alloc")
	require.NoError(t, g.CopyIn(p, make([]byte, 4096)))
	require.Equal(t, want, current(t), "CopyIn")
	require.NoError(t, g.Memset(p, 1, 64))
	require.Equal(t, want, current(t), "Memset")
	// The one-thread scan of 3 partial sums (level 1 of chunks of 1 value,
	// n = 3 and the initial value 5 read on the device): 1,1,1 -> 5,6,7,8.
	vals := []int64{1, 1, 1, 0, 3, 5}
	require.NoError(t, g.CopyIn(p, int64Bytes(vals)))
	require.NoError(t, g.Launch("gf_scan_partials", 1, 1, uint64(p), 0, uint64(p+32), 1, 1, uint64(p+40), 0))
	require.Equal(t, want, current(t), "Launch")
	require.NoError(t, g.Sync())
	require.Equal(t, want, current(t), "Sync")
	out := make([]int64, 4)
	require.NoError(t, g.CopyOut(int64Bytes(out), p))
	require.Equal(t, []int64{5, 6, 7, 8}, out)
	require.Equal(t, want, current(t), "CopyOut")
	require.NoError(t, g.Free(p))
	require.Equal(t, want, current(t), "Free")
	_, err = SelfCheck(g, smallCheck(1))
	require.NoError(t, err)
	require.Equal(t, want, current(t), "SelfCheck")
	reported, err := Fault(g, "node")
	require.NoError(t, err)
	require.Error(t, reported)
	require.Equal(t, want, current(t), "Fault")
	require.NoError(t, g.Close())
	require.Equal(t, want, current(t), "Close")
}

// PyTorch's current device is its current context's: graphferry must leave
// whatever is current on the calling thread as it found it, for every
// device it is asked to use.
func TestGPUContextDiscipline(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := numDevices(t)
	for ordinal := 0; ordinal < min(n, 2); ordinal++ {
		// Nothing current (a thread PyTorch never used).
		for {
			c := current(t)
			if c == (cu.CUContext{}) {
				break
			}
			_, err := cu.PopCurrentCtx()
			require.NoError(t, err)
		}
		exercise(t, ordinal, cu.CUContext{})
		// The primary context of the last device current, as PyTorch leaves
		// it after torch.cuda.set_device(n-1) (a DDP rank's device).
		other, err := cu.GetDevice(n - 1)
		require.NoError(t, err)
		pc, err := other.RetainPrimaryCtx()
		require.NoError(t, err)
		require.NoError(t, cu.PushCurrentCtx(pc))
		exercise(t, ordinal, pc)
		_, err = cu.PopCurrentCtx()
		require.NoError(t, err)
		require.NoError(t, other.ReleasePrimaryCtx())
		// A context of the user's own, current on this thread.
		dev, err := cu.GetDevice(ordinal)
		require.NoError(t, err)
		uc, err := dev.MakeContext(cu.SchedAuto)
		require.NoError(t, err)
		exercise(t, ordinal, uc)
		require.NoError(t, uc.Destroy())
	}
}

func TestGPUSelfCheck(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	for seed := uint64(1); seed <= 2; seed++ {
		rep, err := SelfCheck(g, CheckConfig{Nodes: 1500, AvgDegree: 8, Hubs: 2, Patches: 3, Batches: 2, BatchSize: 48, Seed: seed})
		require.NoError(t, err)
		require.Equal(t, 144, rep.Schemes)
		require.Positive(t, rep.Edges)
	}
}

// The deliberate faults are reported with the kernel's name, and the device
// (its context) stays usable: neither is a sticky CUDA error.
func TestGPUFaultsAreReported(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	reported, err := Fault(g, "node")
	require.NoError(t, err)
	require.ErrorContains(t, reported, "kernel gf_count")
	require.ErrorContains(t, reported, "frontier node 1099511627776 is outside the graph of 4 nodes")
	reported, err = Fault(g, "launch")
	require.NoError(t, err)
	require.ErrorContains(t, reported, "gf_count")
	require.ErrorContains(t, reported, "CUDA_ERROR_INVALID_VALUE")
	_, err = Fault(g, "nonsense")
	require.ErrorContains(t, err, "unknown kind")
	require.Nil(t, g.sticky.Load())
	_, err = SelfCheck(g, smallCheck(3))
	require.NoError(t, err, "the device must stay usable after the reported faults")
}

// The kernels' module is loaded once per context, shared by its GPUs, and
// unloaded with the last of them.
func TestGPUModuleOncePerContext(t *testing.T) {
	a, err := OpenGPU(0)
	require.NoError(t, err)
	b, err := OpenGPU(0)
	require.NoError(t, err)
	require.Same(t, a.mod, b.mod)
	require.Equal(t, 2, a.mod.refs)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "closing twice is a no-op")
	_, err = a.Alloc(8)
	require.ErrorContains(t, err, "closed")
	_, err = SelfCheck(b, smallCheck(4))
	require.NoError(t, err, "the module must outlive the first GPU's Close")
	ctx := b.ctx
	require.NoError(t, b.Close())
	modules.Lock()
	_, loaded := modules.m[ctx]
	modules.Unlock()
	require.False(t, loaded, "the module must be unloaded with its context's last GPU")
}

// Opening and closing the device 100 times while the caller holds its
// primary context (as PyTorch does) does not grow device memory.
func TestGPUOpenClose100(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	dev, err := cu.GetDevice(0)
	require.NoError(t, err)
	pc, err := dev.RetainPrimaryCtx()
	require.NoError(t, err)
	defer dev.ReleasePrimaryCtx()
	require.NoError(t, cu.PushCurrentCtx(pc))
	defer cu.PopCurrentCtx()
	round := func() {
		g, err := OpenGPU(0)
		require.NoError(t, err)
		p, err := g.Alloc(1 << 20)
		require.NoError(t, err)
		require.NoError(t, g.Free(p))
		require.NoError(t, g.Close())
	}
	round() // warm-up: the driver's own first-use allocations
	free0, _, err := cu.MemInfo()
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		round()
	}
	free1, total, err := cu.MemInfo()
	require.NoError(t, err)
	t.Logf("free device memory %d -> %d bytes of %d", free0, free1, total)
	require.GreaterOrEqual(t, free1, free0-(2<<20), "100 opens and closes leaked device memory")
}

// GPUs of the same device used from several goroutines at once share the
// module safely.
func TestGPUConcurrentUse(t *testing.T) {
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := OpenGPU(0)
			if err != nil {
				errs[i] = err
				return
			}
			defer g.Close()
			_, errs[i] = SelfCheck(g, smallCheck(uint64(10+i)))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

// An epoch of the shipped Cora sampled on the device equals the CPU
// engine's, batch for batch.
func TestGPUEpochCora(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	res, err := EpochBench(g, EpochConfig{Dataset: filepath.Join("..", "examples", "data", "cora"), Fanouts: []int{10, 5},
		BatchSize: 64, Seed: 5, Compare: 1000, CPUThreads: 2})
	require.NoError(t, err)
	require.True(t, res.Identical)
	require.Equal(t, res.Batches, res.ComparedBatches)
	require.Positive(t, res.Batches)
}

// The mode-2 pipeline on the device: the device sampler stage (batches in
// device memory and on the host) and the mixed mode, node data from the
// tiered gatherer, equal the CPU engine's pipeline over a feature.Store for
// every scheme the GPU offers, batch for batch and row for row, and the
// hot tier served exactly the rows it holds (PipelineCheck). Over the fake
// driver make test runs it in order and on concurrent schedules of several
// seeds.
func TestGPUPipelineCheck(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	rep, err := PipelineCheck(g, CheckConfig{Nodes: 1200, AvgDegree: 6, Hubs: 2, Patches: 3, Batches: 3, BatchSize: 32, Seed: 21}, 0)
	require.NoError(t, err)
	require.Equal(t, 3*len(checkSchemes()), rep.Schemes)
	require.Equal(t, rep.Schemes*2*3, rep.Batches)
}

// The topology in pinned host memory (the generated graphs are on the Go
// heap: copied into pinned allocations of the driver, not registered), read
// by the kernels over the bus: the same pipelines. A mapped graph's arrays
// are registered in place: TestGPUPinnedRegistersOnlyOffHeap.
func TestGPUPipelinePinnedTopology(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	p := &partition.Partitioned{Graph: smallCSC(t), Offsets: []int64{0, 4}}
	s, err := NewSampler(g, p, sample.Request{Fanouts: []int{2}}, SamplerOptions{Placement: PlacePinned})
	require.NoError(t, err)
	where, _, copied := s.Placement()
	require.Equal(t, PlacePinned, where)
	require.Equal(t, 2, copied, "indptr and sources, on the Go heap, are copied")
	require.NoError(t, s.Close())
	rep, err := PipelineCheck(g, CheckConfig{Nodes: 800, AvgDegree: 5, Hubs: 1, Patches: 3, Batches: 2, BatchSize: 32, Seed: 22,
		Placement: PlacePinned}, 12)
	require.NoError(t, err)
	require.Equal(t, 3*12, rep.Schemes)
}

// mappedCora is a copy of the shipped Cora with its CSC files added, open:
// its topology and features are memory maps of its files (off the Go heap),
// as a large dataset's are.
func mappedCora(t *testing.T) *dataset.Dataset {
	dir := t.TempDir()
	src := filepath.Join("..", "examples", "data", "cora")
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	require.NoError(t, dataset.WriteCSC(dir))
	ds, err := dataset.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { ds.Close() })
	require.True(t, ds.TopologyMapped())
	return ds
}

// gpuRegistered reports whether g holds a registration overlapping b.
func gpuRegistered(g *GPU, b []byte) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	g.mu.Lock()
	defer g.mu.Unlock()
	for r := range g.regs {
		if r.p < hi && lo < r.p+uintptr(r.n) {
			return true
		}
	}
	return false
}

// Pinned host memory takes only memory off the Go heap in place: a mapped
// dataset's topology (PlacePinned) and features (the gatherer's cold tier)
// are registered with the driver; the same arrays copied onto the Go heap
// are copied into pinned allocations of the driver and never registered
// (over the fake driver, its own record of registrations says so too). The
// batches and the gathered rows equal the CPU engine's either way.
func TestGPUPinnedRegistersOnlyOffHeap(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	total0, _, fake := fakeRegistrations()
	_, err = g.RegisterHost(make([]byte, 4096))
	require.ErrorContains(t, err, "not known to be off the Go heap", "the GPU refuses Go-heap memory itself")
	if total, _, _ := fakeRegistrations(); fake {
		require.Equal(t, total0, total, "the refused Go-heap memory reached the driver")
	}
	ds := mappedCora(t)
	feat := ds.NodeData[dataset.FeatKey]
	require.True(t, mem.OffHeap(int64Bytes(ds.Graph.Indptr)) && mem.OffHeap(feat.Data), "the dataset's files are mapped")
	mg := ds.Graph
	hg := &graph.CSC{NumNodes: mg.NumNodes, Indptr: slices.Clone(mg.Indptr), Indices: slices.Clone(mg.Indices),
		Indices32: slices.Clone(mg.Indices32), EdgeIDs: slices.Clone(mg.EdgeIDs)}
	heapFeat := feat
	heapFeat.Data = slices.Clone(feat.Data)
	require.False(t, mem.OffHeap(heapFeat.Data))

	req := sample.Request{Fanouts: []int{5, 3}, Seed: 3}
	n := mg.NumNodes
	batches, keys := [][]int64{{0, 1, 2, 100, n - 1}, {500, 1000}}, []uint64{1, 2}
	ids := []int64{n - 1, 0, 5, 5, 1999, 633}
	want := make([]byte, len(ids)*feat.RowBytes())
	for _, c := range []struct {
		name    string
		g       *graph.CSC
		feat    mem.Tensor
		offHeap bool
	}{{"mapped", mg, feat, true}, {"go heap", hg, heapFeat, false}} {
		total0, live0, fake := fakeRegistrations()
		p := &partition.Partitioned{Graph: c.g, Offsets: []int64{0, n}}
		s, err := NewSampler(g, p, req, SamplerOptions{Placement: PlacePinned})
		require.NoError(t, err, c.name)
		store := feature.NewStore(n)
		require.NoError(t, store.Set(dataset.FeatKey, c.feat, nil))
		gat, err := NewGatherer(g, store, GatherOptions{Policy: "degree", Graph: c.g, Size: cache.Size{Fraction: 0.2}})
		require.NoError(t, err, c.name)

		var arrays [][]byte // the topology's, then the features
		for _, a := range [][]byte{int64Bytes(c.g.Indptr), int64Bytes(c.g.Indices), int32Bytes(c.g.Indices32), int64Bytes(c.g.EdgeIDs)} {
			if len(a) > 0 {
				arrays = append(arrays, a)
			}
		}
		_, _, copied := s.Placement()
		if c.offHeap {
			require.Zero(t, copied, "the mapped topology is registered in place")
		} else {
			require.Equal(t, len(arrays), copied, "the Go-heap topology is copied")
		}
		require.Equal(t, !c.offHeap, gat.tiers[dataset.FeatKey].coldCopied, c.name)
		arrays = append(arrays, c.feat.Data)
		for i, a := range arrays {
			require.Equal(t, c.offHeap, gpuRegistered(g, a), "%s: array %d", c.name, i)
			if reg, ok := fakeRegistered(a); ok {
				require.Equal(t, c.offHeap, reg, "%s: array %d, the fake driver's record", c.name, i)
			}
		}
		if fake {
			regs := int64(0)
			if c.offHeap {
				regs = int64(len(arrays))
			}
			total, live, _ := fakeRegistrations()
			require.Equal(t, [2]int64{total0 + regs, live0 + regs}, [2]int64{total, live}, "%s: registrations (total, live)", c.name)
		}

		got, err := s.SampleBatches(context.Background(), batches, keys)
		require.NoError(t, err)
		for b, w := range cpuBatches(t, p, req, batches, keys) {
			require.NoError(t, EqualResults(w, got[b]), "%s: batch %d", c.name, b)
		}
		rows := make([]byte, len(want))
		require.NoError(t, gat.Gather(dataset.FeatKey, rows, ids, 1))
		require.NoError(t, store.Gather(dataset.FeatKey, want, ids, 1))
		require.Equal(t, want, rows, c.name)

		require.NoError(t, errors.Join(s.Close(), gat.Close()))
		for _, a := range arrays {
			require.False(t, gpuRegistered(g, a), "%s: closed, still registered", c.name)
		}
		if _, live, ok := fakeRegistrations(); ok {
			require.Equal(t, live0, live, "%s: closed, registrations left", c.name)
		}
	}
}

func smallCSC(t *testing.T) *graph.CSC {
	c, err := graph.FromCSC(4, []int64{0, 2, 3, 3, 5}, []int64{1, 2, 0, 0, 1}, nil, nil)
	require.NoError(t, err)
	return c.Wide()
}

// The device stage on the device: one host synchronisation per batch;
// its batches read after their Ready event and released after the reading
// stream's work; a warm pool allocates nothing for a repeated wave (its
// blocks given back after another stream's work included); closing the
// sampler frees all its device memory.
func TestGPUDeviceStage(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	r := rand.New(rand.NewPCG(4, 1))
	c, err := checkGraph(CheckConfig{Nodes: 4000, AvgDegree: 10, Hubs: 3}, r)
	require.NoError(t, err)
	p := &partition.Partitioned{Graph: c, Offsets: []int64{0, c.NumNodes}}
	seeds := make([]int64, 1000)
	for i, v := range r.Perm(int(c.NumNodes))[:1000] {
		seeds[i] = int64(v)
	}
	free0, _, err := g.MemInfo()
	require.NoError(t, err)
	s, err := NewSampler(g, p, sample.Request{Fanouts: []int{15, 10, 5}, Seed: 3}, SamplerOptions{})
	require.NoError(t, err)
	pl, err := pipeline.New(s, p, nil, seeds, pipeline.Options{BatchSize: 128, Shuffle: true, Workers: 3}, nil)
	require.NoError(t, err)
	st, err := g.NewStream()
	require.NoError(t, err)
	epoch := func(e uint64) int {
		require.NoError(t, pl.Start(e))
		n := 0
		for {
			b, err := pl.Next(context.Background())
			if errors.Is(err, io.EOF) {
				return n
			}
			require.NoError(t, err)
			require.NoError(t, st.Wait(b.Ready()))
			nodes, err := ReadTensor(st, b.Nodes)
			require.NoError(t, err)
			require.Len(t, nodes, int(b.Nodes.Shape[0])*8)
			b.ReleaseAfter(st.Handle())
			n++
		}
	}
	n := epoch(0)
	require.Equal(t, 8, n)
	require.Equal(t, int64(n), totalSyncs(s), "one host synchronisation per batch")
	epoch(1)
	pl.Close()
	// A wave made twice, released in between: the second allocates nothing.
	wave := pipeline.MaterializeRequest{Batches: [][]int64{seeds[:128], seeds[128:256]}, Keys: []uint64{1, 2},
		Seeds: [][]int64{seeds[:128], seeds[128:256]}, InputIndex: [][]int64{seeds[:128], seeds[128:256]}, Alloc: mem.Heap{}}
	held := int64(-1)
	for range 2 {
		out, err := s.SampleMaterialized(context.Background(), wave)
		require.NoError(t, err)
		for _, m := range out {
			m.Batch.ReleaseAfter(st.Handle())
		}
		if held >= 0 {
			require.Equal(t, held, s.PoolBytes(), "a warm pool allocates nothing")
		}
		held = s.PoolBytes()
	}
	require.NoError(t, st.Close())
	require.NoError(t, s.Close())
	free1, _, err := g.MemInfo()
	require.NoError(t, err)
	require.Equal(t, free0, free1, "closing the sampler frees its memory")
}

// A kernel launch leaves the garbage collector alone, whatever the C memory
// it builds the launch from held before: the parameters are written there
// by C, so a collection that runs meanwhile never reads a stale word of
// that memory as a Go pointer. gorgonia.org/cu's Function.Launch wrote the
// parameter pointers into fresh C.malloc memory with a Go pointer store;
// during a collection's mark phase that store's write barrier hands the old
// word (malloc's leftovers: often a kernel parameter of an earlier launch,
// such as the address of a registered Go array) to the collector, which
// dies with "found bad pointer in Go heap" or, the object freed meanwhile,
// "found pointer to free object" (1 run in 7-20 of the Python fence test).
// Here the launching thread's malloc blocks of the parameters' size are
// filled with a word in the unused tail of a live large object's span,
// which the collector always rejects, before each of many launches while
// collections run back to back. The launches run in a child process: the
// collector's fatal error cannot be recovered.
func TestGPULaunchUnderCollection(t *testing.T) {
	if os.Getenv("GF_TEST_LAUNCH_CHILD") == "1" {
		launchUnderCollection(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGPULaunchUnderCollection$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "GF_TEST_LAUNCH_CHILD=1")
	out, err := cmd.CombinedOutput()
	// The fatal error and the stack of the goroutine that hit it, not
	// every goroutine's.
	text := string(out)
	if i := strings.Index(text, "\n\ngoroutine "); i > 0 {
		if j := strings.Index(text[i+2:], "\n\ngoroutine "); j > 0 {
			text = text[:i+2+j]
		}
	}
	require.NoError(t, err, "the launches under collection failed:\n%s", text)
	require.Contains(t, text, "--- PASS: TestGPULaunchUnderCollection")
}

func launchUnderCollection(t *testing.T) {
	g, err := OpenGPU(0)
	require.NoError(t, err)
	defer g.Close()
	n, err := g.Alloc(8)
	require.NoError(t, err)
	defer g.Free(n)
	require.NoError(t, g.Memset(n, 0, 8))
	require.NoError(t, g.Sync())
	bad, live := gctest.BadPointer()
	defer gctest.Collect()()
	runtime.LockOSThread() // the scribbled blocks are this thread's
	defer runtime.UnlockOSThread()
	launches := 0
	for start := time.Now(); launches < 20000 && (launches < 500 || time.Since(start) < 2*time.Second); launches++ {
		// gf_map_ids over *n = 0 rows: nothing runs; 4 parameters.
		scribbleMalloc(4*8, bad, 4)
		require.NoError(t, g.Launch("gf_map_ids", 1, 32, 0, uint64(n), uint64(n), uint64(n)))
	}
	require.NoError(t, g.Sync())
	runtime.KeepAlive(live)
	t.Logf("%d launches", launches)
}

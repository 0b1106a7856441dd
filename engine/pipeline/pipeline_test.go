package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const featDim = 3

// fixture is a random graph, partitioned (optionally renumbered), with a
// sampler and a store whose rows encode their node's ORIGINAL id:
// feat[v] = (orig, orig+0.5, -orig) float32, label[v] = 10*orig int64,
// mask[v] = orig%2 (bool/uint8), half[v] = orig as raw uint16 in a float16
// array.
type fixture struct {
	g     *graph.CSC // original numbering
	p     *partition.Partitioned
	s     *sample.Sampler
	store *feature.Store
}

func randomCSC(r *rand.Rand, n int64, e int) *graph.CSC {
	dst := make([]int64, e)
	src := make([]int64, e)
	for i := range dst {
		dst[i], src[i] = r.Int64N(n), r.Int64N(n)
	}
	indptr := make([]int64, n+1)
	for _, d := range dst {
		indptr[d+1]++
	}
	for i := int64(0); i < n; i++ {
		indptr[i+1] += indptr[i]
	}
	fill := slices.Clone(indptr[:n])
	indices := make([]int64, e)
	ids := make([]int64, e)
	for i, d := range dst {
		indices[fill[d]] = src[i]
		ids[fill[d]] = int64(i)
		fill[d]++
	}
	return &graph.CSC{NumNodes: n, Indptr: indptr, Indices: indices, EdgeIDs: ids}
}

// partitionOf renumbers g into p patches (random assignment) or, when
// renumber is false, splits the identity numbering into ranges.
func partitionOf(r *rand.Rand, g *graph.CSC, p int, renumber bool) *partition.Partitioned {
	n := g.NumNodes
	off := make([]int64, p+1)
	if !renumber {
		for i := range off {
			off[i] = int64(i) * n / int64(p)
		}
		return &partition.Partitioned{Graph: g, Offsets: off}
	}
	assign := make([]int, n)
	for v := range assign {
		assign[v] = r.IntN(p)
		off[assign[v]+1]++
	}
	for i := 0; i < p; i++ {
		off[i+1] += off[i]
	}
	fill := slices.Clone(off[:p])
	o2n, n2o := make([]int64, n), make([]int64, n)
	for v := int64(0); v < n; v++ {
		o2n[v] = fill[assign[v]]
		n2o[o2n[v]] = v
		fill[assign[v]]++
	}
	indptr := make([]int64, n+1)
	var indices, ids []int64
	for nv := int64(0); nv < n; nv++ {
		v := n2o[nv]
		for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
			indices = append(indices, o2n[g.Indices[pos]])
			ids = append(ids, g.EdgeID(pos))
		}
		indptr[nv+1] = int64(len(indices))
	}
	ng := &graph.CSC{NumNodes: n, Indptr: indptr, Indices: indices, EdgeIDs: ids}
	return &partition.Partitioned{Graph: ng, Offsets: off, NewToOld: n2o, OldToNew: o2n}
}

func newFixture(t testing.TB, patches int, renumber bool, req sample.Request) *fixture {
	t.Helper()
	r := rand.New(rand.NewPCG(11, uint64(patches)))
	g := randomCSC(r, 400, 4000)
	p := partitionOf(r, g, patches, renumber)
	s, err := bind(p, comm.NewLocal(patches), req, sampleThreads)
	require.NoError(t, err)
	n := g.NumNodes
	store := feature.NewStore(n)
	feat := make([]float32, n*featDim)
	label := make([]int64, n)
	mask := make([]byte, n)
	half := make([]uint16, n)
	for nv := int64(0); nv < n; nv++ {
		o := nv
		if p.NewToOld != nil {
			o = p.NewToOld[nv]
		}
		feat[nv*featDim], feat[nv*featDim+1], feat[nv*featDim+2] = float32(o), float32(o)+0.5, -float32(o)
		label[nv] = 10 * o
		mask[nv] = byte(o % 2)
		half[nv] = uint16(o)
	}
	require.NoError(t, store.Set("feat", mem.Tensor{DType: mem.Float32, Shape: []int64{n, featDim}, Data: mem.Bytes(feat)}, nil))
	require.NoError(t, store.Set("label", mem.Tensor{DType: mem.Int64, Shape: []int64{n}, Data: mem.Bytes(label)}, nil))
	require.NoError(t, store.Set("mask", mem.Tensor{DType: mem.Bool, Shape: []int64{n}, Data: mask}, nil))
	require.NoError(t, store.Set("half", mem.Tensor{DType: mem.Float16, Shape: []int64{n}, Data: mem.Bytes(half)}, nil))
	return &fixture{g: g, p: p, s: s, store: store}
}

func seedRange(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(3*i+1) % 400 // original ids 1, 4, 7, ... (distinct for n <= 400)
	}
	return s
}

var defaultSample = sample.Request{Fanouts: []int{4, 3}, Seed: 5}

// sampleThreads is the thread count of the tests' samplers.
const sampleThreads = 2

// bind returns a sampler on a new runtime over p and c with threads
// threads that samples with req.
func bind(p *partition.Partitioned, c comm.Comm, req sample.Request, threads int) (*sample.Sampler, error) {
	rt, err := sample.NewRuntime(p, c, sample.RuntimeOptions{Threads: threads})
	if err != nil {
		return nil, err
	}
	return rt.Bind(req)
}

func defaultOpts() Options {
	return Options{BatchSize: 16, Shuffle: true, Seed: 77, FeatureNames: []string{"feat", "half"}, LabelNames: []string{"label", "mask"}, Threads: 2}
}

// drain reads an epoch to io.EOF, checks each batch's node data against its
// nodes, and returns the batches (still owned by the caller).
func drain(t *testing.T, pl *Pipeline) []*Batch {
	t.Helper()
	var out []*Batch
	for {
		b, err := pl.Next(context.Background())
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		checkBatch(t, b)
		out = append(out, b)
	}
}

func i64(t mem.Tensor) []int64 { return mem.Int64s(t.Data) }

func checkBatch(t *testing.T, b *Batch) {
	t.Helper()
	nodes, seeds := i64(b.Nodes), i64(b.Seeds)
	require.Equal(t, seeds, nodes[:len(seeds)], "seeds first")
	feat := mem.Float32s(b.NodeData["feat"].Data)
	require.Equal(t, []int64{int64(len(nodes)), featDim}, b.NodeData["feat"].Shape)
	for i, o := range nodes {
		require.Equal(t, []float32{float32(o), float32(o) + 0.5, -float32(o)}, feat[i*featDim:(i+1)*featDim])
	}
	half := b.NodeData["half"]
	require.Equal(t, mem.Float16, half.DType)
	for i, o := range nodes {
		require.Equal(t, uint16(o), uint16(half.Data[2*i])|uint16(half.Data[2*i+1])<<8)
	}
	labels := i64(b.NodeData["label"])
	require.Equal(t, []int64{int64(len(seeds))}, b.NodeData["label"].Shape)
	mask := b.NodeData["mask"]
	require.Equal(t, mem.Bool, mask.DType)
	for i, o := range seeds {
		require.Equal(t, 10*o, labels[i])
		require.Equal(t, byte(o%2), mask.Data[i])
	}
}

func releaseAll(bs []*Batch) {
	for _, b := range bs {
		b.Release()
	}
}

// settleGoroutines waits for the goroutine count to drop to base.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left running (base %d):\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEpochCoversSeedsOnce(t *testing.T) {
	for _, tc := range []struct {
		patches  int
		renumber bool
		dropLast bool
		frontier sample.Frontier
	}{
		{1, false, false, sample.FrontierAll},
		{3, true, false, sample.FrontierNew},
		{2, false, true, sample.FrontierAll},
		{4, true, true, sample.FrontierNew},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			sopt := defaultSample
			sopt.Frontier = tc.frontier
			f := newFixture(t, tc.patches, tc.renumber, sopt)
			seeds := seedRange(100) // 100 = 6*16 + 4
			opt := defaultOpts()
			opt.DropLast = tc.dropLast
			alloc := mem.NewChecked(nil)
			pl, err := New(f.s, f.p, f.store, seeds, opt, alloc)
			require.NoError(t, err)
			want := 7
			if tc.dropLast {
				want = 6
			}
			require.Equal(t, want, pl.NumBatches())
			for epoch := uint64(0); epoch < 2; epoch++ {
				require.NoError(t, pl.Start(epoch))
				bs := drain(t, pl)
				require.Len(t, bs, want)
				var got []int64
				for i, b := range bs {
					assert.Equal(t, int64(i), b.Index)
					assert.Equal(t, epoch, b.Epoch)
					s, in := i64(b.Seeds), i64(b.InputIndex)
					for j := range s {
						require.Equal(t, seeds[in[j]], s[j], "InputIndex points at the seed")
					}
					if i < 6 {
						require.Len(t, s, 16)
					} else {
						require.Len(t, s, 4)
					}
					got = append(got, s...)
				}
				if tc.dropLast {
					require.Len(t, got, 96)
					assert.Len(t, slices.Compact(slices.Sorted(slices.Values(got))), 96, "no repeats")
				} else {
					assert.ElementsMatch(t, seeds, got)
				}
				_, err := pl.Next(context.Background())
				assert.Equal(t, io.EOF, err, "EOF sticks")
				releaseAll(bs)
			}
			require.NoError(t, pl.Close())
			nbuf, nbytes := alloc.Outstanding()
			assert.Zero(t, nbuf)
			assert.Zero(t, nbytes)
		})
	}
}

func seedOrder(t *testing.T, pl *Pipeline, epoch uint64) []int64 {
	require.NoError(t, pl.Start(epoch))
	bs := drain(t, pl)
	var out []int64
	for _, b := range bs {
		out = append(out, i64(b.Seeds)...)
	}
	releaseAll(bs)
	return out
}

func TestShuffleDeterministic(t *testing.T) {
	f := newFixture(t, 2, false, defaultSample)
	seeds := seedRange(64)
	mk := func(opt Options) *Pipeline {
		pl, err := New(f.s, f.p, f.store, seeds, opt, nil)
		require.NoError(t, err)
		t.Cleanup(func() { pl.Close() })
		return pl
	}
	opt := defaultOpts()
	a, b := mk(opt), mk(opt)
	e0, e1 := seedOrder(t, a, 0), seedOrder(t, a, 1)
	assert.Equal(t, e0, seedOrder(t, b, 0), "same (seed, epoch), same order")
	assert.Equal(t, e1, seedOrder(t, b, 1))
	assert.Equal(t, e0, seedOrder(t, a, 0), "epoch 0 again")
	assert.NotEqual(t, e0, e1, "epochs differ")
	opt.Seed++
	assert.NotEqual(t, e0, seedOrder(t, mk(opt), 0), "seeds differ")
	opt.Shuffle = false
	assert.Equal(t, seeds, seedOrder(t, mk(opt), 3), "no shuffle: given order")

	// The permutation is uniform-ish: position of seed 0 over many epochs.
	counts := make([]int, 8)
	for e := uint64(0); e < 4000; e++ {
		o := epochOrder(8, true, 1, e)
		counts[slices.Index(o, 0)]++
	}
	for _, c := range counts {
		assert.InDelta(t, 500, c, 100)
	}
}

// The epoch order is pinned: a change to the shuffle's random stream would
// silently change which seeds form each "reproducible" batch.
func TestEpochOrderGolden(t *testing.T) {
	require.Equal(t, []int64{0, 5, 4, 11, 19, 10, 18, 16, 6, 9, 15, 7, 12, 2, 1, 17, 3, 8, 13, 14}, epochOrder(20, true, 7, 3))
	require.Equal(t, []int64{10, 7, 12, 5, 4, 2, 6, 0, 1, 9, 8, 11, 3}, epochOrder(13, true, 123456789, 0))
}

func tensorsEqual(t *testing.T, want, got mem.Tensor, what string) {
	t.Helper()
	assert.Equal(t, want.DType, got.DType, what)
	assert.Equal(t, want.Shape, got.Shape, what)
	assert.Equal(t, want.Data, got.Data, what)
}

// Every batch is what sampling it directly gives, in order, whatever the
// number of sampler workers (more workers than waves included).
func TestMatchesDirectCalls(t *testing.T) {
	for _, tc := range []struct{ patches, workers int }{{1, 1}, {1, 2}, {1, 4}, {1, 8}, {3, 1}, {3, 2}, {3, 3}, {3, 8}} {
		f := newFixture(t, tc.patches, tc.patches > 1, defaultSample)
		seeds := seedRange(90)
		opt := defaultOpts()
		opt.Workers = tc.workers
		pl, err := New(f.s, f.p, f.store, seeds, opt, nil)
		require.NoError(t, err)
		require.NoError(t, pl.Start(4))
		for i, b := range drain(t, pl) {
			require.Equal(t, int64(i), b.Index, "patches %d, workers %d: batches in order", tc.patches, tc.workers)
			in := i64(b.InputIndex)
			internal := make([]int64, len(in))
			for i, q := range in {
				internal[i] = seeds[q]
				if f.p.OldToNew != nil {
					internal[i] = f.p.OldToNew[seeds[q]]
				}
			}
			res, err := f.s.SampleBatches(context.Background(), [][]int64{internal}, []uint64{BatchKey(4, b.Index)})
			require.NoError(t, err)
			want, err := Materialize(res[0], i64(b.Seeds), in, f.p, f.store, opt.FeatureNames, opt.LabelNames, nil, 1)
			require.NoError(t, err)
			tensorsEqual(t, want.Seeds, b.Seeds, "seeds")
			tensorsEqual(t, want.InputIndex, b.InputIndex, "input index")
			tensorsEqual(t, want.Nodes, b.Nodes, "nodes")
			tensorsEqual(t, want.HopCounts, b.HopCounts, "hop counts")
			require.Len(t, b.Blocks, len(want.Blocks))
			for h := range want.Blocks {
				w, g := want.Blocks[h], b.Blocks[h]
				tensorsEqual(t, w.Indptr, g.Indptr, "indptr")
				tensorsEqual(t, w.Indices, g.Indices, "indices")
				tensorsEqual(t, w.EdgeIDs, g.EdgeIDs, "edge ids")
				assert.Equal(t, [3]int64{w.NumDst, w.NumSrc, w.DstOffset}, [3]int64{g.NumDst, g.NumSrc, g.DstOffset})
			}
			require.Len(t, b.NodeData, 4)
			for name, w := range want.NodeData {
				tensorsEqual(t, w, b.NodeData[name], name)
			}
		}
		require.NoError(t, pl.Close())
	}
}

// Blocks hold original edge ids whose endpoints are the mapped nodes.
func TestBlocksUseOriginalIDs(t *testing.T) {
	f := newFixture(t, 3, true, defaultSample)
	byID := map[int64][2]int64{}
	for v := int64(0); v < f.g.NumNodes; v++ {
		for pos := f.g.Indptr[v]; pos < f.g.Indptr[v+1]; pos++ {
			byID[f.g.EdgeID(pos)] = [2]int64{f.g.Indices[pos], v}
		}
	}
	pl, err := New(f.s, f.p, f.store, seedRange(40), defaultOpts(), nil)
	require.NoError(t, err)
	defer pl.Close()
	require.NoError(t, pl.Start(0))
	for _, b := range drain(t, pl) {
		nodes := i64(b.Nodes)
		for _, blk := range b.Blocks {
			indptr, idx, eids := i64(blk.Indptr), i64(blk.Indices), i64(blk.EdgeIDs)
			for d := int64(0); d < blk.NumDst; d++ {
				v := nodes[blk.DstOffset+d]
				for k := indptr[d]; k < indptr[d+1]; k++ {
					require.Equal(t, [2]int64{nodes[idx[k]], v}, byID[eids[k]])
				}
			}
		}
		b.Release()
	}
}

func TestLeaveEarlyRestartAndClose(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFixture(t, 2, false, defaultSample)
	alloc := mem.NewChecked(nil)
	opt := defaultOpts()
	opt.QueueCapacity = 1
	pl, err := New(f.s, f.p, f.store, seedRange(120), opt, alloc)
	require.NoError(t, err)
	require.NoError(t, pl.Start(0))
	b, err := pl.Next(context.Background())
	require.NoError(t, err)
	b.Release()
	b.Release() // idempotent
	// Leave epoch 0 early; epoch 1 runs from its start.
	require.NoError(t, pl.Start(1))
	bs := drain(t, pl)
	require.Len(t, bs, pl.NumBatches())
	assert.Equal(t, int64(0), bs[0].Index)
	releaseAll(bs)
	// Leave epoch 2 early and Close.
	require.NoError(t, pl.Start(2))
	b, err = pl.Next(context.Background())
	require.NoError(t, err)
	require.NoError(t, pl.Close())
	require.NoError(t, pl.Close())
	b.Release() // a delivered batch outlives Close
	settleGoroutines(t, base)
	nbuf, _ := alloc.Outstanding()
	assert.Zero(t, nbuf)
	_, err = pl.Next(context.Background())
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, err, errs.ErrClosed, "a closed pipeline is a closed object")
	assert.ErrorIs(t, pl.Start(3), ErrClosed)
}

// waitFull waits until both queues are full and the loader is blocked.
func waitFull(pl *Pipeline, alloc *mem.Checked, perBatch int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		pl.mu.Lock()
		r := pl.cur
		pl.mu.Unlock()
		if n, _ := alloc.Outstanding(); r != nil && len(r.out) == cap(r.out) && n >= perBatch*(cap(r.out)+1) {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return false
}

func TestCloseWithFullQueuesFreesEverything(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFixture(t, 2, false, defaultSample)
	for _, capacity := range []int{1, 2, 4} {
		alloc := mem.NewChecked(nil)
		opt := defaultOpts()
		opt.QueueCapacity = capacity
		pl, err := New(f.s, f.p, f.store, seedRange(130), opt, alloc)
		require.NoError(t, err)
		require.NoError(t, pl.Start(0))
		// A batch has 4 + 3*2 + 4 non-empty buffers.
		require.True(t, waitFull(pl, alloc, 14), "queues never filled")
		n, _ := alloc.Outstanding()
		assert.Greater(t, n, 0, "queued batches hold memory")
		// Restarting frees the queued batches of the stopped epoch too.
		require.NoError(t, pl.Start(1))
		require.True(t, waitFull(pl, alloc, 14), "queues never filled")
		require.NoError(t, pl.Close())
		nbuf, nbytes := alloc.Outstanding()
		assert.Zero(t, nbuf, "capacity %d", capacity)
		assert.Zero(t, nbytes)
	}
	settleGoroutines(t, base)
}

func TestNextWaitingWhenStopped(t *testing.T) {
	// A Next blocked on a stopped epoch returns ErrStopped or a batch, never hangs.
	f := newFixture(t, 1, false, defaultSample)
	alloc := mem.NewChecked(nil)
	pl, err := New(f.s, f.p, f.store, seedRange(50), defaultOpts(), alloc)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		require.NoError(t, pl.Start(uint64(i)))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				b, err := pl.Next(context.Background())
				if err != nil {
					return
				}
				b.Release()
			}
		}()
		require.NoError(t, pl.Start(uint64(i)+100))
		<-done
	}
	require.NoError(t, pl.Close())
	n, _ := alloc.Outstanding()
	assert.Zero(t, n)
}

func TestNextContext(t *testing.T) {
	f := newFixture(t, 1, false, defaultSample)
	pl, err := New(f.s, f.p, f.store, seedRange(30), defaultOpts(), nil)
	require.NoError(t, err)
	defer pl.Close()
	_, err = pl.Next(context.Background())
	assert.EqualError(t, err, "pipeline: Next called before Start")
	require.NoError(t, pl.Start(0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Either a ready batch or the context error; never a hang.
	for i := 0; i < 3; i++ {
		b, err := pl.Next(ctx)
		if err != nil {
			assert.ErrorIs(t, err, context.Canceled)
		} else {
			b.Release()
		}
	}
}

// failingAlloc fails every allocation after the first ok.
type failingAlloc struct {
	*mem.Checked
	mu sync.Mutex
	ok int
}

func (a *failingAlloc) Alloc(n int) ([]byte, error) {
	a.mu.Lock()
	a.ok--
	fail := a.ok < 0
	a.mu.Unlock()
	if fail {
		return nil, errors.New("out of device memory")
	}
	return a.Checked.Alloc(n)
}

func TestErrorsAreCarried(t *testing.T) {
	base := runtime.NumGoroutine()
	f := newFixture(t, 2, false, defaultSample)

	// An allocation failure in the loader, in the middle of a batch; with
	// batches gathered ahead too (those after the failing one are freed).
	for _, ahead := range []int{0, 2} {
		checked := mem.NewChecked(nil)
		// Room for the first batches whatever the worker sampled ahead of
		// the loader (the queues let it run several batches ahead, each
		// spending allocations): 14*3 left the loader's first gather to
		// fail when the worker ran ahead, often on a busy machine.
		alloc := &failingAlloc{Checked: checked, ok: 14*6 + 5}
		// One worker: with one per thread, workers running ahead could spend the
		// allocations before the first batch is gathered.
		oneWorker := defaultOpts()
		oneWorker.Workers = 1
		oneWorker.GatherAhead = ahead
		pl, err := New(f.s, f.p, f.store, seedRange(200), oneWorker, alloc)
		require.NoError(t, err)
		require.NoError(t, pl.Start(0))
		var got []*Batch
		for {
			b, err := pl.Next(context.Background())
			if err != nil {
				// Workers materialize topologies concurrently with the loader's
				// gathers, so which batch meets the failing allocation varies;
				// every batch before it arrives, in order, and the error names it.
				assert.ErrorContains(t, err, "out of device memory")
				assert.ErrorContains(t, err, fmt.Sprintf("pipeline: epoch 0, loading batch %d:", len(got)))
				_, err2 := pl.Next(context.Background())
				assert.Equal(t, err, err2, "the error sticks")
				break
			}
			assert.Equal(t, int64(len(got)), b.Index)
			got = append(got, b)
		}
		assert.NotEmpty(t, got)
		assert.Less(t, len(got), 13)
		releaseAll(got)
		settleGoroutines(t, base+0) // both goroutines exit after an error
		require.NoError(t, pl.Close())
		n, _ := checked.Outstanding()
		assert.Zero(t, n, "ahead %d: the partial batch was freed", ahead)
	}

	// A feature gather failure: the array disappears mid-epoch.
	alloc2 := mem.NewChecked(nil)
	opt := defaultOpts()
	opt.QueueCapacity = 1
	pl, err := New(f.s, f.p, f.store, seedRange(200), opt, alloc2)
	require.NoError(t, err)
	require.NoError(t, pl.Start(0))
	b, err := pl.Next(context.Background())
	require.NoError(t, err)
	b.Release()
	require.NoError(t, f.store.Delete("half"))
	for {
		b, err := pl.Next(context.Background())
		if err != nil {
			assert.ErrorContains(t, err, `"half"`)
			break
		}
		b.Release()
	}
	require.NoError(t, pl.Close())
	n, _ := alloc2.Outstanding()
	assert.Zero(t, n)
	settleGoroutines(t, base)
}

func TestSamplerErrorCarried(t *testing.T) {
	// A comm that fails makes SampleBatches fail inside the pipeline.
	f := newFixture(t, 2, false, defaultSample)
	s, err := bind(f.p, brokenComm{comm.NewLocal(2)}, defaultSample, sampleThreads)
	require.NoError(t, err)
	pl, err := New(s, f.p, f.store, seedRange(50), defaultOpts(), nil)
	require.NoError(t, err)
	defer pl.Close()
	require.NoError(t, pl.Start(0))
	_, err = pl.Next(context.Background())
	assert.ErrorContains(t, err, "pipeline: epoch 0, sampling batch 0")
	assert.ErrorContains(t, err, "wire cut")
}

type brokenComm struct{ *comm.Local }

func (brokenComm) AllToAll(context.Context, int, []mem.Buffer, mem.Stream) ([]mem.Buffer, error) {
	return nil, errors.New("wire cut")
}

// Dup keeps the workers' forks broken too.
func (b brokenComm) Dup() (comm.Comm, error) { return brokenComm{comm.NewLocal(b.Size())}, nil }

func TestNewErrors(t *testing.T) {
	f := newFixture(t, 2, true, defaultSample)
	opt := defaultOpts()
	_, err := New(f.s, f.p, f.store, []int64{1, 2}, Options{}, nil)
	assert.EqualError(t, err, "pipeline: batch size = 0 is invalid (want > 0)")
	_, err = New(f.s, f.p, f.store, []int64{1, 400}, opt, nil)
	assert.EqualError(t, err, "seeds[1] = 400 is out of range [0, 400)")
	_, err = New(f.s, f.p, f.store, []int64{1, 5, 1}, opt, nil)
	assert.EqualError(t, err, "seeds[2] = 1 duplicates seeds[0]")
	bad := opt
	bad.FeatureNames = []string{"feat", "nope"}
	_, err = New(f.s, f.p, f.store, []int64{1}, bad, nil)
	assert.EqualError(t, err, `pipeline: feature names[1] = "nope" is not in the store (have [feat half label mask])`)
	bad = opt
	bad.LabelNames = []string{"feat"}
	_, err = New(f.s, f.p, f.store, []int64{1}, bad, nil)
	assert.EqualError(t, err, `pipeline: label names[0] = "feat" is already requested in feature names`)
	_, err = New(f.s, f.p, nil, []int64{1}, opt, nil)
	assert.EqualError(t, err, `pipeline: feature names[0] = "feat" requested but store is nil`)
	other := *f.p
	_, err = New(f.s, &other, f.store, []int64{1}, opt, nil)
	assert.EqualError(t, err, "pipeline: the sampler was built on a different partition")
	_, err = New[*sample.Sampler](nil, f.p, f.store, nil, opt, nil)
	assert.EqualError(t, err, "pipeline: sampler is nil")
	_, err = New(f.s, f.p, feature.NewStore(3), nil, Options{BatchSize: 1}, nil)
	assert.NoError(t, err, "no names: the store is not used")

	// No seeds: an empty epoch.
	pl, err := New(f.s, f.p, f.store, nil, opt, nil)
	require.NoError(t, err)
	assert.Equal(t, 0, pl.NumBatches())
	require.NoError(t, pl.Start(0))
	_, err = pl.Next(context.Background())
	assert.Equal(t, io.EOF, err)
	require.NoError(t, pl.Close())
}

func TestMaterializeErrors(t *testing.T) {
	f := newFixture(t, 1, false, defaultSample)
	res, err := f.s.SampleBatches(context.Background(), [][]int64{{1, 2}}, []uint64{0})
	require.NoError(t, err)
	r := res[0]
	alloc := mem.NewChecked(nil)
	_, err = Materialize(nil, nil, nil, f.p, f.store, nil, nil, alloc, 1)
	assert.EqualError(t, err, "pipeline: result is nil")
	_, err = Materialize(r, []int64{1}, []int64{0}, f.p, f.store, nil, nil, alloc, 1)
	assert.EqualError(t, err, "pipeline: len(seedsOrig) = 1 does not match the result's 2 seeds")
	_, err = Materialize(r, []int64{1, 2}, []int64{0}, f.p, f.store, nil, nil, alloc, 1)
	assert.EqualError(t, err, "pipeline: len(inputIndex) = 1 (want len(seedsOrig) = 2)")
	_, err = Materialize(r, []int64{2, 1}, []int64{0, 1}, f.p, f.store, nil, nil, alloc, 1)
	assert.EqualError(t, err, "pipeline: seedsOrig are not the result's seeds (res.Nodes[:B] in original ids)")
	_, err = Materialize(r, []int64{1, 2}, []int64{0, 1}, f.p, f.store, []string{"feat", "zzz"}, nil, alloc, 1)
	assert.EqualError(t, err, `pipeline: no node data named "zzz" in the store`)
	_, err = Materialize(r, []int64{1, 2}, []int64{0, 1}, f.p, f.store, []string{"feat"}, []string{"feat"}, alloc, 1)
	assert.EqualError(t, err, `pipeline: node data "feat" requested twice`)
	broken := *r
	broken.Nodes = append(slices.Clone(r.Nodes), 999)
	_, err = Materialize(&broken, []int64{1, 2}, []int64{0, 1}, f.p, f.store, nil, nil, alloc, 1)
	assert.EqualError(t, err, fmt.Sprintf("pipeline: result node[%d] = 999 is out of range [0, 400)", len(r.Nodes)))
	n, _ := alloc.Outstanding()
	assert.Zero(t, n, "nothing leaks on error")

	b, err := Materialize(r, []int64{1, 2}, []int64{5, 9}, f.p, f.store, []string{"feat"}, []string{"label"}, alloc, 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 9}, i64(b.InputIndex))
	// A caller that takes a tensor's Data sets it to nil; Release skips it.
	taken := b.NodeData["feat"].Data
	fd := b.NodeData["feat"]
	fd.Data = nil
	b.NodeData["feat"] = fd
	b.Release()
	n, _ = alloc.Outstanding()
	assert.Equal(t, 1, n)
	alloc.Free(taken)
	var nilBatch *Batch
	nilBatch.Release()
}

func TestBatchKey(t *testing.T) {
	assert.Equal(t, uint64(3)<<32|7, BatchKey(3, 7))
}

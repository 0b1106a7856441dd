package sample

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/bounds"
	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// Runtime runs CSP sampling (node-wise, layer-wise, random walks) over a
// partitioned graph, one rank per patch: it holds what is built once per
// graph, communicator and thread count (the checked partition, the ranks'
// workspaces, the append-unique tables, the bitmaps and weights derived
// from recent requests), and each call brings its Request. It is safe for
// concurrent use; Sample and RandomWalk calls are serialised (they share
// the communicator). Fork gives a runtime that samples concurrently.
type Runtime struct {
	*shared
	c       comm.Comm
	ranks   []int // the ranks this process runs (comm.Comm.LocalRanks)
	threads int

	mu sync.Mutex
	ws []*workspace // per rank, used under mu

	poolMu sync.Mutex
	pool   []*Result // recycled results (Recycle)
}

// shared is what a Runtime and its forks share, read-only after NewRuntime
// except for the filter cache.
type shared struct {
	p *partition.Partitioned
	g *graph.CSC

	// dense selects the direct-indexed append-unique table (graphs with at
	// most denseMaxNodes nodes, all rows held) over the hash table.
	dense bool

	// types is the typed metadata (nil: untyped) and relsByDst[t] the
	// relations into node type t; nodeTime and edgeTime are the times of
	// temporal sampling (RuntimeOptions).
	types     *graph.Types
	relsByDst [][]int32
	// boundsStride is the number of segment bounds kept per typed task:
	// one more than the most relations into a node type.
	boundsStride int
	nodeTime     []int64
	edgeTime     []int64

	filterMu sync.Mutex
	filters  []*filterState // most recently used first, at most maxFilters

	// inv inverts g.EdgeIDs for short exclusion lists (edgePositions).
	invOnce sync.Once
	inv     []int32
}

// call is one Sample or RandomWalk call: the runtime with the call's
// request resolved against it. The stages hang off it.
type call struct {
	*Runtime
	req  Request
	seed uint64

	// ctx is the call's context; done its Done channel (nil: never),
	// which long loops inside a hop or a walk step poll (stopped) so that
	// a cancelled call ends within a bounded amount of work, not only at
	// the next exchange.
	ctx  context.Context
	done <-chan struct{}

	// filtered is set when tasks must skip edges (Biased: zero weights;
	// excl, exclPos: excluded edges, a bitmap over the CSC's edge
	// positions or their sorted list, both nil when no edge is excluded;
	// see the type excluded). nodeW[v] is W_v, v's total candidate weight
	// (LayerWise only).
	filtered bool
	excl     []uint64
	exclPos  []int64
	nodeW    []float64

	// general routes the owner stage through the per-task path that
	// handles relations, subgraphs and times (general.go): set for
	// RelationFanouts, Disjoint or Temporal requests. The homogeneous
	// paths never look at the fields below.
	general  bool
	typed    bool // RelationFanouts
	disjoint bool
	temporal bool
	// lay is the layout of the shuffle messages; waveTimes[i] the seed
	// times of the wave's batch of local rank i (Temporal).
	lay       layout
	waveTimes [][]int64
}

// workspace is one rank's memory reused across batches.
type workspace struct {
	table shardedTable
	// dense is the direct-indexed table (shared.dense): dense[v] is 1 + the
	// position of node v in the batch's Nodes, 0 when v is absent.
	// Allocated on first use, it is all zero between batches: runRank
	// clears the entries it set.
	dense []int32
	// parallel merge scratch, indexed by position in the hop's sampled list
	order, rank, slotOf []int32

	// Buffers reused across hops and batches. The shuffle and reshuffle
	// messages a rank sends are rewritten only after its next AllToAll has
	// returned, as comm.Comm's ownership rule requires: a shuffle buffer
	// after the reshuffle that follows it, a reshuffle buffer after the
	// next hop's (or batch's) shuffle.
	shufSend, backSend []mem.Buffer // len = ranks
	shuf, outs         [][]int64    // per peer: shuffle and reshuffle storage
	owners             []int32
	ownerCount         []int
	ownerTasks         []int
	in                 []inbox
	counts, offs       []int64
	bases, degs        []int64    // per task: Indptr[v] and v's degree (unfiltered tasks)
	scratch            [][]uint64 // per sampling thread
	fscratch           []filterScratch
	sent               []int64
	ans                []answer
	nbrs               []int64
	nodes              []int64 // the batch's nodes as they grow
	djTasks, djSubs    []int64 // Disjoint: the hop's tasks and their subgraphs
	djCuts             []int64 // Temporal: the hop's cutoffs
	bounds             []int64 // typed tasks' segment bounds (general.go)

	lw  layerScratch // LayerWise
	wks walkScratch  // RandomWalk
}

// NewRuntime returns a Runtime for p whose ranks talk through c.
// c.Size() must equal p.NumPatches(). p (including its graph) is checked
// here and must not change afterwards.
func NewRuntime(p *partition.Partitioned, c comm.Comm, opt RuntimeOptions) (*Runtime, error) {
	if p == nil {
		return nil, errors.New("sample: partition is nil")
	}
	if c == nil {
		return nil, errors.New("sample: comm is nil")
	}
	if p.Graph == nil {
		return nil, errors.New("sample: partition.Graph is nil")
	}
	if err := p.Graph.Validate(); err != nil {
		return nil, fmt.Errorf("sample: partition.Graph: %w", err)
	}
	n := p.Graph.NumNodes
	if err := checkOffsets(p.Offsets, n); err != nil {
		return nil, err
	}
	if size := c.Size(); size != p.NumPatches() {
		return nil, fmt.Errorf("sample: comm size = %d does not match the partition's %d patches", size, p.NumPatches())
	}
	if p.NewToOld != nil && int64(len(p.NewToOld)) != n {
		return nil, fmt.Errorf("sample: len(partition.NewToOld) = %d (want NumNodes = %d, or nil)", len(p.NewToOld), n)
	}
	// A windowed graph (a rank's range of a partition) takes the hash
	// table: the dense one is an entry per node of the whole graph.
	sh := &shared{p: p, g: p.Graph, dense: n <= denseMaxNodes && !p.Graph.Windowed}
	if err := sh.setTyped(opt); err != nil {
		return nil, err
	}
	return newRuntime(sh, c, opt.Threads)
}

// setTyped checks and keeps the typed metadata and the times of opt.
func (sh *shared) setTyped(opt RuntimeOptions) error {
	g := sh.g
	if t := opt.Types; t != nil {
		span := g.NumEdges()
		if opt.TypedEdges > 0 {
			span = opt.TypedEdges
		}
		if err := t.CheckShape(g.NumNodes, span); err != nil {
			return fmt.Errorf("sample: RuntimeOptions.Types: %w", err)
		}
		sh.types = t
		sh.relsByDst = t.RelationsByDst()
		for _, rels := range sh.relsByDst {
			sh.boundsStride = max(sh.boundsStride, len(rels))
		}
		sh.boundsStride++
	}
	if opt.NodeTime != nil {
		if n := sh.p.NumTimeSlots(); int64(len(opt.NodeTime)) != n {
			return fmt.Errorf("sample: len(RuntimeOptions.NodeTime) = %d, want one time per node (%d; partition.Partitioned.TimeSlot)", len(opt.NodeTime), n)
		}
		sh.nodeTime = opt.NodeTime
	}
	if opt.EdgeTime != nil {
		e := int64(len(opt.EdgeTime))
		for p := int64(0); p < g.NumEdges(); p++ {
			if id := g.EdgeID(p); id >= e {
				return fmt.Errorf("sample: RuntimeOptions.EdgeTime has %d entries, but the graph has edge id %d (want one time per edge id)", e, id)
			}
		}
		sh.edgeTime = opt.EdgeTime
	}
	return nil
}

func newRuntime(sh *shared, c comm.Comm, threads int) (*Runtime, error) {
	size := c.Size()
	ranks, err := localRanks(c)
	if err != nil {
		return nil, err
	}
	if err := bounds.Threads(threads, "sample: threads"); err != nil {
		return nil, err
	}
	// Every local rank keeps a slot per rank of the communicator: ranks x
	// size of them (the patches squared for a graph's own runtime).
	slot := 2*unsafe.Sizeof(mem.Buffer{}) + 2*unsafe.Sizeof([]int64{}) + unsafe.Sizeof(inbox{}) + 8 + unsafe.Sizeof(answer{})
	if err := bounds.Alloc(bounds.Mul(uint64(len(ranks))*uint64(size), uint64(slot)),
		fmt.Sprintf("sample: the exchange workspaces of %d ranks of %d (one slot a pair)", len(ranks), size)); err != nil {
		return nil, err
	}
	rt := &Runtime{shared: sh, c: c, ranks: ranks, threads: threads, ws: make([]*workspace, size)}
	for _, r := range ranks {
		rt.ws[r] = &workspace{
			shufSend: make([]mem.Buffer, size),
			backSend: make([]mem.Buffer, size),
			shuf:     make([][]int64, size),
			outs:     make([][]int64, size),
			in:       make([]inbox, size),
			sent:     make([]int64, size),
			ans:      make([]answer, size),
		}
	}
	return rt, nil
}

// localRanks returns c.LocalRanks(), checked: distinct ranks in [0, Size()),
// at least one.
func localRanks(c comm.Comm) ([]int, error) {
	ranks := slices.Clone(c.LocalRanks())
	if len(ranks) == 0 {
		return nil, errors.New("sample: the comm runs no rank in this process (LocalRanks is empty)")
	}
	seen := map[int]bool{}
	for i, r := range ranks {
		if r < 0 || r >= c.Size() || seen[r] {
			return nil, fmt.Errorf("sample: comm LocalRanks()[%d] = %d is out of range [0, %d) or repeated", i, r, c.Size())
		}
		seen[r] = true
	}
	return ranks, nil
}

// Fork returns a Runtime over rt's partition that samples concurrently
// with rt: it shares what NewRuntime derived (read-only) and the filter
// cache, and has its own communicator (rt's duplicated, see comm.Comm.Dup),
// workspaces and recycled results; threads > 0 replaces
// RuntimeOptions.Threads. Samples are the same from either. A pipeline
// forks one runtime per worker to sample several batches at once.
func (rt *Runtime) Fork(threads int) (*Runtime, error) {
	if rt == nil {
		return nil, errors.New("sample: Fork on a nil *Runtime")
	}
	c, err := rt.c.Dup()
	if err != nil {
		return nil, fmt.Errorf("sample: fork: %w", err)
	}
	if c == nil || c.Size() != rt.c.Size() {
		return nil, errors.New("sample: fork: the duplicated comm has a different size")
	}
	if threads <= 0 {
		threads = rt.threads
	}
	return newRuntime(rt.shared, c, threads)
}

func checkOffsets(off []int64, n int64) error {
	if len(off) < 2 {
		return fmt.Errorf("sample: len(partition.Offsets) = %d (want NumPatches+1 >= 2)", len(off))
	}
	if off[0] != 0 {
		return fmt.Errorf("sample: partition.Offsets[0] = %d (want 0)", off[0])
	}
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return fmt.Errorf("sample: partition.Offsets[%d] = %d is less than Offsets[%d] = %d", i, off[i], i-1, off[i-1])
		}
	}
	if last := off[len(off)-1]; last != n {
		return fmt.Errorf("sample: partition.Offsets[%d] = %d (want NumNodes = %d)", len(off)-1, last, n)
	}
	return nil
}

// Exchange runs one all-to-all on the runtime's communicator for its one
// local rank (send[j] goes to rank j; recv[j] came from rank j and is valid
// until the runtime's next exchange), in turn with its Sample calls. A
// caller whose ranks each make the same sequence of Sample and Exchange
// calls on runtimes that pair up across the ranks (the same runtime, or
// forks made in the same order) adds exchanges of its own that pair up as
// the samples' do: a dsp edge loader asks the owners which negative pairs
// are edges (engine/distributed). A runtime over several local ranks
// (comm.Local) has no single rank to exchange for: an error.
func (rt *Runtime) Exchange(ctx context.Context, send []mem.Buffer) ([]mem.Buffer, error) {
	if rt == nil {
		return nil, errors.New("sample: Exchange on a nil *Runtime")
	}
	if len(rt.ranks) != 1 {
		return nil, fmt.Errorf("sample: Exchange needs a runtime of one local rank (this one runs %d)", len(rt.ranks))
	}
	if len(send) != rt.c.Size() {
		return nil, fmt.Errorf("sample: Exchange: %d messages for %d ranks", len(send), rt.c.Size())
	}
	if ctx == nil {
		ctx = context.Background()
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.c.AllToAll(ctx, rt.ranks[0], send, mem.NoStream)
}

// NumRanks returns the number of ranks (the comm size, = patches).
func (rt *Runtime) NumRanks() int { return rt.c.Size() }

// LocalRanks returns the ranks this process runs (all of them with
// comm.Local): a call samples up to len(LocalRanks()) batches per wave.
func (rt *Runtime) LocalRanks() []int { return slices.Clone(rt.ranks) }

// Threads returns RuntimeOptions.Threads (<= 0: GOMAXPROCS).
func (rt *Runtime) Threads() int { return rt.threads }

// Partitioned returns the partition the runtime was built on.
func (rt *Runtime) Partitioned() *partition.Partitioned { return rt.p }

// owner returns the patch owning internal id v (in range).
func (s *shared) owner(v int64) int {
	off := s.p.Offsets
	lo, hi := 0, len(off)-2 // answer in [lo, hi]
	for lo < hi {
		m := int(uint(lo+hi+1) >> 1)
		if off[m] <= v {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// rankThreads is each rank's share of the threads: the ranks of this
// process run concurrently, so together they use about Threads goroutines.
func (rt *Runtime) rankThreads() int {
	return max(1, par.Threads(rt.threads)/len(rt.ranks))
}

// orig returns the original id of internal id v: on a rank's part
// (partition.Partitioned.Ranked) v is one of the nodes the rank holds,
// owned (a frontier node it samples) or a source of their in-edges.
func (s *shared) orig(v int64) int64 { return s.p.OrigID(v) }

// begin resolves req (its filter state) against rt for one call.
// what names the request's type in errors.
func (rt *Runtime) begin(req Request, needNodeW bool, what string) (*call, error) {
	if req.Biased && rt.g.Weights == nil {
		return nil, fmt.Errorf("sample: %s.Biased needs edge weights, but partition.Graph.Weights is nil", what)
	}
	c := &call{Runtime: rt, req: req, seed: req.Seed}
	if err := c.resolveGeneral(what); err != nil {
		return nil, err
	}
	if req.Biased || len(req.ExcludeEdges) > 0 {
		f := rt.filterFor(req.Biased, req.ExcludeEdges, rt.threads)
		c.excl, c.exclPos = f.excl, f.pos
		c.filtered = req.Biased || f.any()
		if needNodeW {
			c.nodeW = f.nodeWeights(c)
		}
	} else if needNodeW {
		f := rt.filterFor(false, nil, rt.threads)
		c.nodeW = f.nodeWeights(c)
	}
	return c, nil
}

// Sample samples the batches, up to len(LocalRanks()) of them
// concurrently: in each wave, batch start+i is handled by local rank i and
// the ranks without a batch take part in the collectives with empty
// frontiers. It returns one Result per batch. Seeds are internal ids; they
// are range-checked and a duplicate within a batch is an error. keys[i]
// identifies batch i for the random streams (e.g. epoch<<32 | batch index),
// so that a batch's sample depends only on (req, keys[i], its seeds and the
// graph), never on the number of patches or threads.
//
// Invalid arguments are reported before any collective starts. If ctx is
// cancelled while the ranks are communicating, the collective is aborted;
// with comm.Local that leaves the comm, hence the Runtime, unusable.
func (rt *Runtime) Sample(ctx context.Context, req Request, batches [][]int64, keys []uint64) ([]*Result, error) {
	return rt.SampleTimed(ctx, req, batches, nil, keys)
}

// SampleTimed is Sample with the seed times of temporal requests: times[i]
// holds one time per seed of batches[i] (times is nil, or has no effect,
// unless req.Temporal is set).
func (rt *Runtime) SampleTimed(ctx context.Context, req Request, batches, times [][]int64, keys []uint64) ([]*Result, error) {
	if rt == nil {
		return nil, errors.New("sample: Sample on a nil *Runtime")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if len(keys) != len(batches) {
		return nil, fmt.Errorf("sample: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	if req.Temporal != TemporalNone {
		if len(times) != len(batches) {
			return nil, fmt.Errorf("sample: a temporal request needs seed times for every batch (got %d lists for %d batches)", len(times), len(batches))
		}
		for b := range batches {
			if len(times[b]) != len(batches[b]) {
				return nil, fmt.Errorf("sample: batch %d has %d seeds and %d seed times (want one time per seed)", b, len(batches[b]), len(times[b]))
			}
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	req = req.normalized()
	c, err := rt.begin(req, req.Scheme == LayerWise, "Request")
	if err != nil {
		return nil, err
	}
	c.watch(ctx)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if err := rt.checkSeeds(batches, req.Disjoint); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	results := make([]*Result, len(batches))
	size := len(rt.ranks)
	for start := 0; start < len(batches); start += size {
		end := min(start+size, len(batches))
		if c.temporal {
			c.waveTimes = times[start:end]
		}
		if err := c.wave(ctx, batches[start:end], keys[start:end], results[start:end]); err != nil {
			return nil, err
		}
	}
	return results, nil
}

func (s *Runtime) checkSeeds(batches [][]int64, disjoint bool) error {
	n := s.g.NumNodes
	ws := s.ws[s.ranks[0]]
	t := &ws.table
	for b, seeds := range batches {
		if len(seeds) > math.MaxInt32 {
			return fmt.Errorf("sample: len(batches[%d]) = %d is too large", b, len(seeds))
		}
		if disjoint {
			// Seeds may repeat; a node of subgraph i is keyed i*n + v.
			if len(seeds) > 0 && int64(len(seeds)) > math.MaxInt64/max(n, 1) {
				return fmt.Errorf("sample: len(batches[%d]) = %d subgraphs of a graph of %d nodes is too large for disjoint sampling", b, len(seeds), n)
			}
			for i, v := range seeds {
				if v < 0 || v >= n {
					return fmt.Errorf("sample: batches[%d][%d] = %d is out of range [0, %d)", b, i, v, n)
				}
			}
			continue
		}
		if s.dense {
			if err := s.checkSeedsDense(ws, b, seeds); err != nil {
				return err
			}
			continue
		}
		t.reset()
		for i, v := range seeds {
			if v < 0 || v >= n {
				return fmt.Errorf("sample: batches[%d][%d] = %d is out of range [0, %d)", b, i, v, n)
			}
			if j, isNew := t.insert(v, int32(i)); !isNew {
				return fmt.Errorf("sample: batches[%d][%d] = %d duplicates batches[%d][%d]", b, i, v, b, j)
			}
		}
	}
	return nil
}

// checkSeedsDense is checkSeeds for one batch on the dense table, which it
// leaves empty.
func (s *Runtime) checkSeedsDense(ws *workspace, b int, seeds []int64) error {
	d := ws.denseTable(s.g.NumNodes)
	var err error
	i := 0
	for ; i < len(seeds); i++ {
		v := seeds[i]
		if uint64(v) >= uint64(len(d)) {
			err = fmt.Errorf("sample: batches[%d][%d] = %d is out of range [0, %d)", b, i, v, len(d))
			break
		}
		if j := d[v]; j != 0 {
			err = fmt.Errorf("sample: batches[%d][%d] = %d duplicates batches[%d][%d]", b, i, v, b, j-1)
			break
		}
		d[v] = int32(i + 1)
	}
	clearDense(d, seeds[:i])
	return err
}

// stopEvery is how many items a sequential loop inside a hop or a walk
// step handles between two looks at the call's cancellation (about a
// millisecond of work).
const stopEvery = 1 << 16

// watch makes the call's long loops stop when ctx is done.
func (s *call) watch(ctx context.Context) {
	s.ctx, s.done = ctx, ctx.Done()
}

// stopped reports whether the call was cancelled (its context is done).
// Loops that see it leave their work unfinished; the stage then returns
// stopErr, and the call's result is dropped: nothing half-made is handed
// out.
func (s *call) stopped() bool {
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stopErr is the error of a stage that stopped: the context's, saying
// where.
func (s *call) stopErr(where string) error {
	return fmt.Errorf("sample: %s: %w", where, s.ctx.Err())
}

// wave runs every local rank once; local rank i handles batches[i] when
// i < len(batches).
func (s *call) wave(ctx context.Context, batches [][]int64, keys []uint64, out []*Result) error {
	return runRanks(ctx, s.ranks, batches, keys, out, s.runRank)
}

// runRanks runs run once per local rank, ranks[i] with batches[i] (has ==
// true) when i < len(batches) and with nothing otherwise (it still takes
// part in the collectives), and stores each batch's result in out. A single
// rank runs in the caller's goroutine; otherwise the first error cancels the
// others.
func runRanks[R any](ctx context.Context, ranks []int, batches [][]int64, keys []uint64, out []R,
	run func(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (R, error)) error {
	if len(ranks) == 1 {
		if len(batches) == 0 {
			_, err := run(ctx, ranks[0], nil, 0, false)
			return err
		}
		res, err := run(ctx, ranks[0], batches[0], keys[0], true)
		out[0] = res
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		errMu    sync.Mutex
		firstErr error
	)
	for i, rank := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seeds []int64
			var key uint64
			has := i < len(batches)
			if has {
				seeds, key = batches[i], keys[i]
			}
			res, err := run(wctx, rank, seeds, key, has)
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
				cancel() // unblock the other ranks
				return
			}
			if has {
				out[i] = res
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// runRank is one rank's part of sampling one batch (or of helping the others
// when has is false): per hop, shuffle -> sample -> reshuffle -> merge. It
// leaves the rank's dense table (if any) empty.
func (s *call) runRank(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (*Result, error) {
	var res *Result
	var err error
	// A fault reading the mapped CSC files (truncated under the graph) is
	// an error naming the file, not the end of the process.
	if fault := feature.Guard(func() { res, err = s.sampleRank(ctx, rank, seeds, key, has) }); fault != nil {
		res, err = nil, fault
	}
	if ws := s.ws[rank]; s.dense && !s.disjoint && ws.dense != nil {
		if err != nil {
			clear(ws.dense) // the entries set are not all recorded in a Result
		} else if res != nil {
			clearDense(ws.dense, res.Nodes)
		}
	}
	return res, err
}

func (s *call) sampleRank(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (*Result, error) {
	ws := s.ws[rank]
	var res *Result
	var old []Block // the blocks of a recycled result, whose memory is reused
	// The batch's nodes grow in ws.nodes and are copied out at the end.
	// With Disjoint they are keys i*n + v (node v of seed i's subgraph).
	nodes := ws.nodes[:0]
	n := s.g.NumNodes
	var seedTimes []int64
	if has {
		if s.disjoint {
			for i, v := range seeds {
				nodes = append(nodes, int64(i)*n+v)
			}
			if s.temporal {
				seedTimes = s.waveTimes[slices.Index(s.ranks, rank)]
			}
		} else {
			nodes = append(nodes, seeds...)
		}
		if r := s.takeResult(); r != nil {
			res, old = r, r.Blocks[:cap(r.Blocks)]
			res.HopCounts = append(r.HopCounts[:0], int64(len(seeds)))
			res.Blocks = r.Blocks[:0]
		} else {
			res = &Result{
				HopCounts: make([]int64, 1, len(s.req.Fanouts)+1),
				Blocks:    make([]Block, 0, len(s.req.Fanouts)),
			}
			res.HopCounts[0] = int64(len(seeds))
		}
		switch {
		case s.disjoint:
			ws.table.reset()
			for i, k := range nodes {
				ws.table.insert(k, int32(i))
			}
		case s.dense:
			d := ws.denseTable(s.g.NumNodes)
			for i, v := range seeds {
				d[v] = int32(i + 1)
			}
		default:
			ws.table.reset()
			for i, v := range seeds {
				ws.table.insert(v, int32(i))
			}
		}
	}
	prevStart := 0 // first node added by the previous hop (hop 0: the seeds)
	for h, fanout := range s.req.Fanouts {
		dstStart := 0
		if s.req.Frontier == FrontierNew {
			dstStart = prevStart
		}
		frontier := nodes[dstStart:]
		// The tasks: every frontier node (NodeWise), or those the layer
		// draw picked, with their counts (LayerWise).
		tasks, fans, active := frontier, []int64(nil), []int32(nil)
		var extras [][]int64
		switch {
		case s.req.Scheme == LayerWise:
			tasks, fans, active = s.layerDraw(ws, frontier, key, h, fanout)
			extras = [][]int64{fans}
		case s.disjoint:
			tasks, extras = ws.splitDisjoint(frontier, n, seedTimes)
		}

		// Shuffle: push each task to the rank owning its row.
		send, owners := s.shuffleMessages(ws, tasks, key, extras...)
		recv, err := s.c.AllToAll(ctx, rank, send, mem.NoStream)
		if err != nil {
			return nil, fmt.Errorf("sample: hop %d shuffle: %w", h, err)
		}
		// Sample: every task this rank received, in one parallel pass.
		back, err := s.sampleStage(ws, rank, recv, h, fanout)
		if err != nil {
			return nil, err
		}
		// Reshuffle: the sampled lists go back to their requesters.
		recv, err = s.c.AllToAll(ctx, rank, back, mem.NoStream)
		if err != nil {
			return nil, fmt.Errorf("sample: hop %d reshuffle: %w", h, err)
		}
		if !has {
			continue
		}
		before := len(nodes)
		var reuse Block
		if h < len(old) {
			reuse = old[h]
		}
		var block Block
		switch {
		case s.req.Scheme == LayerWise:
			block, err = s.mergeLayer(ws, frontier, tasks, active, owners, recv, &nodes, h, &reuse)
		case s.disjoint:
			block, err = s.merge(ws, tasks, owners, recv, &nodes, h, &reuse, ws.djSubs)
		default:
			block, err = s.merge(ws, frontier, owners, recv, &nodes, h, &reuse, nil)
		}
		if err != nil {
			return nil, err
		}
		block.DstOffset = int64(dstStart)
		res.Blocks = append(res.Blocks, block)
		res.HopCounts = append(res.HopCounts, int64(len(nodes)-before))
		prevStart = before
	}
	ws.nodes = nodes[:0]
	if res != nil {
		switch {
		case s.disjoint:
			res.Nodes = grow64(res.Nodes, len(nodes))
			res.Batch = grow64(res.Batch, len(nodes))
			for i, k := range nodes {
				res.Batch[i], res.Nodes[i] = k/n, k%n
			}
		case len(nodes) == 0:
			res.Nodes = slices.Clone(seeds) // nil or empty, as seeds
		case res.Nodes != nil: // recycled
			res.Nodes = append(res.Nodes[:0], nodes...)
		default:
			res.Nodes = slices.Clone(nodes)
		}
		if !s.disjoint {
			res.Batch = nil
		}
	}
	return res, nil
}

// splitDisjoint splits a disjoint frontier (keys i*n + v) into its nodes v
// (the tasks) and the columns the shuffle carries: the subgraph indices i
// and, when seedTimes is not nil, each task's cutoff seedTimes[i]. They
// live in ws.
func (ws *workspace) splitDisjoint(frontier []int64, n int64, seedTimes []int64) ([]int64, [][]int64) {
	k := len(frontier)
	tasks := grow64(ws.djTasks, k)
	subs := grow64(ws.djSubs, k)
	ws.djTasks, ws.djSubs = tasks, subs
	for i, x := range frontier {
		subs[i], tasks[i] = x/n, x%n
	}
	if seedTimes == nil {
		return tasks, [][]int64{subs}
	}
	cuts := grow64(ws.djCuts, k)
	ws.djCuts = cuts
	for i, sub := range subs {
		cuts[i] = seedTimes[sub]
	}
	return tasks, [][]int64{subs, cuts}
}

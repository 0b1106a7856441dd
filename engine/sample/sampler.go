package sample

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/partition"
)

// Sampler runs CSP sampling (node-wise, layer-wise, random walks) over a
// partitioned graph, one rank per patch. It is safe for concurrent use;
// SampleBatches and RandomWalk calls are serialised (they share the Comm).
type Sampler struct {
	p   *partition.Partitioned
	g   *graph.CSC
	c   comm.Comm
	opt Options

	// dense selects the direct-indexed append-unique table (graphs with at
	// most denseMaxNodes nodes) over the hash table.
	dense bool

	// filtered is set when tasks must skip edges (Biased: zero weights;
	// excl: excluded edges). excl is a bitmap over the CSC's edge positions
	// (nil when no edge is excluded). nodeW[v] is W_v, v's total candidate
	// weight (LayerWise only).
	filtered bool
	excl     []uint64
	nodeW    []float64

	mu   sync.Mutex
	ws   []*workspace // per rank, used under mu
	seed uint64       // the seed of the call in progress (set under mu)

	poolMu sync.Mutex
	pool   []*Result // recycled results (Recycle)
}

// workspace is one rank's memory reused across batches.
type workspace struct {
	table shardedTable
	// dense is the direct-indexed table (Sampler.dense): dense[v] is 1 + the
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
	shufSend, backSend [][]byte  // len = ranks
	shuf, outs         [][]int64 // per peer: shuffle and reshuffle storage
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

	lw  layerScratch // LayerWise
	wks walkScratch  // RandomWalk
}

// New returns a Sampler for p whose ranks talk through c. c.Size() must
// equal p.NumPatches(). p (including its graph) is checked here and must not
// change afterwards.
func New(p *partition.Partitioned, c comm.Comm, opt Options) (*Sampler, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
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
	if opt.Biased && p.Graph.Weights == nil {
		return nil, errors.New("sample: Options.Biased needs edge weights, but partition.Graph.Weights is nil")
	}
	opt.Fanouts = slices.Clone(opt.Fanouts)
	opt.ExcludeEdges = slices.Clone(opt.ExcludeEdges)
	s := &Sampler{p: p, g: p.Graph, c: c, opt: opt, dense: n <= denseMaxNodes}
	s.excl = s.buildExcluded(opt.ExcludeEdges)
	s.filtered = opt.Biased || s.excl != nil
	if opt.Scheme == LayerWise {
		s.nodeW = s.nodeWeights()
	}
	s.newWorkspaces()
	return s, nil
}

func (s *Sampler) newWorkspaces() {
	size := s.c.Size()
	s.ws = make([]*workspace, size)
	for i := range s.ws {
		s.ws[i] = &workspace{
			shufSend: make([][]byte, size),
			backSend: make([][]byte, size),
			shuf:     make([][]int64, size),
			outs:     make([][]int64, size),
			in:       make([]inbox, size),
			sent:     make([]int64, size),
			ans:      make([]answer, size),
		}
	}
}

// Fork returns a Sampler with s's partition and options that samples
// concurrently with s: it shares what New derived from them (read-only)
// and has its own communicator (s's comm duplicated, see comm.Comm.Dup),
// workspaces and recycled results; threads > 0 replaces Options.Threads.
// Samples are the same from either: they depend only on the options (never
// on Threads), the batch keys and the seeds. A pipeline forks one Sampler
// per worker to sample several batches at once.
func (s *Sampler) Fork(threads int) (*Sampler, error) {
	if s == nil {
		return nil, errors.New("sample: Fork on a nil *Sampler")
	}
	c, err := s.c.Dup()
	if err != nil {
		return nil, fmt.Errorf("sample: fork: %w", err)
	}
	if c == nil || c.Size() != s.c.Size() {
		return nil, errors.New("sample: fork: the duplicated comm has a different size")
	}
	f := &Sampler{p: s.p, g: s.g, c: c, opt: s.Options(), dense: s.dense,
		filtered: s.filtered, excl: s.excl, nodeW: s.nodeW}
	if threads > 0 {
		f.opt.Threads = threads
	}
	f.newWorkspaces()
	return f, nil
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

// NumRanks returns the number of ranks (the comm size, = patches).
func (s *Sampler) NumRanks() int { return s.c.Size() }

// Partitioned returns the partition the sampler was built on.
func (s *Sampler) Partitioned() *partition.Partitioned { return s.p }

// Options returns a copy of the sampler's options.
func (s *Sampler) Options() Options {
	o := s.opt
	o.Fanouts = slices.Clone(o.Fanouts)
	o.ExcludeEdges = slices.Clone(o.ExcludeEdges)
	return o
}

// owner returns the patch owning internal id v (in range).
func (s *Sampler) owner(v int64) int {
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

// rankThreads is each rank's share of Options.Threads: the in-process ranks
// run concurrently, so together they use about Threads goroutines.
func (s *Sampler) rankThreads() int {
	return max(1, par.Threads(s.opt.Threads)/s.c.Size())
}

func (s *Sampler) orig(v int64) int64 {
	if s.p.NewToOld != nil {
		return s.p.NewToOld[v]
	}
	return v
}

// SampleBatches samples the batches, up to c.Size() of them concurrently:
// in each wave, batch start+i is handled by rank i and the ranks without a
// batch take part in the collectives with empty frontiers. It returns one
// Result per batch. Seeds are internal ids; they are range-checked and a
// duplicate within a batch is an error. keys[i] identifies batch i for the
// random streams (e.g. epoch<<32 | batch index), so that a batch's sample
// depends only on (Options.Seed, keys[i], its seeds and the graph), never on
// the number of patches or threads.
//
// Invalid arguments are reported before any collective starts. If ctx is
// cancelled while the ranks are communicating, the collective is aborted;
// with comm.Local that leaves the Comm, hence the Sampler, unusable.
func (s *Sampler) SampleBatches(ctx context.Context, batches [][]int64, keys []uint64) ([]*Result, error) {
	if s == nil {
		return nil, errors.New("sample: SampleBatches on a nil *Sampler")
	}
	return s.SampleBatchesSeed(ctx, s.opt.Seed, batches, keys)
}

// SampleBatchesSeed is SampleBatches with seed in place of Options.Seed for
// this call: the batches are those a Sampler with Options.Seed = seed
// gives. One-off samples with a new seed each (gf_sample) reuse one Sampler
// this way, where building one per seed would validate the graph and
// allocate workspaces every time.
func (s *Sampler) SampleBatchesSeed(ctx context.Context, seed uint64, batches [][]int64, keys []uint64) ([]*Result, error) {
	if s == nil {
		return nil, errors.New("sample: SampleBatches on a nil *Sampler")
	}
	if len(keys) != len(batches) {
		return nil, fmt.Errorf("sample: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seed = seed
	if err := s.checkSeeds(batches); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	results := make([]*Result, len(batches))
	size := s.c.Size()
	for start := 0; start < len(batches); start += size {
		end := min(start+size, len(batches))
		if err := s.wave(ctx, batches[start:end], keys[start:end], results[start:end]); err != nil {
			return nil, err
		}
	}
	return results, nil
}

func (s *Sampler) checkSeeds(batches [][]int64) error {
	n := s.g.NumNodes
	ws := s.ws[0]
	t := &ws.table
	for b, seeds := range batches {
		if len(seeds) > math.MaxInt32 {
			return fmt.Errorf("sample: len(batches[%d]) = %d is too large", b, len(seeds))
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
func (s *Sampler) checkSeedsDense(ws *workspace, b int, seeds []int64) error {
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

// wave runs every rank once; rank i handles batches[i] when i < len(batches).
func (s *Sampler) wave(ctx context.Context, batches [][]int64, keys []uint64, out []*Result) error {
	return runRanks(ctx, s.c.Size(), batches, keys, out, s.runRank)
}

// runRanks runs run once per rank, rank i with batches[i] (has == true) when
// i < len(batches) and with nothing otherwise (it still takes part in the
// collectives), and stores each batch's result in out. A single rank runs in
// the caller's goroutine; otherwise the first error cancels the others.
func runRanks[R any](ctx context.Context, size int, batches [][]int64, keys []uint64, out []R,
	run func(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (R, error)) error {
	if size == 1 {
		res, err := run(ctx, 0, batches[0], keys[0], true)
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
	for r := 0; r < size; r++ {
		wg.Add(1)
		go func(rank int) {
			defer wg.Done()
			var seeds []int64
			var key uint64
			has := rank < len(batches)
			if has {
				seeds, key = batches[rank], keys[rank]
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
				out[rank] = res
			}
		}(r)
	}
	wg.Wait()
	return firstErr
}

// runRank is one rank's part of sampling one batch (or of helping the others
// when has is false): per hop, shuffle -> sample -> reshuffle -> merge. It
// leaves the rank's dense table (if any) empty.
func (s *Sampler) runRank(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (*Result, error) {
	res, err := s.sampleRank(ctx, rank, seeds, key, has)
	if ws := s.ws[rank]; s.dense && ws.dense != nil {
		if err != nil {
			clear(ws.dense) // the entries set are not all recorded in a Result
		} else if res != nil {
			clearDense(ws.dense, res.Nodes)
		}
	}
	return res, err
}

func (s *Sampler) sampleRank(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (*Result, error) {
	ws := s.ws[rank]
	var res *Result
	var old []Block // the blocks of a recycled result, whose memory is reused
	// The batch's nodes grow in ws.nodes and are copied out at the end.
	nodes := ws.nodes[:0]
	if has {
		nodes = append(nodes, seeds...)
		if r := s.takeResult(); r != nil {
			res, old = r, r.Blocks[:cap(r.Blocks)]
			res.HopCounts = append(r.HopCounts[:0], int64(len(seeds)))
			res.Blocks = r.Blocks[:0]
		} else {
			res = &Result{
				HopCounts: make([]int64, 1, len(s.opt.Fanouts)+1),
				Blocks:    make([]Block, 0, len(s.opt.Fanouts)),
			}
			res.HopCounts[0] = int64(len(seeds))
		}
		if s.dense {
			d := ws.denseTable(s.g.NumNodes)
			for i, v := range seeds {
				d[v] = int32(i + 1)
			}
		} else {
			ws.table.reset()
			for i, v := range seeds {
				ws.table.insert(v, int32(i))
			}
		}
	}
	prevStart := 0 // first node added by the previous hop (hop 0: the seeds)
	for h, fanout := range s.opt.Fanouts {
		dstStart := 0
		if s.opt.Frontier == FrontierNew {
			dstStart = prevStart
		}
		frontier := nodes[dstStart:]
		// The tasks: every frontier node (NodeWise), or those the layer
		// draw picked, with their counts (LayerWise).
		tasks, fans, active := frontier, []int64(nil), []int32(nil)
		if s.opt.Scheme == LayerWise {
			tasks, fans, active = s.layerDraw(ws, frontier, key, h, fanout)
		}

		// Shuffle: push each task to the rank owning its row.
		send, owners := s.shuffleMessages(ws, tasks, key, fans)
		recv, err := s.c.AllToAll(ctx, rank, send)
		if err != nil {
			return nil, fmt.Errorf("sample: hop %d shuffle: %w", h, err)
		}
		// Sample: every task this rank received, in one parallel pass.
		back, err := s.sampleStage(ws, rank, recv, h, fanout)
		if err != nil {
			return nil, err
		}
		// Reshuffle: the sampled lists go back to their requesters.
		recv, err = s.c.AllToAll(ctx, rank, back)
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
		if s.opt.Scheme == LayerWise {
			block, err = s.mergeLayer(ws, frontier, tasks, active, owners, recv, &nodes, h, &reuse)
		} else {
			block, err = s.merge(ws, frontier, owners, recv, &nodes, h, &reuse)
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
		case len(nodes) == 0:
			res.Nodes = slices.Clone(seeds) // nil or empty, as seeds
		case res.Nodes != nil: // recycled
			res.Nodes = append(res.Nodes[:0], nodes...)
		default:
			res.Nodes = slices.Clone(nodes)
		}
	}
	return res, nil
}

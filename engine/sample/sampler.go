package sample

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/internal/rng"
	"github.com/graphferry/graphferry/engine/partition"
)

// Block is one hop's sampled bipartite graph in CSC form: for the i-th dst
// node, its sampled in-neighbours are Indices[Indptr[i]:Indptr[i+1]].
type Block struct {
	Indptr  []int64 // len NumDst+1
	Indices []int64 // positions into Result.Nodes (the block's src nodes are Nodes[0:NumSrc])
	EdgeIDs []int64 // original edge ids, same positions as Indices
	// dst nodes are Nodes[DstOffset : DstOffset+NumDst]
	NumDst, NumSrc, DstOffset int64
}

// Result is the sample of one batch.
type Result struct {
	// Nodes holds internal (renumbered) node ids: the seeds first in the
	// given order, then each hop's new nodes in order of first appearance
	// (append-unique).
	Nodes []int64
	// HopCounts has L+1 entries: HopCounts[0] = len(seeds), HopCounts[h+1] =
	// nodes first added in hop h.
	HopCounts []int64
	// Blocks[h] is hop h (Blocks[0] samples the seeds' neighbours).
	Blocks []Block
}

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

// Recycle hands results that the caller no longer uses back to s: later
// batches may reuse their memory. Nothing of a recycled result (nor any
// slice taken from it) may be used afterwards. Recycling is optional;
// results that are not recycled are left to the garbage collector.
func (s *Sampler) Recycle(results ...*Result) {
	if s == nil {
		return
	}
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	for _, r := range results {
		if r == nil || len(s.pool) >= maxPooled || slices.Contains(s.pool, r) {
			continue
		}
		s.pool = append(s.pool, r)
	}
}

// maxPooled bounds the number of recycled results a Sampler keeps.
const maxPooled = 16

func (s *Sampler) takeResult() *Result {
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	n := len(s.pool)
	if n == 0 {
		return nil
	}
	r := s.pool[n-1]
	s.pool[n-1] = nil
	s.pool = s.pool[:n-1]
	return r
}

// shuffleMessages groups the frontier by owning patch. owners[i] is the
// owner of frontier[i] (nil when there is a single patch). The messages
// live in ws. When extra is not nil (len(frontier) values: LayerWise's
// per-task counts, RandomWalk's walker indices), each message carries the
// extra values of its tasks after them, in the same order.
func (s *Sampler) shuffleMessages(ws *workspace, frontier []int64, key uint64, extra []int64) ([][]byte, []int32) {
	size := s.c.Size()
	send := ws.shufSend
	clear(send)
	if len(frontier) == 0 {
		return send, nil
	}
	if size == 1 {
		buf := grow64(ws.shuf[0], 1+len(frontier)+len(extra))
		ws.shuf[0] = buf
		buf[0] = int64(key)
		copy(buf[1:], frontier)
		copy(buf[1+len(frontier):], extra)
		send[0] = int64Bytes(buf)
		return send, nil
	}
	owners := grow32(ws.owners, len(frontier))
	ws.owners = owners
	if ws.ownerCount == nil {
		ws.ownerCount = make([]int, size)
	}
	count := ws.ownerCount
	clear(count)
	for i, v := range frontier {
		o := s.owner(v)
		owners[i] = int32(o)
		count[o]++
	}
	if extra != nil {
		if ws.ownerTasks == nil {
			ws.ownerTasks = make([]int, size)
		}
		copy(ws.ownerTasks, count)
	}
	for o, c := range count {
		if c > 0 {
			m := 1 + c
			if extra != nil {
				m += c
			}
			b := grow64(ws.shuf[o], m)
			ws.shuf[o] = b
			b[0] = int64(key)
			count[o] = 1 // next free slot
		}
	}
	for i, v := range frontier {
		o := owners[i]
		b := ws.shuf[o]
		b[count[o]] = v
		if extra != nil {
			b[count[o]+ws.ownerTasks[o]] = extra[i]
		}
		count[o]++
	}
	for o, c := range count {
		if c > 0 {
			if extra != nil {
				c += ws.ownerTasks[o]
			}
			send[o] = int64Bytes(ws.shuf[o][:c])
		}
	}
	return send, owners
}

// inbox is the tasks one rank received from one requester.
type inbox struct {
	key   uint64
	tasks []int64
	fans  []int64 // LayerWise: per-task fanouts (nil: the hop's fanout)
	base  int     // index of tasks[0] in the flattened task list
}

// answerSlots returns the neighbour and edge-id slots [off, off+c) of an
// answer out to ntasks tasks (laid out as counts, neighbours, edge ids).
func answerSlots(out []int64, ntasks int, off, c int64) (nb, eb []int64) {
	n := int64(ntasks)
	m := (int64(len(out)) - n) / 2
	return out[n+off : n+off+c], out[n+m+off : n+m+off+c]
}

// readInboxes parses the task messages recv (recv[j] from rank j: the
// batch key, then the tasks, then with paired one extra value per task)
// into in, and returns the number of tasks. where ("hop 2") and kind ("a
// layer-wise") name the round and the message in errors.
func readInboxes(in []inbox, recv [][]byte, paired bool, where, kind string) (int, error) {
	total := 0
	for j, b := range recv {
		m, err := bytesInt64(b)
		if err != nil {
			return 0, fmt.Errorf("sample: %s: from rank %d: %w", where, j, err)
		}
		in[j] = inbox{base: total}
		if len(m) == 0 {
			continue
		}
		in[j].key = uint64(m[0])
		if !paired {
			in[j].tasks = m[1:]
			total += len(m) - 1
			continue
		}
		if (len(m)-1)%2 != 0 {
			return 0, fmt.Errorf("sample: %s: from rank %d: %s message of %d values", where, j, kind, len(m))
		}
		k := (len(m) - 1) / 2
		in[j].tasks, in[j].fans = m[1:1+k], m[1+k:]
		total += k
	}
	return total, nil
}

// inboxOf returns the index of the inbox holding task t (an index into the
// flattened task list), searching from inbox j on: passes visit tasks in
// increasing order.
func inboxOf(in []inbox, j, t int) int {
	for t >= in[j].base+len(in[j].tasks) {
		j++
	}
	return j
}

// task returns task t's node and fan-out: its own count when the inbox
// carries counts (LayerWise), else fanout.
func (ib *inbox) task(t, fanout int) (int64, int) {
	i := t - ib.base
	if ib.fans != nil {
		return ib.tasks[i], int(ib.fans[i])
	}
	return ib.tasks[i], fanout
}

// Chunk sizes of the sample stage's parallel passes (variables so that tests
// can force many chunks on small graphs).
var (
	countGrain  = 8192 // tasks per chunk when counting
	sampleGrain = 512  // tasks per chunk when sampling
)

// sampleStage samples every task rank received (recv[j] from rank j) and
// returns the reshuffle messages (back[j] answers recv[j]), which live in ws.
func (s *Sampler) sampleStage(ws *workspace, rank int, recv [][]byte, hop, fanout int) ([][]byte, error) {
	lo, hi := s.p.Offsets[rank], s.p.Offsets[rank+1]
	in := ws.in
	total, err := readInboxes(in, recv, s.opt.Scheme == LayerWise, fmt.Sprintf("hop %d", hop), "a layer-wise")
	if err != nil {
		return nil, err
	}
	back := ws.backSend
	clear(back)
	if total == 0 {
		return back, nil
	}

	// Pass 1: how many neighbours each task yields (a function of degree and
	// fanout only), and the range check of the received tasks.
	g := s.g
	counts := grow64(ws.counts, total)
	ws.counts = counts
	// Pass 2 of unfiltered tasks reads each task's neighbour list bounds
	// from here, in order, rather than from Indptr a second time.
	var bases, degs []int64
	if !s.filtered {
		bases, degs = grow64(ws.bases, total), grow64(ws.degs, total)
		ws.bases, ws.degs = bases, degs
	}
	var badMu sync.Mutex
	var bad error
	par.For(total, countGrain, s.rankThreads(), func(_, a, b int) {
		j := 0
		for t := a; t < b; t++ {
			j = inboxOf(in, j, t)
			v := in[j].tasks[t-in[j].base]
			if v < lo || v >= hi {
				badMu.Lock()
				if bad == nil {
					bad = fmt.Errorf("sample: hop %d: rank %d received node %d from rank %d, outside its patch [%d, %d)", hop, rank, v, j, lo, hi)
				}
				badMu.Unlock()
				return
			}
			base := g.Indptr[v]
			f, deg := fanout, g.Indptr[v+1]-base
			if in[j].fans != nil {
				c := in[j].fans[t-in[j].base]
				if c == 0 || c < -1 || c > math.MaxInt32 {
					badMu.Lock()
					if bad == nil {
						bad = fmt.Errorf("sample: hop %d: rank %d received the invalid count %d from rank %d", hop, rank, c, j)
					}
					badMu.Unlock()
					return
				}
				f = int(c)
			}
			if s.filtered {
				deg = s.effDegree(v)
			} else {
				bases[t], degs[t] = base, deg
			}
			counts[t] = s.taskCount(deg, f)
		}
	})
	if bad != nil {
		return nil, bad
	}

	// Lay out the answers: counts, then neighbours, then edge ids; offs[t]
	// is task t's first slot among its requester's neighbours.
	offs := grow64(ws.offs, total)
	ws.offs = offs
	outs := ws.outs
	for j := range in {
		n := len(in[j].tasks)
		if n == 0 {
			continue
		}
		var m int64
		for i := 0; i < n; i++ {
			offs[in[j].base+i] = m
			m += counts[in[j].base+i]
		}
		out := grow64(outs[j], int(int64(n)+2*m))
		outs[j] = out
		copy(out, counts[in[j].base:in[j].base+n])
		back[j] = int64Bytes(out)
	}

	// Pass 2: sample. Every slot of the answers is written.
	threads := s.rankThreads()
	if len(ws.scratch) < threads {
		ws.scratch = append(ws.scratch, make([][]uint64, threads-len(ws.scratch))...)
	}
	scratch := ws.scratch
	if s.filtered && len(ws.fscratch) < threads {
		ws.fscratch = append(ws.fscratch, make([]filterScratch, threads-len(ws.fscratch))...)
	}
	fscratch := ws.fscratch
	par.For(total, sampleGrain, threads, func(w, a, b int) {
		if !s.filtered {
			s.sampleChunk(in, outs, counts, offs, bases, degs, a, b, hop, fanout, &scratch[w])
			return
		}
		j := 0
		for t := a; t < b; t++ {
			j = inboxOf(in, j, t)
			c := counts[t]
			if c == 0 {
				continue
			}
			nb, eb := answerSlots(outs[j], len(in[j].tasks), offs[t], c)
			v, f := in[j].task(t, fanout)
			s.sampleFiltered(in[j].key, uint64(hop), v, f, nb, eb, &fscratch[w], &scratch[w])
		}
	})
	return back, nil
}

// grow64 returns a slice of length n, reusing s's memory when it is large
// enough (its contents are then stale), never nil.
func grow64(s []int64, n int) []int64 {
	if s == nil || cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// taskCount is the number of neighbours a task with in-degree deg yields.
func (s *Sampler) taskCount(deg int64, fanout int) int64 {
	switch {
	case fanout < 0:
		return deg
	case s.opt.Replace:
		if deg == 0 {
			return 0
		}
		return int64(fanout)
	default:
		return min(deg, int64(fanout))
	}
}

// linearLimit is the sample size up to which Floyd's membership test scans
// the picks so far (kept sorted) instead of using a bitset.
const linearLimit = 32

// sampleChunk samples the unfiltered tasks [a, b) of the sample stage (see
// sampleStage for the layout of in, outs, counts and offs) in two passes:
// first every task's edge positions (absolute CSC positions) are drawn into
// its neighbour slots, then one tight loop turns all of the chunk's
// positions into source ids and edge ids. The second loop's loads are
// independent of each other, so the core keeps many cache misses in flight
// (on large graphs nearly every sampled edge is one), where interleaving
// them with the draws would leave the misses to be waited for a few at a
// time.
func (s *Sampler) sampleChunk(in []inbox, outs [][]int64, counts, offs, bases, degs []int64, a, b, hop, fanout int, scratch *[]uint64) {
	g := s.g
	j := 0
	for t := a; t < b; t++ {
		j = inboxOf(in, j, t)
		c := counts[t]
		if c == 0 {
			continue
		}
		nb, _ := answerSlots(outs[j], len(in[j].tasks), offs[t], c)
		v, f := in[j].task(t, fanout)
		base, deg := bases[t], degs[t]
		if f < 0 || (!s.opt.Replace && c == deg) {
			for i := range nb {
				nb[i] = base + int64(i)
			}
			continue
		}
		r := taskStream(s.seed, in[j].key, uint64(hop), uint64(s.orig(v)))
		drawPositions(&r, deg, nb, s.opt.Replace, scratch)
		for i := range nb {
			nb[i] += base
		}
	}
	// The chunk's neighbour slots form one run per requester.
	j = 0
	for t := a; t < b; {
		j = inboxOf(in, j, t)
		end := min(b, in[j].base+len(in[j].tasks))
		lo := offs[t]
		nb, eb := answerSlots(outs[j], len(in[j].tasks), lo, offs[end-1]+counts[end-1]-lo)
		resolvePositions(g, nb, eb)
		t = end
	}
}

// resolvePositions turns nb, absolute CSC positions, into source ids in
// place and writes the ids of those edges into eb[:len(nb)].
func resolvePositions(g *graph.CSC, nb, eb []int64) {
	eb = eb[:len(nb)]
	if ids := g.EdgeIDs; ids != nil {
		for i, p := range nb {
			eb[i] = ids[p]
		}
	} else {
		copy(eb, nb)
	}
	g.Sources(0, nb, nb)
}

// drawPositions fills nb with uniform positions in [0, n): independent
// draws with replacement, else len(nb) distinct positions in ascending
// order (Floyd's algorithm, in the variant that suits n and len(nb)).
func drawPositions(r *rng.SplitMix64, n int64, nb []int64, replace bool, scratch *[]uint64) {
	k := int64(len(nb))
	switch {
	case replace:
		for i := range nb {
			nb[i] = int64(r.Below(uint64(n)))
		}
	case n <= 64*smallSetWords:
		floydSmall(r, n, nb)
	case k <= linearLimit:
		floydSorted(r, n, nb)
	default:
		floyd(r, n, nb, scratch)
		slices.Sort(nb)
	}
}

// positionsToIDs turns nb, positions within the neighbour list that starts
// at CSC position base, into node ids in place, and writes the ids of those
// edges into eb[:len(nb)].
func positionsToIDs(g *graph.CSC, base int64, nb, eb []int64) {
	eb = eb[:len(nb)]
	if g.EdgeIDs != nil {
		ids := g.EdgeIDs[base:]
		for i, pos := range nb {
			eb[i] = ids[pos]
		}
	} else {
		for i, pos := range nb {
			eb[i] = base + pos
		}
	}
	g.Sources(base, nb, nb)
}

// smallSetWords is the size of floydSmall's bitset (64*smallSetWords
// positions).
const smallSetWords = 16

// floydSmall writes len(out) distinct positions drawn uniformly from [0, n),
// n <= 64*smallSetWords, in ascending order: Floyd's algorithm (see floyd)
// with a bitset on the stack, read out in order.
func floydSmall(r *rng.SplitMix64, n int64, out []int64) {
	var set [smallSetWords]uint64
	k := int64(len(out))
	for j := n - k; j < n; j++ {
		t := r.Below(uint64(j + 1))
		if set[t>>6]&(1<<(t&63)) != 0 {
			t = uint64(j)
		}
		set[t>>6] |= 1 << (t & 63)
	}
	i := 0
	for w, x := range set[:(n+63)/64] {
		for ; x != 0; x &= x - 1 {
			out[i] = int64(w<<6 + bits.TrailingZeros64(x))
			i++
		}
	}
}

// floydSorted writes len(out) distinct positions drawn uniformly from [0, n)
// in ascending order: the set Floyd's algorithm picks (see floyd), with the
// picks so far kept sorted, which also makes the membership test a scan of
// the sorted prefix. A repeated pick is replaced by j, larger than every
// earlier pick, so it goes last.
func floydSorted(r *rng.SplitMix64, n int64, out []int64) {
	k := int64(len(out))
	for i, j := int64(0), n-k; j < n; i, j = i+1, j+1 {
		t := int64(r.Below(uint64(j + 1)))
		p := i
		for p > 0 && out[p-1] > t {
			p--
		}
		if p > 0 && out[p-1] == t {
			out[i] = j
			continue
		}
		copy(out[p+1:i+1], out[p:i])
		out[p] = t
	}
}

// floyd writes len(out) distinct positions drawn uniformly from [0, n)
// (Robert Floyd's algorithm: one draw per pick), in pick order. It is used
// for samples larger than linearLimit, with a bitset membership test.
func floyd(r *rng.SplitMix64, n int64, out []int64, scratch *[]uint64) {
	k := int64(len(out))
	words := int((n + 63) / 64)
	if len(*scratch) < words {
		*scratch = make([]uint64, words)
	}
	set := *scratch
	for i, j := int64(0), n-k; j < n; i, j = i+1, j+1 {
		t := int64(r.Below(uint64(j + 1)))
		if set[t>>6]&(1<<(t&63)) != 0 {
			t = j
		}
		set[t>>6] |= 1 << (t & 63)
		out[i] = t
	}
	for _, t := range out {
		set[t>>6] = 0
	}
}

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

// Sampler runs CSP node-wise neighbour sampling over a partitioned graph,
// one rank per patch. It is safe for concurrent use; SampleBatches calls are
// serialised (they share the Comm).
type Sampler struct {
	p   *partition.Partitioned
	g   *graph.CSC
	c   comm.Comm
	opt Options

	mu sync.Mutex
	ws []*workspace // per rank, used under mu
}

// workspace is one rank's memory reused across batches.
type workspace struct {
	table shardedTable
	// parallel merge scratch, indexed by position in the hop's sampled list
	order, rank, slotOf []int32
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
	opt.Fanouts = slices.Clone(opt.Fanouts)
	s := &Sampler{p: p, g: p.Graph, c: c, opt: opt, ws: make([]*workspace, c.Size())}
	for i := range s.ws {
		s.ws[i] = &workspace{}
	}
	return s, nil
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
	return max(1, threadCount(s.opt.Threads)/s.c.Size())
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
	if len(keys) != len(batches) {
		return nil, fmt.Errorf("sample: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
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
	t := &s.ws[0].table
	for b, seeds := range batches {
		if len(seeds) > math.MaxInt32 {
			return fmt.Errorf("sample: len(batches[%d]) = %d is too large", b, len(seeds))
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

// wave runs every rank once; rank i handles batches[i] when i < len(batches).
func (s *Sampler) wave(ctx context.Context, batches [][]int64, keys []uint64, out []*Result) error {
	size := s.c.Size()
	if size == 1 {
		res, err := s.runRank(ctx, 0, batches[0], keys[0], true)
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
			res, err := s.runRank(wctx, rank, seeds, key, has)
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
// when has is false): per hop, shuffle -> sample -> reshuffle -> merge.
func (s *Sampler) runRank(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (*Result, error) {
	ws := s.ws[rank]
	var res *Result
	var nodes []int64
	if has {
		ws.table.reset()
		nodes = slices.Clone(seeds)
		for i, v := range seeds {
			ws.table.insert(v, int32(i))
		}
		res = &Result{
			HopCounts: make([]int64, 1, len(s.opt.Fanouts)+1),
			Blocks:    make([]Block, 0, len(s.opt.Fanouts)),
		}
		res.HopCounts[0] = int64(len(seeds))
	}
	prevStart := 0 // first node added by the previous hop (hop 0: the seeds)
	for h, fanout := range s.opt.Fanouts {
		dstStart := 0
		if s.opt.Frontier == FrontierNew {
			dstStart = prevStart
		}
		frontier := nodes[dstStart:]

		// Shuffle: push each frontier node to the rank owning its row.
		send, owners := s.shuffleMessages(frontier, key)
		recv, err := s.c.AllToAll(ctx, rank, send)
		if err != nil {
			return nil, fmt.Errorf("sample: hop %d shuffle: %w", h, err)
		}
		// Sample: every task this rank received, in one parallel pass.
		back, err := s.sampleStage(rank, recv, h, fanout)
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
		block, err := s.merge(ws, frontier, owners, recv, &nodes, h)
		if err != nil {
			return nil, err
		}
		block.DstOffset = int64(dstStart)
		res.Blocks = append(res.Blocks, block)
		res.HopCounts = append(res.HopCounts, int64(len(nodes)-before))
		prevStart = before
	}
	if res != nil {
		res.Nodes = nodes
	}
	return res, nil
}

// shuffleMessages groups the frontier by owning patch. owners[i] is the
// owner of frontier[i] (nil when there is a single patch).
func (s *Sampler) shuffleMessages(frontier []int64, key uint64) ([][]byte, []int32) {
	size := s.c.Size()
	send := make([][]byte, size)
	if len(frontier) == 0 {
		return send, nil
	}
	if size == 1 {
		buf := make([]int64, 1+len(frontier))
		buf[0] = int64(key)
		copy(buf[1:], frontier)
		send[0] = int64Bytes(buf)
		return send, nil
	}
	owners := make([]int32, len(frontier))
	count := make([]int, size)
	for i, v := range frontier {
		o := s.owner(v)
		owners[i] = int32(o)
		count[o]++
	}
	bufs := make([][]int64, size)
	for o, c := range count {
		if c > 0 {
			bufs[o] = make([]int64, 1, 1+c)
			bufs[o][0] = int64(key)
		}
	}
	for i, v := range frontier {
		o := owners[i]
		bufs[o] = append(bufs[o], v)
	}
	for o, b := range bufs {
		send[o] = int64Bytes(b)
	}
	return send, owners
}

// inbox is the tasks one rank received from one requester.
type inbox struct {
	key   uint64
	tasks []int64
	base  int // index of tasks[0] in the flattened task list
}

// Chunk sizes of the sample stage's parallel passes (variables so that tests
// can force many chunks on small graphs).
var (
	countGrain  = 8192 // tasks per chunk when counting
	sampleGrain = 512  // tasks per chunk when sampling
)

// sampleStage samples every task rank received (recv[j] from rank j) and
// returns the reshuffle messages (back[j] answers recv[j]).
func (s *Sampler) sampleStage(rank int, recv [][]byte, hop, fanout int) ([][]byte, error) {
	size := s.c.Size()
	lo, hi := s.p.Offsets[rank], s.p.Offsets[rank+1]
	in := make([]inbox, size)
	total := 0
	for j, b := range recv {
		m, err := bytesInt64(b)
		if err != nil {
			return nil, fmt.Errorf("sample: hop %d: from rank %d: %w", hop, j, err)
		}
		in[j].base = total
		if len(m) == 0 {
			continue
		}
		in[j].key = uint64(m[0])
		in[j].tasks = m[1:]
		total += len(m) - 1
	}
	back := make([][]byte, size)
	if total == 0 {
		return back, nil
	}

	// Pass 1: how many neighbours each task yields (a function of degree and
	// fanout only), and the range check of the received tasks.
	g := s.g
	counts := make([]int64, total)
	var badMu sync.Mutex
	var bad error
	parallelFor(total, countGrain, s.rankThreads(), func(_, a, b int) {
		j := 0
		for t := a; t < b; t++ {
			for t >= in[j].base+len(in[j].tasks) {
				j++
			}
			v := in[j].tasks[t-in[j].base]
			if v < lo || v >= hi {
				badMu.Lock()
				if bad == nil {
					bad = fmt.Errorf("sample: hop %d: rank %d received node %d from rank %d, outside its patch [%d, %d)", hop, rank, v, j, lo, hi)
				}
				badMu.Unlock()
				return
			}
			counts[t] = s.taskCount(g.Indptr[v+1]-g.Indptr[v], fanout)
		}
	})
	if bad != nil {
		return nil, bad
	}

	// Lay out the answers: counts, then neighbours, then edge ids; offs[t]
	// is task t's first slot among its requester's neighbours.
	offs := make([]int64, total)
	outs := make([][]int64, size)
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
		out := make([]int64, int64(n)+2*m)
		copy(out, counts[in[j].base:in[j].base+n])
		outs[j] = out
		back[j] = int64Bytes(out)
	}

	// Pass 2: sample.
	threads := s.rankThreads()
	scratch := make([][]uint64, threads)
	parallelFor(total, sampleGrain, threads, func(w, a, b int) {
		j := 0
		for t := a; t < b; t++ {
			for t >= in[j].base+len(in[j].tasks) {
				j++
			}
			c := counts[t]
			if c == 0 {
				continue
			}
			n := int64(len(in[j].tasks))
			m := (int64(len(outs[j])) - n) / 2
			nb := outs[j][n+offs[t] : n+offs[t]+c]
			eb := outs[j][n+m+offs[t] : n+m+offs[t]+c]
			v := in[j].tasks[t-in[j].base]
			s.sampleTask(in[j].key, uint64(hop), v, fanout, nb, eb, &scratch[w])
		}
	})
	return back, nil
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
// the picks so far instead of using a bitset.
const linearLimit = 32

// sampleTask writes the len(nb) sampled in-neighbours of v into nb and their
// edge ids into eb.
func (s *Sampler) sampleTask(key, hop uint64, v int64, fanout int, nb, eb []int64, scratch *[]uint64) {
	g := s.g
	base := g.Indptr[v]
	deg := g.Indptr[v+1] - base
	k := int64(len(nb))
	if fanout < 0 || (!s.opt.Replace && k == deg) {
		copy(nb, g.Indices[base:base+deg])
		if g.EdgeIDs != nil {
			copy(eb, g.EdgeIDs[base:base+deg])
		} else {
			for i := range eb {
				eb[i] = base + int64(i)
			}
		}
		return
	}
	r := stream{streamState(s.opt.Seed, key, hop, uint64(s.orig(v)))}
	if s.opt.Replace {
		for i := range nb {
			nb[i] = int64(r.below(uint64(deg)))
		}
	} else {
		floyd(&r, deg, nb, scratch)
		slices.Sort(nb)
	}
	// nb holds positions within v's list: turn them into ids.
	for i, pos := range nb {
		eb[i] = g.EdgeID(base + pos)
		nb[i] = g.Indices[base+pos]
	}
}

// floyd writes len(out) distinct positions drawn uniformly from [0, n)
// (Robert Floyd's algorithm: one draw per pick), in pick order.
func floyd(r *stream, n int64, out []int64, scratch *[]uint64) {
	k := int64(len(out))
	if k <= linearLimit {
		for i, j := int64(0), n-k; j < n; i, j = i+1, j+1 {
			t := int64(r.below(uint64(j + 1)))
			for _, x := range out[:i] {
				if x == t {
					t = j
					break
				}
			}
			out[i] = t
		}
		return
	}
	words := int((n + 63) / 64)
	if len(*scratch) < words {
		*scratch = make([]uint64, words)
	}
	set := *scratch
	for i, j := int64(0), n-k; j < n; i, j = i+1, j+1 {
		t := int64(r.below(uint64(j + 1)))
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

// Package pull is the baseline that DSP's collective sampling primitive is
// measured against (DSP Figures 1 and 11): node-wise neighbour sampling on
// a partitioned graph that moves the data to the task. In each hop a rank
// asks the owner of every frontier node for that node's WHOLE in-neighbour
// list (source ids and edge ids) and samples it itself. CSP (engine/sample)
// does the opposite: it pushes the task to the owner, which answers with
// the sampled neighbours only.
//
// The two exchange the same kind of messages over the same comm.Comm and
// partition.Partitioned, so a comm.Counting around either measures how many
// bytes each approach moves. The samples are correct (uniform without
// replacement, the fan-out of each hop, distinct neighbours, DGL's frontier:
// every node sampled so far) but are not CSP's draws: the streams here are
// keyed alike, but the positions are drawn differently.
//
// Messages are int64 arrays:
//
//	request (requester -> owner): [v_0, ..., v_{n-1}]
//	answer  (owner -> requester): [d_0, ..., d_{n-1}, u..., e...]
//
// d_i is v_i's in-degree and u, e its whole list of sources (internal ids)
// and edge ids, node after node: CSP's reshuffle layout with every
// neighbour taken.
//
// It is a benchmark baseline, not part of the engine: it lives in bench/
// beside its one user (bench/dspbytes) and imports the engine's lower
// packages (comm, graph, mem, partition, rng, sample); nothing in engine/
// imports it.
package pull

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rng"
	"github.com/graphferry/graphferry/engine/sample"
)

// Sampler samples batches by pulling adjacency lists. It runs the ranks
// this process runs (comm.Comm.LocalRanks), one batch per rank per wave, as
// sample.Runtime does; a Sampler is not for concurrent use.
type Sampler struct {
	p     *partition.Partitioned
	g     *graph.CSC
	c     comm.Comm
	opt   Options
	ranks []int
	ws    []*workspace // by rank
}

// Options configures a Sampler.
type Options struct {
	// CacheLists keeps, for the rest of a batch, every list a rank has
	// pulled: with DGL's frontier (every node sampled so far), hop h then
	// asks only for the nodes that hop h-1 added, so each node's list
	// crosses at most once per batch. It costs the requester a copy of
	// those lists; without it, a node's list is pulled again in every hop
	// whose frontier holds it (as the frontier is sampled anew). Samples
	// are the same either way.
	CacheLists bool
}

// workspace is one rank's reusable memory. A buffer it sent is rewritten
// only after its next collective has returned (comm.Comm's rule): requests
// and answers live in separate slices, and each is rewritten one
// collective after it was sent.
type workspace struct {
	req    [][]int64 // request to each owner
	ans    [][]int64 // answer to each requester
	send   []mem.Buffer
	where  []int32 // per frontier node: its position in its owner's request
	owner  []int32 // per frontier node: its owner
	table  []int32 // node -> position+1 in the batch's nodes (dense)
	hash   map[int64]int32
	picked []int64
	// The per-batch list cache (Options.CacheLists): the list of the node
	// at position i of the batch's nodes is [off[i], off[i+1]) of cu, ce.
	off    []int64
	cu, ce []int64
}

// denseMax is the node count up to which a rank's append-unique table is a
// dense []int32 (4 bytes per node); larger graphs use a map.
const denseMax = 1 << 26

// New returns a Sampler over p whose ranks talk through c (c.Size() must
// equal p.NumPatches()). p must not change afterwards.
func New(p *partition.Partitioned, c comm.Comm, opt Options) (*Sampler, error) {
	if p == nil || p.Graph == nil {
		return nil, errors.New("pull: the partition (or its graph) is nil")
	}
	if c == nil {
		return nil, errors.New("pull: comm is nil")
	}
	if err := p.Graph.Validate(); err != nil {
		return nil, fmt.Errorf("pull: partition.Graph: %w", err)
	}
	if len(p.Offsets) < 2 || p.Offsets[0] != 0 || p.Offsets[len(p.Offsets)-1] != p.Graph.NumNodes {
		return nil, fmt.Errorf("pull: partition.Offsets must run from 0 to NumNodes = %d", p.Graph.NumNodes)
	}
	if c.Size() != p.NumPatches() {
		return nil, fmt.Errorf("pull: comm size = %d does not match the partition's %d patches", c.Size(), p.NumPatches())
	}
	ranks := slices.Clone(c.LocalRanks())
	if len(ranks) == 0 {
		return nil, errors.New("pull: the comm runs no rank in this process")
	}
	s := &Sampler{p: p, g: p.Graph, c: c, opt: opt, ranks: ranks, ws: make([]*workspace, c.Size())}
	for _, r := range ranks {
		if r < 0 || r >= c.Size() || s.ws[r] != nil {
			return nil, fmt.Errorf("pull: comm LocalRanks has %d, out of range [0, %d) or repeated", r, c.Size())
		}
		s.ws[r] = &workspace{req: make([][]int64, c.Size()), ans: make([][]int64, c.Size()), send: make([]mem.Buffer, c.Size())}
	}
	return s, nil
}

// Sample samples batches (internal ids, no duplicate within a batch) with
// fanouts[h] neighbours per frontier node in hop h (-1: all), uniformly
// without replacement. Each wave gives batch start+i to local rank i, the
// other local ranks take part with nothing; every rank runs 2 collectives
// per hop per wave. keys[i] keys batch i's random streams with seed.
func (s *Sampler) Sample(ctx context.Context, fanouts []int, seed uint64, batches [][]int64, keys []uint64) ([]*sample.Result, error) {
	if s == nil {
		return nil, errors.New("pull: Sample on a nil *Sampler")
	}
	if len(fanouts) == 0 {
		return nil, errors.New("pull: fanouts is empty")
	}
	for h, f := range fanouts {
		if f < -1 {
			return nil, fmt.Errorf("pull: fanouts[%d] = %d (want -1, 0 or more)", h, f)
		}
	}
	if len(keys) != len(batches) {
		return nil, fmt.Errorf("pull: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	n := s.g.NumNodes
	for b, seeds := range batches {
		seen := make(map[int64]bool, len(seeds))
		for i, v := range seeds {
			if v < 0 || v >= n {
				return nil, fmt.Errorf("pull: batches[%d][%d] = %d is out of range [0, %d)", b, i, v, n)
			}
			if seen[v] {
				return nil, fmt.Errorf("pull: batches[%d][%d] = %d is repeated", b, i, v)
			}
			seen[v] = true
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	out := make([]*sample.Result, len(batches))
	size := len(s.ranks)
	for start := 0; start < len(batches); start += size {
		end := min(start+size, len(batches))
		if err := s.wave(ctx, fanouts, seed, batches[start:end], keys[start:end], out[start:end]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// wave runs every local rank once, concurrently; the first error cancels
// the others (which then fail in their collective).
func (s *Sampler) wave(ctx context.Context, fanouts []int, seed uint64, batches [][]int64, keys []uint64, out []*sample.Result) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(s.ranks))
	var wg sync.WaitGroup
	for i, rank := range s.ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var seeds []int64
			var key uint64
			has := i < len(batches)
			if has {
				seeds, key = batches[i], keys[i]
			}
			res, err := s.rank(ctx, rank, fanouts, seed, seeds, key, has)
			if err != nil {
				errs[i] = err
				cancel()
				return
			}
			if has {
				out[i] = res
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// rank is one rank's share of a wave: per hop, request -> answer -> sample.
func (s *Sampler) rank(ctx context.Context, rank int, fanouts []int, seed uint64, seeds []int64, key uint64, has bool) (*sample.Result, error) {
	ws := s.ws[rank]
	var res *sample.Result
	var nodes []int64
	if has {
		nodes = slices.Clone(seeds)
		res = &sample.Result{HopCounts: []int64{int64(len(seeds))}}
		for i, v := range seeds {
			ws.insert(s.g.NumNodes, v, int32(i))
		}
		defer ws.clearTable(&nodes)
	}
	ws.off = append(ws.off[:0], 0)
	ws.cu, ws.ce = ws.cu[:0], ws.ce[:0]
	for hop, fanout := range fanouts {
		frontier := nodes // DGL: every node sampled so far
		fetch := frontier
		if s.opt.CacheLists {
			fetch = frontier[len(ws.off)-1:] // the earlier frontier is cached
		}
		recv, err := s.c.AllToAll(ctx, rank, ws.requests(s.p, fetch), mem.NoStream)
		if err != nil {
			return nil, fmt.Errorf("pull: rank %d, hop %d, request: %w", rank, hop, err)
		}
		send, err := ws.answers(s.g, recv)
		if err != nil {
			return nil, fmt.Errorf("pull: rank %d, hop %d: %w", rank, hop, err)
		}
		recv, err = s.c.AllToAll(ctx, rank, send, mem.NoStream)
		if err != nil {
			return nil, fmt.Errorf("pull: rank %d, hop %d, answer: %w", rank, hop, err)
		}
		if !has {
			continue
		}
		blk, err := s.merge(ws, recv, &nodes, frontier, fanout, seed, key, uint64(hop))
		if err != nil {
			return nil, fmt.Errorf("pull: rank %d, hop %d: %w", rank, hop, err)
		}
		res.Blocks = append(res.Blocks, blk)
		res.HopCounts = append(res.HopCounts, int64(len(nodes))-blk.NumDst)
	}
	if has {
		res.Nodes = nodes
	}
	return res, nil
}

// requests groups the frontier by owner and remembers, for every frontier
// node, where its answer will be.
func (ws *workspace) requests(p *partition.Partitioned, frontier []int64) []mem.Buffer {
	for j := range ws.req {
		ws.req[j] = ws.req[j][:0]
	}
	ws.where = ws.where[:0]
	ws.owner = ws.owner[:0]
	for _, v := range frontier {
		q := p.Owner(v)
		ws.owner = append(ws.owner, int32(q))
		ws.where = append(ws.where, int32(len(ws.req[q])))
		ws.req[q] = append(ws.req[q], v)
	}
	for j := range ws.send {
		ws.send[j] = mem.HostBuffer(int64Bytes(ws.req[j]))
	}
	return ws.send
}

// answers builds, for every requester, the whole lists of the nodes it asked
// for. The answers do not share memory with the requests just sent (those
// stay untouched until the next collective returns).
func (ws *workspace) answers(g *graph.CSC, recv []mem.Buffer) ([]mem.Buffer, error) {
	send := make([]mem.Buffer, len(recv))
	for j, b := range recv {
		vs, err := int64s(b)
		if err != nil {
			return nil, err
		}
		m := int64(0)
		for _, v := range vs {
			if v < 0 || v >= g.NumNodes {
				return nil, fmt.Errorf("request from rank %d names node %d, out of range [0, %d)", j, v, g.NumNodes)
			}
			m += g.InDegree(v)
		}
		a := slices.Grow(ws.ans[j][:0], len(vs)+int(2*m))[:len(vs)+int(2*m)]
		u, e := a[len(vs):len(vs)+int(m)], a[len(vs)+int(m):]
		off := int64(0)
		for i, v := range vs {
			lo, hi := g.Indptr[v], g.Indptr[v+1]
			a[i] = hi - lo
			g.CopySources(u[off:off+hi-lo], lo, hi)
			if g.EdgeIDs != nil {
				copy(e[off:], g.EdgeIDs[lo:hi])
			} else {
				for k := lo; k < hi; k++ {
					e[off+k-lo] = k
				}
			}
			off += hi - lo
		}
		ws.ans[j] = a
		send[j] = mem.HostBuffer(int64Bytes(a))
	}
	return send, nil
}

// answer is one owner's answer, read in the order the requests were sent.
type answer struct {
	deg    []int64
	u, e   []int64
	cursor []int64 // list start of the i-th requested node (prefix sums of deg)
}

// merge samples every frontier node's list locally and appends the block:
// dst = the frontier (a prefix of nodes), src = nodes after the hop. The
// answers in recv hold the lists of the frontier's last len(ws.owner)
// nodes; with the cache, the others are cached, and these join them.
func (s *Sampler) merge(ws *workspace, recv []mem.Buffer, nodes *[]int64, frontier []int64, fanout int, seed, key, hop uint64) (sample.Block, error) {
	ans := make([]answer, len(recv))
	for j, b := range recv {
		a, err := int64s(b)
		if err != nil {
			return sample.Block{}, err
		}
		n := len(ws.req[j])
		if len(a) < n {
			return sample.Block{}, fmt.Errorf("answer from rank %d has %d values for %d nodes", j, len(a), n)
		}
		deg := a[:n]
		cur := make([]int64, n+1)
		for i, d := range deg {
			if d < 0 {
				return sample.Block{}, fmt.Errorf("answer from rank %d gives degree %d", j, d)
			}
			cur[i+1] = cur[i] + d
		}
		if int64(len(a)) != int64(n)+2*cur[n] {
			return sample.Block{}, fmt.Errorf("answer from rank %d has %d values (want %d)", j, len(a), int64(n)+2*cur[n])
		}
		ans[j] = answer{deg: deg, u: a[n : int64(n)+cur[n]], e: a[int64(n)+cur[n]:], cursor: cur}
	}
	first := len(frontier) - len(ws.owner) // frontier[first:] was fetched
	if s.opt.CacheLists {
		for i := range ws.owner {
			a := &ans[ws.owner[i]]
			w := ws.where[i]
			lo, d := a.cursor[w], a.deg[w]
			ws.cu = append(ws.cu, a.u[lo:lo+d]...)
			ws.ce = append(ws.ce, a.e[lo:lo+d]...)
			ws.off = append(ws.off, int64(len(ws.cu)))
		}
	}
	nd := int64(len(frontier))
	blk := sample.Block{Indptr: make([]int64, 1, nd+1), NumDst: nd}
	for i, v := range frontier {
		var us, es []int64
		if s.opt.CacheLists {
			us, es = ws.cu[ws.off[i]:ws.off[i+1]], ws.ce[ws.off[i]:ws.off[i+1]]
		} else {
			a := &ans[ws.owner[i-first]]
			w := ws.where[i-first]
			lo, d := a.cursor[w], a.deg[w]
			us, es = a.u[lo:lo+d], a.e[lo:lo+d]
		}
		d := int64(len(us))
		k := d
		if fanout >= 0 && int64(fanout) < d {
			k = int64(fanout)
		}
		if k == d {
			for p := range d {
				s.take(ws, &blk, nodes, us[p], es[p])
			}
		} else {
			r := rng.SplitMix64{State: stream(seed, key, hop, uint64(s.orig(v)))}
			ws.picked = floyd(&r, d, k, ws.picked[:0])
			for _, p := range ws.picked {
				s.take(ws, &blk, nodes, us[p], es[p])
			}
		}
		blk.Indptr = append(blk.Indptr, int64(len(blk.Indices)))
	}
	blk.NumSrc = int64(len(*nodes))
	return blk, nil
}

// take appends the edge (u, e) to the block, u through append-unique.
func (s *Sampler) take(ws *workspace, blk *sample.Block, nodes *[]int64, u, e int64) {
	pos, ok := ws.lookup(u)
	if !ok {
		pos = int32(len(*nodes))
		*nodes = append(*nodes, u)
		ws.insert(s.g.NumNodes, u, pos)
	}
	blk.Indices = append(blk.Indices, int64(pos))
	blk.EdgeIDs = append(blk.EdgeIDs, e)
}

func (s *Sampler) orig(v int64) int64 {
	if s.p.NewToOld != nil {
		return s.p.NewToOld[v]
	}
	return v
}

func (ws *workspace) insert(n, v int64, pos int32) {
	if n <= denseMax {
		if ws.table == nil {
			ws.table = make([]int32, n)
		}
		ws.table[v] = pos + 1
		return
	}
	if ws.hash == nil {
		ws.hash = map[int64]int32{}
	}
	ws.hash[v] = pos
}

func (ws *workspace) lookup(v int64) (int32, bool) {
	if ws.table != nil {
		p := ws.table[v]
		return p - 1, p != 0
	}
	p, ok := ws.hash[v]
	return p, ok
}

// clearTable empties the append-unique table after a batch (its entries
// are exactly the batch's nodes).
func (ws *workspace) clearTable(nodes *[]int64) {
	if ws.table != nil {
		for _, v := range *nodes {
			ws.table[v] = 0
		}
	}
	clear(ws.hash)
}

// stream is the state of the random stream of (seed, batch key, hop,
// original node id): the same inputs as CSP's task streams, through a
// different hash, so that pull's draws depend on no layout either.
func stream(seed, key, hop, node uint64) uint64 {
	h := rng.Mix(seed ^ 0x243f6a8885a308d3)
	h = rng.Mix(h ^ key)
	h = rng.Mix(h ^ (hop + 0x13198a2e03707344))
	return rng.Mix(h ^ (node + 0xa4093822299f31d0))
}

// floyd appends k distinct positions of [0, d) drawn uniformly (Floyd's
// algorithm), in increasing order, to out. 0 <= k < d.
func floyd(r *rng.SplitMix64, d, k int64, out []int64) []int64 {
	for j := d - k; j < d; j++ {
		t := int64(r.Below(uint64(j + 1)))
		i, found := slices.BinarySearch(out, t)
		if found {
			out = append(out, j) // j exceeds every position drawn so far
			continue
		}
		out = slices.Insert(out, i, t)
	}
	return out
}

func int64Bytes(s []int64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*8)
}

// int64s views a received message as int64s (copying if misaligned).
func int64s(b mem.Buffer) ([]int64, error) {
	raw, err := b.HostBytes("a pull message")
	if err != nil {
		return nil, err
	}
	if len(raw)%8 != 0 {
		return nil, fmt.Errorf("received a message of %d bytes (want a multiple of 8)", len(raw))
	}
	if len(raw) == 0 {
		return nil, nil
	}
	if uintptr(unsafe.Pointer(&raw[0]))%8 == 0 {
		return unsafe.Slice((*int64)(unsafe.Pointer(&raw[0])), len(raw)/8), nil
	}
	out := make([]int64, len(raw)/8)
	copy(int64Bytes(out), raw)
	return out, nil
}

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Launch geometry: blocks of blockSize threads, at most maxGrid blocks
// (the kernels loop over their range with a grid stride).
const (
	blockSize   = 256
	maxGrid     = 1 << 16
	scanChunk   = 128 // values per thread in the scan kernels (scan.cu)
	hotCounters = 64  // GF_HOT_COUNTERS (gather.cu)
	hotGrid     = 128 // blocks of gf_count_hot
)

// Output says where the batches a Sampler makes in a pipeline live.
type Output int

const (
	// OutputDevice: every tensor of a batch (seeds, input positions,
	// nodes, blocks, node data) is device memory from the worker's pool
	// (mem.Tensor with Device.Kind mem.KindDevice), but HopCounts, which
	// stays a host tensor (its values are read back anyway, and consumers
	// slice by them on the host). The batch records the stream it was made
	// on and an event a consumer's stream waits for (pipeline.Batch's
	// Stream and Ready).
	OutputDevice Output = iota
	// OutputHost: the sizes are read back, then the results are copied
	// from the device straight into buffers of the pipeline's allocator
	// (which the C layer points at page-locked memory).
	OutputHost
)

// SamplerOptions configure a Sampler.
type SamplerOptions struct {
	// Placement of the topology; PlaceAuto (the zero value) decides from
	// the device's free memory less Reserve.
	Placement Placement
	Reserve   int64
	// Output of the batches a pipeline gets (pipeline.Materializer).
	Output Output
	// Streams is the number of streams (pipeline workers, each with its
	// own fork, stream and memory pool) a pipeline runs by default
	// (Threads); <= 0: 4.
	Streams int
	// MaxHopBytes bounds the memory a hop's buffers may take when sized
	// from the host's upper bound of its edges (fan-out times frontier
	// bound, or for fan-out -1 the sum of the frontier bound's largest
	// in-degrees): a hop whose bound needs more is sized exactly instead,
	// after a host synchronisation that reads its edge count (one more per
	// batch). <= 0: 256 MiB.
	MaxHopBytes int64
}

// Sampler samples batches on a Device with the kernels in cuda/kernels, with
// the CPU engine's result: SampleBatches returns what engine/sample's
// Sampler (sample.Runtime.Bind of the same request) returns, any number of
// patches and threads (the CPU engine's batches do not depend on them).
// Node-wise sampling only (uniform or biased, with or without replacement,
// fan-out -1, excluded edges, FrontierAll and FrontierNew); layer-wise,
// disjoint, temporal and typed sampling stay on the CPU.
//
// It is a pipeline.BatchSampler: pipeline.New(sampler, ...) streams batches
// sampled on the device with the pipeline's batch keys, epoch shuffle,
// workers and queues. Each fork (one per worker) shares the device-resident
// topology and has its own stream, memory pool, status word and staging
// memory; forks implement pipeline.Materializer, so a pipeline's batches
// are made by the fork (OutputDevice or OutputHost, SamplerOptions.Output).
//
// A batch is sampled with at most one host synchronisation (unless a hop
// is sized exactly, see MaxHopBytes): every hop's buffers are sized from
// upper bounds known on the host, every kernel reads the actual sizes in
// device memory, and all sizes and the kernels' status word are read back
// once, at the end of the batch.
//
// A Sampler (each fork) is used by one goroutine at a time; the batches it
// made may be released from any goroutine. Close closes its forks too.
type Sampler struct {
	sh     *shared
	st     Stream
	pool   *Pool
	meta   Ptr     // status (2) | hot counters | sz (hops+2) | tot (hops)
	gs     Ptr     // this fork's gf_graph struct (its status word is meta's)
	stage  HostMem // page-locked staging: meta in and out, seeds, positions
	syncs  atomic.Int64
	mu     sync.Mutex // guards closed
	closed bool
}

// shared is what a Sampler and its forks share.
type shared struct {
	dev    Device
	p      *partition.Partitioned
	req    sample.Request // ExcludeEdges nil: a bitmap in topo
	opts   SamplerOptions
	topo   *placed
	bounds *degreeBounds
	n      int64

	mu    sync.Mutex
	forks []*Sampler // every sampler over this topology, the root first
	done  bool
}

// Indices of the topology arrays in shared.topo, and the gf_graph words.
const (
	wIndptr = iota
	wIdx64
	wIdx32
	wEIDs
	wWeights
	wExcl
	wNew2Old
	wArrays // the number of arrays
)

// NewSampler places p's topology for dev (SamplerOptions.Placement) and
// returns a Sampler over it that samples with req (its Seed the root of
// the random streams). req is validated as the CPU engine does; what the
// GPU does not offer is refused.
func NewSampler(dev Device, p *partition.Partitioned, req sample.Request, opts SamplerOptions) (*Sampler, error) {
	if dev == nil {
		return nil, errors.New("cuda: device is nil")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	switch {
	case req.Scheme != sample.NodeWise:
		return nil, fmt.Errorf("cuda: scheme %v is not offered on the GPU (node-wise only; layer-wise stays on the CPU)", req.Scheme)
	case req.Disjoint || req.Temporal != sample.TemporalNone:
		return nil, errors.New("cuda: disjoint and temporal sampling are not offered on the GPU (they stay on the CPU)")
	case req.RelationFanouts != nil:
		return nil, errors.New("cuda: per-relation fan-outs are not offered on the GPU (typed sampling stays on the CPU)")
	}
	if p == nil || p.Graph == nil {
		return nil, errors.New("cuda: partition or its graph is nil")
	}
	g := p.Graph
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("cuda: graph: %w", err)
	}
	if req.Biased && g.Weights == nil {
		return nil, errors.New("cuda: Request.Biased needs edge weights, but the graph has none")
	}
	if p.NewToOld != nil && int64(len(p.NewToOld)) != g.NumNodes {
		return nil, fmt.Errorf("cuda: len(NewToOld) = %d (want %d)", len(p.NewToOld), g.NumNodes)
	}
	if opts.Streams <= 0 {
		opts.Streams = 4
	}
	if opts.MaxHopBytes <= 0 {
		opts.MaxHopBytes = 256 << 20
	}
	if opts.Output != OutputDevice && opts.Output != OutputHost {
		return nil, fmt.Errorf("cuda: unknown output %d", int(opts.Output))
	}
	req.Fanouts = slices.Clone(req.Fanouts)
	exclude := req.ExcludeEdges
	req.ExcludeEdges = nil // turned into the bitmap below
	arrays := make([][]byte, wArrays)
	arrays[wIndptr] = int64Bytes(g.Indptr)
	arrays[wIdx64] = int64Bytes(g.Indices)
	arrays[wIdx32] = int32Bytes(g.Indices32)
	arrays[wEIDs] = int64Bytes(g.EdgeIDs)
	if req.Biased {
		arrays[wWeights] = float32Bytes(g.Weights)
	}
	arrays[wExcl] = uint64Bytes(excludedBitmap(g.EdgeIDs, g.NumEdges(), exclude))
	arrays[wNew2Old] = int64Bytes(p.NewToOld)
	topo, err := place(dev, arrays, opts.Placement, opts.Reserve)
	if err != nil {
		return nil, err
	}
	sh := &shared{dev: dev, p: p, req: req, opts: opts, topo: topo, bounds: newDegreeBounds(g.Indptr), n: g.NumNodes}
	s, err := sh.newFork()
	if err != nil {
		return nil, errors.Join(err, topo.release())
	}
	return s, nil
}

// newFork makes a sampler over sh's topology with its own stream, pool,
// status word and staging memory.
func (sh *shared) newFork() (*Sampler, error) {
	st, err := sh.dev.NewStream()
	if err != nil {
		return nil, err
	}
	s := &Sampler{sh: sh, st: st, pool: NewPool(sh.dev, st)}
	fail := func(err error) (*Sampler, error) {
		return nil, errors.Join(err, s.free())
	}
	if s.meta, err = s.pool.Get(s.metaWords() * 8); err != nil {
		return fail(err)
	}
	if s.gs, err = s.pool.Get(11 * 8); err != nil {
		return fail(err)
	}
	if err := s.ensureStage(s.metaWords() + 3*64); err != nil {
		return fail(err)
	}
	// The gf_graph struct (common.cuh): 11 words.
	words := uint64s(s.stage.Bytes)[:11]
	for i, p := range sh.topo.ptrs {
		words[i] = uint64(p)
	}
	words[7] = uint64(sh.n)
	words[8], words[9] = 0, 0
	if sh.req.Replace {
		words[8] = 1
	}
	if sh.req.Biased {
		words[9] = 1
	}
	words[10] = uint64(s.meta)
	if err := s.st.CopyIn(s.gs, s.stage.Bytes[:88]); err != nil {
		return fail(err)
	}
	if err := s.st.Memset(s.meta, 0, 16); err != nil {
		return fail(err)
	}
	if err := s.st.Sync(); err != nil {
		return fail(err)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.done {
		return fail(errors.New("cuda: the sampler is closed"))
	}
	sh.forks = append(sh.forks, s)
	return s, nil
}

// free releases s's own resources.
func (s *Sampler) free() error {
	var errs []error
	if s.stage.Bytes != nil {
		errs = append(errs, s.sh.dev.FreeHost(s.stage))
		s.stage = HostMem{}
	}
	errs = append(errs, s.pool.Close(), s.st.Close())
	return errors.Join(errs...)
}

// Close closes the sampler, every fork of it (the forks' batches still
// held lose their device memory: release them first) and the topology.
// Closing any fork closes them all; closing twice is a no-op.
func (s *Sampler) Close() error {
	if s == nil {
		return nil
	}
	sh := s.sh
	sh.mu.Lock()
	if sh.done {
		sh.mu.Unlock()
		return nil
	}
	sh.done = true
	forks := sh.forks
	sh.forks = nil
	sh.mu.Unlock()
	var errs []error
	for _, f := range forks {
		f.mu.Lock()
		f.closed = true
		errs = append(errs, f.free())
		f.mu.Unlock()
	}
	errs = append(errs, sh.topo.release())
	return errors.Join(errs...)
}

// Placement returns where the topology was placed (PlaceDevice or
// PlacePinned), its bytes and how many of its arrays had to be copied into
// pinned allocations (PlacePinned: the others are read in place).
func (s *Sampler) Placement() (where Placement, bytes int64, copied int) {
	return s.sh.topo.where, s.sh.topo.bytes, s.sh.topo.copied
}

// Syncs returns the host synchronisations of s's batches so far (the
// batch's end, and the hops sized exactly).
func (s *Sampler) Syncs() int64 { return s.syncs.Load() }

// PoolBytes is the device memory s's pool holds.
func (s *Sampler) PoolBytes() int64 { return s.pool.Held() }

// Partitioned returns the partition s samples (pipeline.BatchSampler).
func (s *Sampler) Partitioned() *partition.Partitioned { return s.sh.p }

// Threads returns the number of streams a pipeline runs by default
// (SamplerOptions.Streams): its default number of workers.
func (s *Sampler) Threads() int { return s.sh.opts.Streams }

// Fork returns a sampler sharing s's topology, with its own stream and
// memory pool (threads is ignored: a fork drives one stream).
func (s *Sampler) Fork(int) (*Sampler, error) { return s.sh.newFork() }

// LocalRanks returns the one rank a device sampler runs.
func (s *Sampler) LocalRanks() []int { return []int{0} }

// Recycle takes back results (nothing to do: they are the Go heap's).
func (s *Sampler) Recycle(...*sample.Result) {}

var (
	_ pipeline.BatchSampler[*Sampler] = (*Sampler)(nil)
	_ pipeline.Materializer           = (*Sampler)(nil)
)

func (s *Sampler) hops() int64 { return int64(len(s.sh.req.Fanouts)) }

// metaWords is the size of the meta block in words.
func (s *Sampler) metaWords() int64 { return 2 + hotCounters + 2*s.hops() + 2 }

// Offsets in the meta block: sz[i] (sz[0] = 0, sz[1] = the seeds, sz[h+2]
// the nodes after hop h) and tot[h] (hop h's edges).
func (s *Sampler) szWord(i int64) int64  { return 2 + hotCounters + i }
func (s *Sampler) totWord(h int64) int64 { return 2 + hotCounters + s.hops() + 2 + h }
func (s *Sampler) szPtr(i int64) Ptr     { return s.meta + Ptr(8*s.szWord(i)) }
func (s *Sampler) totPtr(h int64) Ptr    { return s.meta + Ptr(8*s.totWord(h)) }

// ensureStage makes the staging memory at least words words (called
// between batches only: a batch's asynchronous copies read it).
func (s *Sampler) ensureStage(words int64) error {
	if int64(len(s.stage.Bytes)) >= words*8 {
		return nil
	}
	if s.stage.Bytes != nil {
		if err := s.sh.dev.FreeHost(s.stage); err != nil {
			return err
		}
		s.stage = HostMem{}
	}
	size := int64(4096)
	for size < words*8 {
		size *= 2
	}
	h, err := s.sh.dev.AllocHost(size)
	if err != nil {
		return fmt.Errorf("cuda: allocating %d bytes of pinned staging memory: %w", size, err)
	}
	s.stage = h
	return nil
}

func grid(n int64) int {
	g := (n + blockSize - 1) / blockSize
	return int(max(1, min(g, maxGrid)))
}

// launch runs kernel on a grid for n threads (an upper bound: the kernels
// read their actual extent on the device).
func launch(st Stream, kernel string, n int64, args ...uint64) error {
	return launchGrid(st, kernel, grid(n), args...)
}

func launchGrid(st Stream, kernel string, g int, args ...uint64) error {
	if err := st.Launch(kernel, g, blockSize, args...); err != nil {
		return fmt.Errorf("cuda: launching %s: %w", kernel, err)
	}
	return nil
}

// scan writes into out[0:n+1] the exclusive prefix sums of in[0:n) plus
// *init (init 0: zero), n = *hi - *lo (lo 0: zero) at most nMax, and the
// total to *total (when not 0); out may be in. It takes its scratch from m.
// The levels (scan.cu) are planned from nMax: chunks of scanChunk values,
// sums of sums up to a level of at most scanChunk, which one thread scans.
func scan(st Stream, m *batchMem, in, lo, hi Ptr, nMax int64, init, total, out Ptr) error {
	// Level l's bound and its array (level 0: in, then out).
	sizes := []int64{nMax}
	levels := []Ptr{in}
	for {
		next := (sizes[len(sizes)-1] + scanChunk - 1) / scanChunk
		p, err := m.get((next + 1) * 8)
		if err != nil {
			return err
		}
		defer m.put(p)
		sizes, levels = append(sizes, next), append(levels, p)
		if next <= scanChunk {
			break
		}
	}
	top := int64(len(levels) - 1)
	for l := range top {
		if sizes[l] == 0 {
			break
		}
		if err := launch(st, "gf_scan_chunks", sizes[l+1], uint64(levels[l]), uint64(lo), uint64(hi), uint64(l), scanChunk, uint64(levels[l+1])); err != nil {
			return err
		}
	}
	if err := st.Launch("gf_scan_partials", 1, 1, uint64(levels[top]), uint64(lo), uint64(hi), uint64(top), scanChunk, uint64(init), uint64(total)); err != nil {
		return fmt.Errorf("cuda: launching gf_scan_partials: %w", err)
	}
	for l := top - 1; l >= 0; l-- {
		dst := levels[l]
		if l == 0 {
			dst = out
		}
		if err := launch(st, "gf_scan_apply", sizes[l+1], uint64(levels[l]), uint64(lo), uint64(hi), uint64(l), scanChunk, uint64(levels[l+1]), uint64(dst)); err != nil {
			return err
		}
	}
	return nil
}

// checkSeeds range-checks seeds and refuses duplicates, as the CPU engine.
func checkSeeds(n int64, b int, seeds []int64) error {
	if len(seeds) > math.MaxInt32 {
		return fmt.Errorf("cuda: len(batches[%d]) = %d is too large", b, len(seeds))
	}
	seen := make(map[int64]int, len(seeds))
	for i, v := range seeds {
		if v < 0 || v >= n {
			return fmt.Errorf("cuda: batches[%d][%d] = %d is out of range [0, %d)", b, i, v, n)
		}
		if j, ok := seen[v]; ok {
			return fmt.Errorf("cuda: batches[%d][%d] = %d duplicates batches[%d][%d]", b, i, v, b, j)
		}
		seen[v] = i
	}
	return nil
}

// batchMem is one batch's device memory, all from the pool: the blocks it
// holds go back with release, but those its outputs took.
type batchMem struct {
	pool   *Pool
	blocks map[Ptr]bool
}

func (m *batchMem) get(bytes int64) (Ptr, error) {
	p, err := m.pool.Get(max(bytes, 8))
	if err == nil {
		if m.blocks == nil {
			m.blocks = map[Ptr]bool{}
		}
		m.blocks[p] = true
	}
	return p, err
}

// put gives p back now: later work on the stream may reuse it.
func (m *batchMem) put(p Ptr) {
	if m.blocks[p] {
		delete(m.blocks, p)
		_ = m.pool.Put(p)
	}
}

// take removes p from m: an output owns it now.
func (m *batchMem) take(p Ptr) { delete(m.blocks, p) }

func (m *batchMem) release() {
	for p := range m.blocks {
		_ = m.pool.Put(p)
	}
	m.blocks = nil
}

// hopOut is the device memory of one hop's block.
type hopOut struct {
	indptr, indices, eids Ptr
}

// devBatch is one batch sampled on the device: its outputs in device
// memory and its sizes, read back.
type devBatch struct {
	m       batchMem
	nodes   Ptr // internal ids, sz[hops+1] of them
	hops    []hopOut
	sz, tot []int64 // as in the meta block
	hot     int64   // hot nodes (when counted)
	syncs   int64
}

// numNodes returns the batch's node count.
func (d *devBatch) numNodes() int64 { return d.sz[len(d.sz)-1] }

// hopShape returns hop h's block shape: dst offset, dst and src counts and
// edges.
func (s *Sampler) hopShape(d *devBatch, h int) (dstOff, numDst, numSrc, edges int64) {
	if s.sh.req.Frontier == sample.FrontierNew {
		dstOff = d.sz[h]
	}
	return dstOff, d.sz[h+1] - dstOff, d.sz[h+2], d.tot[h]
}

// edgeBound bounds the edges a hop of fan-out fanout samples from a
// frontier of at most k distinct nodes.
func (s *Sampler) edgeBound(k int64, fanout int) int64 {
	f := int64(fanout)
	switch {
	case f < 0:
		return s.sh.bounds.sum(k, -1)
	case s.sh.req.Replace:
		return s.sh.bounds.positive(k) * f
	}
	return s.sh.bounds.sum(k, f)
}

// perEdge is the device memory a hop takes per edge of its bound.
func (s *Sampler) perEdge() int64 {
	if s.sh.req.Biased && !s.sh.req.Replace {
		return 48
	}
	return 40
}

// reach bounds the nodes after the hops from `from` on, starting from nub
// nodes of which add came in the last hop, up to the first later hop whose
// bound is too large to allocate (sized exactly at its own
// synchronisation); hop from has exactly edges edges when edges >= 0.
func (s *Sampler) reach(from int, nub, add, edges int64) int64 {
	n := s.sh.n
	for h := from; h < len(s.sh.req.Fanouts); h++ {
		fub := nub
		if s.sh.req.Frontier == sample.FrontierNew {
			fub = add
		}
		eub := s.edgeBound(fub, s.sh.req.Fanouts[h])
		if h == from && edges >= 0 {
			eub = edges
		} else if eub*s.perEdge() > s.sh.opts.MaxHopBytes {
			break
		}
		add, nub = min(eub, n), min(nub+eub, n)
	}
	return nub
}

// table is the append-unique hash table of one batch.
type table struct {
	keys, vals Ptr
	slots      int64 // a power of two
}

// newTable makes a table of at least minSlots slots holding nodes[0:n)
// (n known on the host).
func (s *Sampler) newTable(m *batchMem, minSlots int64, nodes Ptr, n int64) (table, error) {
	t := table{slots: 64}
	for t.slots < minSlots {
		t.slots <<= 1
	}
	var err error
	if t.keys, err = m.get(t.slots * 8); err != nil {
		return t, err
	}
	if t.vals, err = m.get(t.slots * 8); err != nil {
		return t, err
	}
	if err := s.st.Memset(t.keys, 0xff, t.slots*8); err != nil {
		return t, err
	}
	if err := s.st.Memset(t.vals, 0x7f, t.slots*8); err != nil {
		return t, err
	}
	if n > 0 {
		err = launch(s.st, "gf_table_insert", n, uint64(t.keys), uint64(t.vals), uint64(t.slots-1), uint64(nodes), uint64(n), uint64(s.meta))
	}
	return t, err
}

// readMeta queues the copy of the meta block to the staging memory, waits
// for the stream and returns the block.
func (s *Sampler) readMeta(d *devBatch) ([]int64, error) {
	w := s.metaWords()
	buf := s.stage.Bytes[:w*8]
	if err := s.st.CopyOut(buf, s.meta); err != nil {
		return nil, err
	}
	if err := s.st.Sync(); err != nil {
		return nil, err
	}
	s.syncs.Add(1)
	d.syncs++
	return int64s(buf), nil
}

// batchInput is what the host gives a batch besides its seeds: values to
// upload before the batch's synchronisation (device outputs).
type batchInput struct {
	seeds          []int64 // internal ids
	key            uint64
	seedsOrig, pos []int64 // uploaded when not nil (OutputDevice)
	hot            *Gatherer
}

// uploads are the device copies of a batch's seedsOrig and pos.
type uploads struct{ seedsOrig, pos Ptr }

// sampleDevice samples one batch on s's stream. On success the caller owns
// d (d.m.release gives its memory back, but what it took).
func (s *Sampler) sampleDevice(in batchInput) (_ *devBatch, up uploads, err error) {
	sh := s.sh
	req := &sh.req
	st := s.st
	nh := s.hops()
	b := int64(len(in.seeds))
	d := &devBatch{m: batchMem{pool: s.pool}, hops: make([]hopOut, nh)}
	defer func() {
		if err != nil {
			d.m.release()
		}
	}()
	// Staging: the meta block, then seeds, seedsOrig and positions.
	w := s.metaWords()
	if err := s.ensureStage(w + 3*b); err != nil {
		return nil, up, err
	}
	words := int64s(s.stage.Bytes)
	clear(words[2:s.szWord(0)])
	words[s.szWord(0)], words[s.szWord(1)] = 0, b
	seedsAt := w
	copy(words[seedsAt:], in.seeds)
	// The meta block but the status word (reported errors of earlier work
	// stay until read): hot counters, sz[0], sz[1].
	if err := st.CopyIn(s.meta+16, s.stage.Bytes[16:8*s.szWord(2)]); err != nil {
		return nil, up, err
	}
	if in.seedsOrig != nil {
		copy(words[w+b:], in.seedsOrig)
		copy(words[w+2*b:], in.pos)
		for i, p := range []*Ptr{&up.seedsOrig, &up.pos} {
			if *p, err = d.m.get(b * 8); err != nil {
				return nil, up, err
			}
			if err := st.CopyIn(*p, s.stage.Bytes[8*(w+int64(i+1)*b):8*(w+int64(i+2)*b)]); err != nil {
				return nil, up, err
			}
		}
	}
	n := sh.n
	capNodes := s.reach(0, b, b, -1)
	if d.nodes, err = d.m.get(capNodes * 8); err != nil {
		return nil, up, err
	}
	if err := st.CopyIn(d.nodes, s.stage.Bytes[8*seedsAt:8*(seedsAt+b)]); err != nil {
		return nil, up, err
	}
	tab, err := s.newTable(&d.m, 2*capNodes, d.nodes, b)
	if err != nil {
		return nil, up, err
	}
	nub, add := b, b // bounds of the nodes so far and of those the last hop added
	for h, fanout := range req.Fanouts {
		hh := int64(h)
		var lo Ptr
		fub := nub
		if req.Frontier == sample.FrontierNew {
			lo, fub = s.szPtr(hh), add
		}
		hi := s.szPtr(hh + 1)
		eub := s.edgeBound(fub, fanout)
		// Counts, scanned in place into the block's Indptr.
		indptr, err := d.m.get((fub + 1) * 8)
		if err != nil {
			return nil, up, err
		}
		if fub > 0 {
			if err := launch(st, "gf_count", fub, uint64(s.gs), uint64(d.nodes), uint64(lo), uint64(hi), uint64(int64(fanout)), uint64(indptr)); err != nil {
				return nil, up, err
			}
		}
		if err := scan(st, &d.m, indptr, lo, hi, fub, 0, s.totPtr(hh), indptr); err != nil {
			return nil, up, err
		}
		if eub*s.perEdge() > sh.opts.MaxHopBytes {
			// Too large to allocate from the bound: read the hop's edge
			// count (and the nodes so far) now.
			meta, err := s.readMeta(d)
			if err != nil {
				return nil, up, err
			}
			if err := s.status(meta); err != nil {
				return nil, up, err
			}
			known := meta[s.szWord(hh+1)]
			eub, nub, add = meta[s.totWord(hh)], known, known-meta[s.szWord(hh)]
			if need := s.reach(h, nub, add, eub); need > capNodes {
				bigger, err := d.m.get(need * 8)
				if err != nil {
					return nil, up, err
				}
				if err := st.CopyDev(bigger, d.nodes, known*8); err != nil {
					return nil, up, err
				}
				d.m.put(d.nodes)
				d.m.put(tab.keys)
				d.m.put(tab.vals)
				d.nodes, capNodes = bigger, need
				if tab, err = s.newTable(&d.m, 2*capNodes, d.nodes, known); err != nil {
					return nil, up, err
				}
			}
		}
		nbrs, err := d.m.get(eub * 8)
		if err != nil {
			return nil, up, err
		}
		eids, err := d.m.get(eub * 8)
		if err != nil {
			return nil, up, err
		}
		var keys Ptr
		if req.Biased && !req.Replace {
			if keys, err = d.m.get(eub * 8); err != nil {
				return nil, up, err
			}
		}
		if eub > 0 {
			if err := launch(st, "gf_sample", fub, uint64(s.gs), uint64(d.nodes), uint64(lo), uint64(hi),
				uint64(int64(fanout)), req.Seed, in.key, uint64(h), uint64(indptr), uint64(nbrs), uint64(eids), uint64(keys)); err != nil {
				return nil, up, err
			}
		}
		// Append-unique (unique.cu).
		slots, err := d.m.get(eub * 8)
		if err != nil {
			return nil, up, err
		}
		rank, err := d.m.get((eub + 1) * 8)
		if err != nil {
			return nil, up, err
		}
		indices, err := d.m.get(eub * 8)
		if err != nil {
			return nil, up, err
		}
		tot := s.totPtr(hh)
		if eub > 0 {
			if err := launch(st, "gf_au_insert", eub, uint64(tab.keys), uint64(tab.vals), uint64(tab.slots-1), uint64(nbrs), uint64(tot), uint64(slots), uint64(indices), uint64(s.meta)); err != nil {
				return nil, up, err
			}
			if err := launch(st, "gf_au_flag", eub, uint64(tab.vals), uint64(slots), uint64(tot), uint64(rank)); err != nil {
				return nil, up, err
			}
		}
		// The flags' ranks from the node count before the hop: the new
		// nodes' positions; the total is the node count after it.
		if err := scan(st, &d.m, rank, 0, tot, eub, s.szPtr(hh+1), s.szPtr(hh+2), rank); err != nil {
			return nil, up, err
		}
		if eub > 0 {
			if err := launch(st, "gf_au_assign", eub, uint64(tab.vals), uint64(slots), uint64(nbrs), uint64(rank), uint64(tot), uint64(d.nodes), uint64(indices)); err != nil {
				return nil, up, err
			}
			if err := launch(st, "gf_au_resolve", eub, uint64(tab.vals), uint64(slots), uint64(rank), uint64(tot), uint64(indices)); err != nil {
				return nil, up, err
			}
		}
		// Scratch goes back now: the stream orders any reuse after these
		// kernels.
		for _, p := range []Ptr{nbrs, keys, slots, rank} {
			if p != 0 {
				d.m.put(p)
			}
		}
		d.hops[h] = hopOut{indptr: indptr, indices: indices, eids: eids}
		add, nub = min(eub, n), min(nub+eub, n)
	}
	if g := in.hot; g != nil && g.slot != 0 {
		if err := launchGrid(st, "gf_count_hot", min(grid(nub), hotGrid), uint64(g.slot), uint64(d.nodes), uint64(s.szPtr(nh+1)), uint64(s.meta+16)); err != nil {
			return nil, up, err
		}
	}
	meta, err := s.readMeta(d)
	if err != nil {
		return nil, up, err
	}
	if err := s.status(meta); err != nil {
		return nil, up, err
	}
	d.sz = slices.Clone(meta[s.szWord(0):s.szWord(nh+2)])
	d.tot = slices.Clone(meta[s.totWord(0):s.totWord(nh)])
	for _, c := range meta[2 : 2+hotCounters] {
		d.hot += c
	}
	for h := range nh {
		if d.sz[h+2] > math.MaxInt32 {
			return nil, up, fmt.Errorf("cuda: hop %d: the sample would exceed %d nodes", h, math.MaxInt32)
		}
	}
	d.m.put(tab.keys)
	d.m.put(tab.vals)
	return d, up, nil
}

// status returns the kernels' error report in a meta block read back, and
// clears it on the device.
func (s *Sampler) status(meta []int64) error {
	if meta[0] == 0 {
		return nil
	}
	if err := s.st.Memset(s.meta, 0, 16); err != nil {
		return err
	}
	return statusError(uint64(meta[0]), meta[1], s.sh.n)
}

// SampleBatches samples each batch (internal seed ids) with keys[i] as
// batch i's key, like the CPU engine's sample.Sampler with the same
// request, and returns the results on the host (the sizes read back, then
// the results copied: two waits per batch).
func (s *Sampler) SampleBatches(ctx context.Context, batches [][]int64, keys []uint64) ([]*sample.Result, error) {
	if s == nil {
		return nil, errors.New("cuda: SampleBatches on a nil *Sampler")
	}
	if err := s.checkBatches(batches, keys); err != nil {
		return nil, err
	}
	out := make([]*sample.Result, len(batches))
	for b, seeds := range batches {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, _, err := s.sampleDevice(batchInput{seeds: seeds, key: keys[b]})
		if err != nil {
			return nil, err
		}
		out[b], err = s.copyResult(d)
		d.m.release()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Sampler) checkBatches(batches [][]int64, keys []uint64) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return errors.New("cuda: the sampler is closed")
	}
	if len(keys) != len(batches) {
		return fmt.Errorf("cuda: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	for b, seeds := range batches {
		if err := checkSeeds(s.sh.n, b, seeds); err != nil {
			return err
		}
	}
	return nil
}

// hostDst says where a batch's arrays go on the host.
type hostDst struct {
	nodes                 []int64
	indptr, indices, eids [][]int64
}

// queueCopies queues the copies of d's arrays into dst (valid after the
// stream's next Sync).
func (s *Sampler) queueCopies(d *devBatch, dst hostDst) error {
	if err := s.st.CopyOut(int64Bytes(dst.nodes), d.nodes); err != nil {
		return err
	}
	for h, o := range d.hops {
		for _, c := range []struct {
			dst []int64
			src Ptr
		}{{dst.indptr[h], o.indptr}, {dst.indices[h], o.indices}, {dst.eids[h], o.eids}} {
			if err := s.st.CopyOut(int64Bytes(c.dst), c.src); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyResult copies d to a sample.Result on the host.
func (s *Sampler) copyResult(d *devBatch) (*sample.Result, error) {
	nh := len(d.hops)
	res := &sample.Result{Nodes: make([]int64, d.numNodes()), HopCounts: make([]int64, nh+1), Blocks: make([]sample.Block, nh)}
	dst := hostDst{nodes: res.Nodes, indptr: make([][]int64, nh), indices: make([][]int64, nh), eids: make([][]int64, nh)}
	res.HopCounts[0] = d.sz[1]
	for h := range nh {
		off, nd, ns, e := s.hopShape(d, h)
		res.HopCounts[h+1] = d.sz[h+2] - d.sz[h+1]
		blk := sample.Block{Indptr: make([]int64, nd+1), Indices: make([]int64, e), EdgeIDs: make([]int64, e), NumDst: nd, NumSrc: ns, DstOffset: off}
		dst.indptr[h], dst.indices[h], dst.eids[h] = blk.Indptr, blk.Indices, blk.EdgeIDs
		res.Blocks[h] = blk
	}
	if err := s.queueCopies(d, dst); err != nil {
		return nil, err
	}
	if err := s.st.Sync(); err != nil {
		return nil, err
	}
	return res, nil
}

// Device-side error codes (cuda/kernels/common.cuh, GF_ST_*): the kernel
// that found the problem, and what it found.
var statusCodes = map[uint64]struct{ kernel, what string }{
	1: {"gf_count", "frontier node %d is outside the graph"},
	2: {"gf_sample", "frontier node %d is outside the graph"},
	3: {"gf_table_insert", "the node table has no free slot for node %d"},
	4: {"gf_au_insert", "the node table has no free slot for node %d"},
	5: {"gf_gather", "node %d is outside the node data"},
}

func statusError(code uint64, detail, n int64) error {
	c, ok := statusCodes[code]
	if !ok {
		return fmt.Errorf("cuda: a kernel reported an unknown error code %d (detail %d)", code, detail)
	}
	return fmt.Errorf("cuda: kernel %s: "+c.what+" of %d nodes (a check on the device; no CUDA fault happened)", c.kernel, detail, n)
}

// excludedBitmap returns the bitmap over edge positions of the edges whose
// ids are in ids (nil when none is), as the CPU engine builds it.
func excludedBitmap(edgeIDs []int64, e int64, ids []int64) []uint64 {
	if len(ids) == 0 {
		return nil
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	set := make([]uint64, (e+63)/64)
	found := false
	for p := int64(0); p < e; p++ {
		id := p
		if edgeIDs != nil {
			id = edgeIDs[p]
		}
		if _, ok := slices.BinarySearch(sorted, id); ok {
			set[p>>6] |= 1 << (p & 63)
			found = true
		}
	}
	if !found {
		return nil
	}
	return set
}

package cuda

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// Launch geometry: blocks of blockSize threads, at most maxGrid blocks
// (the kernels loop over their range with a grid stride).
const (
	blockSize    = 256
	maxGrid      = 1 << 16
	minScanChunk = 64 // values per thread in the scan kernels, at least
)

// Sampler samples batches on a Device with the kernels in cuda/kernels, with
// the CPU engine's result: for the same request, seed, batch key and seeds,
// SampleBatches returns what engine/sample's Runtime.Sample returns for the
// request with that seed (any number of patches: the CPU engine's batches do not depend
// on it). The whole graph lives on the device. Node-wise sampling only
// (uniform or biased, with or without replacement, fan-out -1, excluded
// edges, FrontierAll and FrontierNew); layer-wise sampling stays on the CPU.
// A Sampler is used by one goroutine at a time.
type Sampler struct {
	dev  Device
	pool *Pool
	req  sample.Request // its Seed unused: SampleBatches takes the seed
	n    int64

	graph  Ptr   // the gf_graph struct
	status Ptr   // the kernels' error report: two words, code and detail
	arrays []Ptr // the graph's arrays (freed by Close)
}

// NewSampler copies p's graph to dev and returns a Sampler over it that
// samples with req (its Seed aside). req is validated as the CPU engine
// does; a Scheme other than NodeWise is refused.
func NewSampler(dev Device, p *partition.Partitioned, req sample.Request) (*Sampler, error) {
	if dev == nil {
		return nil, errors.New("cuda: device is nil")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Scheme != sample.NodeWise {
		return nil, fmt.Errorf("cuda: scheme %v is not offered on the GPU (node-wise only; layer-wise stays on the CPU)", req.Scheme)
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
	req.Fanouts = slices.Clone(req.Fanouts)
	exclude := req.ExcludeEdges
	req.ExcludeEdges = nil // turned into the bitmap below
	s := &Sampler{dev: dev, pool: NewPool(dev), req: req, n: g.NumNodes}
	upload := func(b []byte) (uint64, error) {
		if b == nil {
			return 0, nil
		}
		ptr, err := dev.Alloc(int64(len(b)))
		if err != nil {
			return 0, fmt.Errorf("cuda: allocating the graph (%d bytes): %w", len(b), err)
		}
		s.arrays = append(s.arrays, ptr)
		if err := dev.CopyIn(ptr, b); err != nil {
			return 0, err
		}
		return uint64(ptr), nil
	}
	var words [11]uint64
	excl := excludedBitmap(g.EdgeIDs, g.NumEdges(), exclude)
	fields := [][]byte{int64Bytes(g.Indptr), int64Bytes(g.Indices), int32Bytes(g.Indices32),
		int64Bytes(g.EdgeIDs), nil, uint64Bytes(excl), int64Bytes(p.NewToOld)}
	if req.Biased {
		fields[4] = float32Bytes(g.Weights)
	}
	var err error
	for i, f := range fields {
		if words[i], err = upload(f); err != nil {
			s.Close()
			return nil, err
		}
	}
	status, err := upload(make([]byte, 16))
	if err != nil {
		s.Close()
		return nil, err
	}
	s.status = Ptr(status)
	words[10] = status
	words[7] = uint64(g.NumNodes)
	if req.Replace {
		words[8] = 1
	}
	if req.Biased {
		words[9] = 1
	}
	gp, err := upload(uint64Bytes(words[:]))
	if err != nil {
		s.Close()
		return nil, err
	}
	s.graph = Ptr(gp)
	return s, nil
}

// Close frees the graph and the pool's memory (not the Device).
func (s *Sampler) Close() error {
	if s == nil {
		return nil
	}
	var errs []error
	for _, p := range s.arrays {
		errs = append(errs, s.dev.Free(p))
	}
	s.arrays = nil
	errs = append(errs, s.pool.Close())
	return errors.Join(errs...)
}

// PoolBytes is the device memory the sampler's pool holds.
func (s *Sampler) PoolBytes() int64 { return s.pool.Held }

func grid(n int64) int {
	g := (n + blockSize - 1) / blockSize
	return int(max(1, min(g, maxGrid)))
}

func (s *Sampler) launch(kernel string, n int64, args ...uint64) error {
	if err := s.dev.Launch(kernel, grid(n), blockSize, args...); err != nil {
		return fmt.Errorf("cuda: launching %s: %w", kernel, err)
	}
	return nil
}

// scan writes the exclusive prefix sums of in[0:n) plus init into
// out[0:n+1] (out may be in), with partial as scratch.
func (s *Sampler) scan(in, out Ptr, n, init int64) error {
	if n == 0 {
		return s.dev.CopyIn(out, int64Bytes([]int64{init}))
	}
	// About sqrt(n) chunks of sqrt(n) values: the chunk sums are scanned by
	// one thread, so neither pass is long.
	chunk := max(int64(minScanChunk), int64(math.Ceil(math.Sqrt(float64(n)))))
	chunks := (n + chunk - 1) / chunk
	partial, err := s.pool.Get((chunks + 1) * 8)
	if err != nil {
		return err
	}
	defer s.pool.Put(partial)
	if err := s.launch("gf_scan_chunks", chunks, uint64(in), uint64(n), uint64(chunk), uint64(partial)); err != nil {
		return err
	}
	if err := s.dev.Launch("gf_scan_partials", 1, 1, uint64(partial), uint64(chunks), uint64(init)); err != nil {
		return fmt.Errorf("cuda: launching gf_scan_partials: %w", err)
	}
	return s.launch("gf_scan_apply", chunks, uint64(in), uint64(n), uint64(chunk), uint64(partial), uint64(out))
}

func (s *Sampler) readInt64(p Ptr, i int64) (int64, error) {
	var v [1]int64
	err := s.dev.CopyOut(int64Bytes(v[:]), p+Ptr(8*i))
	return v[0], err
}

// checkSeeds range-checks seeds and refuses duplicates, as the CPU engine.
func (s *Sampler) checkSeeds(b int, seeds []int64) error {
	if len(seeds) > math.MaxInt32 {
		return fmt.Errorf("cuda: len(batches[%d]) = %d is too large", b, len(seeds))
	}
	seen := make(map[int64]int, len(seeds))
	for i, v := range seeds {
		if v < 0 || v >= s.n {
			return fmt.Errorf("cuda: batches[%d][%d] = %d is out of range [0, %d)", b, i, v, s.n)
		}
		if j, ok := seen[v]; ok {
			return fmt.Errorf("cuda: batches[%d][%d] = %d duplicates batches[%d][%d]", b, i, v, b, j)
		}
		seen[v] = i
	}
	return nil
}

// SampleBatches samples each batch (internal seed ids) with seed as the root
// of the random streams and keys[i] as batch i's key, like the CPU engine's
// Runtime.Sample with the request's Seed set to seed, and returns the
// results on the host.
func (s *Sampler) SampleBatches(seed uint64, batches [][]int64, keys []uint64) ([]*sample.Result, error) {
	if s == nil {
		return nil, errors.New("cuda: SampleBatches on a nil *Sampler")
	}
	if len(keys) != len(batches) {
		return nil, fmt.Errorf("cuda: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	for b, seeds := range batches {
		if err := s.checkSeeds(b, seeds); err != nil {
			return nil, err
		}
	}
	out := make([]*sample.Result, len(batches))
	for b, seeds := range batches {
		r, _, err := s.sampleOne(seed, seeds, keys[b], true)
		if err != nil {
			return nil, err
		}
		out[b] = r
	}
	return out, nil
}

// batchMem is one batch's device memory, all from the pool.
type batchMem struct {
	s      *Sampler
	blocks []Ptr
}

func (m *batchMem) get(bytes int64) (Ptr, error) {
	p, err := m.s.pool.Get(max(bytes, 8))
	if err == nil {
		m.blocks = append(m.blocks, p)
	}
	return p, err
}

func (m *batchMem) release() {
	for _, p := range m.blocks {
		_ = m.s.pool.Put(p)
	}
	m.blocks = nil
}

// table is the append-unique hash table of one batch.
type table struct {
	keys, vals Ptr
	slots      int64 // a power of two
}

func (s *Sampler) newTable(m *batchMem, minSlots int64, nodes Ptr, numNodes int64) (table, error) {
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
	if err := s.dev.Memset(t.keys, 0xff, t.slots*8); err != nil {
		return t, err
	}
	if err := s.dev.Memset(t.vals, 0x7f, t.slots*8); err != nil {
		return t, err
	}
	if numNodes > 0 {
		err = s.launch("gf_table_insert", numNodes, uint64(t.keys), uint64(t.vals), uint64(t.slots-1), uint64(nodes), uint64(numNodes), uint64(s.status))
	}
	return t, err
}

// SampleSizes samples like SampleBatches but copies no result back (the
// results live on the device until their batch ends) and returns each
// batch's number of sampled edges. It measures the device's sampling work
// alone, for the benchmark, until results can stay on the device for a
// consumer.
func (s *Sampler) SampleSizes(seed uint64, batches [][]int64, keys []uint64) ([]int64, error) {
	if s == nil {
		return nil, errors.New("cuda: SampleSizes on a nil *Sampler")
	}
	if len(keys) != len(batches) {
		return nil, fmt.Errorf("cuda: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	for b, seeds := range batches {
		if err := s.checkSeeds(b, seeds); err != nil {
			return nil, err
		}
	}
	out := make([]int64, len(batches))
	for b, seeds := range batches {
		_, e, err := s.sampleOne(seed, seeds, keys[b], false)
		if err != nil {
			return nil, err
		}
		out[b] = e
	}
	return out, nil
}

// sampleOne samples one batch; with toHost it returns the result, else nil.
// It also returns the number of sampled edges.
func (s *Sampler) sampleOne(seed uint64, seeds []int64, key uint64, toHost bool) (*sample.Result, int64, error) {
	m := &batchMem{s: s}
	defer m.release()
	fanouts := s.req.Fanouts
	res := &sample.Result{
		HopCounts: make([]int64, 1, len(fanouts)+1),
		Blocks:    make([]sample.Block, 0, len(fanouts)),
	}
	res.HopCounts[0] = int64(len(seeds))
	numNodes := int64(len(seeds))
	nodesCap := max(numNodes, 64)
	nodes, err := m.get(nodesCap * 8)
	if err != nil {
		return nil, 0, err
	}
	if numNodes > 0 {
		if err := s.dev.CopyIn(nodes, int64Bytes(seeds)); err != nil {
			return nil, 0, err
		}
	}
	tab, err := s.newTable(m, 2*numNodes, nodes, numNodes)
	if err != nil {
		return nil, 0, err
	}
	prevStart, edges := int64(0), int64(0)
	for h, fanout := range fanouts {
		dstStart := int64(0)
		if s.req.Frontier == sample.FrontierNew {
			dstStart = prevStart
		}
		nd := numNodes - dstStart
		// Counts, scanned in place into the block's Indptr.
		indptr, err := m.get((nd + 1) * 8)
		if err != nil {
			return nil, 0, err
		}
		if nd > 0 {
			if err := s.launch("gf_count", nd, uint64(s.graph), uint64(nodes), uint64(dstStart), uint64(nd), uint64(int64(fanout)), uint64(indptr)); err != nil {
				return nil, 0, err
			}
		}
		if err := s.scan(indptr, indptr, nd, 0); err != nil {
			return nil, 0, err
		}
		total, err := s.readInt64(indptr, nd)
		if err != nil {
			return nil, 0, err
		}
		if numNodes+total > math.MaxInt32 {
			return nil, 0, fmt.Errorf("cuda: hop %d: the sample would exceed %d nodes", h, math.MaxInt32)
		}
		nbrs, err := m.get(total * 8)
		if err != nil {
			return nil, 0, err
		}
		eids, err := m.get(total * 8)
		if err != nil {
			return nil, 0, err
		}
		var keys Ptr
		if s.req.Biased && !s.req.Replace {
			if keys, err = m.get(total * 8); err != nil {
				return nil, 0, err
			}
		}
		if total > 0 {
			if err := s.launch("gf_sample", nd, uint64(s.graph), uint64(nodes), uint64(dstStart), uint64(nd),
				uint64(int64(fanout)), seed, key, uint64(h), uint64(indptr), uint64(nbrs), uint64(eids), uint64(keys)); err != nil {
				return nil, 0, err
			}
		}
		// Room for every sampled node being new.
		if need := numNodes + total; need > nodesCap {
			for nodesCap < need {
				nodesCap *= 2
			}
			bigger, err := m.get(nodesCap * 8)
			if err != nil {
				return nil, 0, err
			}
			if numNodes > 0 {
				if err := s.dev.CopyDev(bigger, nodes, numNodes*8); err != nil {
					return nil, 0, err
				}
			}
			nodes = bigger
		}
		if need := 2 * (numNodes + total); need > tab.slots {
			if tab, err = s.newTable(m, need, nodes, numNodes); err != nil {
				return nil, 0, err
			}
		}
		// Append-unique (unique.cu).
		slots, err := m.get(total * 8)
		if err != nil {
			return nil, 0, err
		}
		rank, err := m.get((total + 1) * 8)
		if err != nil {
			return nil, 0, err
		}
		indices, err := m.get(total * 8)
		if err != nil {
			return nil, 0, err
		}
		if total > 0 {
			if err := s.launch("gf_au_insert", total, uint64(tab.keys), uint64(tab.vals), uint64(tab.slots-1), uint64(nbrs), uint64(total), uint64(slots), uint64(indices), uint64(s.status)); err != nil {
				return nil, 0, err
			}
			if err := s.launch("gf_au_flag", total, uint64(tab.vals), uint64(slots), uint64(total), uint64(rank)); err != nil {
				return nil, 0, err
			}
		}
		if err := s.scan(rank, rank, total, 0); err != nil {
			return nil, 0, err
		}
		added, err := s.readInt64(rank, total)
		if err != nil {
			return nil, 0, err
		}
		if total > 0 {
			if err := s.launch("gf_au_assign", total, uint64(tab.vals), uint64(slots), uint64(nbrs), uint64(rank), uint64(total), uint64(numNodes), uint64(nodes), uint64(indices)); err != nil {
				return nil, 0, err
			}
			if err := s.launch("gf_au_resolve", total, uint64(tab.vals), uint64(slots), uint64(rank), uint64(total), uint64(indices)); err != nil {
				return nil, 0, err
			}
		}
		edges += total
		res.HopCounts = append(res.HopCounts, added)
		prevStart = numNodes
		numNodes += added
		if !toHost {
			continue
		}
		blk := sample.Block{
			Indptr:    make([]int64, nd+1),
			Indices:   make([]int64, total),
			EdgeIDs:   make([]int64, total),
			NumDst:    nd,
			NumSrc:    numNodes,
			DstOffset: dstStart,
		}
		if err := s.dev.CopyOut(int64Bytes(blk.Indptr), indptr); err != nil {
			return nil, 0, err
		}
		if total > 0 {
			if err := s.dev.CopyOut(int64Bytes(blk.Indices), indices); err != nil {
				return nil, 0, err
			}
			if err := s.dev.CopyOut(int64Bytes(blk.EdgeIDs), eids); err != nil {
				return nil, 0, err
			}
		}
		res.Blocks = append(res.Blocks, blk)
	}
	if err := s.checkStatus(); err != nil {
		return nil, 0, err
	}
	if !toHost {
		return nil, edges, nil
	}
	res.Nodes = make([]int64, numNodes)
	if numNodes > 0 {
		if err := s.dev.CopyOut(int64Bytes(res.Nodes), nodes); err != nil {
			return nil, 0, err
		}
	}
	return res, edges, nil
}

// Device-side error codes (cuda/kernels/common.cuh, GF_ST_*): the kernel
// that found the problem, and what it found.
var statusCodes = map[uint64]struct{ kernel, what string }{
	1: {"gf_count", "frontier node %d is outside the graph"},
	2: {"gf_sample", "frontier node %d is outside the graph"},
	3: {"gf_table_insert", "the node table has no free slot for node %d"},
	4: {"gf_au_insert", "the node table has no free slot for node %d"},
}

// checkStatus reads the kernels' error report (waiting for the work issued
// so far) and returns it as an error naming the kernel, clearing it.
func (s *Sampler) checkStatus() error {
	var w [2]uint64
	if err := s.dev.CopyOut(uint64Bytes(w[:]), s.status); err != nil {
		return err
	}
	if w[0] == 0 {
		return nil
	}
	if err := s.dev.Memset(s.status, 0, 16); err != nil {
		return err
	}
	return statusError(w[0], int64(w[1]), s.n)
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

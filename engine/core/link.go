package core

import (
	"context"
	"slices"
	"sync"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// LinkMode says whose edge-level loader an EdgeSampler follows.
type LinkMode int

const (
	// LinkDGL takes batches of seed edge ids, as DGL's
	// as_edge_prediction_sampler does.
	LinkDGL LinkMode = iota + 1
	// LinkPyG takes batches of seed pairs (columns of edge_label_index), as
	// PyG's LinkNeighborLoader does.
	LinkPyG
)

// LinkField names the pair indices of an EdgeBatch. All are int64 positions
// into the batch's seeds (Batch.Seeds, the first nodes of Batch.Nodes).
type LinkField int

const (
	// LinkPosSrc and LinkPosDst: DGL: the edges of pair_graph (one per seed
	// edge, in the order given). PyG (no or binary negatives):
	// edge_label_index, the NumPos positives then the negatives.
	LinkPosSrc LinkField = iota
	LinkPosDst
	// LinkNegSrc and LinkNegDst: DGL: the edges of neg_pair_graph (empty
	// without a negative sampler).
	LinkNegSrc
	LinkNegDst
	// LinkSrcIndex, LinkDstPosIndex ([NumPos]) and LinkDstNegIndex
	// ([NumPos, amount]): PyG's triplet mode.
	LinkSrcIndex
	LinkDstPosIndex
	LinkDstNegIndex
	// NumLinkFields is the number of LinkField values.
	NumLinkFields
)

// EdgeSamplerOptions configures an EdgeSampler.
type EdgeSamplerOptions struct {
	// Request is the neighbour sampling of every batch. Its Seed roots the
	// negative streams too; its ExcludeEdges are excluded in every batch, on
	// top of the batch's own exclusion (DGL's exclude).
	Request sample.Request
	// Threads bounds the parallelism (<= 0: GOMAXPROCS); never changes a
	// batch.
	Threads int
	Mode    LinkMode
	// DGL is used with LinkDGL.
	DGL linkpred.DGLEdgeSampler
	// PyG is used with LinkPyG. Disjoint is not supported: neighbour
	// sampling takes distinct seeds.
	PyG linkpred.PyGLinkSampler
}

// EdgeSampler samples edge batches of one Graph: negatives, seeds, the
// relabelled pairs and the neighbourhood of the seeds with the batch's
// excluded edges left out. It holds a reference to the Graph until Close.
// A batch depends only on the options, the batch key and the batch's seed
// edges (or pairs): never on the patch or thread count. Safe for concurrent
// use.
type EdgeSampler struct {
	g   *Graph
	opt EdgeSamplerOptions
	idx *linkpred.EdgeIndex

	mu      sync.Mutex
	rt      *sample.Runtime
	weights *float32 // first weight when rt was built: a change of weights rebuilds rt
	closed  bool
}

// EdgeBatch is one edge batch: the node-sampled Batch (its Seeds are the
// link seeds: DGL's compacted nodes, PyG's sorted unique endpoints) and the
// pair indices, every tensor from the allocator given to Sample.
type EdgeBatch struct {
	*pipeline.Batch
	// Link holds the LinkField tensors; those a mode does not produce are
	// empty ([0]).
	Link [NumLinkFields]mem.Tensor
	// NumPos and NumNeg count the positive and negative pairs (PyG triplet:
	// negative destinations).
	NumPos, NumNeg int

	alloc mem.Allocator
}

// Release frees every tensor of b whose Data is non-nil. Idempotent.
func (b *EdgeBatch) Release() {
	if b == nil {
		return
	}
	for i := range b.Link {
		if b.Link[i].Data != nil {
			b.alloc.Free(b.Link[i].Data)
			b.Link[i].Data = nil
		}
	}
	b.Batch.Release()
}

// NewEdgeSampler returns an EdgeSampler over g. It checks opt and the
// graph once.
func (g *Graph) NewEdgeSampler(opt EdgeSamplerOptions) (*EdgeSampler, error) {
	if err := opt.Request.Validate(); err != nil {
		return nil, errorf(nil, "%v", err)
	}
	switch opt.Mode {
	case LinkDGL:
		if err := opt.DGL.Validate(); err != nil {
			return nil, errorf(nil, "%v", err)
		}
	case LinkPyG:
		if err := opt.PyG.Validate(); err != nil {
			return nil, errorf(nil, "%v", err)
		}
		if opt.PyG.Disjoint {
			return nil, errorf(errs.ErrNotSupported, "disjoint link sampling is not supported (neighbour sampling takes distinct seeds)")
		}
	default:
		return nil, errorf(nil, "link mode = %d, must be DGL (%d) or PyG (%d)", opt.Mode, LinkDGL, LinkPyG)
	}
	if opt.Request.Disjoint || opt.Request.Temporal != sample.TemporalNone {
		return nil, errorf(nil, "edge samplers do not support disjoint or temporal sampling")
	}
	if err := g.acquire(); err != nil {
		return nil, err
	}
	idx, err := linkpred.NewEdgeIndex(g.part.Graph, opt.Threads)
	if err != nil {
		g.release()
		return nil, errorf(nil, "%v", err)
	}
	opt.Request.Fanouts = slices.Clone(opt.Request.Fanouts)
	opt.Request.ExcludeEdges = slices.Clone(opt.Request.ExcludeEdges)
	if opt.DGL.Reverse.Map != nil {
		opt.DGL.Reverse.Map = slices.Clone(opt.DGL.Reverse.Map)
	}
	return &EdgeSampler{g: g, opt: opt, idx: idx}, nil
}

// Mode returns the flavour the sampler was opened with.
func (s *EdgeSampler) Mode() LinkMode { return s.opt.Mode }

// Close releases the Graph reference. Batches already returned stay valid.
// Idempotent.
func (s *EdgeSampler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.rt = nil
	s.g.release()
	return nil
}

// runtime returns the sampling runtime, (re)built when the graph's weights
// changed since; the caller holds g.mu for reading.
func (s *EdgeSampler) runtime() (*sample.Runtime, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errorf(errs.ErrClosed, "edge sampler was closed")
	}
	var w *float32
	if ws := s.g.part.Graph.Weights; len(ws) > 0 {
		w = &ws[0]
	}
	if s.rt == nil || w != s.weights {
		rt, err := sample.NewRuntime(s.g.part, comm.NewLocal(s.g.part.NumPatches()), s.g.runtimeOptions(s.opt.Threads))
		if err != nil {
			return nil, err
		}
		s.rt, s.weights = rt, w
	}
	return s.rt, nil
}

// origAdjacency answers HasEdge in original node ids over the partitioned
// graph, so that negatives are drawn (and checked) in original ids and do
// not depend on the partition.
type origAdjacency struct {
	idx      *linkpred.EdgeIndex
	oldToNew []int64
}

func (a origAdjacency) NumNodes() int64 { return a.idx.NumNodes() }
func (a origAdjacency) NumEdges() int64 { return a.idx.NumEdges() }
func (a origAdjacency) HasEdge(u, v int64) bool {
	if a.oldToNew != nil {
		u, v = a.oldToNew[u], a.oldToNew[v]
	}
	return a.idx.HasEdge(u, v)
}

// dglBatch is linkpred.DGLEdgeSampler.Batch in original node ids.
func (s *EdgeSampler) dglBatch(eids []int64, st linkpred.Stream) (linkpred.DGLBatch, error) {
	d := s.opt.DGL
	pos, err := s.idx.Endpoints(eids)
	if err != nil {
		return linkpred.DGLBatch{}, err
	}
	if p := s.g.part.NewToOld; p != nil {
		for i := range pos.Src {
			pos.Src[i], pos.Dst[i] = p[pos.Src[i]], p[pos.Dst[i]]
		}
	}
	n := s.idx.NumNodes()
	var neg linkpred.Pairs
	switch ns := d.Negative.(type) {
	case linkpred.PerSourceUniform:
		neg, err = ns.Sample(pos.Src, n, st, s.opt.Threads)
	case linkpred.GlobalUniform:
		neg, err = ns.Sample(origAdjacency{s.idx, s.g.part.OldToNew}, pos.Len(), st, s.opt.Threads)
	}
	if err != nil {
		return linkpred.DGLBatch{}, err
	}
	c, err := linkpred.CompactDGL(pos, neg, n)
	if err != nil {
		return linkpred.DGLBatch{}, err
	}
	b := linkpred.DGLBatch{Compacted: c}
	switch d.Exclude {
	case linkpred.ExcludeSelfEdges:
		b.ExcludeEdges = linkpred.ExcludeSelf(eids)
	case linkpred.ExcludeReverseEdges:
		if b.ExcludeEdges, err = linkpred.ExcludeReverseID(eids, d.Reverse); err != nil {
			return linkpred.DGLBatch{}, err
		}
	}
	return b, nil
}

// SampleDGL samples the edge batch of the seed edge ids eids (LinkDGL).
// key is the batch key (the batch index, say): equal keys give equal
// negatives and samples. The caller owns the batch (Release it).
func (s *EdgeSampler) SampleDGL(eids []int64, key uint64, alloc mem.Allocator) (*EdgeBatch, error) {
	if s.opt.Mode != LinkDGL {
		return nil, errorf(errs.ErrState, "SampleDGL on an edge sampler opened for PyG")
	}
	if len(eids) == 0 {
		return nil, errorf(nil, "seed edges are empty")
	}
	if err := s.g.acquire(); err != nil {
		return nil, err
	}
	defer s.g.release()
	b, err := s.dglBatch(eids, linkpred.Stream{Seed: s.opt.Request.Seed, Key: key})
	if err != nil {
		return nil, errorf(nil, "%v", err)
	}
	eb, err := s.sample(b.Nodes, b.ExcludeEdges, key, alloc)
	if err != nil {
		return nil, err
	}
	eb.NumPos, eb.NumNeg = b.Pos.Len(), b.Neg.Len()
	return eb.fill(map[LinkField][]int64{
		LinkPosSrc: b.Pos.Src, LinkPosDst: b.Pos.Dst, LinkNegSrc: b.Neg.Src, LinkNegDst: b.Neg.Dst,
	}, nil)
}

// SamplePyG samples the edge batch of the seed pairs pos (LinkPyG; the
// batch's columns of edge_label_index, original ids). key is the batch key.
func (s *EdgeSampler) SamplePyG(pos linkpred.Pairs, key uint64, alloc mem.Allocator) (*EdgeBatch, error) {
	if s.opt.Mode != LinkPyG {
		return nil, errorf(errs.ErrState, "SamplePyG on an edge sampler opened for DGL")
	}
	if pos.Len() == 0 || len(pos.Dst) != pos.Len() {
		return nil, errorf(nil, "seed pairs: %d sources and %d destinations (want the same, > 0)", len(pos.Src), len(pos.Dst))
	}
	if err := s.g.acquire(); err != nil {
		return nil, err
	}
	defer s.g.release()
	b, err := s.opt.PyG.Batch(pos, s.idx.NumNodes(), linkpred.Stream{Seed: s.opt.Request.Seed, Key: key}, s.opt.Threads)
	if err != nil {
		return nil, errorf(nil, "%v", err)
	}
	eb, err := s.sample(b.Nodes, nil, key, alloc)
	if err != nil {
		return nil, err
	}
	eb.NumPos, eb.NumNeg = b.NumPos, b.NumNeg
	shapes := map[LinkField][]int64{}
	if s.opt.PyG.Mode == linkpred.PyGTripletMode {
		shapes[LinkDstNegIndex] = []int64{int64(b.NumPos), int64(s.opt.PyG.Amount)}
	}
	return eb.fill(map[LinkField][]int64{
		LinkPosSrc: b.Index.Src, LinkPosDst: b.Index.Dst,
		LinkSrcIndex: b.SrcIndex, LinkDstPosIndex: b.DstPosIndex, LinkDstNegIndex: b.DstNegIndex,
	}, shapes)
}

// sample runs neighbour sampling from seeds (original ids, distinct) with
// the batch's exclusion added to the options' and materializes it.
func (s *EdgeSampler) sample(seeds, exclude []int64, key uint64, alloc mem.Allocator) (*EdgeBatch, error) {
	if alloc == nil {
		alloc = mem.Heap{}
	}
	internal, err := pipeline.InternalSeeds(s.g.part, seeds)
	if err != nil {
		return nil, errorf(nil, "link seeds: %v", err)
	}
	req := s.opt.Request
	if len(exclude) > 0 {
		req.ExcludeEdges = append(slices.Clone(req.ExcludeEdges), exclude...)
	}
	s.g.mu.RLock()
	defer s.g.mu.RUnlock()
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	res, err := rt.Sample(context.Background(), req, [][]int64{internal}, []uint64{key})
	if err != nil {
		return nil, err
	}
	inputIndex := make([]int64, len(seeds))
	for i := range inputIndex {
		inputIndex[i] = int64(i)
	}
	b, err := pipeline.Materialize(res[0], seeds, inputIndex, s.g.part, s.g.store, nil, nil, alloc, s.opt.Threads)
	if err != nil {
		return nil, err
	}
	return &EdgeBatch{Batch: b, alloc: alloc}, nil
}

// fill copies the pair indices into tensors from b's allocator; shapes
// overrides the 1-D shape of a field. On failure b is released.
func (b *EdgeBatch) fill(vals map[LinkField][]int64, shapes map[LinkField][]int64) (*EdgeBatch, error) {
	for f := range NumLinkFields {
		v := vals[f]
		shape := shapes[f]
		if shape == nil {
			shape = []int64{int64(len(v))}
		}
		t, err := int64Tensor(b.alloc, v, shape)
		if err != nil {
			b.Release()
			return nil, err
		}
		b.Link[f] = t
	}
	return b, nil
}

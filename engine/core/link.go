package core

import (
	"context"
	"io"
	"sync"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/linkload"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// LinkMode says whose edge-level loader an EdgeSampler follows
// (linkload.Mode).
type LinkMode = linkload.Mode

const (
	// LinkDGL takes batches of seed edge ids, as DGL's
	// as_edge_prediction_sampler does.
	LinkDGL = linkload.DGL
	// LinkPyG takes batches of seed pairs (columns of edge_label_index), as
	// PyG's LinkNeighborLoader does.
	LinkPyG = linkload.PyG
)

// LinkField names the pair fields of an edge batch (linkload.LinkField).
type LinkField = linkload.LinkField

// The pair fields (see linkload.LinkField).
const (
	LinkPosSrc      = linkload.LinkPosSrc
	LinkPosDst      = linkload.LinkPosDst
	LinkNegSrc      = linkload.LinkNegSrc
	LinkNegDst      = linkload.LinkNegDst
	LinkSrcIndex    = linkload.LinkSrcIndex
	LinkDstPosIndex = linkload.LinkDstPosIndex
	LinkDstNegIndex = linkload.LinkDstNegIndex
	LinkInputID     = linkload.LinkInputID
	LinkEdgeIDs     = linkload.LinkEdgeIDs
	LinkPosOffsets  = linkload.LinkPosOffsets
	LinkNegOffsets  = linkload.LinkNegOffsets
	NumLinkFields   = linkload.NumLinkFields
)

// EdgeSamplerOptions configures an EdgeSampler or an edge loader
// (linkload.Options).
type EdgeSamplerOptions = linkload.Options

// EdgeSampler samples edge batches of one Graph, one per call: negatives,
// seeds, the relabelled pairs and the neighbourhood of the seeds with the
// batch's excluded edges left out (linkload). It holds a reference to the
// Graph until Close. A batch depends only on the options, the batch key
// and the batch's seed edges (or pairs): never on the patch or thread
// count; it is the batch an edge loader (OpenEdgeLoader) with the same
// options gives for the same seeds and key. Safe for concurrent use.
type EdgeSampler struct {
	g   *Graph
	opt EdgeSamplerOptions

	mu      sync.Mutex
	rt      *sample.Runtime
	lk      *linkload.Linker
	weights *float32 // first weight when rt was built: a change of weights rebuilds rt
	gen     uint64   // the Graph's runtime generation when rt was built: types and times changed since rebuild it
	closed  bool
}

// EdgeBatch is one edge batch: the node-sampled Batch (its Seeds are the
// link seeds: DGL's compacted nodes, PyG's sorted unique endpoints) with
// its pair fields in Link, every tensor from the allocator given to
// Sample.
type EdgeBatch struct {
	*pipeline.Batch
	// NumPos and NumNeg count the positive and negative pairs (PyG triplet:
	// negative destinations).
	NumPos, NumNeg int
}

// Release frees every tensor of b whose Data is non-nil. Idempotent.
func (b *EdgeBatch) Release() {
	if b != nil {
		b.Batch.Release()
	}
}

// NewEdgeSampler returns an EdgeSampler over g. It checks opt and the
// graph once.
func (g *Graph) NewEdgeSampler(opt EdgeSamplerOptions) (*EdgeSampler, error) {
	g.mu.RLock()
	err := g.linkOptions(opt).Validate(g.typed.types)
	g.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if err := g.acquire(); err != nil {
		return nil, err
	}
	return &EdgeSampler{g: g, opt: opt}, nil
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
	s.rt, s.lk = nil, nil
	s.g.release()
	return nil
}

// runtime returns the sampling runtime and the linker, (re)built when the
// graph's weights, types or times changed since; the caller holds g.mu
// for reading.
func (s *EdgeSampler) runtime() (*sample.Runtime, *linkload.Linker, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errorf(errs.ErrClosed, "edge sampler was closed")
	}
	var w *float32
	if ws := s.g.part.Graph.Weights; len(ws) > 0 {
		w = &ws[0]
	}
	gen := s.g.runtimes.generation()
	if s.rt == nil || w != s.weights || gen != s.gen {
		lk, err := linkload.New(s.g.part, s.g.typed.types, s.g.linkOptions(s.opt))
		if err != nil {
			return nil, nil, err
		}
		rt, err := sample.NewRuntime(s.g.part, comm.NewLocal(s.g.part.NumPatches()), s.g.runtimeOptions(s.opt.Threads))
		if err != nil {
			return nil, nil, err
		}
		s.rt, s.lk, s.weights, s.gen = rt, lk, w, gen
	}
	return s.rt, s.lk, nil
}

// SampleDGL samples the edge batch of the seed edge ids eids (LinkDGL).
// key is the batch key (the batch index, say): equal keys give equal
// negatives and samples. The caller owns the batch (Release it).
func (s *EdgeSampler) SampleDGL(eids []int64, key uint64, alloc mem.Allocator) (*EdgeBatch, error) {
	if s.opt.Mode != LinkDGL {
		return nil, errorf(errs.ErrState, "SampleDGL on an edge sampler opened for PyG")
	}
	return s.sample(linkload.Items{EdgeIDs: eids}, key, alloc)
}

// SamplePyG samples the edge batch of the seed pairs pos (LinkPyG; the
// batch's columns of edge_label_index, original ids). key is the batch key.
func (s *EdgeSampler) SamplePyG(pos linkpred.Pairs, key uint64, alloc mem.Allocator) (*EdgeBatch, error) {
	if s.opt.Mode != LinkPyG {
		return nil, errorf(errs.ErrState, "SamplePyG on an edge sampler opened for DGL")
	}
	return s.sample(linkload.Items{Pairs: pos}, key, alloc)
}

// SamplePyGTimed is SamplePyG for a temporal sampler: times holds one time
// per pair (PyG's edge_label_time).
func (s *EdgeSampler) SamplePyGTimed(pos linkpred.Pairs, times []int64, key uint64, alloc mem.Allocator) (*EdgeBatch, error) {
	if s.opt.Mode != LinkPyG {
		return nil, errorf(errs.ErrState, "SamplePyGTimed on an edge sampler opened for DGL")
	}
	return s.sample(linkload.Items{Pairs: pos, Times: times}, key, alloc)
}

// sample makes the batch of items with the Linker, on the sampler's
// runtime, and adds its typed view on a typed graph.
func (s *EdgeSampler) sample(items linkload.Items, key uint64, alloc mem.Allocator) (*EdgeBatch, error) {
	if err := s.g.acquire(); err != nil {
		return nil, err
	}
	defer s.g.release()
	s.g.mu.RLock()
	defer s.g.mu.RUnlock()
	rt, lk, err := s.runtime()
	if err != nil {
		return nil, err
	}
	b, res, counts, err := lk.Make(context.Background(), rt, items, nil, key, alloc, s.opt.Threads)
	if err != nil {
		return nil, err
	}
	rt.Recycle(res)
	if t := s.g.typed.types; t != nil {
		if err := b.SetTyped(t); err != nil {
			b.Release()
			return nil, err
		}
	}
	return &EdgeBatch{Batch: b, NumPos: counts[0], NumNeg: counts[1]}, nil
}

// OpenEdgeLoader opens an edge loader: a Loader over the seed edge ids
// (LinkDGL) or pairs (LinkPyG) in items (checked now, copied) whose epochs
// shuffle the items and batch them with lopt (BatchSize items a batch,
// Shuffle, Seed, DropLast, QueueCapacity, Workers, node and edge data
// names), and whose batch i of epoch e is the EdgeSampler's batch of its
// items with key pipeline.BatchKey(e, i) (with LinkInputID their positions
// in items), made ahead of the consumer by the pipeline's sampler workers.
// lopt.Threads (<= 0: GOMAXPROCS) is the parallelism of sampling and
// gathering; opt.Threads only bounds one-time index builds. Every batch
// buffer comes from alloc (nil: the Go heap).
func (g *Graph) OpenEdgeLoader(items linkload.Items, opt EdgeSamplerOptions, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	return g.OpenLoaderWith(func(Internals) (*pipeline.Pipeline, io.Closer, error) {
		lk, err := linkload.New(g.part, g.typed.types, g.linkOptions(opt))
		if err != nil {
			return nil, nil, err
		}
		base, _, err := g.runtimes.get(g)
		if err != nil {
			return nil, nil, err
		}
		rt, err := base.Fork(lopt.Threads)
		if err != nil {
			return nil, nil, err
		}
		src, err := lk.Source(rt, items)
		if err != nil {
			return nil, nil, err
		}
		if err := g.edgeOptions(&lopt); err != nil {
			return nil, nil, err
		}
		pl, err := pipeline.NewMaker(src, g.part, g.store, src.NumItems(), lopt, alloc)
		return pl, nil, err
	})
}

// linkOptions returns opt with g's node times (negatives under node
// times); the caller holds g.mu. SetNodeTime replaces the slice, never
// writes it, so a Linker may keep it.
func (g *Graph) linkOptions(opt EdgeSamplerOptions) EdgeSamplerOptions {
	opt.NodeTime = g.typed.nodeTime
	return opt
}

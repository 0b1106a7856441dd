package sample

import (
	"context"
	"errors"
	"slices"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/partition"
)

// This file keeps the first API working: a Sampler is a Runtime bound to
// one Request, which is what a pipeline worker samples with.

// Options configures a Sampler: a Request plus the runtime's threads.
//
// Deprecated: build a Runtime with NewRuntime(p, c, RuntimeOptions{Threads})
// and pass a Request (or a WalkRequest) to each call.
type Options struct {
	// Fanouts holds the number of neighbours to sample per frontier node,
	// per hop, starting from the seeds (PyG order); -1 = all neighbours,
	// 0 none (see Request.Fanouts). Values < -1 and an empty list are
	// invalid.
	Fanouts []int
	// Replace samples with replacement (default: uniform without replacement).
	Replace bool
	// Frontier selects FrontierAll (DGL) or FrontierNew (PyG).
	Frontier Frontier
	// Seed is the root of every random stream.
	Seed uint64
	// Threads is the parallelism of sampling (<= 0: GOMAXPROCS), shared by
	// the in-process ranks: each rank's sample stage and append-unique use
	// max(1, Threads/ranks) goroutines. It never changes the result.
	Threads int

	// Biased samples neighbours by edge weight (partition.Graph.Weights,
	// required): neighbour u of v is drawn with probability
	// w(u->v) / sum of v's weights. Edges of weight 0 are never sampled and
	// do not count in v's degree (so fanout -1 takes every positive-weight
	// neighbour). With Replace: independent weighted draws; without:
	// weighted sampling without replacement (Efraimidis-Spirakis exponential
	// keys), see the package documentation. It applies to every Scheme and
	// to RandomWalk.
	Biased bool
	// Scheme selects node-wise (default) or layer-wise sampling (DSP §4.2,
	// Eq. 2); see Scheme.
	Scheme Scheme
	// LayerWithoutReplacement changes LayerWise's frontier draw: instead of
	// Fanouts[h] draws with replacement, it picks min(Fanouts[h], number of
	// frontier nodes with positive total weight) DISTINCT frontier nodes,
	// with probabilities proportional to their total weights (successive
	// sampling by exponential keys), and each picked node samples exactly
	// one neighbour. Only valid with Scheme LayerWise.
	LayerWithoutReplacement bool
	// ExcludeEdges lists (original) edge ids that are never sampled, in any
	// order, duplicates allowed; ids that are not in the graph are ignored.
	// An excluded edge behaves as if it were absent: it counts neither in
	// degrees (fanout, fanout -1, layer-wise totals) nor in weights.
	ExcludeEdges []int64
}

// Validate reports the first invalid option, naming it.
func (o Options) Validate() error { return o.request().validate("Options") }

// request returns the request part of o.
func (o Options) request() Request {
	return Request{
		Fanouts: o.Fanouts, Replace: o.Replace, Frontier: o.Frontier, Scheme: o.Scheme,
		Biased: o.Biased, LayerWithoutReplacement: o.LayerWithoutReplacement,
		ExcludeEdges: o.ExcludeEdges, Seed: o.Seed,
	}
}

// Sampler is a Runtime bound to one Request: SampleBatches samples with
// that request, and Fork forks both. A pipeline runs one Sampler per worker
// (see pipeline.BatchSampler). It is safe for concurrent use.
type Sampler struct {
	rt  *Runtime
	req Request
	opt Options // as given to New (legacy accessors)
}

// Bind returns a Sampler that samples with req on rt. req is checked here
// (also against the graph: Biased needs weights), and the state it derives
// from the graph (excluded-edge bitmap, layer-wise weights) is built now,
// so that the first batch does not pay for it.
func (rt *Runtime) Bind(req Request) (*Sampler, error) {
	if rt == nil {
		return nil, errors.New("sample: Bind on a nil *Runtime")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	req.Fanouts = slices.Clone(req.Fanouts)
	req.ExcludeEdges = slices.Clone(req.ExcludeEdges)
	if _, err := rt.begin(req, req.Scheme == LayerWise, "Request"); err != nil {
		return nil, err
	}
	return &Sampler{rt: rt, req: req, opt: Options{
		Fanouts: req.Fanouts, Replace: req.Replace, Frontier: req.Frontier, Seed: req.Seed,
		Threads: rt.threads, Biased: req.Biased, Scheme: req.Scheme,
		LayerWithoutReplacement: req.LayerWithoutReplacement, ExcludeEdges: req.ExcludeEdges,
	}}, nil
}

// New returns a Sampler for p whose ranks talk through c. c.Size() must
// equal p.NumPatches(). p (including its graph) is checked here and must
// not change afterwards.
//
// Deprecated: use NewRuntime(p, c, RuntimeOptions{Threads: opt.Threads})
// and Runtime.Bind (or pass a Request to Runtime.Sample).
func New(p *partition.Partitioned, c comm.Comm, opt Options) (*Sampler, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	rt, err := NewRuntime(p, c, RuntimeOptions{Threads: opt.Threads})
	if err != nil {
		return nil, err
	}
	req := opt.request()
	req.Fanouts = slices.Clone(req.Fanouts)
	req.ExcludeEdges = slices.Clone(req.ExcludeEdges)
	if _, err := rt.begin(req, req.Scheme == LayerWise, "Options"); err != nil {
		return nil, err
	}
	opt.Fanouts, opt.ExcludeEdges = req.Fanouts, req.ExcludeEdges
	return &Sampler{rt: rt, req: req, opt: opt}, nil
}

// Runtime returns the runtime s samples on.
func (s *Sampler) Runtime() *Runtime { return s.rt }

// Request returns a copy of the request s samples with.
func (s *Sampler) Request() Request {
	r := s.req
	r.Fanouts = slices.Clone(r.Fanouts)
	r.ExcludeEdges = slices.Clone(r.ExcludeEdges)
	return r
}

// Fork returns a Sampler with s's request on a fork of s's runtime (see
// Runtime.Fork): it samples concurrently with s, and gives the same
// samples. threads > 0 replaces the runtime's thread count.
func (s *Sampler) Fork(threads int) (*Sampler, error) {
	if s == nil {
		return nil, errors.New("sample: Fork on a nil *Sampler")
	}
	rt, err := s.rt.Fork(threads)
	if err != nil {
		return nil, err
	}
	f := &Sampler{rt: rt, req: s.req, opt: s.opt}
	f.opt.Threads = rt.threads
	return f, nil
}

// SampleBatches samples the batches with s's request (see Runtime.Sample).
func (s *Sampler) SampleBatches(ctx context.Context, batches [][]int64, keys []uint64) ([]*Result, error) {
	if s == nil {
		return nil, errors.New("sample: SampleBatches on a nil *Sampler")
	}
	return s.rt.Sample(ctx, s.req, batches, keys)
}

// Recycle hands results back to s's runtime (see Runtime.Recycle).
func (s *Sampler) Recycle(results ...*Result) {
	if s == nil {
		return
	}
	s.rt.Recycle(results...)
}

// NumRanks returns the number of ranks (the comm size, = patches).
func (s *Sampler) NumRanks() int { return s.rt.NumRanks() }

// LocalRanks returns the ranks this process runs (see Runtime.LocalRanks).
func (s *Sampler) LocalRanks() []int { return s.rt.LocalRanks() }

// Threads returns the runtime's thread count (<= 0: GOMAXPROCS).
func (s *Sampler) Threads() int { return s.rt.threads }

// Partitioned returns the partition the sampler was built on.
func (s *Sampler) Partitioned() *partition.Partitioned { return s.rt.p }

// Options returns a copy of the sampler's options.
//
// Deprecated: use Request and Threads.
func (s *Sampler) Options() Options {
	o := s.opt
	o.Fanouts = slices.Clone(o.Fanouts)
	o.ExcludeEdges = slices.Clone(o.ExcludeEdges)
	return o
}

// SampleBatchesSeed is SampleBatches with seed in place of the request's
// seed for this call.
//
// Deprecated: pass a Request with that Seed to Runtime.Sample.
func (s *Sampler) SampleBatchesSeed(ctx context.Context, seed uint64, batches [][]int64, keys []uint64) ([]*Result, error) {
	if s == nil {
		return nil, errors.New("sample: SampleBatches on a nil *Sampler")
	}
	req := s.req
	req.Seed = seed
	return s.rt.Sample(ctx, req, batches, keys)
}

// RandomWalk runs walks of length steps with restart probability
// restartProb, with s's Biased, ExcludeEdges and Seed (see
// Runtime.RandomWalk).
//
// Deprecated: pass a WalkRequest to Runtime.RandomWalk.
func (s *Sampler) RandomWalk(ctx context.Context, batches [][]int64, keys []uint64, length int, restartProb float64) ([]*WalkResult, error) {
	if s == nil {
		return nil, errors.New("sample: RandomWalk on a nil *Sampler")
	}
	return s.RandomWalkSeed(ctx, s.req.Seed, batches, keys, length, restartProb)
}

// RandomWalkSeed is RandomWalk with seed in place of the request's seed.
//
// Deprecated: pass a WalkRequest to Runtime.RandomWalk.
func (s *Sampler) RandomWalkSeed(ctx context.Context, seed uint64, batches [][]int64, keys []uint64, length int, restartProb float64) ([]*WalkResult, error) {
	if s == nil {
		return nil, errors.New("sample: RandomWalk on a nil *Sampler")
	}
	return s.rt.RandomWalk(ctx, WalkRequest{
		Length: length, RestartProb: restartProb, Biased: s.req.Biased,
		ExcludeEdges: s.req.ExcludeEdges, Seed: seed,
	}, batches, keys)
}

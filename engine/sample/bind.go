package sample

import (
	"context"
	"errors"

	"github.com/graphferry/graphferry/engine/partition"
)

// Sampler is a Runtime bound to one Request: SampleBatches samples with
// that request, and Fork forks both. A pipeline runs one Sampler per worker
// (see pipeline.BatchSampler). It is safe for concurrent use.
type Sampler struct {
	rt  *Runtime
	req Request
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
	req = req.normalized()
	if _, err := rt.begin(req, req.Scheme == LayerWise, "Request"); err != nil {
		return nil, err
	}
	return &Sampler{rt: rt, req: req}, nil
}

// Runtime returns the runtime s samples on.
func (s *Sampler) Runtime() *Runtime { return s.rt }

// Request returns a copy of the request s samples with.
func (s *Sampler) Request() Request {
	r := s.req
	return r.normalized()
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
	return &Sampler{rt: rt, req: s.req}, nil
}

// SampleBatches samples the batches with s's request (see Runtime.Sample).
func (s *Sampler) SampleBatches(ctx context.Context, batches [][]int64, keys []uint64) ([]*Result, error) {
	return s.SampleBatchesTimed(ctx, batches, nil, keys)
}

// SampleBatchesTimed samples the batches with s's request and the seed
// times of temporal requests (see Runtime.SampleTimed).
func (s *Sampler) SampleBatchesTimed(ctx context.Context, batches, times [][]int64, keys []uint64) ([]*Result, error) {
	if s == nil {
		return nil, errors.New("sample: SampleBatches on a nil *Sampler")
	}
	return s.rt.SampleTimed(ctx, s.req, batches, times, keys)
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

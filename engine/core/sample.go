package core

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// maxIdleForks bounds the forks of a Graph's runtime kept for reuse
// between calls: each holds per-rank workspaces (a node table of 4 bytes
// per node on small graphs), and more than a few concurrent synchronous
// calls on one graph are rare.
const maxIdleForks = 4

// runtimes is a Graph's sample.Runtime, built on first use and dropped when
// the edge weights change (the runtime derives layer-wise totals and
// bitmaps from them), and the forks of it that calls sample on. Every call
// takes a fork of its own, so that concurrent calls do not wait for each
// other (a Runtime serialises its calls), and hands it back for the next
// call; requests are per call, so one fork serves any request.
type runtimes struct {
	mu   sync.Mutex
	base *sample.Runtime // nil until first use, and after reset
	gen  uint64          // counts resets: a fork of an older base is not kept
	idle []*sample.Runtime
}

// get returns the Graph's runtime, building it if needed, and its
// generation.
func (r *runtimes) get(g *Graph) (*sample.Runtime, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.base == nil {
		rt, err := sample.NewRuntime(g.part, comm.NewLocal(g.part.NumPatches()), g.runtimeOptions(0))
		if err != nil {
			return nil, 0, err
		}
		r.base = rt
	}
	return r.base, r.gen, nil
}

// take returns a fork of the Graph's runtime with threads threads (<= 0:
// GOMAXPROCS) for one call: an idle one, or a new one. Give it back with
// put.
func (r *runtimes) take(g *Graph, threads int) (*sample.Runtime, uint64, error) {
	threads = max(threads, 0)
	r.mu.Lock()
	for i := len(r.idle) - 1; i >= 0; i-- {
		if rt := r.idle[i]; rt.Threads() == threads {
			r.idle = slices.Delete(r.idle, i, i+1)
			gen := r.gen
			r.mu.Unlock()
			return rt, gen, nil
		}
	}
	r.mu.Unlock()
	base, gen, err := r.get(g)
	if err != nil {
		return nil, 0, err
	}
	rt, err := base.Fork(threads)
	if err != nil {
		return nil, 0, err
	}
	return rt, gen, nil
}

// put hands back a fork that take returned for generation gen, once the
// call is done with it; it is kept only if the runtime was not reset
// meanwhile, and the oldest idle fork makes room.
func (r *runtimes) put(rt *sample.Runtime, gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen != r.gen {
		return
	}
	if len(r.idle) == maxIdleForks {
		r.idle = slices.Delete(r.idle, 0, 1)
	}
	r.idle = append(r.idle, rt)
}

// generation counts the resets so far: a runtime built from the Graph's
// types, times and weights is stale once it changed.
func (r *runtimes) generation() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gen
}

// reset drops the runtime and its idle forks (calls using a fork keep it
// until they return, and then drop it).
func (r *runtimes) reset() {
	r.mu.Lock()
	r.base, r.idle = nil, nil
	r.gen++
	r.mu.Unlock()
}

// Sample samples one batch around seeds (original ids, distinct) with req,
// on threads threads (<= 0: GOMAXPROCS; never changes the batch), and
// returns it with every buffer from alloc (nil: the Go heap): nodes in
// original ids, InputIndex the identity. The caller owns the batch (Release
// it). The batch is the one a loader with req gives for batch key 0.
func (g *Graph) Sample(seeds []int64, req sample.Request, threads int, alloc mem.Allocator) (*pipeline.Batch, error) {
	return g.SampleTimed(seeds, nil, req, threads, alloc)
}

// SampleTimed is Sample with the seed times of a temporal request (one per
// seed; nil otherwise). With req.Disjoint the seeds may repeat.
func (g *Graph) SampleTimed(seeds, times []int64, req sample.Request, threads int, alloc mem.Allocator) (*pipeline.Batch, error) {
	return g.SampleKeyed(seeds, times, req, 0, threads, alloc)
}

// SampleKeyed is SampleTimed with batch key key: the batch a loader with
// req gives for that key (pipeline.BatchKey(epoch, index)), over seeds.
func (g *Graph) SampleKeyed(seeds, times []int64, req sample.Request, key uint64, threads int, alloc mem.Allocator) (*pipeline.Batch, error) {
	return g.SampleKeyedContext(context.Background(), seeds, times, req, key, threads, alloc)
}

// SampleKeyedContext is SampleKeyed stopped early, with ctx's error, when
// ctx is done (checked at every hop's exchange).
func (g *Graph) SampleKeyedContext(ctx context.Context, seeds, times []int64, req sample.Request, key uint64, threads int, alloc mem.Allocator) (*pipeline.Batch, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Temporal == sample.TemporalNone && times != nil {
		return nil, errorf(nil, "seed times are given but the request is not temporal")
	}
	var b *pipeline.Batch
	err := g.withRuntime(threads, func(rt *sample.Runtime) error {
		internal, err := pipeline.MapSeeds(g.part, seeds, !req.Disjoint)
		if err != nil {
			return err
		}
		var tl [][]int64
		if times != nil {
			tl = [][]int64{times}
		}
		res, err := rt.SampleTimed(ctx, req, [][]int64{internal}, tl, []uint64{key})
		if err != nil {
			return err
		}
		defer rt.Recycle(res...)
		inputIndex := make([]int64, len(seeds))
		for i := range inputIndex {
			inputIndex[i] = int64(i)
		}
		b, err = pipeline.Materialize(res[0], seeds, inputIndex, g.part, g.store, nil, nil, alloc, threads)
		if err == nil && g.typed.types != nil {
			if err = b.SetTyped(g.typed.types); err != nil {
				b.Release()
				b = nil
			}
		}
		return err
	})
	return b, err
}

// withRuntime runs fn on a fork of the graph's runtime for threads threads,
// holding a reference to the graph and its read lock (node data and weights
// stay as they are) for the duration.
func (g *Graph) withRuntime(threads int, fn func(rt *sample.Runtime) error) error {
	if err := g.acquire(); err != nil {
		return err
	}
	defer g.release()
	g.mu.RLock()
	defer g.mu.RUnlock()
	rt, gen, err := g.runtimes.take(g, threads)
	if err != nil {
		return err
	}
	err = fn(rt)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// Stopped mid-exchange: its communicator may be aborted; a
		// fresh fork serves the next call.
		return err
	}
	g.runtimes.put(rt, gen)
	return err
}

// Walk is the result of RandomWalk, in memory from the allocator given to
// it; the caller owns both tensors.
type Walk struct {
	// Traces is int64 [B, Length+1], original node ids: row i starts at
	// seed i; -1 after a dead end.
	Traces mem.Tensor
	// EdgeIDs is int64 [B, Length]: the edge each step took, -1 for a
	// restart or after a dead end.
	EdgeIDs mem.Tensor
}

// RandomWalk walks from every seed (original ids, duplicates allowed) along
// in-edges as req says, on threads threads (<= 0: GOMAXPROCS; never changes
// the walks).
func (g *Graph) RandomWalk(seeds []int64, req sample.WalkRequest, threads int, alloc mem.Allocator) (*Walk, error) {
	return g.RandomWalkContext(context.Background(), seeds, req, threads, alloc)
}

// RandomWalkContext is RandomWalk stopped early, with ctx's error, when ctx
// is done (checked at every step).
func (g *Graph) RandomWalkContext(ctx context.Context, seeds []int64, req sample.WalkRequest, threads int, alloc mem.Allocator) (*Walk, error) {
	if req.Length < 0 {
		return nil, errorf(nil, "walk length = %d is negative", req.Length)
	}
	if !(req.RestartProb >= 0 && req.RestartProb <= 1) {
		return nil, errorf(nil, "restart probability = %g is not in [0, 1]", req.RestartProb)
	}
	if alloc == nil {
		alloc = mem.Heap{}
	}
	var res []*sample.WalkResult
	err := g.withRuntime(threads, func(rt *sample.Runtime) error {
		internal := make([]int64, len(seeds))
		if err := g.part.ToNew(seeds, internal); err != nil {
			return errorf(nil, "seeds: %v", err)
		}
		var err error
		res, err = rt.RandomWalk(ctx, req, [][]int64{internal}, []uint64{0})
		return err
	})
	if err != nil {
		return nil, err
	}
	traces, edges := res[0].Traces, res[0].EdgeIDs
	if p := g.part.NewToOld; p != nil {
		for i, v := range traces {
			if v >= 0 {
				traces[i] = p[v]
			}
		}
	}
	b := int64(len(seeds))
	w := &Walk{}
	if w.Traces, err = int64Tensor(alloc, traces, []int64{b, int64(req.Length) + 1}); err != nil {
		return nil, err
	}
	if w.EdgeIDs, err = int64Tensor(alloc, edges, []int64{b, int64(req.Length)}); err != nil {
		alloc.Free(w.Traces.Data)
		return nil, err
	}
	return w, nil
}

// int64Tensor copies vals into memory from alloc as an int64 tensor of the
// given shape.
func int64Tensor(alloc mem.Allocator, vals []int64, shape []int64) (mem.Tensor, error) {
	buf, view, err := mem.AllocInt64(alloc, len(vals))
	if err != nil {
		return mem.Tensor{}, err
	}
	copy(view, vals)
	return mem.Tensor{DType: mem.Int64, Shape: shape, Data: buf}, nil
}

package core

import (
	"context"
	"sync"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// samplerKey is what a sampler is built from, the seed left out: calls
// whose options give the same key share one sampler (building one validates
// the whole graph and allocates its workspaces) and pass their seed per
// call. It is comparable, so that no deep comparison of options is needed;
// TestSamplerKeyCoversOptions fails when sample.Options gains a field that
// the key does not hold.
type samplerKey struct {
	fanouts  string // the fan-outs as bytes, 8 per hop
	replace  bool
	frontier sample.Frontier
	threads  int
	biased   bool
	scheme   sample.Scheme
	layerWOR bool
	exclude  string // ExcludeEdges as bytes, 8 per id, in the caller's order
}

func keyOf(opt sample.Options) samplerKey {
	fan := make([]int64, len(opt.Fanouts))
	for i, f := range opt.Fanouts {
		fan[i] = int64(f)
	}
	return samplerKey{
		fanouts:  int64Bytes(fan),
		replace:  opt.Replace,
		frontier: opt.Frontier,
		threads:  opt.Threads,
		biased:   opt.Biased,
		scheme:   opt.Scheme,
		layerWOR: opt.LayerWithoutReplacement,
		exclude:  int64Bytes(opt.ExcludeEdges),
	}
}

func int64Bytes(s []int64) string {
	if len(s) == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s)))
}

// maxCachedSamplers bounds the samplers a Graph keeps: one for sampling and
// one for walks covers the usual caller; each holds per-patch workspaces.
const maxCachedSamplers = 2

// samplerCache keeps the most recently used samplers, most recent first.
type samplerCache struct {
	mu      sync.Mutex
	entries []cachedSampler
}

type cachedSampler struct {
	key samplerKey
	s   *sample.Sampler
}

// get returns the cached sampler for opt (its Seed ignored) or builds one.
func (c *samplerCache) get(g *Graph, opt sample.Options) (*sample.Sampler, error) {
	key := keyOf(opt)
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.key == key {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			return e.s, nil
		}
	}
	opt.Seed = 0
	s, err := sample.New(g.part, comm.NewLocal(g.part.NumPatches()), opt)
	if err != nil {
		return nil, err
	}
	if len(c.entries) < maxCachedSamplers {
		c.entries = append(c.entries, cachedSampler{})
	}
	copy(c.entries[1:], c.entries[:len(c.entries)-1])
	c.entries[0] = cachedSampler{key: key, s: s}
	return s, nil
}

// reset drops every cached sampler (calls using one keep it until they
// return).
func (c *samplerCache) reset() {
	c.mu.Lock()
	c.entries = nil
	c.mu.Unlock()
}

// Sample samples one batch around seeds (original ids, distinct) with opt
// and returns it with every buffer from alloc (nil: the Go heap): nodes in
// original ids, InputIndex the identity. The caller owns the batch (Release
// it). The result is the one a sampler built with opt gives for batch key 0.
func (g *Graph) Sample(seeds []int64, opt sample.Options, alloc mem.Allocator) (*pipeline.Batch, error) {
	if err := g.acquire(); err != nil {
		return nil, err
	}
	defer g.release()
	internal, err := pipeline.InternalSeeds(g.part, seeds)
	if err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	s, err := g.samplers.get(g, opt)
	if err != nil {
		return nil, err
	}
	res, err := s.SampleBatchesSeed(context.Background(), opt.Seed, [][]int64{internal}, []uint64{0})
	if err != nil {
		return nil, err
	}
	inputIndex := make([]int64, len(seeds))
	for i := range inputIndex {
		inputIndex[i] = int64(i)
	}
	b, err := pipeline.Materialize(res[0], seeds, inputIndex, g.part, g.store, nil, nil, alloc, opt.Threads)
	s.Recycle(res...)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// WalkOptions configures RandomWalk.
type WalkOptions struct {
	Length      int     // steps per walk, >= 0
	RestartProb float64 // probability, per step, of going back to the seed, in [0, 1]
	Biased      bool    // step along an in-edge with probability proportional to its weight
	Seed        uint64  // root of the random streams
	Threads     int     // parallelism (<= 0: GOMAXPROCS); never changes the result
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
// in-edges.
func (g *Graph) RandomWalk(seeds []int64, opt WalkOptions, alloc mem.Allocator) (*Walk, error) {
	if opt.Length < 0 {
		return nil, errorf(nil, "walk length = %d is negative", opt.Length)
	}
	if !(opt.RestartProb >= 0 && opt.RestartProb <= 1) {
		return nil, errorf(nil, "restart probability = %g is not in [0, 1]", opt.RestartProb)
	}
	if alloc == nil {
		alloc = mem.Heap{}
	}
	if err := g.acquire(); err != nil {
		return nil, err
	}
	defer g.release()
	internal := make([]int64, len(seeds))
	if err := g.part.ToNew(seeds, internal); err != nil {
		return nil, errorf(nil, "seeds: %v", err)
	}
	// A walk reads only Biased and Threads of the sampler's options, which
	// needs one valid hop to be built.
	sopt := sample.Options{Fanouts: []int{1}, Biased: opt.Biased, Threads: opt.Threads}
	g.mu.RLock()
	defer g.mu.RUnlock()
	s, err := g.samplers.get(g, sopt)
	if err != nil {
		return nil, err
	}
	res, err := s.RandomWalkSeed(context.Background(), opt.Seed, [][]int64{internal}, []uint64{0}, opt.Length, opt.RestartProb)
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
	if w.Traces, err = int64Tensor(alloc, traces, []int64{b, int64(opt.Length) + 1}); err != nil {
		return nil, err
	}
	if w.EdgeIDs, err = int64Tensor(alloc, edges, []int64{b, int64(opt.Length)}); err != nil {
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

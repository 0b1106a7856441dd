package sample

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/stretchr/testify/require"
)

// edge is src -> dst with an id.
type edge struct{ src, dst, id int64 }

// buildCSC builds the in-neighbour CSC of edges by hand (rows by dst, each
// row in input order). With explicitIDs false, edge ids must equal CSC
// positions and EdgeIDs is left nil.
func buildCSC(n int64, edges []edge, explicitIDs bool) *graph.CSC {
	indptr := make([]int64, n+1)
	for _, e := range edges {
		indptr[e.dst+1]++
	}
	for i := int64(0); i < n; i++ {
		indptr[i+1] += indptr[i]
	}
	fill := slices.Clone(indptr[:n])
	indices := make([]int64, len(edges))
	ids := make([]int64, len(edges))
	for _, e := range edges {
		indices[fill[e.dst]] = e.src
		ids[fill[e.dst]] = e.id
		fill[e.dst]++
	}
	g := &graph.CSC{NumNodes: n, Indptr: indptr, Indices: indices}
	if explicitIDs {
		g.EdgeIDs = ids
	}
	return g
}

// randomGraph has n nodes and about e edges with a skewed in-degree
// distribution (some hubs, some isolated nodes). Edge ids are a random
// permutation of [0, e) when explicitIDs, else CSC positions.
func randomGraph(r *rand.Rand, n, e int64, explicitIDs bool) *graph.CSC {
	edges := make([]edge, 0, e)
	for i := int64(0); i < e; i++ {
		var dst int64
		if r.IntN(4) == 0 {
			dst = r.Int64N(max(1, n/20)) // hubs
		} else {
			dst = r.Int64N(n)
		}
		edges = append(edges, edge{src: r.Int64N(n), dst: dst})
	}
	slices.SortStableFunc(edges, func(a, b edge) int { return int(a.dst - b.dst) })
	perm := r.Perm(len(edges))
	for i := range edges {
		if explicitIDs {
			edges[i].id = int64(perm[i])
		} else {
			edges[i].id = int64(i)
		}
	}
	return buildCSC(n, edges, explicitIDs)
}

// rangePartition splits the identity numbering into p consecutive ranges.
func rangePartition(g *graph.CSC, p int) *partition.Partitioned {
	off := make([]int64, p+1)
	for i := 0; i <= p; i++ {
		off[i] = int64(i) * g.NumNodes / int64(p)
	}
	return &partition.Partitioned{Graph: g, Offsets: off}
}

// renumbered assigns node v to patch assign[v] and renumbers patch-major,
// keeping the original relative order within a patch and each neighbour
// list's order; edge ids stay the original ones.
func renumbered(g *graph.CSC, assign []int, p int) *partition.Partitioned {
	n := g.NumNodes
	off := make([]int64, p+1)
	for _, a := range assign {
		off[a+1]++
	}
	for i := 0; i < p; i++ {
		off[i+1] += off[i]
	}
	fill := slices.Clone(off[:p])
	oldToNew := make([]int64, n)
	newToOld := make([]int64, n)
	for v := int64(0); v < n; v++ {
		nv := fill[assign[v]]
		fill[assign[v]]++
		oldToNew[v], newToOld[nv] = nv, v
	}
	indptr := make([]int64, n+1)
	indices := make([]int64, 0, g.NumEdges())
	ids := make([]int64, 0, g.NumEdges())
	for nv := int64(0); nv < n; nv++ {
		v := newToOld[nv]
		for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
			indices = append(indices, oldToNew[g.Source(pos)])
			ids = append(ids, g.EdgeID(pos))
		}
		indptr[nv+1] = int64(len(indices))
	}
	ng := &graph.CSC{NumNodes: n, Indptr: indptr, Indices: indices, EdgeIDs: ids}
	if g.Weights != nil { // weights follow their edges
		ng.Weights = make([]float32, 0, len(g.Weights))
		for nv := int64(0); nv < n; nv++ {
			v := newToOld[nv]
			ng.Weights = append(ng.Weights, g.Weights[g.Indptr[v]:g.Indptr[v+1]]...)
		}
	}
	return &partition.Partitioned{Graph: ng, Offsets: off, NewToOld: newToOld, OldToNew: oldToNew}
}

// options is what a test samples with, in one literal: a Request and the
// runtime's threads.
type options struct {
	Fanouts                 []int
	Replace                 bool
	Frontier                Frontier
	Seed                    uint64
	Threads                 int
	Biased                  bool
	Scheme                  Scheme
	LayerWithoutReplacement bool
	ExcludeEdges            []int64
}

// request returns the request part of o.
func (o options) request() Request {
	return Request{
		Fanouts: o.Fanouts, Replace: o.Replace, Frontier: o.Frontier, Scheme: o.Scheme,
		Biased: o.Biased, LayerWithoutReplacement: o.LayerWithoutReplacement,
		ExcludeEdges: o.ExcludeEdges, Seed: o.Seed,
	}
}

// newSampler builds a runtime on p and c with o's threads and binds o's
// request.
func newSampler(p *partition.Partitioned, c comm.Comm, o options) (*Sampler, error) {
	rt, err := NewRuntime(p, c, RuntimeOptions{Threads: o.Threads})
	if err != nil {
		return nil, err
	}
	return rt.Bind(o.request())
}

func mustSampler(t testing.TB, p *partition.Partitioned, opt options) *Sampler {
	t.Helper()
	s, err := newSampler(p, comm.NewLocal(p.NumPatches()), opt)
	require.NoError(t, err)
	return s
}

// walk runs walks on s's runtime with s's request's Biased, ExcludeEdges
// and Seed.
func walk(ctx context.Context, s *Sampler, batches [][]int64, keys []uint64, length int, restartProb float64) ([]*WalkResult, error) {
	req := s.Request()
	return s.Runtime().RandomWalk(ctx, WalkRequest{
		Length: length, RestartProb: restartProb, Biased: req.Biased,
		ExcludeEdges: req.ExcludeEdges, Seed: req.Seed,
	}, batches, keys)
}

// toOriginal maps a result's Nodes to original ids (in place on a copy).
func toOriginal(p *partition.Partitioned, res []*Result) []*Result {
	out := make([]*Result, len(res))
	for i, r := range res {
		c := *r
		c.Nodes = slices.Clone(r.Nodes)
		if p.NewToOld != nil {
			for j, v := range c.Nodes {
				c.Nodes[j] = p.NewToOld[v]
			}
		}
		out[i] = &c
	}
	return out
}

// toInternal maps original seed ids to internal ids.
func toInternal(p *partition.Partitioned, batches [][]int64) [][]int64 {
	if p.OldToNew == nil {
		return batches
	}
	out := make([][]int64, len(batches))
	for i, b := range batches {
		out[i] = make([]int64, len(b))
		for j, v := range b {
			out[i][j] = p.OldToNew[v]
		}
	}
	return out
}

// randomBatches draws nb batches of up to bs distinct seeds each.
func randomBatches(r *rand.Rand, n int64, nb, bs int) ([][]int64, []uint64) {
	batches := make([][]int64, nb)
	keys := make([]uint64, nb)
	for i := range batches {
		k := min(int64(bs), n)
		perm := r.Perm(int(n))
		for _, v := range perm[:k] {
			batches[i] = append(batches[i], int64(v))
		}
		keys[i] = r.Uint64()
	}
	return batches, keys
}

// withGrains forces the parallel passes (sample stage and, with more than
// one thread, append-unique) to split small inputs.
func withGrains(t testing.TB, count, sample int) {
	oc, os, om, og := countGrain, sampleGrain, parallelMergeMin, mergeGrain
	od, odt := parallelDenseMin, parallelDenseThreads
	countGrain, sampleGrain, parallelMergeMin, mergeGrain = count, sample, 1, sample
	parallelDenseMin, parallelDenseThreads = 1, 2
	t.Cleanup(func() {
		countGrain, sampleGrain, parallelMergeMin, mergeGrain = oc, os, om, og
		parallelDenseMin, parallelDenseThreads = od, odt
	})
}

// checkResult checks every structural invariant of res against the ORIGINAL
// graph g (res.Nodes in original ids).
func checkResult(g *graph.CSC, seeds []int64, res *Result, opt options) error {
	type einfo struct{ src, dst, pos int64 }
	byID := map[int64]einfo{}
	for v := int64(0); v < g.NumNodes; v++ {
		for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
			byID[g.EdgeID(pos)] = einfo{g.Source(pos), v, pos - g.Indptr[v]}
		}
	}
	L := len(opt.Fanouts)
	if len(res.HopCounts) != L+1 || len(res.Blocks) != L {
		return fmt.Errorf("len(HopCounts) = %d, len(Blocks) = %d, want %d, %d", len(res.HopCounts), len(res.Blocks), L+1, L)
	}
	if res.HopCounts[0] != int64(len(seeds)) || !slices.Equal(res.Nodes[:len(seeds)], seeds) {
		return fmt.Errorf("seeds not first in order: %v vs %v", res.Nodes[:min(len(seeds), len(res.Nodes))], seeds)
	}
	var sum int64
	for _, c := range res.HopCounts {
		sum += c
	}
	if sum != int64(len(res.Nodes)) {
		return fmt.Errorf("sum(HopCounts) = %d, len(Nodes) = %d", sum, len(res.Nodes))
	}
	seen := map[int64]bool{}
	for _, v := range res.Nodes {
		if seen[v] {
			return fmt.Errorf("node %d appears twice in Nodes", v)
		}
		seen[v] = true
	}
	prev := int64(0) // nodes before hop h
	for h, b := range res.Blocks {
		start := prev
		prev += res.HopCounts[h]
		wantOff, wantDst := int64(0), prev
		if opt.Frontier == FrontierNew {
			wantOff, wantDst = start, res.HopCounts[h]
		}
		if b.DstOffset != wantOff || b.NumDst != wantDst || b.NumSrc != prev+res.HopCounts[h+1] {
			return fmt.Errorf("block %d: DstOffset/NumDst/NumSrc = %d/%d/%d, want %d/%d/%d", h, b.DstOffset, b.NumDst, b.NumSrc, wantOff, wantDst, prev+res.HopCounts[h+1])
		}
		if h > 0 && opt.Frontier == FrontierAll && b.NumDst != res.Blocks[h-1].NumSrc {
			return fmt.Errorf("block %d dst count %d != block %d src count %d", h, b.NumDst, h-1, res.Blocks[h-1].NumSrc)
		}
		if int64(len(b.Indptr)) != b.NumDst+1 || b.Indptr[0] != 0 || b.Indptr[b.NumDst] != int64(len(b.Indices)) || len(b.EdgeIDs) != len(b.Indices) {
			return fmt.Errorf("block %d: malformed indptr/indices", h)
		}
		nextNew := prev // next position a new node must take
		for i := int64(0); i < b.NumDst; i++ {
			v := res.Nodes[b.DstOffset+i]
			lo, hi := b.Indptr[i], b.Indptr[i+1]
			if hi < lo {
				return fmt.Errorf("block %d: indptr decreases at %d", h, i)
			}
			deg := g.Indptr[v+1] - g.Indptr[v]
			f := int64(opt.Fanouts[h])
			want := f
			switch {
			case f < 0:
				want = deg
			case opt.Replace && deg == 0:
				want = 0
			case !opt.Replace:
				want = min(deg, f)
			}
			if hi-lo != want {
				return fmt.Errorf("block %d: node %d (deg %d) got %d neighbours, want %d", h, v, deg, hi-lo, want)
			}
			lastPos := int64(-1)
			picked := map[int64]bool{}
			for k := lo; k < hi; k++ {
				idx := b.Indices[k]
				if idx < 0 || idx >= b.NumSrc {
					return fmt.Errorf("block %d: index %d out of [0, %d)", h, idx, b.NumSrc)
				}
				if idx >= prev {
					if idx > nextNew {
						return fmt.Errorf("block %d: new node at position %d before position %d", h, idx, nextNew)
					}
					if idx == nextNew {
						nextNew++
					}
				}
				u := res.Nodes[idx]
				e, ok := byID[b.EdgeIDs[k]]
				if !ok || e.src != u || e.dst != v {
					return fmt.Errorf("block %d: edge id %d is not %d -> %d (%+v, %v)", h, b.EdgeIDs[k], u, v, e, ok)
				}
				if !opt.Replace || f < 0 {
					if picked[b.EdgeIDs[k]] {
						return fmt.Errorf("block %d: node %d picked edge %d twice", h, v, b.EdgeIDs[k])
					}
					picked[b.EdgeIDs[k]] = true
					if e.pos <= lastPos {
						return fmt.Errorf("block %d: node %d's picks not in ascending list order", h, v)
					}
					lastPos = e.pos
				}
			}
		}
		if nextNew != prev+res.HopCounts[h+1] {
			return fmt.Errorf("block %d: %d new nodes referenced, HopCounts says %d", h, nextNew-prev, res.HopCounts[h+1])
		}
	}
	return nil
}

func sampleAll(t testing.TB, s *Sampler, batches [][]int64, keys []uint64) []*Result {
	t.Helper()
	res, err := s.SampleBatches(context.Background(), batches, keys)
	require.NoError(t, err)
	require.Len(t, res, len(batches))
	return res
}

func eq(a, b []int64) bool { return slices.Equal(a, b) }

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// callOf returns a call of s's request on s's runtime, for tests of the
// stages.
func callOf(t testing.TB, s *Sampler) *call {
	t.Helper()
	c, err := s.rt.begin(s.req, s.req.Scheme == LayerWise, "Request")
	require.NoError(t, err)
	return c
}

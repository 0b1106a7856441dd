package sample

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
)

var (
	benchOnce  sync.Once
	benchGraph *graph.CSC
)

// bigRandomGraph: 1M nodes, 20M edges, uniform random endpoints (in-degree
// ~ Poisson(20)); edge ids are CSC positions.
func bigRandomGraph() *graph.CSC {
	benchOnce.Do(func() {
		const n, e = 1 << 20, 20 << 20
		r := rand.New(rand.NewPCG(1, 1))
		indptr := make([]int64, n+1)
		for i := 0; i < e; i++ {
			indptr[r.IntN(n)+1]++
		}
		for i := 0; i < n; i++ {
			indptr[i+1] += indptr[i]
		}
		indices := make([]int64, e)
		for i := range indices {
			indices[i] = r.Int64N(n)
		}
		benchGraph = &graph.CSC{NumNodes: n, Indptr: indptr, Indices: indices}
	})
	return benchGraph
}

// BenchmarkSampleBatches: fanouts [15,10,5], batches of 1024 random seeds.
// One op samples P batches on P patches (one per rank).
func BenchmarkSampleBatches(b *testing.B) {
	g := bigRandomGraph()
	for _, fr := range []Frontier{FrontierAll, FrontierNew} {
		for _, p := range []int{1, 4} {
			b.Run(fmt.Sprintf("frontier=%v/P=%d", fr, p), func(b *testing.B) { benchSample(b, g, fr, p) })
		}
	}
}

// BenchmarkSampleStorage is BenchmarkSampleBatches (FrontierAll, P=1) with
// the sources held as int64 and as int32.
func BenchmarkSampleStorage(b *testing.B) {
	g := bigRandomGraph()
	b.Run("int64", func(b *testing.B) { benchSample(b, g, FrontierAll, 1) })
	b.Run("int32", func(b *testing.B) { benchSample(b, g.Compact(), FrontierAll, 1) })
}

// BenchmarkSampleTyped is BenchmarkSampleBatches (P=1) on the same graph
// made typed: one node type and 4 relations, every list split into 4
// segments of about equal length (edge ids renumbered relation by
// relation), sampled with per-relation fan-outs that add up to the
// homogeneous ones, alone and disjoint.
func BenchmarkSampleTyped(b *testing.B) {
	g0 := bigRandomGraph()
	const nr = 4
	relOf := func(j, deg int64) int64 { return j * nr / deg }
	var count [nr]int64
	for v := int64(0); v < g0.NumNodes; v++ {
		deg := g0.InDegree(v)
		for j := range deg {
			count[relOf(j, deg)]++
		}
	}
	off := []int64{0}
	for _, c := range count {
		off = append(off, off[len(off)-1]+c)
	}
	next := slices.Clone(off[:nr])
	ids := make([]int64, g0.NumEdges())
	for v := int64(0); v < g0.NumNodes; v++ {
		a, deg := g0.Indptr[v], g0.InDegree(v)
		for j := range deg {
			r := relOf(j, deg)
			ids[a+j] = next[r]
			next[r]++
		}
	}
	g := &graph.CSC{NumNodes: g0.NumNodes, Indptr: g0.Indptr, Indices: g0.Indices, EdgeIDs: ids}
	types := &graph.Types{
		NodeOffsets: []int64{0, g.NumNodes},
		EdgeOffsets: off,
		RelSrc:      []int32{0, 0, 0, 0},
		RelDst:      []int32{0, 0, 0, 0},
	}
	rf := [][]int{{4, 4, 4, 3}, {3, 3, 2, 2}, {2, 1, 1, 1}}
	// The baseline: the same graph (explicit edge ids) sampled untyped.
	b.Run("untyped", func(b *testing.B) {
		benchRequest(b, g, 1, RuntimeOptions{}, Request{Fanouts: []int{15, 10, 5}, Seed: 1})
	})
	for _, fr := range []Frontier{FrontierAll, FrontierNew} {
		b.Run(fmt.Sprintf("frontier=%v", fr), func(b *testing.B) {
			benchRequest(b, g, 1, RuntimeOptions{Types: types}, Request{RelationFanouts: rf, Frontier: fr, Seed: 1})
		})
	}
	b.Run("disjoint", func(b *testing.B) {
		benchRequest(b, g, 1, RuntimeOptions{Types: types}, Request{RelationFanouts: rf, Frontier: FrontierNew, Disjoint: true, Seed: 1})
	})
}

func benchSample(b *testing.B, g *graph.CSC, fr Frontier, p int) {
	benchRequest(b, g, p, RuntimeOptions{}, Request{Fanouts: []int{15, 10, 5}, Frontier: fr, Seed: 1})
}

func benchRequest(b *testing.B, g *graph.CSC, p int, ropt RuntimeOptions, req Request) {
	rt, err := NewRuntime(rangePartition(g, p), comm.NewLocal(p), ropt)
	if err != nil {
		b.Fatal(err)
	}
	s, err := rt.Bind(req)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 2))
	batches := make([][]int64, p)
	keys := make([]uint64, p)
	var edges, nodes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := range batches {
			seen := make(map[int64]bool, 1024)
			batches[j] = batches[j][:0]
			for len(batches[j]) < 1024 {
				if v := r.Int64N(g.NumNodes); !seen[v] {
					seen[v] = true
					batches[j] = append(batches[j], v)
				}
			}
			keys[j] = uint64(i*p + j)
		}
		b.StartTimer()
		res, err := s.SampleBatches(context.Background(), batches, keys)
		if err != nil {
			b.Fatal(err)
		}
		for _, rr := range res {
			nodes += int64(len(rr.Nodes))
			for _, bl := range rr.Blocks {
				edges += int64(len(bl.Indices))
			}
		}
	}
	b.ReportMetric(float64(edges)/float64(b.N*p), "edges/batch")
	b.ReportMetric(float64(nodes)/float64(b.N*p), "nodes/batch")
}

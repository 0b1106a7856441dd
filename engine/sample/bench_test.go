package sample

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

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

func benchSample(b *testing.B, g *graph.CSC, fr Frontier, p int) {
	s := mustSampler(b, rangePartition(g, p), options{Fanouts: []int{15, 10, 5}, Frontier: fr, Seed: 1})
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

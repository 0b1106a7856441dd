package linkpred

import (
	"testing"
)

// The benchmarks report negatives/s: the draws of one batch of 1024
// positives with k (or amount) negatives each, over a 1M-node graph.

const benchPos, benchK, benchNodes = 1024, 16, 1 << 20

func reportNegatives(b *testing.B, perOp int) {
	b.ReportMetric(float64(perOp)*float64(b.N)/b.Elapsed().Seconds(), "negatives/s")
}

func BenchmarkPerSourceUniform(b *testing.B) {
	src := make([]int64, benchPos)
	for i := range src {
		src[i] = int64(i * 977 % benchNodes)
	}
	for b.Loop() {
		if _, err := (PerSourceUniform{K: benchK}).Sample(src, benchNodes, Stream{Seed: 1, Key: 2}, 0); err != nil {
			b.Fatal(err)
		}
	}
	reportNegatives(b, benchPos*benchK)
}

func BenchmarkBinary(b *testing.B) {
	for b.Loop() {
		if _, err := (Binary{Amount: benchK}).Sample(benchPos, benchNodes, Stream{Seed: 1, Key: 2}, 0); err != nil {
			b.Fatal(err)
		}
	}
	reportNegatives(b, benchPos*benchK)
}

func BenchmarkTripletWeighted(b *testing.B) {
	w := make([]float64, benchNodes)
	for i := range w {
		w[i] = float64(i%13) + 1
	}
	nw, err := NewNodeWeights(w)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := (Triplet{Amount: benchK, Weights: nw}).Sample(benchPos, benchNodes, Stream{Seed: 1, Key: 2}, 0); err != nil {
			b.Fatal(err)
		}
	}
	reportNegatives(b, benchPos*benchK)
}

// GlobalUniform over a graph with 16M random edges (unsorted rows: the
// first call builds the sorted copy, outside the timed loop).
func BenchmarkGlobalUniform(b *testing.B) {
	idx := randomIndex(b, benchNodes, 16*benchNodes)
	idx.HasEdge(0, 0)
	for _, replace := range []bool{false, true} {
		name := "without-replacement"
		if replace {
			name = "with-replacement"
		}
		b.Run(name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				p, err := (GlobalUniform{K: benchK, ExcludeSelfLoops: true, Replace: replace}).Sample(idx, benchPos, Stream{Seed: 1, Key: 2}, 0)
				if err != nil {
					b.Fatal(err)
				}
				n = p.Len()
			}
			reportNegatives(b, n)
		})
	}
}

// BenchmarkEndpointsAndCompact is DGL's per-batch path: find_edges,
// per-source negatives, compact_graphs.
func BenchmarkEndpointsAndCompact(b *testing.B) {
	idx := randomIndex(b, benchNodes, 16*benchNodes)
	eids := make([]int64, benchPos)
	for i := range eids {
		eids[i] = int64(i * 15485863 % (16 * benchNodes))
	}
	if _, err := idx.Endpoints(eids); err != nil { // builds the id inverse
		b.Fatal(err)
	}
	for b.Loop() {
		pos, err := idx.Endpoints(eids)
		if err != nil {
			b.Fatal(err)
		}
		neg, err := (PerSourceUniform{K: benchK}).Sample(pos.Src, benchNodes, Stream{Seed: 1, Key: 2}, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := CompactDGL(pos, neg, benchNodes); err != nil {
			b.Fatal(err)
		}
	}
	reportNegatives(b, benchPos*benchK)
}

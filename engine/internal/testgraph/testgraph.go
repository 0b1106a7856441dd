// Package testgraph holds the test graph that the tests of engine/core and
// engine/distributed share: a random graph of Nodes nodes and Edges edges
// (the same every call), its features and labels, and the sampling request
// and loader options the tests use by default. Only tests import it; it
// imports the engine's lower packages (graph, mem, pipeline, sample), not
// core, so that core's own tests can use it.
package testgraph

import (
	"math/rand/v2"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

const (
	Nodes   = 300
	Edges   = 2400
	FeatDim = 3
	// Threads is the parallelism of the tests' calls.
	Threads = 2
)

// COO returns the edges of the test graph (the same every call).
func COO() (src, dst []int64) {
	r := rand.New(rand.NewPCG(7, 9))
	src, dst = make([]int64, Edges), make([]int64, Edges)
	for i := range src {
		src[i], dst[i] = r.Int64N(Nodes), r.Int64N(Nodes)
	}
	return src, dst
}

// CSC returns the test graph's CSC in original ids (FromCOO of COO).
func CSC(t testing.TB) *graph.CSC {
	t.Helper()
	src, dst := COO()
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: Nodes})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// FeatOf is node o's feature row; LabelOf its label.
func FeatOf(o int64) []float32 { return []float32{float32(o), float32(o) + 0.5, -float32(o)} }
func LabelOf(o int64) int64    { return 10*o + 1 }

// Features returns the feature matrix (original row order).
func Features() mem.Tensor {
	f := make([]float32, 0, Nodes*FeatDim)
	for o := range int64(Nodes) {
		f = append(f, FeatOf(o)...)
	}
	return mem.Tensor{DType: mem.Float32, Shape: []int64{Nodes, FeatDim}, Data: mem.Bytes(f)}
}

// Labels returns the labels (original row order).
func Labels() mem.Tensor {
	l := make([]int64, Nodes)
	for o := range l {
		l[o] = LabelOf(int64(o))
	}
	return mem.Tensor{DType: mem.Int64, Shape: []int64{Nodes}, Data: mem.Bytes(l)}
}

// I64 views an int64 tensor's data.
func I64(t mem.Tensor) []int64 { return mem.Int64s(t.Data) }

// Sample is the tests' default sampling request.
func Sample() sample.Request {
	return sample.Request{Fanouts: []int{4, 3}, Seed: 5}
}

// Loader is the tests' default loader options: batches of 16, shuffled,
// gathering "feat" and "label".
func Loader() pipeline.Options {
	return pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 3, FeatureNames: []string{"feat"}, LabelNames: []string{"label"}, Threads: Threads}
}

package core

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

const (
	testNodes = 300
	testEdges = 2400
	featDim   = 3
)

// testCOO returns the edges of a random graph on testNodes nodes (the same
// every call).
func testCOO() (src, dst []int64) {
	r := rand.New(rand.NewPCG(7, 9))
	src, dst = make([]int64, testEdges), make([]int64, testEdges)
	for i := range src {
		src[i], dst[i] = r.Int64N(testNodes), r.Int64N(testNodes)
	}
	return src, dst
}

// refGraph is the CSC of testCOO in original ids, built apart from any
// Graph, to check results against.
func refGraph(t testing.TB) *graph.CSC {
	src, dst := testCOO()
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: testNodes})
	require.NoError(t, err)
	return g.Wide()
}

// partitions are the partitionings every test runs on: with and without
// renumbering.
func partitions() map[string]partition.Options {
	given := make([]int64, testNodes)
	for v := range given {
		given[v] = int64((v * 7) % 4)
	}
	return map[string]partition.Options{
		"range1":  {Method: partition.Range, NumPatches: 1},
		"range3":  {Method: partition.Range, NumPatches: 3},
		"random3": {Method: partition.Random, NumPatches: 3, Seed: 5},
		"given4":  {Method: partition.Given, NumPatches: 4, Assignment: given},
	}
}

func newTestGraph(t testing.TB, popt partition.Options) *Graph {
	t.Helper()
	src, dst := testCOO()
	csc, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: testNodes})
	require.NoError(t, err)
	g, err := New(csc, popt)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

// featOf is node o's feature row; labelOf its label.
func featOf(o int64) []float32 { return []float32{float32(o), float32(o) + 0.5, -float32(o)} }
func labelOf(o int64) int64    { return 10*o + 1 }

// testFeatures returns the feature matrix (original row order).
func testFeatures() mem.Tensor {
	f := make([]float32, 0, testNodes*featDim)
	for o := range int64(testNodes) {
		f = append(f, featOf(o)...)
	}
	return mem.Tensor{DType: mem.Float32, Shape: []int64{testNodes, featDim}, Data: mem.Bytes(f)}
}

func testLabels() mem.Tensor {
	l := make([]int64, testNodes)
	for o := range l {
		l[o] = labelOf(int64(o))
	}
	return mem.Tensor{DType: mem.Int64, Shape: []int64{testNodes}, Data: mem.Bytes(l)}
}

// withNodeData sets "feat" and "label" on g.
func withNodeData(t testing.TB, g *Graph) {
	t.Helper()
	require.NoError(t, g.SetNodeData("feat", testFeatures(), nil))
	require.NoError(t, g.SetNodeData("label", testLabels(), nil))
}

func i64(t mem.Tensor) []int64 { return mem.Int64s(t.Data) }

// hasEdge reports whether ref has edge e from u to v.
func hasEdge(ref *graph.CSC, u, v, e int64) bool {
	for pos := ref.Indptr[v]; pos < ref.Indptr[v+1]; pos++ {
		if ref.EdgeID(pos) == e {
			return ref.Source(pos) == u
		}
	}
	return false
}

func f64Bytes(s []float64) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s))
}

// testThreads is the parallelism of the tests' calls.
const testThreads = 2

func defaultSample() sample.Request {
	return sample.Request{Fanouts: []int{4, 3}, Seed: 5}
}

func defaultLoader() pipeline.Options {
	return pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 3, FeatureNames: []string{"feat"}, LabelNames: []string{"label"}, Threads: testThreads}
}

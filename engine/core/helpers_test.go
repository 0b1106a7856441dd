package core

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/partition"
)

// The test graph (engine/internal/testgraph).
const (
	testNodes = testgraph.Nodes
	testEdges = testgraph.Edges
	featDim   = testgraph.FeatDim
)

var (
	testCOO       = testgraph.COO
	featOf        = testgraph.FeatOf
	labelOf       = testgraph.LabelOf
	testFeatures  = testgraph.Features
	testLabels    = testgraph.Labels
	i64           = testgraph.I64
	defaultSample = testgraph.Sample
	defaultLoader = testgraph.Loader
)

// refGraph is the CSC of testCOO in original ids, built apart from any
// Graph, to check results against.
func refGraph(t testing.TB) *graph.CSC { return testgraph.CSC(t).Wide() }

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
	g, err := New(testgraph.CSC(t), popt)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

// withNodeData sets "feat" and "label" on g.
func withNodeData(t testing.TB, g *Graph) {
	t.Helper()
	require.NoError(t, g.SetNodeData("feat", testFeatures(), nil))
	require.NoError(t, g.SetNodeData("label", testLabels(), nil))
}

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
const testThreads = testgraph.Threads

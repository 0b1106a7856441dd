package distributed

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/partition"
)

// The test graph (engine/internal/testgraph), as engine/core's tests use it.
const (
	testNodes = testgraph.Nodes
	testEdges = testgraph.Edges
)

var (
	testCOO       = testgraph.COO
	testFeatures  = testgraph.Features
	i64           = testgraph.I64
	defaultSample = testgraph.Sample
	defaultLoader = testgraph.Loader
)

// newTestGraph returns the test graph partitioned with popt, closed at the
// end of the test.
func newTestGraph(t testing.TB, popt partition.Options) *core.Graph {
	t.Helper()
	g, err := core.New(testgraph.CSC(t), popt)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

// withNodeData sets "feat" and "label" on g.
func withNodeData(t testing.TB, g *core.Graph) {
	t.Helper()
	require.NoError(t, g.SetNodeData("feat", testgraph.Features(), nil))
	require.NoError(t, g.SetNodeData("label", testgraph.Labels(), nil))
}

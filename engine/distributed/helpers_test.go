package distributed

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/partition"
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

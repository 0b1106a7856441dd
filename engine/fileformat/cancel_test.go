package fileformat

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
)

// TestEdgeTableContext: writing or reading an edge table whose context is
// done stops with its error (checked at every record batch); a live
// context changes nothing.
func TestEdgeTableContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edges.arrow")
	src, dst := []int64{0, 1, 2}, []int64{1, 2, 0}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, WriteEdgeTableContext(ctx, path, src, dst, nil), context.Canceled)
	require.NoError(t, WriteEdgeTableContext(context.Background(), path, src, dst, nil))
	_, err := ReadEdgeTableVerifiedContext(ctx, path, graph.COOOptions{}, nil)
	require.ErrorIs(t, err, context.Canceled)
	g, err := ReadEdgeTableVerifiedContext(context.Background(), path, graph.COOOptions{}, nil)
	require.NoError(t, err)
	require.Equal(t, int64(3), g.NumEdges())
}

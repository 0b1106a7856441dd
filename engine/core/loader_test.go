package core

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// epoch reads one epoch and returns its seeds in delivery order, checking
// each batch's node data against its original ids.
func epoch(t *testing.T, l *Loader) []int64 {
	t.Helper()
	var seen []int64
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			return seen
		}
		require.NoError(t, err)
		checkBatchData(t, b)
		seen = append(seen, i64(b.Seeds)...)
		b.Release()
	}
}

func checkBatchData(t *testing.T, b *pipeline.Batch) {
	t.Helper()
	nodes, seeds := i64(b.Nodes), i64(b.Seeds)
	feat := mem.Float32s(b.NodeData["feat"].Data)
	for i, o := range nodes {
		require.Equal(t, featOf(o), feat[i*featDim:(i+1)*featDim])
	}
	labels := i64(b.NodeData["label"])
	for i, o := range seeds {
		require.Equal(t, labelOf(o), labels[i])
	}
}

func TestLoaderEpochs(t *testing.T) {
	seeds := make([]int64, 100)
	for i := range seeds {
		seeds[i] = int64(3*i+2) % testNodes
	}
	var orders [][]int64
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g := newTestGraph(t, popt)
			withNodeData(t, g)
			alloc := mem.NewChecked(mem.Heap{})
			l, err := g.OpenLoader(seeds, defaultSample(), defaultLoader(), alloc)
			require.NoError(t, err)
			require.Equal(t, 7, l.NumBatches())
			_, err = l.Next(context.Background())
			require.ErrorIs(t, err, ErrNotStarted)
			require.ErrorIs(t, err, errs.ErrState)

			require.NoError(t, l.Start(0))
			e0 := epoch(t, l)
			require.ElementsMatch(t, seeds, e0)
			require.NoError(t, l.Start(1))
			e1 := epoch(t, l)
			require.ElementsMatch(t, seeds, e1)
			require.NotEqual(t, e0, e1, "shuffled per epoch")
			orders = append(orders, append(e0, e1...))

			// Loaders read node data on their own threads: it cannot be
			// replaced, nor the weights changed, while one is open; new
			// names are fine.
			err = g.SetNodeData("feat", testFeatures(), nil)
			require.ErrorIs(t, err, errs.ErrState)
			require.ErrorContains(t, err, `node data "feat" is in use by 1 open loader(s)`)
			err = g.SetEdgeWeights(mem.Tensor{DType: mem.Float32, Shape: []int64{testEdges}, Data: make([]byte, 4*testEdges)})
			require.ErrorIs(t, err, errs.ErrState)
			require.NoError(t, g.SetNodeData("other", testLabels(), nil))

			require.NoError(t, l.Close())
			require.NoError(t, l.Close())
			require.ErrorIs(t, l.Start(2), ErrLoaderClosed)
			_, err = l.Next(context.Background())
			require.ErrorIs(t, err, errs.ErrClosed)
			n, _ := alloc.Outstanding()
			require.Zero(t, n, "every batch buffer was freed")
			require.NoError(t, g.SetNodeData("feat", testFeatures(), nil))
		})
	}
	for _, o := range orders[1:] {
		require.Equal(t, orders[0], o, "the same batches for every numbering")
	}
}

func TestLoaderErrors(t *testing.T) {
	g := newTestGraph(t, partitions()["range1"])
	withNodeData(t, g)
	_, err := g.OpenLoader([]int64{1, 1}, defaultSample(), defaultLoader(), nil)
	require.ErrorContains(t, err, "duplicates")
	lopt := defaultLoader()
	lopt.FeatureNames = []string{"nope"}
	_, err = g.OpenLoader([]int64{1}, defaultSample(), lopt, nil)
	require.ErrorContains(t, err, "nope")
	_, err = g.OpenLoader([]int64{1}, defaultSample(), pipeline.Options{}, nil)
	require.ErrorContains(t, err, "batch size")
	require.Zero(t, g.loaders.Load())
	// Failed opens hold no reference: Close releases the memory at once.
	released := false
	require.NoError(t, g.SetNodeData("x", testLabels(), func() { released = true }))
	require.NoError(t, g.Close())
	require.True(t, released)
}

// A loader keeps working after its graph is closed (sqlite3_close_v2's
// rule); the graph's memory goes with the last loader.
func TestLoaderOutlivesGraph(t *testing.T) {
	g := newTestGraph(t, partitions()["range1"])
	released := 0
	require.NoError(t, g.SetNodeData("feat", testFeatures(), func() { released++ }))
	require.NoError(t, g.SetNodeData("label", testLabels(), nil))
	seeds := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	l1, err := g.OpenLoader(seeds, defaultSample(), defaultLoader(), nil)
	require.NoError(t, err)
	l2, err := g.OpenLoader(seeds, defaultSample(), defaultLoader(), nil)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	_, err = g.Sample(seeds, defaultSample(), testThreads, nil)
	require.ErrorIs(t, err, ErrGraphClosed)
	_, err = g.OpenLoader(seeds, defaultSample(), defaultLoader(), nil)
	require.ErrorIs(t, err, ErrGraphClosed)

	require.NoError(t, l1.Start(0))
	require.ElementsMatch(t, seeds, epoch(t, l1))
	require.NoError(t, l1.Close())
	require.Zero(t, released, "a loader is still open")
	require.NoError(t, l2.Start(5))
	require.ElementsMatch(t, seeds, epoch(t, l2))
	require.NoError(t, l2.Close())
	require.Equal(t, 1, released)
}

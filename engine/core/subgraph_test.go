package core

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/graphferry/graphferry/engine/subload"
)

// inducedEdge is one edge of an induced subgraph: local endpoints and id.
type inducedEdge struct{ src, dst, id int64 }

// inducedRef computes the induced subgraph of nodes from the COO list, apart
// from any Graph: edge i of testCOO has id i.
func inducedRef(nodes []int64) []inducedEdge {
	src, dst := testCOO()
	pos := map[int64]int64{}
	for i, v := range nodes {
		pos[v] = int64(i)
	}
	var out []inducedEdge
	for e := range src {
		u, okU := pos[src[e]]
		v, okV := pos[dst[e]]
		if okU && okV {
			out = append(out, inducedEdge{u, v, int64(e)})
		}
	}
	return out
}

func sortedEdges(es []inducedEdge) []inducedEdge {
	es = slices.Clone(es)
	slices.SortFunc(es, func(a, b inducedEdge) int { return int(a.id - b.id) })
	return es
}

func TestInducedSubgraphMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	nodes := r.Perm(testNodes)[:120]
	ids := make([]int64, len(nodes))
	for i, v := range nodes {
		ids[i] = int64(v)
	}
	want := inducedRef(ids)
	require.NotEmpty(t, want)
	var first []inducedEdge
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g := newTestGraph(t, popt)
			sub, err := g.InducedSubgraph(ids, nil)
			require.NoError(t, err)
			src, dst, eid := i64(sub.Src), i64(sub.Dst), i64(sub.EdgeIDs)
			require.Len(t, dst, len(src))
			require.Len(t, eid, len(src))
			got := make([]inducedEdge, len(src))
			for i := range src {
				got[i] = inducedEdge{src[i], dst[i], eid[i]}
			}
			require.Equal(t, sortedEdges(want), sortedEdges(got))
			// Grouped by target, in the order of nodes.
			require.True(t, slices.IsSorted(dst))
			// The same order on every partitioning.
			if first == nil {
				first = got
			} else {
				require.Equal(t, first, got)
			}
		})
	}
}

func TestInducedSubgraphEdgeCases(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	sub, err := g.InducedSubgraph(nil, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{0}, sub.Src.Shape)
	require.Empty(t, i64(sub.EdgeIDs))

	_, err = g.InducedSubgraph([]int64{1, 5, 1}, nil)
	require.ErrorContains(t, err, "nodes[2] = 1 repeats nodes[0]")
	require.NotErrorIs(t, err, errs.ErrClosed)

	_, err = g.InducedSubgraph([]int64{0, testNodes}, nil)
	require.ErrorContains(t, err, "nodes")

	_, err = g.InducedSubgraph([]int64{-1}, nil)
	require.Error(t, err)

	require.NoError(t, g.Close())
	_, err = g.InducedSubgraph([]int64{0}, nil)
	require.ErrorIs(t, err, errs.ErrClosed)
}

// drain returns an epoch's batches' nodes, checking each batch's gathered
// features and, with labels, its seeds' labels.
func drain(t *testing.T, l *Loader, epoch uint64, labels bool) [][]int64 {
	t.Helper()
	require.NoError(t, l.Start(epoch))
	var out [][]int64
	for {
		b, err := l.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		nodes := slices.Clone(i64(b.Nodes))
		feat := mem.Float32s(b.NodeData["feat"].Data)
		require.Len(t, feat, len(nodes)*featDim)
		for i, v := range nodes {
			require.Equal(t, featOf(v), feat[i*featDim:(i+1)*featDim])
		}
		if labels {
			seeds := i64(b.Seeds)
			got := i64(b.NodeData["label"])
			for i, v := range seeds {
				require.Equal(t, labelOf(v), got[i])
			}
		}
		out = append(out, nodes)
		b.Release()
	}
}

// The subgraph and ShaDow loaders: their batches, node data gathered,
// are the same whatever the patches and the workers.
func TestSubgraphLoadersAcrossPartitions(t *testing.T) {
	var saint, shadow [][]int64
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g := newTestGraph(t, popt)
			withNodeData(t, g)
			lopt := pipeline.Options{BatchSize: 2, FeatureNames: []string{"feat"}, Seed: 9, Workers: 2}
			l, err := g.OpenSubgraphLoader(make([]int64, 6), SubgraphLoaderOptions{Kind: subload.Edges, Weighting: subload.InverseDegree, Budget: 20, Seed: 9}, lopt, nil)
			require.NoError(t, err)
			got := drain(t, l, 3, false)
			require.NoError(t, l.Close())
			require.Len(t, got, 3)
			if saint == nil {
				saint = got
			}
			require.Equal(t, saint, got)

			lopt.LabelNames = []string{"label"}
			_, err = g.OpenSubgraphLoader(make([]int64, 6), SubgraphLoaderOptions{Kind: subload.Nodes}, lopt, nil)
			require.ErrorContains(t, err, "has no seeds")
			req := sample.Request{Fanouts: []int{3, 2}, Seed: 9}
			l, err = g.OpenShadowLoader([]int64{5, 17, 40, 2, 99}, req, SubgraphLoaderOptions{}, lopt, nil)
			require.NoError(t, err)
			got = drain(t, l, 1, true)
			require.NoError(t, l.Close())
			if shadow == nil {
				shadow = got
			}
			require.Equal(t, shadow, got)
			req.Disjoint = true
			_, err = g.OpenShadowLoader([]int64{5}, req, SubgraphLoaderOptions{}, lopt, nil)
			require.ErrorContains(t, err, "disjoint ShaDow batch")
		})
	}
}

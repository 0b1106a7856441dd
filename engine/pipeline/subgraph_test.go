package pipeline

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/sample"
)

// excludingMaker is seedMaker whose batches exclude every edge whose id is
// a multiple of 3 (Batch.Excluded), as engine/linkload's DGL batches
// record their exclusion.
type excludingMaker struct{ *seedMaker }

func (m excludingMaker) Fork(threads int) (excludingMaker, error) {
	f, err := m.seedMaker.Fork(threads)
	return excludingMaker{f}, err
}

func (m excludingMaker) Make(ctx context.Context, pos []int64, key uint64, alloc mem.Allocator) (*Batch, *sample.Result, error) {
	b, res, err := m.seedMaker.Make(ctx, pos, key, alloc)
	if err == nil {
		for e := int64(0); e < m.s.Partitioned().Graph.NumEdges(); e += 3 {
			b.Excluded = append(b.Excluded, e)
		}
	}
	return b, res, err
}

// SubgraphEdges: each batch is the subgraph its nodes induce without its
// excluded edges, listed by source position then edge id, with no blocks
// (its hop counts kept) and its edge data over that list; InducedEdges
// leave the excluded edges out too, in their own order.
func TestSubgraphEdgesLeaveOutTheExcluded(t *testing.T) {
	for _, patches := range []int{1, 2} {
		f := newFixture(t, patches, patches > 1, defaultSample)
		seeds := seedRange(60)
		open := func(k COOEdges) []*Batch {
			opt := defaultOpts()
			opt.COO, opt.COOEdges, opt.Workers = true, k, 2
			opt.EdgeFeatureNames, opt.EdgeStore = []string{"w"}, edgeStore(t, f.g.NumEdges())
			pl, err := NewMaker(excludingMaker{&seedMaker{s: f.s, seeds: seeds, fail: -1}}, f.p, f.store, len(seeds), opt, nil)
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, pl.Close()) })
			require.NoError(t, pl.Start(1))
			return drain(t, pl)
		}
		sub, induced := open(SubgraphEdges), open(InducedEdges)
		defer releaseAll(sub)
		defer releaseAll(induced)
		require.Equal(t, len(sub), len(induced))
		for i, b := range sub {
			nodes := i64(b.Nodes)
			require.Equal(t, nodes, i64(induced[i].Nodes))
			require.Empty(t, b.Blocks, "a subgraph batch has no blocks")
			require.NotEmpty(t, induced[i].Blocks)
			require.Len(t, i64(b.HopCounts), len(defaultSample.Fanouts)+1, "hop counts kept")
			internal := make([]int64, len(nodes))
			for j, v := range nodes {
				internal[j] = v
				if f.p.OldToNew != nil {
					internal[j] = f.p.OldToNew[v]
				}
			}
			src, dst, ids, err := InducedEdgeList(f.p.Graph, internal)
			require.NoError(t, err)
			type edge struct{ s, d, e int64 }
			var want []edge
			for k := range ids {
				if ids[k]%3 != 0 {
					want = append(want, edge{src[k], dst[k], ids[k]})
				}
			}
			require.NotEmpty(t, want)
			require.Less(t, len(want), len(ids), "some induced edges are excluded")
			got := func(b *Batch) []edge {
				idx, eids := i64(b.COO.Index), i64(b.COO.EdgeIDs)
				out := make([]edge, len(eids))
				for k, e := range eids {
					out[k] = edge{idx[k], idx[len(eids)+k], e}
				}
				return out
			}
			require.Equal(t, want, got(induced[i]), "induced: the list order, the excluded left out")
			slices.SortFunc(want, func(a, c edge) int { return cmp.Or(cmp.Compare(a.s, c.s), cmp.Compare(a.e, c.e)) })
			require.Equal(t, want, got(b), "subgraph: by source, then edge id")
			w := b.EdgeData["w"]
			require.Equal(t, []int64{int64(len(want)), 2}, w.Shape)
			rows := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(w.Data))), len(w.Data)/8)
			for k, e := range want {
				require.Equal(t, []float64{float64(e.e), -float64(e.e)}, rows[2*k:2*k+2], "edge data over the list")
			}
		}
	}
}

// On a typed graph a subgraph batch keeps its edges as one block over all
// its nodes (destination-major, each destination's in list order), its hop
// counts [seeds, other nodes], which the typed view then splits by
// relation.
func TestSubgraphOneBlockIsSplitByRelation(t *testing.T) {
	// nodes 0-2 of type 0, 3-4 of type 1; relation 0: 0->0 (ids 0-9),
	// relation 1: 0->1 (ids 10-19)
	ty := &graph.Types{NodeOffsets: []int64{0, 3, 5}, EdgeOffsets: []int64{0, 10, 20}, RelSrc: []int32{0, 0}, RelDst: []int32{0, 1}}
	b := NewBatch(nil)
	a := b.Allocator()
	var err error
	b.Nodes, _, err = int64Tensor(a, []int64{2, 3, 0, 4, 1}) // seeds 2 and 3
	require.NoError(t, err)
	b.HopCounts, _, err = int64Tensor(a, []int64{2, 2, 1})
	require.NoError(t, err)
	// by source position, then id: 0->2 (id 4), 2->0 (id 1), 2->1 (id 12), 2->3 (id 15), 4->0 (id 7)
	src, dst, ids := []int64{0, 2, 2, 2, 4}, []int64{2, 0, 1, 3, 0}, []int64{4, 1, 12, 15, 7}
	require.NoError(t, b.toSubgraph(src, dst, ids, true))
	require.Len(t, b.Blocks, 1)
	blk := b.Blocks[0]
	require.Equal(t, [3]int64{5, 5, 0}, [3]int64{blk.NumDst, blk.NumSrc, blk.DstOffset})
	require.Equal(t, []int64{0, 2, 3, 4, 5, 5}, i64(blk.Indptr))
	require.Equal(t, []int64{2, 4, 2, 0, 2}, i64(blk.Indices))
	require.Equal(t, []int64{1, 7, 12, 4, 15}, i64(blk.EdgeIDs))
	require.Equal(t, []int64{2, 3}, i64(b.HopCounts))
	require.NoError(t, b.SetTyped(ty))
	tb := b.Typed.Blocks[0]
	require.Equal(t, []int64{0, 3, 5}, i64(tb.EdgeOffsets))
	require.Equal(t, []int64{1, 7, 4, 2, 5}, i64(tb.EdgeIDs), "relation-local ids, relation by relation")
	b.Release()
	require.NoError(t, b.toSubgraph(nil, nil, nil, false), "untyped: the blocks dropped")
	require.Empty(t, b.Blocks)
}

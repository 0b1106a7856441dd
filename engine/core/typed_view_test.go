package core

import (
	"context"
	"io"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// typedRef is the typed view of a batch computed the slow, obvious way
// (what the Python layers did before the engine did it): a stable sort of
// the nodes by type and of each block's edges by relation.
type typedRef struct {
	nodes, order, offsets, hops []int64
	blocks                      []typedRefBlock
}

type typedRefBlock struct {
	shape, edgeOffsets, src, dst, eids, indptr []int64
}

func refTyped(t *testing.T, b *pipeline.Batch, ty graph.Types) typedRef {
	t.Helper()
	T, R := ty.NumNodeTypes(), ty.NumRelations()
	nodes, hops := i64(b.Nodes), i64(b.HopCounts)
	typeOf := func(v int64) int {
		return sort.Search(T, func(i int) bool { return ty.NodeOffsets[i+1] > v })
	}
	relOf := func(e int64) int {
		return sort.Search(R, func(i int) bool { return ty.EdgeOffsets[i+1] > e })
	}
	var ref typedRef
	ref.order = make([]int64, len(nodes))
	for i := range ref.order {
		ref.order[i] = int64(i)
	}
	sort.SliceStable(ref.order, func(a, c int) bool { return typeOf(nodes[ref.order[a]]) < typeOf(nodes[ref.order[c]]) })
	rank := make([]int64, len(nodes))
	ref.offsets = make([]int64, T+1)
	ref.hops = make([]int64, T*len(hops))
	level := make([]int, len(nodes))
	for i, l := 0, 0; i < len(nodes); i++ {
		for s := int64(0); l < len(hops); l++ {
			s = 0
			for _, h := range hops[:l+1] {
				s += h
			}
			if int64(i) < s {
				break
			}
		}
		level[i] = l
	}
	for p, i := range ref.order {
		tt := typeOf(nodes[i])
		ref.nodes = append(ref.nodes, nodes[i]-ty.NodeOffsets[tt])
		rank[i] = int64(p) - ref.offsets[tt+1] // fixed below
		ref.hops[tt*len(hops)+level[i]]++
	}
	for i := range nodes {
		ref.offsets[typeOf(nodes[i])+1]++
	}
	for tt := 1; tt <= T; tt++ {
		ref.offsets[tt] += ref.offsets[tt-1]
	}
	for p, i := range ref.order {
		rank[i] = int64(p) - ref.offsets[typeOf(nodes[i])]
	}
	for _, blk := range b.Blocks {
		var rb typedRefBlock
		rb.shape = make([]int64, 3*T)
		for i := int64(0); i < blk.NumSrc; i++ {
			rb.shape[T+typeOf(nodes[i])]++
		}
		for i := int64(0); i < blk.DstOffset; i++ {
			rb.shape[2*T+typeOf(nodes[i])]++
		}
		for i := blk.DstOffset; i < blk.DstOffset+blk.NumDst; i++ {
			rb.shape[typeOf(nodes[i])]++
		}
		indptr, indices, eids := i64(blk.Indptr), i64(blk.Indices), i64(blk.EdgeIDs)
		rb.edgeOffsets = make([]int64, R+1)
		for r := 0; r < R; r++ {
			d := int(ty.RelDst[r])
			ip := make([]int64, rb.shape[d]+1)
			for j := int64(0); j < blk.NumDst; j++ {
				pos := blk.DstOffset + j
				for e := indptr[j]; e < indptr[j+1]; e++ {
					if relOf(eids[e]) != r {
						continue
					}
					rb.src = append(rb.src, rank[indices[e]])
					rb.dst = append(rb.dst, rank[pos])
					rb.eids = append(rb.eids, eids[e]-ty.EdgeOffsets[r])
					ip[rank[pos]-rb.shape[2*T+d]+1]++
				}
			}
			for k := 1; k < len(ip); k++ {
				ip[k] += ip[k-1]
			}
			rb.indptr = append(rb.indptr, ip...)
			rb.edgeOffsets[r+1] = int64(len(rb.src))
		}
		ref.blocks = append(ref.blocks, rb)
	}
	return ref
}

func gotTyped(b *pipeline.Batch) typedRef {
	v := b.Typed
	got := typedRef{nodes: i64(v.Nodes), order: i64(v.Order), offsets: i64(v.NodeOffsets), hops: i64(v.HopCounts)}
	for _, tb := range v.Blocks {
		got.blocks = append(got.blocks, typedRefBlock{
			shape: i64(tb.Shape), edgeOffsets: i64(tb.EdgeOffsets), src: i64(tb.Src), dst: i64(tb.Dst),
			eids: i64(tb.EdgeIDs), indptr: i64(tb.Indptr),
		})
	}
	return got
}

// emptyNil makes nil and empty slices compare equal.
func emptyNil(r typedRef) typedRef {
	fix := func(s []int64) []int64 {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	r.nodes, r.order, r.offsets, r.hops = fix(r.nodes), fix(r.order), fix(r.offsets), fix(r.hops)
	for i := range r.blocks {
		rb := &r.blocks[i]
		rb.shape, rb.edgeOffsets, rb.src, rb.dst, rb.eids, rb.indptr = fix(rb.shape), fix(rb.edgeOffsets), fix(rb.src), fix(rb.dst), fix(rb.eids), fix(rb.indptr)
	}
	return r
}

// TestTypedViewMatchesReference: batches of a typed graph, synchronous and
// from a loader (whose workers compute the view), frontier "all" and
// disjoint "new", carry the typed view the obvious stable split gives, on
// every layout; untyped graphs' batches carry none.
func TestTypedViewMatchesReference(t *testing.T) {
	reqs := map[string]sample.Request{
		"all":      {RelationFanouts: [][]int{{2, 3, 1}, {1, -1, 2}}, Seed: 4},
		"untyped":  {Fanouts: []int{3, 2}, Seed: 6},
		"disjoint": {RelationFanouts: [][]int{{2, 3, 1}, {1, 1, 2}}, Frontier: sample.FrontierNew, Disjoint: true, Seed: 5},
	}
	for name, popt := range typedPartitions() {
		g, ty := typedTestGraph(t, popt)
		b, err := g.Sample([]int64{5, 50}, sample.Request{Fanouts: []int{2}}, 1, nil)
		require.NoError(t, err)
		require.Nil(t, b.Typed, "an untyped graph's batch has no typed view")
		b.Release()
		require.NoError(t, g.SetTypes(ty))
		for rname, req := range reqs {
			seeds := []int64{5, 50, 77, 12, 99}
			if req.Disjoint {
				seeds = append(seeds, 50)
			}
			b, err := g.Sample(seeds, req, 2, nil)
			require.NoError(t, err, "%s/%s", name, rname)
			require.NotNil(t, b.Typed)
			require.Equal(t, emptyNil(refTyped(t, b, ty)), emptyNil(gotTyped(b)), "%s/%s", name, rname)
			b.Release()

			lopt := defaultLoaderNoData()
			lopt.BatchSize, lopt.Shuffle, lopt.Seed = 4, true, 3
			alloc := mem.NewChecked(mem.Heap{})
			l, err := g.OpenLoader(seeds, req, lopt, alloc)
			require.NoError(t, err)
			require.NoError(t, l.Start(0))
			for {
				b, err := l.Next(context.Background())
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				require.Equal(t, emptyNil(refTyped(t, b, ty)), emptyNil(gotTyped(b)), "%s/%s loader", name, rname)
				b.Release()
			}
			require.NoError(t, l.Close())
			n, _ := alloc.Outstanding()
			require.Zero(t, n, "typed views are freed with their batch")
		}
	}
}

// TestSetTypedByHand: a batch whose every id is known.
func TestSetTypedByHand(t *testing.T) {
	// Types: a = [0, 3), b = [3, 5); relations 0 a->b (edges 0-2), 1 b->a (edge 3).
	ty := &graph.Types{NodeOffsets: []int64{0, 3, 5}, EdgeOffsets: []int64{0, 3, 4}, RelSrc: []int32{0, 1}, RelDst: []int32{1, 0}}
	b := handBatch(t)
	require.NoError(t, b.SetTyped(ty))
	got := gotTyped(b)
	require.Equal(t, []int64{1, 0, 2, 0, 1}, got.nodes) // a1 a0 a2 | b0 b1
	require.Equal(t, []int64{1, 2, 4, 0, 3}, got.order)
	require.Equal(t, []int64{0, 3, 5}, got.offsets)
	require.Equal(t, []int64{0, 2, 1, 1, 1, 0}, got.hops) // a: 0,2,1  b: 1,1,0
	// Hop 0: dst = node 0 (b0); edges a1->b0 (e1), a0->b0 (e0).
	h0 := got.blocks[0]
	require.Equal(t, []int64{0, 1, 2, 2, 0, 0}, h0.shape)
	require.Equal(t, []int64{0, 2, 2}, h0.edgeOffsets)
	require.Equal(t, []int64{0, 1}, h0.src)
	require.Equal(t, []int64{0, 0}, h0.dst)
	require.Equal(t, []int64{1, 0}, h0.eids)
	require.Equal(t, []int64{0, 2, 0}, h0.indptr) // a->b over 1 b dst; b->a over 0 a dsts
	// Hop 1 (frontier "new"): dst = nodes 1..3 (a1, a0, b1); edges a2->b1 (e2), b1->a0 (e3).
	h1 := got.blocks[1]
	require.Equal(t, []int64{2, 1, 3, 2, 0, 1}, h1.shape)
	require.Equal(t, []int64{0, 1, 2}, h1.edgeOffsets)
	require.Equal(t, []int64{2, 1}, h1.src)
	require.Equal(t, []int64{1, 1}, h1.dst)
	require.Equal(t, []int64{2, 0}, h1.eids)
	require.Equal(t, []int64{0, 1, 0, 0, 1}, h1.indptr) // a->b over b1; b->a over a1, a0
	require.ErrorContains(t, b.SetTyped(ty), "already has a typed view")
	b.Release()

	b = handBatch(t)
	bad := &graph.Types{NodeOffsets: []int64{0, 3, 5}, EdgeOffsets: []int64{0, 3, 4}, RelSrc: []int32{0, 1}, RelDst: []int32{0, 0}}
	require.ErrorContains(t, b.SetTyped(bad), "enters a node of type 1")
	require.Nil(t, b.Typed)
	require.ErrorContains(t, b.SetTyped(&graph.Types{NodeOffsets: []int64{0, 4}, EdgeOffsets: []int64{0, 4}, RelSrc: []int32{0}, RelDst: []int32{0}}), "out of range [0, 4)")
	require.ErrorContains(t, b.SetTyped(nil), "types are nil")
	b.Release()
}

// handBatch is nodes b0 | a1 a0 b1 | a2 (levels 1, 3, 1) with hop 0
// (dst b0: a1 e1, a0 e0) and hop 1 (dst a1 a0 b1: a0 <- b1 e3, b1 <- a2 e2).
func handBatch(t *testing.T) *pipeline.Batch {
	t.Helper()
	csc, err := graph.FromCOO([]int64{0, 1, 2, 4}, []int64{3, 3, 4, 0}, nil, graph.COOOptions{NumNodes: 5})
	require.NoError(t, err)
	p, err := partition.Build(csc, partition.Options{NumPatches: 1})
	require.NoError(t, err)
	res := &sample.Result{
		Nodes:     []int64{3, 1, 0, 4, 2},
		HopCounts: []int64{1, 3, 1},
		Blocks: []sample.Block{
			{Indptr: []int64{0, 2}, Indices: []int64{1, 2}, EdgeIDs: []int64{1, 0}, NumDst: 1, NumSrc: 4},
			{Indptr: []int64{0, 0, 1, 2}, Indices: []int64{3, 4}, EdgeIDs: []int64{3, 2}, NumDst: 3, NumSrc: 5, DstOffset: 1},
		},
	}
	b, err := pipeline.Materialize(res, []int64{3}, []int64{0}, p, nil, nil, nil, nil, 1)
	require.NoError(t, err)
	return b
}

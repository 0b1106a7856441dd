package linkload

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// The test graph: 12 nodes, each edge i < half stored with its reverse at
// i + half (DGL's reverse_id layout), numbered by position (edge id = i).
var (
	half   = int64(len(fwdSrc))
	fwdSrc = []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 2, 4, 6, 8, 1, 3}
	fwdDst = []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 5, 7, 9, 11, 3, 6, 10}
	srcs   = append(slices.Clone(fwdSrc), fwdDst...)
	dsts   = append(slices.Clone(fwdDst), fwdSrc...)
)

const numNodes = 12

// setup returns the test graph partitioned in three random patches (ids
// renumbered: what a Linker returns must be in original ids) and a runtime
// over it.
func setup(t *testing.T) (*partition.Partitioned, *sample.Runtime) {
	t.Helper()
	g, err := graph.FromCOO(srcs, dsts, nil, graph.COOOptions{NumNodes: numNodes})
	require.NoError(t, err)
	p, err := partition.Build(g, partition.Options{Method: partition.Random, NumPatches: 3, Seed: 9})
	require.NoError(t, err)
	require.NotNil(t, p.NewToOld, "the partition renumbers the nodes")
	rt, err := sample.NewRuntime(p, comm.NewLocal(p.NumPatches()), sample.RuntimeOptions{Threads: 2})
	require.NoError(t, err)
	return p, rt
}

// dglOptions samples every in-neighbour for two hops (so that every edge
// into a seed is sampled unless excluded).
func dglOptions(ns linkpred.DGLNegative) Options {
	return Options{Mode: DGL, Request: sample.Request{Fanouts: []int{-1, -1}, Frontier: sample.FrontierAll, Seed: 3}, DGL: linkpred.DGLEdgeSampler{Negative: ns}}
}

func ints(tn mem.Tensor) []int64 { return slices.Clone(mem.Int64s(tn.Data)) }

// made is a batch as the tests read it.
type made struct {
	seeds   []int64
	link    [NumLinkFields][]int64
	shapes  [NumLinkFields][]int64
	sampled []int64 // edge ids of every block
	counts  [2]int
}

func makeBatch(t *testing.T, l *Linker, rt *sample.Runtime, items Items, inputID []int64, key uint64) (made, error) {
	t.Helper()
	b, res, counts, err := l.Make(context.Background(), rt, items, inputID, key, nil, 2)
	if err != nil {
		return made{}, err
	}
	defer rt.Recycle(res)
	defer b.Release()
	m := made{seeds: ints(b.Seeds), counts: counts}
	require.Len(t, b.Link, int(NumLinkFields))
	for f, tn := range b.Link {
		m.link[f], m.shapes[f] = ints(tn), slices.Clone(tn.Shape)
	}
	for _, blk := range b.Blocks {
		m.sampled = append(m.sampled, ints(blk.EdgeIDs)...)
	}
	return m, nil
}

// requireInvalid checks that err is an invalid-argument error (an
// errs.Error of no class).
func requireInvalid(t *testing.T, err error) {
	t.Helper()
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	require.Nil(t, e.Class, "%v", err)
}

func isEdge(u, v int64) bool {
	for i := range srcs {
		if srcs[i] == u && dsts[i] == v {
			return true
		}
	}
	return false
}

// A DGL batch: the seed nodes are distinct original ids, each pair of
// pair_graph is its seed edge's endpoints relabelled to positions among
// them, in the given order, with the edge ids and input ids beside it.
func TestDGLPairsRelabelled(t *testing.T) {
	p, rt := setup(t)
	l, err := New(p, nil, dglOptions(nil))
	require.NoError(t, err)
	require.Equal(t, DGL, l.Mode())
	eids := []int64{20, 3, 11, 3}
	m, err := makeBatch(t, l, rt, Items{EdgeIDs: eids}, []int64{7, 8, 9, 10}, 1)
	require.NoError(t, err)
	require.Equal(t, [2]int{4, 0}, m.counts)
	require.Equal(t, eids, m.link[LinkEdgeIDs])
	require.Equal(t, []int64{7, 8, 9, 10}, m.link[LinkInputID])
	require.Len(t, m.link[LinkPosSrc], len(eids))
	for i, e := range eids {
		require.Equal(t, srcs[e], m.seeds[m.link[LinkPosSrc][i]], "pair %d source", i)
		require.Equal(t, dsts[e], m.seeds[m.link[LinkPosDst][i]], "pair %d destination", i)
	}
	distinct := slices.Clone(m.seeds)
	slices.Sort(distinct)
	require.Len(t, slices.Compact(distinct), len(m.seeds), "seeds are distinct")
	require.Empty(t, m.link[LinkNegSrc])
	require.Empty(t, m.link[LinkPosOffsets], "untyped: no relation offsets")

	m, err = makeBatch(t, l, rt, Items{EdgeIDs: []int64{5, 6}}, nil, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 1}, m.link[LinkInputID], "no input ids: positions")
}

// DGL's negatives: PerSourceUniform keeps each positive's source, K per
// positive; GlobalUniform draws pairs that are not edges (nor self-loops
// when asked). A batch depends on its key alone: the same key, the same
// negatives, on any runtime thread count.
func TestDGLNegatives(t *testing.T) {
	p, rt := setup(t)
	eids := []int64{0, 4, 30}
	l, err := New(p, nil, dglOptions(linkpred.PerSourceUniform{K: 3}))
	require.NoError(t, err)
	m, err := makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, 42)
	require.NoError(t, err)
	require.Equal(t, [2]int{3, 9}, m.counts)
	require.Len(t, m.link[LinkNegSrc], 9)
	for i, e := range eids {
		for j := range 3 {
			k := i*3 + j
			require.Equal(t, srcs[e], m.seeds[m.link[LinkNegSrc][k]], "negative %d keeps its positive's source", k)
			require.Less(t, m.seeds[m.link[LinkNegDst][k]], int64(numNodes))
		}
	}
	again, err := makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, 42)
	require.NoError(t, err)
	require.Equal(t, m.link, again.link)
	require.Equal(t, m.seeds, again.seeds)
	differs := false
	for key := uint64(43); key < 53 && !differs; key++ {
		other, err := makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, key)
		require.NoError(t, err)
		differs = !slices.Equal(m.link[LinkNegDst], other.link[LinkNegDst]) || !slices.Equal(m.seeds, other.seeds)
	}
	require.True(t, differs, "other keys draw other negatives")

	l, err = New(p, nil, dglOptions(linkpred.GlobalUniform{K: 2, ExcludeSelfLoops: true}))
	require.NoError(t, err)
	m, err = makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, 7)
	require.NoError(t, err)
	require.NotEmpty(t, m.link[LinkNegSrc])
	for k := range m.link[LinkNegSrc] {
		u, v := m.seeds[m.link[LinkNegSrc][k]], m.seeds[m.link[LinkNegDst][k]]
		require.NotEqual(t, u, v, "negative %d is a self-loop", k)
		require.False(t, isEdge(u, v), "negative %d (%d, %d) is an edge", k, u, v)
	}
}

// Exclusion: without it every seed edge is sampled (fanout -1 into its
// destination); "self" excludes the seed edges, "reverse_id" their
// reverses too, and Request.ExcludeEdges applies to every batch.
func TestDGLExclusion(t *testing.T) {
	p, rt := setup(t)
	eids := []int64{1, 12, 22}
	reverses := []int64{1 + half, 12 + half, 22 - half}
	sampled := func(opt Options) []int64 {
		l, err := New(p, nil, opt)
		require.NoError(t, err)
		m, err := makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, 5)
		require.NoError(t, err)
		return m.sampled
	}
	opt := dglOptions(nil)
	all := sampled(opt)
	for _, e := range append(slices.Clone(eids), reverses...) {
		require.Contains(t, all, e, "without exclusion edge %d is sampled", e)
	}
	opt.DGL.Exclude = linkpred.ExcludeSelfEdges
	got := sampled(opt)
	for _, e := range eids {
		require.NotContains(t, got, e)
	}
	require.Contains(t, got, reverses[0])
	opt.DGL.Exclude, opt.DGL.Reverse = linkpred.ExcludeReverseEdges, linkpred.Reverse{Half: half}
	got = sampled(opt)
	for _, e := range append(slices.Clone(eids), reverses...) {
		require.NotContains(t, got, e)
	}
	opt = dglOptions(nil)
	opt.Request.ExcludeEdges = []int64{reverses[1]}
	got = sampled(opt)
	require.NotContains(t, got, reverses[1])
	require.Contains(t, got, eids[0])

	// A seed outside the reverse map is named.
	opt.DGL.Exclude, opt.DGL.Reverse = linkpred.ExcludeReverseEdges, linkpred.Reverse{Map: []int64{1, 0}}
	l, err := New(p, nil, opt)
	require.NoError(t, err)
	_, err = makeBatch(t, l, rt, Items{EdgeIDs: []int64{0, 5}}, nil, 5)
	requireInvalid(t, err)
	require.ErrorContains(t, err, "5")
}

// The exclude callback is called once per batch with the seed edge ids in
// the batch's order and its key, before sampling; the ids it returns are
// excluded on top of the others; its error, or an id that is not an edge,
// fails the batch naming it.
func TestExcludeFunc(t *testing.T) {
	p, rt := setup(t)
	type call struct {
		key    uint64
		ids    []int64
		maxOut int
	}
	var calls []call
	var ret []int64
	var fail error
	opt := dglOptions(nil)
	opt.DGL.Exclude = linkpred.ExcludeSelfEdges
	opt.ExcludeFunc = func(_ context.Context, key uint64, ids []int64, maxOut int) ([]int64, error) {
		calls = append(calls, call{key, slices.Clone(ids), maxOut})
		ids[0] = -5 // the callback's own copy
		return ret, fail
	}
	l, err := New(p, nil, opt)
	require.NoError(t, err)
	eids := []int64{2, 9}
	ret = []int64{2 + half, 9 + half, 2 + half}
	m, err := makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, 77)
	require.NoError(t, err)
	require.Equal(t, []call{{77, []int64{2, 9}, int(2 * (2*half + 2))}}, calls)
	require.Equal(t, eids, m.link[LinkEdgeIDs], "the batch keeps its seed edges")
	for _, e := range append(slices.Clone(eids), ret...) {
		require.NotContains(t, m.sampled, e)
	}

	ret = []int64{3, 2 * half}
	_, err = makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, 78)
	requireInvalid(t, err)
	require.ErrorContains(t, err, "exclude callback: its result[1] = 36 is not an edge id (the graph has 36 edges)")

	fail = errors.New("the callable raised")
	_, err = makeBatch(t, l, rt, Items{EdgeIDs: eids}, nil, 79)
	require.ErrorIs(t, err, fail)
	require.ErrorContains(t, err, "exclude callback: the callable raised")
	require.Len(t, calls, 3)

	// batchExclusion: what a batch excludes beyond the request, the
	// callback's included.
	fail, ret = nil, []int64{30}
	got, err := l.batchExclusion(context.Background(), eids, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 9, 30}, got)

	// PyG mode has no exclusion, and a rank's partial graph cannot check
	// what the callback names.
	opt.Mode = PyG
	_, err = New(p, nil, opt)
	require.ErrorContains(t, err, "an exclude callback applies to DGL-mode edge samplers only")
	opt.Mode = DGL
	idx, err := linkpred.NewEdgeIndex(p.Graph, 1)
	require.NoError(t, err)
	_, err = NewOver(p, nil, opt, idx)
	require.ErrorIs(t, err, errs.ErrNotSupported)
}

// A PyG batch: the seeds are the distinct ids of the pairs and their
// negatives, edge_label_index the positives (relabelled) then the binary
// negatives; triplet gives [NumPos, amount] negative destinations; a
// Source's batch has its items' positions as input ids.
func TestPyGBatches(t *testing.T) {
	p, rt := setup(t)
	pairs := linkpred.Pairs{Src: []int64{3, 0, 11}, Dst: []int64{3, 7, 2}} // any node pairs, edges or not
	opt := Options{Mode: PyG, Request: sample.Request{Fanouts: []int{2}, Seed: 4}, PyG: linkpred.PyGLinkSampler{Mode: linkpred.PyGBinaryMode, Amount: 2}}
	l, err := New(p, nil, opt)
	require.NoError(t, err)
	m, err := makeBatch(t, l, rt, Items{Pairs: pairs}, nil, 3)
	require.NoError(t, err)
	require.Equal(t, [2]int{3, 6}, m.counts)
	require.Len(t, m.link[LinkPosSrc], 9)
	for i := range pairs.Src {
		require.Equal(t, pairs.Src[i], m.seeds[m.link[LinkPosSrc][i]])
		require.Equal(t, pairs.Dst[i], m.seeds[m.link[LinkPosDst][i]])
	}
	require.True(t, slices.IsSorted(m.seeds), "PyG's seeds are the sorted distinct ids")
	require.Len(t, slices.Compact(slices.Clone(m.seeds)), len(m.seeds))
	require.Equal(t, []int64{0, 1, 2}, m.link[LinkInputID])

	opt.PyG = linkpred.PyGLinkSampler{Mode: linkpred.PyGTripletMode, Amount: 2}
	l, err = New(p, nil, opt)
	require.NoError(t, err)
	m, err = makeBatch(t, l, rt, Items{Pairs: pairs}, nil, 3)
	require.NoError(t, err)
	require.Equal(t, []int64{3, 2}, m.shapes[LinkDstNegIndex])
	for i := range pairs.Src {
		require.Equal(t, pairs.Src[i], m.seeds[m.link[LinkSrcIndex][i]])
		require.Equal(t, pairs.Dst[i], m.seeds[m.link[LinkDstPosIndex][i]])
	}
	require.Empty(t, m.link[LinkNegSrc])

	src, err := l.Source(rt, Items{Pairs: pairs})
	require.NoError(t, err)
	require.Equal(t, 3, src.NumItems())
	require.Same(t, p, src.Partitioned())
	b, res, err := src.Make(context.Background(), []int64{2, 0}, 9, nil)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 0}, ints(b.Link[LinkInputID]))
	seeds := ints(b.Seeds)
	idx := ints(b.Link[LinkSrcIndex])
	require.Equal(t, []int64{11, 3}, []int64{seeds[idx[0]], seeds[idx[1]]})
	b.Release()
	src.Recycle(res)
}

// Options and items that do not fit are refused, naming the problem.
func TestErrors(t *testing.T) {
	p, rt := setup(t)
	bad := []struct {
		opt  Options
		want string
		is   error // nil: an invalid argument
	}{
		{Options{Mode: 0, Request: sample.Request{Fanouts: []int{1}}}, "link mode = 0, must be DGL (1) or PyG (2)", nil},
		{Options{Mode: DGL, Request: sample.Request{Fanouts: []int{1}, Disjoint: true, Frontier: sample.FrontierNew}}, "DGL-mode edge samplers do not support disjoint sampling", nil},
		{Options{Mode: DGL, Request: sample.Request{Fanouts: []int{1}, Temporal: sample.TemporalNode}}, "temporally in PyG mode only", errs.ErrNotSupported},
		{Options{Mode: DGL, Request: sample.Request{Fanouts: []int{-3}}}, "", nil},
		{Options{Mode: DGL, Request: sample.Request{Fanouts: []int{1}}, DGL: linkpred.DGLEdgeSampler{Negative: linkpred.PerSourceUniform{K: 0}}}, "", nil},
		{Options{Mode: PyG, Request: sample.Request{Fanouts: []int{1}}, PyG: linkpred.PyGLinkSampler{Mode: linkpred.PyGBinaryMode}}, "amount = 0", nil},
	}
	for i, c := range bad {
		_, err := New(p, nil, c.opt)
		if c.is == nil {
			requireInvalid(t, err)
		} else {
			require.ErrorIs(t, err, c.is, "case %d", i)
		}
		require.ErrorContains(t, err, c.want, "case %d", i)
	}
	_, err := New(nil, nil, dglOptions(nil))
	require.ErrorContains(t, err, "partition (or its graph) is nil")
	_, err = NewOver(p, nil, dglOptions(nil), nil)
	require.ErrorContains(t, err, "edge lookup is nil")
	idx, err := linkpred.NewEdgeIndex(p.Graph, 1)
	require.NoError(t, err)
	_, err = NewOver(p, nil, dglOptions(linkpred.GlobalUniform{K: 1}), idx) // not an EdgeAsker
	require.ErrorIs(t, err, errs.ErrNotSupported)

	dgl, err := New(p, nil, dglOptions(nil))
	require.NoError(t, err)
	require.ErrorContains(t, dgl.Check(Items{Pairs: linkpred.Pairs{Src: []int64{0}, Dst: []int64{1}}}), "takes seed edge ids, not pairs")
	require.ErrorContains(t, dgl.Check(Items{EdgeIDs: []int64{0, 2 * half}}), "36")
	require.NoError(t, dgl.Check(Items{EdgeIDs: []int64{0, 2*half - 1}}))
	_, err = dgl.Source(rt, Items{EdgeIDs: []int64{-1}})
	require.Error(t, err)
	_, err = makeBatch(t, dgl, rt, Items{EdgeIDs: []int64{}}, nil, 0)
	require.ErrorContains(t, err, "seed edges are empty")

	pyg, err := New(p, nil, Options{Mode: PyG, Request: sample.Request{Fanouts: []int{1}}})
	require.NoError(t, err)
	for _, c := range []struct {
		items Items
		want  string
	}{
		{Items{EdgeIDs: []int64{0}}, "takes seed pairs, not edge ids"},
		{Items{Pairs: linkpred.Pairs{Src: []int64{0, 1}, Dst: []int64{1}}}, "seed pairs: 2 sources and 1 destinations"},
		{Items{Pairs: linkpred.Pairs{Src: []int64{0, 1}, Dst: []int64{1, numNodes}}}, "seed pair destinations[1] = 12 is out of range [0, 12)"},
		{Items{Pairs: linkpred.Pairs{Src: []int64{-1}, Dst: []int64{1}}}, "seed pair sources[0] = -1 is out of range"},
		{Items{Pairs: linkpred.Pairs{Src: []int64{0}, Dst: []int64{1}}, Times: []int64{5}}, "seed times are given but the sampling is not temporal"},
	} {
		require.ErrorContains(t, pyg.Check(c.items), c.want)
	}
	require.NoError(t, pyg.Check(Items{Pairs: linkpred.Pairs{Src: []int64{0}, Dst: []int64{11}}}))

	// A temporal PyG linker wants one time per pair.
	temporal, err := New(p, nil, Options{Mode: PyG, Request: sample.Request{Fanouts: []int{1}, Temporal: sample.TemporalNode, Frontier: sample.FrontierNew}})
	require.NoError(t, err)
	require.ErrorContains(t, temporal.Check(Items{Pairs: linkpred.Pairs{Src: []int64{0}, Dst: []int64{1}}}), "one time per seed pair (got 0 times for 1 pairs)")

	// A context done stops the callback's batch with its error.
	opt := dglOptions(nil)
	opt.ExcludeFunc = func(ctx context.Context, _ uint64, _ []int64, _ int) ([]int64, error) { return nil, ctx.Err() }
	l, err := New(p, nil, opt)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err = l.Make(ctx, rt, Items{EdgeIDs: []int64{1}}, nil, 0, nil, 1)
	require.ErrorIs(t, err, context.Canceled)
}

var _ pipeline.BatchFunc = Options{}.ExcludeFunc

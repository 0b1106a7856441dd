package sample

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/stretchr/testify/require"
)

// Typed (RelationFanouts), disjoint and temporal sampling: golden traces
// over several layouts and thread counts, the structure of the answers,
// the distributions, and the errors.

// heteroFixture is a typed graph with times, built from goldenRand.
type heteroFixture struct {
	g        *graph.CSC
	types    *graph.Types
	nodeTime []int64
	edgeTime []int64
}

// heteroRelations are the fixture's relations (src type, dst type) over 3
// node types of 16 nodes each.
var heteroRelations = [][2]int32{{0, 1}, {1, 1}, {2, 1}, {1, 0}, {0, 2}, {2, 2}}

func heteroGraph(t testing.TB) heteroFixture {
	r := &goldenRand{s: 20261123}
	nodeOff := []int64{0, 16, 32, 48}
	var src, dst []int64
	edgeOff := []int64{0}
	for _, rel := range heteroRelations {
		s, d := rel[0], rel[1]
		for range 40 + r.intn(40) {
			src = append(src, nodeOff[s]+int64(r.intn(16)))
			dst = append(dst, nodeOff[d]+int64(r.intn(16)))
		}
		edgeOff = append(edgeOff, int64(len(src)))
	}
	w := make([]float32, len(src))
	for i := range w {
		if r.intn(7) != 0 {
			w[i] = float32(1+r.intn(100)) / 10
		}
	}
	g, err := graph.FromCOO(src, dst, w, graph.COOOptions{NumNodes: 48})
	require.NoError(t, err)
	g = g.Wide()
	types := &graph.Types{NodeOffsets: nodeOff, EdgeOffsets: edgeOff}
	for _, rel := range heteroRelations {
		types.RelSrc = append(types.RelSrc, rel[0])
		types.RelDst = append(types.RelDst, rel[1])
	}
	require.NoError(t, types.Validate(g, nil))
	f := heteroFixture{g: g, types: types, nodeTime: make([]int64, 48), edgeTime: make([]int64, len(src))}
	for i := range f.nodeTime {
		f.nodeTime[i] = int64(r.intn(100))
	}
	for i := range f.edgeTime {
		f.edgeTime[i] = int64(r.intn(100))
	}
	return f
}

func (f heteroFixture) runtime(t testing.TB, p *partition.Partitioned, threads int) *Runtime {
	t.Helper()
	rt, err := NewRuntime(p, comm.NewLocal(p.NumPatches()), RuntimeOptions{
		Threads: threads, Types: f.types, NodeTime: f.nodeTime, EdgeTime: f.edgeTime,
	})
	require.NoError(t, err)
	return rt
}

// heteroLayouts are the fixture's partitions: identity, 2 ranges, 3
// renumbered patches.
func (f heteroFixture) layouts(t testing.TB) map[string]*partition.Partitioned {
	assign := make([]int, f.g.NumNodes)
	for v := range assign {
		assign[v] = (v * 7) % 3
	}
	parts := map[string]*partition.Partitioned{
		"1 patch":   rangePartition(f.g, 1),
		"2 ranges":  rangePartition(f.g, 2),
		"3 patches": renumbered(f.g, assign, 3),
	}
	for name, p := range parts {
		require.NoError(t, f.types.Validate(p.Graph, p.NewToOld), name)
	}
	return parts
}

// heteroBatches returns 4 batches (seeds may repeat within one), their
// keys and one time per seed.
func heteroBatches() (batches, times [][]int64, keys []uint64) {
	r := &goldenRand{s: 4242}
	for _, k := range []int{5, 1, 7, 3} {
		var b, ts []int64
		for range k {
			b = append(b, int64(r.intn(48)))
			ts = append(ts, int64(r.intn(120)))
		}
		batches, times, keys = append(batches, b), append(times, ts), append(keys, r.next())
	}
	// A repeated seed with two different times.
	batches[2][5], times[2][5] = batches[2][1], times[2][1]/2
	return batches, times, keys
}

// distinctBatches drops repeated seeds (for requests that are not
// disjoint), keeping the first.
func distinctBatches(batches [][]int64) [][]int64 {
	out := make([][]int64, len(batches))
	for i, b := range batches {
		seen := map[int64]bool{}
		for _, v := range b {
			if !seen[v] {
				seen[v] = true
				out[i] = append(out[i], v)
			}
		}
	}
	return out
}

type heteroCase struct {
	name string
	req  Request
}

func heteroCases() []heteroCase {
	rf := [][]int{{2, 1, 3, 2, 1, 2}, {1, -1, 0, 2, 1, 1}}
	excl := []int64{3, 17, 40, 41, 42, 90, 130, 131, 200, 250}
	return []heteroCase{
		{"typed-uniform", Request{RelationFanouts: rf, Seed: 31}},
		{"typed-replace-new", Request{RelationFanouts: rf, Replace: true, Frontier: FrontierNew, Seed: 32}},
		{"typed-biased-exclude", Request{RelationFanouts: rf, Biased: true, ExcludeEdges: excl, Seed: 33}},
		{"typed-labor", Request{RelationFanouts: [][]int{{2, 2, 2, 1, 1, 1}, {1, 1, 1, 3, 3, 3}}, Scheme: Labor, Seed: 34}},
		{"disjoint-uniform", Request{Fanouts: []int{3, 2}, Frontier: FrontierNew, Disjoint: true, Seed: 35}},
		{"disjoint-typed-biased", Request{RelationFanouts: rf, Frontier: FrontierNew, Disjoint: true, Biased: true, Seed: 36}},
		{"temporal-node", Request{Fanouts: []int{3, 2}, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalNode, Seed: 37}},
		{"temporal-edge-last", Request{Fanouts: []int{3, 2}, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalEdge, TemporalStrategy: TemporalLast, Seed: 38}},
		{"temporal-node-typed-labor", Request{RelationFanouts: rf, Scheme: Labor, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalNode, Seed: 39}},
		{"temporal-edge-typed-replace", Request{RelationFanouts: rf, Replace: true, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalEdge, Seed: 40}},
	}
}

// heteroRun samples c on p and returns the batches in original ids, with
// Batch (disjoint) folded into the golden record as the seeds' positions.
func heteroRun(t *testing.T, f heteroFixture, p *partition.Partitioned, threads int, c heteroCase) []goldenBatch {
	t.Helper()
	batches, times, keys := heteroBatches()
	if !c.req.Disjoint {
		batches = distinctBatches(batches)
	}
	if c.req.Temporal == TemporalNone {
		times = nil
	}
	rt := f.runtime(t, p, threads)
	in := toInternal(p, batches)
	res, err := rt.SampleTimed(t.Context(), c.req, in, times, keys)
	require.NoError(t, err)
	s, err := rt.Bind(c.req)
	require.NoError(t, err)
	again, err := s.SampleBatchesTimed(t.Context(), in, times, keys)
	require.NoError(t, err)
	require.Equal(t, res, again, "a Sampler bound to the request samples the same")
	out := make([]goldenBatch, len(batches))
	for i, r := range toOriginal(p, res) {
		out[i] = goldenBatch{Seeds: batches[i], Key: keys[i], Nodes: r.Nodes, HopCounts: r.HopCounts}
		if c.req.Disjoint {
			require.Len(t, r.Batch, len(r.Nodes))
			out[i].Batch = r.Batch
		} else {
			require.Nil(t, r.Batch)
		}
		for _, b := range r.Blocks {
			out[i].Blocks = append(out[i].Blocks, goldenBlock{
				NumDst: b.NumDst, NumSrc: b.NumSrc, DstOffset: b.DstOffset,
				Indptr: b.Indptr, Indices: b.Indices, EdgeIDs: b.EdgeIDs,
			})
		}
		checkHetero(t, f, c.req, batches[i], times, i, r)
	}
	return out
}

// TestHeteroGolden pins typed, disjoint and temporal batches, which must be
// the same on every layout and thread count.
func TestHeteroGolden(t *testing.T) {
	withGrains(t, 3, 2)
	f := heteroGraph(t)
	parts := f.layouts(t)
	dir := filepath.Join("testdata", "golden")
	for _, c := range heteroCases() {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".json")
			if *updateGolden {
				got := encodeGolden(t, heteroRun(t, f, parts["1 patch"], 1, c))
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "missing golden trace: run with -update")
			for name, part := range parts {
				for _, threads := range []int{1, 3} {
					got := encodeGolden(t, heteroRun(t, f, part, threads, c))
					require.Equal(t, string(want), string(got), "%s, %d threads: %s differs from the golden trace", name, threads, path)
				}
			}
		})
	}
}

// checkHetero checks the structure of r (original ids), the result of
// batch b of req: per-relation counts and segments, temporal cutoffs and
// "last", disjoint subgraphs.
func checkHetero(t *testing.T, f heteroFixture, req Request, seeds []int64, times [][]int64, b int, r *Result) {
	t.Helper()
	g, ty := f.g, f.types
	type einfo struct{ src, dst int64 }
	byID := map[int64]einfo{}
	for v := int64(0); v < g.NumNodes; v++ {
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			byID[g.EdgeID(p)] = einfo{g.Source(p), v}
		}
	}
	weight := map[int64]float32{}
	if g.Weights != nil {
		for p := int64(0); p < g.NumEdges(); p++ {
			weight[g.EdgeID(p)] = g.Weights[p]
		}
	}
	excluded := map[int64]bool{}
	for _, e := range req.ExcludeEdges {
		excluded[e] = true
	}
	sub := func(i int64) int64 {
		if r.Batch == nil {
			return 0
		}
		return r.Batch[i]
	}
	cutOf := func(i int64) int64 {
		if times == nil {
			return 0
		}
		return times[b][sub(i)]
	}
	candidate := func(e int64, cut int64) bool {
		if excluded[e] {
			return false
		}
		if req.Biased && weight[e] == 0 {
			return false
		}
		switch req.Temporal {
		case TemporalNode:
			return f.nodeTime[byID[e].src] <= cut
		case TemporalEdge:
			return f.edgeTime[e] <= cut
		}
		return true
	}
	require.Equal(t, seeds, r.Nodes[:len(seeds)])
	for h, blk := range r.Blocks {
		for i := int64(0); i < blk.NumDst; i++ {
			dpos := blk.DstOffset + i
			v := r.Nodes[dpos]
			cut := cutOf(dpos)
			edges := blk.EdgeIDs[blk.Indptr[i]:blk.Indptr[i+1]]
			for k, e := range edges {
				u := r.Nodes[blk.Indices[blk.Indptr[i]+int64(k)]]
				require.Equal(t, einfo{u, v}, byID[e], "hop %d: edge %d is %d -> %d", h, e, u, v)
				require.True(t, candidate(e, cut), "hop %d: edge %d into %d is not a candidate (cutoff %d)", h, e, v, cut)
				if r.Batch != nil {
					require.Equal(t, sub(dpos), sub(blk.Indices[blk.Indptr[i]+int64(k)]), "a neighbour joins its destination's subgraph")
				}
			}
			// Per segment (relation, or the whole list): its candidates and
			// how many of them were taken.
			type seg struct {
				f    int
				cand []int64
			}
			var segs []seg
			if req.RelationFanouts != nil {
				for rel := range ty.NumRelations() {
					if ty.RelDst[rel] != ty.NodeType(v) {
						continue
					}
					s := seg{f: req.RelationFanouts[h][rel]}
					for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
						if e := g.EdgeID(p); ty.Relation(e) == int32(rel) && candidate(e, cut) {
							s.cand = append(s.cand, e)
						}
					}
					segs = append(segs, s)
				}
			} else {
				s := seg{f: req.Fanouts[h]}
				for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
					if e := g.EdgeID(p); candidate(e, cut) {
						s.cand = append(s.cand, e)
					}
				}
				segs = append(segs, s)
			}
			rest := edges
			for _, s := range segs {
				var n int
				for n < len(rest) && slices.Contains(s.cand, rest[n]) {
					n++
				}
				got := rest[:n]
				rest = rest[n:]
				d := len(s.cand)
				switch {
				case req.Scheme == Labor:
					require.LessOrEqual(t, n, d)
				case s.f < 0:
					require.True(t, slices.Equal(s.cand, got), "fan-out -1 takes every candidate in order: %v, got %v", s.cand, got)
				case req.Replace:
					if d == 0 {
						require.Zero(t, n)
					} else {
						require.Equal(t, s.f, n)
					}
				default:
					require.Equal(t, min(s.f, d), n, "hop %d node %d: min(fan-out, candidates)", h, v)
					if req.TemporalStrategy == TemporalLast {
						want := lastByTime(s.cand, n, func(e int64) int64 { return f.edgeTime[e] })
						require.True(t, slices.Equal(want, got), "last: want %v, got %v", want, got)
					}
				}
			}
			require.Empty(t, rest, "hop %d node %d: the sampled edges are the segments' in relation order", h, v)
		}
	}
}

// lastByTime returns the k entries of cand (list order) with the largest
// times, ties to the later entry, in list order.
func lastByTime(cand []int64, k int, time func(int64) int64) []int64 {
	idx := make([]int, len(cand))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(time(cand[b]), time(cand[a])); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	idx = idx[:k]
	slices.Sort(idx)
	out := make([]int64, k)
	for i, j := range idx {
		out[i] = cand[j]
	}
	return out
}

// TestDisjointIsConcatenatedSubgraphs checks the order of disjoint batches
// against the per-seed samples concatenated as PyG orders them (and as
// graphferry's pyg.py _concat_disjoint does): hop by hop, seed by seed.
// With fan-out -1 the draws play no part, so each subgraph equals its
// seed's own sample.
func TestDisjointIsConcatenatedSubgraphs(t *testing.T) {
	f := heteroGraph(t)
	for name, p := range f.layouts(t) {
		rt := f.runtime(t, p, 2)
		seeds := []int64{3, 20, 3, 47, 0, 33}
		for _, typed := range []bool{false, true} {
			req := Request{Fanouts: []int{-1, -1}, Frontier: FrontierNew, Disjoint: true}
			if typed {
				req = Request{RelationFanouts: [][]int{{-1, 0, -1, -1, -1, 0}, {-1, -1, -1, 0, -1, -1}}, Frontier: FrontierNew, Disjoint: true}
			}
			got, err := rt.Sample(context.Background(), req, toInternal(p, [][]int64{seeds}), []uint64{7})
			require.NoError(t, err)
			per := Request{Fanouts: req.Fanouts, RelationFanouts: req.RelationFanouts, Frontier: FrontierNew}
			var subs []*Result
			for _, s := range seeds {
				res, err := rt.Sample(context.Background(), per, toInternal(p, [][]int64{{s}}), []uint64{9})
				require.NoError(t, err)
				subs = append(subs, toOriginal(p, res)[0])
			}
			want := concatDisjoint(subs)
			gotO := toOriginal(p, got)[0]
			require.Equal(t, want.Nodes, gotO.Nodes, "%s typed=%v", name, typed)
			require.Equal(t, want.Batch, gotO.Batch)
			require.Equal(t, want.HopCounts, gotO.HopCounts)
			for h := range want.Blocks {
				require.Equal(t, want.Blocks[h], gotO.Blocks[h], "%s typed=%v hop %d", name, typed, h)
			}
		}
	}
}

// concatDisjoint concatenates per-seed FrontierNew results hop by hop,
// seed by seed (a Go rendering of pyg.py's _concat_disjoint).
func concatDisjoint(subs []*Result) *Result {
	levels := len(subs[0].HopCounts)
	out := &Result{HopCounts: make([]int64, levels)}
	pos := make([][]int64, len(subs)) // per seed: local position -> global
	for i := range subs {
		pos[i] = make([]int64, len(subs[i].Nodes))
	}
	for l := 0; l < levels; l++ {
		for i, s := range subs {
			var start int64
			for _, c := range s.HopCounts[:l] {
				start += c
			}
			for k := start; k < start+s.HopCounts[l]; k++ {
				pos[i][k] = int64(len(out.Nodes))
				out.Nodes = append(out.Nodes, s.Nodes[k])
				out.Batch = append(out.Batch, int64(i))
			}
			out.HopCounts[l] += s.HopCounts[l]
		}
	}
	var dstOff int64
	for h := 0; h < levels-1; h++ {
		blk := Block{Indptr: []int64{0}, Indices: []int64{}, EdgeIDs: []int64{}, DstOffset: dstOff}
		for i, s := range subs {
			b := s.Blocks[h]
			for d := int64(0); d < b.NumDst; d++ {
				for k := b.Indptr[d]; k < b.Indptr[d+1]; k++ {
					blk.Indices = append(blk.Indices, pos[i][b.Indices[k]])
					blk.EdgeIDs = append(blk.EdgeIDs, b.EdgeIDs[k])
				}
				blk.Indptr = append(blk.Indptr, int64(len(blk.Indices)))
			}
			blk.NumDst += b.NumDst
		}
		dstOff += out.HopCounts[h]
		var src int64
		for _, c := range out.HopCounts[:h+2] {
			src += c
		}
		blk.NumSrc = src
		out.Blocks = append(out.Blocks, blk)
	}
	return out
}

// TestRelationSegmentUniform: a destination with three relations samples
// each relation's fan-out uniformly within that relation's segment, from
// streams independent of the other relations.
func TestRelationSegmentUniform(t *testing.T) {
	// Node 0 (type 0) has in-edges of relation 0 (ids 0..5, from type 1)
	// and relation 1 (ids 6..9, from type 2); relation 2 goes into type 1.
	var src, dst []int64
	for i := range 6 {
		src, dst = append(src, int64(1+i)), append(dst, 0)
	}
	for i := range 4 {
		src, dst = append(src, int64(7+i)), append(dst, 0)
	}
	src, dst = append(src, 8), append(dst, 1)
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: 11})
	require.NoError(t, err)
	types := &graph.Types{NodeOffsets: []int64{0, 1, 7, 11}, EdgeOffsets: []int64{0, 6, 10, 11}, RelSrc: []int32{1, 2, 2}, RelDst: []int32{0, 0, 1}}
	require.NoError(t, types.Validate(g, nil))
	p := rangePartition(g, 1)
	rt, err := NewRuntime(p, comm.NewLocal(1), RuntimeOptions{Types: types})
	require.NoError(t, err)
	const trials = 6000
	pairs0 := map[[2]int64]int{}
	count1 := make([]int, 4)
	joint := map[[2]int64]int{} // (first edge of rel 0, edge of rel 1)
	batches := make([][]int64, trials)
	keys := make([]uint64, trials)
	for i := range batches {
		batches[i], keys[i] = []int64{0}, uint64(i)
	}
	res, err := rt.Sample(context.Background(), Request{RelationFanouts: [][]int{{2, 1, 5}}, Seed: 3}, batches, keys)
	require.NoError(t, err)
	for _, r := range res {
		e := r.Blocks[0].EdgeIDs
		require.Len(t, e, 3)
		require.Less(t, e[0], e[1])
		require.Less(t, e[1], int64(6))
		require.GreaterOrEqual(t, e[2], int64(6))
		pairs0[[2]int64{e[0], e[1]}]++
		count1[e[2]-6]++
		joint[[2]int64{e[0], e[2]}]++
	}
	var obs []int
	var prob []float64
	for a := int64(0); a < 6; a++ {
		for b := a + 1; b < 6; b++ {
			obs = append(obs, pairs0[[2]int64{a, b}])
			prob = append(prob, 1.0/15)
		}
	}
	checkGOF(t, "relation 0: 2-subsets of its 6 edges", obs, prob)
	checkGOF(t, "relation 1: one of its 4 edges", count1, []float64{0.25, 0.25, 0.25, 0.25})
	// Independence: the first pick of relation 0 (P(a) = (5-a)/15) and
	// relation 1's pick are independent.
	obs, prob = nil, nil
	for a := int64(0); a < 5; a++ {
		for c := int64(6); c < 10; c++ {
			obs = append(obs, joint[[2]int64{a, c}])
			prob = append(prob, float64(5-a)/15/4)
		}
	}
	checkGOF(t, "relations sample independently", obs, prob)
}

// TestTemporalUniformStats: a temporal task draws uniformly among the
// candidates not later than its seed time, and never a later one.
func TestTemporalUniformStats(t *testing.T) {
	g := starGraph(8) // node 0 has in-neighbours 1..8, edge ids 0..7
	edgeTime := []int64{5, 1, 9, 3, 3, 7, 2, 8}
	nodeTime := make([]int64, g.NumNodes)
	for u := int64(1); u < g.NumNodes; u++ {
		nodeTime[u] = edgeTime[u-1]
	}
	p := rangePartition(g, 1)
	rt, err := NewRuntime(p, comm.NewLocal(1), RuntimeOptions{NodeTime: nodeTime, EdgeTime: edgeTime})
	require.NoError(t, err)
	const trials = 4000
	for _, temporal := range []Temporal{TemporalNode, TemporalEdge} {
		seeds := make([]int64, trials)
		times := make([]int64, trials)
		for i := range times {
			times[i] = 5
		}
		req := Request{Fanouts: []int{2}, Frontier: FrontierNew, Disjoint: true, Temporal: temporal, Seed: 9}
		res, err := rt.SampleTimed(context.Background(), req, [][]int64{seeds}, [][]int64{times}, []uint64{1})
		require.NoError(t, err)
		blk := res[0].Blocks[0]
		cand := []int64{0, 1, 3, 4, 6} // times <= 5
		pairs := map[[2]int64]int{}
		for i := 0; i < trials; i++ {
			e := blk.EdgeIDs[blk.Indptr[i]:blk.Indptr[i+1]]
			require.Len(t, e, 2)
			require.Contains(t, cand, e[0])
			require.Contains(t, cand, e[1])
			pairs[[2]int64{e[0], e[1]}]++
		}
		var obs []int
		var prob []float64
		for a := range cand {
			for b := a + 1; b < len(cand); b++ {
				obs = append(obs, pairs[[2]int64{cand[a], cand[b]}])
				prob = append(prob, 0.1)
			}
		}
		checkGOF(t, "temporal: 2-subsets of the 5 candidates", obs, prob)
		// "last": the 2 latest candidates (times 5 and the later 3), every time.
		req.TemporalStrategy = TemporalLast
		res, err = rt.SampleTimed(context.Background(), req, [][]int64{seeds[:3]}, [][]int64{times[:3]}, []uint64{1})
		require.NoError(t, err)
		require.Equal(t, []int64{0, 4, 0, 4, 0, 4}, res[0].Blocks[0].EdgeIDs, "ties go to the later in-edge")
	}
}

func TestHeteroErrors(t *testing.T) {
	f := heteroGraph(t)
	p := rangePartition(f.g, 1)
	typed := f.runtime(t, p, 1)
	untyped := mustRuntime(t, p, 1)
	rf := [][]int{{1, 1, 1, 1, 1, 1}}
	seeds := [][]int64{{1, 2}}
	keys := []uint64{0}
	times := [][]int64{{5, 6}}
	cases := []struct {
		name string
		rt   *Runtime
		req  Request
		tm   [][]int64
		msg  string
	}{
		{"untyped graph", untyped, Request{RelationFanouts: rf}, nil, "needs a typed graph"},
		{"relation count", typed, Request{RelationFanouts: [][]int{{1, 1}}}, nil, "has 2 fan-outs per hop, but the graph has 6 relations"},
		{"ragged rows", typed, Request{RelationFanouts: [][]int{{1, 1, 1, 1, 1, 1}, {1}}}, nil, "RelationFanouts[1] has 1 entries"},
		{"bad relation fan-out", typed, Request{RelationFanouts: [][]int{{1, 1, -2, 1, 1, 1}}}, nil, "RelationFanouts[0][2] = -2"},
		{"layer-wise", typed, Request{RelationFanouts: rf, Scheme: LayerWise}, nil, "not valid with Request.Scheme = LayerWise"},
		{"disjoint needs new", typed, Request{Fanouts: []int{1}, Disjoint: true}, nil, "needs Request.Frontier = FrontierNew"},
		{"disjoint layer-wise", typed, Request{Fanouts: []int{1}, Disjoint: true, Frontier: FrontierNew, Scheme: LayerWise}, nil, "Disjoint is not valid"},
		{"temporal needs disjoint", typed, Request{Fanouts: []int{1}, Temporal: TemporalNode}, times, "needs Request.Disjoint"},
		{"temporal needs times", untyped, Request{Fanouts: []int{1}, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalEdge}, times, "needs edge times"},
		{"seed times missing", typed, Request{Fanouts: []int{1}, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalNode}, nil, "needs seed times"},
		{"seed times short", typed, Request{Fanouts: []int{1}, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalNode}, [][]int64{{1}}, "2 seeds and 1 seed times"},
		{"last with replace", typed, Request{Fanouts: []int{1}, Frontier: FrontierNew, Disjoint: true, Temporal: TemporalNode, TemporalStrategy: TemporalLast, Replace: true}, times, "TemporalLast is only valid"},
		{"last without temporal", typed, Request{Fanouts: []int{1}, TemporalStrategy: TemporalLast}, nil, "needs Request.Temporal"},
		{"bad temporal", typed, Request{Fanouts: []int{1}, Temporal: 7}, nil, "Temporal = 7 is invalid"},
	}
	for _, c := range cases {
		_, err := c.rt.SampleTimed(context.Background(), c.req, seeds, c.tm, keys)
		require.ErrorContains(t, err, c.msg, c.name)
	}
	// Repeated seeds: an error unless disjoint.
	_, err := typed.Sample(context.Background(), Request{Fanouts: []int{1}}, [][]int64{{4, 4}}, keys)
	require.ErrorContains(t, err, "duplicates")
	_, err = typed.Sample(context.Background(), Request{Fanouts: []int{1}, Frontier: FrontierNew, Disjoint: true}, [][]int64{{4, 4}}, keys)
	require.NoError(t, err)
	// Runtime options.
	bad := []struct {
		opt RuntimeOptions
		msg string
	}{
		{RuntimeOptions{Types: &graph.Types{NodeOffsets: []int64{0, 47}, EdgeOffsets: f.types.EdgeOffsets, RelSrc: f.types.RelSrc, RelDst: f.types.RelDst}}, "node_offsets[1] = 47"},
		{RuntimeOptions{NodeTime: make([]int64, 3)}, "NodeTime) = 3"},
		{RuntimeOptions{EdgeTime: make([]int64, 3)}, "EdgeTime has 3 entries"},
	}
	for _, b := range bad {
		_, err := NewRuntime(p, comm.NewLocal(1), b.opt)
		require.ErrorContains(t, err, b.msg)
	}
}

// FuzzHetero samples a small typed graph decoded from the input (node type
// ranges, relations, edges given relation by relation, times) with
// per-relation fan-outs, and optionally disjoint, temporal and labor
// requests chosen by the input; it checks the structure of every batch
// (checkHetero) and that a renumbered layout samples the same.
func FuzzHetero(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 3, 4, 2, 0, 5, 0, 2, 2, 1, 4, 4}, uint8(9), uint8(2), uint8(3), uint8(0x15), uint64(7))
	f.Add([]byte{3, 3, 3, 1, 1, 1, 0, 0, 0}, uint8(5), uint8(1), uint8(1), uint8(0x2a), uint64(1))
	f.Add([]byte{}, uint8(2), uint8(0), uint8(0), uint8(0xff), uint64(0))
	f.Fuzz(func(t *testing.T, eb []byte, n8, t8, r8, flags uint8, seed uint64) {
		n := int64(n8%20) + 2
		nt := 1 + int(t8%3)
		nodeOff := make([]int64, nt+1)
		for i := 1; i < nt; i++ {
			nodeOff[i] = nodeOff[i-1] + (n-nodeOff[i-1])*int64(1+i)/int64(nt+2)
		}
		nodeOff[nt] = n
		nr := 1 + int(r8%4)
		rng := &goldenRand{s: seed}
		ty := &graph.Types{NodeOffsets: nodeOff}
		for range nr {
			ty.RelSrc = append(ty.RelSrc, int32(rng.intn(nt)))
			ty.RelDst = append(ty.RelDst, int32(rng.intn(nt)))
		}
		if len(eb) > 300 {
			eb = eb[:300]
		}
		byRel := make([][][2]int64, nr)
		for i := 0; i+2 < len(eb); i += 3 {
			r := int(eb[i]) % nr
			s, d := ty.RelSrc[r], ty.RelDst[r]
			ss, ds := nodeOff[s+1]-nodeOff[s], nodeOff[d+1]-nodeOff[d]
			if ss == 0 || ds == 0 {
				continue
			}
			byRel[r] = append(byRel[r], [2]int64{nodeOff[s] + int64(eb[i+1])%ss, nodeOff[d] + int64(eb[i+2])%ds})
		}
		var src, dst []int64
		ty.EdgeOffsets = []int64{0}
		for _, es := range byRel {
			for _, e := range es {
				src, dst = append(src, e[0]), append(dst, e[1])
			}
			ty.EdgeOffsets = append(ty.EdgeOffsets, int64(len(src)))
		}
		g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: n})
		require.NoError(t, err)
		g = g.Wide()
		if g.EdgeIDs == nil { // checkHetero reads ids from EdgeIDs
			g.EdgeIDs = make([]int64, g.NumEdges())
			for i := range g.EdgeIDs {
				g.EdgeIDs[i] = int64(i)
			}
		}
		require.NoError(t, ty.Validate(g, nil))
		fx := heteroFixture{g: g, types: ty, nodeTime: make([]int64, n), edgeTime: make([]int64, len(src))}
		for i := range fx.nodeTime {
			fx.nodeTime[i] = int64(rng.intn(10))
		}
		for i := range fx.edgeTime {
			fx.edgeTime[i] = int64(rng.intn(10))
		}
		hops := 1 + int(flags%3)
		req := Request{Seed: seed, Replace: flags&4 != 0}
		for range hops {
			row := make([]int, nr)
			for r := range row {
				row[r] = rng.intn(5) - 1
			}
			req.RelationFanouts = append(req.RelationFanouts, row)
		}
		if flags&8 != 0 {
			req.Scheme, req.Replace = Labor, false
		}
		if flags&16 != 0 {
			req.Disjoint, req.Frontier = true, FrontierNew
			switch flags >> 5 & 3 {
			case 1:
				req.Temporal = TemporalNode
			case 2:
				req.Temporal = TemporalEdge
			case 3:
				if req.Scheme == NodeWise && !req.Replace {
					req.Temporal, req.TemporalStrategy = TemporalEdge, TemporalLast
				}
			}
		}
		var batch []int64
		var times []int64
		for range 1 + rng.intn(5) {
			batch = append(batch, int64(rng.intn(int(n))))
			times = append(times, int64(rng.intn(10)))
		}
		batches := [][]int64{batch}
		if !req.Disjoint {
			batches = distinctBatches(batches)
		}
		var tl [][]int64
		if req.Temporal != TemporalNone {
			tl = [][]int64{times}
		}
		keys := []uint64{seed ^ 0x55}
		p1 := rangePartition(g, 1)
		ref, err := fx.runtime(t, p1, 1).SampleTimed(context.Background(), req, batches, tl, keys)
		require.NoError(t, err)
		checkHetero(t, fx, req, batches[0], tl, 0, ref[0])
		np := 1 + int(seed%3)
		assign := make([]int, n)
		for v := range assign {
			assign[v] = rng.intn(np)
		}
		pr := renumbered(g, assign, np)
		got, err := fx.runtime(t, pr, 1+int(seed%4)).SampleTimed(context.Background(), req, toInternal(pr, batches), tl, keys)
		require.NoError(t, err)
		o := toOriginal(pr, got)[0]
		require.NoError(t, equalResults(ref[0], o))
		require.Equal(t, ref[0].Batch, o.Batch)
	})
}

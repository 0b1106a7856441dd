package pull

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rng"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/graphferry/graphferry/engine/stattest"
)

// testGraph is gen's "tiny" preset graph (1024 nodes, skewed degrees),
// with its edge ids shuffled when explicitIDs, so that edge ids and CSC
// positions differ.
func testGraph(t *testing.T, explicitIDs bool) *graph.CSC {
	t.Helper()
	g, err := gen.Presets()["tiny"].RMAT.Graph()
	require.NoError(t, err)
	if explicitIDs {
		r := rand.New(rand.NewPCG(1, 2))
		g.EdgeIDs = make([]int64, g.NumEdges())
		for i, p := range r.Perm(int(g.NumEdges())) {
			g.EdgeIDs[i] = int64(p) * 3 // not a permutation of [0, m) either
		}
	}
	return g
}

// edgeIndex maps an original edge id to (src, dst) in original ids.
func edgeIndex(g *graph.CSC) map[int64][2]int64 {
	idx := map[int64][2]int64{}
	for v := range g.NumNodes {
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			idx[g.EdgeID(p)] = [2]int64{g.Source(p), v}
		}
	}
	return idx
}

func partitions(t *testing.T, g *graph.CSC) map[string]*partition.Partitioned {
	t.Helper()
	out := map[string]*partition.Partitioned{}
	for _, p := range []int{1, 2, 3, 4} {
		for _, m := range []partition.Method{partition.Range, partition.Random} {
			pt, err := partition.Build(g, partition.Options{Method: m, NumPatches: p, Seed: 7})
			require.NoError(t, err)
			out[fmt.Sprintf("%s-%d", m, p)] = pt
		}
	}
	return out
}

// batchesFor cuts a seeded random subset of nodes (original ids) into
// batches of internal ids of pt.
func batchesFor(t *testing.T, pt *partition.Partitioned, n int64, count, size int) ([][]int64, [][]int64) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	perm := r.Perm(int(n))
	var orig, internal [][]int64
	for b := range count {
		o := make([]int64, size)
		for i := range o {
			o[i] = int64(perm[b*size+i])
		}
		in := make([]int64, size)
		require.NoError(t, pt.ToNew(o, in))
		orig = append(orig, o)
		internal = append(internal, in)
	}
	return orig, internal
}

// toOrig maps a result's nodes to original ids.
func toOrig(t *testing.T, pt *partition.Partitioned, res *sample.Result) []int64 {
	out := make([]int64, len(res.Nodes))
	require.NoError(t, pt.ToOld(res.Nodes, out))
	return out
}

func TestPullSamplesAreValid(t *testing.T) {
	fanouts := []int{5, 3, -1, 0}
	for _, explicit := range []bool{false, true} {
		g := testGraph(t, explicit)
		idx := edgeIndex(g)
		for name, pt := range partitions(t, g) {
			t.Run(fmt.Sprintf("ids=%v/%s", explicit, name), func(t *testing.T) {
				s, err := New(pt, comm.NewLocal(pt.NumPatches()), Options{CacheLists: explicit})
				require.NoError(t, err)
				orig, batches := batchesFor(t, pt, g.NumNodes, 5, 16)
				keys := []uint64{10, 11, 12, 13, 14}
				res, err := s.Sample(context.Background(), fanouts[:2], 99, batches, keys)
				require.NoError(t, err)
				require.Len(t, res, len(batches))
				for b, r := range res {
					checkResult(t, g, pt, idx, orig[b], r, fanouts[:2])
				}
				// A hop taking every neighbour, then one taking none.
				res, err = s.Sample(context.Background(), fanouts[2:], 5, batches[:2], keys[:2])
				require.NoError(t, err)
				for b, r := range res {
					checkResult(t, g, pt, idx, orig[b], r, fanouts[2:])
				}
			})
		}
	}
}

// checkResult checks one batch: seeds first, nodes distinct, every block
// edge a graph edge into its dst, min(fanout, degree) distinct neighbours
// per dst, DGL frontiers.
func checkResult(t *testing.T, g *graph.CSC, pt *partition.Partitioned, idx map[int64][2]int64, seeds []int64, r *sample.Result, fanouts []int) {
	t.Helper()
	nodes := toOrig(t, pt, r)
	require.Equal(t, seeds, nodes[:len(seeds)])
	seen := map[int64]bool{}
	for _, v := range nodes {
		require.False(t, seen[v], "node %d repeated", v)
		seen[v] = true
	}
	require.Len(t, r.Blocks, len(fanouts))
	require.Len(t, r.HopCounts, len(fanouts)+1)
	var total int64
	for _, c := range r.HopCounts {
		total += c
	}
	require.Equal(t, int64(len(nodes)), total)
	numDst := int64(len(seeds))
	for h, b := range r.Blocks {
		require.Equal(t, numDst, b.NumDst, "hop %d: the frontier is every node so far", h)
		require.Zero(t, b.DstOffset)
		require.Equal(t, numDst+r.HopCounts[h+1], b.NumSrc)
		require.Len(t, b.Indptr, int(numDst)+1)
		for i := range numDst {
			dst := nodes[i]
			deg := g.InDegree(dst)
			want := deg
			if fanouts[h] >= 0 {
				want = min(deg, int64(fanouts[h]))
			}
			lo, hi := b.Indptr[i], b.Indptr[i+1]
			require.Equal(t, want, hi-lo, "hop %d dst %d (degree %d)", h, dst, deg)
			srcs := map[int64]bool{}
			for k := lo; k < hi; k++ {
				require.Less(t, b.Indices[k], b.NumSrc)
				src := nodes[b.Indices[k]]
				e, ok := idx[b.EdgeIDs[k]]
				require.True(t, ok, "edge id %d", b.EdgeIDs[k])
				require.Equal(t, [2]int64{src, dst}, e, "edge %d", b.EdgeIDs[k])
				require.False(t, srcs[src], "neighbour %d of %d sampled twice", src, dst)
				srcs[src] = true
			}
		}
		numDst = b.NumSrc
	}
}

func TestPullDoesNotDependOnTheLayout(t *testing.T) {
	g := testGraph(t, true)
	var want [][]int64
	var wantEdges [][]int64
	for i, name := range []string{"range-1", "random-2", "random-3", "range-4", "random-1", "random-3"} {
		pt := partitions(t, g)[name]
		// The list cache changes what crosses, never the samples.
		s, err := New(pt, comm.NewLocal(pt.NumPatches()), Options{CacheLists: i >= 4})
		require.NoError(t, err)
		_, batches := batchesFor(t, pt, g.NumNodes, 3, 32)
		res, err := s.Sample(context.Background(), []int{4, 4}, 1, batches, []uint64{1, 2, 3})
		require.NoError(t, err)
		var got, edges [][]int64
		for _, r := range res {
			got = append(got, toOrig(t, pt, r))
			var e []int64
			for _, b := range r.Blocks {
				e = append(e, b.EdgeIDs...)
			}
			edges = append(edges, e)
		}
		if want == nil {
			want, wantEdges = got, edges
			continue
		}
		require.Equal(t, want, got, name)
		require.Equal(t, wantEdges, edges, name)
	}
}

func TestFloydIsUniform(t *testing.T) {
	const d, k, trials = 9, 3, 20000
	obs := make([]int, d)
	var out []int64
	for i := range trials {
		r := rng.SplitMix64{State: stream(1, uint64(i), 0, 5)}
		out = floyd(&r, d, k, out[:0])
		require.Len(t, out, k)
		require.True(t, slices.IsSorted(out))
		require.Equal(t, k, len(slices.Compact(slices.Clone(out))))
		for _, p := range out {
			require.GreaterOrEqual(t, p, int64(0))
			require.Less(t, p, int64(d))
			obs[p]++
		}
	}
	prob := make([]float64, d)
	for i := range prob {
		prob[i] = 1.0 / d
	}
	stattest.CheckGOF(t, "floyd positions", obs, prob)
}

// TestPullBytes checks the wire volume of one hop against the degrees: a
// remote frontier node costs 8 bytes of request and 8*(1+2*degree) bytes
// of answer, a local one nothing on the wire.
func TestPullBytes(t *testing.T) {
	g := testGraph(t, false)
	pt := partitions(t, g)["random-3"]
	phase := func(_ int, call int64) string { return [2]string{"request", "answer"}[call%2] }
	c, err := comm.NewCounting(comm.NewLocal(3), phase)
	require.NoError(t, err)
	s, err := New(pt, c, Options{})
	require.NoError(t, err)
	_, batches := batchesFor(t, pt, g.NumNodes, 3, 20)
	_, err = s.Sample(context.Background(), []int{2}, 1, batches, []uint64{0, 1, 2})
	require.NoError(t, err)
	var req, ans int64
	for rank, seeds := range batches { // batch i ran on rank i
		for _, v := range seeds {
			if pt.Owner(v) != rank {
				req += 8
				ans += 8 * (1 + 2*pt.Graph.InDegree(v))
			}
		}
	}
	tr := c.Traffic()
	require.Equal(t, req, tr["request"].Bytes)
	require.Equal(t, ans, tr["answer"].Bytes)
	require.Equal(t, int64(3), tr["request"].Calls)
}

func TestPullRejectsBadArguments(t *testing.T) {
	g := testGraph(t, false)
	pt := partitions(t, g)["range-2"]
	_, err := New(nil, comm.NewLocal(2), Options{})
	require.Error(t, err)
	_, err = New(pt, nil, Options{})
	require.Error(t, err)
	_, err = New(pt, comm.NewLocal(3), Options{})
	require.ErrorContains(t, err, "patches")
	s, err := New(pt, comm.NewLocal(2), Options{})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = s.Sample(ctx, nil, 0, [][]int64{{1}}, []uint64{0})
	require.ErrorContains(t, err, "fanouts")
	_, err = s.Sample(ctx, []int{-2}, 0, [][]int64{{1}}, []uint64{0})
	require.ErrorContains(t, err, "fanouts[0]")
	_, err = s.Sample(ctx, []int{2}, 0, [][]int64{{1}}, nil)
	require.ErrorContains(t, err, "keys")
	_, err = s.Sample(ctx, []int{2}, 0, [][]int64{{g.NumNodes}}, []uint64{0})
	require.ErrorContains(t, err, "out of range")
	_, err = s.Sample(ctx, []int{2}, 0, [][]int64{{3, 3}}, []uint64{0})
	require.ErrorContains(t, err, "repeated")
	// Still usable after refused calls (nothing was exchanged).
	res, err := s.Sample(ctx, []int{2}, 0, [][]int64{{3}, {}}, []uint64{0, 1})
	require.NoError(t, err)
	require.Equal(t, int64(1), res[0].HopCounts[0])
	require.Len(t, res[0].Blocks[0].Indices, int(min(2, g.InDegree(3))))
	require.Empty(t, res[1].Nodes)
	var nils *Sampler
	_, err = nils.Sample(ctx, []int{1}, 0, nil, nil)
	require.Error(t, err)
}

// TestPullCacheAsksEachListOnce: with CacheLists, hop h asks only for the
// nodes hop h-1 added; without, for every node of the frontier.
func TestPullCacheAsksEachListOnce(t *testing.T) {
	g := testGraph(t, false)
	pt := partitions(t, g)["random-3"]
	_, batches := batchesFor(t, pt, g.NumNodes, 3, 20)
	keys := []uint64{0, 1, 2}
	fanouts := []int{3, 2, 2}
	reqBytes := map[bool][]int64{}
	var results []*sample.Result
	for _, cache := range []bool{false, true} {
		phase := func(_ int, call int64) string { return fmt.Sprint(call) }
		c, err := comm.NewCounting(comm.NewLocal(3), phase)
		require.NoError(t, err)
		s, err := New(pt, c, Options{CacheLists: cache})
		require.NoError(t, err)
		res, err := s.Sample(context.Background(), fanouts, 1, batches, keys)
		require.NoError(t, err)
		if results == nil {
			results = res
		} else {
			require.Equal(t, results, res)
		}
		tr := c.Traffic()
		for h := range fanouts {
			reqBytes[cache] = append(reqBytes[cache], tr[fmt.Sprint(2*h)].Bytes)
		}
	}
	for h := range fanouts {
		var all, added int64
		for rank, r := range results { // batch i ran on rank i
			start := int64(0)
			if h > 0 {
				for _, c := range r.HopCounts[:h] {
					start += c
				}
			}
			end := start + r.HopCounts[h]
			if h == 0 {
				start = 0
			}
			for i, v := range r.Nodes[:end] {
				if pt.Owner(v) != rank {
					all += 8
					if int64(i) >= start {
						added += 8
					}
				}
			}
		}
		require.Equal(t, all, reqBytes[false][h], "hop %d without the cache", h)
		require.Equal(t, added, reqBytes[true][h], "hop %d with the cache", h)
	}
	require.Less(t, reqBytes[true][2], reqBytes[false][2])
}

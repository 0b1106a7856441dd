package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/stattest"
)

// The goodness-of-fit helpers live in engine/stattest, shared with
// engine/linkpred's tests.
var (
	chi2SF   = stattest.Chi2SF
	checkGOF = stattest.CheckGOF
)

const minP = stattest.MinP

// orderedSubsetProbs enumerates all ordered draws of k items without
// replacement with probability proportional to w (successive sampling,
// which Efraimidis-Spirakis keys realise) and returns the probability of
// each k-subset (as a sorted key) and each item's inclusion probability.
func orderedSubsetProbs(w []float64, k int) (map[string]float64, []float64) {
	sub := map[string]float64{}
	incl := make([]float64, len(w))
	var rec func(chosen []int, p, rest float64)
	rec = func(chosen []int, p, rest float64) {
		if len(chosen) == k {
			s := slices.Clone(chosen)
			slices.Sort(s)
			sub[fmt.Sprint(s)] += p
			for _, i := range chosen {
				incl[i] += p
			}
			return
		}
		for i, x := range w {
			if x == 0 || slices.Contains(chosen, i) {
				continue
			}
			rec(append(chosen, i), p*x/rest, rest-x)
		}
	}
	var tot float64
	for _, x := range w {
		tot += x
	}
	rec(nil, 1, tot)
	return sub, incl
}

// weightedStar is starGraph(len(w)) with weights w (edge i: i+1 -> 0).
func weightedStar(w []float32) *graph.CSC {
	g := starGraph(int64(len(w)))
	g.Weights = slices.Clone(w)
	return g
}

func TestBiasedWithReplacementDistribution(t *testing.T) {
	w := []float32{1, 2, 3, 0, 4, 0.5}
	const n, fan = 20000, 3
	counts := make([]int, len(w))
	for _, b := range trials(t, weightedStar(w), options{Fanouts: []int{fan}, Replace: true, Biased: true, Seed: 21}, n) {
		require.Len(t, b.EdgeIDs, fan)
		for _, e := range b.EdgeIDs {
			counts[e]++
		}
	}
	prob := make([]float64, len(w))
	for i, x := range w {
		prob[i] = float64(x) / 10.5
	}
	checkGOF(t, "biased with replacement: per-draw neighbour", counts, prob)
}

func TestBiasedWithoutReplacementInclusion(t *testing.T) {
	w := []float32{1, 2, 3, 4, 0, 5}
	const n, fan = 20000, 2
	wf := make([]float64, len(w))
	for i, x := range w {
		wf[i] = float64(x)
	}
	subP, inclP := orderedSubsetProbs(wf, fan)
	keys := make([]string, 0, len(subP))
	for k := range subP {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	idx := map[string]int{}
	for i, k := range keys {
		idx[k] = i
	}
	subObs := make([]int, len(keys))
	incl := make([]int, len(w))
	for _, b := range trials(t, weightedStar(w), options{Fanouts: []int{fan}, Biased: true, Seed: 22}, n) {
		require.Len(t, b.EdgeIDs, fan)
		require.Less(t, b.EdgeIDs[0], b.EdgeIDs[1], "ascending list order, no duplicates")
		require.NotEqual(t, int64(4), b.EdgeIDs[0])
		require.NotEqual(t, int64(4), b.EdgeIDs[1])
		i, ok := idx[fmt.Sprint([]int{int(b.EdgeIDs[0]), int(b.EdgeIDs[1])})]
		require.True(t, ok)
		subObs[i]++
		incl[b.EdgeIDs[0]]++
		incl[b.EdgeIDs[1]]++
	}
	prob := make([]float64, len(keys))
	for i, k := range keys {
		prob[i] = subP[k]
	}
	checkGOF(t, "biased without replacement: 2-subsets of 5 positive weights", subObs, prob)
	for i := range w {
		t.Logf("  neighbour %d (w=%v): inclusion %.4f, exact %.4f", i, w[i], float64(incl[i])/n, inclP[i])
	}
	// Fanout >= positive degree: every positive-weight neighbour, in order.
	for _, b := range trials(t, weightedStar(w), options{Fanouts: []int{5}, Biased: true, Seed: 22}, 20) {
		require.Equal(t, []int64{0, 1, 2, 3, 5}, b.EdgeIDs)
	}
	for _, b := range trials(t, weightedStar(w), options{Fanouts: []int{-1}, Biased: true, Replace: true, Seed: 22}, 20) {
		require.Equal(t, []int64{0, 1, 2, 3, 5}, b.EdgeIDs)
	}
}

func TestExcludeEdgesUniform(t *testing.T) {
	// Star of degree 8 without edges 1, 4, 6: 2 of the 5 others, uniformly.
	excl := []int64{6, 1, 4, 1, 99}
	const n = 20000
	obs := map[[2]int64]int{}
	for _, b := range trials(t, starGraph(8), options{Fanouts: []int{2}, Seed: 23, ExcludeEdges: excl}, n) {
		require.Len(t, b.EdgeIDs, 2)
		obs[[2]int64{b.EdgeIDs[0], b.EdgeIDs[1]}]++
	}
	keep := []int64{0, 2, 3, 5, 7}
	var counts []int
	var prob []float64
	for i := range keep {
		for j := i + 1; j < len(keep); j++ {
			counts = append(counts, obs[[2]int64{keep[i], keep[j]}])
			prob = append(prob, 0.1)
			delete(obs, [2]int64{keep[i], keep[j]})
		}
	}
	require.Empty(t, obs, "only pairs of non-excluded edges, in order")
	checkGOF(t, "excluded edges: 2-subsets of the 5 remaining", counts, prob)
	// All neighbours = the non-excluded ones; with replacement only them.
	for _, b := range trials(t, starGraph(8), options{Fanouts: []int{-1}, ExcludeEdges: excl}, 3) {
		require.Equal(t, keep, b.EdgeIDs)
	}
	for _, b := range trials(t, starGraph(8), options{Fanouts: []int{9}, ExcludeEdges: excl}, 3) {
		require.Equal(t, keep, b.EdgeIDs)
	}
	cnt := make([]int, 8)
	for _, b := range trials(t, starGraph(8), options{Fanouts: []int{4}, Replace: true, Seed: 24, ExcludeEdges: excl}, 5000) {
		require.Len(t, b.EdgeIDs, 4)
		for _, e := range b.EdgeIDs {
			cnt[e]++
		}
	}
	checkGOF(t, "excluded edges with replacement", cnt, []float64{0.2, 0, 0.2, 0.2, 0, 0.2, 0, 0.2})
	// Biased and excluded: weight 0.
	w := []float32{1, 5, 2, 0, 3, 1, 1, 2}
	cnt = make([]int, 8)
	for _, b := range trials(t, weightedStar(w), options{Fanouts: []int{3}, Replace: true, Biased: true, Seed: 25, ExcludeEdges: excl}, 5000) {
		for _, e := range b.EdgeIDs {
			cnt[e]++
		}
	}
	checkGOF(t, "biased + excluded with replacement", cnt, []float64{1.0 / 6, 0, 2.0 / 6, 0, 0, 1.0 / 6, 0, 2.0 / 6})
}

// layerGraph: frontier nodes 0..3, node u has u+1 in-neighbours (distinct
// sources 4, 5, ...), weights w (by edge position) when not nil.
func layerGraph(w []float32) *graph.CSC {
	var edges []edge
	src := int64(4)
	for u := int64(0); u < 4; u++ {
		for j := int64(0); j <= u; j++ {
			edges = append(edges, edge{src: src, dst: u, id: int64(len(edges))})
			src++
		}
	}
	g := buildCSC(src, edges, false)
	if w != nil {
		g.Weights = slices.Clone(w)
	}
	return g
}

// layerTrials samples the seeds 0..3 (hop 0 only) once per key.
func layerTrials(t *testing.T, g *graph.CSC, opt options, n int) []Block {
	s := mustSampler(t, rangePartition(g, 2), opt)
	batches := make([][]int64, n)
	keys := make([]uint64, n)
	for i := range batches {
		batches[i] = []int64{0, 1, 2, 3}
		keys[i] = uint64(i)
	}
	res := sampleAll(t, s, batches, keys)
	out := make([]Block, n)
	for i, r := range res {
		out[i] = r.Blocks[0]
	}
	return out
}

func TestLayerWiseFrontierDraw(t *testing.T) {
	// 10 edges: weights by position (node 0: e0; 1: e1 e2; 2: e3-e5; 3: e6-e9).
	w := []float32{4, 1, 0, 2, 2, 2, 0.5, 0.5, 0, 1}
	for _, biased := range []bool{false, true} {
		var W []float64
		var g *graph.CSC
		if biased {
			g = layerGraph(w)
			W = []float64{4, 1, 6, 2}
		} else {
			g = layerGraph(nil)
			W = []float64{1, 2, 3, 4}
		}
		var tot float64
		for _, x := range W {
			tot += x
		}
		const n, fan = 4000, 5
		nodeObs := make([]int, 4)
		edgeObs := make([]int, 10)
		for _, b := range layerTrials(t, g, options{Fanouts: []int{fan}, Scheme: LayerWise, Replace: true, Biased: biased, Seed: 31}, n) {
			require.Equal(t, int64(fan), b.Indptr[4], "with replacement: exactly fanout draws")
			for u := 0; u < 4; u++ {
				nodeObs[u] += int(b.Indptr[u+1] - b.Indptr[u])
			}
			for _, e := range b.EdgeIDs {
				edgeObs[e]++
			}
		}
		pu := make([]float64, 4)
		for u := range pu {
			pu[u] = W[u] / tot
		}
		checkGOF(t, fmt.Sprintf("layer-wise biased=%v: frontier draw c_u vs p_u", biased), nodeObs, pu)
		pe := make([]float64, 10)
		for e := range pe {
			if biased {
				pe[e] = float64(w[e]) / tot
			} else {
				pe[e] = 1 / tot
			}
		}
		checkGOF(t, fmt.Sprintf("layer-wise biased=%v: sampled edge vs w/sum W", biased), edgeObs, pe)
	}
}

func TestLayerWiseWithoutReplacement(t *testing.T) {
	for _, biased := range []bool{false, true} {
		var g *graph.CSC
		W := []float64{1, 2, 3, 4}
		if biased {
			// W = 4, 1, 0 (all zero: never picked), 2.
			g = layerGraph([]float32{4, 1, 0, 0, 0, 0, 0.5, 0.5, 0, 1})
			W = []float64{4, 1, 0, 2}
		} else {
			g = layerGraph(nil)
		}
		subP, _ := orderedSubsetProbs(W, 2)
		var keys []string
		for k := range subP {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		obs := map[string]int{}
		const n = 20000
		for _, b := range layerTrials(t, g, options{Fanouts: []int{2}, Scheme: LayerWise, LayerWithoutReplacement: true, Biased: biased, Seed: 32}, n) {
			var picked []int
			for u := 0; u < 4; u++ {
				c := b.Indptr[u+1] - b.Indptr[u]
				require.LessOrEqual(t, c, int64(1), "one neighbour per picked node")
				if c == 1 {
					picked = append(picked, u)
				}
			}
			require.Len(t, picked, 2, "n distinct frontier nodes")
			obs[fmt.Sprint(picked)]++
		}
		counts := make([]int, len(keys))
		prob := make([]float64, len(keys))
		for i, k := range keys {
			counts[i], prob[i] = obs[k], subP[k]
			delete(obs, k)
		}
		require.Empty(t, obs, "only subsets of positive-weight nodes")
		checkGOF(t, fmt.Sprintf("layer-wise without replacement biased=%v: 2-subsets of the frontier", biased), counts, prob)
	}
	// Fewer positive nodes than the fanout: all of them, once.
	for _, b := range layerTrials(t, layerGraph(nil), options{Fanouts: []int{9}, Scheme: LayerWise, LayerWithoutReplacement: true, Seed: 33}, 5) {
		require.Equal(t, []int64{0, 1, 2, 3, 4}, b.Indptr)
	}
}

func TestLayerWiseCapsAndAll(t *testing.T) {
	g := layerGraph(nil)
	// Without Replace a node's row is capped at its degree, no duplicates.
	sawCap := false
	for _, b := range layerTrials(t, g, options{Fanouts: []int{12}, Scheme: LayerWise, Seed: 34}, 300) {
		require.LessOrEqual(t, b.Indptr[4], int64(12))
		for u := int64(0); u < 4; u++ {
			c := b.Indptr[u+1] - b.Indptr[u]
			require.LessOrEqual(t, c, u+1)
			if c == u+1 {
				sawCap = true
			}
			row := slices.Clone(b.EdgeIDs[b.Indptr[u]:b.Indptr[u+1]])
			require.True(t, slices.IsSorted(row))
			require.Len(t, slices.Compact(row), int(c))
		}
	}
	require.True(t, sawCap)
	// -1: every neighbour of every frontier node.
	for _, b := range layerTrials(t, g, options{Fanouts: []int{-1}, Scheme: LayerWise, Seed: 34}, 3) {
		require.Equal(t, []int64{0, 1, 3, 6, 10}, b.Indptr)
		require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, b.EdgeIDs)
	}
}

// walkGraph: node 0 has in-neighbours 1..4 (edges 0..3, weights 1..4) and
// each of 1..4 has in-neighbour 0 (edges 4..7, weight 1): walks never end.
func walkGraph() *graph.CSC {
	var edges []edge
	for u := int64(1); u <= 4; u++ {
		edges = append(edges, edge{src: u, dst: 0, id: int64(len(edges))})
	}
	for u := int64(1); u <= 4; u++ {
		edges = append(edges, edge{src: 0, dst: u, id: int64(len(edges))})
	}
	g := buildCSC(5, edges, false)
	g.Weights = []float32{1, 2, 3, 4, 1, 1, 1, 1}
	return g
}

func TestRandomWalkTransitions(t *testing.T) {
	g := walkGraph()
	const walkers = 20000
	seeds := make([]int64, walkers) // all start at 0 (repeats allowed)
	for _, biased := range []bool{false, true} {
		s := mustSampler(t, rangePartition(g, 3), options{Fanouts: []int{1}, Biased: biased, Seed: 41})
		res, err := walk(t.Context(), s, [][]int64{seeds}, []uint64{7}, 2, 0)
		require.NoError(t, err)
		obs := make([]int, 4)
		for i := 0; i < walkers; i++ {
			tr := res[0].Traces[i*3 : i*3+3]
			e := res[0].EdgeIDs[i*2 : i*2+2]
			require.Equal(t, int64(0), tr[0])
			require.Equal(t, tr[1]-1, e[0], "edge id matches the step")
			require.Equal(t, int64(0), tr[2])
			require.Equal(t, tr[1]+3, e[1])
			obs[tr[1]-1]++
		}
		prob := []float64{0.25, 0.25, 0.25, 0.25}
		if biased {
			prob = []float64{0.1, 0.2, 0.3, 0.4}
		}
		checkGOF(t, fmt.Sprintf("random walk biased=%v: step transition", biased), obs, prob)
	}
}

func TestRandomWalkRestart(t *testing.T) {
	g := walkGraph()
	const walkers, length, q = 4000, 6, 0.3
	seeds := make([]int64, walkers)
	for i := range seeds {
		seeds[i] = int64(i % 5)
	}
	s := mustSampler(t, rangePartition(g, 2), options{Fanouts: []int{1}, Biased: true, Seed: 42})
	res, err := walk(t.Context(), s, [][]int64{seeds}, []uint64{8}, length, q)
	require.NoError(t, err)
	restarts, steps := 0, 0
	trans := make([]int, 4) // steps out of node 0
	for i := 0; i < walkers; i++ {
		tr := res[0].Traces[i*(length+1) : (i+1)*(length+1)]
		e := res[0].EdgeIDs[i*length : (i+1)*length]
		for k := 0; k < length; k++ {
			steps++
			if e[k] == -1 {
				restarts++
				require.Equal(t, seeds[i], tr[k+1], "a restart goes back to the seed")
				continue
			}
			if tr[k] == 0 {
				trans[e[k]]++
			}
		}
	}
	checkGOF(t, "random walk: restart frequency", []int{restarts, steps - restarts}, []float64{q, 1 - q})
	checkGOF(t, "random walk with restarts: step transition", trans, []float64{0.1, 0.2, 0.3, 0.4})
}

func TestRandomWalkDeadEndsAndErrors(t *testing.T) {
	g := tinyGraph() // 4 and 5 have no in-neighbours
	s := mustSampler(t, rangePartition(g, 2), options{Fanouts: []int{1}, Seed: 1})
	res, err := walk(t.Context(), s, [][]int64{{4, 3, 3}, {}}, []uint64{1, 2}, 3, 0)
	require.NoError(t, err)
	assert.Equal(t, []int64{4, -1, -1, -1, 3, 5, -1, -1, 3, 5, -1, -1}, res[0].Traces)
	assert.Equal(t, []int64{-1, -1, -1, 107, -1, -1, 107, -1, -1}, res[0].EdgeIDs)
	assert.Empty(t, res[1].Traces)
	// Length 0: only the seeds.
	res, err = walk(t.Context(), s, [][]int64{{2}}, []uint64{1}, 0, 0.5)
	require.NoError(t, err)
	assert.Equal(t, []int64{2}, res[0].Traces)
	assert.Empty(t, res[0].EdgeIDs)
	// Excluded edges are not walked.
	s = mustSampler(t, rangePartition(g, 3), options{Fanouts: []int{1}, ExcludeEdges: []int64{107}})
	res, err = walk(t.Context(), s, [][]int64{{3}}, []uint64{1}, 2, 0)
	require.NoError(t, err)
	assert.Equal(t, []int64{3, -1, -1}, res[0].Traces)

	_, err = walk(t.Context(), s, [][]int64{{0}}, []uint64{1}, -1, 0)
	assert.EqualError(t, err, "sample: WalkRequest.Length = -1 is negative")
	_, err = walk(t.Context(), s, [][]int64{{0}}, []uint64{1}, 2, 1.5)
	assert.EqualError(t, err, "sample: WalkRequest.RestartProb = 1.5 is not in [0, 1]")
	_, err = walk(t.Context(), s, [][]int64{{0}}, []uint64{1}, 2, math.NaN())
	assert.Error(t, err)
	_, err = walk(t.Context(), s, [][]int64{{6}}, []uint64{1}, 2, 0)
	assert.EqualError(t, err, "sample: batches[0][0] = 6 is out of range [0, 6)")
	_, err = walk(t.Context(), s, [][]int64{{0}}, nil, 2, 0)
	assert.EqualError(t, err, "sample: len(keys) = 0 does not match len(batches) = 1")
}

func TestSchemeOptionErrors(t *testing.T) {
	p := rangePartition(tinyGraph(), 1)
	_, err := newSampler(p, comm.NewLocal(1), options{Fanouts: []int{1}, Scheme: 5})
	assert.EqualError(t, err, "sample: Request.Scheme = 5 is invalid (want NodeWise (0), LayerWise (1) or Labor (2))")
	_, err = newSampler(p, comm.NewLocal(1), options{Fanouts: []int{1}, LayerWithoutReplacement: true})
	assert.EqualError(t, err, "sample: Request.LayerWithoutReplacement needs Request.Scheme = LayerWise")
	_, err = newSampler(p, comm.NewLocal(1), options{Fanouts: []int{1}, Biased: true})
	assert.EqualError(t, err, "sample: Request.Biased needs edge weights, but partition.Graph.Weights is nil")
	assert.Equal(t, "layer-wise", LayerWise.String())
	assert.Equal(t, "node-wise", NodeWise.String())
	assert.Equal(t, "Scheme(3)", Scheme(3).String())
	// Request() returns copies.
	s := mustSampler(t, p, options{Fanouts: []int{1}, ExcludeEdges: []int64{100}})
	r := s.Request()
	r.ExcludeEdges[0] = 5
	assert.Equal(t, []int64{100}, s.Request().ExcludeEdges)
}

// withWeights returns a copy of g with random weights, about a fifth of
// them 0.
func withWeights(r *rand.Rand, g *graph.CSC) *graph.CSC {
	c := *g
	c.Weights = make([]float32, g.NumEdges())
	for i := range c.Weights {
		if r.IntN(5) != 0 {
			c.Weights[i] = float32(0.1 + 5*r.Float64())
		}
	}
	return &c
}

package sample

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/stretchr/testify/require"
)

// laborConfigs are the Labor requests the tests below run.
func laborConfigs(exclude []int64) []schemeConfig {
	var out []schemeConfig
	add := func(name string, o options) {
		o.Seed = 77
		o.Scheme = Labor
		out = append(out, schemeConfig{name: name, opt: o})
	}
	for _, fr := range []Frontier{FrontierAll, FrontierNew} {
		for _, dep := range []bool{false, true} {
			for _, f := range [][]int{{4, 3}, {-1, 2}, {3, 0, 2}, {10, 10}} {
				add(fmt.Sprintf("%v/layer-dependency=%v/%v", fr, dep, f), options{Fanouts: f, Frontier: fr, LayerDependency: dep})
			}
			add(fmt.Sprintf("%v/layer-dependency=%v/exclude", fr, dep), options{Fanouts: []int{3, 2}, Frontier: fr, LayerDependency: dep, ExcludeEdges: exclude})
		}
	}
	return out
}

// laborReference is LABOR-0 written out on the original graph g: the edge
// ids (in list order) that destination v (original id) keeps in hop h of
// the batch with key, from the variates' definition (the first Unit of the
// task stream of (seed, key, hop, t), hop 0 with layer dependency).
func laborReference(g *graph.CSC, o options, key uint64, h int, v int64, excluded map[int64]bool) []int64 {
	var cand []int64
	for q := g.Indptr[v]; q < g.Indptr[v+1]; q++ {
		if !excluded[g.EdgeID(q)] {
			cand = append(cand, q)
		}
	}
	k := o.Fanouts[h]
	hop := uint64(h)
	if o.LayerDependency {
		hop = 0
	}
	kept := []int64{}
	for _, q := range cand {
		r := taskStream(o.Seed, key, hop, uint64(g.Source(q)))
		if k < 0 || r.Unit() < float64(k)/float64(len(cand)) {
			kept = append(kept, g.EdgeID(q))
		}
	}
	if k == 0 {
		return []int64{}
	}
	return kept
}

// checkLabor checks res (original ids) against the structure every scheme
// shares and, destination by destination, against laborReference.
func checkLabor(t testing.TB, g *graph.CSC, o options, seeds []int64, key uint64, res *Result) {
	t.Helper()
	excluded := map[int64]bool{}
	for _, id := range o.ExcludeEdges {
		excluded[id] = true
	}
	require.Len(t, res.Blocks, len(o.Fanouts))
	require.Equal(t, seeds, res.Nodes[:len(seeds)])
	src := map[int64]int64{}
	for q := int64(0); q < g.NumEdges(); q++ {
		src[g.EdgeID(q)] = g.Source(q)
	}
	for h, b := range res.Blocks {
		require.Len(t, b.Indptr, int(b.NumDst)+1)
		for i := int64(0); i < b.NumDst; i++ {
			v := res.Nodes[b.DstOffset+i]
			got := b.EdgeIDs[b.Indptr[i]:b.Indptr[i+1]]
			require.Equal(t, laborReference(g, o, key, h, v, excluded), slices.Clone(got), "hop %d dst %d", h, v)
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				require.Equal(t, src[b.EdgeIDs[e]], res.Nodes[b.Indices[e]], "hop %d: edge %d's source", h, b.EdgeIDs[e])
			}
		}
	}
}

func TestLaborPrefixIsTheTaskStream(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		seed, key, hop, node := r.Uint64(), r.Uint64(), r.Uint64N(8), r.Uint64()
		ts := taskStream(seed, key, hop, node)
		require.Equal(t, ts.Unit(), laborVariate(laborPrefix(seed, key, hop), node))
	}
}

// LABOR samples depend only on (Seed, key, seeds, graph): not on the
// patches, the numbering, the threads or the append-unique table; and they
// are what the reference keeps.
func TestLaborDeterministicAcrossPatchesAndThreads(t *testing.T) {
	withGrains(t, 5, 2)
	g, batches, keys, exclude := schemeFixture()
	r := rand.New(rand.NewPCG(21, 22))
	for _, c := range laborConfigs(exclude) {
		t.Run(c.name, func(t *testing.T) {
			ref := runScheme(t, rangePartition(g, 1), c, c.opt, batches, keys, false)
			for i, res := range ref.([]*Result) {
				checkLabor(t, g, c.opt, batches[i], keys[i], res)
			}
			for _, p := range []int{2, 3} {
				for _, th := range []int{1, 4} {
					opt := c.opt
					opt.Threads = th
					got := runScheme(t, rangePartition(g, p), c, opt, batches, keys, false)
					require.Equal(t, ref, got, "P=%d threads=%d", p, th)
				}
			}
			for _, p := range []int{3, 5} {
				assign := make([]int, g.NumNodes)
				for v := range assign {
					assign[v] = r.IntN(p)
				}
				opt := c.opt
				opt.Threads = 3
				got := runScheme(t, renumbered(g, assign, p), c, opt, batches, keys, p == 5)
				require.Equal(t, ref, got, "renumbered P=%d", p)
			}
		})
	}
}

// laborStar is a graph where destinations 0..nd-1 have in-degrees
// 2, 4, 6, ... and all draw their neighbours from the same pool of nodes
// nd..nd+pool-1 (destination s takes pool nodes 0..deg-1), so any two
// destinations share neighbours.
func laborStar(nd, pool int64) *graph.CSC {
	var edges []edge
	for s := int64(0); s < nd; s++ {
		for i := int64(0); i < min(2*(s+1), pool); i++ {
			edges = append(edges, edge{src: nd + i, dst: s})
		}
	}
	for i := range edges {
		edges[i].id = int64(i)
	}
	return buildCSC(nd+pool, edges, false)
}

// Each neighbour t of s is kept with probability min(1, k/d_s): per edge,
// the keep count over many batches is Binomial(n, p) (checked at 5 sigma,
// and in sum by a chi-square over the edges).
func TestLaborKeepProbability(t *testing.T) {
	const nd, pool, k, n = 8, 16, 3, 4000
	g := laborStar(nd, pool)
	s := mustSampler(t, rangePartition(g, 3), options{Fanouts: []int{k}, Scheme: Labor, Seed: 5})
	seeds := make([]int64, nd)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	kept := make([]int, g.NumEdges())
	var batches [][]int64
	var keys []uint64
	for b := range n {
		batches = append(batches, seeds)
		keys = append(keys, uint64(b)*0x9e3779b97f4a7c15+1)
	}
	for _, res := range sampleAll(t, s, batches, keys) {
		for _, e := range res.Blocks[0].EdgeIDs {
			kept[e]++
		}
	}
	var chi2 float64
	var free int
	for v := int64(0); v < nd; v++ {
		d := g.InDegree(v)
		p := min(1, float64(k)/float64(d))
		for q := g.Indptr[v]; q < g.Indptr[v+1]; q++ {
			c := float64(kept[g.EdgeID(q)])
			if p == 1 {
				require.Equal(t, float64(n), c, "dst %d (degree %d <= %d) keeps every neighbour", v, d, k)
				continue
			}
			mean, sd := n*p, math.Sqrt(n*p*(1-p))
			require.InDelta(t, mean, c, 5*sd, "dst %d degree %d: edge %d kept %v times of %d", v, d, q, c, n)
			chi2 += (c-mean)*(c-mean)/mean + (c-mean)*(c-mean)/(n-mean)
			free++
		}
	}
	// chi-square with `free` degrees of freedom: mean free, sd sqrt(2 free).
	require.Less(t, chi2, float64(free)+6*math.Sqrt(2*float64(free)), "chi-square %v over %d edges", chi2, free)
}

// The LABOR property: within one batch and hop, destinations that share
// neighbour t compare the same r_t, so t kept by s1 is kept by every s2
// with k/d_s2 >= k/d_s1; and inclusions are positively correlated, so the
// batch samples fewer distinct nodes than independent per-destination
// draws would (expected: pool * P(r < k/min d) distinct sources).
func TestLaborSharedVariates(t *testing.T) {
	const nd, pool, k, n = 8, 16, 2, 500
	g := laborStar(nd, pool)
	s := mustSampler(t, rangePartition(g, 2), options{Fanouts: []int{k}, Scheme: Labor, Seed: 9})
	seeds := make([]int64, nd)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	var batches [][]int64
	var keys []uint64
	for b := range n {
		batches = append(batches, seeds)
		keys = append(keys, uint64(b)+100)
	}
	both, only1, only2 := 0, 0, 0
	for _, res := range sampleAll(t, s, batches, keys) {
		b := res.Blocks[0]
		keptBy := make([]map[int64]bool, nd)
		for i := range int64(nd) {
			keptBy[i] = map[int64]bool{}
			for e := b.Indptr[i]; e < b.Indptr[i+1]; e++ {
				keptBy[i][res.Nodes[b.Indices[e]]] = true
			}
		}
		// Destination s has degree 2(s+1): smaller s, larger k/d.
		for s1 := range nd {
			for s2 := s1 + 1; s2 < nd; s2++ {
				for u := range keptBy[s2] {
					if u >= nd+g.InDegree(int64(s1)) {
						continue // not a neighbour of s1
					}
					require.True(t, keptBy[s1][u], "node %d kept by dst %d (k/d = %v) but not by dst %d (k/d = %v)",
						u, s2, float64(k)/float64(g.InDegree(int64(s2))), s1, float64(k)/float64(g.InDegree(int64(s1))))
				}
			}
		}
		// Pair (dst 4, dst 7): degrees 10 and 16, shared neighbours the
		// first 10 pool nodes.
		for u := int64(nd); u < nd+10; u++ {
			a, c := keptBy[4][u], keptBy[7][u]
			switch {
			case a && c:
				both++
			case a:
				only1++
			case c:
				only2++
			}
		}
	}
	require.Zero(t, only2, "dst 7 never keeps what dst 4 (larger k/d) does not")
	// Independent draws would give P(both) = (2/10)(2/16) = 0.025 per pair;
	// shared variates give P(both) = 2/16 = 0.125.
	trials := float64(10 * n)
	require.Greater(t, float64(both)/trials, 0.09, "both=%d only1=%d", both, only1)
}

// With LayerDependency, a destination that is in two hops with the same
// fan-out keeps the same neighbours in both; without, it does not (on some
// batch).
func TestLaborLayerDependency(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	g := randomGraph(r, 300, 4000, true)
	batches, keys := randomBatches(r, g.NumNodes, 6, 20)
	differs := false
	for _, dep := range []bool{true, false} {
		o := options{Fanouts: []int{4, 4}, Scheme: Labor, LayerDependency: dep, Seed: 3}
		res := sampleAll(t, mustSampler(t, rangePartition(g, 2), o), batches, keys)
		for i, rs := range res {
			checkLabor(t, g, o, batches[i], keys[i], rs)
			b0, b1 := rs.Blocks[0], rs.Blocks[1]
			for j := range int64(len(batches[i])) { // seeds are dst in both hops
				e0 := b0.EdgeIDs[b0.Indptr[j]:b0.Indptr[j+1]]
				e1 := b1.EdgeIDs[b1.Indptr[j]:b1.Indptr[j+1]]
				if dep {
					require.Equal(t, e0, e1, "batch %d seed %d", i, batches[i][j])
				} else if !slices.Equal(e0, e1) {
					differs = true
				}
			}
		}
	}
	require.True(t, differs, "without layer dependency the hops draw fresh variates")
}

func TestLaborRequestValidation(t *testing.T) {
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Fanouts: []int{2}, Scheme: Labor, Replace: true}, "Replace is not valid"},
		{Request{Fanouts: []int{2}, Scheme: Labor, Biased: true}, "Biased is not supported"},
		{Request{Fanouts: []int{2}, LayerDependency: true}, "LayerDependency needs"},
		{Request{Fanouts: []int{2}, Scheme: LayerWise, LayerDependency: true}, "LayerDependency needs"},
		{Request{Fanouts: []int{2}, Scheme: Labor, LayerWithoutReplacement: true}, "LayerWithoutReplacement needs"},
		{Request{Fanouts: []int{2}, Scheme: Labor + 1}, "Scheme = 3 is invalid"},
	} {
		require.ErrorContains(t, c.req.Validate(), c.want)
	}
	require.NoError(t, Request{Fanouts: []int{2, -1, 0}, Scheme: Labor, LayerDependency: true, ExcludeEdges: []int64{1}}.Validate())
	require.Equal(t, "labor", Labor.String())
}

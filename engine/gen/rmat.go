// Package gen generates synthetic graphs for benchmarks: R-MAT / Kronecker
// power-law graphs with random features and labels.
//
// Everything is deterministic for a given seed whatever the thread count:
// the randomness is counter-based (element i's bits come from a SplitMix64
// hash of the seed and i), so work can be split among threads freely.
// Presets write their graphs as datasets (engine/dataset).
//
// It imports dataset, fileformat, graph, mem, internal/par and rng
// (engine/layering_test.go).
package gen

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/rng"
)

// Graph500 default R-MAT probabilities (D = 1-A-B-C = 0.05).
const (
	DefaultA = 0.57
	DefaultB = 0.19
	DefaultC = 0.19
)

// MaxScale is the largest R-MAT scale (2^40 nodes).
const MaxScale = 40

// maxAttempts bounds the rejection sampling of one edge when NumNodes is
// not a power of two (the parameters are checked up front so that the
// expected number of attempts is small; the bound only guards against
// pathological inputs).
const maxAttempts = 1 << 16

// minAcceptance is the smallest probability that an R-MAT sample lands in
// [0, NumNodes)^2 that Edges accepts (at most about 1000 attempts per edge
// on average).
const minAcceptance = 1e-3

// maxEdges bounds the number of generated edges (2^40), so that a bad
// EdgeFactor is an error rather than an attempt to allocate the impossible.
const maxEdges = 1 << 40

// RMAT describes an R-MAT (recursive matrix, Chakrabarti et al. 2004) graph,
// the Kronecker generator of Graph500: each edge picks one quadrant of the
// adjacency matrix with probabilities A (top left), B (top right), C
// (bottom left) and D = 1-A-B-C (bottom right), recursively Scale times,
// which gives a power-law (heavy-tailed) degree distribution. The row is
// the source and the column the destination. Unlike some generators, no
// noise is added to the probabilities between levels.
type RMAT struct {
	// Scale gives N = 2^Scale nodes (1..MaxScale) unless NumNodes is set.
	Scale int
	// NumNodes, when > 0, sets N to any value in [2, 2^MaxScale]. The
	// recursion then runs at S = ceil(log2(N)) levels (Scale must be 0 or
	// S) and an edge is drawn again, from the next counter of its own
	// stream, until both ends are < N (rejection sampling: the result is
	// R-MAT on 2^S nodes conditioned on both ends being < N, so ids are not
	// folded by a modulo and no node gets extra weight). Edges refuses
	// parameters for which fewer than 1 in 1000 samples would be accepted.
	NumNodes int64
	// EdgeFactor is the number of generated edges per node: the generator
	// draws round(EdgeFactor*N) edges (before Undirected doubles them and
	// before Graph removes self-loops and duplicates).
	EdgeFactor float64
	// A, B, C are the quadrant probabilities; D = 1-A-B-C. Each must be in
	// [0, 1] and A+B+C <= 1. Graph500 uses 0.57, 0.19, 0.19 (DefaultA, ...).
	A, B, C float64
	// Seed selects the graph.
	Seed uint64
	// Threads is the parallelism; <= 0 means GOMAXPROCS. It does not change
	// the result.
	Threads int
	// Undirected stores every generated edge in both directions (u->v and
	// v->u), like the symmetrised real datasets.
	Undirected bool
	// Permute relabels the nodes with a seeded random permutation of [0, N)
	// (as Graph500 scrambles vertex ids), so that degree does not correlate
	// with id; without it node 0 is the hub. The presets set it.
	Permute bool
}

// check returns the number of recursion levels and the node count, after
// checking the parameters.
func (r RMAT) check() (s int, n int64, err error) {
	for _, p := range []struct {
		name string
		v    float64
	}{{"A", r.A}, {"B", r.B}, {"C", r.C}} {
		if !(p.v >= 0 && p.v <= 1) { // also catches NaN
			return 0, 0, fmt.Errorf("gen: RMAT.%s=%v must be a probability in [0, 1]", p.name, p.v)
		}
	}
	if sum := r.A + r.B + r.C; sum > 1+1e-9 {
		return 0, 0, fmt.Errorf("gen: RMAT.A+B+C=%v must be <= 1 (D = 1-A-B-C)", sum)
	}
	if r.NumNodes > 0 {
		if r.NumNodes < 2 || r.NumNodes > 1<<MaxScale {
			return 0, 0, fmt.Errorf("gen: RMAT.NumNodes=%d must be in [2, 2^%d]", r.NumNodes, MaxScale)
		}
		n = r.NumNodes
		s = bits.Len64(uint64(n - 1))
		if r.Scale != 0 && r.Scale != s {
			return 0, 0, fmt.Errorf("gen: RMAT.Scale=%d disagrees with NumNodes=%d (which needs Scale %d); leave Scale 0", r.Scale, n, s)
		}
	} else {
		if r.NumNodes < 0 {
			return 0, 0, fmt.Errorf("gen: RMAT.NumNodes=%d must be >= 0 (0: use Scale)", r.NumNodes)
		}
		if r.Scale < 1 || r.Scale > MaxScale {
			return 0, 0, fmt.Errorf("gen: RMAT.Scale=%d must be in [1, %d]", r.Scale, MaxScale)
		}
		s, n = r.Scale, int64(1)<<r.Scale
	}
	if !(r.EdgeFactor > 0) || math.IsInf(r.EdgeFactor, 1) {
		return 0, 0, fmt.Errorf("gen: RMAT.EdgeFactor=%v must be a finite number > 0", r.EdgeFactor)
	}
	if e := r.EdgeFactor * float64(n); e > maxEdges {
		return 0, 0, fmt.Errorf("gen: RMAT.EdgeFactor=%v with %d nodes gives %.3g edges, more than the limit 2^40", r.EdgeFactor, n, e)
	}
	if n != int64(1)<<s {
		if p := acceptance(s, uint64(n-1), r.A, r.B, r.C); p < minAcceptance {
			return 0, 0, fmt.Errorf("gen: RMAT.NumNodes=%d: with A=%v B=%v C=%v only %.3g of the samples on 2^%d nodes have both ends < NumNodes; use a power of two or other probabilities", n, r.A, r.B, r.C, p, s)
		}
	}
	return s, n, nil
}

// N returns the number of nodes of the graph (0 if the parameters are
// invalid).
func (r RMAT) N() int64 {
	_, n, err := r.check()
	if err != nil {
		return 0
	}
	return n
}

// NumGenerated returns the number of edges Edges draws, round(EdgeFactor*N)
// (at least 1), before Undirected doubles them.
func (r RMAT) NumGenerated() int64 {
	n := r.N()
	if n == 0 {
		return 0
	}
	return max(1, int64(math.Round(r.EdgeFactor*float64(n))))
}

// acceptance returns the probability that an R-MAT sample on 2^s nodes has
// both ends <= m, by walking the bits of m from the top with the states
// "source (destination) still equal to m's prefix".
func acceptance(s int, m uint64, a, b, c float64) float64 {
	d := max(0, 1-a-b-c)
	quad := [4]struct {
		sb, db uint64
		p      float64
	}{{0, 0, a}, {0, 1, b}, {1, 0, c}, {1, 1, d}}
	var p [2][2]float64 // p[srcTight][dstTight]
	p[1][1] = 1
	for lvl := s - 1; lvl >= 0; lvl-- {
		mb := m >> uint(lvl) & 1
		var q [2][2]float64
		for ts := range 2 {
			for td := range 2 {
				if p[ts][td] == 0 {
					continue
				}
				for _, x := range quad {
					ns, okS := step(ts, x.sb, mb)
					nd, okD := step(td, x.db, mb)
					if okS && okD {
						q[ns][nd] += p[ts][td] * x.p
					}
				}
			}
		}
		p = q
	}
	return p[0][0] + p[0][1] + p[1][0] + p[1][1]
}

// step advances one coordinate of acceptance: from tight (1) or loose (0),
// choosing bit b where the bound has bit mb.
func step(tight int, b, mb uint64) (int, bool) {
	switch {
	case tight == 0:
		return 0, true
	case b < mb:
		return 0, true
	case b == mb:
		return 1, true
	}
	return 0, false
}

// thresholds turns probabilities into cumulative 32-bit thresholds.
func thresholds(a, b, c float64) (ta, tab, tabc uint64) {
	t := func(p float64) uint64 {
		return uint64(math.Min(math.Round(p*(1<<32)), 1<<32))
	}
	return t(a), t(a + b), t(a + b + c)
}

// tagEdge and the other tags separate the random streams of the package.
const (
	tagEdge uint64 = iota + 1
	tagPermute
	tagCentroid
	tagNode
	tagSplit
)

// Edges generates the edge list: edge i is src[i] -> dst[i]. It draws
// NumGenerated() edges; with Undirected the result has twice as many, edge
// k's two directions at positions 2k and 2k+1. Self-loops and repeated
// edges are kept (see Graph). Edge k depends only on (Seed, k), so the
// result is the same whatever Threads.
func (r RMAT) Edges() (src, dst []int64, err error) {
	s, n, err := r.check()
	if err != nil {
		return nil, nil, err
	}
	e := r.NumGenerated()
	out := e
	if r.Undirected {
		out = 2 * e
	}
	src, dst = make([]int64, out), make([]int64, out)
	var perm []int64
	if r.Permute {
		perm = permutation(n, r.Seed, tagPermute)
	}
	draw := r.drawer(s, n, perm)
	err = parallelFor(e, r.Threads, func(lo, hi int64) error {
		for k := lo; k < hi; k++ {
			su, sv, err := draw(k)
			if err != nil {
				return err
			}
			if r.Undirected {
				src[2*k], dst[2*k] = su, sv
				src[2*k+1], dst[2*k+1] = sv, su
			} else {
				src[k], dst[k] = su, sv
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return src, dst, nil
}

// drawer returns generated edge k (before Undirected's reverse), relabelled
// by perm when not nil, for r with s levels and n nodes (r.check).
func (r RMAT) drawer(s int, n int64, perm []int64) func(k int64) (int64, int64, error) {
	ta, tab, tabc := thresholds(r.A, r.B, r.C)
	reject := n != int64(1)<<s
	return func(k int64) (int64, int64, error) {
		sm := stream(r.Seed, tagEdge, uint64(k))
		var u, v uint64
		for attempt := 0; ; attempt++ {
			if attempt == maxAttempts {
				return 0, 0, fmt.Errorf("gen: edge %d: no sample with both ends < NumNodes=%d in %d attempts", k, n, maxAttempts)
			}
			u, v = sample(&sm, s, ta, tab, tabc)
			if !reject || (u < uint64(n) && v < uint64(n)) {
				break
			}
		}
		su, sv := int64(u), int64(v)
		if perm != nil {
			su, sv = perm[su], perm[sv]
		}
		return su, sv, nil
	}
}

// sample draws one R-MAT edge on 2^s nodes: one 32-bit uniform per level
// (two levels per 64-bit draw) picks the quadrant.
func sample(r *rng.SplitMix64, s int, ta, tab, tabc uint64) (u, v uint64) {
	lvl := 0
	for ; lvl+1 < s; lvl += 2 {
		w := r.Next()
		u, v = level(u, v, w&0xffffffff, ta, tab, tabc)
		u, v = level(u, v, w>>32, ta, tab, tabc)
	}
	if lvl < s {
		u, v = level(u, v, r.Next()&0xffffffff, ta, tab, tabc)
	}
	return u, v
}

// level appends one level's bits to (u, v): quadrant A is (0,0), B (0,1),
// C (1,0), D (1,1), chosen by the 32-bit uniform x without branches.
func level(u, v, x, ta, tab, tabc uint64) (uint64, uint64) {
	ga, gab, gabc := b2u(x >= ta), b2u(x >= tab), b2u(x >= tabc)
	return u<<1 | gab, v<<1 | ga ^ gab ^ gabc
}

// b2u converts a bool to 0 or 1 (compiled to a SETcc).
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Graph generates the edges (Edges) and builds the CSC with graph.FromCOO,
// removing self-loops and repeated edges as graph generators usually do, so
// the graph has somewhat fewer edges than Edges returns. The sources are
// stored as int32 when N allows. Edge ids are the CSC positions (EdgeIDs is
// nil): the generated order carries no meaning.
func (r RMAT) Graph() (*graph.CSC, error) {
	src, dst, err := r.Edges()
	if err != nil {
		return nil, err
	}
	n := r.N()
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: n, RemoveDuplicates: true, RemoveSelfLoops: true, Threads: r.Threads})
	if err != nil {
		return nil, err
	}
	g.EdgeIDs = nil
	return g, nil
}

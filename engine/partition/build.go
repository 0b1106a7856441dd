package partition

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/graphferry/graphferry/engine/bounds"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/rng"
)

// Options controls Build.
type Options struct {
	// Method selects how nodes are assigned to patches.
	Method Method
	// NumPatches is P; 0 means 1. It must be set (>= 1) for Given.
	NumPatches int
	// Seed drives the Random assignment.
	Seed uint64
	// Assignment is, for Given, the patch of each original node.
	Assignment []int64
}

// String returns the method's name.
func (m Method) String() string {
	switch m {
	case Range:
		return "range"
	case Random:
		return "random"
	case Given:
		return "given"
	case LDG:
		return "ldg"
	}
	return fmt.Sprintf("method(%d)", int(m))
}

// Build partitions g into opt.NumPatches patches and renumbers its nodes so
// that every patch owns one consecutive range of new ids (patch-major; within
// a patch, nodes keep increasing original id). The renumbered graph keeps
// each neighbour list in its original order, the original edge ids and the
// weights. When the numbering turns out to be the identity (Range, one patch,
// or an assignment that is already sorted), the result has nil NewToOld and
// OldToNew and its graph is g.Compact(): g itself when g is already compact
// (or has too many nodes for int32 sources), otherwise g's arrays with the
// sources converted to int32. P > N is allowed (some patches are empty).
//
// g may hold its sources in either storage (Indices or Indices32); the
// result's graph always holds them as int32 when NumNodes <=
// graph.MaxCompactNodes, as int64 otherwise.
//
// The result's arrays are what samplers read at random: Build asks the OS to
// back them with huge pages (graph.CSC.AdviseRandomAccess).
func Build(g *graph.CSC, opt Options) (*Partitioned, error) {
	p, err := build(g, opt)
	if err != nil {
		return nil, err
	}
	p.Graph.AdviseRandomAccess()
	return p, nil
}

func build(g *graph.CSC, opt Options) (*Partitioned, error) {
	if g == nil {
		return nil, errors.New("partition: graph is nil")
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("partition: %w", err)
	}
	if opt.NumPatches < 0 {
		return nil, fmt.Errorf("partition: NumPatches=%d is negative", opt.NumPatches)
	}
	p := int64(max(opt.NumPatches, 1))
	n := g.NumNodes
	// Per patch: its offset, its node count while renumbering.
	if err := bounds.Alloc(bounds.Mul(uint64(p)+1, 16), fmt.Sprintf("partition: NumPatches=%d (the offsets and counts of every patch)", p)); err != nil {
		return nil, err
	}

	var assign []int64
	var err error
	switch opt.Method {
	case Range:
		offsets := make([]int64, p+1)
		for i := range offsets {
			offsets[i] = mulDiv(int64(i), n, p)
		}
		return &Partitioned{Graph: g.Compact(), Offsets: offsets}, nil
	case Random, LDG:
		if assign, err = Assignment(g, opt); err != nil {
			return nil, err
		}
	case Given:
		if opt.NumPatches == 0 {
			return nil, errors.New("partition: NumPatches must be set (>= 1) for the Given method")
		}
		if int64(len(opt.Assignment)) != n {
			return nil, fmt.Errorf("partition: len(Assignment)=%d, want the number of nodes %d", len(opt.Assignment), n)
		}
		if err := checkAssignment(opt.Assignment, p); err != nil {
			return nil, err
		}
		assign = opt.Assignment
	default:
		return nil, fmt.Errorf("partition: unknown Method %d", int(opt.Method))
	}

	offsets, newToOld, oldToNew := renumber(assign, p)
	out := &Partitioned{Graph: g, Offsets: offsets}
	if isIdentity(newToOld) {
		out.Graph = g.Compact()
		return out, nil
	}
	out.NewToOld, out.OldToNew = newToOld, oldToNew
	out.Graph = relabel(g, newToOld, oldToNew)
	return out, nil
}

// mulDiv returns a*b/c without overflow for 0 <= a <= c and b >= 0.
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}

// randomPatch returns the patch of node v under Random with p patches: a
// hash of (seed, v) reduced to [0, p) by a multiply-high.
func randomPatch(seed uint64, v, p int64) int64 {
	h := rng.Mix(uint64(v)*rng.Golden + rng.Mix(seed^0x5851f42d4c957f2d))
	hi, _ := bits.Mul64(h, uint64(p))
	return int64(hi)
}

// randomAssignment assigns every node to a patch from a hash of (seed,
// node id), so the result does not depend on the number of threads.
func randomAssignment(n, p int64, seed uint64) []int64 {
	assign := make([]int64, n)
	par.Chunks(n, par.ChunkCount(n, 0), func(_ int, lo, hi int64) {
		for v := lo; v < hi; v++ {
			assign[v] = randomPatch(seed, v, p)
		}
	})
	return assign
}

// checkAssignment reports the first entry of assign outside [0, p).
func checkAssignment(assign []int64, p int64) error {
	n := int64(len(assign))
	k := par.ChunkCount(n, 0)
	errs := make([]error, k)
	par.Chunks(n, k, func(c int, lo, hi int64) {
		for i := lo; i < hi; i++ {
			if a := assign[i]; uint64(a) >= uint64(p) {
				errs[c] = fmt.Errorf("partition: Assignment[%d]=%d is out of range [0, %d) (NumPatches=%d)", i, a, p, p)
				return
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// renumber sorts the nodes by patch with a parallel stable counting sort
// and returns the patch offsets and both directions of the new numbering.
func renumber(assign []int64, p int64) (offsets, newToOld, oldToNew []int64) {
	n := int64(len(assign))
	k := par.ChunkCount(n, 0)
	for k > 1 && int64(k)*p > 2*n+(1<<20) { // keep the histograms small
		k--
	}
	counts := make([][]int64, k)
	par.Chunks(n, k, func(c int, lo, hi int64) {
		cnt := make([]int64, p)
		for _, a := range assign[lo:hi] {
			cnt[a]++
		}
		counts[c] = cnt
	})
	// Patch-major, chunk-minor write positions.
	offsets = make([]int64, p+1)
	var run int64
	for q := range p {
		offsets[q] = run
		for _, cnt := range counts {
			t := cnt[q]
			cnt[q] = run
			run += t
		}
	}
	offsets[p] = run
	newToOld = make([]int64, n)
	oldToNew = make([]int64, n)
	par.Chunks(n, k, func(c int, lo, hi int64) {
		cnt := counts[c]
		for v := lo; v < hi; v++ {
			a := assign[v]
			pos := cnt[a]
			cnt[a] = pos + 1
			newToOld[pos] = v
			oldToNew[v] = pos
		}
	})
	return offsets, newToOld, oldToNew
}

// isIdentity reports whether perm[i] == i for every i.
func isIdentity(perm []int64) bool {
	for i, v := range perm {
		if v != int64(i) {
			return false
		}
	}
	return true
}

// relabel builds the CSC of g under the numbering: new row i is old row
// newToOld[i] in the same order, each index mapped through oldToNew, with
// the original edge ids and the weights alongside. The sources are written
// as int32 when the node count allows (whatever g's storage), as int64
// otherwise.
func relabel(g *graph.CSC, newToOld, oldToNew []int64) *graph.CSC {
	n := g.NumNodes
	indptr := make([]int64, n+1)
	par.Chunks(n, par.ChunkCount(n, 0), func(_ int, lo, hi int64) {
		for i := lo; i < hi; i++ {
			indptr[i+1] = g.InDegree(newToOld[i])
		}
	})
	prefixSum(indptr)
	e := g.NumEdges()
	out := &graph.CSC{NumNodes: n, Indptr: indptr, EdgeIDs: make([]int64, e)}
	// mapRow writes the mapped sources of old positions [a, b) at new
	// positions [c, d): one variant per (input, output) storage pair.
	var mapRow func(a, b, c, d int64)
	switch compact := n <= graph.MaxCompactNodes; {
	case compact && g.Indices32 != nil:
		out.Indices32 = make([]int32, e)
		mapRow = func(a, b, c, d int64) { mapSources(out.Indices32[c:d], g.Indices32[a:b], oldToNew) }
	case compact:
		out.Indices32 = make([]int32, e)
		mapRow = func(a, b, c, d int64) { mapSources(out.Indices32[c:d], g.Indices[a:b], oldToNew) }
	case g.Indices32 != nil:
		out.Indices = make([]int64, e)
		mapRow = func(a, b, c, d int64) { mapSources(out.Indices[c:d], g.Indices32[a:b], oldToNew) }
	default:
		out.Indices = make([]int64, e)
		mapRow = func(a, b, c, d int64) { mapSources(out.Indices[c:d], g.Indices[a:b], oldToNew) }
	}
	if g.Weights != nil {
		out.Weights = make([]float32, e)
	}
	par.Rows(indptr, 0, func(lo, hi int64) {
		for i := lo; i < hi; i++ {
			old := newToOld[i]
			a, b := g.Indptr[old], g.Indptr[old+1]
			mapRow(a, b, indptr[i], indptr[i+1])
			eids := out.EdgeIDs[indptr[i]:indptr[i+1]]
			if g.EdgeIDs != nil {
				copy(eids, g.EdgeIDs[a:b])
			} else {
				for j := range eids {
					eids[j] = a + int64(j)
				}
			}
			if g.Weights != nil {
				copy(out.Weights[indptr[i]:indptr[i+1]], g.Weights[a:b])
			}
		}
	})
	return out
}

// mapSources sets dst[j] = oldToNew[src[j]]; the caller has checked that the
// new ids fit D.
func mapSources[D, S int32 | int64](dst []D, src []S, oldToNew []int64) {
	dst = dst[:len(src)]
	for j, u := range src {
		dst[j] = D(oldToNew[u])
	}
}

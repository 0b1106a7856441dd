package graph

import (
	"fmt"
	"slices"
	"sync"

	"github.com/graphferry/graphferry/engine/internal/par"
)

// FromCSC wraps the given in-neighbour CSC arrays (no copy: the caller hands
// them over) after checking them with Validate. edgeIDs and weights may be
// nil. The sources stay in int64 storage (Indices); see CSC.Compact.
func FromCSC(numNodes int64, indptr, indices, edgeIDs []int64, weights []float32) (*CSC, error) {
	g := &CSC{NumNodes: numNodes, Indptr: indptr, Indices: indices, EdgeIDs: edgeIDs, Weights: weights}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// FromCSR builds a CSC from an out-neighbour CSR (row u lists the
// destinations v of the edges u->v). The CSR is validated like a CSC (the
// messages say "CSR") and transposed with a parallel counting sort. Edge ids
// are edgeIDs when given, otherwise the CSR positions; within a CSC row the
// edges are in increasing CSR position. Like FromCOO, the sources are stored
// as int32 when the node count allows. The inputs are not modified or
// retained.
func FromCSR(numNodes int64, indptr, indices, edgeIDs []int64, weights []float32) (*CSC, error) {
	if err := validateCompressed("CSR", numNodes, numNodes, indptr, indices, edgeIDs, weights); err != nil {
		return nil, err
	}
	// Expand the row pointer into one source id per edge, then sort by
	// destination like a COO list whose positions are the CSR positions.
	src := make([]int64, len(indices))
	par.Rows(indptr, 0, func(lo, hi int64) {
		for u := lo; u < hi; u++ {
			row := src[indptr[u]:indptr[u+1]]
			for i := range row {
				row[i] = u
			}
		}
	})
	g, err := buildCOO(sliceBatches{src, indices, weights, par.ChunkCount(int64(len(src)), 0)}, COOOptions{NumNodes: numNodes}, nil, true)
	if err != nil {
		return nil, err
	}
	if edgeIDs != nil {
		k := par.ChunkCount(int64(len(g.EdgeIDs)), 0)
		par.Chunks(int64(len(g.EdgeIDs)), k, func(_ int, lo, hi int64) {
			for i, p := range g.EdgeIDs[lo:hi] {
				g.EdgeIDs[lo+int64(i)] = edgeIDs[p]
			}
		})
	}
	return g, nil
}

// MaxNodes is the largest node count FromCOO accepts (given or inferred): it
// bounds the row-pointer allocation so that a stray huge id is an error
// rather than an out-of-memory crash.
const MaxNodes = 1 << 34

// COOOptions controls FromCOO.
type COOOptions struct {
	// NumNodes is the number of nodes; <= 0 infers it as the largest id + 1.
	NumNodes int64
	// RemoveDuplicates drops repeated (src, dst) pairs, keeping the first
	// occurrence (and its edge id).
	RemoveDuplicates bool
	// RemoveSelfLoops drops the edges v->v.
	RemoveSelfLoops bool
	// Threads is the parallelism; <= 0 means GOMAXPROCS.
	Threads int
}

// FromCOO builds a CSC from an edge list (edge i is src[i] -> dst[i] with
// weight weights[i]; weights may be nil). The edge id of an edge is its
// position i in the input. The build is a parallel, stable counting sort by
// destination: within row v the edges keep their input order. Duplicates and
// self-loops are kept unless opt asks to remove them. The sources are stored
// as int32 (Indices32) when the node count allows (NumNodes <=
// MaxCompactNodes), as int64 (Indices) otherwise. The inputs are not
// modified or retained.
func FromCOO(src, dst []int64, weights []float32, opt COOOptions) (*CSC, error) {
	e := int64(len(src))
	if int64(len(dst)) != e {
		return nil, fmt.Errorf("graph: len(src)=%d does not equal len(dst)=%d", len(src), len(dst))
	}
	if weights != nil && int64(len(weights)) != e {
		return nil, fmt.Errorf("graph: len(weights)=%d does not equal the number of edges %d (or nil)", len(weights), e)
	}
	return BuildCOO(sliceBatches{src, dst, weights, par.ChunkCount(e, opt.Threads)}, opt, nil)
}

// sliceBatches are in-memory edge arrays as k EdgeBatches.
type sliceBatches struct {
	src, dst []int64
	w        []float32
	k        int
}

func (s sliceBatches) NumBatches() int { return s.k }

func (s sliceBatches) BatchRows(i int) int64 {
	lo, hi := par.ChunkBounds(int64(len(s.src)), s.k, i)
	return hi - lo
}

func (s sliceBatches) Weighted() bool { return s.w != nil }

func (s sliceBatches) Load(i int, fn func(EdgePiece) error) error {
	lo, hi := par.ChunkBounds(int64(len(s.src)), s.k, i)
	p := EdgePiece{Src: s.src[lo:hi], Dst: s.dst[lo:hi]}
	if s.w != nil {
		p.Weights = s.w[lo:hi]
	}
	return fn(p)
}

// prefixCounts turns per-chunk destination counts into write offsets:
// afterwards counts[c][v] = indptr[v] + sum of counts[c'][v] for c' < c, and
// indptr is the row pointer of the sorted result. It runs in parallel over
// blocks of destinations.
func prefixCounts(counts [][]int64, indptr []int64, threads int) {
	n := int64(len(indptr) - 1)
	indptr[0] = 0
	b := par.ChunkCount(n, threads)
	blockSum := make([]int64, b)
	// Per destination: degree into indptr[v+1], counts to exclusive offsets
	// within the row.
	par.Chunks(n, b, func(blk int, lo, hi int64) {
		var total int64
		for v := lo; v < hi; v++ {
			var sum int64
			for _, cnt := range counts {
				t := cnt[v]
				cnt[v] = sum
				sum += t
			}
			indptr[v+1] = sum
			total += sum
		}
		blockSum[blk] = total
	})
	var run int64
	for blk, s := range blockSum {
		blockSum[blk] = run
		run += s
	}
	par.Chunks(n, b, func(blk int, lo, hi int64) {
		run := blockSum[blk]
		for v := lo; v < hi; v++ {
			for _, cnt := range counts {
				cnt[v] += run
			}
			run += indptr[v+1]
			indptr[v+1] = run
		}
	})
}

// removeDuplicates drops repeated sources within each row of g, keeping the
// first occurrence (rows are in input order, so that is the one with the
// smallest input position). It returns g itself when nothing is dropped;
// otherwise the result keeps g's source storage (int64 or int32).
func removeDuplicates(g *CSC, threads int) *CSC {
	if g.Indices32 != nil {
		return removeDuplicatesOf(g, g.Indices32, threads, func(out *CSC, m int64) []int32 {
			out.Indices32 = make([]int32, m)
			return out.Indices32
		})
	}
	return removeDuplicatesOf(g, g.Indices, threads, func(out *CSC, m int64) []int64 {
		out.Indices = make([]int64, m)
		return out.Indices
	})
}

// removeDuplicatesOf is removeDuplicates for g whose sources are ind;
// alloc gives the result its source storage of m entries.
func removeDuplicatesOf[I int32 | int64](g *CSC, ind []I, threads int, alloc func(out *CSC, m int64) []I) *CSC {
	n := g.NumNodes
	if g.NumEdges() == 0 {
		return g
	}
	drop := make([]bool, g.NumEdges())
	newDeg := make([]int64, n+1) // newDeg[v+1] = kept edges of row v
	var mu sync.Mutex
	var dropped int64
	par.Rows(g.Indptr, threads, func(lo, hi int64) {
		var scratch []dupEntry
		var local int64
		for v := lo; v < hi; v++ {
			a, b := g.Indptr[v], g.Indptr[v+1]
			var nd int64
			nd, scratch = markDuplicates(ind[a:b], drop[a:b], scratch)
			local += nd
			newDeg[v+1] = b - a - nd
		}
		mu.Lock()
		dropped += local
		mu.Unlock()
	})
	if dropped == 0 {
		return g
	}
	for v := int64(0); v < n; v++ {
		newDeg[v+1] += newDeg[v]
	}
	m := newDeg[n]
	out := &CSC{NumNodes: n, Indptr: newDeg, EdgeIDs: make([]int64, m)}
	outInd := alloc(out, m)
	if g.Weights != nil {
		out.Weights = make([]float32, m)
	}
	par.Rows(g.Indptr, threads, func(lo, hi int64) {
		q := out.Indptr[lo]
		for p := g.Indptr[lo]; p < g.Indptr[hi]; p++ {
			if drop[p] {
				continue
			}
			outInd[q] = ind[p]
			out.EdgeIDs[q] = g.EdgeID(p)
			if out.Weights != nil {
				out.Weights[q] = g.Weights[p]
			}
			q++
		}
	})
	return out
}

// dupEntry is a (source, position in row) pair used to find duplicates.
type dupEntry struct{ src, pos int64 }

// markDuplicates sets drop[i] for every entry of row that repeats an earlier
// entry and returns how many were marked; scratch is reusable memory.
func markDuplicates[I int32 | int64](row []I, drop []bool, scratch []dupEntry) (int64, []dupEntry) {
	var nd int64
	if len(row) <= 16 {
		for i := 1; i < len(row); i++ {
			for j := 0; j < i; j++ {
				if row[j] == row[i] {
					drop[i] = true
					nd++
					break
				}
			}
		}
		return nd, scratch
	}
	scratch = scratch[:0]
	for i, s := range row {
		scratch = append(scratch, dupEntry{int64(s), int64(i)})
	}
	slices.SortFunc(scratch, func(x, y dupEntry) int {
		if x.src != y.src {
			if x.src < y.src {
				return -1
			}
			return 1
		}
		if x.pos < y.pos {
			return -1
		}
		if x.pos > y.pos {
			return 1
		}
		return 0
	})
	for i := 1; i < len(scratch); i++ {
		if scratch[i].src == scratch[i-1].src {
			drop[scratch[i].pos] = true
			nd++
		}
	}
	return nd, scratch
}

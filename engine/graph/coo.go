package graph

import (
	"fmt"
	"math"

	"github.com/graphferry/graphferry/engine/internal/par"
)

// EdgePiece is a run of consecutive edges of an edge list: edge i is
// Src[i] -> Dst[i] with weight Weights[i] (Weights nil: unweighted).
type EdgePiece struct {
	Src, Dst []int64
	Weights  []float32
}

// EdgeBatches is an edge list held as consecutive batches that are loaded
// when read, so that building a CSC from it never holds the whole list: a
// file's record batches, or slices of arrays in memory. BuildCOO reads
// every batch two or three times, batches of different groups from
// different goroutines at once.
type EdgeBatches interface {
	// NumBatches is the number of batches.
	NumBatches() int
	// BatchRows is the number of edges of batch i, known before it is
	// loaded.
	BatchRows(i int) int64
	// Weighted says whether the edges have weights (every batch, or none).
	Weighted() bool
	// Load calls fn with batch i's edges, as one piece or several in
	// order; they are valid during the call only. An error from fn is
	// returned as it is.
	Load(i int, fn func(EdgePiece) error) error
}

// BuildCOO builds the CSC of the edge list that batches hold, as FromCOO
// does (the same checks, messages, edge ids and result), without holding
// the list: it counts destinations over the batches, allocates the CSC and
// reads them again to place the edges (a first read finds the node count
// when opt.NumNodes is not given). Groups of consecutive batches are read
// in parallel, one group per thread, each with its own counters.
//
// reserve (nil: none) is told, before each allocation, the node and edge
// counts and the bytes the build then holds (the counters, then the
// counters and the CSC), and an error it returns stops the build with
// nothing more allocated.
func BuildCOO(batches EdgeBatches, opt COOOptions, reserve func(numNodes, numEdges, bytes int64) error) (*CSC, error) {
	return buildCOO(batches, opt, reserve, false)
}

// scan is what the first read learns of a group of batches.
type scan struct {
	err          error
	max          int64
	first, last  int64 // the first and last destination (-1: no edge)
	sorted       bool  // destinations non-decreasing within the group
	selfLoops    int64
	counted      bool
	countedEdges int64
}

// buildCOO is BuildCOO; keepIDs stores edge ids even when they equal the
// CSC positions (FromCSR's).
func buildCOO(batches EdgeBatches, opt COOOptions, reserve func(n, e, bytes int64) error, keepIDs bool) (*CSC, error) {
	if reserve == nil {
		reserve = func(_, _, _ int64) error { return nil }
	}
	nb := batches.NumBatches()
	rows := make([]int64, nb+1) // rows[i]: the first edge of batch i
	for i := range nb {
		rows[i+1] = rows[i] + batches.BatchRows(i)
	}
	e := rows[nb]
	n := opt.NumNodes
	limit := int64(math.MaxInt64)
	if n > 0 {
		limit = n
	}
	// Groups of consecutive batches, one counter array each: fewer groups
	// than threads when the counters (k*n) would dwarf the edge list.
	k := min(par.Threads(opt.Threads), max(nb, 1))
	groups := func() [][2]int {
		for k > 1 && n > 0 && int64(k)*n > 2*e+(1<<22) {
			k--
		}
		g := make([][2]int, k)
		for j := range g {
			g[j] = [2]int{nb * j / k, nb * (j + 1) / k}
		}
		return g
	}
	dropSelf := opt.RemoveSelfLoops
	var counts [][]int64
	// read runs a pass over every group: fn(j, i, row, piece) for each
	// piece of batch i (whose first edge is row) of group j, in order
	// within a group. The first error in edge order is returned.
	read := func(gs [][2]int, fn func(j int, row int64, p EdgePiece) error) []error {
		errs := make([]error, len(gs))
		par.Chunks(int64(len(gs)), len(gs), func(j int, _, _ int64) {
			for i := gs[j][0]; i < gs[j][1]; i++ {
				row := rows[i]
				err := batches.Load(i, func(p EdgePiece) error {
					if int64(len(p.Dst)) != int64(len(p.Src)) || (p.Weights != nil && len(p.Weights) != len(p.Src)) {
						return fmt.Errorf("graph: an edge piece of %d sources, %d destinations and %d weights", len(p.Src), len(p.Dst), len(p.Weights))
					}
					if err := fn(j, row, p); err != nil {
						return err
					}
					row += int64(len(p.Src))
					return nil
				})
				if err == nil && row != rows[i+1] {
					err = fmt.Errorf("graph: edge batch %d has %d edges, %d expected", i, row-rows[i], rows[i+1]-rows[i])
				}
				if err != nil {
					errs[j] = err
					return
				}
			}
		})
		return errs
	}
	firstErr := func(errs []error) error {
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}

	// The first read checks every edge (and, the node count known,
	// counts destinations); without a node count, a second one counts.
	var gs [][2]int
	var scans []scan
	scanPass := func(count bool) error {
		if count {
			gs = groups()
			if err := reserve(n, e, 8*int64(len(gs))*n); err != nil {
				return err
			}
			counts = make([][]int64, len(gs))
			for j := range counts {
				counts[j] = make([]int64, n)
			}
		} else {
			gs = groups()
		}
		scans = make([]scan, len(gs))
		for j := range scans {
			scans[j] = scan{max: -1, first: -1, last: -1, sorted: true}
		}
		errs := read(gs, func(j int, row int64, p EdgePiece) error {
			s := &scans[j]
			var cnt []int64
			if count {
				cnt = counts[j]
			}
			for i, d := range p.Dst {
				src := p.Src[i]
				if uint64(src) >= uint64(limit) {
					return idError("src", row+int64(i), src, opt.NumNodes)
				}
				if uint64(d) >= uint64(limit) {
					return idError("dst", row+int64(i), d, opt.NumNodes)
				}
				s.max = max(s.max, src, d)
				if d < s.last {
					s.sorted = false
				}
				if s.first < 0 {
					s.first = d
				}
				s.last = d
				if src == d {
					s.selfLoops++
					if dropSelf {
						continue
					}
				}
				if cnt != nil {
					cnt[d]++
				}
			}
			for i, w := range p.Weights {
				if err := checkWeight("weights", row+int64(i), w); err != nil {
					return err
				}
			}
			return nil
		})
		return firstErr(errs)
	}
	if err := scanPass(n > 0); err != nil {
		return nil, err
	}
	if n <= 0 {
		mx := int64(-1)
		for _, s := range scans {
			mx = max(mx, s.max)
		}
		n = mx + 1
		if n > MaxNodes {
			return nil, fmt.Errorf("graph: NumNodes=%d (largest id %d) exceeds MaxNodes=%d", n, mx, int64(MaxNodes))
		}
		if n > 0 {
			limit = n
			if err := scanPass(true); err != nil {
				return nil, err
			}
		} else {
			gs, counts = groups(), make([][]int64, k)
		}
	}
	sorted, selfLoops, last := true, int64(0), int64(-1)
	for _, s := range scans {
		selfLoops += s.selfLoops
		if s.first >= 0 {
			sorted = sorted && s.sorted && s.first >= last
			last = s.last
		}
	}
	dropSelf = dropSelf && selfLoops > 0
	identity := sorted && !dropSelf && !keepIDs

	indptr := make([]int64, n+1)
	for j := range counts {
		if counts[j] == nil {
			counts[j] = make([]int64, n)
		}
	}
	prefixCounts(counts, indptr, opt.Threads)
	m := indptr[n]
	g := &CSC{NumNodes: n, Indptr: indptr}
	compact := n <= compactLimit
	need := 8*int64(len(counts))*n + 8*(n+1) + 4*m
	if !compact {
		need += 4 * m
	}
	if !identity {
		need += 8 * m
	}
	if batches.Weighted() {
		need += 4 * m
	}
	if err := reserve(n, e, need); err != nil {
		return nil, err
	}
	if compact {
		g.Indices32 = make([]int32, m)
	} else {
		g.Indices = make([]int64, m)
	}
	if !identity {
		g.EdgeIDs = make([]int64, m)
	}
	if batches.Weighted() {
		g.Weights = make([]float32, m)
	}
	if e > 0 {
		errs := read(gs, func(j int, row int64, p EdgePiece) error {
			if compact {
				scatterEdges(g.Indices32, g.EdgeIDs, g.Weights, p, counts[j], row, dropSelf)
			} else {
				scatterEdges(g.Indices, g.EdgeIDs, g.Weights, p, counts[j], row, dropSelf)
			}
			return nil
		})
		if err := firstErr(errs); err != nil {
			return nil, err
		}
	}
	if opt.RemoveDuplicates {
		g = removeDuplicates(g, opt.Threads)
	}
	return g, nil
}

// idError describes a bad node id at position i of the array named name.
func idError(name string, i, v, numNodes int64) error {
	if v < 0 {
		return fmt.Errorf("graph: %s[%d]=%d is negative", name, i, v)
	}
	return fmt.Errorf("graph: %s[%d]=%d is out of range [0, %d) (NumNodes=%d)", name, i, v, numNodes, numNodes)
}

// scatterEdges writes the edges of p (the first of which is edge row) to
// their CSC positions, taken (and advanced) from cnt[dst]: the source into
// ind, the edge's position into eids and the weight into w (each when
// non-nil). dropSelf skips the edges v->v. The caller has checked that
// every source fits I.
func scatterEdges[I int32 | int64](ind []I, eids []int64, w []float32, p EdgePiece, cnt []int64, row int64, dropSelf bool) {
	for i, d := range p.Dst {
		s := p.Src[i]
		if dropSelf && s == d {
			continue
		}
		q := cnt[d]
		cnt[d] = q + 1
		ind[q] = I(s)
		if eids != nil {
			eids[q] = row + int64(i)
		}
		if w != nil && p.Weights != nil {
			w[q] = p.Weights[i]
		}
	}
}

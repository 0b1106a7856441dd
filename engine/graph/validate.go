package graph

import (
	"errors"
	"fmt"
	"math"

	"github.com/graphferry/graphferry/engine/internal/par"
)

// Validate checks every invariant listed in the CSC doc comment and returns
// an error describing the first violation found (nil if g is well formed).
// Large graphs are checked in parallel.
func (g *CSC) Validate() error {
	if g == nil {
		return errors.New("graph: CSC is nil")
	}
	if g.Indices32 != nil {
		if g.Indices != nil {
			return fmt.Errorf("graph: CSC has both Indices (%d entries) and Indices32 (%d entries); exactly one may hold the sources",
				len(g.Indices), len(g.Indices32))
		}
		if err := g.checkWindow(); err != nil {
			return err
		}
		return validateCompressed("CSC", g.NumNodes, g.rows(), g.Indptr, g.Indices32, g.EdgeIDs, g.Weights)
	}
	if err := g.checkWindow(); err != nil {
		return err
	}
	return validateCompressed("CSC", g.NumNodes, g.rows(), g.Indptr, g.Indices, g.EdgeIDs, g.Weights)
}

// rows returns the number of rows Indptr must hold: NumNodes, or for a
// windowed graph the rows it has (checkWindow bounds them).
func (g *CSC) rows() int64 {
	if g.Windowed && len(g.Indptr) > 0 {
		return int64(len(g.Indptr)) - 1
	}
	return g.NumNodes
}

// checkWindow checks a windowed graph's rows lie among its nodes (and
// that an unwindowed one has RowBase 0).
func (g *CSC) checkWindow() error {
	if !g.Windowed {
		if g.RowBase != 0 {
			return fmt.Errorf("graph: CSC RowBase=%d on a graph that is not windowed (want 0)", g.RowBase)
		}
		return nil
	}
	if len(g.Indptr) == 0 || g.RowBase < 0 || g.RowBase+int64(len(g.Indptr))-1 > g.NumNodes {
		return fmt.Errorf("graph: CSC window of %d rows from %d is outside the %d nodes (want 0 <= RowBase, RowBase+len(Indptr)-1 <= NumNodes)",
			len(g.Indptr)-1, g.RowBase, g.NumNodes)
	}
	return nil
}

// validateCompressed checks a compressed adjacency (CSC or CSR, named by
// kind in the messages) with ids in [0, ids), n rows (ids unless windowed)
// and indices of either width.
func validateCompressed[I int32 | int64](kind string, ids, n int64, indptr []int64, indices []I, edgeIDs []int64, weights []float32) error {
	if ids < 0 {
		return fmt.Errorf("graph: %s NumNodes=%d is negative", kind, ids)
	}
	if int64(len(indptr))-1 != n {
		return fmt.Errorf("graph: %s len(indptr)=%d, want NumNodes+1=%d", kind, len(indptr), n+1)
	}
	if indptr[0] != 0 {
		return fmt.Errorf("graph: %s indptr[0]=%d, want 0", kind, indptr[0])
	}
	e := int64(len(indices))
	if edgeIDs != nil && int64(len(edgeIDs)) != e {
		return fmt.Errorf("graph: %s len(edgeIDs)=%d, want len(indices)=%d (or nil)", kind, len(edgeIDs), e)
	}
	if weights != nil && int64(len(weights)) != e {
		return fmt.Errorf("graph: %s len(weights)=%d, want len(indices)=%d (or nil)", kind, len(weights), e)
	}

	// indptr must be non-decreasing: check indptr[i] >= indptr[i-1], i in [1, n].
	k := par.ChunkCount(n, 0)
	errs := make([]error, k)
	par.Chunks(n, k, func(c int, lo, hi int64) {
		for i := lo + 1; i <= hi; i++ {
			if indptr[i] < indptr[i-1] {
				errs[c] = fmt.Errorf("graph: %s indptr[%d]=%d is less than indptr[%d]=%d (indptr must be non-decreasing)",
					kind, i, indptr[i], i-1, indptr[i-1])
				return
			}
		}
	})
	if err := par.FirstError(errs); err != nil {
		return err
	}
	if indptr[n] != e {
		return fmt.Errorf("graph: %s indptr[%d]=%d, want len(indices)=%d", kind, n, indptr[n], e)
	}

	k = par.ChunkCount(e, 0)
	errs = make([]error, k)
	par.Chunks(e, k, func(c int, lo, hi int64) {
		for i, x := range indices[lo:hi] {
			if uint64(int64(x)) >= uint64(ids) {
				errs[c] = fmt.Errorf("graph: %s indices[%d]=%d is out of range [0, %d)", kind, lo+int64(i), x, ids)
				return
			}
		}
		if edgeIDs != nil {
			for i, x := range edgeIDs[lo:hi] {
				if x < 0 {
					errs[c] = fmt.Errorf("graph: %s edgeIDs[%d]=%d is negative", kind, lo+int64(i), x)
					return
				}
			}
		}
		if weights != nil {
			name := kind + " weights" // once a chunk, not once an edge
			for i, w := range weights[lo:hi] {
				if err := checkWeight(name, lo+int64(i), w); err != nil {
					errs[c] = err
					return
				}
			}
		}
	})
	return par.FirstError(errs)
}

// checkWeight returns an error if w (element i of the slice named name) is
// not a finite non-negative number.
func checkWeight(name string, i int64, w float32) error {
	if w >= 0 && !math.IsInf(float64(w), 1) {
		return nil
	}
	if w < 0 {
		return fmt.Errorf("graph: %s[%d]=%g is negative (weights must be finite and >= 0)", name, i, w)
	}
	return fmt.Errorf("graph: %s[%d]=%g is not finite (weights must be finite and >= 0)", name, i, w)
}

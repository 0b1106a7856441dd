package graph

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/internal/par"
)

// Types is the typed metadata of a heterogeneous graph stored as one
// homogeneous CSC over a global id space (DGL's to_homogeneous numbering):
//
//   - node type t owns the consecutive ORIGINAL node ids
//     [NodeOffsets[t], NodeOffsets[t+1]);
//   - relation r goes from nodes of type RelSrc[r] to nodes of type
//     RelDst[r] and owns the consecutive ORIGINAL edge ids
//     [EdgeOffsets[r], EdgeOffsets[r+1]);
//   - within every destination's in-neighbour list, the edges are grouped
//     by relation in increasing relation order (a COO given relation by
//     relation, edge id = position, builds exactly that).
//
// The type of a node or an edge is a binary search over the offsets on its
// original id, so the CSC stores nothing per edge, and renumbering for
// partitioning (which keeps every list's order and the original edge ids)
// keeps the grouping: relation r's in-edges of v are one contiguous segment
// of v's list (see Segment).
type Types struct {
	NodeOffsets []int64 // [T+1]
	EdgeOffsets []int64 // [R+1]
	RelSrc      []int32 // [R]: source node type of each relation
	RelDst      []int32 // [R]: destination node type of each relation
}

// NumNodeTypes returns T.
func (t *Types) NumNodeTypes() int { return len(t.NodeOffsets) - 1 }

// NumRelations returns R.
func (t *Types) NumRelations() int { return len(t.EdgeOffsets) - 1 }

// NodeType returns the type of the node with original id v (in range).
func (t *Types) NodeType(v int64) int32 { return int32(upper(t.NodeOffsets, v)) }

// Relation returns the relation of the edge with original id e (in range).
func (t *Types) Relation(e int64) int32 { return int32(upper(t.EdgeOffsets, e)) }

// upper returns the index i with off[i] <= x < off[i+1] for an offset
// array off (non-decreasing, off[0] <= x < off[len-1]); among empty ranges
// at x, the last one's index.
func upper(off []int64, x int64) int {
	lo, hi := 0, len(off)-2
	for lo < hi {
		m := int(uint(lo+hi+1) >> 1)
		if off[m] <= x {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// Segment returns the positions [lo, hi) of the edges of relation r in the
// list [a, b) of g (a destination's in-edges, grouped by relation): a
// binary search on the edge ids, since "edge id >= EdgeOffsets[r]" holds
// exactly for the edges of relations >= r.
func (t *Types) Segment(g *CSC, a, b int64, r int) (lo, hi int64) {
	return searchEdge(g, a, b, t.EdgeOffsets[r]), searchEdge(g, a, b, t.EdgeOffsets[r+1])
}

// Ends writes to ends[i] the end of relation rels[i]'s segment of the list
// [a, b) of g (as Segment gives it), for relations rels in increasing
// order, in one forward search: each search starts where the previous one
// ended. When rels are all the relations that occur in the list (those
// into its node's type), the segments partition it: rels[i]'s is
// [ends[i-1], ends[i]), with ends[-1] = a.
func (t *Types) Ends(g *CSC, a, b int64, rels []int32, ends []int64) {
	cur := a
	for i, r := range rels {
		cur = searchEdge(g, cur, b, t.EdgeOffsets[r+1])
		ends[i] = cur
	}
}

// searchEdge returns the first position p in [a, b) whose edge id is >= x
// (b when none is). Short ranges (most lists) are scanned: the loads are
// sequential, where a binary search's are not.
func searchEdge(g *CSC, a, b, x int64) int64 {
	if g.EdgeIDs == nil {
		return min(max(a, x), b)
	}
	ids := g.EdgeIDs
	if b-a <= 16 {
		for a < b && ids[a] < x {
			a++
		}
		return a
	}
	for a < b {
		m := int64(uint64(a+b) >> 1)
		if ids[m] < x {
			a = m + 1
		} else {
			b = m
		}
	}
	return a
}

// RelationsByDst returns, for every node type, the relations whose
// destination type it is, in increasing order.
func (t *Types) RelationsByDst() [][]int32 {
	out := make([][]int32, t.NumNodeTypes())
	for r, d := range t.RelDst {
		out[d] = append(out[d], int32(r))
	}
	return out
}

// Clone returns a deep copy of t.
func (t *Types) Clone() *Types {
	if t == nil {
		return nil
	}
	return &Types{
		NodeOffsets: slices.Clone(t.NodeOffsets),
		EdgeOffsets: slices.Clone(t.EdgeOffsets),
		RelSrc:      slices.Clone(t.RelSrc),
		RelDst:      slices.Clone(t.RelDst),
	}
}

// CheckShape validates t alone against a graph of numNodes nodes and
// numEdges edges: T >= 1 and R >= 1, offsets start at 0, are
// non-decreasing and end at numNodes (numEdges), relation types are in
// [0, T).
func (t *Types) CheckShape(numNodes, numEdges int64) error {
	if t == nil {
		return errors.New("graph: types are nil")
	}
	if err := checkTypeOffsets("node_offsets", t.NodeOffsets, numNodes, "the number of nodes"); err != nil {
		return err
	}
	if err := checkTypeOffsets("edge_offsets", t.EdgeOffsets, numEdges, "the number of edges"); err != nil {
		return err
	}
	r, nt := t.NumRelations(), int32(t.NumNodeTypes())
	if len(t.RelSrc) != r || len(t.RelDst) != r {
		return fmt.Errorf("graph: relation_src_type has %d entries and relation_dst_type %d, want one per relation (%d)", len(t.RelSrc), len(t.RelDst), r)
	}
	for i := 0; i < r; i++ {
		if s := t.RelSrc[i]; s < 0 || s >= nt {
			return fmt.Errorf("graph: relation_src_type[%d] = %d is out of range [0, %d)", i, s, nt)
		}
		if d := t.RelDst[i]; d < 0 || d >= nt {
			return fmt.Errorf("graph: relation_dst_type[%d] = %d is out of range [0, %d)", i, d, nt)
		}
	}
	return nil
}

func checkTypeOffsets(name string, off []int64, end int64, what string) error {
	if len(off) < 2 {
		return fmt.Errorf("graph: %s has %d entries, want at least 2 (one type or relation, plus 1)", name, len(off))
	}
	if off[0] != 0 {
		return fmt.Errorf("graph: %s[0] = %d, want 0", name, off[0])
	}
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return fmt.Errorf("graph: %s[%d] = %d is less than %s[%d] = %d (offsets must be non-decreasing)", name, i, off[i], name, i-1, off[i-1])
		}
	}
	if last := off[len(off)-1]; last != end {
		return fmt.Errorf("graph: %s[%d] = %d, want %s (%d)", name, len(off)-1, last, what, end)
	}
	return nil
}

// Validate checks t against g, a CSC whose rows and sources may be
// renumbered (newToOld maps g's ids to original ids; nil: the identity):
// CheckShape, then every edge id is below EdgeOffsets[R] (the number of
// edges), every edge of relation r goes from a node of type RelSrc[r] to a
// node of type RelDst[r], and every in-neighbour list is grouped by
// relation in increasing order. The error names the first bad node (by
// original id) and edge. Large graphs are checked in parallel.
func (t *Types) Validate(g *CSC, newToOld []int64) error {
	var orig func(int64) int64
	if newToOld != nil {
		orig = func(v int64) int64 { return newToOld[v] }
	}
	return t.ValidateSpan(g, orig, g.NumEdges())
}

// ValidateSpan is Validate for a CSC that may hold some of the edges of a
// larger graph of numEdges edges (a rank's part, whose edge ids are the
// whole graph's): EdgeOffsets end at numEdges, and every edge id is below
// it. orig maps g's ids to original ids (nil: the identity): a rank's
// part knows those of the rows it holds and of their sources.
func (t *Types) ValidateSpan(g *CSC, orig func(int64) int64, numEdges int64) error {
	if err := t.CheckShape(g.NumNodes, numEdges); err != nil {
		return err
	}
	if orig == nil {
		orig = func(v int64) int64 { return v }
	}
	e := numEdges
	// The first bad row (in internal order) wins, so that the message does
	// not depend on the threads.
	var mu errFirst
	par.Rows(g.Indptr, 0, func(lo, hi int64) {
		for v := lo; v < hi; v++ {
			if mu.seen(v) {
				return
			}
			if err := t.checkRow(g, g.RowBase+v, orig, e); err != nil {
				mu.set(v, err)
				return
			}
		}
	})
	return mu.err
}

// checkRow checks the in-neighbour list of internal node v.
func (t *Types) checkRow(g *CSC, v int64, orig func(int64) int64, e int64) error {
	ov := orig(v)
	dt := t.NodeType(ov)
	prev := int32(-1)
	a, b := g.Span(v)
	for p := a; p < b; p++ {
		id := g.EdgeID(p)
		if id >= e {
			return fmt.Errorf("graph: node %d has in-edge id %d, but a typed graph's edge ids must be below the number of edges %d (edge_offsets end there)", ov, id, e)
		}
		r := t.Relation(id)
		if r < prev {
			return fmt.Errorf("graph: node %d's in-edges are not grouped by relation: edge %d (relation %d) follows an edge of relation %d (give the edges relation by relation)", ov, id, r, prev)
		}
		prev = r
		if t.RelDst[r] != dt {
			return fmt.Errorf("graph: edge %d of relation %d ends at node %d of type %d, but the relation's destination type is %d", id, r, ov, dt, t.RelDst[r])
		}
		u := orig(g.Source(p))
		if st := t.NodeType(u); st != t.RelSrc[r] {
			return fmt.Errorf("graph: edge %d of relation %d starts at node %d of type %d, but the relation's source type is %d (into node %d)", id, r, u, st, t.RelSrc[r], ov)
		}
	}
	return nil
}

// errFirst keeps the error of the lowest row among those reported by
// concurrent checkers.
type errFirst struct {
	bad atomic.Int64 // 1 + the lowest bad row so far; 0: none
	mu  sync.Mutex
	err error
}

// seen reports whether an error was already set at a row below v (so that
// checking v and later rows is moot).
func (f *errFirst) seen(v int64) bool {
	b := f.bad.Load()
	return b != 0 && b-1 < v
}

func (f *errFirst) set(v int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.bad.Load(); b == 0 || v < b-1 {
		f.bad.Store(v + 1)
		f.err = err
	}
}

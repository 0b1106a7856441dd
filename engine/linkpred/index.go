package linkpred

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/graph"
)

// Adjacency answers whether u->v is an edge; GlobalUniform rejects such
// pairs. EdgeIndex implements it over a CSC.
type Adjacency interface {
	NumNodes() int64
	NumEdges() int64
	HasEdge(u, v int64) bool
}

// EdgeIndex answers the two questions link prediction asks of a graph: the
// endpoints of an edge id (DGL's find_edges) and whether u->v is an edge.
// It builds what each needs on first use, once, and is safe for concurrent
// use. It reads g and never modifies it; g must stay unchanged while the
// index is used.
type EdgeIndex struct {
	g       *graph.CSC
	threads int

	posOnce sync.Once
	posErr  error
	dense   []int64 // dense[id] = position of edge id, -1 if none
	sparse  []idAt  // (id, position) sorted by id, when ids are sparse
	posMode posKind

	adjOnce  sync.Once
	sorted32 []int32 // per-row sorted copy of the sources when g's rows are unsorted
	sorted64 []int64
}

type idAt struct{ id, pos int64 }

type posKind int

const (
	posIdentity posKind = iota // EdgeIDs nil: id == position
	posDense
	posSparse
)

// NewEdgeIndex returns an index over g (which must be a valid CSC, as the
// graph builders return). threads bounds the goroutines of the one-time
// builds (<= 0: GOMAXPROCS).
func NewEdgeIndex(g *graph.CSC, threads int) (*EdgeIndex, error) {
	if g == nil {
		return nil, fmt.Errorf("linkpred: NewEdgeIndex: graph is nil")
	}
	if int64(len(g.Indptr)) != g.NumNodes+1 && !g.Windowed { // a windowed graph holds its window's rows
		return nil, fmt.Errorf("linkpred: NewEdgeIndex: graph has %d row pointers for %d nodes", len(g.Indptr), g.NumNodes)
	}
	return &EdgeIndex{g: g, threads: threads}, nil
}

// NumNodes returns the graph's node count.
func (x *EdgeIndex) NumNodes() int64 { return x.g.NumNodes }

// NumEdges returns the graph's edge count.
func (x *EdgeIndex) NumEdges() int64 { return x.g.NumEdges() }

// Endpoints returns the source and destination of each edge id, in the
// order given (duplicates kept), as DGL's g.find_edges(eids) and the
// positive pair graph g.edge_subgraph(eids, relabel_nodes=False). An id
// that is not an edge of the graph is an error naming its position.
func (x *EdgeIndex) Endpoints(eids []int64) (Pairs, error) {
	x.posOnce.Do(x.buildPositions)
	if x.posErr != nil {
		return Pairs{}, x.posErr
	}
	out := Pairs{Src: make([]int64, len(eids)), Dst: make([]int64, len(eids))}
	var bad atomic.Int64
	bad.Store(int64(len(eids)))
	parallelFor(len(eids), x.threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := x.position(eids[i])
			if p < 0 {
				atomicMin(&bad, int64(i))
				return
			}
			out.Src[i] = x.g.Source(p)
			out.Dst[i] = x.rowOf(p)
		}
	})
	if i := bad.Load(); i < int64(len(eids)) {
		return Pairs{}, fmt.Errorf("linkpred: seed edge ids[%d] = %d is not an edge of the graph (%d edges)", i, eids[i], x.g.NumEdges())
	}
	return out, nil
}

// atomicMin lowers a to v if v is smaller, so the reported bad position is
// the first one whatever the scheduling.
func atomicMin(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v >= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// position returns the CSC position of edge id, -1 if there is none.
func (x *EdgeIndex) position(id int64) int64 {
	switch x.posMode {
	case posIdentity:
		if id < 0 || id >= x.g.NumEdges() {
			return -1
		}
		return id
	case posDense:
		if id < 0 || id >= int64(len(x.dense)) {
			return -1
		}
		return x.dense[id]
	default:
		i, ok := slices.BinarySearchFunc(x.sparse, id, func(e idAt, t int64) int {
			switch {
			case e.id < t:
				return -1
			case e.id > t:
				return 1
			}
			return 0
		})
		if !ok {
			return -1
		}
		return x.sparse[i].pos
	}
}

// rowOf returns the destination (CSC row) that holds position p.
func (x *EdgeIndex) rowOf(p int64) int64 {
	ip := x.g.Indptr
	n := len(ip) - 1 // the rows held, from RowBase
	return x.g.RowBase + int64(sort.Search(n, func(v int) bool { return ip[v+1] > p }))
}

// buildPositions inverts g.EdgeIDs: densely when the ids are about as many
// as the edges, as sorted pairs otherwise. A repeated id makes find_edges
// ambiguous and is an error.
func (x *EdgeIndex) buildPositions() {
	g := x.g
	if g.EdgeIDs == nil {
		x.posMode = posIdentity
		return
	}
	e := g.NumEdges()
	var maxID int64 = -1
	for _, id := range g.EdgeIDs {
		maxID = max(maxID, id)
	}
	if maxID < 2*e+1024 {
		x.posMode = posDense
		x.dense = make([]int64, maxID+1)
		parallelFor(len(x.dense), x.threads, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				x.dense[i] = -1
			}
		})
		var dup atomic.Int64
		dup.Store(maxID + 1)
		parallelFor(int(e), x.threads, func(lo, hi int) {
			for p := lo; p < hi; p++ {
				id := g.EdgeIDs[p]
				if !atomic.CompareAndSwapInt64(&x.dense[id], -1, int64(p)) {
					atomicMin(&dup, id)
				}
			}
		})
		if d := dup.Load(); d <= maxID {
			x.posErr = duplicateID(g.EdgeIDs, d)
		}
		return
	}
	x.posMode = posSparse
	x.sparse = make([]idAt, e)
	for p, id := range g.EdgeIDs {
		x.sparse[p] = idAt{id, int64(p)}
	}
	slices.SortFunc(x.sparse, func(a, b idAt) int {
		if a.id != b.id {
			return cmp.Compare(a.id, b.id)
		}
		return cmp.Compare(a.pos, b.pos)
	})
	for i := 1; i < len(x.sparse); i++ {
		if x.sparse[i].id == x.sparse[i-1].id {
			x.posErr = duplicateID(g.EdgeIDs, x.sparse[i].id)
			return
		}
	}
}

func duplicateID(ids []int64, id int64) error {
	first := slices.Index(ids, id)
	second := first + 1 + slices.Index(ids[first+1:], id)
	return fmt.Errorf("linkpred: graph edge ids are not unique: id %d is at positions %d and %d, so its endpoints are ambiguous", id, first, second)
}

// HasEdge reports whether u->v is an edge of the graph (false for ids out
// of range). Rows are searched by bisection: g's own sources when every row
// is sorted, otherwise a per-row sorted copy built on first use.
func (x *EdgeIndex) HasEdge(u, v int64) bool {
	g := x.g
	if u < 0 || v < 0 || u >= g.NumNodes || v >= g.NumNodes {
		return false
	}
	x.adjOnce.Do(x.buildSorted)
	lo, hi := g.Span(v)
	switch {
	case x.sorted32 != nil:
		return inRow(x.sorted32[lo:hi], int32(u))
	case x.sorted64 != nil:
		return inRow(x.sorted64[lo:hi], u)
	case g.Indices32 != nil:
		return inRow(g.Indices32[lo:hi], int32(u))
	default:
		return inRow(g.Indices[lo:hi], u)
	}
}

// inRow reports whether u is in the sorted row.
func inRow[I int32 | int64](row []I, u I) bool {
	if len(row) <= 16 { // short rows: a scan beats bisection
		for _, w := range row {
			if w >= u {
				return w == u
			}
		}
		return false
	}
	_, ok := slices.BinarySearch(row, u)
	return ok
}

// buildSorted leaves g's sources in use when every row is sorted, otherwise
// builds sorted per-row copies in g's storage width.
func (x *EdgeIndex) buildSorted() {
	g := x.g
	n := len(g.Indptr) - 1 // the rows held (a windowed graph's window)
	var unsorted atomic.Bool
	parallelFor(n, x.threads, func(lo, hi int) {
		for v := lo; v < hi && !unsorted.Load(); v++ {
			a, b := g.Indptr[v], g.Indptr[v+1]
			var ok bool
			if g.Indices32 != nil {
				ok = slices.IsSorted(g.Indices32[a:b])
			} else {
				ok = slices.IsSorted(g.Indices[a:b])
			}
			if !ok {
				unsorted.Store(true)
			}
		}
	})
	if !unsorted.Load() {
		return
	}
	if g.Indices32 != nil {
		x.sorted32 = sortedRows(g.Indptr, g.Indices32, x.threads)
	} else {
		x.sorted64 = sortedRows(g.Indptr, g.Indices, x.threads)
	}
}

func sortedRows[I int32 | int64](indptr []int64, ind []I, threads int) []I {
	out := slices.Clone(ind)
	parallelFor(len(indptr)-1, threads, func(lo, hi int) {
		for v := lo; v < hi; v++ {
			slices.Sort(out[indptr[v]:indptr[v+1]])
		}
	})
	return out
}

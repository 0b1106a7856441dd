// Package graph is the engine's topology store: a graph held as CSC of
// in-neighbours with int64 node and edge ids (or int32 sources), built from
// COO or CSC arrays, validated, and typed (Types: node types and relations
// as consecutive id ranges).
//
// It imports only mem and internal/par (engine/layering_test.go).
package graph

import (
	"math"

	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/mem"
)

// CSC holds the in-neighbour adjacency of a directed graph with NumNodes
// nodes: for a destination node v, the sources u of the edges u->v are the
// sources at the positions [Indptr[v], Indptr[v+1]) (see Source), the ids of
// those edges are EdgeIDs[Indptr[v]:Indptr[v+1]] and, when the graph is
// weighted, their weights are Weights[Indptr[v]:Indptr[v+1]].
//
// Node ids, edge ids and edge offsets (Indptr) are int64 everywhere. The
// sources themselves are stored in exactly one of two ways: Indices (int64)
// or, when every node id fits, Indices32 (int32, half the memory; see
// Compact). The storage is int32 exactly when Indices32 is non-nil, and then
// Indices must be nil; a graph without edges may leave both nil. Code reading
// the sources goes through Source, Sources, CopySources and NumEdges, which
// work for either storage; code building a CSC by hand may keep filling
// Indices alone.
//
// Invariants (checked by Validate): len(Indptr) == NumNodes+1, Indptr[0] == 0,
// Indptr is non-decreasing, at most one of Indices and Indices32 is non-nil,
// Indptr[NumNodes] == NumEdges() (the length of the storage in use), every
// source is in [0, NumNodes), EdgeIDs is nil (edge id == position) or has
// NumEdges() non-negative entries, Weights is nil or has NumEdges() finite
// non-negative entries.
//
// A windowed CSC (Windowed set) holds the rows of a consecutive range of
// its nodes only: Indptr has one entry per held row plus one, row i of it
// being node RowBase+i, and every other node has no in-edges (Span). A rank
// of a partition holds its own range so (engine/distributed), which is
// what makes its row offsets O(N/P): sources still range over all
// NumNodes. Validate then wants RowBase >= 0 and RowBase+len(Indptr)-1 <=
// NumNodes instead of len(Indptr) == NumNodes+1; code that reads rows of a
// graph that may be windowed goes through Span and InDegree.
type CSC struct {
	NumNodes  int64
	Indptr    []int64
	Indices   []int64
	Indices32 []int32
	EdgeIDs   []int64
	Weights   []float32
	// Windowed and RowBase: see the doc comment (zero for a graph that
	// holds every row).
	Windowed bool
	RowBase  int64
	// Mapped says the arrays are a read-only file mapping (a dataset's CSC
	// files): never written, and left to the kernel's paging (no huge-page
	// advice, which would read them in whole).
	Mapped bool
}

// MaxCompactNodes is the largest node count whose ids all fit the int32
// source storage (Indices32).
const MaxCompactNodes = math.MaxInt32

// compactLimit is the node count up to which the builders and Compact choose
// int32 storage: MaxCompactNodes, lowered by tests to exercise the int64
// paths on small graphs.
var compactLimit int64 = MaxCompactNodes

// NumEdges returns the number of stored edges.
func (g *CSC) NumEdges() int64 {
	if g.Indices32 != nil {
		return int64(len(g.Indices32))
	}
	return int64(len(g.Indices))
}

// IsCompact reports whether the sources are stored as int32 (Indices32).
func (g *CSC) IsCompact() bool { return g.Indices32 != nil }

// InDegree returns the number of in-neighbours of v.
func (g *CSC) InDegree(v int64) int64 {
	lo, hi := g.Span(v)
	return hi - lo
}

// Span returns the positions [lo, hi) of v's in-edges: Indptr[v],
// Indptr[v+1], or (a windowed graph) the row's of RowBase+i, and 0, 0 for a
// node outside the window.
func (g *CSC) Span(v int64) (lo, hi int64) {
	i := v - g.RowBase
	if uint64(i) >= uint64(len(g.Indptr)-1) {
		return 0, 0
	}
	return g.Indptr[i], g.Indptr[i+1]
}

// HeldRows returns the rows g holds: [RowBase, RowBase+len(Indptr)-1).
func (g *CSC) HeldRows() (lo, hi int64) { return g.RowBase, g.RowBase + int64(len(g.Indptr)) - 1 }

// EdgeID returns the id of the edge stored at position pos.
func (g *CSC) EdgeID(pos int64) int64 {
	if g.EdgeIDs == nil {
		return pos
	}
	return g.EdgeIDs[pos]
}

// Source returns the source node of the edge stored at position pos.
func (g *CSC) Source(pos int64) int64 {
	if g.Indices32 != nil {
		return int64(g.Indices32[pos])
	}
	return g.Indices[pos]
}

// Sources gathers sources by position: out[i] = Source(base + pos[i]) for
// every i < len(pos). out must have at least len(pos) entries and may be pos
// itself (each pos[i] is read before out[i] is written).
func (g *CSC) Sources(base int64, pos []int64, out []int64) {
	out = out[:len(pos)]
	if ind := g.Indices32; ind != nil {
		for i, p := range pos {
			out[i] = int64(ind[base+p])
		}
		return
	}
	ind := g.Indices
	for i, p := range pos {
		out[i] = ind[base+p]
	}
}

// CopySources writes the sources at the positions [lo, hi) into dst[:hi-lo].
func (g *CSC) CopySources(dst []int64, lo, hi int64) {
	if ind := g.Indices32; ind != nil {
		dst = dst[:hi-lo]
		for i, u := range ind[lo:hi] {
			dst[i] = int64(u)
		}
		return
	}
	src := g.Indices[lo:hi]
	if len(src) <= 32 { // short ranges (most neighbour lists): a loop beats a memmove call
		dst = dst[:len(src)]
		for i, u := range src {
			dst[i] = u
		}
		return
	}
	copy(dst, src)
}

// AdviseRandomAccess asks the OS to back g's arrays with huge pages (see
// mem.AdviseHuge): sampling reads them at random. Advice only; g is not
// modified.
func (g *CSC) AdviseRandomAccess() {
	if g.Mapped {
		return
	}
	mem.AdviseHuge(g.Indptr)
	mem.AdviseHuge(g.Indices)
	mem.AdviseHuge(g.Indices32)
	mem.AdviseHuge(g.EdgeIDs)
	mem.AdviseHuge(g.Weights)
}

// Compact returns g with its sources in int32 storage when every node id
// fits (NumNodes <= MaxCompactNodes); edge offsets and edge ids stay int64.
// The result shares Indptr, EdgeIDs and Weights with g; only the sources are
// converted (in parallel), so g's int64 Indices can be dropped afterwards.
// It returns g itself when g is already compact, or cannot be (too many
// nodes). g must be valid; it is not modified.
func (g *CSC) Compact() *CSC {
	if g.Indices32 != nil || g.NumNodes > compactLimit {
		return g
	}
	e := g.NumEdges()
	ind32 := make([]int32, e)
	src := g.Indices
	par.Chunks(e, par.ChunkCount(e, 0), func(_ int, lo, hi int64) {
		dst := ind32[lo:hi]
		for i, u := range src[lo:hi] {
			dst[i] = int32(u)
		}
	})
	return &CSC{NumNodes: g.NumNodes, Indptr: g.Indptr, Indices32: ind32, EdgeIDs: g.EdgeIDs, Weights: g.Weights, Windowed: g.Windowed, RowBase: g.RowBase}
}

// Wide returns g with its sources in int64 storage (Indices): g itself when
// it already is, otherwise a copy of the sources sharing Indptr, EdgeIDs and
// Weights with g. It is the inverse of Compact, for code (and tests) that
// needs the int64 layout.
func (g *CSC) Wide() *CSC {
	if g.Indices32 == nil {
		return g
	}
	e := g.NumEdges()
	ind := make([]int64, e)
	par.Chunks(e, par.ChunkCount(e, 0), func(_ int, lo, hi int64) {
		g.CopySources(ind[lo:hi], lo, hi)
	})
	return &CSC{NumNodes: g.NumNodes, Indptr: g.Indptr, Indices: ind, EdgeIDs: g.EdgeIDs, Weights: g.Weights, Windowed: g.Windowed, RowBase: g.RowBase}
}

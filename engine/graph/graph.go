// Package graph is the engine's topology store: a graph held as CSC of
// in-neighbours with int64 node and edge ids.
package graph

// CSC holds the in-neighbour adjacency of a directed graph with NumNodes
// nodes: for a destination node v, the sources u of the edges u->v are
// Indices[Indptr[v]:Indptr[v+1]], the ids of those edges are
// EdgeIDs[Indptr[v]:Indptr[v+1]] and, when the graph is weighted, their
// weights are Weights[Indptr[v]:Indptr[v+1]].
//
// Invariants (checked by Validate): len(Indptr) == NumNodes+1, Indptr[0] == 0,
// Indptr is non-decreasing, Indptr[NumNodes] == len(Indices), every index is
// in [0, NumNodes), EdgeIDs is nil (edge id == position) or has len(Indices)
// entries, Weights is nil or has len(Indices) finite non-negative entries.
type CSC struct {
	NumNodes int64
	Indptr   []int64
	Indices  []int64
	EdgeIDs  []int64
	Weights  []float32
}

// NumEdges returns the number of stored edges.
func (g *CSC) NumEdges() int64 { return int64(len(g.Indices)) }

// InDegree returns the number of in-neighbours of v.
func (g *CSC) InDegree(v int64) int64 { return g.Indptr[v+1] - g.Indptr[v] }

// EdgeID returns the id of the edge stored at position pos.
func (g *CSC) EdgeID(pos int64) int64 {
	if g.EdgeIDs == nil {
		return pos
	}
	return g.EdgeIDs[pos]
}

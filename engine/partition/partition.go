// Package partition splits a graph into patches, each owning one consecutive
// range of (renumbered) global node ids, as in DSP §6: by id range, at
// random, or by a given assignment (METIS), with the id maps both ways.
//
// It imports graph, internal/par and rng (engine/layering_test.go).
package partition

import "github.com/graphferry/graphferry/engine/graph"

// Method selects how nodes are assigned to patches.
type Method int

const (
	// Range gives patch p the original ids [p*N/P, (p+1)*N/P): no renumbering.
	Range Method = iota
	// Random assigns each node to a patch uniformly at random from Seed.
	Random
	// Given takes the assignment from Options.Assignment (e.g. a METIS result).
	Given
)

// Partitioned is a graph renumbered so that patch p owns the new ids
// [Offsets[p], Offsets[p+1]). Within a patch, nodes keep their original
// relative order. Graph is the renumbered CSC (rows, indices in new ids; each
// node's neighbour list keeps its original order; EdgeIDs stay the original
// edge ids). NewToOld and OldToNew are nil when the numbering is the identity
// or when Ranked is set.
type Partitioned struct {
	Graph    *graph.CSC
	Offsets  []int64
	NewToOld []int64
	OldToNew []int64
	// Ranked, when not nil, is a rank's part that holds its own range and
	// not the whole maps: the numbering is not the identity, and only the
	// ids Ranked knows map (OrigID, InternalID; -1 for the others).
	Ranked *RankIDs
}

// NumPatches returns P.
func (p *Partitioned) NumPatches() int { return len(p.Offsets) - 1 }

package partition

import (
	"fmt"

	"github.com/graphferry/graphferry/engine/graph"
)

// LDG (linear deterministic greedy, Stanton and Kliot, KDD 2012) streams
// the nodes in id order once and puts each on the patch holding most of
// its already placed in-neighbours, weighted by the room the patch has
// left: argmax_q |N(v) ∩ V_q| · (1 - W_q/C). A node weighs 1 + its
// in-degree (W_q sums the weights of q's nodes), so that the patches
// balance the rows and the in-edges a rank holds and samples, not the
// nodes alone (plain LDG left half the edges of an R-MAT graph on one
// patch); C = (N+E)/P · (1+LDGSlack). Ties go to the lighter patch, then
// the lower one, and a node with no placed neighbour on a patch with room
// to the lightest. It reads g's rows in order (a mapped CSC is paged
// through once) and holds the assignment and P counters: deterministic,
// whatever the threads or the memory available.
const LDG Method = Given + 1

// LDGSlack is how far above N/P a patch may grow under LDG.
const LDGSlack = 0.05

// Assignment returns the patch of every node of g under opt (Range,
// Random, LDG, or Given, checked), without renumbering g: O(N) memory
// beside g, whose rows LDG reads in order.
func Assignment(g *graph.CSC, opt Options) ([]int64, error) {
	if g == nil {
		return nil, fmt.Errorf("partition: graph is nil")
	}
	if opt.NumPatches < 0 {
		return nil, fmt.Errorf("partition: NumPatches=%d is negative", opt.NumPatches)
	}
	p, n := int64(max(opt.NumPatches, 1)), g.NumNodes
	switch opt.Method {
	case Range:
		assign := make([]int64, n)
		for q := range p {
			for v := mulDiv(q, n, p); v < mulDiv(q+1, n, p); v++ {
				assign[v] = q
			}
		}
		return assign, nil
	case Random:
		return randomAssignment(n, p, opt.Seed), nil
	case LDG:
		return ldgAssignment(g, p), nil
	case Given:
		if int64(len(opt.Assignment)) != n {
			return nil, fmt.Errorf("partition: len(Assignment)=%d, want the number of nodes %d", len(opt.Assignment), n)
		}
		return opt.Assignment, checkAssignment(opt.Assignment, p)
	}
	return nil, fmt.Errorf("partition: unknown Method %d", int(opt.Method))
}

// ldgAssignment is LDG's pass over g (see LDG).
func ldgAssignment(g *graph.CSC, p int64) []int64 {
	n := g.NumNodes
	assign := make([]int64, n)
	for i := range assign {
		assign[i] = -1
	}
	capacity := float64(n+g.NumEdges()) / float64(p) * (1 + LDGSlack)
	size := make([]int64, p)
	hits := make([]int64, p)
	var touched []int64
	for v := range n {
		lo, hi := g.Span(v)
		for pos := lo; pos < hi; pos++ {
			if q := assign[g.Source(pos)]; q >= 0 {
				if hits[q] == 0 {
					touched = append(touched, q)
				}
				hits[q]++
			}
		}
		best, bestScore := int64(-1), -1.0
		for _, q := range touched {
			if float64(size[q]) >= capacity {
				continue
			}
			s := float64(hits[q]) * (1 - float64(size[q])/capacity)
			if s > bestScore || s == bestScore && (size[q] < size[best] || size[q] == size[best] && q < best) {
				best, bestScore = q, s
			}
		}
		if best < 0 { // no placed neighbour with room: the emptiest patch
			best = 0
			for q := int64(1); q < p; q++ {
				if size[q] < size[best] {
					best = q
				}
			}
		}
		for _, q := range touched {
			hits[q] = 0
		}
		touched = touched[:0]
		assign[v] = best
		size[best] += 1 + hi - lo
	}
	return assign
}

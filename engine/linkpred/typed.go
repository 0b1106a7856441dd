package linkpred

import (
	"fmt"
	"math"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/rng"
)

// Typed graphs (graph.Types: node type t owns the consecutive original ids
// [NodeOffsets[t], NodeOffsets[t+1]), relation r the consecutive edge ids
// [EdgeOffsets[r], EdgeOffsets[r+1])). A negative of a typed graph is drawn
// among the nodes of one type, so the samplers below take ranges of node ids
// where the untyped ones take a node count; with the range [0, numNodes)
// they draw exactly what the untyped ones draw (the same stream positions,
// the same values).

// NodeRange is the node ids [Lo, Lo+N): the nodes of one type of a typed
// graph, or every node of an untyped one ({0, numNodes}).
type NodeRange struct{ Lo, N int64 }

// TypeRange returns the ids of node type nt of t.
func TypeRange(t *graph.Types, nt int32) NodeRange {
	return NodeRange{Lo: t.NodeOffsets[nt], N: t.NodeOffsets[nt+1] - t.NodeOffsets[nt]}
}

func (r NodeRange) draw(x *rng.SplitMix64) int64 { return r.Lo + int64(x.Below(uint64(r.N))) }

// weighted returns r's draw by w (weights of r's nodes, by their position
// in r: PyG's weight vector of a node type), or r's uniform draw when w is
// nil. With r = [0, numNodes) it is the untyped samplers' draw.
func (r NodeRange) weighted(w *NodeWeights) func(*rng.SplitMix64) int64 {
	if w == nil {
		return r.draw
	}
	return func(x *rng.SplitMix64) int64 { return r.Lo + w.draw(x, r.N) }
}

// checkWeights checks that w (nil: uniform) has one weight per node of r.
func (r NodeRange) checkWeights(fn, side string, w *NodeWeights) error {
	if w != nil && w.Len() != r.N {
		return fmt.Errorf("linkpred: %s: the weight vector has %d entries for the %d nodes of the %s' type (node ids [%d, %d))", fn, w.Len(), r.N, side, r.Lo, r.Lo+r.N)
	}
	return nil
}

func (r NodeRange) check(fn string) error {
	if r.N <= 0 || r.Lo < 0 {
		return fmt.Errorf("linkpred: %s: no node to draw negatives from (node ids [%d, %d))", fn, r.Lo, r.Lo+r.N)
	}
	return nil
}

// SampleRanges is Sample with the negative destinations of positive i drawn
// uniformly from dst[i] (on a typed graph: the nodes of the destination
// type of the positive's relation, as DGL's per-source samplers draw on
// heterographs). Pair i*K+j's destination is drawn from stream position
// i*K+j, so ranges [0, numNodes) give Sample's pairs.
func (n PerSourceUniform) SampleRanges(src []int64, dst []NodeRange, s Stream, threads int) (Pairs, error) {
	if n.K <= 0 {
		return Pairs{}, fmt.Errorf("linkpred: PerSourceUniform: k = %d, must be positive", n.K)
	}
	if len(dst) != len(src) {
		return Pairs{}, fmt.Errorf("linkpred: PerSourceUniform: %d destination ranges for %d positives", len(dst), len(src))
	}
	for i, r := range dst {
		if err := r.check("PerSourceUniform"); err != nil {
			return Pairs{}, fmt.Errorf("%w (positive %d)", err, i)
		}
	}
	if err := checkNodes("PerSourceUniform: src", src, -1); err != nil {
		return Pairs{}, err
	}
	if tooMany(int64(len(src)), int64(n.K)) {
		return Pairs{}, fmt.Errorf("linkpred: PerSourceUniform: %d positives times k = %d is too many negatives", len(src), n.K)
	}
	return n.sample(src, func(i int) NodeRange { return dst[i] }, s, threads), nil
}

// sample draws the negatives of src, positive i's destinations in dst(i).
func (n PerSourceUniform) sample(src []int64, dst func(i int) NodeRange, s Stream, threads int) Pairs {
	k := n.K
	total := int64(len(src)) * int64(k)
	out := Pairs{Src: make([]int64, total), Dst: make([]int64, total)}
	root := s.root(tagPerSource)
	parallelFor(int(total), threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := at(root, i)
			out.Src[i] = src[i/k]
			out.Dst[i] = dst(i / k).draw(&r)
		}
	})
	return out
}

// SampleRanges is Sample with sources drawn from src and destinations from
// dst (on a typed graph: the nodes of the pairs' source and destination
// types, PyG's heterogeneous binary negatives), uniformly or by Weights,
// which then hold one weight per node of each range (PyG's weight of a
// node type: both types have its length). Ranges [0, numNodes) give
// Sample's pairs.
func (n Binary) SampleRanges(numPos int, src, dst NodeRange, s Stream, threads int) (Pairs, error) {
	if !(n.Amount > 0) || math.IsInf(n.Amount, 0) {
		return Pairs{}, fmt.Errorf("linkpred: binary negative sampling: amount = %v, must be positive and finite", n.Amount)
	}
	if numPos < 0 {
		return Pairs{}, fmt.Errorf("linkpred: binary negative sampling: number of positive edges = %d, must be >= 0", numPos)
	}
	if err := src.check("binary negative sampling (sources)"); err != nil {
		return Pairs{}, err
	}
	if err := dst.check("binary negative sampling (destinations)"); err != nil {
		return Pairs{}, err
	}
	if err := src.checkWeights("binary negative sampling", "sources", n.Weights); err != nil {
		return Pairs{}, err
	}
	if err := dst.checkWeights("binary negative sampling", "destinations", n.Weights); err != nil {
		return Pairs{}, err
	}
	if float64(numPos)*n.Amount > maxNegatives {
		return Pairs{}, fmt.Errorf("linkpred: binary negative sampling: %d positives times amount = %v is too many negatives", numPos, n.Amount)
	}
	return n.draws(numPos, s, threads, src.weighted(n.Weights), dst.weighted(n.Weights)), nil
}

// SampleRange is Sample with the destinations drawn from dst (on a typed
// graph: the nodes of the pairs' destination type), uniformly or by
// Weights, which then hold one weight per node of dst. The range [0,
// numNodes) gives Sample's destinations.
func (n Triplet) SampleRange(numPos int, dst NodeRange, s Stream, threads int) ([]int64, error) {
	if n.Amount <= 0 {
		return nil, fmt.Errorf("linkpred: triplet negative sampling: amount = %d, must be positive", n.Amount)
	}
	if numPos < 0 {
		return nil, fmt.Errorf("linkpred: triplet negative sampling: number of positive edges = %d, must be >= 0", numPos)
	}
	if err := dst.check("triplet negative sampling"); err != nil {
		return nil, err
	}
	if err := dst.checkWeights("triplet negative sampling", "destinations", n.Weights); err != nil {
		return nil, err
	}
	if tooMany(int64(numPos), int64(n.Amount)) {
		return nil, fmt.Errorf("linkpred: triplet negative sampling: %d positives times amount = %d is too many negatives", numPos, n.Amount)
	}
	return n.draws(numPos, s, threads, dst.weighted(n.Weights)), nil
}

// CompactDGLTyped is CompactDGL on a typed graph, as dgl.compact_graphs
// relabels a heterogeneous pair graph and its negative graph: pos and neg
// hold the pairs grouped by relation (relation r's pairs are [posOff[r],
// posOff[r+1]) of pos and [negOff[r], negOff[r+1]) of neg; the offsets
// have R+1 entries, or are nil for an empty side), in original ids. DGL
// numbers the nodes of every node type by first appearance in: the
// positive graph then the negative graph, relation by relation, the
// relation's sources then its destinations. Nodes come grouped by node type
// in type order, each type's in that order; Pos and Neg index Nodes (see
// TypeLocal for positions among a type's nodes).
func CompactDGLTyped(pos, neg Pairs, posOff, negOff []int64, t *graph.Types) (Compacted, error) {
	if t == nil {
		return Compacted{}, fmt.Errorf("linkpred: CompactDGLTyped: types are nil")
	}
	numNodes := t.NodeOffsets[t.NumNodeTypes()]
	if err := pos.validate("positive pairs", numNodes); err != nil {
		return Compacted{}, err
	}
	if err := neg.validate("negative pairs", numNodes); err != nil {
		return Compacted{}, err
	}
	if err := checkGroups("positive pairs", posOff, pos.Len(), t.NumRelations()); err != nil {
		return Compacted{}, err
	}
	if err := checkGroups("negative pairs", negOff, neg.Len(), t.NumRelations()); err != nil {
		return Compacted{}, err
	}
	// First appearance over global ids is first appearance per type: the
	// types' id ranges are disjoint.
	first := make([]int64, 0, 2*(pos.Len()+neg.Len()))
	seen := make(map[int64]struct{}, 2*(pos.Len()+neg.Len()))
	add := func(ids []int64) {
		for _, v := range ids {
			if _, ok := seen[v]; !ok {
				seen[v] = struct{}{}
				first = append(first, v)
			}
		}
	}
	for _, side := range []struct {
		p   Pairs
		off []int64
	}{{pos, posOff}, {neg, negOff}} {
		for r := 0; r+1 < len(side.off); r++ {
			lo, hi := side.off[r], side.off[r+1]
			add(side.p.Src[lo:hi])
			add(side.p.Dst[lo:hi])
		}
	}
	// Group by type, stably.
	types := make([]int32, len(first))
	count := make([]int64, t.NumNodeTypes()+1)
	for i, v := range first {
		types[i] = t.NodeType(v)
		count[types[i]+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	c := Compacted{
		Nodes: make([]int64, len(first)),
		Pos:   Pairs{Src: make([]int64, pos.Len()), Dst: make([]int64, pos.Len())},
		Neg:   Pairs{Src: make([]int64, neg.Len()), Dst: make([]int64, neg.Len())},
	}
	local := make(map[int64]int64, len(first))
	for i, v := range first {
		at := count[types[i]]
		count[types[i]]++
		c.Nodes[at] = v
		local[v] = at
	}
	for _, m := range []struct{ in, out []int64 }{{pos.Src, c.Pos.Src}, {pos.Dst, c.Pos.Dst}, {neg.Src, c.Neg.Src}, {neg.Dst, c.Neg.Dst}} {
		for i, v := range m.in {
			m.out[i] = local[v]
		}
	}
	return c, nil
}

// checkGroups checks relation offsets over n pairs: nil with no pair, or
// R+1 non-decreasing entries from 0 to n.
func checkGroups(what string, off []int64, n, relations int) error {
	if off == nil && n == 0 {
		return nil
	}
	if len(off) != relations+1 || off[0] != 0 || off[relations] != int64(n) {
		return fmt.Errorf("linkpred: %s: relation offsets %v do not split %d pairs over %d relations", what, off, n, relations)
	}
	for r := 1; r < len(off); r++ {
		if off[r] < off[r-1] {
			return fmt.Errorf("linkpred: %s: relation offsets %v decrease", what, off)
		}
	}
	return nil
}

// TypeLocal rewrites positions into nodes (original ids grouped by node
// type in type order, as the seeds of a typed link batch are: DGL's
// compacted nodes, PyG's sorted unique ids) as positions among the nodes of
// their own type: idx[i] becomes its node's rank within its type, what a
// heterogeneous pair graph (DGL) or a per-type edge_label_index (PyG)
// holds. Each list of lists is rewritten in place.
func TypeLocal(nodes []int64, t *graph.Types, lists ...[]int64) error {
	start := make([]int64, t.NumNodeTypes())
	prev := int32(-1)
	for i, v := range nodes {
		nt := t.NodeType(v)
		if nt < prev {
			return fmt.Errorf("linkpred: TypeLocal: nodes are not grouped by type (node %d, id %d, is of type %d after type %d)", i, v, nt, prev)
		}
		if nt != prev {
			start[nt] = int64(i)
			prev = nt
		}
	}
	for _, l := range lists {
		for i, p := range l {
			if p < 0 || p >= int64(len(nodes)) {
				return fmt.Errorf("linkpred: TypeLocal: position %d is outside the %d nodes", p, len(nodes))
			}
			l[i] = p - start[t.NodeType(nodes[p])]
		}
	}
	return nil
}

// TypeRanks rewrites positions into nodes (original ids in any order, as
// the seeds of a disjoint typed link batch are) as the rank of their node
// among the nodes of its type, in order: what PyG's heterogeneous disjoint
// edge_label_index and batch hold (each type's seeds numbered from 0).
// Each list of lists is rewritten in place; positions must be in range.
func TypeRanks(nodes []int64, t *graph.Types, lists ...[]int64) {
	rank := SeedRanks(nodes, t)
	for _, l := range lists {
		for i, p := range l {
			l[i] = rank[p]
		}
	}
}

// SeedRanks returns the rank of every node of nodes among the nodes of its
// type, in order.
func SeedRanks(nodes []int64, t *graph.Types) []int64 {
	next := make([]int64, t.NumNodeTypes())
	rank := make([]int64, len(nodes))
	for i, v := range nodes {
		nt := t.NodeType(v)
		rank[i] = next[nt]
		next[nt]++
	}
	return rank
}

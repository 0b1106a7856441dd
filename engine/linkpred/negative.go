package linkpred

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/graphferry/graphferry/engine/rng"
)

// Pairs is a list of node pairs: pair i is Src[i] -> Dst[i]. Src and Dst
// have the same length.
type Pairs struct {
	Src []int64
	Dst []int64
}

// Len returns the number of pairs.
func (p Pairs) Len() int { return len(p.Src) }

// validate checks that p's slices agree in length and that every id is a
// node of a graph with numNodes nodes, naming the first bad entry.
func (p Pairs) validate(what string, numNodes int64) error {
	if len(p.Src) != len(p.Dst) {
		return fmt.Errorf("linkpred: %s has %d sources but %d destinations", what, len(p.Src), len(p.Dst))
	}
	if err := checkNodes(what+" src", p.Src, numNodes); err != nil {
		return err
	}
	return checkNodes(what+" dst", p.Dst, numNodes)
}

// checkNodes names the first id of ids outside [0, numNodes) (numNodes < 0:
// only negative ids are refused).
func checkNodes(what string, ids []int64, numNodes int64) error {
	for i, v := range ids {
		if v < 0 || (numNodes >= 0 && v >= numNodes) {
			if numNodes < 0 {
				return fmt.Errorf("linkpred: %s[%d] = %d is not a node id (negative)", what, i, v)
			}
			return fmt.Errorf("linkpred: %s[%d] = %d is not a node id (graph has %d nodes)", what, i, v, numNodes)
		}
	}
	return nil
}

// maxNegatives bounds the number of draws of one call, so that a bad k or
// amount is an error rather than an out-of-memory crash.
const maxNegatives = 1 << 34

// tooMany reports whether a*b draws (a, b >= 0) exceed maxNegatives,
// without overflowing.
func tooMany(a, b int64) bool {
	return b > maxNegatives || (a > 0 && b > maxNegatives/a)
}

func checkNumNodes(fn string, numNodes int64) error {
	if numNodes <= 0 {
		return fmt.Errorf("linkpred: %s: the graph has no nodes to draw negatives from (num_nodes = %d)", fn, numNodes)
	}
	return nil
}

// PerSourceUniform is DGL's negative_sampler.PerSourceUniform(k), of which
// Uniform(k) is an alias: for each positive edge (u, v) it gives K pairs
// (u, v'), v' uniform over all nodes, without checking whether u->v' is an
// edge.
type PerSourceUniform struct {
	// K is the number of negatives per positive edge, > 0.
	K int
}

// Sample returns the K*len(src) negative pairs of the positive sources src
// (DGL's src repeated K times each, in order: pair i*K+j is the j-th
// negative of positive i); pair i*K+j's destination is drawn from stream
// position i*K+j. numNodes is the number of nodes (of the destination
// type).
func (n PerSourceUniform) Sample(src []int64, numNodes int64, s Stream, threads int) (Pairs, error) {
	if n.K <= 0 {
		return Pairs{}, fmt.Errorf("linkpred: PerSourceUniform: k = %d, must be positive", n.K)
	}
	if err := checkNumNodes("PerSourceUniform", numNodes); err != nil {
		return Pairs{}, err
	}
	if err := checkNodes("PerSourceUniform: src", src, numNodes); err != nil {
		return Pairs{}, err
	}
	if tooMany(int64(len(src)), int64(n.K)) {
		return Pairs{}, fmt.Errorf("linkpred: PerSourceUniform: %d positives times k = %d is too many negatives", len(src), n.K)
	}
	all := NodeRange{N: numNodes}
	return n.sample(src, func(int) NodeRange { return all }, s, threads), nil
}

// GlobalUniform is DGL's negative_sampler.GlobalUniform(k,
// exclude_self_loops, replace) (dgl.sampling.global_uniform_negative_sampling
// with 3 trials and the automatic redundancy): pairs (u', v') uniform over
// the pairs that are not edges (and not self-loops when ExcludeSelfLoops).
// It may return fewer than K per positive when the graph is small or dense.
// DGL's defaults are ExcludeSelfLoops = true and Replace = false.
type GlobalUniform struct {
	// K is the desired number of negatives per positive edge, > 0.
	K int
	// ExcludeSelfLoops rejects pairs (u, u).
	ExcludeSelfLoops bool
	// Replace keeps repeated pairs; without it the pairs are sorted by
	// (src, dst) and deduplicated before the first K*numPos are kept.
	// (DGL sorts by (dst, src) instead when its graph holds only CSC; the
	// set of possible outputs is the same.)
	Replace bool
}

// globalTrials is DGL's number of tries per slot.
const globalTrials = 3

// Sample draws the negatives of numPos positive edges over adj. Slot i
// (of DGL's floor(K*numPos*(1+redundancy)) slots) tries up to 3 uniform
// pairs from stream position i and keeps the first that is not an
// edge (nor a self-loop if asked). Failed slots are dropped; the surviving
// pairs are kept in slot order with Replace, sorted and deduplicated
// without; then at most K*numPos are returned. An empty batch gives no
// pairs (DGL refuses to sample 0 negatives).
func (n GlobalUniform) Sample(adj Adjacency, numPos int, s Stream, threads int) (Pairs, error) {
	if n.K <= 0 {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: k = %d, must be positive", n.K)
	}
	if adj == nil {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: adjacency is nil")
	}
	if numPos < 0 {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: number of positive edges = %d, must be >= 0", numPos)
	}
	nn := adj.NumNodes()
	if err := checkNumNodes("GlobalUniform", nn); err != nil {
		return Pairs{}, err
	}
	all := NodeRange{N: nn}
	return n.sample(adj, adj.NumEdges(), numPos, all, all, s.root(tagGlobal), threads)
}

// SampleRelation is Sample for the numPos positive edges of relation rel
// of a typed graph, as DGL's GlobalUniform draws on a heterograph (per
// canonical edge type): pairs (u', v') uniform over src x dst (the
// relation's source and destination node types) that are not edges of the
// relation (adj.HasEdge answers for it alone; numEdges is its edge count,
// for DGL's sizing), self-loops rejected only when ExcludeSelfLoops and
// the two types are one (DGL's utype == vtype). Each relation draws from
// its own streams.
func (n GlobalUniform) SampleRelation(adj Adjacency, numEdges int64, rel int, numPos int, src, dst NodeRange, s Stream, threads int) (Pairs, error) {
	if n.K <= 0 {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: k = %d, must be positive", n.K)
	}
	if adj == nil {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: adjacency is nil")
	}
	if numPos < 0 || rel < 0 || numEdges < 0 {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: positives = %d, relation = %d, edges = %d, must be >= 0", numPos, rel, numEdges)
	}
	if err := src.check("GlobalUniform (sources)"); err != nil {
		return Pairs{}, err
	}
	if err := dst.check("GlobalUniform (destinations)"); err != nil {
		return Pairs{}, err
	}
	if src != dst {
		n.ExcludeSelfLoops = false
	}
	return n.sample(adj, numEdges, numPos, src, dst, s.root(tagGlobal+uint64(rel+1)<<40), threads)
}

// sample draws GlobalUniform's pairs over src x dst (numEdges edges among
// them) from the streams under root.
func (n GlobalUniform) sample(adj Adjacency, numEdges int64, numPos int, srcR, dstR NodeRange, root uint64, threads int) (Pairs, error) {
	want, slots, err := n.size(numEdges, numPos, srcR, dstR)
	if err != nil {
		return Pairs{}, err
	}
	if want == 0 {
		return Pairs{Src: []int64{}, Dst: []int64{}}, nil
	}
	src := make([]int64, slots)
	dst := make([]int64, slots)
	parallelFor(int(slots), threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := at(root, i)
			src[i], dst[i] = -1, -1
			for range globalTrials {
				u := srcR.draw(&r)
				v := dstR.draw(&r)
				if (n.ExcludeSelfLoops && u == v) || adj.HasEdge(u, v) {
					continue
				}
				src[i], dst[i] = u, v
				break
			}
		}
	})
	return n.keep(src, dst, want), nil
}

// SampleAsking is Sample for a graph whose edges are known elsewhere
// (the ranks of a dsp partition, each holding the in-edges of its own
// nodes): numNodes and numEdges are the graph's, and isEdge answers, once
// per call, which of the candidate pairs it is given are edges. Every
// slot's 3 trial pairs are drawn up front (a slot's stream is its own, so
// the trials Sample would not have drawn change nothing), the trials that
// are not rejected self-loops are asked of isEdge in one call (with none
// when the batch draws nothing, so that callers that exchange in it do so
// for every batch), and each slot keeps its first trial that is not an
// edge: the pairs are Sample's over an adjacency that answers as isEdge,
// bit for bit. isEdge must return one answer per candidate.
func (n GlobalUniform) SampleAsking(numNodes, numEdges int64, numPos int, s Stream, threads int, isEdge func(Pairs) ([]bool, error)) (Pairs, error) {
	if isEdge == nil {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: edge query is nil")
	}
	if n.K <= 0 {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: k = %d, must be positive", n.K)
	}
	if numPos < 0 || numEdges < 0 {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: positives = %d, edges = %d, must be >= 0", numPos, numEdges)
	}
	if err := checkNumNodes("GlobalUniform", numNodes); err != nil {
		return Pairs{}, err
	}
	all := NodeRange{N: numNodes}
	want, slots, err := n.size(numEdges, numPos, all, all)
	if err != nil {
		return Pairs{}, err
	}
	// trial[i*3+t] is slot i's trial t: its index among the candidates
	// asked, or -1 for a rejected self-loop.
	const trials = globalTrials
	us := make([]int64, slots*trials)
	vs := make([]int64, slots*trials)
	root := s.root(tagGlobal)
	parallelFor(int(slots), threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := at(root, i)
			for t := range trials {
				us[i*trials+t] = all.draw(&r)
				vs[i*trials+t] = all.draw(&r)
			}
		}
	})
	trial := make([]int, len(us))
	cand := Pairs{Src: make([]int64, 0, len(us)), Dst: make([]int64, 0, len(us))}
	for k := range us {
		if n.ExcludeSelfLoops && us[k] == vs[k] {
			trial[k] = -1
			continue
		}
		trial[k] = cand.Len()
		cand.Src = append(cand.Src, us[k])
		cand.Dst = append(cand.Dst, vs[k])
	}
	edge, err := isEdge(cand)
	if err != nil {
		return Pairs{}, err
	}
	if len(edge) != cand.Len() {
		return Pairs{}, fmt.Errorf("linkpred: GlobalUniform: the edge query answered %d of %d candidate pairs", len(edge), cand.Len())
	}
	if want == 0 {
		return Pairs{Src: []int64{}, Dst: []int64{}}, nil
	}
	src := make([]int64, slots)
	dst := make([]int64, slots)
	for i := range src {
		src[i], dst[i] = -1, -1
		for t := range trials {
			if k := trial[i*trials+t]; k >= 0 && !edge[k] {
				src[i], dst[i] = cand.Src[k], cand.Dst[k]
				break
			}
		}
	}
	return n.keep(src, dst, want), nil
}

// size returns the number of negatives a batch of numPos positives wants
// and DGL's number of slots that draw them (none when it wants none).
func (n GlobalUniform) size(numEdges int64, numPos int, srcR, dstR NodeRange) (want, slots int64, err error) {
	if tooMany(int64(numPos), int64(n.K)) {
		return 0, 0, fmt.Errorf("linkpred: GlobalUniform: %d positives times k = %d is too many negatives", numPos, n.K)
	}
	want = int64(numPos) * int64(n.K)
	if want == 0 {
		return 0, 0, nil
	}
	slots = globalSlots(want, numEdges, float64(srcR.N)*float64(dstR.N))
	if slots > 4*maxNegatives {
		return 0, 0, fmt.Errorf("linkpred: GlobalUniform: the graph is too dense to draw %d negatives (%d slots needed)", want, slots)
	}
	return want, slots, nil
}

// keep returns the pairs of the slots that did not fail (src[i] >= 0), in
// slot order with Replace, sorted and deduplicated without, at most want
// of them; it reuses src and dst.
func (n GlobalUniform) keep(src, dst []int64, want int64) Pairs {
	k := 0
	for i := range src {
		if src[i] >= 0 {
			src[k], dst[k] = src[i], dst[i]
			k++
		}
	}
	src, dst = src[:k], dst[:k]
	if !n.Replace {
		src, dst = sortUniquePairs(src, dst)
	}
	m := min(int64(len(src)), want)
	return Pairs{Src: slices.Clip(src[:m]), Dst: slices.Clip(dst[:m])}
}

// globalSlots is DGL's sizing of GlobalUniform: the smallest N whose
// expected number of non-edges, less 3 standard deviations, reaches want
// (the larger root of (N p)^2 - N p (2 want + 9 (1-p)) + want^2 = 0, p the
// share of pairs that are not edges), truncated, as DGL's
// int(num_samples * (1 + redundancy)).
func globalSlots(want, numEdges int64, numPairs float64) int64 {
	pm := float64(numEdges) / numPairs
	pk := 1 - pm
	if pk <= 0 || math.IsNaN(pk) {
		// No pair can be a non-edge by the count (a complete graph, or one
		// with multi-edges): DGL's formula breaks down; try want slots.
		return want
	}
	const r = 3.0
	k := float64(want)
	a := pk * pk
	b := -pk * (2*k + r*r*pm)
	c := k * k
	disc := b*b - 4*a*c
	if disc < 0 {
		disc = 0
	}
	root := (-b + math.Sqrt(disc)) / (2 * a)
	red := root/k - 1
	slots := k * (1 + red)
	if slots > 4*maxNegatives || math.IsInf(slots, 0) {
		return 4*maxNegatives + 1
	}
	return max(int64(slots), 0)
}

// sortUniquePairs sorts the pairs by (src, dst) and removes repeats.
func sortUniquePairs(src, dst []int64) ([]int64, []int64) {
	idx := make([]int, len(src))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(src[a], src[b]); c != 0 {
			return c
		}
		return cmp.Compare(dst[a], dst[b])
	})
	os := make([]int64, 0, len(src))
	od := make([]int64, 0, len(src))
	for j, i := range idx {
		if j > 0 && src[i] == os[len(os)-1] && dst[i] == od[len(od)-1] {
			continue
		}
		os = append(os, src[i])
		od = append(od, dst[i])
	}
	return os, od
}

// Binary is PyG's NegativeSampling("binary", amount, weight):
// ceil(amount*numPos) pairs whose source and destination are drawn
// independently, uniformly or by Weights, without checking for edges.
type Binary struct {
	// Amount is the ratio of negatives to positives, > 0 (may be
	// fractional).
	Amount float64
	// Weights, when not nil, draws nodes with probability proportional to
	// their weight (PyG's weight vector, sampled with replacement).
	Weights *NodeWeights
}

// NumNegatives returns ceil(Amount*numPos), PyG's count.
func (n Binary) NumNegatives(numPos int) int64 {
	return int64(math.Ceil(float64(numPos) * n.Amount))
}

// Sample draws the negative pairs of numPos positives; pair i's source and
// destination are the first and second draw of stream position i.
func (n Binary) Sample(numPos int, numNodes int64, s Stream, threads int) (Pairs, error) {
	if !(n.Amount > 0) || math.IsInf(n.Amount, 0) {
		return Pairs{}, fmt.Errorf("linkpred: binary negative sampling: amount = %v, must be positive and finite", n.Amount)
	}
	if numPos < 0 {
		return Pairs{}, fmt.Errorf("linkpred: binary negative sampling: number of positive edges = %d, must be >= 0", numPos)
	}
	if err := n.Weights.check("binary negative sampling", numNodes); err != nil {
		return Pairs{}, err
	}
	total := float64(numPos) * n.Amount
	if total > maxNegatives {
		return Pairs{}, fmt.Errorf("linkpred: binary negative sampling: %d positives times amount = %v is too many negatives", numPos, n.Amount)
	}
	draw := func(r *rng.SplitMix64) int64 { return n.Weights.draw(r, numNodes) }
	return n.draws(numPos, s, threads, draw, draw), nil
}

// draws draws the NumNegatives(numPos) pairs, pair i's source and
// destination from stream position i.
func (n Binary) draws(numPos int, s Stream, threads int, src, dst func(*rng.SplitMix64) int64) Pairs {
	m := n.NumNegatives(numPos)
	out := Pairs{Src: make([]int64, m), Dst: make([]int64, m)}
	root := s.root(tagBinary)
	parallelFor(int(m), threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := at(root, i)
			out.Src[i] = src(&r)
			out.Dst[i] = dst(&r)
		}
	})
	return out
}

// Triplet is PyG's NegativeSampling("triplet", amount, weight): Amount
// negative destinations per positive, uniformly or by Weights, without
// checking for edges.
type Triplet struct {
	// Amount is the number of negatives per positive, > 0 (PyG requires an
	// integer here).
	Amount int
	// Weights, when not nil, draws nodes with probability proportional to
	// their weight.
	Weights *NodeWeights
}

// Sample draws the numPos*Amount negative destinations; destination f is
// drawn from stream position f. Which positive a destination belongs to is
// PyGTripletSeeds's business (PyG lays them out differently when disjoint).
func (n Triplet) Sample(numPos int, numNodes int64, s Stream, threads int) ([]int64, error) {
	if n.Amount <= 0 {
		return nil, fmt.Errorf("linkpred: triplet negative sampling: amount = %d, must be positive", n.Amount)
	}
	if numPos < 0 {
		return nil, fmt.Errorf("linkpred: triplet negative sampling: number of positive edges = %d, must be >= 0", numPos)
	}
	if err := n.Weights.check("triplet negative sampling", numNodes); err != nil {
		return nil, err
	}
	if tooMany(int64(numPos), int64(n.Amount)) {
		return nil, fmt.Errorf("linkpred: triplet negative sampling: %d positives times amount = %d is too many negatives", numPos, n.Amount)
	}
	return n.draws(numPos, s, threads, func(r *rng.SplitMix64) int64 { return n.Weights.draw(r, numNodes) }), nil
}

// draws draws the numPos*Amount destinations, destination f from stream
// position f.
func (n Triplet) draws(numPos int, s Stream, threads int, dst func(*rng.SplitMix64) int64) []int64 {
	m := int64(numPos) * int64(n.Amount)
	out := make([]int64, m)
	root := s.root(tagTriplet)
	parallelFor(int(m), threads, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			r := at(root, i)
			out[i] = dst(&r)
		}
	})
	return out
}

package linkpred

import (
	"fmt"
	"slices"
)

// Compacted is an edge batch relabelled over its endpoints, as DGL's
// compact_graphs([pair_graph, neg_pair_graph]) gives it: Nodes are the
// seeds of node sampling (pair_graph.ndata[dgl.NID]) and the output nodes of
// the last block, and Pos and Neg index into Nodes.
type Compacted struct {
	// Nodes are the distinct endpoints in order of first appearance in
	// pos.Src, pos.Dst, neg.Src, neg.Dst (original ids).
	Nodes []int64
	// Pos are the positive pairs, relabelled (pair_graph.edges()).
	Pos Pairs
	// Neg are the negative pairs, relabelled (neg_pair_graph.edges());
	// empty without a negative sampler.
	Neg Pairs
}

// CompactDGL relabels a DGL edge batch: pos are the seed edges' endpoints
// in seed order (EdgeIndex.Endpoints), neg the negative sampler's pairs
// (empty Pairs without one). numNodes bounds the ids, which are checked.
func CompactDGL(pos, neg Pairs, numNodes int64) (Compacted, error) {
	if err := pos.validate("positive pairs", numNodes); err != nil {
		return Compacted{}, err
	}
	if err := neg.validate("negative pairs", numNodes); err != nil {
		return Compacted{}, err
	}
	c := Compacted{
		Nodes: make([]int64, 0, min(2*(pos.Len()+neg.Len()), int(max(numNodes, 0)))),
		Pos:   Pairs{Src: make([]int64, pos.Len()), Dst: make([]int64, pos.Len())},
		Neg:   Pairs{Src: make([]int64, neg.Len()), Dst: make([]int64, neg.Len())},
	}
	local := make(map[int64]int64, 2*(pos.Len()+neg.Len()))
	add := func(ids, out []int64) {
		for i, v := range ids {
			l, ok := local[v]
			if !ok {
				l = int64(len(c.Nodes))
				local[v] = l
				c.Nodes = append(c.Nodes, v)
			}
			out[i] = l
		}
	}
	add(pos.Src, c.Pos.Src)
	add(pos.Dst, c.Pos.Dst)
	add(neg.Src, c.Neg.Src)
	add(neg.Dst, c.Neg.Dst)
	return c, nil
}

// PyGBinary is what PyG's LinkNeighborLoader needs of a batch without
// negative sampling or with binary negative sampling: the seeds of node
// sampling and the relabelled edge_label_index. The edge labels are the
// loader's (PyG: the given labels, or ones, then NumNeg zeros).
type PyGBinary struct {
	// Nodes are the seeds: the sorted distinct ids of cat(src, dst), or
	// cat(src, dst) itself when disjoint (PyG's n_id starts with them).
	Nodes []int64
	// Index is edge_label_index relabelled into Nodes: the positive pairs,
	// then the negative ones.
	Index Pairs
	// NumPos and NumNeg count the positive and negative pairs.
	NumPos, NumNeg int
}

// PyGBinarySeeds builds the seeds of a PyG link batch: pos are the batch's
// edge_label_index pairs, neg the Binary sampler's pairs (empty Pairs
// without negative sampling). With disjoint, each pair keeps its own seeds
// (PyG's disjoint=True: seeds cat(src, dst) as they are, Index an arange).
func PyGBinarySeeds(pos, neg Pairs, numNodes int64, disjoint bool) (PyGBinary, error) {
	if err := pos.validate("edge_label_index", numNodes); err != nil {
		return PyGBinary{}, err
	}
	if err := neg.validate("negative pairs", numNodes); err != nil {
		return PyGBinary{}, err
	}
	n := pos.Len() + neg.Len()
	seed := make([]int64, 0, 2*n)
	seed = append(seed, pos.Src...)
	seed = append(seed, neg.Src...)
	seed = append(seed, pos.Dst...)
	seed = append(seed, neg.Dst...)
	nodes, inv := uniqueSeeds(seed, disjoint)
	return PyGBinary{
		Nodes:  nodes,
		Index:  Pairs{Src: inv[:n:n], Dst: inv[n:]},
		NumPos: pos.Len(),
		NumNeg: neg.Len(),
	}, nil
}

// PyGTriplet is what PyG's LinkNeighborLoader needs of a batch with
// triplet negative sampling: the seeds and the src_index, dst_pos_index and
// dst_neg_index of the batch.
type PyGTriplet struct {
	// Nodes are the seeds: the sorted distinct ids of cat(src, dst_pos,
	// dst_neg), or that list itself when disjoint.
	Nodes []int64
	// SrcIndex and DstPosIndex index the positive pairs' endpoints in
	// Nodes (length NumPos each).
	SrcIndex, DstPosIndex []int64
	// DstNegIndex holds NumPos rows of Amount negatives, row-major: entry
	// i*Amount+j is positive i's j-th negative destination in Nodes (PyG's
	// dst_neg_index of shape [NumPos, Amount], squeezed when Amount is 1).
	DstNegIndex []int64
	NumPos      int
	Amount      int
}

// PyGTripletSeeds builds the seeds of a PyG triplet batch: pos are the
// batch's positive pairs, negDst the Triplet sampler's len(pos)*amount
// destinations. As PyG does, negative destination f belongs to positive
// f/amount (row-major), except when disjoint, where it belongs to positive
// f%NumPos (PyG's view(-1, num_pos).t(), matching its batch = seed %
// num_pos).
func PyGTripletSeeds(pos Pairs, negDst []int64, amount int, numNodes int64, disjoint bool) (PyGTriplet, error) {
	if err := pos.validate("edge_label_index", numNodes); err != nil {
		return PyGTriplet{}, err
	}
	if amount <= 0 {
		return PyGTriplet{}, fmt.Errorf("linkpred: triplet seeds: amount = %d, must be positive", amount)
	}
	p := pos.Len()
	if int64(len(negDst)) != int64(p)*int64(amount) {
		return PyGTriplet{}, fmt.Errorf("linkpred: triplet seeds: %d negative destinations for %d positives times amount %d", len(negDst), p, amount)
	}
	if err := checkNodes("negative destinations", negDst, numNodes); err != nil {
		return PyGTriplet{}, err
	}
	seed := make([]int64, 0, 2*p+len(negDst))
	seed = append(seed, pos.Src...)
	seed = append(seed, pos.Dst...)
	seed = append(seed, negDst...)
	nodes, inv := uniqueSeeds(seed, disjoint)
	t := PyGTriplet{
		Nodes:       nodes,
		SrcIndex:    inv[:p:p],
		DstPosIndex: inv[p : 2*p : 2*p],
		NumPos:      p,
		Amount:      amount,
	}
	neg := inv[2*p:]
	if !disjoint || p == 0 {
		t.DstNegIndex = neg
		return t, nil
	}
	t.DstNegIndex = make([]int64, len(neg))
	for i := 0; i < p; i++ {
		for j := 0; j < amount; j++ {
			t.DstNegIndex[i*amount+j] = neg[j*p+i]
		}
	}
	return t, nil
}

// uniqueSeeds returns PyG's seeds of a link batch and each entry's index
// among them: seed.unique(return_inverse=True) (sorted), or seed itself
// and an arange when disjoint.
func uniqueSeeds(seed []int64, disjoint bool) (nodes, inv []int64) {
	inv = make([]int64, len(seed))
	if disjoint {
		for i := range inv {
			inv[i] = int64(i)
		}
		return slices.Clone(seed), inv
	}
	nodes = slices.Clone(seed)
	slices.Sort(nodes)
	nodes = slices.Clip(slices.Compact(nodes))
	parallelFor(len(seed), 0, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			j, _ := slices.BinarySearch(nodes, seed[i])
			inv[i] = int64(j)
		}
	})
	return nodes, inv
}

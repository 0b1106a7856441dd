package linkpred

import (
	"fmt"
	"math"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/rng"
)

// Exclude is DGL's exclude argument of as_edge_prediction_sampler on a
// homogeneous graph (reverse_types needs edge types: see
// ExcludeReverseTypes).
type Exclude int

const (
	// ExcludeNone excludes no edge (DGL's exclude=None).
	ExcludeNone Exclude = iota
	// ExcludeSelfEdges excludes the batch's seed edges (exclude="self").
	ExcludeSelfEdges
	// ExcludeReverseEdges excludes the seed edges and their reverses
	// (exclude="reverse_id", with reverse_eids).
	ExcludeReverseEdges
)

// DGLNegative is one of DGL's negative samplers: PerSourceUniform (and so
// Uniform) or GlobalUniform.
type DGLNegative interface {
	sampleDGL(idx *EdgeIndex, pos Pairs, s Stream, threads int) (Pairs, error)
}

func (n PerSourceUniform) sampleDGL(idx *EdgeIndex, pos Pairs, s Stream, threads int) (Pairs, error) {
	return n.Sample(pos.Src, idx.NumNodes(), s, threads)
}

func (n GlobalUniform) sampleDGL(idx *EdgeIndex, pos Pairs, s Stream, threads int) (Pairs, error) {
	return n.Sample(idx, pos.Len(), s, threads)
}

// DGLEdgeSampler is the engine's half of DGL's
// as_edge_prediction_sampler(sampler, exclude, reverse_eids,
// negative_sampler): what happens to a batch of seed edge ids before (and
// around) node sampling.
type DGLEdgeSampler struct {
	// Negative is the negative sampler; nil for none (the loader then
	// yields (input_nodes, pair_graph, blocks)).
	Negative DGLNegative
	// Exclude chooses the edges node sampling must not take.
	Exclude Exclude
	// Reverse maps edge ids to their reverses, for ExcludeReverseEdges.
	Reverse Reverse
}

// DGLBatch is an edge batch ready for node sampling, with what the loader
// needs to build pair_graph and neg_pair_graph.
type DGLBatch struct {
	// Compacted holds the seeds of node sampling (Nodes: the output nodes
	// of the last block, pair_graph.ndata[dgl.NID]) and the relabelled
	// positive and negative pairs (the edges of pair_graph, whose
	// edata[dgl.EID] are the seed edge ids, and of neg_pair_graph; both
	// graphs have len(Nodes) nodes).
	Compacted
	// ExcludeEdges are the edge ids node sampling must not take
	// (engine/sample's Request.ExcludeEdges); nil with ExcludeNone.
	ExcludeEdges []int64
}

// Validate reports the first invalid field of d, naming it.
func (d DGLEdgeSampler) Validate() error {
	switch n := d.Negative.(type) {
	case nil:
	case PerSourceUniform:
		if n.K <= 0 {
			return fmt.Errorf("linkpred: DGLEdgeSampler: negative sampler k = %d, must be positive", n.K)
		}
	case GlobalUniform:
		if n.K <= 0 {
			return fmt.Errorf("linkpred: DGLEdgeSampler: negative sampler k = %d, must be positive", n.K)
		}
	default:
		return fmt.Errorf("linkpred: DGLEdgeSampler: unknown negative sampler %T", d.Negative)
	}
	switch d.Exclude {
	case ExcludeNone, ExcludeSelfEdges:
	case ExcludeReverseEdges:
		if err := d.Reverse.Validate(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("linkpred: DGLEdgeSampler: exclude = %d, must be none (0), self (1) or reverse_id (2)", d.Exclude)
	}
	return nil
}

// Batch prepares the batch of seed edge ids eids over idx's graph:
// endpoints (find_edges), negatives from stream s, compaction
// (compact_graphs) and the excluded edges.
func (d DGLEdgeSampler) Batch(idx *EdgeIndex, eids []int64, s Stream, threads int) (DGLBatch, error) {
	if err := d.Validate(); err != nil {
		return DGLBatch{}, err
	}
	if idx == nil {
		return DGLBatch{}, fmt.Errorf("linkpred: DGLEdgeSampler: edge index is nil")
	}
	pos, err := idx.Endpoints(eids)
	if err != nil {
		return DGLBatch{}, err
	}
	var neg Pairs
	if d.Negative != nil {
		if neg, err = d.Negative.sampleDGL(idx, pos, s, threads); err != nil {
			return DGLBatch{}, err
		}
	}
	c, err := CompactDGL(pos, neg, idx.NumNodes())
	if err != nil {
		return DGLBatch{}, err
	}
	b := DGLBatch{Compacted: c}
	switch d.Exclude {
	case ExcludeSelfEdges:
		b.ExcludeEdges = ExcludeSelf(eids)
	case ExcludeReverseEdges:
		if b.ExcludeEdges, err = ExcludeReverseID(eids, d.Reverse); err != nil {
			return DGLBatch{}, err
		}
	}
	return b, nil
}

// PyGMode is the mode of PyG's NegativeSampling.
type PyGMode int

const (
	// PyGNone: no negative sampling.
	PyGNone PyGMode = iota
	// PyGBinaryMode: NegativeSampling("binary", amount, weight).
	PyGBinaryMode
	// PyGTripletMode: NegativeSampling("triplet", amount, weight).
	PyGTripletMode
)

// PyGLinkSampler is the engine's half of PyG's LinkNeighborLoader
// (edge_label_index, neg_sampling, disjoint): what happens to a batch of
// seed pairs before node sampling.
type PyGLinkSampler struct {
	Mode PyGMode
	// Amount is NegativeSampling's amount: a positive ratio for binary, a
	// positive integer (held as a float, as PyG accepts 2.0) for triplet.
	Amount float64
	// Weights is NegativeSampling's weight (nil: uniform).
	Weights *NodeWeights
	// Disjoint is the loader's disjoint: every pair keeps its own seeds.
	Disjoint bool
}

// PyGBatch is a PyG link batch ready for node sampling. With PyGNone and
// PyGBinaryMode, Index is edge_label_index (NumNeg negatives after the
// NumPos positives; PyG's edge_label is the given labels, or ones, then
// NumNeg zeros, and PyG adds 1 to given labels whose minimum is 0 when it
// samples binary negatives, so that 0 means negative). With PyGTripletMode, SrcIndex, DstPosIndex and
// DstNegIndex (NumPos rows of Amount, row-major) are set instead.
type PyGBatch struct {
	// Nodes are the seeds of node sampling, first in PyG's n_id.
	Nodes                              []int64
	Index                              Pairs
	SrcIndex, DstPosIndex, DstNegIndex []int64
	NumPos, NumNeg                     int
}

// Validate reports the first invalid field of p, naming it, in PyG's words
// where PyG has them.
func (p PyGLinkSampler) Validate() error {
	switch p.Mode {
	case PyGNone:
	case PyGBinaryMode, PyGTripletMode:
		if !(p.Amount > 0) || math.IsInf(p.Amount, 0) {
			return fmt.Errorf("linkpred: negative sampling: amount = %v, must be positive and finite", p.Amount)
		}
		if p.Mode == PyGTripletMode && (p.Amount != math.Ceil(p.Amount) || p.Amount > maxNegatives) {
			return fmt.Errorf("linkpred: triplet negative sampling: amount = %v, must be an integer", p.Amount)
		}
	default:
		return fmt.Errorf("linkpred: negative sampling mode = %d, must be none (0), binary (1) or triplet (2)", p.Mode)
	}
	return nil
}

// Batch prepares the batch of seed pairs pos (the batch's columns of
// edge_label_index) over a graph of numNodes nodes, drawing negatives from
// stream s.
func (p PyGLinkSampler) Batch(pos Pairs, numNodes int64, s Stream, threads int) (PyGBatch, error) {
	return p.batch(pos, numNodes, nil, nil, s, threads)
}

// BatchTimed is Batch under node times (times not nil): every negative
// later than its positive's seed time is drawn again as PyG's neg_sample
// does (see NodeTimes).
func (p PyGLinkSampler) BatchTimed(pos Pairs, numNodes int64, times *NodeTimes, s Stream, threads int) (PyGBatch, error) {
	return p.batch(pos, numNodes, nil, times, s, threads)
}

// BatchTyped is Batch on a typed graph, as PyG's LinkNeighborLoader does
// on a HeteroData: the pairs (original ids) are of one edge type, so every
// source is of one node type and every destination of one; negative
// sources are drawn among the nodes of the sources' type and destinations
// among the destinations' type. The seeds are the sorted distinct ids of
// the pairs and negatives (grouped by type, each type's sorted: PyG's seeds
// per type), and the pair indices (Index, SrcIndex, DstPosIndex,
// DstNegIndex) are positions among the seeds of their node's type. With
// Disjoint, the seeds are PyG's disjoint ones (every pair end, negatives
// included, in Batch's order: not grouped by type) and the pair indices
// their ranks among the seeds of their type, as PyG's heterogeneous
// disjoint edge_label_index (an arange per type). Weights hold one weight
// per node of the type they draw (PyG's weight of a heterogeneous
// NegativeSampling, by the type's own ids): binary negatives draw both
// ends by them, so both types have that many nodes.
func (p PyGLinkSampler) BatchTyped(pos Pairs, t *graph.Types, s Stream, threads int) (PyGBatch, error) {
	return p.BatchTypedTimed(pos, t, nil, s, threads)
}

// BatchTypedTimed is BatchTyped under node times (times not nil; see
// BatchTimed): a redrawn negative stays in its side's node type, and the
// fallback is the earliest node of that type.
func (p PyGLinkSampler) BatchTypedTimed(pos Pairs, t *graph.Types, times *NodeTimes, s Stream, threads int) (PyGBatch, error) {
	if t == nil {
		return PyGBatch{}, fmt.Errorf("linkpred: BatchTyped: types are nil")
	}
	numNodes := t.NodeOffsets[t.NumNodeTypes()]
	if err := pos.validate("edge_label_index", numNodes); err != nil {
		return PyGBatch{}, err
	}
	ranges, err := PairTypes(pos, t)
	if err != nil {
		return PyGBatch{}, err
	}
	b, err := p.batch(pos, numNodes, ranges, times, s, threads)
	if err != nil {
		return PyGBatch{}, err
	}
	if p.Disjoint {
		TypeRanks(b.Nodes, t, b.Index.Src, b.Index.Dst, b.SrcIndex, b.DstPosIndex, b.DstNegIndex)
		return b, nil
	}
	if err := TypeLocal(b.Nodes, t, b.Index.Src, b.Index.Dst, b.SrcIndex, b.DstPosIndex, b.DstNegIndex); err != nil {
		return PyGBatch{}, err
	}
	return b, nil
}

// PairTypes returns the node ranges of the type of pos's sources and of
// the type of its destinations, which must each be of one type (pairs of
// one edge type); nil without pairs.
func PairTypes(pos Pairs, t *graph.Types) (*[2]NodeRange, error) {
	if pos.Len() == 0 {
		return nil, nil
	}
	var out [2]NodeRange
	for k, ids := range [][]int64{pos.Src, pos.Dst} {
		end := []string{"source", "destination"}[k]
		nt := t.NodeType(ids[0])
		for i, v := range ids {
			if u := t.NodeType(v); u != nt {
				return nil, fmt.Errorf("linkpred: the pairs are not of one edge type: %s %d (node %d) is of node type %d, %s 0 (node %d) of type %d", end, i, v, u, end, ids[0], nt)
			}
		}
		out[k] = TypeRange(t, nt)
	}
	return &out, nil
}

// batch is Batch, with the negatives' sources and destinations drawn from
// ranges[0] and ranges[1] when ranges is not nil, and kept under node
// times when times is not nil.
func (p PyGLinkSampler) batch(pos Pairs, numNodes int64, ranges *[2]NodeRange, times *NodeTimes, s Stream, threads int) (PyGBatch, error) {
	if err := p.Validate(); err != nil {
		return PyGBatch{}, err
	}
	if p.Mode != PyGNone {
		if err := pos.validate("edge_label_index", numNodes); err != nil {
			return PyGBatch{}, err
		}
		if times != nil {
			if err := times.validate(numNodes, pos.Len()); err != nil {
				return PyGBatch{}, err
			}
		}
	}
	typed := ranges != nil
	all := NodeRange{N: numNodes}
	if !typed {
		ranges = &[2]NodeRange{all, all}
	}
	// A side's draw as the first draws make it, for redraws under node
	// times.
	drawIn := func(r NodeRange) func(*rng.SplitMix64) int64 { return r.weighted(p.Weights) }
	switch p.Mode {
	case PyGTripletMode:
		amount := int(p.Amount)
		tr := Triplet{Amount: amount, Weights: p.Weights}
		var neg []int64
		var err error
		if p.Weights != nil && !typed {
			neg, err = tr.Sample(pos.Len(), numNodes, s, threads)
		} else {
			neg, err = tr.SampleRange(pos.Len(), ranges[1], s, threads)
		}
		if err != nil {
			return PyGBatch{}, err
		}
		if times != nil {
			if err := times.keep(neg, 1, ranges[1], drawIn(ranges[1]), s, threads); err != nil {
				return PyGBatch{}, err
			}
		}
		t, err := PyGTripletSeeds(pos, neg, amount, numNodes, p.Disjoint)
		if err != nil {
			return PyGBatch{}, err
		}
		return PyGBatch{Nodes: t.Nodes, SrcIndex: t.SrcIndex, DstPosIndex: t.DstPosIndex, DstNegIndex: t.DstNegIndex, NumPos: t.NumPos, NumNeg: len(neg)}, nil
	default:
		var neg Pairs
		if p.Mode == PyGBinaryMode {
			bi := Binary{Amount: p.Amount, Weights: p.Weights}
			var err error
			if p.Weights != nil && !typed {
				neg, err = bi.Sample(pos.Len(), numNodes, s, threads)
			} else {
				neg, err = bi.SampleRanges(pos.Len(), ranges[0], ranges[1], s, threads)
			}
			if err != nil {
				return PyGBatch{}, err
			}
			if times != nil {
				if err := times.keep(neg.Src, 0, ranges[0], drawIn(ranges[0]), s, threads); err != nil {
					return PyGBatch{}, err
				}
				if err := times.keep(neg.Dst, 1, ranges[1], drawIn(ranges[1]), s, threads); err != nil {
					return PyGBatch{}, err
				}
			}
		}
		b, err := PyGBinarySeeds(pos, neg, numNodes, p.Disjoint)
		if err != nil {
			return PyGBatch{}, err
		}
		return PyGBatch{Nodes: b.Nodes, Index: b.Index, NumPos: b.NumPos, NumNeg: b.NumNeg}, nil
	}
}

package sample

import (
	"errors"
	"fmt"
)

// Frontier selects which nodes a hop samples neighbours for.
type Frontier int

const (
	// FrontierAll gives DGL blocks: hop h samples neighbours of ALL nodes
	// gathered so far (block h's dst nodes = every node after hop h-1).
	FrontierAll Frontier = iota
	// FrontierNew is PyG-style: hop h samples only the nodes first added in
	// hop h-1 (hop 0: the seeds).
	FrontierNew
)

// String returns "all" or "new".
func (f Frontier) String() string {
	switch f {
	case FrontierAll:
		return "all"
	case FrontierNew:
		return "new"
	}
	return fmt.Sprintf("Frontier(%d)", int(f))
}

// Options configures a Sampler.
type Options struct {
	// Fanouts holds the number of neighbours to sample per frontier node,
	// per hop, starting from the seeds (PyG order); -1 = all neighbours.
	// 0, values < -1 and an empty list are invalid.
	Fanouts []int
	// Replace samples with replacement (default: uniform without replacement).
	Replace bool
	// Frontier selects FrontierAll (DGL) or FrontierNew (PyG).
	Frontier Frontier
	// Seed is the root of every random stream.
	Seed uint64
	// Threads is the parallelism of sampling (<= 0: GOMAXPROCS), shared by
	// the in-process ranks: each rank's sample stage and append-unique use
	// max(1, Threads/ranks) goroutines. It never changes the result.
	Threads int

	// Biased samples neighbours by edge weight (partition.Graph.Weights,
	// required): neighbour u of v is drawn with probability
	// w(u->v) / sum of v's weights. Edges of weight 0 are never sampled and
	// do not count in v's degree (so fanout -1 takes every positive-weight
	// neighbour). With Replace: independent weighted draws; without:
	// weighted sampling without replacement (Efraimidis-Spirakis exponential
	// keys), see the package documentation. It applies to every Scheme and
	// to RandomWalk.
	Biased bool
	// Scheme selects node-wise (default) or layer-wise sampling (DSP §4.2,
	// Eq. 2); see Scheme.
	Scheme Scheme
	// LayerWithoutReplacement changes LayerWise's frontier draw: instead of
	// Fanouts[h] draws with replacement, it picks min(Fanouts[h], number of
	// frontier nodes with positive total weight) DISTINCT frontier nodes,
	// with probabilities proportional to their total weights (successive
	// sampling by exponential keys), and each picked node samples exactly
	// one neighbour. Only valid with Scheme LayerWise.
	LayerWithoutReplacement bool
	// ExcludeEdges lists (original) edge ids that are never sampled, in any
	// order, duplicates allowed; ids that are not in the graph are ignored.
	// An excluded edge behaves as if it were absent: it counts neither in
	// degrees (fanout, fanout -1, layer-wise totals) nor in weights. New
	// turns the list into a bitmap over the graph's edge positions (1 bit
	// per edge), so the list itself is not kept by the sampler's hot path.
	ExcludeEdges []int64
}

// Scheme selects how the number of neighbours per frontier node is chosen.
type Scheme int

const (
	// NodeWise samples Fanouts[h] neighbours of every frontier node in hop h
	// (GraphSAGE).
	NodeWise Scheme = iota
	// LayerWise samples about Fanouts[h] edges for the whole frontier of hop
	// h (DSP Eq. 2): the requesting rank draws Fanouts[h] times, with
	// replacement, a frontier node u with probability W_u / sum W (W_u =
	// total weight of u's neighbours, its degree when not Biased; excluded
	// edges left out), counts c_u draws per node, and then u samples c_u
	// neighbours through CSP (with Replace: c_u independent draws, so the
	// hop is Fanouts[h] i.i.d. draws of an edge of the frontier with
	// probability w / sum W; without Replace: min(c_u, degree) distinct
	// neighbours). Fanouts[h] = -1 takes every neighbour of every frontier
	// node. See also Options.LayerWithoutReplacement.
	LayerWise
)

// String returns "node-wise" or "layer-wise".
func (s Scheme) String() string {
	switch s {
	case NodeWise:
		return "node-wise"
	case LayerWise:
		return "layer-wise"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// Validate reports the first invalid option.
func (o Options) Validate() error {
	if len(o.Fanouts) == 0 {
		return errors.New("sample: fanouts is empty (want one fanout per hop)")
	}
	for i, f := range o.Fanouts {
		if f == 0 || f < -1 {
			return fmt.Errorf("sample: fanout[%d] = %d is invalid (want > 0, or -1 for all neighbours)", i, f)
		}
	}
	if o.Frontier != FrontierAll && o.Frontier != FrontierNew {
		return fmt.Errorf("sample: frontier = %d is invalid (want FrontierAll (0) or FrontierNew (1))", int(o.Frontier))
	}
	if o.Scheme != NodeWise && o.Scheme != LayerWise {
		return fmt.Errorf("sample: scheme = %d is invalid (want NodeWise (0) or LayerWise (1))", int(o.Scheme))
	}
	if o.LayerWithoutReplacement && o.Scheme != LayerWise {
		return errors.New("sample: LayerWithoutReplacement needs Scheme LayerWise")
	}
	return nil
}

package sample

import (
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/graph"
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
	// node. See also Request.LayerWithoutReplacement.
	LayerWise
	// Labor is LABOR-0 layer-neighbour sampling (Balin and Catalyurek,
	// NeurIPS 2023; DGL's LaborSampler with importance_sampling=0): in hop
	// h every candidate neighbour t draws ONE uniform variate r_t in
	// [0, 1), shared by every destination of the batch, and destination s
	// with d_s candidates keeps t iff r_t < Fanouts[h] / d_s (every
	// neighbour when d_s <= Fanouts[h]; -1: all; 0: none). Each neighbour
	// is kept with probability min(1, Fanouts[h]/d_s), so s keeps
	// Fanouts[h] neighbours in expectation, not exactly, and destinations
	// that share neighbours tend to keep the same ones, which shrinks the
	// next hop's frontier. r_t comes from t's stream keyed by (Seed, batch
	// key, hop, t's original id), so it is the same on every patch; with
	// Request.LayerDependency every hop uses hop 0's variates. Not valid
	// with Replace or Biased. See labor.go.
	Labor
)

// String returns "node-wise", "layer-wise" or "labor".
func (s Scheme) String() string {
	switch s {
	case NodeWise:
		return "node-wise"
	case LayerWise:
		return "layer-wise"
	case Labor:
		return "labor"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// RuntimeOptions configures a Runtime: what is fixed for the runtime's
// life, as opposed to a Request, which each call brings.
type RuntimeOptions struct {
	// Threads is the parallelism of sampling (<= 0: GOMAXPROCS), shared by
	// the ranks this process runs: each rank's sample stage and
	// append-unique use max(1, Threads/ranks) goroutines. It never changes
	// a result.
	Threads int
	// Types makes the graph typed (heterogeneous; see graph.Types, by
	// original ids): requests may then give per-relation fan-outs
	// (Request.RelationFanouts). It must be valid for the partition's
	// graph (graph.Types.Validate): NewRuntime checks its shape only.
	Types *graph.Types
	// TypedEdges, when > 0, is the number of edges Types span, for a
	// partition graph holding some of the edges of a larger typed graph
	// (a rank's part, whose edge ids are the whole graph's; see
	// graph.Types.ValidateSpan). 0: the graph's own edge count.
	TypedEdges int64
	// NodeTime is the time of every node the sampler reads, by time slot
	// (partition.Partitioned.TimeSlot: original ids, NumNodes entries; on
	// a rank's Ranked part its owned then held nodes), for
	// Request.Temporal = TemporalNode.
	NodeTime []int64
	// EdgeTime is the time of every edge, by original edge id (more
	// entries than the largest edge id), for Request.Temporal =
	// TemporalEdge.
	EdgeTime []int64
}

// Temporal selects temporal sampling (PyG's time_attr): which times decide
// whether a neighbour may be sampled.
type Temporal int

const (
	// TemporalNone samples without regard to time.
	TemporalNone Temporal = iota
	// TemporalNode keeps neighbour u of a subgraph with seed time t iff
	// NodeTime[u] <= t.
	TemporalNode
	// TemporalEdge keeps the edge e of a subgraph with seed time t iff
	// EdgeTime[e] <= t.
	TemporalEdge
)

// TemporalStrategy selects how a temporal task picks among its candidates.
type TemporalStrategy int

const (
	// TemporalUniform samples the candidates as any task does (uniformly,
	// or by weight when biased).
	TemporalUniform TemporalStrategy = iota
	// TemporalLast takes the fan-out candidates with the largest times
	// (ties: the later list position wins), emitted in list order.
	TemporalLast
)

// Request is what one Runtime.Sample call samples. Results depend only on
// the request, the batch keys and the seeds (and the graph), never on the
// runtime's threads or patches.
type Request struct {
	// Fanouts holds the number of neighbours to sample per frontier node,
	// per hop, starting from the seeds (PyG order): -1 takes every
	// neighbour, 0 none (the hop's block has its dst nodes and no edge, as
	// DGL's fan-out 0). Values below -1 are invalid. An empty list is zero
	// hops, valid with FrontierNew only: the sample is the seeds alone, no
	// block (PyG's num_neighbors=[]); FrontierAll's blocks (DGL's, one per
	// layer) want at least one hop.
	Fanouts []int
	// Replace samples with replacement (default: uniform without
	// replacement).
	Replace bool
	// Frontier selects FrontierAll (DGL) or FrontierNew (PyG).
	Frontier Frontier
	// Scheme selects node-wise (default) or layer-wise sampling (DSP §4.2,
	// Eq. 2); see Scheme.
	Scheme Scheme
	// Biased samples neighbours by edge weight (partition.Graph.Weights,
	// required): neighbour u of v is drawn with probability
	// w(u->v) / sum of v's weights. Edges of weight 0 are never sampled and
	// do not count in v's degree (so fanout -1 takes every positive-weight
	// neighbour). With Replace: independent weighted draws; without:
	// weighted sampling without replacement (Efraimidis-Spirakis exponential
	// keys), see the package documentation. It applies to NodeWise and
	// LayerWise (Labor refuses it).
	Biased bool
	// LayerWithoutReplacement changes LayerWise's frontier draw: instead of
	// Fanouts[h] draws with replacement, it picks min(Fanouts[h], number of
	// frontier nodes with positive total weight) DISTINCT frontier nodes,
	// with probabilities proportional to their total weights (successive
	// sampling by exponential keys), and each picked node samples exactly
	// one neighbour. Only valid with Scheme LayerWise.
	LayerWithoutReplacement bool
	// LayerDependency makes every hop of a Labor request use the same
	// variates (hop 0's), as DGL's LaborSampler(layer_dependency=True): a
	// neighbour kept in one hop tends to be kept again, so fewer distinct
	// nodes are sampled. Only valid with Scheme Labor.
	LayerDependency bool
	// ExcludeEdges lists (original) edge ids that are never sampled, in any
	// order, duplicates allowed; ids that are not in the graph are ignored.
	// An excluded edge behaves as if it were absent: it counts neither in
	// degrees (fanout, fanout -1, layer-wise totals) nor in weights. The
	// runtime turns the list into a bitmap over the graph's edge positions
	// (1 bit per edge) and keeps the bitmaps of the last few lists, so
	// repeating a list costs one comparison.
	ExcludeEdges []int64
	// RelationFanouts, when non-nil, gives the fan-outs per hop and per
	// relation of a typed graph (RuntimeOptions.Types): RelationFanouts[h][r]
	// in-edges of relation r are sampled for every frontier node of hop h
	// whose type is r's destination type (-1: all, 0: none), from a random
	// stream of the relation's own, and the node's answer is the relations'
	// samples in relation order. Every row must have one entry per
	// relation. Fanouts is then ignored (Sample and Bind replace it by the
	// rows' maxima, which only count the hops). Not valid with LayerWise.
	RelationFanouts [][]int
	// Disjoint samples every seed as a subgraph of its own (PyG's
	// disjoint=True): a node reached from two seeds is two nodes of the
	// batch, seeds may repeat, and Result.Batch gives each node's seed
	// position. The nodes come hop by hop, and within a hop seed by seed
	// (each in order of first appearance), as PyG orders them. The streams
	// of a subgraph are keyed by the batch key and the seed's position, so
	// repeated seeds get independent subgraphs. Needs FrontierNew and
	// NodeWise or Labor.
	Disjoint bool
	// Temporal restricts each subgraph's neighbours to those not later
	// than its seed time (given per seed to Runtime.SampleTimed); it needs
	// Disjoint and the times (RuntimeOptions.NodeTime or EdgeTime).
	Temporal Temporal
	// TemporalStrategy picks among a temporal task's candidates (needs
	// Temporal; TemporalLast is not valid with Replace or Biased).
	TemporalStrategy TemporalStrategy
	// Seed is the root of every random stream of the call.
	Seed uint64
}

// Validate reports the first invalid field of r, naming it.
func (r Request) Validate() error { return r.validate("Request") }

// normalized returns r with Fanouts derived from RelationFanouts when
// those are given (their maxima per hop: only the number of hops counts),
// and both cloned; zero hops of RelationFanouts are zero hops of Fanouts.
func (r Request) normalized() Request {
	r.ExcludeEdges = slices.Clone(r.ExcludeEdges)
	if r.RelationFanouts == nil {
		r.Fanouts = slices.Clone(r.Fanouts)
		return r
	}
	if len(r.RelationFanouts) == 0 {
		r.RelationFanouts, r.Fanouts = nil, nil
		return r
	}
	rf := make([][]int, len(r.RelationFanouts))
	r.Fanouts = make([]int, len(rf))
	for h, row := range r.RelationFanouts {
		rf[h] = slices.Clone(row)
		r.Fanouts[h] = slices.Max(row)
	}
	r.RelationFanouts = rf
	return r
}

// validate is Validate with the struct's name for the messages.
func (r Request) validate(what string) error {
	switch {
	case r.RelationFanouts != nil && (len(r.RelationFanouts) > 0 || r.Frontier != FrontierNew):
		if err := r.validateRelationFanouts(what); err != nil {
			return err
		}
	case r.RelationFanouts != nil: // zero hops (FrontierNew), Fanouts ignored
	default:
		if len(r.Fanouts) == 0 && r.Frontier != FrontierNew {
			return fmt.Errorf("sample: %s.Fanouts is empty (want one fan-out per hop)", what)
		}
		for i, f := range r.Fanouts {
			if f < -1 {
				return fmt.Errorf("sample: %s.Fanouts[%d] = %d is invalid (want >= 0, or -1 for all neighbours)", what, i, f)
			}
		}
	}
	if r.Frontier != FrontierAll && r.Frontier != FrontierNew {
		return fmt.Errorf("sample: %s.Frontier = %d is invalid (want FrontierAll (0) or FrontierNew (1))", what, int(r.Frontier))
	}
	if r.Scheme != NodeWise && r.Scheme != LayerWise && r.Scheme != Labor {
		return fmt.Errorf("sample: %s.Scheme = %d is invalid (want NodeWise (0), LayerWise (1) or Labor (2))", what, int(r.Scheme))
	}
	if r.Scheme == Labor && r.Replace {
		return fmt.Errorf("sample: %s.Replace is not valid with %s.Scheme = Labor (LABOR keeps each neighbour at most once)", what, what)
	}
	if r.Scheme == Labor && r.Biased {
		return fmt.Errorf("sample: %s.Biased is not supported with %s.Scheme = Labor (weighted LABOR needs importance weights on the edges, which graphferry does not compute)", what, what)
	}
	if r.LayerDependency && r.Scheme != Labor {
		return fmt.Errorf("sample: %s.LayerDependency needs %s.Scheme = Labor", what, what)
	}
	if r.LayerWithoutReplacement && r.Scheme != LayerWise {
		return fmt.Errorf("sample: %s.LayerWithoutReplacement needs %s.Scheme = LayerWise", what, what)
	}
	if r.RelationFanouts != nil && r.Scheme == LayerWise {
		return fmt.Errorf("sample: %s.RelationFanouts is not valid with %s.Scheme = LayerWise (layer-wise draws over the whole frontier; give Fanouts)", what, what)
	}
	if r.Disjoint {
		if r.Scheme == LayerWise {
			return fmt.Errorf("sample: %s.Disjoint is not valid with %s.Scheme = LayerWise", what, what)
		}
		if r.Frontier != FrontierNew {
			return fmt.Errorf("sample: %s.Disjoint needs %s.Frontier = FrontierNew (PyG's sampling)", what, what)
		}
	}
	if r.Temporal < TemporalNone || r.Temporal > TemporalEdge {
		return fmt.Errorf("sample: %s.Temporal = %d is invalid (want TemporalNone (0), TemporalNode (1) or TemporalEdge (2))", what, int(r.Temporal))
	}
	if r.TemporalStrategy != TemporalUniform && r.TemporalStrategy != TemporalLast {
		return fmt.Errorf("sample: %s.TemporalStrategy = %d is invalid (want TemporalUniform (0) or TemporalLast (1))", what, int(r.TemporalStrategy))
	}
	if r.Temporal != TemporalNone && !r.Disjoint {
		return fmt.Errorf("sample: %s.Temporal needs %s.Disjoint (every subgraph has its own seed time)", what, what)
	}
	if r.TemporalStrategy == TemporalLast {
		if r.Temporal == TemporalNone {
			return fmt.Errorf("sample: %s.TemporalStrategy = TemporalLast needs %s.Temporal", what, what)
		}
		if r.Replace || r.Biased || r.Scheme != NodeWise {
			return fmt.Errorf("sample: %s.TemporalStrategy = TemporalLast is only valid with node-wise sampling without replacement or bias", what)
		}
	}
	return nil
}

func (r Request) validateRelationFanouts(what string) error {
	if len(r.RelationFanouts) == 0 {
		return fmt.Errorf("sample: %s.RelationFanouts is empty (want one row per hop)", what)
	}
	nr := len(r.RelationFanouts[0])
	if nr == 0 {
		return fmt.Errorf("sample: %s.RelationFanouts[0] is empty (want one fan-out per relation)", what)
	}
	for h, row := range r.RelationFanouts {
		if len(row) != nr {
			return fmt.Errorf("sample: %s.RelationFanouts[%d] has %d entries, RelationFanouts[0] %d (want one per relation in every hop)", what, h, len(row), nr)
		}
		for i, f := range row {
			if f < -1 {
				return fmt.Errorf("sample: %s.RelationFanouts[%d][%d] = %d is invalid (want >= 0, or -1 for all neighbours)", what, h, i, f)
			}
		}
	}
	return nil
}

// WalkRequest is what one Runtime.RandomWalk call walks; see
// Runtime.RandomWalk.
type WalkRequest struct {
	// Length is the number of steps of every walker (>= 0).
	Length int
	// RestartProb is the probability, in [0, 1], that a live walker goes
	// back to its seed before a step instead of stepping.
	RestartProb float64
	// Biased steps to a neighbour with probability proportional to the
	// edge's weight (partition.Graph.Weights, required); edges of weight 0
	// are never taken.
	Biased bool
	// ExcludeEdges lists (original) edge ids that are never taken, as
	// Request.ExcludeEdges.
	ExcludeEdges []int64
	// Seed is the root of every random stream of the call.
	Seed uint64
}

// Validate reports the first invalid field of r, naming it.
func (r WalkRequest) Validate() error {
	if r.Length < 0 {
		return fmt.Errorf("sample: WalkRequest.Length = %d is negative", r.Length)
	}
	if !(r.RestartProb >= 0 && r.RestartProb <= 1) {
		return fmt.Errorf("sample: WalkRequest.RestartProb = %v is not in [0, 1]", r.RestartProb)
	}
	return nil
}

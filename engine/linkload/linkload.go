package linkload

import (
	"context"
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Mode says whose edge-level loader a Linker follows.
type Mode int

const (
	// DGL takes batches of seed edge ids, as DGL's
	// as_edge_prediction_sampler does.
	DGL Mode = iota + 1
	// PyG takes batches of seed pairs (columns of edge_label_index), as
	// PyG's LinkNeighborLoader does.
	PyG
)

// LinkField names the pair fields of an edge batch (Batch.Link[f]), all
// int64. Pair indices are positions into the batch's seeds (Batch.Seeds,
// the first nodes of Batch.Nodes); on a typed graph, positions among the
// seeds of their node's type. A field a batch does not produce is empty
// ([0]).
type LinkField int

const (
	// LinkPosSrc and LinkPosDst: DGL: the edges of pair_graph (one per seed
	// edge; grouped by relation on a typed graph). PyG (no or binary
	// negatives): edge_label_index, the NumPos positives then the negatives.
	LinkPosSrc LinkField = iota
	LinkPosDst
	// LinkNegSrc and LinkNegDst: DGL: the edges of neg_pair_graph (empty
	// without a negative sampler).
	LinkNegSrc
	LinkNegDst
	// LinkSrcIndex, LinkDstPosIndex ([NumPos]) and LinkDstNegIndex
	// ([NumPos, amount]): PyG's triplet mode.
	LinkSrcIndex
	LinkDstPosIndex
	LinkDstNegIndex
	// LinkInputID ([NumPos]): the position of each positive pair's seed
	// edge or pair among the loader's items (PyG's input_id), in pair
	// order; for a batch of given seeds (EdgeSampler), among those.
	LinkInputID
	// LinkEdgeIDs ([NumPos], DGL): the seed edge ids in pair order,
	// pair_graph.edata[dgl.EID]; relation-local ids on a typed graph.
	LinkEdgeIDs
	// LinkPosOffsets and LinkNegOffsets ([R+1], DGL on a typed graph):
	// where each relation's positive (negative) pairs start.
	LinkPosOffsets
	LinkNegOffsets
	// NumLinkFields is the number of LinkField values.
	NumLinkFields
)

// Options configures a Linker.
type Options struct {
	// Request is the neighbour sampling of every batch. Its Seed roots the
	// negative streams too; its ExcludeEdges are excluded in every batch, on
	// top of the batch's own exclusion (DGL's exclude).
	Request sample.Request
	// Threads bounds the parallelism (<= 0: GOMAXPROCS); never changes a
	// batch.
	Threads int
	Mode    Mode
	// DGL is used with DGL mode. On a typed graph, PerSourceUniform
	// negatives are drawn among the destination type of each seed edge's
	// relation, GlobalUniform ones per relation among the pairs of its node
	// types that are not its edges (as DGL draws per canonical edge type).
	DGL linkpred.DGLEdgeSampler
	// PyG is used with PyG mode. Its Disjoint follows Request.Disjoint
	// (PyG's disjoint LinkNeighborLoader: every pair end, negatives
	// included, is a seed of its own subgraph, and a node's batch entry is
	// its pair's position modulo the positives, as PyG's; on a typed
	// graph, the seed's rank among its type's seeds modulo the positives).
	// On a typed graph the pairs are of one edge type, and the negatives
	// are drawn among its source and destination types (node weights then
	// hold one weight per node of the type they draw).
	PyG linkpred.PyGLinkSampler
	// ExcludeFunc, DGL mode only (nil: none), is DGL's callable exclude:
	// called for each batch with its seed edge ids (in the batch's order)
	// and its batch key, on the thread that makes the batch, before the
	// batch is sampled; the edge ids it returns (at most 2 x (the graph's
	// edges + the batch's seed edges), each an edge of the graph, repeats
	// allowed) are excluded on top of Request.ExcludeEdges and DGL.Exclude.
	// An error it returns fails the batch with that error.
	ExcludeFunc pipeline.BatchFunc
	// NodeTime is the time of every node (original ids; on a rank's
	// Ranked part its own nodes', by time slot, the others asked through
	// EdgeAsker.NodeTimes), for negatives
	// under node times (Request.Temporal = TemporalNode with negative
	// sampling): a negative later than its pair's seed time is drawn again,
	// as PyG's neg_sample (linkpred.NodeTimes). Read, not copied: it must
	// not change while the Linker is used.
	NodeTime []int64
}

// Validate checks opt for a graph typed by types (nil: untyped).
func (o Options) Validate(types *graph.Types) error {
	req := o.Request
	if o.Mode == PyG && (o.PyG.Disjoint || o.Request.Temporal != sample.TemporalNone) {
		req.Disjoint = true // as New makes it
	}
	if o.Request.Temporal != sample.TemporalNone {
		if o.Mode != PyG {
			return errs.Errorf(errs.ErrNotSupported, "edge samplers sample temporally in PyG mode only")
		}
		if o.Request.Temporal == sample.TemporalNode && o.PyG.Mode != linkpred.PyGNone && len(o.NodeTime) == 0 {
			// PyG draws negatives not later than their seed by node time.
			return errs.Errorf(nil, "negatives under node times need the graph's node times (none are set)")
		}
	}
	if err := req.Validate(); err != nil {
		return errs.Errorf(nil, "%v", err)
	}
	switch o.Mode {
	case DGL:
		if err := o.DGL.Validate(); err != nil {
			return errs.Errorf(nil, "%v", err)
		}
	case PyG:
		if err := o.PyG.Validate(); err != nil {
			return errs.Errorf(nil, "%v", err)
		}
	default:
		return errs.Errorf(nil, "link mode = %d, must be DGL (%d) or PyG (%d)", o.Mode, DGL, PyG)
	}
	if o.ExcludeFunc != nil && o.Mode != DGL {
		return errs.Errorf(nil, "an exclude callback applies to DGL-mode edge samplers only (PyG mode has no exclusion)")
	}
	if o.Request.Disjoint && o.Mode != PyG {
		return errs.Errorf(nil, "DGL-mode edge samplers do not support disjoint sampling (PyG mode only)")
	}
	return nil
}

// Linker makes the edge batches of one partitioned graph. It reads the
// partition and types, which must not change while it is used, and is
// safe for concurrent use.
type Linker struct {
	p     *partition.Partitioned
	types *graph.Types
	opt   Options
	idx   EdgeLookup
	adj   linkpred.Adjacency // whether u->v is an edge (internal ids); nil: unknown
	ask   EdgeAsker          // asks the ranks instead when adj is nil; nil: neither
}

// EdgeLookup is what a Linker asks of its graph's edges besides
// adjacency: the node count and the endpoints of edge ids (internal node
// ids, in the order given; an id it cannot resolve is an error naming its
// position). linkpred.EdgeIndex answers it over a whole graph; a rank
// that holds part of the edges answers it for the seed edges it resolved
// with the other ranks (engine/distributed).
type EdgeLookup interface {
	NumNodes() int64
	Endpoints(eids []int64) (linkpred.Pairs, error)
}

// EdgeAsker is an EdgeLookup of a rank that holds part of the edges and
// asks the other ranks of its group which pairs are edges of the whole
// graph (engine/distributed's dsp ranks), for GlobalUniform negatives.
type EdgeAsker interface {
	EdgeLookup
	// NumEdges returns the whole graph's edge count.
	NumEdges() int64
	// AreEdges reports whether each pair (internal node ids) is an edge of
	// the whole graph. It is collective: every rank of the group calls it
	// exactly once for each batch it makes (before sampling it), on rt,
	// the runtime that samples the batch, whose exchanges pair up across
	// the ranks (sample.Runtime.Exchange).
	AreEdges(ctx context.Context, rt *sample.Runtime, pairs linkpred.Pairs) ([]bool, error)
	// Internal returns the internal ids of the original ids orig, for a
	// rank that knows its own nodes' alone (partition.Partitioned.Ranked):
	// a batch's negatives and seed pairs, which can be any node. It is
	// collective as AreEdges: every rank makes the same calls for each
	// batch it makes (once before sampling it, and before AreEdges for
	// GlobalUniform's candidates), on rt.
	Internal(ctx context.Context, rt *sample.Runtime, orig []int64) ([]int64, error)
	// NodeTimes returns the node times of the whole graph for a batch's
	// negatives under node times, for a rank that holds its own nodes'
	// alone (partition.Partitioned.Ranked), asked of the ranks on rt (its
	// Times calls are collective as Internal's).
	NodeTimes(ctx context.Context, rt *sample.Runtime) linkpred.NodeTimer
}

// New returns a Linker over p, typed by types (nil: untyped), after
// checking opt (errors wrap errs classes: errs.ErrNotSupported for valid
// options this engine does not do).
func New(p *partition.Partitioned, types *graph.Types, opt Options) (*Linker, error) {
	if p == nil || p.Graph == nil {
		return nil, errs.Errorf(nil, "linkload: partition (or its graph) is nil")
	}
	if err := opt.Validate(types); err != nil {
		return nil, err
	}
	idx, err := linkpred.NewEdgeIndex(p.Graph, opt.Threads)
	if err != nil {
		return nil, errs.Errorf(nil, "%v", err)
	}
	return newLinker(p, types, opt, idx, idx), nil
}

// NewOver is New for a graph whose edges the partition holds only in
// part (a rank of a dsp partition, engine/distributed): seed edge ids are
// resolved by edges. Negatives that must know whether a pair is an edge
// (GlobalUniform) ask the ranks when edges is an EdgeAsker (untyped
// graphs; each batch draws its candidates, asks, then keeps the pairs
// that are not edges: linkpred.GlobalUniform.SampleAsking, the same pairs
// as over the whole graph), and are refused (errs.ErrNotSupported)
// otherwise.
func NewOver(p *partition.Partitioned, types *graph.Types, opt Options, edges EdgeLookup) (*Linker, error) {
	if p == nil || p.Graph == nil || edges == nil {
		return nil, errs.Errorf(nil, "linkload: partition (or its graph) or edge lookup is nil")
	}
	if err := opt.Validate(types); err != nil {
		return nil, err
	}
	if opt.ExcludeFunc != nil {
		return nil, errs.Errorf(errs.ErrNotSupported, "an exclude callback names edges of the whole graph; this graph holds part of them")
	}
	ask, asks := edges.(EdgeAsker)
	if _, global := opt.DGL.Negative.(linkpred.GlobalUniform); global && opt.Mode == DGL && (!asks || types != nil) {
		return nil, errs.Errorf(errs.ErrNotSupported, "GlobalUniform negatives reject the pairs that are edges, which needs every edge of the graph (or, untyped, ranks to ask); this graph holds part of them")
	}
	l := newLinker(p, types, opt, edges, nil)
	l.ask = ask
	return l, nil
}

// newLinker returns the Linker of a checked opt.
func newLinker(p *partition.Partitioned, types *graph.Types, opt Options, idx EdgeLookup, adj linkpred.Adjacency) *Linker {
	opt.Request.Fanouts = slices.Clone(opt.Request.Fanouts)
	opt.Request.RelationFanouts = slices.Clone(opt.Request.RelationFanouts)
	opt.Request.ExcludeEdges = slices.Clone(opt.Request.ExcludeEdges)
	if opt.DGL.Reverse.Map != nil {
		opt.DGL.Reverse.Map = slices.Clone(opt.DGL.Reverse.Map)
	}
	if opt.Mode == PyG && (opt.Request.Disjoint || opt.PyG.Disjoint || opt.Request.Temporal != sample.TemporalNone) {
		// Either says disjoint (temporal sampling is disjoint, as PyG's):
		// every pair end its own seed, sampled disjoint.
		opt.PyG.Disjoint, opt.Request.Disjoint = true, true
	}
	return &Linker{p: p, types: types, opt: opt, idx: idx, adj: adj}
}

// Mode returns the mode l was made for.
func (l *Linker) Mode() Mode { return l.opt.Mode }

// Items are the seeds of an edge batch or loader: edge ids (DGL) or node
// pairs in original ids (PyG).
type Items struct {
	EdgeIDs []int64
	Pairs   linkpred.Pairs
	// Times, PyG temporal sampling only (Request.Temporal): one time per
	// pair (PyG's edge_label_time), the seed time of both its ends and of
	// its negatives.
	Times []int64
}

// Len returns the number of items.
func (it Items) Len() int {
	if it.EdgeIDs != nil {
		return len(it.EdgeIDs)
	}
	return it.Pairs.Len()
}

// at returns the items at positions pos.
func (it Items) at(pos []int64) Items {
	if it.EdgeIDs != nil {
		out := make([]int64, len(pos))
		for i, q := range pos {
			out[i] = it.EdgeIDs[q]
		}
		return Items{EdgeIDs: out}
	}
	out := linkpred.Pairs{Src: make([]int64, len(pos)), Dst: make([]int64, len(pos))}
	for i, q := range pos {
		out.Src[i], out.Dst[i] = it.Pairs.Src[q], it.Pairs.Dst[q]
	}
	var times []int64
	if it.Times != nil {
		times = make([]int64, len(pos))
		for i, q := range pos {
			times[i] = it.Times[q]
		}
	}
	return Items{Pairs: out, Times: times}
}

// Check validates items for l's mode and graph: DGL: edge ids of the graph
// (an id that is not one is named); PyG: pairs of node ids (of one edge
// type on a typed graph).
func (l *Linker) Check(items Items) error {
	if l.opt.Mode == DGL {
		if items.Pairs.Src != nil || items.Pairs.Dst != nil {
			return errs.Errorf(nil, "a DGL edge loader takes seed edge ids, not pairs")
		}
		if _, err := l.idx.Endpoints(items.EdgeIDs); err != nil {
			return errs.Errorf(nil, "%v", err)
		}
		return nil
	}
	if items.EdgeIDs != nil {
		return errs.Errorf(nil, "a PyG edge loader takes seed pairs, not edge ids")
	}
	pos := items.Pairs
	if len(pos.Src) != len(pos.Dst) {
		return errs.Errorf(nil, "seed pairs: %d sources and %d destinations", len(pos.Src), len(pos.Dst))
	}
	if err := l.checkTimes(items); err != nil {
		return err
	}
	n := l.p.Graph.NumNodes
	for k, ids := range [][]int64{pos.Src, pos.Dst} {
		for i, v := range ids {
			if v < 0 || v >= n {
				return errs.Errorf(nil, "seed pair %s[%d] = %d is out of range [0, %d)", []string{"sources", "destinations"}[k], i, v, n)
			}
		}
	}
	if l.types != nil {
		ranges, err := linkpred.PairTypes(pos, l.types)
		if err != nil {
			return errs.Errorf(nil, "%v", err)
		}
		if err := l.checkTypedWeights(ranges); err != nil {
			return err
		}
	}
	return nil
}

// checkTypedWeights: on a typed graph, PyG's negative weights hold one
// weight per node of each type they draw (the destinations' type; binary:
// the sources' type too).
func (l *Linker) checkTypedWeights(ranges *[2]linkpred.NodeRange) error {
	w := l.opt.PyG.Weights
	if w == nil || ranges == nil || l.opt.PyG.Mode == linkpred.PyGNone {
		return nil
	}
	for k, r := range ranges {
		if k == 0 && l.opt.PyG.Mode == linkpred.PyGTripletMode {
			continue // triplet draws destinations only
		}
		if w.Len() != r.N {
			side := []string{"source", "destination"}[k]
			return errs.Errorf(nil, "negative sampling weights: %d weights for the %d nodes of the pairs' %s type (want one per node of that type)", w.Len(), r.N, side)
		}
	}
	return nil
}

// checkTimes: a temporal PyG linker takes one time per pair, any other none.
func (l *Linker) checkTimes(items Items) error {
	if l.opt.Request.Temporal == sample.TemporalNone {
		if items.Times != nil {
			return errs.Errorf(nil, "seed times are given but the sampling is not temporal")
		}
		return nil
	}
	if len(items.Times) != items.Pairs.Len() {
		return errs.Errorf(nil, "temporal link sampling needs one time per seed pair (got %d times for %d pairs)", len(items.Times), items.Pairs.Len())
	}
	return nil
}

// pygSeedTimes are the seed times of a temporal PyG batch of numPos pairs
// of times (seeds: the sources then the destinations, disjoint), as PyG's
// edge_sample makes them: binary (or no) negatives: every source and
// destination takes times repeated 1 + ceil(amount) times, cut to
// numPos + numNeg; triplet: the sources take times, the destinations times
// repeated 1 + amount times.
func (l *Linker) pygSeedTimes(times []int64, numSeeds int) []int64 {
	repeat := func(n int) []int64 {
		out := make([]int64, n)
		for i := range out {
			out[i] = times[i%len(times)]
		}
		return out
	}
	if l.opt.PyG.Mode == linkpred.PyGTripletMode {
		return append(slices.Clone(times), repeat(numSeeds-len(times))...)
	}
	half := repeat(numSeeds / 2)
	return append(half, half...)
}

// link is an edge batch before node sampling: its seed nodes (original
// ids), the edges it excludes, and its pair fields.
type link struct {
	seeds   []int64
	exclude []int64
	fields  [NumLinkFields][]int64
	shapes  map[LinkField][]int64
	numPos  int
	numNeg  int
}

// Make makes the batch of items (non-empty; inputID gives their positions
// for LinkInputID) with batch key key on rt, a fork of a runtime over l's
// partition with its types, every tensor from alloc (nil: the Go heap).
// It returns the batch (Index and Epoch zero), the sample it came from
// (internal ids; hand it back to rt.Recycle when done) and the numbers of
// positive and negative pairs (PyG triplet: negative destinations).
func (l *Linker) Make(ctx context.Context, rt *sample.Runtime, items Items, inputID []int64, key uint64, alloc mem.Allocator, threads int) (*pipeline.Batch, *sample.Result, [2]int, error) {
	pr, err := l.prepare(ctx, rt, items, inputID, key, threads)
	if err != nil {
		return nil, nil, [2]int{}, err
	}
	res, err := pr.sample(ctx, rt)
	if err != nil {
		return nil, nil, [2]int{}, err
	}
	return l.finish(rt, pr, res, alloc, threads)
}

// prepared is an edge batch before node sampling: its link, its seeds in
// internal ids and the request that samples them (the batch's exclusion
// added).
type prepared struct {
	lk       link
	internal []int64
	req      sample.Request
	times    []int64 // seed times (temporal requests)
	key      uint64
}

// prepare draws the negatives of the batch of items and relabels its
// pairs (see Make). rt is the runtime that samples the batch: a Linker
// that asks the ranks which pairs are edges (NewOver) exchanges on it.
func (l *Linker) prepare(ctx context.Context, rt *sample.Runtime, items Items, inputID []int64, key uint64, threads int) (prepared, error) {
	if items.Len() == 0 {
		return prepared{}, errs.Errorf(nil, "seed edges are empty")
	}
	if inputID == nil {
		inputID = make([]int64, items.Len())
		for i := range inputID {
			inputID[i] = int64(i)
		}
	}
	st := linkpred.Stream{Seed: l.opt.Request.Seed, Key: key}
	var lk link
	var err error
	if l.opt.Mode == DGL {
		lk, err = l.dgl(items.EdgeIDs, inputID, st, threads, l.asking(ctx, rt))
	} else {
		if err := l.checkTimes(items); err != nil {
			return prepared{}, err
		}
		lk, err = l.pyg(l.nodeTimes(ctx, rt), items.Pairs, items.Times, inputID, st, threads)
	}
	if err != nil {
		return prepared{}, errs.Errorf(nil, "%v", err)
	}
	if l.opt.ExcludeFunc != nil {
		extra, err := l.excludeFunc(ctx, items.EdgeIDs, key)
		if err != nil {
			return prepared{}, err
		}
		lk.exclude = append(lk.exclude, extra...)
	}
	pr := prepared{lk: lk, req: l.opt.Request, key: key}
	// Disjoint seeds may repeat (a node in two pairs has two subgraphs).
	pr.internal, err = l.internal(ctx, rt, lk.seeds, !pr.req.Disjoint)
	if err != nil {
		return prepared{}, errs.Errorf(nil, "link seeds: %v", err)
	}
	if len(lk.exclude) > 0 {
		pr.req.ExcludeEdges = append(slices.Clone(pr.req.ExcludeEdges), lk.exclude...)
	}
	if pr.req.Temporal != sample.TemporalNone {
		pr.times = l.pygSeedTimes(items.Times, len(lk.seeds))
	}
	return pr, nil
}

// sample samples the neighbourhood of pr's seeds on rt.
func (pr prepared) sample(ctx context.Context, rt *sample.Runtime) (*sample.Result, error) {
	var res []*sample.Result
	var err error
	if pr.req.Temporal != sample.TemporalNone {
		res, err = rt.SampleTimed(ctx, pr.req, [][]int64{pr.internal}, [][]int64{pr.times}, []uint64{pr.key})
	} else {
		res, err = rt.Sample(ctx, pr.req, [][]int64{pr.internal}, []uint64{pr.key})
	}
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// finish makes the batch of pr from its sample res (recycled to rt on
// failure).
func (l *Linker) finish(rt *sample.Runtime, pr prepared, res *sample.Result, alloc mem.Allocator, threads int) (*pipeline.Batch, *sample.Result, [2]int, error) {
	lk := pr.lk
	if pr.req.Disjoint && lk.numPos > 0 {
		// PyG's disjoint link batch: a node's subgraph is named by its
		// pair, the seed position modulo the positives (out.batch % num_pos).
		// On a typed graph, the seed's rank among its type's seeds (PyG
		// numbers each type's seeds from 0).
		var rank []int64
		if l.types != nil {
			rank = linkpred.SeedRanks(lk.seeds, l.types)
		}
		for i, b := range res.Batch {
			if rank != nil {
				b = rank[b]
			}
			res.Batch[i] = b % int64(lk.numPos)
		}
	}
	order := make([]int64, len(lk.seeds))
	for i := range order {
		order[i] = int64(i)
	}
	b, err := pipeline.Materialize(res, lk.seeds, order, l.p, nil, nil, nil, alloc, threads)
	if err == nil {
		b.Excluded = lk.exclude // left out of an induced edge list too (pipeline.SubgraphEdges)
		err = fill(b, lk)
	}
	if err != nil {
		rt.Recycle(res)
		return nil, nil, [2]int{}, err
	}
	return b, res, [2]int{lk.numPos, lk.numNeg}, nil
}

// fill copies lk's fields into b.Link, from b's allocator; on failure b is
// released.
func fill(b *pipeline.Batch, lk link) error {
	alloc := b.Allocator()
	b.Link = make([]mem.Tensor, NumLinkFields)
	for f, v := range lk.fields {
		buf, view, err := mem.AllocInt64(alloc, len(v))
		if err != nil {
			b.Release()
			return err
		}
		copy(view, v)
		shape := lk.shapes[LinkField(f)]
		if shape == nil {
			shape = []int64{int64(len(v))}
		}
		b.Link[f] = mem.Tensor{DType: mem.Int64, Shape: shape, Data: buf}
	}
	return nil
}

// origAdjacency answers HasEdge in original node ids over the partitioned
// graph, so that negatives are drawn (and checked) in original ids and do
// not depend on the partition.
type origAdjacency struct {
	adj      linkpred.Adjacency
	oldToNew []int64
}

func (a origAdjacency) NumNodes() int64 { return a.adj.NumNodes() }
func (a origAdjacency) NumEdges() int64 { return a.adj.NumEdges() }
func (a origAdjacency) HasEdge(u, v int64) bool {
	if a.oldToNew != nil {
		u, v = a.oldToNew[u], a.oldToNew[v]
	}
	return a.adj.HasEdge(u, v)
}

// endpoints is the EdgeIndex's Endpoints in original node ids (on a
// rank's part, the partition knows those of its seed edges).
func (l *Linker) endpoints(eids []int64) (linkpred.Pairs, error) {
	pos, err := l.idx.Endpoints(eids)
	if err != nil {
		return pos, err
	}
	if err := l.p.ToOld(pos.Src, pos.Src); err != nil {
		return pos, err
	}
	return pos, l.p.ToOld(pos.Dst, pos.Dst)
}

// internal returns the internal ids of a batch's seeds orig (refusing
// repeats when distinct): on a rank's part they are asked of the ranks
// (EdgeAsker.Internal), else mapped by the partition.
func (l *Linker) internal(ctx context.Context, rt *sample.Runtime, orig []int64, distinct bool) ([]int64, error) {
	if l.p.Ranked == nil || l.ask == nil {
		return pipeline.MapSeeds(l.p, orig, distinct)
	}
	// Checked before the exchange, which every rank then runs anyway.
	_, err := pipeline.MapSeeds(&partition.Partitioned{Graph: l.p.Graph, Offsets: l.p.Offsets}, orig, distinct)
	if err != nil {
		return nil, err
	}
	return l.ask.Internal(ctx, rt, orig)
}

// asking returns the query that asks the ranks, on rt, which pairs
// (original ids) are edges: nil unless l asks (NewOver with an EdgeAsker).
func (l *Linker) asking(ctx context.Context, rt *sample.Runtime) func(linkpred.Pairs) ([]bool, error) {
	if l.ask == nil {
		return nil
	}
	return func(orig linkpred.Pairs) ([]bool, error) {
		in := linkpred.Pairs{Src: make([]int64, orig.Len()), Dst: make([]int64, orig.Len())}
		if l.p.Ranked != nil {
			ids, err := l.ask.Internal(ctx, rt, append(slices.Clone(orig.Src), orig.Dst...))
			if err != nil {
				return nil, err
			}
			in.Src, in.Dst = ids[:orig.Len()], ids[orig.Len():]
		} else if err := l.p.ToNew(orig.Src, in.Src); err != nil {
			return nil, err
		} else if err := l.p.ToNew(orig.Dst, in.Dst); err != nil {
			return nil, err
		}
		return l.ask.AreEdges(ctx, rt, in)
	}
}

// dgl is DGL's batch of the seed edge ids eids: endpoints, negatives,
// compaction and exclusion. ask, when not nil, asks the ranks which pairs
// are edges (GlobalUniform negatives of a Linker without the adjacency).
func (l *Linker) dgl(eids, inputID []int64, st linkpred.Stream, threads int, ask func(linkpred.Pairs) ([]bool, error)) (link, error) {
	d := l.opt.DGL
	var off []int64 // relation offsets of the pairs (typed graphs)
	if l.types != nil {
		if _, err := l.idx.Endpoints(eids); err != nil { // names a bad id before typing it
			return link{}, err
		}
		eids, inputID, off = groupByRelation(eids, inputID, l.types)
	}
	pos, err := l.endpoints(eids)
	if err != nil {
		return link{}, err
	}
	n := l.idx.NumNodes()
	var neg linkpred.Pairs
	var negOff []int64
	switch ns := d.Negative.(type) {
	case linkpred.PerSourceUniform:
		if l.types == nil {
			neg, err = ns.Sample(pos.Src, n, st, threads)
			break
		}
		ranges := make([]linkpred.NodeRange, len(eids))
		for r := 0; r+1 < len(off); r++ {
			dst := linkpred.TypeRange(l.types, l.types.RelDst[r])
			for i := off[r]; i < off[r+1]; i++ {
				ranges[i] = dst
			}
		}
		neg, err = ns.SampleRanges(pos.Src, ranges, st, threads)
		negOff = make([]int64, len(off))
		for r, o := range off {
			negOff[r] = o * int64(ns.K)
		}
	case linkpred.GlobalUniform:
		if l.adj == nil && ask != nil && l.types == nil {
			neg, err = ns.SampleAsking(n, l.ask.NumEdges(), pos.Len(), st, threads, ask)
			break
		}
		if l.adj == nil {
			return link{}, errs.Errorf(errs.ErrNotSupported, "GlobalUniform negatives need every edge of the graph")
		}
		if l.types == nil {
			neg, err = ns.Sample(origAdjacency{l.adj, l.p.OldToNew}, pos.Len(), st, threads)
			break
		}
		neg, negOff, err = l.globalTyped(ns, off, st, threads)
	}
	if err != nil {
		return link{}, err
	}
	var c linkpred.Compacted
	if l.types == nil {
		c, err = linkpred.CompactDGL(pos, neg, n)
	} else {
		if negOff == nil {
			negOff = make([]int64, len(off))
		}
		if c, err = linkpred.CompactDGLTyped(pos, neg, off, negOff, l.types); err == nil {
			err = linkpred.TypeLocal(c.Nodes, l.types, c.Pos.Src, c.Pos.Dst, c.Neg.Src, c.Neg.Dst)
		}
	}
	if err != nil {
		return link{}, err
	}
	lk := link{seeds: c.Nodes, numPos: c.Pos.Len(), numNeg: c.Neg.Len()}
	if lk.exclude, err = l.exclusion(eids); err != nil {
		return link{}, err
	}
	ids := eids
	if l.types != nil {
		ids = make([]int64, len(eids))
		for r := 0; r+1 < len(off); r++ {
			for i := off[r]; i < off[r+1]; i++ {
				ids[i] = eids[i] - l.types.EdgeOffsets[r]
			}
		}
	}
	lk.fields = [NumLinkFields][]int64{
		LinkPosSrc: c.Pos.Src, LinkPosDst: c.Pos.Dst, LinkNegSrc: c.Neg.Src, LinkNegDst: c.Neg.Dst,
		LinkInputID: inputID, LinkEdgeIDs: ids, LinkPosOffsets: off, LinkNegOffsets: negOff,
	}
	return lk, nil
}

// globalTyped draws DGL's GlobalUniform negatives of a typed batch whose
// seed edges are grouped by relation at offsets off: relation by relation,
// as DGL draws per canonical edge type, among the pairs of its node types
// that are not its edges. It returns the pairs and their relation offsets.
func (l *Linker) globalTyped(ns linkpred.GlobalUniform, off []int64, st linkpred.Stream, threads int) (linkpred.Pairs, []int64, error) {
	t := l.types
	out := linkpred.Pairs{Src: []int64{}, Dst: []int64{}}
	negOff := make([]int64, len(off))
	for r := 0; r+1 < len(off); r++ {
		negOff[r] = int64(out.Len())
		if off[r+1] == off[r] {
			continue
		}
		adj := relAdjacency{origAdjacency: origAdjacency{l.adj, l.p.OldToNew}, g: l.p.Graph, types: t, rel: int32(r), shared: sharedTypes(t, r)}
		src, dst := linkpred.TypeRange(t, t.RelSrc[r]), linkpred.TypeRange(t, t.RelDst[r])
		neg, err := ns.SampleRelation(adj, t.EdgeOffsets[r+1]-t.EdgeOffsets[r], r, int(off[r+1]-off[r]), src, dst, st, threads)
		if err != nil {
			return linkpred.Pairs{}, nil, err
		}
		out.Src = append(out.Src, neg.Src...)
		out.Dst = append(out.Dst, neg.Dst...)
	}
	negOff[len(off)-1] = int64(out.Len())
	return out, negOff, nil
}

// sharedTypes reports whether another relation of t joins relation r's
// source and destination node types.
func sharedTypes(t *graph.Types, r int) bool {
	for q := range t.RelSrc {
		if q != r && t.RelSrc[q] == t.RelSrc[r] && t.RelDst[q] == t.RelDst[r] {
			return true
		}
	}
	return false
}

// relAdjacency answers HasEdge (original ids) for the edges of relation
// rel of a typed graph alone: an edge u->v of any relation is one of rel's
// unless another relation joins the same node types (shared), when v's
// in-edges from u are looked up by relation.
type relAdjacency struct {
	origAdjacency
	g      *graph.CSC
	types  *graph.Types
	rel    int32
	shared bool
}

func (a relAdjacency) HasEdge(u, v int64) bool {
	if !a.origAdjacency.HasEdge(u, v) {
		return false
	}
	if !a.shared {
		return true
	}
	if m := a.oldToNew; m != nil {
		u, v = m[u], m[v]
	}
	posLo, posHi := a.g.Span(v)
	for pos := posLo; pos < posHi; pos++ {
		if a.g.Source(pos) == u && a.types.Relation(a.g.EdgeID(pos)) == a.rel {
			return true
		}
	}
	return false
}

// exclusion returns the edges a DGL batch of the seed edges eids excludes
// on top of the request's (DGL's exclude): none, eids, or eids and their
// reverses.
func (l *Linker) exclusion(eids []int64) ([]int64, error) {
	d := l.opt.DGL
	switch {
	case l.opt.Mode != DGL:
		return nil, nil
	case d.Exclude == linkpred.ExcludeSelfEdges:
		return linkpred.ExcludeSelf(eids), nil
	case d.Exclude == linkpred.ExcludeReverseEdges:
		return linkpred.ExcludeReverseID(eids, d.Reverse)
	}
	return nil, nil
}

// excludeFunc calls ExcludeFunc for the batch of the seed edges eids
// under key and checks what it returns: edge ids of the graph.
func (l *Linker) excludeFunc(ctx context.Context, eids []int64, key uint64) ([]int64, error) {
	e := l.p.Graph.NumEdges()
	out, err := l.opt.ExcludeFunc(ctx, key, slices.Clone(eids), int(2*(e+int64(len(eids)))))
	if err != nil {
		return nil, fmt.Errorf("exclude callback: %w", err)
	}
	for i, id := range out {
		if id < 0 || id >= e {
			return nil, errs.Errorf(nil, "exclude callback: its result[%d] = %d is not an edge id (the graph has %d edges)", i, id, e)
		}
	}
	return out, nil
}

// batchExclusion returns every edge the DGL batch of the seed edges eids
// under key excludes on top of the request's: exclusion's and
// ExcludeFunc's.
func (l *Linker) batchExclusion(ctx context.Context, eids []int64, key uint64) ([]int64, error) {
	out, err := l.exclusion(eids)
	if err != nil || l.opt.ExcludeFunc == nil {
		return out, err
	}
	extra, err := l.excludeFunc(ctx, eids, key)
	if err != nil {
		return nil, err
	}
	return append(out, extra...), nil
}

// groupByRelation orders the seed edges eids (and their input ids) by
// relation, stably (DGL's per-type seed edges, each type's in batch
// order), and returns the relation offsets [R+1].
func groupByRelation(eids, inputID []int64, t *graph.Types) (ge, gi, off []int64) {
	r := t.NumRelations()
	off = make([]int64, r+1)
	rel := make([]int32, len(eids))
	for i, e := range eids {
		rel[i] = t.Relation(e)
		off[rel[i]+1]++
	}
	for k := 1; k <= r; k++ {
		off[k] += off[k-1]
	}
	next := slices.Clone(off[:r])
	ge, gi = make([]int64, len(eids)), make([]int64, len(eids))
	for i, e := range eids {
		at := next[rel[i]]
		next[rel[i]]++
		ge[at], gi[at] = e, inputID[i]
	}
	return ge, gi, off
}

// nodeTimes returns the node times a batch's negatives are kept under:
// the graph's (opt.NodeTime), or on a rank's part, which holds its own
// nodes' alone, the ranks' asked on rt (EdgeAsker.NodeTimes).
func (l *Linker) nodeTimes(ctx context.Context, rt *sample.Runtime) linkpred.NodeTimer {
	if l.p.Ranked != nil && l.ask != nil {
		return l.ask.NodeTimes(ctx, rt)
	}
	return linkpred.TimeVector(l.opt.NodeTime)
}

// pyg is PyG's batch of the seed pairs pos: negatives (under node times
// by timer when temporal), seeds, relabelled pairs.
func (l *Linker) pyg(timer linkpred.NodeTimer, pos linkpred.Pairs, times, inputID []int64, st linkpred.Stream, threads int) (link, error) {
	if pos.Len() == 0 || len(pos.Dst) != pos.Len() {
		return link{}, errs.Errorf(nil, "seed pairs: %d sources and %d destinations (want the same, > 0)", len(pos.Src), len(pos.Dst))
	}
	var nt *linkpred.NodeTimes
	if l.opt.Request.Temporal == sample.TemporalNode && l.opt.PyG.Mode != linkpred.PyGNone {
		nt = &linkpred.NodeTimes{Node: timer, Seeds: times}
	}
	var b linkpred.PyGBatch
	var err error
	if l.types == nil {
		b, err = l.opt.PyG.BatchTimed(pos, l.idx.NumNodes(), nt, st, threads)
	} else {
		b, err = l.opt.PyG.BatchTypedTimed(pos, l.types, nt, st, threads)
	}
	if err != nil {
		return link{}, err
	}
	lk := link{seeds: b.Nodes, numPos: b.NumPos, numNeg: b.NumNeg}
	if l.opt.PyG.Mode == linkpred.PyGTripletMode {
		lk.shapes = map[LinkField][]int64{LinkDstNegIndex: {int64(b.NumPos), int64(l.opt.PyG.Amount)}}
	}
	lk.fields = [NumLinkFields][]int64{
		LinkPosSrc: b.Index.Src, LinkPosDst: b.Index.Dst,
		LinkSrcIndex: b.SrcIndex, LinkDstPosIndex: b.DstPosIndex, LinkDstNegIndex: b.DstNegIndex,
		LinkInputID: inputID,
	}
	return lk, nil
}

// errorf is an invalid-argument error with a message of its own.
func errorf(format string, args ...any) error { return errs.Errorf(nil, format, args...) }

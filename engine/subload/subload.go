// Package subload is the batch source of the subgraph loaders (GraphSAINT,
// Cluster-GCN): a pipeline.Maker whose batch is a node set and the
// subgraph it induces, made ahead of the consumer by the pipeline's
// workers like every other loader's batches.
//
// Batch i of epoch e depends only on (Options, the graph, the items at its
// positions, BatchKey(e, i)): its node set is drawn from the stream keyed
// by the options' Seed and the batch key (rng.SplitMix64), never from the
// worker, thread or patch count:
//
//   - Nodes: Budget node ids drawn with replacement, node v in proportion
//     to its Weighting (out-degree, at least 1 for DGL's; as it is for
//     PyG's), the distinct ones kept;
//   - Edges: Budget edge ids drawn with replacement in proportion to their
//     Weighting (DGL's 1/in_degree(dst) + 1/out_degree(src), PyG's
//     in_degree(src) + out_degree(dst)), the distinct ends kept;
//   - Walks: Budget roots drawn uniformly and a walk of WalkLength steps
//     along out-edges from each (sample.Runtime.RandomWalk on the reversed
//     graph, keyed by Seed and the batch key), every node visited kept;
//   - Parts: the items are part ids and a batch is the union of its parts'
//     nodes (PartOffsets, PartNodes), parts in batch order;
//   - KHop (NewKHop): the items are seed nodes and a batch is the k-hop
//     sample of its seeds (sample.Runtime.Sample with the source's
//     request, keyed by the batch key) made induced (ShaDow-GNN): the
//     sample's nodes in its order (seeds first) or, for a disjoint
//     request, every seed's subgraph of its own (its distinct nodes in
//     increasing id order, subgraph after subgraph, Batch.Batch saying
//     whose each node is, each edge in every subgraph holding its ends);
//   - HGT (NewHGT): the items are seed nodes of a typed graph and a batch
//     is HGT's sample of its seeds (hgt.go: per hop and node type, nodes
//     drawn by their squared budget) and the subgraph it induces.
//   - Drawn: the caller's Draw (a pipeline.BatchFunc: a DGL SAINTSampler
//     subclass's own draw) gives each batch's node ids, called with the
//     batch's key and items on the thread making the batch, ahead of the
//     consumer; the distinct ids are the node set.
//
// Drawn node sets are in increasing id order. The loader stage gathers
// node data over the batch's nodes and edge data over its edges; the
// batch has no blocks: its edges are its COO (Batch.COO), in the Order
// asked for, node positions relative to Batch.Nodes. HopCounts is
// [0, nodes] (a subgraph batch has no seeds), but for KHop's batches
// without Disjoint: the sample's (its seeds are Batch.Seeds, the first
// nodes, whose label rows the loader stage gathers), and HGT's: [seeds,
// drawn nodes]. With Options.Block (HGT's always) a batch also has its
// edges as one block over all its nodes (destination-major, each
// destination's edges in COO order), so that the pipeline's typed view
// (pipeline.Options.Types) splits a typed graph's batch by type.
//
// It imports pipeline, sample, partition, graph, comm, mem and rng
// (engine/layering_test.go).
package subload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rng"
	"github.com/graphferry/graphferry/engine/sample"
)

// Kind says how a batch's node set is made.
type Kind int

// The kinds of node sets (see the package doc).
const (
	Nodes Kind = iota + 1
	Edges
	Walks
	Parts
	KHop
	HGT
	Drawn
)

// Weighting is the draw probability of a node (Nodes) or edge (Edges).
type Weighting int

// The weightings.
const (
	// OutDegreeAtLeast1 weighs node v by max(out_degree(v), 1): DGL's
	// SAINTSampler('node').
	OutDegreeAtLeast1 Weighting = iota
	// OutDegree weighs node v by out_degree(v): PyG's
	// GraphSAINTNodeSampler (the source of a uniformly drawn edge).
	OutDegree
	// InverseDegree weighs edge u -> v by 1/max(in_degree(v), 1) +
	// 1/max(out_degree(u), 1): DGL's SAINTSampler('edge').
	InverseDegree
	// DegreeSum weighs edge u -> v by in_degree(u) + out_degree(v) +
	// 1e-10: PyG's GraphSAINTEdgeSampler.
	DegreeSum
)

// Order is the order of a batch's edges.
type Order int

// The edge orders.
const (
	// BySrcThenEID: by source position, then edge id (DGL's subgraph).
	BySrcThenEID Order = iota
	// BySrcThenDst: by source position, then destination position, then
	// edge id (PyG's SparseTensor).
	BySrcThenDst
	// ByDstThenEID: by destination position, then edge id (a CSC's order).
	ByDstThenEID
	// ByEID: by edge id (PyG's Data.subgraph).
	ByEID
)

// Options configures a Source.
type Options struct {
	Kind      Kind
	Weighting Weighting // Nodes and Edges
	// Budget is the nodes or edges drawn (Nodes, Edges) or the walks'
	// roots (Walks) per batch, >= 0.
	Budget int
	// WalkLength is the steps of every walk (Walks), >= 0.
	WalkLength int
	// PartOffsets ([k+1], from 0, non-decreasing) and PartNodes (original
	// ids, distinct; nil: node ids 0..PartOffsets[k]-1) define Parts' k
	// parts: part j is PartNodes[PartOffsets[j]:PartOffsets[j+1]].
	PartOffsets, PartNodes []int64
	Order                  Order
	// NumSamples[h][t] is the nodes of type t HGT draws in hop h.
	NumSamples [][]int
	// Block: every batch's edges as one block too (see the package doc).
	Block bool
	// Draw makes each batch's node ids (Drawn).
	Draw pipeline.BatchFunc
	// Seed roots every batch's random stream.
	Seed uint64
	// Threads is the parallelism the pipeline's workers share (<= 0:
	// GOMAXPROCS).
	Threads int
}

// Source is the batch source (a pipeline.Maker) of a subgraph loader over
// one partitioned graph. Its items are the loader's: placeholders whose
// number alone counts (Nodes, Edges, Walks: each batch draws its own node
// set) or part ids (Parts).
type Source struct {
	sh    *shared
	items []int64
	walk  *sample.Runtime // Walks: the reversed graph's runtime (this fork's)
	rt    *sample.Runtime // KHop: the sampling runtime (this fork's)
	local []int32         // position of an internal id in the batch being made, -1 elsewhere
	slot  []int32         // HGT: 1 + a budgeted node's index among its type's candidates, 0 elsewhere
}

// shared is what the forks of a Source share, read only.
type shared struct {
	p   *partition.Partitioned
	opt Options
	cdf []float64      // Nodes: by original node id; Edges: by edge id
	pos []int64        // Edges: the CSC position of each edge id
	req sample.Request // KHop
	// HGT: the graph's types and, per node type, the relations into it
	types     *graph.Types
	relsByDst [][]int32
}

var _ pipeline.Maker[*Source] = (*Source)(nil)

// New returns the source of the loader over items on p, after checking
// opt and the items against the graph. The weights (Nodes, Edges) are
// summed once here, as is the reversed graph of the walks.
func New(p *partition.Partitioned, items []int64, opt Options) (*Source, error) {
	if p == nil || p.Graph == nil {
		return nil, errors.New("subload: the partition (or its graph) is nil")
	}
	if opt.Budget < 0 {
		return nil, fmt.Errorf("subload: budget = %d (want >= 0)", opt.Budget)
	}
	if opt.WalkLength < 0 {
		return nil, fmt.Errorf("subload: walk length = %d (want >= 0)", opt.WalkLength)
	}
	if opt.Order < BySrcThenEID || opt.Order > ByEID {
		return nil, fmt.Errorf("subload: edge order = %d is unknown", opt.Order)
	}
	sh := &shared{p: p, opt: opt}
	sh.opt.PartOffsets, sh.opt.PartNodes = slices.Clone(opt.PartOffsets), slices.Clone(opt.PartNodes)
	s := &Source{sh: sh, items: slices.Clone(items)}
	var err error
	switch opt.Kind {
	case Nodes:
		if opt.Weighting != OutDegreeAtLeast1 && opt.Weighting != OutDegree {
			return nil, fmt.Errorf("subload: weighting %d does not weigh nodes (want OutDegreeAtLeast1 or OutDegree)", opt.Weighting)
		}
		err = sh.nodeWeights()
	case Edges:
		if opt.Weighting != InverseDegree && opt.Weighting != DegreeSum {
			return nil, fmt.Errorf("subload: weighting %d does not weigh edges (want InverseDegree or DegreeSum)", opt.Weighting)
		}
		err = sh.edgeWeights()
	case Walks:
		s.walk, err = sh.reversedRuntime(opt.Threads)
	case Parts:
		err = sh.checkParts(s.items)
	case KHop, HGT:
		err = fmt.Errorf("subload: a %s source is made by New%s", map[Kind]string{KHop: "KHop", HGT: "HGT"}[opt.Kind], map[Kind]string{KHop: "KHop", HGT: "HGT"}[opt.Kind])
	case Drawn:
		if opt.Draw == nil {
			err = errors.New("subload: a Drawn source needs its Draw")
		}
	default:
		err = fmt.Errorf("subload: kind %d is unknown (want Nodes, Edges, Walks, Parts or Drawn)", opt.Kind)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// NewKHop returns the source of a ShaDow loader over seeds (original ids,
// distinct unless req.Disjoint) that samples with req on forks of rt
// (the source's own, over p) and makes each sample induced; opt.Kind is
// KHop (set here), opt.Order the edges' order, opt.Threads the
// parallelism.
func NewKHop(p *partition.Partitioned, rt *sample.Runtime, req sample.Request, seeds []int64, opt Options) (*Source, error) {
	if p == nil || p.Graph == nil {
		return nil, errors.New("subload: the partition (or its graph) is nil")
	}
	if rt == nil || rt.Partitioned() != p {
		return nil, errors.New("subload: the runtime is nil or samples another partition")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Temporal != sample.TemporalNone {
		return nil, errors.New("subload: a ShaDow loader does not sample temporally")
	}
	if opt.Order < BySrcThenEID || opt.Order > ByEID {
		return nil, fmt.Errorf("subload: edge order = %d is unknown", opt.Order)
	}
	n := p.Graph.NumNodes
	seen := map[int64]int{}
	for i, v := range seeds {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("subload: seeds[%d] = %d is out of range [0, %d)", i, v, n)
		}
		if j, dup := seen[v]; dup && !req.Disjoint {
			return nil, fmt.Errorf("subload: seeds[%d] = %d repeats seeds[%d] (want distinct seeds, or a disjoint request)", i, v, j)
		}
		seen[v] = i
	}
	opt.Kind = KHop
	sh := &shared{p: p, opt: opt, req: req}
	return &Source{sh: sh, items: slices.Clone(seeds), rt: rt}, nil
}

// NumItems returns the number of items the pipeline batches.
func (s *Source) NumItems() int { return len(s.items) }

// Partitioned returns the partition the source draws from.
func (s *Source) Partitioned() *partition.Partitioned { return s.sh.p }

// Threads returns the source's thread count (<= 0: GOMAXPROCS).
func (s *Source) Threads() int {
	if s.rt != nil {
		return s.rt.Threads()
	}
	return s.sh.opt.Threads
}

// Fork returns a copy that makes the same batches, with workspaces (and a
// walk runtime) of its own.
func (s *Source) Fork(threads int) (*Source, error) {
	f := &Source{sh: s.sh, items: s.items}
	if s.walk != nil {
		rt, err := s.walk.Fork(threads)
		if err != nil {
			return nil, err
		}
		f.walk = rt
	}
	if s.rt != nil {
		rt, err := s.rt.Fork(threads)
		if err != nil {
			return nil, err
		}
		f.rt = rt
	}
	return f, nil
}

// Recycle does nothing: a batch's sample result holds only its node ids.
func (s *Source) Recycle(...*sample.Result) {}

// outDegrees returns the out-degree of every node, by original id.
func (sh *shared) outDegrees() []int64 {
	g := sh.p.Graph
	out := make([]int64, g.NumNodes)
	for pos := range g.NumEdges() {
		out[sh.orig(g.Source(pos))]++
	}
	return out
}

// orig returns the original id of internal id v.
func (sh *shared) orig(v int64) int64 {
	if sh.p.NewToOld == nil {
		return v
	}
	return sh.p.NewToOld[v]
}

// internal returns the internal id of original id v.
func (sh *shared) internal(v int64) int64 {
	if sh.p.OldToNew == nil {
		return v
	}
	return sh.p.OldToNew[v]
}

// cumulative turns w into its running sums, checking they end above 0.
func cumulative(w []float64, what string) ([]float64, error) {
	var sum float64
	for i, x := range w {
		sum += x
		w[i] = sum
	}
	if len(w) == 0 {
		return nil, fmt.Errorf("subload: no %s to draw from (the graph has none)", what)
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("subload: the weights of the %s sum to %v (want a finite sum > 0)", what, sum)
	}
	return w, nil
}

func (sh *shared) nodeWeights() error {
	out := sh.outDegrees()
	w := make([]float64, len(out))
	for v, d := range out {
		if sh.opt.Weighting == OutDegreeAtLeast1 {
			d = max(d, 1)
		}
		w[v] = float64(d)
	}
	var err error
	sh.cdf, err = cumulative(w, "nodes")
	return err
}

func (sh *shared) edgeWeights() error {
	g := sh.p.Graph
	e := g.NumEdges()
	out := sh.outDegrees()
	sh.pos = make([]int64, e)
	for i := range sh.pos {
		sh.pos[i] = -1
	}
	w := make([]float64, e)
	for v := range g.NumNodes {
		in := float64(g.InDegree(v))
		dst := sh.orig(v)
		posLo, posHi := g.Span(v)
		for pos := posLo; pos < posHi; pos++ {
			id := g.EdgeID(pos)
			if id < 0 || id >= e || sh.pos[id] >= 0 {
				return fmt.Errorf("subload: edge id %d is out of range [0, %d) or repeated (edge draws need the ids 0..%d)", id, e, e-1)
			}
			sh.pos[id] = pos
			src := sh.orig(g.Source(pos))
			if sh.opt.Weighting == InverseDegree {
				w[id] = 1/max(in, 1) + 1/max(float64(out[src]), 1)
			} else {
				w[id] = float64(g.InDegree(sh.internal(src))) + float64(out[dst]) + 1e-10
			}
		}
	}
	var err error
	sh.cdf, err = cumulative(w, "edges")
	return err
}

// reversedRuntime returns a sampling runtime over sh's graph reversed,
// by original ids, one patch, each node's neighbours in edge id order: its
// walks along in-edges are walks along the graph's out-edges, the same
// whatever the graph's patches.
func (sh *shared) reversedRuntime(threads int) (*sample.Runtime, error) {
	g := sh.p.Graph
	edges := make([]edge, 0, g.NumEdges())
	for v := range g.NumNodes {
		posLo, posHi := g.Span(v)
		for pos := posLo; pos < posHi; pos++ {
			edges = append(edges, edge{src: sh.orig(v), dst: sh.orig(g.Source(pos)), eid: g.EdgeID(pos)})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int { return cmp(a.eid, b.eid) })
	src := make([]int64, len(edges))
	dst := make([]int64, len(edges))
	for i, e := range edges {
		src[i], dst[i] = e.src, e.dst
	}
	rev, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: g.NumNodes, Threads: threads})
	if err != nil {
		return nil, fmt.Errorf("subload: reversing the graph: %w", err)
	}
	rp := &partition.Partitioned{Graph: rev, Offsets: []int64{0, g.NumNodes}}
	return sample.NewRuntime(rp, comm.NewLocal(1), sample.RuntimeOptions{Threads: threads})
}

func (sh *shared) checkParts(items []int64) error {
	off, nodes := sh.opt.PartOffsets, sh.opt.PartNodes
	n := sh.p.Graph.NumNodes
	if len(off) == 0 || off[0] != 0 {
		return errors.New("subload: the part offsets must start at 0 (k+1 entries for k parts)")
	}
	for j := 1; j < len(off); j++ {
		if off[j] < off[j-1] {
			return fmt.Errorf("subload: part offsets[%d] = %d is below offsets[%d] = %d (want non-decreasing)", j, off[j], j-1, off[j-1])
		}
	}
	last := off[len(off)-1]
	if nodes == nil && last > n {
		return fmt.Errorf("subload: the parts hold %d nodes, the graph %d", last, n)
	}
	if nodes != nil {
		if int64(len(nodes)) != last {
			return fmt.Errorf("subload: %d part nodes, the offsets end at %d", len(nodes), last)
		}
		seen := make([]bool, n)
		for i, v := range nodes {
			if v < 0 || v >= n {
				return fmt.Errorf("subload: part nodes[%d] = %d is out of range [0, %d)", i, v, n)
			}
			if seen[v] {
				return fmt.Errorf("subload: part nodes[%d] = %d is in two parts (want distinct nodes)", i, v)
			}
			seen[v] = true
		}
	}
	k := int64(len(off) - 1)
	for i, part := range items {
		if part < 0 || part >= k {
			return fmt.Errorf("subload: items[%d] = %d is not a part id in [0, %d)", i, part, k)
		}
	}
	return nil
}

// stream returns the generator of the batch with key key.
func (sh *shared) stream(key uint64) rng.SplitMix64 {
	return rng.SplitMix64{State: rng.Mix(sh.opt.Seed^0x5ab6a9f1c3d2e4b7) ^ rng.Mix(key+rng.Golden)}
}

// draw returns budget indices into sh.cdf drawn in proportion to their
// weights.
func (sh *shared) draw(r *rng.SplitMix64) []int64 {
	total := sh.cdf[len(sh.cdf)-1]
	out := make([]int64, sh.opt.Budget)
	for i := range out {
		u := r.Unit() * total
		j := sort.Search(len(sh.cdf), func(k int) bool { return sh.cdf[k] > u })
		out[i] = int64(min(j, len(sh.cdf)-1))
	}
	return out
}

// distinct returns ids sorted without repeats.
func distinct(ids []int64) []int64 {
	slices.Sort(ids)
	return slices.Compact(ids)
}

// nodeSet returns the original ids of the batch at positions pos with key.
func (s *Source) nodeSet(ctx context.Context, pos []int64, key uint64) ([]int64, error) {
	sh := s.sh
	r := sh.stream(key)
	switch sh.opt.Kind {
	case Nodes:
		return distinct(sh.draw(&r)), nil
	case Edges:
		g := sh.p.Graph
		ids := distinct(sh.draw(&r))
		ends := make([]int64, 0, 2*len(ids))
		for _, id := range ids {
			p := sh.pos[id]
			v := int64(sort.Search(int(g.NumNodes), func(k int) bool { return g.Indptr[k+1] > p }))
			ends = append(ends, sh.orig(g.Source(p)), sh.orig(v))
		}
		return distinct(ends), nil
	case Walks:
		n := sh.p.Graph.NumNodes
		if n == 0 || sh.opt.Budget == 0 {
			return []int64{}, nil
		}
		roots := make([]int64, sh.opt.Budget)
		for i := range roots {
			roots[i] = int64(r.Below(uint64(n)))
		}
		res, err := s.walk.RandomWalk(ctx, sample.WalkRequest{Length: sh.opt.WalkLength, Seed: sh.opt.Seed}, [][]int64{roots}, []uint64{key})
		if err != nil {
			return nil, err
		}
		visited := make([]int64, 0, len(res[0].Traces))
		for _, v := range res[0].Traces {
			if v >= 0 {
				visited = append(visited, v) // original ids: the reversed graph's
			}
		}
		return distinct(visited), nil
	case Drawn:
		return s.drawn(ctx, pos, key)
	default: // Parts
		off := sh.opt.PartOffsets
		var nodes []int64
		for _, at := range pos {
			part := s.items[at]
			lo, hi := off[part], off[part+1]
			if sh.opt.PartNodes != nil {
				nodes = append(nodes, sh.opt.PartNodes[lo:hi]...)
				continue
			}
			for v := lo; v < hi; v++ {
				nodes = append(nodes, v)
			}
		}
		return nodes, nil
	}
}

// drawn returns the distinct node ids the caller's Draw gives the batch at
// positions pos with key, each checked to be a node of the graph.
func (s *Source) drawn(ctx context.Context, pos []int64, key uint64) ([]int64, error) {
	items := make([]int64, len(pos))
	for i, at := range pos {
		items[i] = s.items[at]
	}
	n := s.sh.p.Graph.NumNodes
	ids, err := s.sh.opt.Draw(ctx, key, items, int(max(8*n, 1<<16))) // room for a draw with repeats
	if err != nil {
		return nil, err
	}
	for _, v := range ids {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("subload: the draw of batch %d gave node %d, outside [0, %d)", key, v, n)
		}
	}
	return distinct(slices.Clone(ids)), nil
}

// edge is one induced edge: positions of its ends and its id.
type edge struct{ src, dst, eid int64 }

// Make makes the batch of the items at positions pos with key key: its
// node set, the subgraph it induces (COO in the Order asked for) and the
// sample result (internal ids) the loader stage gathers node data over.
func (s *Source) Make(ctx context.Context, pos []int64, key uint64, alloc mem.Allocator) (*pipeline.Batch, *sample.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	switch s.sh.opt.Kind {
	case KHop:
		return s.makeKHop(ctx, pos, key, alloc)
	case HGT:
		return s.makeHGT(ctx, pos, key, alloc)
	}
	nodes, err := s.nodeSet(ctx, pos, key)
	if err != nil {
		return nil, nil, err
	}
	internal := make([]int64, len(nodes))
	for i, v := range nodes {
		internal[i] = s.sh.internal(v)
	}
	edges, err := s.induced(internal, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	sortEdges(edges, s.sh.opt.Order)
	b, err := batchOf(nodes, edges, nil, s.sh.opt.Block, alloc)
	if err != nil {
		return nil, nil, err
	}
	return b, &sample.Result{Nodes: internal, HopCounts: []int64{0, int64(len(nodes))}}, nil
}

// induced appends to edges the edges among internal (internal ids,
// distinct), positions offset by base.
func (s *Source) induced(internal []int64, base int64, edges []edge) ([]edge, error) {
	if err := s.mark(internal); err != nil {
		return nil, err
	}
	defer s.unmark(internal)
	return s.inducedMarked(internal, base, edges)
}

// mark records in s.local the position of every node of internal
// (distinct internal ids), or marks none and reports the first repeat.
func (s *Source) mark(internal []int64) error {
	if s.local == nil {
		s.local = make([]int32, s.sh.p.Graph.NumNodes)
		for i := range s.local {
			s.local[i] = -1
		}
	}
	if int64(len(internal)) > math.MaxInt32 {
		return fmt.Errorf("subload: %d nodes in one batch are too many", len(internal))
	}
	for i, u := range internal {
		if s.local[u] >= 0 {
			s.unmark(internal[:i])
			return fmt.Errorf("subload: node %d is in two parts of the batch (a part repeated in it?)", s.sh.orig(u))
		}
		s.local[u] = int32(i)
	}
	return nil
}

// unmark clears the marks of internal.
func (s *Source) unmark(internal []int64) {
	for _, v := range internal {
		s.local[v] = -1
	}
}

// inducedMarked appends to edges the edges among internal, marked in
// s.local, positions offset by base: grouped by destination in the order
// of internal, each destination's in its list order.
func (s *Source) inducedMarked(internal []int64, base int64, edges []edge) ([]edge, error) {
	g := s.sh.p.Graph
	for j, v := range internal {
		pLo, pHi := g.Span(v)
		for p := pLo; p < pHi; p++ {
			if i := s.local[g.Source(p)]; i >= 0 {
				edges = append(edges, edge{base + int64(i), base + int64(j), g.EdgeID(p)})
			}
		}
	}
	return edges, nil
}

// makeKHop makes the ShaDow batch of the seeds at pos: their k-hop sample
// (key key) made induced.
func (s *Source) makeKHop(ctx context.Context, pos []int64, key uint64, alloc mem.Allocator) (*pipeline.Batch, *sample.Result, error) {
	sh := s.sh
	seeds := make([]int64, len(pos))
	internalSeeds := make([]int64, len(pos))
	for i, at := range pos {
		seeds[i] = s.items[at]
		internalSeeds[i] = sh.internal(seeds[i])
	}
	results, err := s.rt.Sample(ctx, sh.req, [][]int64{internalSeeds}, []uint64{key})
	if err != nil {
		return nil, nil, err
	}
	r := results[0]
	defer s.rt.Recycle(r)
	var internal, owner []int64
	var hops []int64
	var edges []edge
	if !sh.req.Disjoint {
		internal = slices.Clone(r.Nodes)
		hops = slices.Clone(r.HopCounts)
		if edges, err = s.induced(internal, 0, nil); err != nil {
			return nil, nil, err
		}
		sortEdges(edges, sh.opt.Order)
	} else {
		// every seed's distinct nodes, by original id, subgraph after subgraph
		type entry struct{ sub, orig, internal int64 }
		entries := make([]entry, len(r.Nodes))
		for i, v := range r.Nodes {
			entries[i] = entry{r.Batch[i], sh.orig(v), v}
		}
		slices.SortFunc(entries, func(a, b entry) int {
			if a.sub != b.sub {
				return cmp(a.sub, b.sub)
			}
			return cmp(a.orig, b.orig)
		})
		entries = slices.CompactFunc(entries, func(a, b entry) bool { return a.sub == b.sub && a.orig == b.orig })
		internal = make([]int64, len(entries))
		owner = make([]int64, len(entries))
		for i, e := range entries {
			internal[i], owner[i] = e.internal, e.sub
		}
		for lo := 0; lo < len(entries); {
			hi := lo
			for hi < len(entries) && entries[hi].sub == entries[lo].sub {
				hi++
			}
			first := len(edges)
			if edges, err = s.induced(internal[lo:hi], int64(lo), edges); err != nil {
				return nil, nil, err
			}
			sortEdges(edges[first:], sh.opt.Order)
			lo = hi
		}
		hops = []int64{0, int64(len(internal))}
	}
	nodes := make([]int64, len(internal))
	for i, v := range internal {
		nodes[i] = sh.orig(v)
	}
	b, err := batchOf(nodes, edges, owner, sh.opt.Block, alloc)
	if err != nil {
		return nil, nil, err
	}
	if err := fillSeeds(b, seeds, nil, hops); err != nil {
		b.Release()
		return nil, nil, err
	}
	return b, &sample.Result{Nodes: internal, HopCounts: hops}, nil
}

// fillSeeds replaces b's empty seeds, its hop counts and, when pos is not
// nil, its empty input index (the seeds' positions) with a batch's of
// seeds (ShaDow's, HGT's).
func fillSeeds(b *pipeline.Batch, seeds, pos, hops []int64) error {
	a := b.Allocator()
	fields := []struct {
		t    *mem.Tensor
		data []int64
	}{{&b.Seeds, seeds}, {&b.HopCounts, hops}}
	if pos != nil {
		fields = append(fields, struct {
			t    *mem.Tensor
			data []int64
		}{&b.InputIndex, pos})
	}
	for _, f := range fields {
		buf, view, err := mem.AllocInt64(a, len(f.data))
		if err != nil {
			return err
		}
		a.Free(f.t.Data)
		copy(view, f.data)
		*f.t = mem.Tensor{DType: mem.Int64, Shape: []int64{int64(len(f.data))}, Data: buf}
	}
	return nil
}

func sortEdges(edges []edge, order Order) {
	slices.SortFunc(edges, func(a, b edge) int {
		switch order {
		case BySrcThenEID:
			if a.src != b.src {
				return cmp(a.src, b.src)
			}
		case BySrcThenDst:
			if a.src != b.src {
				return cmp(a.src, b.src)
			}
			if a.dst != b.dst {
				return cmp(a.dst, b.dst)
			}
		case ByEID:
		default:
			if a.dst != b.dst {
				return cmp(a.dst, b.dst)
			}
		}
		return cmp(a.eid, b.eid)
	})
}

func cmp(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// batchOf returns the batch of nodes and edges (and with owner, each
// node's subgraph: Batch.Batch; with block, the edges as one block too) in
// memory from alloc.
func batchOf(nodes []int64, edges []edge, owner []int64, block bool, alloc mem.Allocator) (*pipeline.Batch, error) {
	b := pipeline.NewBatch(alloc)
	a := b.Allocator()
	n, e := int64(len(nodes)), int64(len(edges))
	tensor := func(t *mem.Tensor, shape ...int64) ([]int64, error) {
		size := int64(1)
		for _, d := range shape {
			size *= d
		}
		buf, view, err := mem.AllocInt64(a, int(size))
		if err != nil {
			return nil, err
		}
		*t = mem.Tensor{DType: mem.Int64, Shape: shape, Data: buf}
		return view, nil
	}
	b.COO = &pipeline.COO{}
	fail := func(err error) (*pipeline.Batch, error) {
		b.Release()
		return nil, err
	}
	if _, err := tensor(&b.Seeds, 0); err != nil {
		return fail(err)
	}
	if _, err := tensor(&b.InputIndex, 0); err != nil {
		return fail(err)
	}
	ids, err := tensor(&b.Nodes, n)
	if err != nil {
		return fail(err)
	}
	copy(ids, nodes)
	hops, err := tensor(&b.HopCounts, 2)
	if err != nil {
		return fail(err)
	}
	hops[0], hops[1] = 0, n
	index, err := tensor(&b.COO.Index, 2, e)
	if err != nil {
		return fail(err)
	}
	eids, err := tensor(&b.COO.EdgeIDs, e)
	if err != nil {
		return fail(err)
	}
	for k, ed := range edges {
		index[k], index[e+int64(k)], eids[k] = ed.src, ed.dst, ed.eid
	}
	if owner != nil {
		subs, err := tensor(&b.Batch, n)
		if err != nil {
			return fail(err)
		}
		copy(subs, owner)
	}
	if block {
		// destination-major, each destination's edges in COO order
		blk := pipeline.Block{NumDst: n, NumSrc: n}
		indptr, err := tensor(&blk.Indptr, n+1)
		if err == nil {
			b.Blocks = []pipeline.Block{blk} // released with b from here on
		}
		var indices, bids []int64
		if err == nil {
			indices, err = tensor(&b.Blocks[0].Indices, e)
		}
		if err == nil {
			bids, err = tensor(&b.Blocks[0].EdgeIDs, e)
		}
		if err != nil {
			return fail(err)
		}
		clear(indptr)
		for _, ed := range edges {
			indptr[ed.dst+1]++
		}
		for j := int64(0); j < n; j++ {
			indptr[j+1] += indptr[j]
		}
		next := slices.Clone(indptr[:n])
		for _, ed := range edges {
			k := next[ed.dst]
			next[ed.dst]++
			indices[k], bids[k] = ed.src, ed.eid
		}
	}
	return b, nil
}

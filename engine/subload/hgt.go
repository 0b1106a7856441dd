package subload

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rng"
	"github.com/graphferry/graphferry/engine/sample"
)

// HGT's sampling (Hu et al., "Heterogeneous Graph Transformer", WWW 2020,
// Algorithm 1), the draw PyG's HGTLoader makes with torch_sparse's
// hgt_sample:
//
//   - every node of the sample adds to the budget of the not yet sampled
//     in-neighbours u of each relation into its type 1/d (d: its in-degree
//     in that relation) per edge; a node with more than hgtMaxNeighbors
//     in-edges in a relation adds 1/hgtMaxNeighbors through that many of
//     them, drawn without replacement (as torch_sparse does, so that a
//     hub does not spread its budget over many unlikely candidates);
//   - hop h draws, for every node type t in type order, NumSamples[h][t]
//     of its type's budgeted nodes without replacement, each with
//     probability in proportion to its squared budget (exponential keys:
//     the candidates in increasing E/b², E ~ Exp(1), so the order taken
//     is the draws' order); all of them when there are not more; a drawn
//     node leaves the budget and, unless the hop is the last, adds its own
//     in-neighbours' budget;
//   - the batch is the seeds, then each hop's draws type by type, and the
//     subgraph they induce (every edge among them, grouped by destination
//     in node order, each destination's in the graph's list order: PyG's
//     order, but torch_sparse keeps at most hgtMaxNeighbors in-edges of a
//     destination where this keeps them all).

// hgtMaxNeighbors bounds the in-edges through which a node adds budget.
const hgtMaxNeighbors = 50

// NewHGT returns the source of an HGT loader over seeds (original ids of
// a typed graph, distinct) on p, whose graph types describes: opt.Kind is
// HGT (set here), opt.NumSamples[h][t] the nodes of type t drawn in hop h
// (every hop one per node type, >= 0), opt.Threads the parallelism. Its
// batches carry their seeds (Batch.Seeds, InputIndex: the items' positions),
// HopCounts [seeds, drawn nodes] and their edges as COO and as one block
// over all their nodes (opt.Block is set), from which the pipeline makes
// the typed view.
func NewHGT(p *partition.Partitioned, types *graph.Types, seeds []int64, opt Options) (*Source, error) {
	if p == nil || p.Graph == nil {
		return nil, errors.New("subload: the partition (or its graph) is nil")
	}
	if types == nil {
		return nil, errors.New("subload: HGT samples a typed graph (node and edge types)")
	}
	nt := types.NumNodeTypes()
	for h, row := range opt.NumSamples {
		if len(row) != nt {
			return nil, fmt.Errorf("subload: num_samples hop %d has %d entries, the graph %d node types (want one per node type)", h, len(row), nt)
		}
		for t, k := range row {
			if k < 0 {
				return nil, fmt.Errorf("subload: num_samples[%d][%d] = %d (want >= 0)", h, t, k)
			}
		}
	}
	n := p.Graph.NumNodes
	seen := make(map[int64]int, len(seeds))
	for i, v := range seeds {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("subload: seeds[%d] = %d is out of range [0, %d)", i, v, n)
		}
		if j, dup := seen[v]; dup {
			return nil, fmt.Errorf("subload: seeds[%d] = %d repeats seeds[%d] (want distinct seeds)", i, v, j)
		}
		seen[v] = i
	}
	opt.Kind, opt.Block = HGT, true
	opt.NumSamples = cloneRows(opt.NumSamples)
	sh := &shared{p: p, opt: opt, types: types, relsByDst: types.RelationsByDst()}
	return &Source{sh: sh, items: slices.Clone(seeds)}, nil
}

func cloneRows(rows [][]int) [][]int {
	out := make([][]int, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
	}
	return out
}

// hgtState is one batch's draw: the sampled nodes' positions (s.local)
// and each type's budgeted candidates.
type hgtState struct {
	s      *Source
	r      rng.SplitMix64
	nodes  []int64     // internal ids, in the batch's order
	cand   [][]int64   // per node type: budgeted internal ids, in order of first budget
	budget [][]float64 // alongside cand; < 0 once drawn
	scrat  []int64
}

// keyed is a candidate's exponential key and its index among its type's.
type keyed struct {
	key float64
	i   int
}

// makeHGT makes the HGT batch of the seeds at pos with key key.
func (s *Source) makeHGT(ctx context.Context, pos []int64, key uint64, alloc mem.Allocator) (*pipeline.Batch, *sample.Result, error) {
	sh := s.sh
	seeds := make([]int64, len(pos))
	st := &hgtState{s: s, r: sh.stream(key)}
	if s.slot == nil { // 1 + a candidate's index among its type's, 0 elsewhere
		s.slot = make([]int32, sh.p.Graph.NumNodes)
	}
	st.cand = make([][]int64, sh.types.NumNodeTypes())
	st.budget = make([][]float64, len(st.cand))
	for i, at := range pos {
		seeds[i] = s.items[at]
		st.nodes = append(st.nodes, sh.internal(seeds[i]))
	}
	if err := s.mark(st.nodes); err != nil {
		return nil, nil, err
	}
	defer func() {
		s.unmark(st.nodes)
		for _, c := range st.cand {
			for _, u := range c {
				s.slot[u] = 0
			}
		}
	}()
	st.addBudget(st.nodes)
	hops := len(sh.opt.NumSamples)
	for h, row := range sh.opt.NumSamples {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		first := len(st.nodes)
		for t, k := range row {
			st.draw(t, k)
		}
		if h < hops-1 {
			st.addBudget(st.nodes[first:])
		}
	}
	internal := st.nodes
	edges, err := s.inducedMarked(internal, 0, nil)
	if err != nil {
		return nil, nil, err
	}
	nodes := make([]int64, len(internal))
	for i, v := range internal {
		nodes[i] = sh.orig(v)
	}
	b, err := batchOf(nodes, edges, nil, true, alloc)
	if err != nil {
		return nil, nil, err
	}
	counts := []int64{int64(len(seeds)), int64(len(nodes) - len(seeds))}
	if err := fillSeeds(b, seeds, pos, counts); err != nil {
		b.Release()
		return nil, nil, err
	}
	return b, &sample.Result{Nodes: slices.Clone(internal), HopCounts: counts}, nil
}

// addBudget adds the budget the nodes ws (internal ids, just sampled) give
// their not yet sampled in-neighbours.
func (st *hgtState) addBudget(ws []int64) {
	sh := st.s.sh
	g, t := sh.p.Graph, sh.types
	for _, w := range ws {
		a, b := g.Indptr[w], g.Indptr[w+1]
		for _, rel := range sh.relsByDst[t.NodeType(sh.orig(w))] {
			lo, hi := t.Segment(g, a, b, int(rel))
			d := hi - lo
			if d == 0 {
				continue
			}
			if d <= hgtMaxNeighbors {
				for p := lo; p < hi; p++ {
					st.add(int(t.RelSrc[rel]), g.Source(p), 1/float64(d))
				}
				continue
			}
			for _, p := range st.choose(d, hgtMaxNeighbors) {
				st.add(int(t.RelSrc[rel]), g.Source(lo+p), 1/float64(hgtMaxNeighbors))
			}
		}
	}
}

// add adds x to the budget of u (internal id, of node type ty) unless it
// is sampled.
func (st *hgtState) add(ty int, u int64, x float64) {
	if st.s.local[u] >= 0 {
		return
	}
	i := int(st.s.slot[u]) - 1
	if i < 0 {
		i = len(st.cand[ty])
		st.s.slot[u] = int32(i + 1)
		st.cand[ty] = append(st.cand[ty], u)
		st.budget[ty] = append(st.budget[ty], 0)
	}
	st.budget[ty][i] += x
}

// choose returns k distinct positions of [0, n) (k < n), uniformly (Floyd's
// algorithm), in increasing order.
func (st *hgtState) choose(n, k int64) []int64 {
	out := st.scrat[:0]
	for j := n - k; j < n; j++ {
		x := int64(st.r.Below(uint64(j + 1)))
		if slices.Contains(out, x) {
			x = j
		}
		out = append(out, x)
	}
	slices.Sort(out)
	st.scrat = out
	return out
}

// draw samples k of type ty's budgeted nodes (see the file's comment) and
// appends them to the batch.
func (st *hgtState) draw(ty, k int) {
	cand, budget := st.cand[ty], st.budget[ty]
	live := make([]int, 0, len(cand))
	for i, b := range budget {
		if b >= 0 {
			live = append(live, i)
		}
	}
	if k < len(live) {
		keys := make([]keyed, len(live))
		for j, i := range live {
			keys[j] = keyed{st.r.Exp1() / (budget[i] * budget[i]), i}
		}
		smallest(keys, k)
		for j := range k {
			live[j] = keys[j].i
		}
		live = live[:k]
	}
	for _, i := range live {
		u := cand[i]
		budget[i] = -1
		st.s.local[u] = int32(len(st.nodes))
		st.nodes = append(st.nodes, u)
	}
}

// smallest moves the k smallest of keys (by key, then index) to its front,
// in increasing order: a max-heap of k over the rest, then sorted.
func smallest(keys []keyed, k int) {
	less := func(a, b keyed) bool { return a.key < b.key || (a.key == b.key && a.i < b.i) }
	h := keys[:k]
	down := func(j int) {
		for {
			c := 2*j + 1
			if c >= k {
				return
			}
			if c+1 < k && less(h[c], h[c+1]) {
				c++
			}
			if !less(h[j], h[c]) {
				return
			}
			h[j], h[c] = h[c], h[j]
			j = c
		}
	}
	for j := k/2 - 1; j >= 0; j-- {
		down(j)
	}
	for _, x := range keys[k:] {
		if k > 0 && less(x, h[0]) {
			h[0] = x
			down(0)
		}
	}
	slices.SortFunc(h, func(a, b keyed) int {
		if less(a, b) {
			return -1
		}
		return 1
	})
}

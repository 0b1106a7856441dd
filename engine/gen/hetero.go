package gen

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/rng"
)

// Hetero describes a heterogeneous (typed) preset: node types, relations
// generated as rectangular R-MAT graphs, features per node type, labels,
// a split and timestamps on one node type.
//
// The preset's RMAT gives the quadrant probabilities, the seed, the thread
// count and Permute (a seeded permutation of every node type's local ids);
// its Features give the number of classes, the dtype and the seed of the
// features of every type (Dim is ignored: each type has its own).
type Hetero struct {
	// NodeTypes in global id order (node type t owns the ids after those
	// of the types before it).
	NodeTypes []HeteroNodeType
	// Relations generated; reverse relations come after all of these.
	Relations []HeteroRelation
	// LabelType is the node type with labels, the split and years.
	LabelType string
	// YearFrom and YearTo bound the years of LabelType nodes (uniform).
	YearFrom, YearTo int64
}

// HeteroNodeType is one node type of a Hetero preset.
type HeteroNodeType struct {
	Name     string
	NumNodes int64
	// FeatDim is the width of the type's features ("<type>/feat").
	FeatDim int
}

// HeteroRelation is one generated relation (Src, Rel, Dst).
type HeteroRelation struct {
	Src, Rel, Dst string
	// NumEdges is the number of generated edges (before Undirected doubles
	// them and duplicates and self-loops are removed).
	NumEdges int64
	// Undirected (Src == Dst only) stores every edge in both directions in
	// this relation, as PyG's ToUndirected does for such relations.
	Undirected bool
	// Reverse adds the relation (Dst, "rev_"+Rel, Src) with every edge
	// reversed, as DGL and PyG users add for message passing both ways.
	Reverse bool
}

// heteroRel is a relation ready to generate: type indices and edges.
type heteroRel struct {
	src, dst   int
	et         fileformat.EdgeType
	rs, rd     []int64 // type-local ids, sorted by (dst, src), unique
	generating *HeteroRelation
}

// tagRelation and tagYear extend the package's stream tags.
const (
	tagRelation uint64 = 100 + iota
	tagYear
	tagTypePermute
	tagTypeFeatures
)

// relations returns all relations (generated ones, then reverses) and the
// node type indices by name, after checking the description.
func (h *Hetero) relations() ([]heteroRel, map[string]int, error) {
	index := map[string]int{}
	for i, nt := range h.NodeTypes {
		if nt.NumNodes < 1 || nt.FeatDim < 1 {
			return nil, nil, fmt.Errorf("gen: node type %q: NumNodes=%d and FeatDim=%d must be >= 1", nt.Name, nt.NumNodes, nt.FeatDim)
		}
		index[nt.Name] = i
	}
	if _, ok := index[h.LabelType]; !ok {
		return nil, nil, fmt.Errorf("gen: LabelType %q is not a node type", h.LabelType)
	}
	if h.YearTo < h.YearFrom {
		return nil, nil, fmt.Errorf("gen: YearFrom=%d > YearTo=%d", h.YearFrom, h.YearTo)
	}
	var rels []heteroRel
	for i := range h.Relations {
		r := &h.Relations[i]
		s, ok1 := index[r.Src]
		d, ok2 := index[r.Dst]
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("gen: relation (%q, %q, %q) names an unknown node type", r.Src, r.Rel, r.Dst)
		}
		if r.Undirected && s != d {
			return nil, nil, fmt.Errorf("gen: relation (%q, %q, %q): Undirected needs Src == Dst", r.Src, r.Rel, r.Dst)
		}
		if r.NumEdges < 1 {
			return nil, nil, fmt.Errorf("gen: relation (%q, %q, %q): NumEdges=%d must be >= 1", r.Src, r.Rel, r.Dst, r.NumEdges)
		}
		rels = append(rels, heteroRel{src: s, dst: d, et: fileformat.EdgeType{Src: r.Src, Rel: r.Rel, Dst: r.Dst}, generating: r})
	}
	for _, r := range rels[:len(h.Relations)] {
		if r.generating.Reverse {
			rels = append(rels, heteroRel{src: r.dst, dst: r.src, et: fileformat.EdgeType{Src: r.et.Dst, Rel: "rev_" + r.et.Rel, Dst: r.et.Src}})
		}
	}
	return rels, index, nil
}

// rectSample draws one edge of a rectangular R-MAT on 2^s1 x 2^s2 nodes:
// the levels both ends have pick a quadrant (thresholds ta, tab, tabc);
// the extra levels of the longer side pick a bit from its marginal (0 with
// probability A+B for the source, A+C for the destination).
func rectSample(r *rng.SplitMix64, s1, s2 int, ta, tab, tabc, tsrc, tdst uint64) (u, v uint64) {
	common := min(s1, s2)
	for lvl := 0; lvl < max(s1, s2); lvl++ {
		x := r.Next() & 0xffffffff
		switch {
		case lvl < common:
			u, v = level(u, v, x, ta, tab, tabc)
		case s1 > s2:
			u = u<<1 | b2u(x >= tsrc)
		default:
			v = v<<1 | b2u(x >= tdst)
		}
	}
	return u, v
}

// genRelation generates relation r's edges as type-local ids, sorted by
// (dst, src) with duplicates (and, for Undirected, self-loops) removed.
func genRelation(p *Preset, rel *heteroRel, ri int, ns, nd int64, perms [][]int64) error {
	g := rel.generating
	s1, s2 := lenBits(ns), lenBits(nd)
	ta, tab, tabc := thresholds(p.RMAT.A, p.RMAT.B, p.RMAT.C)
	tsrc, _, _ := thresholds(p.RMAT.A+p.RMAT.B, 0, 0)
	tdst, _, _ := thresholds(p.RMAT.A+p.RMAT.C, 0, 0)
	seed := key(p.RMAT.Seed, tagRelation, uint64(ri))
	e := g.NumEdges
	src, dst := make([]int64, e), make([]int64, e)
	err := parallelFor(e, p.RMAT.Threads, func(lo, hi int64) error {
		for k := lo; k < hi; k++ {
			sm := stream(seed, tagEdge, uint64(k))
			var u, v uint64
			for attempt := 0; ; attempt++ {
				if attempt == maxAttempts {
					return fmt.Errorf("gen: relation %q edge %d: no sample in range in %d attempts", g.Rel, k, maxAttempts)
				}
				u, v = rectSample(&sm, s1, s2, ta, tab, tabc, tsrc, tdst)
				if u < uint64(ns) && v < uint64(nd) {
					break
				}
			}
			su, sv := int64(u), int64(v)
			if perms != nil {
				su, sv = perms[rel.src][su], perms[rel.dst][sv]
			}
			src[k], dst[k] = su, sv
		}
		return nil
	})
	if err != nil {
		return err
	}
	if g.Undirected {
		src, dst = append(src, dst...), append(dst, src...)
	}
	rel.rs, rel.rd = sortedUnique(src, dst, ns, g.Undirected)
	return nil
}

// lenBits returns the number of bits of the ids [0, n): ceil(log2(n)).
func lenBits(n int64) int {
	s := 0
	for int64(1)<<s < n {
		s++
	}
	return s
}

// sortedUnique sorts the edges by (dst, src) and removes duplicates (and
// self-loops when dropSelf). ns bounds the sources.
func sortedUnique(src, dst []int64, ns int64, dropSelf bool) (rs, rd []int64) {
	keys := make([]uint64, 0, len(src))
	for i := range src {
		if dropSelf && src[i] == dst[i] {
			continue
		}
		keys = append(keys, uint64(dst[i])*uint64(ns)+uint64(src[i]))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	rs, rd = make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		rs[i], rd[i] = int64(k%uint64(ns)), int64(k/uint64(ns))
	}
	return rs, rd
}

// buildHetero generates a Hetero preset. Node data: "<type>/feat" for every
// type; "<label type>/label" and "<label type>/{train,val,test}_mask"; the
// global "label" (-1 outside the label type) and masks; "time" (int64
// years: label-type nodes uniform in [YearFrom, YearTo], other nodes the
// earliest year of their label-type neighbours, 0 without any). EdgeData
// "time": the later of the two ends' times (an edge exists once both of its
// nodes do). Relations are in (src, rel, dst) order, as DGL sorts them.
func buildHetero(p Preset) (*dataset.Dataset, error) {
	h := p.Hetero
	if !(p.TrainFraction >= 0 && p.ValFraction >= 0 && p.TrainFraction+p.ValFraction <= 1+1e-9) {
		return nil, fmt.Errorf("gen: preset %q: TrainFraction=%v and ValFraction=%v must be >= 0 with a sum <= 1", p.Name, p.TrainFraction, p.ValFraction)
	}
	if _, _, err := (RMAT{Scale: 1, EdgeFactor: 1, A: p.RMAT.A, B: p.RMAT.B, C: p.RMAT.C}).check(); err != nil {
		return nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}
	rels, index, err := h.relations()
	if err != nil {
		return nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}
	nts := make([]fileformat.NodeType, len(h.NodeTypes))
	offs := make([]int64, len(h.NodeTypes)+1)
	for i, nt := range h.NodeTypes {
		nts[i] = fileformat.NodeType{Name: nt.Name, NumNodes: nt.NumNodes}
		offs[i+1] = offs[i] + nt.NumNodes
	}
	n := offs[len(h.NodeTypes)]
	if n > graph.MaxCompactNodes {
		return nil, fmt.Errorf("gen: preset %q: %d nodes is more than the generator's %d", p.Name, n, int64(graph.MaxCompactNodes))
	}
	var perms [][]int64
	if p.RMAT.Permute {
		perms = make([][]int64, len(h.NodeTypes))
		for i, nt := range h.NodeTypes {
			perms[i] = permutation(nt.NumNodes, key(p.RMAT.Seed, tagTypePermute, uint64(i)), tagPermute)
		}
	}
	for ri := range rels[:len(h.Relations)] {
		r := &rels[ri]
		if err := genRelation(&p, r, ri, h.NodeTypes[r.src].NumNodes, h.NodeTypes[r.dst].NumNodes, perms); err != nil {
			return nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
		}
	}
	for ri := len(h.Relations); ri < len(rels); ri++ {
		r := &rels[ri]
		fwd := &rels[slices.IndexFunc(rels, func(x heteroRel) bool {
			return x.generating != nil && x.et.Src == r.et.Dst && x.et.Dst == r.et.Src && "rev_"+x.et.Rel == r.et.Rel
		})]
		r.rs, r.rd = sortedUnique(fwd.rd, fwd.rs, h.NodeTypes[r.src].NumNodes, false)
	}

	// Relations in canonical (src, rel, dst) order, as DGL lists them.
	slices.SortFunc(rels, func(a, b heteroRel) int {
		return cmp.Or(cmp.Compare(a.et.Src, b.et.Src), cmp.Compare(a.et.Rel, b.et.Rel), cmp.Compare(a.et.Dst, b.et.Dst))
	})
	// The global COO, relation by relation: edge id = position.
	var e int64
	ets := make([]fileformat.EdgeType, len(rels))
	for i, r := range rels {
		e += int64(len(r.rs))
		ets[i] = r.et
		ets[i].NumEdges = int64(len(r.rs))
	}
	src, dst := make([]int64, 0, e), make([]int64, 0, e)
	for _, r := range rels {
		for i := range r.rs {
			src = append(src, offs[r.src]+r.rs[i])
			dst = append(dst, offs[r.dst]+r.rd[i])
		}
	}
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: n, Threads: p.RMAT.Threads})
	if err != nil {
		return nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}

	// Years and timestamps.
	lt := index[h.LabelType]
	nodeTime := make([]int64, n)
	for i := range nodeTime {
		nodeTime[i] = -1
	}
	span := uint64(h.YearTo - h.YearFrom + 1)
	for v := offs[lt]; v < offs[lt+1]; v++ {
		r := stream(p.Features.Seed, tagYear, uint64(v-offs[lt]))
		nodeTime[v] = h.YearFrom + int64(r.BelowFast(span))
	}
	for i := range src { // earliest label-type neighbour, either direction
		for _, pair := range [2][2]int64{{src[i], dst[i]}, {dst[i], src[i]}} {
			a, b := pair[0], pair[1]
			if b >= offs[lt] && b < offs[lt+1] && !(a >= offs[lt] && a < offs[lt+1]) {
				if nodeTime[a] < 0 || nodeTime[b] < nodeTime[a] {
					nodeTime[a] = nodeTime[b]
				}
			}
		}
	}
	for i, t := range nodeTime {
		if t < 0 {
			nodeTime[i] = 0
		}
	}
	edgeTime := make([]int64, e)
	for i := range edgeTime {
		edgeTime[i] = max(nodeTime[src[i]], nodeTime[dst[i]])
	}

	// Features, labels and the split.
	nodeData := map[string]mem.Tensor{}
	label := make([]int64, n)
	for i := range label {
		label[i] = -1
	}
	masks := [3][]byte{make([]byte, n), make([]byte, n), make([]byte, n)}
	for i, nt := range h.NodeTypes {
		f := p.Features
		f.Dim = nt.FeatDim
		if i != lt {
			f.Seed = key(p.Features.Seed, tagTypeFeatures, uint64(i))
		}
		feat, labels, err := f.Generate(nt.NumNodes)
		if err != nil {
			return nil, fmt.Errorf("gen: preset %q: node type %q: %w", p.Name, nt.Name, err)
		}
		nodeData[nt.Name+fileformat.TypeSep+dataset.FeatKey] = feat
		if i != lt {
			continue
		}
		m := nt.NumNodes
		nTrain := min(m, int64(p.TrainFraction*float64(m)+0.5))
		nVal := min(m-nTrain, int64(p.ValFraction*float64(m)+0.5))
		tm := [3][]byte{make([]byte, m), make([]byte, m), make([]byte, m)}
		for j, v := range permutation(m, p.Features.Seed, tagSplit) {
			k := 2
			if int64(j) < nTrain {
				k = 0
			} else if int64(j) < nTrain+nVal {
				k = 1
			}
			tm[k][v] = 1
			masks[k][offs[i]+v] = 1
		}
		copy(label[offs[i]:], labels)
		nodeData[nt.Name+fileformat.TypeSep+dataset.LabelKey] = mem.Tensor{DType: mem.Int64, Shape: []int64{m}, Data: labelBytes(labels)}
		for k, name := range []string{dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
			nodeData[nt.Name+fileformat.TypeSep+name] = mem.Tensor{DType: mem.Uint8, Shape: []int64{m}, Data: tm[k]}
		}
	}
	nodeData[dataset.LabelKey] = mem.Tensor{DType: mem.Int64, Shape: []int64{n}, Data: labelBytes(label)}
	for k, name := range []string{dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
		nodeData[name] = mem.Tensor{DType: mem.Uint8, Shape: []int64{n}, Data: masks[k]}
	}
	nodeData[dataset.TimeKey] = mem.Tensor{DType: mem.Int64, Shape: []int64{n}, Data: labelBytes(nodeTime)}
	src0, err := provenance(p)
	if err != nil {
		return nil, err
	}
	return &dataset.Dataset{
		Meta: dataset.Meta{Name: p.Name, NumClasses: int64(p.Features.NumClasses), Source: src0,
			NodeTypes: nts, EdgeTypes: ets},
		Graph:    g,
		NodeData: nodeData,
		EdgeData: map[string]mem.Tensor{dataset.TimeKey: {DType: mem.Int64, Shape: []int64{e}, Data: labelBytes(edgeTime)}},
	}, nil
}

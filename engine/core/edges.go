package core

import (
	"cmp"
	"slices"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// Edge data: named arrays with one row per edge id (DGL's g.edata, PyG's
// edge_attr), which loaders gather over the edges of each batch
// (pipeline.Options.EdgeFeatureNames). Edge ids are never renumbered, so
// rows stay in the caller's order and the caller's memory is kept.

// numEdgeIDs returns the number of rows edge data has: the largest edge id
// plus one (the edge count when ids are 0..E-1). Callers hold mu.
func (g *Graph) numEdgeIDs() int64 {
	if g.edgeIDs == 0 {
		csc := g.part.Graph
		n := csc.NumEdges()
		if csc.EdgeIDs != nil {
			for _, id := range csc.EdgeIDs {
				n = max(n, id+1)
			}
		}
		g.edgeIDs = max(n, 1) // 1 on an edgeless graph: computed
	}
	return g.edgeIDs
}

// SetEdgeData stores t under name: one row per edge id, by original edge
// id (t.Shape[0] = the largest edge id + 1). The Graph keeps t.Data and
// calls release (may be nil) when the entry is replaced or the Graph's
// memory is released; on error release is not called. Replacing an entry
// while loaders are open fails (errs.ErrState).
func (g *Graph) SetEdgeData(name string, t mem.Tensor, release func()) error {
	if err := g.acquire(); err != nil {
		return err
	}
	defer g.release()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(t.Shape) == 0 {
		return errorf(nil, "edge data must have at least 1 dimension (one row per edge id)")
	}
	rows := g.numEdgeIDs()
	if g.part.Graph.NumEdges() == 0 {
		rows = 0
	}
	if t.Shape[0] != rows {
		return errorf(nil, "edge data %q has shape[0] = %d rows, want one row per edge id (%d)", name, t.Shape[0], rows)
	}
	if g.edges == nil {
		g.edges = feature.NewStore(rows)
	} else if _, exists := g.edges.Get(name); exists {
		if n := g.loaders.Load(); n > 0 {
			return errorf(errs.ErrState, "edge data %q is in use by %d open loader(s); close them before replacing it", name, n)
		}
	}
	if err := g.edges.Set(name, t, release); err != nil {
		return errorf(nil, "%v", err)
	}
	return nil
}

// EdgeDataNames returns the names of the edge data, sorted.
func (g *Graph) EdgeDataNames() ([]string, error) {
	if err := g.acquire(); err != nil {
		return nil, err
	}
	defer g.release()
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.edges == nil {
		return nil, nil
	}
	return g.edges.Names(), nil
}

// edgeOptions sets in lopt what a loader of g reads of it besides the node
// data: the types (fixed while loaders are open: SetTypes refuses), the
// per-type node data's types and,
// when it gathers edge data, the edge store. With the features on the disk
// tier, the loader also gathers one batch ahead (pipeline.Options'
// GatherAhead), so that the disk does not idle between batches. Callers
// hold mu.
func (g *Graph) edgeOptions(lopt *pipeline.Options) error {
	lopt.Types = g.typed.types
	lopt.NodeDataTypes = g.nodeDataTypes()
	if g.plan.FeatureTier == TierDisk && lopt.GatherAhead == 0 {
		lopt.GatherAhead = 1
	}
	if len(lopt.EdgeFeatureNames) == 0 {
		return nil
	}
	if g.edges == nil {
		return errorf(nil, "edge feature names %v are requested but the graph has no edge data", lopt.EdgeFeatureNames)
	}
	lopt.EdgeStore = g.edges
	return nil
}

// EdgeFormat is the layout in which Edges exports a graph's edges.
type EdgeFormat int

const (
	// EdgesCOO: sources, destinations and edge ids, one entry per edge, in
	// increasing edge id order.
	EdgesCOO EdgeFormat = iota
	// EdgesCSC: indptr over the destinations in increasing (original) id
	// order, the sources of each destination's in-edges in the graph's
	// stored order, and their edge ids.
	EdgesCSC
)

// EdgeList is what Edges returns, every tensor int64 from the allocator
// given to it (the caller owns them). COO: First = sources, Second =
// destinations. CSC: First = indptr [N+1], Second = sources.
type EdgeList struct {
	First, Second, EdgeIDs mem.Tensor
}

// Edges exports every edge of g in original ids (rel < 0), or the edges of
// relation rel of a typed graph in type-local node ids and relation-local
// edge ids (its CSC over the nodes of its destination type), in format.
// Memory comes from alloc (nil: the Go heap).
func (g *Graph) Edges(format EdgeFormat, rel int, alloc mem.Allocator) (EdgeList, error) {
	if err := g.acquire(); err != nil {
		return EdgeList{}, err
	}
	defer g.release()
	if format != EdgesCOO && format != EdgesCSC {
		return EdgeList{}, errorf(nil, "edge format = %d, must be COO (%d) or CSC (%d)", format, EdgesCOO, EdgesCSC)
	}
	if alloc == nil {
		alloc = mem.Heap{}
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	csc, p := g.part.Graph, g.part
	// The destinations, sources and edge ids to export, and the offsets
	// subtracted from each.
	dstLo, dstHi := int64(0), csc.NumNodes
	var srcOff, eidOff int64
	t := g.typed.types
	if rel >= 0 {
		if t == nil {
			return EdgeList{}, errorf(nil, "relation %d: the graph is not typed", rel)
		}
		if rel >= t.NumRelations() {
			return EdgeList{}, errorf(nil, "relation = %d is out of range [0, %d)", rel, t.NumRelations())
		}
		d := t.RelDst[rel]
		dstLo, dstHi = t.NodeOffsets[d], t.NodeOffsets[d+1]
		srcOff, eidOff = t.NodeOffsets[t.RelSrc[rel]], t.EdgeOffsets[rel]
	}
	indptr := make([]int64, dstHi-dstLo+1)
	var src, eid []int64
	for u := dstLo; u < dstHi; u++ {
		v := u
		if p.OldToNew != nil {
			v = p.OldToNew[u]
		}
		a, b := csc.Span(v)
		if rel >= 0 {
			a, b = t.Segment(csc, a, b, rel)
		}
		for pos := a; pos < b; pos++ {
			s := csc.Source(pos)
			if p.NewToOld != nil {
				s = p.NewToOld[s]
			}
			src = append(src, s-srcOff)
			eid = append(eid, csc.EdgeID(pos)-eidOff)
		}
		indptr[u-dstLo+1] = int64(len(src))
	}
	var first, second []int64
	if format == EdgesCSC {
		first, second = indptr, src
	} else {
		dst := make([]int64, len(src))
		for i := range dstHi - dstLo {
			for k := indptr[i]; k < indptr[i+1]; k++ {
				dst[k] = i
			}
		}
		order := make([]int, len(eid))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(eid[a], eid[b]) })
		first, second = make([]int64, len(src)), make([]int64, len(src))
		sorted := make([]int64, len(src))
		for k, i := range order {
			first[k], second[k], sorted[k] = src[i], dst[i], eid[i]
		}
		eid = sorted
	}
	var out EdgeList
	var err error
	free := func() {
		for _, x := range []mem.Tensor{out.First, out.Second, out.EdgeIDs} {
			if x.Data != nil {
				alloc.Free(x.Data)
			}
		}
	}
	for _, f := range []struct {
		dst  *mem.Tensor
		vals []int64
	}{{&out.First, first}, {&out.Second, second}, {&out.EdgeIDs, eid}} {
		if *f.dst, err = int64Tensor(alloc, f.vals, []int64{int64(len(f.vals))}); err != nil {
			free()
			return EdgeList{}, err
		}
	}
	return out, nil
}

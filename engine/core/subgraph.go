package core

import (
	"io"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/graphferry/graphferry/engine/subload"
)

// Subgraph is the result of InducedSubgraph, in memory from the allocator
// given to it; the caller owns the three int64 [E] tensors.
type Subgraph struct {
	// Src and Dst are the edges' endpoints as positions in the node list
	// given to InducedSubgraph (local ids).
	Src, Dst mem.Tensor
	// EdgeIDs are the edges' original ids.
	EdgeIDs mem.Tensor
}

// InducedSubgraph returns every edge u->v of the graph whose endpoints are
// both in nodes (original ids, distinct): the subgraph that nodes induce.
// Edges are grouped by target in the order of nodes; a target's edges keep
// the order of its neighbour list, so the result does not depend on the
// partitioning. Buffers come from alloc (nil: the Go heap).
//
// PyG's subgraph_type="induced" and torch_geometric.utils.subgraph give the
// same edge set.
func (g *Graph) InducedSubgraph(nodes []int64, alloc mem.Allocator) (*Subgraph, error) {
	if alloc == nil {
		alloc = mem.Heap{}
	}
	if err := g.acquire(); err != nil {
		return nil, err
	}
	defer g.release()
	internal := make([]int64, len(nodes))
	if err := g.part.ToNew(nodes, internal); err != nil {
		return nil, errorf(nil, "nodes: %v", err)
	}
	// Local position of each internal id. A map rather than a dense array:
	// the node set is usually tiny beside the graph.
	local := make(map[int64]int64, len(internal))
	for i, v := range internal {
		if j, dup := local[v]; dup {
			return nil, errorf(nil, "nodes[%d] = %d repeats nodes[%d] (want distinct ids)", i, nodes[i], j)
		}
		local[v] = int64(i)
	}
	csc := g.part.Graph
	// Two passes: count, then fill buffers of the exact size.
	var n int64
	for _, v := range internal {
		for pos := csc.Indptr[v]; pos < csc.Indptr[v+1]; pos++ {
			if _, ok := local[csc.Source(pos)]; ok {
				n++
			}
		}
	}
	out := &Subgraph{}
	shape := []int64{n}
	bufs := make([][]byte, 0, 3)
	free := func() {
		for _, b := range bufs {
			alloc.Free(b)
		}
	}
	views := make([][]int64, 3)
	for k := range views {
		buf, view, err := mem.AllocInt64(alloc, int(n))
		if err != nil {
			free()
			return nil, err
		}
		bufs = append(bufs, buf)
		views[k] = view
	}
	src, dst, eid := views[0], views[1], views[2]
	var e int
	for j, v := range internal {
		for pos := csc.Indptr[v]; pos < csc.Indptr[v+1]; pos++ {
			i, ok := local[csc.Source(pos)]
			if !ok {
				continue
			}
			src[e], dst[e], eid[e] = i, int64(j), csc.EdgeID(pos)
			e++
		}
	}
	out.Src = mem.Tensor{DType: mem.Int64, Shape: shape, Data: bufs[0]}
	out.Dst = mem.Tensor{DType: mem.Int64, Shape: append([]int64(nil), shape...), Data: bufs[1]}
	out.EdgeIDs = mem.Tensor{DType: mem.Int64, Shape: append([]int64(nil), shape...), Data: bufs[2]}
	return out, nil
}

// SubgraphLoaderOptions configures a subgraph loader (subload.Options).
type SubgraphLoaderOptions = subload.Options

// OpenSubgraphLoader opens a subgraph loader (GraphSAINT's draws,
// Cluster-GCN's parts; see engine/subload): a Loader over items (part ids
// for subload.Parts, else placeholders whose number alone counts) whose
// epochs batch the items with lopt (BatchSize items a batch, Shuffle,
// Seed, DropLast, QueueCapacity, Workers, node and edge data names) and
// whose batch i of epoch e is the subgraph of the node set drawn with key
// pipeline.BatchKey(e, i), made ahead of the consumer by the pipeline's
// workers. A batch has no blocks: its edges are Batch.COO; its node data
// is gathered over every node (it has no seeds: no label names).
// opt.Seed roots the draws; opt.Threads the parallelism. Untyped graphs
// only.
func (g *Graph) OpenSubgraphLoader(items []int64, opt SubgraphLoaderOptions, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	if len(lopt.LabelNames) > 0 {
		return nil, errorf(nil, "a subgraph batch has no seeds: gather %v as feature names (one row per node)", lopt.LabelNames)
	}
	lopt.Threads = opt.Threads
	return g.openSubgraph(lopt, alloc, func() (*subload.Source, error) { return subload.New(g.part, items, opt) })
}

// OpenShadowLoader opens a ShaDow loader: a subgraph loader (see
// OpenSubgraphLoader) over seeds (original ids; distinct unless
// req.Disjoint) whose batch is the k-hop sample of its seeds with req
// (key pipeline.BatchKey(e, i)) made induced (subload.NewKHop): label
// names are gathered over a batch's seeds (not with req.Disjoint, whose
// subgraphs hold their seeds among their sorted nodes). lopt.Threads is
// the parallelism.
func (g *Graph) OpenShadowLoader(seeds []int64, req sample.Request, opt SubgraphLoaderOptions, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	if req.Disjoint && len(lopt.LabelNames) > 0 {
		return nil, errorf(nil, "a disjoint ShaDow batch has its seeds among its subgraphs' nodes: gather %v as feature names", lopt.LabelNames)
	}
	return g.openSubgraph(lopt, alloc, func() (*subload.Source, error) {
		base, _, err := g.runtimes.get(g)
		if err != nil {
			return nil, err
		}
		rt, err := base.Fork(lopt.Threads)
		if err != nil {
			return nil, err
		}
		return subload.NewKHop(g.part, rt, req, seeds, opt)
	})
}

// openSubgraph opens the loader over the source newSource makes.
func (g *Graph) openSubgraph(lopt pipeline.Options, alloc mem.Allocator, newSource func() (*subload.Source, error)) (*Loader, error) {
	return g.OpenLoaderWith(func(Internals) (*pipeline.Pipeline, io.Closer, error) {
		if g.typed.types != nil {
			return nil, nil, errorf(nil, "subgraph loaders serve untyped graphs (this one has node and edge types)")
		}
		src, err := newSource()
		if err != nil {
			return nil, nil, err
		}
		if err := g.edgeOptions(&lopt); err != nil {
			return nil, nil, err
		}
		lopt.COO = false // the batches are their COO
		pl, err := pipeline.NewMaker(src, g.part, g.store, src.NumItems(), lopt, alloc)
		return pl, nil, err
	})
}

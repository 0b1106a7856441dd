package core

import (
	"errors"
	"io"
	"slices"

	"github.com/graphferry/graphferry/engine/graph"
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
	src, dst, ids, err := pipeline.InducedEdgeList(g.part.Graph, internal)
	var rep *pipeline.RepeatError
	if errors.As(err, &rep) {
		return nil, errorf(nil, "nodes[%d] = %d repeats nodes[%d] (want distinct ids)", rep.At, nodes[rep.At], rep.First)
	}
	out := &Subgraph{}
	shape := []int64{int64(len(ids))}
	for _, f := range []struct {
		t    *mem.Tensor
		list []int64
	}{{&out.Src, src}, {&out.Dst, dst}, {&out.EdgeIDs, ids}} {
		buf, view, err := mem.AllocInt64(alloc, len(f.list))
		if err != nil {
			for _, t := range []*mem.Tensor{&out.Src, &out.Dst} {
				if t.Data != nil {
					alloc.Free(t.Data)
				}
			}
			return nil, err
		}
		copy(view, f.list)
		*f.t = mem.Tensor{DType: mem.Int64, Shape: slices.Clone(shape), Data: buf}
	}
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
// opt.Seed roots the draws; opt.Threads the parallelism. A typed graph's
// batches also carry their edges as one block, split by type in the
// typed view (subload.Options.Block).
func (g *Graph) OpenSubgraphLoader(items []int64, opt SubgraphLoaderOptions, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	if len(lopt.LabelNames) > 0 {
		return nil, errorf(nil, "a subgraph batch has no seeds: gather %v as feature names (one row per node)", lopt.LabelNames)
	}
	lopt.Threads = opt.Threads
	return g.openSubgraph(lopt, alloc, true, func(types *graph.Types) (*subload.Source, error) {
		opt.Block = types != nil
		return subload.New(g.part, items, opt)
	})
}

// OpenHGTLoader opens an HGT loader: a subgraph loader (see
// OpenSubgraphLoader) over seeds (original ids of a typed graph, distinct)
// whose batch is HGT's draw around its seeds (opt.NumSamples per hop and
// node type, key pipeline.BatchKey(e, i)) and the subgraph it induces
// (subload.NewHGT), split by type in its typed view; label names are
// gathered over a batch's seeds.
func (g *Graph) OpenHGTLoader(seeds []int64, opt SubgraphLoaderOptions, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	lopt.Threads = opt.Threads
	return g.openSubgraph(lopt, alloc, true, func(types *graph.Types) (*subload.Source, error) {
		return subload.NewHGT(g.part, types, seeds, opt)
	})
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
	return g.openSubgraph(lopt, alloc, false, func(*graph.Types) (*subload.Source, error) {
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

// openSubgraph opens the loader over the source newSource makes (given
// the graph's types, nil for an untyped graph; typed: whether it serves
// typed graphs).
func (g *Graph) openSubgraph(lopt pipeline.Options, alloc mem.Allocator, typed bool, newSource func(*graph.Types) (*subload.Source, error)) (*Loader, error) {
	return g.OpenLoaderWith(func(Internals) (*pipeline.Pipeline, io.Closer, error) {
		if g.typed.types != nil && !typed {
			return nil, nil, errorf(nil, "ShaDow loaders serve untyped graphs (this one has node and edge types)")
		}
		src, err := newSource(g.typed.types)
		if err != nil {
			return nil, nil, err
		}
		if err := g.edgeOptions(&lopt); err != nil {
			return nil, nil, err
		}
		lopt.COO, lopt.COOEdges = false, pipeline.SampledEdges // the batches are their COO
		pl, err := pipeline.NewMaker(src, g.part, g.store, src.NumItems(), lopt, alloc)
		return pl, nil, err
	})
}

package core

import (
	"io"
	"strings"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Internals is what a package that builds on a Graph (engine/distributed's
// loaders and rank parts) reads of it, during a call of Use or
// OpenLoaderWith only: the partition, the node data store in internal row
// order, the sample.RuntimeOptions of the graph's types and times, and the
// types themselves.
type Internals struct {
	Part    *partition.Partitioned
	Store   *feature.Store
	Runtime func(threads int) sample.RuntimeOptions
	// Types are the graph's types (nil: untyped), for the batches' typed
	// view (pipeline.Options.Types).
	Types *graph.Types
	// NodeDataTypes are the per-type node data and their node types (nil:
	// untyped), which a replicated graph's loader gathers for the batch's
	// nodes of the type (pipeline.Options.NodeDataTypes).
	NodeDataTypes map[string]int
	// Edges is the graph's edge data (nil: none), for an edge loader's
	// edge feature names (pipeline.Options.EdgeStore).
	Edges *feature.Store
}

// Use calls f with g's internals, holding a reference to g and its read
// lock (node data, weights, types and times cannot change meanwhile).
func (g *Graph) Use(f func(Internals) error) error {
	if err := g.acquire(); err != nil {
		return err
	}
	defer g.release()
	g.mu.RLock()
	defer g.mu.RUnlock()
	return f(g.internals())
}

func (g *Graph) internals() Internals {
	return Internals{Part: g.part, Store: g.store, Runtime: g.runtimeOptions, Types: g.typed.types, NodeDataTypes: g.nodeDataTypes(), Edges: g.edges}
}

// OpenLoaderWith opens a loader over the pipeline that open builds from
// g's internals (called as Use calls f). The loader holds a reference to g
// as OpenLoader's do, and keeps node data and weights from changing while
// it is open; closer, when open returns one, is closed after the pipeline
// when the loader is (a coordinated communicator's coordinator).
func (g *Graph) OpenLoaderWith(open func(Internals) (*pipeline.Pipeline, io.Closer, error)) (*Loader, error) {
	if err := g.acquire(); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	pl, closer, err := open(g.internals())
	if err != nil {
		g.release()
		return nil, err
	}
	g.loaders.Add(1) // the loader keeps the reference
	return newLoader(g, pl, closer), nil
}

// FromPartition returns a Graph over a partition built elsewhere (a rank's
// part, engine/distributed) with store as its node data, in p's internal
// row order. The Graph owns store and ds (may be nil) from now on: they are
// closed with its memory.
func FromPartition(p *partition.Partitioned, store *feature.Store, ds *dataset.Dataset) *Graph {
	return &Graph{part: p, store: store, ds: ds, refs: 1}
}

// FromTypedPartition is FromPartition for a rank's part of a typed graph
// of numEdges edges whose rows hold some of them: ty, by original node and
// edge ids as the whole graph's types (with their names), is checked
// against p's rows (graph.Types.ValidateSpan) and copied. On error nothing
// is owned: the caller closes store and ds.
func FromTypedPartition(p *partition.Partitioned, store *feature.Store, ds *dataset.Dataset, ty *fileformat.Types, numEdges int64) (*Graph, error) {
	t := offsetsOf(ty)
	tc := t.Clone()
	if err := tc.ValidateSpan(p.Graph, p.OrigID, numEdges); err != nil {
		return nil, errorf(nil, "%s", strings.TrimPrefix(err.Error(), "graph: "))
	}
	g := FromPartition(p, store, ds)
	g.typed.types, g.typed.names, g.typed.edgeSpan = tc, ty, numEdges
	return g, nil
}

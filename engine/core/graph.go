package core

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// Graph is a partitioned graph with its node data and edge weights. See the
// package documentation for its numbering and lifetime rules.
type Graph struct {
	part  *partition.Partitioned
	store *feature.Store
	ds    *dataset.Dataset // non-nil when opened from a dataset directory

	// mu orders changes of node data and weights (write lock) against the
	// calls that read them in the caller's thread (read lock).
	mu sync.RWMutex
	// loaders counts open loaders: they read node data and weights on their
	// own threads, outside mu.
	loaders atomic.Int64

	// life guards refs and closed. refs counts the creator's reference
	// (until Close), open loaders and calls in progress.
	life   sync.Mutex
	refs   int64
	closed bool

	// runtimes is the sample runtime, built on first use, and its forks.
	runtimes runtimes

	// typed holds the types and times, under mu.
	typed typedState

	// edges holds the edge data (nil until the first SetEdgeData) and
	// edgeIDs the number of its rows (0 until computed), under mu.
	edges   *feature.Store
	edgeIDs int64

	// plan is what OpenWith decided about memory (the zero Plan for a
	// Graph not opened from a dataset directory).
	plan Plan
	// fileOrder names the node data kept in the file's (original) order
	// on a renumbered Graph: arrays on the disk tier, whose rows the tier
	// maps (NodeData copies them as they are).
	fileOrder map[string]bool
}

// New partitions g with opt and returns a Graph over it with no node data.
// g must not be changed afterwards (the Graph may share its arrays).
func New(g *graph.CSC, opt partition.Options) (*Graph, error) {
	part, err := partition.Build(g, opt)
	if err != nil {
		return nil, err
	}
	return &Graph{part: part, store: feature.NewStore(g.NumNodes), refs: 1}, nil
}

// Open opens path: a dataset directory (its graph, and its node columns and
// features as node data), or an Arrow IPC file holding an edge table read
// with coopt. coopt must be zero for a directory: a dataset's edges are
// taken as they are.
//
// dopt applies to a dataset directory (checksum verification); asking it of
// an edge-table file is an error.
func Open(path string, popt partition.Options, coopt graph.COOOptions, dopt dataset.OpenOptions) (*Graph, error) {
	return OpenWith(path, popt, coopt, OpenOptions{Dataset: dopt})
}

// OpenWith is Open with a memory budget and the disk tier's options (see
// OpenOptions), which apply to dataset directories only: it decides what is
// resident and where features are read from (Plan), and puts features on
// the disk tier when they do not fit.
func OpenWith(path string, popt partition.Options, coopt graph.COOOptions, opt OpenOptions) (*Graph, error) {
	dopt := opt.Dataset
	st, err := os.Stat(path)
	if err != nil {
		return nil, &errs.Error{Msg: fmt.Sprintf("path %q: %v", path, err), Class: errs.ErrIO, Cause: err}
	}
	if !st.IsDir() {
		if dopt.VerifyChecksums {
			return nil, errorf(nil, "checksum verification applies to dataset directories only (%q is a file)", path)
		}
		if opt.MemoryBudget != 0 || opt.FeatureTier != TierAuto || opt.CacheBytes != 0 {
			return nil, errorf(nil, "a memory budget and feature tiers apply to dataset directories only (%q is a file)", path)
		}
		g, err := fileformat.ReadEdgeTable(path, coopt)
		if err != nil {
			return nil, err
		}
		return New(g, popt)
	}
	if coopt.RemoveDuplicates || coopt.RemoveSelfLoops || coopt.NumNodes > 0 {
		return nil, errorf(nil, "edge-list options (removing duplicates or self-loops, a node count) do not apply to a dataset directory (%q)", path)
	}
	if dopt.MemoryLimit == 0 {
		dopt.MemoryLimit = opt.MemoryBudget // the open stays within the budget
	}
	ds, err := dataset.OpenWith(path, dopt)
	if err != nil {
		return nil, err
	}
	g, err := New(ds.Graph, popt)
	if err != nil {
		ds.Close()
		return nil, err
	}
	g.ds = ds
	if dopt.Context != nil && dopt.Context.Err() != nil {
		g.Close()
		return nil, dopt.Context.Err()
	}
	if g.plan, err = planMemory(g, ds, path, opt); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.openDataset(ds); err != nil {
		g.Close()
		return nil, err
	}
	names := make([]string, 0, len(ds.NodeData))
	for name := range ds.NodeData {
		names = append(names, name)
	}
	// Sorted, so that an error names the same column every time.
	slices.Sort(names)
	for _, name := range names {
		// The dataset's arrays live until the dataset is closed with the
		// graph: nothing to release per array.
		var err error
		if name == dataset.FeatKey && g.plan.FeatureTier == TierDisk && g.part.NewToOld != nil {
			// On the disk tier the rows stay in the file's order, which
			// the tier maps, instead of a permuted copy in memory.
			err = g.store.Set(name, ds.NodeData[name], nil)
			g.fileOrder = map[string]bool{name: true}
		} else {
			err = g.setNodeData(name, ds.NodeData[name], nil)
		}
		if err != nil {
			g.Close()
			return nil, err
		}
	}
	if err := g.openTiers(ds, opt); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// acquire takes a reference for a call, failing once the Graph is closed.
func (g *Graph) acquire() error {
	g.life.Lock()
	defer g.life.Unlock()
	if g.closed {
		return ErrGraphClosed
	}
	g.refs++
	return nil
}

// release drops a reference; the last one frees the Graph's memory.
func (g *Graph) release() {
	g.life.Lock()
	g.refs--
	last := g.refs == 0
	g.life.Unlock()
	if last {
		g.runtimes.reset()
		g.store.Close()
		if g.edges != nil {
			g.edges.Close()
		}
		if g.ds != nil {
			g.ds.Close()
		}
	}
}

// Close marks the Graph closed: every later call fails with ErrGraphClosed.
// Calls in progress finish, and loaders keep working until they are closed;
// the memory is released with the last of them. Idempotent.
func (g *Graph) Close() error {
	g.life.Lock()
	if g.closed {
		g.life.Unlock()
		return nil
	}
	g.closed = true
	g.life.Unlock()
	g.release()
	return nil
}

// Closed reports whether Close was called.
func (g *Graph) Closed() bool {
	g.life.Lock()
	defer g.life.Unlock()
	return g.closed
}

// NumNodes returns the number of nodes.
func (g *Graph) NumNodes() int64 { return g.part.Graph.NumNodes }

// NumEdges returns the number of edges.
func (g *Graph) NumEdges() int64 { return g.part.Graph.NumEdges() }

// NumPatches returns the number of patches.
func (g *Graph) NumPatches() int { return g.part.NumPatches() }

// SetNodeData stores t under name, replacing an earlier entry. t holds one
// row per node in original order. When the Graph is renumbered, t is copied
// in internal order and release (may be nil) is called before SetNodeData
// returns; otherwise the Graph keeps t.Data and calls release when the entry
// is replaced or the Graph's memory is released. On error release is not
// called: t stays the caller's. Replacing an entry while loaders are open
// fails (errs.ErrState): they read it on their own threads.
func (g *Graph) SetNodeData(name string, t mem.Tensor, release func()) error {
	if err := g.acquire(); err != nil {
		return err
	}
	defer g.release()
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, exists := g.store.Get(name); exists {
		if n := g.loaders.Load(); n > 0 {
			return errorf(errs.ErrState, "node data %q is in use by %d open loader(s); close them before replacing it", name, n)
		}
	}
	if err := g.setNodeData(name, t, release); err != nil {
		return err
	}
	delete(g.fileOrder, name) // the new array is in internal order
	return nil
}

// setNodeData is SetNodeData under mu (or before the Graph is shared).
func (g *Graph) setNodeData(name string, t mem.Tensor, release func()) error {
	if name == "" {
		return errorf(nil, "node data name is empty")
	}
	if len(t.Shape) == 0 {
		return errorf(nil, "tensor must have at least 1 dimension (one row per node)")
	}
	if t.Shape[0] != g.NumNodes() {
		local, hint := g.localNodeData(name, t)
		if local { // "<type>/<name>": kept in type order
			return g.store.SetLocal(name, t, release)
		}
		return errorf(nil, "tensor has shape[0] = %d rows, want one row per node (%d)%s", t.Shape[0], g.NumNodes(), hint)
	}
	if g.part.NewToOld == nil {
		return g.store.Set(name, t, release)
	}
	// The padding lets a gather read the last row with 8-byte loads.
	permuted := make([]byte, len(t.Data)+7)[:len(t.Data)]
	// Row i of patch order is row NewToOld[i] of t: a gather, which also
	// turns a fault on a mapped file into an error.
	if err := feature.Gather(permuted, t, g.part.NewToOld, 0); err != nil {
		return err
	}
	t.Data = permuted
	if err := g.store.Set(name, t, nil); err != nil {
		return err
	}
	if release != nil {
		release() // the caller's memory is no longer needed
	}
	return nil
}

// NodeData returns a copy of the node data stored under name, rows in
// original node order, in memory from alloc (nil: the Go heap). The caller
// owns it (free it with alloc.Free).
func (g *Graph) NodeData(name string, alloc mem.Allocator) (mem.Tensor, error) {
	if err := g.acquire(); err != nil {
		return mem.Tensor{}, err
	}
	defer g.release()
	if alloc == nil {
		alloc = mem.Heap{}
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	src, ok := g.store.Get(name)
	if !ok {
		return mem.Tensor{}, errorf(nil, "no node data named %q (have: %s)", name, strings.Join(g.store.Names(), ", "))
	}
	buf, err := alloc.Alloc(len(src.Data))
	if err != nil {
		return mem.Tensor{}, err
	}
	if g.part.OldToNew == nil || g.store.IsLocal(name) || g.fileOrder[name] {
		err = feature.Copy(buf, src.Data) // src may map a file: a fault is an error
	} else {
		err = feature.Gather(buf, src, g.part.OldToNew, 0)
	}
	if err != nil {
		alloc.Free(buf)
		return mem.Tensor{}, err
	}
	return mem.Tensor{DType: src.DType, Shape: append([]int64(nil), src.Shape...), Data: buf}, nil
}

// NodeDataNames returns the names of the node data, sorted.
func (g *Graph) NodeDataNames() ([]string, error) {
	if err := g.acquire(); err != nil {
		return nil, err
	}
	defer g.release()
	return g.store.Names(), nil
}

// SetEdgeWeights sets the weight of every edge for biased sampling: w is a
// 1-D float32 or float64 tensor indexed by original edge id, so it needs
// more entries than the largest edge id. Weights must be finite and >= 0.
// w is read during the call only. Fails (errs.ErrState) while loaders are
// open.
func (g *Graph) SetEdgeWeights(w mem.Tensor) error {
	return g.setWeights(w, "edge id", func(csc *graph.CSC, pos int64) int64 { return csc.EdgeID(pos) })
}

// SetSourceWeights gives every edge u->v the weight w[u] of its source: w is
// a 1-D float32 or float64 tensor indexed by original node id. Same rules as
// SetEdgeWeights, which it replaces (and is replaced by).
func (g *Graph) SetSourceWeights(w mem.Tensor) error {
	p := g.part
	return g.setWeights(w, "node id", func(csc *graph.CSC, pos int64) int64 {
		u := csc.Source(pos)
		if p.NewToOld != nil {
			u = p.NewToOld[u]
		}
		return u
	})
}

// setWeights stores beside every edge the weight that w holds at key(pos)
// (an original edge id or source node id, named by what).
func (g *Graph) setWeights(w mem.Tensor, what string, key func(*graph.CSC, int64) int64) error {
	if err := g.acquire(); err != nil {
		return err
	}
	defer g.release()
	if len(w.Shape) != 1 {
		return errorf(nil, "weights must be 1-D (got shape %v)", w.Shape)
	}
	var at func(i int64) float64
	switch w.DType {
	case mem.Float32:
		f := mem.Float32s(w.Data)
		at = func(i int64) float64 { return float64(f[i]) }
	case mem.Float64:
		var f []float64
		if w.Shape[0] > 0 {
			f = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(w.Data))), w.Shape[0])
		}
		at = func(i int64) float64 { return f[i] }
	default:
		return errorf(errs.ErrType, "weights must be float32 or float64 (got %s)", w.DType)
	}
	if int64(len(w.Data)) != w.Shape[0]*int64(w.DType.Size()) {
		return errorf(nil, "weights has %d bytes for shape %v", len(w.Data), w.Shape)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.loaders.Load(); n > 0 {
		return errorf(errs.ErrState, "%d loader(s) are open on this graph; close them before changing edge weights", n)
	}
	csc := g.part.Graph
	out := make([]float32, csc.NumEdges())
	for pos := range out {
		k := key(csc, int64(pos))
		if k >= w.Shape[0] {
			return errorf(nil, "weights has %d entries but the graph has %s %d (want one weight per %s)", w.Shape[0], what, k, what)
		}
		x := at(k)
		if !(x >= 0) || math.IsInf(x, 1) || x > math.MaxFloat32 {
			return errorf(nil, "weights[%d] = %g (want finite and >= 0)", k, x)
		}
		out[pos] = float32(x)
	}
	csc.Weights = out
	// The runtime derived layer-wise totals and bitmaps from the old
	// weights: the next call builds a new one.
	g.runtimes.reset()
	return nil
}

// typedState is what a Graph knows of its types and times (see SetTypes,
// SetNodeTime, SetEdgeTime), read under mu.
type typedState struct {
	types *graph.Types
	// names names types (set with them; see SetDatasetTypes).
	names *fileformat.Types
	// edgeSpan is the edge count types span when the graph holds some of
	// a larger graph's edges (FromTypedPartition); 0: its own.
	edgeSpan int64
	nodeTime []int64 // by time slot (partition.Partitioned.TimeSlot)
	edgeTime []int64 // by original edge id
}

// runtimeOptions returns the sample.RuntimeOptions of g's types and times
// with threads threads. Callers hold mu (read or write).
func (g *Graph) runtimeOptions(threads int) sample.RuntimeOptions {
	return sample.RuntimeOptions{Threads: threads, Types: g.typed.types, TypedEdges: g.typed.edgeSpan, NodeTime: g.typed.nodeTime, EdgeTime: g.typed.edgeTime}
}

// SetTypes makes g typed (heterogeneous) with t, by original ids (see
// graph.Types), after checking it against the graph: offsets from 0 to the
// node (edge) count, relation types in range, every edge id below the edge
// count, every edge of a relation between nodes of its types, every
// in-neighbour list grouped by relation in increasing order. It replaces
// earlier types, named by their indices ("0", "1", ...; SetDatasetTypes
// sets named types); t is copied. Fails (errs.ErrState) while loaders are open or
// per-type node data is held (its rows are its type's).
func (g *Graph) SetTypes(t graph.Types) error {
	return g.setTypes(t, nil)
}

// setTypes is SetTypes with the types' names (nil: their indices).
func (g *Graph) setTypes(t graph.Types, named *fileformat.Types) error {
	if err := g.acquire(); err != nil {
		return err
	}
	defer g.release()
	tc := t.Clone()
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.loaders.Load(); n > 0 {
		return errorf(errs.ErrState, "%d loader(s) are open on this graph; close them before setting its types", n)
	}
	if name, ok := g.perTypeData(); ok {
		return errorf(errs.ErrState, "per-type node data %q is held: the types of a graph are set before its per-type data", name)
	}
	if err := tc.Validate(g.part.Graph, g.part.NewToOld); err != nil {
		return errorf(nil, "%s", strings.TrimPrefix(err.Error(), "graph: "))
	}
	if named == nil {
		var err error
		if named, err = indexNamed(tc); err != nil {
			return errorf(nil, "%v", err)
		}
	}
	g.typed.types, g.typed.names, g.typed.edgeSpan = tc, named, 0
	g.runtimes.reset()
	return nil
}

// NumTypes returns the numbers of node types and relations (0, 0 when g is
// untyped).
func (g *Graph) NumTypes() (nodeTypes, relations int) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if t := g.typed.types; t != nil {
		return t.NumNodeTypes(), t.NumRelations()
	}
	return 0, 0
}

// Types returns a copy of g's types (nil when untyped).
func (g *Graph) Types() *graph.Types {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.typed.types.Clone()
}

// SetNodeTime sets the time of every node for temporal sampling: t holds
// one int64 per node, by original id (copied); on a rank's part whose
// partition is Ranked, one per node it holds, by time slot (its owned then
// held nodes: partition.Partitioned.TimeSlot). Fails (errs.ErrState) while
// loaders are open.
func (g *Graph) SetNodeTime(t []int64) error {
	if n := g.part.NumTimeSlots(); int64(len(t)) != n {
		return errorf(nil, "node times have %d entries, want one per node (%d)", len(t), n)
	}
	return g.setTime(slices.Clone(t), func(ts *typedState, c []int64) { ts.nodeTime = c }, "node")
}

// SetEdgeTime sets the time of every edge for temporal sampling: t is
// indexed by original edge id (copied), so it needs more entries than the
// largest edge id. Fails (errs.ErrState) while loaders are open.
func (g *Graph) SetEdgeTime(t []int64) error {
	csc := g.part.Graph
	e := int64(len(t))
	for p := int64(0); p < csc.NumEdges(); p++ {
		if id := csc.EdgeID(p); id >= e {
			return errorf(nil, "edge times have %d entries, but the graph has edge id %d (want one time per edge id)", e, id)
		}
	}
	return g.setTime(slices.Clone(t), func(ts *typedState, c []int64) { ts.edgeTime = c }, "edge")
}

func (g *Graph) setTime(t []int64, set func(*typedState, []int64), what string) error {
	if err := g.acquire(); err != nil {
		return err
	}
	defer g.release()
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.loaders.Load(); n > 0 {
		return errorf(errs.ErrState, "%d loader(s) are open on this graph; close them before setting %s times", n, what)
	}
	set(&g.typed, t)
	g.runtimes.reset()
	return nil
}

// recheck looks again at the files of the dataset g was opened from
// (dataset.Dataset.Recheck): an error when one changed under it.
func (g *Graph) recheck() error {
	if g.ds == nil {
		return nil
	}
	return g.ds.Recheck()
}

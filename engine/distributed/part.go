package distributed

import (
	"fmt"
	"slices"
	"sync"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// Part is one rank's share of a partitioned dataset (DST/part-<rank>,
// written by rankpart.Partitioner), opened by OpenPart: the process of rank
// r reads partition.json, its own folder and, for the dsp and hybrid
// layouts, DST/assignment.npy, and nothing of the other ranks' folders.
// Its loaders (Part.OpenLoader) sample and gather with the other ranks
// over a communicator.
//
// Inside, a Part is a core.Graph over the ORIGINAL id space of the whole graph
// (N nodes), never exposed as such: its rows are those the rank holds and
// its node data the rows it holds.
//
//   - dsp: N nodes in P patches numbered by the partition's relabelling
//     (rankpart.Relabel: the numbering a single-process Graph partitioned
//     with the same assignment, partition.Given, has), so rank r's patch
//     is its owned nodes, the new ids [offsets[r], offsets[r+1]), and the
//     owner of a node is a lookup in P+1 offsets. The rank's CSC is
//     windowed (graph.CSC.Windowed): it holds the row offsets and in-edges
//     of its own range only. Sampling is CSP over the communicator; node
//     data holds the owned rows and the loader fetches the others from
//     their owners, one exchange round per batch.
//   - hybrid: the same, with every row (the topology is replicated).
//   - self-reliant: one patch, identity numbering; the rows of the nodes
//     its folder expands (those closer than Hops to one of its seeds), node
//     data of every node it holds. Nothing is exchanged while sampling.
//
// A typed partition's part is typed by the whole graph's types: node types
// and relations are offset lookups on original ids, which its rows keep,
// and its edges' ids are the whole graph's (the types span all of them,
// core.FromTypedPartition), so its batches and their typed views are the
// replicated typed graph's. Its per-type node data holds, per type, the
// rows of the owned nodes (dsp, hybrid) or of every node it holds
// (self-reliant), in local order (stored as per-type data, see
// feature.Store.SetLocal).
//
// What a dsp rank holds is O(N/P + halo + P): the owned rows' offsets and
// in-edges, the owned nodes' data, the original ids of its owned and halo
// nodes by new id (partition.RankIDs), the P+1 range offsets, and its
// slice of the directory of new ids by original id (N/P entries of
// DST/old_to_new.npy). No map of the whole graph is read: the original
// ids of a batch's nodes come from their owners with their rows
// (rowExchange), a loader's seeds are resolved at open and an edge batch's
// negatives per batch through the directory (resolve.go). The sampler's
// append-unique table is the hash table, not the dense node table. Node
// times, when set, are those of its owned and halo nodes (part_time.go). hybrid holds the whole
// topology (O(N + E)) and both maps in memory (O(N)); self-reliant holds
// an N-entry row map.
type Part struct {
	g      *core.Graph
	meta   rankpart.PartMeta
	info   rankpart.PartRank
	layout rankpart.Layout
	// owned are the original ids of the rank's owned nodes, increasing.
	owned []int64
	// directory and dirOffsets (dsp, hybrid) are the rank's slice of the
	// new ids by original id and every rank's range of it
	// (rankpart.Relabel.Directory).
	directory, dirOffsets []int64
	// localRow maps an original id to its row in the node data
	// (self-reliant only: -1 for a node the rank does not hold); seed
	// marks the rows of the rank's seeds (owned train, val or test nodes).
	localRow []int64
	seed     []bool
	// types are a typed partition's (nil: untyped); typeOwned[t] counts
	// the owned nodes of type t, which are local ids [ownedStart[t],
	// ownedStart[t]+typeOwned[t]) (owned nodes increase in global id, and
	// the types own consecutive global ids).
	types      *fileformat.Types
	typeOwned  []int64
	ownedStart []int64
	// typeStart (dsp, hybrid) and typedRow (self-reliant) find per-type
	// rows (typed parts only; see typedTables).
	typeStart [][]int64
	typedRow  []int64
	// earliest are the node types' earliest nodes (by the node times;
	// timeRanges order), for PyG's negatives under node times on a dsp
	// part (part_time.go); under timeMu.
	timeMu   sync.Mutex
	earliest []int64
}

// OpenPart opens rank's part of the partitioned dataset in dst (see Part).
// dopt applies to the rank's folder and to the id maps (checksums).
func OpenPart(dst string, rank int, dopt dataset.OpenOptions) (*Part, error) {
	d, err := rankpart.OpenPart(dst, rank, dopt)
	if err != nil {
		return nil, err
	}
	p, err := newPart(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	return p, nil
}

// newPart builds the Part of an opened folder; on success the Part's Graph
// owns d (closing it releases d's mappings).
func newPart(d *rankpart.Part) (*Part, error) {
	p := &Part{meta: d.Meta, info: d.Info, layout: d.Layout, owned: slices.Clone(d.GlobalIDs[:d.Info.NumOwned]),
		types: d.Types, typeOwned: slices.Clone(d.TypeOwned)}
	if r := d.Relabel; r != nil {
		p.directory, p.dirOffsets = r.Directory, r.DirectoryOffsets
	}
	if d.Types != nil {
		p.ownedStart = make([]int64, len(p.typeOwned))
		for t := 1; t < len(p.typeOwned); t++ {
			p.ownedStart[t] = p.ownedStart[t-1] + p.typeOwned[t-1]
		}
	}
	var pt *partition.Partitioned
	var err error
	var rows int64 // rows of node data
	switch d.Layout {
	case rankpart.LayoutDSP, rankpart.LayoutHybrid:
		pt, err = patchTopology(d, p.owned)
		rows = d.Info.NumOwned
	case rankpart.LayoutSelfReliant:
		pt, err = localTopology(d)
		rows = d.Info.NumNodes
	default:
		err = fmt.Errorf("layout %v is unknown", d.Layout)
	}
	if err != nil {
		return nil, errs.Errorf(errs.ErrIO, "part %d of %s: %v", d.Info.Rank, d.Meta.Layout, err)
	}
	pt.Graph.AdviseRandomAccess()
	// The folder's own CSC (local ids) is not read again: pt.Graph holds
	// the rank's rows; dropping it here leaves one copy, not two.
	d.Data.Graph = nil
	store := feature.NewStore(rows)
	names := make([]string, 0, len(d.Data.NodeData))
	for name := range d.Data.NodeData {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := d.Data.NodeData[name]
		if rows < t.Shape[0] { // owned rows come first
			t.Data = t.Data[:rows*int64(t.RowBytes())]
			t.Shape = slices.Clone(t.Shape)
			t.Shape[0] = rows
		}
		if err := store.Set(name, t, nil); err != nil {
			store.Close()
			return nil, err
		}
	}
	if d.OwnedFeat != nil {
		// Unmapped with the store (the Graph's last reference).
		// The closure holds the mapping only, not d (its id maps are
		// garbage once the topology is built).
		feat := d.OwnedFeat
		if err := store.Set(dataset.FeatKey, feat.Tensor(), func() { feat.Close() }); err != nil {
			store.Close()
			return nil, err
		}
	}
	p.typedTables(d)
	if err := setTypedArrays(store, d); err != nil {
		store.Close()
		return nil, err
	}
	if d.Layout == rankpart.LayoutSelfReliant {
		p.localRow = make([]int64, d.Meta.NumNodes)
		for i := range p.localRow {
			p.localRow[i] = -1
		}
		for l, v := range d.GlobalIDs {
			p.localRow[v] = int64(l)
		}
		p.seed = make([]bool, d.Info.NumOwned)
		for _, name := range []string{dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
			if t, ok := d.Data.NodeData[name]; ok {
				for i := range p.seed {
					p.seed[i] = p.seed[i] || t.Data[i] != 0
				}
			}
		}
		p.typedSeeds(d)
	}
	data := d.Data
	if d.Types == nil {
		d.Data = nil // the Graph closes it
		p.g = core.FromPartition(pt, store, data)
		return p, nil
	}
	ty := d.Types
	g, err := core.FromTypedPartition(pt, store, data, ty, d.Meta.NumEdges)
	if err != nil {
		store.Close()
		return nil, &errs.Error{Msg: fmt.Sprintf("part %d of %s: %v (%v)", d.Info.Rank, d.Meta.Layout, err, rankpart.ErrTypes),
			Class: errs.ErrIO, Cause: rankpart.ErrTypes}
	}
	d.Data = nil // the Graph closes it
	p.g = g
	return p, nil
}

// setTypedArrays puts a typed part's per-type node data into store (as
// per-type data, which loaders do not gather by node id), each unmapped
// with the store.
func setTypedArrays(store *feature.Store, d *rankpart.Part) error {
	names := make([]string, 0, len(d.NodeArrays))
	for name := range d.NodeArrays {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		a := d.NodeArrays[name]
		if err := store.SetLocal(name, a.Tensor(), func() { a.Close() }); err != nil {
			return err
		}
	}
	return nil
}

// typedSeeds adds a typed self-reliant part's per-type masks to p.seed:
// mask "<type>/..." holds the rows of the rank's nodes of that type, the
// owned ones first.
func (p *Part) typedSeeds(d *rankpart.Part) {
	if d.Types == nil {
		return
	}
	for _, a := range d.Info.NodeArrays {
		if a.Name != dataset.TrainMaskKey && a.Name != dataset.ValMaskKey && a.Name != dataset.TestMaskKey {
			continue
		}
		nt := d.Types.NodeTypeIndex(a.NodeType)
		data := d.NodeArrays[a.NodeType+fileformat.TypeSep+a.Name].Data
		for j := range p.typeOwned[nt] {
			if data[j] != 0 {
				p.seed[p.ownedStart[nt]+j] = true
			}
		}
	}
}

// patchTopology builds the dsp and hybrid topology over the partition's
// relabelling (rankpart.Relabel): N nodes in the ranks' consecutive ranges
// of new ids (patch-major, increasing original id within a patch, as
// partition.Build numbers a Given assignment). dsp: a windowed CSC of the
// rank's own range only (graph.CSC.Windowed: row offsets of its owned
// nodes, their in-edges with sources in new ids), so that nothing of it
// grows with N, and the ids of the nodes it holds (partition.RankIDs:
// owned, the original ids of its owned nodes, and its halo's); hybrid:
// every row (the topology is replicated) and both maps, from the folder's
// lists of every node.
func patchTopology(d *rankpart.Part, owned []int64) (*partition.Partitioned, error) {
	r := d.Relabel
	n, rank := d.Meta.NumNodes, d.Info.Rank
	pt := &partition.Partitioned{Offsets: slices.Clone(r.Offsets)}
	toNew := func(l int64) int64 { return r.NewIDs[l] }
	if d.Layout == rankpart.LayoutDSP {
		own := d.Info.NumOwned
		var err error
		if pt.Ranked, err = partition.NewRankIDs(r.Offsets[rank], owned, r.NewIDs[own:], d.GlobalIDs[own:]); err != nil {
			return nil, err
		}
		lo := r.Offsets[rank]
		return buildRows(n, lo, lo+own, true, d.Data.Graph, d, func(u int64) int64 { return u - lo }, toNew, pt)
	}
	if int64(len(r.NewIDs)) != n {
		return nil, fmt.Errorf("a hybrid folder holds %d of the %d nodes", len(r.NewIDs), n)
	}
	byNew := make([]int64, n)
	for i := range byNew {
		byNew[i] = -1
	}
	for l, v := range r.NewIDs {
		byNew[v] = int64(l)
	}
	if slices.Contains(byNew, -1) {
		return nil, fmt.Errorf("a hybrid folder does not hold every node")
	}
	pt.NewToOld, pt.OldToNew = make([]int64, n), make([]int64, n)
	for l, v := range r.NewIDs {
		pt.NewToOld[v], pt.OldToNew[d.GlobalIDs[l]] = d.GlobalIDs[l], v
	}
	return buildRows(n, 0, n, false, d.Data.Graph, d, func(u int64) int64 { return byNew[u] }, toNew, pt)
}

// localTopology builds the self-reliant topology: one patch of N nodes in
// original ids, with the rows of the nodes the folder expands.
func localTopology(d *rankpart.Part) (*partition.Partitioned, error) {
	n := d.Meta.NumNodes
	byOrig := make(map[int64]int64, len(d.GlobalIDs))
	for l, v := range d.GlobalIDs {
		byOrig[v] = int64(l)
	}
	local := func(u int64) int64 {
		if l, ok := byOrig[u]; ok {
			return l
		}
		return -1
	}
	return buildRows(n, 0, n, false, d.Data.Graph, d, local, func(l int64) int64 { return d.GlobalIDs[l] },
		&partition.Partitioned{Offsets: []int64{0, n}})
}

// buildRows fills pt.Graph: n nodes, the rows [lo, hi) held (windowed
// when asked: only those rows stored), row u holding the in-edges of local
// node local(u) (none for -1), sources mapped local -> toNew, edge ids
// local -> original, weights kept.
func buildRows(n, lo, hi int64, windowed bool, lg *graph.CSC, d *rankpart.Part, local func(int64) int64, toNew func(int64) int64, pt *partition.Partitioned) (*partition.Partitioned, error) {
	g := &graph.CSC{NumNodes: n, Indptr: make([]int64, hi-lo+1), Windowed: windowed, RowBase: lo}
	for u := lo; u < hi; u++ {
		deg := int64(0)
		if l := local(u); l >= 0 {
			deg = lg.InDegree(l)
		}
		g.Indptr[u-lo+1] = g.Indptr[u-lo] + deg
	}
	e := g.Indptr[hi-lo]
	compact := n <= graph.MaxCompactNodes
	if compact {
		g.Indices32 = make([]int32, e)
	} else {
		g.Indices = make([]int64, e)
	}
	g.EdgeIDs = make([]int64, e)
	if lg.Weights != nil {
		g.Weights = make([]float32, e)
	}
	for u := lo; u < hi; u++ {
		l := local(u)
		if l < 0 {
			continue
		}
		at := g.Indptr[u-lo]
		for pos := lg.Indptr[l]; pos < lg.Indptr[l+1]; pos++ {
			src := toNew(lg.Source(pos))
			if compact {
				g.Indices32[at] = int32(src)
			} else {
				g.Indices[at] = src
			}
			g.EdgeIDs[at] = d.GlobalEIDs[lg.EdgeID(pos)]
			if g.Weights != nil {
				g.Weights[at] = lg.Weights[pos]
			}
			at++
		}
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	pt.Graph = g
	return pt, nil
}

// Close closes the Part; its loaders keep working until they are closed
// (as Graph.Close). Idempotent.
func (p *Part) Close() error { return p.g.Close() }

// Rank returns the part's rank; Parts the number of ranks.
func (p *Part) Rank() int  { return p.info.Rank }
func (p *Part) Parts() int { return p.meta.Parts }

// Layout returns what the part holds.
func (p *Part) Layout() rankpart.Layout { return p.layout }

// NumNodes returns the number of nodes of the whole graph; NumOwned the
// rank's owned nodes; NumEdges the edges the rank's topology holds.
func (p *Part) NumNodes() int64 { return p.meta.NumNodes }
func (p *Part) NumOwned() int64 { return p.info.NumOwned }
func (p *Part) NumEdges() int64 { return p.g.NumEdges() }

// OwnedNodes returns the original ids of the owned nodes, increasing.
func (p *Part) OwnedNodes() []int64 { return slices.Clone(p.owned) }

// NodeDataNames returns the names of the part's node data, sorted.
func (p *Part) NodeDataNames() ([]string, error) { return p.g.NodeDataNames() }

// OwnedNodeData returns a copy of node data name's rows of the owned
// nodes (in OwnedNodes' order), in memory from alloc (nil: the Go heap).
// For a typed part's per-type data ("<type>/<name>") they are the rows of
// the owned nodes of that type (OwnedTypeRange).
func (p *Part) OwnedNodeData(name string, alloc mem.Allocator) (mem.Tensor, error) {
	if alloc == nil {
		alloc = mem.Heap{}
	}
	var out mem.Tensor
	err := p.g.Use(func(in core.Internals) error {
		src, ok := in.Store.Get(name)
		if !ok {
			return errs.Errorf(nil, "no node data named %q (have %v)", name, in.Store.Names())
		}
		rb := int64(src.RowBytes())
		rows := p.info.NumOwned
		if p.types != nil {
			if nt, _, ok := p.types.SplitName(name); ok && in.Store.IsLocal(name) {
				rows = p.typeOwned[nt] // the owned nodes of its type come first
			}
		}
		buf, err := alloc.Alloc(int(rows * rb))
		if err != nil {
			return err
		}
		// Owned rows come first in every layout.
		if err := feature.Copy(buf, src.Data[:rows*rb]); err != nil {
			alloc.Free(buf)
			return err
		}
		shape := slices.Clone(src.Shape)
		shape[0] = rows
		out = mem.Tensor{DType: src.DType, Shape: shape, Data: buf}
		return nil
	})
	return out, err
}

// Types returns a typed part's types (by original ids, as the whole
// graph's; nil when untyped).
func (p *Part) Types() *fileformat.Types { return p.types }

// OwnedTypeRange returns where the owned nodes of node type t lie among
// OwnedNodes: [lo, hi) (the owned nodes increase in original id, and a
// type owns consecutive original ids). 0, 0 on an untyped part or a type
// out of range.
func (p *Part) OwnedTypeRange(t int) (lo, hi int64) {
	if p.types == nil || t < 0 || t >= len(p.typeOwned) {
		return 0, 0
	}
	return p.ownedStart[t], p.ownedStart[t] + p.typeOwned[t]
}

// Hops returns the neighbourhood depth of a self-reliant partition (0 for
// the other layouts).
func (p *Part) Hops() int {
	if p.layout != rankpart.LayoutSelfReliant {
		return 0
	}
	return p.meta.Hops
}

// Graph returns the part's internal Graph (for the C layer's argument
// reading only: sampling or reading node data on it directly would see
// the rank's rows alone).
func (p *Part) Graph() *core.Graph { return p.g }

package rankpart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// Names used by the partitioned layout (DST/partition.json, DST/part-<r>/).
const (
	// PartFormat is the "format" value of partition.json.
	PartFormat = "graphferry-partition"
	// PartVersion is the partition layout version this package writes
	// (2: the relabelling files below; version 1's dsp and hybrid ranks
	// read the whole assignment).
	PartVersion = 2

	PartMetaFile       = "partition.json"
	PartAssignmentFile = "assignment.npy"
	GlobalIDsFile      = "global_ids.npy"
	GlobalEIDsFile     = "global_eids.npy"
	// OwnedFeatFile holds, in the dsp and hybrid layouts, the feature rows
	// of the rank's owned nodes only (local ids [0, num_owned)).
	OwnedFeatFile = "feat.npy"
	// The relabelling of the dsp and hybrid layouts: rank r owns the new
	// ids [offsets[r], offsets[r+1]) (offsets: the ranks' num_owned summed;
	// increasing original id within a rank), so that a node's owner is a
	// lookup in P boundaries. NewIDsFile (in each rank's folder) holds the
	// new id of every local node; DST/NewToOldFile and DST/OldToNewFile
	// the whole permutation both ways, which a rank maps from disk for the
	// moments it needs an original id (a batch's nodes, seeds) instead of
	// holding it.
	NewIDsFile   = "new_ids.npy"
	NewToOldFile = "new_to_old.npy"
	OldToNewFile = "old_to_new.npy"
)

// Layout says what each rank's folder holds.
type Layout int

const (
	// LayoutDSP (DSP's patches): rank r holds the nodes assigned to it with
	// all their in-edges; the sources of those edges that other ranks own
	// are listed after them as halo nodes (no in-edges, no features). The
	// features of the owned nodes only. Sampling exchanges the rest.
	LayoutDSP Layout = iota
	// LayoutSelfReliant (PaGraph): rank r holds its owned nodes and the
	// Hops-hop in-neighbourhood of its seeds (owned train, val and test
	// nodes) with every in-edge of every node closer than Hops to a seed,
	// and the features of every node it holds: sampling up to Hops hops
	// needs no exchange.
	LayoutSelfReliant
	// LayoutHybrid (FastSample): the whole topology on every rank, the
	// features of the owned nodes only.
	LayoutHybrid
)

// String returns the layout's name as the command line spells it.
func (l Layout) String() string {
	switch l {
	case LayoutDSP:
		return "dsp"
	case LayoutSelfReliant:
		return "self-reliant"
	case LayoutHybrid:
		return "hybrid"
	}
	return fmt.Sprintf("layout(%d)", int(l))
}

// PartitionOptions controls NewPartitioner.
type PartitionOptions struct {
	// Method assigns nodes to ranks: partition.Range, partition.Random
	// (from Seed), partition.LDG (streaming, for graphs larger than the
	// memory given: see MemoryLimit) or partition.Given (Assignment, e.g.
	// from METIS).
	Method partition.Method
	// MethodName is recorded in partition.json (empty: Method's name).
	MethodName string
	// Parts is the number of ranks (>= 1).
	Parts int
	// Seed drives the Random assignment (and the random baseline cut).
	Seed uint64
	// Assignment is, for Given, the rank of each node of the source.
	Assignment []int64
	// Layout says what each folder holds.
	Layout Layout
	// Hops is L of LayoutSelfReliant (>= 0); ignored by the others.
	Hops int
	// Progress, if set, is called by Partition after each rank's folder
	// is written, with the number written and Parts.
	Progress func(done, total int)
	// MemoryLimit, when > 0, is the memory Partition may use, in bytes: it
	// is refused up front when the assignment and the id lists alone
	// would not fit (PartitionMemory), and half of it is the Go heap's
	// soft limit (runtime/debug.SetMemoryLimit) while Partition runs, so
	// that the collector keeps the heap under it and leaves the rest to
	// the page cache of the mapped source and the files written (finished
	// rank folders leave the cache). The kernel's limit (a cgroup) is the
	// caller's.
	MemoryLimit int64
	// Resume goes on with the partition a run interrupted in dst left
	// (Partition records every rank folder it finished in
	// DST/partition.progress.json): the ranks it finished, with the same
	// options and assignment, are kept, the others written. Without it
	// (or when nothing matches) every rank is written.
	Resume bool
	// Context, when set, stops Partition early when it is done: checked
	// before each rank's folder and before partition.json; what the call
	// wrote is then removed (its rank folders and assignment.npy), and
	// partition.json, removed before the first folder is written, is not
	// written.
	Context context.Context
	// Overwrite makes Partition write into a folder that is not empty, or
	// is the source dataset's folder, inside it or above it (refused
	// otherwise: fileio.PrepareOutput): what a partition writes there
	// (partition.json, assignment.npy, the part-<r> folders) is removed
	// first, nothing else.
	Overwrite bool
}

// PartMeta is the content of partition.json.
type PartMeta struct {
	Format   string `json:"format"`
	Version  int    `json:"version"`
	Method   string `json:"method"`
	Parts    int    `json:"parts"`
	Layout   string `json:"layout"`
	Hops     int    `json:"hops"`
	Seed     uint64 `json:"seed"`
	NumNodes int64  `json:"num_nodes"`
	NumEdges int64  `json:"num_edges"`
	// EdgeCut counts the edges whose endpoints lie on different ranks.
	EdgeCut int64 `json:"edge_cut"`
	// EdgeCuts holds the cut of this method and, for comparison, of range
	// and random with the same number of ranks (and Seed).
	EdgeCuts map[string]int64 `json:"edge_cuts"`
	// Files are the size and checksum of assignment.npy.
	Files map[string]fileio.FileSum `json:"files"`
	Ranks []PartRank                `json:"ranks"`
	// NodeTypes and EdgeTypes are the types of a typed (heterogeneous)
	// source, as its graphferry.json lists them (empty: untyped). Node
	// and edge ids are the source's, so a node's type (an edge's
	// relation) is an offset lookup on its global id (GlobalIDs,
	// GlobalEIDs): the rank folders themselves are untyped datasets.
	NodeTypes []fileformat.NodeType `json:"node_types,omitempty"`
	EdgeTypes []fileformat.EdgeType `json:"edge_types,omitempty"`
}

// PartRank describes DST/part-<rank>.
type PartRank struct {
	Rank int    `json:"rank"`
	Dir  string `json:"dir"`
	// NumNodes are the local nodes: NumOwned owned ones (local ids
	// [0, NumOwned), increasing global id) then the others it holds.
	NumNodes int64 `json:"num_nodes"`
	NumOwned int64 `json:"num_owned"`
	NumEdges int64 `json:"num_edges"`
	NumTrain int64 `json:"num_train"`
	NumVal   int64 `json:"num_val"`
	NumTest  int64 `json:"num_test"`
	// FeatureRows is how many local nodes (the first ones) have features,
	// in FeatureFile ("feat.bin" of the dataset, "feat.npy", or "" when
	// the source has none).
	FeatureRows int64                     `json:"feature_rows"`
	FeatureFile string                    `json:"feature_file"`
	Files       map[string]fileio.FileSum `json:"files"`
	// FeatureDType is the dtype of the rows in FeatureFile ("" in files
	// written before it was recorded): a feat.npy rewritten with another
	// dtype of the same width keeps its size.
	FeatureDType string `json:"feature_dtype,omitempty"`
	// Blocks holds the per-block sums of feat.npy (checked as its rows are
	// first read; nil in files written before they were recorded).
	Blocks *fileio.Blocks `json:"blocks,omitempty"`
	// NodeArrays are, for a typed source, the rank's rows of its per-type
	// node data ("<type>/<name>"), one .npy file each (TypedFile): the
	// rows of the rank's nodes of that type that the layout keeps data
	// for (dsp and hybrid: the owned ones; self-reliant: every node it
	// holds), in local id order, so the owned ones first. Masks are set on
	// owned rows only. Shape is the file's.
	NodeArrays []dataset.ArrayMeta `json:"node_data,omitempty"`
}

// Partitioner writes a dataset as one folder per rank (WritePart) and
// partition.json (WriteMeta). It reads the source dataset, which must stay
// open while it is used.
type Partitioner struct {
	src    *dataset.Dataset
	opt    PartitionOptions
	types  *fileformat.Types // nil: untyped
	assign []int64           // rank of each source node
	owned  [][]int64         // owned global ids per rank, increasing
	newID  []int64           // new id of each source node (relabelled.go)
	meta   PartMeta
	done   []bool
}

// ParseLayout returns the layout a name spells ("dsp", "self-reliant",
// "hybrid").
func ParseLayout(name string) (Layout, error) {
	for l := LayoutDSP; l <= LayoutHybrid; l++ {
		if l.String() == name {
			return l, nil
		}
	}
	return 0, fmt.Errorf("dataset: layout %q is unknown (want dsp, self-reliant or hybrid)", name)
}

// MaxParts is the most ranks a partition has: each is a folder of files
// and a slot in every per-rank table, so a count beyond any real training
// job (a typo, an overflow) is refused before anything is written.
const MaxParts = 1 << 16

// NewPartitioner assigns the nodes of src to opt.Parts ranks and measures
// the edge cut of that assignment and of the range and random baselines.
func NewPartitioner(src *dataset.Dataset, opt PartitionOptions) (*Partitioner, error) {
	if src == nil || src.Graph == nil {
		return nil, errors.New("dataset: partition: the source dataset is nil")
	}
	types, err := sourceTypes(src)
	if err != nil {
		return nil, err
	}
	if opt.Parts < 1 || opt.Parts > MaxParts {
		return nil, fmt.Errorf("dataset: partition: parts = %d (want 1 to %d)", opt.Parts, MaxParts)
	}
	if opt.Layout < LayoutDSP || opt.Layout > LayoutHybrid {
		return nil, fmt.Errorf("dataset: partition: %v is unknown (want dsp, self-reliant or hybrid)", opt.Layout)
	}
	if opt.Hops < 0 {
		return nil, fmt.Errorf("dataset: partition: hops = %d (want >= 0)", opt.Hops)
	}
	if opt.Method != partition.Given && opt.Assignment != nil {
		return nil, fmt.Errorf("dataset: partition: an assignment is given with method %v (want method given)", opt.Method)
	}
	g := src.Graph
	assign, err := assignment(g, opt.Method, opt.Parts, opt.Seed, opt.Assignment)
	if err != nil {
		return nil, err
	}
	name := opt.MethodName
	if name == "" {
		name = opt.Method.String()
	}
	p := &Partitioner{src: src, opt: opt, types: types, assign: assign, done: make([]bool, opt.Parts)}
	p.owned = make([][]int64, opt.Parts)
	for v, r := range assign {
		p.owned[r] = append(p.owned[r], int64(v))
	}
	p.newID = newIDs(p.owned, g.NumNodes)
	cut := edgeCut(g, assign)
	cuts := map[string]int64{name: cut}
	for _, m := range []partition.Method{partition.Range, partition.Random} {
		if _, ok := cuts[m.String()]; ok {
			continue
		}
		a, err := assignment(g, m, opt.Parts, opt.Seed, nil)
		if err != nil {
			return nil, err
		}
		cuts[m.String()] = edgeCut(g, a)
	}
	p.meta = PartMeta{
		Format: PartFormat, Version: PartVersion, Method: name, Parts: opt.Parts, Layout: opt.Layout.String(),
		Hops: opt.Hops, Seed: opt.Seed, NumNodes: g.NumNodes, NumEdges: g.NumEdges(), EdgeCut: cut, EdgeCuts: cuts,
		Ranks: make([]PartRank, opt.Parts),
	}
	if types != nil {
		p.meta.NodeTypes, p.meta.EdgeTypes = types.NodeTypes, types.EdgeTypes
	}
	return p, nil
}

// Meta returns partition.json's content so far (ranks not yet written are
// zero).
func (p *Partitioner) Meta() PartMeta { return p.meta }

// assignment returns the rank of every node of g under method
// (partition.Assignment: no renumbered copy of g is made).
func assignment(g *graph.CSC, method partition.Method, parts int, seed uint64, given []int64) ([]int64, error) {
	a, err := partition.Assignment(g, partition.Options{Method: method, NumPatches: parts, Seed: seed, Assignment: given})
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return a, nil
}

// edgeCut counts the edges of g whose endpoints lie on different ranks.
func edgeCut(g *graph.CSC, assign []int64) int64 {
	var cut int64
	for v := range g.NumNodes {
		for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
			if assign[g.Source(pos)] != assign[v] {
				cut++
			}
		}
	}
	return cut
}

// WritePart writes DST/part-<rank>: a dataset of the rank's local nodes
// (see Layout), global_ids.npy (local node -> source node), global_eids.npy
// (local edge id -> source edge id) and, for dsp and hybrid, feat.npy. It
// first removes DST/partition.json, so that the folders of a run that
// failed halfway are never described as complete.
func (p *Partitioner) WritePart(dst string, rank int) error {
	if rank < 0 || rank >= p.opt.Parts {
		return fmt.Errorf("dataset: partition: rank = %d is outside [0, %d)", rank, p.opt.Parts)
	}
	// A partition.json left by an earlier run must not describe a mix of
	// its folders and these: it is written again, last, by WriteMeta.
	if err := os.Remove(filepath.Join(dst, PartMetaFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dataset: %w", err)
	}
	g := p.src.Graph
	owned := p.owned[rank]
	isOwned := func(v int64) bool { return p.assign[v] == int64(rank) }

	// The nodes the rank holds, owned first, and which of them keep their
	// in-edges.
	var others []int64
	expand := func(v int64) bool { return isOwned(v) }
	switch p.opt.Layout {
	case LayoutDSP:
		// The halo, sorted and unique: O(the rank's edges), not O(N).
		for _, v := range owned {
			for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
				if u := g.Source(pos); !isOwned(u) {
					others = append(others, u)
				}
			}
		}
		slices.Sort(others)
		others = slices.Compact(others)
	case LayoutHybrid:
		for v := range g.NumNodes {
			if !isOwned(v) {
				others = append(others, v)
			}
		}
		expand = func(int64) bool { return true }
	case LayoutSelfReliant:
		depth := p.neighbourhood(rank)
		for v, d := range depth {
			if d >= 0 && !isOwned(int64(v)) {
				others = append(others, int64(v))
			}
		}
		hops := int32(p.opt.Hops)
		expand = func(v int64) bool { return depth[v] >= 0 && depth[v] < hops }
	}
	nodes := append(slices.Clone(owned), others...)
	// local(v) is the local id of source node v, a search of the owned
	// then the other nodes (both increasing), called only for nodes the
	// rank holds (every source of a kept edge is one of them).
	local := func(v int64) int64 {
		if i, ok := slices.BinarySearch(owned, v); ok {
			return int64(i)
		}
		i, _ := slices.BinarySearch(others, v)
		return int64(len(owned) + i)
	}

	lg := &graph.CSC{NumNodes: int64(len(nodes)), Indptr: make([]int64, len(nodes)+1)}
	// Sized up front: a rank's edges are the most it holds while writing.
	var kept int64
	for _, v := range nodes {
		if expand(v) {
			kept += g.Indptr[v+1] - g.Indptr[v]
		}
	}
	lg.Indices = make([]int64, 0, kept)
	eids := make([]int64, 0, kept)
	if g.Weights != nil {
		lg.Weights = make([]float32, 0, kept)
	}
	for i, v := range nodes {
		if expand(v) {
			for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
				lg.Indices = append(lg.Indices, local(g.Source(pos)))
				eids = append(eids, g.EdgeID(pos))
				if g.Weights != nil {
					lg.Weights = append(lg.Weights, g.Weights[pos])
				}
			}
		}
		lg.Indptr[i+1] = int64(len(lg.Indices))
	}
	if lg.Indices == nil {
		lg.Indices = []int64{}
	}

	info := PartRank{Rank: rank, Dir: partDir(rank), NumNodes: lg.NumNodes, NumOwned: int64(len(owned)), NumEdges: lg.NumEdges()}
	data := map[string]mem.Tensor{}
	var ownedFeat *mem.Tensor
	for name, t := range p.src.NodeData {
		if p.isTyped(name) {
			continue // written by writeTyped
		}
		rows := nodes
		if name == dataset.FeatKey && p.opt.Layout != LayoutSelfReliant {
			rows = owned
		}
		gt, err := gatherRows(t, rows)
		if err != nil {
			return fmt.Errorf("dataset: partition: node data %q: %w", name, err)
		}
		switch {
		case name == dataset.FeatKey && p.opt.Layout != LayoutSelfReliant:
			ownedFeat = &gt
			info.FeatureRows, info.FeatureFile, info.FeatureDType = int64(len(owned)), OwnedFeatFile, gt.DType.String()
			continue
		case name == dataset.FeatKey:
			info.FeatureRows, info.FeatureFile, info.FeatureDType = lg.NumNodes, dataset.FeatFile, gt.DType.String()
		case name == dataset.TrainMaskKey || name == dataset.ValMaskKey || name == dataset.TestMaskKey:
			// Seeds are co-partitioned: a seed is a seed on its owner only.
			clear(gt.Data[len(owned):])
			n := int64(0)
			for _, b := range gt.Data {
				n += int64(b)
			}
			switch name {
			case dataset.TrainMaskKey:
				info.NumTrain = n
			case dataset.ValMaskKey:
				info.NumVal = n
			default:
				info.NumTest = n
			}
		}
		data[name] = gt
	}
	dir := filepath.Join(dst, info.Dir)
	meta := p.src.Meta
	meta.Name = fmt.Sprintf("%s (part %d of %d, %s)", p.src.Meta.Name, rank, p.opt.Parts, p.opt.Layout)
	// A rank's folder is untyped (its local ids are not consecutive per
	// type): partition.json records the types, and the per-type node data
	// is written beside it (writeTyped).
	meta.NodeTypes, meta.EdgeTypes, meta.NodeArrays, meta.EdgeArrays = nil, nil, nil, nil
	if err := dataset.Write(dir, &dataset.Dataset{Meta: meta, Graph: lg, NodeData: data}); err != nil {
		return err
	}
	extra := map[string]mem.Tensor{
		GlobalIDsFile:  int64Tensor(nodes),
		GlobalEIDsFile: int64Tensor(eids),
	}
	if p.relabelled() {
		extra[NewIDsFile] = int64Tensor(gatherIDs(p.newID, nodes))
	} else if err := os.Remove(filepath.Join(dir, NewIDsFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dataset: %w", err)
	}
	if ownedFeat != nil {
		extra[OwnedFeatFile] = *ownedFeat
	} else if err := os.Remove(filepath.Join(dir, OwnedFeatFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dataset: %w", err)
	}
	for name, t := range extra {
		if err := fileformat.WriteNPY(filepath.Join(dir, name), t); err != nil {
			return err
		}
	}
	typedFiles, err := p.writeTyped(dir, &info, owned, nodes)
	if err != nil {
		return err
	}
	files, err := sumFiles(dir, append(append(datasetFiles(dir), GlobalIDsFile, GlobalEIDsFile, OwnedFeatFile, NewIDsFile), typedFiles...))
	if err != nil {
		return err
	}
	info.Files = files
	if ownedFeat != nil {
		sums, err := fileio.SumFileBlocks(filepath.Join(dir, OwnedFeatFile), fileio.BlockSize)
		if err != nil {
			return err
		}
		info.Blocks = &fileio.Blocks{Size: fileio.BlockSize, Files: map[string]string{OwnedFeatFile: sums}}
	}
	p.meta.Ranks[rank] = info
	p.done[rank] = true
	return nil
}

// neighbourhood returns, for every source node, its distance in hops
// (following in-edges backwards) from the nearest seed of rank (an owned
// train, val or test node), or -1 beyond opt.Hops.
func (p *Partitioner) neighbourhood(rank int) []int32 {
	g := p.src.Graph
	depth := make([]int32, g.NumNodes)
	for i := range depth {
		depth[i] = -1
	}
	var frontier []int64
	for _, v := range p.owned[rank] {
		if p.isSeed(v) {
			depth[v] = 0
			frontier = append(frontier, v)
		}
	}
	for h := int32(1); h <= int32(p.opt.Hops) && len(frontier) > 0; h++ {
		var next []int64
		for _, v := range frontier {
			for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
				if u := g.Source(pos); depth[u] < 0 {
					depth[u] = h
					next = append(next, u)
				}
			}
		}
		frontier = next
	}
	return depth
}

// isSeed says whether v is a train, val or test node of the source (by
// the global masks or, in a typed dataset, those of v's type).
func (p *Partitioner) isSeed(v int64) bool {
	prefix, row := "", v
	if p.types != nil {
		nt := typeOf(p.types.NodeOffsets, v)
		prefix, row = p.types.NodeTypes[nt].Name+fileformat.TypeSep, v-p.types.NodeOffsets[nt]
	}
	for _, name := range []string{dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
		if t, ok := p.src.NodeData[name]; ok && t.Data[v] != 0 {
			return true
		}
		if t, ok := p.src.NodeData[prefix+name]; ok && prefix != "" && t.Data[row] != 0 {
			return true
		}
	}
	return false
}

// WriteMeta writes DST/assignment.npy (the rank of every source node) and
// DST/partition.json, after every rank's folder was written.
func (p *Partitioner) WriteMeta(dst string) error {
	for r, ok := range p.done {
		if !ok {
			return fmt.Errorf("dataset: partition: part %d was not written (write every part before partition.json)", r)
		}
	}
	if err := fileformat.WriteNPY(filepath.Join(dst, PartAssignmentFile), int64Tensor(p.assign)); err != nil {
		return err
	}
	maps, err := p.writeRelabel(dst)
	if err != nil {
		return err
	}
	files, err := sumFiles(dst, append([]string{PartAssignmentFile}, maps...))
	if err != nil {
		return err
	}
	p.meta.Files = files
	mf, err := partWithDeclared(p.meta)
	if err != nil {
		return err
	}
	js, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return fileio.WriteFile(filepath.Join(dst, PartMetaFile), append(js, '\n'))
}

// Partition writes src partitioned into dst (see Partitioner) in one call:
// rank folders one after the other, each recorded in DST's progress file
// as it is done (resume.go), so that with opt.Resume a run interrupted
// (killed, out of memory) goes on where it stopped; opt.MemoryLimit bounds
// the heap meanwhile. dst must be empty or new, and neither src's folder
// (Dataset.Dir), inside it nor above it, unless opt.Overwrite, or
// opt.Resume and it holds an interrupted partition's progress file.
func Partition(src *dataset.Dataset, dst string, opt PartitionOptions) (PartMeta, error) {
	restore, err := limitMemory(src, opt)
	if err != nil {
		return PartMeta{}, err
	}
	defer restore()
	p, err := NewPartitioner(src, opt)
	if err != nil {
		return PartMeta{}, err
	}
	if _, err := os.Stat(filepath.Join(dst, progressFile)); !opt.Resume || err != nil {
		var sources []string
		if dir := src.Dir(); dir != "" {
			sources = []string{dir}
		}
		ready, err := fileio.PrepareOutput(dst, fileio.Output{Tool: "partition", Sources: sources, Overwrite: opt.Overwrite, Owns: owns})
		if err != nil {
			return PartMeta{}, err
		}
		if err := ready(); err != nil {
			return PartMeta{}, err
		}
	}
	if err := p.resume(dst); err != nil {
		return PartMeta{}, err
	}
	stopped := func(written int) error {
		if opt.Context == nil || opt.Context.Err() == nil {
			return nil
		}
		for r := range written {
			os.RemoveAll(filepath.Join(dst, partDir(r)))
		}
		os.Remove(filepath.Join(dst, PartAssignmentFile))
		os.Remove(filepath.Join(dst, NewToOldFile))
		os.Remove(filepath.Join(dst, OldToNewFile))
		os.Remove(filepath.Join(dst, progressFile))
		return opt.Context.Err()
	}
	for r := range opt.Parts {
		if err := stopped(r); err != nil {
			return PartMeta{}, err
		}
		if p.done[r] { // written by the run this one resumes
			continue
		}
		if err := p.WritePart(dst, r); err != nil {
			return PartMeta{}, err
		}
		if err := p.saveProgress(dst, r); err != nil {
			return PartMeta{}, err
		}
		if opt.Progress != nil {
			opt.Progress(r+1, opt.Parts)
		}
	}
	if err := stopped(opt.Parts); err != nil {
		return PartMeta{}, err
	}
	if err := p.WriteMeta(dst); err != nil {
		return PartMeta{}, err
	}
	if err := os.Remove(filepath.Join(dst, progressFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return PartMeta{}, fmt.Errorf("dataset: %w", err)
	}
	return p.meta, nil
}

// partDir names the folder of rank r.
func partDir(r int) string { return fmt.Sprintf("part-%d", r) }

// owns says whether the entry name of an output folder is something
// Partition writes (fileio.Output.Owns): partition.json, assignment.npy, a
// part-<r> folder (of any r: an earlier run may have had more ranks).
func owns(name string, isDir bool) bool {
	if !isDir {
		return name == PartMetaFile || name == PartAssignmentFile || name == NewToOldFile || name == OldToNewFile ||
			name == progressFile
	}
	var r int
	n, err := fmt.Sscanf(name, "part-%d", &r)
	return err == nil && n == 1 && name == partDir(r)
}

// gatherRows returns the rows of t (first dimension) at rows, in order;
// reading a mapped file that fails gives an error, not a crash.
func gatherRows(t mem.Tensor, rows []int64) (mem.Tensor, error) {
	shape := slices.Clone(t.Shape)
	rowBytes := int64(t.DType.Size())
	for _, s := range shape[1:] {
		rowBytes *= s
	}
	shape[0] = int64(len(rows))
	out := mem.Tensor{DType: t.DType, Shape: shape, Data: make([]byte, int64(len(rows))*rowBytes)}
	err := feature.Guard(func() {
		for i, v := range rows {
			copy(out.Data[int64(i)*rowBytes:int64(i+1)*rowBytes], t.Data[v*rowBytes:(v+1)*rowBytes])
		}
	})
	return out, err
}

// int64Tensor views ids as a 1-D int64 tensor.
func int64Tensor(ids []int64) mem.Tensor {
	if ids == nil {
		ids = []int64{}
	}
	return mem.Tensor{DType: mem.Int64, Shape: []int64{int64(len(ids))}, Data: mem.Bytes(ids)}
}

// datasetFiles lists the data files graphferry.json in dir records.
func datasetFiles(dir string) []string {
	raw, err := os.ReadFile(filepath.Join(dir, dataset.MetaFile))
	if err != nil {
		return nil
	}
	var m dataset.Meta
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	names := []string{dataset.MetaFile}
	for name := range m.Files {
		names = append(names, name)
	}
	return names
}

// sumFiles returns the fileio.FileSum of each named file of dir that exists.
func sumFiles(dir string, names []string) (map[string]fileio.FileSum, error) {
	sort.Strings(names)
	out := map[string]fileio.FileSum{}
	for _, name := range names {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		sum, err := fileio.SumFile(path)
		if err != nil {
			return nil, err
		}
		out[name] = sum
	}
	return out, nil
}

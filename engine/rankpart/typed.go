package rankpart

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// Typed (heterogeneous) sources. A typed dataset numbers its nodes type
// after type and its edges relation after relation (fileformat's typed
// layout), so the type of a node and the relation of an edge are offset
// lookups on their global ids. A partition of one keeps that numbering:
//
//   - partition.json records the types (PartMeta.NodeTypes, EdgeTypes);
//   - every rank's folder is an untyped dataset over its local nodes, as
//     for an untyped source (owned first, increasing global id, then the
//     others it holds), whose global_ids.npy and global_eids.npy give the
//     type of every local node (halo nodes included) and the relation of
//     every local edge; each local in-edge list keeps the source's order,
//     so it stays grouped by relation;
//   - the per-type node data ("<type>/<name>") is written beside it, one
//     .npy file per array (TypedFile, listed in PartRank.NodeArrays): the
//     rows of the rank's nodes of that type that the layout keeps data for
//     (dsp and hybrid: owned; self-reliant: every node it holds), in local
//     id order; masks are set on owned rows only, as the global ones.
//
// The global columns (feat, label, masks, the node "time" column) are
// written as for an untyped source; edge data (the typed layout's
// edge_data) is not written, as parts carry no times.

// ErrTypes marks the errors of a typed partition whose files disagree with
// its types (a folder of another partition, a damaged partition.json).
var ErrTypes = errors.New("the typed partition does not match its types")

// TypedFile names the .npy file of the i-th per-type node array of a
// rank's folder (names are free text, so not in the file name).
func TypedFile(i int) string { return fmt.Sprintf("node-data-%d.npy", i) }

// sourceTypes returns the types of src (nil when untyped), checked against
// its graph.
func sourceTypes(src *dataset.Dataset) (*fileformat.Types, error) {
	ty, err := src.Types()
	if err != nil {
		return nil, fmt.Errorf("dataset: partition: %w", err)
	}
	if ty == nil {
		return nil, nil
	}
	if err := ty.CheckGraph(src.Graph); err != nil {
		return nil, fmt.Errorf("dataset: partition: the graph does not match its types: %w", err)
	}
	return ty, nil
}

// typeOf returns the index i with offsets[i] <= id < offsets[i+1].
func typeOf(offsets []int64, id int64) int {
	return sort.Search(len(offsets)-1, func(i int) bool { return offsets[i+1] > id })
}

// isTyped says whether the source's node data name is per-type data.
func (p *Partitioner) isTyped(name string) bool {
	if p.types == nil {
		return false
	}
	_, _, ok := p.types.SplitName(name)
	return ok
}

// isMask says whether name (without its type) is a seed mask.
func isMask(name string) bool {
	return name == dataset.TrainMaskKey || name == dataset.ValMaskKey || name == dataset.TestMaskKey
}

// addSeeds adds n seeds of mask name to info's counts.
func addSeeds(info *PartRank, name string, n int64) {
	switch name {
	case dataset.TrainMaskKey:
		info.NumTrain += n
	case dataset.ValMaskKey:
		info.NumVal += n
	case dataset.TestMaskKey:
		info.NumTest += n
	}
}

// writeTyped writes the rank's per-type node data into dir (see the
// typed layout above) and lists it in info; it returns the files' names.
func (p *Partitioner) writeTyped(dir string, info *PartRank, owned, nodes []int64) ([]string, error) {
	ty := p.types
	if ty == nil {
		return nil, nil
	}
	rows := owned
	if p.opt.Layout == LayoutSelfReliant {
		rows = nodes
	}
	byType := make([][]int64, len(ty.NodeTypes)) // type-local ids, local order
	ownedOf := make([]int64, len(ty.NodeTypes))
	for i, v := range rows {
		nt := typeOf(ty.NodeOffsets, v)
		byType[nt] = append(byType[nt], v-ty.NodeOffsets[nt])
		if i < len(owned) {
			ownedOf[nt]++
		}
	}
	var keys []string
	for key := range p.src.NodeData {
		if p.isTyped(key) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	files := make([]string, 0, len(keys))
	for i, key := range keys {
		nt, name, _ := ty.SplitName(key)
		gt, err := gatherRows(p.src.NodeData[key], byType[nt])
		if err != nil {
			return nil, fmt.Errorf("dataset: partition: node data %q: %w", key, err)
		}
		if isMask(name) {
			// Seeds are co-partitioned: a seed is a seed on its owner only.
			clear(gt.Data[ownedOf[nt]*int64(gt.RowBytes()):])
			n := int64(0)
			for _, b := range gt.Data {
				if b != 0 {
					n++
				}
			}
			addSeeds(info, name, n)
		}
		file := TypedFile(i)
		if err := fileformat.WriteNPY(filepath.Join(dir, file), gt); err != nil {
			return nil, err
		}
		info.NodeArrays = append(info.NodeArrays, dataset.ArrayMeta{Name: name, NodeType: ty.NodeTypes[nt].Name,
			File: file, DType: gt.DType.String(), Shape: slices.Clone(gt.Shape)})
		files = append(files, file)
	}
	return files, nil
}

// openTyped reads the types of a typed partition and the rank's per-type
// node data, after checking that the rank's folder agrees with them: an
// untyped folder, every local edge between nodes of its relation's types
// and every in-edge list grouped by relation, every array of a node type
// with one row per node of that type the rank keeps data for. An untyped
// partition must list no per-type data.
func (p *Part) openTyped(dir, metaPath string, opt dataset.OpenOptions) error {
	m, info := &p.Meta, &p.Info
	if len(p.Data.Meta.NodeTypes) > 0 || len(p.Data.Meta.EdgeTypes) > 0 || len(p.Data.Meta.NodeArrays) > 0 {
		return fmt.Errorf("dataset: %s is a typed dataset, but a rank's folder is untyped (its types are %s's): it is not a folder of this partition (%w)", dir, PartMetaFile, ErrTypes)
	}
	if len(m.NodeTypes) == 0 && len(m.EdgeTypes) == 0 {
		if len(info.NodeArrays) > 0 {
			return fmt.Errorf("dataset: %s: rank %d lists per-type node_data, but the partition has no node_types (%w)", metaPath, info.Rank, ErrTypes)
		}
		return nil
	}
	ty, err := fileformat.ParseTypes(m.NodeTypes, m.EdgeTypes)
	if err != nil {
		return fmt.Errorf("dataset: %s: %w (%w)", metaPath, err, ErrTypes)
	}
	if ty.NumNodes() != m.NumNodes || ty.NumEdges() != m.NumEdges {
		return fmt.Errorf("dataset: %s: node_types count %d nodes and edge_types %d edges, the partition has %d and %d (%w)",
			metaPath, ty.NumNodes(), ty.NumEdges(), m.NumNodes, m.NumEdges, ErrTypes)
	}
	if err := checkLocalTypes(ty, p.Data.Graph, p.GlobalIDs, p.GlobalEIDs); err != nil {
		return fmt.Errorf("dataset: %s: %w (%w)", dir, err, ErrTypes)
	}
	T := len(ty.NodeTypes)
	p.TypeRows, p.TypeOwned = make([]int64, T), make([]int64, T)
	rows := p.GlobalIDs[:info.NumOwned]
	if p.Layout == LayoutSelfReliant {
		rows = p.GlobalIDs
	}
	for i, v := range rows {
		nt := typeOf(ty.NodeOffsets, v)
		p.TypeRows[nt]++
		if int64(i) < info.NumOwned {
			p.TypeOwned[nt]++
		}
	}
	p.NodeArrays = map[string]*fileformat.NPY{}
	for i, a := range info.NodeArrays {
		where := fmt.Sprintf("%s: ranks[%d].node_data[%d]", metaPath, info.Rank, i)
		if err := feature.CheckName(a.Name); err != nil {
			return fmt.Errorf("dataset: %s.name: %w", where, err)
		}
		nt := ty.NodeTypeIndex(a.NodeType)
		if nt < 0 {
			return fmt.Errorf("dataset: %s.node_type = %q is not a node type (have %s) (%w)", where, a.NodeType, fileformat.NodeTypeNames(ty.NodeTypes), ErrTypes)
		}
		key := a.NodeType + fileformat.TypeSep + a.Name
		if _, dup := p.NodeArrays[key]; dup {
			return fmt.Errorf("dataset: %s: %q appears twice", where, key)
		}
		dt, err := mem.ParseDType(a.DType)
		if err != nil {
			return fmt.Errorf("dataset: %s.dtype: %w", where, err)
		}
		if len(a.Shape) == 0 || a.Shape[0] != p.TypeRows[nt] {
			return fmt.Errorf("dataset: %s.shape %v must start with %d rows (rank %d's nodes of type %q with data) (%w)",
				where, a.Shape, p.TypeRows[nt], info.Rank, a.NodeType, ErrTypes)
		}
		path, err := fileio.Confine(dir, "per-type node data", a.File)
		if err != nil {
			return err
		}
		if err := checkRecorded(path, a.File, info.Files, opt); err != nil {
			return err
		}
		npy, err := fileformat.ReadNPY(path)
		if err != nil {
			return err
		}
		p.NodeArrays[key] = npy // closed by Close from here on
		if npy.DType != dt || !slices.Equal(npy.Shape, a.Shape) {
			return fmt.Errorf("dataset: %s is %s %v, %s says %s %v", path, npy.DType, npy.Shape, where, dt, a.Shape)
		}
	}
	p.Types = ty
	return nil
}

// checkLocalTypes checks a rank's local graph lg against the types by the
// global ids of its nodes (gids) and edges (geids): every edge's relation
// goes from its source's type to its destination's, and every in-edge
// list is grouped by relation in increasing order. The error names the
// first bad local node.
func checkLocalTypes(ty *fileformat.Types, lg *graph.CSC, gids, geids []int64) error {
	for l := range lg.NumNodes {
		v := gids[l]
		vt := int32(typeOf(ty.NodeOffsets, v))
		prev := int32(-1)
		for pos := lg.Indptr[l]; pos < lg.Indptr[l+1]; pos++ {
			id := geids[lg.EdgeID(pos)]
			r := int32(typeOf(ty.EdgeOffsets, id))
			u := gids[lg.Source(pos)]
			ut := int32(typeOf(ty.NodeOffsets, u))
			switch {
			case ty.RelDst[r] != vt || ty.RelSrc[r] != ut:
				et := ty.EdgeTypes[r]
				return fmt.Errorf("local node %d: edge %d of relation %d (%q, %q, %q) goes from node %d of type %q to node %d of type %q",
					l, id, r, et.Src, et.Rel, et.Dst, u, ty.NodeTypes[ut].Name, v, ty.NodeTypes[vt].Name)
			case r < prev:
				return fmt.Errorf("local node %d: its in-edges are not grouped by relation (edge %d of relation %d after one of relation %d)", l, id, r, prev)
			}
			prev = r
		}
	}
	return nil
}

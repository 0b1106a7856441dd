package rankpart

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// Part is one rank's folder of a partitioned dataset (written by
// Partitioner), opened by OpenPart: what rank Info.Rank needs and nothing
// of the other ranks' folders.
type Part struct {
	// Meta is DST/partition.json.
	Meta PartMeta
	// Info is Meta.Ranks[rank].
	Info PartRank
	// Layout is Meta.Layout parsed.
	Layout Layout
	// Data is the folder's dataset over the rank's local nodes (owned
	// first, then the others it holds; see PartRank). Its "feat" is
	// absent in the dsp and hybrid layouts: see OwnedFeat.
	Data *dataset.Dataset
	// GlobalIDs maps local node -> original node; GlobalEIDs local edge id
	// -> original edge id.
	GlobalIDs, GlobalEIDs []int64
	// Relabel is the relabelling of the dsp and hybrid layouts (nil for
	// self-reliant): the ranks' ranges of new ids, the new id of each
	// local node, and the rank's slice of the directory (relabelled.go).
	Relabel *Relabel
	// OwnedFeat is feat.npy, the feature rows of the owned nodes (dsp and
	// hybrid), memory-mapped until Close; nil when the source had none.
	OwnedFeat *fileformat.NPY
	// Types are the types of a typed partition (Meta.NodeTypes and
	// EdgeTypes parsed; nil when untyped): by global ids, as the source's.
	Types *fileformat.Types
	// NodeArrays are a typed partition's per-type node data, by node-data
	// name "<type>/<name>", memory-mapped until Close: the rows of the
	// rank's nodes of that type the layout keeps data for (see
	// PartRank.NodeArrays), TypeRows[t] of type t, the TypeOwned[t] owned
	// ones first.
	NodeArrays          map[string]*fileformat.NPY
	TypeRows, TypeOwned []int64
}

// Close unmaps the part's files. Idempotent.
func (p *Part) Close() error {
	var err error
	if p.OwnedFeat != nil {
		err = p.OwnedFeat.Close()
	}
	for _, a := range p.NodeArrays {
		err = errors.Join(err, a.Close())
	}
	if p.Data != nil {
		err = errors.Join(err, p.Data.Close())
	}
	return err
}

// OpenPart opens DST/part-<rank> of a partitioned dataset: partition.json,
// the rank's folder (a dataset, opened with opt), its id maps and owned
// features, and for the dsp and hybrid layouts the relabelling (its
// new_ids.npy and its slice of DST/old_to_new.npy; DST/new_to_old.npy,
// the rest of old_to_new.npy and DST/assignment.npy are not read). Sizes
// (and with opt.VerifyChecksums the checksums) of every file are compared
// with those partition.json records, and every id is checked against the
// counts it records, so that a folder of another run, a damaged file or a
// mixed-up rank gives an error, never a wrong graph.
func OpenPart(dst string, rank int, opt dataset.OpenOptions) (*Part, error) {
	metaPath, err := fileio.Confine(dst, "partition metadata", PartMetaFile)
	if err != nil {
		return nil, err
	}
	raw, err := fileio.ReadSmall(metaPath, fileio.MaxMetaBytes)
	if err != nil {
		return nil, err
	}
	p := &Part{}
	if err := json.Unmarshal(raw, &p.Meta); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", metaPath, err)
	}
	m := &p.Meta
	if m.Format != PartFormat {
		return nil, fmt.Errorf("dataset: %s: format %q, want %q", metaPath, m.Format, PartFormat)
	}
	if m.Version != PartVersion {
		return nil, fmt.Errorf("dataset: %s: version %d is not supported (want %d; partition the dataset again)", metaPath, m.Version, PartVersion)
	}
	if m.Parts < 1 || m.Parts > MaxParts || len(m.Ranks) != m.Parts {
		return nil, fmt.Errorf("dataset: %s: parts = %d with %d ranks described (want parts 1 to %d, one entry per rank)", metaPath, m.Parts, len(m.Ranks), MaxParts)
	}
	if rank < 0 || rank >= m.Parts {
		return nil, fmt.Errorf("dataset: rank = %d is outside [0, %d) (the parts of %s)", rank, m.Parts, dst)
	}
	if p.Layout, err = ParseLayout(m.Layout); err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, metaPath)
	}
	if m.NumNodes < 0 || m.NumNodes > maxPartNodes {
		return nil, fmt.Errorf("dataset: %s: num_nodes = %d is out of range", metaPath, m.NumNodes)
	}
	if m.NumEdges < 0 {
		return nil, fmt.Errorf("dataset: %s: num_edges = %d is out of range", metaPath, m.NumEdges)
	}
	p.Info = m.Ranks[rank]
	info := &p.Info
	if info.Rank != rank || info.Dir != partDir(rank) {
		return nil, fmt.Errorf("dataset: %s describes rank %d as rank %d in %q (want %q)", metaPath, rank, info.Rank, info.Dir, partDir(rank))
	}
	dir, err := fileio.Confine(dst, "part folder", info.Dir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			p.Close()
		}
	}()
	if p.Data, err = dataset.OpenWith(dir, opt); err != nil {
		return nil, err
	}
	lg := p.Data.Graph
	if p.Data.Meta.NumNodes != info.NumNodes || lg.NumEdges() != info.NumEdges {
		return nil, fmt.Errorf("dataset: %s holds %d nodes and %d edges, %s says %d and %d: the folder is not this partition's",
			dir, p.Data.Meta.NumNodes, lg.NumEdges(), PartMetaFile, info.NumNodes, info.NumEdges)
	}
	if info.NumOwned < 0 || info.NumOwned > info.NumNodes {
		return nil, fmt.Errorf("dataset: %s: rank %d owns %d of its %d nodes", metaPath, rank, info.NumOwned, info.NumNodes)
	}
	if p.GlobalIDs, err = readIDs(dir, GlobalIDsFile, info.Files, info.NumNodes, m.NumNodes); err != nil {
		return nil, err
	}
	if p.GlobalEIDs, err = readIDs(dir, GlobalEIDsFile, info.Files, info.NumEdges, m.NumEdges); err != nil {
		return nil, err
	}
	owned := p.GlobalIDs[:info.NumOwned]
	for i := 1; i < len(owned); i++ {
		if owned[i] <= owned[i-1] {
			return nil, fmt.Errorf("dataset: %s/%s: owned nodes are not in increasing order at local id %d (%d after %d)",
				dir, GlobalIDsFile, i, owned[i], owned[i-1])
		}
	}
	if err := p.openTyped(dir, metaPath, opt); err != nil {
		return nil, err
	}
	if p.Layout == LayoutSelfReliant {
		if err := p.checkMeta(metaPath, raw); err != nil {
			return nil, err
		}
		ok = true
		return p, nil
	}
	if err := p.openRelabel(dst, dir, opt); err != nil {
		return nil, err
	}
	if info.FeatureFile == OwnedFeatFile {
		path, err := fileio.Confine(dir, "owned features", OwnedFeatFile)
		if err != nil {
			return nil, err
		}
		if err := checkRecorded(path, OwnedFeatFile, info.Files, opt); err != nil {
			return nil, err
		}
		if p.OwnedFeat, err = fileformat.ReadNPY(path); err != nil {
			return nil, err
		}
		if s := p.OwnedFeat.Shape; len(s) == 0 || s[0] != info.NumOwned {
			return nil, fmt.Errorf("dataset: %s has shape %v, want %d rows (one per owned node)", path, s, info.NumOwned)
		}
		base := int(info.Files[OwnedFeatFile].Size) - len(p.OwnedFeat.Data) // the .npy header
		if err := info.Blocks.AttachBlocks(OwnedFeatFile, p.OwnedFeat.Data, base, PartMetaFile); err != nil {
			return nil, err
		}
	}
	if err := p.checkMeta(metaPath, raw); err != nil {
		return nil, err
	}
	ok = true
	return p, nil
}

// checkMeta checks the rank's feature entry and the declared sum of
// partition.json (image raw), after everything else was read.
func (p *Part) checkMeta(metaPath string, raw []byte) error {
	if err := checkFeature(p, metaPath); err != nil {
		return err
	}
	return fileio.CheckDeclared(metaPath, fileio.ReadDeclared(raw), partDeclarationOf(&p.Meta))
}

// maxPartNodes bounds partition.json's num_nodes (the id maps are O(N)).
const maxPartNodes = 1 << 40

// checkRecorded checks the size (checksum with opt.VerifyChecksums) of the
// file name at path against files; a file partition.json does not record
// is an error.
func checkRecorded(path, name string, files map[string]fileio.FileSum, opt dataset.OpenOptions) error {
	want, ok := files[name]
	if !ok {
		return fmt.Errorf("dataset: %s is not recorded in %s (the partition is incomplete or of another version)", path, PartMetaFile)
	}
	if opt.VerifyChecksums {
		return fileio.CheckSum(path, want, PartMetaFile)
	}
	return fileio.CheckSize(path, want, PartMetaFile)
}

// readIDs reads dir/name, a 1-D int64 .npy of n entries each in [0, limit),
// into the Go heap.
func readIDs(dir, name string, files map[string]fileio.FileSum, n, limit int64) ([]int64, error) {
	path, err := fileio.Confine(dir, "id map", name)
	if err != nil {
		return nil, err
	}
	// Read whole into the heap anyway: their sums are always checked (a
	// flipped byte within range would be another graph).
	if err := checkRecorded(path, name, files, dataset.OpenOptions{VerifyChecksums: true}); err != nil {
		return nil, err
	}
	a, err := fileformat.ReadNPY(path)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if a.DType != mem.Int64 || len(a.Shape) != 1 || a.Shape[0] != n {
		return nil, fmt.Errorf("dataset: %s is %s %v, want int64 [%d]", path, a.DType, a.Shape, n)
	}
	if err := fileio.CheckAlloc(8*uint64(n), filepath.Base(path)); err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	if n > 0 {
		copy(mem.Bytes(ids), a.Data)
	}
	if i := slices.IndexFunc(ids, func(v int64) bool { return v < 0 || (limit >= 0 && v >= limit) }); i >= 0 {
		if limit < 0 {
			return nil, fmt.Errorf("dataset: %s[%d] = %d is negative", path, i, ids[i])
		}
		return nil, fmt.Errorf("dataset: %s[%d] = %d is outside [0, %d)", path, i, ids[i], limit)
	}
	return ids, nil
}

package dataset

import (
	"fmt"
	"path/filepath"
	"unsafe"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// The CSC files: a dataset may also hold its graph's in-neighbour CSC as raw
// little-endian arrays (WriteCSC). Opening such a dataset maps them
// read-only instead of reading edges.arrow and sorting its edges, so a
// topology larger than memory stays usable: the kernel pages it in and out
// like any file data (clean pages, dropped under pressure), with random
// access advice. edges.arrow stays the dataset's edge table (its size is
// still checked; other tools read it).
const (
	CSCIndptrFile  = "csc_indptr.bin"   // int64, num_nodes+1
	CSCIndicesFile = "csc_indices.bin"  // the sources: int32 (num_nodes <= 2^31-1) or int64, num_edges
	CSCEdgeIDsFile = "csc_edge_ids.bin" // int64, num_edges; absent when edge id == CSC position
)

// CSCMeta describes the CSC files in graphferry.json ("csc").
type CSCMeta struct {
	IndicesDType string `json:"indices_dtype"` // "int32" or "int64"
	EdgeIDs      bool   `json:"edge_ids"`      // csc_edge_ids.bin present
}

// WriteCSC adds the CSC files of the dataset in dir (homogeneous, without
// edge weights) and records them in its graphferry.json: later opens map
// them (see OpenWith). It reads the dataset once the usual way, so it needs
// the memory a normal open needs.
func WriteCSC(dir string) error {
	d, err := Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if d.Meta.CSC != nil {
		return fmt.Errorf("dataset: %s has CSC files already", dir)
	}
	if len(d.Meta.NodeTypes) > 0 {
		return fmt.Errorf("dataset: %s is typed: its topology is built from edges.arrow at every open (no CSC files)", dir)
	}
	g := d.Graph.Compact()
	if g.Weights != nil {
		return fmt.Errorf("dataset: %s has edge weights: the CSC files hold no weights", dir)
	}
	meta := d.Meta
	meta.CSC = &CSCMeta{IndicesDType: "int64"}
	var files []string
	write := func(name string, data []byte) error {
		files = append(files, name)
		return fileio.WriteFile(filepath.Join(dir, name), data)
	}
	if err := write(CSCIndptrFile, mem.Bytes(g.Indptr)); err != nil {
		return err
	}
	ind := mem.Bytes(g.Indices)
	if g.IsCompact() {
		meta.CSC.IndicesDType, ind = "int32", mem.Bytes(g.Indices32)
	}
	if ind == nil {
		ind = []byte{}
	}
	if err := write(CSCIndicesFile, ind); err != nil {
		return err
	}
	if !identity(g.EdgeIDs) {
		meta.CSC.EdgeIDs = true
		if err := write(CSCEdgeIDsFile, mem.Bytes(g.EdgeIDs)); err != nil {
			return err
		}
	}
	return writeMeta(dir, &meta, files)
}

// identity reports whether ids is nil or 0, 1, 2, ...
func identity(ids []int64) bool {
	for i, v := range ids {
		if v != int64(i) {
			return false
		}
	}
	return true
}

// mapCSC maps the CSC files of d (Meta.CSC set) read-only as d.Graph,
// checked against num_nodes and num_edges (sizes) and graph.Validate (every
// entry, read once in order), then advised for random access.
func (d *Dataset) mapCSC(dir string) error {
	m := &d.Meta
	if len(m.NodeTypes) > 0 {
		return fmt.Errorf("dataset: %s: a typed dataset has no CSC files (graphferry.json lists them)", dir)
	}
	wide := m.CSC.IndicesDType == "int64"
	if !wide && m.CSC.IndicesDType != "int32" {
		return fmt.Errorf("dataset: %s: csc indices_dtype %q (want int32 or int64)", MetaFile, m.CSC.IndicesDType)
	}
	type file struct {
		name string
		elem int64
		n    int64
	}
	files := []file{{CSCIndptrFile, 8, m.NumNodes + 1}, {CSCIndicesFile, 4, m.NumEdges}}
	if wide {
		files[1].elem = 8
	}
	if m.CSC.EdgeIDs {
		files = append(files, file{CSCEdgeIDsFile, 8, m.NumEdges})
	}
	data := make([][]byte, len(files))
	for i, f := range files {
		path, err := fileio.Confine(dir, "CSC file", f.name)
		if err != nil {
			return err
		}
		if _, ok := m.Files[f.name]; !ok {
			return fmt.Errorf("dataset: %s lists no size for %s", MetaFile, f.name)
		}
		b, release, err := fileio.MapFile(path)
		if err != nil {
			return err
		}
		d.releases = append(d.releases, release)
		d.watch(path, b)
		if int64(len(b)) != f.elem*f.n {
			return fmt.Errorf("dataset: %s has %d bytes, want %d (%d entries of %d bytes)", path, len(b), f.elem*f.n, f.n, f.elem)
		}
		data[i] = b
	}
	g := &graph.CSC{NumNodes: m.NumNodes, Indptr: view[int64](data[0]), Mapped: true}
	if wide {
		g.Indices = view[int64](data[1])
	} else {
		g.Indices32 = view[int32](data[1])
	}
	if m.CSC.EdgeIDs {
		g.EdgeIDs = view[int64](data[2])
	}
	for _, b := range data {
		fileio.Advise(b, true) // Validate reads every entry once, in order
	}
	if err := g.Validate(); err != nil {
		return fmt.Errorf("dataset: %s: CSC files: %w", dir, err)
	}
	for _, b := range data {
		fileio.Advise(b, false) // sampling reads neighbourhoods at random
	}
	d.Graph = g
	return nil
}

// view is b (8-byte aligned: a mapping) as a []T; nil for no bytes.
func view[T int32 | int64](b []byte) []T {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(b) < size {
		if len(b) == 0 {
			return []T{}
		}
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
}

// TopologyMapped reports whether d.Graph is the mapped CSC files.
func (d *Dataset) TopologyMapped() bool { return d.Meta.CSC != nil && d.Graph != nil }

// WriteStreamed finishes a dataset that a streaming writer produced in dir
// without holding it in memory: the caller wrote the feature file (FeatFile,
// described by feat) and the CSC files (int32 sources, edge ids = CSC
// positions); WriteStreamed writes the node table of nodeData (as Write's
// node columns), records every file's size and checksum, and writes
// graphferry.json with meta's Name, NumClasses and Source. There is no
// edges.arrow: the graph is the CSC files (OpenWith maps them).
func WriteStreamed(dir string, meta Meta, numNodes, numEdges int64, nodeData map[string]mem.Tensor, feat *FeatureMeta) error {
	cols, err := checkedColumns(nodeData, numNodes, meta.NumClasses)
	if err != nil {
		return err
	}
	if err := writeNodeTable(filepath.Join(dir, NodesFile), cols, numNodes); err != nil {
		return err
	}
	m := Meta{
		Format: Format, Version: Version, Name: meta.Name, NumNodes: numNodes, NumEdges: numEdges,
		NumClasses: meta.NumClasses, Source: meta.Source, Feature: feat,
		CSC: &CSCMeta{IndicesDType: "int32"},
	}
	files := []string{NodesFile, CSCIndptrFile, CSCIndicesFile}
	if feat != nil {
		files = append(files, feat.File)
	}
	return writeMeta(dir, &m, files)
}

package dataset

import (
	"errors"
	"os"
	"slices"

	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/fileio"
)

// declaration is what graphferry.json's declared sum covers (see
// fileio.DeclaredSum): everything that says how the data files are read,
// not the name or the provenance. Fields are only ever appended, each
// omitted when empty, so that the sum of an older file is unchanged.
type declaration struct {
	NumNodes   int64                 `json:"num_nodes"`
	NumEdges   int64                 `json:"num_edges"`
	NumClasses int64                 `json:"num_classes"`
	Feature    *FeatureMeta          `json:"feature,omitempty"`
	Files      map[string]FileSum    `json:"files,omitempty"`
	NodeTypes  []fileformat.NodeType `json:"node_types,omitempty"`
	EdgeTypes  []fileformat.EdgeType `json:"edge_types,omitempty"`
	NodeArrays []ArrayMeta           `json:"node_data,omitempty"`
	EdgeArrays []ArrayMeta           `json:"edge_data,omitempty"`
	Blocks     *fileio.Blocks        `json:"blocks,omitempty"`
	CSC        *CSCMeta              `json:"csc,omitempty"`
}

func declarationOf(m *Meta, b *fileio.Blocks) declaration {
	return declaration{
		NumNodes: m.NumNodes, NumEdges: m.NumEdges, NumClasses: m.NumClasses, Feature: m.Feature, Files: m.Files,
		NodeTypes: m.NodeTypes, EdgeTypes: m.EdgeTypes, NodeArrays: m.NodeArrays, EdgeArrays: m.EdgeArrays, Blocks: b,
		CSC: m.CSC,
	}
}

// metaFile is graphferry.json as Write writes it: Meta, the per-block sums
// of its mapped files (blocks.go) and its declared sum.
type metaFile struct {
	Meta
	Blocks   *fileio.Blocks `json:"blocks,omitempty"`
	Declared string         `json:"declared"`
}

// withDeclared returns m and b ready to marshal with their declared sum.
func withDeclared(m Meta, b *fileio.Blocks) (metaFile, error) {
	sum, err := fileio.DeclaredSum(declarationOf(&m, b))
	return metaFile{Meta: m, Blocks: b, Declared: sum}, err
}

// checkDeclared checks the declared sum of the graphferry.json image raw
// (parsed into m, its block sums into b) of the dataset in dir. A file that
// records no declared sum (written before those were) passes. One that
// records a declared sum but no data file sums ("files" removed or
// emptied: no writer writes that, and the sums are part of what the
// declared sum covers) is checked with the sums of the files the writers
// record as they are now (writtenFiles, read whole): an edit of the
// declarations (a dtype, a shape) cannot pass by removing the file sums.
func checkDeclared(dir, path string, raw []byte, m *Meta, b *fileio.Blocks) error {
	recorded := fileio.ReadDeclared(raw)
	if recorded == "" {
		return nil
	}
	decl := declarationOf(m, b)
	if len(m.Files) == 0 {
		files, err := writtenFiles(dir, m, b)
		if err != nil {
			return err
		}
		decl.Files = files
	}
	return fileio.CheckDeclared(path, recorded, decl)
}

// writtenFiles returns the sums of the files of the dataset in dir that
// its writers record in "files" (those of them that are there): the
// tables, the feature file and its page sums, the typed arrays, the CSC
// files.
func writtenFiles(dir string, m *Meta, b *fileio.Blocks) (map[string]FileSum, error) {
	names := []string{EdgesFile, NodesFile}
	if m.Feature != nil {
		names = append(names, m.Feature.File)
		if b != nil && b.Pages[m.Feature.File] != "" {
			names = append(names, b.Pages[m.Feature.File])
		}
	}
	for _, a := range append(slices.Clone(m.NodeArrays), m.EdgeArrays...) {
		names = append(names, a.File)
	}
	if m.CSC != nil {
		names = append(names, CSCIndptrFile, CSCIndicesFile)
		if m.CSC.EdgeIDs {
			names = append(names, CSCEdgeIDsFile)
		}
	}
	files := map[string]FileSum{}
	for _, name := range names {
		path, err := fileio.Confine(dir, "file", name)
		if err != nil {
			return nil, err
		}
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if files[name], err = fileio.SumFile(path); err != nil {
			return nil, err
		}
	}
	return files, nil
}

package dataset

import (
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
// (parsed into m, its block sums into b). A file that records no data file
// sums (written before they were) or no declared sum (written before
// those were) passes.
func checkDeclared(path string, raw []byte, m *Meta, b *fileio.Blocks) error {
	if len(m.Files) == 0 {
		return nil
	}
	return fileio.CheckDeclared(path, fileio.ReadDeclared(raw), declarationOf(m, b))
}

package rankpart

import (
	"fmt"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/fileio"
)

// partDeclaration is what partition.json's declared sum covers (see
// fileio.DeclaredSum): the counts, the files and what every rank's folder
// holds (its files, which feature file with which dtype), not the method's
// name, seed or edge cuts. Fields are only ever appended.
type partDeclaration struct {
	Parts    int                       `json:"parts"`
	Layout   string                    `json:"layout"`
	Hops     int                       `json:"hops"`
	NumNodes int64                     `json:"num_nodes"`
	NumEdges int64                     `json:"num_edges"`
	Files    map[string]fileio.FileSum `json:"files"`
	Ranks    []PartRank                `json:"ranks"`
	// Typed sources only (omitted for untyped ones, whose sums stay).
	NodeTypes []fileformat.NodeType `json:"node_types,omitempty"`
	EdgeTypes []fileformat.EdgeType `json:"edge_types,omitempty"`
}

func partDeclarationOf(m *PartMeta) partDeclaration {
	return partDeclaration{Parts: m.Parts, Layout: m.Layout, Hops: m.Hops, NumNodes: m.NumNodes, NumEdges: m.NumEdges, Files: m.Files, Ranks: m.Ranks,
		NodeTypes: m.NodeTypes, EdgeTypes: m.EdgeTypes}
}

// partMetaFile is partition.json as WriteMeta writes it.
type partMetaFile struct {
	PartMeta
	Declared string `json:"declared"`
}

func partWithDeclared(m PartMeta) (partMetaFile, error) {
	sum, err := fileio.DeclaredSum(partDeclarationOf(&m))
	return partMetaFile{PartMeta: m, Declared: sum}, err
}

// checkFeature checks that the rank's feature entry names the file its
// layout keeps features in (or none) and that what is there agrees with
// it: a feature_file of another name opened the rank without features.
func checkFeature(p *Part, metaPath string) error {
	info := &p.Info
	want := OwnedFeatFile
	if p.Layout == LayoutSelfReliant {
		want = dataset.FeatFile
	}
	_, hasNPY := info.Files[OwnedFeatFile]
	_, hasFeat := p.Data.NodeData[dataset.FeatKey]
	switch {
	case info.FeatureFile != "" && info.FeatureFile != want:
		return fmt.Errorf("dataset: %s: rank %d: feature_file %q is not the %s layout's (%q or none)", metaPath, info.Rank, info.FeatureFile, p.Layout, want)
	case info.FeatureFile == "" && (hasNPY || hasFeat):
		return fmt.Errorf("dataset: %s: rank %d: feature_file is empty, but its folder holds features", metaPath, info.Rank)
	case info.FeatureFile == dataset.FeatFile && !hasFeat:
		return fmt.Errorf("dataset: %s: rank %d: feature_file %q, but its folder's dataset has no feature", metaPath, info.Rank, info.FeatureFile)
	case info.FeatureFile == OwnedFeatFile && p.OwnedFeat == nil:
		return fmt.Errorf("dataset: %s: rank %d: feature_file %q was not read", metaPath, info.Rank, info.FeatureFile)
	}
	var dtype string
	switch info.FeatureFile {
	case OwnedFeatFile:
		dtype = p.OwnedFeat.DType.String()
	case dataset.FeatFile:
		dtype = p.Data.NodeData[dataset.FeatKey].DType.String()
	}
	if info.FeatureDType != "" && dtype != info.FeatureDType {
		return fmt.Errorf("dataset: %s: rank %d: %s holds %s features, the partition's are %s (%w)", metaPath, info.Rank, info.FeatureFile, dtype, info.FeatureDType, errs.ErrIO)
	}
	return nil
}

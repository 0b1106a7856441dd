package dataset

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/graphferry/graphferry/engine/internal/fileio"
)

// Per-block sums of the mapped data files (feat.bin and the typed raw
// arrays): written by Write beside the whole-file sums, attached to each
// mapping at open so that its blocks are checked as they are first read
// (feature.SetBlockSums). A dataset written before they were recorded has
// none: its mapped files are checked by size only unless opened with
// OpenOptions.VerifyChecksums.

// blockSums returns the block sums of the files names in dir.
func blockSums(dir string, names []string) (*fileio.Blocks, error) {
	b := &fileio.Blocks{Size: fileio.BlockSize, Files: map[string]string{}}
	for _, name := range names {
		sums, err := fileio.SumFileBlocks(filepath.Join(dir, name), b.Size)
		if err != nil {
			return nil, err
		}
		b.Files[name] = sums
	}
	return b, nil
}

// gatheredFiles are the files of meta whose rows are gathered from their
// mapping (the feature file, the typed arrays): the ones with block sums.
func gatheredFiles(meta *Meta) []string {
	var names []string
	if meta.Feature != nil {
		names = append(names, meta.Feature.File)
	}
	for _, a := range slices.Concat(meta.NodeArrays, meta.EdgeArrays) {
		names = append(names, a.File)
	}
	return names
}

// readBlocks returns the "blocks" entry of the graphferry.json image raw
// (nil without one).
func readBlocks(path string, raw []byte) (*fileio.Blocks, error) {
	var f struct {
		Blocks *fileio.Blocks `json:"blocks"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("dataset: %s: blocks: %w", path, err)
	}
	return f.Blocks, nil
}

// HasBlockSums says whether the dataset's mapped files are verified as
// read (its graphferry.json records their block sums).
func (d *Dataset) HasBlockSums() bool { return d.blocks != nil }

// attachBlocks attaches the block sums of the file at path to data, its
// mapping.
func (d *Dataset) attachBlocks(path string, data []byte) error {
	return d.blocks.AttachBlocks(filepath.Base(path), data, 0, MetaFile)
}

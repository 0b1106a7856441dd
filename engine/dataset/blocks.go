package dataset

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
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
// mapping, and watches the file (Recheck).
func (d *Dataset) attachBlocks(path string, data []byte) error {
	if err := d.blocks.AttachBlocks(filepath.Base(path), data, 0, MetaFile); err != nil {
		return err
	}
	d.watch(path, data)
	return nil
}

// watched is a file the dataset keeps mapped (the feature file, the typed
// arrays, the CSC files), looked at again by Recheck.
type watched struct {
	watch *fileio.Watch
	data  []byte // the mapping
}

// watch adds the file at path, mapped as data, to the files Recheck looks
// at.
func (d *Dataset) watch(path string, data []byte) {
	if len(data) > 0 {
		d.watched = append(d.watched, watched{fileio.NewWatch(path), data})
	}
}

// Recheck looks again at the files the dataset keeps mapped, for a file
// written in place since the last look (its new bytes show through the
// mapping: see fileio.Watch); engine/core's loaders call it at each epoch
// start. A changed file with block sums has its blocks checked again as
// they are read (feature.BlockSums.Reset): the batch that reads a changed
// block fails with an error naming the file and the block. One without
// (the CSC files, a dataset written before block sums) is checked whole
// against the size and CRC-32C graphferry.json records, now: a difference
// is an error wrapping errs.ErrIO that names the file, as is a file whose
// times changed with no checksum recorded (one merely too recent to tell,
// fileio.Unsure, is let be then). A file replaced by a rename is no change (the
// mapping keeps the file it was made of). Safe for concurrent use.
func (d *Dataset) Recheck() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range d.watched {
		change := w.watch.Changed()
		if change == fileio.Same {
			continue
		}
		if b := feature.BlockSumsOf(w.data); b != nil {
			b.Reset()
			continue
		}
		path := w.watch.Path()
		sum, ok := d.Meta.Files[filepath.Base(path)]
		if !ok || sum.CRC32C == "" {
			if change == fileio.Unsure {
				continue // nothing to check it against, and no sign of a write
			}
			return fmt.Errorf("dataset: %s changed while the dataset is open, and %s records no checksum to check it against (%w)", path, MetaFile, errs.ErrIO)
		}
		if err := fileio.CheckSumBytes(path, w.data, sum, MetaFile); err != nil {
			return fmt.Errorf("%w (found at an epoch start: it changed while the dataset is open)", err)
		}
	}
	return nil
}

// writePageSums writes the page sums file of meta's feature file (see
// fileio.PageSize) into dir and returns {feature file: page sums file}
// (nil without a feature file).
func writePageSums(dir string, meta *Meta) (map[string]string, error) {
	if meta.Feature == nil {
		return nil, nil
	}
	name := meta.Feature.File
	raw, err := fileio.SumFilePages(filepath.Join(dir, name), fileio.PageSize)
	if err != nil {
		return nil, err
	}
	pages := name + fileio.PagesSuffix
	if err := fileio.WriteFile(filepath.Join(dir, pages), raw); err != nil {
		return nil, err
	}
	return map[string]string{name: pages}, nil
}

// FeaturePageSums reads the page sums of the feature file of the dataset
// opened from dir (fileio.PageSize): the sums, their page size and the
// page sums file's path; nil sums when graphferry.json records none (a
// dataset written before they were). The file is checked against the size
// and CRC-32C graphferry.json records for it: a damaged table is an error,
// never a reason to distrust good data.
func (d *Dataset) FeaturePageSums(dir string) ([]uint32, int, string, error) {
	if d.blocks == nil || d.Meta.Feature == nil {
		return nil, 0, "", nil
	}
	name, ok := d.blocks.Pages[d.Meta.Feature.File]
	if !ok {
		return nil, 0, "", nil
	}
	path, err := fileio.Confine(dir, "page sums file", name)
	if err != nil {
		return nil, 0, "", err
	}
	feat, ok := d.NodeData[FeatKey]
	if !ok {
		return nil, 0, "", nil
	}
	want, ok := d.Meta.Files[name]
	if !ok {
		return nil, 0, "", fmt.Errorf("dataset: %s names the page sums file %s but records no sum of it (%w)", MetaFile, name, errs.ErrIO)
	}
	raw, err := fileio.ReadSmall(path, want.Size)
	if err != nil {
		return nil, 0, "", err
	}
	got, err := fileio.SumBytes(raw)
	if err != nil {
		return nil, 0, "", err
	}
	if got != want {
		return nil, 0, "", fmt.Errorf("dataset: %s has %d bytes of CRC-32C %s, %s says %d bytes of %s: it is damaged or was changed (%w)",
			path, got.Size, got.CRC32C, MetaFile, want.Size, want.CRC32C, errs.ErrIO)
	}
	sums, err := fileio.DecodePageSums(raw, int64(len(feat.Data)), d.blocks.PageSize, path)
	return sums, d.blocks.PageSize, path, err
}

package convert

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// ConvertNPY converts a dataset in the .npy + meta.json layout (indptr.npy
// and indices.npy: in-neighbour CSR, row v lists the sources u of u -> v;
// optional feat.npy [N, F]; optional label.npy (missing: all -1); optional
// train_idx/val_idx/test_idx.npy; optional split_{train,val,test}_masks.npy
// [S, N], stored as node columns split_{train,val,test}_mask [N, S]) into
// the dataset layout in dstDir. graphferry.json takes name and num_classes
// from meta.json (num_classes defaults to max label + 1) and keeps the whole
// original meta.json as "source".
func ConvertNPY(srcDir, dstDir string) error { return ConvertNPYWith(srcDir, dstDir, Options{}) }

// ConvertNPYContext is ConvertNPY stopped early, with ctx's error, when ctx
// (nil: never) is done (see Options.Context).
func ConvertNPYContext(ctx context.Context, srcDir, dstDir string) error {
	return ConvertNPYWith(srcDir, dstDir, Options{Context: ctx})
}

// Options are the options of ConvertNPYWith.
type Options struct {
	// Context (nil: never) stops the conversion early, with its error,
	// when it is done: checked before anything is read, after the input
	// is read and after the output is written. The output is written into
	// a temporary folder inside dstDir and moved into place only when
	// complete (the data files, then graphferry.json), so that a stopped
	// or failed conversion leaves nothing of itself in dstDir (a dataset
	// already there stays whole until the move).
	Context context.Context
	// Overwrite converts into a dstDir that is not empty, or is srcDir,
	// inside it or above it (refused otherwise: fileio.PrepareOutput):
	// what a dataset writer writes there is replaced, nothing else.
	Overwrite bool
}

// ConvertNPYWith is ConvertNPY with options.
func ConvertNPYWith(srcDir, dstDir string, opt Options) error {
	ctx := opt.Context
	stopped := func() error {
		if ctx == nil {
			return nil
		}
		return ctx.Err()
	}
	if err := stopped(); err != nil {
		return err
	}
	ready, err := fileio.PrepareOutput(dstDir, fileio.Output{Tool: "convert", Sources: []string{srcDir}, Overwrite: opt.Overwrite, Owns: dataset.Owns(dstDir)})
	if err != nil {
		return err
	}
	c := &converter{dir: srcDir, ctx: ctx}
	defer c.close()
	d, err := c.load()
	if err != nil {
		return err
	}
	if err := stopped(); err != nil {
		return err
	}
	if err := os.MkdirAll(dstDir, 0o755); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	tmp, err := os.MkdirTemp(dstDir, ".convert-*")
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := dataset.WriteContext(ctx, tmp, d); err != nil {
		return err
	}
	if err := stopped(); err != nil {
		return err
	}
	// What an older dataset in dstDir has and this one has not (a feature
	// file, typed arrays) goes with the rest of it.
	if err := ready(); err != nil {
		return err
	}
	return moveDataset(tmp, dstDir)
}

// moveDataset renames every file of the dataset folder src into dst, the
// metadata file last (dst holds no graphferry.json until then, so that it
// never describes a mix of old and new files).
func moveDataset(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	for _, e := range entries {
		if e.Name() == dataset.MetaFile {
			continue
		}
		if err := os.Rename(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return fmt.Errorf("convert: %w", err)
		}
	}
	if err := os.Rename(filepath.Join(src, dataset.MetaFile), filepath.Join(dst, dataset.MetaFile)); err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	return nil
}

// converter keeps the mapped input arrays open until the output is written.
type converter struct {
	dir  string
	ctx  context.Context // nil: never stopped; checked before each file is read
	open []*fileformat.NPY
}

func (c *converter) close() {
	for _, a := range c.open {
		a.Close()
	}
}

// read maps srcDir/name; a missing file gives (nil, nil) when optional.
func (c *converter) read(name string, optional, allowFortran bool) (*fileformat.NPY, bool, error) {
	if c.ctx != nil && c.ctx.Err() != nil {
		return nil, false, c.ctx.Err()
	}
	path := filepath.Join(c.dir, name)
	if optional {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
	}
	a, fortran, err := fileformat.ReadNPYWith(path, allowFortran)
	if err != nil {
		return nil, false, err
	}
	c.open = append(c.open, a)
	return a, fortran, nil
}

// readInt64 reads a 1-D integer array (int64, or int32 widened).
func (c *converter) readInt64(name string, optional bool) ([]int64, bool, error) {
	a, _, err := c.read(name, optional, false)
	if err != nil || a == nil {
		return nil, false, err
	}
	if len(a.Shape) != 1 {
		return nil, false, fmt.Errorf("dataset: %s: shape %v, want 1-D", name, a.Shape)
	}
	switch a.DType {
	case mem.Int64:
		if aligned8(a.Data) {
			return mem.Int64s(a.Data), true, nil
		}
		out := make([]int64, a.Shape[0])
		copy(mem.Bytes(out), a.Data)
		return out, true, nil
	case mem.Int32:
		out := make([]int64, a.Shape[0])
		for i := range out {
			out[i] = int64(int32(binary.LittleEndian.Uint32(a.Data[4*i:])))
		}
		return out, true, nil
	}
	return nil, false, fmt.Errorf("dataset: %s: dtype %v, want int64 or int32", name, a.DType)
}

// srcMeta is the part of meta.json the converter uses.
type srcMeta struct {
	Name       string `json:"name"`
	NumNodes   *int64 `json:"num_nodes"`
	NumEdges   *int64 `json:"num_edges"`
	NumClasses *int64 `json:"num_classes"`
}

// load reads every input array and assembles the dataset (aliasing the
// mapped inputs).
func (c *converter) load() (*dataset.Dataset, error) {
	rawMeta, err := fileio.ReadSmall(filepath.Join(c.dir, "meta.json"), fileio.MaxMetaBytes)
	if err != nil {
		return nil, err
	}
	var sm srcMeta
	if err := json.Unmarshal(rawMeta, &sm); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", filepath.Join(c.dir, "meta.json"), err)
	}
	indptr, _, err := c.readInt64("indptr.npy", false)
	if err != nil {
		return nil, err
	}
	indices, _, err := c.readInt64("indices.npy", false)
	if err != nil {
		return nil, err
	}
	if len(indptr) == 0 {
		return nil, errors.New("dataset: indptr.npy is empty (want N+1 entries)")
	}
	n := int64(len(indptr) - 1)
	if sm.NumNodes != nil && *sm.NumNodes != n {
		return nil, fmt.Errorf("dataset: meta.json num_nodes=%d but indptr.npy has %d entries (N+1)", *sm.NumNodes, len(indptr))
	}
	if sm.NumEdges != nil && *sm.NumEdges != int64(len(indices)) {
		return nil, fmt.Errorf("dataset: meta.json num_edges=%d but indices.npy has %d entries", *sm.NumEdges, len(indices))
	}
	g, err := graph.FromCSC(n, indptr, indices, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", c.dir, err)
	}
	d := &dataset.Dataset{Graph: g, NodeData: map[string]mem.Tensor{}}

	label, ok, err := c.readInt64("label.npy", true)
	if err != nil {
		return nil, err
	}
	if !ok {
		label = make([]int64, n)
		for i := range label {
			label[i] = -1
		}
	}
	if int64(len(label)) != n {
		return nil, fmt.Errorf("dataset: label.npy has %d entries, want N=%d", len(label), n)
	}
	d.NodeData[dataset.LabelKey] = mem.Tensor{DType: mem.Int64, Shape: []int64{n}, Data: mem.Bytes(label)}

	for _, split := range []struct{ file, key string }{
		{"train_idx.npy", dataset.TrainMaskKey}, {"val_idx.npy", dataset.ValMaskKey}, {"test_idx.npy", dataset.TestMaskKey},
	} {
		idx, _, err := c.readInt64(split.file, true)
		if err != nil {
			return nil, err
		}
		mask := make([]byte, n)
		for i, v := range idx {
			if v < 0 || v >= n {
				return nil, fmt.Errorf("dataset: %s[%d]=%d is out of range [0, %d)", split.file, i, v, n)
			}
			mask[v] = 1
		}
		d.NodeData[split.key] = mem.Tensor{DType: mem.Uint8, Shape: []int64{n}, Data: mask}
	}

	for _, split := range []string{"train", "val", "test"} {
		t, ok, err := c.splitMasks("split_"+split+"_masks.npy", n)
		if err != nil {
			return nil, err
		}
		if ok {
			d.NodeData["split_"+split+"_mask"] = t
		}
	}

	feat, _, err := c.read("feat.npy", true, false)
	if err != nil {
		return nil, err
	}
	if feat != nil {
		if len(feat.Shape) != 2 || feat.Shape[0] != n {
			return nil, fmt.Errorf("dataset: feat.npy has shape %v, want [%d, F]", feat.Shape, n)
		}
		d.NodeData[dataset.FeatKey] = feat.Tensor()
	}

	numClasses := int64(0)
	if sm.NumClasses != nil {
		numClasses = *sm.NumClasses
	} else {
		for _, l := range label {
			numClasses = max(numClasses, l+1)
		}
	}
	name := sm.Name
	if name == "" {
		name = filepath.Base(c.dir)
	}
	d.Meta = dataset.Meta{Name: name, NumClasses: numClasses, Source: json.RawMessage(rawMeta)}
	return d, nil
}

// splitMasks reads an optional [S, N] bool/uint8 mask file as a [N, S] uint8
// tensor (a fortran-order [S, N] file already has that layout).
func (c *converter) splitMasks(name string, n int64) (mem.Tensor, bool, error) {
	a, fortran, err := c.read(name, true, true)
	if err != nil || a == nil {
		return mem.Tensor{}, false, err
	}
	if len(a.Shape) != 2 || a.Shape[1] != n || (a.DType != mem.Bool && a.DType != mem.Uint8) {
		return mem.Tensor{}, false, fmt.Errorf("dataset: %s is %v%v, want bool or uint8 [S, %d]", name, a.DType, a.Shape, n)
	}
	s := a.Shape[0]
	out := make([]byte, n*s)
	for i, b := range a.Data {
		if b > 1 {
			return mem.Tensor{}, false, fmt.Errorf("dataset: %s has value %d at byte %d, want 0 or 1", name, b, i)
		}
	}
	if fortran {
		copy(out, a.Data) // element (k, v) at v*S + k
	} else {
		for k := range s {
			for v := range n {
				out[v*s+k] = a.Data[k*n+v]
			}
		}
	}
	return mem.Tensor{DType: mem.Uint8, Shape: []int64{n, s}, Data: out}, true, nil
}

// aligned8 reports whether b starts at an 8-byte aligned address (so it can
// be viewed as []int64).
func aligned8(b []byte) bool {
	return len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%8 == 0
}

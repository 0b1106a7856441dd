package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v14/arrow"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// Names used by the dataset layout.
const (
	// Format is the "format" value of graphferry.json.
	Format = "graphferry-dataset"
	// Version is the layout version this package reads and writes.
	Version = 1

	MetaFile     = "graphferry.json"
	EdgesFile    = "edges.arrow"
	NodesFile    = "nodes.arrow"
	FeatFile     = "feat.bin"
	FeatKey      = "feat"
	LabelKey     = "label"
	TrainMaskKey = "train_mask"
	ValMaskKey   = "val_mask"
	TestMaskKey  = "test_mask"
)

// FileSum is the size and CRC-32C of one file of a dataset, as
// graphferry.json records it (Meta.Files).
type FileSum = fileio.FileSum

// Meta is the content of graphferry.json.
type Meta struct {
	Format     string       `json:"format"`
	Version    int          `json:"version"`
	Name       string       `json:"name"`
	NumNodes   int64        `json:"num_nodes"`
	NumEdges   int64        `json:"num_edges"`
	NumClasses int64        `json:"num_classes"`
	Feature    *FeatureMeta `json:"feature"`
	// Files holds the size and checksum of every data file, by name
	// (empty for datasets written before they were recorded).
	Files map[string]FileSum `json:"files,omitempty"`
	// Source is free-form provenance (for converted datasets: the original
	// meta.json).
	Source json.RawMessage `json:"source,omitempty"`

	// NodeTypes and EdgeTypes make the dataset typed (heterogeneous): node
	// types own consecutive global node ids and relations consecutive
	// global edge ids (edges.arrow stores them relation by relation), in
	// list order; see fileformat.Types. Empty for a homogeneous dataset.
	NodeTypes []fileformat.NodeType `json:"node_types,omitempty"`
	EdgeTypes []fileformat.EdgeType `json:"edge_types,omitempty"`
	// NodeArrays are per-node-type arrays of a typed dataset (raw files
	// like feat.bin, num_nodes(node_type) rows), read into NodeData as
	// "<node_type>/<name>".
	NodeArrays []ArrayMeta `json:"node_data,omitempty"`
	// EdgeArrays are per-edge arrays (raw files, num_edges rows indexed by
	// edge id), read into EdgeData by name ("time").
	EdgeArrays []ArrayMeta `json:"edge_data,omitempty"`
	// CSC, when set, lists the CSC files (WriteCSC), which OpenWith maps
	// as the graph instead of building it from edges.arrow.
	CSC *CSCMeta `json:"csc,omitempty"`
}

// FeatureMeta describes feat.bin: a raw little-endian row-major array.
type FeatureMeta struct {
	File  string  `json:"file"`
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
}

// Dataset is a graph with per-node data. NodeData holds "feat" (memory-mapped
// from feat.bin, read-only, valid until Close), "label" (int64, -1 =
// unlabelled), "train_mask", "val_mask", "test_mask" (uint8) and any other
// fixed-width node column; every tensor has NumNodes rows.
//
// A typed dataset (Meta.NodeTypes set) also has per-type node data under
// "<node_type>/<name>" with that type's node count of rows (memory-mapped,
// valid until Close), and EdgeData, per-edge arrays indexed by edge id
// ("time": int64 edge timestamps). A global node column "time" (int64)
// holds node timestamps by global node id.
type Dataset struct {
	Meta     Meta
	Graph    *graph.CSC
	NodeData map[string]mem.Tensor
	EdgeData map[string]mem.Tensor

	mu          sync.Mutex
	releases    []func() error
	mapped      []string       // NodeData names whose memory a release unmaps
	mappedEdges []string       // EdgeData names whose memory a release unmaps
	blocks      *fileio.Blocks // per-block sums of the mapped files (blocks.go)
	watched     []watched      // the mapped files, for Recheck (blocks.go)
	dir         string         // the folder OpenWith opened ("": built in memory)

	// OpenBytes is the most memory OpenWith counted holding at once (see
	// OpenOptions.MemoryLimit): the node columns and, when the graph was
	// built from edges.arrow, its build.
	OpenBytes int64
}

// requiredNodeColumns are the node columns every dataset has, with types.
var requiredNodeColumns = []columnSpec{{LabelKey, mem.Int64}, {TrainMaskKey, mem.Uint8}, {ValMaskKey, mem.Uint8}, {TestMaskKey, mem.Uint8}}

// columnSpec names a node column and its dtype.
type columnSpec struct {
	name  string
	dtype mem.DType
}

// OpenOptions are the options of OpenWith.
type OpenOptions struct {
	// VerifyChecksums reads every file that graphferry.json lists whole
	// and compares its CRC-32C with the recorded one. Without it, sizes
	// are compared at every open, and so are the sums of edges.arrow and
	// nodes.arrow (read whole anyway); feat.bin, mapped and read only
	// where rows are gathered, is checked on demand only. A dataset
	// written before checksums were recorded still opens (Meta.Files is
	// empty then).
	VerifyChecksums bool
	// Context, when set, stops the open early (with its error, the
	// dataset's files released) when it is done: it is checked between
	// the open's steps (each file's check, the node table, the edge
	// table, the mappings).
	Context context.Context
	// MemoryLimit is the most memory, in bytes, the open may hold (0: no
	// limit): the node table's columns, and the graph built from
	// edges.arrow (its counters and CSC, and the record batches being
	// decoded; not the CSC files, which are mapped). An open that would
	// hold more stops before the allocation, with an error wrapping
	// errs.ErrNoMem that says what it needs (Dataset.OpenBytes is what it
	// held).
	MemoryLimit int64
}

// stopped returns the error of o.Context once it is done, else nil.
func (o *OpenOptions) stopped() error {
	if o.Context == nil {
		return nil
	}
	return o.Context.Err()
}

// Open opens the dataset in dir with the default options (see OpenWith).
func Open(dir string) (*Dataset, error) { return OpenWith(dir, OpenOptions{}) }

// OpenWith opens the dataset in dir: it reads graphferry.json, checks the
// sizes (and on demand the checksums) of the files it lists, loads
// nodes.arrow, builds the graph from edges.arrow (edge id = row in the
// file) and maps feat.bin. Every size is checked against the files before
// anything is allocated for it. Dataset files must be regular files inside
// dir (a symbolic link may point to another file inside dir). Damaged or
// changed files give errors wrapping errs.ErrIO; an allocation larger than
// the machine's memory an error wrapping errs.ErrNoMem.
func OpenWith(dir string, opt OpenOptions) (*Dataset, error) {
	metaPath, err := fileio.Confine(dir, "metadata file", MetaFile)
	if err != nil {
		return nil, err
	}
	raw, err := fileio.ReadSmall(metaPath, fileio.MaxMetaBytes)
	if err != nil {
		return nil, err
	}
	d := &Dataset{NodeData: map[string]mem.Tensor{}, dir: dir}
	if err := fileformat.CheckTypeFields(raw); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", metaPath, err)
	}
	if err := json.Unmarshal(raw, &d.Meta); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", metaPath, err)
	}
	m := &d.Meta
	if d.blocks, err = readBlocks(metaPath, raw); err != nil {
		return nil, err
	}
	if m.Format != Format {
		return nil, fmt.Errorf("dataset: %s: format %q, want %q", dir, m.Format, Format)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("dataset: %s: version %d is not supported (want %d)", dir, m.Version, Version)
	}
	if m.NumNodes < 0 || m.NumEdges < 0 || m.NumClasses < 0 {
		return nil, fmt.Errorf("dataset: %s: num_nodes=%d, num_edges=%d and num_classes=%d must be >= 0", dir, m.NumNodes, m.NumEdges, m.NumClasses)
	}
	n := m.NumNodes
	if n > graph.MaxNodes {
		return nil, fmt.Errorf("dataset: %s: num_nodes=%d exceeds %d", dir, n, int64(graph.MaxNodes))
	}
	if n == 0 && m.NumEdges > 0 {
		return nil, fmt.Errorf("dataset: %s: num_edges=%d with num_nodes=0", dir, m.NumEdges)
	}

	// The recorded files: sizes always, checksums on demand, before any
	// of them is parsed. (The Arrow tables' sums are checked on reading
	// them in any case: it costs little beside decoding them.)
	names := make([]string, 0, len(m.Files))
	for name := range m.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path, err := fileio.Confine(dir, "file", name)
		if err != nil {
			return nil, err
		}
		if opt.VerifyChecksums && name != EdgesFile && name != NodesFile { // those: on reading
			err = fileio.CheckSumContext(opt.Context, path, m.Files[name], MetaFile)
		} else {
			err = fileio.CheckSize(path, m.Files[name], MetaFile)
		}
		if err != nil {
			return nil, err
		}
		if err := opt.stopped(); err != nil {
			return nil, err
		}
	}
	edgesPath, err := fileio.Confine(dir, "edge table", EdgesFile)
	if err != nil {
		return nil, err
	}
	nodesPath, err := fileio.Confine(dir, "node table", NodesFile)
	if err != nil {
		return nil, err
	}
	var featPath string
	var featT mem.Tensor
	if m.Feature != nil {
		if featPath, featT, err = d.featureFile(dir); err != nil {
			return nil, err
		}
	}

	ty, arrays, err := d.checkArrays(dir)
	if err != nil {
		return nil, err
	}

	// The node table first: its row count confirms num_nodes before the
	// edge sort allocates for that many nodes.
	if err := d.readNodes(nodesPath, verifier(nodesPath, m.Files, NodesFile)); err != nil {
		return nil, err
	}
	for _, t := range d.NodeData {
		d.OpenBytes += int64(len(t.Data))
	}
	if err := checkLimit(opt.MemoryLimit, d.OpenBytes, "its node columns"); err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", dir, err)
	}
	if err := opt.stopped(); err != nil {
		return nil, err
	}
	// The edge sort's indptr, before the edges are read (readEdgeTable
	// checks the rest against the edges it has read, not num_edges).
	if err := fileio.CheckAlloc(8*uint64(n+2), fmt.Sprintf("the graph of %d nodes", n)); err != nil {
		return nil, err
	}
	// COOOptions cannot say "zero nodes" (0 infers), so build with one node
	// and, when there are none, replace the (edge-free) result. With CSC
	// files, the graph is those files, mapped (mapCSC).
	if m.CSC != nil {
		if err := d.mapCSC(dir); err != nil {
			d.Close()
			return nil, err
		}
	} else {
		columns := d.OpenBytes
		d.Graph, err = fileformat.ReadEdgeTableReserved(opt.Context, edgesPath, graph.COOOptions{NumNodes: max(n, 1)}, verifier(edgesPath, m.Files, EdgesFile), func(bytes int64) error {
			d.OpenBytes = max(d.OpenBytes, columns+bytes)
			return checkLimit(opt.MemoryLimit, columns+bytes, "its node columns and the graph built from "+EdgesFile+" (create the dataset's CSC files to map the graph instead: python -m graphferry csc DIR)")
		})
		// What the build left is garbage: back to the system now, so that
		// the process holds what the plan says, not the build's peak.
		debug.FreeOSMemory()
		if err != nil {
			return nil, err
		}
		if d.Graph.NumEdges() != m.NumEdges {
			return nil, fmt.Errorf("dataset: %s has %d edges, %s says num_edges=%d", EdgesFile, d.Graph.NumEdges(), MetaFile, m.NumEdges)
		}
		if n == 0 {
			d.Graph = &graph.CSC{Indptr: []int64{0}}
		}
	}
	if err := opt.stopped(); err != nil {
		d.Close()
		return nil, err
	}
	if m.Feature != nil {
		if err := d.mapFeatures(featPath, featT); err != nil {
			d.Close() // the CSC files' mappings
			return nil, err
		}
	}
	if err := d.openTyped(ty, arrays); err != nil {
		d.Close()
		return nil, err
	}
	if err := checkDeclared(dir, metaPath, raw, m, d.blocks); err != nil {
		d.Close()
		return nil, err
	}
	if err := opt.stopped(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// checkLimit refuses need bytes over limit (0: none), naming what needs
// them.
func checkLimit(limit, need int64, what string) error {
	if limit > 0 && need > limit {
		return fmt.Errorf("opening needs %d bytes (%.2f GiB) for %s, over the memory budget of %d bytes (%.2f GiB) (%w)",
			need, float64(need)/(1<<30), what, limit, float64(limit)/(1<<30), errs.ErrNoMem)
	}
	return nil
}

// Dir returns the folder the dataset was opened from ("" for one built in
// memory).
func (d *Dataset) Dir() string { return d.dir }

// Owns returns what a dataset writer owns among the entries of the folder
// dir (see fileio.Output.Owns, which overwriting removes): the layout's
// files (graphferry.json, the tables, the feature file and its page sums,
// the CSC files) and every file the graphferry.json already in dir records
// (the typed arrays).
func Owns(dir string) func(name string, isDir bool) bool {
	own := map[string]bool{MetaFile: true, EdgesFile: true, NodesFile: true, FeatFile: true, FeatFile + fileio.PagesSuffix: true,
		CSCIndptrFile: true, CSCIndicesFile: true, CSCEdgeIDsFile: true}
	if raw, err := fileio.ReadSmall(filepath.Join(dir, MetaFile), fileio.MaxMetaBytes); err == nil {
		var m Meta
		if json.Unmarshal(raw, &m) == nil {
			for name := range m.Files {
				own[name] = fileio.CheckFileName("file", name) == nil
			}
		}
	}
	return func(name string, isDir bool) bool { return !isDir && own[name] }
}

// readNodes loads every usable column of the node table into NodeData and
// checks the values of the label and mask columns.
func (d *Dataset) readNodes(path string, verify func(file []byte) error) error {
	recs, err := fileformat.ReadIPCFile(path, verify)
	if err != nil {
		return err
	}
	defer fileformat.ReleaseAll(recs)
	if len(recs) == 0 {
		return fmt.Errorf("dataset: %s has no record batches", path)
	}
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	if rows != d.Meta.NumNodes {
		return fmt.Errorf("dataset: %s has %d rows, want num_nodes=%d", path, rows, d.Meta.NumNodes)
	}
	schema := recs[0].Schema()
	for i := range schema.NumFields() {
		name := schema.Field(i).Name
		if err := feature.CheckName(name); err != nil {
			return fmt.Errorf("dataset: %s: column %d: %w", path, i, err)
		}
		if _, dup := d.NodeData[name]; dup {
			return fmt.Errorf("dataset: %s: column %q appears twice", path, name)
		}
		var t mem.Tensor
		var ok bool
		err := fileformat.CatchPanic(func() error {
			var err error
			t, ok, err = fileformat.ColumnTensor(recs, i, name)
			return err
		})
		if err != nil {
			return fmt.Errorf("dataset: %s: %w", path, err)
		}
		if !ok {
			continue // not a fixed-width column
		}
		if t.Shape[0] != d.Meta.NumNodes {
			return fmt.Errorf("dataset: %s: column %q has %d rows, want num_nodes=%d", path, name, t.Shape[0], d.Meta.NumNodes)
		}
		d.NodeData[name] = t
	}
	for _, c := range requiredNodeColumns {
		t, ok := d.NodeData[c.name]
		if !ok {
			return fmt.Errorf("dataset: %s has no column %q", path, c.name)
		}
		if t.DType != c.dtype || len(t.Shape) != 1 {
			return fmt.Errorf("dataset: %s: column %q is %v%v, want 1-D %v", path, c.name, t.DType, t.Shape, c.dtype)
		}
	}
	if err := checkNodeValues(d.NodeData, d.Meta.NumClasses); err != nil {
		return fmt.Errorf("dataset: %s: %w", path, err)
	}
	return nil
}

// verifier returns the check of the file name, at path, against its
// recorded size and checksum, or nil when none is recorded.
func verifier(path string, files map[string]FileSum, name string) func(file []byte) error {
	if s, ok := files[name]; ok {
		return func(file []byte) error { return fileio.CheckSumBytes(path, file, s, MetaFile) }
	}
	return nil
}

// checkNodeValues checks that labels lie in [0, numClasses) or are -1
// (unlabelled), and that the masks (uint8 or bool columns whose names end
// in "_mask") hold only 0 and 1.
func checkNodeValues(data map[string]mem.Tensor, numClasses int64) error {
	if t, ok := data[LabelKey]; ok && t.DType == mem.Int64 {
		for i, l := range mem.Int64s(t.Data) {
			if l < -1 || l >= numClasses {
				return fmt.Errorf("column %q row %d: label %d is outside [0, num_classes=%d) (and not -1, unlabelled)", LabelKey, i, l, numClasses)
			}
		}
	}
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t := data[name]
		if !strings.HasSuffix(name, "_mask") || (t.DType != mem.Uint8 && t.DType != mem.Bool) {
			continue
		}
		cols := int64(1)
		if len(t.Shape) == 2 {
			cols = t.Shape[1]
		}
		for i, v := range t.Data {
			if v > 1 {
				return fmt.Errorf("column %q row %d: mask value %d (want 0 or 1)", name, int64(i)/max(cols, 1), v)
			}
		}
	}
	return nil
}

// featureFile checks the feature description of graphferry.json against
// the feature file before it is mapped, and returns the file's path and the
// tensor (without data) it holds.
func (d *Dataset) featureFile(dir string) (string, mem.Tensor, error) {
	f := d.Meta.Feature
	dt, err := mem.ParseDType(f.DType)
	if err != nil {
		return "", mem.Tensor{}, fmt.Errorf("dataset: %s: feature dtype: %w", MetaFile, err)
	}
	if len(f.Shape) == 0 || f.Shape[0] != d.Meta.NumNodes {
		return "", mem.Tensor{}, fmt.Errorf("dataset: %s: feature shape %v must start with num_nodes=%d", MetaFile, f.Shape, d.Meta.NumNodes)
	}
	path, err := fileio.Confine(dir, "feature file", f.File)
	if err != nil {
		return "", mem.Tensor{}, err
	}
	t := mem.Tensor{DType: dt, Shape: slices.Clone(f.Shape)}
	want, err := fileio.TensorBytes(t)
	if err != nil {
		return "", mem.Tensor{}, fmt.Errorf("dataset: %s: feature %w", MetaFile, err)
	}
	fh, st, err := fileio.OpenRegular(path)
	if err != nil {
		return "", mem.Tensor{}, err
	}
	fh.Close()
	if st.Size() != want {
		return "", mem.Tensor{}, fmt.Errorf("dataset: %s has %d bytes, shape %v of %v needs %d", path, st.Size(), f.Shape, dt, want)
	}
	return path, t, nil
}

// mapFeatures memory-maps the feature file at path as t (checked by
// featureFile).
func (d *Dataset) mapFeatures(path string, t mem.Tensor) error {
	data, release, err := fileio.MapFile(path)
	if err != nil {
		return err
	}
	t.Data = data
	if err := fileio.CheckTensor(path, t); err != nil {
		release()
		return err
	}
	if err := d.attachBlocks(path, data); err != nil {
		release()
		return err
	}
	d.NodeData[FeatKey] = t
	d.releases = append(d.releases, release)
	d.mapped = append(d.mapped, FeatKey)
	return nil
}

// Close unmaps the feature matrix and the per-type and per-edge arrays
// (NodeData["feat"], the "<type>/<name>" arrays and EdgeData become
// invalid and are removed). It is idempotent and safe for concurrent use.
func (d *Dataset) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for _, release := range d.releases {
		if err := release(); err != nil {
			errs = append(errs, err)
		}
	}
	d.releases = nil
	d.watched = nil
	for _, name := range d.mapped {
		delete(d.NodeData, name)
	}
	d.mapped = nil
	for _, name := range d.mappedEdges {
		delete(d.EdgeData, name)
	}
	d.mappedEdges = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dataset: unmapping: %w", err)
	}
	return nil
}

// OnClose adds release to what Close calls (e.g. the unmapping of files
// opened beside the dataset whose memory lives as long as it does).
func (d *Dataset) OnClose(release func() error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.releases = append(d.releases, release)
}

// Write stores d in dir (created if needed) in the dataset layout. Edges are
// written in CSC order (for each v, its in-neighbours u as rows u -> v), so
// after Open the edge ids are the CSC positions of d.Graph (d.Graph.EdgeIDs
// is not stored; EdgeData is reordered to match). A typed dataset
// (Meta.NodeTypes set) is written in edge-id order instead, so that its
// relations keep their consecutive edge ids: d.Graph's edge ids must then
// be exactly 0..E-1 and match Meta.EdgeTypes (see fileformat.Types.CheckGraph); its
// "<type>/<name>" node data and its EdgeData go to raw files listed in
// graphferry.json (see writeArrays). NodeData["feat"] (any dtype, any shape [N, ...]) goes to
// feat.bin; the other tensors, 1-D or 2-D with N rows, become node columns
// (a missing label is written as -1, a missing mask as 0). From d.Meta only
// Name, NumClasses, Source, NodeTypes and EdgeTypes are used; the rest is
// derived.
func Write(dir string, d *Dataset) error { return WriteContext(nil, dir, d) }

// WriteContext is Write stopped early, with ctx's error, when ctx (nil:
// never) is done: checked between the files it writes (graphferry.json,
// removed first, is then not written).
func WriteContext(ctx context.Context, dir string, d *Dataset) error {
	stopped := func() error {
		if ctx == nil {
			return nil
		}
		return ctx.Err()
	}
	if d == nil || d.Graph == nil {
		return errors.New("dataset: Write needs a dataset with a graph")
	}
	g := d.Graph
	if err := g.Validate(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	n := g.NumNodes
	meta := Meta{
		Format: Format, Version: Version, Name: d.Meta.Name,
		NumNodes: n, NumEdges: g.NumEdges(), NumClasses: d.Meta.NumClasses, Source: d.Meta.Source,
	}
	if len(meta.Source) > 0 && !json.Valid(meta.Source) {
		return errors.New("dataset: Meta.Source is not valid JSON")
	}
	ty, global, typed, err := splitTyped(d, &meta)
	if err != nil {
		return err
	}
	if meta.NumClasses < 0 {
		return fmt.Errorf("dataset: Meta.NumClasses=%d must be >= 0", meta.NumClasses)
	}
	cols, err := checkedColumns(global, n, meta.NumClasses)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	// Remove a stale graphferry.json first so a failed write is not
	// mistaken for a complete dataset.
	if err := os.Remove(filepath.Join(dir, MetaFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dataset: %w", err)
	}

	if err := stopped(); err != nil {
		return err
	}
	if feat, ok := global[FeatKey]; ok {
		if err := fileio.WriteFile(filepath.Join(dir, FeatFile), feat.Data); err != nil {
			return err
		}
		meta.Feature = &FeatureMeta{File: FeatFile, DType: feat.DType.String(), Shape: slices.Clone(feat.Shape)}
	} else {
		for _, name := range []string{FeatFile, FeatFile + fileio.PagesSuffix} { // and its page sums
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("dataset: %w", err)
			}
		}
	}

	src, dst, weights, order, err := edgeRows(g, ty != nil)
	if err != nil {
		return err
	}
	if err := stopped(); err != nil {
		return err
	}
	if err := fileformat.WriteEdgeTableContext(ctx, filepath.Join(dir, EdgesFile), src, dst, weights); err != nil {
		return err
	}
	if err := stopped(); err != nil {
		return err
	}
	arrayFiles, err := writeArrays(dir, d, ty, typed, order, &meta)
	if err != nil {
		return err
	}
	if err := writeNodeTable(filepath.Join(dir, NodesFile), cols, n); err != nil {
		return err
	}
	if err := stopped(); err != nil {
		return err
	}
	files := []string{EdgesFile, NodesFile}
	if meta.Feature != nil {
		files = append(files, meta.Feature.File)
	}
	return writeMeta(dir, &meta, append(files, arrayFiles...))
}

// writeMeta records the sizes and checksums of files in meta.Files (read
// back: the files are in the page cache, and a write that went wrong is not
// recorded as right) beside those it lists, and writes graphferry.json.
func writeMeta(dir string, meta *Meta, files []string) error {
	meta.Files = maps.Clone(meta.Files)
	if meta.Files == nil {
		meta.Files = map[string]FileSum{}
	}
	pages, err := writePageSums(dir, meta)
	if err != nil {
		return err
	}
	for name := range pages {
		files = append(files, pages[name])
	}
	for _, name := range files {
		sum, err := fileio.SumFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		meta.Files[name] = sum
	}
	blocks, err := blockSums(dir, gatheredFiles(meta))
	if err != nil {
		return err
	}
	if pages != nil {
		blocks.Pages, blocks.PageSize = pages, fileio.PageSize
	}
	mf, err := withDeclared(*meta, blocks)
	if err != nil {
		return err
	}
	js, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return fileio.WriteFile(filepath.Join(dir, MetaFile), append(js, '\n'))
}

// checkedColumns returns the node table's columns of data (n rows; see
// nodeColumns) with the label and mask values checked.
func checkedColumns(data map[string]mem.Tensor, n, numClasses int64) ([]nodeColumn, error) {
	cols, err := nodeColumns(data, n)
	if err != nil {
		return nil, err
	}
	colData := map[string]mem.Tensor{}
	for _, c := range cols {
		colData[c.name] = c.t
	}
	if err := checkNodeValues(colData, numClasses); err != nil {
		return nil, fmt.Errorf("dataset: NodeData: %w", err)
	}
	return cols, nil
}

// nodeColumn is one column of the node table.
type nodeColumn struct {
	name string
	t    mem.Tensor
}

// nodeColumns checks the node tensors and returns the node table columns:
// label and the masks first (defaults when absent), then the others by name.
func nodeColumns(data map[string]mem.Tensor, n int64) ([]nodeColumn, error) {
	for name, t := range data {
		if err := feature.CheckName(name); err != nil {
			return nil, fmt.Errorf("dataset: NodeData[%q]: %w", name, err)
		}
		if err := fileio.CheckTensor(fmt.Sprintf("NodeData[%q]", name), t); err != nil {
			return nil, err
		}
		if len(t.Shape) == 0 || t.Shape[0] != n {
			return nil, fmt.Errorf("dataset: NodeData[%q] has shape %v, want %d rows (one per node)", name, t.Shape, n)
		}
		if name != FeatKey && len(t.Shape) > 2 {
			return nil, fmt.Errorf("dataset: NodeData[%q] has shape %v; node columns must be 1-D or 2-D", name, t.Shape)
		}
		if name != FeatKey {
			if _, err := fileformat.ArrowType(t.DType); err != nil {
				return nil, fmt.Errorf("dataset: NodeData[%q]: %w", name, err)
			}
		}
	}
	var cols []nodeColumn
	for _, c := range requiredNodeColumns {
		t, ok := data[c.name]
		if !ok {
			t = mem.Tensor{DType: c.dtype, Shape: []int64{n}, Data: make([]byte, n*int64(c.dtype.Size()))}
			if c.name == LabelKey {
				for i := range mem.Int64s(t.Data) {
					mem.Int64s(t.Data)[i] = -1
				}
			}
		}
		if t.DType != c.dtype || len(t.Shape) != 1 {
			return nil, fmt.Errorf("dataset: NodeData[%q] is %v%v, want 1-D %v", c.name, t.DType, t.Shape, c.dtype)
		}
		cols = append(cols, nodeColumn{c.name, t})
	}
	var extra []string
	for name := range data {
		if name != FeatKey && !slices.ContainsFunc(requiredNodeColumns, func(c columnSpec) bool { return c.name == name }) {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		cols = append(cols, nodeColumn{name, data[name]})
	}
	return cols, nil
}

// writeNodeTable writes the node columns as a ZSTD Arrow IPC file.
func writeNodeTable(path string, cols []nodeColumn, n int64) error {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		t, _ := fileformat.ArrowType(c.t.DType)
		if len(c.t.Shape) == 2 {
			t = arrow.FixedSizeListOf(int32(c.t.Shape[1]), t)
		}
		fields[i] = arrow.Field{Name: c.name, Type: t}
	}
	schema := arrow.NewSchema(fields, nil)
	return fileformat.WriteIPCFile(path, schema, n, func(lo, hi int64) ([]arrow.Array, error) {
		arrs := make([]arrow.Array, len(cols))
		for i, c := range cols {
			a, err := fileformat.TensorColumn(c.t, lo, hi)
			if err != nil {
				return nil, fmt.Errorf("dataset: column %q: %w", c.name, err)
			}
			arrs[i] = a
		}
		return arrs, nil
	})
}

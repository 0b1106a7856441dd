package dataset

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"

	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// ArrayMeta describes one raw array file of a dataset: a little-endian
// row-major array like feat.bin. NodeType names the node type whose nodes
// are its rows (node_data entries); edge_data entries leave it empty and
// have one row per edge, by edge id.
type ArrayMeta struct {
	Name     string  `json:"name"`
	NodeType string  `json:"node_type,omitempty"`
	File     string  `json:"file"`
	DType    string  `json:"dtype"`
	Shape    []int64 `json:"shape"`
}

// TimeKey is the name of the timestamps: a global int64 node column and an
// int64 edge array (EdgeData).
const TimeKey = "time"

// Types returns the dataset's typed topology metadata (nil, nil for a
// homogeneous dataset).
func (d *Dataset) Types() (*fileformat.Types, error) {
	if len(d.Meta.NodeTypes) == 0 {
		if len(d.Meta.EdgeTypes) > 0 {
			return nil, fmt.Errorf("dataset: edge_types without node_types")
		}
		return nil, nil
	}
	ty, err := fileformat.ParseTypes(d.Meta.NodeTypes, d.Meta.EdgeTypes)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", MetaFile, err)
	}
	return ty, nil
}

// typedArray is a per-type node array on its way to or from a file.
type typedArray struct {
	key      string // NodeData key, "<type>/<name>"
	nodeType int
	name     string
	t        mem.Tensor
}

// splitTyped checks d's types (recording them in meta) and splits NodeData
// into the global columns and the per-type arrays. A "<type>/<name>" key
// whose type is not a node type stays global.
func splitTyped(d *Dataset, meta *Meta) (*fileformat.Types, map[string]mem.Tensor, []typedArray, error) {
	ty, err := d.Types()
	if err != nil {
		return nil, nil, nil, err
	}
	if ty == nil {
		return nil, d.NodeData, nil, nil
	}
	if err := ty.CheckGraph(d.Graph); err != nil {
		return nil, nil, nil, fmt.Errorf("dataset: the graph does not match Meta's types: %w", err)
	}
	meta.NodeTypes, meta.EdgeTypes = ty.NodeTypes, ty.EdgeTypes
	global := map[string]mem.Tensor{}
	var typed []typedArray
	for key, t := range d.NodeData {
		nt, name, ok := ty.SplitName(key)
		if !ok {
			global[key] = t
			continue
		}
		if err := feature.CheckName(name); err != nil {
			return nil, nil, nil, fmt.Errorf("dataset: NodeData[%q]: %w", key, err)
		}
		if err := fileio.CheckTensor(fmt.Sprintf("NodeData[%q]", key), t); err != nil {
			return nil, nil, nil, err
		}
		if rows := ty.NodeTypes[nt].NumNodes; len(t.Shape) == 0 || t.Shape[0] != rows {
			return nil, nil, nil, fmt.Errorf("dataset: NodeData[%q] has shape %v, want %d rows (one per node of type %q)", key, t.Shape, rows, ty.NodeTypes[nt].Name)
		}
		typed = append(typed, typedArray{key, nt, name, t})
	}
	sort.Slice(typed, func(i, j int) bool { return typed[i].key < typed[j].key })
	// Labels and masks per type are checked like the global ones.
	for _, a := range typed {
		if err := checkNodeValues(map[string]mem.Tensor{a.name: a.t}, meta.NumClasses); err != nil {
			return nil, nil, nil, fmt.Errorf("dataset: NodeData[%q]: %w", a.key, err)
		}
	}
	return ty, global, typed, nil
}

// edgeRows returns the rows of edges.arrow: in CSC order (order nil), or in
// edge-id order when byID (order[id] = CSC position; the edge ids must be
// exactly 0..E-1).
func edgeRows(g *graph.CSC, byID bool) (src, dst []int64, weights []float32, order []int64, err error) {
	e := g.NumEdges()
	src, dst = make([]int64, e), make([]int64, e)
	if !byID {
		for v := range g.NumNodes {
			row := dst[g.Indptr[v]:g.Indptr[v+1]]
			for i := range row {
				row[i] = v
			}
		}
		g.CopySources(src, 0, e)
		return src, dst, g.Weights, nil, nil
	}
	order = make([]int64, e)
	for i := range order {
		order[i] = -1
	}
	if g.Weights != nil {
		weights = make([]float32, e)
	}
	for v := range g.NumNodes {
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			id := g.EdgeID(p)
			if id < 0 || id >= e || order[id] >= 0 {
				return nil, nil, nil, nil, fmt.Errorf("dataset: a typed graph's edge ids must be 0..%d each once (edge id %d at node %d)", e-1, id, v)
			}
			order[id] = p
			src[id], dst[id] = g.Source(p), v
			if weights != nil {
				weights[id] = g.Weights[p]
			}
		}
	}
	return src, dst, weights, order, nil
}

// safeFilePart matches names that can appear in a file name as they are.
var safeFilePart = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// arrayFile names the raw file of an array: "<prefix>.<name>.bin" when the
// parts are plain, "<prefix>.<i>.bin" otherwise (names are free text).
func arrayFile(prefix, name string, i int) string {
	if safeFilePart.MatchString(prefix) && safeFilePart.MatchString(name) && name != "." && name != ".." {
		return prefix + "." + name + ".bin"
	}
	return fmt.Sprintf("%s.%d.bin", prefix, i)
}

// writeArrays writes the per-type node arrays ("node.<type>.<name>.bin")
// and the edge arrays ("edge.<name>.bin", rows reordered by order when the
// edges were written in CSC order) and records them in meta. It returns
// the file names.
func writeArrays(dir string, d *Dataset, ty *fileformat.Types, typed []typedArray, order []int64, meta *Meta) ([]string, error) {
	var files []string
	for i, a := range typed {
		prefix := "node." + ty.NodeTypes[a.nodeType].Name
		if !safeFilePart.MatchString(ty.NodeTypes[a.nodeType].Name) {
			prefix = fmt.Sprintf("node.t%d", a.nodeType)
		}
		file := arrayFile(prefix, a.name, i)
		if err := fileio.WriteFile(filepath.Join(dir, file), a.t.Data); err != nil {
			return nil, err
		}
		meta.NodeArrays = append(meta.NodeArrays, ArrayMeta{Name: a.name, NodeType: ty.NodeTypes[a.nodeType].Name,
			File: file, DType: a.t.DType.String(), Shape: slices.Clone(a.t.Shape)})
		files = append(files, file)
	}
	names := make([]string, 0, len(d.EdgeData))
	for name := range d.EdgeData {
		names = append(names, name)
	}
	sort.Strings(names)
	e := d.Graph.NumEdges()
	for i, name := range names {
		t := d.EdgeData[name]
		if err := feature.CheckName(name); err != nil {
			return nil, fmt.Errorf("dataset: EdgeData[%q]: %w", name, err)
		}
		if err := fileio.CheckTensor(fmt.Sprintf("EdgeData[%q]", name), t); err != nil {
			return nil, err
		}
		if len(t.Shape) == 0 || t.Shape[0] != e {
			return nil, fmt.Errorf("dataset: EdgeData[%q] has shape %v, want %d rows (one per edge)", name, t.Shape, e)
		}
		if name == TimeKey && (t.DType != mem.Int64 || len(t.Shape) != 1) {
			return nil, fmt.Errorf("dataset: EdgeData[%q] is %v%v, want 1-D int64", name, t.DType, t.Shape)
		}
		data := t.Data
		if order == nil && d.Graph.EdgeIDs != nil {
			// Written in CSC order: row p of the file is the edge whose id
			// was EdgeIDs[p].
			data = make([]byte, len(t.Data))
			if err := feature.Gather(data, t, d.Graph.EdgeIDs, 0); err != nil {
				return nil, fmt.Errorf("dataset: EdgeData[%q]: %w", name, err)
			}
		}
		file := arrayFile("edge", name, i)
		if err := fileio.WriteFile(filepath.Join(dir, file), data); err != nil {
			return nil, err
		}
		meta.EdgeArrays = append(meta.EdgeArrays, ArrayMeta{Name: name, File: file, DType: t.DType.String(), Shape: slices.Clone(t.Shape)})
		files = append(files, file)
	}
	if t, ok := d.NodeData[TimeKey]; ok && (t.DType != mem.Int64 || len(t.Shape) != 1) {
		return nil, fmt.Errorf("dataset: NodeData[%q] is %v%v, want 1-D int64 node timestamps", TimeKey, t.DType, t.Shape)
	}
	return files, nil
}

// pendingArray is an array file checked against graphferry.json, to be
// mapped once the graph is read.
type pendingArray struct {
	key  string
	edge bool
	path string
	t    mem.Tensor
	meta ArrayMeta
}

// checkArrays checks the typed metadata and the array entries of
// graphferry.json against the counts and the files' sizes, before anything
// is read. It returns the types (nil for a homogeneous dataset) and the
// arrays to map.
func (d *Dataset) checkArrays(dir string) (*fileformat.Types, []pendingArray, error) {
	m := &d.Meta
	ty, err := d.Types()
	if err != nil {
		return nil, nil, err
	}
	if ty != nil {
		if ty.NumNodes() != m.NumNodes {
			return nil, nil, fmt.Errorf("dataset: %s: node_types count %d nodes in all, num_nodes=%d", MetaFile, ty.NumNodes(), m.NumNodes)
		}
		if ty.NumEdges() != m.NumEdges {
			return nil, nil, fmt.Errorf("dataset: %s: edge_types count %d edges in all, num_edges=%d", MetaFile, ty.NumEdges(), m.NumEdges)
		}
	} else if len(m.NodeArrays) > 0 {
		return nil, nil, fmt.Errorf("dataset: %s: node_data needs node_types", MetaFile)
	}
	var out []pendingArray
	seen := map[string]bool{}
	check := func(field string, i int, a ArrayMeta, edge bool) error {
		where := fmt.Sprintf("%s: %s[%d]", MetaFile, field, i)
		if err := feature.CheckName(a.Name); err != nil {
			return fmt.Errorf("dataset: %s.name: %w", where, err)
		}
		key, rows := a.Name, m.NumEdges
		if !edge {
			nt := ty.NodeTypeIndex(a.NodeType)
			if nt < 0 {
				return fmt.Errorf("dataset: %s.node_type = %q is not a node type (have %s)", where, a.NodeType, fileformat.NodeTypeNames(ty.NodeTypes))
			}
			key, rows = a.NodeType+fileformat.TypeSep+a.Name, ty.NodeTypes[nt].NumNodes
		} else if a.NodeType != "" {
			return fmt.Errorf("dataset: %s.node_type = %q: edge arrays have one row per edge", where, a.NodeType)
		}
		if seen[fmt.Sprint(edge, key)] {
			return fmt.Errorf("dataset: %s: %q appears twice", where, key)
		}
		seen[fmt.Sprint(edge, key)] = true
		dt, err := mem.ParseDType(a.DType)
		if err != nil {
			return fmt.Errorf("dataset: %s.dtype: %w", where, err)
		}
		if len(a.Shape) == 0 || a.Shape[0] != rows {
			return fmt.Errorf("dataset: %s.shape %v must start with %d rows", where, a.Shape, rows)
		}
		if edge && a.Name == TimeKey && (dt != mem.Int64 || len(a.Shape) != 1) {
			return fmt.Errorf("dataset: %s: edge %q is %v%v, want 1-D int64", where, TimeKey, dt, a.Shape)
		}
		path, err := fileio.Confine(dir, field+" file", a.File)
		if err != nil {
			return err
		}
		t := mem.Tensor{DType: dt, Shape: slices.Clone(a.Shape)}
		want, err := fileio.TensorBytes(t)
		if err != nil {
			return fmt.Errorf("dataset: %s: %w", where, err)
		}
		fh, st, err := fileio.OpenRegular(path)
		if err != nil {
			return err
		}
		fh.Close()
		if st.Size() != want {
			return fmt.Errorf("dataset: %s has %d bytes, shape %v of %v needs %d", path, st.Size(), a.Shape, dt, want)
		}
		out = append(out, pendingArray{key: key, edge: edge, path: path, t: t, meta: a})
		return nil
	}
	for i, a := range m.NodeArrays {
		if err := check("node_data", i, a, false); err != nil {
			return nil, nil, err
		}
	}
	for i, a := range m.EdgeArrays {
		if err := check("edge_data", i, a, true); err != nil {
			return nil, nil, err
		}
	}
	return ty, out, nil
}

// openTyped finishes opening: it checks the graph against the types, maps
// the arrays (per-type node data into NodeData, edge arrays into EdgeData)
// and checks per-type labels and masks and the node timestamps' type.
func (d *Dataset) openTyped(ty *fileformat.Types, arrays []pendingArray) error {
	if ty != nil {
		if err := ty.CheckGraph(d.Graph); err != nil {
			return fmt.Errorf("dataset: %s does not match %s's types: %w", EdgesFile, MetaFile, err)
		}
	}
	if t, ok := d.NodeData[TimeKey]; ok && (t.DType != mem.Int64 || len(t.Shape) != 1) {
		return fmt.Errorf("dataset: %s: column %q is %v%v, want 1-D int64 node timestamps", NodesFile, TimeKey, t.DType, t.Shape)
	}
	if d.EdgeData == nil {
		d.EdgeData = map[string]mem.Tensor{}
	}
	for _, a := range arrays {
		data, release, err := fileio.MapFile(a.path)
		if err != nil {
			return err
		}
		t := a.t
		t.Data = data
		if err := fileio.CheckTensor(a.path, t); err == nil {
			err = d.attachBlocks(a.path, data)
		}
		if err != nil {
			release()
			return err
		}
		d.releases = append(d.releases, release)
		if a.edge {
			d.EdgeData[a.key] = t
			d.mappedEdges = append(d.mappedEdges, a.key)
			continue
		}
		if _, dup := d.NodeData[a.key]; dup {
			return fmt.Errorf("dataset: %s: node data %q is both a column of %s and a node_data entry", MetaFile, a.key, NodesFile)
		}
		d.NodeData[a.key] = t
		d.mapped = append(d.mapped, a.key)
		err = fileformat.CatchPanic(func() error {
			return checkNodeValues(map[string]mem.Tensor{a.meta.Name: t}, d.Meta.NumClasses)
		})
		if err != nil {
			return fmt.Errorf("dataset: %s: %w", a.path, err)
		}
	}
	return nil
}

package core

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// The typed model: a typed Graph's types (offsets, graph.Types) and their
// names (node types; relations as (src, rel, dst) triples), and node data
// per node type, keyed "<type>/<name>" with the type named exactly.

// SetDatasetTypes sets a typed topology with its names (read from a
// dataset, a typed edge table or the caller's JSON) on g (see SetTypes).
func SetDatasetTypes(g *Graph, ty *fileformat.Types) error {
	return g.setTypes(offsetsOf(ty), ty)
}

func offsetsOf(ty *fileformat.Types) graph.Types {
	return graph.Types{NodeOffsets: ty.NodeOffsets, EdgeOffsets: ty.EdgeOffsets, RelSrc: ty.RelSrc, RelDst: ty.RelDst}
}

// indexNamed names the types t (checked against the graph) by their
// indices in decimal: node type i "i", relation r ("<src>", "r", "<dst>").
func indexNamed(t *graph.Types) (*fileformat.Types, error) {
	nts := make([]fileformat.NodeType, t.NumNodeTypes())
	for i := range nts {
		nts[i] = fileformat.NodeType{Name: strconv.Itoa(i), NumNodes: t.NodeOffsets[i+1] - t.NodeOffsets[i]}
	}
	ets := make([]fileformat.EdgeType, t.NumRelations())
	for r := range ets {
		ets[r] = fileformat.EdgeType{Src: nts[t.RelSrc[r]].Name, Rel: strconv.Itoa(r), Dst: nts[t.RelDst[r]].Name,
			NumEdges: t.EdgeOffsets[r+1] - t.EdgeOffsets[r]}
	}
	return fileformat.ParseTypes(nts, ets)
}

// perTypeData returns the name of some per-type node data g holds. Callers
// hold mu.
func (g *Graph) perTypeData() (string, bool) {
	for _, name := range g.store.Names() {
		if g.store.IsLocal(name) {
			return name, true
		}
	}
	return "", false
}

// NamedTypes returns a copy of g's types with their names (nil when g is
// untyped): the node types with their counts and the relations as (src,
// rel, dst) triples with theirs, as a typed dataset's graphferry.json
// lists them (fileformat.TypesJSON).
func (g *Graph) NamedTypes() *fileformat.Types {
	g.mu.RLock()
	defer g.mu.RUnlock()
	n := g.typed.names
	if n == nil {
		return nil
	}
	return &fileformat.Types{
		NodeTypes: slices.Clone(n.NodeTypes), EdgeTypes: slices.Clone(n.EdgeTypes),
		NodeOffsets: slices.Clone(n.NodeOffsets), EdgeOffsets: slices.Clone(n.EdgeOffsets),
		RelSrc: slices.Clone(n.RelSrc), RelDst: slices.Clone(n.RelDst),
	}
}

// times copies int64 timestamps out of t, which may map a file (a fault
// reading it is an error, not a crash).
func times(t mem.Tensor, what string) ([]int64, error) {
	if t.DType != mem.Int64 || len(t.Shape) != 1 {
		return nil, errorf(nil, "%s times are %v%v, want 1-D int64", what, t.DType, t.Shape)
	}
	buf := make([]byte, len(t.Data))
	if err := feature.Copy(buf, t.Data); err != nil {
		return nil, err
	}
	return mem.Int64s(buf), nil
}

// openDataset sets what a dataset carries beside its node data on a Graph
// opened from it: its types with their names, and its node and edge
// timestamps ("time"). It runs before the node data is registered, so that
// the per-type arrays find their types.
func (g *Graph) openDataset(ds *dataset.Dataset) error {
	ty, err := ds.Types()
	if err != nil {
		return err
	}
	if ty != nil {
		if err := SetDatasetTypes(g, ty); err != nil {
			return err
		}
	}
	if t, ok := ds.NodeData[dataset.TimeKey]; ok {
		ts, err := times(t, "node")
		if err != nil {
			return err
		}
		if err := g.SetNodeTime(ts); err != nil {
			return err
		}
	}
	if t, ok := ds.EdgeData[dataset.TimeKey]; ok {
		ts, err := times(t, "edge")
		if err != nil {
			return err
		}
		if err := g.SetEdgeTime(ts); err != nil {
			return err
		}
	}
	return nil
}

// nodeType returns the node type of per-type node data name, "<type>/<x>"
// whose <type> names one of g's node types exactly; ok is false for other
// names (and on an untyped g). Callers hold mu, or g is not shared yet.
func (g *Graph) nodeType(name string) (t int, ok bool) {
	if g.typed.names == nil {
		return 0, false
	}
	t, _, ok = g.typed.names.SplitName(name)
	return t, ok
}

// localNodeData reports whether t, whose row count is not the graph's
// node count, is per-node-type data: a name "<type>/<name>" whose type is
// one of g's node types, with one row per node of that type. When it is
// not, hint says what a per-type name needs (for the error message).
func (g *Graph) localNodeData(name string, t mem.Tensor) (local bool, hint string) {
	n := g.typed.names
	if n == nil {
		return false, ""
	}
	if i, ok := g.nodeType(name); ok {
		nt := n.NodeTypes[i]
		return nt.NumNodes == t.Shape[0], fmt.Sprintf(", or one per node of type %q (%d)", nt.Name, nt.NumNodes)
	}
	return false, fmt.Sprintf(", or, for per-type data \"<type>/<name>\", one per node of its type (node types %s)", fileformat.NodeTypeNames(n.NodeTypes))
}

// nodeDataTypes returns the per-type node data of a typed g (nil for an
// untyped one) by name, with its node type (named in the data's name),
// which a loader gathers for the batch's nodes of that type
// (pipeline.Options.NodeDataTypes). Callers hold mu.
func (g *Graph) nodeDataTypes() map[string]int {
	if g.typed.types == nil {
		return nil
	}
	out := map[string]int{}
	for _, name := range g.store.Names() {
		if !g.store.IsLocal(name) {
			continue
		}
		if nt, ok := g.nodeType(name); ok {
			out[name] = nt
		}
	}
	return out
}

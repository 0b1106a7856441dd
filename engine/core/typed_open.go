package core

import (
	"fmt"
	"strings"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// Typed datasets and per-node-type node data (see dataset's typed layout).

// SetDatasetTypes sets a typed topology read from a dataset or a typed edge
// table on g (see SetTypes).
func SetDatasetTypes(g *Graph, ty *fileformat.Types) error {
	return g.SetTypes(graph.Types{NodeOffsets: ty.NodeOffsets, EdgeOffsets: ty.EdgeOffsets, RelSrc: ty.RelSrc, RelDst: ty.RelDst})
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
// opened from it: its types, and its node and edge timestamps ("time").
// It runs before the node data is registered, so that the per-type arrays
// find the types.
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

// localNodeData reports whether t, whose row count is not the graph's
// node count, is per-node-type data: a name "<type>/<name>" with one row
// per node of that type. On a Graph opened from a typed dataset the type
// is found by name; on another typed Graph (whose types have no names in
// the engine) any type with that many nodes will do. When it is not, hint
// says what a per-type name needs (for the error message).
func (g *Graph) localNodeData(name string, t mem.Tensor) (local bool, hint string) {
	if !strings.Contains(name, fileformat.TypeSep) {
		return false, ""
	}
	rows := t.Shape[0]
	if g.ds != nil {
		if ty, err := g.ds.Types(); err == nil && ty != nil {
			if i, _, ok := ty.SplitName(name); ok {
				nt := ty.NodeTypes[i]
				return nt.NumNodes == rows, fmt.Sprintf(", or one per node of type %q (%d)", nt.Name, nt.NumNodes)
			}
		}
	}
	var offs []int64
	if ty := g.typed.types; ty != nil { // the caller holds mu, or g is not shared yet
		offs = ty.NodeOffsets
	}
	for i := 0; i+1 < len(offs); i++ {
		if offs[i+1]-offs[i] == rows {
			return true, ""
		}
	}
	if len(offs) > 1 {
		return false, fmt.Sprintf(", or, for per-type data \"<type>/<name>\", one per node of its type (node type offsets %v)", offs)
	}
	return false, ""
}

// nodeDataTypes returns the per-type node data of a typed g (nil for an
// untyped one) by name, with its node type, which a loader gathers for the
// batch's nodes of that type (pipeline.Options.NodeDataTypes). A name's
// type is found as localNodeData finds it: by name on a Graph opened from
// a typed dataset, else the one type with as many nodes as the data has
// rows; data whose type is ambiguous (several types of that size) is left
// out, and a loader asking for it is refused. Callers hold mu.
func (g *Graph) nodeDataTypes() map[string]int {
	ty := g.typed.types
	if ty == nil {
		return nil
	}
	var named *fileformat.Types
	if g.ds != nil {
		if t, err := g.ds.Types(); err == nil {
			named = t
		}
	}
	out := map[string]int{}
	for _, name := range g.store.Names() {
		if !g.store.IsLocal(name) {
			continue
		}
		src, ok := g.store.Get(name)
		if !ok || len(src.Shape) == 0 {
			continue
		}
		if nt := localType(named, ty.NodeOffsets, name, src.Shape[0]); nt >= 0 {
			out[name] = nt
		}
	}
	return out
}

// localType returns the node type of per-type data name with rows rows:
// by name among named's types (when not nil), else the one type of offs
// with that many nodes; -1 when there is none or several.
func localType(named *fileformat.Types, offs []int64, name string, rows int64) int {
	if named != nil {
		if i, _, ok := named.SplitName(name); ok && named.NodeTypes[i].NumNodes == rows {
			return i
		}
		return -1
	}
	found := -1
	for i := 0; i+1 < len(offs); i++ {
		if offs[i+1]-offs[i] != rows {
			continue
		}
		if found >= 0 {
			return -1
		}
		found = i
	}
	return found
}

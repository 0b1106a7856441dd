package fileformat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/internal/par"
)

// The typed layout. A typed dataset is a homogeneous one (edges.arrow,
// nodes.arrow, an optional feat.bin) over one global id space, plus:
//
//   - "node_types" in graphferry.json: node type t owns the global node ids
//     after those of the types before it;
//   - "edge_types": relation r owns the global edge ids after those of the
//     relations before it, so edges.arrow stores the edges relation by
//     relation (edge id = row, as always); every in-neighbour list of the
//     graph then holds its edges grouped by relation, in relation order;
//   - "node_data": raw files of per-type arrays, one row per node of the
//     type in type-local order, read as node data "<type>/<name>";
//   - "edge_data": raw files of per-edge arrays, one row per edge id
//     ("time": int64 edge timestamps);
//   - the node column "time" (int64, by global id): node timestamps.
//
// That is DGL's to_homogeneous numbering: the type of a node or an edge is
// an offset lookup, with no per-edge type array. Every file is listed in
// "files" with its size and CRC-32C like the others.

// NodeType is one entry of graphferry.json's "node_types": a node type and
// its node count. The types own consecutive global node ids in list order.
type NodeType struct {
	Name     string `json:"name"`
	NumNodes int64  `json:"num_nodes"`
}

// EdgeType is one entry of graphferry.json's "edge_types": a relation
// (src, rel, dst) and its edge count. The relations own consecutive global
// edge ids in list order; every edge of a relation goes from a node of
// type src to a node of type dst.
type EdgeType struct {
	Src      string `json:"src"`
	Rel      string `json:"rel"`
	Dst      string `json:"dst"`
	NumEdges int64  `json:"num_edges"`
}

// TypeSep separates a node type from a name in the node-data names of
// per-type arrays ("paper/feat"). Node type names cannot contain it.
const TypeSep = "/"

// maxTypes bounds the number of node types and relations (a metadata
// file of a few bytes per type cannot make the reader allocate much).
const maxTypes = 1 << 20

// Types is a typed topology in the offsets form the engine uses (see
// core.Graph's SetTypes): node type t owns the global node ids
// [NodeOffsets[t], NodeOffsets[t+1]) and relation r the global edge ids
// [EdgeOffsets[r], EdgeOffsets[r+1]), from nodes of type RelSrc[r] to
// nodes of type RelDst[r].
type Types struct {
	NodeTypes   []NodeType
	EdgeTypes   []EdgeType
	NodeOffsets []int64 // [len(NodeTypes)+1]
	EdgeOffsets []int64 // [len(EdgeTypes)+1]
	RelSrc      []int32 // [len(EdgeTypes)]
	RelDst      []int32 // [len(EdgeTypes)]
}

// checkTypeName checks a node type or relation name: not empty, no NUL or
// newline (names travel as lines and C strings), and for node types no
// TypeSep (it splits "type/name" node-data names).
func checkTypeName(field string, i int, name string, nodeType bool) error {
	if name == "" {
		return fmt.Errorf("%s[%d] is empty", field, i)
	}
	if strings.ContainsAny(name, "\n\x00") {
		return fmt.Errorf("%s[%d] = %q holds a newline or NUL", field, i, name)
	}
	if nodeType && strings.Contains(name, TypeSep) {
		return fmt.Errorf("%s[%d] = %q holds %q (it separates node types from names in \"type/name\")", field, i, name, TypeSep)
	}
	return nil
}

// ParseTypes checks node types and relations and returns their offsets.
// Names must be unique (relations by their (src, rel, dst) triple), src and
// dst must name node types, counts must be >= 0 and their sums must fit.
// There must be at least one of each. Errors name the field
// ("node_types[2].name", "edge_types[0].dst", ...).
func ParseTypes(nodeTypes []NodeType, edgeTypes []EdgeType) (*Types, error) {
	if len(nodeTypes) == 0 {
		return nil, errors.New("node_types is empty (a typed graph has at least one node type)")
	}
	if len(edgeTypes) == 0 {
		return nil, errors.New("edge_types is empty (a typed graph has at least one relation)")
	}
	if len(nodeTypes) > maxTypes || len(edgeTypes) > maxTypes {
		return nil, fmt.Errorf("%d node types and %d edge types: at most %d of each", len(nodeTypes), len(edgeTypes), maxTypes)
	}
	ty := &Types{
		NodeTypes: append([]NodeType(nil), nodeTypes...), EdgeTypes: append([]EdgeType(nil), edgeTypes...),
		NodeOffsets: make([]int64, len(nodeTypes)+1), EdgeOffsets: make([]int64, len(edgeTypes)+1),
		RelSrc: make([]int32, len(edgeTypes)), RelDst: make([]int32, len(edgeTypes)),
	}
	index := map[string]int32{}
	for i, nt := range nodeTypes {
		if err := checkTypeName("node_types", i, nt.Name, true); err != nil {
			return nil, fmt.Errorf("%w (node_types[%d].name)", err, i)
		}
		if _, dup := index[nt.Name]; dup {
			return nil, fmt.Errorf("node_types[%d].name = %q appears twice", i, nt.Name)
		}
		index[nt.Name] = int32(i)
		if nt.NumNodes < 0 || nt.NumNodes > graph.MaxNodes-ty.NodeOffsets[i] {
			return nil, fmt.Errorf("node_types[%d].num_nodes = %d must be >= 0 and the total at most %d", i, nt.NumNodes, int64(graph.MaxNodes))
		}
		ty.NodeOffsets[i+1] = ty.NodeOffsets[i] + nt.NumNodes
	}
	seen := map[[3]string]int{}
	for r, et := range edgeTypes {
		for _, f := range []struct {
			name, v string
			node    bool
		}{{"src", et.Src, true}, {"rel", et.Rel, false}, {"dst", et.Dst, true}} {
			if err := checkTypeName("edge_types", r, f.v, f.node); err != nil {
				return nil, fmt.Errorf("%w (edge_types[%d].%s)", err, r, f.name)
			}
		}
		s, ok := index[et.Src]
		if !ok {
			return nil, fmt.Errorf("edge_types[%d].src = %q is not a node type (have %s)", r, et.Src, NodeTypeNames(nodeTypes))
		}
		d, ok := index[et.Dst]
		if !ok {
			return nil, fmt.Errorf("edge_types[%d].dst = %q is not a node type (have %s)", r, et.Dst, NodeTypeNames(nodeTypes))
		}
		key := [3]string{et.Src, et.Rel, et.Dst}
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("edge_types[%d] = (%q, %q, %q) repeats edge_types[%d]", r, et.Src, et.Rel, et.Dst, j)
		}
		seen[key] = r
		if et.NumEdges < 0 || et.NumEdges > math.MaxInt64/2-ty.EdgeOffsets[r] {
			return nil, fmt.Errorf("edge_types[%d].num_edges = %d must be >= 0 (and the total must fit)", r, et.NumEdges)
		}
		ty.RelSrc[r], ty.RelDst[r] = s, d
		ty.EdgeOffsets[r+1] = ty.EdgeOffsets[r] + et.NumEdges
	}
	return ty, nil
}

// NodeTypeNames lists the names of node types, quoted, for messages.
func NodeTypeNames(nts []NodeType) string {
	names := make([]string, len(nts))
	for i, nt := range nts {
		names[i] = fmt.Sprintf("%q", nt.Name)
	}
	return strings.Join(names, ", ")
}

// TypesJSON is the JSON form of a typed topology's metadata, the same
// fields as graphferry.json's: {"node_types": [...], "edge_types": [...]}.
// Typed Arrow edge tables carry it in their schema metadata (TypesMetaKey).
type TypesJSON struct {
	NodeTypes []NodeType `json:"node_types"`
	EdgeTypes []EdgeType `json:"edge_types"`
}

// ParseTypesJSON parses and checks TypesJSON (see ParseTypes). Unknown
// fields are refused, so that a misspelt key is not silently ignored.
func ParseTypesJSON(raw []byte) (*Types, error) {
	if len(raw) > fileio.MaxMetaBytes {
		return nil, fmt.Errorf("type metadata is %d bytes, more than %d", len(raw), fileio.MaxMetaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var tj TypesJSON
	if err := dec.Decode(&tj); err != nil {
		return nil, fmt.Errorf("type metadata: %w", err)
	}
	if dec.More() {
		return nil, errors.New("type metadata: more than one JSON value")
	}
	return ParseTypes(tj.NodeTypes, tj.EdgeTypes)
}

// CheckTypeFields checks the fields of the "node_types" and "edge_types"
// entries of a JSON object raw (graphferry.json, TypesJSON) before they are
// decoded, naming the entry and the field: each entry an object, its names
// strings, its count an integer >= 0 (what ParseTypes checks of the values,
// it names). Other JSON errors are left to the decoder.
func CheckTypeFields(raw []byte) error {
	var lists struct {
		NodeTypes json.RawMessage `json:"node_types"`
		EdgeTypes json.RawMessage `json:"edge_types"`
	}
	if json.Unmarshal(raw, &lists) != nil {
		return nil
	}
	for _, l := range []struct {
		key, count string
		raw        json.RawMessage
		names      []string
	}{{"node_types", "num_nodes", lists.NodeTypes, []string{"name"}}, {"edge_types", "num_edges", lists.EdgeTypes, []string{"src", "rel", "dst"}}} {
		if len(l.raw) == 0 || string(l.raw) == "null" {
			continue
		}
		var entries []json.RawMessage
		if json.Unmarshal(l.raw, &entries) != nil {
			return fmt.Errorf("%s must be a list (got %s)", l.key, l.raw)
		}
		for i, e := range entries {
			var fields map[string]json.RawMessage
			if json.Unmarshal(e, &fields) != nil || fields == nil {
				return fmt.Errorf("%s[%d] must be an object (got %s)", l.key, i, e)
			}
			for _, f := range append(slices.Clone(l.names), l.count) {
				if _, ok := fields[f]; !ok {
					return fmt.Errorf("%s[%d] has no '%s'", l.key, i, f)
				}
			}
			for _, f := range l.names {
				var v string
				if json.Unmarshal(fields[f], &v) != nil { // "" is ParseTypes' to name
					return fmt.Errorf("%s[%d].%s must be a non-empty string (got %s)", l.key, i, f, fields[f])
				}
			}
			var n int64
			if json.Unmarshal(fields[l.count], &n) != nil || n < 0 {
				return fmt.Errorf("%s[%d].%s must be an integer >= 0: %s[%d].%s = %s", l.key, i, l.count, l.key, i, l.count, fields[l.count])
			}
		}
	}
	return nil
}

// NumNodes returns the number of nodes of all types.
func (ty *Types) NumNodes() int64 { return ty.NodeOffsets[len(ty.NodeTypes)] }

// NumEdges returns the number of edges of all relations.
func (ty *Types) NumEdges() int64 { return ty.EdgeOffsets[len(ty.EdgeTypes)] }

// NodeTypeIndex returns the index of the node type name, or -1.
func (ty *Types) NodeTypeIndex(name string) int {
	for i, nt := range ty.NodeTypes {
		if nt.Name == name {
			return i
		}
	}
	return -1
}

// RelationIndex returns the index of the relation named rel, given either
// as "src:rel:dst" or as the bare relation name when only one relation has
// it; -1 when none (or several) match.
func (ty *Types) RelationIndex(rel string) int {
	found := -1
	for r, et := range ty.EdgeTypes {
		if et.Src+":"+et.Rel+":"+et.Dst == rel {
			return r
		}
		if et.Rel == rel {
			if found >= 0 {
				found = -2
			} else if found == -1 {
				found = r
			}
		}
	}
	return max(found, -1)
}

// typeOf returns the index i with offsets[i] <= id < offsets[i+1].
func typeOf(offsets []int64, id int64) int {
	return sort.Search(len(offsets)-1, func(i int) bool { return offsets[i+1] > id })
}

// SplitName splits a per-type node-data name "type/name" whose type is
// one of ty's node types; ok is false for a global name.
func (ty *Types) SplitName(key string) (nodeType int, name string, ok bool) {
	t, n, found := strings.Cut(key, TypeSep)
	if !found {
		return 0, "", false
	}
	i := ty.NodeTypeIndex(t)
	if i < 0 {
		return 0, "", false
	}
	return i, n, true
}

// CheckGraph checks g against the types: NumNodes and NumEdges equal the
// sums of the counts, every edge id is in [0, NumEdges), every edge's
// source and destination have the node types of its relation, and within
// every in-neighbour list the edges are grouped by relation in increasing
// relation order (the layout the engine's per-relation sampling needs).
// The error names the first bad node (lowest id).
func (ty *Types) CheckGraph(g *graph.CSC) error {
	if g.NumNodes != ty.NumNodes() {
		return fmt.Errorf("node_types count %d nodes in all, the graph has %d", ty.NumNodes(), g.NumNodes)
	}
	if g.NumEdges() != ty.NumEdges() {
		return fmt.Errorf("edge_types count %d edges in all, the graph has %d", ty.NumEdges(), g.NumEdges())
	}
	e := ty.NumEdges()
	return par.ForErr(g.NumNodes, 1<<12, 0, func(lo, hi int64) error {
		for v := lo; v < hi; v++ {
			vt := int32(typeOf(ty.NodeOffsets, v))
			prev := -1
			for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
				id := g.EdgeID(p)
				if id < 0 || id >= e {
					return fmt.Errorf("node %d: edge id %d is outside [0, %d)", v, id, e)
				}
				r := typeOf(ty.EdgeOffsets, id)
				et := ty.EdgeTypes[r]
				if ty.RelDst[r] != vt {
					return fmt.Errorf("edge %d (relation %d, (%q, %q, %q)) ends at node %d of type %q", id, r, et.Src, et.Rel, et.Dst, v, ty.NodeTypes[vt].Name)
				}
				u := g.Source(p)
				if ut := int32(typeOf(ty.NodeOffsets, u)); ut != ty.RelSrc[r] {
					return fmt.Errorf("edge %d (relation %d, (%q, %q, %q)) starts at node %d of type %q", id, r, et.Src, et.Rel, et.Dst, u, ty.NodeTypes[ut].Name)
				}
				if r < prev {
					return fmt.Errorf("node %d: its in-edges are not grouped by relation (edge %d of relation %d after one of relation %d)", v, id, r, prev)
				}
				prev = r
			}
		}
		return nil
	})
}

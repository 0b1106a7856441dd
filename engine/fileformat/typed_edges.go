package fileformat

import (
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v14/arrow"
	"github.com/apache/arrow/go/v14/arrow/array"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
)

// Typed edge tables.
//
// A typed edge table is an edge table (columns src, dst, optional weight)
// whose src and dst are type-local node ids, with a column "etype" naming
// each row's relation, and the node types and relations as TypesJSON,
// either in the schema's metadata under TypesMetaKey or given by the
// caller. The etype column is either an integer column (relation index in
// edge_types) or a dictionary-encoded string column (what pandas' and
// pyarrow's categoricals write) whose values name relations as
// "src:rel:dst" (GraphBolt's spelling) or by the bare rel when only one
// relation has it. Rows may come in any order: the graph numbers the edges
// relation by relation, keeping the file order within a relation (edge id
// of a row = edge_offsets[its relation] + its rank among its relation's
// rows). The metadata is what makes the file self-describing (one file
// carries the whole typed graph, the way graphferry.json describes a
// dataset directory), and the same JSON as graphferry.json's keeps one
// parser for both.

// TypesMetaKey is the schema metadata key holding a typed edge table's
// TypesJSON.
const TypesMetaKey = "graphferry.types"

// colEtype is the relation column of a typed edge table.
const colEtype = "etype"

// ReadTypedEdgeTable reads a typed edge table from an Arrow IPC file and
// builds its graph. typesJSON, when not nil, replaces the file's metadata.
// The returned Types have the edge counts of the table.
func ReadTypedEdgeTable(path string, typesJSON []byte) (*graph.CSC, *Types, error) {
	recs, err := ReadIPCFile(path, nil)
	if err != nil {
		return nil, nil, err
	}
	defer ReleaseAll(recs)
	g, ty, err := TypedEdgesFromRecords(recs, typesJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %s: %w", path, err)
	}
	return g, ty, nil
}

// TypedEdgesFromRecords builds a typed graph from the record batches of a
// typed edge table (see ReadTypedEdgeTable). The records are not released.
func TypedEdgesFromRecords(recs []arrow.Record, typesJSON []byte) (*graph.CSC, *Types, error) {
	if len(recs) == 0 {
		return nil, nil, errors.New("typed edge table has no record batches")
	}
	if typesJSON == nil {
		md := recs[0].Schema().Metadata()
		i := md.FindKey(TypesMetaKey)
		if i < 0 {
			return nil, nil, fmt.Errorf("typed edge table: its schema has no %q metadata and no types were given", TypesMetaKey)
		}
		typesJSON = []byte(md.Values()[i])
	}
	ty, err := ParseTypesJSON(typesJSON)
	if err != nil {
		return nil, nil, err
	}
	src, dst, w, err := gatherEdges(recs)
	if err != nil {
		return nil, nil, err
	}
	rel := make([]int32, len(src))
	var row int64
	for bi, r := range recs {
		if err := CatchPanic(func() error { return relationColumn(r, bi, ty, rel[row:row+r.NumRows()]) }); err != nil {
			return nil, nil, err
		}
		row += r.NumRows()
	}
	// A counting sort by relation, stable: the file order within each.
	counts := make([]int64, len(ty.EdgeTypes))
	for _, r := range rel {
		counts[r]++
	}
	srcs, dsts := make([][]int64, len(counts)), make([][]int64, len(counts))
	var ws [][]float32
	if w != nil {
		ws = make([][]float32, len(counts))
	}
	for r, c := range counts {
		srcs[r], dsts[r] = make([]int64, 0, c), make([]int64, 0, c)
		if w != nil {
			ws[r] = make([]float32, 0, c)
		}
	}
	for i, r := range rel {
		srcs[r] = append(srcs[r], src[i])
		dsts[r] = append(dsts[r], dst[i])
		if w != nil {
			ws[r] = append(ws[r], w[i])
		}
	}
	src, dst, w = nil, nil, nil // let the collector have them during the build
	for r, et := range ty.EdgeTypes {
		if et.NumEdges != 0 && et.NumEdges != counts[r] {
			return nil, nil, fmt.Errorf("edge_types[%d].num_edges = %d, but the table has %d rows of relation (%q, %q, %q)", r, et.NumEdges, counts[r], et.Src, et.Rel, et.Dst)
		}
	}
	return TypedCOO(ty, srcs, dsts, ws, 0)
}

// relationColumn reads the etype column of record r (batch bi) into out,
// as relation indices of ty.
func relationColumn(r arrow.Record, bi int, ty *Types, out []int32) error {
	idx := r.Schema().FieldIndices(colEtype)
	if len(idx) != 1 {
		return fmt.Errorf("typed edge table: record batch %d has %d columns named %q, want 1 (columns: %v)", bi, len(idx), colEtype, fieldNames(r.Schema()))
	}
	a := r.Column(idx[0])
	if a.Len() != len(out) {
		return fmt.Errorf("record batch %d has %d rows but column %q has length %d", bi, len(out), colEtype, a.Len())
	}
	if a.NullN() > 0 {
		for i := range a.Len() {
			if a.IsNull(i) {
				return fmt.Errorf("column %q has a null in record batch %d, row %d", colEtype, bi, i)
			}
		}
	}
	nrel := int64(len(ty.EdgeTypes))
	bad := func(i int, v int64) error {
		return fmt.Errorf("column %q: record batch %d, row %d: relation index %d is outside [0, %d)", colEtype, bi, i, v, nrel)
	}
	switch a := a.(type) {
	case *array.Dictionary:
		dict := a.Dictionary()
		names := make([]int32, dict.Len())
		for j := range names {
			var s string
			switch d := dict.(type) {
			case *array.String:
				s = d.Value(j)
			case *array.LargeString:
				s = d.Value(j)
			default:
				return fmt.Errorf("column %q is dictionary-encoded %v, want strings", colEtype, dict.DataType())
			}
			ri := ty.RelationIndex(s)
			if ri < 0 {
				return fmt.Errorf("column %q: %q names no relation (or several; spell it \"src:rel:dst\")", colEtype, s)
			}
			names[j] = int32(ri)
		}
		for i := range out {
			k := a.GetValueIndex(i)
			if k < 0 || k >= len(names) {
				return fmt.Errorf("column %q: record batch %d, row %d: dictionary index %d is outside [0, %d)", colEtype, bi, i, k, len(names))
			}
			out[i] = names[k]
		}
	case *array.Int32:
		for i, v := range a.Int32Values() {
			if v < 0 || int64(v) >= nrel {
				return bad(i, int64(v))
			}
			out[i] = v
		}
	case *array.Int64:
		for i, v := range a.Int64Values() {
			if v < 0 || v >= nrel {
				return bad(i, v)
			}
			out[i] = int32(v)
		}
	case *array.Int16:
		for i, v := range a.Int16Values() {
			if v < 0 || int64(v) >= nrel {
				return bad(i, int64(v))
			}
			out[i] = int32(v)
		}
	case *array.Int8:
		for i, v := range a.Int8Values() {
			if v < 0 || int64(v) >= nrel {
				return bad(i, int64(v))
			}
			out[i] = int32(v)
		}
	default:
		return fmt.Errorf("column %q has type %v, want an integer relation index or dictionary-encoded relation names", colEtype, a.DataType())
	}
	return nil
}

// TypedCOO builds a typed graph from per-relation edge lists of type-local
// ids: relation r's edges are src[r][i] -> dst[r][i] (weights[r][i] when
// weights is not nil), with src[r] ids of node type RelSrc[r] and dst[r]
// of RelDst[r]. Edge ids are assigned relation by relation (edge i of
// relation r gets EdgeOffsets[r] + i), as the typed layout requires. ty's
// edge counts are ignored; the returned Types carry the counts of the
// lists. threads <= 0 uses GOMAXPROCS.
func TypedCOO(ty *Types, src, dst [][]int64, weights [][]float32, threads int) (*graph.CSC, *Types, error) {
	r := len(ty.EdgeTypes)
	if len(src) != r || len(dst) != r || (weights != nil && len(weights) != r) {
		return nil, nil, fmt.Errorf("typed COO: %d relations but %d src and %d dst lists", r, len(src), len(dst))
	}
	out := *ty
	out.EdgeTypes = append([]EdgeType(nil), ty.EdgeTypes...)
	out.EdgeOffsets = make([]int64, r+1)
	for i := range r {
		if len(src[i]) != len(dst[i]) {
			return nil, nil, fmt.Errorf("relation %d (%q, %q, %q): %d sources but %d destinations", i, ty.EdgeTypes[i].Src, ty.EdgeTypes[i].Rel, ty.EdgeTypes[i].Dst, len(src[i]), len(dst[i]))
		}
		if weights != nil && len(weights[i]) != len(src[i]) {
			return nil, nil, fmt.Errorf("relation %d: %d weights for %d edges", i, len(weights[i]), len(src[i]))
		}
		out.EdgeTypes[i].NumEdges = int64(len(src[i]))
		out.EdgeOffsets[i+1] = out.EdgeOffsets[i] + int64(len(src[i]))
	}
	e := out.EdgeOffsets[r]
	if err := fileio.CheckAlloc(8*uint64(ty.NumNodes()+2)+40*uint64(e), fmt.Sprintf("a typed graph of %d nodes and %d edges", ty.NumNodes(), e)); err != nil {
		return nil, nil, err
	}
	gs, gd := make([]int64, e), make([]int64, e)
	var gw []float32
	if weights != nil {
		gw = make([]float32, 0, e)
	}
	for i, et := range ty.EdgeTypes {
		so, sn := ty.NodeOffsets[ty.RelSrc[i]], ty.NodeTypes[ty.RelSrc[i]].NumNodes
		do, dn := ty.NodeOffsets[ty.RelDst[i]], ty.NodeTypes[ty.RelDst[i]].NumNodes
		base := out.EdgeOffsets[i]
		for j, u := range src[i] {
			v := dst[i][j]
			if u < 0 || u >= sn {
				return nil, nil, fmt.Errorf("relation %d (%q, %q, %q): edge %d: source %d is outside [0, %d) (the %q nodes)", i, et.Src, et.Rel, et.Dst, j, u, sn, et.Src)
			}
			if v < 0 || v >= dn {
				return nil, nil, fmt.Errorf("relation %d (%q, %q, %q): edge %d: destination %d is outside [0, %d) (the %q nodes)", i, et.Src, et.Rel, et.Dst, j, v, dn, et.Dst)
			}
			gs[base+int64(j)], gd[base+int64(j)] = so+u, do+v
		}
		if weights != nil {
			gw = append(gw, weights[i]...)
		}
	}
	if ty.NumNodes() == 0 {
		return &graph.CSC{Indptr: []int64{0}}, &out, nil
	}
	g, err := graph.FromCOO(gs, gd, gw, graph.COOOptions{NumNodes: ty.NumNodes(), Threads: threads})
	if err != nil {
		return nil, nil, err
	}
	return g, &out, nil
}

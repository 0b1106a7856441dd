package main

/*
#include "graphferry.h"
*/
import "C"

import (
	"encoding/json"
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// maxTypes bounds the numbers of node types and relations accepted from
// callers (arrays of that many entries are read).
const maxTypes = 1 << 20

//export gfgo_graph_set_types
func gfgo_graph_set_types(h C.uintptr_t, numNodeTypes C.int32_t, nodeOffsets *C.int64_t,
	numRelations C.int32_t, edgeOffsets *C.int64_t, relSrc, relDst *C.int32_t) C.int {
	return call("gf_graph_set_types", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		nt, nr := int(numNodeTypes), int(numRelations)
		if nt < 1 || nt > maxTypes {
			return errorf(gfEInval, "num_node_types = %d is out of range [1, %d]", nt, maxTypes)
		}
		if nr < 1 || nr > maxTypes {
			return errorf(gfEInval, "num_relations = %d is out of range [1, %d]", nr, maxTypes)
		}
		for _, p := range []struct {
			name string
			ptr  unsafe.Pointer
		}{{"node_offsets", unsafe.Pointer(nodeOffsets)}, {"edge_offsets", unsafe.Pointer(edgeOffsets)},
			{"relation_src_type", unsafe.Pointer(relSrc)}, {"relation_dst_type", unsafe.Pointer(relDst)}} {
			if p.ptr == nil {
				return errorf(gfEInval, "%s is NULL", p.name)
			}
		}
		t := graph.Types{
			NodeOffsets: append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(nodeOffsets)), nt+1)...),
			EdgeOffsets: append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(edgeOffsets)), nr+1)...),
			RelSrc:      append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(relSrc)), nr)...),
			RelDst:      append([]int32(nil), unsafe.Slice((*int32)(unsafe.Pointer(relDst)), nr)...),
		}
		return g.SetTypes(t)
	})
}

//export gfgo_graph_num_types
func gfgo_graph_num_types(h C.uintptr_t, numNodeTypes, numRelations *C.int32_t) C.int {
	return call("gf_graph_num_types", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if numNodeTypes == nil || numRelations == nil {
			return errorf(gfEInval, "num_node_types or num_relations is NULL")
		}
		nt, nr := g.NumTypes()
		*numNodeTypes, *numRelations = C.int32_t(nt), C.int32_t(nr)
		return nil
	})
}

//export gfgo_graph_set_node_time
func gfgo_graph_set_node_time(h C.uintptr_t, t *C.DLTensor) C.int {
	return call("gf_graph_set_node_time", func() error {
		return setTime(h, t, (*core.Graph).SetNodeTime)
	})
}

//export gfgo_graph_set_edge_time
func gfgo_graph_set_edge_time(h C.uintptr_t, t *C.DLTensor) C.int {
	return call("gf_graph_set_edge_time", func() error {
		return setTime(h, t, (*core.Graph).SetEdgeTime)
	})
}

func setTime(h C.uintptr_t, t *C.DLTensor, set func(*core.Graph, []int64) error) error {
	g, err := lookup[*core.Graph](kindGraph, h)
	if err != nil {
		return err
	}
	v, err := int64Vector(t, "time")
	if err != nil {
		return err
	}
	return set(g, v)
}

// int64Vector views t, which must be a 1-D int64 CPU tensor, as int64s (no
// copy: the caller's memory, valid during the call).
func int64Vector(t *C.DLTensor, arg string) ([]int64, error) {
	v, err := viewTensor(t, arg)
	if err != nil {
		return nil, err
	}
	if len(v.Shape) != 1 {
		return nil, errorf(gfEInval, "%s must be 1-D (got shape %v)", arg, v.Shape)
	}
	if v.DType != mem.Int64 {
		return nil, errorf(gfEType, "%s must be int64 (got %s)", arg, v.DType)
	}
	return mem.Int64s(v.Data), nil
}

//export gfgo_graph_set_types_json
func gfgo_graph_set_types_json(h C.uintptr_t, typesJSON *C.char) C.int {
	return call("gf_graph_set_types_json", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		raw, err := goString(typesJSON, "types_json")
		if err != nil {
			return err
		}
		ty, err := fileformat.ParseTypesJSON([]byte(raw))
		if err != nil {
			return errorf(gfEInval, "types_json: %v", err)
		}
		return core.SetDatasetTypes(g, ty)
	})
}

//export gfgo_graph_types_json
func gfgo_graph_types_json(h C.uintptr_t, out **C.char) C.int {
	return call("gf_graph_types_json", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_json is NULL")
		}
		tj := fileformat.TypesJSON{NodeTypes: []fileformat.NodeType{}, EdgeTypes: []fileformat.EdgeType{}}
		if ty := g.NamedTypes(); ty != nil {
			tj.NodeTypes, tj.EdgeTypes = ty.NodeTypes, ty.EdgeTypes
		}
		raw, err := json.Marshal(tj)
		if err != nil {
			return err
		}
		*out = C.CString(string(raw))
		return nil
	})
}

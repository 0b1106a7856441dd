package main

/*
#include "graphferry.h"
*/
import "C"

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
)

// maxTypeCount bounds num_node_types and num_relations before the C arrays
// are read (the engine's own bound on typed metadata).
const maxTypeCount = 1 << 20

//export gfgo_graph_from_typed_coo
func gfgo_graph_from_typed_coo(numNodeTypes C.int32_t, nodeCounts *C.int64_t, numRelations C.int32_t,
	relSrc, relDst *C.int32_t, srcT, dstT **C.DLTensor, o *C.gf_graph_options, out *C.uintptr_t) C.int {
	return call("gf_graph_from_typed_coo", func() error {
		if out == nil {
			return errorf(gfEInval, "out_graph is NULL")
		}
		*out = 0
		nt, nr := int(numNodeTypes), int(numRelations)
		if nt < 1 || nt > maxTypeCount {
			return errorf(gfEInval, "num_node_types = %d must be in [1, %d]", nt, maxTypeCount)
		}
		if nr < 1 || nr > maxTypeCount {
			return errorf(gfEInval, "num_relations = %d must be in [1, %d]", nr, maxTypeCount)
		}
		if nodeCounts == nil {
			return errorf(gfEInval, "node_counts is NULL")
		}
		for _, p := range []struct {
			name string
			ok   bool
		}{{"relation_src_type", relSrc != nil}, {"relation_dst_type", relDst != nil}, {"src", srcT != nil}, {"dst", dstT != nil}} {
			if !p.ok {
				return errorf(gfEInval, "%s is NULL", p.name)
			}
		}
		popt, coopt, _, err := checkGraphOptions(o, inputEdges)
		if err != nil {
			return err
		}
		if coopt.RemoveDuplicates || coopt.RemoveSelfLoops {
			return errorf(gfEInval, "options->flags: removing duplicates or self-loops would renumber the edges of a typed graph (its relations own consecutive edge ids); remove them per relation first")
		}
		counts := unsafe.Slice((*int64)(unsafe.Pointer(nodeCounts)), nt)
		nts := make([]fileformat.NodeType, nt)
		for t, c := range counts {
			if c < 0 {
				return errorf(gfEInval, "node_counts[%d] = %d must be >= 0", t, c)
			}
			nts[t] = fileformat.NodeType{Name: strconv.Itoa(t), NumNodes: c} // named by index, as gf_graph_set_types names types
		}
		ets := make([]fileformat.EdgeType, nr)
		rs := unsafe.Slice((*int32)(unsafe.Pointer(relSrc)), nr)
		rd := unsafe.Slice((*int32)(unsafe.Pointer(relDst)), nr)
		ts := unsafe.Slice(srcT, nr)
		td := unsafe.Slice(dstT, nr)
		srcs, dsts := make([][]int64, nr), make([][]int64, nr)
		for r := range nr {
			if rs[r] < 0 || int(rs[r]) >= nt {
				return errorf(gfEInval, "relation_src_type[%d] = %d is outside [0, num_node_types = %d)", r, rs[r], nt)
			}
			if rd[r] < 0 || int(rd[r]) >= nt {
				return errorf(gfEInval, "relation_dst_type[%d] = %d is outside [0, num_node_types = %d)", r, rd[r], nt)
			}
			ets[r] = fileformat.EdgeType{Src: nts[rs[r]].Name, Rel: strconv.Itoa(r), Dst: nts[rd[r]].Name}
			if srcs[r], err = indexArray(ts[r], fmt.Sprintf("src[%d]", r), false); err != nil {
				return err
			}
			if dsts[r], err = indexArray(td[r], fmt.Sprintf("dst[%d]", r), false); err != nil {
				return err
			}
		}
		ty, err := fileformat.ParseTypes(nts, ets)
		if err != nil {
			return errorf(gfEInval, "%v", err)
		}
		if coopt.NumNodes > 0 && coopt.NumNodes != ty.NumNodes() {
			return errorf(gfEInval, "options->num_nodes = %d, but node_counts sum to %d", coopt.NumNodes, ty.NumNodes())
		}
		g, ty, err := fileformat.TypedCOO(ty, srcs, dsts, nil, 0)
		if err != nil {
			return errorf(gfEInval, "%v", err)
		}
		return newTypedGraph(g, ty, popt, out)
	})
}

//export gfgo_graph_open_typed_arrow
func gfgo_graph_open_typed_arrow(path, typesJSON *C.char, o *C.gf_graph_options, out *C.uintptr_t) C.int {
	return call("gf_graph_open_typed_arrow", func() error {
		if out == nil {
			return errorf(gfEInval, "out_graph is NULL")
		}
		*out = 0
		p, err := goString(path, "path")
		if err != nil {
			return err
		}
		var tj []byte
		if typesJSON != nil {
			s, err := goString(typesJSON, "types_json")
			if err != nil {
				return err
			}
			tj = []byte(s)
		}
		popt, coopt, _, err := checkGraphOptions(o, inputEdges)
		if err != nil {
			return err
		}
		if coopt.RemoveDuplicates || coopt.RemoveSelfLoops || coopt.NumNodes > 0 {
			return errorf(gfEInval, "options->flags and options->num_nodes do not apply to a typed edge table (its node_types give the node count; removing edges would renumber its relations)")
		}
		g, ty, err := fileformat.ReadTypedEdgeTable(p, tj)
		if err != nil {
			return err
		}
		return newTypedGraph(g, ty, popt, out)
	})
}

// newTypedGraph partitions g, sets its types, registers the result and
// stores the handle in out.
func newTypedGraph(g *graph.CSC, ty *fileformat.Types, popt partition.Options, out *C.uintptr_t) error {
	obj, err := core.New(g, popt)
	if err != nil {
		return err
	}
	if err := core.SetDatasetTypes(obj, ty); err != nil {
		obj.Close()
		return err
	}
	putHandle(out, newHandle(kindGraph, obj))
	return nil
}

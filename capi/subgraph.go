package main

/*
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/mem"
)

// ---------------------------------------------------------------------------
// Induced subgraphs

//export gfgo_graph_induced_subgraph
func gfgo_graph_induced_subgraph(h C.uintptr_t, nodesT *C.DLTensor, outSrc, outDst, outEdges **C.DLManagedTensor) C.int {
	return call("gf_graph_induced_subgraph", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if outSrc == nil {
			return errorf(gfEInval, "out_src is NULL")
		}
		if outDst == nil {
			return errorf(gfEInval, "out_dst is NULL")
		}
		*outSrc, *outDst = nil, nil
		if outEdges != nil {
			*outEdges = nil
		}
		if nodesT == nil {
			return errorf(gfEInval, "nodes is NULL")
		}
		nodes, err := indexArray(nodesT, "nodes", false)
		if err != nil {
			return err
		}
		sub, err := g.InducedSubgraph(nodes, cAlloc{})
		if err != nil {
			return err
		}
		return exportAll([]mem.Tensor{sub.Src, sub.Dst, sub.EdgeIDs}, []**C.DLManagedTensor{outSrc, outDst, outEdges})
	})
}

// exportAll exports parts[i] to *outs[i] (C memory from cAlloc), freeing
// the parts whose out is nil. On a failure, the ones made so far are
// deleted, the rest freed, and no out is set.
func exportAll(parts []mem.Tensor, outs []**C.DLManagedTensor) error {
	made := make([]*C.DLManagedTensor, 0, len(parts))
	for i, t := range parts {
		if outs[i] == nil {
			cAlloc{}.Free(t.Data)
			continue
		}
		mt, err := exportTensor(t)
		if err != nil {
			for _, m := range made {
				C.gf__call_deleter(m)
			}
			for _, rest := range parts[i:] {
				cAlloc{}.Free(rest.Data)
			}
			return err
		}
		made = append(made, mt)
	}
	for i, k := 0, 0; i < len(outs); i++ {
		if outs[i] != nil {
			*outs[i] = made[k]
			k++
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// A graph's edges

//export gfgo_graph_edges
func gfgo_graph_edges(h C.uintptr_t, format, relation C.int32_t, outFirst, outSecond, outEdges **C.DLManagedTensor) C.int {
	return call("gf_graph_edges", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if outFirst == nil {
			return errorf(gfEInval, "out_first is NULL")
		}
		if outSecond == nil {
			return errorf(gfEInval, "out_second is NULL")
		}
		*outFirst, *outSecond = nil, nil
		if outEdges != nil {
			*outEdges = nil
		}
		var f core.EdgeFormat
		switch format {
		case C.GF_EDGES_COO:
			f = core.EdgesCOO
		case C.GF_EDGES_CSC:
			f = core.EdgesCSC
		default:
			return errorf(gfEInval, "format = %d (want GF_EDGES_COO or GF_EDGES_CSC)", int32(format))
		}
		if relation < -1 {
			return errorf(gfEInval, "relation = %d (want -1 for every edge, or a relation of a typed graph)", int32(relation))
		}
		el, err := g.Edges(f, int(relation), cAlloc{})
		if err != nil {
			return err
		}
		return exportAll([]mem.Tensor{el.First, el.Second, el.EdgeIDs}, []**C.DLManagedTensor{outFirst, outSecond, outEdges})
	})
}

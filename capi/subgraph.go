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
		// Exported one by one; on a failure, the ones made so far are
		// deleted and the rest freed.
		parts := []mem.Tensor{sub.Src, sub.Dst, sub.EdgeIDs}
		outs := []**C.DLManagedTensor{outSrc, outDst, outEdges}
		made := make([]*C.DLManagedTensor, 0, 3)
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
	})
}

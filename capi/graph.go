package main

/*
#include <stdlib.h>
#include <string.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"strings"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// partitionOptions reads the partitioning fields of gf_graph_options.
func partitionOptions(o *C.gf_graph_options) (partition.Options, error) {
	opt := partition.Options{Method: partition.Range, NumPatches: 1}
	if o == nil {
		return opt, nil
	}
	if o.num_patches < 0 {
		return opt, errorf(gfEInval, "options->num_patches = %d (want >= 1, or 0 for 1)", int(o.num_patches))
	}
	if o.num_patches > 1 {
		opt.NumPatches = int(o.num_patches)
	}
	if o.reserved != 0 {
		return opt, errorf(gfEInval, "options->reserved = %d (must be 0)", uint32(o.reserved))
	}
	opt.Seed = uint64(o.seed)
	switch o.partition {
	case C.GF_PARTITION_RANGE:
		opt.Method = partition.Range
	case C.GF_PARTITION_RANDOM:
		opt.Method = partition.Random
	case C.GF_PARTITION_GIVEN:
		opt.Method = partition.Given
		a, err := indexArray(o.assignment, "options->assignment", false)
		if err != nil {
			return opt, err
		}
		opt.Assignment = a
	default:
		return opt, errorf(gfEInval, "options->partition = %d (want GF_PARTITION_RANGE, _RANDOM or _GIVEN)", int(o.partition))
	}
	if o.partition != C.GF_PARTITION_GIVEN && o.assignment != nil {
		return opt, errorf(gfEInval, "options->assignment is set but options->partition is not GF_PARTITION_GIVEN")
	}
	return opt, nil
}

// graphInput says which constructor reads gf_graph_options: the flags each
// accepts differ.
type graphInput int

const (
	inputCompressed graphInput = iota // CSC/CSR: no flags
	inputEdges                        // COO/Arrow: the removal flags
	inputOpen                         // gf_graph_open: removal flags and GF_GRAPH_VERIFY_CHECKSUMS
)

// checkGraphOptions reads gf_graph_options for a constructor of kind in; the
// returned bool is GF_GRAPH_VERIFY_CHECKSUMS (gf_graph_open only).
func checkGraphOptions(o *C.gf_graph_options, in graphInput) (partition.Options, graph.COOOptions, bool, error) {
	var coopt graph.COOOptions
	verify := false
	o, err := readOptions(o, "options", graphOptionsLayout)
	if err != nil {
		return partition.Options{}, coopt, false, err
	}
	if o != nil {
		known := C.uint32_t(C.GF_GRAPH_REMOVE_DUPLICATES | C.GF_GRAPH_REMOVE_SELF_LOOPS | C.GF_GRAPH_VERIFY_CHECKSUMS)
		if o.flags&^known != 0 {
			return partition.Options{}, coopt, false, errorf(gfEInval, "options->flags = %#x has unknown bits", uint32(o.flags))
		}
		if in != inputOpen && o.flags&C.GF_GRAPH_VERIFY_CHECKSUMS != 0 {
			return partition.Options{}, coopt, false, errorf(gfEInval, "options->flags: GF_GRAPH_VERIFY_CHECKSUMS applies to gf_graph_open only")
		}
		verify = o.flags&C.GF_GRAPH_VERIFY_CHECKSUMS != 0
		if in == inputCompressed && o.flags != 0 {
			return partition.Options{}, coopt, false, errorf(gfEInval, "options->flags = %#x: removal flags apply to COO and Arrow input only", uint32(o.flags))
		}
		if o.num_nodes > 0 {
			coopt.NumNodes = int64(o.num_nodes)
		}
		coopt.RemoveDuplicates = o.flags&C.GF_GRAPH_REMOVE_DUPLICATES != 0
		coopt.RemoveSelfLoops = o.flags&C.GF_GRAPH_REMOVE_SELF_LOOPS != 0
	}
	popt, err := partitionOptions(o)
	return popt, coopt, verify, err
}

// newGraph partitions g, registers the result and stores the handle in out.
func newGraph(g *graph.CSC, popt partition.Options, out *C.uintptr_t) error {
	obj, err := core.New(g, popt)
	if err != nil {
		return err
	}
	putHandle(out, newHandle(kindGraph, obj))
	return nil
}

//export gfgo_graph_from_compressed
func gfgo_graph_from_compressed(csr C.int, indptrT, indicesT, eidsT *C.DLTensor, o *C.gf_graph_options, out *C.uintptr_t) C.int {
	fn := "gf_graph_from_csc"
	if csr != 0 {
		fn = "gf_graph_from_csr"
	}
	return call(fn, func() error {
		if out == nil {
			return errorf(gfEInval, "out_graph is NULL")
		}
		*out = 0
		popt, _, _, err := checkGraphOptions(o, inputCompressed)
		if err != nil {
			return err
		}
		indptr, err := indexArray(indptrT, "indptr", false)
		if err != nil {
			return err
		}
		indices, err := indexArray(indicesT, "indices", false)
		if err != nil {
			return err
		}
		eids, err := indexArray(eidsT, "edge_ids", true)
		if err != nil {
			return err
		}
		if len(indptr) == 0 {
			return errorf(gfEInval, "indptr is empty (want N+1 entries)")
		}
		n := int64(len(indptr) - 1)
		var g *graph.CSC
		if csr != 0 {
			g, err = graph.FromCSR(n, indptr, indices, eids, nil)
		} else {
			g, err = graph.FromCSC(n, indptr, indices, eids, nil)
		}
		if err != nil {
			return err
		}
		return newGraph(g, popt, out)
	})
}

//export gfgo_graph_from_coo
func gfgo_graph_from_coo(srcT, dstT *C.DLTensor, o *C.gf_graph_options, out *C.uintptr_t) C.int {
	return call("gf_graph_from_coo", func() error {
		if out == nil {
			return errorf(gfEInval, "out_graph is NULL")
		}
		*out = 0
		popt, coopt, _, err := checkGraphOptions(o, inputEdges)
		if err != nil {
			return err
		}
		src, err := indexArray(srcT, "src", false)
		if err != nil {
			return err
		}
		dst, err := indexArray(dstT, "dst", false)
		if err != nil {
			return err
		}
		g, err := graph.FromCOO(src, dst, nil, coopt)
		if err != nil {
			return err
		}
		return newGraph(g, popt, out)
	})
}

//export gfgo_graph_open
func gfgo_graph_open(path *C.char, o *C.gf_graph_options, out *C.uintptr_t) C.int {
	return call("gf_graph_open", func() error {
		if out == nil {
			return errorf(gfEInval, "out_graph is NULL")
		}
		*out = 0
		p, err := goString(path, "path")
		if err != nil {
			return err
		}
		popt, coopt, verify, err := checkGraphOptions(o, inputOpen)
		if err != nil {
			return err
		}
		g, err := core.Open(p, popt, coopt, dataset.OpenOptions{VerifyChecksums: verify})
		if err != nil {
			return err
		}
		putHandle(out, newHandle(kindGraph, g))
		return nil
	})
}

//export gfgo_graph_close
func gfgo_graph_close(h C.uintptr_t) {
	call("gf_graph_close", func() error {
		if g, ok := forget[*core.Graph](kindGraph, h); ok {
			return g.Close()
		}
		return nil
	})
}

//export gfgo_graph_count
func gfgo_graph_count(h C.uintptr_t, what C.int, out *C.int64_t) C.int {
	fn := [...]string{"gf_graph_num_nodes", "gf_graph_num_edges", "gf_graph_num_patches"}[what]
	return call(fn, func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out is NULL")
		}
		switch what {
		case 0:
			*out = C.int64_t(g.NumNodes())
		case 1:
			*out = C.int64_t(g.NumEdges())
		default:
			*out = C.int64_t(g.NumPatches())
		}
		return nil
	})
}

//export gfgo_graph_set_node_data
func gfgo_graph_set_node_data(h C.uintptr_t, name *C.char, t *C.DLManagedTensor) C.int {
	return setGraphData("gf_graph_set_node_data", h, name, t, (*core.Graph).SetNodeData)
}

//export gfgo_graph_set_edge_data
func gfgo_graph_set_edge_data(h C.uintptr_t, name *C.char, t *C.DLManagedTensor) C.int {
	return setGraphData("gf_graph_set_edge_data", h, name, t, (*core.Graph).SetEdgeData)
}

// setGraphData is gf_graph_set_node_data and gf_graph_set_edge_data: set
// stores a view of the tensor, whose deleter runs when the graph is done
// with it.
func setGraphData(fn string, h C.uintptr_t, name *C.char, t *C.DLManagedTensor, set func(*core.Graph, string, mem.Tensor, func()) error) C.int {
	return call(fn, func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		n, err := goString(name, "name")
		if err != nil {
			return err
		}
		if t == nil {
			return errorf(gfEInval, "tensor is NULL")
		}
		v, err := viewTensor(&t.dl_tensor, "tensor")
		if err != nil {
			return err
		}
		return set(g, n, v, func() { C.gf__call_deleter(t) })
	})
}

//export gfgo_graph_get_node_data
func gfgo_graph_get_node_data(h C.uintptr_t, name *C.char, out **C.DLManagedTensor) C.int {
	return getNodeData("gf_graph_get_node_data", kindGraph, h, name, out, (*core.Graph).NodeData)
}

//export gfgo_graph_node_data_names
func gfgo_graph_node_data_names(h C.uintptr_t, out **C.char) C.int {
	return nodeDataNames("gf_graph_node_data_names", kindGraph, h, out, (*core.Graph).NodeDataNames)
}

// getNodeData is gf_graph_get_node_data and gf_part_get_node_data: get
// reads the named node data of the handle's object into C memory, which
// leaves as a DLPack tensor.
func getNodeData[T any](what string, kind handleKind, h C.uintptr_t, name *C.char, out **C.DLManagedTensor,
	get func(T, string, mem.Allocator) (mem.Tensor, error)) C.int {
	return call(what, func() error {
		obj, err := lookup[T](kind, h)
		if err != nil {
			return err
		}
		n, err := goString(name, "name")
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_tensor is NULL")
		}
		*out = nil
		t, err := get(obj, n, cAlloc{})
		if err != nil {
			return err
		}
		return exportOut(t, out)
	})
}

// nodeDataNames is gf_graph_node_data_names and gf_part_node_data_names:
// the names, newline-separated, in a string the caller frees.
func nodeDataNames[T any](what string, kind handleKind, h C.uintptr_t, out **C.char, names func(T) ([]string, error)) C.int {
	return call(what, func() error {
		obj, err := lookup[T](kind, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_names is NULL")
		}
		list, err := names(obj)
		if err != nil {
			return err
		}
		*out = C.CString(strings.Join(list, "\n"))
		return nil
	})
}

//export gfgo_graph_set_edge_weights
func gfgo_graph_set_edge_weights(h C.uintptr_t, wT *C.DLTensor) C.int {
	return call("gf_graph_set_edge_weights", func() error {
		return setWeights(h, wT, (*core.Graph).SetEdgeWeights)
	})
}

//export gfgo_graph_set_source_weights
func gfgo_graph_set_source_weights(h C.uintptr_t, wT *C.DLTensor) C.int {
	return call("gf_graph_set_source_weights", func() error {
		return setWeights(h, wT, (*core.Graph).SetSourceWeights)
	})
}

func setWeights(h C.uintptr_t, wT *C.DLTensor, set func(*core.Graph, mem.Tensor) error) error {
	g, err := lookup[*core.Graph](kindGraph, h)
	if err != nil {
		return err
	}
	v, err := viewTensor(wT, "weights")
	if err != nil {
		return err
	}
	return set(g, v)
}

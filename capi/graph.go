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
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rowcache"
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
	popt, coopt, verify, _, err := checkGraphOpenOptions(o, in)
	return popt, coopt, verify, err
}

// checkGraphOpenOptions is checkGraphOptions, also returning the memory
// budget and tier fields (gf_graph_open only: 0 for the other constructors).
func checkGraphOpenOptions(o *C.gf_graph_options, in graphInput) (partition.Options, graph.COOOptions, bool, core.OpenOptions, error) {
	var coopt graph.COOOptions
	var oo core.OpenOptions
	verify := false
	o, err := readOptions(o, "options", graphOptionsLayout)
	if err != nil {
		return partition.Options{}, coopt, false, oo, err
	}
	if o != nil {
		if in != inputOpen && (o.memory_budget != 0 || o.feature_tier != 0 || o.cache_policy != 0 || o.cache_bytes != 0) {
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options: memory_budget, feature_tier, cache_policy and cache_bytes apply to gf_graph_open only (must be 0)")
		}
		switch {
		case o.memory_budget < 0:
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options->memory_budget = %d (want >= 0; 0: no budget)", int64(o.memory_budget))
		case o.feature_tier < C.GF_TIER_AUTO || o.feature_tier > C.GF_TIER_DISK:
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options->feature_tier = %d (want GF_TIER_AUTO, GF_TIER_MEMORY or GF_TIER_DISK)", int32(o.feature_tier))
		case o.cache_policy < C.GF_CACHE_S3FIFO || o.cache_policy > C.GF_CACHE_LRU:
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options->cache_policy = %d (want GF_CACHE_S3FIFO, GF_CACHE_SIEVE or GF_CACHE_LRU)", int32(o.cache_policy))
		case o.cache_bytes < 0:
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options->cache_bytes = %d (want >= 0)", int64(o.cache_bytes))
		}
		oo = core.OpenOptions{MemoryBudget: int64(o.memory_budget), FeatureTier: core.Tier(o.feature_tier),
			CachePolicy: rowcache.Policy(o.cache_policy), CacheBytes: int64(o.cache_bytes)}
		known := C.uint32_t(C.GF_GRAPH_REMOVE_DUPLICATES | C.GF_GRAPH_REMOVE_SELF_LOOPS | C.GF_GRAPH_VERIFY_CHECKSUMS)
		if o.flags&^known != 0 {
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options->flags = %#x has unknown bits", uint32(o.flags))
		}
		if in != inputOpen && o.flags&C.GF_GRAPH_VERIFY_CHECKSUMS != 0 {
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options->flags: GF_GRAPH_VERIFY_CHECKSUMS applies to gf_graph_open only")
		}
		verify = o.flags&C.GF_GRAPH_VERIFY_CHECKSUMS != 0
		if in == inputCompressed && o.flags != 0 {
			return partition.Options{}, coopt, false, oo, errorf(gfEInval, "options->flags = %#x: removal flags apply to COO and Arrow input only", uint32(o.flags))
		}
		if o.num_nodes > 0 {
			coopt.NumNodes = int64(o.num_nodes)
		}
		coopt.RemoveDuplicates = o.flags&C.GF_GRAPH_REMOVE_DUPLICATES != 0
		coopt.RemoveSelfLoops = o.flags&C.GF_GRAPH_REMOVE_SELF_LOOPS != 0
	}
	popt, err := partitionOptions(o)
	oo.Dataset.VerifyChecksums = verify
	return popt, coopt, verify, oo, err
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
		popt, coopt, _, oo, err := checkGraphOpenOptions(o, inputOpen)
		if err != nil {
			return err
		}
		ctx, end := callContext()
		defer end()
		oo.Dataset.Context = ctx
		g, err := core.OpenWith(p, popt, coopt, oo)
		if err != nil {
			return cancelled(ctx, err)
		}
		if ctx.Err() != nil {
			g.Close()
			return cancelled(ctx, ctx.Err())
		}
		putHandle(out, newHandle(kindGraph, g))
		return nil
	})
}

//export gfgo_graph_memory_plan
func gfgo_graph_memory_plan(h C.uintptr_t, out *C.gf_memory_plan) C.int {
	return call("gf_graph_memory_plan", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out is NULL")
		}
		if size := uintptr(out.struct_size); size < memoryPlanLayout.min || size > C.sizeof_gf_memory_plan {
			return errorf(gfEInval, "out->struct_size = %d is outside the accepted range [%d, %d] of gf_memory_plan sizes (set struct_size = sizeof(gf_memory_plan))",
				size, memoryPlanLayout.min, C.sizeof_gf_memory_plan)
		}
		p := g.Plan()
		tier := C.int32_t(C.GF_TIER_MEMORY)
		if p.FeatureTier == core.TierDisk {
			tier = C.GF_TIER_DISK
		}
		*out = C.gf_memory_plan{
			struct_size: out.struct_size, feature_tier: tier, budget: C.int64_t(p.Budget),
			num_nodes: C.int64_t(p.NumNodes), num_edges: C.int64_t(p.NumEdges),
			topology_bytes: C.int64_t(p.Topology), node_column_bytes: C.int64_t(p.NodeColumns),
			sampling_bytes: C.int64_t(p.Sampling), feature_bytes: C.int64_t(p.Features),
			cache_bytes: C.int64_t(p.CacheBytes), cache_policy: C.int32_t(p.CachePolicy),
			direct: cBool(p.Direct), io_uring: cBool(p.Backend == "io_uring"),
		}
		return nil
	})
}

//export gfgo_graph_memory_report
func gfgo_graph_memory_report(h C.uintptr_t, out **C.char) C.int {
	return call("gf_graph_memory_report", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_report is NULL")
		}
		*out = C.CString(g.Plan().Report())
		return nil
	})
}

// cBool is 1 for true, 0 for false.
func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
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
// with it. The caller's memory is marked off the Go heap meanwhile
// (mem.MarkOffHeap), so that the CUDA backend may register it with the
// driver in place instead of copying it.
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
		v, err := viewHeldTensor(&t.dl_tensor, "tensor")
		if err != nil {
			return err
		}
		unmark := mem.MarkOffHeap(v.Data)
		if err := set(g, n, v, func() { unmark(); C.gf__call_deleter(t) }); err != nil {
			unmark()
			return err
		}
		return nil
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

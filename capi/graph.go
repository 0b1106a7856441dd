package main

/*
#include <stdlib.h>
#include <string.h>
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// graphObj is what a gf_graph handle refers to. It is reference-counted: the
// handle holds one reference and every open loader one more, so that
// gf_graph_close with loaders open defers the release (sqlite3_close_v2).
type graphObj struct {
	part  *partition.Partitioned
	store *feature.Store
	ds    *dataset.Dataset // non-nil when opened from a dataset directory

	// mu orders node-data changes against readers that run in the caller's
	// thread (gf_graph_get_node_data).
	mu      sync.RWMutex
	refs    atomic.Int64
	loaders atomic.Int64 // open loaders, which read node data on their own threads

	// last is the sampler of the last gf_sample (or gf_random_walk) call,
	// reused while the options other than the seed stay the same (building
	// one validates the whole graph and allocates its workspaces); the seed
	// is passed per call.
	samplerMu sync.Mutex
	last      *sample.Sampler
	lastOpt   sample.Options
}

// sampler returns a sampler for opt, reusing the previous one when opt is
// unchanged but for Seed. Callers pass opt.Seed per call
// (SampleBatchesSeed, RandomWalkSeed).
func (g *graphObj) sampler(opt sample.Options) (*sample.Sampler, error) {
	g.samplerMu.Lock()
	defer g.samplerMu.Unlock()
	opt.Seed = 0
	if g.last != nil && reflect.DeepEqual(g.lastOpt, opt) {
		return g.last, nil
	}
	s, err := sample.New(g.part, comm.NewLocal(g.part.NumPatches()), opt)
	if err != nil {
		return nil, err
	}
	g.last, g.lastOpt = s, opt
	return s, nil
}

func (g *graphObj) ref() { g.refs.Add(1) }

func (g *graphObj) unref() {
	if g.refs.Add(-1) == 0 {
		g.store.Close()
		if g.ds != nil {
			g.ds.Close()
		}
	}
}

func (g *graphObj) numNodes() int64 { return g.part.Graph.NumNodes }

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

func checkGraphOptions(o *C.gf_graph_options, coo bool) (partition.Options, graph.COOOptions, error) {
	var coopt graph.COOOptions
	if o != nil {
		if err := checkStructSize("options", o.struct_size, unsafe.Sizeof(*o)); err != nil {
			return partition.Options{}, coopt, err
		}
		known := C.uint32_t(C.GF_GRAPH_REMOVE_DUPLICATES | C.GF_GRAPH_REMOVE_SELF_LOOPS)
		if o.flags&^known != 0 {
			return partition.Options{}, coopt, errorf(gfEInval, "options->flags = %#x has unknown bits", uint32(o.flags))
		}
		if !coo && o.flags != 0 {
			return partition.Options{}, coopt, errorf(gfEInval, "options->flags = %#x: removal flags apply to COO and Arrow input only", uint32(o.flags))
		}
		if o.num_nodes > 0 {
			coopt.NumNodes = int64(o.num_nodes)
		}
		coopt.RemoveDuplicates = o.flags&C.GF_GRAPH_REMOVE_DUPLICATES != 0
		coopt.RemoveSelfLoops = o.flags&C.GF_GRAPH_REMOVE_SELF_LOOPS != 0
	}
	popt, err := partitionOptions(o)
	return popt, coopt, err
}

// newGraph partitions g, registers the result and stores the handle in out.
// nodeData (may be nil) is stored as node data in original order.
func newGraph(g *graph.CSC, popt partition.Options, ds *dataset.Dataset, out *C.uintptr_t) error {
	part, err := partition.Build(g, popt)
	if err != nil {
		return err
	}
	obj := &graphObj{part: part, store: feature.NewStore(g.NumNodes), ds: ds}
	obj.refs.Store(1)
	if ds != nil {
		names := make([]string, 0, len(ds.NodeData))
		for name := range ds.NodeData {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if err := obj.setNodeData(name, ds.NodeData[name], nil); err != nil {
				obj.unref()
				return err
			}
		}
	}
	putHandle(out, newHandle(kindGraph, obj))
	return nil
}

// setNodeData stores t (original row order) under name, permuting it into
// patch order when the graph is renumbered; release frees t's memory.
func (g *graphObj) setNodeData(name string, t mem.Tensor, release func()) error {
	if len(t.Shape) == 0 {
		return errorf(gfEInval, "tensor must have at least 1 dimension (one row per node)")
	}
	if t.Shape[0] != g.numNodes() {
		return errorf(gfEInval, "tensor has shape[0] = %d rows, want one row per node (%d)", t.Shape[0], g.numNodes())
	}
	if g.part.NewToOld != nil {
		permuted := make([]byte, len(t.Data)+7)[:len(t.Data)]
		if err := partition.PermuteRows(permuted, t.Data, t.RowBytes(), g.part.NewToOld); err != nil {
			return err
		}
		t.Data = permuted
		if release != nil {
			release()
			release = nil
		}
	}
	return g.store.Set(name, t, release)
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
		popt, _, err := checkGraphOptions(o, false)
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
		return newGraph(g, popt, nil, out)
	})
}

//export gfgo_graph_from_coo
func gfgo_graph_from_coo(srcT, dstT *C.DLTensor, o *C.gf_graph_options, out *C.uintptr_t) C.int {
	return call("gf_graph_from_coo", func() error {
		if out == nil {
			return errorf(gfEInval, "out_graph is NULL")
		}
		*out = 0
		popt, coopt, err := checkGraphOptions(o, true)
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
		return newGraph(g, popt, nil, out)
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
		// GF_GRAPH_VERIFY_CHECKSUMS is gf_graph_open's own flag: take it
		// out before the checks shared with the other constructors.
		verify := false
		if o != nil && uintptr(o.struct_size) >= unsafe.Offsetof(o.flags)+unsafe.Sizeof(o.flags) &&
			o.flags&C.GF_GRAPH_VERIFY_CHECKSUMS != 0 {
			verify = true
			oc := *o
			oc.flags &^= C.GF_GRAPH_VERIFY_CHECKSUMS
			o = &oc
		}
		popt, coopt, err := checkGraphOptions(o, true)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return errorf(gfEIO, "path %q: %v", p, err)
		}
		if !st.IsDir() {
			if verify {
				return errorf(gfEInval, "options->flags: GF_GRAPH_VERIFY_CHECKSUMS applies to dataset directories only (%q is a file)", p)
			}
			g, err := dataset.ReadEdgeTable(p, coopt)
			if err != nil {
				return err
			}
			return newGraph(g, popt, nil, out)
		}
		if coopt.RemoveDuplicates || coopt.RemoveSelfLoops || coopt.NumNodes > 0 {
			return errorf(gfEInval, "options->flags and options->num_nodes do not apply to a dataset directory (%q)", p)
		}
		ds, err := dataset.OpenWith(p, dataset.OpenOptions{VerifyChecksums: verify})
		if err != nil {
			return err
		}
		if err := newGraph(ds.Graph, popt, ds, out); err != nil {
			ds.Close()
			return err
		}
		return nil
	})
}

//export gfgo_graph_close
func gfgo_graph_close(h C.uintptr_t) {
	call("gf_graph_close", func() error {
		if g, ok := forget[*graphObj](kindGraph, h); ok {
			g.unref()
		}
		return nil
	})
}

//export gfgo_graph_count
func gfgo_graph_count(h C.uintptr_t, what C.int, out *C.int64_t) C.int {
	fn := [...]string{"gf_graph_num_nodes", "gf_graph_num_edges", "gf_graph_num_patches"}[what]
	return call(fn, func() error {
		g, err := lookup[*graphObj](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out is NULL")
		}
		switch what {
		case 0:
			*out = C.int64_t(g.numNodes())
		case 1:
			*out = C.int64_t(g.part.Graph.NumEdges())
		default:
			*out = C.int64_t(g.part.NumPatches())
		}
		return nil
	})
}

//export gfgo_graph_set_node_data
func gfgo_graph_set_node_data(h C.uintptr_t, name *C.char, t *C.DLManagedTensor) C.int {
	return call("gf_graph_set_node_data", func() error {
		g, err := lookup[*graphObj](kindGraph, h)
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
		g.mu.Lock()
		defer g.mu.Unlock()
		if _, exists := g.store.Get(n); exists && g.loaders.Load() > 0 {
			return errorf(gfEState, "node data %q is in use by %d open loader(s); close them before replacing it", n, g.loaders.Load())
		}
		return g.setNodeData(n, v, func() { C.gf__call_deleter(t) })
	})
}

//export gfgo_graph_get_node_data
func gfgo_graph_get_node_data(h C.uintptr_t, name *C.char, out **C.DLManagedTensor) C.int {
	return call("gf_graph_get_node_data", func() error {
		g, err := lookup[*graphObj](kindGraph, h)
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
		g.mu.RLock()
		defer g.mu.RUnlock()
		src, ok := g.store.Get(n)
		if !ok {
			return errorf(gfEInval, "no node data named %q (have: %s)", n, strings.Join(g.store.Names(), ", "))
		}
		buf, err := cAlloc{}.Alloc(len(src.Data))
		if err != nil {
			return err
		}
		if g.part.OldToNew == nil {
			err = feature.Copy(buf, src.Data) // src may map a file: a fault is an error
		} else {
			err = feature.Gather(buf, src, g.part.OldToNew, 0)
		}
		if err != nil {
			cAlloc{}.Free(buf)
			return err
		}
		m, err := exportTensor(mem.Tensor{DType: src.DType, Shape: append([]int64(nil), src.Shape...), Data: buf})
		if err != nil {
			cAlloc{}.Free(buf)
			return err
		}
		*out = m
		return nil
	})
}

//export gfgo_graph_node_data_names
func gfgo_graph_node_data_names(h C.uintptr_t, out **C.char) C.int {
	return call("gf_graph_node_data_names", func() error {
		g, err := lookup[*graphObj](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_names is NULL")
		}
		names := g.store.Names()
		sort.Strings(names)
		*out = C.CString(strings.Join(names, "\n"))
		return nil
	})
}

//export gfgo_graph_set_edge_weights
func gfgo_graph_set_edge_weights(h C.uintptr_t, wT *C.DLTensor) C.int {
	return call("gf_graph_set_edge_weights", func() error {
		return setWeights(h, wT, "edge id", func(csc *graph.CSC, _ *partition.Partitioned, pos int64) int64 {
			return csc.EdgeID(pos)
		})
	})
}

//export gfgo_graph_set_source_weights
func gfgo_graph_set_source_weights(h C.uintptr_t, wT *C.DLTensor) C.int {
	return call("gf_graph_set_source_weights", func() error {
		return setWeights(h, wT, "node id", func(csc *graph.CSC, p *partition.Partitioned, pos int64) int64 {
			u := csc.Source(pos)
			if p.NewToOld != nil {
				u = p.NewToOld[u]
			}
			return u
		})
	})
}

// setWeights stores a weight beside every edge of the graph h, the one that
// weights holds at key(pos) (an edge id or a source node id, named by what).
func setWeights(h C.uintptr_t, wT *C.DLTensor, what string, key func(*graph.CSC, *partition.Partitioned, int64) int64) error {
	g, err := lookup[*graphObj](kindGraph, h)
	if err != nil {
		return err
	}
	v, err := viewTensor(wT, "weights")
	if err != nil {
		return err
	}
	if len(v.Shape) != 1 {
		return errorf(gfEInval, "weights must be 1-D (got shape %v)", v.Shape)
	}
	var at func(i int64) float64
	switch v.DType {
	case mem.Float32:
		f := mem.Float32s(v.Data)
		at = func(i int64) float64 { return float64(f[i]) }
	case mem.Float64:
		f := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(v.Data))), v.Shape[0])
		at = func(i int64) float64 { return f[i] }
	default:
		return errorf(gfEType, "weights must be float32 or float64 (got %s)", v.DType)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := g.loaders.Load(); n > 0 {
		return errorf(gfEState, "%d loader(s) are open on this graph; close them before changing edge weights", n)
	}
	csc := g.part.Graph
	w := make([]float32, csc.NumEdges())
	for pos := range w {
		k := key(csc, g.part, int64(pos))
		if k >= v.Shape[0] {
			return errorf(gfEInval, "weights has %d entries but the graph has %s %d (want one weight per %s)", v.Shape[0], what, k, what)
		}
		x := at(k)
		if !(x >= 0) || math.IsInf(x, 1) || x > math.MaxFloat32 {
			return errorf(gfEInval, "weights[%d] = %g (want finite and >= 0)", k, x)
		}
		w[pos] = float32(x)
	}
	csc.Weights = w
	g.samplerMu.Lock()
	g.last = nil
	g.samplerMu.Unlock()
	return nil
}

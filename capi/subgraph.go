package main

/*
#include "graphferry.h"
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/graphferry/graphferry/engine/subload"
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

// ---------------------------------------------------------------------------
// Subgraph loaders

//export gfgo_subgraph_loader_open
func gfgo_subgraph_loader_open(h C.uintptr_t, itemsT *C.DLTensor, o *C.gf_subgraph_loader_options, out *C.uintptr_t) C.int {
	return call("gf_subgraph_loader_open", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_loader is NULL")
		}
		*out = 0
		if itemsT == nil {
			return errorf(gfEInval, "items is NULL")
		}
		if o == nil {
			return errorf(gfEInval, "options is NULL")
		}
		if o, err = readOptions(o, "options", subgraphLoaderOptionsLayout); err != nil {
			return err
		}
		opt, err := subgraphOptions(o)
		if err != nil {
			return err
		}
		if opt.Draw, err = batchCallback(o.draw_callback, "options->draw_callback"); err != nil {
			return err
		}
		if (opt.Kind == subload.Drawn) != (opt.Draw != nil) {
			return errorf(gfEInval, "options->draw_callback is for GF_SUBGRAPH_DRAWN only, where it is required (kind = %d)", int32(o.kind))
		}
		lo, err := loaderOptions(o.loader, "options->loader", false)
		if err != nil {
			return err
		}
		khop, hgt := opt.Kind == subload.KHop, opt.Kind == subload.HGT
		var req sample.Request
		if khop {
			if lo.sample == nil {
				return errorf(gfEInval, "options->loader->sample is NULL (GF_SUBGRAPH_KHOP samples with it)")
			}
			so, err := sampleOptions(lo.sample, "options->loader->sample")
			if err != nil {
				return err
			}
			req, opt.Threads = so.req, so.threads
		} else {
			if lo.sample != nil {
				return errorf(gfEInval, "options->loader->sample must be NULL (a subgraph loader draws its node sets by options->kind; only GF_SUBGRAPH_KHOP samples)")
			}
			if n := len(lo.opts.LabelNames); n != 0 && !hgt {
				return errorf(gfEInval, "options->loader->num_label_names = %d (want 0: a subgraph batch has no seeds; gather node data as feature_names)", n)
			}
		}
		if hgt {
			if opt.NumSamples, err = hgtSamples(g, o.num_samples); err != nil {
				return err
			}
		} else if o.num_samples != nil {
			return errorf(gfEInval, "options->num_samples is for GF_SUBGRAPH_HGT only (kind = %d)", int32(o.kind))
		}
		if lo.seedTimes != nil {
			return errorf(gfEInval, "options->loader->seed_times must be NULL (a subgraph loader does not sample temporally)")
		}
		lopt := lo.opts
		opt.Seed = lopt.Seed
		if lopt.EdgeFeatureNames, err = cStrings((**C.char)(unsafe.Pointer(o.edge_feature_names)), o.num_edge_feature_names, "options->edge_feature_names"); err != nil {
			return err
		}
		items, err := indexArray(itemsT, "items", false)
		if err != nil {
			return err
		}
		if opt.Kind == subload.Parts {
			if opt.PartOffsets, err = indexArray(o.part_offsets, "options->part_offsets", false); err != nil {
				return err
			}
			if opt.PartNodes, err = indexArray(o.part_nodes, "options->part_nodes", true); err != nil {
				return err
			}
		} else if o.part_offsets != nil || o.part_nodes != nil {
			return errorf(gfEInval, "options->part_offsets and part_nodes are for GF_SUBGRAPH_PARTS only (kind = %d)", int32(o.kind))
		}
		a, err := readAllocator(lo.allocator, "options->loader->allocator")
		if err != nil {
			return err
		}
		var l *core.Loader
		switch {
		case khop:
			lopt.Threads = opt.Threads
			l, err = g.OpenShadowLoader(items, req, opt, lopt, a)
		case hgt:
			l, err = g.OpenHGTLoader(items, opt, lopt, a)
		default:
			l, err = g.OpenSubgraphLoader(items, opt, lopt, a)
		}
		if err != nil {
			a.release()
			return err
		}
		putLoader(out, l, a)
		return nil
	})
}

// subgraphOptions reads the kind, weighting, order, budget, walk length
// and threads of o (already read with readOptions), checking each.
func subgraphOptions(o *C.gf_subgraph_loader_options) (subload.Options, error) {
	var opt subload.Options
	switch o.kind {
	case C.GF_SUBGRAPH_NODES:
		opt.Kind = subload.Nodes
	case C.GF_SUBGRAPH_EDGES:
		opt.Kind = subload.Edges
	case C.GF_SUBGRAPH_WALKS:
		opt.Kind = subload.Walks
	case C.GF_SUBGRAPH_PARTS:
		opt.Kind = subload.Parts
	case C.GF_SUBGRAPH_KHOP:
		opt.Kind = subload.KHop
	case C.GF_SUBGRAPH_HGT:
		opt.Kind = subload.HGT
	case C.GF_SUBGRAPH_DRAWN:
		opt.Kind = subload.Drawn
	default:
		return opt, errorf(gfEInval, "options->kind = %d (want GF_SUBGRAPH_NODES, _EDGES, _WALKS, _PARTS, _KHOP, _HGT or _DRAWN)", int32(o.kind))
	}
	weights := map[C.int32_t]subload.Weighting{
		C.GF_SUBGRAPH_WEIGHT_OUT_DEGREE_MIN1: subload.OutDegreeAtLeast1,
		C.GF_SUBGRAPH_WEIGHT_OUT_DEGREE:      subload.OutDegree,
		C.GF_SUBGRAPH_WEIGHT_INVERSE_DEGREE:  subload.InverseDegree,
		C.GF_SUBGRAPH_WEIGHT_DEGREE_SUM:      subload.DegreeSum,
	}
	w, known := weights[o.weighting]
	switch {
	case opt.Kind == subload.Nodes && known && (w == subload.OutDegreeAtLeast1 || w == subload.OutDegree):
		opt.Weighting = w
	case opt.Kind == subload.Edges && known && (w == subload.InverseDegree || w == subload.DegreeSum):
		opt.Weighting = w
	case opt.Kind == subload.Nodes:
		return opt, errorf(gfEInval, "options->weighting = %d does not weigh nodes (want GF_SUBGRAPH_WEIGHT_OUT_DEGREE_MIN1 or _OUT_DEGREE)", int32(o.weighting))
	case opt.Kind == subload.Edges:
		return opt, errorf(gfEInval, "options->weighting = %d does not weigh edges (want GF_SUBGRAPH_WEIGHT_INVERSE_DEGREE or _DEGREE_SUM)", int32(o.weighting))
	}
	orders := map[C.int32_t]subload.Order{
		C.GF_SUBGRAPH_ORDER_SRC_EID: subload.BySrcThenEID,
		C.GF_SUBGRAPH_ORDER_SRC_DST: subload.BySrcThenDst,
		C.GF_SUBGRAPH_ORDER_DST_EID: subload.ByDstThenEID,
		C.GF_SUBGRAPH_ORDER_EID:     subload.ByEID,
	}
	order, ok := orders[o.edge_order]
	if !ok {
		return opt, errorf(gfEInval, "options->edge_order = %d (want GF_SUBGRAPH_ORDER_SRC_EID, _SRC_DST, _DST_EID or _EID)", int32(o.edge_order))
	}
	opt.Order = order
	if o.budget < 0 || int64(o.budget) > 1<<40 {
		return opt, errorf(gfEInval, "options->budget = %d (want >= 0)", int64(o.budget))
	}
	if o.walk_length < 0 || int64(o.walk_length) > 1<<30 {
		return opt, errorf(gfEInval, "options->walk_length = %d (want >= 0)", int64(o.walk_length))
	}
	opt.Budget, opt.WalkLength, opt.Threads = int(o.budget), int(o.walk_length), int(o.num_threads)
	return opt, nil
}

// hgtSamples reads GF_SUBGRAPH_HGT's num_samples (int64 [L * T], hop-major)
// as rows of the graph's T node types.
func hgtSamples(g *core.Graph, t *C.DLTensor) ([][]int, error) {
	flat, err := indexArray(t, "options->num_samples", true)
	if err != nil {
		return nil, err
	}
	types := g.Types()
	if types == nil {
		return nil, errorf(gfEInval, "GF_SUBGRAPH_HGT samples a typed graph (gf_graph_set_types); this one is untyped")
	}
	nt := types.NumNodeTypes()
	if len(flat)%nt != 0 || len(flat)/nt > maxHops {
		return nil, errorf(gfEInval, "options->num_samples has %d entries (want hops * %d node types, at most %d hops)", len(flat), nt, maxHops)
	}
	rows := make([][]int, len(flat)/nt)
	for h := range rows {
		rows[h] = make([]int, nt)
		for ty := range rows[h] {
			k := flat[h*nt+ty]
			if k < 0 || k > 1<<40 {
				return nil, errorf(gfEInval, "options->num_samples[%d] (hop %d, node type %d) = %d (want >= 0)", h*nt+ty, h, ty, k)
			}
			rows[h][ty] = int(k)
		}
	}
	return rows, nil
}

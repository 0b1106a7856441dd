package main

/*
#include "graphferry.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/distributed"
	"github.com/graphferry/graphferry/engine/linkload"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// linkKey is the key under which a batch records that pair field f was
// taken (layer -1: no gf_batch_take field has it).
func linkKey(f int32) fieldKey { return fieldKey{field: f, layer: -1} }

// edgeSamplerOptions reads and checks gf_edge_sampler_options (once); arg
// names the struct in messages. It also returns the caller's sample
// options pointer (the one an edge loader's loader options may repeat).
func edgeSamplerOptions(o *C.gf_edge_sampler_options, arg string) (core.EdgeSamplerOptions, *C.gf_sample_options, error) {
	var sample *C.gf_sample_options
	opt, err := edgeSamplerRead(o, arg, &sample)
	return opt, sample, err
}

func edgeSamplerRead(o *C.gf_edge_sampler_options, arg string, sample **C.gf_sample_options) (core.EdgeSamplerOptions, error) {
	var opt core.EdgeSamplerOptions
	if o == nil {
		return opt, errorf(gfEInval, "%s is NULL", arg)
	}
	o, err := readOptions(o, arg, edgeSamplerOptionsLayout)
	if err != nil {
		return opt, err
	}
	*sample = o.sample
	so, err := sampleOptions(o.sample, arg+"->sample")
	if err != nil {
		return opt, err
	}
	opt.Request, opt.Threads = so.req, so.threads
	amount := float64(o.amount)
	neg := int32(o.negative)
	switch o.mode {
	case C.GF_LINK_DGL:
		opt.Mode = core.LinkDGL
		k := 0
		if neg != C.GF_NEG_NONE {
			if !(amount >= 1 && amount <= math.MaxInt32 && amount == math.Trunc(amount)) {
				return opt, errorf(gfEInval, "%s->amount = %g: DGL's k must be an integer >= 1", arg, amount)
			}
			k = int(amount)
		}
		switch neg {
		case C.GF_NEG_NONE:
		case C.GF_NEG_PER_SOURCE_UNIFORM:
			opt.DGL.Negative = linkpred.PerSourceUniform{K: k}
		case C.GF_NEG_GLOBAL_UNIFORM:
			flags := uint32(o.negative_flags)
			if flags&^uint32(C.GF_NEG_KEEP_SELF_LOOPS|C.GF_NEG_REPLACE) != 0 {
				return opt, errorf(gfEInval, "%s->negative_flags = %#x: want GF_NEG_KEEP_SELF_LOOPS, GF_NEG_REPLACE or both", arg, flags)
			}
			opt.DGL.Negative = linkpred.GlobalUniform{
				K:                k,
				ExcludeSelfLoops: flags&C.GF_NEG_KEEP_SELF_LOOPS == 0,
				Replace:          flags&C.GF_NEG_REPLACE != 0,
			}
		default:
			return opt, errorf(gfEInval, "%s->negative = %d: GF_LINK_DGL takes GF_NEG_NONE, GF_NEG_PER_SOURCE_UNIFORM or GF_NEG_GLOBAL_UNIFORM", arg, neg)
		}
		if neg != C.GF_NEG_GLOBAL_UNIFORM && o.negative_flags != 0 {
			return opt, errorf(gfEInval, "%s->negative_flags = %#x is set but negative is not GF_NEG_GLOBAL_UNIFORM", arg, uint32(o.negative_flags))
		}
		switch o.exclude {
		case C.GF_EXCLUDE_NONE:
		case C.GF_EXCLUDE_SELF:
			opt.DGL.Exclude = linkpred.ExcludeSelfEdges
		case C.GF_EXCLUDE_REVERSE_ID:
			opt.DGL.Exclude = linkpred.ExcludeReverseEdges
			rev, err := indexArray(o.reverse_eids, arg+"->reverse_eids", true)
			if err != nil {
				return opt, err
			}
			if rev == nil && o.reverse_half <= 0 {
				return opt, errorf(gfEInval, "%s->exclude = GF_EXCLUDE_REVERSE_ID needs reverse_eids or reverse_half > 0", arg)
			}
			if rev != nil && o.reverse_half != 0 {
				return opt, errorf(gfEInval, "%s->reverse_eids and %s->reverse_half = %d are both given", arg, arg, int64(o.reverse_half))
			}
			if rev == nil {
				opt.DGL.Reverse.Half = int64(o.reverse_half)
			} else {
				opt.DGL.Reverse.Map = rev
			}
		default:
			return opt, errorf(gfEInval, "%s->exclude = %d (want GF_EXCLUDE_NONE, GF_EXCLUDE_SELF or GF_EXCLUDE_REVERSE_ID)", arg, int32(o.exclude))
		}
		if o.negative_weights != nil {
			return opt, errorf(gfEInval, "%s->negative_weights applies to GF_LINK_PYG only", arg)
		}
		if o.exclude != C.GF_EXCLUDE_REVERSE_ID && (o.reverse_eids != nil || o.reverse_half != 0) {
			return opt, errorf(gfEInval, "%s->reverse_eids or reverse_half is set but exclude is not GF_EXCLUDE_REVERSE_ID", arg)
		}
	case C.GF_LINK_PYG:
		opt.Mode = core.LinkPyG
		switch neg {
		case C.GF_NEG_NONE:
		case C.GF_NEG_BINARY:
			opt.PyG.Mode = linkpred.PyGBinaryMode
		case C.GF_NEG_TRIPLET:
			opt.PyG.Mode = linkpred.PyGTripletMode
		default:
			return opt, errorf(gfEInval, "%s->negative = %d: GF_LINK_PYG takes GF_NEG_NONE, GF_NEG_BINARY or GF_NEG_TRIPLET", arg, neg)
		}
		opt.PyG.Amount = amount
		if o.negative_weights != nil {
			if neg == C.GF_NEG_NONE {
				return opt, errorf(gfEInval, "%s->negative_weights is set but negative is GF_NEG_NONE", arg)
			}
			w, err := negativeWeights(o.negative_weights, arg+"->negative_weights")
			if err != nil {
				return opt, err
			}
			opt.PyG.Weights = w
		}
		if o.negative_flags != 0 {
			return opt, errorf(gfEInval, "%s->negative_flags applies to GF_LINK_DGL's GF_NEG_GLOBAL_UNIFORM only", arg)
		}
		if o.exclude != C.GF_EXCLUDE_NONE || o.reverse_eids != nil || o.reverse_half != 0 {
			return opt, errorf(gfEInval, "%s->exclude, reverse_eids and reverse_half apply to GF_LINK_DGL only", arg)
		}
	default:
		return opt, errorf(gfEInval, "%s->mode = %d (want GF_LINK_DGL or GF_LINK_PYG)", arg, int32(o.mode))
	}
	if o.exclude_callback != nil && opt.Mode != core.LinkDGL {
		return opt, errorf(gfEInval, "%s->exclude_callback applies to GF_LINK_DGL only", arg)
	}
	opt.ExcludeFunc, err = batchCallback(o.exclude_callback, arg+"->exclude_callback")
	return opt, err
}

// negativeWeights reads PyG's negative sampling weights: a float32 or
// float64 1-D CPU tensor, as the engine's alias table.
func negativeWeights(t *C.DLTensor, arg string) (*linkpred.NodeWeights, error) {
	v, err := viewTensor(t, arg)
	if err != nil {
		return nil, err
	}
	if len(v.Shape) != 1 {
		return nil, errorf(gfEInval, "%s must be 1-D (got shape %v)", arg, v.Shape)
	}
	w := make([]float64, v.Shape[0])
	switch v.DType {
	case mem.Float32:
		for i, x := range mem.Float32s(v.Data) {
			w[i] = float64(x)
		}
	case mem.Float64:
		if len(w) > 0 {
			copy(w, unsafe.Slice((*float64)(unsafe.Pointer(&v.Data[0])), len(w)))
		}
	default:
		return nil, errorf(gfEType, "%s must be float32 or float64 (got %s)", arg, v.DType)
	}
	nw, err := linkpred.NewNodeWeights(w)
	if err != nil {
		return nil, errorf(gfEInval, "%s: %v", arg, err)
	}
	return nw, nil
}

// checkNegativeWeights: PyG's negative weights hold one weight per node of
// g; on a typed graph, one per node of the type they draw (checked with the
// pairs, whose edge type says which).
func checkNegativeWeights(g *core.Graph, opt core.EdgeSamplerOptions, arg string) error {
	if g.Types() != nil {
		return nil
	}
	if w := opt.PyG.Weights; w != nil && w.Len() != g.NumNodes() {
		return errorf(gfEInval, "%s has %d weights for a graph of %d nodes (want one per node)", arg, w.Len(), g.NumNodes())
	}
	return nil
}

//export gfgo_edge_sampler_open
func gfgo_edge_sampler_open(h C.uintptr_t, o *C.gf_edge_sampler_options, out *C.uintptr_t) C.int {
	return call("gf_edge_sampler_open", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_sampler is NULL")
		}
		*out = 0
		opt, _, err := edgeSamplerOptions(o, "options")
		if err != nil {
			return err
		}
		if err := checkNegativeWeights(g, opt, "options->negative_weights"); err != nil {
			return err
		}
		s, err := g.NewEdgeSampler(opt)
		if err != nil {
			return err
		}
		putHandle(out, newHandle(kindEdgeSampler, s))
		return nil
	})
}

// linkItems reads the seeds of an edge sampler or loader of mode: edge ids
// (DGL; seeds_dst must be NULL) or pairs (PyG).
func linkItems(mode core.LinkMode, seedsT, dstT *C.DLTensor) (linkload.Items, error) {
	seeds, err := indexArray(seedsT, "seeds", false)
	if err != nil {
		return linkload.Items{}, err
	}
	if mode == core.LinkDGL {
		if dstT != nil {
			return linkload.Items{}, errorf(gfEInval, "seeds_dst must be NULL for GF_LINK_DGL (seeds are edge ids)")
		}
		return linkload.Items{EdgeIDs: seeds}, nil
	}
	if dstT == nil {
		return linkload.Items{}, errorf(gfEInval, "seeds_dst is NULL (GF_LINK_PYG takes node pairs)")
	}
	dst, err := indexArray(dstT, "seeds_dst", false)
	if err != nil {
		return linkload.Items{}, err
	}
	if len(dst) != len(seeds) {
		return linkload.Items{}, errorf(gfEInval, "seeds has %d entries but seeds_dst has %d", len(seeds), len(dst))
	}
	return linkload.Items{Pairs: linkpred.Pairs{Src: seeds, Dst: dst}}, nil
}

//export gfgo_edge_sampler_sample
func gfgo_edge_sampler_sample(h C.uintptr_t, seedsT, dstT *C.DLTensor, key C.uint64_t, out *C.uintptr_t) C.int {
	return call("gf_edge_sampler_sample", func() error {
		s, err := lookup[*core.EdgeSampler](kindEdgeSampler, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_batch is NULL")
		}
		*out = 0
		items, err := linkItems(s.Mode(), seedsT, dstT)
		if err != nil {
			return err
		}
		var eb *core.EdgeBatch
		if s.Mode() == core.LinkDGL {
			eb, err = s.SampleDGL(items.EdgeIDs, uint64(key), cAlloc{})
		} else {
			eb, err = s.SamplePyG(items.Pairs, uint64(key), cAlloc{})
		}
		if err != nil {
			return err
		}
		newBatch(eb.Batch, out)
		return nil
	})
}

//export gfgo_edge_sampler_sample_timed
func gfgo_edge_sampler_sample_timed(h C.uintptr_t, seedsT, dstT, timesT *C.DLTensor, key C.uint64_t, out *C.uintptr_t) C.int {
	return call("gf_edge_sampler_sample_timed", func() error {
		s, err := lookup[*core.EdgeSampler](kindEdgeSampler, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_batch is NULL")
		}
		*out = 0
		if s.Mode() != core.LinkPyG {
			return errorf(gfEInval, "gf_edge_sampler_sample_timed samples GF_LINK_PYG pairs (this sampler is GF_LINK_DGL)")
		}
		items, err := linkItems(s.Mode(), seedsT, dstT)
		if err != nil {
			return err
		}
		times, err := seedTimes(timesT, "seed_times", items.Pairs.Len())
		if err != nil {
			return err
		}
		eb, err := s.SamplePyGTimed(items.Pairs, times, uint64(key), cAlloc{})
		if err != nil {
			return err
		}
		newBatch(eb.Batch, out)
		return nil
	})
}

//export gfgo_edge_sampler_close
func gfgo_edge_sampler_close(h C.uintptr_t) {
	call("gf_edge_sampler_close", func() error {
		if s, ok := forget[*core.EdgeSampler](kindEdgeSampler, h); ok {
			return s.Close()
		}
		return nil
	})
}

//export gfgo_edge_loader_open
func gfgo_edge_loader_open(h C.uintptr_t, seedsT, dstT *C.DLTensor, o *C.gf_edge_loader_options, out *C.uintptr_t) C.int {
	return call("gf_edge_loader_open", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		items, opt, lopt, lo, err := edgeLoaderArgs(g, seedsT, dstT, o, out)
		if err != nil {
			return err
		}
		a, err := readAllocator(lo, "options->loader->allocator")
		if err != nil {
			return err
		}
		l, err := g.OpenEdgeLoader(items, opt, lopt, a)
		if err != nil {
			a.release()
			return err
		}
		putLoader(out, l, a)
		return nil
	})
}

// edgeLoaderArgs reads gf_edge_loader_open's arguments over g, shared
// with gf_edge_loader_open_comm and gf_edge_loader_open_part: the items,
// the sampler and loader options, and options->loader's allocator; out is
// cleared first.
func edgeLoaderArgs(g *core.Graph, seedsT, dstT *C.DLTensor, o *C.gf_edge_loader_options, out *C.uintptr_t) (linkload.Items, core.EdgeSamplerOptions, pipeline.Options, *C.gf_allocator, error) {
	var items linkload.Items
	var opt core.EdgeSamplerOptions
	var lopt pipeline.Options
	if out == nil {
		return items, opt, lopt, nil, errorf(gfEInval, "out_loader is NULL")
	}
	*out = 0
	if o == nil {
		return items, opt, lopt, nil, errorf(gfEInval, "options is NULL")
	}
	o, err := readOptions(o, "options", edgeLoaderOptionsLayout)
	if err != nil {
		return items, opt, lopt, nil, err
	}
	opt, sampler, err := edgeSamplerOptions(o.sampler, "options->sampler")
	if err != nil {
		return items, opt, lopt, nil, err
	}
	if err := checkNegativeWeights(g, opt, "options->sampler->negative_weights"); err != nil {
		return items, opt, lopt, nil, err
	}
	lo, err := loaderOptions(o.loader, "options->loader", false)
	if err != nil {
		return items, opt, lopt, nil, err
	}
	if lo.sample != nil && lo.sample != sampler {
		return items, opt, lopt, nil, errorf(gfEInval, "options->loader->sample must be NULL or options->sampler->sample (an edge loader samples with the sampler's options)")
	}
	if lo.seedTimes != nil && opt.Mode != core.LinkPyG {
		return items, opt, lopt, nil, errorf(gfEInval, "options->loader->seed_times must be NULL for GF_LINK_DGL (PyG's temporal link sampling only)")
	}
	lopt = lo.opts
	lopt.Threads = opt.Threads
	lopt.COO = lopt.COO || o.coo != 0
	if lopt.EdgeFeatureNames, err = cStrings((**C.char)(unsafe.Pointer(o.edge_feature_names)), o.num_edge_feature_names, "options->edge_feature_names"); err != nil {
		return items, opt, lopt, nil, err
	}
	if items, err = linkItems(opt.Mode, seedsT, dstT); err != nil {
		return items, opt, lopt, nil, err
	}
	if lo.seedTimes != nil { // one time per pair, shuffled with the pairs
		items.Times = lo.seedTimes
		if err := checkTimes(items.Times, "options->loader->seed_times", items.Pairs.Len()); err != nil {
			return items, opt, lopt, nil, err
		}
	}
	return items, opt, lopt, lo.allocator, nil
}

//export gfgo_edge_loader_open_comm
func gfgo_edge_loader_open_comm(h C.uintptr_t, seedsT, dstT *C.DLTensor, o *C.gf_edge_loader_options, c *C.gf_comm, out *C.uintptr_t) C.int {
	return call("gf_edge_loader_open_comm", func() error {
		g, err := lookup[*core.Graph](kindGraph, h)
		if err != nil {
			return err
		}
		items, opt, lopt, lo, err := edgeLoaderArgs(g, seedsT, dstT, o, out)
		if err != nil {
			return err
		}
		return openCommLoader(c, lo, "options->loader->allocator", out, func(hc comm.Comm, a loaderAlloc) (*core.Loader, error) {
			return distributed.OpenEdgeLoader(g, hc, items, opt, lopt, a)
		})
	})
}

//export gfgo_edge_loader_open_part
func gfgo_edge_loader_open_part(h C.uintptr_t, seedsT, dstT *C.DLTensor, o *C.gf_edge_loader_options, c *C.gf_comm, out *C.uintptr_t) C.int {
	return call("gf_edge_loader_open_part", func() error {
		p, err := lookup[*distributed.Part](kindPart, h)
		if err != nil {
			return err
		}
		items, opt, lopt, lo, err := edgeLoaderArgs(p.Graph(), seedsT, dstT, o, out)
		if err != nil {
			return err
		}
		return openCommLoader(c, lo, "options->loader->allocator", out, func(hc comm.Comm, a loaderAlloc) (*core.Loader, error) {
			return p.OpenEdgeLoader(hc, items, opt, lopt, a)
		})
	})
}

//export gfgo_batch_take_link
func gfgo_batch_take_link(h C.uintptr_t, field C.int32_t, out **C.DLManagedTensor) C.int {
	return call("gf_batch_take_link", func() error {
		b, err := lookup[*batchObj](kindBatch, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out_tensor is NULL")
		}
		*out = nil
		if field < 0 || core.LinkField(field) >= core.NumLinkFields {
			return errorf(gfEInval, "field = %d is not a GF_LINK_* value", int32(field))
		}
		if len(b.b.Link) != int(core.NumLinkFields) {
			return errorf(gfEInval, "this batch is not an edge batch (from gf_edge_sampler_sample or an edge loader)")
		}
		key := linkKey(int32(field))
		if b.taken[key] {
			return errorf(gfEState, "link field %d was already taken from this batch", int32(field))
		}
		if err := take(&b.b.Link[field], out); err != nil {
			return err
		}
		b.taken[key] = true
		return nil
	})
}

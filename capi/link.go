package main

/*
#include "graphferry.h"
*/
import "C"

import (
	"math"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
)

var edgeSamplerOptionsLayout = newLayout("gf_edge_sampler_options", C.gf_edge_sampler_options{})

// linkFieldName is the name under which an edge batch keeps pair-index
// field f among its node data, so that gf_batch_close frees it and
// gf_batch_take tracking applies. It starts with a NUL byte: no C string
// can name it, so it never meets a caller's node data.
func linkFieldName(f core.LinkField) string {
	return "\x00link" + string(rune('0'+int(f)))
}

// edgeSamplerOptions reads and checks gf_edge_sampler_options.
func edgeSamplerOptions(o *C.gf_edge_sampler_options) (core.EdgeSamplerOptions, error) {
	var opt core.EdgeSamplerOptions
	if o == nil {
		return opt, errorf(gfEInval, "options is NULL")
	}
	o, err := readOptions(o, "options", edgeSamplerOptionsLayout)
	if err != nil {
		return opt, err
	}
	if opt.Request, opt.Threads, err = sampleOptions(o.sample, "options->sample"); err != nil {
		return opt, err
	}
	amount := float64(o.amount)
	neg := int32(o.negative)
	switch o.mode {
	case C.GF_LINK_DGL:
		opt.Mode = core.LinkDGL
		k := 0
		if neg != C.GF_NEG_NONE {
			if !(amount >= 1 && amount <= math.MaxInt32 && amount == math.Trunc(amount)) {
				return opt, errorf(gfEInval, "options->amount = %g: DGL's k must be an integer >= 1", amount)
			}
			k = int(amount)
		}
		switch neg {
		case C.GF_NEG_NONE:
		case C.GF_NEG_PER_SOURCE_UNIFORM:
			opt.DGL.Negative = linkpred.PerSourceUniform{K: k}
		case C.GF_NEG_GLOBAL_UNIFORM:
			opt.DGL.Negative = linkpred.GlobalUniform{K: k, ExcludeSelfLoops: true}
		default:
			return opt, errorf(gfEInval, "options->negative = %d: GF_LINK_DGL takes GF_NEG_NONE, GF_NEG_PER_SOURCE_UNIFORM or GF_NEG_GLOBAL_UNIFORM", neg)
		}
		switch o.exclude {
		case C.GF_EXCLUDE_NONE:
		case C.GF_EXCLUDE_SELF:
			opt.DGL.Exclude = linkpred.ExcludeSelfEdges
		case C.GF_EXCLUDE_REVERSE_ID:
			opt.DGL.Exclude = linkpred.ExcludeReverseEdges
			rev, err := indexArray(o.reverse_eids, "options->reverse_eids", true)
			if err != nil {
				return opt, err
			}
			if rev == nil && o.reverse_half <= 0 {
				return opt, errorf(gfEInval, "options->exclude = GF_EXCLUDE_REVERSE_ID needs reverse_eids or reverse_half > 0")
			}
			if rev != nil && o.reverse_half != 0 {
				return opt, errorf(gfEInval, "options->reverse_eids and options->reverse_half = %d are both given", int64(o.reverse_half))
			}
			if rev == nil {
				opt.DGL.Reverse.Half = int64(o.reverse_half)
			} else {
				opt.DGL.Reverse.Map = rev
			}
		default:
			return opt, errorf(gfEInval, "options->exclude = %d (want GF_EXCLUDE_NONE, GF_EXCLUDE_SELF or GF_EXCLUDE_REVERSE_ID)", int32(o.exclude))
		}
		if o.exclude != C.GF_EXCLUDE_REVERSE_ID && (o.reverse_eids != nil || o.reverse_half != 0) {
			return opt, errorf(gfEInval, "options->reverse_eids or reverse_half is set but exclude is not GF_EXCLUDE_REVERSE_ID")
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
			return opt, errorf(gfEInval, "options->negative = %d: GF_LINK_PYG takes GF_NEG_NONE, GF_NEG_BINARY or GF_NEG_TRIPLET", neg)
		}
		opt.PyG.Amount = amount
		if o.exclude != C.GF_EXCLUDE_NONE || o.reverse_eids != nil || o.reverse_half != 0 {
			return opt, errorf(gfEInval, "options->exclude, reverse_eids and reverse_half apply to GF_LINK_DGL only")
		}
	default:
		return opt, errorf(gfEInval, "options->mode = %d (want GF_LINK_DGL or GF_LINK_PYG)", int32(o.mode))
	}
	return opt, nil
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
		opt, err := edgeSamplerOptions(o)
		if err != nil {
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
		seeds, err := indexArray(seedsT, "seeds", false)
		if err != nil {
			return err
		}
		var eb *core.EdgeBatch
		if s.Mode() == core.LinkDGL {
			if dstT != nil {
				return errorf(gfEInval, "seeds_dst must be NULL for a GF_LINK_DGL sampler (seeds are edge ids)")
			}
			eb, err = s.SampleDGL(seeds, uint64(key), cAlloc{})
		} else {
			if dstT == nil {
				return errorf(gfEInval, "seeds_dst is NULL (a GF_LINK_PYG sampler takes node pairs)")
			}
			dst, err := indexArray(dstT, "seeds_dst", false)
			if err != nil {
				return err
			}
			if len(dst) != len(seeds) {
				return errorf(gfEInval, "seeds has %d entries but seeds_dst has %d", len(seeds), len(dst))
			}
			eb, err = s.SamplePyG(linkpred.Pairs{Src: seeds, Dst: dst}, uint64(key), cAlloc{})
			if err != nil {
				return err
			}
		}
		if err != nil {
			return err
		}
		// The pair indices travel as node data under names no C caller can
		// give, so that the batch's release frees them.
		b := eb.Batch
		if b.NodeData == nil {
			b.NodeData = map[string]mem.Tensor{}
		}
		for f := range core.NumLinkFields {
			b.NodeData[linkFieldName(f)] = eb.Link[f]
		}
		newBatch(b, out)
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
		n := linkFieldName(core.LinkField(field))
		t, ok := b.b.NodeData[n]
		if !ok {
			return errorf(gfEInval, "this batch is not an edge batch (from gf_edge_sampler_sample)")
		}
		if b.names[n] {
			return errorf(gfEState, "link field %d was already taken from this batch", int32(field))
		}
		if err := take(&t, out); err != nil {
			return err
		}
		b.b.NodeData[n] = t
		b.names[n] = true
		return nil
	})
}

package main

/*
#include "graphferry.h"

void gf__partition_progress(void (*fn)(void *, int64_t, int64_t), void *user, int64_t done,
                            int64_t total);
*/
import "C"

import (
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// datasetPartitionOptions checks the C options and converts them; the assignment
// is copied, so nothing of the caller's is kept after the call.
func datasetPartitionOptions(p *C.gf_partition_options) (rankpart.PartitionOptions, error) {
	var opt rankpart.PartitionOptions
	if p == nil {
		return opt, errorf(gfEInval, "options is NULL")
	}
	o, err := readOptions(p, "options", partitionOptionsLayout)
	if err != nil {
		return opt, err
	}
	switch o.method {
	case C.GF_PARTITION_RANGE:
		opt.Method = partition.Range
	case C.GF_PARTITION_RANDOM:
		opt.Method = partition.Random
	case C.GF_PARTITION_GIVEN:
		opt.Method = partition.Given
	case C.GF_PARTITION_LDG:
		opt.Method = partition.LDG
	default:
		return opt, errorf(gfEInval, "options->method = %d (want GF_PARTITION_RANGE, _RANDOM, _GIVEN or _LDG)", int32(o.method))
	}
	if o.num_parts < 1 || o.num_parts > C.GF_MAX_PARTS {
		return opt, errorf(gfEInval, "options->num_parts = %d (want 1 to GF_MAX_PARTS = %d)", int32(o.num_parts), C.GF_MAX_PARTS)
	}
	opt.Parts = int(o.num_parts)
	switch o.layout {
	case C.GF_LAYOUT_DSP:
		opt.Layout = rankpart.LayoutDSP
	case C.GF_LAYOUT_SELF_RELIANT:
		opt.Layout = rankpart.LayoutSelfReliant
	case C.GF_LAYOUT_HYBRID:
		opt.Layout = rankpart.LayoutHybrid
	default:
		return opt, errorf(gfEInval, "options->layout = %d (want GF_LAYOUT_DSP, GF_LAYOUT_SELF_RELIANT or GF_LAYOUT_HYBRID)", int32(o.layout))
	}
	if o.num_hops < 0 {
		return opt, errorf(gfEInval, "options->num_hops = %d (want >= 0)", int32(o.num_hops))
	}
	opt.Hops = int(o.num_hops)
	opt.Seed = uint64(o.seed)
	if o.assignment != nil && opt.Method != partition.Given {
		return opt, errorf(gfEInval, "options->assignment is set but options->method is not GF_PARTITION_GIVEN")
	}
	if opt.Method == partition.Given {
		if o.assignment == nil {
			return opt, errorf(gfEInval, "options->assignment is NULL (GF_PARTITION_GIVEN needs one)")
		}
		if opt.Assignment, err = indexArray(o.assignment, "options->assignment", false); err != nil {
			return opt, err
		}
	}
	if o.method_name != nil {
		opt.MethodName = C.GoString(o.method_name)
	}
	opt.Overwrite, opt.Resume = o.overwrite != 0, o.resume != 0
	if o.memory_limit_bytes < 0 {
		return opt, errorf(gfEInval, "options->memory_limit_bytes = %d (want >= 0; 0: no bound)", int64(o.memory_limit_bytes))
	}
	opt.MemoryLimit = int64(o.memory_limit_bytes)
	if fn, user := o.progress, o.progress_user; fn != nil {
		opt.Progress = func(done, total int) {
			C.gf__partition_progress(fn, user, C.int64_t(done), C.int64_t(total))
		}
	}
	return opt, nil
}

//export gfgo_dataset_partition
func gfgo_dataset_partition(src, dst *C.char, o *C.gf_partition_options) C.int {
	return call("gf_dataset_partition", func() error {
		s, err := goString(src, "src_dir")
		if err != nil {
			return err
		}
		d, err := goString(dst, "dst_dir")
		if err != nil {
			return err
		}
		opt, err := datasetPartitionOptions(o)
		if err != nil {
			return err
		}
		// Every recorded checksum is checked before anything is written:
		// the rank folders get fresh checksums, which would otherwise
		// certify a damaged source's bytes.
		ctx, end := callContext()
		defer end()
		ds, err := dataset.OpenWith(s, dataset.OpenOptions{VerifyChecksums: true, Context: ctx})
		if err != nil {
			return cancelled(ctx, err)
		}
		defer ds.Close()
		if opt.Method == partition.Given && int64(len(opt.Assignment)) != ds.Meta.NumNodes {
			return errorf(gfEInval, "options->assignment has %d entries, the dataset %d nodes", len(opt.Assignment), ds.Meta.NumNodes)
		}
		opt.Context = ctx
		_, err = rankpart.Partition(ds, d, opt)
		return cancelled(ctx, err)
	})
}

package main

/*
#include "graphferry.h"
*/
import "C"

import (
	"sort"
	"strings"

	"github.com/graphferry/graphferry/engine/convert"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/gen"
)

// overwriteOption reads options->overwrite of a gf_output_options (NULL:
// false).
func overwriteOption(p *C.gf_output_options) (bool, error) {
	o, err := readOptions(p, "options", outputOptionsLayout)
	if err != nil || o == nil {
		return false, err
	}
	return o.overwrite != 0, nil
}

//export gfgo_dataset_convert_npy_into
func gfgo_dataset_convert_npy_into(src, dst *C.char, o *C.gf_output_options) C.int {
	return call("gf_dataset_convert_npy", func() error {
		s, err := goString(src, "src_dir")
		if err != nil {
			return err
		}
		d, err := goString(dst, "dst_dir")
		if err != nil {
			return err
		}
		overwrite, err := overwriteOption(o)
		if err != nil {
			return err
		}
		ctx, end := callContext()
		defer end()
		return cancelled(ctx, convert.ConvertNPYWith(s, d, convert.Options{Context: ctx, Overwrite: overwrite}))
	})
}

//export gfgo_dataset_write_csc
func gfgo_dataset_write_csc(dir *C.char) C.int {
	return call("gf_dataset_write_csc", func() error {
		d, err := goString(dir, "dir")
		if err != nil {
			return err
		}
		return dataset.WriteCSC(d)
	})
}

//export gfgo_dataset_generate_into
func gfgo_dataset_generate_into(preset, dst *C.char, seed C.uint64_t, threads C.int32_t, o *C.gf_output_options) C.int {
	return call("gf_dataset_generate", func() error {
		name, err := goString(preset, "preset")
		if err != nil {
			return err
		}
		d, err := goString(dst, "dst_dir")
		if err != nil {
			return err
		}
		presets := gen.Presets()
		p, ok := presets[name]
		if !ok {
			names := make([]string, 0, len(presets))
			for n := range presets {
				names = append(names, n)
			}
			sort.Strings(names)
			return errorf(gfEInval, "preset = %q is unknown (have: %s)", name, strings.Join(names, ", "))
		}
		if seed != 0 {
			p.RMAT.Seed = uint64(seed)
			p.Features.Seed = uint64(seed)
		}
		p.RMAT.Threads = int(threads)
		p.Features.Threads = int(threads)
		overwrite, err := overwriteOption(o)
		if err != nil {
			return err
		}
		return gen.Generate(p, d, overwrite)
	})
}

package main

/*
#include "graphferry.h"
*/
import "C"

import (
	"context"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/core"
)

//export gfgo_loader_set_cache
func gfgo_loader_set_cache(h C.uintptr_t, o *C.gf_cache_options, outRows *C.int64_t) C.int {
	return call("gf_loader_set_cache", func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		if o == nil {
			return errorf(gfEInval, "options is NULL")
		}
		o, err := readOptions(o, "options", cacheOptionsLayout)
		if err != nil {
			return err
		}
		rows, err := l.SetCache(context.Background(), core.CacheOptions{
			Policy: core.CachePolicy(o.policy),
			Size: cache.Size{
				Bytes: int64(o.bytes), Fraction: float64(o.fraction),
				Auto: o.auto_size != 0, Budget: int64(o.budget), Reserve: int64(o.reserve),
			},
			PreSampleEpochs: int(o.presample_epochs),
		})
		if err != nil {
			return err // statusOf: EINVAL for bad options, EIO, ENOMEM
		}
		if outRows != nil {
			*outRows = C.int64_t(rows)
		}
		return nil
	})
}

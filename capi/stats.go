package main

/*
#include "graphferry.h"
*/
import "C"

import (
	"unsafe"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
)

func tierCounters(c pipeline.Counters) C.gf_tier_counters {
	g := c.Gathered
	return C.gf_tier_counters{
		rows_cache:      C.int64_t(g.CacheRows),
		rows_disk:       C.int64_t(g.DiskRows),
		bytes_disk:      C.int64_t(g.DiskBytes),
		bytes_disk_read: C.int64_t(g.DiskRead),
		disk_requests:   C.int64_t(g.DiskRequests),
	}
}

func stageStats(s pipeline.StageStats) C.gf_stage_stats {
	return C.gf_stage_stats{
		busy_ns:    C.int64_t(s.Busy),
		blocked_ns: C.int64_t(s.Blocked),
		waiting_ns: C.int64_t(s.Waiting),
		batches:    C.int64_t(s.Batches),
	}
}

func loaderCounters(c pipeline.Counters) C.gf_loader_counters {
	return C.gf_loader_counters{
		sampler:      stageStats(c.Sampler),
		loader:       stageStats(c.Loader),
		consumer:     stageStats(c.Consumer),
		bytes_host:   C.int64_t(c.Gathered.Bytes[mem.KindHost]),
		bytes_pinned: C.int64_t(c.Gathered.Bytes[mem.KindPinned]),
		bytes_device: C.int64_t(c.Gathered.Bytes[mem.KindDevice]),
		rows_hot:     C.int64_t(c.Gathered.HotRows),
		rows_cold:    C.int64_t(c.Gathered.ColdRows),
		wall_ns:      C.int64_t(c.Wall),
	}
}

//export gfgo_loader_stats
func gfgo_loader_stats(h C.uintptr_t, out *C.gf_loader_statistics) C.int {
	return call("gf_loader_stats", func() error {
		l, err := lookup[*core.Loader](kindLoader, h)
		if err != nil {
			return err
		}
		if out == nil {
			return errorf(gfEInval, "out is NULL")
		}
		size := uintptr(out.struct_size)
		if size < loaderStatisticsLayout.min || size > C.sizeof_gf_loader_statistics {
			return errorf(gfEInval, "out->struct_size = %d is outside the accepted range [%d, %d] of gf_loader_statistics sizes (set struct_size = sizeof(gf_loader_statistics))",
				size, loaderStatisticsLayout.min, C.sizeof_gf_loader_statistics)
		}
		st := l.Stats()
		res := C.gf_loader_statistics{
			struct_size:   out.struct_size,
			workers:       C.int32_t(st.Workers),
			epoch:         C.uint64_t(st.Epoch),
			epochs:        C.int64_t(st.Epochs),
			current:       loaderCounters(st.Current),
			total:         loaderCounters(st.Total),
			current_tiers: tierCounters(st.Current),
			total_tiers:   tierCounters(st.Total),
		}
		// Only the caller's struct_size bytes are written: a later, longer
		// layout never writes past an older caller's struct.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(out)), size), unsafe.Slice((*byte)(unsafe.Pointer(&res)), size))
		return nil
	})
}

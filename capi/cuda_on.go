//go:build cuda

package main

// The CUDA library (make lib-cuda: go build -tags cuda) links the device
// backend, package cuda, which brings gorgonia.org/cu and so NEEDED
// libcuda.so.1 and a cuInit at load time. This file is its only link to
// capi. Until the device path joins the pipeline (after the engine's device
// seams), it exports two hooks for tests/gpu/run.sh, not part of
// include/graphferry.h:
//
//	int gfcuda_selfcheck(int64_t nodes, int32_t batches, uint64_t seed,
//	                     char *report, size_t cap);
//	int gfcuda_epoch(const char *config_json, char *report, size_t cap);
//
// Each returns 0 on success, 1 on failure, and writes a NUL-terminated JSON
// report (or the error message) into report[0:cap]. The exported C
// functions are the default-visibility shims of cuda_hooks.c (the package is
// compiled with hidden visibility; graphferry.map.o keeps gfcuda_* global).

/*
#include <stddef.h>
#include <stdint.h>
#include <string.h>
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/graphferry/graphferry/cuda"
)

// writeReport copies s (truncated) into the caller's buffer.
func writeReport(dst *C.char, cap C.size_t, s string) {
	if dst == nil || cap == 0 {
		return
	}
	n := min(len(s), int(cap)-1)
	buf := unsafe.Slice((*byte)(unsafe.Pointer(dst)), int(cap))
	copy(buf, s[:n])
	buf[n] = 0
}

// hook runs fn, turning an error or a panic into status 1 and its message.
func hook(report *C.char, cap C.size_t, fn func() (any, error)) (status C.int) {
	defer func() {
		if r := recover(); r != nil {
			writeReport(report, cap, fmt.Sprintf("panic: %v", r))
			status = 1
		}
	}()
	v, err := fn()
	if err != nil {
		writeReport(report, cap, err.Error())
		return 1
	}
	b, err := json.Marshal(v)
	if err != nil {
		writeReport(report, cap, err.Error())
		return 1
	}
	writeReport(report, cap, string(b))
	return 0
}

//export gfcudago_selfcheck
func gfcudago_selfcheck(nodes C.int64_t, batches C.int32_t, seed C.uint64_t, report *C.char, cap C.size_t) C.int {
	return hook(report, cap, func() (any, error) {
		if nodes <= 0 || batches <= 0 {
			return nil, fmt.Errorf("gfcuda_selfcheck: nodes = %d and batches = %d must be positive", nodes, batches)
		}
		dev, err := cuda.Open(0)
		if err != nil {
			return nil, err
		}
		defer dev.Close()
		return cuda.SelfCheck(dev, cuda.CheckConfig{Nodes: int64(nodes), AvgDegree: 8, Hubs: 4, Patches: 3,
			Batches: int(batches), BatchSize: 64, Seed: uint64(seed)})
	})
}

//export gfcudago_epoch
func gfcudago_epoch(config *C.char, report *C.char, cap C.size_t) C.int {
	return hook(report, cap, func() (any, error) {
		if config == nil {
			return nil, fmt.Errorf("gfcuda_epoch: config is NULL")
		}
		var cfg cuda.EpochConfig
		if err := json.Unmarshal([]byte(C.GoString(config)), &cfg); err != nil {
			return nil, fmt.Errorf("gfcuda_epoch: config: %w", err)
		}
		dev, err := cuda.Open(0)
		if err != nil {
			return nil, err
		}
		defer dev.Close()
		res, err := cuda.EpochBench(dev, cfg)
		if err != nil {
			return nil, err
		}
		out := struct {
			cuda.EpochResult
			CopyBytesPerSecond float64 `json:"h2d_pageable_bytes_per_second"`
		}{EpochResult: res}
		if g, ok := dev.(*cuda.GPU); ok {
			out.CopyBytesPerSecond, _ = g.CopyBandwidth(256<<20, 5)
		}
		return out, nil
	})
}

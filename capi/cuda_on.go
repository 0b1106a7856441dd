//go:build cuda

package main

// The CUDA library (make lib-cuda: go build -tags cuda) links the device
// backend, package cuda, which brings gorgonia.org/cu and so NEEDED
// libcuda.so.1 and a cuInit at load time. This file is its only link to
// capi. Linking it registers the CUDA backend with the engine
// (engine/device: gf_loader_open's device loaders, assembled by
// core.Graph.OpenLoaderOn; device.go marshals them), and this file exports
// test and check hooks, not part of include/graphferry.h (graphferry/_backend.py and
// tests/gpu use them; gfcuda_selfcheck compares the kernels and then the
// mode-2 pipeline with the CPU engine; gfcuda_epoch times the device
// sampler stage's epoch and, with GatherRows, the gather per tier beside
// the device's copies, cuda.EpochBench):
//
//	int gfcuda_check(int32_t ordinal, char *report, size_t cap);
//	int gfcuda_selfcheck(int32_t ordinal, int64_t nodes, int32_t batches,
//	                     uint64_t seed, char *report, size_t cap);
//	int gfcuda_epoch(int32_t ordinal, const char *config_json, char *report,
//	                 size_t cap);
//	int gfcuda_fault(int32_t ordinal, const char *kind, char *report,
//	                 size_t cap);
//
// Each returns 0 on success, 1 on failure, and writes a NUL-terminated JSON
// report (or the error message) into report[0:cap]. The device ordinal is
// the caller's (graphferry passes PyTorch's current device). Every hook
// leaves the calling thread's current CUDA context as it found it (package
// cuda pushes and pops its context). The exported C functions are the
// default-visibility shims of cuda_hooks.c, which apply the fork guard
// (the package is compiled with hidden visibility; graphferry.map.o keeps
// gfcuda_* global).

/*
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graphferry.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/graphferry/graphferry/cuda"
	"github.com/graphferry/graphferry/engine/device"
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

// disabled is set by a hook that panicked: the Go side's state (a GPU
// half opened, a lock or context left behind) can no longer be trusted, so
// every later hook and device loader is refused with it.
var disabled atomic.Pointer[error]

// refused is the device backend once the library is disabled.
type refused struct{ err error }

func (r refused) Open(device.Request) (device.Stages, error) { return device.Stages{}, r.err }

// hook runs fn, turning an error or a panic into status 1 and its message;
// a panic disables the CUDA side of the library for the process.
func hook(name string, report *C.char, cap C.size_t, fn func() (any, error)) (status C.int) {
	if e := disabled.Load(); e != nil {
		writeReport(report, cap, (*e).Error())
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			e := fmt.Errorf("graphferry's CUDA library is disabled in this process: %s panicked (%v); restart the process", name, r)
			disabled.CompareAndSwap(nil, &e)
			device.Register(refused{e})
			writeReport(report, cap, fmt.Sprintf("panic: %v (%v)", r, e))
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

// withDevice runs fn on the GPU of the caller's ordinal, then closes it:
// an error of Close is reported with fn's.
func withDevice(ordinal C.int32_t, fn func(*cuda.GPU) (any, error)) (any, error) {
	dev, err := cuda.OpenGPU(int(ordinal))
	if err != nil {
		return nil, err
	}
	v, err := fn(dev)
	if cerr := dev.Close(); cerr != nil {
		return nil, errors.Join(err, cerr)
	}
	return v, err
}

//export gfcudago_check
func gfcudago_check(ordinal C.int32_t, report *C.char, cap C.size_t) C.int {
	return hook("gfcuda_check", report, cap, func() (any, error) {
		return withDevice(ordinal, func(g *cuda.GPU) (any, error) {
			return struct {
				cuda.Info
				BuildID string `json:"build_id"`
			}{g.Info(), C.GoString(C.gf_build_id())}, nil
		})
	})
}

// selfcheckPipelineSchemes is how many schemes gfcuda_selfcheck runs the
// pipeline check on (of every layout).
const selfcheckPipelineSchemes = 8

//export gfcudago_selfcheck
func gfcudago_selfcheck(ordinal C.int32_t, nodes C.int64_t, batches C.int32_t, seed C.uint64_t, report *C.char, cap C.size_t) C.int {
	return hook("gfcuda_selfcheck", report, cap, func() (any, error) {
		if nodes <= 0 || batches <= 0 {
			return nil, fmt.Errorf("gfcuda_selfcheck: nodes = %d and batches = %d must be positive", nodes, batches)
		}
		return withDevice(ordinal, func(dev *cuda.GPU) (any, error) { return selfcheck(dev, nodes, batches, seed) })
	})
}

func selfcheck(dev *cuda.GPU, nodes C.int64_t, batches C.int32_t, seed C.uint64_t) (any, error) {
	cfg := cuda.CheckConfig{Nodes: int64(nodes), AvgDegree: 8, Hubs: 4, Patches: 3, Batches: int(batches), BatchSize: 64, Seed: uint64(seed)}
	kernels, err := cuda.SelfCheck(dev, cfg)
	if err != nil {
		return nil, err
	}
	// The mode-2 pipeline (device sampler stage, tiers, gather,
	// outputs) on a spread of the schemes: TestGPUPipelineCheck runs
	// every one.
	pl, err := cuda.PipelineCheck(dev, cfg, selfcheckPipelineSchemes)
	if err != nil {
		return nil, fmt.Errorf("mode-2 pipeline: %w", err)
	}
	return struct {
		cuda.CheckReport
		Pipeline cuda.CheckReport `json:"pipeline"`
	}{kernels, pl}, nil
}

//export gfcudago_epoch
func gfcudago_epoch(ordinal C.int32_t, config *C.char, report *C.char, cap C.size_t) C.int {
	return hook("gfcuda_epoch", report, cap, func() (any, error) {
		if config == nil {
			return nil, fmt.Errorf("gfcuda_epoch: config is NULL")
		}
		var cfg cuda.EpochConfig
		if err := json.Unmarshal([]byte(C.GoString(config)), &cfg); err != nil {
			return nil, fmt.Errorf("gfcuda_epoch: config: %w", err)
		}
		return withDevice(ordinal, func(dev *cuda.GPU) (any, error) {
			res, err := cuda.EpochBench(dev, cfg)
			if err != nil {
				return nil, err
			}
			out := struct {
				cuda.EpochResult
				CopyBytesPerSecond float64 `json:"h2d_pageable_bytes_per_second"`
			}{EpochResult: res}
			out.CopyBytesPerSecond, _ = dev.CopyBandwidth(256<<20, 5)
			return out, nil
		})
	})
}

// gfcudago_fault makes the deliberately faulty launch kind (cuda.Fault) and
// succeeds when graphferry reported it; the report is the error message.
// Kind "panic" panics inside the hook, for the test that a panic disables
// the library.
//
//export gfcudago_fault
func gfcudago_fault(ordinal C.int32_t, kind *C.char, report *C.char, cap C.size_t) C.int {
	return hook("gfcuda_fault", report, cap, func() (any, error) {
		if kind == nil {
			return nil, fmt.Errorf("gfcuda_fault: kind is NULL")
		}
		return withDevice(ordinal, func(dev *cuda.GPU) (any, error) {
			if C.GoString(kind) == "panic" {
				panic("the deliberate panic of gfcuda_fault")
			}
			reported, err := cuda.Fault(dev, C.GoString(kind))
			if err != nil {
				return nil, err
			}
			if reported == nil {
				return nil, fmt.Errorf("gfcuda_fault: the %s fault was not reported", C.GoString(kind))
			}
			return reported.Error(), nil
		})
	})
}

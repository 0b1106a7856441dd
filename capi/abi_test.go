//go:build gftest

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/pipeline"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var abiIndptr, abiIndices = []int64{0, 2, 5, 6, 8, 8, 10}, []int64{1, 2, 0, 3, 4, 0, 1, 5, 2, 3}

func TestOptionLayouts(t *testing.T) {
	// Today's sample options end with allocator (a pointer); the first
	// layout ends with num_threads and has 4 bytes of padding, the layout
	// ending with layer_dependency (60) has 4 bytes of padding where
	// num_relations now lies.
	assert.Equal(t, uintptr(36), sampleOptionsLayout.min)
	assert.Equal(t, map[uintptr]uintptr{40: 36, 64: 60}, sampleOptionsLayout.older)
	assert.Equal(t, uintptr(104), sizeofSampleOptions)
	assert.Equal(t, uintptr(72), loaderOptionsLayout.min)
	// seed_times (80), allocator (88), then device, stream, the hot tier,
	// device_topology (124) and coo (128); 104, an early draft's sizeof, is
	// refused
	assert.Equal(t, uintptr(128), loaderOptionsLayout.size)
	for _, tc := range []struct{ size, want uintptr }{{72, 72}, {80, 80}, {88, 88}, {96, 96}, {104, 104}, {120, 120}, {124, 124}, {127, 124}, {128, 128}} {
		n, ok := loaderOptionsLayout.readLength(tc.size)
		assert.True(t, ok && n == tc.want, "size %d: %d", tc.size, n)
	}
	assert.Contains(t, loaderOptionsLayout.refused, uintptr(104))
	assert.Equal(t, uintptr(32), allocatorLayout.size)
	assert.Equal(t, allocatorLayout.size, allocatorLayout.min)
	assert.Equal(t, sizeofSampleOptions, sampleOptionsLayout.size)
	assert.Equal(t, uintptr(44), graphOptionsLayout.min)
	assert.Equal(t, sizeofGraphOptions, graphOptionsLayout.size)

	for _, tc := range []struct{ size, want uintptr }{
		{36, 36}, {37, 36}, {40, 36}, {44, 44}, {47, 44},
		// the layout before layer_dependency ended with exclude_edges;
		// the next with layer_dependency (60) and 4 bytes of padding
		{56, 56}, {60, 60}, {63, 60}, {64, 60},
		// then num_relations (64), relation_fanouts (72), disjoint (76),
		// temporal (80), temporal_strategy (84), padding, seed_times (96),
		// allocator (104)
		{68, 64}, {72, 72}, {76, 76}, {80, 80}, {84, 84}, {88, 84},
		{95, 84}, {96, 96}, {sizeofSampleOptions - 1, 96}, {sizeofSampleOptions, 104},
	} {
		n, ok := sampleOptionsLayout.readLength(tc.size)
		assert.True(t, ok, "size %d", tc.size)
		assert.Equal(t, tc.want, n, "size %d", tc.size)
	}
	for _, size := range []uintptr{0, 4, 35, sizeofSampleOptions + 1, 1 << 20} {
		_, ok := sampleOptionsLayout.readLength(size)
		assert.False(t, ok, "size %d", size)
	}
}

func TestCommLayout(t *testing.T) {
	// gf_comm's first layout ends with recv; timeout_ms came after it
	// (0.3.0's layout, 72 bytes), then all_to_all_dl.
	assert.Equal(t, uintptr(64), commLayout.min)
	assert.Equal(t, uintptr(80), commLayout.size)
	for _, size := range []uintptr{64, 72, 80} {
		n, ok := commLayout.readLength(size)
		assert.True(t, ok, "size %d", size)
		assert.Equal(t, size, n, "size %d", size)
	}
}

// A program built against 0.1.0's first gf_sample_options (40 bytes, the
// last 4 padding) gets the samples that today's layout with the same fields
// gives, even when its padding holds garbage: only its fields are read.
func TestSampleOptionsFirstLayout(t *testing.T) {
	g, rc := testGraphFromCSC(abiIndptr, abiIndices, 64)
	require.Equal(t, gfOK, rc, lastError())
	defer testGraphClose(g)
	seeds := []int64{3, 0}
	fanouts := []int32{2, 2}

	full, freeFull := testSampleOptionsBytes(fanouts, 9, sizeofSampleOptions, sizeofSampleOptions, 0)
	defer freeFull()
	want, rc := testSampleWith(g, seeds, full)
	require.Equal(t, gfOK, rc, lastError())

	for _, size := range []uintptr{sizeofSample010, sampleOptionsLayout.min} {
		old, freeOld := testSampleOptionsBytes(fanouts, 9, size, sampleOptionsLayout.min, 0xA5)
		got, rc := testSampleWith(g, seeds, old)
		freeOld()
		require.Equal(t, gfOK, rc, "struct_size %d: %s", size, lastError())
		assert.Equal(t, want, got, "struct_size %d", size)
	}
}

func TestOptionSizesOutOfRange(t *testing.T) {
	g, rc := testGraphFromCSC(abiIndptr, abiIndices, 64)
	require.Equal(t, gfOK, rc, lastError())
	defer testGraphClose(g)
	for _, size := range []uintptr{0, 8, sampleOptionsLayout.min - 1, sizeofSampleOptions + 8} {
		o, free := testSampleOptionsBytes([]int32{2}, 1, size, sampleOptionsLayout.min, 0)
		_, rc := testSampleWith(g, []int64{0}, o)
		free()
		assert.Equal(t, gfEInval, rc, "struct_size %d", size)
		assert.Contains(t, lastError(), "gf_sample: options->struct_size")
		assert.Contains(t, lastError(), "[36, ")
	}
	for _, size := range []uint32{0, 43, uint32(sizeofGraphOptions) + 8} {
		assert.Equal(t, gfEInval, testGraphOptionsSize(abiIndptr, abiIndices, size), "struct_size %d", size)
		assert.Contains(t, lastError(), "gf_graph_options")
	}
	for _, size := range []uint32{44, uint32(sizeofGraphOptions)} {
		assert.Equal(t, gfOK, testGraphOptionsSize(abiIndptr, abiIndices, size), "struct_size %d: %s", size, lastError())
	}
}

// call maps each engine error class to its status code and keeps the
// engine's message behind the function name.
func TestCallMapsEngineErrors(t *testing.T) {
	_, statErr := os.Stat(filepath.Join(t.TempDir(), "missing"))
	require.Error(t, statErr)
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"io", fmt.Errorf("feat.bin: checksum mismatch: %w", errs.ErrIO), gfEIO},
		{"path", &fs.PathError{Op: "open", Path: "/x/feat.bin", Err: syscall.EISDIR}, gfEIO},
		{"stat", fmt.Errorf("dataset: %w", statErr), gfEIO},
		{"nomem", fmt.Errorf("node table of 1e12 rows: %w", errs.ErrNoMem), gfENoMem},
		{"state", fmt.Errorf("a second iterator: %w", errs.ErrState), gfEState},
		{"closed", fmt.Errorf("graph: %w", errs.ErrClosed), gfEBadHandle},
		{"pipeline_closed", pipeline.ErrClosed, gfEBadHandle},
		{"notsup", fmt.Errorf("CUDA tensors: %w", errs.ErrNotSupported), gfENotSup},
		{"type", fmt.Errorf("weights are int8: %w", errs.ErrType), gfEType},
		{"plain", errors.New("indptr[2] = 1 < indptr[1] = 3"), gfEInval},
		{"api", errorf(gfEState, "already taken"), gfEState},
	} {
		rc := call("gf_test_"+tc.name, func() error { return tc.err })
		assert.Equal(t, tc.want, int(rc), tc.name)
		assert.Equal(t, "gf_test_"+tc.name+": "+tc.err.Error(), lastError(), tc.name)
	}
	assert.Equal(t, gfOK, int(call("gf_test_ok", func() error { return nil })))
	assert.Equal(t, gfDone, int(call("gf_test_done", func() error { return errDone })))
}

// End to end: a missing dataset is GF_EIO.
func TestOpenMissingIsIO(t *testing.T) {
	rc := testGraphOpen(filepath.Join(t.TempDir(), "nope"))
	assert.Equal(t, gfEIO, rc)
	assert.Contains(t, lastError(), "gf_graph_open")
	assert.Contains(t, lastError(), "nope")
}

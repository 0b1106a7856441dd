//go:build gftest

package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A caller's gf_batch_callback as the engine's BatchFunc: its table is
// checked when read, its ids come back copied (int64 or int32), its
// output's deleter runs once whatever it answered, and every garbage answer
// is an error naming the fault, with a status, before anything is read out
// of bounds.
func TestBatchCallback(t *testing.T) {
	f, err := batchCallback(nil, "cb")
	require.NoError(t, err)
	require.Nil(t, f)
	_, err = batchCallback(testCallback(cbEcho, 0, true), "cb")
	require.EqualError(t, err, "cb->fn is NULL")
	_, err = batchCallback(testCallback(cbEcho, 4, false), "cb")
	require.ErrorContains(t, err, "cb->struct_size = 4 is outside the accepted range")
	require.Equal(t, int(gfEInval), int(statusOf(err)))

	ctx := context.Background()
	call := func(mode int, ids []int64, maxOut int) ([]int64, error) {
		f, err := batchCallback(testCallback(mode, 0, false), "options->cb")
		require.NoError(t, err)
		before := testCallbackDeleted()
		out, err := f(ctx, 7, ids, maxOut)
		deleted := testCallbackDeleted() - before
		if mode == cbNone || mode == cbFailOdd || mode == cbFailMute {
			require.Zero(t, deleted, "mode %d handed nothing over", mode)
		} else {
			require.Equal(t, 1, deleted, "mode %d: the output's deleter runs once", mode)
		}
		return out, err
	}
	for _, mode := range []int{cbEcho, cbEcho32} {
		out, err := call(mode, []int64{4, 1, 9}, 3)
		require.NoError(t, err)
		require.Equal(t, []int64{4, 1, 9}, out)
		out, err = call(mode, nil, 0) // an empty batch input: data NULL
		require.NoError(t, err)
		require.Empty(t, out)
	}
	out, err := call(cbNone, []int64{4}, 3)
	require.NoError(t, err)
	require.Empty(t, out)

	for _, tc := range []struct {
		mode   int
		status int
		want   string
	}{
		{cbFail, int(gfENotSup), "no edges for batch 7"},
		{cbFailOdd, int(gfEInval), "options->cb returned 42: odd failure"},
		{cbFailMute, int(gfEInval), "(no message)"},
		{cbFloat, int(gfEType), "options->cb's output must be int64 or int32 (got float64)"},
		{cb2D, int(gfEInval), "options->cb's output must be 1-D (got shape [1 2])"},
		{cbHuge, int(gfEInval), "options->cb's output has 3 ids (at most 2)"},
		{cbNullData, int(gfEInval), "options->cb's output has a NULL data pointer and 1 elements"},
		{cbDevice, int(gfEType), "options->cb's output is on device type 2"},
		{cbStrided, int(gfEType), "options->cb's output is not C-contiguous"},
	} {
		_, err := call(tc.mode, []int64{4, 1}, 2)
		require.ErrorContains(t, err, tc.want, "mode %d", tc.mode)
		require.Equal(t, tc.status, int(statusOf(err)), "mode %d: %v", tc.mode, err)
	}
}

package cuda

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// kept is a device whose Close the backend's teardown calls without ending
// the emulator (the test's cleanup does); closes counts the teardowns.
type kept struct {
	*emuDevice
	closes *int
}

func (k kept) Close() error { *k.closes++; return nil }

// TestEngineSeamMatchesCPUEngine opens a device loader the way every front
// end does, through core (Graph.OpenLoaderOn with device options: the
// engine asks the registered backend for its stages, here over the
// emulator), and checks its batches against the CPU engine's loader on the
// same graph batch for batch, two epochs; the device is torn down only once
// the loader is closed and the last delivered batch released.
func TestEngineSeamMatchesCPUEngine(t *testing.T) {
	emu := startEmu(t)
	closes := 0
	device.Register(NewBackend(func(int) (Device, error) { return kept{emu, &closes}, nil }))
	t.Cleanup(func() { device.Register(nil) })

	r := rand.New(rand.NewPCG(5, 6))
	cfg := CheckConfig{Nodes: 900, AvgDegree: 8, Hubs: 2, Seed: 5}
	csc, err := checkGraph(cfg, r)
	require.NoError(t, err)
	store, err := checkData(csc.NumNodes, r)
	require.NoError(t, err)
	g, err := core.New(csc, partition.Options{Method: partition.Random, NumPatches: 3, Seed: 5})
	require.NoError(t, err)
	defer g.Close()
	for _, name := range store.Names() {
		tn, _ := store.Get(name)
		require.NoError(t, g.SetNodeData(name, tn, nil))
	}
	seeds := make([]int64, 300)
	for i := range seeds {
		seeds[i] = int64(i*7) % csc.NumNodes
	}
	req := sample.Request{Scheme: sample.NodeWise, Fanouts: []int{5, 3}, Seed: 9}
	lopt := pipeline.Options{BatchSize: 64, Shuffle: true, Seed: 3, FeatureNames: []string{"feat", "half"}, LabelNames: []string{"label"}}
	host, err := g.OpenLoader(seeds, req, lopt, nil)
	require.NoError(t, err)
	defer host.Close()
	dopt := &device.Options{HotOn: true, Hot: cache.Size{Fraction: 0.3}}
	dl, err := g.OpenLoaderOn(dopt, seeds, req, lopt, nil)
	require.NoError(t, err)
	sess := dl.Device()
	require.NotNil(t, sess)
	require.Nil(t, host.Device())

	st, err := emu.NewStream()
	require.NoError(t, err)
	ctx := context.Background()
	var last *pipeline.Batch
	for epoch := range uint64(2) {
		require.NoError(t, host.Start(epoch))
		require.NoError(t, dl.Start(epoch))
		n := 0
		for {
			want, err := host.Next(ctx)
			if errors.Is(err, io.EOF) {
				_, err = dl.Next(ctx)
				require.ErrorIs(t, err, io.EOF)
				break
			}
			require.NoError(t, err)
			got, err := dl.Next(ctx)
			require.NoError(t, err)
			require.Equal(t, mem.KindDevice, got.Nodes.Device.Kind)
			require.NoError(t, EqualBatches(st, want, got), "epoch %d batch %d", epoch, n)
			want.Release()
			if last != nil {
				require.NoError(t, sess.Release(last, mem.NoStream))
			}
			last = got
			n++
		}
		require.Equal(t, dl.NumBatches(), n)
	}
	// Closed with a batch still delivered: the device waits for it.
	require.NoError(t, dl.Close())
	require.Equal(t, 0, closes)
	require.NotNil(t, device.Find(sess.ID()))
	require.NoError(t, sess.Release(last, mem.NoStream))
	require.Equal(t, 1, closes)
	require.Nil(t, device.Find(sess.ID()))
}

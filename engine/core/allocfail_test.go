package core

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/linkload"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// Allocation failure injection (SQLite's habit, issue 23): every output
// buffer of a sampler call or a loader's epoch comes from an allocator
// that fails its k-th allocation. For every k (a seeded sample of them
// where a run makes more than maxSweep allocations), the call must fail
// with an error wrapping errs.ErrNoMem or succeed (when the k-th was never
// reached), nothing may stay allocated, and the same handle must then run
// to completion with the allocator healed.

// maxSweep bounds the k tried per scenario: past it, a seeded sample.
const maxSweep = 120

// sweepKs returns the k to try for a run of n allocations: all of 1..n,
// or maxSweep of them (1 and n included) drawn with a fixed seed.
func sweepKs(t *testing.T, n int) []int {
	if n <= maxSweep {
		ks := make([]int, n)
		for i := range ks {
			ks[i] = i + 1
		}
		return ks
	}
	r := rand.New(rand.NewPCG(23, uint64(n)))
	ks := []int{1, n}
	for len(ks) < maxSweep {
		ks = append(ks, 1+r.IntN(n))
	}
	slices.Sort(ks)
	t.Logf("%d allocations: %d values of k sampled (seed 23)", n, len(slices.Compact(ks)))
	return slices.Compact(ks)
}

// sweep runs run once healthy to count the allocations made after it
// calls arm, then once per k with the k-th of those failing; leaked
// reports the buffers still allocated once run returned (run releases
// what it got, and closes what it opened).
func sweep(t *testing.T, f *mem.Failing, leaked func() int, run func(arm func()) error) {
	t.Helper()
	f.Arm(0)
	require.NoError(t, run(func() { f.Arm(0) }))
	n, _ := f.Allocs()
	require.Positive(t, n)
	require.Zero(t, leaked())
	t.Logf("%d allocations after arm", n)
	failed := 0
	for _, k := range sweepKs(t, n) {
		f.Arm(0)
		err := run(func() { f.Arm(k) })
		if err != nil {
			require.ErrorIs(t, err, errs.ErrNoMem, "k=%d", k)
			failed++
		}
		require.Zero(t, leaked(), "k=%d: buffers leaked", k)
	}
	require.Positive(t, failed)
	t.Logf("%d of them failed the call", failed)
}

// sweepAlloc is a Checked allocator over a Failing one.
func sweepAlloc() (*mem.Failing, *mem.Checked, func() int) {
	f := mem.NewFailing(mem.Heap{}, errs.ErrNoMem)
	c := mem.NewChecked(f)
	return f, c, func() int { n, _ := c.Outstanding(); return n }
}

// readAll reads an epoch to its end (or its first error), releasing every
// batch.
func readAll(l *Loader, e uint64) error {
	if err := l.Start(e); err != nil {
		return err
	}
	for {
		b, err := l.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		b.Release()
	}
}

func TestAllocFailureSample(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	f, c, leaked := sweepAlloc()
	seeds := []int64{1, 5, 9, 40, 77}
	sweep(t, f, leaked, func(arm func()) error {
		arm()
		b, err := g.Sample(seeds, defaultSample(), 2, c)
		if err == nil {
			b.Release()
		}
		return err
	})
	sweep(t, f, leaked, func(arm func()) error {
		arm()
		w, err := g.RandomWalk(seeds, sample.WalkRequest{Length: 4, Seed: 3}, 2, c)
		if err == nil {
			c.Free(w.Traces.Data)
			c.Free(w.EdgeIDs.Data)
		}
		return err
	})
	// The graph after the failures.
	b, err := g.Sample(seeds, defaultSample(), 2, c)
	require.NoError(t, err)
	b.Release()
}

// epochSweep sweeps the first epoch of the loaders open opens (each
// allocating through the sweep's allocator): a loader whose epoch failed
// must then run a whole epoch with the allocator healed (the handle stays
// usable), and once closed hold nothing.
func epochSweep(t *testing.T, f *mem.Failing, leaked func() int, open func() (*Loader, error)) {
	t.Helper()
	sweep(t, f, leaked, func(arm func()) error {
		l, err := open()
		require.NoError(t, err)
		defer func() { require.NoError(t, l.Close()) }()
		arm()
		err = readAll(l, 1)
		if err != nil {
			f.Arm(0)
			require.NoError(t, readAll(l, 2), "the loader after %v", err)
		}
		return err
	})
}

func TestAllocFailureNodeLoader(t *testing.T) {
	g := newTestGraph(t, partitions()["random3"])
	withNodeData(t, g)
	f, c, leaked := sweepAlloc()
	seeds := make([]int64, 40)
	for i := range seeds {
		seeds[i] = int64(7*i+1) % testNodes
	}
	epochSweep(t, f, leaked, func() (*Loader, error) { return g.OpenLoader(seeds, defaultSample(), defaultLoader(), c) })
}

func TestAllocFailureEdgeLoader(t *testing.T) {
	g := newTestGraph(t, partitions()["range3"])
	withNodeData(t, g)
	f, c, leaked := sweepAlloc()
	eids := make([]int64, 40)
	for i := range eids {
		eids[i] = int64(i*13) % testEdges
	}
	opt := EdgeSamplerOptions{Request: sample.Request{Fanouts: []int{3, 2}, Seed: 21}, Mode: LinkDGL,
		DGL: linkpred.DGLEdgeSampler{Negative: linkpred.PerSourceUniform{K: 2}}}
	lopt := defaultLoader()
	epochSweep(t, f, leaked, func() (*Loader, error) { return g.OpenEdgeLoader(linkload.Items{EdgeIDs: eids}, opt, lopt, c) })
}

func TestAllocFailureTypedLoader(t *testing.T) {
	g, ty := typedTestGraph(t, partition.Options{Method: partition.Random, NumPatches: 3, Seed: 2})
	require.NoError(t, g.SetTypes(ty))
	f, c, leaked := sweepAlloc()
	req := sample.Request{RelationFanouts: [][]int{{2, 3, 1}, {1, 1, 2}}, Seed: 4}
	seeds := []int64{5, 50, 77, 12, 60, 90, 3, 41}
	epochSweep(t, f, leaked, func() (*Loader, error) { return g.OpenLoader(seeds, req, defaultLoaderNoData(), c) })
}

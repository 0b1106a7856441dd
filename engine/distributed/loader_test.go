package distributed

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// batchBytes is a digest of everything a batch holds (with its index in
// clear), to compare batches.
func batchBytes(b *pipeline.Batch) string {
	s := fmt.Sprint(b.Index, b.Epoch, testgraph.I64(b.Seeds), testgraph.I64(b.InputIndex), testgraph.I64(b.Nodes), testgraph.I64(b.HopCounts), testgraph.I64(b.Batch))
	for _, bl := range b.Blocks {
		s += fmt.Sprint(testgraph.I64(bl.Indptr), testgraph.I64(bl.Indices), testgraph.I64(bl.EdgeIDs))
	}
	s += fmt.Sprint(b.NodeData["feat"].Data, b.NodeData["label"].Data)
	return fmt.Sprintf("batch %d epoch %d: %x", b.Index, b.Epoch, sha256.Sum256([]byte(s)))
}

// refEpochs reads epochs of a single-process loader: batches[epoch][index].
func refEpochs(t *testing.T, seeds []int64, lopt pipeline.Options, epochs int) [][]string {
	return refEpochsOf(t, seeds, testgraph.Sample(), lopt, epochs)
}

// refEpochsOf is refEpochs sampling with req.
func refEpochsOf(t *testing.T, seeds []int64, req sample.Request, lopt pipeline.Options, epochs int) [][]string {
	g := newTestGraph(t, partition.Options{Method: partition.Range, NumPatches: 2})
	withNodeData(t, g)
	withNodeTimes(t, g, req)
	l, err := g.OpenLoader(seeds, req, lopt, nil)
	require.NoError(t, err)
	defer l.Close()
	out := make([][]string, epochs)
	for e := range epochs {
		require.NoError(t, l.Start(uint64(e)))
		for {
			b, err := l.Next(context.Background())
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			out[e] = append(out[e], batchBytes(b))
			b.Release()
		}
	}
	return out
}

// TestDistLoaderEqualsSingleProcess runs a group of ranks (goroutines, each
// with its own Graph and a comm.Host) and checks each rank's batches are the
// single-process loader's batches r, r+size, ..., padded with the first
// ones, for several partitionings of the group's graph.
func TestDistLoaderEqualsSingleProcess(t *testing.T) {
	seeds := make([]int64, 90)
	for i := range seeds {
		seeds[i] = int64(7*i+1) % testgraph.Nodes
	}
	lopt := testgraph.Loader()
	lopt.BatchSize = 8 // 12 batches: 3 ranks divide them, 5 do not
	const epochs = 2
	// PyG's disjoint sampling: every seed its own subgraph.
	disjoint := testgraph.Sample()
	disjoint.Disjoint, disjoint.Frontier = true, sample.FrontierNew
	// PyG's temporal sampling: node times, one time per seed.
	temporal := disjoint
	temporal.Temporal = sample.TemporalNode
	for _, req := range []sample.Request{testgraph.Sample(), disjoint, temporal} {
		o := lopt
		if req.Temporal != sample.TemporalNone {
			o.SeedTimes = make([]int64, len(seeds))
			for i := range seeds {
				o.SeedTimes[i] = int64(i*11) % 50
			}
		}
		ref := refEpochsOf(t, seeds, req, o, epochs)
		require.Len(t, ref[0], 12)
		if req.Temporal != sample.TemporalNone {
			require.NotEqual(t, refEpochsOf(t, seeds, disjoint, lopt, epochs), ref)
		}
		runDistEquals(t, seeds, req, o, ref)
	}
}

// withNodeTimes gives g node times when req is temporal.
func withNodeTimes(t *testing.T, g *core.Graph, req sample.Request) {
	if req.Temporal == sample.TemporalNone {
		return
	}
	times := make([]int64, testgraph.Nodes)
	for v := range times {
		times[v] = int64(v*7) % 50
	}
	require.NoError(t, g.SetNodeTime(times))
}

// runDistEquals checks groups of 1, 3 and 5 ranks against ref, the
// single-process loader's epochs.
func runDistEquals(t *testing.T, seeds []int64, req sample.Request, lopt pipeline.Options, ref [][]string) {
	epochs := len(ref)
	for _, size := range []int{1, 3, 5} {
		for _, method := range []partition.Method{partition.Range, partition.Random} {
			t.Run(fmt.Sprintf("%d-%v-disjoint=%v-temporal=%v", size, method, req.Disjoint, req.Temporal), func(t *testing.T) {
				l := comm.NewLocal(size)
				got := make([][][]string, size)
				var wg sync.WaitGroup
				errc := make(chan error, size)
				for r := range size {
					g := newTestGraph(t, partition.Options{Method: method, NumPatches: size, Seed: 11})
					withNodeData(t, g)
					withNodeTimes(t, g, req)
					h, err := comm.NewHost(r, size, l.Exchanger(r))
					require.NoError(t, err)
					ld, err := OpenLoader(g, h, seeds, req, lopt, mem.NewChecked(mem.Heap{}))
					require.NoError(t, err)
					require.Equal(t, (12+size-1)/size, ld.NumBatches())
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer ld.Close()
						got[r] = make([][]string, epochs)
						for e := range epochs {
							if err := ld.Start(uint64(e)); err != nil {
								errc <- err
								return
							}
							for {
								b, err := ld.Next(context.Background())
								if err == io.EOF {
									break
								}
								if err != nil {
									errc <- err
									return
								}
								got[r][e] = append(got[r][e], batchBytes(b))
								b.Release()
							}
						}
					}()
				}
				wg.Wait()
				close(errc)
				for err := range errc {
					require.NoError(t, err)
				}
				for r := range size {
					for e := range epochs {
						var want []string
						for k := range (12 + size - 1) / size {
							want = append(want, ref[e][(k*size+r)%12])
						}
						require.Equal(t, want, got[r][e], "rank %d epoch %d", r, e)
					}
				}
			})
		}
	}
}

func TestOpenLoaderValidates(t *testing.T) {
	g := newTestGraph(t, partition.Options{Method: partition.Range, NumPatches: 2})
	withNodeData(t, g)
	seeds := []int64{1, 2, 3}
	_, err := OpenLoader(g, nil, seeds, testgraph.Sample(), testgraph.Loader(), nil)
	require.ErrorContains(t, err, "communicator is nil")
	_, err = OpenLoader(g, comm.NewLocal(2), seeds, testgraph.Sample(), testgraph.Loader(), nil)
	require.ErrorContains(t, err, "runs 2 here")
	h3, err := comm.NewHost(0, 3, comm.NewLocal(3).Exchanger(0))
	require.NoError(t, err)
	_, err = OpenLoader(g, h3, seeds, testgraph.Sample(), testgraph.Loader(), nil)
	require.ErrorContains(t, err, "the graph has 2 patches but the communicator 3 ranks")
	h, err := comm.NewHost(0, 2, comm.NewLocal(2).Exchanger(0))
	require.NoError(t, err)
	lopt := testgraph.Loader()
	lopt.FeatureNames = []string{"nope"}
	_, err = OpenLoader(g, h, seeds, testgraph.Sample(), lopt, nil)
	require.ErrorContains(t, err, `node data "nope"`)
	_, err = OpenLoader(g, h, []int64{1, 1}, testgraph.Sample(), testgraph.Loader(), nil)
	require.ErrorContains(t, err, "duplicates")
	// Nothing leaked a reference: the graph closes.
	require.NoError(t, g.Close())
}

// failExchanger fails every exchange, as a host whose peer died does.
type failExchanger struct{}

func (failExchanger) ExchangeSizes(_ context.Context, _, _ []int64) error {
	return errors.New("peer rank 1 is gone")
}
func (failExchanger) Exchange(_ context.Context, _, _ [][]byte) error {
	return errors.New("peer rank 1 is gone")
}

func TestDistLoaderHostFailure(t *testing.T) {
	g := newTestGraph(t, partition.Options{Method: partition.Range, NumPatches: 2})
	withNodeData(t, g)
	h, err := comm.NewHost(0, 2, failExchanger{})
	require.NoError(t, err)
	alloc := mem.NewChecked(mem.Heap{})
	l, err := OpenLoader(g, h, []int64{1, 2, 3, 4}, testgraph.Sample(), testgraph.Loader(), alloc)
	require.NoError(t, err)
	require.NoError(t, l.Start(0))
	_, err = l.Next(context.Background())
	require.ErrorIs(t, err, errs.ErrIO)
	require.ErrorContains(t, err, "rank 0 of 2")
	require.ErrorContains(t, err, "peer rank 1 is gone")
	// The error sticks for the epoch; the loader closes cleanly.
	_, err2 := l.Next(context.Background())
	require.Equal(t, err, err2)
	require.NoError(t, l.Close())
	n, _ := alloc.Outstanding()
	require.Zero(t, n)
}

// TestDistLoaderCoordinatedWorkers runs several sampler workers per rank
// over ONE host channel per rank, their exchanges ordered by a CCC
// coordinator (CoordinatedComm): the batches still equal the single-process
// loader's, whatever the interleaving of the workers on each rank.
func TestDistLoaderCoordinatedWorkers(t *testing.T) {
	seeds := make([]int64, 90)
	for i := range seeds {
		seeds[i] = int64(7*i+1) % testgraph.Nodes
	}
	lopt := testgraph.Loader()
	lopt.BatchSize = 8
	lopt.Workers = 3
	const size, epochs = 3, 2
	ref := refEpochs(t, seeds, lopt, epochs)
	for round := range 3 {
		l := comm.NewLocal(size)
		mesh := coordinator.NewMesh(size)
		got := make([][][]string, size)
		var wg sync.WaitGroup
		errc := make(chan error, size)
		for r := range size {
			g := newTestGraph(t, partition.Options{Method: partition.Random, NumPatches: size, Seed: uint64(round)})
			withNodeData(t, g)
			h, err := comm.NewHost(r, size, l.Exchanger(r))
			require.NoError(t, err)
			coord, err := coordinator.New(coordinator.Config{Rank: r, Size: size, Transport: mesh.Endpoint(r)})
			require.NoError(t, err)
			c, err := CoordinatedComm(h, coord)
			require.NoError(t, err)
			ld, err := OpenLoader(g, c, seeds, testgraph.Sample(), lopt, nil)
			require.NoError(t, err)
			require.Equal(t, 3, ld.Stats().Workers)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer coord.Close()
				defer ld.Close()
				got[r] = make([][]string, epochs)
				for e := range epochs {
					if err := ld.Start(uint64(e)); err != nil {
						errc <- err
						return
					}
					for {
						b, err := ld.Next(context.Background())
						if err == io.EOF {
							break
						}
						if err != nil {
							errc <- err
							return
						}
						got[r][e] = append(got[r][e], batchBytes(b))
						b.Release()
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			require.NoError(t, err)
		}
		for r := range size {
			for e := range epochs {
				var want []string
				for k := range 4 {
					want = append(want, ref[e][(k*size+r)%12])
				}
				require.Equal(t, want, got[r][e], "round %d rank %d epoch %d", round, r, e)
			}
		}
	}
}

// TestDistLoaderAllocFailure: allocation failure injection on a two-rank
// exchange (issue 23). Rank 0's batch buffers come from an allocator whose
// k-th allocation fails, for k over an epoch (12 of them, seeded): rank
// 0's epoch fails with errs.ErrNoMem, rank 1's ends (its peer closed: an
// error naming the exchange, with a bounded wait) or completes,
// and once both loaders are closed nothing of either allocator is left.
func TestDistLoaderAllocFailure(t *testing.T) {
	seeds := make([]int64, 48)
	for i := range seeds {
		seeds[i] = int64(7*i+1) % testgraph.Nodes
	}
	lopt := testgraph.Loader()
	lopt.BatchSize = 8
	run := func(k int) (n int, errs0, errs1 error) {
		local := comm.NewLocal(2)
		fail := mem.NewFailing(mem.Heap{}, errs.ErrNoMem)
		checked := [2]*mem.Checked{mem.NewChecked(fail), mem.NewChecked(mem.Heap{})}
		var out [2]error
		var wg sync.WaitGroup
		for r := range 2 {
			g := newTestGraph(t, partition.Options{Method: partition.Range, NumPatches: 2})
			withNodeData(t, g)
			h, err := comm.NewHostWith(r, 2, local.Exchanger(r), comm.HostOptions{Timeout: 300 * time.Millisecond})
			require.NoError(t, err)
			ld, err := OpenLoader(g, h, seeds, testgraph.Sample(), lopt, checked[r])
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer ld.Close()
				if r == 0 {
					fail.Arm(k)
				}
				if out[r] = ld.Start(0); out[r] != nil {
					return
				}
				for {
					b, err := ld.Next(context.Background())
					if err == io.EOF {
						return
					}
					if err != nil {
						out[r] = err
						return
					}
					b.Release()
				}
			}()
		}
		wg.Wait()
		for r := range 2 {
			live, _ := checked[r].Outstanding()
			require.Zero(t, live, "k=%d: rank %d leaked buffers", k, r)
		}
		n, _ = fail.Allocs()
		return n, out[0], out[1]
	}
	n, e0, e1 := run(0)
	require.NoError(t, e0)
	require.NoError(t, e1)
	ks := []int{}
	for k := 1; k <= n; k++ {
		ks = append(ks, k)
	}
	// A rank whose peer's loader closed outside an exchange waits for the
	// time-out (300 ms): a seeded sample of 12 k keeps the test short.
	if n > 12 {
		r := rand.New(rand.NewPCG(23, 2))
		ks = []int{1, n}
		for range 10 {
			ks = append(ks, 1+r.IntN(n))
		}
		t.Logf("%d allocations on rank 0: 12 values of k sampled (seed 23)", n)
	}
	for _, k := range ks {
		_, e0, e1 := run(k) // returns on both ranks: neither is left waiting for the other
		require.ErrorIs(t, e0, errs.ErrNoMem, "k=%d", k)
		if e1 != nil {
			require.NotErrorIs(t, e1, errs.ErrNoMem, "k=%d: rank 1's allocator never fails", k)
		}
	}
}

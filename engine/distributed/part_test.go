package distributed

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/coordinator"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
	"github.com/graphferry/graphferry/engine/sample"
)

// writeTestDataset writes the test graph with features, labels and masks
// (every third node a train seed, every seventh a val seed) as a dataset
// and returns its folder and its train seeds.
func writeTestDataset(t *testing.T) (string, []int64) {
	t.Helper()
	src, dst := testgraph.COO()
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: testgraph.Nodes})
	require.NoError(t, err)
	train, val, test := make([]byte, testgraph.Nodes), make([]byte, testgraph.Nodes), make([]byte, testgraph.Nodes)
	labels := make([]int64, testgraph.Nodes)
	var seeds []int64
	for v := range int64(testgraph.Nodes) {
		labels[v] = v % 7
		switch {
		case v%3 == 0:
			train[v] = 1
			seeds = append(seeds, v)
		case v%7 == 0:
			val[v] = 1
		}
	}
	dir := filepath.Join(t.TempDir(), "src")
	require.NoError(t, dataset.Write(dir, &dataset.Dataset{
		Meta:  dataset.Meta{Name: "test", NumClasses: 7},
		Graph: g,
		NodeData: map[string]mem.Tensor{
			dataset.FeatKey:      testgraph.Features(),
			dataset.LabelKey:     {DType: mem.Int64, Shape: []int64{testgraph.Nodes}, Data: mem.Bytes(labels)},
			dataset.TrainMaskKey: {DType: mem.Uint8, Shape: []int64{testgraph.Nodes}, Data: train},
			dataset.ValMaskKey:   {DType: mem.Uint8, Shape: []int64{testgraph.Nodes}, Data: val},
			dataset.TestMaskKey:  {DType: mem.Uint8, Shape: []int64{testgraph.Nodes}, Data: test},
		},
	}))
	return dir, seeds
}

// partitionTestDataset writes src's parts into a new folder.
func partitionTestDataset(t *testing.T, src string, opt rankpart.PartitionOptions) string {
	t.Helper()
	ds, err := dataset.Open(src)
	require.NoError(t, err)
	defer ds.Close()
	dst := filepath.Join(t.TempDir(), "parts")
	_, err = rankpart.Partition(ds, dst, opt)
	require.NoError(t, err)
	return dst
}

// readEpochs reads epochs of l: digests per epoch.
func readEpochs(l *core.Loader, epochs int) ([][]string, error) {
	return readEpochsWith(l, epochs, batchBytes)
}

// readEpochsWith reads epochs of l: digest's per epoch.
func readEpochsWith(l *core.Loader, epochs int, digest func(*pipeline.Batch) string) ([][]string, error) {
	out := make([][]string, epochs)
	for e := range epochs {
		if err := l.Start(uint64(e)); err != nil {
			return nil, err
		}
		for {
			b, err := l.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			out[e] = append(out[e], digest(b))
			b.Release()
		}
	}
	return out, nil
}

// TestPartLoaderEqualsSingleProcess opens every rank's part of a dsp and
// a hybrid partition (goroutines with comm.Hosts) and checks that each
// rank's batches, node data fetched from the owners included, are the
// single-process loader's batches r, r+size, ... of the whole dataset.
func TestPartLoaderEqualsSingleProcess(t *testing.T) {
	src, seeds := writeTestDataset(t)
	lopt := testgraph.Loader()
	lopt.BatchSize = 10 // 10 batches of the 100 seeds
	const epochs = 2
	whole, err := core.Open(src, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer whole.Close()
	// PyG's disjoint sampling too: every seed its own subgraph.
	disjoint := testgraph.Sample()
	disjoint.Disjoint, disjoint.Frontier = true, sample.FrontierNew
	wants := map[bool][][]string{}
	for _, req := range []sample.Request{testgraph.Sample(), disjoint} {
		ref, err := whole.OpenLoader(seeds, req, lopt, nil)
		require.NoError(t, err)
		wants[req.Disjoint], err = readEpochs(ref, epochs)
		require.NoError(t, err)
		ref.Close()
	}
	require.NotEqual(t, wants[false], wants[true])
	type tc struct {
		size        int
		coordinated bool // 3 sampler workers per rank, CCC over one channel
		disjoint    bool
	}
	for _, layout := range []rankpart.Layout{rankpart.LayoutDSP, rankpart.LayoutHybrid} {
		for _, c := range []tc{{2, false, false}, {3, false, false}, {4, false, false}, {3, true, false}, {2, false, true}, {3, true, true}} {
			size := c.size
			req, want := testgraph.Sample(), wants[c.disjoint]
			if c.disjoint {
				req = disjoint
			}
			t.Run(fmt.Sprintf("%v-%d-%v-disjoint=%v", layout, size, c.coordinated, c.disjoint), func(t *testing.T) {
				dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Random, Parts: size, Seed: 4, Layout: layout})
				mesh := coordinator.NewMesh(size)
				got := readPartGroup(t, dst, size, epochs, readEpochs, func(r int, p *Part, h comm.Comm) *core.Loader {
					if layout == rankpart.LayoutDSP {
						require.Less(t, p.NumEdges(), int64(testgraph.Edges))
					}
					o := lopt
					if c.coordinated {
						coord, err := coordinator.New(coordinator.Config{Rank: r, Size: size, Transport: mesh.Endpoint(r)})
						require.NoError(t, err)
						h, err = CoordinatedComm(h, coord) // closed with the loader
						require.NoError(t, err)
						o.Workers = 3
					}
					ld, err := p.OpenLoader(h, seeds, req, o, mem.NewChecked(mem.Heap{}))
					require.NoError(t, err)
					if c.coordinated {
						require.Equal(t, 3, ld.Stats().Workers) // each with its row exchange channel
					}
					return ld
				})
				requireShares(t, want, got)
			})
		}
	}
}

// readPartGroup opens every rank's part of dst (size ranks, checksums
// verified) with a comm.Host each, opens its loader with open (given the
// rank, the part and the host; concurrently: a dsp loader's open is
// collective), closes the part (the loader keeps what it needs) and reads
// epochs of every rank's loader concurrently: digests per rank and epoch.
func readPartGroup(t *testing.T, dst string, size, epochs int, read func(*core.Loader, int) ([][]string, error),
	open func(r int, p *Part, h comm.Comm) *core.Loader) [][][]string {
	t.Helper()
	l := comm.NewLocal(size)
	got := make([][][]string, size)
	errc := make(chan error, size)
	var wg sync.WaitGroup
	for r := range size {
		p, err := OpenPart(dst, r, dataset.OpenOptions{VerifyChecksums: true})
		require.NoError(t, err)
		h, err := comm.NewHost(r, size, l.Exchanger(r))
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld := open(r, p, h)
			if err := p.Close(); err != nil {
				errc <- err
			}
			defer ld.Close()
			var err error
			if got[r], err = read(ld, epochs); err != nil {
				errc <- err
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	return got
}

// TestSelfReliantPartSamplesLocally checks that a self-reliant rank's
// batches equal the single-process samples of the same seeds and keys,
// with no exchange, and that the ranks agree on the batch count.
func TestSelfReliantPartSamplesLocally(t *testing.T) {
	src, _ := writeTestDataset(t)
	const size = 2
	dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Range, Parts: size, Layout: rankpart.LayoutSelfReliant, Hops: 2})
	whole, err := core.Open(src, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer whole.Close()
	lopt := testgraph.Loader()
	lopt.BatchSize = 7
	l := comm.NewLocal(size)
	counts := make([]int, size)
	var wg sync.WaitGroup
	errc := make(chan error, size)
	for r := range size {
		p, err := OpenPart(dst, r, dataset.OpenOptions{})
		require.NoError(t, err)
		defer p.Close()
		train, err := p.OwnedNodeData(dataset.TrainMaskKey, nil)
		require.NoError(t, err)
		var seeds []int64
		for i, v := range p.OwnedNodes() {
			if train.Data[i] != 0 {
				seeds = append(seeds, v)
			}
		}
		if r == 0 {
			seeds = seeds[:20] // fewer batches than rank 1: padded
		}
		// A node the part does not expand is refused.
		h, err := comm.NewHost(r, size, l.Exchanger(r))
		require.NoError(t, err)
		_, err = p.OpenLoader(h, []int64{p.OwnedNodes()[1]}, testgraph.Sample(), lopt, nil)
		require.ErrorContains(t, err, "is not a seed of rank")
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld, err := p.OpenLoader(h, seeds, testgraph.Sample(), lopt, nil)
			if err != nil {
				errc <- err
				return
			}
			defer ld.Close()
			counts[r] = ld.NumBatches()
			require.NoError(t, ld.Start(1))
			for {
				b, err := ld.Next(context.Background())
				if err == io.EOF {
					return
				}
				if err != nil {
					errc <- err
					return
				}
				// The same seeds sampled by the whole graph with the key.
				refRes, err := sampleWithKey(whole, testgraph.I64(b.Seeds), pipeline.BatchKey(1, b.Index))
				if err != nil {
					errc <- err
					return
				}
				if !equalSamples(b, refRes) {
					errc <- fmt.Errorf("rank %d batch %d differs from the single-process sample", r, b.Index)
				}
				refRes.Release()
				b.Release()
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	require.Equal(t, counts[0], counts[1])
}

// sampleWithKey samples seeds on g (identity numbering) with batch key.
func sampleWithKey(g *core.Graph, seeds []int64, key uint64) (*pipeline.Batch, error) {
	return sampleReqWithKey(g, testgraph.Sample(), seeds, key)
}

// sampleReqWithKey samples seeds on g (identity numbering) with req and
// batch key.
func sampleReqWithKey(g *core.Graph, req sample.Request, seeds []int64, key uint64) (*pipeline.Batch, error) {
	var b *pipeline.Batch
	err := g.Use(func(in core.Internals) error {
		rt, err := sample.NewRuntime(in.Part, comm.NewLocal(in.Part.NumPatches()), in.Runtime(1))
		if err != nil {
			return err
		}
		res, err := rt.Sample(context.Background(), req, [][]int64{seeds}, []uint64{key})
		if err != nil {
			return err
		}
		defer rt.Recycle(res...)
		b, err = pipeline.Materialize(res[0], seeds, make([]int64, len(seeds)), in.Part, nil, nil, nil, nil, 1)
		return err
	})
	return b, err
}

// equalSamples compares a batch's topology with a Sample result's.
func equalSamples(b, ref *pipeline.Batch) bool {
	if fmt.Sprint(testgraph.I64(b.Nodes), testgraph.I64(b.HopCounts)) != fmt.Sprint(testgraph.I64(ref.Nodes), testgraph.I64(ref.HopCounts)) {
		return false
	}
	for h := range b.Blocks {
		x, y := b.Blocks[h], ref.Blocks[h]
		if fmt.Sprint(testgraph.I64(x.Indptr), testgraph.I64(x.Indices), testgraph.I64(x.EdgeIDs)) != fmt.Sprint(testgraph.I64(y.Indptr), testgraph.I64(y.Indices), testgraph.I64(y.EdgeIDs)) {
			return false
		}
	}
	return true
}

// TestPartOpenValidates checks the errors of OpenPart and of a part
// loader's arguments.
func TestPartOpenValidates(t *testing.T) {
	src, seeds := writeTestDataset(t)
	dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Range, Parts: 2, Layout: rankpart.LayoutDSP})
	_, err := OpenPart(dst, 2, dataset.OpenOptions{})
	require.ErrorContains(t, err, "rank = 2 is outside [0, 2)")
	_, err = OpenPart(src, 0, dataset.OpenOptions{})
	require.Error(t, err)
	p, err := OpenPart(dst, 1, dataset.OpenOptions{})
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, int64(testgraph.Nodes), p.NumNodes())
	h, err := comm.NewHost(0, 2, comm.NewLocal(2).Exchanger(0))
	require.NoError(t, err)
	_, err = p.OpenLoader(h, seeds, testgraph.Sample(), testgraph.Loader(), nil)
	require.ErrorContains(t, err, "this is part 1 of 2")
	h1, err := comm.NewHost(1, 2, comm.NewLocal(2).Exchanger(1))
	require.NoError(t, err)
	req := testgraph.Sample()
	req.Scheme = sample.LayerWise
	_, err = p.OpenLoader(h1, seeds, req, testgraph.Loader(), nil)
	require.ErrorIs(t, err, errs.ErrNotSupported)
	lopt := testgraph.Loader()
	lopt.FeatureNames = []string{"nope"}
	_, err = p.OpenLoader(h1, seeds, testgraph.Sample(), lopt, nil)
	require.ErrorContains(t, err, `"nope"`)
	req = testgraph.Sample()
	req.Disjoint, req.Frontier, req.Temporal = true, sample.FrontierNew, sample.TemporalNode
	_, err = p.OpenLoader(h1, seeds, req, testgraph.Loader(), nil)
	require.ErrorIs(t, err, errs.ErrState) // until the part holds times (TestPartTimesValidate)
	require.ErrorContains(t, err, "temporal")
}

package distributed

import (
	"crypto/sha256"
	"fmt"
	"slices"
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
	"github.com/graphferry/graphferry/engine/linkload"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
	"github.com/graphferry/graphferry/engine/sample"
)

// edgeBatchBytes is batchBytes with the pair fields and edge data.
func edgeBatchBytes(b *pipeline.Batch) string {
	s := batchBytes(b)
	for _, t := range b.Link {
		s += fmt.Sprint(t.Shape, testgraph.I64(t))
	}
	s += fmt.Sprint(b.EdgeData["w"].Data)
	return fmt.Sprintf("batch %d epoch %d: %x", b.Index, b.Epoch, sha256.Sum256([]byte(s)))
}

// linkCase is an edge loader's options and items.
type linkCase struct {
	name  string
	opt   linkload.Options
	items linkload.Items
}

// linkCases are the edge loaders checked across ranks: DGL's with
// per-source and global negatives, without and with the exclusion of
// the seed edges (and their reverses), and PyG's with binary and triplet
// negatives, disjoint too. src and dst are the graph's edges by id.
func linkCases(src, dst []int64) []linkCase {
	eids := make([]int64, 90)
	for i := range eids {
		eids[i] = int64(i*13+5) % int64(len(src))
	}
	eids[7] = eids[3] // DGL takes repeated seed edges
	pairs := linkpred.Pairs{Src: slices.Clone(src[:80]), Dst: slices.Clone(dst[:80])}
	pairs.Src[3], pairs.Dst[3] = 1, 2 // not necessarily an edge: PyG allows that
	rev := make([]int64, len(src))
	for e := range rev {
		rev[e] = int64(len(src)) - 1 - int64(e) // any map will do
	}
	req := sample.Request{Fanouts: []int{3, 2}, Seed: 21}
	disjoint := req
	disjoint.Disjoint, disjoint.Frontier = true, sample.FrontierNew
	dgl := func(neg linkpred.DGLNegative, ex linkpred.Exclude) linkload.Options {
		return dglOptions(req, neg, ex, rev)
	}
	return []linkCase{
		{"dgl", dgl(linkpred.PerSourceUniform{K: 2}, linkpred.ExcludeNone), linkload.Items{EdgeIDs: eids}},
		{"dgl-self", dgl(linkpred.PerSourceUniform{K: 2}, linkpred.ExcludeSelfEdges), linkload.Items{EdgeIDs: eids}},
		{"dgl-reverse", dgl(nil, linkpred.ExcludeReverseEdges), linkload.Items{EdgeIDs: eids}},
		{"dgl-global", dgl(linkpred.GlobalUniform{K: 1, ExcludeSelfLoops: true}, linkpred.ExcludeSelfEdges), linkload.Items{EdgeIDs: eids}},
		{"pyg-binary", pygOptions(req, linkpred.PyGBinaryMode, 1.5), linkload.Items{Pairs: pairs}},
		{"pyg-triplet", pygOptions(req, linkpred.PyGTripletMode, 2), linkload.Items{Pairs: pairs}},
		{"pyg-disjoint", pygOptions(disjoint, linkpred.PyGBinaryMode, 1), linkload.Items{Pairs: pairs}},
	}
}

// dglOptions are DGL's edge loader options sampling with req, negatives
// neg, exclusion ex, reverse edges rev.
func dglOptions(req sample.Request, neg linkpred.DGLNegative, ex linkpred.Exclude, rev []int64) linkload.Options {
	return linkload.Options{Request: req, Mode: linkload.DGL, DGL: linkpred.DGLEdgeSampler{Negative: neg, Exclude: ex, Reverse: linkpred.Reverse{Map: rev}}}
}

// pygOptions are PyG's edge loader options sampling with req, negatives
// of mode and amount.
func pygOptions(req sample.Request, mode linkpred.PyGMode, amount float64) linkload.Options {
	return linkload.Options{Request: req, Mode: linkload.PyG, PyG: linkpred.PyGLinkSampler{Mode: mode, Amount: amount}}
}

// linkLoader is the tests' edge loader options: batches of 16 items.
func linkLoader() pipeline.Options {
	lopt := testgraph.Loader()
	lopt.BatchSize = 16 // 90 edge ids: 6 batches; 80 pairs: 5
	return lopt
}

// runRanks opens a loader per rank with open (goroutines, each rank's
// comm.Host over one comm.Local, coordinated when workers > 1) and reads
// epochs of each.
func runRanks(t *testing.T, size, workers, epochs int, open func(r int, c comm.Comm, lopt pipeline.Options) (*core.Loader, error)) [][][]string {
	t.Helper()
	return runRanksWith(t, size, workers, epochs, edgeBatchBytes, open)
}

// runRanksWith is runRanks with the batches' digest.
func runRanksWith(t *testing.T, size, workers, epochs int, digest func(*pipeline.Batch) string,
	open func(r int, c comm.Comm, lopt pipeline.Options) (*core.Loader, error)) [][][]string {
	t.Helper()
	l := comm.NewLocal(size)
	mesh := coordinator.NewMesh(size)
	got := make([][][]string, size)
	errc := make(chan error, size)
	var wg sync.WaitGroup
	for r := range size {
		var h comm.Comm
		h, err := comm.NewHost(r, size, l.Exchanger(r))
		require.NoError(t, err)
		lopt := linkLoader()
		if workers > 1 {
			coord, err := coordinator.New(coordinator.Config{Rank: r, Size: size, Transport: mesh.Endpoint(r)})
			require.NoError(t, err)
			h, err = CoordinatedComm(h, coord) // closed with the loader
			require.NoError(t, err)
			lopt.Workers = workers
		}
		wg.Add(1)
		go func() { // open is collective on a dsp part
			defer wg.Done()
			ld, err := open(r, h, lopt)
			if err != nil {
				errc <- err
				return
			}
			defer ld.Close()
			if workers > 1 && ld.Stats().Workers != workers {
				errc <- fmt.Errorf("rank %d: %d workers, want %d", r, ld.Stats().Workers, workers)
				return
			}
			if got[r], err = readEpochsWith(ld, epochs, digest); err != nil {
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

// requireShares checks that rank r's batches of every epoch are want's
// batches r, r+size, ..., padded with the first ones.
func requireShares(t *testing.T, want [][]string, got [][][]string) {
	t.Helper()
	size := len(got)
	for r := range size {
		for e := range want {
			global := len(want[e])
			var w []string
			for k := range (global + size - 1) / size {
				w = append(w, want[e][(k*size+r)%global])
			}
			require.Equal(t, w, got[r][e], "rank %d epoch %d", r, e)
		}
	}
}

// TestDistEdgeLoaderEqualsSingleProcess runs groups of ranks, each with its
// own replicated Graph, and checks that each rank's edge batches (pairs,
// negatives, samples, node and edge data) are the single-process edge
// loader's batches r, r+size, ..., padded.
func TestDistEdgeLoaderEqualsSingleProcess(t *testing.T) {
	src, dst := testgraph.COO()
	const epochs = 2
	newGraph := func(t *testing.T, popt partition.Options) *core.Graph {
		g := newTestGraph(t, popt)
		withNodeData(t, g)
		w := make([]float32, testgraph.Edges)
		for e := range w {
			w[e] = float32(e)
		}
		require.NoError(t, g.SetEdgeData("w", mem.Tensor{DType: mem.Float32, Shape: []int64{testgraph.Edges}, Data: mem.Bytes(w)}, nil))
		temporal := sample.Request{Temporal: sample.TemporalNode}
		withNodeTimes(t, g, temporal)
		return g
	}
	cases := linkCases(src, dst)
	// PyG's temporal link sampling over node times (no negatives: PyG keeps
	// negatives not later than their seed), one time per pair.
	temporal := cases[len(cases)-1]
	temporal.name = "pyg-temporal"
	temporal.opt.Request.Temporal = sample.TemporalNode
	temporal.opt.PyG.Mode, temporal.opt.PyG.Amount = linkpred.PyGNone, 0
	temporal.items.Times = make([]int64, temporal.items.Pairs.Len())
	for i := range temporal.items.Times {
		temporal.items.Times[i] = int64(i*13) % 50
	}
	for _, tc := range append(cases, temporal) {
		lopt := linkLoader()
		lopt.EdgeFeatureNames = []string{"w"}
		ref, err := newGraph(t, partition.Options{Method: partition.Range, NumPatches: 2}).OpenEdgeLoader(tc.items, tc.opt, lopt, nil)
		require.NoError(t, err)
		want, err := readEpochsWith(ref, epochs, edgeBatchBytes)
		require.NoError(t, err)
		ref.Close()
		require.NotEqual(t, want[0], want[1])
		for _, c := range []struct{ size, workers int }{{2, 1}, {3, 1}, {4, 1}, {3, 2}} {
			t.Run(fmt.Sprintf("%s-%d-workers=%d", tc.name, c.size, c.workers), func(t *testing.T) {
				got := runRanks(t, c.size, c.workers, epochs, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
					g := newGraph(t, partition.Options{Method: partition.Random, NumPatches: c.size, Seed: 11})
					o.EdgeFeatureNames = []string{"w"}
					return OpenEdgeLoader(g, h, tc.items, tc.opt, o, mem.NewChecked(mem.Heap{}))
				})
				requireShares(t, want, got)
			})
		}
	}
}

// TestPartEdgeLoaderEqualsSingleProcess opens every rank's part of a dsp
// and a hybrid partition and checks that each rank's edge batches, node
// data fetched from the owners included, are the single-process edge
// loader's batches r, r+size, ... of the whole dataset: on dsp the seed
// edges' endpoints, the exclusions and GlobalUniform's questions (which
// candidate pairs are edges) cross the ranks.
func TestPartEdgeLoaderEqualsSingleProcess(t *testing.T) {
	srcDir, whole, cases := wholeLinkCases(t)
	const epochs = 2
	for _, tc := range cases {
		lopt := linkLoader()
		ref, err := whole.OpenEdgeLoader(tc.items, tc.opt, lopt, nil)
		require.NoError(t, err)
		want, err := readEpochsWith(ref, epochs, edgeBatchBytes)
		require.NoError(t, err)
		ref.Close()
		for _, layout := range []rankpart.Layout{rankpart.LayoutDSP, rankpart.LayoutHybrid} {
			for _, c := range []struct{ size, workers int }{{2, 1}, {3, 1}, {3, 2}} {
				t.Run(fmt.Sprintf("%s-%v-%d-workers=%d", tc.name, layout, c.size, c.workers), func(t *testing.T) {
					dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Random, Parts: c.size, Seed: 4, Layout: layout})
					requireShares(t, want, runRanks(t, c.size, c.workers, epochs, openPartEdges(dir, tc)))
				})
			}
		}
	}
}

// GlobalUniform negatives on dsp parts, without an exclusion (each rank
// makes its batches alone, linkload.Source.Make) and with 4 ranks, so that
// 6 batches are padded to 8: every rank, padded batches included, asks
// the owners once per batch, and the batches are the single process's.
// Replace keeps the negatives in slot order, so a trial answered wrongly
// shows.
func TestPartEdgeLoaderGlobalUniformPadded(t *testing.T) {
	srcDir, whole, cases := wholeLinkCases(t)
	tc := cases[3]
	require.Equal(t, "dgl-global", tc.name)
	tc.opt.DGL.Negative = linkpred.GlobalUniform{K: 3, Replace: true}
	tc.opt.DGL.Exclude = linkpred.ExcludeNone
	ref, err := whole.OpenEdgeLoader(tc.items, tc.opt, linkLoader(), nil)
	require.NoError(t, err)
	want, err := readEpochsWith(ref, 2, edgeBatchBytes)
	require.NoError(t, err)
	ref.Close()
	dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Random, Parts: 4, Seed: 4, Layout: rankpart.LayoutDSP})
	for _, workers := range []int{1, 2} {
		requireShares(t, want, runRanks(t, 4, workers, 2, openPartEdges(dir, tc)))
	}
}

// wholeLinkCases writes the test dataset and opens it whole (closed at the
// end of the test): its folder, the graph and linkCases over its edges.
func wholeLinkCases(t *testing.T) (string, *core.Graph, []linkCase) {
	t.Helper()
	srcDir, _ := writeTestDataset(t)
	whole, err := core.Open(srcDir, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { whole.Close() })
	ed, err := whole.Edges(core.EdgesCOO, -1, nil)
	require.NoError(t, err)
	return srcDir, whole, linkCases(testgraph.I64(ed.First), testgraph.I64(ed.Second))
}

// openPartEdges opens rank r's part of the partition in dir and tc's edge
// loader on it, for runRanks.
func openPartEdges(dir string, tc linkCase) func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
	return func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
		p, err := OpenPart(dir, r, dataset.OpenOptions{})
		if err != nil {
			return nil, err
		}
		defer p.Close() // the loader keeps what it needs
		return p.OpenEdgeLoader(h, tc.items, tc.opt, o, mem.NewChecked(mem.Heap{}))
	}
}

// The edge loaders refuse by name what they do not serve, before any
// exchange.
func TestEdgeLoaderRefuses(t *testing.T) {
	src, dst := testgraph.COO()
	cases := linkCases(src, dst)
	h, err := comm.NewHost(0, 2, comm.NewLocal(2).Exchanger(0))
	require.NoError(t, err)
	g := newTestGraph(t, partition.Options{Method: partition.Range, NumPatches: 2})
	withNodeData(t, g)
	_, err = OpenEdgeLoader(g, nil, cases[0].items, cases[0].opt, linkLoader(), nil)
	require.ErrorContains(t, err, "communicator is nil")
	_, err = OpenEdgeLoader(g, h, linkload.Items{EdgeIDs: []int64{1, testgraph.Edges}}, cases[0].opt, linkLoader(), nil)
	require.ErrorContains(t, err, "seed edge ids[1] = 2400 is not an edge")
	lopt := linkLoader()
	lopt.EdgeFeatureNames = []string{"w"}
	_, err = OpenEdgeLoader(g, h, cases[0].items, cases[0].opt, lopt, nil)
	require.ErrorContains(t, err, "no edge data")
	require.NoError(t, g.Close()) // nothing leaked a reference

	srcDir, _ := writeTestDataset(t)
	for _, layout := range []rankpart.Layout{rankpart.LayoutSelfReliant, rankpart.LayoutDSP} {
		dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Range, Parts: 2, Layout: layout, Hops: 2})
		p, err := OpenPart(dir, 0, dataset.OpenOptions{})
		require.NoError(t, err)
		defer p.Close()
		if layout == rankpart.LayoutSelfReliant {
			_, err = p.OpenEdgeLoader(h, cases[0].items, cases[0].opt, linkLoader(), nil)
			require.ErrorIs(t, err, errs.ErrNotSupported)
			require.ErrorContains(t, err, "dsp and hybrid layouts")
			continue
		}
		temporal := cases[4].opt
		temporal.Request.Temporal = sample.TemporalEdge
		_, err = p.OpenEdgeLoader(h, cases[4].items, temporal, linkLoader(), nil)
		require.ErrorIs(t, err, errs.ErrState) // the part holds no edge times yet
		require.ErrorContains(t, err, "needs the edge times")
		_, err = p.OpenEdgeLoader(h, cases[0].items, cases[0].opt, lopt, nil)
		require.ErrorContains(t, err, "gather no edge data")
		h1, err := comm.NewHost(1, 2, comm.NewLocal(2).Exchanger(1))
		require.NoError(t, err)
		_, err = p.OpenEdgeLoader(h1, cases[0].items, cases[0].opt, linkLoader(), nil)
		require.ErrorContains(t, err, "this is part 0 of 2")
	}
}

package distributed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
	"github.com/graphferry/graphferry/engine/sample"
)

// writeTypedDataset writes the hetero-tiny preset (ogbn-mag's types, ~950
// nodes) and returns its folder, the dataset and its paper train seeds
// (global ids).
func writeTypedDataset(t *testing.T) (string, *dataset.Dataset, []int64) {
	t.Helper()
	p, ok := gen.Presets()["hetero-tiny"]
	require.True(t, ok)
	d, err := gen.Build(p)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "typed")
	require.NoError(t, dataset.Write(dir, d))
	ty, err := d.Types()
	require.NoError(t, err)
	paper := ty.NodeTypeIndex("paper")
	var seeds []int64
	for i, b := range d.NodeData["paper/train_mask"].Data {
		if b != 0 {
			seeds = append(seeds, ty.NodeOffsets[paper]+int64(i))
		}
	}
	return dir, d, seeds
}

// typedRequest samples two hops per relation of hetero-tiny's seven
// (some relations all, some none).
func typedRequest() sample.Request {
	return sample.Request{Seed: 5, RelationFanouts: [][]int{{3, 2, -1, 2, 0, 3, 1}, {2, 1, 2, 0, 2, 1, 2}}}
}

// typedDigest returns a digest of a batch: batchBytes with the batch's
// typed view and its "time" rows (a global column, fetched from the owners
// on a part), and the rows of every per-type name of feats and labels:
// the batch's own (fromBatch), or those a caller of a replicated loader
// gathers from d's whole arrays at the batch's typed view.
func typedDigest(d *dataset.Dataset, feats, labels []string, fromBatch bool) func(*pipeline.Batch) string {
	return func(b *pipeline.Batch) string {
		s := batchBytes(b)
		v := b.Typed
		if v == nil {
			return s + " typed=false"
		}
		s += fmt.Sprint(testgraph.I64(v.Nodes), testgraph.I64(v.Order), testgraph.I64(v.NodeOffsets), testgraph.I64(v.HopCounts))
		for _, tb := range v.Blocks {
			s += fmt.Sprint(testgraph.I64(tb.Shape), testgraph.I64(tb.EdgeOffsets), testgraph.I64(tb.Src), testgraph.I64(tb.Dst), testgraph.I64(tb.EdgeIDs), testgraph.I64(tb.Indptr))
		}
		s += fmt.Sprint(b.NodeData["time"].Data)
		ty, _ := d.Types()
		off, nodes, hops := testgraph.I64(v.NodeOffsets), testgraph.I64(v.Nodes), testgraph.I64(v.HopCounts)
		for k, list := range [][]string{feats, labels} {
			for _, name := range list {
				if fromBatch {
					s += fmt.Sprint(name, b.NodeData[name].Shape, b.NodeData[name].Data)
					continue
				}
				nt, _, _ := ty.SplitName(name)
				ids := nodes[off[nt]:off[nt+1]]
				if k == 1 {
					ids = ids[:hops[nt*(len(b.Blocks)+1)]] // the seeds of the type
				}
				whole := d.NodeData[name]
				rb := int64(whole.RowBytes())
				var rows []byte
				for _, x := range ids {
					rows = append(rows, whole.Data[x*rb:(x+1)*rb]...)
				}
				s += fmt.Sprint(name, append([]int64{int64(len(ids))}, whole.Shape[1:]...), rows)
			}
		}
		return fmt.Sprintf("%s typed=true %x", s[:20], sha256.Sum256([]byte(s)))
	}
}

// readTyped reads epochs of the single-process typed loader over whole,
// digested, and checks that they are typed and have batches for every rank.
func readTyped(t *testing.T, whole *core.Graph, seeds []int64, req sample.Request, lopt pipeline.Options, epochs int, digest func(*pipeline.Batch) string) [][]string {
	t.Helper()
	ref, err := whole.OpenLoader(seeds, req, lopt, nil)
	require.NoError(t, err)
	defer ref.Close()
	want, err := readEpochsWith(ref, epochs, digest)
	require.NoError(t, err)
	require.Greater(t, len(want[0]), 3)
	require.Contains(t, want[0][0], "typed=true")
	return want
}

// TestTypedPartLoaderEqualsReplicated opens every rank's part of a dsp and
// a hybrid partition of a typed dataset and checks that each rank's
// batches (typed views and the global column fetched from the owners
// included) are the batches r, r+size, ... of the loader over the whole
// typed dataset, which the replicated group's ranks deliver
// (TestDistLoaderEqualsSingleProcess).
func TestTypedPartLoaderEqualsReplicated(t *testing.T) {
	src, d, seeds := writeTypedDataset(t)
	req := typedRequest()
	lopt := pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 3, FeatureNames: []string{"time"}, Threads: testgraph.Threads}
	// The parts' loaders gather per-type data too, which the replicated
	// one leaves to its caller.
	feats, labels := []string{"paper/feat", "author/feat"}, []string{"paper/label"}
	popt := lopt
	popt.FeatureNames, popt.LabelNames = append([]string{"time"}, feats...), labels
	const epochs = 2
	whole, err := core.Open(src, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer whole.Close()
	want := readTyped(t, whole, seeds, req, lopt, epochs, typedDigest(d, feats, labels, false))
	for _, layout := range []rankpart.Layout{rankpart.LayoutDSP, rankpart.LayoutHybrid} {
		for _, size := range []int{2, 3} {
			t.Run(fmt.Sprintf("%v-%d", layout, size), func(t *testing.T) {
				dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Random, Parts: size, Seed: 4, Layout: layout})
				digest := typedDigest(d, feats, labels, true)
				got := readPartGroup(t, dst, size, epochs, func(l *core.Loader, epochs int) ([][]string, error) {
					return readEpochsWith(l, epochs, digest)
				}, func(_ int, p *Part, h comm.Comm) *core.Loader {
					require.NotNil(t, p.Types())
					ld, err := p.OpenLoader(h, seeds, req, popt, mem.NewChecked(mem.Heap{}))
					require.NoError(t, err)
					return ld
				})
				requireShares(t, want, got)
			})
		}
	}
}

// TestTypedPartNodeData: a typed part keeps the owned rows of every
// per-type array (OwnedNodeData, OwnedTypeRange).
func TestTypedPartNodeData(t *testing.T) {
	src, d, _ := writeTypedDataset(t)
	ty, err := d.Types()
	require.NoError(t, err)
	dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Random, Parts: 2, Seed: 1, Layout: rankpart.LayoutDSP})
	p, err := OpenPart(dst, 1, dataset.OpenOptions{})
	require.NoError(t, err)
	defer p.Close()
	owned := p.OwnedNodes()
	for nt, typ := range ty.NodeTypes {
		lo, hi := p.OwnedTypeRange(nt)
		feat, err := p.OwnedNodeData(typ.Name+"/feat", nil)
		require.NoError(t, err)
		require.Equal(t, hi-lo, feat.Shape[0], typ.Name)
		whole := d.NodeData[typ.Name+"/feat"]
		rb := int64(whole.RowBytes())
		for i := lo; i < hi; i++ {
			v := owned[i] - ty.NodeOffsets[nt]
			require.GreaterOrEqual(t, v, int64(0))
			require.Less(t, v, typ.NumNodes)
			require.True(t, bytes.Equal(whole.Data[v*rb:(v+1)*rb], feat.Data[(i-lo)*rb:(i-lo+1)*rb]), "%s row %d", typ.Name, i)
		}
	}
}

// TestTypedSelfReliantPart: a typed self-reliant rank takes its seeds from
// the per-type masks and samples them alone, each batch the whole typed
// graph's sample of the same seeds and key, with its typed view and its
// per-type rows gathered from the rank's own.
func TestTypedSelfReliantPart(t *testing.T) {
	src, d, _ := writeTypedDataset(t)
	const size = 2
	dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Random, Seed: 2, Parts: size, Layout: rankpart.LayoutSelfReliant, Hops: 2})
	whole, err := core.Open(src, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	defer whole.Close()
	req := typedRequest()
	feats, labels := []string{"paper/feat", "field_of_study/feat"}, []string{"paper/label"}
	lopt := pipeline.Options{BatchSize: 9, Threads: testgraph.Threads, FeatureNames: append([]string{"time"}, feats...), LabelNames: labels}
	l := comm.NewLocal(size)
	var wg sync.WaitGroup
	errc := make(chan error, size)
	for r := range size {
		p, err := OpenPart(dst, r, dataset.OpenOptions{})
		require.NoError(t, err)
		defer p.Close()
		paper := p.Types().NodeTypeIndex("paper")
		lo, hi := p.OwnedTypeRange(paper)
		train, err := p.OwnedNodeData("paper/train_mask", nil)
		require.NoError(t, err)
		var seeds []int64
		for i := lo; i < hi; i++ {
			if train.Data[i-lo] != 0 {
				seeds = append(seeds, p.OwnedNodes()[i])
			}
		}
		require.NotEmpty(t, seeds, "rank %d", r)
		h, err := comm.NewHost(r, size, l.Exchanger(r))
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ld, err := p.OpenLoader(h, seeds, req, lopt, nil)
			if err != nil {
				errc <- err
				return
			}
			defer ld.Close()
			if err := ld.Start(1); err != nil {
				errc <- err
				return
			}
			for {
				b, err := ld.Next(context.Background())
				if err == io.EOF {
					return
				}
				if err != nil {
					errc <- err
					return
				}
				refRes, err := sampleReqWithKey(whole, req, testgraph.I64(b.Seeds), pipeline.BatchKey(1, b.Index))
				if err != nil {
					errc <- err
					return
				}
				if b.Typed == nil || !equalSamples(b, refRes) {
					errc <- fmt.Errorf("rank %d batch %d differs from the whole graph's typed sample", r, b.Index)
				}
				// Its per-type rows are the whole arrays' at its typed view.
				if typedDigest(d, feats, labels, true)(b) != typedDigest(d, feats, labels, false)(b) {
					errc <- fmt.Errorf("rank %d batch %d: per-type rows differ from the whole arrays'", r, b.Index)
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
}

// openWithNodeTimes opens the whole dataset in src (closed with the test)
// with the test's node times, which it returns (by global id).
func openWithNodeTimes(t *testing.T, src string) (*core.Graph, []int64) {
	t.Helper()
	whole, err := core.Open(src, partition.Options{}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { whole.Close() })
	nodeTime := make([]int64, whole.NumNodes())
	for v := range nodeTime {
		nodeTime[v] = int64(v*7) % 50
	}
	require.NoError(t, whole.SetNodeTime(nodeTime))
	return whole, nodeTime
}

// TestTypedPartTemporalEqualsReplicated: temporal typed requests on typed
// parts. Given the node times by original (global) id, or the edge times
// by original edge id, every rank's typed batches of a dsp or hybrid part
// are the single-process temporal typed loader's batches r, r+size, ...
// over the whole typed dataset with the same times and seed times.
func TestTypedPartTemporalEqualsReplicated(t *testing.T) {
	src, d, seeds := writeTypedDataset(t)
	whole, nodeTime := openWithNodeTimes(t, src)
	edgeTime := make([]int64, whole.NumEdges())
	for e := range edgeTime {
		edgeTime[e] = int64(e*5) % 60
	}
	require.NoError(t, whole.SetEdgeTime(edgeTime))
	seedTimes := make([]int64, len(seeds))
	for i := range seedTimes {
		seedTimes[i] = int64(i*11)%50 + 5
	}
	feats, labels := []string{"paper/feat", "author/feat"}, []string{"paper/label"}
	const epochs = 2
	for _, temporal := range []sample.Temporal{sample.TemporalNode, sample.TemporalEdge} {
		req := typedRequest()
		req.Temporal, req.Disjoint, req.Frontier = temporal, true, sample.FrontierNew // PyG: a subgraph per seed, each with its own time
		lopt := pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 3, FeatureNames: []string{"time"}, SeedTimes: seedTimes, Threads: testgraph.Threads}
		want := readTyped(t, whole, seeds, req, lopt, epochs, typedDigest(d, feats, labels, false))
		// The times filter: the temporal batches are not the plain ones.
		plain := lopt
		plain.SeedTimes = nil
		untimedReq := req
		untimedReq.Temporal = sample.TemporalNone
		untimed := readTyped(t, whole, seeds, untimedReq, plain, 1, typedDigest(d, feats, labels, false))
		require.NotEqual(t, untimed[0], want[0])
		popt := lopt
		popt.FeatureNames, popt.LabelNames = append([]string{"time"}, feats...), labels
		for _, layout := range []rankpart.Layout{rankpart.LayoutDSP, rankpart.LayoutHybrid} {
			t.Run(fmt.Sprintf("%s-times-%v", map[sample.Temporal]string{sample.TemporalNode: "node", sample.TemporalEdge: "edge"}[temporal], layout), func(t *testing.T) {
				const size = 2
				dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Random, Parts: size, Seed: 4, Layout: layout})
				digest := typedDigest(d, feats, labels, true)
				got := readPartGroup(t, dst, size, epochs, func(l *core.Loader, epochs int) ([][]string, error) {
					return readEpochsWith(l, epochs, digest)
				}, func(_ int, p *Part, h comm.Comm) *core.Loader {
					require.NoError(t, p.SetNodeTime(nodeTime))
					require.NoError(t, p.SetEdgeTime(edgeTime))
					ld, err := p.OpenLoader(h, seeds, req, popt, mem.NewChecked(mem.Heap{}))
					require.NoError(t, err)
					return ld
				})
				requireShares(t, want, got)
			})
		}
	}
}

// typedPartLinkCases are typed edge loaders over hetero-tiny (the whole
// graph's edges src, dst by global edge id, its types ty): DGL's seed
// edges of several relations interleaved (per-source negatives of each
// relation's destination type, the seed edges or their reverses
// excluded, global negatives per relation), PyG's pairs of the writes
// relation with binary, triplet and disjoint negatives, and PyG's
// temporal sampling under node times.
func typedPartLinkCases(src, dst []int64, edgeOffsets []int64) []linkCase {
	var eids []int64
	for i := range int64(30) {
		for _, r := range []int64{1, 4, 6} { // writes, cites, rev_writes
			n := edgeOffsets[r+1] - edgeOffsets[r]
			eids = append(eids, edgeOffsets[r]+(i*37)%n)
		}
	}
	eids[9] = eids[4] // DGL takes repeated seed edges
	var pairs linkpred.Pairs
	for e := edgeOffsets[1]; e < edgeOffsets[2] && pairs.Len() < 80; e += 31 { // writes
		pairs.Src, pairs.Dst = append(pairs.Src, src[e]), append(pairs.Dst, dst[e])
	}
	req := sample.Request{RelationFanouts: [][]int{{3, 2, -1, 2, 0, 3, 1}, {2, 1, 2, 0, 2, 1, 2}}, Seed: 9}
	return typedLinkCasesOf(req, len(src), eids, pairs)
}

// TestTypedPartEdgeLoaderEqualsReplicated: the edge loaders of typed dsp
// and hybrid parts give every rank the single-process typed edge loader's
// batches r, r+size, ... over the whole typed dataset: seed edges grouped
// by relation (resolved with the other ranks on dsp), negatives per type,
// samples, typed views, and per-type node data fetched from the owners
// equal to the whole arrays' rows at each batch's typed view.
func TestTypedPartEdgeLoaderEqualsReplicated(t *testing.T) {
	srcDir, d, _ := writeTypedDataset(t)
	whole, nodeTime := openWithNodeTimes(t, srcDir)
	ed, err := whole.Edges(core.EdgesCOO, -1, nil)
	require.NoError(t, err)
	ty, err := d.Types()
	require.NoError(t, err)
	feats := []string{"paper/feat", "author/feat"}
	digest := func(fromBatch bool) func(*pipeline.Batch) string {
		rows := typedDigest(d, feats, nil, fromBatch)
		return func(b *pipeline.Batch) string { return typedBatchBytes(b) + " " + rows(b) }
	}
	const epochs = 2
	for _, tc := range typedPartLinkCases(testgraph.I64(ed.First), testgraph.I64(ed.Second), ty.EdgeOffsets) {
		lopt := linkLoader()
		lopt.FeatureNames, lopt.LabelNames = []string{"time"}, nil
		ref, err := whole.OpenEdgeLoader(tc.items, tc.opt, lopt, nil)
		require.NoError(t, err)
		want, err := readEpochsWith(ref, epochs, digest(false))
		require.NoError(t, err)
		ref.Close()
		require.Greater(t, len(want[0]), 3)
		require.NotContains(t, want[0][0], "no typed view")
		for _, layout := range []rankpart.Layout{rankpart.LayoutDSP, rankpart.LayoutHybrid} {
			t.Run(fmt.Sprintf("%s-%v", tc.name, layout), func(t *testing.T) {
				_, global := tc.opt.DGL.Negative.(linkpred.GlobalUniform)
				if layout == rankpart.LayoutDSP && global {
					t.Skip("refused on dsp parts (TestEdgeLoaderRefuses)")
				}
				const size = 2
				dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Random, Parts: size, Seed: 4, Layout: layout})
				got := runRanksWith(t, size, 1, epochs, digest(true), func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
					p, err := OpenPart(dir, r, dataset.OpenOptions{})
					if err != nil {
						return nil, err
					}
					defer p.Close() // the loader keeps what it needs
					if err := p.SetNodeTime(nodeTime); err != nil {
						return nil, err
					}
					o.FeatureNames, o.LabelNames = append([]string{"time"}, feats...), nil
					return p.OpenEdgeLoader(h, tc.items, tc.opt, o, mem.NewChecked(mem.Heap{}))
				})
				requireShares(t, want, got)
			})
		}
	}
}

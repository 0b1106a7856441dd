package core

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/linkload"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// readEpoch reads epoch e of l to its end.
func readEpoch(t *testing.T, l *Loader, e uint64) []*pipeline.Batch {
	t.Helper()
	require.NoError(t, l.Start(e))
	var out []*pipeline.Batch
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		t.Cleanup(b.Release)
		out = append(out, b)
	}
}

// withoutInputID is a batch's snapshot with its LinkInputID left out.
func withoutInputID(b *pipeline.Batch) [][]int64 {
	s := snapshot(&EdgeBatch{Batch: b})
	n := 3 + 3*len(b.Blocks)
	return slices.Delete(s, n+int(LinkInputID), n+int(LinkInputID)+1)
}

// edgeRows is edge data "w": row e = (e, 2e) float32, one row per edge id.
func edgeRows(numEdges int64) mem.Tensor {
	w := make([]float32, 2*numEdges)
	for e := range numEdges {
		w[2*e], w[2*e+1] = float32(e), float32(2*e)
	}
	return mem.Tensor{DType: mem.Float32, Shape: []int64{numEdges, 2}, Data: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), 4*len(w))}
}

// checkEdgeRows checks b's edge data "w" against its blocks' edge ids.
func checkEdgeRows(t *testing.T, b *pipeline.Batch) {
	t.Helper()
	var ids []int64
	for _, blk := range b.Blocks {
		ids = append(ids, i64(blk.EdgeIDs)...)
	}
	w := b.EdgeData["w"]
	require.Equal(t, []int64{int64(len(ids)), 2}, w.Shape)
	rows := mem.Float32s(w.Data)
	for i, e := range ids {
		require.Equal(t, []float32{float32(e), float32(2 * e)}, rows[2*i:2*i+2])
	}
}

// edgeLoaderCase is an edge loader's options and items.
type edgeLoaderCase struct {
	name  string
	opt   EdgeSamplerOptions
	items linkload.Items
}

func edgeLoaderCases() []edgeLoaderCase {
	eids := make([]int64, 70)
	for i := range eids {
		eids[i] = int64(i*13) % testEdges
	}
	src, dst := testCOO()
	pairs := linkpred.Pairs{Src: slices.Clone(src[:50]), Dst: slices.Clone(dst[:50])}
	pairs.Src[3], pairs.Dst[3] = 1, 2 // not necessarily an edge: PyG allows that
	req := sample.Request{Fanouts: []int{3, 2}, Seed: 21}
	return []edgeLoaderCase{
		{"dgl", EdgeSamplerOptions{Request: req, Mode: LinkDGL, DGL: linkpred.DGLEdgeSampler{
			Negative: linkpred.PerSourceUniform{K: 2}, Exclude: linkpred.ExcludeSelfEdges}}, linkload.Items{EdgeIDs: eids}},
		{"dgl-global", EdgeSamplerOptions{Request: req, Mode: LinkDGL, DGL: linkpred.DGLEdgeSampler{
			Negative: linkpred.GlobalUniform{K: 1, ExcludeSelfLoops: true}}}, linkload.Items{EdgeIDs: eids}},
		{"pyg-binary", EdgeSamplerOptions{Request: req, Mode: LinkPyG, PyG: linkpred.PyGLinkSampler{
			Mode: linkpred.PyGBinaryMode, Amount: 1.5}}, linkload.Items{Pairs: pairs}},
		{"pyg-triplet", EdgeSamplerOptions{Request: req, Mode: LinkPyG, PyG: linkpred.PyGLinkSampler{
			Mode: linkpred.PyGTripletMode, Amount: 2}}, linkload.Items{Pairs: pairs}},
	}
}

// An edge loader's batch i of epoch e is the EdgeSampler's batch of its
// items with key BatchKey(e, i), whatever the partition, thread and worker
// count; every item once an epoch; node and edge data gathered.
func TestEdgeLoaderIsTheEdgeSampler(t *testing.T) {
	for _, tc := range edgeLoaderCases() {
		t.Run(tc.name, func(t *testing.T) {
			var want [][][]int64
			for name, popt := range partitions() {
				for _, workers := range []int{1, 3} {
					g := newTestGraph(t, popt)
					withNodeData(t, g)
					require.NoError(t, g.SetEdgeData("w", edgeRows(testEdges), nil))
					lopt := pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 3, Threads: workers, Workers: workers,
						FeatureNames: []string{"feat"}, EdgeFeatureNames: []string{"w"}}
					l, err := g.OpenEdgeLoader(tc.items, tc.opt, lopt, nil)
					require.NoError(t, err, name)
					es, err := g.NewEdgeSampler(tc.opt)
					require.NoError(t, err)
					bs := readEpoch(t, l, 2)
					require.Len(t, bs, l.NumBatches())
					var got [][][]int64
					var seen []int64
					for i, b := range bs {
						in := i64(b.Link[LinkInputID])
						seen = append(seen, in...)
						items := linkload.Items{EdgeIDs: nil}
						var ref *EdgeBatch
						if tc.opt.Mode == LinkDGL {
							items.EdgeIDs = make([]int64, len(in))
							for k, q := range in {
								items.EdgeIDs[k] = tc.items.EdgeIDs[q]
							}
							ref, err = es.SampleDGL(items.EdgeIDs, pipeline.BatchKey(2, int64(i)), nil)
						} else {
							p := linkpred.Pairs{}
							for _, q := range in {
								p.Src, p.Dst = append(p.Src, tc.items.Pairs.Src[q]), append(p.Dst, tc.items.Pairs.Dst[q])
							}
							ref, err = es.SamplePyG(p, pipeline.BatchKey(2, int64(i)), nil)
						}
						require.NoError(t, err)
						require.Equal(t, withoutInputID(ref.Batch), withoutInputID(b), "%s, %d workers, batch %d", name, workers, i)
						ref.Release()
						feat := mem.Float32s(b.NodeData["feat"].Data)
						for k, v := range i64(b.Nodes) {
							require.Equal(t, featOf(v), feat[k*featDim:(k+1)*featDim])
						}
						checkEdgeRows(t, b)
						got = append(got, snapshot(&EdgeBatch{Batch: b}))
					}
					slices.Sort(seen)
					want0 := make([]int64, tc.items.Len())
					for i := range want0 {
						want0[i] = int64(i)
					}
					require.Equal(t, want0, seen, "every item once an epoch")
					if want == nil {
						want = got
					} else {
						require.Equal(t, want, got, "%s, %d workers", name, workers)
					}
					st := l.Stats()
					require.Equal(t, workers, st.Workers)
					require.Equal(t, int64(len(bs)), st.Current.Consumer.Batches)
					require.NoError(t, l.Close())
					require.NoError(t, es.Close())
				}
			}
		})
	}
}

func TestEdgeLoaderErrors(t *testing.T) {
	g := newTestGraph(t, partitions()["range3"])
	dgl := edgeLoaderCases()[0]
	lopt := pipeline.Options{BatchSize: 4}
	_, err := g.OpenEdgeLoader(linkload.Items{EdgeIDs: []int64{1, testEdges}}, dgl.opt, lopt, nil)
	require.ErrorContains(t, err, fmt.Sprintf("ids[1] = %d is not an edge", testEdges))
	_, err = g.OpenEdgeLoader(linkload.Items{Pairs: linkpred.Pairs{Src: []int64{1}, Dst: []int64{2}}}, dgl.opt, lopt, nil)
	require.ErrorContains(t, err, "not pairs")
	pyg := edgeLoaderCases()[2]
	_, err = g.OpenEdgeLoader(linkload.Items{Pairs: linkpred.Pairs{Src: []int64{1}, Dst: []int64{testNodes}}}, pyg.opt, lopt, nil)
	require.ErrorContains(t, err, "destinations[0]")
	_, err = g.OpenEdgeLoader(dgl.items, dgl.opt, pipeline.Options{BatchSize: 4, EdgeFeatureNames: []string{"w"}}, nil)
	require.ErrorContains(t, err, "no edge data")
	_, err = g.OpenEdgeLoader(dgl.items, EdgeSamplerOptions{Request: linkRequest()}, lopt, nil)
	require.ErrorContains(t, err, "link mode")
	require.ErrorContains(t, g.SetEdgeData("w", edgeRows(testEdges-1), nil), fmt.Sprintf("one row per edge id (%d)", testEdges))
	require.NoError(t, g.SetEdgeData("w", edgeRows(testEdges), nil))
	l, err := g.OpenEdgeLoader(dgl.items, dgl.opt, lopt, nil)
	require.NoError(t, err)
	require.ErrorContains(t, g.SetEdgeData("w", edgeRows(testEdges), nil), "open loader")
	require.NoError(t, l.Close())
	require.NoError(t, g.SetEdgeData("w", edgeRows(testEdges), nil))
	names, err := g.EdgeDataNames()
	require.NoError(t, err)
	require.Equal(t, []string{"w"}, names)
}

// typedEdgeCases are typed loaders over typedTestGraph: DGL seeds of two
// relations, PyG pairs of relation 0 (A -> B).
func typedEdgeCases(t *testing.T) []edgeLoaderCase {
	_, ty := typedTestGraph(t, typedPartitions()["range1"])
	var eids []int64
	for e := int64(0); e < 60; e++ {
		eids = append(eids, 310+e, e*2) // relations 2 and 0, interleaved
	}
	src, dst := typedCOO(t)
	var pairs linkpred.Pairs
	for e := ty.EdgeOffsets[0]; e < ty.EdgeOffsets[1]; e += 3 {
		pairs.Src, pairs.Dst = append(pairs.Src, src[e]), append(pairs.Dst, dst[e])
	}
	req := sample.Request{RelationFanouts: [][]int{{2, 3, 1}, {1, 1, 2}}, Seed: 9}
	return []edgeLoaderCase{
		{"dgl", EdgeSamplerOptions{Request: req, Mode: LinkDGL, DGL: linkpred.DGLEdgeSampler{
			Negative: linkpred.PerSourceUniform{K: 2}, Exclude: linkpred.ExcludeSelfEdges}}, linkload.Items{EdgeIDs: eids}},
		{"pyg-binary", EdgeSamplerOptions{Request: req, Mode: LinkPyG, PyG: linkpred.PyGLinkSampler{
			Mode: linkpred.PyGBinaryMode, Amount: 2}}, linkload.Items{Pairs: pairs}},
		{"pyg-triplet", EdgeSamplerOptions{Request: req, Mode: LinkPyG, PyG: linkpred.PyGLinkSampler{
			Mode: linkpred.PyGTripletMode, Amount: 3}}, linkload.Items{Pairs: pairs}},
	}
}

// typedCOO returns typedTestGraph's edges: edge e is src[e] -> dst[e].
func typedCOO(t *testing.T) (src, dst []int64) {
	g, _ := typedTestGraph(t, typedPartitions()["range1"])
	el, err := g.Edges(EdgesCOO, -1, nil)
	require.NoError(t, err)
	return i64(el.First), i64(el.Second)
}

// ofType returns the seeds of b of node type nt, in order.
func ofType(b *pipeline.Batch, ty graph.Types, nt int32) []int64 {
	var out []int64
	for _, v := range i64(b.Seeds) {
		if ty.NodeType(v) == nt {
			out = append(out, v)
		}
	}
	return out
}

// Typed edge batches: the same for any partition, thread and worker count;
// DGL's pairs grouped by relation over the type-local seeds, negatives of
// the relation's destination type; PyG's negatives of the pair type's
// source and destination types.
func TestTypedEdgeLoader(t *testing.T) {
	src, dst := typedCOO(t)
	for _, tc := range typedEdgeCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			var want [][][]int64
			for name, popt := range typedPartitions() {
				for _, workers := range []int{1, 2} {
					g, ty := typedTestGraph(t, popt)
					require.NoError(t, g.SetTypes(ty))
					lopt := pipeline.Options{BatchSize: 20, Shuffle: true, Seed: 1, Threads: workers, Workers: workers}
					l, err := g.OpenEdgeLoader(tc.items, tc.opt, lopt, nil)
					require.NoError(t, err, name)
					var got [][][]int64
					for _, b := range readEpoch(t, l, 1) {
						require.NotNil(t, b.Typed, "typed view added")
						checkTypedLink(t, b, ty, tc, src, dst)
						got = append(got, snapshot(&EdgeBatch{Batch: b}))
					}
					require.NoError(t, l.Close())
					if want == nil {
						want = got
					} else {
						require.Equal(t, want, got, "%s, %d workers", name, workers)
					}
				}
			}
		})
	}
}

func checkTypedLink(t *testing.T, b *pipeline.Batch, ty graph.Types, tc edgeLoaderCase, src, dst []int64) {
	t.Helper()
	seeds := i64(b.Seeds)
	for i := 1; i < len(seeds); i++ {
		require.LessOrEqual(t, ty.NodeType(seeds[i-1]), ty.NodeType(seeds[i]), "seeds grouped by type")
	}
	in := i64(b.Link[LinkInputID])
	if tc.opt.Mode == LinkDGL {
		off := i64(b.Link[LinkPosOffsets])
		ps, pd, ids := i64(b.Link[LinkPosSrc]), i64(b.Link[LinkPosDst]), i64(b.Link[LinkEdgeIDs])
		ns, nd, noff := i64(b.Link[LinkNegSrc]), i64(b.Link[LinkNegDst]), i64(b.Link[LinkNegOffsets])
		require.Len(t, off, 4)
		var blockEdges []int64
		for _, blk := range b.Blocks {
			blockEdges = append(blockEdges, i64(blk.EdgeIDs)...)
		}
		for r := range 3 {
			s, d := ofType(b, ty, ty.RelSrc[r]), ofType(b, ty, ty.RelDst[r])
			require.Equal(t, 2*off[r], noff[r])
			for i := off[r]; i < off[r+1]; i++ {
				e := tc.items.EdgeIDs[in[i]]
				require.Equal(t, e, ids[i]+ty.EdgeOffsets[r], "relation-local edge id")
				require.Equal(t, src[e], s[ps[i]])
				require.Equal(t, dst[e], d[pd[i]])
				require.NotContains(t, blockEdges, e, "seed edge excluded")
				for j := 2 * i; j < 2*i+2; j++ {
					require.Equal(t, ps[i], ns[j], "negatives keep their positive's source")
					require.Less(t, nd[j], int64(len(d)), "negative of the destination type")
				}
			}
		}
		return
	}
	s, d := ofType(b, ty, 0), ofType(b, ty, 1) // relation 0: A -> B
	pairs := tc.items.Pairs
	if tc.opt.PyG.Mode == linkpred.PyGTripletMode {
		si, di, ni := i64(b.Link[LinkSrcIndex]), i64(b.Link[LinkDstPosIndex]), i64(b.Link[LinkDstNegIndex])
		require.Len(t, ni, 3*len(in))
		for i, q := range in {
			require.Equal(t, pairs.Src[q], s[si[i]])
			require.Equal(t, pairs.Dst[q], d[di[i]])
		}
		for _, x := range ni {
			require.Less(t, x, int64(len(d)))
		}
		return
	}
	ps, pd := i64(b.Link[LinkPosSrc]), i64(b.Link[LinkPosDst])
	require.Len(t, ps, 3*len(in))
	for i := range ps {
		require.Less(t, ps[i], int64(len(s)))
		require.Less(t, pd[i], int64(len(d)))
		if i < len(in) {
			require.Equal(t, pairs.Src[in[i]], s[ps[i]])
			require.Equal(t, pairs.Dst[in[i]], d[pd[i]])
		}
	}
}

// Edges exports the edges the graph was built from, COO and CSC, typed or
// not, whatever the partition.
func TestEdgesExport(t *testing.T) {
	src, dst := testCOO()
	ref := refGraph(t)
	for name, popt := range partitions() {
		g := newTestGraph(t, popt)
		coo, err := g.Edges(EdgesCOO, -1, nil)
		require.NoError(t, err, name)
		ids := make([]int64, testEdges)
		for i := range ids {
			ids[i] = int64(i)
		}
		require.Equal(t, src, i64(coo.First), name)
		require.Equal(t, dst, i64(coo.Second), name)
		require.Equal(t, ids, i64(coo.EdgeIDs), name)
		csc, err := g.Edges(EdgesCSC, -1, nil)
		require.NoError(t, err)
		require.Equal(t, ref.Indptr, i64(csc.First), name)
		for v := int64(0); v < testNodes; v++ {
			for pos := ref.Indptr[v]; pos < ref.Indptr[v+1]; pos++ {
				require.Equal(t, ref.Source(pos), i64(csc.Second)[pos])
				require.Equal(t, ref.EdgeID(pos), i64(csc.EdgeIDs)[pos])
			}
		}
		_, err = g.Edges(EdgesCOO, 0, nil)
		require.ErrorContains(t, err, "not typed")
		_, err = g.Edges(EdgeFormat(7), -1, nil)
		require.ErrorContains(t, err, "edge format")
	}
	var want []EdgeList
	for name, popt := range typedPartitions() {
		g, ty := typedTestGraph(t, popt)
		require.NoError(t, g.SetTypes(ty))
		all, err := g.Edges(EdgesCOO, -1, nil)
		require.NoError(t, err)
		var got []EdgeList
		for r := range 3 {
			coo, err := g.Edges(EdgesCOO, r, nil)
			require.NoError(t, err)
			lo, hi := ty.EdgeOffsets[r], ty.EdgeOffsets[r+1]
			s, d := i64(all.First)[lo:hi], i64(all.Second)[lo:hi]
			for i := range s {
				require.Equal(t, s[i]-ty.NodeOffsets[ty.RelSrc[r]], i64(coo.First)[i], name)
				require.Equal(t, d[i]-ty.NodeOffsets[ty.RelDst[r]], i64(coo.Second)[i], name)
				require.Equal(t, int64(i), i64(coo.EdgeIDs)[i], name)
			}
			csc, err := g.Edges(EdgesCSC, r, nil)
			require.NoError(t, err)
			nd := ty.NodeOffsets[ty.RelDst[r]+1] - ty.NodeOffsets[ty.RelDst[r]]
			indptr := i64(csc.First)
			require.Len(t, indptr, int(nd)+1)
			for v := range nd {
				for k := indptr[v]; k < indptr[v+1]; k++ {
					e := i64(csc.EdgeIDs)[k]
					require.Equal(t, i64(coo.First)[e], i64(csc.Second)[k])
					require.Equal(t, v, i64(coo.Second)[e])
				}
			}
			got = append(got, coo)
		}
		_, err = g.Edges(EdgesCOO, 3, nil)
		require.ErrorContains(t, err, "out of range")
		if want == nil {
			want = got
		}
		require.Equal(t, want, got)
	}
}

func TestTypedEdgeLoaderErrors(t *testing.T) {
	g, ty := typedTestGraph(t, typedPartitions()["range3"])
	require.NoError(t, g.SetTypes(ty))
	req := sample.Request{RelationFanouts: [][]int{{2, 3, 1}}, Seed: 1}
	lopt := pipeline.Options{BatchSize: 4}
	ones := make([]float64, 100)
	for i := range ones {
		ones[i] = 1
	}
	w, err := linkpred.NewNodeWeights(ones)
	require.NoError(t, err)
	// Weights hold one weight per node of the drawn type (A: 40 nodes).
	weighted := EdgeSamplerOptions{Request: req, Mode: LinkPyG, PyG: linkpred.PyGLinkSampler{Mode: linkpred.PyGBinaryMode, Amount: 1, Weights: w}}
	_, err = g.OpenEdgeLoader(linkload.Items{Pairs: linkpred.Pairs{Src: []int64{1, 2}, Dst: []int64{60, 61}}}, weighted, lopt, nil)
	require.ErrorContains(t, err, "100 weights for the 40 nodes of the pairs' source type")
	pyg := EdgeSamplerOptions{Request: req, Mode: LinkPyG, PyG: linkpred.PyGLinkSampler{Mode: linkpred.PyGBinaryMode, Amount: 1}}
	// A -> B and B -> B pairs: not of one edge type.
	_, err = g.OpenEdgeLoader(linkload.Items{Pairs: linkpred.Pairs{Src: []int64{1, 50}, Dst: []int64{60, 61}}}, pyg, lopt, nil)
	require.ErrorContains(t, err, "not of one edge type")
	l, err := g.OpenEdgeLoader(linkload.Items{Pairs: linkpred.Pairs{Src: []int64{1, 2}, Dst: []int64{60, 61}}}, pyg, lopt, nil)
	require.NoError(t, err)
	require.ErrorIs(t, g.SetTypes(ty), errs.ErrState, "types are fixed while an edge loader is open")
	require.NoError(t, l.Close())
}

// TestTypedGlobalUniform: DGL's GlobalUniform on a typed graph draws per
// relation among the pairs of its node types that are not its edges (no
// self-loops on the B -> B relation), unique pairs, at most k per seed
// edge, the same batch on every partition.
func TestTypedGlobalUniform(t *testing.T) {
	req := sample.Request{RelationFanouts: [][]int{{2, 3, 1}}, Seed: 1}
	opt := EdgeSamplerOptions{Request: req, Mode: LinkDGL, DGL: linkpred.DGLEdgeSampler{Negative: linkpred.GlobalUniform{K: 3, ExcludeSelfLoops: true}}}
	eids := []int64{3, 160, 1, 301, 155, 0, 299}
	var first [][]int64
	for name, popt := range typedPartitions() {
		g, ty := typedTestGraph(t, popt)
		require.NoError(t, g.SetTypes(ty))
		all, err := g.Edges(EdgesCOO, -1, nil)
		require.NoError(t, err)
		src, dst := i64(all.First), i64(all.Second)
		es, err := g.NewEdgeSampler(opt)
		require.NoError(t, err)
		b, err := es.SampleDGL(eids, 5, nil)
		require.NoError(t, err)
		off, noff := i64(b.Link[LinkPosOffsets]), i64(b.Link[LinkNegOffsets])
		ns, nd := i64(b.Link[LinkNegSrc]), i64(b.Link[LinkNegDst])
		require.Equal(t, []int64{0, 3, 6, 7}, off)
		for r := range 3 {
			edges := map[[2]int64]bool{}
			for e := ty.EdgeOffsets[r]; e < ty.EdgeOffsets[r+1]; e++ {
				edges[[2]int64{src[e], dst[e]}] = true
			}
			s, d := ofType(b.Batch, ty, ty.RelSrc[r]), ofType(b.Batch, ty, ty.RelDst[r])
			n := noff[r+1] - noff[r]
			require.Positive(t, n, name)
			require.LessOrEqual(t, n, 3*(off[r+1]-off[r]), name)
			seen := map[[2]int64]bool{}
			for j := noff[r]; j < noff[r+1]; j++ {
				pair := [2]int64{s[ns[j]], d[nd[j]]}
				require.False(t, edges[pair], "%s: relation %d negative %v is an edge", name, r, pair)
				require.False(t, seen[pair], "%s: repeated negative %v", name, pair)
				seen[pair] = true
				if r == 1 {
					require.NotEqual(t, pair[0], pair[1], "self-loop")
				}
			}
		}
		got := [][]int64{noff, globalOf(b.Batch, ty, ns, noff, true), globalOf(b.Batch, ty, nd, noff, false)}
		if first == nil {
			first = got
		}
		require.Equal(t, first, got, name)
		b.Release()
		require.NoError(t, es.Close())
	}
}

// globalOf returns the original ids of a typed DGL batch's negative
// sources (or destinations), relation by relation.
func globalOf(b *pipeline.Batch, ty graph.Types, local, noff []int64, source bool) []int64 {
	out := make([]int64, len(local))
	for r := 0; r+1 < len(noff); r++ {
		nt := ty.RelDst[r]
		if source {
			nt = ty.RelSrc[r]
		}
		ids := ofType(b, ty, nt)
		for j := noff[r]; j < noff[r+1]; j++ {
			out[j] = ids[local[j]]
		}
	}
	return out
}

package distributed

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/linkload"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// The typed test graph: testgraph.Nodes nodes of two types, A = [0, 120)
// and B = [120, 300), and testgraph.Edges edges of three relations (A->B,
// B->B, B->A), 800 each, so that the test graph's node data fits it.
const typedSplit = 120

// typedCOO returns the typed test graph's edges (edge e is src[e] ->
// dst[e], grouped by relation) and its types.
func typedCOO() (src, dst []int64, ty graph.Types) {
	ranges := [][4]int64{{0, typedSplit, typedSplit, testgraph.Nodes}, {typedSplit, testgraph.Nodes, typedSplit, testgraph.Nodes}, {typedSplit, testgraph.Nodes, 0, typedSplit}}
	r := rand.New(rand.NewPCG(3, 5))
	off := []int64{0}
	for _, rg := range ranges {
		for range testgraph.Edges / len(ranges) {
			src, dst = append(src, rg[0]+r.Int64N(rg[1]-rg[0])), append(dst, rg[2]+r.Int64N(rg[3]-rg[2]))
		}
		off = append(off, int64(len(src)))
	}
	ty = graph.Types{NodeOffsets: []int64{0, typedSplit, testgraph.Nodes}, EdgeOffsets: off, RelSrc: []int32{0, 1, 1}, RelDst: []int32{1, 1, 0}}
	return src, dst, ty
}

// newTypedGraph returns the typed test graph partitioned with popt, with
// node data, node times and edge data "w" (closed at the end of the test).
func newTypedGraph(t *testing.T, popt partition.Options) *core.Graph {
	t.Helper()
	src, dst, ty := typedCOO()
	csc, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: testgraph.Nodes})
	require.NoError(t, err)
	g, err := core.New(csc, popt)
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	require.NoError(t, g.SetTypes(ty))
	withNodeData(t, g)
	withNodeTimes(t, g, sample.Request{Temporal: sample.TemporalNode})
	w := make([]float32, testgraph.Edges)
	for e := range w {
		w[e] = float32(e)
	}
	require.NoError(t, g.SetEdgeData("w", mem.Tensor{DType: mem.Float32, Shape: []int64{testgraph.Edges}, Data: mem.Bytes(w)}, nil))
	return g
}

// typedBatchBytes is edgeBatchBytes with the batch's typed view, which
// every batch of a typed graph carries.
func typedBatchBytes(b *pipeline.Batch) string {
	if b.Typed == nil {
		return fmt.Sprintf("batch %d epoch %d: no typed view", b.Index, b.Epoch)
	}
	v := b.Typed
	s := edgeBatchBytes(b) + fmt.Sprint(testgraph.I64(v.Nodes), testgraph.I64(v.Order), testgraph.I64(v.NodeOffsets), testgraph.I64(v.HopCounts))
	for _, tb := range v.Blocks {
		s += fmt.Sprint(testgraph.I64(tb.Shape), testgraph.I64(tb.EdgeOffsets), testgraph.I64(tb.Src), testgraph.I64(tb.Dst), testgraph.I64(tb.EdgeIDs), testgraph.I64(tb.Indptr))
	}
	return fmt.Sprintf("batch %d epoch %d: %x", b.Index, b.Epoch, sha256.Sum256([]byte(s)))
}

// typedGroups are the groups of ranks (and sampler workers) the typed
// loaders are checked with.
var typedGroups = []struct{ size, workers int }{{2, 1}, {3, 1}, {4, 1}, {3, 2}}

// requireTypedShares reads the single-process epochs of ref and checks
// that every group's ranks, each opening its loader with open on its own
// replicated copy of the typed graph, get their shares of them.
func requireTypedShares(t *testing.T, name string, ref func(g *core.Graph, lopt pipeline.Options) (*core.Loader, error),
	open func(g *core.Graph, c comm.Comm, lopt pipeline.Options) (*core.Loader, error)) {
	t.Helper()
	const epochs = 2
	l, err := ref(newTypedGraph(t, partition.Options{Method: partition.Range, NumPatches: 2}), linkLoader())
	require.NoError(t, err)
	want, err := readEpochsWith(l, epochs, typedBatchBytes)
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.Greater(t, len(want[0]), 4, "more batches than ranks")
	require.NotEqual(t, want[0], want[1], "epochs reshuffled")
	require.NotContains(t, want[0][0], "no typed view")
	for _, c := range typedGroups {
		t.Run(fmt.Sprintf("%s-%d-workers=%d", name, c.size, c.workers), func(t *testing.T) {
			got := runRanksWith(t, c.size, c.workers, epochs, typedBatchBytes, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
				return open(newTypedGraph(t, partition.Options{Method: partition.Random, NumPatches: c.size, Seed: 11}), h, o)
			})
			requireShares(t, want, got)
		})
	}
}

// TestDistTypedLoaderEqualsSingleProcess: the node loaders of a group of
// ranks over a replicated typed graph give each rank the single-process
// typed loader's batches r, r+size, ..., padded, typed view included,
// for typed, disjoint and temporal requests.
func TestDistTypedLoaderEqualsSingleProcess(t *testing.T) {
	seeds := make([]int64, 90)
	for i := range seeds {
		seeds[i] = int64(7*i+1) % testgraph.Nodes
	}
	typed := sample.Request{RelationFanouts: [][]int{{2, 3, 1}, {1, -1, 2}}, Seed: 4}
	disjoint := sample.Request{RelationFanouts: [][]int{{2, 3, 1}, {1, 1, 2}}, Frontier: sample.FrontierNew, Disjoint: true, Seed: 5}
	temporal := disjoint
	temporal.Temporal = sample.TemporalNode
	times := make([]int64, len(seeds))
	for i := range times {
		times[i] = int64(i*11) % 50
	}
	for name, req := range map[string]sample.Request{"typed": typed, "disjoint": disjoint, "temporal": temporal} {
		withTimes := func(lopt pipeline.Options) pipeline.Options {
			if req.Temporal != sample.TemporalNone {
				lopt.SeedTimes = times
			}
			return lopt
		}
		requireTypedShares(t, name,
			func(g *core.Graph, lopt pipeline.Options) (*core.Loader, error) {
				return g.OpenLoader(seeds, req, withTimes(lopt), nil)
			},
			func(g *core.Graph, c comm.Comm, lopt pipeline.Options) (*core.Loader, error) {
				return OpenLoader(g, c, seeds, req, withTimes(lopt), mem.NewChecked(mem.Heap{}))
			})
	}
}

// typedLinkCases are typed edge loaders: DGL's seed edges of the three
// relations interleaved (per-source negatives of each relation's
// destination type, global ones per relation, the seed edges and their
// reverses excluded), PyG's pairs of relation 0 (A -> B) with binary,
// triplet and disjoint negatives, and PyG's temporal sampling.
func typedLinkCases() []linkCase {
	src, dst, ty := typedCOO()
	var eids []int64
	for i := range int64(30) {
		eids = append(eids, ty.EdgeOffsets[2]+i*7, i*11, ty.EdgeOffsets[1]+i*5)
	}
	eids[9] = eids[4] // DGL takes repeated seed edges
	var pairs linkpred.Pairs
	for e := ty.EdgeOffsets[0]; e < ty.EdgeOffsets[1] && pairs.Len() < 80; e += 9 {
		pairs.Src, pairs.Dst = append(pairs.Src, src[e]), append(pairs.Dst, dst[e])
	}
	return typedLinkCasesOf(sample.Request{RelationFanouts: [][]int{{2, 3, 1}, {1, 1, 2}}, Seed: 9}, len(src), eids, pairs)
}

// typedLinkCasesOf are typedLinkCases' loaders sampling with req on a graph
// of numEdges edges: DGL's over the seed edge ids eids, PyG's over pairs
// (of one edge type).
func typedLinkCasesOf(req sample.Request, numEdges int, eids []int64, pairs linkpred.Pairs) []linkCase {
	rev := make([]int64, numEdges)
	for e := range rev {
		rev[e] = int64(numEdges) - 1 - int64(e) // any map will do
	}
	disjoint := req
	disjoint.Disjoint, disjoint.Frontier = true, sample.FrontierNew
	temporal := disjoint
	temporal.Temporal = sample.TemporalNode
	dgl := func(neg linkpred.DGLNegative, ex linkpred.Exclude) linkload.Options {
		return dglOptions(req, neg, ex, rev)
	}
	times := make([]int64, pairs.Len())
	for i := range times {
		times[i] = int64(i*13) % 50
	}
	return []linkCase{
		{"dgl", dgl(linkpred.PerSourceUniform{K: 2}, linkpred.ExcludeNone), linkload.Items{EdgeIDs: eids}},
		{"dgl-self", dgl(linkpred.PerSourceUniform{K: 2}, linkpred.ExcludeSelfEdges), linkload.Items{EdgeIDs: eids}},
		{"dgl-reverse", dgl(nil, linkpred.ExcludeReverseEdges), linkload.Items{EdgeIDs: eids}},
		{"dgl-global", dgl(linkpred.GlobalUniform{K: 1, ExcludeSelfLoops: true}, linkpred.ExcludeSelfEdges), linkload.Items{EdgeIDs: eids}},
		{"pyg-binary", pygOptions(req, linkpred.PyGBinaryMode, 1.5), linkload.Items{Pairs: pairs}},
		{"pyg-triplet", pygOptions(req, linkpred.PyGTripletMode, 2), linkload.Items{Pairs: pairs}},
		{"pyg-disjoint", pygOptions(disjoint, linkpred.PyGBinaryMode, 1), linkload.Items{Pairs: pairs}},
		{"pyg-temporal", pygOptions(temporal, linkpred.PyGNone, 0), linkload.Items{Pairs: pairs, Times: times}},
	}
}

// TestDistTypedEdgeLoaderEqualsSingleProcess: the edge loaders of a group
// of ranks over a replicated typed graph give each rank the single-process
// typed edge loader's batches r, r+size, ..., padded: the same seed edges
// grouped by relation, negatives per type, samples, node and edge data and
// typed view, bit for bit.
func TestDistTypedEdgeLoaderEqualsSingleProcess(t *testing.T) {
	for _, tc := range typedLinkCases() {
		withData := func(lopt pipeline.Options) pipeline.Options {
			lopt.EdgeFeatureNames = []string{"w"}
			return lopt
		}
		requireTypedShares(t, tc.name,
			func(g *core.Graph, lopt pipeline.Options) (*core.Loader, error) {
				return g.OpenEdgeLoader(tc.items, tc.opt, withData(lopt), nil)
			},
			func(g *core.Graph, c comm.Comm, lopt pipeline.Options) (*core.Loader, error) {
				return OpenEdgeLoader(g, c, tc.items, tc.opt, withData(lopt), mem.NewChecked(mem.Heap{}))
			})
	}
}

// A typed edge loader refuses by name, before any exchange, what the
// single-process one refuses (pairs of two edge types).
func TestTypedEdgeLoaderRefuses(t *testing.T) {
	src, dst, ty := typedCOO()
	h, err := comm.NewHost(0, 2, comm.NewLocal(2).Exchanger(0))
	require.NoError(t, err)
	g := newTypedGraph(t, partition.Options{Method: partition.Range, NumPatches: 2})
	mixed := linkpred.Pairs{Src: []int64{src[0], src[ty.EdgeOffsets[1]]}, Dst: []int64{dst[0], dst[ty.EdgeOffsets[1]]}}
	opt := linkload.Options{Request: sample.Request{RelationFanouts: [][]int{{2, 3, 1}}, Seed: 1}, Mode: linkload.PyG}
	_, err = OpenEdgeLoader(g, h, linkload.Items{Pairs: mixed}, opt, linkLoader(), nil)
	require.ErrorContains(t, err, "not of one edge type")
	_, err = g.OpenEdgeLoader(linkload.Items{Pairs: mixed}, opt, linkLoader(), nil)
	require.ErrorContains(t, err, "not of one edge type", "refused as in one process")
}

package core

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// TestOpenTypedDataset opens hetero-tiny with and without renumbering:
// per-type node data keeps its rows in type order, global node data is
// renumbered as usual, and loaders refuse to gather per-type data.
func TestOpenTypedDataset(t *testing.T) {
	ds, err := gen.Build(gen.Presets()["hetero-tiny"])
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, ds))
	for name, popt := range map[string]partition.Options{
		"range1":  {NumPatches: 1},
		"random3": {Method: partition.Random, NumPatches: 3, Seed: 5},
	} {
		t.Run(name, func(t *testing.T) {
			g, err := Open(dir, popt, graph.COOOptions{}, dataset.OpenOptions{})
			require.NoError(t, err)
			defer g.Close()
			nt, nr := g.NumTypes()
			assert.Equal(t, [2]int{4, 7}, [2]int{nt, nr}, "types set on open")
			assert.Equal(t, mem.Int64s(ds.NodeData["time"].Data), g.typed.nodeTime, "node times set on open")
			assert.Equal(t, mem.Int64s(ds.EdgeData["time"].Data), g.typed.edgeTime, "edge times set on open")
			names, err := g.NodeDataNames()
			require.NoError(t, err)
			for _, want := range []string{"author/feat", "paper/feat", "paper/label", "paper/train_mask", "label", "time", "train_mask"} {
				assert.Contains(t, names, want)
			}
			for _, key := range []string{"paper/feat", "author/feat", "paper/label", "label", "time"} {
				got, err := g.NodeData(key, nil)
				require.NoError(t, err, key)
				assert.Equal(t, ds.NodeData[key].Shape, got.Shape, key)
				assert.Equal(t, ds.NodeData[key].Data, got.Data, key)
			}
			// The row check: per-type data needs its type's row count.
			bad := mem.Tensor{DType: mem.Int8, Shape: []int64{3}, Data: make([]byte, 3)}
			require.ErrorContains(t, g.SetNodeData("paper/x", bad, nil), `want one row per node (947), or one per node of type "paper" (360)`)
			paper := ds.NodeData["paper/label"]
			require.NoError(t, g.SetNodeData("paper/copy", paper, nil))
			got, err := g.NodeData("paper/copy", nil)
			require.NoError(t, err)
			assert.Equal(t, paper.Data, got.Data)
			require.ErrorContains(t, g.store.Gather("paper/feat", make([]byte, 64), []int64{0}, 1), "cannot be gathered by node id")
		})
	}
}

// TestLoaderGathersPerTypeData: a loader of a typed graph takes per-type
// node data ("<type>/<name>") among its feature and label names and
// gathers, per batch, the rows of the type-local ids of the batch's nodes
// (labels: seeds) of that type, in batch order.
func TestLoaderGathersPerTypeData(t *testing.T) {
	// Types: a = [0, 2), b = [2, 5); one relation b -> a.
	g0, err := graph.FromCOO([]int64{2, 3, 4, 4}, []int64{0, 1, 1, 0}, nil, graph.COOOptions{NumNodes: 5})
	require.NoError(t, err)
	g, err := New(g0, partition.Options{Method: partition.Random, NumPatches: 2, Seed: 1})
	require.NoError(t, err)
	defer g.Close()
	require.NoError(t, setNamed(g, []fileformat.NodeType{{Name: "a", NumNodes: 2}, {Name: "b", NumNodes: 3}}, []fileformat.EdgeType{{Src: "b", Rel: "r", Dst: "a", NumEdges: 4}}))
	x := []int64{70, 80, 90}
	require.NoError(t, g.SetNodeData("b/x", mem.Tensor{DType: mem.Int64, Shape: []int64{3}, Data: mem.Bytes(x)}, nil))
	seeds := []int64{0, 3, 1, 4, 2}
	l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{-1}}, pipeline.Options{BatchSize: 2, FeatureNames: []string{"b/x"}, Threads: 1}, nil)
	require.NoError(t, err)
	defer l.Close()
	lab, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{-1}}, pipeline.Options{BatchSize: 2, LabelNames: []string{"b/x"}, Threads: 1}, nil)
	require.NoError(t, err)
	defer lab.Close()
	ofB := func(ids []int64) []int64 {
		out := []int64{}
		for _, v := range ids {
			if v >= 2 {
				out = append(out, x[v-2])
			}
		}
		return out
	}
	// A hot tier holds node-indexed rows only: the per-type ones go past it.
	_, err = l.SetCache(context.Background(), CacheOptions{Policy: CacheByInDegree, Size: cache.Size{Fraction: 0.5}})
	require.NoError(t, err)
	batches := 0
	for _, c := range []struct {
		l      *Loader
		labels bool
	}{{l, false}, {lab, true}} {
		require.NoError(t, c.l.Start(0))
		for {
			b, err := c.l.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			ids := mem.Int64s(b.Nodes.Data)
			if c.labels {
				ids = mem.Int64s(b.Seeds.Data)
			}
			got := b.NodeData["b/x"]
			want := ofB(ids)
			assert.Equal(t, []int64{int64(len(want))}, got.Shape)
			assert.Equal(t, want, append([]int64{}, mem.Int64s(got.Data)...), "nodes %v", ids)
			b.Release()
			batches++
		}
	}
	assert.Equal(t, 6, batches)
}

// TestPerTypeNodeDataOnTypedGraph: on a typed graph built without a
// dataset (types set, then named), "<type>/<name>" data is accepted with
// the row count of the node type it names, and only then.
func TestPerTypeNodeDataOnTypedGraph(t *testing.T) {
	// Types: 2 nodes, then 3; one relation 1 -> 0 type-wise.
	g0, err := graph.FromCOO([]int64{2, 3, 4}, []int64{0, 1, 1}, nil, graph.COOOptions{NumNodes: 5})
	require.NoError(t, err)
	g, err := New(g0, partition.Options{Method: partition.Random, NumPatches: 2, Seed: 1})
	require.NoError(t, err)
	defer g.Close()
	three := mem.Tensor{DType: mem.Int64, Shape: []int64{3}, Data: mem.Bytes([]int64{7, 8, 9})}
	require.ErrorContains(t, g.SetNodeData("b/x", three, nil), "want one row per node (5)", "untyped: no per-type data")
	require.NoError(t, setNamed(g, []fileformat.NodeType{{Name: "a", NumNodes: 2}, {Name: "b", NumNodes: 3}}, []fileformat.EdgeType{{Src: "b", Rel: "r", Dst: "a", NumEdges: 3}}))
	require.NoError(t, g.SetNodeData("b/x", three, nil))
	got, err := g.NodeData("b/x", nil)
	require.NoError(t, err)
	assert.Equal(t, three.Data, got.Data, "kept in type order")
	require.ErrorContains(t, g.SetNodeData("x", three, nil), "want one row per node (5)")
	four := mem.Tensor{DType: mem.Int8, Shape: []int64{4}, Data: make([]byte, 4)}
	require.ErrorContains(t, g.SetNodeData("b/y", four, nil), `or one per node of type "b" (3)`)
	require.ErrorContains(t, g.SetNodeData("c/y", four, nil), `one per node of its type (node types "a", "b")`)
}

// TestEqualSizedTypesServeTheirOwnData: two node types of the same node
// count, each with per-type data of the same name: the type is the one the
// name names (never inferred from the row count), and a loader gathers
// each type's rows for the batch's nodes of that type.
func TestEqualSizedTypesServeTheirOwnData(t *testing.T) {
	// Types: a = [0, 3), b = [3, 6); relations b -> a (edges 0..2), a -> b (3..5).
	g0, err := graph.FromCOO([]int64{3, 4, 5, 0, 1, 2}, []int64{0, 1, 2, 3, 4, 5}, nil, graph.COOOptions{NumNodes: 6})
	require.NoError(t, err)
	for _, popt := range []partition.Options{{NumPatches: 1}, {Method: partition.Random, NumPatches: 2, Seed: 3}} {
		g, err := New(g0, popt)
		require.NoError(t, err)
		require.NoError(t, setNamed(g, []fileformat.NodeType{{Name: "a", NumNodes: 3}, {Name: "b", NumNodes: 3}},
			[]fileformat.EdgeType{{Src: "b", Rel: "ba", Dst: "a", NumEdges: 3}, {Src: "a", Rel: "ab", Dst: "b", NumEdges: 3}}))
		xa, xb := []int64{10, 11, 12}, []int64{20, 21, 22}
		require.NoError(t, g.SetNodeData("a/x", mem.Tensor{DType: mem.Int64, Shape: []int64{3}, Data: mem.Bytes(xa)}, nil))
		require.NoError(t, g.SetNodeData("b/x", mem.Tensor{DType: mem.Int64, Shape: []int64{3}, Data: mem.Bytes(xb)}, nil))
		assert.Equal(t, map[string]int{"a/x": 0, "b/x": 1}, g.nodeDataTypes())
		l, err := g.OpenLoader([]int64{0, 4, 2, 3, 5, 1}, sample.Request{Fanouts: []int{-1}},
			pipeline.Options{BatchSize: 2, FeatureNames: []string{"a/x", "b/x"}, Threads: 1}, nil)
		require.NoError(t, err)
		require.NoError(t, l.Start(0))
		batches := 0
		for {
			b, err := l.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			wantA, wantB := []int64{}, []int64{}
			for _, v := range mem.Int64s(b.Nodes.Data) {
				if v < 3 {
					wantA = append(wantA, xa[v])
				} else {
					wantB = append(wantB, xb[v-3])
				}
			}
			assert.Equal(t, wantA, append([]int64{}, mem.Int64s(b.NodeData["a/x"].Data)...))
			assert.Equal(t, wantB, append([]int64{}, mem.Int64s(b.NodeData["b/x"].Data)...))
			b.Release()
			batches++
		}
		assert.Equal(t, 3, batches)
		l.Close()
		g.Close()
	}
}

// setNamed sets types with names on g, as a dataset's graphferry.json
// gives them.
func setNamed(g *Graph, nodes []fileformat.NodeType, edges []fileformat.EdgeType) error {
	ty, err := fileformat.ParseTypes(nodes, edges)
	if err != nil {
		return err
	}
	return SetDatasetTypes(g, ty)
}

// TestTypeNames: types set without names are named by their index; named
// types replace them until per-type data is held (it is keyed by the
// names), and are checked against the graph like offsets.
func TestTypeNames(t *testing.T) {
	g0, err := graph.FromCOO([]int64{2, 3, 4}, []int64{0, 1, 1}, nil, graph.COOOptions{NumNodes: 5})
	require.NoError(t, err)
	g, err := New(g0, partition.Options{NumPatches: 1})
	require.NoError(t, err)
	defer g.Close()
	assert.Nil(t, g.NamedTypes())
	require.NoError(t, g.SetTypes(graph.Types{NodeOffsets: []int64{0, 2, 5}, EdgeOffsets: []int64{0, 3}, RelSrc: []int32{1}, RelDst: []int32{0}}))
	named := g.NamedTypes()
	require.NotNil(t, named)
	assert.Equal(t, []fileformat.NodeType{{Name: "0", NumNodes: 2}, {Name: "1", NumNodes: 3}}, named.NodeTypes)
	assert.Equal(t, []fileformat.EdgeType{{Src: "1", Rel: "0", Dst: "0", NumEdges: 3}}, named.EdgeTypes)
	a, b := fileformat.NodeType{Name: "a", NumNodes: 2}, fileformat.NodeType{Name: "b", NumNodes: 3}
	require.ErrorContains(t, setNamed(g, []fileformat.NodeType{a, {Name: "b", NumNodes: 4}}, []fileformat.EdgeType{{Src: "b", Rel: "r", Dst: "a", NumEdges: 3}}),
		"node_offsets[2] = 6, want the number of nodes (5)")
	require.ErrorContains(t, setNamed(g, []fileformat.NodeType{a, b}, []fileformat.EdgeType{{Src: "a", Rel: "r", Dst: "b", NumEdges: 3}}),
		"but the relation's destination type is 1")
	assert.Equal(t, "1", g.NamedTypes().NodeTypes[1].Name, "a refused call keeps the names")
	require.NoError(t, setNamed(g, []fileformat.NodeType{a, b}, []fileformat.EdgeType{{Src: "b", Rel: "r", Dst: "a", NumEdges: 3}}))
	assert.Equal(t, "b", g.NamedTypes().NodeTypes[1].Name)
	require.NoError(t, g.SetNodeData("1/x", mem.Tensor{DType: mem.Int8, Shape: []int64{5}, Data: make([]byte, 5)}, nil), "no type named 1 now: global data")
	require.NoError(t, g.SetNodeData("b/x", mem.Tensor{DType: mem.Int8, Shape: []int64{3}, Data: make([]byte, 3)}, nil))
	err = setNamed(g, []fileformat.NodeType{{Name: "c", NumNodes: 2}, {Name: "d", NumNodes: 3}}, []fileformat.EdgeType{{Src: "d", Rel: "r", Dst: "c", NumEdges: 3}})
	require.ErrorIs(t, err, errs.ErrState)
	require.ErrorContains(t, err, `per-type node data "b/x" is held`)
	require.ErrorContains(t, g.SetTypes(graph.Types{NodeOffsets: []int64{0, 2, 5}, EdgeOffsets: []int64{0, 3}, RelSrc: []int32{1}, RelDst: []int32{0}}), `per-type node data "b/x" is held`)
	assert.Equal(t, "b", g.NamedTypes().NodeTypes[1].Name, "a refused call keeps the names")
}

package rankpart

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// typedDataset writes and opens a typed dataset: node types a (40 nodes)
// and b (25), relations (a, ab, b), (b, ba, a) and (a, aa, a) of random
// edges given relation by relation, per-type features of two widths,
// labels and train masks on a, and a global int64 column.
func typedDataset(t *testing.T) *dataset.Dataset {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	const na, nb = 40, 25
	var src, dst []int64
	rel := func(sOff, sN, dOff, dN int64, m int) int64 {
		for range m {
			src = append(src, sOff+r.Int64N(sN))
			dst = append(dst, dOff+r.Int64N(dN))
		}
		return int64(m)
	}
	ab := rel(0, na, na, nb, 90)
	ba := rel(na, nb, 0, na, 70)
	aa := rel(0, na, 0, na, 110)
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: na + nb})
	require.NoError(t, err)
	rows := func(n, w int64, base float32) mem.Tensor {
		v := make([]float32, n*w)
		for i := range v {
			v[i] = base + float32(i)
		}
		return mem.Tensor{DType: mem.Float32, Shape: []int64{n, w}, Data: mem.Bytes(v)}
	}
	label, train, glob := make([]int64, na), make([]byte, na), make([]int64, na+nb)
	for i := range label {
		label[i] = int64(i % 3)
		if i%2 == 0 {
			train[i] = 1
		}
	}
	for i := range glob {
		glob[i] = int64(1000 + i)
	}
	d := &dataset.Dataset{
		Meta: dataset.Meta{Name: "typed", NumClasses: 3,
			NodeTypes: []fileformat.NodeType{{Name: "a", NumNodes: na}, {Name: "b", NumNodes: nb}},
			EdgeTypes: []fileformat.EdgeType{{Src: "a", Rel: "ab", Dst: "b", NumEdges: ab}, {Src: "b", Rel: "ba", Dst: "a", NumEdges: ba},
				{Src: "a", Rel: "aa", Dst: "a", NumEdges: aa}}},
		Graph: g,
		NodeData: map[string]mem.Tensor{
			"a/feat":       rows(na, 3, 0),
			"b/feat":       rows(nb, 2, 5000),
			"a/label":      {DType: mem.Int64, Shape: []int64{na}, Data: mem.Bytes(label)},
			"a/train_mask": {DType: mem.Uint8, Shape: []int64{na}, Data: train},
			"year":         {DType: mem.Int64, Shape: []int64{na + nb}, Data: mem.Bytes(glob)},
		},
	}
	dir := filepath.Join(t.TempDir(), "typed")
	require.NoError(t, dataset.Write(dir, d))
	ds, err := dataset.Open(dir)
	require.NoError(t, err)
	t.Cleanup(func() { ds.Close() })
	return ds
}

// TestPartitionTyped partitions a typed dataset in every layout and checks
// every rank's part: the types recorded, the untyped folder whose id maps
// give every node's type and edge's relation, and every row of the
// per-type node data (the owned rows, or every held node's for
// self-reliant, in local order; masks on owned rows only).
func TestPartitionTyped(t *testing.T) {
	src := typedDataset(t)
	ty, err := src.Types()
	require.NoError(t, err)
	for _, layout := range []Layout{LayoutDSP, LayoutSelfReliant, LayoutHybrid} {
		dst := t.TempDir()
		meta, err := Partition(src, dst, PartitionOptions{Method: partition.Random, Parts: 3, Seed: 7, Layout: layout, Hops: 2})
		require.NoError(t, err, layout)
		require.Equal(t, ty.NodeTypes, meta.NodeTypes)
		require.Equal(t, ty.EdgeTypes, meta.EdgeTypes)
		train := int64(0)
		for r := range 3 {
			p, err := OpenPart(dst, r, dataset.OpenOptions{VerifyChecksums: true})
			require.NoError(t, err, "%v rank %d", layout, r)
			require.Equal(t, ty, p.Types)
			require.Empty(t, p.Data.Meta.NodeTypes, "the folder is untyped")
			train += p.Info.NumTrain
			rows := p.GlobalIDs[:p.Info.NumOwned]
			if layout == LayoutSelfReliant {
				rows = p.GlobalIDs
			}
			require.Len(t, p.NodeArrays, 4)
			for key, a := range p.NodeArrays {
				nt, name, ok := ty.SplitName(key)
				require.True(t, ok, key)
				want := src.NodeData[key]
				rb := want.RowBytes()
				k := 0
				for i, v := range rows {
					if typeOf(ty.NodeOffsets, v) != nt {
						continue
					}
					row := want.Data[(v-ty.NodeOffsets[nt])*int64(rb):][:rb]
					if name == dataset.TrainMaskKey && int64(i) >= p.Info.NumOwned {
						row = []byte{0} // a seed on its owner only
					}
					require.True(t, bytes.Equal(row, a.Data[k*rb:(k+1)*rb]), "%v rank %d %s row %d", layout, r, key, k)
					k++
				}
				require.Equal(t, int64(k), a.Shape[0])
				require.Equal(t, p.TypeRows[nt], a.Shape[0])
			}
			// The global column is kept as for an untyped source.
			year := p.Data.NodeData["year"]
			for l, v := range p.GlobalIDs {
				require.Equal(t, 1000+v, mem.Int64s(year.Data)[l])
			}
			require.NoError(t, p.Close())
		}
		require.Equal(t, int64(20), train, "%v: every train seed on one rank", layout)
	}
}

// TestOpenPartTypedMismatch: a typed partition whose partition.json
// disagrees with its folders gives errors naming the problem (ErrTypes).
func TestOpenPartTypedMismatch(t *testing.T) {
	src := typedDataset(t)
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"counts", func(m map[string]any) {
			nt := m["node_types"].([]any)
			nt[0].(map[string]any)["num_nodes"] = 39.0
			nt[1].(map[string]any)["num_nodes"] = 26.0
		}, "local node"},
		{"relation swapped", func(m map[string]any) {
			et := m["edge_types"].([]any)
			et[0].(map[string]any)["dst"] = "a"
		}, "goes from node"},
		{"total", func(m map[string]any) {
			m["node_types"].([]any)[0].(map[string]any)["num_nodes"] = 41.0
		}, "node_types count 66 nodes"},
		{"unknown type", func(m map[string]any) {
			ranks := m["ranks"].([]any)
			ranks[1].(map[string]any)["node_data"].([]any)[0].(map[string]any)["node_type"] = "c"
		}, `node_type = "c" is not a node type`},
		{"rows", func(m map[string]any) {
			ranks := m["ranks"].([]any)
			a := ranks[1].(map[string]any)["node_data"].([]any)[0].(map[string]any)
			a["shape"] = []any{1.0, 3.0}
		}, "must start with"},
		{"untyped", func(m map[string]any) {
			delete(m, "node_types")
			delete(m, "edge_types")
		}, "no node_types"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := t.TempDir()
			_, err := Partition(src, dst, PartitionOptions{Method: partition.Range, Parts: 2, Layout: LayoutDSP})
			require.NoError(t, err)
			p, err := OpenPart(dst, 0, dataset.OpenOptions{}) // owns no node of type b
			require.NoError(t, err)
			require.Equal(t, []int64{0, 2}, p.NodeArrays["b/feat"].Shape)
			require.NoError(t, p.Close())
			editPartMeta(t, dst, c.edit)
			_, err = OpenPart(dst, 1, dataset.OpenOptions{})
			require.ErrorIs(t, err, ErrTypes)
			require.ErrorContains(t, err, c.want)
		})
	}
}

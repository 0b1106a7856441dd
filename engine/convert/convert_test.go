package convert

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/internal/datatest"
	"github.com/graphferry/graphferry/engine/mem"
)

// writeNPYDir writes arrays (file name -> tensor) and meta.json into a new
// temporary directory.
func writeNPYDir(t *testing.T, meta string, arrays map[string]mem.Tensor) string {
	t.Helper()
	dir := t.TempDir()
	for name, a := range arrays {
		require.NoError(t, fileformat.WriteNPY(filepath.Join(dir, name), a))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "meta.json"), []byte(meta), 0o644))
	return dir
}

func i64(v ...int64) mem.Tensor {
	return mem.Tensor{DType: mem.Int64, Shape: []int64{int64(len(v))}, Data: mem.Bytes(v)}
}

func TestConvertNPYSynthetic(t *testing.T) {
	// 4 nodes, in-neighbour CSR: 0 <- {1, 2}, 1 <- {0}, 2 <- {}, 3 <- {0, 1, 2}.
	feat := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	arrays := map[string]mem.Tensor{
		"indptr.npy":    i64(0, 2, 3, 3, 6),
		"indices.npy":   i64(1, 2, 0, 0, 1, 2),
		"label.npy":     {DType: mem.Int32, Shape: []int64{4}, Data: mem.Bytes([]int32{1, 0, -1, 4})},
		"train_idx.npy": i64(0, 1),
		"test_idx.npy":  i64(3),
		"feat.npy":      {DType: mem.Float32, Shape: []int64{4, 2}, Data: mem.Bytes(feat)},
		// [S=2, N=4] C-order split masks.
		"split_val_masks.npy": {DType: mem.Bool, Shape: []int64{2, 4}, Data: []byte{1, 0, 0, 1, 0, 1, 1, 0}},
	}
	meta := `{"name": "Synth", "num_nodes": 4, "num_edges": 6, "license": "none", "source": {"repository": "x/y"}}`
	src := writeNPYDir(t, meta, arrays)
	// A fortran-order [2, 4] bool array: data is laid out as [4, 2].
	require.NoError(t, os.WriteFile(filepath.Join(src, "split_train_masks.npy"),
		datatest.NPYImage(1, "{'descr': '|b1', 'fortran_order': True, 'shape': (2, 4), }", []byte{1, 0, 1, 1, 0, 0, 0, 1}), 0o644))

	dst := filepath.Join(t.TempDir(), "out")
	require.NoError(t, ConvertNPY(src, dst))
	d, err := dataset.Open(dst)
	require.NoError(t, err)
	defer d.Close()

	assert.Equal(t, "Synth", d.Meta.Name)
	assert.Equal(t, int64(5), d.Meta.NumClasses, "max label + 1 when meta.json has none")
	assert.JSONEq(t, meta, string(d.Meta.Source), "the whole meta.json is kept")
	assert.Equal(t, []int64{0, 2, 3, 3, 6}, d.Graph.Indptr)
	assert.Equal(t, []int64{1, 2, 0, 0, 1, 2}, datatest.Sources(d.Graph))
	assert.Nil(t, d.Graph.EdgeIDs, "edge ids are CSC positions")
	assert.Equal(t, mem.Bytes([]int64{1, 0, -1, 4}), d.NodeData[dataset.LabelKey].Data)
	assert.Equal(t, []byte{1, 1, 0, 0}, d.NodeData[dataset.TrainMaskKey].Data)
	assert.Equal(t, []byte{0, 0, 0, 0}, d.NodeData[dataset.ValMaskKey].Data, "no val_idx.npy")
	assert.Equal(t, []byte{0, 0, 0, 1}, d.NodeData[dataset.TestMaskKey].Data)
	assert.Equal(t, mem.Tensor{DType: mem.Float32, Shape: []int64{4, 2}, Data: mem.Bytes(feat)}, d.NodeData[dataset.FeatKey])
	assert.Equal(t, mem.Tensor{DType: mem.Uint8, Shape: []int64{4, 2}, Data: []byte{1, 0, 1, 1, 0, 0, 0, 1}}, d.NodeData["split_train_mask"])
	assert.Equal(t, mem.Tensor{DType: mem.Uint8, Shape: []int64{4, 2}, Data: []byte{1, 0, 0, 1, 0, 1, 1, 0}}, d.NodeData["split_val_mask"])
}

func TestConvertNPYErrors(t *testing.T) {
	base := func() map[string]mem.Tensor {
		return map[string]mem.Tensor{"indptr.npy": i64(0, 1, 2), "indices.npy": i64(1, 0)}
	}
	tests := []struct {
		name   string
		meta   string
		modify func(map[string]mem.Tensor)
		msg    string
	}{
		{"num_nodes", `{"num_nodes": 3}`, nil, "meta.json num_nodes=3 but indptr.npy has 3 entries (N+1)"},
		{"num_edges", `{"num_edges": 1}`, nil, "meta.json num_edges=1 but indices.npy has 2 entries"},
		{"bad csr", `{}`, func(m map[string]mem.Tensor) { m["indices.npy"] = i64(1, 2) }, "CSC indices[1]=2 is out of range [0, 2)"},
		{"bad idx", `{}`, func(m map[string]mem.Tensor) { m["val_idx.npy"] = i64(0, 5) }, "val_idx.npy[1]=5 is out of range [0, 2)"},
		{"label length", `{}`, func(m map[string]mem.Tensor) { m["label.npy"] = i64(0) }, "label.npy has 1 entries, want N=2"},
		{"feat rows", `{}`, func(m map[string]mem.Tensor) {
			m["feat.npy"] = mem.Tensor{DType: mem.Float32, Shape: []int64{3, 1}, Data: make([]byte, 12)}
		}, "feat.npy has shape [3 1], want [2, F]"},
		{"indptr dtype", `{}`, func(m map[string]mem.Tensor) {
			m["indptr.npy"] = mem.Tensor{DType: mem.Float32, Shape: []int64{3}, Data: make([]byte, 12)}
		}, "indptr.npy: dtype float32, want int64 or int32"},
		{"missing indices", `{}`, func(m map[string]mem.Tensor) { delete(m, "indices.npy") }, "indices.npy"},
		{"bad meta", `{`, nil, "meta.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arrays := base()
			if tc.modify != nil {
				tc.modify(arrays)
			}
			src := writeNPYDir(t, tc.meta, arrays)
			err := ConvertNPY(src, filepath.Join(t.TempDir(), "out"))
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// datasetsDir returns the folder of the shared .npy datasets (README:
// "Test data"): $GRAPHFERRY_DATASETS when set, else the first
// shared/datasets folder beside the checkout or beside one of the folders
// above it (the layout of a workspace holding several checkouts), or an
// error saying where it looked.
func datasetsDir() (string, error) {
	if dir := os.Getenv("GRAPHFERRY_DATASETS"); dir != "" {
		return dir, nil
	}
	root, err := filepath.Abs("../..") // go test runs in engine/convert
	if err != nil {
		return "", err
	}
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared", "datasets")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("no shared/datasets beside %s or above it, and GRAPHFERRY_DATASETS is not set", root)
		}
	}
}

// sharedDataset returns the path of dataset name in the shared datasets
// folder, or skips the test saying why.
func sharedDataset(t *testing.T, name string) string {
	t.Helper()
	root, err := datasetsDir()
	if err != nil {
		t.Skipf("dataset %s not available: %v", name, err)
	}
	dir := filepath.Join(root, name)
	if _, err := os.Stat(filepath.Join(dir, "meta.json")); err != nil {
		t.Skipf("dataset %s not available (set GRAPHFERRY_DATASETS to the folder holding it): %v", name, err)
	}
	return dir
}

// checkConverted converts a shared dataset and checks it against the
// original arrays; it returns the opened dataset.
func checkConverted(t *testing.T, name string, n, e int64, featShape []int64, splits [3]int) *dataset.Dataset {
	t.Helper()
	src := sharedDataset(t, name)
	dst := filepath.Join(t.TempDir(), name)
	require.NoError(t, ConvertNPY(src, dst))
	d, err := dataset.Open(dst)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })

	assert.Equal(t, n, d.Meta.NumNodes)
	assert.Equal(t, e, d.Meta.NumEdges)
	require.Equal(t, n, d.Graph.NumNodes)
	require.Equal(t, e, d.Graph.NumEdges())
	// The graph is the original CSC exactly, edge ids = positions.
	indptr, err := fileformat.ReadNPY(filepath.Join(src, "indptr.npy"))
	require.NoError(t, err)
	defer indptr.Close()
	indices, err := fileformat.ReadNPY(filepath.Join(src, "indices.npy"))
	require.NoError(t, err)
	defer indices.Close()
	require.True(t, slices.Equal(mem.Int64s(indptr.Data), d.Graph.Indptr), "indptr")
	require.True(t, slices.Equal(mem.Int64s(indices.Data), datatest.Sources(d.Graph)), "indices")
	for p := range e {
		if d.Graph.EdgeID(p) != p {
			t.Fatalf("edge id at %d is %d", p, d.Graph.EdgeID(p))
		}
	}

	var meta struct {
		Name       string `json:"name"`
		NumClasses int64  `json:"num_classes"`
	}
	raw, err := os.ReadFile(filepath.Join(src, "meta.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &meta))
	assert.Equal(t, meta.Name, d.Meta.Name)
	assert.Equal(t, meta.NumClasses, d.Meta.NumClasses)
	assert.JSONEq(t, string(raw), string(d.Meta.Source))

	label, err := fileformat.ReadNPY(filepath.Join(src, "label.npy"))
	require.NoError(t, err)
	defer label.Close()
	assert.Equal(t, label.Data, d.NodeData[dataset.LabelKey].Data)
	for i, key := range []string{dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
		count := 0
		for _, b := range d.NodeData[key].Data {
			count += int(b)
		}
		assert.Equal(t, splits[i], count, key)
	}

	if featShape == nil {
		assert.Nil(t, d.Meta.Feature)
		assert.NotContains(t, d.NodeData, dataset.FeatKey)
		raw, err := os.ReadFile(filepath.Join(dst, dataset.MetaFile))
		require.NoError(t, err)
		assert.Contains(t, string(raw), `"feature": null`)
	} else {
		feat, err := fileformat.ReadNPY(filepath.Join(src, "feat.npy"))
		require.NoError(t, err)
		defer feat.Close()
		got := d.NodeData[dataset.FeatKey]
		assert.Equal(t, featShape, got.Shape)
		assert.Equal(t, mem.Float32, got.DType)
		require.True(t, slices.Equal(feat.Data, got.Data), "features")
	}
	return d
}

func TestConvertCora(t *testing.T) {
	checkConverted(t, "cora", 2708, 10556, []int64{2708, 1433}, [3]int{140, 500, 1000})
}

// The Cora the repository ships (examples/data/cora: the demo's dataset, and
// the source of the Python tests' Cora on a clone without the shared
// datasets) opens as Cora with the Planetoid split; where the original .npy
// Cora is available, converting it gives the shipped dataset exactly.
func TestShippedCora(t *testing.T) {
	d, err := dataset.Open(filepath.Join("..", "..", "examples", "data", "cora"))
	require.NoError(t, err)
	defer d.Close()
	require.Equal(t, int64(2708), d.Graph.NumNodes)
	require.Equal(t, int64(10556), d.Graph.NumEdges())
	require.Equal(t, []int64{2708, 1433}, d.NodeData[dataset.FeatKey].Shape)
	require.True(t, d.HasBlockSums(), "the shipped graphferry.json records feat.bin's block sums")
	for i, key := range []string{dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
		count := 0
		for _, b := range d.NodeData[key].Data {
			count += int(b)
		}
		assert.Equal(t, [3]int{140, 500, 1000}[i], count, key)
	}
	for v, l := range mem.Int64s(d.NodeData[dataset.LabelKey].Data) {
		require.True(t, l >= 0 && l < 7, "label[%d] = %d", v, l)
	}

	t.Run("same as the converted original", func(t *testing.T) {
		want := checkConverted(t, "cora", 2708, 10556, []int64{2708, 1433}, [3]int{140, 500, 1000})
		require.True(t, slices.Equal(want.Graph.Indptr, d.Graph.Indptr), "indptr")
		require.True(t, slices.Equal(datatest.Sources(want.Graph), datatest.Sources(d.Graph)), "indices")
		for p := range d.Graph.NumEdges() {
			if d.Graph.EdgeID(p) != want.Graph.EdgeID(p) {
				t.Fatalf("edge id at %d is %d, converted %d", p, d.Graph.EdgeID(p), want.Graph.EdgeID(p))
			}
		}
		require.Equal(t, len(want.NodeData), len(d.NodeData))
		for key, w := range want.NodeData {
			got, ok := d.NodeData[key]
			require.True(t, ok, key)
			require.Equal(t, w.DType, got.DType, key)
			require.Equal(t, w.Shape, got.Shape, key)
			require.True(t, slices.Equal(w.Data, got.Data), "%s differs from the converted original", key)
		}
	})
}

func TestConvertCiteseer(t *testing.T) {
	d := checkConverted(t, "citeseer", 3327, 9104, []int64{3327, 3703}, [3]int{120, 500, 1000})
	unlabelled := 0
	for _, l := range mem.Int64s(d.NodeData[dataset.LabelKey].Data) {
		if l == -1 {
			unlabelled++
		}
	}
	assert.Equal(t, 15, unlabelled)
}

func TestConvertPubmedNoFeatures(t *testing.T) {
	checkConverted(t, "pubmed", 19717, 88648, nil, [3]int{60, 500, 1000})
}

func TestConvertSquirrelSplitMasks(t *testing.T) {
	d := checkConverted(t, "squirrel", 5201, 396706, []int64{5201, 2089}, [3]int{2496, 1664, 1041})
	// Split 0 of the [10, N] masks is the *_idx split.
	for _, split := range []struct{ key, mask string }{{dataset.TrainMaskKey, "split_train_mask"}, {dataset.ValMaskKey, "split_val_mask"}, {dataset.TestMaskKey, "split_test_mask"}} {
		m := d.NodeData[split.mask]
		require.Equal(t, []int64{5201, 10}, m.Shape, split.mask)
		for v := range int64(5201) {
			if m.Data[v*10] != d.NodeData[split.key].Data[v] {
				t.Fatalf("%s[%d][0] differs from %s", split.mask, v, split.key)
			}
		}
	}
}

func TestConvertNoDenseFeatures(t *testing.T) {
	// facebook_page has only sparse features, github none: both convert
	// without a feature matrix.
	for _, name := range []string{"facebook_page", "github"} {
		t.Run(name, func(t *testing.T) {
			src := sharedDataset(t, name)
			var meta struct{ NumNodes, NumEdges int64 }
			raw, err := os.ReadFile(filepath.Join(src, "meta.json"))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(raw, &struct {
				N *int64 `json:"num_nodes"`
				E *int64 `json:"num_edges"`
			}{&meta.NumNodes, &meta.NumEdges}))
			dst := filepath.Join(t.TempDir(), name)
			require.NoError(t, ConvertNPY(src, dst))
			d, err := dataset.Open(dst)
			require.NoError(t, err)
			defer d.Close()
			assert.Equal(t, meta.NumNodes, d.Graph.NumNodes)
			assert.Equal(t, meta.NumEdges, d.Graph.NumEdges())
			assert.Nil(t, d.Meta.Feature)
		})
	}
}

// TestConvertNPYContext: a conversion whose context is done stops with its
// error and leaves nothing in dst (written into a temporary folder there,
// removed); an existing dataset in dst stays whole.
func TestConvertNPYContext(t *testing.T) {
	src := writeNPYDir(t, `{"name": "Synth"}`, map[string]mem.Tensor{
		"indptr.npy":  i64(0, 2, 3, 3, 6),
		"indices.npy": i64(1, 2, 0, 0, 1, 2),
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dst := filepath.Join(t.TempDir(), "out")
	require.ErrorIs(t, ConvertNPYContext(ctx, src, dst), context.Canceled)
	_, err := os.Stat(dst)
	require.ErrorIs(t, err, os.ErrNotExist)

	require.NoError(t, ConvertNPY(src, dst))
	before, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.ErrorIs(t, ConvertNPYContext(ctx, src, dst), context.Canceled)
	after, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.Equal(t, len(before), len(after), "no temporary folder left")
	d, err := dataset.OpenWith(dst, dataset.OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)
	require.NoError(t, d.Close())
}

// TestConvertNPYOutputFolder (issue 34): converting into the .npy folder
// itself, a folder inside it, its parent or a folder with other files is
// refused naming the folder, before anything is read or written; with
// Overwrite a dataset already there is replaced (its feature file too, the
// new one has none) and other files stay.
func TestConvertNPYOutputFolder(t *testing.T) {
	src := writeNPYDir(t, `{"name": "Synth"}`, map[string]mem.Tensor{
		"indptr.npy":  i64(0, 2, 3, 3, 6),
		"indices.npy": i64(1, 2, 0, 0, 1, 2),
	})
	for name, c := range map[string]struct{ dst, msg string }{
		"source": {src, "is the source folder"},
		"inside": {filepath.Join(src, "out"), "is inside the source folder"},
		"parent": {filepath.Dir(src), "holds the source folder"},
	} {
		err := ConvertNPY(src, c.dst)
		require.ErrorContains(t, err, "convert: the output folder "+c.dst+" "+c.msg, name)
	}
	require.NoFileExists(t, filepath.Join(src, dataset.MetaFile))
	require.NoDirExists(t, filepath.Join(src, "out"))

	dst := t.TempDir()
	g, data := datatest.Synthetic(t)
	require.NoError(t, dataset.Write(dst, &dataset.Dataset{Meta: dataset.Meta{NumClasses: 3}, Graph: g, NodeData: data}))
	require.FileExists(t, filepath.Join(dst, dataset.FeatFile))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "README"), []byte("mine"), 0o644))
	require.ErrorContains(t, ConvertNPY(src, dst), "holds a dataset or a partition")
	require.NoError(t, ConvertNPYWith(src, dst, Options{Overwrite: true}))
	d, err := dataset.OpenWith(dst, dataset.OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)
	require.Equal(t, int64(4), d.Meta.NumNodes)
	require.NoError(t, d.Close())
	require.NoFileExists(t, filepath.Join(dst, dataset.FeatFile))
	require.NoFileExists(t, filepath.Join(dst, dataset.FeatFile+".pages"))
	require.FileExists(t, filepath.Join(dst, "README"))
}

package rankpart

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/datatest"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// randomDataset returns a weighted dataset of n nodes and about deg*n
// edges (edge ids shuffled, so global_eids is not the identity), with
// features, labels, masks and an extra column.
func randomDataset(t *testing.T, n int64, deg int) *dataset.Dataset {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var src, dst []int64
	for v := range n {
		for range r.IntN(2 * deg) {
			src = append(src, r.Int64N(n))
			dst = append(dst, v)
		}
	}
	e := int64(len(src))
	eids := make([]int64, e)
	for i := range eids {
		eids[i] = int64(i)
	}
	r.Shuffle(len(eids), func(i, j int) { eids[i], eids[j] = eids[j], eids[i] })
	w := make([]float32, e)
	for i := range w {
		w[i] = float32(i)
	}
	indptr := make([]int64, n+1)
	for _, v := range dst {
		indptr[v+1]++
	}
	for v := range n {
		indptr[v+1] += indptr[v]
	}
	g, err := graph.FromCSC(n, indptr, src, eids, w)
	require.NoError(t, err)
	feat := make([]float32, n*4)
	for i := range feat {
		feat[i] = float32(i)
	}
	label := make([]int64, n)
	train, val, test := make([]byte, n), make([]byte, n), make([]byte, n)
	for v := range n {
		label[v] = v % 5
		switch v % 10 {
		case 0, 1:
			train[v] = 1
		case 2:
			val[v] = 1
		case 3:
			test[v] = 1
		}
	}
	return &dataset.Dataset{
		Meta:  dataset.Meta{Name: "random", NumClasses: 5},
		Graph: g,
		NodeData: map[string]mem.Tensor{
			dataset.FeatKey:      {DType: mem.Float32, Shape: []int64{n, 4}, Data: mem.Bytes(feat)},
			dataset.LabelKey:     {DType: mem.Int64, Shape: []int64{n}, Data: mem.Bytes(label)},
			dataset.TrainMaskKey: {DType: mem.Uint8, Shape: []int64{n}, Data: train},
			dataset.ValMaskKey:   {DType: mem.Uint8, Shape: []int64{n}, Data: val},
			dataset.TestMaskKey:  {DType: mem.Uint8, Shape: []int64{n}, Data: test},
			"year":               {DType: mem.Int32, Shape: []int64{n}, Data: mem.Bytes(make([]int32, n))},
		},
	}
}

// part is one rank's folder, opened.
type part struct {
	d      *dataset.Dataset
	global []int64 // local node -> global node
	eids   []int64 // local edge -> global edge
	feat   mem.Tensor
	info   PartRank
}

func openParts(t *testing.T, dst string) (PartMeta, []part) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dst, PartMetaFile))
	require.NoError(t, err)
	var meta PartMeta
	require.NoError(t, json.Unmarshal(raw, &meta))
	require.Equal(t, PartFormat, meta.Format)
	parts := make([]part, meta.Parts)
	for r := range parts {
		info := meta.Ranks[r]
		dir := filepath.Join(dst, info.Dir)
		d, err := dataset.OpenWith(dir, dataset.OpenOptions{VerifyChecksums: true})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		for name, sum := range info.Files {
			require.NoError(t, fileio.CheckSum(filepath.Join(dir, name), sum, PartMetaFile), name)
		}
		ids, err := fileformat.ReadNPY(filepath.Join(dir, GlobalIDsFile))
		require.NoError(t, err)
		t.Cleanup(func() { ids.Close() })
		eids, err := fileformat.ReadNPY(filepath.Join(dir, GlobalEIDsFile))
		require.NoError(t, err)
		t.Cleanup(func() { eids.Close() })
		p := part{d: d, global: mem.Int64s(ids.Data), eids: mem.Int64s(eids.Data), info: info}
		switch info.FeatureFile {
		case dataset.FeatFile:
			p.feat = d.NodeData[dataset.FeatKey]
		case OwnedFeatFile:
			f, err := fileformat.ReadNPY(filepath.Join(dir, OwnedFeatFile))
			require.NoError(t, err)
			t.Cleanup(func() { f.Close() })
			p.feat = f.Tensor()
			_, has := d.NodeData[dataset.FeatKey]
			require.False(t, has, "rank %d: the dataset has feat.bin beside feat.npy", r)
		}
		require.Equal(t, info.FeatureRows, p.feat.Shape[0])
		require.Equal(t, int64(len(p.global)), d.Meta.NumNodes)
		require.Equal(t, int64(len(p.eids)), d.Meta.NumEdges)
		parts[r] = p
	}
	return meta, parts
}

// checkParts checks what every layout promises: the owned nodes cover the
// source once, ids invert, rows equal the source rows, seeds are
// co-partitioned, every local edge is a source edge (same endpoints and
// weight), and the layout's own edge and node coverage.
func checkParts(t *testing.T, src *dataset.Dataset, meta PartMeta, parts []part, layout Layout, hops int) {
	t.Helper()
	g := src.Graph
	n := g.NumNodes
	owner := make([]int64, n)
	for i := range owner {
		owner[i] = -1
	}
	edgeCount := make([]int, g.NumEdges())
	posOf := make(map[int64]int64, g.NumEdges()) // global edge id -> CSC position
	for pos := range g.NumEdges() {
		posOf[g.EdgeID(pos)] = pos
	}
	var cut int64
	for r, p := range parts {
		seen := map[int64]int64{}
		for l, v := range p.global {
			_, dup := seen[v]
			require.False(t, dup, "rank %d holds node %d twice", r, v)
			seen[v] = int64(l)
			if int64(l) < p.info.NumOwned {
				require.Equal(t, int64(-1), owner[v], "node %d owned twice", v)
				owner[v] = int64(r)
			}
		}
		require.True(t, slices.IsSorted(p.global[:p.info.NumOwned]), "owned nodes in increasing order")
		// Rows equal the source rows.
		for name, st := range src.NodeData {
			lt := p.d.NodeData[name]
			rows := p.global
			if name == dataset.FeatKey {
				lt, rows = p.feat, p.global[:p.info.FeatureRows]
			}
			rb := int64(len(st.Data)) / n
			for l, v := range rows {
				want := slices.Clone(st.Data[v*rb : (v+1)*rb])
				if (name == dataset.TrainMaskKey || name == dataset.ValMaskKey || name == dataset.TestMaskKey) && int64(l) >= p.info.NumOwned {
					clear(want)
				}
				require.Equal(t, want, lt.Data[int64(l)*rb:int64(l+1)*rb], "rank %d %s row of node %d", r, name, v)
			}
		}
		// Every local edge is the source edge its global id names.
		lg := p.d.Graph
		for lv := range lg.NumNodes {
			for lpos := lg.Indptr[lv]; lpos < lg.Indptr[lv+1]; lpos++ {
				gpos, ok := posOf[p.eids[lg.EdgeID(lpos)]]
				require.True(t, ok)
				require.Equal(t, g.Source(gpos), p.global[lg.Source(lpos)])
				require.True(t, g.Indptr[p.global[lv]] <= gpos && gpos < g.Indptr[p.global[lv]+1], "edge into the right node")
				require.Equal(t, g.Weights[gpos], lg.Weights[lpos])
				edgeCount[gpos]++
			}
		}
		// The layout's coverage.
		switch layout {
		case LayoutDSP:
			for l, v := range p.global {
				if int64(l) < p.info.NumOwned {
					require.Equal(t, g.InDegree(v), lg.InDegree(int64(l)), "owned node %d keeps its in-edges", v)
				} else {
					require.Zero(t, lg.InDegree(int64(l)), "halo node %d has no in-edges", v)
				}
			}
		case LayoutHybrid:
			require.Equal(t, n, lg.NumNodes)
			require.Equal(t, g.NumEdges(), lg.NumEdges())
		case LayoutSelfReliant:
			// A BFS from the rank's seeds in the source graph: every node
			// within hops is held, with all its in-edges below hops.
			depth := map[int64]int{}
			var frontier []int64
			for _, v := range p.global[:p.info.NumOwned] {
				if maskAt(src, dataset.TrainMaskKey, v)+maskAt(src, dataset.ValMaskKey, v)+maskAt(src, dataset.TestMaskKey, v) > 0 {
					depth[v] = 0
					frontier = append(frontier, v)
				}
			}
			for h := 1; h <= hops; h++ {
				var next []int64
				for _, v := range frontier {
					for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
						if u := g.Source(pos); !has(depth, u) {
							depth[u] = h
							next = append(next, u)
						}
					}
				}
				frontier = next
			}
			for v, d := range depth {
				l, ok := seen[v]
				require.True(t, ok, "rank %d lacks node %d at %d hops", r, v, d)
				if d < hops {
					require.Equal(t, g.InDegree(v), lg.InDegree(l), "rank %d: node %d at %d hops keeps its in-edges", r, v, d)
				}
			}
		}
	}
	for v, r := range owner {
		require.NotEqual(t, int64(-1), r, "node %d is owned by no rank", v)
	}
	for v := range n {
		for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
			if owner[g.Source(pos)] != owner[v] {
				cut++
			}
		}
	}
	require.Equal(t, cut, meta.EdgeCut)
	for pos, c := range edgeCount {
		switch layout {
		case LayoutDSP:
			require.Equal(t, 1, c, "edge at %d held %d times", pos, c)
		case LayoutHybrid:
			require.Equal(t, len(parts), c)
		}
	}
	// Seeds: each train seed on exactly one rank, its owner.
	for _, key := range []string{dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
		count := make([]int, n)
		for r, p := range parts {
			for l, b := range p.d.NodeData[key].Data {
				if b != 0 {
					count[p.global[l]]++
					require.Equal(t, int64(r), owner[p.global[l]], "%s seed %d on rank %d, owned by %d", key, p.global[l], r, owner[p.global[l]])
				}
			}
		}
		for v, c := range count {
			require.Equal(t, int(maskAt(src, key, int64(v))), c, "%s seed %d is on %d ranks", key, v, c)
		}
	}
}

func has(m map[int64]int, k int64) bool { _, ok := m[k]; return ok }

// maskAt returns mask key of node v in src (0 when src has no such mask).
func maskAt(src *dataset.Dataset, key string, v int64) byte {
	if t, ok := src.NodeData[key]; ok {
		return t.Data[v]
	}
	return 0
}

func TestPartitionLayouts(t *testing.T) {
	src := randomDataset(t, 300, 4)
	given := make([]int64, src.Graph.NumNodes)
	for v := range given {
		given[v] = int64(v*7) % 3
	}
	for _, layout := range []Layout{LayoutDSP, LayoutSelfReliant, LayoutHybrid} {
		for _, m := range []struct {
			method partition.Method
			assign []int64
		}{{partition.Range, nil}, {partition.Random, nil}, {partition.Given, given}} {
			t.Run(layout.String()+"/"+m.method.String(), func(t *testing.T) {
				dst := t.TempDir()
				opt := PartitionOptions{Method: m.method, Parts: 3, Seed: 5, Assignment: m.assign, Layout: layout, Hops: 2}
				meta, err := Partition(src, dst, opt)
				require.NoError(t, err)
				got, parts := openParts(t, dst)
				require.Equal(t, meta.EdgeCut, got.EdgeCut)
				require.Equal(t, layout.String(), got.Layout)
				require.Contains(t, got.EdgeCuts, "range")
				require.Contains(t, got.EdgeCuts, "random")
				checkParts(t, src, got, parts, layout, 2)
				assign, err := fileformat.ReadNPY(filepath.Join(dst, PartAssignmentFile))
				require.NoError(t, err)
				defer assign.Close()
				for r, p := range parts {
					for _, v := range p.global[:p.info.NumOwned] {
						require.Equal(t, int64(r), mem.Int64s(assign.Data)[v])
					}
				}
				if m.method == partition.Given {
					require.Equal(t, given, mem.Int64s(assign.Data))
				}
			})
		}
	}
}

// TestPartitionMoreRanksThanNodes: empty ranks get valid empty datasets.
func TestPartitionMoreRanksThanNodes(t *testing.T) {
	g, data := datatest.Synthetic(t)
	src := &dataset.Dataset{Meta: dataset.Meta{Name: "tiny", NumClasses: 3, Source: json.RawMessage(`{"origin":"test"}`)}, Graph: g, NodeData: data}
	for _, layout := range []Layout{LayoutDSP, LayoutSelfReliant, LayoutHybrid} {
		dst := t.TempDir()
		_, err := Partition(src, dst, PartitionOptions{Method: partition.Range, Parts: 7, Layout: layout, Hops: 1})
		require.NoError(t, err, layout)
		_, parts := openParts(t, dst)
		checkParts(t, src, mustMeta(t, dst), parts, layout, 1)
	}
}

func mustMeta(t *testing.T, dst string) PartMeta {
	raw, err := os.ReadFile(filepath.Join(dst, PartMetaFile))
	require.NoError(t, err)
	var m PartMeta
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}

func TestPartitionErrors(t *testing.T) {
	src := randomDataset(t, 20, 2)
	dst := t.TempDir()
	for name, opt := range map[string]PartitionOptions{
		"parts":      {Parts: 0},
		"huge":       {Parts: MaxParts + 1},
		"layout":     {Parts: 2, Layout: 9},
		"hops":       {Parts: 2, Hops: -1},
		"short":      {Parts: 2, Method: partition.Given, Assignment: []int64{0}},
		"range":      {Parts: 2, Method: partition.Given, Assignment: make([]int64, 19)},
		"out":        {Parts: 2, Method: partition.Given, Assignment: append(make([]int64, 19), 2)},
		"not given":  {Parts: 2, Method: partition.Random, Assignment: make([]int64, 20)},
		"bad method": {Parts: 2, Method: 7},
	} {
		_, err := Partition(src, dst, opt)
		require.Error(t, err, name)
	}
	_, err := NewPartitioner(nil, PartitionOptions{Parts: 1})
	require.Error(t, err)
	p, err := NewPartitioner(src, PartitionOptions{Parts: 2})
	require.NoError(t, err)
	require.Error(t, p.WritePart(dst, 2))
	require.Error(t, p.WritePart(dst, -1))
	// A partition.json of an earlier run goes as soon as a part is written.
	require.NoError(t, os.WriteFile(filepath.Join(dst, PartMetaFile), []byte("{}"), 0o644))
	require.NoError(t, p.WritePart(dst, 0))
	require.NoFileExists(t, filepath.Join(dst, PartMetaFile))
	require.ErrorContains(t, p.WriteMeta(dst), "part 1 was not written")
	_, err = ParseLayout("pagraph")
	require.Error(t, err)
	l, err := ParseLayout("self-reliant")
	require.NoError(t, err)
	require.Equal(t, LayoutSelfReliant, l)
}

// TestPartitionOpenedDataset partitions a dataset as Open gives it: int32
// sources, edge ids that are rows of edges.arrow, mapped features.
func TestPartitionOpenedDataset(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, randomDataset(t, 200, 3)))
	src, err := dataset.Open(dir)
	require.NoError(t, err)
	defer src.Close()
	require.True(t, src.Graph.IsCompact())
	for _, layout := range []Layout{LayoutDSP, LayoutSelfReliant, LayoutHybrid} {
		dst := t.TempDir()
		var calls []int
		_, err := Partition(src, dst, PartitionOptions{
			Method: partition.Random, Parts: 4, Seed: 9, Layout: layout, Hops: 3,
			Progress: func(done, total int) {
				require.Equal(t, 4, total)
				calls = append(calls, done)
			},
		})
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3, 4}, calls)
		meta, parts := openParts(t, dst)
		checkParts(t, src, meta, parts, layout, 3)
	}
}

// TestPartitionContext: a partition whose context is done writes nothing
// that stays (no rank folder, no assignment.npy, no partition.json).
func TestPartitionContext(t *testing.T) {
	src := randomDataset(t, 300, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dst := t.TempDir()
	_, err := Partition(src, dst, PartitionOptions{Method: partition.Range, Parts: 3, Layout: LayoutDSP, Context: ctx})
	require.ErrorIs(t, err, context.Canceled)
	left, err := os.ReadDir(dst)
	require.NoError(t, err)
	require.Empty(t, left)
}

// TestPartitionOutputFolder (issue 34): a partition into the source
// dataset's folder, a folder inside it, its parent or a folder holding
// other files is refused naming the folder (it wrote its parts beside
// whatever was there); with Overwrite it replaces an earlier partition's
// folders (also those of ranks it no longer has) and leaves other files.
func TestPartitionOutputFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "src")
	require.NoError(t, dataset.Write(dir, randomDataset(t, 60, 3)))
	src, err := dataset.Open(dir)
	require.NoError(t, err)
	defer src.Close()
	opt := PartitionOptions{Method: partition.Range, Parts: 2, Layout: LayoutDSP}
	dst := filepath.Join(root, "out")
	_, err = Partition(src, dst, opt)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), nil, 0o644))
	for name, c := range map[string]struct{ dst, msg string }{
		"source": {dir, "is the source folder"},
		"inside": {filepath.Join(dir, "parts"), "is inside the source folder"},
		"parent": {root, "holds the source folder"},
		"used":   {dst, "holds a dataset or a partition (holds assignment.npy, new_to_old.npy, old_to_new.npy and 3 more)"},
	} {
		before, err := os.ReadDir(c.dst)
		if !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		_, err = Partition(src, c.dst, opt)
		require.ErrorContains(t, err, "partition: the output folder "+c.dst+" ", name)
		require.ErrorContains(t, err, c.msg, name)
		after, _ := os.ReadDir(c.dst)
		require.Equal(t, len(before), len(after), "%s: nothing written", name)
	}

	// An earlier partition had 5 ranks; the folder holds a file of the user's.
	require.NoError(t, os.MkdirAll(filepath.Join(dst, "part-4"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dst, "README"), []byte("mine"), 0o644))
	opt.Overwrite = true
	_, err = Partition(src, dst, opt)
	require.NoError(t, err)
	left, err := os.ReadDir(dst)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"README", PartAssignmentFile, NewToOldFile, OldToNewFile, "part-0", "part-1", PartMetaFile}, names)
	openParts(t, dst)

	// Overwrite into the source folder: the parts beside the dataset,
	// which stays whole.
	_, err = Partition(src, dir, opt)
	require.NoError(t, err)
	again, err := dataset.OpenWith(dir, dataset.OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)
	require.NoError(t, again.Close())
}

// TestPartitionResumes interrupts a streaming (LDG) partition after two of
// its four rank folders (a panic in the progress callback, as a kill would
// stop it after the progress file was written) and resumes it: the
// finished folders are kept, the others written, and the result equals an
// uninterrupted run's. A run with other options starts over.
func TestPartitionResumes(t *testing.T) {
	src := randomDataset(t, 80, 4)
	opt := PartitionOptions{Method: partition.LDG, Parts: 4, Layout: LayoutDSP, MemoryLimit: 1 << 30}
	whole := filepath.Join(t.TempDir(), "whole")
	want, err := Partition(src, whole, opt)
	require.NoError(t, err)
	require.Equal(t, "ldg", want.Method)
	require.NoFileExists(t, filepath.Join(whole, progressFile))

	dst := filepath.Join(t.TempDir(), "parts")
	stop := opt
	stop.Progress = func(done, _ int) {
		if done == 2 {
			panic("interrupted")
		}
	}
	require.PanicsWithValue(t, "interrupted", func() { Partition(src, dst, stop) })
	require.FileExists(t, filepath.Join(dst, progressFile))
	require.NoFileExists(t, filepath.Join(dst, PartMetaFile))

	var written []int
	again := opt
	again.Resume = true
	again.Progress = func(done, _ int) { written = append(written, done) }
	got, err := Partition(src, dst, again)
	require.NoError(t, err)
	require.Equal(t, []int{3, 4}, written, "ranks 0 and 1 are kept")
	require.Equal(t, want, got)
	for _, name := range []string{PartMetaFile, PartAssignmentFile, NewToOldFile, OldToNewFile} {
		a, err := os.ReadFile(filepath.Join(whole, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dst, name))
		require.NoError(t, err)
		require.Equal(t, a, b, name)
	}
	require.NoFileExists(t, filepath.Join(dst, progressFile))
	for r := range 4 {
		p, err := OpenPart(dst, r, dataset.OpenOptions{VerifyChecksums: true})
		require.NoError(t, err)
		require.NoError(t, p.Close())
	}

	// Interrupted again (over the finished partition: asked to overwrite),
	// then resumed with another rank count: nothing matches, every rank is
	// written.
	stop.Overwrite = true
	require.PanicsWithValue(t, "interrupted", func() { Partition(src, dst, stop) })
	written = nil
	other := again
	other.Parts = 3
	_, err = Partition(src, dst, other)
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, written)

	// A limit below what the assignment needs is refused up front.
	small := opt
	small.MemoryLimit = 100
	_, err = Partition(src, filepath.Join(t.TempDir(), "small"), small)
	require.ErrorContains(t, err, "memory limit of 100 bytes is below the 2560")
	small.MemoryLimit = -1
	_, err = Partition(src, filepath.Join(t.TempDir(), "small"), small)
	require.ErrorContains(t, err, "memory limit = -1")
}

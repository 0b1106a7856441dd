package gen

import (
	"encoding/json"
	"fmt"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// Preset is a named synthetic dataset: a graph, its features and labels,
// and the train/validation split (the rest of the nodes is the test set).
type Preset struct {
	Name          string
	RMAT          RMAT
	Features      Features
	TrainFraction float64
	ValFraction   float64
	// Hetero, when set, makes the preset heterogeneous (see Hetero; RMAT
	// then gives only the probabilities, seed, threads and Permute).
	Hetero *Hetero
	// Streamed presets are too large to build in memory: they are written
	// with WriteStreamed (CSC files, no edge table), not Build.
	Streamed bool
}

// graph500 returns an undirected, permuted RMAT with the Graph500
// probabilities.
func graph500(seed uint64, scale int, numNodes int64, edgeFactor float64) RMAT {
	return RMAT{Scale: scale, NumNodes: numNodes, EdgeFactor: edgeFactor, A: DefaultA, B: DefaultB, C: DefaultC,
		Seed: seed, Undirected: true, Permute: true}
}

// Presets returns the predefined datasets (a fresh map each call). All are
// undirected (every edge stored both ways), permuted, with the Graph500
// probabilities and float32 features; edge counts below are of the stored
// (directed) edges after removing self-loops and duplicates.
//
//   - "tiny": 2^10 nodes, ~12K edges, 16 features, 8 classes; for tests.
//   - "small": 2^16 nodes, ~1.8M edges, 64 features, 16 classes.
//   - "products-like": 2,449,029 nodes and ~120M edges (63.7M generated,
//     stored both ways: 127.3M, 119.9M after removing duplicates) like
//     ogbn-products (61.9M undirected edges stored both ways), 100
//     features, 47 classes, 8% train / 1.6% validation like its split.
//     About 1 GiB of features and 0.5 GiB of graph (int32 sources, no
//     edge ids); generating it peaks at about 4.7 GB.
//   - "papers-like": the same degree distribution shape (same
//     probabilities) at 4,000,000 nodes and ~100M edges (52M generated,
//     100.1M stored; mean degree 25 against products-like's 49), 128
//     features, 172 classes like ogbn-papers100M, 25% train (~1M seeds,
//     like papers100M's 1.2M) / 5% validation. ogbn-papers100M itself (111M
//     nodes, 1.6B edges, 57 GiB of features) cannot be held on the 24 GiB
//     benchmark machine; this size keeps features (2 GiB) and graph (~0.4
//     GiB) small enough for the baselines to hold their own copies too.
//
// The streamed presets (Streamed: written by WriteStreamed in bounded
// memory, topology as CSC files that opening maps) are for graphs larger
// than memory and the disk tier:
//   - "papers100M-like": ogbn-papers100M's shape: 111,059,956 nodes,
//     833M generated edges stored both ways (~1.6B after removing
//     duplicates), 128 float32 features (56.9 GB, 53 GiB), 172 classes,
//     1.1% train / 0.1% validation like its split (1.2M / 125K).
//   - "disk-small": 8,000,000 nodes, 16M generated edges (~32M stored),
//     128 float32 features (4.1 GB): features four times the disk tier
//     benchmark's memory limit (1 GiB), topology and node columns (~0.3
//     GB) well under it.
//
// The heterogeneous presets have ogbn-mag's node types (author,
// field_of_study, institution, paper) and relations (affiliated_with,
// writes, cites both ways, has_topic, and rev_ reverses; 7 relations),
// power-law (R-MAT) degrees per relation, float32 features per node type,
// labels, a split and years on papers, and node and edge timestamps (see
// Hetero and buildHetero):
//   - "hetero-tiny": ogbn-mag / 2048: ~950 nodes, ~20K edges, 4 classes;
//     for tests.
//   - "hetero-small": ogbn-mag / 16: ~121K nodes, ~2.5M edges, 16 classes,
//     feature widths 64 (author), 32, 32, 128 (paper).
//   - "mag-like": ogbn-mag's counts (1.94M nodes, ~40M edges), 349
//     classes like its venues; not generated in the tests.
func Presets() map[string]Preset {
	return map[string]Preset{
		"tiny": {
			Name: "tiny", RMAT: graph500(1, 10, 0, 8),
			Features:      Features{Dim: 16, NumClasses: 8, DType: mem.Float32, Seed: 1},
			TrainFraction: 0.6, ValFraction: 0.2,
		},
		"small": {
			Name: "small", RMAT: graph500(2, 16, 0, 16),
			Features:      Features{Dim: 64, NumClasses: 16, DType: mem.Float32, Seed: 2},
			TrainFraction: 0.5, ValFraction: 0.1,
		},
		"products-like": {
			Name: "products-like", RMAT: graph500(3, 0, 2449029, productsEdgeFactor),
			Features:      Features{Dim: 100, NumClasses: 47, DType: mem.Float32, Seed: 3},
			TrainFraction: 0.08, ValFraction: 0.016,
		},
		"papers-like": {
			Name: "papers-like", RMAT: graph500(4, 0, 4000000, papersEdgeFactor),
			Features:      Features{Dim: 128, NumClasses: 172, DType: mem.Float32, Seed: 4},
			TrainFraction: 0.25, ValFraction: 0.05,
		},
		"papers100M-like": {
			Name: "papers100M-like", RMAT: graph500(8, 0, papers100MNodes, 7.5),
			Features:      Features{Dim: 128, NumClasses: 172, DType: mem.Float32, Seed: 8},
			TrainFraction: 0.0109, ValFraction: 0.00113, Streamed: true,
		},
		"disk-small": {
			Name: "disk-small", RMAT: graph500(9, 0, 8000000, 2),
			Features:      Features{Dim: 128, NumClasses: 172, DType: mem.Float32, Seed: 9},
			TrainFraction: 0.25, ValFraction: 0.05, Streamed: true,
		},
		"hetero-tiny":  heteroPreset("hetero-tiny", 5, 4, 0.6, 0.2, magLike(1.0/2048, [4]int{8, 4, 4, 16})),
		"hetero-small": heteroPreset("hetero-small", 6, 16, 0.3, 0.1, magLike(1.0/16, [4]int{64, 32, 32, 128})),
		"mag-like":     heteroPreset("mag-like", 7, 349, 0.3, 0.1, magLike(1, [4]int{64, 64, 32, 128})),
	}
}

// heteroPreset returns a heterogeneous preset with the Graph500
// probabilities and permuted ids.
func heteroPreset(name string, seed uint64, classes int, train, val float64, h *Hetero) Preset {
	return Preset{
		Name: name, RMAT: RMAT{A: DefaultA, B: DefaultB, C: DefaultC, Seed: seed, Permute: true},
		Features:      Features{NumClasses: classes, DType: mem.Float32, Seed: seed},
		TrainFraction: train, ValFraction: val, Hetero: h,
	}
}

// magLike returns the shape of ogbn-mag (its node types, relations, node
// and edge counts) scaled by f, with feature widths dims of author,
// field_of_study, institution and paper. Papers have labels, a split and
// years 2000..2020; cites is stored both ways, the other relations get
// rev_ reverses. Counts: ogbn-mag's (736,389 papers, 1,134,649 authors,
// 8,740 institutions, 59,965 fields; 5.4M cites, 7.1M writes, 1.0M
// affiliated_with, 7.5M has_topic).
func magLike(f float64, dims [4]int) *Hetero {
	c := func(x float64) int64 { return max(2, int64(x*f+0.5)) }
	return &Hetero{
		NodeTypes: []HeteroNodeType{
			{"author", c(1134649), dims[0]}, {"field_of_study", c(59965), dims[1]},
			{"institution", c(8740), dims[2]}, {"paper", c(736389), dims[3]},
		},
		Relations: []HeteroRelation{
			{Src: "author", Rel: "affiliated_with", Dst: "institution", NumEdges: c(1043998), Reverse: true},
			{Src: "author", Rel: "writes", Dst: "paper", NumEdges: c(7145660), Reverse: true},
			{Src: "paper", Rel: "cites", Dst: "paper", NumEdges: c(5416271), Undirected: true},
			{Src: "paper", Rel: "has_topic", Dst: "field_of_study", NumEdges: c(7505078), Reverse: true},
		},
		LabelType: "paper", YearFrom: 2000, YearTo: 2020,
	}
}

// Edge factors of the large presets, chosen so that the stored edge counts
// after removing duplicates come out near the targets.
const (
	papers100MNodes    = 111059956 // ogbn-papers100M's node count
	productsEdgeFactor = 26
	papersEdgeFactor   = 13
)

// Build generates the preset's graph, features, labels and split masks as a
// dataset that dataset.Write can store. NodeData has "feat", "label" (int64)
// and "train_mask", "val_mask", "test_mask" (uint8): a seeded permutation of
// the nodes (from Features.Seed) puts the first round(TrainFraction*N) in
// train, the next round(ValFraction*N) in validation, the rest in test.
// Meta.Source records the preset as JSON.
//
// A heterogeneous preset (Hetero set) is built as buildHetero describes.
func Build(p Preset) (*dataset.Dataset, error) {
	if p.Streamed {
		return nil, fmt.Errorf("gen: preset %q is written by WriteStreamed (too large to build in memory)", p.Name)
	}
	if p.Hetero != nil {
		return buildHetero(p)
	}
	if !(p.TrainFraction >= 0 && p.TrainFraction <= 1) || !(p.ValFraction >= 0 && p.ValFraction <= 1) {
		return nil, fmt.Errorf("gen: preset %q: TrainFraction=%v and ValFraction=%v must be in [0, 1]", p.Name, p.TrainFraction, p.ValFraction)
	}
	if p.TrainFraction+p.ValFraction > 1+1e-9 {
		return nil, fmt.Errorf("gen: preset %q: TrainFraction+ValFraction=%v must be <= 1", p.Name, p.TrainFraction+p.ValFraction)
	}
	g, err := p.RMAT.Graph()
	if err != nil {
		return nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}
	n := g.NumNodes
	feat, labels, err := p.Features.Generate(n)
	if err != nil {
		return nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}
	train, val, test := p.split(n)
	src, err := provenance(p)
	if err != nil {
		return nil, err
	}
	mask := func(b []byte) mem.Tensor { return mem.Tensor{DType: mem.Uint8, Shape: []int64{n}, Data: b} }
	return &dataset.Dataset{
		Meta:  dataset.Meta{Name: p.Name, NumClasses: int64(p.Features.NumClasses), Source: src},
		Graph: g,
		NodeData: map[string]mem.Tensor{
			dataset.FeatKey:      feat,
			dataset.LabelKey:     {DType: mem.Int64, Shape: []int64{n}, Data: labelBytes(labels)},
			dataset.TrainMaskKey: mask(train),
			dataset.ValMaskKey:   mask(val),
			dataset.TestMaskKey:  mask(test),
		},
	}, nil
}

// Generate writes preset p as a dataset in dir: streamed (WriteStreamed)
// when p.Streamed, else built (Build) and written (dataset.Write). dir
// must be empty or new unless overwrite, which replaces what a dataset
// writer writes there (dataset.Owns) and nothing else
// (fileio.PrepareOutput); it is changed only once the dataset is built.
func Generate(p Preset, dir string, overwrite bool) error {
	ready, err := fileio.PrepareOutput(dir, fileio.Output{Tool: "generate", Overwrite: overwrite, Owns: dataset.Owns(dir)})
	if err != nil {
		return err
	}
	if p.Streamed {
		if err := ready(); err != nil {
			return err
		}
		return WriteStreamed(p, dir, StreamOptions{})
	}
	ds, err := Build(p)
	if err != nil {
		return err
	}
	if err := ready(); err != nil {
		return err
	}
	return dataset.Write(dir, ds)
}

// split returns the train, validation and test masks of n nodes: a seeded
// permutation of the nodes (from Features.Seed) puts the first
// round(TrainFraction*n) in train, the next round(ValFraction*n) in
// validation, the rest in test.
func (p Preset) split(n int64) (train, val, test []byte) {
	nTrain := min(n, int64(p.TrainFraction*float64(n)+0.5))
	nVal := min(n-nTrain, int64(p.ValFraction*float64(n)+0.5))
	train, val, test = make([]byte, n), make([]byte, n), make([]byte, n)
	for i, v := range permutation(n, p.Features.Seed, tagSplit) {
		switch {
		case int64(i) < nTrain:
			train[v] = 1
		case int64(i) < nTrain+nVal:
			val[v] = 1
		default:
			test[v] = 1
		}
	}
	return train, val, test
}

// labelBytes views the labels as bytes (a non-nil empty slice for none).
func labelBytes(l []int64) []byte {
	if b := mem.Bytes(l); b != nil {
		return b
	}
	return []byte{}
}

// provenance describes the preset for Meta.Source.
func provenance(p Preset) (json.RawMessage, error) {
	// The thread count changes nothing in the output, so it is not
	// recorded: the same preset and seed give the same files.
	p.RMAT.Threads = 0
	f := p.Features
	dt := f.DType
	if dt == mem.Invalid {
		dt = mem.Float32
	}
	type feats struct {
		Dim, NumClasses int
		DType           string
		Seed            uint64
	}
	js, err := json.Marshal(struct {
		Generator     string
		Preset        string
		RMAT          RMAT
		Features      feats
		TrainFraction float64
		ValFraction   float64
		Hetero        *Hetero `json:",omitempty"`
	}{"graphferry engine/gen R-MAT", p.Name, p.RMAT, feats{f.Dim, f.NumClasses, dt.String(), f.Seed}, p.TrainFraction, p.ValFraction, p.Hetero})
	if err != nil {
		return nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}
	return js, nil
}

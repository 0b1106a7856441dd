package sample

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/stretchr/testify/require"
)

// Golden traces pin a few seeded batches per scheme, so that a change to the
// random streams (or to the order in which a task consumes them) cannot
// silently change samples that the documentation promises are reproducible.
// The graph, the seeds and the keys are built here from a fixed SplitMix64
// sequence written out in this file, independent of the engine's own
// generator. Each case runs on 1 patch (identity numbering) and on 3
// renumbered patches, and both must match the same file.
//
// Run `go test ./engine/sample -run TestGolden -update` to rewrite the files
// after an intended change, and say why in the commit.

var updateGolden = flag.Bool("update", false, "rewrite the golden traces in testdata/golden")

// goldenRand is SplitMix64, spelled out so that the fixture does not depend
// on the code under test.
type goldenRand struct{ s uint64 }

func (r *goldenRand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn is next() mod n: slightly biased, which does not matter for a fixture.
func (r *goldenRand) intn(n int) int { return int(r.next() % uint64(n)) }

// goldenGraph is a weighted graph of 48 nodes and about 300 edges with
// explicit, shuffled edge ids, a few hubs, isolated nodes and zero weights.
func goldenGraph() *graph.CSC {
	r := &goldenRand{s: 20260101}
	const n = 48
	var edges []edge
	for dst := int64(0); dst < n; dst++ {
		deg := r.intn(9) // 0..8
		if dst%11 == 0 {
			deg = 20 + r.intn(10) // hubs
		}
		if dst%13 == 5 {
			deg = 0
		}
		for range deg {
			edges = append(edges, edge{src: int64(r.intn(n)), dst: dst})
		}
	}
	perm := make([]int64, len(edges))
	for i := range perm {
		perm[i] = int64(i)
	}
	for i := len(perm) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for i := range edges {
		edges[i].id = perm[i]
	}
	g := buildCSC(n, edges, true)
	g.Weights = make([]float32, len(edges))
	for i := range g.Weights {
		if r.intn(7) == 0 {
			continue // weight 0: never sampled when biased
		}
		g.Weights[i] = float32(1+r.intn(1000)) / 100
	}
	return g
}

// goldenBatches returns 4 batches of distinct seeds (original ids) and their
// keys.
func goldenBatches(n int64) ([][]int64, []uint64) {
	r := &goldenRand{s: 777}
	sizes := []int{5, 1, 8, 3}
	batches := make([][]int64, len(sizes))
	keys := make([]uint64, len(sizes))
	for b, k := range sizes {
		seen := map[int64]bool{}
		for len(batches[b]) < k {
			v := int64(r.intn(int(n)))
			if !seen[v] {
				seen[v] = true
				batches[b] = append(batches[b], v)
			}
		}
		keys[b] = r.next()
	}
	return batches, keys
}

// goldenExclude lists about one edge id in five.
func goldenExclude(g *graph.CSC) []int64 {
	r := &goldenRand{s: 99}
	var out []int64
	for id := int64(0); id < g.NumEdges(); id++ {
		if r.intn(5) == 0 {
			out = append(out, id)
		}
	}
	return out
}

type goldenCase struct {
	name string
	opt  options // the request (and, for walks, Seed and ExcludeEdges)
	walk bool
	// walks
	length  int
	restart float64
	biased  bool
}

func goldenCases(exclude []int64) []goldenCase {
	return []goldenCase{
		{name: "uniform-all", opt: options{Fanouts: []int{3, 2}, Seed: 1}},
		{name: "uniform-replace", opt: options{Fanouts: []int{3, 2}, Replace: true, Seed: 2}},
		{name: "uniform-new", opt: options{Fanouts: []int{4, 3}, Frontier: FrontierNew, Seed: 3}},
		{name: "fanout-all-neighbours", opt: options{Fanouts: []int{-1, 2}, Seed: 4}},
		{name: "large-fanout", opt: options{Fanouts: []int{40}, Seed: 5}},
		{name: "biased", opt: options{Fanouts: []int{3, 2}, Biased: true, Seed: 6}},
		{name: "biased-replace", opt: options{Fanouts: []int{3, 2}, Biased: true, Replace: true, Seed: 7}},
		{name: "biased-new", opt: options{Fanouts: []int{2, -1}, Biased: true, Frontier: FrontierNew, Seed: 8}},
		{name: "exclude", opt: options{Fanouts: []int{3, 2}, ExcludeEdges: exclude, Seed: 9}},
		{name: "exclude-replace", opt: options{Fanouts: []int{3, 2}, Replace: true, ExcludeEdges: exclude, Seed: 10}},
		{name: "biased-exclude", opt: options{Fanouts: []int{3, 2}, Biased: true, ExcludeEdges: exclude, Seed: 11}},
		{name: "layer", opt: options{Fanouts: []int{12, 20}, Scheme: LayerWise, Seed: 12}},
		{name: "layer-replace-new", opt: options{Fanouts: []int{12, 20}, Scheme: LayerWise, Replace: true, Frontier: FrontierNew, Seed: 13}},
		{name: "layer-biased", opt: options{Fanouts: []int{10, -1}, Scheme: LayerWise, Biased: true, Seed: 14}},
		{name: "layer-wor", opt: options{Fanouts: []int{6, 9}, Scheme: LayerWise, LayerWithoutReplacement: true, Seed: 15}},
		{name: "layer-wor-biased-exclude", opt: options{Fanouts: []int{6, 9}, Scheme: LayerWise, LayerWithoutReplacement: true, Biased: true, ExcludeEdges: exclude, Seed: 16}},
		{name: "fanout-zero", opt: options{Fanouts: []int{2, 0, 3}, Seed: 21}},
		{name: "fanout-zero-new", opt: options{Fanouts: []int{3, 0, 2}, Frontier: FrontierNew, Seed: 22}},
		{name: "fanout-zero-first-replace", opt: options{Fanouts: []int{0, 2}, Replace: true, Seed: 23}},
		{name: "layer-fanout-zero", opt: options{Fanouts: []int{0, 8}, Scheme: LayerWise, Seed: 24}},
		{name: "labor", opt: options{Fanouts: []int{3, 2}, Scheme: Labor, Seed: 25}},
		{name: "labor-layer-dependency-new", opt: options{Fanouts: []int{4, -1, 2}, Scheme: Labor, LayerDependency: true, Frontier: FrontierNew, Seed: 26}},
		{name: "labor-exclude-fanout-zero", opt: options{Fanouts: []int{5, 0, 2}, Scheme: Labor, ExcludeEdges: exclude, Seed: 27}},
		{name: "walk", walk: true, length: 6, opt: options{Seed: 17}},
		{name: "walk-restart", walk: true, length: 6, restart: 0.3, opt: options{Seed: 18}},
		{name: "walk-biased-restart", walk: true, length: 6, restart: 0.25, biased: true, opt: options{Seed: 19}},
		{name: "walk-biased-exclude", walk: true, length: 5, biased: true, opt: options{Seed: 20, ExcludeEdges: exclude}},
	}
}

// goldenBatch is one batch of a golden trace, in original node ids.
type goldenBatch struct {
	Seeds     []int64       `json:"seeds"`
	Key       uint64        `json:"key"`
	Nodes     []int64       `json:"nodes,omitempty"`
	HopCounts []int64       `json:"hop_counts,omitempty"`
	Blocks    []goldenBlock `json:"blocks,omitempty"`
	Batch     []int64       `json:"batch,omitempty"` // disjoint batches: each node's seed position
	Traces    []int64       `json:"traces,omitempty"`
	WalkEdges []int64       `json:"walk_edge_ids,omitempty"`
}

type goldenBlock struct {
	NumDst    int64   `json:"num_dst"`
	NumSrc    int64   `json:"num_src"`
	DstOffset int64   `json:"dst_offset"`
	Indptr    []int64 `json:"indptr"`
	Indices   []int64 `json:"indices"`
	EdgeIDs   []int64 `json:"edge_ids"`
}

// goldenRun runs c on part (batches in original ids) and returns the batches
// in original ids.
func goldenRun(t *testing.T, part *partition.Partitioned, c goldenCase, batches [][]int64, keys []uint64) []goldenBatch {
	t.Helper()
	out := make([]goldenBatch, len(batches))
	for i := range batches {
		out[i] = goldenBatch{Seeds: batches[i], Key: keys[i]}
	}
	in := toInternal(part, batches)
	rt := mustRuntime(t, part, 0)
	if c.walk {
		req := WalkRequest{Length: c.length, RestartProb: c.restart, Biased: c.biased, ExcludeEdges: c.opt.ExcludeEdges, Seed: c.opt.Seed}
		ws, err := rt.RandomWalk(t.Context(), req, in, keys)
		require.NoError(t, err)
		for i, w := range walksToOriginal(part, ws) {
			out[i].Traces, out[i].WalkEdges = w.Traces, w.EdgeIDs
		}
		return out
	}
	res, err := rt.Sample(t.Context(), c.opt.request(), in, keys)
	require.NoError(t, err)
	require.Equal(t, res, sampleAll(t, mustSampler(t, part, c.opt), in, keys), "a Sampler bound to the request samples the same")
	for i, r := range toOriginal(part, res) {
		out[i].Nodes, out[i].HopCounts = r.Nodes, r.HopCounts
		for _, b := range r.Blocks {
			out[i].Blocks = append(out[i].Blocks, goldenBlock{
				NumDst: b.NumDst, NumSrc: b.NumSrc, DstOffset: b.DstOffset,
				Indptr: b.Indptr, Indices: b.Indices, EdgeIDs: b.EdgeIDs,
			})
		}
	}
	return out
}

// encodeGolden writes one batch per line, so that a diff of a changed trace
// names the batch.
func encodeGolden(t *testing.T, batches []goldenBatch) []byte {
	var sb strings.Builder
	sb.WriteString("[\n")
	for i, b := range batches {
		line, err := json.Marshal(b)
		require.NoError(t, err)
		sb.Write(line)
		if i < len(batches)-1 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	sb.WriteString("]\n")
	return []byte(sb.String())
}

func TestGolden(t *testing.T) {
	withGrains(t, 3, 2) // many chunks, so the parallel passes are pinned too
	g := goldenGraph()
	batches, keys := goldenBatches(g.NumNodes)
	assign := make([]int, g.NumNodes)
	for v := range assign {
		assign[v] = (v * 7) % 3
	}
	parts := map[string]*partition.Partitioned{
		"1 patch":   rangePartition(g, 1),
		"3 patches": renumbered(g, assign, 3),
	}
	dir := filepath.Join("testdata", "golden")
	if *updateGolden {
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	for _, c := range goldenCases(goldenExclude(g)) {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".json")
			if *updateGolden {
				got := encodeGolden(t, goldenRun(t, parts["1 patch"], c, batches, keys))
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "missing golden trace: run with -update")
			for name, part := range parts {
				got := encodeGolden(t, goldenRun(t, part, c, batches, keys))
				require.Equal(t, string(want), string(got), "%s: %s differs from the golden trace", name, path)
			}
		})
	}
}

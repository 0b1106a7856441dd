package gen

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/mem"
)

func preset(t testing.TB, name string) Preset {
	t.Helper()
	p, ok := Presets()[name]
	require.True(t, ok, name)
	return p
}

func TestEdgesDeterministicAcrossThreads(t *testing.T) {
	for _, r := range []RMAT{
		preset(t, "tiny").RMAT,
		{Scale: 12, EdgeFactor: 20, A: 0.45, B: 0.15, C: 0.15, Seed: 7},                                 // directed, not permuted
		{NumNodes: 3000, EdgeFactor: 16, A: DefaultA, B: DefaultB, C: DefaultC, Seed: 9, Permute: true}, // rejection
	} {
		var ref [2][]int64
		for _, th := range []int{1, 2, 8} {
			r.Threads = th
			src, dst, err := r.Edges()
			require.NoError(t, err)
			want := r.NumGenerated()
			if r.Undirected {
				want *= 2
			}
			require.Len(t, src, int(want))
			require.Len(t, dst, int(want))
			if ref[0] == nil {
				ref = [2][]int64{src, dst}
				continue
			}
			assert.Equal(t, ref[0], src, "threads=%d", th)
			assert.Equal(t, ref[1], dst, "threads=%d", th)
		}
		n := r.N()
		for i := range ref[0] {
			require.True(t, ref[0][i] >= 0 && ref[0][i] < n && ref[1][i] >= 0 && ref[1][i] < n, "edge %d out of range", i)
		}
		// Another seed gives another graph.
		r.Seed++
		src, _, err := r.Edges()
		require.NoError(t, err)
		assert.NotEqual(t, ref[0], src)
	}
}

func TestEdgesUndirectedPairs(t *testing.T) {
	src, dst, err := preset(t, "tiny").RMAT.Edges()
	require.NoError(t, err)
	for k := 0; k < len(src); k += 2 {
		require.Equal(t, src[k], dst[k+1])
		require.Equal(t, dst[k], src[k+1])
	}
}

func TestRMATParameterErrors(t *testing.T) {
	ok := RMAT{Scale: 8, EdgeFactor: 4, A: DefaultA, B: DefaultB, C: DefaultC}
	for _, c := range []struct {
		name string
		mod  func(*RMAT)
		msg  string
	}{
		{"negative A", func(r *RMAT) { r.A = -0.1 }, "RMAT.A"},
		{"B above 1", func(r *RMAT) { r.B = 1.5 }, "RMAT.B"},
		{"NaN C", func(r *RMAT) { r.C = math.NaN() }, "RMAT.C"},
		{"sum above 1", func(r *RMAT) { r.A, r.B, r.C = 0.5, 0.3, 0.3 }, "A+B+C"},
		{"scale 0", func(r *RMAT) { r.Scale = 0 }, "Scale=0"},
		{"scale 41", func(r *RMAT) { r.Scale = 41 }, "Scale=41"},
		{"edge factor 0", func(r *RMAT) { r.EdgeFactor = 0 }, "EdgeFactor"},
		{"edge factor NaN", func(r *RMAT) { r.EdgeFactor = math.NaN() }, "EdgeFactor"},
		{"edge factor Inf", func(r *RMAT) { r.EdgeFactor = math.Inf(1) }, "EdgeFactor"},
		{"too many edges", func(r *RMAT) { r.Scale, r.EdgeFactor = 40, 2 }, "limit"},
		{"negative nodes", func(r *RMAT) { r.NumNodes = -5 }, "NumNodes"},
		{"one node", func(r *RMAT) { r.NumNodes = 1 }, "NumNodes"},
		{"scale disagrees", func(r *RMAT) { r.NumNodes = 1000 }, "disagrees"},
		{"rejection hopeless", func(r *RMAT) { r.Scale, r.NumNodes, r.A, r.B, r.C = 0, 1000, 0, 0, 0 }, "power of two"},
	} {
		r := ok
		c.mod(&r)
		_, _, err := r.Edges()
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.msg, c.name)
		_, err = r.Graph()
		assert.Error(t, err, c.name)
		assert.Zero(t, r.N(), c.name)
	}
	_, _, err := ok.Edges()
	require.NoError(t, err)
	// NumNodes with a matching (or zero) Scale is fine.
	r := ok
	r.Scale, r.NumNodes = 10, 1000
	_, _, err = r.Edges()
	require.NoError(t, err)
}

func TestAcceptance(t *testing.T) {
	// Uniform probabilities: P(both < N) = (N/2^s)^2.
	assert.InDelta(t, 0.25, acceptance(4, 7, 0.25, 0.25, 0.25), 1e-12)
	assert.InDelta(t, (5.0/8)*(5.0/8), acceptance(3, 4, 0.25, 0.25, 0.25), 1e-12)
	// Power of two: everything is accepted.
	assert.InDelta(t, 1, acceptance(5, 31, DefaultA, DefaultB, DefaultC), 1e-12)
	// D = 1: only the last node.
	assert.Zero(t, acceptance(5, 30, 0, 0, 0))
}

func TestGraphHeavyTailedAndSimple(t *testing.T) {
	for _, name := range []string{"tiny", "small"} {
		if name == "small" && testing.Short() {
			continue
		}
		p := preset(t, name)
		g, err := p.RMAT.Graph()
		require.NoError(t, err)
		require.NoError(t, g.Validate())
		assert.Equal(t, int64(1)<<p.RMAT.Scale, g.NumNodes)
		assert.True(t, g.IsCompact())
		assert.Nil(t, g.EdgeIDs)
		src, _, err := p.RMAT.Edges()
		require.NoError(t, err)
		assert.Less(t, g.NumEdges(), int64(len(src)), "%s: duplicates removed", name)
		assert.Greater(t, g.NumEdges(), int64(len(src))/2, "%s: most edges kept", name)

		var maxDeg int64
		row := make([]int64, 0)
		for v := range g.NumNodes {
			d := g.InDegree(v)
			maxDeg = max(maxDeg, d)
			row = slices.Grow(row[:0], int(d))[:d]
			g.CopySources(row, g.Indptr[v], g.Indptr[v+1])
			for _, u := range row {
				require.NotEqual(t, v, u, "%s: self-loop at %d", name, v)
			}
			slices.Sort(row)
			require.Equal(t, len(row), len(slices.Compact(row)), "%s: duplicate in row %d", name, v)
		}
		mean := float64(g.NumEdges()) / float64(g.NumNodes)
		t.Logf("%s: %d nodes, %d edges, mean degree %.1f, max degree %d", name, g.NumNodes, g.NumEdges(), mean, maxDeg)
		assert.Greater(t, float64(maxDeg), 10*mean, "%s: heavy tail", name)

		// Undirected: the graph is symmetric, so in-degree = out-degree.
		out := make([]int64, g.NumNodes)
		for p := range g.NumEdges() {
			out[g.Source(p)]++
		}
		for v := range g.NumNodes {
			require.Equal(t, g.InDegree(v), out[v])
		}
	}
}

func TestPermuteDecorrelatesDegree(t *testing.T) {
	r := preset(t, "tiny").RMAT
	r.Permute = false
	g, err := r.Graph()
	require.NoError(t, err)
	// Without permutation node 0 is the hub.
	var maxDeg int64
	for v := range g.NumNodes {
		maxDeg = max(maxDeg, g.InDegree(v))
	}
	assert.Equal(t, maxDeg, g.InDegree(0))
	r.Permute = true
	gp, err := r.Graph()
	require.NoError(t, err)
	assert.Less(t, gp.InDegree(0), maxDeg)
	assert.Equal(t, g.NumEdges(), gp.NumEdges(), "a relabelling keeps the edge count")
}

func TestGraphNonPowerOfTwo(t *testing.T) {
	r := RMAT{NumNodes: 3000, EdgeFactor: 8, A: DefaultA, B: DefaultB, C: DefaultC, Seed: 5, Undirected: true, Permute: true}
	g, err := r.Graph()
	require.NoError(t, err)
	require.NoError(t, g.Validate())
	assert.Equal(t, int64(3000), g.NumNodes)
	// Ids up to N-1 are used (no id is starved by the rejection).
	var isolated int
	for v := range g.NumNodes {
		if g.InDegree(v) == 0 {
			isolated++
		}
	}
	assert.Less(t, isolated, 1500)
}

func TestFeatures(t *testing.T) {
	f := Features{Dim: 24, NumClasses: 6, Seed: 11}
	const n = 50000
	var refFeat mem.Tensor
	var refLab []int64
	for _, th := range []int{1, 2, 8} {
		f.Threads = th
		feat, lab, err := f.Generate(n)
		require.NoError(t, err)
		assert.Equal(t, mem.Float32, feat.DType)
		assert.Equal(t, []int64{n, 24}, feat.Shape)
		assert.Len(t, feat.Data, n*24*4)
		assert.Len(t, lab, n)
		if refLab == nil {
			refFeat, refLab = feat, lab
			continue
		}
		assert.Equal(t, refFeat.Data, feat.Data, "threads=%d", th)
		assert.Equal(t, refLab, lab, "threads=%d", th)
	}
	// Every class appears, roughly uniformly.
	count := make([]int, 6)
	for _, l := range refLab {
		require.True(t, l >= 0 && l < 6)
		count[l]++
	}
	for c, k := range count {
		assert.InDelta(t, n/6, k, n/60, "class %d", c)
	}
	// Learnable: the nearest class mean (estimated from half the nodes)
	// predicts the label of the other half well.
	x := mem.Float32s(refFeat.Data)
	means := make([]float64, 6*24)
	for v := 0; v < n/2; v++ {
		for j := range 24 {
			means[int(refLab[v])*24+j] += float64(x[v*24+j])
		}
	}
	for c := range 6 {
		for j := range 24 {
			means[c*24+j] /= float64(count[c]) / 2
		}
	}
	correct := 0
	for v := n / 2; v < n; v++ {
		best, bestD := -1, math.Inf(1)
		for c := range 6 {
			var d float64
			for j := range 24 {
				e := float64(x[v*24+j]) - means[c*24+j]
				d += e * e
			}
			if d < bestD {
				best, bestD = c, d
			}
		}
		if int64(best) == refLab[v] {
			correct++
		}
	}
	acc := float64(correct) / (n / 2)
	t.Logf("nearest-mean accuracy %.3f", acc)
	assert.Greater(t, acc, 0.6)
	assert.Less(t, acc, 0.9999, "not trivially separable")

	// Other types carry the same values, rounded.
	for _, dt := range []mem.DType{mem.Float64, mem.Float16, mem.BFloat16} {
		f.DType, f.Threads = dt, 3
		feat, lab, err := f.Generate(1000)
		require.NoError(t, err)
		assert.Equal(t, refLab[:1000], lab)
		assert.Equal(t, dt, feat.DType)
		assert.Len(t, feat.Data, 1000*24*dt.Size())
	}
	f.DType = mem.Int32
	_, _, err := f.Generate(10)
	assert.ErrorContains(t, err, "DType")
	_, _, err = Features{Dim: 0, NumClasses: 2}.Generate(10)
	assert.ErrorContains(t, err, "Dim")
	_, _, err = Features{Dim: 2, NumClasses: 0}.Generate(10)
	assert.ErrorContains(t, err, "NumClasses")
	_, _, err = Features{Dim: 2, NumClasses: 2}.Generate(-1)
	assert.ErrorContains(t, err, "numNodes")
	feat, lab, err := Features{Dim: 2, NumClasses: 2}.Generate(0)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 2}, feat.Shape)
	assert.Empty(t, lab)
}

func TestHalfConversions(t *testing.T) {
	for _, c := range []struct {
		x   float32
		f16 uint16
		bf  uint16
	}{
		{0, 0, 0},
		{1, 0x3c00, 0x3f80},
		{-2, 0xc000, 0xc000},
		{0.5, 0x3800, 0x3f00},
		{65504, 0x7bff, 0x4780},
		{1e6, 0x7c00, 0x4974},
		{float32(math.Inf(-1)), 0xfc00, 0xff80},
		{5.960464477539063e-08, 0x0001, 0x3380}, // smallest half subnormal
		{1e-9, 0, 0x3089},
		{1.0009765625, 0x3c01, 0x3f80},     // 1 + 2^-10
		{1.00048828125, 0x3c00, 0x3f80},    // 1 + 2^-11: tie, to even
		{1.00146484375, 0x3c02, 0x3f80},    // 1 + 3*2^-11: tie, to even (up)
		{3.0517578125e-05, 0x0200, 0x3800}, // 2^-15: half subnormal
	} {
		assert.Equal(t, c.f16, toFloat16(c.x), "float16(%g)", c.x)
		assert.Equal(t, c.bf, toBFloat16(c.x), "bfloat16(%g)", c.x)
	}
	assert.Equal(t, uint16(0x7e00), toFloat16(float32(math.NaN()))&0x7e00)
}

func TestPresets(t *testing.T) {
	ps := Presets()
	for _, name := range []string{"tiny", "small", "products-like", "papers-like"} {
		p, ok := ps[name]
		require.True(t, ok, name)
		assert.Equal(t, name, p.Name)
		assert.True(t, p.RMAT.Undirected && p.RMAT.Permute, name)
		assert.NotZero(t, p.RMAT.N(), name)
	}
	assert.Equal(t, int64(1<<10), ps["tiny"].RMAT.N())
	assert.Equal(t, int64(1<<16), ps["small"].RMAT.N())
	pr := ps["products-like"]
	assert.InDelta(t, 2.4e6, float64(pr.RMAT.N()), 0.1e6)
	assert.InDelta(t, 120e6, float64(2*pr.RMAT.NumGenerated()), 20e6)
	assert.Equal(t, 100, pr.Features.Dim)
	assert.Equal(t, 47, pr.Features.NumClasses)
	pa := ps["papers-like"]
	assert.Equal(t, 128, pa.Features.Dim)
	assert.Equal(t, 172, pa.Features.NumClasses)
	assert.InDelta(t, 4e6, float64(pa.RMAT.N()), 0.1e6)
}

func TestBuildWriteOpen(t *testing.T) {
	p := preset(t, "tiny")
	d, err := Build(p)
	require.NoError(t, err)
	n := d.Graph.NumNodes
	require.Equal(t, int64(1024), n)

	// Masks partition the nodes with the preset's fractions.
	tr, va, te := d.NodeData[dataset.TrainMaskKey].Data, d.NodeData[dataset.ValMaskKey].Data, d.NodeData[dataset.TestMaskKey].Data
	var nt, nv, ns int
	for v := range n {
		require.Equal(t, byte(1), tr[v]+va[v]+te[v], "node %d in exactly one split", v)
		nt += int(tr[v])
		nv += int(va[v])
		ns += int(te[v])
	}
	assert.Equal(t, int(math.Round(0.6*1024)), nt)
	assert.Equal(t, int(math.Round(0.2*1024)), nv)
	assert.Equal(t, 1024-nt-nv, ns)
	// Train nodes are spread over the ids, not a prefix.
	assert.NotEqual(t, nt, int(sumBytes(tr[:nt])))

	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, d))
	got, err := dataset.Open(dir)
	require.NoError(t, err)
	defer got.Close()
	assert.Equal(t, "tiny", got.Meta.Name)
	assert.Equal(t, int64(8), got.Meta.NumClasses)
	assert.True(t, json.Valid(got.Meta.Source))
	assert.Equal(t, d.Graph.NumNodes, got.Graph.NumNodes)
	assert.Equal(t, d.Graph.Indptr, got.Graph.Indptr)
	assert.Equal(t, d.Graph.Wide().Indices, got.Graph.Wide().Indices)
	for _, k := range []string{dataset.FeatKey, dataset.LabelKey, dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
		want, have := d.NodeData[k], got.NodeData[k]
		assert.Equal(t, want.DType, have.DType, k)
		assert.Equal(t, want.Shape, have.Shape, k)
		assert.Equal(t, want.Data, have.Data, k)
	}

	// Build is deterministic.
	d2, err := Build(p)
	require.NoError(t, err)
	assert.Equal(t, d.NodeData[dataset.FeatKey].Data, d2.NodeData[dataset.FeatKey].Data)
	assert.Equal(t, d.NodeData[dataset.TrainMaskKey].Data, d2.NodeData[dataset.TrainMaskKey].Data)

	// Bad splits are refused.
	bad := p
	bad.TrainFraction, bad.ValFraction = 0.8, 0.3
	_, err = Build(bad)
	assert.ErrorContains(t, err, "<= 1")
	bad.TrainFraction = -1
	_, err = Build(bad)
	assert.ErrorContains(t, err, "TrainFraction")
	bad = p
	bad.RMAT.A = 2
	_, err = Build(bad)
	assert.Error(t, err)
}

func sumBytes(b []byte) int64 {
	var s int64
	for _, x := range b {
		s += int64(x)
	}
	return s
}

// BenchmarkRMATProductsLikeEdges generates 10% of the products-like edges
// (the full node range, a tenth of the edge factor).
func BenchmarkRMATProductsLikeEdges(b *testing.B) {
	r := preset(b, "products-like").RMAT
	r.EdgeFactor /= 10
	edges := float64(r.NumGenerated())
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, _, err := r.Edges(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(edges*float64(b.N)/time.Since(start).Seconds(), "edges/s")
}

// The streamed presets: papers100M-like has ogbn-papers100M's shape.
func TestStreamedPresets(t *testing.T) {
	p := preset(t, "papers100M-like")
	require.True(t, p.Streamed)
	assert.Equal(t, int64(111059956), p.RMAT.N())
	assert.InDelta(t, 1.6e9, float64(2*p.RMAT.NumGenerated()), 0.1e9)
	assert.Equal(t, 128, p.Features.Dim)
	assert.Equal(t, mem.Float32, p.Features.DType)
	assert.Equal(t, int64(56862697472), p.RMAT.N()*int64(p.Features.Dim)*4) // 57 GB of features
	assert.InDelta(t, 1.2e6, p.TrainFraction*float64(p.RMAT.N()), 0.05e6)
	d := preset(t, "disk-small")
	assert.Equal(t, int64(4096000000), d.RMAT.N()*int64(d.Features.Dim)*4)
	_, err := Build(d)
	require.ErrorContains(t, err, "WriteStreamed")
}

// WriteStreamed at a small scale (many destination ranges, many feature
// pieces, two thread counts) writes Build's dataset: the same features,
// labels and masks, and every neighbourhood as a sorted set; opening it
// maps the CSC files.
func TestWriteStreamedEqualsBuild(t *testing.T) {
	p := preset(t, "disk-small")
	p.Streamed = false
	p.RMAT = graph500(9, 0, 3000, 5)
	p.Features.Dim = 8
	want, err := Build(p)
	require.NoError(t, err)
	for _, threads := range []int{1, 3} {
		p.RMAT.Threads, p.Features.Threads = threads, threads
		dir := t.TempDir()
		require.NoError(t, WriteStreamed(p, dir, StreamOptions{EdgeBuffer: 4 * 2000, FeatureRows: 700}))
		got, err := dataset.Open(dir)
		require.NoError(t, err)
		require.True(t, got.TopologyMapped())
		for _, k := range []string{dataset.FeatKey, dataset.LabelKey, dataset.TrainMaskKey, dataset.ValMaskKey, dataset.TestMaskKey} {
			require.Equal(t, want.NodeData[k].Data, got.NodeData[k].Data, k)
		}
		wg, gg := want.Graph, got.Graph
		require.Equal(t, wg.NumEdges(), gg.NumEdges())
		for v := range wg.NumNodes {
			a := slices.Clone(wg.Indices32[wg.Indptr[v]:wg.Indptr[v+1]])
			slices.Sort(a)
			require.Equal(t, a, gg.Indices32[gg.Indptr[v]:gg.Indptr[v+1]], "node %d", v)
		}
		require.NoError(t, got.Close())
	}
}

// TestGenerateOutputFolder (issue 34): generating into a folder with files
// is refused naming it; with overwrite, a dataset already there is
// replaced (its typed arrays too) and other files stay.
func TestGenerateOutputFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Generate(preset(t, "hetero-tiny"), dir, false))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("mine"), 0o644))
	typed, err := os.ReadDir(dir)
	require.NoError(t, err)
	err = Generate(preset(t, "tiny"), dir, false)
	require.ErrorContains(t, err, "generate: the output folder "+dir+" holds a dataset or a partition")
	require.NoError(t, Generate(preset(t, "tiny"), dir, true))
	ds, err := dataset.OpenWith(dir, dataset.OpenOptions{VerifyChecksums: true})
	require.NoError(t, err)
	require.Empty(t, ds.Meta.NodeTypes)
	require.NoError(t, ds.Close())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"README", dataset.EdgesFile, dataset.FeatFile, dataset.FeatFile + ".pages", dataset.MetaFile, dataset.NodesFile}, names)
	require.Greater(t, len(typed), len(names), "the typed arrays went")
}

package gen

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/mem"
)

// buildTiny builds hetero-tiny with the given seed (0: the preset's) and
// thread count.
func buildTiny(t *testing.T, seed uint64, threads int) *dataset.Dataset {
	t.Helper()
	p := preset(t, "hetero-tiny")
	if seed != 0 {
		p.RMAT.Seed, p.Features.Seed = seed, seed
	}
	p.RMAT.Threads, p.Features.Threads = threads, threads
	start := time.Now()
	d, err := Build(p)
	require.NoError(t, err)
	t.Logf("hetero-tiny (seed %d, %d threads): %d nodes, %d edges in %v", seed, threads, d.Graph.NumNodes, d.Graph.NumEdges(), time.Since(start))
	return d
}

func TestHeteroDeterministicAcrossThreads(t *testing.T) {
	ref := buildTiny(t, 0, 1)
	for _, th := range []int{2, 7} {
		d := buildTiny(t, 0, th)
		require.Equal(t, ref.Meta, d.Meta, "threads=%d", th)
		require.Equal(t, ref.Graph.Wide(), d.Graph.Wide(), "threads=%d", th)
		require.Equal(t, ref.NodeData, d.NodeData, "threads=%d", th)
		require.Equal(t, ref.EdgeData, d.EdgeData, "threads=%d", th)
	}
	other := buildTiny(t, 99, 2)
	assert.NotEqual(t, ref.Graph.Wide().Indices, other.Graph.Wide().Indices, "another seed, another graph")
	assert.NotEqual(t, ref.NodeData["paper/feat"].Data, other.NodeData["paper/feat"].Data)
}

func TestHeteroTypesAndData(t *testing.T) {
	d := buildTiny(t, 0, 0)
	ty, err := d.Types()
	require.NoError(t, err)
	require.NotNil(t, ty)
	require.NoError(t, ty.CheckGraph(d.Graph), "edges typed and grouped by relation")
	names := func() (out []string) {
		for _, nt := range ty.NodeTypes {
			out = append(out, nt.Name)
		}
		return out
	}()
	assert.Equal(t, []string{"author", "field_of_study", "institution", "paper"}, names)
	require.Len(t, ty.EdgeTypes, 7)
	assert.True(t, slices.IsSortedFunc(ty.EdgeTypes, func(a, b fileformat.EdgeType) int {
		if a.Src+"\x00"+a.Rel+"\x00"+a.Dst < b.Src+"\x00"+b.Rel+"\x00"+b.Dst {
			return -1
		}
		return 1
	}), "relations in DGL's canonical order")
	for r, et := range ty.EdgeTypes {
		assert.Positive(t, et.NumEdges, "relation %d %v", r, et)
	}
	// Reverse relations hold exactly the reversed edges.
	edges := map[[3]string]map[[2]int64]bool{}
	g := d.Graph
	for v := range g.NumNodes {
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			id := g.EdgeID(p)
			for ri := range ty.EdgeTypes {
				if id >= ty.EdgeOffsets[ri] && id < ty.EdgeOffsets[ri+1] {
					et := ty.EdgeTypes[ri]
					key := [3]string{et.Src, et.Rel, et.Dst}
					if edges[key] == nil {
						edges[key] = map[[2]int64]bool{}
					}
					pair := [2]int64{g.Source(p), v}
					assert.False(t, edges[key][pair], "duplicate edge %v in %v", pair, key)
					assert.NotEqual(t, pair[0], pair[1], "self-loop in %v", key)
					edges[key][pair] = true
				}
			}
		}
	}
	for key, set := range edges {
		if len(key[1]) > 4 && key[1][:4] == "rev_" {
			fwd := edges[[3]string{key[2], key[1][4:], key[0]}]
			require.Len(t, set, len(fwd), "%v", key)
			for pair := range set {
				assert.True(t, fwd[[2]int64{pair[1], pair[0]}], "%v: %v has no forward edge", key, pair)
			}
		}
	}
	for pair := range edges[[3]string{"paper", "cites", "paper"}] {
		assert.True(t, edges[[3]string{"paper", "cites", "paper"}][[2]int64{pair[1], pair[0]}], "cites stored both ways")
	}

	// Node data per type, with each type's width and row count.
	widths := map[string]int64{"author": 8, "field_of_study": 4, "institution": 4, "paper": 16}
	for _, nt := range ty.NodeTypes {
		f, ok := d.NodeData[nt.Name+"/feat"]
		require.True(t, ok, nt.Name)
		assert.Equal(t, []int64{nt.NumNodes, widths[nt.Name]}, f.Shape, nt.Name)
		assert.Equal(t, mem.Float32, f.DType)
	}
	pi := ty.NodeTypeIndex("paper")
	np := ty.NodeTypes[pi].NumNodes
	labels := mem.Int64s(d.NodeData["paper/label"].Data)
	require.Len(t, labels, int(np))
	global := mem.Int64s(d.NodeData["label"].Data)
	for v := range g.NumNodes {
		if v >= ty.NodeOffsets[pi] && v < ty.NodeOffsets[pi+1] {
			assert.Equal(t, labels[v-ty.NodeOffsets[pi]], global[v])
			assert.True(t, global[v] >= 0 && global[v] < 4)
		} else {
			assert.Equal(t, int64(-1), global[v], "unlabelled node %d", v)
		}
	}
	var split [3]int64
	for k, name := range []string{"paper/train_mask", "paper/val_mask", "paper/test_mask"} {
		for _, b := range d.NodeData[name].Data {
			split[k] += int64(b)
		}
	}
	assert.Equal(t, np, split[0]+split[1]+split[2], "every paper in exactly one split")
	assert.InDelta(t, 0.6*float64(np), float64(split[0]), 1)

	// Timestamps: paper years in range, other nodes no later than their
	// papers, edges no earlier than their ends.
	nodeTime := mem.Int64s(d.NodeData["time"].Data)
	for v := ty.NodeOffsets[pi]; v < ty.NodeOffsets[pi+1]; v++ {
		assert.True(t, nodeTime[v] >= 2000 && nodeTime[v] <= 2020, "paper %d year %d", v, nodeTime[v])
	}
	edgeTime := mem.Int64s(d.EdgeData["time"].Data)
	require.Len(t, edgeTime, int(g.NumEdges()))
	for v := range g.NumNodes {
		for p := g.Indptr[v]; p < g.Indptr[v+1]; p++ {
			u, id := g.Source(p), g.EdgeID(p)
			assert.Equal(t, max(nodeTime[u], nodeTime[v]), edgeTime[id])
		}
	}
}

func TestHeteroLabelsLearnable(t *testing.T) {
	// The paper features are centroid + noise like the homogeneous
	// presets': the nearest class mean (estimated on train) predicts the
	// test labels far above chance.
	d := buildTiny(t, 0, 0)
	f := mem.Float32s(d.NodeData["paper/feat"].Data)
	labels := mem.Int64s(d.NodeData["paper/label"].Data)
	train, test := d.NodeData["paper/train_mask"].Data, d.NodeData["paper/test_mask"].Data
	const dim, classes = 16, 4
	var mean [classes][dim]float64
	var cnt [classes]float64
	for i, l := range labels {
		if train[i] == 1 {
			cnt[l]++
			for j := range dim {
				mean[l][j] += float64(f[i*dim+j])
			}
		}
	}
	var right, all float64
	for i, l := range labels {
		if test[i] != 1 {
			continue
		}
		best, bd := 0, 1e300
		for c := range classes {
			var dd float64
			for j := range dim {
				x := float64(f[i*dim+j]) - mean[c][j]/max(cnt[c], 1)
				dd += x * x
			}
			if dd < bd {
				best, bd = c, dd
			}
		}
		all++
		if int64(best) == l {
			right++
		}
	}
	assert.Greater(t, right/all, 0.6, "nearest-centroid accuracy (chance 0.25)")
}

func TestHeteroWriteOpen(t *testing.T) {
	d := buildTiny(t, 0, 0)
	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, d))
	for _, verify := range []bool{false, true} {
		got, err := dataset.OpenWith(dir, dataset.OpenOptions{VerifyChecksums: verify})
		require.NoError(t, err)
		assert.Equal(t, d.Meta.NodeTypes, got.Meta.NodeTypes)
		assert.Equal(t, d.Meta.EdgeTypes, got.Meta.EdgeTypes)
		// Same edges with the same ids (the typed layout keeps them).
		want, have := d.Graph.Wide(), got.Graph.Wide()
		assert.Equal(t, want.Indptr, have.Indptr)
		assert.Equal(t, want.Indices, have.Indices)
		for p := range want.NumEdges() {
			require.Equal(t, want.EdgeID(p), have.EdgeID(p), "edge id at %d", p)
		}
		for name, tn := range d.NodeData {
			require.Contains(t, got.NodeData, name)
			assert.Equal(t, tn.Shape, got.NodeData[name].Shape, name)
			assert.Equal(t, tn.Data, got.NodeData[name].Data, name)
		}
		assert.Equal(t, d.EdgeData["time"].Data, got.EdgeData["time"].Data)
		require.NoError(t, got.Close())
		assert.NotContains(t, got.NodeData, "paper/feat", "unmapped on Close")
		assert.Empty(t, got.EdgeData)
	}
	assert.FileExists(t, dir+"/node.paper.feat.bin")
	assert.FileExists(t, dir+"/edge.time.bin")
}

func TestHeteroErrors(t *testing.T) {
	p := preset(t, "hetero-tiny")
	h := *p.Hetero
	h.LabelType = "venue"
	p.Hetero = &h
	_, err := Build(p)
	require.ErrorContains(t, err, `LabelType "venue"`)

	p = preset(t, "hetero-tiny")
	h = *p.Hetero
	h.Relations = append([]HeteroRelation(nil), h.Relations...)
	h.Relations[0].Undirected = true
	p.Hetero = &h
	_, err = Build(p)
	require.ErrorContains(t, err, "Undirected needs Src == Dst")
}

func TestHeteroPresetCounts(t *testing.T) {
	count := func(name string) (n int64) {
		for _, nt := range preset(t, name).Hetero.NodeTypes {
			n += nt.NumNodes
		}
		return n
	}
	assert.Equal(t, int64(947), count("hetero-tiny"))
	assert.Equal(t, int64(121234), count("hetero-small"))
	assert.Equal(t, int64(1939743), count("mag-like"), "ogbn-mag's node count")
}

// TestHeteroSmallSize builds hetero-small (about 1 s, 15 s under the race
// detector): GRAPHFERRY_BIG_TESTS=1 runs it.
func TestHeteroSmallSize(t *testing.T) {
	if testing.Short() || os.Getenv("GRAPHFERRY_BIG_TESTS") != "1" {
		t.Skip("builds hetero-small (~121K nodes); set GRAPHFERRY_BIG_TESTS=1")
	}
	p := preset(t, "hetero-small")
	start := time.Now()
	d, err := Build(p)
	require.NoError(t, err)
	t.Logf("hetero-small: %d nodes, %d edges in %v", d.Graph.NumNodes, d.Graph.NumEdges(), time.Since(start))
	assert.InDelta(t, 121e3, float64(d.Graph.NumNodes), 2e3)
	assert.InDelta(t, 2.5e6, float64(d.Graph.NumEdges()), 0.8e6)
}

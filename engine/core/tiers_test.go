package core

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rowcache"
	"github.com/graphferry/graphferry/engine/sample"
)

// tinyDataset writes the "tiny" preset to a temporary folder.
func tinyDataset(t *testing.T) (string, *dataset.Dataset) {
	t.Helper()
	ds, err := gen.Build(gen.Presets()["tiny"])
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, dataset.Write(dir, ds))
	return dir, ds
}

// epoch returns every batch's nodes and features of one epoch.
func epochOf(t *testing.T, g *Graph, hot bool) ([][]int64, [][]byte, pipeline.Stats) {
	t.Helper()
	seeds := make([]int64, 300)
	for i := range seeds {
		seeds[i] = int64(i * 3)
	}
	l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{5, 5}, Seed: 3},
		pipeline.Options{BatchSize: 64, Shuffle: true, Seed: 9, FeatureNames: []string{"feat"}, LabelNames: []string{"label"}}, nil)
	require.NoError(t, err)
	defer l.Close()
	if hot {
		_, err := l.SetCache(context.Background(), CacheOptions{Policy: CacheByInDegree, Size: cache.Size{Fraction: 0.1}})
		require.NoError(t, err)
	}
	require.NoError(t, l.Start(0))
	var nodes [][]int64
	var feats [][]byte
	for {
		b, err := l.Next(context.Background())
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		nodes = append(nodes, append([]int64(nil), mem.Int64s(b.Nodes.Data)...))
		feats = append(feats, append([]byte(nil), b.NodeData["feat"].Data...))
		b.Release()
	}
	return nodes, feats, l.Stats()
}

// A dataset opened with its features on the disk tier gives the batches of
// the memory map, node data included, with and without renumbering, with
// and without a hot tier above; the statistics count the CPU cache's hits
// and the disk's rows.
func TestDiskTierLoaderEqualsMapping(t *testing.T) {
	dir, ds := tinyDataset(t)
	for name, popt := range map[string]partition.Options{
		"range1":  {NumPatches: 1},
		"random3": {Method: partition.Random, NumPatches: 3, Seed: 5},
	} {
		t.Run(name, func(t *testing.T) {
			mapped, err := Open(dir, popt, graph.COOOptions{}, dataset.OpenOptions{})
			require.NoError(t, err)
			defer mapped.Close()
			require.Equal(t, TierMemory, mapped.Plan().FeatureTier)
			wantNodes, wantFeats, _ := epochOf(t, mapped, false)
			for _, pol := range []rowcache.Policy{rowcache.S3FIFO, rowcache.SIEVE, rowcache.LRU} {
				for _, hot := range []bool{false, true} {
					g, err := OpenWith(dir, popt, graph.COOOptions{}, OpenOptions{FeatureTier: TierDisk, CacheBytes: 20000, CachePolicy: pol})
					require.NoError(t, err)
					p := g.Plan()
					require.Equal(t, TierDisk, p.FeatureTier)
					require.Equal(t, pol, p.CachePolicy)
					require.Contains(t, p.Report(), "on disk")
					nodes, feats, st := epochOf(t, g, hot)
					require.Equal(t, wantNodes, nodes)
					require.Equal(t, wantFeats, feats)
					tc := st.Total.Gathered
					require.Positive(t, tc.DiskRows)
					require.Positive(t, tc.CacheRows)
					require.Equal(t, tc.ColdRows-300, tc.CacheRows+tc.DiskRows) // the 300 label rows are read from memory
					require.Equal(t, hot, tc.HotRows > 0)
					require.Positive(t, tc.DiskRequests)
					// Whole-array reads still come from the mapping, in
					// original order.
					got, err := g.NodeData("feat", nil)
					require.NoError(t, err)
					require.Equal(t, ds.NodeData["feat"].Data, got.Data)
					require.NoError(t, g.Close())
				}
			}
		})
	}
}

// The budget decides: enough for everything maps the features; less puts
// them on disk with what is left as the CPU cache; the plan says so.
func TestMemoryBudgetPlan(t *testing.T) {
	dir, ds := tinyDataset(t)
	feat := int64(len(ds.NodeData["feat"].Data))
	open := func(budget int64) Plan {
		g, err := OpenWith(dir, partition.Options{}, graph.COOOptions{}, OpenOptions{MemoryBudget: budget})
		require.NoError(t, err)
		defer g.Close()
		return g.Plan()
	}
	p := open(1 << 40)
	require.Equal(t, TierMemory, p.FeatureTier)
	require.Equal(t, feat, p.Features)
	require.Contains(t, p.Report(), "memory-mapped")
	require.Contains(t, p.Report(), "fit in the budget")
	resident := p.Topology + p.NodeColumns + p.Sampling
	require.Positive(t, p.Topology)
	require.Positive(t, p.NodeColumns)

	p = open(resident + feat/2)
	require.Equal(t, TierDisk, p.FeatureTier)
	require.Contains(t, p.Report(), "exceed the budget")
	require.InDelta(t, float64(feat/2), float64(p.CacheBytes), float64(feat)/50)
	require.LessOrEqual(t, p.CacheBytes, feat/2)
	require.Equal(t, rowcache.S3FIFO, p.CachePolicy)

	p = open(resident / 2) // below the resident part: no cache, still on disk
	require.Equal(t, TierDisk, p.FeatureTier)
	require.Zero(t, p.CacheBytes)

	_, err := OpenWith(dir, partition.Options{}, graph.COOOptions{}, OpenOptions{MemoryBudget: -1})
	require.Error(t, err)
	require.Equal(t, Plan{NumNodes: 1}, func() Plan {
		g, err := New(&graph.CSC{NumNodes: 1, Indptr: []int64{0, 0}}, partition.Options{})
		require.NoError(t, err)
		defer g.Close()
		return g.Plan()
	}())
}

// A dataset with CSC files samples from them mapped (one patch, range: the
// partition does not copy them) with the batches of the built graph; the
// plan counts the topology as mapped, not resident; several patches copy
// it (renumbered) and count it resident.
func TestMappedTopology(t *testing.T) {
	dir, _ := tinyDataset(t)
	built, err := Open(dir, partition.Options{NumPatches: 1}, graph.COOOptions{}, dataset.OpenOptions{})
	require.NoError(t, err)
	wantNodes, wantFeats, _ := epochOf(t, built, false)
	require.False(t, built.Plan().TopologyMapped)
	require.NoError(t, built.Close())

	require.NoError(t, dataset.WriteCSC(dir))
	g, err := OpenWith(dir, partition.Options{NumPatches: 1}, graph.COOOptions{}, OpenOptions{MemoryBudget: 1 << 40})
	require.NoError(t, err)
	p := g.Plan()
	require.True(t, p.TopologyMapped)
	require.Positive(t, p.Topology)
	require.Contains(t, p.Report(), "mapped from the dataset's CSC files")
	nodes, feats, _ := epochOf(t, g, true)
	require.Equal(t, wantNodes, nodes)
	require.Equal(t, wantFeats, feats)
	require.NoError(t, g.Close())

	g, err = OpenWith(dir, partition.Options{Method: partition.Random, NumPatches: 3, Seed: 5}, graph.COOOptions{}, OpenOptions{})
	require.NoError(t, err)
	require.False(t, g.Plan().TopologyMapped)
	require.NoError(t, g.Close())
}

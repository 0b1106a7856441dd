package sample

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/stretchr/testify/require"
)

// compactPartition returns a copy of p whose graph holds its sources as
// int32 (Indices32), sharing everything else.
func compactPartition(t testing.TB, p *partition.Partitioned) *partition.Partitioned {
	t.Helper()
	c := *p
	c.Graph = p.Graph.Compact()
	require.True(t, c.Graph.IsCompact())
	require.Nil(t, c.Graph.Indices)
	require.NoError(t, c.Graph.Validate())
	return &c
}

// TestStorageBitIdentical samples every scheme (node-wise uniform, with
// replacement, biased; layer-wise with and without replacement; random walk;
// excluded edges) on the same graphs held with int64 and with int32 sources,
// and requires identical results, batch by batch, on the identity and on a
// renumbered layout, with explicit and with implicit (position) edge ids.
func TestStorageBitIdentical(t *testing.T) {
	withGrains(t, 5, 2)
	g, batches, keys, exclude := schemeFixture()
	r := rand.New(rand.NewPCG(21, 22))
	// The same weighted graph with nil EdgeIDs (edge id == position).
	implicit := withWeights(r, randomGraph(r, 300, 6000, false))
	require.Nil(t, implicit.EdgeIDs)
	var implicitExclude []int64
	for id := range implicit.NumEdges() {
		if r.IntN(4) == 0 {
			implicitExclude = append(implicitExclude, id)
		}
	}

	var cs []schemeConfig
	for _, c := range configs() {
		cs = append(cs, schemeConfig{name: "uniform/" + c.name, opt: c.opt})
	}
	cs = append(cs, schemeConfigs(exclude)...)
	layouts := func(g *graph.CSC) map[string]*partition.Partitioned {
		assign := make([]int, g.NumNodes)
		for v := range assign {
			assign[v] = r.IntN(3)
		}
		return map[string]*partition.Partitioned{
			"P=1":            rangePartition(g, 1),
			"P=3":            rangePartition(g, 3),
			"renumbered P=3": renumbered(g, assign, 3),
		}
	}
	for gi, gr := range []*graph.CSC{g, implicit} {
		gBatches, gKeys := batches, keys
		if gi == 1 {
			gBatches, gKeys = randomBatches(r, gr.NumNodes, 5, 25)
		}
		ls := layouts(gr)
		for _, c := range cs {
			if gi == 1 && c.opt.ExcludeEdges != nil {
				c.opt.ExcludeEdges = implicitExclude
			}
			for name, wide := range ls {
				t.Run(fmt.Sprintf("g%d/%s/%s", gi, c.name, name), func(t *testing.T) {
					require.False(t, wide.Graph.IsCompact())
					ref := runScheme(t, wide, c, c.opt, gBatches, gKeys, false)
					checkSchemeRun(t, gr, c, gBatches, ref)
					got := runScheme(t, compactPartition(t, wide), c, c.opt, gBatches, gKeys, false)
					require.Equal(t, ref, got)
				})
			}
		}
	}
}

// TestStorageThroughPartitionBuild checks that partition.Build output (int32
// sources) samples exactly like the hand-built int64 layout of the same
// numbering.
func TestStorageThroughPartitionBuild(t *testing.T) {
	g, batches, keys, exclude := schemeFixture()
	part, err := partition.Build(g, partition.Options{Method: partition.Random, NumPatches: 3, Seed: 5})
	require.NoError(t, err)
	require.True(t, part.Graph.IsCompact())
	wide := *part
	wide.Graph = part.Graph.Wide()
	require.False(t, wide.Graph.IsCompact())
	for _, c := range append(schemeConfigs(exclude), schemeConfig{name: "uniform", opt: options{Fanouts: []int{5, 3}, Seed: 1}}) {
		ref := runScheme(t, &wide, c, c.opt, batches, keys, false)
		got := runScheme(t, part, c, c.opt, batches, keys, false)
		require.Equal(t, ref, got, c.name)
		checkSchemeRun(t, g, c, batches, got)
	}
}

package subload_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/stattest"
	"github.com/graphferry/graphferry/engine/subload"
)

// typedGraph builds a typed graph from per-relation edge lists (type-local
// ids) over node types of the given sizes, relation r going from types
// rels[r][0] to rels[r][1], in patches patches (random, so that internal
// ids differ from original ones).
func typedGraph(t *testing.T, sizes []int64, rels [][2]int32, edges [][][2]int64, patches int) (*partition.Partitioned, *graph.Types) {
	t.Helper()
	types := &graph.Types{NodeOffsets: []int64{0}, EdgeOffsets: []int64{0}}
	for _, n := range sizes {
		types.NodeOffsets = append(types.NodeOffsets, types.NodeOffsets[len(types.NodeOffsets)-1]+n)
	}
	var src, dst []int64
	for r, list := range edges {
		for _, e := range list {
			src = append(src, types.NodeOffsets[rels[r][0]]+e[0])
			dst = append(dst, types.NodeOffsets[rels[r][1]]+e[1])
		}
		types.EdgeOffsets = append(types.EdgeOffsets, int64(len(src)))
		types.RelSrc = append(types.RelSrc, rels[r][0])
		types.RelDst = append(types.RelDst, rels[r][1])
	}
	n := types.NodeOffsets[len(sizes)]
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: n})
	require.NoError(t, err)
	p, err := partition.Build(g, partition.Options{Method: partition.Random, NumPatches: patches, Seed: 3})
	require.NoError(t, err)
	require.NoError(t, types.Validate(p.Graph, p.NewToOld))
	return p, types
}

// hgtFixture: papers (type 0, 30) cite papers, authors (type 1, 12) write
// papers and papers are written by authors.
func hgtFixture(t *testing.T, patches int) (*partition.Partitioned, *graph.Types, [][][2]int64) {
	var cites, writes, by [][2]int64
	for i := int64(0); i < 30; i++ {
		cites = append(cites, [2]int64{(i * 7) % 30, i}, [2]int64{(i*11 + 3) % 30, i})
		a := (i * 5) % 12
		writes = append(writes, [2]int64{a, i})
		by = append(by, [2]int64{i, a})
	}
	edges := [][][2]int64{cites, writes, by}
	p, types := typedGraph(t, []int64{30, 12}, [][2]int32{{0, 0}, {1, 0}, {0, 1}}, edges, patches)
	return p, types, edges
}

func hgtBatch(t *testing.T, s *subload.Source, pos []int64, key uint64) *pipeline.Batch {
	t.Helper()
	b, res, err := s.Make(context.Background(), pos, key, nil)
	require.NoError(t, err)
	require.Equal(t, mem.Int64s(b.HopCounts.Data), res.HopCounts)
	return b
}

// An HGT batch: its seeds first, then at most num_samples[h][t] nodes of
// each type per hop, never a node twice, its input index the items'
// positions, and every edge among its nodes (COO and one block, the same
// edges); the same batch for any patches.
func TestHGTBatchIsItsDrawInduced(t *testing.T) {
	samples := [][]int{{3, 2}, {4, 1}}
	var want [][]int64
	for _, patches := range []int{1, 3} {
		p, types, edges := hgtFixture(t, patches)
		seeds := []int64{0, 5, 9, 17, 28}
		s, err := subload.NewHGT(p, types, seeds, subload.Options{NumSamples: samples})
		require.NoError(t, err)
		var got [][]int64
		for key := range uint64(20) {
			pos := []int64{int64(key % 5), int64((key + 2) % 5)}
			b := hgtBatch(t, s, pos, key)
			nodes := slices.Clone(mem.Int64s(b.Nodes.Data))
			assert.Equal(t, []int64{seeds[pos[0]], seeds[pos[1]]}, nodes[:2], "seeds first")
			assert.Equal(t, pos, mem.Int64s(b.InputIndex.Data))
			assert.Equal(t, []int64{2, int64(len(nodes) - 2)}, mem.Int64s(b.HopCounts.Data))
			assert.Len(t, slices.Compact(slices.Sorted(slices.Values(nodes))), len(nodes), "distinct nodes")
			perType := map[int32]int{}
			for _, v := range nodes[2:] {
				perType[types.NodeType(v)]++
			}
			assert.LessOrEqual(t, perType[0], 3+4)
			assert.LessOrEqual(t, perType[1], 2+1)
			// every edge among the nodes, by destination in node order
			var expect [][3]int64
			for j, v := range nodes {
				for r, list := range edges {
					for k, e := range list {
						src := types.NodeOffsets[types.RelSrc[r]] + e[0]
						dst := types.NodeOffsets[types.RelDst[r]] + e[1]
						if i := slices.Index(nodes, src); dst == v && i >= 0 {
							expect = append(expect, [3]int64{int64(i), int64(j), types.EdgeOffsets[r] + int64(k)})
						}
					}
				}
			}
			gotEdges := coo(b)
			slices.SortStableFunc(gotEdges, func(a, b [3]int64) int { return cmpAll(a[1]-b[1], a[2]-b[2]) })
			slices.SortStableFunc(expect, func(a, b [3]int64) int { return cmpAll(a[1]-b[1], a[2]-b[2]) })
			if expect == nil {
				expect = [][3]int64{}
			}
			assert.Equal(t, expect, gotEdges)
			require.Len(t, b.Blocks, 1)
			blk := b.Blocks[0]
			assert.EqualValues(t, len(nodes), blk.NumDst)
			indptr, indices, ids := mem.Int64s(blk.Indptr.Data), mem.Int64s(blk.Indices.Data), mem.Int64s(blk.EdgeIDs.Data)
			var fromBlock [][3]int64
			for j := range int64(len(nodes)) {
				for k := indptr[j]; k < indptr[j+1]; k++ {
					fromBlock = append(fromBlock, [3]int64{indices[k], j, ids[k]})
				}
			}
			assert.Equal(t, coo(b), append([][3]int64{}, fromBlock...), "the block holds the COO's edges, destination-major")
			require.NoError(t, b.SetTyped(types), "the pipeline's typed view splits it")
			got = append(got, nodes)
			b.Release()
		}
		if want == nil {
			want = got
		} else {
			assert.Equal(t, want, got, "the same batches whatever the patches")
		}
	}
}

// One hop, one author drawn among the in-neighbours of one paper seed:
// author a is drawn with probability budget(a)^2 / sum of budget^2, the
// budget of a being its share of the seed's in-edges of relation writes
// (a repeated edge counts twice); papers' budgets do not touch authors'.
func TestHGTDrawsBySquaredBudget(t *testing.T) {
	// paper 0 written by authors 0 (3 edges), 1 (2 edges), 2 (1 edge);
	// cited by papers 1, 2 (their budget is the papers' type's).
	writes := [][2]int64{{0, 0}, {1, 0}, {0, 0}, {2, 0}, {1, 0}, {0, 0}}
	cites := [][2]int64{{1, 0}, {2, 0}}
	p, types := typedGraph(t, []int64{3, 3}, [][2]int32{{0, 0}, {1, 0}}, [][][2]int64{cites, writes}, 2)
	s, err := subload.NewHGT(p, types, []int64{0}, subload.Options{NumSamples: [][]int{{0, 1}}})
	require.NoError(t, err)
	counts := make([]int, 3)
	const draws = 30000
	for key := range uint64(draws) {
		b := hgtBatch(t, s, []int64{0}, key)
		nodes := mem.Int64s(b.Nodes.Data)
		require.Len(t, nodes, 2)
		counts[nodes[1]-types.NodeOffsets[1]]++
		b.Release()
	}
	// budgets 3/6, 2/6, 1/6: squared 9:4:1
	stattest.CheckGOF(t, "HGT author draw", counts, []float64{9.0 / 14, 4.0 / 14, 1.0 / 14})

	// Two drawn without replacement: the pair {0, 1} first draw 0 then 1 or
	// 1 then 0: 9/14 * 4/5 + 4/14 * 9/10; {0, 2}: 9/14*1/5 + 1/14*9/13; {1, 2}: the rest.
	s2, err := subload.NewHGT(p, types, []int64{0}, subload.Options{NumSamples: [][]int{{0, 2}}})
	require.NoError(t, err)
	pairs := make([]int, 3)
	for key := range uint64(draws) {
		b := hgtBatch(t, s2, []int64{0}, key)
		nodes := slices.Clone(mem.Int64s(b.Nodes.Data)[1:])
		require.Len(t, nodes, 2)
		slices.Sort(nodes)
		switch [2]int64{nodes[0] - 3, nodes[1] - 3} {
		case [2]int64{0, 1}:
			pairs[0]++
		case [2]int64{0, 2}:
			pairs[1]++
		default:
			pairs[2]++
		}
		b.Release()
	}
	p01 := 9.0/14*4.0/5 + 4.0/14*9.0/10
	p02 := 9.0/14*1.0/5 + 1.0/14*9.0/13
	stattest.CheckGOF(t, "HGT author pairs", pairs, []float64{p01, p02, 1 - p01 - p02})
}

// A node with more than 50 in-edges in a relation gives budget through 50
// of them: drawing every candidate of hop 0 takes exactly 50 of its 120
// distinct in-neighbours, uniformly.
func TestHGTCapsAHubsBudgetAt50Edges(t *testing.T) {
	var in [][2]int64
	for u := int64(1); u <= 120; u++ {
		in = append(in, [2]int64{u, 0})
	}
	p, types := typedGraph(t, []int64{121}, [][2]int32{{0, 0}}, [][][2]int64{in}, 1)
	s, err := subload.NewHGT(p, types, []int64{0}, subload.Options{NumSamples: [][]int{{1000}}})
	require.NoError(t, err)
	hits := make([]int, 120)
	const draws = 3000
	for key := range uint64(draws) {
		b := hgtBatch(t, s, []int64{0}, key)
		nodes := mem.Int64s(b.Nodes.Data)
		require.Len(t, nodes, 51)
		for _, v := range nodes[1:] {
			hits[v-1]++
		}
		b.Release()
	}
	prob := make([]float64, 120)
	for i := range prob {
		prob[i] = 1.0 / 120
	}
	stattest.CheckGOF(t, "HGT hub's 50 of 120", hits, prob)
}

// A draw depends on the key only; different keys draw differently.
func TestHGTDependsOnTheKeyOnly(t *testing.T) {
	p, types, _ := hgtFixture(t, 2)
	s, err := subload.NewHGT(p, types, []int64{1, 2, 3}, subload.Options{NumSamples: [][]int{{2, 2}, {2, 2}}, Seed: 9})
	require.NoError(t, err)
	f, err := s.Fork(1)
	require.NoError(t, err)
	seen := map[string]bool{}
	for key := range uint64(12) {
		a, b := hgtBatch(t, s, []int64{0, 1, 2}, key), hgtBatch(t, f, []int64{0, 1, 2}, key)
		assert.Equal(t, mem.Int64s(a.Nodes.Data), mem.Int64s(b.Nodes.Data))
		seen[fmt.Sprint(mem.Int64s(a.Nodes.Data))] = true
		a.Release()
		b.Release()
	}
	assert.Greater(t, len(seen), 6, "keys draw differently")
}

func TestHGTArguments(t *testing.T) {
	p, types, _ := hgtFixture(t, 1)
	_, err := subload.NewHGT(p, nil, []int64{1}, subload.Options{})
	require.ErrorContains(t, err, "typed graph")
	_, err = subload.NewHGT(p, types, []int64{1}, subload.Options{NumSamples: [][]int{{1}}})
	require.ErrorContains(t, err, "2 node types")
	_, err = subload.NewHGT(p, types, []int64{1}, subload.Options{NumSamples: [][]int{{1, -1}}})
	require.ErrorContains(t, err, "num_samples[0][1] = -1")
	_, err = subload.NewHGT(p, types, []int64{1, 1}, subload.Options{})
	require.ErrorContains(t, err, "repeats seeds[0]")
	_, err = subload.NewHGT(p, types, []int64{42}, subload.Options{})
	require.ErrorContains(t, err, "out of range [0, 42)")
	_, err = subload.New(p, nil, subload.Options{Kind: subload.HGT})
	require.ErrorContains(t, err, "made by NewHGT")
}

package subload_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
	"github.com/graphferry/graphferry/engine/subload"
)

func runtime(t *testing.T, p *partition.Partitioned) *sample.Runtime {
	t.Helper()
	rt, err := sample.NewRuntime(p, comm.NewLocal(p.NumPatches()), sample.RuntimeOptions{})
	require.NoError(t, err)
	return rt
}

// A ShaDow batch is the sample made induced: the sample's nodes (seeds
// first), the edges among them; the same whatever the patches.
func TestKHopBatchIsTheSampleInduced(t *testing.T) {
	req := sample.Request{Fanouts: []int{2, 2}, Seed: 4}
	var want [][]int64
	for _, patches := range []int{1, 3} {
		p := parted(t, patches)
		s, err := subload.NewKHop(p, runtime(t, p), req, []int64{6, 2, 4, 0}, subload.Options{})
		require.NoError(t, err)
		var got [][]int64
		for key := range uint64(10) {
			b, res, err := s.Make(context.Background(), []int64{int64(key % 4), int64((key + 1) % 4)}, key, nil)
			require.NoError(t, err)
			nodes := slices.Clone(mem.Int64s(b.Nodes.Data))
			seeds := mem.Int64s(b.Seeds.Data)
			assert.Equal(t, seeds, nodes[:2], "seeds first")
			hops := mem.Int64s(b.HopCounts.Data)
			assert.EqualValues(t, 2, hops[0])
			assert.Equal(t, hops, res.HopCounts)
			expect := induced(nodes)
			slices.SortFunc(expect, func(a, b [3]int64) int { return cmpAll(a[0]-b[0], a[2]-b[2]) })
			if len(expect) == 0 {
				expect = [][3]int64{}
			}
			assert.Equal(t, expect, coo(b))
			got = append(got, nodes)
			b.Release()
		}
		if want == nil {
			want = got
		} else {
			assert.Equal(t, want, got)
		}
	}
}

// A disjoint request: every seed's subgraph of its own, its distinct
// nodes sorted, each edge in every subgraph holding both its ends.
func TestKHopDisjointSubgraphs(t *testing.T) {
	p := parted(t, 2)
	req := sample.Request{Fanouts: []int{3, 3}, Frontier: sample.FrontierNew, Disjoint: true, Seed: 2}
	s, err := subload.NewKHop(p, runtime(t, p), req, []int64{2, 2, 6}, subload.Options{Order: subload.BySrcThenDst})
	require.NoError(t, err)
	b, _, err := s.Make(context.Background(), []int64{0, 1, 2}, 7, nil)
	require.NoError(t, err)
	defer b.Release()
	nodes, owner := mem.Int64s(b.Nodes.Data), mem.Int64s(b.Batch.Data)
	require.Len(t, owner, len(nodes))
	var expect [][3]int64
	for sub := int64(0); sub < 3; sub++ {
		lo := slices.Index(owner, sub)
		hi := lo
		for hi < len(owner) && owner[hi] == sub {
			hi++
		}
		require.GreaterOrEqual(t, lo, 0, "every seed has its subgraph")
		part := nodes[lo:hi]
		assert.True(t, slices.IsSorted(part))
		assert.Equal(t, len(part), len(slices.Compact(slices.Clone(part))))
		assert.Contains(t, part, mem.Int64s(b.Seeds.Data)[sub])
		for _, e := range induced(part) {
			expect = append(expect, [3]int64{e[0] + int64(lo), e[1] + int64(lo), e[2]})
		}
	}
	slices.SortFunc(expect, func(a, b [3]int64) int { return cmpAll(a[0]-b[0], a[1]-b[1], a[2]-b[2]) })
	assert.Equal(t, expect, coo(b))
}

func TestKHopArguments(t *testing.T) {
	p := parted(t, 1)
	rt := runtime(t, p)
	_, err := subload.NewKHop(p, rt, sample.Request{Fanouts: []int{1}}, []int64{1, 1}, subload.Options{})
	require.ErrorContains(t, err, "repeats seeds[0]")
	_, err = subload.NewKHop(p, rt, sample.Request{Fanouts: []int{1}}, []int64{8}, subload.Options{})
	require.ErrorContains(t, err, "out of range [0, 8)")
	_, err = subload.NewKHop(p, nil, sample.Request{Fanouts: []int{1}}, nil, subload.Options{})
	require.ErrorContains(t, err, "runtime is nil")
	_, err = subload.New(p, nil, subload.Options{Kind: subload.KHop})
	require.ErrorContains(t, err, "made by NewKHop")
}

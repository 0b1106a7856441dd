package sample

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Zero hops (an empty fan-out list, PyG's num_neighbors=[]) with
// FrontierNew: every batch is its seeds alone, with no block, whatever the
// graph's patches, the request's scheme or whether it is typed, disjoint or
// temporal; FrontierAll (DGL's blocks, one per layer) still wants a hop.
func TestZeroHops(t *testing.T) {
	f := heteroGraph(t)
	batches, times, keys := heteroBatches()
	distinct := distinctBatches(batches)
	for name, p := range f.layouts(t) {
		rt := f.runtime(t, p, 2)
		cases := []struct {
			name     string
			req      Request
			batches  [][]int64
			times    [][]int64
			disjoint bool
		}{
			{"untyped", Request{Frontier: FrontierNew}, distinct, nil, false},
			{"typed", Request{Frontier: FrontierNew, RelationFanouts: [][]int{}, Fanouts: []int{3}}, distinct, nil, false},
			{"layer-wise", Request{Frontier: FrontierNew, Scheme: LayerWise}, distinct, nil, false},
			{"disjoint", Request{Frontier: FrontierNew, Disjoint: true}, batches, nil, true},
			{"temporal", Request{Frontier: FrontierNew, Disjoint: true, Temporal: TemporalNode}, batches, times, true},
		}
		for _, c := range cases {
			require.NoError(t, c.req.Validate(), c.name)
			in := toInternal(p, c.batches)
			res, err := rt.SampleTimed(context.Background(), c.req, in, c.times, keys)
			require.NoError(t, err, "%s: %s", name, c.name)
			for i, r := range res {
				require.Equal(t, in[i], r.Nodes, "%s: %s: batch %d's nodes are its seeds", name, c.name, i)
				require.Equal(t, []int64{int64(len(in[i]))}, r.HopCounts, "%s: %s", name, c.name)
				require.Empty(t, r.Blocks, "%s: %s", name, c.name)
				if c.disjoint {
					want := make([]int64, len(in[i]))
					for j := range want {
						want[j] = int64(j)
					}
					require.Equal(t, want, r.Batch, "%s: %s: each seed its own subgraph", name, c.name)
				} else {
					require.Nil(t, r.Batch)
				}
			}
			rt.Recycle(res...)
		}
	}
	// FrontierAll: at least one hop.
	require.EqualError(t, Request{}.Validate(), "sample: Request.Fanouts is empty (want one fan-out per hop)")
	require.ErrorContains(t, Request{RelationFanouts: [][]int{}}.Validate(), "RelationFanouts is empty")
	// Repeated seeds stay an error without Disjoint.
	rt := f.runtime(t, rangePartition(f.g, 1), 1)
	_, err := rt.Sample(context.Background(), Request{Frontier: FrontierNew}, [][]int64{{4, 4}}, keys[:1])
	require.ErrorContains(t, err, "duplicates")
}

package pipeline

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStartOrderedUsesTheCallersOrder: an epoch started with a caller's
// order batches the seeds in that order (batch i: order[i*B:(i+1)*B]),
// each batch sampled as the batch of the same seeds and key would be;
// resuming at k with the same order on a fresh pipeline gives exactly the
// rest, and bad orders are refused with the pipeline unchanged.
func TestStartOrderedUsesTheCallersOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, patches := range []int{1, 3} {
		f := newFixture(t, patches, patches > 1, defaultSample)
		seeds := seedRange(50)
		opt := defaultOpts()
		opt.BatchSize = 8 // 7 batches
		opt.Workers = 2
		order := make([]int64, len(seeds))
		for i, v := range r.Perm(len(seeds)) {
			order[i] = int64(v)
		}
		pl, err := New(f.s, f.p, f.store, seeds, opt, nil)
		require.NoError(t, err)
		const epoch = 4
		require.NoError(t, pl.StartOrdered(epoch, 0, order))
		got := drain(t, pl)
		require.Len(t, got, 7)
		var ref [][]any
		for i, b := range got {
			lo, hi := i*8, min(i*8+8, len(seeds))
			want := make([]int64, 0, hi-lo)
			for _, q := range order[lo:hi] {
				want = append(want, seeds[q])
			}
			require.Equal(t, want, i64(b.Seeds), "batch %d", i)
			require.Equal(t, order[lo:hi], i64(b.InputIndex), "batch %d", i)
			ref = append(ref, digest(b))
		}
		releaseAll(got)
		// the caller's order again: the same batches, bit for bit
		require.Equal(t, ref, func() [][]any {
			require.NoError(t, pl.StartOrdered(epoch, 0, order))
			bs := drain(t, pl)
			defer releaseAll(bs)
			out := make([][]any, len(bs))
			for i, b := range bs {
				out[i] = digest(b)
			}
			return out
		}())
		// bad orders: refused, nothing started
		for _, bad := range [][]int64{order[:10], append(slices.Clone(order[1:]), order[2]), append(slices.Clone(order[1:]), 50), append(slices.Clone(order[1:]), -1)} {
			require.Error(t, pl.StartOrdered(epoch, 0, bad))
		}
		require.ErrorContains(t, pl.StartOrdered(epoch, 0, append(slices.Clone(order[1:]), order[2])), "repeats")
		require.ErrorContains(t, pl.StartOrdered(epoch, 8, order), "want 0 <= first <=")
		require.NoError(t, pl.Close())

		// resumed at k on a fresh pipeline with the same order: the rest
		for _, k := range []int{0, 3, 7} {
			o := opt
			o.Workers = 1 + r.IntN(3)
			resumed, err := New(f.s, f.p, f.store, seeds, o, nil)
			require.NoError(t, err)
			require.NoError(t, resumed.StartOrdered(epoch, k, order))
			rest := drain(t, resumed)
			require.Len(t, rest, 7-k)
			for i, b := range rest {
				require.Equal(t, ref[k+i], digest(b))
			}
			releaseAll(rest)
			require.EqualValues(t, 7-k, resumed.Stats().Current.Sampler.Batches, "only the rest is sampled")
			require.NoError(t, resumed.Close())
		}
	}
}

// TestCOOEdgesBidirectionalAndInduced: the edge lists the sampler workers
// make for Options.COOEdges against the sampled edges of the same batch
// (SampledEdges) and the graph: bidirectional is every sampled edge and
// its reverse, one per pair, sorted by destination then source, a pair's
// id its last listing's; induced is InducedEdgeList of the batch's nodes.
func TestCOOEdgesBidirectionalAndInduced(t *testing.T) {
	for _, patches := range []int{1, 2} {
		f := newFixture(t, patches, patches > 1, defaultSample)
		seeds := seedRange(40)
		open := func(k COOEdges) [][]int64 {
			opt := defaultOpts()
			opt.COO, opt.COOEdges = true, k
			pl, err := New(f.s, f.p, f.store, seeds, opt, nil)
			require.NoError(t, err)
			defer pl.Close()
			require.NoError(t, pl.Start(2))
			bs := drain(t, pl)
			defer releaseAll(bs)
			var out [][]int64
			for _, b := range bs {
				out = append(out, i64(b.Nodes), i64(b.COO.Index), i64(b.COO.EdgeIDs))
				if k == SampledEdges {
					require.Equal(t, []int64{2, int64(len(i64(b.COO.EdgeIDs)))}, b.COO.Index.Shape)
				}
			}
			return out
		}
		sampled, bidir, induced := open(SampledEdges), open(BidirectionalEdges), open(InducedEdges)
		require.Equal(t, len(sampled), len(bidir))
		for i := 0; i < len(sampled); i += 3 {
			nodes := sampled[i]
			require.Equal(t, nodes, bidir[i])
			require.Equal(t, nodes, induced[i])
			idx, ids := sampled[i+1], sampled[i+2]
			n := len(ids)
			// the reference: a map of (src, dst) -> last id, listings in order
			type pair struct{ s, d int64 }
			last := map[pair]int64{}
			for k := range n {
				last[pair{idx[k], idx[n+k]}] = ids[k]
			}
			for k := range n {
				last[pair{idx[n+k], idx[k]}] = ids[k]
			}
			bi, bids := bidir[i+1], bidir[i+2]
			m := len(bids)
			require.Len(t, last, m)
			for k := range m {
				p := pair{bi[k], bi[m+k]}
				require.Equal(t, last[p], bids[k])
				if k > 0 {
					prev := pair{bi[k-1], bi[m+k-1]}
					require.True(t, prev.d < p.d || (prev.d == p.d && prev.s < p.s), "sorted by destination then source")
				}
			}
			// induced: the graph's edges among the nodes
			internal := make([]int64, len(nodes))
			for j, v := range nodes {
				internal[j] = v
				if f.p.OldToNew != nil {
					internal[j] = f.p.OldToNew[v]
				}
			}
			src, dst, eids, err := InducedEdgeList(f.p.Graph, internal)
			require.NoError(t, err)
			in, inIDs := induced[i+1], induced[i+2]
			require.Equal(t, eids, inIDs)
			require.Equal(t, append(slices.Clone(src), dst...), in)
			require.GreaterOrEqual(t, len(inIDs), n, "every sampled edge is among the nodes")
		}
	}
	f := newFixture(t, 1, false, defaultSample)
	opt := defaultOpts()
	opt.COOEdges = InducedEdges
	_, err := New(f.s, f.p, f.store, seedRange(10), opt, nil)
	require.ErrorContains(t, err, "need Options.COO")
	opt.COO, opt.COOEdges = true, 7
	_, err = New(f.s, f.p, f.store, seedRange(10), opt, nil)
	require.ErrorContains(t, err, "COO edges = 7 is unknown")
	_, _, _, err = InducedEdgeList(f.p.Graph, []int64{1, 5, 1})
	require.ErrorContains(t, err, "nodes[2] repeats nodes[0]")
}

package sample

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendUniqueParallelDenseMatchesSequential(t *testing.T) {
	oldGrain := mergeGrain
	defer func() { mergeGrain = oldGrain }()
	r := rand.New(rand.NewPCG(7, 7))
	g := randomGraph(r, 5000, 10, false)
	for _, grain := range []int{1, 7, 100, 1 << 14} {
		mergeGrain = grain
		for _, th := range []int{2, 5} {
			s := mustSampler(t, rangePartition(g, 1), options{Fanouts: []int{1}, Threads: th})
			require.True(t, s.rt.dense)
			seq, par := &workspace{}, &workspace{}
			ds, dp := seq.denseTable(g.NumNodes), par.denseTable(g.NumNodes)
			var nodesSeq, nodesPar []int64
			for v := int64(0); v < 50; v++ { // "seeds"
				u := r.Int64N(g.NumNodes)
				if ds[u] == 0 {
					nodesSeq = append(nodesSeq, u)
					ds[u] = int32(len(nodesSeq))
					nodesPar = append(nodesPar, u)
					dp[u] = int32(len(nodesPar))
				}
			}
			for hop := 0; hop < 4; hop++ { // tables carry over between hops
				nbrs := make([]int64, 300+r.IntN(3000))
				for i := range nbrs {
					nbrs[i] = r.Int64N(g.NumNodes / int64(4-hop))
				}
				is, ip := make([]int64, len(nbrs)), make([]int64, len(nbrs))
				require.NoError(t, callOf(t, s).appendUniqueDense(seq, nbrs, is, &nodesSeq, hop))
				require.NoError(t, callOf(t, s).appendUniqueParallelDense(par, nbrs, ip, &nodesPar, hop))
				require.Equal(t, nodesSeq, nodesPar, "grain %d threads %d hop %d", grain, th, hop)
				require.Equal(t, is, ip)
				require.Equal(t, ds, dp)
				for k, u := range nbrs {
					require.Equal(t, u, nodesPar[ip[k]])
				}
				for i, u := range nodesPar {
					require.Equal(t, int32(i+1), dp[u])
				}
			}
			bad := []int64{1, 2, g.NumNodes, 3}
			err := callOf(t, s).appendUniqueParallelDense(par, bad, make([]int64, 4), &nodesPar, 9)
			assert.EqualError(t, err, "sample: hop 9: a rank answered node 5000, out of range [0, 5000)")
			err = callOf(t, s).appendUniqueDense(seq, bad, make([]int64, 4), &nodesSeq, 9)
			assert.EqualError(t, err, "sample: hop 9: a rank answered node 5000, out of range [0, 5000)")
		}
	}
}

// The dense and hash tables give the same samples, and the dense tables are
// left empty after every call, successful or not.
func TestDenseAndHashTablesAgree(t *testing.T) {
	withGrains(t, 5, 2)
	r := rand.New(rand.NewPCG(8, 9))
	g := randomGraph(r, 400, 5000, true)
	batches, keys := randomBatches(r, g.NumNodes, 5, 40)
	allClear := func(s *Sampler) {
		t.Helper()
		for rank, ws := range s.rt.ws {
			for v, x := range ws.dense {
				require.Zero(t, x, "rank %d node %d", rank, v)
			}
		}
	}
	for _, c := range configs() {
		t.Run(c.name, func(t *testing.T) {
			for _, p := range []int{1, 3} {
				for _, th := range []int{1, 4} {
					opt := c.opt
					opt.Threads = th
					hs := mustSampler(t, rangePartition(g, p), opt)
					hs.rt.dense = false
					ds := mustSampler(t, rangePartition(g, p), opt)
					require.True(t, ds.rt.dense)
					want := sampleAll(t, hs, batches, keys)
					got := sampleAll(t, ds, batches, keys)
					require.Equal(t, want, got, "P=%d threads=%d", p, th)
					allClear(ds)
					_, err := ds.SampleBatches(context.Background(), [][]int64{{1, 2, 3, 2}}, []uint64{0})
					require.Error(t, err)
					allClear(ds)
				}
			}
		})
	}
}

func TestDenseTableIsClearedAfterAFailedHop(t *testing.T) {
	g := tinyGraph()
	s := mustSampler(t, rangePartition(g, 1), options{Fanouts: []int{2, 2}})
	// Corrupt the graph after New so that a hop answers an out-of-range node.
	bad := *g
	bad.Indices = slices.Clone(g.Indices)
	for i := range bad.Indices {
		bad.Indices[i] = 99
	}
	s.rt.g = &bad
	_, err := s.SampleBatches(context.Background(), [][]int64{{0, 1, 2}}, []uint64{0})
	require.ErrorContains(t, err, "out of range")
	for v, x := range s.rt.ws[0].dense {
		require.Zero(t, x, "node %d", v)
	}
}

// Recycled results give the same samples as fresh ones, and results that are
// not recycled are never touched again.
func TestRecycle(t *testing.T) {
	withGrains(t, 5, 2)
	r := rand.New(rand.NewPCG(10, 11))
	g := randomGraph(r, 300, 4000, false)
	batches, keys := randomBatches(r, g.NumNodes, 12, 30)
	for _, c := range configs() {
		for _, p := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/P=%d", c.name, p), func(t *testing.T) {
				want := sampleAll(t, mustSampler(t, rangePartition(g, p), c.opt), batches, keys)
				s := mustSampler(t, rangePartition(g, p), c.opt)
				kept := sampleAll(t, s, batches[:2], keys[:2])
				keptCopy := deepCopy(kept)
				for i := 0; i < len(batches); i += 3 {
					got := sampleAll(t, s, batches[i:i+3], keys[i:i+3])
					require.Equal(t, want[i:i+3], deepCopy(got))
					s.Recycle(got...)
					s.Recycle(got[0], nil) // twice, and nil: ignored
				}
				require.Equal(t, keptCopy, kept)
			})
		}
	}
}

func deepCopy(rs []*Result) []*Result {
	out := make([]*Result, len(rs))
	for i, r := range rs {
		c := &Result{Nodes: slices.Clone(r.Nodes), HopCounts: slices.Clone(r.HopCounts)}
		for _, b := range r.Blocks {
			b.Indptr, b.Indices, b.EdgeIDs = slices.Clone(b.Indptr), slices.Clone(b.Indices), slices.Clone(b.EdgeIDs)
			c.Blocks = append(c.Blocks, b)
		}
		out[i] = c
	}
	return out
}

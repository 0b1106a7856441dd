package sample

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendUniqueParallelMatchesSequential(t *testing.T) {
	oldMin, oldGrain := parallelMergeMin, mergeGrain
	defer func() { parallelMergeMin, mergeGrain = oldMin, oldGrain }()
	r := rand.New(rand.NewPCG(1, 1))
	g := randomGraph(r, 5000, 10, false)
	for _, grain := range []int{1, 7, 100, 1 << 14} {
		mergeGrain = grain
		for _, th := range []int{2, 5} {
			s := mustSampler(t, rangePartition(g, 1), options{Fanouts: []int{1}, Threads: th})
			seq, par := &workspace{}, &workspace{}
			seq.table.reset()
			par.table.reset()
			var nodesSeq, nodesPar []int64
			for v := int64(0); v < 50; v++ { // "seeds"
				u := r.Int64N(g.NumNodes)
				if _, isNew := seq.table.insert(u, int32(len(nodesSeq))); isNew {
					nodesSeq = append(nodesSeq, u)
					par.table.insert(u, int32(len(nodesPar)))
					nodesPar = append(nodesPar, u)
				}
			}
			for hop := 0; hop < 4; hop++ { // tables carry over between hops
				nbrs := make([]int64, 300+r.IntN(3000))
				for i := range nbrs {
					nbrs[i] = r.Int64N(g.NumNodes / int64(4-hop))
				}
				is, ip := make([]int64, len(nbrs)), make([]int64, len(nbrs))
				require.NoError(t, callOf(t, s).appendUnique(seq, nbrs, is, &nodesSeq, hop))
				require.NoError(t, callOf(t, s).appendUniqueParallel(par, nbrs, ip, &nodesPar, hop))
				require.Equal(t, nodesSeq, nodesPar, "grain %d threads %d hop %d", grain, th, hop)
				require.Equal(t, is, ip)
				for k, u := range nbrs {
					require.Equal(t, u, nodesPar[ip[k]])
				}
			}
			bad := []int64{1, 2, g.NumNodes, 3}
			err := callOf(t, s).appendUniqueParallel(par, bad, make([]int64, 4), &nodesPar, 9)
			assert.EqualError(t, err, "sample: hop 9: a rank answered node 5000, out of range [0, 5000)")
			err = callOf(t, s).appendUnique(seq, bad, make([]int64, 4), &nodesSeq, 9)
			assert.EqualError(t, err, "sample: hop 9: a rank answered node 5000, out of range [0, 5000)")
		}
	}
}

func TestNodeTableGrowsAndResets(t *testing.T) {
	var tb nodeTable
	tb.reset()
	for i := int64(0); i < 10000; i++ {
		_, p, isNew := tb.insert(i*7919, int32(i))
		require.True(t, isNew)
		require.Equal(t, int32(i), p)
	}
	for i := int64(0); i < 10000; i++ {
		_, p, isNew := tb.insert(i*7919, -1)
		require.False(t, isNew)
		require.Equal(t, int32(i), p)
	}
	tb.reset()
	_, _, isNew := tb.insert(7919, 5)
	assert.True(t, isNew, "reset forgets")
	tb.gen = ^uint32(0)
	tb.reset() // generation wrap clears for real
	_, _, isNew = tb.insert(7919, 5)
	assert.True(t, isNew)
}

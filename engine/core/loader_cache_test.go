package core

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/cache"
)

// A hot tier leaves the batches as they were and is hit; both policies.
func TestLoaderSetCache(t *testing.T) {
	seeds := make([]int64, 100)
	for i := range seeds {
		seeds[i] = int64(3*i+2) % testNodes
	}
	for name, popt := range partitions() {
		t.Run(name, func(t *testing.T) {
			g := newTestGraph(t, popt)
			withNodeData(t, g)
			l, err := g.OpenLoader(seeds, defaultSample(), defaultLoader(), nil)
			require.NoError(t, err)
			defer l.Close()
			require.NoError(t, l.Start(0))
			want := epoch(t, l)
			for _, policy := range []CachePolicy{CacheByInDegree, CacheByPreSampling} {
				rows, err := l.SetCache(context.Background(), CacheOptions{Policy: policy, Size: cache.Size{Fraction: 0.3}})
				require.NoError(t, err)
				require.Equal(t, int64(0.3*float64(testNodes)), rows)
				_, err = l.Next(context.Background())
				require.ErrorIs(t, err, ErrNotStarted, "SetCache stops the epoch")
				require.NoError(t, l.Start(0))
				require.Equal(t, want, epoch(t, l), "policy %d: same batches, node data checked", policy)
				c := l.Stats().Current
				require.Positive(t, c.Gathered.HotRows)
				require.Positive(t, c.Gathered.ColdRows, "labels are not cached")
			}
			_, err = l.SetCache(context.Background(), CacheOptions{Policy: 7, Size: cache.Size{Fraction: 0.3}})
			require.ErrorContains(t, err, "policy")
			_, err = l.SetCache(context.Background(), CacheOptions{Policy: CacheByInDegree, Size: cache.Size{Fraction: 3}})
			require.ErrorContains(t, err, "fraction")
			require.NoError(t, l.Close())
			_, err = l.SetCache(context.Background(), CacheOptions{Policy: CacheByInDegree})
			require.ErrorIs(t, err, ErrLoaderClosed)
		})
	}
}

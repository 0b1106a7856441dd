package core

import (
	"context"
	"fmt"
	"slices"

	"github.com/graphferry/graphferry/engine/cache"
)

// CachePolicy picks the rows of a loader's hot tier.
type CachePolicy int

const (
	// CacheByInDegree keeps the rows of the nodes of highest in-degree
	// (PaGraph).
	CacheByInDegree CachePolicy = 1
	// CacheByPreSampling keeps the rows read most often over the loader's
	// first PreSampleEpochs epochs, sampled ahead (GNNLab, DSP).
	CacheByPreSampling CachePolicy = 2
)

// CacheOptions configures Loader.SetCache.
type CacheOptions struct {
	Policy CachePolicy
	Size   cache.Size
	// PreSampleEpochs is the number of epochs CacheByPreSampling samples
	// (<= 0: 2).
	PreSampleEpochs int
}

// SetCache puts the hot rows of the loader's feature names (but per-type
// node data, which it gathers by type), chosen by opt,
// in a hot tier (engine/cache) that later epochs gather from, and returns
// the number of hot rows. It stops the epoch in progress, as Start does.
// The graph refuses to replace node data while the loader is open, so the
// hot copy stays current.
func (l *Loader) SetCache(ctx context.Context, opt CacheOptions) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrLoaderClosed
	}
	g := l.g
	g.mu.RLock()
	defer g.mu.RUnlock()
	// Per-type node data ("<type>/<name>") is not indexed by node id: the
	// loader gathers it by type, past the hot tier, which holds the rest.
	names := slices.DeleteFunc(l.pl.FeatureNames(), g.store.IsLocal)
	var rowBytes int64
	for _, name := range names {
		t, ok := g.store.Get(name)
		if !ok {
			return 0, fmt.Errorf("core: no node data named %q", name)
		}
		rowBytes += int64(t.RowBytes())
	}
	n := g.part.Graph.NumNodes
	rows, err := opt.Size.Rows(n, rowBytes)
	if err != nil {
		return 0, err
	}
	var score []int64
	switch opt.Policy {
	case CacheByInDegree:
		score, err = cache.ByInDegree(g.part.Graph)
	case CacheByPreSampling:
		epochs := opt.PreSampleEpochs
		if epochs <= 0 {
			epochs = 2
		}
		score, err = l.pl.ReadCounts(ctx, epochs)
	default:
		return 0, fmt.Errorf("core: cache policy %d is invalid (want %d: in-degree, %d: pre-sampling)", opt.Policy, CacheByInDegree, CacheByPreSampling)
	}
	if err != nil {
		return 0, err
	}
	t, err := cache.New(g.store, names, cache.Rank(score)[:rows])
	if err != nil {
		return 0, err
	}
	if err := l.pl.SetGatherer(t); err != nil {
		return 0, err
	}
	l.started = false // the epoch in progress was stopped
	return rows, nil
}

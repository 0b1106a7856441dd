package core

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Loader streams the batches of a Graph epoch by epoch: a
// pipeline.Pipeline over a fork of the Graph's sample runtime, bound to the
// loader's request (OpenLoader), or over a communicator shared with other
// processes (engine/distributed, through OpenLoaderWith). It holds a
// reference to its Graph: it keeps working after the Graph is closed, until
// it is closed itself. Start, Next and Close may be called from different
// goroutines, one call at a time (Close waits for a Next in progress).
type Loader struct {
	g      *Graph
	pl     *pipeline.Pipeline
	closer io.Closer // closed after pl, or nil

	mu      sync.Mutex
	started bool
	closed  bool
}

// OpenLoader opens a loader over seeds (original ids, distinct) that
// samples with req and batches with lopt; lopt.Threads (<= 0: GOMAXPROCS)
// is the parallelism of both sampling and gathering. Every batch buffer
// comes from alloc (nil: the Go heap). The node data named in lopt must
// exist.
func (g *Graph) OpenLoader(seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	return g.OpenLoaderWith(func(Internals) (*pipeline.Pipeline, io.Closer, error) {
		base, _, err := g.runtimes.get(g)
		if err != nil {
			return nil, nil, err
		}
		// A fork of its own, which the pipeline forks again per worker:
		// the loader never waits for the Graph's other calls, nor they
		// for it. Open loaders keep the weights from changing, so the
		// fork never goes stale.
		rt, err := base.Fork(lopt.Threads)
		if err != nil {
			return nil, nil, err
		}
		s, err := rt.Bind(req)
		if err != nil {
			return nil, nil, err
		}
		if req.Temporal != sample.TemporalNone && lopt.SeedTimes == nil {
			return nil, nil, errorf(nil, "a temporal loader needs seed times (one per seed)")
		}
		if req.Temporal == sample.TemporalNone && lopt.SeedTimes != nil {
			return nil, nil, errorf(nil, "seed times are given but the request is not temporal")
		}
		lopt.RepeatedSeeds = req.Disjoint
		if err := g.edgeOptions(&lopt); err != nil {
			return nil, nil, err
		}
		pl, err := pipeline.New(s, g.part, g.store, seeds, lopt, alloc)
		return pl, nil, err
	})
}

// NumBatches returns the number of batches per epoch.
func (l *Loader) NumBatches() int { return l.pl.NumBatches() }

// Start begins epoch epoch, dropping what is left of the current one.
func (l *Loader) Start(epoch uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLoaderClosed
	}
	if err := l.pl.Start(epoch); err != nil {
		return err
	}
	l.started = true
	return nil
}

// Next returns the next batch of the current epoch (the caller owns it:
// Release it), io.EOF after the last one, ErrNotStarted before the first
// Start, or the error that stopped the epoch.
func (l *Loader) Next(ctx context.Context) (*pipeline.Batch, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrLoaderClosed
	}
	if !l.started {
		return nil, ErrNotStarted
	}
	return l.pl.Next(ctx)
}

// Close stops the loader's goroutines, frees the batches it had not
// delivered and drops its reference to the Graph. Idempotent.
func (l *Loader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	err := l.pl.Close()
	if l.closer != nil {
		err = errors.Join(err, l.closer.Close())
	}
	l.g.loaders.Add(-1)
	l.g.release()
	return err
}

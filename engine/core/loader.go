package core

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/graphferry/graphferry/engine/device"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Loader streams the batches of a Graph epoch by epoch: a
// pipeline.Pipeline over a fork of the Graph's sample runtime, bound to the
// loader's request (OpenLoader), or over a communicator shared with other
// processes (engine/distributed, through OpenLoaderWith). It holds a
// reference to its Graph: it keeps working after the Graph is closed, until
// it is closed itself.
//
// Start, Next and Close may be called from different goroutines. Next does
// not hold the loader's lock while it waits for a batch: a Close from
// another goroutine ends a waiting Next at once with ErrClosedWhileWaiting
// (and waits for it to return before it releases anything), a Start ends
// it with pipeline.ErrStopped, and cancelling Next's context ends it with
// the context's error, the loader unchanged (a later Next goes on with
// the same epoch). Next must not be called concurrently with itself.
type Loader struct {
	g      *Graph
	pl     *pipeline.Pipeline
	closer io.Closer       // closed after pl, or nil
	dev    *device.Session // a device loader's (also its closer), or nil

	// closing is cancelled by Close (cause ErrClosedWhileWaiting): it ends
	// the waits of the Nexts in progress, which nexts counts.
	closing context.Context
	cancel  context.CancelCauseFunc
	nexts   sync.WaitGroup

	mu      sync.Mutex
	started bool
	closed  bool
}

// newLoader returns the loader over pl that holds one of g's references.
func newLoader(g *Graph, pl *pipeline.Pipeline, closer io.Closer) *Loader {
	closing, cancel := context.WithCancelCause(context.Background())
	return &Loader{g: g, pl: pl, closer: closer, closing: closing, cancel: cancel}
}

// OpenLoader opens a loader over seeds (original ids, distinct) that
// samples with req and batches with lopt; lopt.Threads (<= 0: GOMAXPROCS)
// is the parallelism of both sampling and gathering. Every batch buffer
// comes from alloc (nil: the Go heap). The node data named in lopt must
// exist.
func (g *Graph) OpenLoader(seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	return g.OpenLoaderOn(nil, seeds, req, lopt, alloc)
}

// OpenLoaderOn is OpenLoader on device d (nil: the host): with a device,
// the device backend samples and gathers (device.Open; Loader.Device).
func (g *Graph) OpenLoaderOn(d *device.Options, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	if d != nil {
		return g.openDevice(*d, seeds, req, lopt, alloc)
	}
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
func (l *Loader) Start(epoch uint64) error { return l.StartAt(epoch, 0) }

// StartAt begins epoch epoch at its first-th batch (see
// pipeline.Pipeline.StartAt): how an epoch interrupted after first batches
// (Position) resumes, in this process or another, delivering exactly the
// batches it had not delivered.
func (l *Loader) StartAt(epoch uint64, first int) error { return l.StartOrdered(epoch, first, nil) }

// StartOrdered is StartAt with the epoch's order of the seeds (items)
// given by the caller (see pipeline.Pipeline.StartOrdered; nil: the
// loader's own shuffle).
func (l *Loader) StartOrdered(epoch uint64, first int, order []int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrLoaderClosed
	}
	// The files the graph keeps mapped, looked at again (dataset.Recheck):
	// an epoch over a file that changed under it fails at its first Next.
	start := func(epoch uint64, first int) error { return l.pl.StartOrdered(epoch, first, order) }
	if failed := l.g.recheck(); failed != nil {
		start = func(epoch uint64, first int) error { return l.pl.StartFailed(epoch, first, failed) }
	}
	if err := start(epoch, first); err != nil {
		return err
	}
	l.started = true
	return nil
}

// Position returns the current epoch and how many of its batches Next has
// delivered (started false before the first Start): where to resume it.
func (l *Loader) Position() (epoch uint64, delivered int, started bool) {
	return l.pl.Position()
}

// Next returns the next batch of the current epoch (the caller owns it:
// Release it), io.EOF after the last one, ErrNotStarted before the first
// Start, or the error that stopped the epoch. It waits for the batch
// without holding the loader's lock: see Loader for what ends the wait
// (Close: ErrClosedWhileWaiting; ctx: its error; Start: pipeline.ErrStopped).
func (l *Loader) Next(ctx context.Context) (*pipeline.Batch, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, ErrLoaderClosed
	}
	if !l.started {
		l.mu.Unlock()
		return nil, ErrNotStarted
	}
	l.nexts.Add(1) // before Close can wait: it sets closed under mu first
	l.mu.Unlock()
	defer l.nexts.Done()

	if ctx == nil {
		ctx = context.Background()
	}
	wait, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(l.closing, func() { cancel(ErrClosedWhileWaiting) })
	defer stop()
	b, err := l.pl.Next(wait)
	if l.closing.Err() != nil {
		// Closed meanwhile: whatever the pipeline answered (a batch that
		// raced the close, ErrStopped, ErrClosed), the loader is gone.
		b.Release()
		return nil, ErrClosedWhileWaiting
	}
	if err == nil && l.dev != nil {
		if err := l.dev.Deliver(b); err != nil {
			b.Release()
			return nil, err
		}
	}
	return b, err
}

// Close stops the loader's goroutines, frees the batches it had not
// delivered and drops its reference to the Graph. A Next waiting in another
// goroutine returns ErrClosedWhileWaiting promptly, and Close returns after
// it has. Idempotent.
func (l *Loader) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.cancel(ErrClosedWhileWaiting) // ends the Nexts' waits
	err := l.pl.Close()
	l.nexts.Wait()
	if l.closer != nil {
		err = errors.Join(err, l.closer.Close())
	}
	l.g.loaders.Add(-1)
	l.g.release()
	return err
}

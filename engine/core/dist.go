package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// batchStream is what a Loader streams batches from: a pipeline.Pipeline
// for a loader whose process runs every rank, a distStream for one rank of
// a process-per-rank group.
type batchStream interface {
	NumBatches() int
	Start(epoch uint64) error
	Next(ctx context.Context) (*pipeline.Batch, error)
	Close() error
	Stats() pipeline.Stats
	FeatureNames() []string
	ReadCounts(ctx context.Context, epochs int) ([]int64, error)
	SetGatherer(g feature.Gatherer) error
}

// distMaxWorkers bounds the default number of sampler workers of a
// coordinated distributed loader: their exchanges run one at a time anyway.
const distMaxWorkers = 4

var (
	_ batchStream = (*pipeline.Pipeline)(nil)
	_ batchStream = (*distStream)(nil)
)

// OpenDistLoader opens the loader of one rank of a group of processes that
// sample together (one rank per process, c.LocalRanks() its single rank,
// typically a comm.Host over torch.distributed or MPI). Every rank opens it
// with the same seeds and options on the same graph, partitioned into
// c.Size() patches; rank r owns patch r for sampling (CSP's shuffle and
// reshuffle cross the processes through c). The topology and node data are
// replicated in every process for now: the patches decide who samples
// which node, not what a process holds.
//
// The batches of an epoch are those of a single-process loader with the
// same seeds and options (same seeds per batch, same random streams, so
// bit-identical batches), dealt out round-robin: rank r gets batches r,
// r+size, r+2*size, ... Every rank delivers ceil(NumBatches/size) of them,
// so that collective training steps (DDP) never wait for a rank that ran
// out: a rank short of a batch in the last round is padded with a copy of
// one of the epoch's first batches (global index i mod NumBatches), as
// torch's DistributedSampler pads. Batch.Index is the global index.
//
// Sampling is collective, so every rank must consume every epoch to its
// end (the same number of batches): a rank that starts another epoch or
// closes early leaves the others blocked in the host's collective until
// its time-out.
//
// Sampler workers: when c cannot be duplicated (a comm.Host: the host
// provides one exchange channel), one goroutine samples the rank's batches
// in order. When it can (a CoordinatedComm, whose coordinator orders the
// exchanges of concurrent stages over one channel), lopt.Workers workers
// (<= 0: one per sampling thread, at most 4) sample
// batches k, k+W, ... of the rank's share concurrently, each on a fork of
// the runtime; batches are delivered in order and do not depend on W.
// Either way they work ahead of the consumer by up to QueueCapacity batches.
//
// When c is an io.Closer (CoordinatedComm), the loader closes it when it is
// closed.
func (g *Graph) OpenDistLoader(c comm.Comm, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*Loader, error) {
	if c == nil {
		return nil, errorf(nil, "communicator is nil")
	}
	ranks := c.LocalRanks()
	if len(ranks) != 1 {
		return nil, errorf(nil, "a distributed loader runs one rank per process, but the communicator runs %d here", len(ranks))
	}
	if err := g.acquire(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			g.release()
		}
	}()
	if n := g.part.NumPatches(); n != c.Size() {
		return nil, errorf(nil, "the graph has %d patches but the communicator %d ranks: open the graph with one patch per rank", n, c.Size())
	}
	if lopt.BatchSize <= 0 {
		return nil, errorf(nil, "batch size = %d is invalid (want > 0)", lopt.BatchSize)
	}
	if req.Disjoint || req.Temporal != sample.TemporalNone || lopt.SeedTimes != nil {
		return nil, errorf(nil, "distributed loaders do not support disjoint or temporal sampling yet")
	}
	if lopt.QueueCapacity <= 0 {
		lopt.QueueCapacity = 2
	}
	req.Fanouts = slices.Clone(req.Fanouts)
	req.ExcludeEdges = slices.Clone(req.ExcludeEdges)
	if err := req.Validate(); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, list := range [][]string{lopt.FeatureNames, lopt.LabelNames} {
		for _, name := range list {
			if _, ok := g.store.Get(name); !ok {
				return nil, errorf(nil, "node data %q is not in the graph (have %v)", name, g.store.Names())
			}
		}
	}
	seedsNew, err := pipeline.InternalSeeds(g.part, seeds)
	if err != nil {
		return nil, err
	}
	rt, err := sample.NewRuntime(g.part, c, g.runtimeOptions(lopt.Threads))
	if err != nil {
		return nil, err
	}
	workers := []*sample.Runtime{rt}
	if probe, err := c.Dup(); err == nil && probe != nil {
		// Every rank forks in the same order, so the stages match.
		if workers, err = distWorkers(rt, lopt); err != nil {
			return nil, err
		}
	}
	s := &distStream{
		g: g, workers: workers, req: req, rank: ranks[0], size: c.Size(),
		seedsOrig: slices.Clone(seeds), seedsNew: seedsNew, opt: lopt, alloc: alloc, store: g.store,
	}
	if cl, ok := c.(io.Closer); ok {
		s.closer = cl
	}
	s.opt.FeatureNames = slices.Clone(lopt.FeatureNames)
	s.opt.LabelNames = slices.Clone(lopt.LabelNames)
	if s.alloc == nil {
		s.alloc = mem.Heap{}
	}
	g.loaders.Add(1)
	ok = true // the loader keeps the reference
	return &Loader{g: g, pl: s}, nil
}

// distStream is one rank's share of a loader's epochs (OpenDistLoader).
// Loader serialises its calls.
type distStream struct {
	g          *Graph
	workers    []*sample.Runtime // one per sampler worker
	req        sample.Request
	rank, size int
	seedsOrig  []int64
	seedsNew   []int64
	opt        pipeline.Options
	alloc      mem.Allocator
	store      feature.Gatherer
	closer     io.Closer // closed with the stream (the comm's coordinator), or nil
	// rows, when set (a Part's loader, dist_rank_loader.go), gathers the
	// node data of worker w's batches over the communicator instead of
	// from store; fixed, when > 0, is the number of batches per epoch.
	rows  []*rowExchange
	fixed int

	cur    *distRun      // the epoch in progress
	epoch  atomic.Uint64 // the last epoch started (Stats)
	epochs atomic.Int64  // epochs started (Stats)
}

type distRun struct {
	total     int             // batches this rank delivers
	out       []chan distItem // per worker: its batches, in order
	stop      chan struct{}
	wg        sync.WaitGroup // the workers
	delivered int
	err       error
}

type distItem struct {
	b   *pipeline.Batch
	err error
}

// globalBatches is the number of batches of an epoch of the whole group.
func (s *distStream) globalBatches() int {
	n, b := len(s.seedsOrig), s.opt.BatchSize
	if s.opt.DropLast {
		return n / b
	}
	return (n + b - 1) / b
}

// NumBatches returns the batches this rank delivers per epoch: the group's
// batches divided among the ranks, rounded up (padding).
func (s *distStream) NumBatches() int {
	if s.fixed > 0 {
		return s.fixed
	}
	return (s.globalBatches() + s.size - 1) / s.size
}

func (s *distStream) Start(epoch uint64) error {
	s.stopCurrent()
	w := len(s.workers)
	r := &distRun{total: s.NumBatches(), out: make([]chan distItem, w), stop: make(chan struct{})}
	order := pipeline.EpochOrder(len(s.seedsOrig), s.opt.Shuffle, s.opt.Seed, epoch)
	r.wg.Add(w)
	for i, rt := range s.workers {
		r.out[i] = make(chan distItem, max(1, (s.opt.QueueCapacity+w-1)/w))
		go s.run(r, rt, i, order, epoch)
	}
	s.cur = r
	s.epoch.Store(epoch)
	s.epochs.Add(1)
	return nil
}

// run is worker w: it samples the rank's batches w, w+W, ... of epoch (W
// workers) in order and queues them.
func (s *distStream) run(r *distRun, rt *sample.Runtime, w int, order []int64, epoch uint64) {
	defer r.wg.Done()
	out := r.out[w]
	defer close(out)
	global := s.globalBatches()
	for k := w; k < r.total; k += len(s.workers) {
		select {
		case <-r.stop:
			return
		default:
		}
		index := (k*s.size + s.rank) % global
		lo := index * s.opt.BatchSize
		pos := order[lo:min(lo+s.opt.BatchSize, len(order))]
		internal := make([]int64, len(pos))
		orig := make([]int64, len(pos))
		for i, q := range pos {
			internal[i], orig[i] = s.seedsNew[q], s.seedsOrig[q]
		}
		b, err := s.batch(rt, w, internal, orig, pos, pipeline.BatchKey(epoch, int64(index)))
		if err != nil {
			err = fmt.Errorf("distributed loader, rank %d of %d: epoch %d, batch %d: %w", s.rank, s.size, epoch, index, err)
			select {
			case out <- distItem{err: err}:
			case <-r.stop:
			}
			return
		}
		b.Index, b.Epoch = int64(index), epoch
		select {
		case out <- distItem{b: b}:
		case <-r.stop:
			b.Release()
			return
		}
	}
}

// batch samples one batch (one wave of the group's collectives) and gathers
// its node data.
func (s *distStream) batch(rt *sample.Runtime, w int, internal, orig, pos []int64, key uint64) (*pipeline.Batch, error) {
	res, err := rt.Sample(context.Background(), s.req, [][]int64{internal}, []uint64{key})
	if err != nil {
		return nil, err
	}
	defer rt.Recycle(res...)
	if s.rows != nil {
		return s.rows[w].materialize(s, res[0], orig, pos)
	}
	return pipeline.Materialize(res[0], orig, pos, s.g.part, s.store, s.opt.FeatureNames, s.opt.LabelNames, s.alloc, s.opt.Threads)
}

// stopCurrent stops the epoch in progress: its goroutine returns after the
// batch it is sampling (a collective cannot be abandoned halfway), and the
// batches it queued are freed.
func (s *distStream) stopCurrent() {
	r := s.cur
	if r == nil {
		return
	}
	s.cur = nil
	close(r.stop)
	r.wg.Wait()
	for _, out := range r.out {
		for it := range out {
			if it.b != nil {
				it.b.Release()
			}
		}
	}
}

func (s *distStream) Next(ctx context.Context) (*pipeline.Batch, error) {
	r := s.cur
	if r == nil {
		return nil, errors.New("distributed loader: Next called before Start")
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.delivered == r.total {
		return nil, io.EOF
	}
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case it, ok := <-r.out[r.delivered%len(r.out)]:
		if !ok {
			return nil, pipeline.ErrStopped
		}
		if it.err != nil {
			r.err = it.err
			return nil, it.err
		}
		r.delivered++
		return it.b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *distStream) Close() error {
	s.stopCurrent()
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// Stats reports the workers and epochs; the per-stage counters of
// pipeline.Stats are not kept by the distributed loader (zero).
func (s *distStream) Stats() pipeline.Stats {
	return pipeline.Stats{Workers: len(s.workers), Epoch: s.epoch.Load(), Epochs: s.epochs.Load()}
}

func (s *distStream) FeatureNames() []string { return slices.Clone(s.opt.FeatureNames) }

// ReadCounts is not supported: counting a rank's reads would run the
// group's collectives for epochs no other rank is running.
func (s *distStream) ReadCounts(context.Context, int) ([]int64, error) {
	return nil, errorf(errs.ErrNotSupported, "a distributed loader cannot count feature reads ahead (it would need every rank to sample the same epochs at once)")
}

// SetGatherer replaces the source of node data from the next Start on,
// stopping the epoch in progress (which the other ranks must stop too).
func (s *distStream) SetGatherer(g feature.Gatherer) error {
	if g == nil {
		return errorf(nil, "gatherer is nil")
	}
	if s.rows != nil {
		return errorf(errs.ErrNotSupported, "the loader of a rank's part gathers node data from the ranks that own it; it takes no gatherer")
	}
	for _, name := range append(slices.Clone(s.opt.FeatureNames), s.opt.LabelNames...) {
		if _, ok := g.Get(name); !ok {
			return errorf(nil, "%q is not in the gatherer (have %v)", name, g.Names())
		}
	}
	if g.NumNodes() != s.g.part.Graph.NumNodes {
		return errorf(nil, "gatherer has %d nodes, graph has %d", g.NumNodes(), s.g.part.Graph.NumNodes)
	}
	s.stopCurrent()
	s.store = g
	return nil
}

// distWorkers forks rt into the sampler workers of a distributed loader:
// lopt.Workers of them (<= 0: one per thread, at most distMaxWorkers),
// sharing lopt.Threads (<= 0: every core); rt alone when that is one.
func distWorkers(rt *sample.Runtime, lopt pipeline.Options) ([]*sample.Runtime, error) {
	threads := lopt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	w := lopt.Workers
	if w <= 0 {
		w = min(threads, distMaxWorkers)
	}
	if w <= 1 {
		return []*sample.Runtime{rt}, nil
	}
	workers := make([]*sample.Runtime, 0, w)
	for range w {
		f, err := rt.Fork(max(1, threads/w))
		if err != nil {
			return nil, err
		}
		workers = append(workers, f)
	}
	return workers, nil
}

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphferry/graphferry/engine/bounds"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rng"
	"github.com/graphferry/graphferry/engine/sample"
)

// Options configures a Pipeline.
type Options struct {
	BatchSize     int      // seeds per batch, > 0
	Shuffle       bool     // shuffle the seeds every epoch
	DropLast      bool     // drop the last batch when it is short
	Seed          uint64   // shuffling seed: epoch e's permutation is a function of (Seed, e)
	QueueCapacity int      // capacity of each queue; <= 0: 2; at most the epoch's batches are held
	FeatureNames  []string // node data gathered for all of a batch's nodes (e.g. "feat")
	LabelNames    []string // node data gathered for the batch's seeds (e.g. "label")
	Threads       int      // parallelism of node data gathering; <= 0: GOMAXPROCS
	// Workers is the number of sampler workers: each samples whole batches
	// (waves of one batch per patch) on its own fork of the sampler, with
	// the sampler's threads shared among them, so that Workers batches are
	// sampled at once. <= 0: one per sampling thread (the sampler's
	// Threads, GOMAXPROCS when that is <= 0). Batches are still delivered
	// in order, and are the same whatever the number of workers. Each
	// worker costs memory of its own: see WorkerMemory.
	Workers int
	// SeedTimes, when not nil, holds one time per seed (aligned with the
	// seeds given to New, permuted with them): each batch is sampled with
	// its seeds' times (sample.Runtime.SampleTimed; the sampler must
	// implement SampleBatchesTimed).
	SeedTimes []int64
	// RepeatedSeeds accepts repeated seeds (disjoint sampling, where every
	// seed is a subgraph of its own).
	RepeatedSeeds bool
	// Types, when not nil, are the graph's types (read only while the
	// pipeline runs): the sampler workers add each batch's typed view
	// (Batch.SetTyped), off the consumer's thread.
	Types *graph.Types
	// NodeDataTypes, with Types, names the per-type node data among the
	// store's ("<type>/<name>", one row per node of its type in type-local
	// order) with its node type. FeatureNames and LabelNames may then name
	// it: the batch's NodeData[name] holds one row per batch node (label
	// names: per seed) of that type, in batch order, which is the order of
	// the type's nodes in the batch's typed view (TypedView.Nodes); the
	// rows are those of the nodes' type-local ids. Read only while the
	// pipeline runs.
	NodeDataTypes map[string]int
	// Share, when not nil, makes the pipeline deliver one rank's share of
	// a group's epochs (see Share). With one worker, such a pipeline
	// samples on the sampler given to New itself instead of a fork of it
	// (its communicator may not be duplicable, as a comm.Host's is not).
	Share *Share
	// EdgeFeatureNames are edge data gathered by the loader stage for the
	// sampled edges of every batch (Batch.EdgeData), from EdgeStore.
	EdgeFeatureNames []string
	// EdgeStore holds the edge data: one row per edge id (its NumNodes
	// is the number of rows), by original edge id. Read only while the
	// pipeline runs; needed when EdgeFeatureNames are given.
	EdgeStore feature.Gatherer
	// COO makes the sampler workers add each batch's edges as one edge
	// list (Batch.SetCOO: PyG's edge_index and e_id), off the consumer's
	// thread.
	COO bool
	// COOEdges, with COO, says which edges the edge list holds: the
	// sampled ones, made bidirectional, or every edge among the batch's
	// nodes (see COOEdges), made by the sampler workers ahead of the
	// consumer.
	COOEdges COOEdges
	// GatherAhead is how many batches beyond the oldest one not yet
	// delivered the loader stage gathers at the same time (<= 0: none,
	// one batch at a time; engine/core's loaders set 1 when it is 0 and
	// the features are on the disk tier): with node data on disk
	// (engine/cache's Disk),
	// the next batch's reads then overlap the current batch's, instead of
	// the disk idling while a batch's reads drain and its rows are copied
	// out and cached. Batches are still delivered in order; each batch
	// gathered ahead holds its node data's memory meanwhile.
	GatherAhead int
}

// timedWorker is a worker that samples with seed times.
type timedWorker interface {
	SampleBatchesTimed(ctx context.Context, batches, times [][]int64, keys []uint64) ([]*sample.Result, error)
}

// WorkerMemory returns about how many bytes one sampler worker keeps
// between batches, beyond the batches in the queues: per rank it runs
// (ranks), a node table of 4 bytes per node of the graph (numNodes) on
// graphs of up to 2^24 nodes (larger graphs use a hash table sized by the
// batch instead), plus workspaces that grow to the largest batch it has
// sampled: about 40 bytes per sampled edge (batchEdges, summed over the
// hops) and 24 per node (batchNodes) for the messages, the sampled
// neighbours and the copy of the batch's topology. The sampler stage runs
// one worker per thread by default, so a loader's sampling memory is
// Workers times this.
func WorkerMemory(numNodes int64, ranks int, batchNodes, batchEdges int64) int64 {
	var table int64
	if numNodes <= 1<<24 {
		table = 4 * numNodes
	} else {
		table = 16 * batchNodes // hash table entries: key and position, at most half full
	}
	return int64(ranks)*table + 40*batchEdges + 24*batchNodes
}

// ErrClosed is returned by calls on a closed Pipeline. It wraps
// errs.ErrClosed, so that callers that map error classes (the C API: to
// GF_EBADHANDLE) see a closed object rather than an invalid argument.
var ErrClosed = fmt.Errorf("pipeline: %w", errs.ErrClosed)

// ErrStopped is returned by a Next that was waiting for a batch of an epoch
// that Start or Close stopped.
var ErrStopped = errors.New("pipeline: epoch stopped")

// BatchKey is the random-stream key of batch index of epoch epoch, as passed
// to BatchSampler.SampleBatches (and sample.Runtime.Sample): epoch<<32 | index.
func BatchKey(epoch uint64, index int64) uint64 { return epoch<<32 | uint64(index)&0xffffffff }

// BatchSampler is the pipeline's sampling stage: it samples whole waves of
// batches (one batch per rank this process runs, see sample.Runtime) with
// a request fixed when it was built, and forks into copies that sample
// concurrently and give the same batches, one per worker. S is the type
// Fork returns, the sampler's own. *sample.Sampler (sample.Runtime.Bind)
// is the CPU implementation; a device backend brings its own, while the
// batch keys, the epoch shuffle, the workers and the queues here stay
// shared.
type BatchSampler[S any] interface {
	// Partitioned returns the partition the sampler samples.
	Partitioned() *partition.Partitioned
	// Threads returns the sampler's thread count (<= 0: GOMAXPROCS),
	// which the workers share.
	Threads() int
	// Fork returns an independent copy with threads threads.
	Fork(threads int) (S, error)
	worker
}

// worker is what a worker needs of its fork.
type worker interface {
	// LocalRanks returns the ranks this process runs: a wave has one batch
	// per local rank.
	LocalRanks() []int
	// SampleBatches samples batches (internal seed ids) with the keys.
	SampleBatches(ctx context.Context, batches [][]int64, keys []uint64) ([]*sample.Result, error)
	// Recycle takes back results the pipeline no longer uses.
	Recycle(results ...*sample.Result)
}

var _ BatchSampler[*sample.Sampler] = (*sample.Sampler)(nil)

// Maker is a pipeline's sampling stage when it makes every batch itself
// from positions into its own items, instead of sampling seed nodes given
// to New: an edge-level loader's seed edges or node pairs
// (engine/linkload), whose batch's seed nodes are known only once its
// negatives are drawn. NewMaker builds such a pipeline; the epoch shuffle
// (a permutation of the item positions), the batch keys, the workers, the
// queues, the loader stage and the statistics are the node pipeline's.
// M is the type Fork returns, the maker's own.
type Maker[M any] interface {
	// Partitioned returns the partition the maker samples.
	Partitioned() *partition.Partitioned
	// Threads returns the maker's thread count (<= 0: GOMAXPROCS), which
	// the workers share.
	Threads() int
	// Fork returns an independent copy with threads threads, which makes
	// the same batches.
	Fork(threads int) (M, error)
	maker
}

// maker is what a worker needs of a Maker's fork.
type maker interface {
	// Make makes the batch of the items at positions pos (in epoch order)
	// with random-stream key key: its seeds, topology and link fields in
	// memory from alloc (NewBatch(alloc)), Index and Epoch left zero, and
	// the sample it came from, whose Nodes (internal ids, seeds first) the
	// loader stage gathers node data for. A batch depends only on (the
	// maker's options, key, the items at pos).
	Make(ctx context.Context, pos []int64, key uint64, alloc mem.Allocator) (*Batch, *sample.Result, error)
	// Recycle takes back results the pipeline no longer uses.
	Recycle(results ...*sample.Result)
}

// recycler takes back sample results: a worker or a maker.
type recycler interface {
	Recycle(results ...*sample.Result)
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// Pipeline streams the batches of one epoch at a time. Start, Next and Close
// may be called from different goroutines; Next must not be called
// concurrently with itself.
type Pipeline struct {
	workers   []worker // forks of the sampler given to New, one per worker
	makers    []maker  // with NewMaker instead: forks of the maker, one per worker
	numItems  int      // seeds (New) or items (NewMaker) shuffled per epoch
	ranks     int      // batches per wave: the sampler's local ranks (1 with a maker)
	p         *partition.Partitioned
	store     feature.Gatherer
	seedsOrig []int64
	seedsNew  []int64
	opt       Options
	alloc     mem.Allocator

	mu     sync.Mutex // guards cur and closed
	cur    *run
	closed bool

	// life is cancelled by Close: the sampler workers' collectives (and a
	// RowLoader's exchanges) run under it, so that Close does not wait for
	// an exchange blocked on another rank.
	life    context.Context
	endLife context.CancelFunc

	nextMu sync.Mutex // serialises Next; guards run.delivered and run.err

	st       stats
	base     time.Time    // origin of startNs and endNs (monotonic clock)
	startNs  atomic.Int64 // the current epoch's Start, since base
	endNs    atomic.Int64 // its last delivery since base; 0 while it runs
	epochs   atomic.Int64 // epochs started
	epochNum atomic.Uint64
}

// run is one epoch in progress.
type run struct {
	epoch      uint64
	first      int // the first batch this run delivers (StartAt); the ones before were delivered by an earlier run
	total      int
	stop       chan struct{} // closed to stop the goroutines
	loaderDone chan struct{} // closed when the loader exits
	out        chan item     // loader -> Next
	jobs       []chan job    // worker w -> loader
	wg         sync.WaitGroup

	delivered  int
	position   atomic.Int64 // delivered, for Position from any goroutine
	err        error
	lastReturn time.Time // when Next last returned a batch (zero: never)
}

type item struct {
	b   *Batch
	err error
}

// job is a sampled batch on its way from a worker to the loader: b holds
// its topology (in output memory), res the sample it came from (for the
// node data's internal ids), recycled to s once the loader is done. When a
// Share's RowLoader loaded the node data in the worker, res is nil and
// rows says where the rows came from.
type job struct {
	index int64
	b     *Batch
	res   *sample.Result
	s     recycler
	rows  feature.TierCounts
	err   error
}

// recycle hands j's sample back to the worker that made it.
func (j job) recycle() {
	if j.res != nil {
		j.s.Recycle(j.res)
	}
}

// drop frees what a job that will not be delivered holds.
func (j job) drop() {
	j.b.Release()
	j.recycle()
}

// New validates seeds (original ids, mapped to internal via p.OldToNew when
// renumbered; duplicates are an error), names (must exist in store, unless
// a Share's RowLoader loads them) and options. s must have been built on
// p; the pipeline samples on forks of it (s itself is not used, but by a
// Share with one worker). store may be nil when no node data is
// requested. alloc nil means mem.Heap.
func New[S BatchSampler[S]](s S, p *partition.Partitioned, store feature.Gatherer, seeds []int64, opt Options, alloc mem.Allocator) (*Pipeline, error) {
	if isNil(s) {
		return nil, errors.New("pipeline: sampler is nil")
	}
	if isNil(store) {
		store = nil
	}
	if p == nil || p.Graph == nil {
		return nil, errors.New("pipeline: partition (or its graph) is nil")
	}
	if s.Partitioned() != p {
		return nil, errors.New("pipeline: the sampler was built on a different partition")
	}
	if err := checkOptions(p, &opt); err != nil {
		return nil, err
	}
	if err := checkShareAndNames(p, store, &opt); err != nil {
		return nil, err
	}
	seedsNew, err := MapSeeds(p, seeds, !opt.RepeatedSeeds)
	if err != nil {
		return nil, err
	}
	if opt.SeedTimes != nil {
		if len(opt.SeedTimes) != len(seeds) {
			return nil, fmt.Errorf("pipeline: %d seed times for %d seeds (want one per seed)", len(opt.SeedTimes), len(seeds))
		}
		if _, ok := any(s).(timedWorker); !ok {
			return nil, errors.New("pipeline: the sampler does not sample with seed times")
		}
		opt.SeedTimes = slices.Clone(opt.SeedTimes)
	}
	ranks := len(s.LocalRanks())
	if ranks < 1 {
		return nil, errors.New("pipeline: the sampler runs no rank in this process")
	}
	pl := newPipeline(p, store, len(seeds), opt, alloc, ranks)
	pl.seedsOrig, pl.seedsNew = slices.Clone(seeds), seedsNew
	if pl.opt.Workers <= 0 {
		pl.opt.Workers = par.Threads(s.Threads())
	}
	if err := pl.bound(); err != nil {
		return nil, err
	}
	if opt.Share != nil && pl.opt.Workers == 1 {
		pl.workers = []worker{s}
		return pl, nil
	}
	forks, err := forkAll(s, pl.opt.Workers)
	if err != nil {
		return nil, err
	}
	for _, f := range forks {
		pl.workers = append(pl.workers, f)
	}
	return pl, nil
}

// NewMaker returns a pipeline whose batches m makes from the positions of
// numItems items (see Maker): an epoch shuffles the positions [0,
// numItems) as New's shuffles its seeds, batch i takes positions [i *
// BatchSize, (i+1) * BatchSize) of the epoch order and is made with
// BatchKey(epoch, i) by one of Workers forks of m, and the loader stage
// gathers its node data (over the nodes of the sample Make returns) and
// edge data. m must have been built on p. opt.SeedTimes and
// RepeatedSeeds do not apply (an error); opt.Types makes the workers add
// typed views. A Share deals the batches out as New's does (one worker
// makes them on m itself; a GroupMaker makes each with the other ranks'
// batches of its round; the Share's RowLoader loads the node data).
func NewMaker[M Maker[M]](m M, p *partition.Partitioned, store feature.Gatherer, numItems int, opt Options, alloc mem.Allocator) (*Pipeline, error) {
	if isNil(m) {
		return nil, errors.New("pipeline: maker is nil")
	}
	if isNil(store) {
		store = nil
	}
	if p == nil || p.Graph == nil {
		return nil, errors.New("pipeline: partition (or its graph) is nil")
	}
	if m.Partitioned() != p {
		return nil, errors.New("pipeline: the maker was built on a different partition")
	}
	if err := checkOptions(p, &opt); err != nil {
		return nil, err
	}
	if numItems < 0 {
		return nil, fmt.Errorf("pipeline: %d items (want >= 0)", numItems)
	}
	if opt.SeedTimes != nil || opt.RepeatedSeeds {
		return nil, errors.New("pipeline: seed times and repeated seeds do not apply to a maker's pipeline")
	}
	if err := checkShareAndNames(p, store, &opt); err != nil {
		return nil, err
	}
	pl := newPipeline(p, store, numItems, opt, alloc, 1)
	if pl.opt.Workers <= 0 {
		pl.opt.Workers = par.Threads(m.Threads())
	}
	if err := pl.bound(); err != nil {
		return nil, err
	}
	if opt.Share != nil && pl.opt.Workers == 1 {
		// As New: one worker of a share makes its batches on m itself
		// (whose communicator may not be duplicated).
		pl.makers = []maker{m}
		return pl, nil
	}
	forks, err := forkAll(m, pl.opt.Workers)
	if err != nil {
		return nil, err
	}
	for _, f := range forks {
		pl.makers = append(pl.makers, f)
	}
	return pl, nil
}

// forker is what forkAll needs of a sampler or maker.
type forker[S any] interface {
	Fork(threads int) (S, error)
	Threads() int
}

// forkAll forks s into workers copies that share its threads.
func forkAll[S forker[S]](s S, workers int) ([]S, error) {
	threads := par.Threads(s.Threads())
	out := make([]S, 0, workers)
	for range workers {
		f, err := s.Fork(max(1, threads/workers))
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// newPipeline returns the pipeline New and NewMaker fill with their
// workers; opt has been checked. Workers <= 0 becomes one per thread of
// opt.Threads (the sampler's, which the caller sets when it knows them).
func newPipeline(p *partition.Partitioned, store feature.Gatherer, numItems int, opt Options, alloc mem.Allocator, ranks int) *Pipeline {
	opt.FeatureNames = slices.Clone(opt.FeatureNames)
	opt.LabelNames = slices.Clone(opt.LabelNames)
	opt.EdgeFeatureNames = slices.Clone(opt.EdgeFeatureNames)
	if alloc == nil {
		alloc = mem.Heap{}
	}
	pl := &Pipeline{p: p, store: store, numItems: numItems, opt: opt, alloc: alloc, ranks: ranks, base: time.Now()}
	pl.life, pl.endLife = context.WithCancel(context.Background())
	return pl
}

// bound checks what the resolved options cost (bounds): the sampler
// workers' node tables (WorkerMemory, allocated at their first batch)
// against the memory the process may use, and keeps each queue within the
// epoch's batches (a larger capacity holds no more).
func (pl *Pipeline) bound() error {
	pl.opt.QueueCapacity = min(pl.opt.QueueCapacity, max(pl.NumBatches(), 1))
	need := bounds.Mul(uint64(pl.opt.Workers), uint64(WorkerMemory(pl.p.Graph.NumNodes, pl.ranks, 0, 0)))
	return bounds.Alloc(need, fmt.Sprintf("pipeline: %d sampler workers (a node table each)", pl.opt.Workers))
}

// checkShareAndNames checks opt's Share (copied into opt) and its node
// data names against store (unless the Share's RowLoader loads the rows).
func checkShareAndNames(p *partition.Partitioned, store feature.Gatherer, opt *Options) error {
	rows := false
	if opt.Share != nil {
		share := *opt.Share
		if err := share.check(); err != nil {
			return err
		}
		opt.Share, rows = &share, share.Rows != nil
	}
	if p.Ranked != nil && !rows {
		return errors.New("pipeline: a rank's part knows the original ids of its own nodes only: its batches need a Share's RowLoader, which asks their owners")
	}
	return checkNodeNames(p, store, *opt, rows)
}

// checkNodeNames checks the node data names of opt against store (unless
// a RowLoader loads the rows) and p's node count.
func checkNodeNames(p *partition.Partitioned, store feature.Gatherer, opt Options, rows bool) error {
	n := p.Graph.NumNodes
	if p.OldToNew != nil && int64(len(p.OldToNew)) != n {
		return fmt.Errorf("pipeline: len(partition.OldToNew) = %d (want %d)", len(p.OldToNew), n)
	}
	names := map[string]string{}
	check := func(kind string, list []string) error {
		for i, name := range list {
			if prev, dup := names[name]; dup {
				return fmt.Errorf("pipeline: %s[%d] = %q is already requested in %s", kind, i, name, prev)
			}
			names[name] = kind
			if rows {
				continue // the RowLoader has them
			}
			if store == nil {
				return fmt.Errorf("pipeline: %s[%d] = %q requested but store is nil", kind, i, name)
			}
			t, ok := store.Get(name)
			if !ok {
				return fmt.Errorf("pipeline: %s[%d] = %q is not in the store (have %v)", kind, i, name, store.Names())
			}
			if len(t.Shape) > 0 && t.Shape[0] != n { // per-node-type data of a typed graph
				if err := checkTypedName(opt, name, t.Shape[0], n); err != nil {
					return fmt.Errorf("pipeline: %s[%d] = %q has %d rows, one per node of its type: %w", kind, i, name, t.Shape[0], err)
				}
			}
		}
		return nil
	}
	if err := check("feature names", opt.FeatureNames); err != nil {
		return err
	}
	if err := check("label names", opt.LabelNames); err != nil {
		return err
	}
	if store != nil && !rows && len(names) > 0 && store.NumNodes() != n {
		return fmt.Errorf("pipeline: store has %d nodes, graph has %d", store.NumNodes(), n)
	}
	return nil
}

// checkTypedName checks that per-type node data name with rows rows is
// gathered by type: the options' types give its type that many nodes.
func checkTypedName(opt Options, name string, rows, n int64) error {
	nt, ok := opt.NodeDataTypes[name]
	if opt.Types == nil || !ok {
		return fmt.Errorf("a loader gathers its %d rows only on a typed graph one of whose node types it names (\"<type>/<name>\"), else one row per node (%d)", rows, n)
	}
	offs := opt.Types.NodeOffsets
	if nt < 0 || nt+1 >= len(offs) || offs[nt+1]-offs[nt] != rows {
		return fmt.Errorf("its node type %d does not have %d nodes (node type offsets %v)", nt, rows, offs)
	}
	return nil
}

// checkOptions checks what New and NewMaker share of opt and sets the
// queue capacity's default.
func checkOptions(p *partition.Partitioned, opt *Options) error {
	if opt.BatchSize <= 0 {
		return fmt.Errorf("pipeline: batch size = %d is invalid (want > 0)", opt.BatchSize)
	}
	if opt.QueueCapacity <= 0 {
		opt.QueueCapacity = 2
	}
	if opt.COOEdges < SampledEdges || opt.COOEdges > SubgraphEdges {
		return fmt.Errorf("pipeline: COO edges = %d is unknown (want SampledEdges, BidirectionalEdges, InducedEdges or SubgraphEdges)", opt.COOEdges)
	}
	if opt.COOEdges != SampledEdges && !opt.COO {
		return errors.New("pipeline: COO edges other than the sampled ones need Options.COO")
	}
	if err := bounds.Threads(opt.Threads, "pipeline: threads"); err != nil {
		return err
	}
	if err := bounds.Threads(opt.Workers, "pipeline: workers"); err != nil {
		return err
	}
	if len(opt.EdgeFeatureNames) == 0 {
		return nil
	}
	if isNil(opt.EdgeStore) {
		return errors.New("pipeline: edge feature names are given but the edge store is nil")
	}
	seen := map[string]bool{}
	for i, name := range opt.EdgeFeatureNames {
		if seen[name] {
			return fmt.Errorf("pipeline: edge feature names[%d] = %q is requested twice", i, name)
		}
		seen[name] = true
		if _, ok := opt.EdgeStore.Get(name); !ok {
			return fmt.Errorf("pipeline: edge feature names[%d] = %q is not in the edge store (have %v)", i, name, opt.EdgeStore.Names())
		}
	}
	if rows, e := opt.EdgeStore.NumNodes(), p.Graph.NumEdges(); rows < e {
		return fmt.Errorf("pipeline: the edge store has %d rows, the graph %d edges (want one row per edge id)", rows, e)
	}
	return nil
}

// SetGatherer replaces the loader stage's source of node data (with a
// tiered one, say: see engine/cache) from the next Start on. It stops the
// epoch in progress, as Start does. g must have the requested names and the
// graph's node count.
func (pl *Pipeline) SetGatherer(g feature.Gatherer) error {
	if isNil(g) {
		return errors.New("pipeline: gatherer is nil")
	}
	if s := pl.opt.Share; s != nil && s.Rows != nil {
		return errNoGatherer
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return ErrClosed
	}
	for _, name := range append(slices.Clone(pl.opt.FeatureNames), pl.opt.LabelNames...) {
		if _, ok := g.Get(name); !ok {
			return fmt.Errorf("pipeline: %q is not in the gatherer (have %v)", name, g.Names())
		}
	}
	if g.NumNodes() != pl.p.Graph.NumNodes {
		return fmt.Errorf("pipeline: gatherer has %d nodes, graph has %d", g.NumNodes(), pl.p.Graph.NumNodes)
	}
	pl.stopLocked() // no stage goroutine reads pl.store from here on
	pl.store = g
	return nil
}

// FeatureNames returns the names gathered for every node of a batch.
func (pl *Pipeline) FeatureNames() []string { return slices.Clone(pl.opt.FeatureNames) }

// ReadCounts samples epochs 0..epochs-1 as Start would (same seeds, shuffle
// and batch keys, so the same batches) without gathering node data or
// touching the statistics, and returns how many batches each node (internal
// id) is in: how often its feature rows will be read. It stops the epoch in
// progress, as Start does. A Share refuses (errs.ErrNotSupported): its
// sampling is collective, and the other ranks are not counting.
func (pl *Pipeline) ReadCounts(ctx context.Context, epochs int) ([]int64, error) {
	if pl.opt.Share != nil {
		return nil, errNotAhead
	}
	if epochs <= 0 {
		return nil, fmt.Errorf("pipeline: reading counts over %d epochs (want > 0)", epochs)
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return nil, ErrClosed
	}
	pl.stopLocked()
	counts := make([]int64, pl.p.Graph.NumNodes)
	total := pl.NumBatches()
	for e := range uint64(epochs) {
		order := epochOrder(pl.numItems, pl.opt.Shuffle, pl.opt.Seed, e)
		for i := 0; i < total; i += pl.ranks {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			res, rc, err := pl.sampleOnly(e, order, i, min(pl.ranks, total-i))
			if err != nil {
				return nil, fmt.Errorf("pipeline: reading counts, epoch %d, batch %d: %w", e, i, err)
			}
			for _, r := range res {
				for _, v := range r.Nodes {
					counts[v]++
				}
			}
			rc.Recycle(res...)
		}
	}
	return counts, nil
}

// sampleOnly samples batches i..i+k-1 of epoch e (order its order) on the
// first worker, for ReadCounts: the results, and who takes them back.
func (pl *Pipeline) sampleOnly(e uint64, order []int64, i, k int) ([]*sample.Result, recycler, error) {
	if pl.makers != nil { // k == 1
		m := pl.makers[0]
		b, res, err := m.Make(context.Background(), pl.batchSeeds(order, i), BatchKey(e, int64(i)), pl.alloc)
		if err != nil {
			return nil, nil, err
		}
		b.Release()
		return []*sample.Result{res}, m, nil
	}
	w := pl.workers[0]
	batches := make([][]int64, k)
	keys := make([]uint64, k)
	for j := range batches {
		pos := pl.batchSeeds(order, i+j)
		batches[j] = make([]int64, len(pos))
		for t, q := range pos {
			batches[j][t] = pl.seedsNew[q]
		}
		keys[j] = BatchKey(e, int64(i+j))
	}
	res, err := w.SampleBatches(context.Background(), batches, keys)
	return res, w, err
}

// InternalSeeds validates seeds (original ids: each in range, no
// duplicates) and returns them mapped to p's internal numbering.
func InternalSeeds(p *partition.Partitioned, seeds []int64) ([]int64, error) {
	return MapSeeds(p, seeds, true)
}

// MapSeeds is InternalSeeds, refusing duplicates only when distinct is set.
func MapSeeds(p *partition.Partitioned, seeds []int64, distinct bool) ([]int64, error) {
	n := p.Graph.NumNodes
	seedsNew := make([]int64, len(seeds))
	var first map[int64]int
	if distinct {
		first = make(map[int64]int, len(seeds))
	}
	for i, v := range seeds {
		if v < 0 || v >= n {
			return nil, fmt.Errorf("seeds[%d] = %d is out of range [0, %d)", i, v, n)
		}
		if distinct {
			if j, dup := first[v]; dup {
				return nil, fmt.Errorf("seeds[%d] = %d duplicates seeds[%d]", i, v, j)
			}
			first[v] = i
		}
		if seedsNew[i] = p.InternalID(v); seedsNew[i] < 0 {
			return nil, fmt.Errorf("seeds[%d] = %d is not known to this rank (resolve it with its owner first)", i, v)
		}
	}
	return seedsNew, nil
}

// NumBatches returns the number of batches per epoch (of this rank's
// share, with a Share).
func (pl *Pipeline) NumBatches() int {
	s, g := pl.opt.Share, pl.groupBatches()
	switch {
	case s == nil:
		return g
	case g == 0:
		return 0
	case s.Batches > 0:
		return s.Batches
	}
	return (g + s.Size - 1) / s.Size
}

// Start begins epoch epoch: stops and drains any epoch in progress (freeing
// its queued batches), shuffles the seeds by (Seed, epoch) and starts the
// sampler workers and the loader goroutine.
func (pl *Pipeline) Start(epoch uint64) error { return pl.StartAt(epoch, 0) }

// StartAt is Start for the rest of an epoch: it delivers the epoch's
// batches from the first-th on (counted as Next delivers them: this
// rank's share with a Share), each the batch an uninterrupted epoch
// delivers at that place, bit for bit, without sampling the ones before.
// first == NumBatches starts an epoch that is already over (Next: io.EOF).
// A run interrupted after k batches (Position) resumes with StartAt(epoch,
// k), in this process or a fresh one, with any thread, worker or patch
// count.
func (pl *Pipeline) StartAt(epoch uint64, first int) error { return pl.start(epoch, first, nil, nil) }

// StartOrdered is StartAt with the epoch's order of the items given by the
// caller instead of the pipeline's own (the Shuffle by (Seed, epoch), or
// none): order is a permutation of the positions [0, numItems) of the
// seeds given to New (the items of NewMaker), batch i takes positions
// order[i*BatchSize : (i+1)*BatchSize] and is made with BatchKey(epoch,
// i) as in any epoch; nil is the pipeline's own order. A caller that
// shuffles by its own generator (PyG's loaders, torch's sampler) gives
// each epoch's order here rather than reopening the pipeline, and resumes
// an interrupted run with the same order and first. With a Share every
// rank gives the same order.
func (pl *Pipeline) StartOrdered(epoch uint64, first int, order []int64) error {
	if order != nil {
		if err := checkOrder(order, pl.numItems); err != nil {
			return err
		}
		order = slices.Clone(order)
	}
	return pl.start(epoch, first, order, nil)
}

// StartFailed is StartAt for an epoch that cannot run: failed, found
// before it starts (engine/core: a file of the graph changed under it), is
// its error, which its first Next returns; nothing is sampled or gathered.
// Position says the epoch is at its first-th batch, where a later StartAt
// resumes it.
func (pl *Pipeline) StartFailed(epoch uint64, first int, failed error) error {
	return pl.start(epoch, first, nil, failed)
}

// start starts epoch epoch at batch first in order (nil: the pipeline's
// own), as a run that fails at once with failed when it is not nil.
func (pl *Pipeline) start(epoch uint64, first int, order []int64, failed error) error {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return ErrClosed
	}
	if total := pl.NumBatches(); first < 0 || first > total {
		return fmt.Errorf("pipeline: starting epoch %d at batch %d: the epoch has %d batches (want 0 <= first <= %d)", epoch, first, total, total)
	}
	if order == nil {
		order = epochOrder(pl.numItems, pl.opt.Shuffle, pl.opt.Seed, epoch)
	}
	pl.stopLocked()
	pl.st.total.wall.Add(int64(pl.epochWall()))
	pl.st.epoch.reset()
	pl.startNs.Store(int64(time.Since(pl.base)))
	pl.endNs.Store(0)
	pl.epochs.Add(1)
	pl.epochNum.Store(epoch)
	r := &run{
		epoch:      epoch,
		first:      first,
		delivered:  first,
		total:      pl.NumBatches(),
		stop:       make(chan struct{}),
		loaderDone: make(chan struct{}),
		out:        make(chan item, pl.opt.QueueCapacity),
	}
	r.position.Store(int64(first))
	if failed != nil {
		r.err = failed
		close(r.out) // no goroutines, no queues: stopLocked finds nothing to drain
		pl.cur = r
		return nil
	}
	// One queue per worker; together they hold about QueueCapacity batches.
	w := pl.numWorkers()
	jobs := make([]chan job, w)
	for i := range jobs {
		jobs[i] = make(chan job, max(1, (pl.opt.QueueCapacity+w-1)/w))
	}
	r.jobs = jobs
	r.wg.Add(w + 1)
	for i, s := range pl.workers {
		go pl.sampleLoop(r, order, s, i, jobs[i])
	}
	for i, m := range pl.makers {
		go pl.makeLoop(r, order, m, i, jobs[i])
	}
	go pl.loadLoop(r, jobs)
	pl.cur = r
	return nil
}

// stopLocked stops the current run, waits for its goroutines and releases
// every batch still queued.
func (pl *Pipeline) stopLocked() {
	r := pl.cur
	if r == nil {
		return
	}
	pl.cur = nil
	close(r.stop)
	r.wg.Wait()
	for it := range r.out { // closed by the loader
		it.b.Release()
	}
	for _, jobs := range r.jobs { // closed by the workers
		for j := range jobs {
			j.drop()
		}
	}
}

// numWorkers returns the number of sampler workers.
func (pl *Pipeline) numWorkers() int { return len(pl.workers) + len(pl.makers) }

// batchSeeds returns the positions (into the seeds given to New, or the
// items of NewMaker) of batch i.
func (pl *Pipeline) batchSeeds(order []int64, i int) []int64 {
	lo := i * pl.opt.BatchSize
	return order[lo:min(lo+pl.opt.BatchSize, len(order))]
}

// sampleLoop is worker w: with R batches per wave (one per local rank) and
// W workers, it samples the waves w, w+W, w+2W, ... and queues their
// batches in order on jobs. The k-th batch of an epoch is the group's
// batch index(k) (k itself without a Share). A Share's RowLoader loads the
// node data here, after sampling.
func (pl *Pipeline) sampleLoop(r *run, order []int64, s worker, w int, jobs chan<- job) {
	defer r.wg.Done()
	defer close(jobs)
	q := &workerQueue{pl: pl, r: r, jobs: jobs}
	send := q.send
	var rows RowLoader
	if pl.opt.Share != nil {
		rows = pl.opt.Share.Rows
	}
	ranks := pl.ranks
	stride := ranks * len(pl.workers)
	for i := r.first + w*ranks; i < r.total; i += stride {
		if q.stopped() {
			return
		}
		q.t0 = time.Now()
		k := min(ranks, r.total-i)
		batches := make([][]int64, k)
		keys := make([]uint64, k)
		var times [][]int64
		if pl.opt.SeedTimes != nil {
			times = make([][]int64, k)
		}
		for j := range batches {
			index := pl.index(i + j)
			pos := pl.batchSeeds(order, int(index))
			seeds := make([]int64, len(pos))
			for t, q := range pos {
				seeds[t] = pl.seedsNew[q]
			}
			batches[j] = seeds
			keys[j] = BatchKey(r.epoch, index)
			if times != nil {
				ts := make([]int64, len(pos))
				for t, q := range pos {
					ts[t] = pl.opt.SeedTimes[q]
				}
				times[j] = ts
			}
		}
		if m, ok := s.(Materializer); ok && times == nil {
			if !pl.sampleMaterialized(r, m, s, i, batches, keys, order, send) {
				return
			}
			continue
		}
		// Not cancelled on stop, only on Close: an aborted collective would
		// leave the sampler's comm unusable for later epochs.
		var res []*sample.Result
		var err error
		if times != nil {
			res, err = s.(timedWorker).SampleBatchesTimed(pl.life, batches, times, keys)
		} else {
			res, err = s.SampleBatches(pl.life, batches, keys)
		}
		if err != nil {
			index := pl.index(i)
			send(job{index: index, err: fmt.Errorf("pipeline: %sepoch %d, sampling batch %d: %w", pl.where(), r.epoch, index, err)})
			return
		}
		for j, rs := range res {
			// The batch's topology goes to output memory here, in the
			// worker, so that the loader stage only gathers node data.
			index := pl.index(i + j)
			pos, seeds := pl.batchInputs(order, index)
			b, err := materializeTopology(rs, seeds, pos, pl.p, pl.alloc)
			jb := job{index: index, b: b, res: rs, s: s}
			if err == nil && rows != nil {
				// Before the views: on a rank's part the rows come with
				// the nodes' original ids, which the typed view reads.
				if jb.rows, err = rows.LoadRows(pl.life, w, b, rs.Nodes, len(pos), pl.opt.FeatureNames, pl.opt.LabelNames, pl.opt.Threads); err != nil {
					b.Release()
				}
			}
			if err == nil {
				err = pl.addViews(b, rs.Nodes)
			}
			if err == nil && rows != nil {
				s.Recycle(rs) // the batch holds copies of everything it needs
				jb.res = nil
			}
			if err != nil {
				s.Recycle(res[j:]...)
				send(job{index: index, err: fmt.Errorf("pipeline: %sepoch %d, loading batch %d: %w", pl.where(), r.epoch, index, err)})
				return
			}
			b.Index, b.Epoch = index, r.epoch
			if !send(jb) {
				jb.drop()
				s.Recycle(res[j+1:]...)
				return
			}
		}
	}
}

// addViews adds to b, in a sampler worker, the views the options ask for:
// the typed view (Options.Types) and the COO (Options.COO, of the
// Options.COOEdges; internal: the batch's nodes' internal ids). On error b
// is released.
func (pl *Pipeline) addViews(b *Batch, internal []int64) error {
	var err error
	if pl.opt.COO { // first: SubgraphEdges change the blocks the typed view splits
		err = b.setEdges(pl.opt.COOEdges, pl.p, internal, pl.opt.Types != nil)
	}
	if err == nil && pl.opt.Types != nil {
		err = b.SetTyped(pl.opt.Types)
	}
	if err != nil {
		b.Release()
	}
	return err
}

// workerQueue is a worker's end of its queue to the loader, which times the
// worker's busy and blocked spells.
type workerQueue struct {
	pl   *Pipeline
	r    *run
	jobs chan<- job
	t0   time.Time // start of the current spell
}

// send queues j, or reports false when the epoch was stopped meanwhile.
func (q *workerQueue) send(j job) bool {
	st := &q.pl.st
	q.t0 = st.busy(samplerStage, q.t0)
	defer func() { q.t0 = st.blocked(samplerStage, q.t0) }()
	if j.err == nil {
		// Counted before the hand-off, so that the stage after never
		// counts a batch this stage has not.
		st.batch(samplerStage)
	}
	select {
	case q.jobs <- j:
		return true
	case <-q.r.stop:
	case <-q.r.loaderDone:
	}
	return false
}

// stopped reports whether the epoch was stopped or its loader is done.
func (q *workerQueue) stopped() bool {
	select {
	case <-q.r.stop:
		return true
	case <-q.r.loaderDone:
		return true
	default:
		return false
	}
}

// makeLoop is worker w of a maker's pipeline: with W workers, it makes
// the epoch's batches w, w+W, w+2W, ... (one batch per wave) and queues
// them in order on jobs. The k-th batch of an epoch is the group's batch
// index(k) (k itself without a Share); with a Share, a GroupMaker makes it
// with the other ranks' batches of its round, and the Share's RowLoader
// loads the node data here, after making.
func (pl *Pipeline) makeLoop(r *run, order []int64, m maker, w int, jobs chan<- job) {
	defer r.wg.Done()
	defer close(jobs)
	q := &workerQueue{pl: pl, r: r, jobs: jobs}
	var rows RowLoader
	gm, grouped := m.(GroupMaker)
	if pl.opt.Share != nil {
		rows = pl.opt.Share.Rows
	} else {
		grouped = false
	}
	for i := r.first + w; i < r.total; i += len(pl.makers) {
		if q.stopped() {
			return
		}
		q.t0 = time.Now()
		index := pl.index(i)
		var b *Batch
		var res *sample.Result
		var err error
		if grouped {
			group, keys := pl.round(order, r.epoch, i)
			b, res, err = gm.MakeGroup(pl.life, group, keys, pl.opt.Share.Rank, pl.alloc)
		} else {
			b, res, err = m.Make(pl.life, pl.batchSeeds(order, int(index)), BatchKey(r.epoch, index), pl.alloc) // cancelled by Close
		}
		if err != nil {
			q.send(job{index: index, err: fmt.Errorf("pipeline: %sepoch %d, making batch %d: %w", pl.where(), r.epoch, index, err)})
			return
		}
		jb := job{index: index, b: b, res: res, s: m}
		if rows != nil {
			// Before the views, as in sampleLoop.
			if jb.rows, err = rows.LoadRows(pl.life, w, b, res.Nodes, int(res.HopCounts[0]), pl.opt.FeatureNames, pl.opt.LabelNames, pl.opt.Threads); err != nil {
				b.Release()
				m.Recycle(res)
				q.send(job{index: index, err: fmt.Errorf("pipeline: %sepoch %d, loading batch %d: %w", pl.where(), r.epoch, index, err)})
				return
			}
		}
		if err = pl.addViews(b, res.Nodes); err != nil {
			m.Recycle(res)
			q.send(job{index: index, err: fmt.Errorf("pipeline: %sepoch %d, making batch %d: %w", pl.where(), r.epoch, index, err)})
			return
		}
		if rows != nil {
			m.Recycle(res) // the batch holds copies of everything it needs
			jb.res = nil
		}
		b.Index, b.Epoch = index, r.epoch
		if !q.send(jb) {
			jb.drop()
			return
		}
	}
}

// loadLoop takes the batches in order (batch i from the queue of the worker
// that samples its wave), gathers their node data and delivers them. With
// Options.GatherAhead, it gathers up to GatherAhead batches beyond the
// oldest one not yet delivered at the same time (each on a goroutine of
// its own), and still delivers in order.
func (pl *Pipeline) loadLoop(r *run, jobs []chan job) {
	defer r.wg.Done()
	defer close(r.out)
	defer close(r.loaderDone)
	ahead := max(0, pl.opt.GatherAhead)
	var pending []*loading // gathers started and not yet delivered, in batch order
	defer func() {
		// Stopped or failed: the gathers still running finish, and what
		// they hold is dropped.
		for _, l := range pending {
			<-l.done
			if l.err == nil && l.j.b != nil {
				l.j.b.Release()
			}
		}
	}()
	deliver := func(it item) bool {
		t0 := time.Now()
		defer pl.st.blocked(loaderStage, t0)
		if it.err == nil {
			pl.st.batch(loaderStage) // before the hand-off, as in sampleLoop
		}
		select {
		case r.out <- it:
			return true
		case <-r.stop:
			it.b.Release()
			return false
		}
	}
	var busy spells
	ranks := pl.ranks
	next, inputDone := r.first, false
	for len(pending) > 0 || (next < r.total && !inputDone) {
		var in chan job
		if next < r.total && !inputDone && len(pending) <= ahead {
			in = jobs[((next-r.first)/ranks)%len(jobs)]
		}
		var done chan struct{}
		if len(pending) > 0 {
			done = pending[0].done
		}
		t0 := time.Now()
		select {
		case <-r.stop:
			return
		case j, ok := <-in:
			if len(pending) == 0 { // no gather ran meanwhile: the stage waited
				pl.st.waiting(loaderStage, t0)
			}
			if !ok {
				inputDone = true // stopped: deliver what was taken
				continue
			}
			next++
			l := &loading{j: j, done: make(chan struct{})}
			pending = append(pending, l)
			switch {
			case j.err != nil:
				l.err = j.err
				close(l.done)
			case ahead == 0:
				pl.gather(r, l, &busy)
			default:
				go pl.gather(r, l, &busy)
			}
		case <-done:
			l := pending[0]
			pending = pending[1:]
			if l.err != nil {
				deliver(item{err: l.err})
				return
			}
			if !deliver(item{b: l.j.b}) {
				return
			}
		}
	}
}

// loading is a batch whose node data the loader stage gathers: done is
// closed when it has (err set if it failed; the batch is then released).
type loading struct {
	j    job
	err  error
	done chan struct{}
}

// gather loads the node and edge data of l's batch and closes l.done,
// counting its time as the loader stage's busy time (busy: the spells
// during which at least one gather runs).
func (pl *Pipeline) gather(r *run, l *loading, busy *spells) {
	defer close(l.done)
	busy.begin()
	defer busy.end(&pl.st)
	j := l.j
	b := j.b
	tc := j.rows
	var err error
	if j.res != nil { // else a RowLoader loaded the node data
		err = b.loadNodeData(j.res, pl.store, pl.typedNames(), pl.opt.FeatureNames, pl.opt.LabelNames, pl.opt.Threads, &tc)
		j.recycle() // the batch holds copies of everything it needs
	}
	if err == nil {
		err = b.loadEdgeData(pl.opt.EdgeStore, pl.opt.EdgeFeatureNames, pl.opt.Threads, &tc)
	}
	pl.st.gathered(tc)
	if err != nil {
		b.Release()
		l.err = fmt.Errorf("pipeline: %sepoch %d, loading batch %d: %w", pl.where(), r.epoch, j.index, err)
	}
}

// spells counts the loader stage's busy time when gathers overlap: the
// time during which at least one runs.
type spells struct {
	mu      sync.Mutex
	running int
	since   time.Time
}

func (s *spells) begin() {
	s.mu.Lock()
	if s.running == 0 {
		s.since = time.Now()
	}
	s.running++
	s.mu.Unlock()
}

func (s *spells) end(st *stats) {
	s.mu.Lock()
	if s.running--; s.running == 0 {
		st.busy(loaderStage, s.since)
	}
	s.mu.Unlock()
}

// Next returns the next batch of the current epoch in batch order, io.EOF at
// its end, or the first error from the sampler or loader (which then sticks
// until the next Start). The caller owns the batch and must Release it.
// A ctx done on entry returns its error; one that ends the wait returns its
// error too, unless a batch was ready (the pipeline is unchanged either
// way: the next call waits for the same batch).
func (pl *Pipeline) Next(ctx context.Context) (*Batch, error) {
	pl.nextMu.Lock()
	defer pl.nextMu.Unlock()
	pl.mu.Lock()
	r, closed := pl.cur, pl.closed
	pl.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if r == nil {
		return nil, errors.New("pipeline: Next called before Start")
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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	if !r.lastReturn.IsZero() {
		// Once per batch: a Next that ctx ended (a caller polling with a
		// time-out) is waiting time, not the consumer's work.
		pl.st.busy(consumerStage, r.lastReturn)
		r.lastReturn = time.Time{}
	}
	defer pl.st.waiting(consumerStage, t0)
	select {
	case it, ok := <-r.out:
		return pl.deliver(r, it, ok)
	case <-ctx.Done():
		// A batch that is ready wins over a done ctx (a caller polling with
		// a zero wait gets it).
		select {
		case it, ok := <-r.out:
			return pl.deliver(r, it, ok)
		default:
			return nil, ctx.Err()
		}
	}
}

// Position returns the epoch in progress (or the last one) and how many of
// its batches Next has delivered, counting those a StartAt skipped: the
// place to resume it from with StartAt. started is false before the first
// Start (and after Close). Safe from any goroutine.
func (pl *Pipeline) Position() (epoch uint64, delivered int, started bool) {
	pl.mu.Lock()
	r := pl.cur
	pl.mu.Unlock()
	if r == nil {
		return pl.epochNum.Load(), 0, false
	}
	return r.epoch, int(r.position.Load()), true
}

// deliver is Next's answer for what it took from r.out (ok false: closed).
func (pl *Pipeline) deliver(r *run, it item, ok bool) (*Batch, error) {
	if !ok {
		return nil, ErrStopped
	}
	if it.err != nil {
		r.err = it.err
		return nil, it.err
	}
	r.delivered++
	r.position.Store(int64(r.delivered))
	pl.st.batch(consumerStage)
	r.lastReturn = time.Now()
	if r.delivered == r.total {
		pl.endNs.Store(max(1, int64(r.lastReturn.Sub(pl.base))))
	}
	return it.b, nil
}

// epochWall returns the wall time of the current epoch so far: from Start
// to its last delivery, or to now while it runs (0 before the first Start).
func (pl *Pipeline) epochWall() time.Duration {
	if pl.epochs.Load() == 0 {
		return 0
	}
	start, end := pl.startNs.Load(), pl.endNs.Load()
	if end == 0 {
		end = int64(time.Since(pl.base))
	}
	return time.Duration(max(0, end-start))
}

// Stats returns the pipeline's statistics: the current epoch's (or the last
// one's) and the total since New. Safe to call from any goroutine at any
// time, also after Close; the counters are read one by one, so a Stats taken
// while the stages run may be a batch off between stages.
func (pl *Pipeline) Stats() Stats {
	cur := pl.st.epoch.load()
	cur.Wall = pl.epochWall()
	total := pl.st.total.load()
	total.Wall += cur.Wall
	return Stats{
		Workers: pl.numWorkers(),
		Epoch:   pl.epochNum.Load(),
		Epochs:  pl.epochs.Load(),
		Current: cur,
		Total:   total,
	}
}

// Close stops everything (no goroutine of the pipeline is left running when
// it returns) and frees undelivered batches. Unlike Start, it cancels the
// sampler workers' collectives in flight (their context), so that it does
// not wait for an exchange blocked on another rank; how promptly one
// returns is its communicator's (see comm.Host). A Next waiting in another
// goroutine returns ErrStopped. Idempotent.
func (pl *Pipeline) Close() error {
	pl.endLife()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return nil
	}
	pl.closed = true
	pl.stopLocked()
	return nil
}

// checkOrder checks that order is a permutation of [0, n).
func checkOrder(order []int64, n int) error {
	if len(order) != n {
		return fmt.Errorf("pipeline: the epoch order has %d positions for %d items (want a permutation of [0, %d))", len(order), n, n)
	}
	seen := make([]bool, n)
	for i, v := range order {
		if v < 0 || v >= int64(n) {
			return fmt.Errorf("pipeline: order[%d] = %d is out of range [0, %d)", i, v, n)
		}
		if seen[v] {
			return fmt.Errorf("pipeline: order[%d] = %d repeats an earlier position (want a permutation of [0, %d))", i, v, n)
		}
		seen[v] = true
	}
	return nil
}

// epochOrder returns the positions of the n seeds in epoch order: the
// identity, or a Fisher-Yates shuffle driven by SplitMix64 seeded from
// (seed, epoch).
func epochOrder(n int, shuffle bool, seed, epoch uint64) []int64 {
	order := make([]int64, n)
	for i := range order {
		order[i] = int64(i)
	}
	if !shuffle {
		return order
	}
	r := rng.SplitMix64{State: rng.Mix(rng.Mix(seed+0x243f6a8885a308d3) ^ (epoch + 0x13198a2e03707344))}
	for i := n - 1; i > 0; i-- {
		j := r.Below(uint64(i + 1)) // uniform in [0, i]
		order[i], order[j] = order[j], order[i]
	}
	return order
}

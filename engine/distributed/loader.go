package distributed

import (
	"io"
	"runtime"
	"slices"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// maxWorkers bounds the default number of sampler workers of a
// coordinated distributed loader: their exchanges run one at a time anyway.
const maxWorkers = 4

// OpenLoader opens the loader of one rank of a group of processes that
// sample together (one rank per process, c.LocalRanks() its single rank,
// typically a comm.Host over torch.distributed or MPI). Every rank opens it
// with the same seeds and options on the same graph, partitioned into
// c.Size() patches; rank r owns patch r for sampling (CSP's shuffle and
// reshuffle cross the processes through c). The topology and node data are
// replicated in every process for now: the patches decide who samples
// which node, not what a process holds.
//
// The loader is a pipeline.Pipeline with a pipeline.Share: the batches of
// an epoch are those of a single-process loader with the same seeds and
// options (same seeds per batch, same random streams, so bit-identical
// batches), dealt out round-robin: rank r gets batches r, r+size,
// r+2*size, ... Every rank delivers ceil(NumBatches/size) of them, so that
// collective training steps (DDP) never wait for a rank that ran out: a
// rank short of a batch in the last round is padded with a copy of one of
// the epoch's first batches (global index i mod NumBatches), as torch's
// DistributedSampler pads. Batch.Index is the global index. Its statistics
// (Loader.Stats) are the pipeline's.
//
// Sampling is collective, so every rank must consume every epoch to its
// end (the same number of batches): a rank that starts another epoch or
// closes early leaves the others blocked in the host's collective until
// its time-out (comm.HostOptions.Timeout, which names the rank that did
// not answer; with a CoordinatedComm, the coordinator's Timeout). Closing
// a rank's loader does not wait for a collective blocked on the others:
// the pipeline cancels it, and a comm.Host stops waiting for its host.
//
// Sampler workers: when c cannot be duplicated (a comm.Host: the host
// provides one exchange channel), one worker samples the rank's batches in
// order, on c itself. When it can (a CoordinatedComm, whose coordinator
// orders the exchanges of concurrent stages over one channel),
// lopt.Workers workers (<= 0: one per sampling thread, at most 4) sample
// batches k, k+W, ... of the rank's share concurrently, each on a fork of
// the runtime; batches are delivered in order and do not depend on W.
// Either way they work ahead of the consumer by up to QueueCapacity
// batches, and the node data of a batch is gathered by the pipeline's
// loader stage.
//
// When c is an io.Closer (CoordinatedComm), the loader closes it when it is
// closed.
func OpenLoader(g *core.Graph, c comm.Comm, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator) (*core.Loader, error) {
	return openShare(g, c, seeds, req, lopt, alloc, nil)
}

// openShare opens rank c.LocalRanks()[0]'s share of the group's epochs on
// g (see OpenLoader). part, when not nil, makes the loader of a rank's
// part (see partLoad).
func openShare(g *core.Graph, c comm.Comm, seeds []int64, req sample.Request, lopt pipeline.Options, alloc mem.Allocator, part *partLoad) (*core.Loader, error) {
	return openGroup(g, c, lopt, part, func(in core.Internals, pt *partition.Partitioned, rt *sample.Runtime, lopt pipeline.Options) (*pipeline.Pipeline, error) {
		s, err := bind(rt, req)
		if err != nil {
			return nil, err
		}
		return pipeline.New(s, pt, in.Store, seeds, lopt, alloc)
	})
}

// openGroup opens rank c.LocalRanks()[0]'s share of the group's epochs on
// g: it checks the group, makes the rank's sampling runtime over c and the
// options of its share (workers, share, and for a part the rows and the
// ids it resolved: see partLoad), and build makes the pipeline (a node or
// edge loader's) from them over pt, the partition its runtime samples.
func openGroup(g *core.Graph, c comm.Comm, lopt pipeline.Options, part *partLoad,
	build func(in core.Internals, pt *partition.Partitioned, rt *sample.Runtime, lopt pipeline.Options) (*pipeline.Pipeline, error)) (*core.Loader, error) {
	if c == nil {
		return nil, errs.Errorf(nil, "communicator is nil")
	}
	ranks := c.LocalRanks()
	if len(ranks) != 1 {
		return nil, errs.Errorf(nil, "a distributed loader runs one rank per process, but the communicator runs %d here", len(ranks))
	}
	return g.OpenLoaderWith(func(in core.Internals) (*pipeline.Pipeline, io.Closer, error) {
		if n := in.Part.NumPatches(); n != c.Size() {
			return nil, nil, errs.Errorf(nil, "the graph has %d patches but the communicator %d ranks: open the graph with one patch per rank", n, c.Size())
		}
		if lopt.BatchSize <= 0 {
			return nil, nil, errs.Errorf(nil, "batch size = %d is invalid (want > 0)", lopt.BatchSize)
		}
		if err := checkNames(in.Store, lopt, "graph"); err != nil {
			return nil, nil, err
		}
		pt := in.Part
		var err error
		if part != nil && pt.Ranked != nil {
			if pt, err = pt.WithIDs(part.orig, part.internal); err != nil {
				return nil, nil, err
			}
		}
		rt, err := sample.NewRuntime(pt, c, in.Runtime(lopt.Threads))
		if err != nil {
			return nil, nil, err
		}
		workers := 1
		if probe, err := c.Dup(); err == nil && probe != nil {
			// Every rank duplicates in the same order, so the stages
			// match.
			workers = defaultWorkers(lopt)
		}
		lopt.Workers = workers
		lopt.Types = in.Types // a typed graph's batches carry their typed view, as one process's do
		lopt.NodeDataTypes = in.NodeDataTypes
		share := &pipeline.Share{Rank: ranks[0], Size: c.Size()}
		if part != nil && (len(lopt.FeatureNames)+len(lopt.LabelNames) > 0 || pt.Ranked != nil) {
			// One exchange channel per sampler worker (c itself for one).
			channels := []comm.Comm{c}
			if lopt.Workers > 1 {
				channels = make([]comm.Comm, lopt.Workers)
				for w := range channels {
					if channels[w], err = c.Dup(); err != nil {
						return nil, nil, err
					}
				}
			}
			share.Rows = part.rows(in, channels)
		}
		lopt.Share = share
		pl, err := build(in, pt, rt, lopt)
		if err != nil {
			return nil, nil, err
		}
		closer, _ := c.(io.Closer)
		return pl, closer, nil
	})
}

// bind binds req, with its lists copied, to rt.
func bind(rt *sample.Runtime, req sample.Request) (*sample.Sampler, error) {
	req.Fanouts = slices.Clone(req.Fanouts)
	req.ExcludeEdges = slices.Clone(req.ExcludeEdges)
	return rt.Bind(req)
}

// checkNames checks that the node data lopt names is in store (of what, for
// the message).
func checkNames(store feature.Gatherer, lopt pipeline.Options, what string) error {
	for _, list := range [][]string{lopt.FeatureNames, lopt.LabelNames} {
		for _, name := range list {
			if _, ok := store.Get(name); !ok {
				return errs.Errorf(nil, "node data %q is not in the %s (have %v)", name, what, store.Names())
			}
		}
	}
	return nil
}

// defaultWorkers returns the number of sampler workers of a distributed
// loader whose communicator can be duplicated: lopt.Workers, or when that
// is <= 0 one per thread (lopt.Threads, <= 0: every core), at most
// maxWorkers.
func defaultWorkers(lopt pipeline.Options) int {
	if lopt.Workers > 0 {
		return lopt.Workers
	}
	threads := lopt.Threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return min(threads, maxWorkers)
}

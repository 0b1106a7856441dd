// Package pipeline turns a seed set into a stream of ready mini-batches:
// sampled blocks plus gathered node data, in buffers from a mem.Allocator
// (DSP §5's sampler -> loader -> trainer producer-consumer pipeline; the
// trainer is the consumer calling Next).
//
// # Stages
//
// The pipeline owns the batch keys, the epoch shuffle, the workers and the
// queues; the work of its two stages is behind interfaces, so that a device
// backend plugs its own in while all of that stays shared code:
//
//   - BatchSampler samples whole waves of batches with a request fixed when
//     it was built, and forks into independent copies that give the same
//     batches. *sample.Sampler (a sample.Runtime bound to a sample.Request)
//     is the CPU implementation.
//   - feature.Gatherer gathers named node data (one row per node) by node
//     id. *feature.Store is the CPU implementation, engine/cache's Tiered
//     a tiered one.
//
// New is generic over the sampler's type S (a BatchSampler[S], whose Fork
// returns an S), so that each implementation's Fork keeps its own type.
//
// An edge-level loader's batch has seed nodes that are known only once its
// negatives are drawn: its sampling stage is a Maker (engine/linkload),
// which makes each batch whole from positions into its own items (seed
// edges or node pairs) and a batch key. NewMaker builds a pipeline over
// one; everything else (the epoch shuffle of the positions, batch keys,
// workers, queues, the loader stage, statistics, Start/Next/Close) is the
// same code as for node loaders.
//
// The loader stage also gathers edge data (Options.EdgeFeatureNames: one
// row per edge id) over the edge ids of a batch's blocks, in block order,
// or of its COO for a batch without blocks (a subgraph loader's Maker,
// engine/subload, makes its batches' edges one edge list).
//
// A device backend's forks also implement Materializer: its workers then
// make their batches themselves (SampleMaterialized) in place of the copy
// of each sample.Result into allocator buffers, with tensors in device
// memory (NewDeviceBatch: the batch records the stream it was made on and
// an event, Ready, that a consumer's stream waits for; Release gives the
// device memory back in that stream's order, ReleaseAfter after the
// consumer's) or copied from the device straight into the allocator's
// buffers; they may gather the node data too, on the device.
//
// # Epochs
//
// Per epoch, Start shuffles the seeds with a permutation that is a function
// of (Options.Seed, epoch) only, then runs W sampler workers and a loader
// goroutine joined by bounded queues (about Options.QueueCapacity batches
// in all; DSP uses 2):
//
//	worker w (of W) --jobs[w]--> loader goroutine --batches--> Next
//
// Each worker has its own fork of the sampler (its own communicator and
// workspaces, the sampler's threads shared out; by default one worker per
// thread, so the stage uses every core; WorkerMemory says what each costs)
// and samples whole waves of batches, one per rank this process
// runs (so that every rank has work in the CSP collectives): worker w takes
// waves w, w+W, w+2W, ... Batch i of epoch e uses the random-stream key
// BatchKey(e, i) = e<<32 | i, so a batch's sample depends on (sampler seed,
// epoch, batch index, its seeds), never on W, and can be reproduced by
// calling SampleBatches and Materialize directly. A worker also copies its
// batches' ids and blocks into allocator buffers; the loader takes batch i
// from the queue of the worker that sampled it, gathers the feature rows of
// all its nodes and the label rows of its seeds, and delivers it, so Next
// gets batches in order. With Options.GatherAhead the loader gathers up to
// that many later batches at the same time as batch i, each on a goroutine
// of its own (the disk tier's loaders gather one ahead, so that one
// batch's reads overlap another's cache work instead of the disk idling),
// and still delivers in order.
//
// Sampling results hold no allocator memory (Go heap); only materialized
// batches do, and every path that drops one (stop mid-epoch, error, Close)
// releases it, so that an allocator is balanced once the consumer has
// released what it received. On Start, a SampleBatches call in flight is
// allowed to finish rather than cancelled (cancelling a collective aborts
// the comm.Local for good), so Start may wait for one sampling round;
// Close cancels it (the loader is going away), so that it does not wait
// for an exchange blocked on another rank.
//
// # Waiting
//
// Next waits for the next batch until its context is done; that leaves
// the pipeline unchanged (the next call waits for the same batch), so a
// caller may poll with short deadlines (C's gf_loader_next_wait, which
// Python calls in a loop to see Ctrl-C). Start and Close from another
// goroutine end a waiting Next with ErrStopped.
//
// # Statistics
//
// Stats reports, for the epoch in progress and in total, each stage's busy
// time, the time it was blocked on a full queue after it and the time it
// waited on an empty queue before it, the batches it passed on, and where
// the gathered node data came from (bytes per memory kind, rows from a hot
// tier and from the store: a feature.TierGatherer such as engine/cache's
// says). The loader's busy time is the time during which at least one of
// its gathers runs (with GatherAhead they overlap). They are atomic counters and monotonic clock readings, a few per
// batch and stage. The stage with the largest busy share of the wall time
// (the sampler's divided by its workers) is the bottleneck.
//
// # One rank's share
//
// Every loader streams through a Pipeline, the distributed ones
// (engine/distributed) too: Options.Share makes a pipeline deliver one
// rank's share of a group's epochs (the group's batch i of an epoch is the
// same on every rank; rank r delivers batches r, r+Size, ..., padded in
// the last round), and a Share's RowLoader fetches a batch's node data
// from other processes in the sampler worker that sampled it, in place of
// the loader stage's gather. Start, Next, Close, the queues and the
// statistics are the same code for every loader.
//
// It imports sample, partition, feature, graph, mem, rng and errs
// (engine/layering_test.go); nothing of the loaders built on it (core, distributed) nor
// engine/cache, which it reaches through feature.TierGatherer.
package pipeline

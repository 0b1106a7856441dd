// Package pipeline turns a seed set into a stream of ready mini-batches:
// sampled blocks plus gathered node data, in buffers from a mem.Allocator
// (DSP §5's sampler -> loader -> trainer producer-consumer pipeline; the
// trainer is the consumer calling Next).
//
// Per epoch, Start shuffles the seeds with a permutation that is a function
// of (Options.Seed, epoch) only, then runs two goroutines joined by bounded
// queues of Options.QueueCapacity (DSP uses 2):
//
//	sampler goroutine --jobs--> loader goroutine --batches--> Next
//
// The sampler goroutine hands up to comm-size batches at a time to
// sample.Sampler.SampleBatches (one per rank, so every rank has work in the
// CSP collectives). Batch i of epoch e uses the random-stream key
// BatchKey(e, i) = e<<32 | i, so a batch's sample depends on (sampler seed,
// epoch, batch index, its seeds) and can be reproduced by calling
// SampleBatches and Materialize directly. The loader goroutine materializes
// each result: copies ids and blocks into allocator buffers and gathers the
// feature rows of all the batch's nodes and the label rows of its seeds.
// Both goroutines preserve batch order, so Next delivers batches in order.
//
// Sampling results hold no allocator memory (Go heap); only materialized
// batches do, and every path that drops one (stop mid-epoch, error, Close)
// releases it, so that an allocator is balanced once the consumer has
// released what it received. A SampleBatches call in flight is allowed to
// finish rather than cancelled (cancelling a collective aborts the
// comm.Local for good), so Start and Close may wait for one sampling round.
package pipeline

package pipeline

import "context"

// BatchFunc is a function of the engine's caller that a batch source calls
// once for each batch it makes, on the thread making that batch (a
// sampler worker, ahead of the consumer; the caller's own for a one-off
// batch), before making it: given the batch key and ids of the batch (an
// edge loader's seed edge ids), it returns ids of its own that the batch
// is then made with (the edges it excludes: DGL's callable exclude; a
// subgraph loader's nodes to induce on: a custom GraphSAINT draw). Calls
// for different batches may run at once, on different threads.
//
// maxOut bounds the result: an implementation that copies it in from
// elsewhere (engine/../capi's C callback) refuses a longer one before
// copying it. A non-nil error fails that batch (and so its epoch) with it:
// the consumer gets it, wrapped, where it would have got the batch, its
// class (errs) kept.
type BatchFunc func(ctx context.Context, key uint64, ids []int64, maxOut int) ([]int64, error)

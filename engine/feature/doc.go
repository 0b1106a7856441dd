// Package feature holds node data (features, labels) and gathers rows of it.
//
// A Store maps names to dense arrays whose row i belongs to internal node i
// (the partition's renumbered id). Arrays keep their dtype (float32, float16
// and bfloat16 features are gathered as raw rows, never converted); the
// memory of an array is the caller's, who may pass a release callback that
// the Store calls exactly once when it lets go of the array.
//
// Gather copies rows, in parallel over chunks of rows for large requests, into
// a caller-provided buffer (the pipeline allocates it through a mem.Allocator
// so that gathered data can leave the engine without a copy). Store.Gather
// does the same under the store's read lock, so that Set and Delete wait for
// in-flight gathers before releasing an array.
//
// Gatherer is what a loader gathers batches from (a Store, or engine/cache's
// Tiered in front of one), and TierGatherer one that says where the rows
// came from (TierCounts): they are defined here, below both the cache and
// the pipeline, so that neither imports the other.
//
// It imports only errs and mem (engine/layering_test.go).
package feature

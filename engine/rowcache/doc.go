// Package rowcache is the CPU cache of node-data rows read from disk: a
// cache of fixed-size rows keyed by row id, sized in bytes, with a choice
// of eviction policy, safe for concurrent use by a loader's workers.
//
// The policies, each as its paper describes it (the tests replay a fixed
// access sequence whose evictions were worked out by hand from them):
//
//   - LRU: evict the least recently used row.
//   - SIEVE (Zhang et al., NSDI'24): one FIFO queue, a visited bit per row
//     set on a hit, and a hand that moves from the oldest row towards the
//     newest, clearing visited bits, and evicts the first unvisited row;
//     it wraps around to the oldest row, and stays where it evicted.
//   - S3-FIFO (Yang et al., SOSP'23): a small FIFO (10% of the rows) that
//     new rows enter, a main FIFO (the other 90%) and a ghost FIFO of the
//     ids last evicted from the small one (as many as the main queue
//     holds). A hit raises a row's 2-bit frequency (capped at 3). When the
//     cache is full, the small queue is evicted from while it holds at
//     least 10% of the rows, else the main one: the small queue's oldest
//     row moves to the main queue if it was hit since it was inserted
//     (frequency >= 1, the "migration threshold 1" of the authors'
//     description; it enters with frequency 0), else it leaves for the
//     ghost; the main queue's oldest row is reinserted with its frequency
//     lowered by one while it is above 0, else evicted. A miss whose id is
//     in the ghost goes straight to the main queue.
//
// Capacity is counted in rows: the byte size divided by the row size plus
// the per-row bookkeeping (EntryOverhead), so that the cache's memory stays
// within its size. Lookups and inserts take batches of ids under one lock
// (InsertAt inserts a Lookup's misses from their rows of its dst). The
// index from row id to slot, and S3-FIFO's ghost index, are open-addressing
// tables (linear probing, at most half full, deletion by shifting back),
// sized once: no Go map on the per-row path. The rows are asked onto
// transparent huge pages (rows are touched at random).
//
// It imports nothing of the engine (engine/layering_test.go: layer 0).
package rowcache

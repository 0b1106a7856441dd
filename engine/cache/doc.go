// Package cache splits node data into tiers: a hot tier holding a
// contiguous copy of the rows most likely to be read, and the full store
// (often a memory-mapped file) for the rest, as PaGraph's and DSP's
// feature caches do. A Tiered gathers from both into one output, rows in
// input order, dtypes kept, and says how many rows each tier served, so
// the pipeline's statistics report the hit rate per epoch.
//
// Which rows are hot is a policy's ranking of the nodes, cut at a size:
//
//   - ByInDegree ranks nodes by in-degree (PaGraph): high in-degree nodes
//     are the neighbours most often sampled.
//   - pre-sampling counts how often each node's rows are read over a few
//     sampled epochs (pipeline.Pipeline.ReadCounts, pipeline.PreSample) and
//     ranks by that count (GNNLab, and DSP's evaluation): it follows the
//     sampler, the fan-outs and the seeds actually used. It is
//     deterministic: batches are a function of the sampler's seed, the
//     shuffle seed and the epoch.
//
// Size says how large the hot tier is: in bytes, as a fraction of the
// nodes, or "auto": what fits in a budget after a reserve (on the CPU build
// the caller gives the budget; a device build takes the device's free
// memory).
//
// On the CPU build the hot tier lives in host memory: it is the copy a
// device tier will hold, so its assignment, policies and statistics are
// those of the device build.
//
// Below the hot tier, an array may live on the disk tier (Disk, a
// feature.RowSource attached to the store's array): a CPU cache of rows
// (engine/rowcache: S3-FIFO, SIEVE or LRU, sized in bytes) over batched
// direct reads of the array's file (engine/diskio). The order of tiers is
// then device, pinned or host hot rows (Tiered), the CPU cache, the disk;
// feature.TierCounts says how many rows and bytes each served.
//
// It imports feature, graph, mem, rowcache and diskio only
// (engine/layering_test.go); in particular not engine/pipeline, which
// gathers through a Tiered as a feature.TierGatherer.
package cache

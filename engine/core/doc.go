// Package core is the engine's graph object: a graph partitioned into
// patches, with its node data and edge weights, and the calls made on it
// (set and read node data, set weights and types, sample a batch, walk,
// open a node loader or a link-prediction edge sampler). It is what a
// gf_graph handle of the C API refers to; the C layer only validates and
// converts arguments around it.
//
// A Loader is a pipeline.Pipeline holding a reference to its Graph.
// Loaders over a communicator shared with other processes are
// engine/distributed's: it builds them on a Graph through OpenLoaderWith
// (and Use, FromPartition), which hand it the Graph's internals for the
// duration of a call.
//
// It imports the engine below it (pipeline, cache, sample, linkpred,
// dataset, fileformat, partition, feature, comm, graph, mem, errs), never
// engine/distributed (engine/layering_test.go).
//
// # Numbering
//
// Callers speak original node ids and original row order; inside, the
// partition may renumber the nodes so that every patch owns a consecutive
// range. Graph does the mapping both ways: node data set in original row
// order is permuted into the internal order (and read back in original
// order), seeds are mapped in, and batches and walks come back in original
// ids. Edge ids are never renumbered.
//
// # Lifetime
//
// A Graph is reference-counted. Its creator holds one reference, released by
// Close; every open Loader holds one; and every call on the Graph holds one
// for its duration. Close marks the Graph closed, so that later calls fail
// with an error wrapping errs.ErrClosed ("graph was closed"), and the
// Graph's memory (the node data, the memory-mapped dataset files, and
// through the node data's release functions the caller's buffers) is
// released when the last reference goes: at once when nothing else holds
// one, or when the last call in progress returns or the last loader is
// closed. A Loader opened before Close keeps working until it is closed
// itself (the rule of sqlite3_close_v2).
//
// All methods are safe for concurrent use. Changing node data that an open
// loader reads, or the edge weights while loaders are open, fails with an
// error wrapping errs.ErrState.
package core

// Package distributed is loading shared by a group of processes, one rank
// each, that sample together over a communicator (a comm.Host over
// torch.distributed or MPI, or a CoordinatedComm):
//
//   - OpenLoader opens one rank's loader on a core.Graph holding the whole
//     graph, partitioned into one patch per rank: CSP's exchanges cross the
//     processes, the node data is the rank's own copy;
//   - OpenPart opens one rank's folder of a dataset split by engine/rankpart
//     (Part), whose loaders (Part.OpenLoader) fetch the node data of each
//     batch from the ranks that own it (dsp, hybrid; on dsp with the
//     nodes' original ids, since a rank holds no map of the whole graph:
//     resolve.go) or sample the rank's
//     own neighbourhoods alone (self-reliant); a typed partition's part
//     is a typed graph (the whole graph's types by original ids), whose
//     loaders give the typed batches of the replicated graph's and fetch
//     per-type node data by name (typed_rows.go);
//   - OpenEdgeLoader and Part.OpenEdgeLoader open the edge (link
//     prediction) loaders of the same two kinds: a pipeline over
//     engine/linkload's Source with the same Share, whose batches exclude
//     their seed edges in turns (linkload.Source.MakeGroup); a dsp rank
//     resolves the endpoints of the seed edges with the others at open,
//     and asks the owners which GlobalUniform candidates are edges, once
//     per batch (seedEdges.AreEdges);
//     on a replicated typed graph (core.Graph.SetTypes) and on a typed
//     Part (dsp, hybrid) both kinds serve the single-process typed
//     batches, typed views included;
//   - CoordinatedComm lets several sampler workers share a host's single
//     channel, their exchanges ordered by an engine/coordinator
//     Coordinator.
//
// Every loader here is a pipeline.Pipeline with a pipeline.Share (the
// rank's round-robin share of the group's batches, padded in the last
// round) wrapped in a core.Loader: the batches are those of a
// single-process loader with the same seeds and options, bit for bit, and
// Start, Next, Close and the statistics are the pipeline's.
//
// It is the engine's top layer: it imports core, pipeline, linkload,
// linkpred, rankpart, dataset, coordinator, sample, partition, comm,
// feature, graph, mem and errs, and nothing in the engine imports it (engine/layering_test.go).
package distributed

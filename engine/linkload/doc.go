// Package linkload makes the batches of edge-level loaders (link
// prediction), DGL's as_edge_prediction_sampler and PyG's
// LinkNeighborLoader, homogeneous and heterogeneous: from a batch of seed
// edge ids (DGL) or node pairs (PyG) and a batch key, the negatives (from
// the engine's streams, engine/linkpred), the seed nodes, the pairs
// relabelled to positions among them, the edges the batch excludes, and
// the neighbourhood of the seeds sampled without those edges.
//
// A Linker holds what every batch of a graph needs (its partition, types,
// edge index and options); Make makes one batch on a sampling runtime.
// A Source is a pipeline.Maker over a loader's items (its seed edges or
// pairs): the edge loaders run on pipeline.NewMaker, so that they have the
// node loaders' shuffle, batch keys, prefetching workers, queues, loader
// stage (node and edge data) and statistics. engine/core's EdgeSampler
// (one batch per call) and Graph.OpenEdgeLoader are built on it.
//
// # Batches
//
// A batch is a pipeline.Batch whose Seeds are the seed nodes of node
// sampling (DGL: dgl.compact_graphs' node order over the positive and
// negative pairs; PyG: the sorted distinct ids of the pairs), with its
// LinkField tensors in Batch.Link. On a typed graph the seeds are grouped
// by node type, the pairs by relation (DGL), and the pair indices are
// positions among the seeds of their own node type, what a heterogeneous
// pair graph or a per-type edge_label_index holds. A batch depends only on
// the options, the batch key and its seed edges or pairs: never on the
// patch, thread or worker count.
//
// It imports pipeline, sample, linkpred, partition, graph, mem and errs
// (engine/layering_test.go); engine/core builds on it.
package linkload

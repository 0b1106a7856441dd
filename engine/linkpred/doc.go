// Package linkpred holds the engine's side of link prediction: negative
// sampling, the exclusion of seed edges from neighbour sampling, and the
// seeds (and relabelled pair indices) of an edge batch, with the semantics
// of DGL's as_edge_prediction_sampler and PyG's LinkNeighborLoader.
//
// Everything here is a pure function of ids, a Stream (seed and batch key)
// and positions: no state is kept between batches, and no result depends on
// the thread count. DGLEdgeSampler.Batch and PyGLinkSampler.Batch do a
// whole batch in one call; underneath, the steps are:
//
//	DGL (seed edge ids):
//	  idx := NewEdgeIndex(g, threads)                   // once per graph
//	  pos := idx.Endpoints(eids)                        // g.find_edges
//	  neg := PerSourceUniform{K}.Sample(pos.Src, ...)   // or GlobalUniform
//	  c := CompactDGL(pos, neg)                         // compact_graphs
//	  excl := ExcludeReverseID(eids, rev)               // or ExcludeSelf
//	  node sampling from c.Nodes with ExcludeEdges = excl
//
//	PyG (seed pairs, edge_label_index):
//	  neg := Binary{Amount}.Sample(...)    // or Triplet{Amount}.Sample
//	  s := PyGBinarySeeds(pos, neg, disjoint) // or PyGTripletSeeds
//	  node sampling from s.Nodes
//
// # Random streams
//
// Draw number i of a batch (negative pair i, or negative destination i) is
// taken from its own SplitMix64 stream whose state is a hash of (seed,
// batch key, sampler kind, i), the same construction as engine/sample's
// per-task streams with a tag that keeps the two families apart. So a batch's
// negatives depend on nothing but those four values, whatever the thread
// count or chunking, and the samplers run in parallel over chunks of
// positions.
//
// # What DGL and PyG do, and we match
//
// DGL's Uniform(k) is an alias of PerSourceUniform(k): each positive edge
// (u, v) gives k pairs (u, v') with v' uniform over all nodes, no check
// against existing edges. DGL's GlobalUniform(k, exclude_self_loops=True,
// replace=False) draws about len(eids)*k*(1+redundancy) slots (redundancy
// from the graph's density, DGL's formula), each slot makes up to 3 tries
// of a uniform (u, v) that is neither an edge nor (optionally) a self-loop,
// failed slots are dropped, without replacement the pairs are sorted and
// deduplicated, and the first len(eids)*k are kept: it may return fewer.
//
// PyG's binary mode draws ceil(amount*num_pos) pairs with source and
// destination independent and uniform (or by the node weight vector), and
// its triplet mode draws amount destinations per positive; neither checks
// whether the pair is an edge (PyG 2.5 leaves such false negatives
// in).
//
// Exclusion follows dgl.dataloading.base.find_exclude_eids: "self" is the
// seed edge ids as given, "reverse_id" is the seed ids followed by their
// reverses (duplicates kept), "reverse_types" merges per edge type in the
// order of the reverse-type map. The neighbour sampler takes the list as a
// set (engine/sample's Request.ExcludeEdges), so duplicates cost nothing.
//
// Seeds: DGL's compact_graphs numbers nodes by first appearance in the
// positive sources, positive destinations, negative sources, negative
// destinations; PyG's LinkNeighborLoader takes the sorted unique ids of
// cat(src, dst) (all of them as given when disjoint).
//
// It imports only graph and rng (engine/layering_test.go); engine/core's EdgeSampler
// runs it beside the neighbour sampler.
package linkpred

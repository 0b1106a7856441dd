// Package sample implements DSP's collective sampling primitive (CSP, DSP §4)
// on a graph partitioned into patches that own consecutive ranges of
// (renumbered) node ids, one rank per patch: node-wise neighbour sampling
// (uniform or biased by edge weight), layer-wise sampling (DSP Eq. 2),
// LABOR-0 layer-neighbour sampling (DGL's LaborSampler) and random walks (Runtime.RandomWalk), optionally with excluded edges. All of
// them run as CSP rounds and give the same result for any number of patches
// and threads.
//
// # Runtime and requests
//
// A Runtime is built once per partitioned graph, communicator and thread
// count (NewRuntime): it checks the graph, holds each rank's workspaces and
// append-unique tables, and keeps the state derived from recent requests'
// filters (excluded-edge bitmaps, layer-wise node weights), which its forks
// share. Each call brings what it samples: Runtime.Sample takes a Request
// (fan-outs, replacement, frontier, scheme, bias, layer-wise without
// replacement, excluded edges, seed) and Runtime.RandomWalk a WalkRequest
// (length, restart probability, bias, excluded edges, seed). Requests
// validate themselves with errors that name the field. Runtime.Fork gives a
// runtime that samples concurrently (own communicator via comm.Comm.Dup,
// own workspaces).
//
// A Sampler is a Runtime bound to one Request (Runtime.Bind): it is what a
// pipeline worker samples with (pipeline.BatchSampler), forking with its
// runtime. Walks take a WalkRequest on the runtime itself.
//
// The runtime runs the ranks this process runs (comm.Comm.LocalRanks): all
// of them with comm.Local, one batch per rank per wave; with one process
// per rank, each process passes its own batches and every process must run
// the same number of waves (a process without a batch for a wave passes an
// empty one), since every wave is a sequence of collectives.
//
// # Where a device backend plugs in
//
// The orchestration (sampler.go: waves, per-rank harness, hops), the batch
// keys and the random streams (rng.go; engine/rng) are shared. The
// stages are separate: the shuffle and reshuffle message formats (wire.go),
// the owner stage that samples the received tasks (owner.go, filter.go),
// the draws (draw.go), the merge with append-unique (merge.go, table.go),
// layer-wise's draw (layer.go) and walks (walk.go). A device implementation
// reproduces the draws from the same streams, so its batches equal these.
//
// # CSP rounds
//
// Sampling goes hop by hop. In hop h every rank holds a frontier: the nodes
// whose in-neighbours it needs (FrontierAll: every node of its sample so far,
// giving DGL blocks; FrontierNew: the nodes first added by hop h-1, as PyG).
// A fan-out of 0 samples nothing: the hop's block has its dst nodes and no
// edge (DGL's meaning), and with FrontierNew the next frontier is empty.
// A hop is three stages and two collectives:
//
//  1. shuffle: each rank groups its frontier by owning patch and sends each
//     group, headed by its batch key, to the owner (comm.AllToAll). Tasks are
//     pushed to the data; adjacency lists never move.
//  2. sample: each rank samples every task it received, from every
//     requester, in one parallel pass over its own patch's rows (a counting
//     pass sizes the answers, a second pass fills them, with the rank's share
//     of RuntimeOptions.Threads goroutines).
//  3. reshuffle: the answers (per task: count, then neighbour ids and edge
//     ids) go back to the requesters (comm.AllToAll).
//
// The requester then walks its frontier in order, taking each task's answer
// from the owner's message, and writes the block directly in CSC, as
// FastSample's fused kernel (Algorithm 1) does: Indptr is the running sum of
// the counts, Indices come from append-unique (below), EdgeIDs are copied.
// There is no COO intermediate and no sort. Every rank performs exactly 2L
// collectives per wave, whether or not it has a batch, so the collectives
// pair up.
//
// # Append-unique
//
// A per-rank table maps node id -> position in Result.Nodes. The seeds are
// inserted first, in the given order; a sampled neighbour already present
// keeps its position, a new one is appended. So Nodes is "seeds, then each
// hop's new nodes in order of first appearance", and a block's dst nodes
// are a prefix (FrontierAll) or a contiguous slice (FrontierNew) of its src
// nodes. On graphs of up to 2^24 nodes the table is dense: an []int32
// indexed by node id (4 bytes per node per rank, allocated on first use),
// emptied after each batch by clearing the batch's nodes' entries. Larger
// graphs use a hash table, as in WholeGraph: 64 open-addressing shards (by
// hash), each stamped with a generation counter so that resetting it
// between batches is O(1). Large hops run append-unique in parallel with
// the same result: positions are bucketed by shard, one goroutine per shard
// inserts its keys in list order and flags first appearances, and a prefix
// sum over the flags (in list order) numbers the new nodes. (The dense
// table's sequential loop is fast enough that it goes parallel only for
// very large hops with 4 or more threads per rank.)
//
// # Memory
//
// Each rank keeps its messages and scratch buffers across hops and batches
// (a buffer it sent is rewritten only after its next collective returns,
// as comm.Comm requires). A Result is always fresh memory, unless the
// caller hands results back with Runtime.Recycle, in which case later
// Results reuse their slices.
//
// # Randomness
//
// Results must not depend on the number of patches or threads, so there is
// no shared generator. The stream of one task is SplitMix64 started from a
// hash of (Request.Seed, batch key, hop, ORIGINAL node id) (the original id:
// renumbering for partitioning must not change the sample). A task draws
// positions within its node's neighbour list, which keeps its original order
// across renumbering, so the sampled edges are identical for any layout.
// Without replacement, fanout >= degree (or -1) takes the whole list in
// order; otherwise Floyd's algorithm picks fanout distinct positions
// uniformly (one bounded draw each, Lemire's exact method) and they are
// emitted in ascending order (read out of a bitset for lists of up to 1024,
// kept sorted while picking for small samples, else sorted). With replacement, fanout independent uniform
// draws are emitted in draw order (none for degree 0).
//
// # Biased sampling and excluded edges
//
// With Request.Biased or Request.ExcludeEdges, a task only considers the
// candidates of its list: the positions whose edge is not excluded and, when
// biased, whose weight is positive; "degree" means the number of candidates
// everywhere (fanout capping, fanout -1, layer-wise totals), so an excluded
// or zero-weight edge is never sampled and behaves as if absent. The
// excluded ids are turned into a bitmap over CSC positions once per list
// (the runtime keeps the bitmaps of its last few lists).
// Unbiased tasks draw over the candidates exactly as above (so a list with
// no excluded edge samples as without the option). Biased tasks: with
// replacement, each draw takes U in [0, 1) from the task's stream and the
// first candidate whose prefix sum of weights (float64, list order) exceeds
// U * total; without replacement, each candidate in list order gets the key
// Exp(1)/w (Efraimidis-Spirakis; Exp(1) = -ln U, U in (0, 1]), the fanout
// smallest keys are kept (ties by position) and emitted in list order, which
// is successive weighted sampling without replacement. Fanout >= the number
// of candidates (or -1) takes every candidate, in order.
//
// # Layer-wise sampling
//
// With Request.Scheme = LayerWise, Fanouts[h] is the number of draws for the
// whole frontier of hop h (DSP §4.2, Eq. 2). Before the shuffle, the
// requesting rank draws, from the stream of (Seed, batch key, hop), the
// number c_u of neighbours each frontier node u samples: Fanouts[h] draws
// with replacement with probability W_u / sum W, W_u being u's total
// candidate weight (its candidate count when unbiased), read from a per-node
// array built on first use per filter (prefix sums over the frontier in
// order, binary search); with Request.LayerWithoutReplacement, min(Fanouts[h], frontier
// nodes with W_u > 0) distinct nodes by exponential keys Exp(1)/W_u, each
// with c_u = 1. Only the nodes with c_u > 0 are shuffled, each with its c_u
// ([key, v..., c...]); the owner samples c_u neighbours of u as a node-wise
// task of fanout c_u (with Replace: c_u independent draws, so the hop is
// Fanouts[h] i.i.d. draws of a frontier edge with probability w / sum W;
// without: min(c_u, degree) distinct neighbours). Fanouts[h] = -1 takes all
// neighbours of every frontier node. The block has a row for every frontier
// node, empty for the nodes that drew nothing.
//
// # LABOR
//
// With Request.Scheme = Labor (LABOR-0, labor.go), the owner of frontier
// node s walks s's d_s candidates and keeps candidate t iff r_t <
// Fanouts[h]/d_s (all when d_s <= Fanouts[h]). r_t is the first Unit of the
// stream of (Seed, batch key, hop, original id of t), hop 0 for every hop
// with Request.LayerDependency: it depends on t, not on s, so every
// destination of a batch compares against the same r_t wherever it is
// sampled, and a neighbour kept by one destination is kept by every
// destination with a larger ratio. The count of a task is random: the owner
// evaluates the variates in the count pass and again when it writes the
// kept neighbours (in list order). Shuffle and reshuffle are node-wise's.
//
// # Typed graphs, disjoint and temporal sampling (general.go)
//
// A typed graph (RuntimeOptions.Types, see graph.Types) is the same CSC
// over one global id space: node types and relations own consecutive
// ORIGINAL node and edge ids, and every in-list is grouped by relation in
// increasing order, so relation r's in-edges of v are one contiguous
// segment of v's list, found from the edge ids (a forward scan for short
// lists, else binary search). Renumbering keeps list order and original
// edge ids, so segments survive partitioning. With
// Request.RelationFanouts, the owner of task v finds, in the count pass,
// the segments of the relations into v's type (kept for the sample pass)
// and samples each with its fan-out, as a filtered task samples a list
// (biased, replace and excluded edges apply within the segment), from the
// stream of (Seed, key, hop, original id) mixed with the relation: the
// answer is the segments' samples in relation order. Labor evaluates its
// variates per segment (they depend on the neighbour only).
//
// Disjoint requests key the batch's nodes by (seed position i, node):
// the requester's table holds i*N + v, so a node reached from two seeds is
// two nodes. The shuffle carries each task's subgraph index (and, for
// temporal requests, its cutoff: the subgraph's seed time) as extra
// columns after the tasks ([key, v..., i..., t...]); the owner keys the
// task's stream by subKey(batch key, i), so repeated seeds get independent
// subgraphs. With FrontierNew and append-unique in frontier order, the
// nodes come hop by hop and, within a hop, seed by seed, which is PyG's
// order. Result.Batch gives each node's i.
//
// A temporal task's candidates are the positions whose source's time
// (TemporalNode) or edge's time (TemporalEdge) is <= its cutoff;
// TemporalUniform samples among them as usual, TemporalLast takes the
// fan-out candidates with the largest times (ties: the later position).
//
// These requests take the general owner path; requests without them take
// the homogeneous paths above, unchanged (one branch per hop, not per
// edge).
//
// # Random walks
//
// Runtime.RandomWalk runs one walker per seed; each step is a CSP round
// whose shuffle carries [key, current nodes..., walker indices...] to the
// owners and whose reshuffle carries back [next nodes..., edge ids...]. The
// stream of a walker's step is keyed by (Seed, batch key, step, walker
// index): its first output is the restart coin (drawn by the requester), the
// next ones the owner's neighbour draw (uniform, or weighted as above).
//
// It imports comm, graph, partition, mem, rng and internal/par
// (engine/layering_test.go).
package sample

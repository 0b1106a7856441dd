// Package sample implements DSP's collective sampling primitive (CSP, DSP §4)
// for node-wise neighbour sampling on a graph partitioned into patches that
// own consecutive ranges of (renumbered) node ids, one rank per patch.
//
// # CSP rounds
//
// Sampling goes hop by hop. In hop h every rank holds a frontier: the nodes
// whose in-neighbours it needs (FrontierAll: every node of its sample so far,
// giving DGL blocks; FrontierNew: the nodes first added by hop h-1, as PyG).
// A hop is three stages and two collectives:
//
//  1. shuffle: each rank groups its frontier by owning patch and sends each
//     group, headed by its batch key, to the owner (comm.AllToAll). Tasks are
//     pushed to the data; adjacency lists never move.
//  2. sample: each rank samples every task it received, from every
//     requester, in one parallel pass over its own patch's rows (a counting
//     pass sizes the answers, a second pass fills them, Options.Threads
//     goroutines).
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
// caller hands results back with Sampler.Recycle, in which case later
// Results reuse their slices.
//
// # Randomness
//
// Results must not depend on the number of patches or threads, so there is
// no shared generator. The stream of one task is SplitMix64 started from a
// hash of (Options.Seed, batch key, hop, ORIGINAL node id) (the original id:
// renumbering for partitioning must not change the sample). A task draws
// positions within its node's neighbour list, which keeps its original order
// across renumbering, so the sampled edges are identical for any layout.
// Without replacement, fanout >= degree (or -1) takes the whole list in
// order; otherwise Floyd's algorithm picks fanout distinct positions
// uniformly (one bounded draw each, Lemire's exact method) and they are
// emitted in ascending order (read out of a bitset for lists of up to 1024,
// kept sorted while picking for small samples, else sorted). With replacement, fanout independent uniform
// draws are emitted in draw order (none for degree 0).
package sample

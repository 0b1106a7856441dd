package pipeline

import (
	"context"
	"fmt"

	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/sample"
)

// Share makes a Pipeline deliver one rank's share of the epochs of a group
// of processes that sample together (engine/distributed's loaders). The
// group's batches of an epoch are those of a Pipeline without a Share over
// the same seeds and options: batch i holds positions [i*BatchSize,
// (i+1)*BatchSize) of the epoch order and is sampled with BatchKey(epoch,
// i). They are dealt out round-robin: the rank delivers its k-th batch as
// the group's batch (k*Size + Rank) mod G (G the group's batch count), so
// rank r gets batches r, r+Size, r+2*Size, ..., and a rank short of a batch
// in the last round is padded with one of the epoch's first batches, as
// torch's DistributedSampler pads. Batch.Index is the group's index.
type Share struct {
	// Rank and Size place this pipeline in the group: 0 <= Rank < Size.
	Rank, Size int
	// Batches, when > 0, is the number of batches delivered per epoch
	// (a count the ranks agreed on; more than G repeats the first ones);
	// otherwise ceil(G / Size), so that every rank delivers as many and
	// collective training steps pair up.
	Batches int
	// Rows, when not nil, loads each batch's node data in place of the
	// pipeline's feature.Gatherer (which New then ignores and may be nil):
	// the rows of a rank's part come from the ranks that own them.
	Rows RowLoader
}

// RowLoader loads a batch's node data itself (engine/distributed's row
// exchange, which fetches the rows from the ranks that own them in
// collective exchanges). The pipeline calls it from the sampler worker
// that sampled the batch, right after sampling, so that a worker's
// exchanges run in one sequence with its sampling: over a communicator
// that cannot be duplicated (one worker) they must, and with several
// workers each worker's exchanges stay on its own channel.
type RowLoader interface {
	// LoadRows adds to b (b.AddNodeData) the rows of featureNames over
	// nodes and of labelNames over nodes[:numSeeds] (internal ids), and
	// says where they came from. On a rank's part (the pipeline's
	// partition.Partitioned.Ranked) it also writes the original id of
	// every node into b.Nodes, which the owners answer with the rows (the
	// views, which read them, are added after it). worker is the caller's index, from 0 to
	// the pipeline's workers - 1. ctx is cancelled when the pipeline is
	// closed: exchanges in flight should then return.
	LoadRows(ctx context.Context, worker int, b *Batch, nodes []int64, numSeeds int, featureNames, labelNames []string, threads int) (feature.TierCounts, error)
}

// GroupMaker is a Maker whose batches a Share's pipeline makes together
// with the other ranks' batches of the same round (an edge loader whose
// batches exclude edges of their own: engine/linkload's Source). In
// round k every rank makes its k-th batch with MakeGroup: group[j] holds
// the positions of rank j's k-th batch and keys[j] its batch key, the
// same on every rank; rank is the caller's. It returns what Make returns
// for group[rank] and keys[rank].
type GroupMaker interface {
	MakeGroup(ctx context.Context, group [][]int64, keys []uint64, rank int, alloc mem.Allocator) (*Batch, *sample.Result, error)
}

// round returns the positions and keys of every rank's k-th batch of an
// epoch (epoch its number, order its order), for a GroupMaker.
func (pl *Pipeline) round(order []int64, epoch uint64, k int) ([][]int64, []uint64) {
	s, g := pl.opt.Share, pl.groupBatches()
	group := make([][]int64, s.Size)
	keys := make([]uint64, s.Size)
	for j := range group {
		index := (k*s.Size + j) % g
		group[j] = pl.batchSeeds(order, index)
		keys[j] = BatchKey(epoch, int64(index))
	}
	return group, keys
}

// check validates s.
func (s *Share) check() error {
	if s.Size < 1 || s.Rank < 0 || s.Rank >= s.Size {
		return fmt.Errorf("pipeline: share rank %d of %d is invalid (want 0 <= rank < size)", s.Rank, s.Size)
	}
	if s.Batches < 0 {
		return fmt.Errorf("pipeline: share of %d batches is invalid (want >= 0)", s.Batches)
	}
	return nil
}

// groupBatches returns the number of batches of an epoch of the whole
// group (of the whole epoch without a Share).
func (pl *Pipeline) groupBatches() int {
	n, b := pl.numItems, pl.opt.BatchSize
	if pl.opt.DropLast {
		return n / b
	}
	return (n + b - 1) / b
}

// index returns the group's index of the k-th batch this pipeline
// delivers in an epoch.
func (pl *Pipeline) index(k int) int64 {
	s := pl.opt.Share
	if s == nil {
		return int64(k)
	}
	return int64((k*s.Size + s.Rank) % pl.groupBatches())
}

// where prefixes the errors of a batch with the rank of a share.
func (pl *Pipeline) where() string {
	if s := pl.opt.Share; s != nil {
		return fmt.Sprintf("distributed loader, rank %d of %d: ", s.Rank, s.Size)
	}
	return ""
}

// errNotAhead is ReadCounts' refusal on a share.
var errNotAhead = fmt.Errorf("pipeline: a distributed loader cannot count feature reads ahead (it would need every rank to sample the same epochs at once): %w", errs.ErrNotSupported)

// errNoGatherer is SetGatherer's refusal when a RowLoader loads the rows.
var errNoGatherer = fmt.Errorf("pipeline: the loader of a rank's part gathers node data from the ranks that own it; it takes no gatherer: %w", errs.ErrNotSupported)

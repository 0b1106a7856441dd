package linkload

import (
	"context"
	"slices"

	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// Source is an edge loader's sampling stage: a pipeline.Maker whose items
// are the loader's seed edges (or pairs). The batch of positions pos is the
// Linker's batch of the items at pos, with LinkInputID = pos. Each fork
// samples on a fork of the runtime.
type Source struct {
	l     *Linker
	rt    *sample.Runtime
	items Items
}

var _ pipeline.Maker[*Source] = (*Source)(nil)

// Source returns the sampling stage of an edge loader over items (checked
// with Check, copied) that samples on rt (the source's own: a fork of a
// runtime over l's partition with its types; forks of it sample the
// batches).
func (l *Linker) Source(rt *sample.Runtime, items Items) (*Source, error) {
	if rt == nil || rt.Partitioned() != l.p {
		return nil, errorf("linkload: the runtime is nil or samples another partition")
	}
	if err := l.Check(items); err != nil {
		return nil, err
	}
	all := make([]int64, items.Len())
	for i := range all {
		all[i] = int64(i)
	}
	return &Source{l: l, rt: rt, items: items.at(all)}, nil
}

// NumItems returns the number of seed edges (or pairs).
func (s *Source) NumItems() int { return s.items.Len() }

// Partitioned returns the partition the source samples.
func (s *Source) Partitioned() *partition.Partitioned { return s.l.p }

// Threads returns the runtime's thread count (<= 0: GOMAXPROCS).
func (s *Source) Threads() int { return s.rt.Threads() }

// Fork returns a source on a fork of s's runtime with threads threads.
func (s *Source) Fork(threads int) (*Source, error) {
	rt, err := s.rt.Fork(threads)
	if err != nil {
		return nil, err
	}
	return &Source{l: s.l, rt: rt, items: s.items}, nil
}

// Make makes the batch of the items at positions pos with key key.
func (s *Source) Make(ctx context.Context, pos []int64, key uint64, alloc mem.Allocator) (*pipeline.Batch, *sample.Result, error) {
	b, res, _, err := s.l.Make(ctx, s.rt, s.items.at(pos), pos, key, alloc, s.rt.Threads())
	return b, res, err
}

// MakeGroup makes rank's batch of a round of a group of ranks that sample
// together, one batch each (pipeline.GroupMaker: group[j] holds the
// positions of rank j's batch, keys[j] its key); it is Make(group[rank],
// keys[rank]), bit for bit. An owner answers the sampling tasks it
// receives under its own request, so when every batch excludes edges of
// its own (DGL's exclude, or its callback: called here for every batch of
// the round) the ranks cannot sample their batches at once:
// they take turns, rank j sampling its batch in turn j while the others
// take part with no seeds under batch j's request (its exclusion they
// compute from group[j]). Without such exclusions the request is the same
// on every rank and each samples its own batch at once, as Make does.
func (s *Source) MakeGroup(ctx context.Context, group [][]int64, keys []uint64, rank int, alloc mem.Allocator) (*pipeline.Batch, *sample.Result, error) {
	if rank < 0 || rank >= len(group) || len(keys) != len(group) {
		return nil, nil, errorf("linkload: rank %d of a group of %d batches and %d keys", rank, len(group), len(keys))
	}
	if s.l.opt.Mode != DGL || (s.l.opt.DGL.Exclude == linkpred.ExcludeNone && s.l.opt.ExcludeFunc == nil) {
		return s.Make(ctx, group[rank], keys[rank], alloc)
	}
	threads := s.rt.Threads()
	own, err := s.l.prepare(ctx, s.rt, s.items.at(group[rank]), group[rank], keys[rank], threads)
	if err != nil {
		return nil, nil, err
	}
	var res *sample.Result
	for j := range group {
		turn := own
		if j != rank {
			// Batch j's request over no seeds of this rank's.
			excl, err := s.l.batchExclusion(ctx, s.items.at(group[j]).EdgeIDs, keys[j])
			if err != nil {
				s.recycle(res)
				return nil, nil, err
			}
			turn = prepared{req: s.l.opt.Request, key: keys[j], internal: []int64{}}
			turn.req.ExcludeEdges = append(slices.Clone(turn.req.ExcludeEdges), excl...)
		}
		r, err := turn.sample(ctx, s.rt)
		if err != nil {
			s.recycle(res)
			return nil, nil, err
		}
		if j == rank {
			res = r
		} else {
			s.rt.Recycle(r)
		}
	}
	b, res, _, err := s.l.finish(s.rt, own, res, alloc, threads)
	return b, res, err
}

// recycle hands res back to the runtime, if any.
func (s *Source) recycle(res *sample.Result) {
	if res != nil {
		s.rt.Recycle(res)
	}
}

// Recycle hands results back to the runtime that made them.
func (s *Source) Recycle(results ...*sample.Result) { s.rt.Recycle(results...) }

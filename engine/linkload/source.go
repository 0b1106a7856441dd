package linkload

import (
	"context"

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

// Recycle hands results back to the runtime that made them.
func (s *Source) Recycle(results ...*sample.Result) { s.rt.Recycle(results...) }

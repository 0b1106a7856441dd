package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

// PreSample runs epochs epochs (0, 1, ...) of a pipeline over s, p, seeds
// and opt (without node data: opt's names are ignored) and returns how many
// times each node's rows would have been read (once per batch the node is
// in), indexed by internal id: the score of engine/cache's pre-sampling
// policy. Batches do not depend on the number of workers, so neither do
// the counts. Pipeline.ReadCounts gives the same counts without running
// the loader stage.
func PreSample[S BatchSampler[S]](ctx context.Context, s S, p *partition.Partitioned, seeds []int64, opt Options, epochs int) ([]int64, error) {
	if epochs <= 0 {
		return nil, fmt.Errorf("pipeline: pre-sampling %d epochs (want > 0)", epochs)
	}
	opt.FeatureNames, opt.LabelNames = nil, nil
	pl, err := New(s, p, nil, seeds, opt, mem.Heap{})
	if err != nil {
		return nil, fmt.Errorf("pipeline: pre-sampling: %w", err)
	}
	defer pl.Close()
	counts := make([]int64, p.Graph.NumNodes)
	for e := range epochs {
		if err := pl.Start(uint64(e)); err != nil {
			return nil, err
		}
		for {
			b, err := pl.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("pipeline: pre-sampling: %w", err)
			}
			if b.Nodes.Device.Kind == mem.KindDevice {
				b.Release()
				return nil, errors.New("pipeline: pre-sampling reads the batches' nodes on the host, and this sampler's batches are in device memory (use Pipeline.ReadCounts)")
			}
			for _, v := range mem.Int64s(b.Nodes.Data) {
				if p.OldToNew != nil {
					v = p.OldToNew[v]
				}
				counts[v]++
			}
			b.Release()
		}
	}
	return counts, nil
}

package distributed

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/errs"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/linkpred"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// selfEdges is an exclude callback naming a batch's own seed edges (what
// linkpred.ExcludeSelfEdges excludes).
func selfEdges(_ context.Context, _ uint64, ids []int64, _ int) ([]int64, error) { return ids, nil }

// A replicated group's edge loader with an exclude callback: each rank's
// batches are the single-process loader's with the engine's own exclusion
// of the same edges (the ranks sample a round's batches in turns, every
// rank calling the callback for every batch of the round). A rank's part
// refuses the callback.
func TestDistEdgeLoaderExcludeCallback(t *testing.T) {
	src, dst := testgraph.COO()
	tc := linkCases(src, dst)[1] // dgl-self
	newGraph := func(popt partition.Options) *core.Graph {
		g := newTestGraph(t, popt)
		withNodeData(t, g)
		return g
	}
	ref, err := newGraph(partition.Options{Method: partition.Range, NumPatches: 2}).OpenEdgeLoader(tc.items, tc.opt, linkLoader(), nil)
	require.NoError(t, err)
	want, err := readEpochsWith(ref, 2, edgeBatchBytes)
	require.NoError(t, err)
	ref.Close()
	opt := tc.opt
	opt.DGL.Exclude, opt.ExcludeFunc = linkpred.ExcludeNone, selfEdges
	for _, c := range []struct{ size, workers int }{{2, 1}, {3, 2}} {
		t.Run(fmt.Sprintf("%d-workers=%d", c.size, c.workers), func(t *testing.T) {
			got := runRanks(t, c.size, c.workers, 2, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
				g := newGraph(partition.Options{Method: partition.Random, NumPatches: c.size, Seed: 11})
				return OpenEdgeLoader(g, h, tc.items, opt, o, mem.NewChecked(mem.Heap{}))
			})
			requireShares(t, want, got)
		})
	}
	h, err := comm.NewHost(0, 2, comm.NewLocal(2).Exchanger(0))
	require.NoError(t, err)
	srcDir, _ := writeTestDataset(t)
	dir := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Range, Parts: 2, Layout: rankpart.LayoutDSP, Hops: 2})
	p, err := OpenPart(dir, 0, dataset.OpenOptions{})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.OpenEdgeLoader(h, tc.items, opt, linkLoader(), nil)
	require.ErrorIs(t, err, errs.ErrNotSupported)
	require.ErrorContains(t, err, "exclude callback")
}

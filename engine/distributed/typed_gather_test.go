package distributed

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
)

// TestTypedGatherEqualsTypedView: the loader of a whole typed graph (one
// process, whatever its partitioning, and every rank of a replicated
// group) gathers per-type node data ("<type>/<name>") itself: each
// batch's rows are the per-type arrays at the type-local ids of the
// batch's nodes of that type in its typed view (labels: of its seeds of
// that type), which its caller gathered from the whole arrays before.
func TestTypedGatherEqualsTypedView(t *testing.T) {
	src, d, seeds := writeTypedDataset(t)
	req := typedRequest()
	// Seeds of several types: the per-type labels are of the paper seeds only.
	ty, err := d.Types()
	require.NoError(t, err)
	author := ty.NodeOffsets[ty.NodeTypeIndex("author")]
	for i := range int64(20) {
		seeds = append(seeds, author+3*i)
	}
	feats, labels := []string{"paper/feat", "author/feat"}, []string{"paper/label"}
	lopt := pipeline.Options{BatchSize: 16, Shuffle: true, Seed: 3, FeatureNames: []string{"time"}, Threads: testgraph.Threads}
	popt := lopt
	popt.FeatureNames, popt.LabelNames = append([]string{"time"}, feats...), labels
	const epochs = 2
	open := func(t *testing.T, po partition.Options) *core.Graph {
		g, err := core.Open(src, po, graph.COOOptions{}, dataset.OpenOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { g.Close() })
		return g
	}
	// The reference: the rows gathered from d's whole arrays at the
	// typed views of a loader that gathers none of them.
	want := readTyped(t, open(t, partition.Options{}), seeds, req, lopt, epochs, typedDigest(d, feats, labels, false))
	gathered := typedDigest(d, feats, labels, true)
	for name, po := range map[string]partition.Options{
		"range1":  {NumPatches: 1},
		"random3": {Method: partition.Random, NumPatches: 3, Seed: 5},
	} {
		t.Run(name, func(t *testing.T) {
			got := readTyped(t, open(t, po), seeds, req, popt, epochs, gathered)
			require.Equal(t, want, got)
		})
	}
	for _, size := range []int{2, 3} {
		t.Run(fmt.Sprintf("replicated-%d", size), func(t *testing.T) {
			graphs := make([]*core.Graph, size) // each rank's copy
			for r := range graphs {
				graphs[r] = open(t, partition.Options{Method: partition.Random, NumPatches: size, Seed: 7})
			}
			got := runRanksWith(t, size, 1, epochs, gathered, func(r int, h comm.Comm, _ pipeline.Options) (*core.Loader, error) {
				return OpenLoader(graphs[r], h, seeds, req, popt, mem.NewChecked(mem.Heap{}))
			})
			requireShares(t, want, got)
		})
	}
}

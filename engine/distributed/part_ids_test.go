package distributed

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// TestDSPRankReadsNoWholeMap gives each rank of a dsp partition its own
// copy of the partition in which new_to_old.npy is gone and old_to_new.npy
// holds garbage (out of range) everywhere but the rank's directory slice,
// and checks that the node loader's and the edge loaders' batches (seeds
// resolved at open, original ids answered by the owners with the rows,
// negatives resolved per batch) are still the single-process ones: no
// rank reads a map of the whole graph.
func TestDSPRankReadsNoWholeMap(t *testing.T) {
	srcDir, whole, cases := wholeLinkCases(t)
	_, seeds := writeTestDataset(t)
	const size, epochs = 3, 1
	dst := partitionTestDataset(t, srcDir, rankpart.PartitionOptions{Method: partition.Random, Parts: size, Seed: 4, Layout: rankpart.LayoutDSP})
	dirs := make([]string, size)
	for r := range dirs {
		dirs[r] = filepath.Join(t.TempDir(), "parts")
		require.NoError(t, os.CopyFS(dirs[r], os.DirFS(dst)))
		require.NoError(t, os.Remove(filepath.Join(dirs[r], rankpart.NewToOldFile)))
		path := filepath.Join(dirs[r], rankpart.OldToNewFile)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		ids := raw[len(raw)-8*testgraph.Nodes:] // after the .npy header
		off := rankpart.DirectoryRange(testgraph.Nodes, size)
		for v := int64(0); v < testgraph.Nodes; v++ {
			if v < off[r] || v >= off[r+1] {
				binary.LittleEndian.PutUint64(ids[8*v:], uint64(1<<62))
			}
		}
		require.NoError(t, os.WriteFile(path, raw, 0o644))
	}
	lopt := testgraph.Loader()
	lopt.BatchSize = 16
	ref, err := whole.OpenLoader(seeds, testgraph.Sample(), lopt, nil)
	require.NoError(t, err)
	want, err := readEpochs(ref, epochs)
	require.NoError(t, err)
	ref.Close()
	requireShares(t, want, runRanksWith(t, size, 1, epochs, batchBytes, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
		p, err := OpenPart(dirs[r], r, dataset.OpenOptions{})
		if err != nil {
			return nil, err
		}
		defer p.Close()
		return p.OpenLoader(h, seeds, testgraph.Sample(), lopt, mem.NewChecked(mem.Heap{}))
	}))
	for _, tc := range []linkCase{cases[0], cases[3], cases[4]} { // dgl, dgl-global, pyg-binary
		ref, err := whole.OpenEdgeLoader(tc.items, tc.opt, linkLoader(), nil)
		require.NoError(t, err)
		want, err := readEpochsWith(ref, epochs, edgeBatchBytes)
		require.NoError(t, err)
		ref.Close()
		requireShares(t, want, runRanks(t, size, 1, epochs, func(r int, h comm.Comm, o pipeline.Options) (*core.Loader, error) {
			return openPartEdges(dirs[r], tc)(r, h, o)
		}))
	}
	// The garbage outside its slice was never read; inside, it is refused.
	_, err = OpenPart(dirs[1], 0, dataset.OpenOptions{})
	require.ErrorContains(t, err, rankpart.OldToNewFile)
	require.ErrorContains(t, err, "is outside [0, 300)")
}

// TestResolveRefusesBadMessages checks that the directory's round refuses
// what a rank should never send: an id outside the asked rank's slice, an
// answer of another length or out of range; and ids out of range before
// any exchange.
func TestResolveRefusesBadMessages(t *testing.T) {
	src, _ := writeTestDataset(t)
	dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Random, Parts: 2, Seed: 4, Layout: rankpart.LayoutDSP})
	p, err := OpenPart(dst, 0, dataset.OpenOptions{})
	require.NoError(t, err)
	defer p.Close()
	never := func(context.Context, []mem.Buffer) ([]mem.Buffer, error) {
		t.Fatal("no exchange expected")
		return nil, nil
	}
	_, err = p.resolve(context.Background(), never, []int64{3, 300})
	require.ErrorContains(t, err, "node 300 at position 1 is out of range [0, 300)")
	// Rank 1 asks rank 0 for a node of rank 1's slice.
	replies := func(rounds ...[]mem.Buffer) exchangeFunc {
		return func(context.Context, []mem.Buffer) ([]mem.Buffer, error) {
			out := rounds[0]
			rounds = rounds[1:]
			return out, nil
		}
	}
	empty := mem.HostBuffer(nil)
	ids := func(v ...int64) mem.Buffer { return mem.HostBuffer(mem.Bytes(v)) }
	_, err = p.resolve(context.Background(), replies([]mem.Buffer{empty, ids(299)}), nil)
	require.ErrorContains(t, err, "rank 1 asked rank 0 for the new id of node 299, outside its directory [0, 150)")
	_, err = p.resolve(context.Background(), replies([]mem.Buffer{empty, empty}, []mem.Buffer{empty, ids(1)}), []int64{299, 298})
	require.ErrorContains(t, err, "rank 1 answered 8 bytes for the new ids of 2 nodes")
	_, err = p.resolve(context.Background(), replies([]mem.Buffer{empty, empty}, []mem.Buffer{empty, ids(300)}), []int64{299})
	require.ErrorContains(t, err, "rank 1 answered new id 300, out of range [0, 300)")
}

package distributed

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/internal/testgraph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// TestPartMemoryIsItsShare checks the memory plan of dsp ranks: the ranks'
// topologies add up to the whole graph's edges with one row offset per
// owned node (plus one per rank), nothing grows with the whole graph's
// node count (ids: the owned nodes' original ids, the halo's new and
// original ids, the offsets and the rank's directory slice), and a rank of
// four holds less than a rank of two.
func TestPartMemoryIsItsShare(t *testing.T) {
	src, _ := writeTestDataset(t)
	most := map[int]int64{}
	for _, size := range []int{2, 4} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			dst := partitionTestDataset(t, src, rankpart.PartitionOptions{Method: partition.Random, Parts: size, Seed: 4, Layout: rankpart.LayoutDSP})
			var owned, topo int64
			for r := range size {
				p, err := OpenPart(dst, r, dataset.OpenOptions{})
				require.NoError(t, err)
				m, err := p.Memory()
				require.NoError(t, err)
				require.NoError(t, p.Close())
				require.Equal(t, p.NumOwned(), m.Owned)
				require.Positive(t, m.Halo)
				dir := rankpart.DirectoryRange(testgraph.Nodes, size)
				require.Equal(t, 8*(m.Owned+2*m.Halo+int64(size)+1+dir[r+1]-dir[r]), m.IDs)
				require.Zero(t, m.Times)
				require.Positive(t, m.NodeData)
				owned += m.Owned
				topo += m.Topology
				most[size] = max(most[size], m.Resident())
			}
			require.Equal(t, int64(testgraph.Nodes), owned)
			// int64 offsets (one per owned node, one more per rank), int32
			// sources and int64 edge ids of every edge once.
			require.Equal(t, 8*(testgraph.Nodes+int64(size))+12*testgraph.Edges, topo)
		})
	}
	require.Less(t, most[4], most[2])
}

package dataset

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// cscDataset writes an unweighted dataset of n nodes whose edges.arrow
// lists its edges in a random order (edge ids are then not CSC positions).
func cscDataset(t *testing.T, n int64, shuffled bool) string {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	var src, dst []int64
	for range 6 * n {
		src, dst = append(src, r.Int64N(n)), append(dst, r.Int64N(n))
	}
	g, err := graph.FromCOO(src, dst, nil, graph.COOOptions{NumNodes: n})
	require.NoError(t, err)
	feat := make([]float32, n*4)
	dir := t.TempDir()
	require.NoError(t, Write(dir, &Dataset{Graph: g, NodeData: map[string]mem.Tensor{
		FeatKey: {DType: mem.Float32, Shape: []int64{n, 4}, Data: mem.Bytes(feat)},
	}}))
	if shuffled {
		perm := r.Perm(len(src))
		s, d := make([]int64, len(src)), make([]int64, len(src))
		for i, j := range perm {
			s[i], d[i] = src[j], dst[j]
		}
		path := filepath.Join(dir, EdgesFile)
		require.NoError(t, fileformat.WriteEdgeTable(path, s, d, nil))
		setSum(t, dir, EdgesFile)
	}
	return dir
}

// setSum records name's size and checksum in dir's graphferry.json.
func setSum(t *testing.T, dir, name string) {
	raw, err := os.ReadFile(filepath.Join(dir, MetaFile))
	require.NoError(t, err)
	var m Meta
	require.NoError(t, json.Unmarshal(raw, &m))
	sum, err := fileio.SumFile(filepath.Join(dir, name))
	require.NoError(t, err)
	m.Files[name] = sum
	raw, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, MetaFile), raw, 0o644))
}

// A dataset with CSC files opens as those files, mapped, and is the graph
// built from edges.arrow (edge ids included, stored only when they are not
// the CSC positions).
func TestCSCFilesMapped(t *testing.T) {
	for _, shuffled := range []bool{false, true} {
		dir := cscDataset(t, 500, shuffled)
		built, err := Open(dir)
		require.NoError(t, err)
		require.False(t, built.TopologyMapped())
		require.NoError(t, WriteCSC(dir))
		require.ErrorContains(t, WriteCSC(dir), "has CSC files already")
		_, err = os.Stat(filepath.Join(dir, CSCEdgeIDsFile))
		require.Equal(t, shuffled, err == nil, "edge ids stored only when not positions")
		mapped, err := Open(dir)
		require.NoError(t, err)
		require.True(t, mapped.TopologyMapped())
		require.Equal(t, built.Graph.Compact().Indptr, mapped.Graph.Indptr)
		require.Equal(t, built.Graph.Compact().Indices32, mapped.Graph.Indices32)
		for i := range mapped.Graph.NumEdges() {
			want, got := int64(i), int64(i)
			if built.Graph.EdgeIDs != nil {
				want = built.Graph.EdgeIDs[i]
			}
			if mapped.Graph.EdgeIDs != nil {
				got = mapped.Graph.EdgeIDs[i]
			}
			require.Equal(t, want, got)
		}
		require.NoError(t, built.Close())
		require.NoError(t, mapped.Close())
		_, err = Open(dir) // opens again after closing (unmapped)
		require.NoError(t, err)
	}
}

// Damaged CSC files are errors naming the file: a size that is not the
// recorded one, or a size matching a wrong record, or entries out of range.
func TestCSCFilesDamaged(t *testing.T) {
	dir := cscDataset(t, 300, false)
	require.NoError(t, WriteCSC(dir))
	ind := filepath.Join(dir, CSCIndicesFile)
	good, err := os.ReadFile(ind)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(ind, good[:len(good)-4], 0o644))
	_, err = Open(dir)
	require.ErrorContains(t, err, CSCIndicesFile)
	setSum(t, dir, CSCIndicesFile) // the record agrees, the edge count does not
	_, err = Open(dir)
	require.ErrorContains(t, err, CSCIndicesFile)
	require.ErrorContains(t, err, "want")

	bad := append([]byte(nil), good...)
	bad[0], bad[1], bad[2], bad[3] = 0xff, 0xff, 0, 0 // source 65535 of 300 nodes
	require.NoError(t, os.WriteFile(ind, bad, 0o644))
	setSum(t, dir, CSCIndicesFile)
	_, err = Open(dir)
	require.ErrorContains(t, err, "CSC files")
}

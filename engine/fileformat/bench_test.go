package fileformat

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/fileio"
)

// BenchmarkEdgeTable writes and reads back a 20M-edge table.
func BenchmarkEdgeTable(b *testing.B) {
	const n, e = 2_000_000, 20_000_000
	r := rand.New(rand.NewPCG(1, 1))
	src, dst := make([]int64, e), make([]int64, e)
	for i := range src {
		src[i], dst[i] = r.Int64N(n), r.Int64N(n)
	}
	path := filepath.Join(b.TempDir(), "edges.arrow")
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			if err := WriteEdgeTable(path, src, dst, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Without a recorded checksum every ZSTD frame is decoded twice (once
	// to check it); with one, the file is checksummed instead.
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadEdgeTable(path, graph.COOOptions{NumNodes: n}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read-with-sum", func(b *testing.B) {
		sum, err := fileio.SumFile(path)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			verify := func(file []byte) error { return fileio.CheckSumBytes(path, file, sum, "graphferry.json") }
			if _, err := ReadEdgeTableVerified(path, graph.COOOptions{NumNodes: n}, verify); err != nil {
				b.Fatal(err)
			}
		}
	})
}

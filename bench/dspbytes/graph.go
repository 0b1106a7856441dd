package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unsafe"

	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// loadGraph returns the preset's graph, generated with engine/gen (the
// graph only: the benchmark needs the features' row size, not their
// values). With a cache folder, the CSC is kept there as indptr.npy (int64)
// and indices.npy (int32 or int64) after the first generation, so that
// later runs, and METIS (metis.py reads the same files), skip the
// generator.
func loadGraph(preset, cache string, logf func(string, ...any)) (*graph.CSC, gen.Preset, error) {
	p, ok := gen.Presets()[preset]
	if !ok {
		return nil, p, fmt.Errorf("unknown preset %q", preset)
	}
	if cache != "" {
		g, err := readCached(cache)
		if err == nil {
			logf("graph: read %s (%d nodes, %d edges)", cache, g.NumNodes, g.NumEdges())
			return g, p, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, p, err
		}
	}
	t0 := time.Now()
	g, err := p.RMAT.Graph()
	if err != nil {
		return nil, p, err
	}
	logf("graph: generated %s in %.1f s (%d nodes, %d edges)", preset, time.Since(t0).Seconds(), g.NumNodes, g.NumEdges())
	if cache != "" {
		if err := writeCached(cache, g); err != nil {
			return nil, p, err
		}
	}
	return g, p, nil
}

func readCached(dir string) (*graph.CSC, error) {
	ip, err := fileformat.ReadNPY(filepath.Join(dir, "indptr.npy"))
	if err != nil {
		return nil, err
	}
	defer ip.Close()
	ix, err := fileformat.ReadNPY(filepath.Join(dir, "indices.npy"))
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	if ip.DType != mem.Int64 || len(ip.Shape) != 1 || ip.Shape[0] < 1 {
		return nil, fmt.Errorf("%s/indptr.npy: want a non-empty int64 vector", dir)
	}
	g := &graph.CSC{NumNodes: ip.Shape[0] - 1, Indptr: append([]int64(nil), mem.Int64s(ip.Data)...)}
	switch ix.DType {
	case mem.Int32:
		g.Indices32 = append([]int32(nil), int32s(ix.Data)...)
	case mem.Int64:
		g.Indices = append([]int64(nil), mem.Int64s(ix.Data)...)
	default:
		return nil, fmt.Errorf("%s/indices.npy: want int32 or int64", dir)
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return g, nil
}

func writeCached(dir string, g *graph.CSC) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ix := mem.Tensor{DType: mem.Int64, Shape: []int64{g.NumEdges()}, Data: mem.Bytes(g.Indices)}
	if g.IsCompact() {
		ix = mem.Tensor{DType: mem.Int32, Shape: []int64{g.NumEdges()}, Data: mem.Bytes(g.Indices32)}
	}
	if err := fileformat.WriteNPY(filepath.Join(dir, "indices.npy"), ix); err != nil {
		return err
	}
	// indptr last: readCached looks for it first.
	return fileformat.WriteNPY(filepath.Join(dir, "indptr.npy"),
		mem.Tensor{DType: mem.Int64, Shape: []int64{g.NumNodes + 1}, Data: mem.Bytes(g.Indptr)})
}

// int32s views b as int32s (the mapped .npy data is 64-byte aligned).
func int32s(b []byte) []int32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

package gen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/mem"
)

// StreamOptions bound WriteStreamed's memory.
type StreamOptions struct {
	// EdgeBuffer is the bytes of sources held at once while building the
	// CSC (<= 0: 1 GiB): the destinations are split into ranges whose
	// edges fit, and every range regenerates the edges (one pass each).
	EdgeBuffer int64
	// FeatureRows is the rows generated and written at once (<= 0: 65536).
	FeatureRows int64
}

// WriteStreamed writes homogeneous preset p as a dataset in dir without
// holding its edges or features in memory: features are generated and
// written in pieces (Features.GenerateRange), and the CSC (self-loops and
// repeated edges removed, as Build's) is built from regenerated edges, one
// destination range at a time, straight into the CSC files, which OpenWith
// maps (dataset.WriteCSC); there is no edges.arrow. Resident: 8 bytes per
// node for the offsets, 8 more for the labels, 8 for Permute's permutation,
// 3 for the masks, plus opt's buffers. The graph is Build's with every
// neighbourhood sorted by source (Build keeps the generated order).
func WriteStreamed(p Preset, dir string, opt StreamOptions) error {
	if p.Hetero != nil {
		return fmt.Errorf("gen: preset %q is typed: WriteStreamed writes homogeneous presets", p.Name)
	}
	if opt.EdgeBuffer <= 0 {
		opt.EdgeBuffer = 1 << 30
	}
	if opt.FeatureRows <= 0 {
		opt.FeatureRows = 1 << 16
	}
	r := p.RMAT
	_, n, err := r.check()
	if err != nil {
		return fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	// A stale graphferry.json must not make a half-written directory look
	// complete.
	if err := os.Remove(filepath.Join(dir, dataset.MetaFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("gen: %w", err)
	}
	labels, feat, err := writeFeatures(p, n, dir, opt.FeatureRows)
	if err != nil {
		return err
	}
	e, err := writeCSC(r, n, dir, opt.EdgeBuffer/4)
	if err != nil {
		return fmt.Errorf("gen: preset %q: %w", p.Name, err)
	}
	train, val, test := p.split(n)
	src, err := provenance(p)
	if err != nil {
		return err
	}
	mask := func(b []byte) mem.Tensor { return mem.Tensor{DType: mem.Uint8, Shape: []int64{n}, Data: b} }
	return dataset.WriteStreamed(dir, dataset.Meta{Name: p.Name, NumClasses: int64(p.Features.NumClasses), Source: src}, n, e,
		map[string]mem.Tensor{
			dataset.LabelKey:     {DType: mem.Int64, Shape: []int64{n}, Data: labelBytes(labels)},
			dataset.TrainMaskKey: mask(train),
			dataset.ValMaskKey:   mask(val),
			dataset.TestMaskKey:  mask(test),
		}, feat)
}

// writeFeatures writes the feature file of n nodes in pieces of rows and
// returns the labels.
func writeFeatures(p Preset, n int64, dir string, rows int64) ([]int64, *dataset.FeatureMeta, error) {
	f, err := os.Create(filepath.Join(dir, dataset.FeatFile))
	if err != nil {
		return nil, nil, fmt.Errorf("gen: %w", err)
	}
	defer f.Close()
	labels := make([]int64, n)
	var dt mem.DType
	for lo := int64(0); lo < n; lo += rows {
		t, lab, err := p.Features.GenerateRange(lo, min(rows, n-lo))
		if err != nil {
			return nil, nil, fmt.Errorf("gen: preset %q: %w", p.Name, err)
		}
		if _, err := f.Write(t.Data); err != nil {
			return nil, nil, fmt.Errorf("gen: %w", err)
		}
		copy(labels[lo:], lab)
		dt = t.DType
	}
	if n == 0 {
		dt = p.Features.DType
	}
	if err := f.Close(); err != nil {
		return nil, nil, fmt.Errorf("gen: %w", err)
	}
	return labels, &dataset.FeatureMeta{File: dataset.FeatFile, DType: dt.String(), Shape: []int64{n, int64(p.Features.Dim)}}, nil
}

// writeCSC builds r's CSC (n nodes) into dir's CSC files with at most
// about buffer sources in memory at once, and returns its edge count.
func writeCSC(r RMAT, n int64, dir string, buffer int64) (int64, error) {
	s, _, err := r.check()
	if err != nil {
		return 0, err
	}
	var perm []int64
	if r.Permute {
		perm = permutation(n, r.Seed, tagPermute)
	}
	draw := r.drawer(s, n, perm)
	gen := r.NumGenerated()
	// each calls fn for every stored edge u -> v but self-loops (both
	// directions when Undirected), in parallel.
	each := func(fn func(u, v int64)) error {
		return parallelFor(gen, r.Threads, func(lo, hi int64) error {
			for k := lo; k < hi; k++ {
				u, v, err := draw(k)
				if err != nil {
					return err
				}
				if u == v {
					continue
				}
				fn(u, v)
				if r.Undirected {
					fn(v, u)
				}
			}
			return nil
		})
	}
	// Pass 1: in-degrees with repeats, to split the destinations.
	deg := make([]int64, n+1)
	if err := each(func(_, v int64) { atomic.AddInt64(&deg[v], 1) }); err != nil {
		return 0, err
	}
	ind, err := os.Create(filepath.Join(dir, dataset.CSCIndicesFile))
	if err != nil {
		return 0, err
	}
	defer ind.Close()
	w := bufio.NewWriterSize(ind, 1<<20)
	var total int64
	for lo := int64(0); lo < n; {
		hi, count := lo, int64(0)
		for hi < n && (hi == lo || count+deg[hi] <= buffer) {
			count += deg[hi]
			hi++
		}
		// Offsets of the range's destinations in buf, then a pass that
		// keeps the range's edges.
		start := make([]int64, hi-lo+1)
		for v := lo; v < hi; v++ {
			start[v-lo+1] = start[v-lo] + deg[v]
		}
		fill := slices.Clone(start[:hi-lo])
		buf := make([]int32, count)
		if err := each(func(u, v int64) {
			if v >= lo && v < hi {
				buf[atomic.AddInt64(&fill[v-lo], 1)-1] = int32(u)
			}
		}); err != nil {
			return 0, err
		}
		// Sort and deduplicate each neighbourhood (the arrival order
		// depends on the threads; sorted, it does not).
		err := parallelFor(hi-lo, r.Threads, func(a, b int64) error {
			for i := a; i < b; i++ {
				nb := buf[start[i]:start[i+1]]
				slices.Sort(nb)
				deg[lo+i] = int64(len(slices.Compact(nb)))
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		for i := int64(0); i < hi-lo; i++ {
			nb := buf[start[i] : start[i]+deg[lo+i]]
			if err := binary.Write(w, binary.LittleEndian, nb); err != nil {
				return 0, err
			}
			total += int64(len(nb))
		}
		lo = hi
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := ind.Close(); err != nil {
		return 0, err
	}
	// deg now holds the final in-degrees: the offsets are their prefix sums.
	indptr := deg
	prev := int64(0)
	for v := range n + 1 {
		d := indptr[v]
		indptr[v] = prev
		prev += d
	}
	if err := os.WriteFile(filepath.Join(dir, dataset.CSCIndptrFile), mem.Bytes(indptr), 0o644); err != nil {
		return 0, err
	}
	return total, nil
}

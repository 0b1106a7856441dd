package rankpart

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/internal/fileio"
	"github.com/graphferry/graphferry/engine/mem"
)

// progressFile records, while Partition runs, the rank folders it has
// finished (removed when partition.json is written).
const progressFile = "partition.progress.json"

// progress is progressFile's content: the options and assignment it was
// written under (a resumed run keeps its folders only when they match)
// and the ranks finished.
type progress struct {
	Format   string     `json:"format"`
	Method   string     `json:"method"`
	Parts    int        `json:"parts"`
	Layout   string     `json:"layout"`
	Hops     int        `json:"hops"`
	Seed     uint64     `json:"seed"`
	NumNodes int64      `json:"num_nodes"`
	NumEdges int64      `json:"num_edges"`
	Assign   uint32     `json:"assignment_crc32c"`
	Ranks    []PartRank `json:"ranks"` // the finished ones
}

// progressOf returns p's progress so far.
func (p *Partitioner) progressOf() progress {
	m := &p.meta
	pr := progress{Format: PartFormat + "-progress", Method: m.Method, Parts: m.Parts, Layout: m.Layout, Hops: m.Hops, Seed: m.Seed,
		NumNodes: m.NumNodes, NumEdges: m.NumEdges, Assign: crc32.Checksum(mem.Bytes(p.assign), crc32.MakeTable(crc32.Castagnoli))}
	for r, ok := range p.done {
		if ok {
			pr.Ranks = append(pr.Ranks, m.Ranks[r])
		}
	}
	return pr
}

// saveProgress records rank's folder as finished in
// DST/partition.progress.json (atomically), after its files reached the
// disk (fsync: a folder recorded is one a resumed run may keep). With a
// memory limit their pages then leave the page cache (fadvise
// DONTNEED), which a memory group counts: written pages would otherwise
// pile up faster than the kernel writes them back.
func (p *Partitioner) saveProgress(dst string, rank int) error {
	for name := range p.meta.Ranks[rank].Files {
		if err := syncFile(filepath.Join(dst, partDir(rank), name), p.opt.MemoryLimit > 0); err != nil {
			return err
		}
	}
	js, err := json.Marshal(p.progressOf())
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return fileio.WriteFile(filepath.Join(dst, progressFile), append(js, '\n'))
}

// resume marks done the ranks an interrupted run recorded in dst, when
// p.opt.Resume is set, the record matches p's options and assignment, and
// each such folder's files still have the sizes recorded; otherwise
// nothing (every rank is written again).
func (p *Partitioner) resume(dst string) error {
	if !p.opt.Resume {
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(dst, progressFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	var got progress
	if json.Unmarshal(raw, &got) != nil {
		return nil // a torn or foreign file: start over
	}
	want := p.progressOf()
	got.Ranks, want.Ranks = nil, got.Ranks
	if got.Format != want.Format || got.Method != want.Method || got.Parts != want.Parts || got.Layout != want.Layout ||
		got.Hops != want.Hops || got.Seed != want.Seed || got.NumNodes != want.NumNodes || got.NumEdges != want.NumEdges ||
		got.Assign != want.Assign {
		return nil
	}
	for _, r := range want.Ranks {
		if r.Rank < 0 || r.Rank >= p.opt.Parts || r.Dir != partDir(r.Rank) || !filesIntact(filepath.Join(dst, r.Dir), r.Files) {
			continue
		}
		p.meta.Ranks[r.Rank], p.done[r.Rank] = r, true
	}
	return nil
}

// syncFile flushes path to the disk and, when drop is set, drops its
// cached pages.
func syncFile(path string, drop bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if drop {
		const fadvDontNeed = 4
		syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0) // advice only
	}
	return nil
}

// filesIntact says whether every file of files is in dir with its size.
func filesIntact(dir string, files map[string]fileio.FileSum) bool {
	for name, sum := range files {
		if fileio.CheckSize(filepath.Join(dir, name), sum, progressFile) != nil {
			return false
		}
	}
	return len(files) > 0
}

// PartitionMemory is the memory Partition needs beside the rank folder it
// writes, per node of the source: the assignment, the new ids and the
// owned lists (8 bytes each), and a baseline's assignment while its edge
// cut is counted.
const PartitionMemory = 32

// limitMemory checks opt.MemoryLimit against the source's node count and
// sets half of it as the Go heap's soft limit; restore puts the old one
// back.
func limitMemory(src *dataset.Dataset, opt PartitionOptions) (restore func(), err error) {
	if opt.MemoryLimit < 0 {
		return nil, fmt.Errorf("dataset: partition: memory limit = %d (want > 0, or 0 for none)", opt.MemoryLimit)
	}
	if opt.MemoryLimit == 0 || src == nil || src.Graph == nil {
		return func() {}, nil
	}
	if need := PartitionMemory * src.Graph.NumNodes; need > opt.MemoryLimit {
		return nil, fmt.Errorf("dataset: partition: a memory limit of %d bytes is below the %d a partition of %d nodes needs (%d bytes a node, beside one rank's folder)",
			opt.MemoryLimit, need, src.Graph.NumNodes, PartitionMemory)
	}
	// Half for the heap: the rest is for the page cache of the mapped
	// source and of the files written, which a memory group counts too.
	old := debug.SetMemoryLimit(opt.MemoryLimit / 2)
	return func() { debug.SetMemoryLimit(old) }, nil
}

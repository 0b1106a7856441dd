package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rankpart"
)

// The streaming partitioner under a memory limit: a generated graph whose
// files are several times the limit is partitioned (LDG, dsp) by a child
// process in a cgroup v1 memory group of its own whose limit counts page
// cache too, once interrupted halfway and resumed, and compared with an
// unlimited run.

// partChildEnv names the variable that makes this program (or the test
// binary) a child that partitions (partArgs) and exits.
const partChildEnv = "GF_SCALE_PARTITION_CHILD"

// partArgs tell a partitioning child what to do.
type partArgs struct {
	Src, Dst string
	Parts    int
	Limit    int64 // rankpart's MemoryLimit (0: none)
	// Cgroup, when set, is the memory group the child joins before it
	// reads anything; StopAfter > 0 makes it exit (status 3) once that
	// many rank folders are written, as a kill would stop it.
	Cgroup    string
	StopAfter int
}

// stopStatus is the exit status of a child stopped by StopAfter.
const stopStatus = 3

// partitionChildMain runs the child of runPartition when partChildEnv is
// set (and exits); it returns otherwise.
func partitionChildMain() {
	js := os.Getenv(partChildEnv)
	if js == "" {
		return
	}
	var a partArgs
	err := json.Unmarshal([]byte(js), &a)
	if err == nil && a.Cgroup != "" {
		err = os.WriteFile(filepath.Join(a.Cgroup, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	if err == nil {
		err = partitionOnce(a)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(peakRSS())
	os.Exit(0)
}

// peakRSS returns this process's VmHWM in bytes.
func peakRSS() int64 {
	raw, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return -1
}

// partitionOnce partitions a.Src into a.Dst (LDG, dsp, resuming what is there).
func partitionOnce(a partArgs) error {
	ds, err := dataset.Open(a.Src)
	if err != nil {
		return err
	}
	defer ds.Close()
	opt := rankpart.PartitionOptions{Method: partition.LDG, Parts: a.Parts, Layout: rankpart.LayoutDSP, MemoryLimit: a.Limit, Resume: true}
	if a.StopAfter > 0 {
		opt.Progress = func(done, _ int) {
			if done == a.StopAfter {
				os.Exit(stopStatus)
			}
		}
	}
	_, err = rankpart.Partition(ds, a.Dst, opt)
	return err
}

// runPartition runs a in a child process (exe args, the test binary or
// this program) and returns its exit status (and, when it completed, its
// peak resident memory in *peak).
func runPartition(exe string, args []string, a partArgs, peak *int64) (int, error) {
	js, err := json.Marshal(a)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), partChildEnv+"="+string(js))
	var stderr bytes.Buffer
	cmd.Stderr = io.MultiWriter(&stderr, os.Stderr)
	out, err := cmd.Output()
	if err == nil && peak != nil {
		lines := strings.Fields(string(out))
		if len(lines) > 0 {
			*peak, _ = strconv.ParseInt(lines[len(lines)-1], 10, 64)
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() == stopStatus {
			return stopStatus, nil
		}
		return exit.ExitCode(), fmt.Errorf("partition child: %v: %s", err, stderr.String())
	}
	return 0, err
}

// memoryGroup is a cgroup v1 memory group made under this process's own.
type memoryGroup struct{ dir string }

// newMemoryGroup makes a child memory group of the one this process runs
// in, with limit bytes (page cache included, as cgroup v1 counts it).
func newMemoryGroup(limit int64) (*memoryGroup, error) {
	raw, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	var rel string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) == 3 && strings.Split(f[1], ",")[0] == "memory" {
			rel = f[2]
		}
	}
	base := filepath.Join("/sys/fs/cgroup/memory", rel)
	if rel == "" {
		return nil, errors.New("no cgroup v1 memory controller in /proc/self/cgroup")
	}
	dir := filepath.Join(base, fmt.Sprintf("graphferry-scale-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("making a memory group under %s: %w", base, err)
	}
	g := &memoryGroup{dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// read returns one of the group's counters.
func (g *memoryGroup) read(name string) int64 {
	raw, err := os.ReadFile(filepath.Join(g.dir, name))
	if err != nil {
		return -1
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	return v
}

// remove removes the group (its processes have exited; the kernel moves
// its page cache to the parent), trying for a few seconds.
func (g *memoryGroup) remove() error {
	var err error
	for range 50 {
		if err = os.Remove(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// partitionReport is partition.json.
type partitionReport struct {
	Nodes      int64  `json:"nodes"`
	Edges      int64  `json:"edges"`
	FeatureDim int    `json:"feature_dim"`
	Parts      int    `json:"parts"`
	Method     string `json:"method"`
	// GraphBytes are the source dataset's files; MemoryLimitBytes the
	// group's memory.limit_in_bytes (and rankpart's MemoryLimit).
	GraphBytes       int64 `json:"graph_bytes"`
	MemoryLimitBytes int64 `json:"memory_limit_bytes"`
	// Bound names what bounded the run: "cgroup v1 memory group" here.
	Bound string `json:"bound"`
	// Completed: the limited run (interrupted after StoppedAfter rank
	// folders, then resumed) finished; Equal: its partition.json,
	// assignment and relabelling equal the unlimited run's.
	StoppedAfter int  `json:"stopped_after"`
	Completed    bool `json:"completed"`
	Equal        bool `json:"equal"`
	// MaxUsageBytes and FailCount are the group's memory.max_usage_in_bytes
	// (page cache included) and memory.failcnt (times the limit was hit,
	// each answered by reclaiming page cache).
	MaxUsageBytes int64 `json:"max_usage_bytes"`
	FailCount     int64 `json:"fail_count"`
	// UnlimitedPeakRSS and LimitedPeakRSS are the children's VmHWM (the
	// resumed run's for the limited one): mapped file pages included,
	// which the group reclaims as the run pages through the source.
	UnlimitedPeakRSS int64 `json:"unlimited_peak_rss_bytes"`
	LimitedPeakRSS   int64 `json:"limited_peak_rss_bytes"`
	EdgeCut          int64 `json:"edge_cut"`
	RandomCut        int64 `json:"random_edge_cut"`
}

// streamSpec is the graph partitioned under the limit.
type streamSpec struct {
	Nodes      int64
	EdgeFactor float64
	FeatDim    int
	Parts      int
	Limit      int64
}

// partitionUnderLimit writes spec's graph (streamed, outside any group)
// into cache, partitions it unlimited and, in a memory group of spec.Limit,
// interrupted after half the ranks and resumed, and compares.
func partitionUnderLimit(exe string, args []string, cache string, spec streamSpec) (partitionReport, error) {
	rep := partitionReport{Nodes: spec.Nodes, FeatureDim: spec.FeatDim, Parts: spec.Parts, Method: "ldg", MemoryLimitBytes: spec.Limit,
		Bound: "cgroup v1 memory group (memory.limit_in_bytes, page cache counted)"}
	src := filepath.Join(cache, fmt.Sprintf("stream-%d-%g-%d", spec.Nodes, spec.EdgeFactor, spec.FeatDim))
	if _, err := os.Stat(filepath.Join(src, dataset.MetaFile)); err != nil {
		p := gen.Preset{
			Name: "scale-stream",
			RMAT: gen.RMAT{NumNodes: spec.Nodes, EdgeFactor: spec.EdgeFactor, A: gen.DefaultA, B: gen.DefaultB, C: gen.DefaultC,
				Seed: 36, Undirected: true, Permute: true},
			Features:      gen.Features{Dim: spec.FeatDim, NumClasses: 16, DType: mem.Float32, Seed: 36},
			TrainFraction: 0.1, ValFraction: 0.05, Streamed: true,
		}
		if err := gen.WriteStreamed(p, src, gen.StreamOptions{}); err != nil {
			return rep, err
		}
	}
	var err error
	if rep.GraphBytes, err = dirBytes(src); err != nil {
		return rep, err
	}
	whole, limited := filepath.Join(cache, "stream-whole"), filepath.Join(cache, "stream-limited")
	for _, d := range []string{whole, limited} {
		if err := os.RemoveAll(d); err != nil {
			return rep, err
		}
	}
	// The source's pages in the page cache (from writing it) are charged
	// to this group: dropped first, so that the limited child's reads of
	// them are charged to its own group.
	if err := dropCache(src); err != nil {
		return rep, err
	}
	g, err := newMemoryGroup(spec.Limit)
	if err != nil {
		return rep, err
	}
	defer g.remove()
	rep.StoppedAfter = spec.Parts / 2
	a := partArgs{Src: src, Dst: limited, Parts: spec.Parts, Limit: spec.Limit, Cgroup: g.dir, StopAfter: rep.StoppedAfter}
	if status, err := runPartition(exe, args, a, nil); err != nil || status != stopStatus {
		return rep, fmt.Errorf("the interrupted run ended with status %d: %v", status, err)
	}
	a.StopAfter = 0
	if _, err := runPartition(exe, args, a, &rep.LimitedPeakRSS); err != nil {
		return rep, err
	}
	rep.MaxUsageBytes, rep.FailCount = g.read("memory.max_usage_in_bytes"), g.read("memory.failcnt")
	if err := g.remove(); err != nil {
		return rep, fmt.Errorf("removing %s: %w", g.dir, err)
	}
	rep.Completed = true
	if _, err := runPartition(exe, args, partArgs{Src: src, Dst: whole, Parts: spec.Parts}, &rep.UnlimitedPeakRSS); err != nil {
		return rep, err
	}
	rep.Equal = true
	for _, name := range []string{rankpart.PartMetaFile, rankpart.PartAssignmentFile, rankpart.NewToOldFile, rankpart.OldToNewFile} {
		x, err1 := os.ReadFile(filepath.Join(whole, name))
		y, err2 := os.ReadFile(filepath.Join(limited, name))
		if err := errors.Join(err1, err2); err != nil {
			return rep, err
		}
		rep.Equal = rep.Equal && bytes.Equal(x, y)
	}
	var meta rankpart.PartMeta
	raw, err := os.ReadFile(filepath.Join(limited, rankpart.PartMetaFile))
	if err == nil {
		err = json.Unmarshal(raw, &meta)
	}
	if err != nil {
		return rep, err
	}
	rep.Edges, rep.EdgeCut, rep.RandomCut = meta.NumEdges, meta.EdgeCut, meta.EdgeCuts["random"]
	return rep, nil
}

// dropCache asks the kernel to drop the cached pages of the files in dir
// (posix_fadvise DONTNEED: clean, unmapped pages of these files only).
func dropCache(dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		const fadvDontNeed = 4
		if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 {
			return fmt.Errorf("fadvise %s: %w", path, e)
		}
		return nil
	})
}

// dirBytes returns the bytes of the files in dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}

// runPartitionBench is -what partition.
func runPartitionBench(cache string, spec streamSpec) (partitionReport, error) {
	exe, err := os.Executable()
	if err != nil {
		return partitionReport{}, err
	}
	return partitionUnderLimit(exe, nil, cache, spec)
}

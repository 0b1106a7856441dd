package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/distributed"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rankpart"
	"github.com/graphferry/graphferry/engine/sample"
)

// graphSpec is the generated graph the rank measurements run on: an
// undirected, permuted R-MAT (Graph500 probabilities) with float32
// features, written as a dataset.
type graphSpec struct {
	Nodes      int64   `json:"nodes"`
	EdgeFactor float64 `json:"edge_factor"`
	FeatDim    int     `json:"feature_dim"`
	Seed       uint64  `json:"seed"`
}

// writeGraph writes spec's dataset into dir (kept when it is there).
func writeGraph(spec graphSpec, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, dataset.MetaFile)); err == nil {
		return nil
	}
	p := gen.Preset{
		Name: fmt.Sprintf("scale-%d", spec.Nodes),
		RMAT: gen.RMAT{NumNodes: spec.Nodes, EdgeFactor: spec.EdgeFactor, A: gen.DefaultA, B: gen.DefaultB, C: gen.DefaultC,
			Seed: spec.Seed, Undirected: true, Permute: true},
		Features:      gen.Features{Dim: spec.FeatDim, NumClasses: 16, DType: mem.Float32, Seed: spec.Seed},
		TrainFraction: 0.5, ValFraction: 0.1,
	}
	ds, err := gen.Build(p)
	if err != nil {
		return err
	}
	defer ds.Close()
	return dataset.Write(dir, ds)
}

// partitionInto writes src's dsp partition into parts ranks (random
// assignment) under dst, kept when it is there.
func partitionInto(src, dst string, parts int) error {
	if _, err := os.Stat(filepath.Join(dst, rankpart.PartMetaFile)); err == nil {
		return nil
	}
	ds, err := dataset.Open(src)
	if err != nil {
		return err
	}
	defer ds.Close()
	_, err = rankpart.Partition(ds, dst, rankpart.PartitionOptions{Method: partition.Random, Parts: parts, Seed: 1, Layout: rankpart.LayoutDSP})
	return err
}

// childArgs tell a child process which partition to run (rankChildEnv).
type childArgs struct {
	Dst       string `json:"dst"`
	Parts     int    `json:"parts"`
	Seeds     int    `json:"seeds"`
	BatchSize int    `json:"batch_size"`
	Fanouts   []int  `json:"fanouts"`
}

// rankChildEnv names the variable that makes this program (or the test
// binary) a child that runs one partition's ranks and prints a rankRow.
const rankChildEnv = "GF_SCALE_RANKS_CHILD"

// rankRow is one measured rank count (bench/results/scale/ranks.json).
type rankRow struct {
	Ranks int `json:"ranks"`
	// RSSBytesPerRank is what the process's resident memory grew by from
	// before the parts were opened to the end of an epoch of every rank's
	// loader (still open), after a GC that returned the free heap to the
	// OS, divided by the ranks: anonymous and file-backed (the mapped
	// features and relabelling maps read) pages together; RSSAnon... and
	// RSSFile... split it.
	RSSBytesPerRank     int64 `json:"rss_bytes_per_rank"`
	RSSAnonBytesPerRank int64 `json:"rss_anon_bytes_per_rank"`
	RSSFileBytesPerRank int64 `json:"rss_file_bytes_per_rank"`
	// PlanBytesPerRank is the mean of the ranks' distributed.Memory
	// Resident().
	PlanBytesPerRank int64 `json:"plan_bytes_per_rank"`
	// OwnedPerRank and HaloPerRank are the ranks' mean owned and halo
	// nodes; BaseRSSBytes the process before any part was opened.
	OwnedPerRank float64 `json:"owned_per_rank"`
	HaloPerRank  float64 `json:"halo_per_rank"`
	BaseRSSBytes int64   `json:"base_rss_bytes"`
	Batches      int     `json:"batches"`
}

// procStatus returns VmRSS, RssAnon and RssFile of this process in bytes.
func procStatus() (rss, anon, file int64, err error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = kb << 10
		case "RssAnon:":
			anon = kb << 10
		case "RssFile:":
			file = kb << 10
		}
	}
	return rss, anon, file, sc.Err()
}

// settle collects garbage and returns the free heap to the OS, so that
// the resident memory is what is held.
func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// runRanks runs every rank of a's partition as goroutines of this process
// (comm.Local, a comm.Host each, as the engine's tests run them): each
// opens its own part and a loader over the same seeds, and reads one
// epoch; the resident memory is measured before the parts are opened and
// after the epoch, loaders still open.
func runRanks(a childArgs) (rankRow, error) {
	settle()
	base, baseAnon, baseFile, err := procStatus()
	if err != nil {
		return rankRow{}, err
	}
	row := rankRow{Ranks: a.Parts, BaseRSSBytes: base}
	l := comm.NewLocal(a.Parts)
	parts := make([]*distributed.Part, a.Parts)
	defer func() {
		for _, p := range parts {
			if p != nil {
				p.Close()
			}
		}
	}()
	var seeds []int64
	for r := range a.Parts {
		p, err := distributed.OpenPart(a.Dst, r, dataset.OpenOptions{})
		if err != nil {
			return row, err
		}
		parts[r] = p
		mask, err := p.OwnedNodeData(dataset.TrainMaskKey, nil)
		if err != nil {
			return row, err
		}
		for i, v := range p.OwnedNodes() {
			if mask.Data[i] != 0 {
				seeds = append(seeds, v)
			}
		}
		m, err := p.Memory()
		if err != nil {
			return row, err
		}
		row.PlanBytesPerRank += m.Resident()
		row.OwnedPerRank += float64(m.Owned)
		row.HaloPerRank += float64(m.Halo)
	}
	slices.Sort(seeds)
	seeds = seeds[:min(len(seeds), a.Seeds)]
	lopt := pipeline.Options{BatchSize: a.BatchSize, Shuffle: true, Seed: 3, FeatureNames: []string{dataset.FeatKey},
		LabelNames: []string{dataset.LabelKey}, Threads: 1, Workers: 1}
	req := sample.Request{Fanouts: a.Fanouts, Seed: 5}
	loaders := make([]*core.Loader, a.Parts)
	defer func() {
		for _, ld := range loaders {
			if ld != nil {
				ld.Close()
			}
		}
	}()
	counts := make([]int, a.Parts)
	errc := make(chan error, a.Parts)
	var wg sync.WaitGroup
	for r, p := range parts {
		h, err := comm.NewHost(r, a.Parts, l.Exchanger(r))
		if err != nil {
			return row, err
		}
		wg.Add(1)
		go func() { // a dsp loader's open is collective (its seeds are resolved)
			defer wg.Done()
			ld, err := p.OpenLoader(h, seeds, req, lopt, nil)
			if err != nil {
				errc <- fmt.Errorf("rank %d: %w", r, err)
				return
			}
			loaders[r] = ld
			if err := ld.Start(0); err != nil {
				errc <- err
				return
			}
			for {
				b, err := ld.Next(context.Background())
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					errc <- fmt.Errorf("rank %d: %w", r, err)
					return
				}
				counts[r]++
				b.Release()
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return row, err
	}
	settle()
	rss, anon, file, err := procStatus()
	if err != nil {
		return row, err
	}
	p := int64(a.Parts)
	row.RSSBytesPerRank = (rss - base) / p
	row.RSSAnonBytesPerRank = (anon - baseAnon) / p
	row.RSSFileBytesPerRank = (file - baseFile) / p
	row.PlanBytesPerRank /= p
	row.OwnedPerRank /= float64(p)
	row.HaloPerRank /= float64(p)
	for _, c := range counts {
		row.Batches += c
	}
	return row, nil
}

// measureRanks runs a's partition in a child process (exe, with
// rankChildEnv set; the test binary or this program) and returns its row:
// a fresh process per rank count, so that one count's heap does not stay
// in another's measurement.
func measureRanks(exe string, args []string, a childArgs) (rankRow, error) {
	js, err := json.Marshal(a)
	if err != nil {
		return rankRow{}, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), rankChildEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return rankRow{}, fmt.Errorf("ranks child (%d ranks): %w", a.Parts, err)
	}
	// The row is the last line (a test binary may print more).
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var row rankRow
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &row); err != nil {
		return rankRow{}, fmt.Errorf("ranks child (%d ranks) printed %q: %w", a.Parts, out, err)
	}
	return row, nil
}

// childMain runs the child of measureRanks when rankChildEnv is set (and
// exits); it returns otherwise.
func childMain() {
	js := os.Getenv(rankChildEnv)
	if js == "" {
		return
	}
	var a childArgs
	if err := json.Unmarshal([]byte(js), &a); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	row, err := runRanks(a)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, _ := json.Marshal(row)
	fmt.Println(string(out))
	os.Exit(0)
}

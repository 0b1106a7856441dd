// Command verifyread measures what checking each block of feat.bin at its
// first read costs a loading epoch (issue 23): the same dataset opened
// with its per-block sums and without them (graphferry.json rewritten as
// a dataset of an earlier version: no "blocks", no "declared"), a fresh
// open for every epoch so that every block is checked again, in
// alternation, the median of the epoch times of each and their ratio.
//
//	go run ./bench/verifyread [-preset small] [-reps 21] [-dir DIR] [-out bench/results/verify_read.md]
//
// The dataset is generated into -dir (a temporary folder by default) and
// read from the page cache: the cost measured is the CRC work, not disk
// reads (on a cold disk, the verification reads the whole block of a row
// instead of its page: up to 64 times the bytes of a 4 KiB read).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/graphferry/graphferry/engine/core"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/gen"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

func main() {
	preset := flag.String("preset", "small", "engine/gen preset")
	reps := flag.Int("reps", 21, "epochs of each, alternated")
	dir := flag.String("dir", "", "where to write the datasets (default: a temporary folder)")
	out := flag.String("out", "", "write the report (markdown) here too")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "verifyread")
		check(err)
		defer os.RemoveAll(d)
		*dir = d
	}
	p, ok := gen.Presets()[*preset]
	if !ok {
		log.Fatalf("no preset %q", *preset)
	}
	ds, err := gen.Build(p)
	check(err)
	with := filepath.Join(*dir, "with-blocks")
	without := filepath.Join(*dir, "without-blocks")
	check(dataset.Write(with, ds))
	check(dataset.Write(without, ds))
	dropBlocks(filepath.Join(without, dataset.MetaFile))

	var tw, to []time.Duration
	var batches int
	for range *reps {
		d, n := epoch(with)
		tw, batches = append(tw, d), n
		d, _ = epoch(without)
		to = append(to, d)
	}
	mw, mo := median(tw), median(to)
	st, err := os.Stat(filepath.Join(with, dataset.FeatFile))
	check(err)
	var b strings.Builder
	fmt.Fprintf(&b, "# Verified as read: the cost of the per-block check (issue 23)\n\n")
	fmt.Fprintf(&b, "`go run ./bench/verifyread -preset %s -reps %d` on %d CPUs (GOMAXPROCS), %s.\n\n", *preset, *reps, runtime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, "Preset %s: %d nodes, %d edges, feat.bin %d bytes (%d blocks of 256 KiB). One loading epoch: every node a seed, batches of 1024, fan-outs [10, 5], gathering \"feat\" and \"label\" (%d batches), on a freshly opened graph each time (every block checked again), from the page cache.\n\n",
		*preset, ds.Graph.NumNodes, ds.Graph.NumEdges(), st.Size(), (st.Size()+256<<10-1)/(256<<10), batches)
	fmt.Fprintf(&b, "| dataset | median epoch | epochs (ms) |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| with block sums (checked as read) | %.1f ms | %s |\n", ms(mw), list(tw))
	fmt.Fprintf(&b, "| without (a dataset of an earlier version) | %.1f ms | %s |\n\n", ms(mo), list(to))
	fmt.Fprintf(&b, "Ratio with / without: **%.3f** (%+.1f%%).\n", float64(mw)/float64(mo), 100*(float64(mw)/float64(mo)-1))
	fmt.Print(b.String())
	if *out != "" {
		check(os.WriteFile(*out, []byte(b.String()), 0o644))
	}
}

// epoch opens the dataset at dir and times one loading epoch over every node.
func epoch(dir string) (time.Duration, int) {
	g, err := core.Open(dir, partition.Options{Method: partition.Range, NumPatches: 1}, graph.COOOptions{}, dataset.OpenOptions{})
	check(err)
	defer g.Close()
	seeds := make([]int64, g.NumNodes())
	for i := range seeds {
		seeds[i] = int64(i)
	}
	l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{10, 5}, Seed: 1},
		pipeline.Options{BatchSize: 1024, Shuffle: true, Seed: 2, FeatureNames: []string{"feat"}, LabelNames: []string{"label"}}, nil)
	check(err)
	defer l.Close()
	start := time.Now()
	check(l.Start(0))
	n := 0
	for {
		b, err := l.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		check(err)
		b.Release()
		n++
	}
	return time.Since(start), n
}

// dropBlocks rewrites graphferry.json without its block and declared sums.
func dropBlocks(path string) {
	raw, err := os.ReadFile(path)
	check(err)
	var m map[string]any
	check(json.Unmarshal(raw, &m))
	if _, ok := m["blocks"]; !ok {
		log.Fatal("the dataset has no block sums to drop")
	}
	delete(m, "blocks")
	delete(m, "declared")
	raw, err = json.MarshalIndent(m, "", "  ")
	check(err)
	check(os.WriteFile(path, raw, 0o644))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func list(d []time.Duration) string {
	parts := make([]string, len(d))
	for i, x := range d {
		parts[i] = fmt.Sprintf("%.1f", ms(x))
	}
	return strings.Join(parts, ", ")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

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
	changed := flag.Bool("changed", false, "measure instead what looking for changed files at each epoch start costs (issue 34)")
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
	if *changed {
		report(changedFiles(*preset, ds, *dir, *reps), *out)
		return
	}
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
	report(b.String(), *out)
}

// report prints the report and writes it to out (if set).
func report(s, out string) {
	fmt.Print(s)
	if out != "" {
		check(os.WriteFile(out, []byte(s), 0o644))
	}
}

// changedFiles measures what the look for changed files at each epoch
// start (dataset.Dataset.Recheck, issue 34) costs, on the memory and disk
// tiers: the first epoch of a fresh open (every block checked as read, as
// before), a steady epoch of a loader whose files are settled (one stat
// of each mapped file at its start: the only work the look adds), and a
// steady epoch after feat.bin was touched (its identity changed, its
// bytes not: every block it reads is checked again, as in the first two
// seconds after a dataset is written), alternated; and the look itself.
func changedFiles(preset string, ds *dataset.Dataset, root string, reps int) string {
	dir := filepath.Join(root, "changed")
	check(dataset.Write(dir, ds))
	feat := filepath.Join(dir, dataset.FeatFile)
	raw, err := os.ReadFile(feat)
	check(err)
	time.Sleep(2500 * time.Millisecond) // past the racy window: the files are settled
	touch := func() {
		check(os.WriteFile(feat, raw, 0o644))
		at := time.Now().Add(-10 * time.Second) // settled again, at a new identity
		check(os.Chtimes(feat, at, at))
	}
	var b strings.Builder
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "# Changed files under an open graph: the cost of the look at each epoch start (issue 34)\n\n")
	fmt.Fprintf(&b, "`go run ./bench/verifyread -changed -preset %s -reps %d` on %d CPUs (GOMAXPROCS), %s, load average %s.\n\n",
		preset, reps, runtime.GOMAXPROCS(0), time.Now().UTC().Format("2006-01-02"), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(&b, "Preset %s (%d nodes, feat.bin %d bytes), one loading epoch as in verify_read.md, from the page cache. "+
		"*First*: a fresh open's first epoch (every block checked as read, as before). *Steady*: a later epoch, the files settled: the look is one stat of each mapped file. "+
		"*Touched*: a later epoch after feat.bin was rewritten with the same bytes (a new identity): every block it reads is checked again, "+
		"which is also what every epoch starting within 2 s of a write to the file costs (the racy window). "+
		"Before this change a steady epoch was the same work without the look, whose time is measured on its own below.\n\n", preset, ds.Graph.NumNodes, len(raw))
	fmt.Fprintf(&b, "| tier | first epoch | steady epoch | touched epoch | touched / steady |\n|---|---|---|---|---|\n")
	var steadyMem time.Duration
	for _, tier := range []core.Tier{core.TierMemory, core.TierDisk} {
		var first, steady, touched []time.Duration
		for range reps {
			g, err := core.OpenWith(dir, partition.Options{Method: partition.Range, NumPatches: 1}, graph.COOOptions{}, core.OpenOptions{FeatureTier: tier})
			check(err)
			l := loader(g)
			first = append(first, timeEpoch(l, 0))
			steady = append(steady, timeEpoch(l, 1))
			touch()
			touched = append(touched, timeEpoch(l, 2))
			check(l.Close())
			check(g.Close())
			time.Sleep(2100 * time.Millisecond) // the touch's change time out of the racy window
		}
		fs, ss, ts := median(first), median(steady), median(touched)
		if tier == core.TierMemory {
			steadyMem = ss
		}
		fmt.Fprintf(&b, "| %s | %.1f ms | %.1f ms | %.1f ms | %.3f |\n", tier, ms(fs), ms(ss), ms(ts), float64(ts)/float64(ss))
	}
	open, err := dataset.Open(dir)
	check(err)
	defer open.Close()
	var looks []time.Duration
	for range 1001 {
		t0 := time.Now()
		check(open.Recheck())
		looks = append(looks, time.Since(t0))
	}
	look := median(looks)
	fmt.Fprintf(&b, "\nThe look (`Dataset.Recheck`, feat.bin settled): median %.2f us over 1001 calls; a steady memory-tier epoch is %.5f times the same epoch without it "+
		"(steady / (steady - look)).\n", float64(look.Nanoseconds())/1000, float64(steadyMem)/float64(steadyMem-look))
	return b.String()
}

// loader opens the epoch loader of epoch over g.
func loader(g *core.Graph) *core.Loader {
	seeds := make([]int64, g.NumNodes())
	for i := range seeds {
		seeds[i] = int64(i)
	}
	l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{10, 5}, Seed: 1},
		pipeline.Options{BatchSize: 1024, Shuffle: true, Seed: 2, FeatureNames: []string{"feat"}, LabelNames: []string{"label"}}, nil)
	check(err)
	return l
}

// timeEpoch times epoch e of l.
func timeEpoch(l *core.Loader, e uint64) time.Duration {
	start := time.Now()
	check(l.Start(e))
	for {
		b, err := l.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		check(err)
		b.Release()
	}
	return time.Since(start)
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

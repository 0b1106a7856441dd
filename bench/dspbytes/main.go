// Command dspbytes is issue 11's distributed sampling benchmark: per epoch,
// for 1, 2 and 4 ranks, each partitioning method (range, random, METIS)
// and each layout (DSP, FastSample's hybrid, PaGraph's self-reliant), the
// bytes the ranks exchange per hop, CSP's task push (engine/sample) against
// pulling whole adjacency lists (bench/pull, the baseline of DSP's
// Figures 1 and 11), the sampling epoch time, and the edge cut of each
// method.
//
// Ranks are goroutines of this process over comm.Local (as the engine's
// tests run them); a comm.Counting around the communicator counts what
// each rank sends to the others, which is what a process-per-rank run
// would put on the wire. Times are those of all ranks sharing this
// machine's cores, so they compare work, not a distributed speed-up.
//
// Usage (from the repository root; make bench-dist):
//
//	go run ./bench/dspbytes -preset products-like -python .venv/bin/python -out bench/results
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

type config struct {
	Preset    string   `json:"preset"`
	Ranks     []int    `json:"ranks"`
	Methods   []string `json:"methods"`
	Fanouts   []int    `json:"fanouts"`
	BatchSize int      `json:"batch_size"`
	MaxSeeds  int      `json:"max_seeds"`
	Epochs    int      `json:"epochs"`
	Warmup    int      `json:"warmup"`
	Seed      uint64   `json:"seed"`
	Threads   int      `json:"threads"`
	RowBytes  int      `json:"feature_row_bytes"`
	cache     string
	python    string
	metis     string
	out       string
}

func main() {
	var cfg config
	var ranks, methods, fanouts string
	flag.StringVar(&cfg.Preset, "preset", "products-like", "engine/gen preset")
	flag.StringVar(&cfg.cache, "cache", "", "folder caching the generated graph and METIS's assignments (default: $TMPDIR/gf-dspbytes-PRESET)")
	flag.StringVar(&ranks, "ranks", "1,2,4", "rank counts")
	flag.StringVar(&methods, "methods", "range,random,metis", "partitioning methods (for more than one rank)")
	flag.StringVar(&fanouts, "fanouts", "15,10,5", "fan-outs from the seeds outwards")
	flag.IntVar(&cfg.BatchSize, "batch-size", 1024, "seeds per batch")
	flag.IntVar(&cfg.MaxSeeds, "max-seeds", 30720, "seeds per epoch (a seeded random subset of the nodes, as bench --full bounds them; 0: all)")
	flag.IntVar(&cfg.Epochs, "epochs", 3, "timed epochs")
	flag.IntVar(&cfg.Warmup, "warmup", 1, "untimed epochs first")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "seed of the seed subset, the random partition and the samples")
	flag.IntVar(&cfg.Threads, "threads", 0, "sampling threads shared by the ranks (0: GOMAXPROCS)")
	flag.StringVar(&cfg.python, "python", "python3", "Python with pymetis, for -methods metis")
	flag.StringVar(&cfg.metis, "metis-script", "bench/dspbytes/metis.py", "METIS script")
	flag.StringVar(&cfg.out, "out", "", "folder for dsp_bytes.json and dsp_bytes.md (default: print the Markdown only)")
	fromJSON := flag.String("from-json", "", "measure nothing: rewrite the Markdown (and -note) from this dsp_bytes.json")
	var notes multi
	flag.Var(&notes, "note", "a line for the report's notes (repeatable)")
	flag.Parse()
	if *fromJSON != "" {
		if err := rewrite(*fromJSON, cfg.out, notes); err != nil {
			fail(err)
		}
		return
	}
	var err error
	if cfg.Ranks, err = ints(ranks); err == nil {
		cfg.Fanouts, err = ints(fanouts)
	}
	if err != nil {
		fail(err)
	}
	cfg.Methods = strings.Split(methods, ",")
	if cfg.cache == "" {
		cfg.cache = filepath.Join(os.TempDir(), "gf-dspbytes-"+cfg.Preset)
	}
	if cfg.Threads <= 0 {
		cfg.Threads = runtime.GOMAXPROCS(0)
	}
	rep, err := run(context.Background(), cfg)
	if err != nil {
		fail(err)
	}
	rep.Notes = append(rep.Notes, notes...)
	md := rep.markdown()
	if cfg.out == "" {
		fmt.Print(md)
		return
	}
	if err := rep.write(cfg.out, md); err != nil {
		fail(err)
	}
	logf("wrote %s and %s", filepath.Join(cfg.out, "dsp_bytes.json"), filepath.Join(cfg.out, "dsp_bytes.md"))
}

// multi is a repeatable string flag.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, "; ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// rewrite reads a report written earlier, adds notes and writes it again
// (JSON and Markdown) into out, or next to it when out is empty.
func rewrite(path, out string, notes []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	rep.Notes = append(rep.Notes, notes...)
	if out == "" {
		out = filepath.Dir(path)
	}
	return rep.write(out, rep.markdown())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dspbytes:", err)
	os.Exit(1)
}

func logf(f string, a ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+f+"\n", a...)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not a list of integers", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// run measures every configuration; see the package documentation.
func run(ctx context.Context, cfg config) (*report, error) {
	g, preset, err := loadGraph(cfg.Preset, cfg.cache, logf)
	if err != nil {
		return nil, err
	}
	cfg.RowBytes = preset.Features.Dim * 4 // float32 features
	rep := &report{Config: cfg, NumNodes: g.NumNodes, NumEdges: g.NumEdges(), Started: time.Now().UTC().Format(time.RFC3339),
		Machine: fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())}
	seeds := chooseSeeds(g.NumNodes, cfg.MaxSeeds, cfg.Seed)
	rep.NumSeeds = len(seeds)
	topo := topologyBytes(g.NumNodes, g.NumEdges(), g.IsCompact())
	// The hybrid layout's replicated graph and every rank's own sampler
	// read the graph in original ids.
	whole, err := partition.Build(g, partition.Options{Method: partition.Range, NumPatches: 1})
	if err != nil {
		return nil, err
	}
	for _, p := range cfg.Ranks {
		ms := cfg.Methods
		if p == 1 {
			ms = []string{"range"} // one patch: every method is the identity
		}
		for _, m := range ms {
			pt, extra, err := partitionFor(g, cfg, p, m)
			if err != nil {
				if m == "metis" {
					logf("METIS for %d parts failed, skipped: %v", p, err)
					rep.Notes = append(rep.Notes, fmt.Sprintf("METIS for %d parts failed, skipped: %v", p, err))
					continue
				}
				return nil, err
			}
			name := m
			if p == 1 {
				name = "-"
			}
			if p > 1 {
				cut := edgeCut(pt)
				rep.EdgeCuts = append(rep.EdgeCuts, edgeCutRow{Parts: p, Method: m, Cut: cut,
					Fraction: float64(cut) / float64(max(g.NumEdges(), 1)), Extra: extra})
				logf("%d parts, %s: edge cut %d (%.1f%%)", p, m, cut, 100*float64(cut)/float64(g.NumEdges()))
			}
			rows, err := measure(ctx, cfg, g, whole, pt, seeds, p, name, topo)
			if err != nil {
				return nil, err
			}
			rep.Rows = append(rep.Rows, rows...)
			pt = nil
			runtime.GC()
		}
	}
	return rep, nil
}

// chooseSeeds returns a seeded random subset of max nodes (all nodes when
// max is 0 or more than there are), in a seeded random order. The full
// bench takes a seeded random subset of the train nodes; the presets' train
// nodes are themselves a seeded random subset of the nodes, so this draws
// seeds distributed alike without generating the features and masks.
func chooseSeeds(n int64, limit int, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, 0x5eed5))
	k := n
	if limit > 0 && int64(limit) < n {
		k = int64(limit)
	}
	// Partial Fisher-Yates over a lazily materialised permutation.
	swapped := map[int64]int64{}
	at := func(i int64) int64 {
		if v, ok := swapped[i]; ok {
			return v
		}
		return i
	}
	out := make([]int64, k)
	for i := range k {
		j := i + r.Int64N(n-i)
		vi, vj := at(i), at(j)
		swapped[j] = vi
		out[i] = vj
	}
	return out
}

// partitionFor builds the p-patch partition of g by method m (METIS's
// assignment from metis.py, cached). extra describes how it was made.
func partitionFor(g *graph.CSC, cfg config, p int, m string) (*partition.Partitioned, map[string]any, error) {
	t0 := time.Now()
	opt := partition.Options{NumPatches: p, Seed: cfg.Seed}
	extra := map[string]any{}
	switch m {
	case "range":
		opt.Method = partition.Range
	case "random":
		opt.Method = partition.Random
	case "metis":
		assign, info, err := metisAssignment(cfg, p)
		if err != nil {
			return nil, nil, err
		}
		if int64(len(assign)) != g.NumNodes {
			return nil, nil, fmt.Errorf("metis-%d.npy has %d entries for %d nodes", p, len(assign), g.NumNodes)
		}
		opt.Method, opt.Assignment = partition.Given, assign
		extra = info
	default:
		return nil, nil, fmt.Errorf("unknown method %q (want range, random or metis)", m)
	}
	pt, err := partition.Build(g, opt)
	if err != nil {
		return nil, nil, err
	}
	logf("%d parts, %s: partitioned in %.1f s", p, m, time.Since(t0).Seconds())
	return pt, extra, nil
}

// metisAssignment reads CACHE/metis-P.npy, running metis.py first when it
// is missing.
func metisAssignment(cfg config, p int) ([]int64, map[string]any, error) {
	path := filepath.Join(cfg.cache, fmt.Sprintf("metis-%d.npy", p))
	if _, err := os.Stat(path); err != nil {
		logf("running METIS (%s %s) for %d parts", cfg.python, cfg.metis, p)
		cmd := exec.Command(cfg.python, cfg.metis, cfg.cache, strconv.Itoa(p))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, nil, fmt.Errorf("%s %s: %w", cfg.python, cfg.metis, err)
		}
	}
	a, err := fileformat.ReadNPY(path)
	if err != nil {
		return nil, nil, err
	}
	defer a.Close()
	if a.DType != mem.Int64 || len(a.Shape) != 1 {
		return nil, nil, fmt.Errorf("%s: want an int64 vector", path)
	}
	assign := slices.Clone(mem.Int64s(a.Data))
	info := map[string]any{}
	if b, err := os.ReadFile(filepath.Join(cfg.cache, fmt.Sprintf("metis-%d.json", p))); err == nil {
		info["metis"] = string(b)
	}
	return assign, info, nil
}

// edgeCut counts the stored edges whose endpoints lie in different patches.
func edgeCut(pt *partition.Partitioned) int64 {
	g := pt.Graph
	var cut int64
	for q := range pt.NumPatches() {
		lo, hi := pt.PatchRange(q)
		for v := lo; v < hi; v++ {
			for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
				if u := g.Source(pos); u < lo || u >= hi {
					cut++
				}
			}
		}
	}
	return cut
}

// topologyBytes is the size of a CSC as the partition folders store it:
// int64 offsets, int32 (or int64) sources and int64 edge ids.
func topologyBytes(nodes, edges int64, compact bool) int64 {
	src := int64(8)
	if compact {
		src = 4
	}
	return 8*(nodes+1) + (src+8)*edges
}

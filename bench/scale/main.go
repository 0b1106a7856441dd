// Command scale is issue 35's scale measurements: the resident memory of a
// rank of a dsp partition at 2 to 64 ranks on one generated graph, fitted
// to bytes per owned node, per halo node and per rank (ranks.json), and
// the streaming partitioner under a cgroup memory limit several times
// smaller than the graph (partition.json). docs/guides/many-processes.md
// builds its table on them.
//
// Ranks are goroutines of one child process per rank count (comm.Local,
// a comm.Host each, as the engine's tests run them): each opens its own
// part, and all read one epoch of their loaders together; the process's
// resident memory grows by what the ranks hold (measured after a GC that
// returns the free heap), divided by the ranks. No time is measured.
//
// Usage (from the repository root):
//
//	go run ./bench/scale -what ranks -nodes 1000000 -out bench/results/scale
//	go run ./bench/scale -what partition -nodes 3000000 -feat 128 -limit 402653184 -out bench/results/scale   # root, cgroup v1
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func main() {
	childMain()
	partitionChildMain()
	what := flag.String("what", "ranks", "ranks or partition")
	nodes := flag.Int64("nodes", 1000000, "nodes of the generated graph (ranks)")
	factor := flag.Float64("edge-factor", 8, "generated edges per node (stored both ways)")
	dim := flag.Int("feat", 32, "float32 features per node")
	ranks := flag.String("ranks", "2,4,8,16,32,64", "rank counts")
	cache := flag.String("cache", "bench/.cache/scale", "where the generated graph and partitions are kept")
	out := flag.String("out", "bench/results/scale", "results folder")
	limit := flag.Int64("limit", 256<<20, "partition: the cgroup's memory limit in bytes")
	parts := flag.Int("parts", 32, "partition: ranks")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	switch *what {
	case "ranks":
		var counts []int
		for _, s := range strings.Split(*ranks, ",") {
			n, err := strconv.Atoi(s)
			if err != nil {
				fail(err)
			}
			counts = append(counts, n)
		}
		spec := graphSpec{Nodes: *nodes, EdgeFactor: *factor, FeatDim: *dim, Seed: 35}
		rep, err := runScale(spec, counts, *cache)
		if err != nil {
			fail(err)
		}
		writeJSON(filepath.Join(*out, "ranks.json"), rep.Rows)
		writeJSON(filepath.Join(*out, "ranks_fit.json"), rep)
	case "partition":
		rep, err := runPartitionBench(*cache, streamSpec{Nodes: *nodes, EdgeFactor: *factor, FeatDim: *dim, Parts: *parts, Limit: *limit})
		if err != nil {
			fail(err)
		}
		writeJSON(filepath.Join(*out, "partition.json"), rep)
	default:
		fail(fmt.Errorf("-what %q: want ranks or partition", *what))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scale:", err)
	os.Exit(1)
}

func writeJSON(path string, v any) {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(path, append(js, '\n'), 0o644); err != nil {
		fail(err)
	}
	fmt.Println("wrote", path)
}

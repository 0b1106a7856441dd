package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/fileformat"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// pubmedDir returns the folder of PubMed's in-neighbour CSC (indptr.npy,
// indices.npy) among the shared datasets (README: "Test data"):
// $GRAPHFERRY_DATASETS/pubmed when the variable is set, else pubmed in the
// first shared/datasets folder beside the checkout or beside a folder above
// it; or an error saying where it looked.
func pubmedDir() (string, error) {
	root := os.Getenv("GRAPHFERRY_DATASETS")
	if root == "" {
		repo, err := filepath.Abs("../..") // go test runs in engine/pipeline
		if err != nil {
			return "", err
		}
		for dir := filepath.Dir(repo); root == ""; dir = filepath.Dir(dir) {
			if st, err := os.Stat(filepath.Join(dir, "shared", "datasets")); err == nil && st.IsDir() {
				root = filepath.Join(dir, "shared", "datasets")
			} else if dir == filepath.Dir(dir) {
				return "", fmt.Errorf("no shared/datasets beside %s or above it, and GRAPHFERRY_DATASETS is not set", repo)
			}
		}
	}
	dir := filepath.Join(root, "pubmed")
	if _, err := os.Stat(filepath.Join(dir, "indptr.npy")); err != nil {
		return "", fmt.Errorf("%w (set GRAPHFERRY_DATASETS to the folder holding pubmed/)", err)
	}
	return dir, nil
}

// BenchmarkPubmedEpoch: one op is one epoch over all 19,717 PubMed nodes
// (shuffled), batches of 1024, fanouts [5, 10, 15] from the seeds,
// FrontierAll, one patch, through New/Start/Next (sampler and loader
// goroutines, no node data). Skipped when the dataset is absent.
func BenchmarkPubmedEpoch(b *testing.B) {
	dir, err := pubmedDir()
	if err != nil {
		b.Skipf("PubMed not available: %v", err)
	}
	read := func(name string) []int64 {
		a, err := fileformat.ReadNPY(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		return append([]int64(nil), mem.Int64s(a.Data)...)
	}
	indptr, indices := read("indptr.npy"), read("indices.npy")
	n := int64(len(indptr) - 1)
	g, err := graph.FromCSC(n, indptr, indices, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	p, err := partition.Build(g, partition.Options{NumPatches: 1})
	if err != nil {
		b.Fatal(err)
	}
	s, err := bind(p, comm.NewLocal(1), sample.Request{Fanouts: []int{5, 10, 15}}, 0)
	if err != nil {
		b.Fatal(err)
	}
	seeds := make([]int64, n)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	pl, err := New(s, p, feature.NewStore(n), seeds, Options{BatchSize: 1024, Shuffle: true}, mem.Heap{})
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
	benchEpochs(b, pl)
}

// BenchmarkDatasetEpoch: one op is one sampling-only epoch (batches of 1024,
// fanouts [15, 10, 5] from the seeds, FrontierAll, one patch) over a random
// 30,720 of the train nodes of the dataset in $GRAPHFERRY_BENCH_DATASET (our
// layout, e.g. bench/.cache/products-like-seed0 as `make bench-full` writes
// it), at 1, 2, 4, 8 and 16 sampling threads (those up to the host's cores),
// each with the default of one sampler worker per thread. Skipped when
// unset.
func BenchmarkDatasetEpoch(b *testing.B) {
	dir := os.Getenv("GRAPHFERRY_BENCH_DATASET")
	if dir == "" {
		b.Skip("GRAPHFERRY_BENCH_DATASET is not set")
	}
	d, err := dataset.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	g := d.Graph
	p, err := partition.Build(g, partition.Options{NumPatches: 1})
	if err != nil {
		b.Fatal(err)
	}
	var train []int64
	mask := d.NodeData[dataset.TrainMaskKey].Data
	for v, m := range mask {
		if m != 0 {
			train = append(train, int64(v))
		}
	}
	r := rand.New(rand.NewPCG(0, 0))
	r.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
	seeds := train[:min(len(train), 30720)]
	for _, threads := range []int{1, 2, 4, 8, 16} {
		if threads > 1 && threads > runtime.NumCPU() {
			break
		}
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			rt, err := sample.NewRuntime(p, comm.NewLocal(1), sample.RuntimeOptions{Threads: threads})
			if err != nil {
				b.Fatal(err)
			}
			s, err := rt.Bind(sample.Request{Fanouts: []int{15, 10, 5}, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			before := heapInUse()
			pl, err := New(s, p, feature.NewStore(g.NumNodes), seeds, Options{BatchSize: 1024, Shuffle: true}, mem.Heap{})
			if err != nil {
				b.Fatal(err)
			}
			defer pl.Close()
			benchEpochs(b, pl)
			// What the workers keep between epochs (node tables,
			// workspaces), measured: compare with WorkerMemory.
			b.ReportMetric(float64(heapInUse()-before)/float64(pl.Stats().Workers)/(1<<20), "MiB/worker")
			st := pl.Stats().Total
			b.ReportMetric(st.Sampler.Busy.Seconds()/st.Wall.Seconds()/float64(pl.Stats().Workers), "sampler-load")
		})
	}
}

// heapInUse returns the Go heap in use after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// benchEpochs runs b.N epochs of pl, reporting sampled edges per second.
func benchEpochs(b *testing.B, pl *Pipeline) {
	ctx := context.Background()
	var edges int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := pl.Start(uint64(i)); err != nil {
			b.Fatal(err)
		}
		for {
			bt, err := pl.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			for _, bl := range bt.Blocks {
				edges += int64(len(bl.Indices.Data) / 8)
			}
			bt.Release()
		}
	}
	b.ReportMetric(float64(edges)/b.Elapsed().Seconds()/1e6, "Medges/s")
}

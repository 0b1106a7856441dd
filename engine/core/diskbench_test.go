package core

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/rowcache"
	"github.com/graphferry/graphferry/engine/sample"
)

// BenchmarkDiskTierGatherAhead compares the disk tier's epochs with the
// loader gathering one batch at a time (GatherAhead -1) and one batch ahead
// (the default on the disk tier), on the dataset in
// $GRAPHFERRY_DISK_DATASET (skipped when unset: bench/disk_bench.py's
// disk-small, say): $GRAPHFERRY_DISK_SEEDS seeds (default 4096, as the
// bench) in batches of 512, fan-outs [10, 5], two threads, caches of 32, 8
// and 2 MiB of each policy. One op is one epoch of each, alternating (the
// disk's rate drifts; both see the same drift), after a warm-up epoch of
// each; it reports each one's disk requests per second and their ratio
// (ahead over serial: above 1 is faster), and each one's requests per
// epoch (a row that two batches gathered at once both miss is read twice).
func BenchmarkDiskTierGatherAhead(b *testing.B) {
	dir := os.Getenv("GRAPHFERRY_DISK_DATASET")
	if dir == "" {
		b.Skip("GRAPHFERRY_DISK_DATASET is not set")
	}
	nseeds := 4096
	if s := os.Getenv("GRAPHFERRY_DISK_SEEDS"); s != "" {
		var err error
		if nseeds, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	for _, size := range []int64{32 << 20, 8 << 20, 2 << 20} {
		for _, pol := range []rowcache.Policy{rowcache.S3FIFO, rowcache.SIEVE, rowcache.LRU} {
			b.Run(fmt.Sprintf("%dM/%s", size>>20, pol), func(b *testing.B) {
				g, err := OpenWith(dir, partition.Options{}, graph.COOOptions{}, OpenOptions{FeatureTier: TierDisk, CacheBytes: size, CachePolicy: pol})
				if err != nil {
					b.Fatal(err)
				}
				defer g.Close()
				r := rand.New(rand.NewPCG(7, 7))
				seeds := make([]int64, 0, nseeds)
				seen := map[int64]bool{}
				for len(seeds) < nseeds {
					if v := r.Int64N(g.NumNodes()); !seen[v] {
						seen[v] = true
						seeds = append(seeds, v)
					}
				}
				loaders := make([]*Loader, 2)
				for i, ahead := range []int{-1, 1} {
					l, err := g.OpenLoader(seeds, sample.Request{Fanouts: []int{10, 5}, Seed: 7}, pipeline.Options{
						BatchSize: 512, Shuffle: true, Seed: 7, FeatureNames: []string{"feat"}, Threads: 2, GatherAhead: ahead,
					}, nil)
					if err != nil {
						b.Fatal(err)
					}
					defer l.Close()
					loaders[i] = l
				}
				epoch := uint64(0)
				run := func(l *Loader) (time.Duration, int64) {
					epoch++
					if err := l.Start(epoch); err != nil {
						b.Fatal(err)
					}
					t0 := time.Now()
					for {
						bt, err := l.Next(context.Background())
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						bt.Release()
					}
					return time.Since(t0), l.Stats().Current.Gathered.DiskRequests
				}
				run(loaders[0])
				run(loaders[1])
				var wall [2]time.Duration
				var reqs [2]int64
				b.ResetTimer()
				for b.Loop() {
					for i, l := range loaders {
						w, n := run(l)
						wall[i] += w
						reqs[i] += n
					}
				}
				rate := func(i int) float64 { return float64(reqs[i]) / wall[i].Seconds() }
				b.ReportMetric(rate(0), "serial-req/s")
				b.ReportMetric(rate(1), "ahead-req/s")
				b.ReportMetric(rate(1)/rate(0), "ahead/serial")
				b.ReportMetric(float64(reqs[0])/float64(b.N), "serial-req/epoch")
				b.ReportMetric(float64(reqs[1])/float64(b.N), "ahead-req/epoch")
			})
		}
	}
}

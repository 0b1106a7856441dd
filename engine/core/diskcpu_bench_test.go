package core

import (
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/diskio"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/rowcache"
)

// BenchmarkDiskTierCPU measures the disk tier's CPU per disk request and
// per row, without sampling: one op gathers a batch of 3,800 feature rows
// (about a [10, 5] batch of 512 seeds) drawn from a skewed distribution
// over the nodes of $GRAPHFERRY_DISK_DATASET (skipped when unset), through
// the CPU cache (2 and 32 MiB, S3-FIFO) and direct reads, or reads
// through the page cache (buffered). It reports the process's CPU time
// (user and system, getrusage) per disk request and per gathered row, which
// the machine's other load does not inflate as it does wall time.
func BenchmarkDiskTierCPU(b *testing.B) {
	dir := os.Getenv("GRAPHFERRY_DISK_DATASET")
	if dir == "" {
		b.Skip("GRAPHFERRY_DISK_DATASET is not set")
	}
	for _, buffered := range []bool{false, true} {
		for _, size := range []int64{2 << 20, 32 << 20} {
			name := "direct"
			if buffered {
				name = "buffered"
			}
			b.Run(fmt.Sprintf("%s/%dM", name, size>>20), func(b *testing.B) {
				g, err := OpenWith(dir, partition.Options{}, graph.COOOptions{}, OpenOptions{
					FeatureTier: TierDisk, CacheBytes: size, CachePolicy: rowcache.S3FIFO,
					Reader: diskio.Options{Buffered: buffered},
				})
				if err != nil {
					b.Fatal(err)
				}
				defer g.Close()
				t, _ := g.store.Get(dataset.FeatKey)
				rb := t.RowBytes()
				const k = 3800
				n := g.NumNodes()
				r := rand.New(rand.NewPCG(3, 4))
				ids := make([]int64, k)
				dst := make([]byte, k*rb)
				batch := func() int64 {
					for i := range ids {
						ids[i] = int64(r.ExpFloat64()*float64(n)/200) % n
					}
					tc, err := g.store.GatherTiers(dataset.FeatKey, dst, ids, 2)
					if err != nil {
						b.Fatal(err)
					}
					return tc.DiskRequests
				}
				for range 20 {
					batch()
				}
				var reqs int64
				cpu0 := cpuTime()
				for b.Loop() {
					reqs += batch()
				}
				cpu := cpuTime() - cpu0
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(reqs), "cpu-ns/req")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*k), "cpu-ns/row")
				b.ReportMetric(float64(reqs)/float64(b.N), "req/op")
			})
		}
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

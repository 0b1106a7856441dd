package rowcache

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkBatch: one op is a batch as the disk tier makes it (engine/cache's
// Disk), on rows of 512 bytes (disk-small's): Lookup of 3,800 ids drawn from
// a skewed distribution over 8 million rows, then Insert of its misses; per
// policy, for caches of 2 and 32 MiB (bench/disk_bench.py's smallest and
// largest), warmed by 50 batches. It reports ns per looked-up row and the
// hit rate.
func BenchmarkBatch(b *testing.B) {
	const rb, k, n = 512, 3800, 8_000_000
	for _, size := range []int64{2 << 20, 32 << 20} {
		for _, p := range []Policy{S3FIFO, SIEVE, LRU} {
			b.Run(fmt.Sprintf("%dM/%s", size>>20, p), func(b *testing.B) {
				c, err := New(size, rb, p)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				r := rand.New(rand.NewPCG(1, 2))
				ids := make([]int64, k)
				dst := make([]byte, k*rb)
				var miss []int
				var keys []int64
				rows := make([]byte, k*rb)
				batch := func() {
					for i := range ids {
						ids[i] = int64(r.ExpFloat64()*float64(n)/200) % n
					}
					miss = c.Lookup(ids, dst, miss[:0])
					keys = keys[:0]
					for _, i := range miss {
						keys = append(keys, ids[i])
					}
					c.Insert(keys, rows[:len(keys)*rb])
				}
				for range 50 {
					batch()
				}
				s0 := c.Stats()
				for b.Loop() {
					batch()
				}
				s := c.Stats()
				hits, all := s.Hits-s0.Hits, s.Hits+s.Misses-s0.Hits-s0.Misses
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(all), "ns/row")
				b.ReportMetric(float64(hits)/float64(all), "hit-rate")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

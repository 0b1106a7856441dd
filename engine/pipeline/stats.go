package pipeline

import (
	"sync/atomic"
	"time"

	"github.com/graphferry/graphferry/engine/feature"
)

// StageStats is the time a stage spent, summed over its goroutines (the
// sampler stage's workers run at once, so its times can exceed the wall
// time), and the batches it passed on.
type StageStats struct {
	// Busy is time spent working: sampling and copying the topology out
	// (sampler), gathering node data (loader), or, for the consumer, the
	// time between receiving a batch and asking for the next one.
	Busy time.Duration
	// Blocked is time spent waiting for the next stage to take a finished
	// batch (a full queue): the stage is ahead of the one after it.
	Blocked time.Duration
	// Waiting is time spent waiting for a batch from the stage before (an
	// empty queue): the stage is starved. The sampler stage never waits;
	// for the consumer it is the time spent inside Next.
	Waiting time.Duration
	// Batches is the number of batches the stage finished (counted when
	// it hands them on, so never fewer than the next stage's; a batch
	// finished but dropped by Start or Close counts too).
	Batches int64
}

// Counters are a Pipeline's statistics over some span (one epoch, or all).
type Counters struct {
	Sampler, Loader, Consumer StageStats
	// Gathered is where the node data rows came from; with a cache,
	// HotRows/(HotRows+ColdRows) is its hit rate.
	Gathered feature.TierCounts
	// Wall is the wall time from Start to the end of the span (the last
	// batch delivered, or now when the epoch is still running).
	Wall time.Duration
}

// HitRate returns the fraction of gathered rows that came from a hot tier
// (0 when no row was gathered).
func (c Counters) HitRate() float64 {
	n := c.Gathered.HotRows + c.Gathered.ColdRows
	if n == 0 {
		return 0
	}
	return float64(c.Gathered.HotRows) / float64(n)
}

// Stats are a Pipeline's statistics: the epoch in progress (or the last
// one), and all epochs since New.
type Stats struct {
	Workers int    // sampler workers
	Epoch   uint64 // the epoch Current describes
	Epochs  int64  // epochs started since New
	Current Counters
	Total   Counters
}

// stageCounters are a StageStats in atomics: the stages add to them from
// their goroutines while Stats reads them.
type stageCounters struct {
	busy, blocked, waiting, batches atomic.Int64
}

func (s *stageCounters) load() StageStats {
	return StageStats{
		Busy:    time.Duration(s.busy.Load()),
		Blocked: time.Duration(s.blocked.Load()),
		Waiting: time.Duration(s.waiting.Load()),
		Batches: s.batches.Load(),
	}
}

// counters are the atomics behind one Counters.
type counters struct {
	sampler, loader, consumer stageCounters
	bytes                     [feature.NumTiers]atomic.Int64
	hot, cold                 atomic.Int64
	cacheRows, diskRows       atomic.Int64
	diskBytes, diskRead       atomic.Int64
	diskRequests              atomic.Int64
	wall                      atomic.Int64 // nanoseconds of finished epochs
}

func (c *counters) load() Counters {
	out := Counters{
		Sampler:  c.sampler.load(),
		Loader:   c.loader.load(),
		Consumer: c.consumer.load(),
		Wall:     time.Duration(c.wall.Load()),
	}
	for i := range out.Gathered.Bytes {
		out.Gathered.Bytes[i] = c.bytes[i].Load()
	}
	out.Gathered.HotRows, out.Gathered.ColdRows = c.hot.Load(), c.cold.Load()
	out.Gathered.CacheRows, out.Gathered.DiskRows = c.cacheRows.Load(), c.diskRows.Load()
	out.Gathered.DiskBytes, out.Gathered.DiskRead = c.diskBytes.Load(), c.diskRead.Load()
	out.Gathered.DiskRequests = c.diskRequests.Load()
	return out
}

// stats holds the epoch's counters and the cumulative ones; every event is
// added to both.
type stats struct {
	epoch, total counters
}

// stage selects one stage's counters in both spans.
type stage func(*counters) *stageCounters

func samplerStage(c *counters) *stageCounters  { return &c.sampler }
func loaderStage(c *counters) *stageCounters   { return &c.loader }
func consumerStage(c *counters) *stageCounters { return &c.consumer }

// busy, blocked and waiting add the time since t0 to st and return now.
func (s *stats) busy(st stage, t0 time.Time) time.Time {
	now := time.Now()
	d := int64(now.Sub(t0))
	st(&s.epoch).busy.Add(d)
	st(&s.total).busy.Add(d)
	return now
}

func (s *stats) blocked(st stage, t0 time.Time) time.Time {
	now := time.Now()
	d := int64(now.Sub(t0))
	st(&s.epoch).blocked.Add(d)
	st(&s.total).blocked.Add(d)
	return now
}

func (s *stats) waiting(st stage, t0 time.Time) time.Time {
	now := time.Now()
	d := int64(now.Sub(t0))
	st(&s.epoch).waiting.Add(d)
	st(&s.total).waiting.Add(d)
	return now
}

func (s *stats) batch(st stage) {
	st(&s.epoch).batches.Add(1)
	st(&s.total).batches.Add(1)
}

func (s *stats) gathered(tc feature.TierCounts) {
	for _, c := range []*counters{&s.epoch, &s.total} {
		for i, b := range tc.Bytes {
			c.bytes[i].Add(b)
		}
		c.hot.Add(tc.HotRows)
		c.cold.Add(tc.ColdRows)
		c.cacheRows.Add(tc.CacheRows)
		c.diskRows.Add(tc.DiskRows)
		c.diskBytes.Add(tc.DiskBytes)
		c.diskRead.Add(tc.DiskRead)
		c.diskRequests.Add(tc.DiskRequests)
	}
}

// reset zeroes the epoch's counters (at Start, with no stage running).
func (c *counters) reset() {
	for _, s := range []*stageCounters{&c.sampler, &c.loader, &c.consumer} {
		s.busy.Store(0)
		s.blocked.Store(0)
		s.waiting.Store(0)
		s.batches.Store(0)
	}
	for i := range c.bytes {
		c.bytes[i].Store(0)
	}
	for _, a := range []*atomic.Int64{&c.hot, &c.cold, &c.cacheRows, &c.diskRows, &c.diskBytes, &c.diskRead, &c.diskRequests, &c.wall} {
		a.Store(0)
	}
}

package cuda

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/graphferry/graphferry/engine/cache"
	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/pipeline"
	"github.com/graphferry/graphferry/engine/sample"
)

// EpochConfig describes one sampling epoch for EpochBench.
type EpochConfig struct {
	Dataset    string // a graphferry dataset directory
	Fanouts    []int
	BatchSize  int
	MaxBatches int    // 0: all train seeds
	Seed       uint64 // sampling and shuffling seed
	Compare    int    // batches also sampled by the CPU engine and compared
	CPUThreads int    // threads of that CPU engine
	// Workers of the device pipelines (streams); 0: the sampler's default.
	Workers int
	// Placement of the topology: "auto" (or ""), "device" or "pinned".
	Placement string
	// GatherRows > 0 also measures the gather kernel's bandwidth per tier
	// on the dataset's "feat" (GatherRows random rows a gather), beside
	// device-to-device and pinned host-to-device copies.
	GatherRows int
}

// EpochResult is EpochBench's measurement.
type EpochResult struct {
	Device    string `json:"device"`
	Placement string `json:"placement"`
	// Topology bytes, and its arrays copied into pinned allocations
	// (PlacePinned: those on the Go heap or refused by the driver; the
	// others, off the Go heap, were registered in place).
	TopologyBytes  int64 `json:"topology_bytes"`
	TopologyCopied int   `json:"topology_copied_arrays"`
	Workers        int   `json:"workers"`
	Batches        int   `json:"batches"`
	SampledEdges   int64 `json:"sampled_edges"`
	// The device stage's epoch: a pipeline over the device sampler, its
	// batches in device memory (each released as it arrives), from Start
	// to the last batch.
	Seconds        float64 `json:"seconds"`
	EdgesPerSecond float64 `json:"edges_per_second"`
	SyncsPerBatch  float64 `json:"host_syncs_per_batch"`
	// The same epoch with the batches copied to the host.
	HostSeconds float64 `json:"host_output_seconds"`
	// The first Compare batches of both, against the CPU engine's pipeline.
	ComparedBatches int     `json:"compared_batches"`
	Identical       bool    `json:"identical"`
	CPUSeconds      float64 `json:"cpu_seconds_compared_batches"`
	PoolBytes       int64   `json:"pool_bytes"`
	UploadSeconds   float64 `json:"graph_upload_seconds"`
	// Gather bandwidths, when measured (GatherRows > 0).
	Gather *GatherResult `json:"gather,omitempty"`
}

// GatherResult is the gather kernel's bandwidth per tier beside the
// device's copy bandwidths, measured in the same run: bytes moved per
// second (each byte counted once, read and written).
type GatherResult struct {
	RowBytes int64 `json:"row_bytes"`
	Rows     int   `json:"rows_per_gather"`
	// Width is the word the kernel moved (16: vectorised).
	Width int64 `json:"width"`
	// The hot tier (device memory), the cold tier (pinned host memory read
	// in place), and rows from both (half of the nodes hot).
	HotBytesPerSecond   float64 `json:"hot_gather_bytes_per_second"`
	ColdBytesPerSecond  float64 `json:"zero_copy_gather_bytes_per_second"`
	MixedBytesPerSecond float64 `json:"mixed_gather_bytes_per_second"`
	D2DBytesPerSecond   float64 `json:"d2d_copy_bytes_per_second"`
	H2DBytesPerSecond   float64 `json:"h2d_pinned_copy_bytes_per_second"`
	// The goals: hot >= 80% of d2d, zero-copy >= 70% of h2d.
	HotOfD2D  float64 `json:"hot_of_d2d"`
	ColdOfH2D float64 `json:"zero_copy_of_h2d"`
	// ColdCopied: the features were copied into a pinned allocation (they
	// are on the Go heap, or the driver refused to register them in place).
	ColdCopied bool `json:"cold_copied"`
}

// parsePlacement maps a placement's name to it.
func parsePlacement(s string) (Placement, error) {
	for _, p := range []Placement{PlaceAuto, PlaceDevice, PlacePinned} {
		if s == p.String() {
			return p, nil
		}
	}
	if s == "" {
		return PlaceAuto, nil
	}
	return 0, fmt.Errorf("cuda: placement %q (auto, device, pinned)", s)
}

// EpochBench samples an epoch of the dataset's train seeds (shuffled, in
// batches; node-wise uniform without replacement, FrontierAll, DGL blocks)
// through a pipeline over the device sampler: once with its batches in
// device memory (the device stage's epoch time), once copied to the host.
// The first Compare batches of both are compared with the CPU engine's
// pipeline's. With GatherRows it also measures the gather (MeasureGather).
func EpochBench(dev Device, cfg EpochConfig) (EpochResult, error) {
	var res EpochResult
	if cfg.BatchSize <= 0 {
		return res, fmt.Errorf("cuda: batch size %d", cfg.BatchSize)
	}
	where, err := parsePlacement(cfg.Placement)
	if err != nil {
		return res, err
	}
	ds, err := dataset.Open(cfg.Dataset)
	if err != nil {
		return res, err
	}
	defer ds.Close()
	mask, ok := ds.NodeData[dataset.TrainMaskKey]
	if !ok {
		return res, errors.New("cuda: the dataset has no train mask")
	}
	var seeds []int64
	for v, m := range mask.Data {
		if m != 0 {
			seeds = append(seeds, int64(v))
		}
	}
	if cfg.MaxBatches > 0 {
		seeds = seeds[:min(len(seeds), cfg.MaxBatches*cfg.BatchSize)]
	}
	p, err := partition.Build(ds.Graph, partition.Options{Method: partition.Range, NumPatches: 1})
	if err != nil {
		return res, err
	}
	req := sample.Request{Fanouts: cfg.Fanouts, Frontier: sample.FrontierAll, Seed: cfg.Seed}
	opt := pipeline.Options{BatchSize: cfg.BatchSize, Shuffle: true, Seed: cfg.Seed, Workers: cfg.Workers}
	if n, ok := dev.(interface{ Name() string }); ok {
		res.Device = n.Name()
	}
	var samplers []*Sampler
	defer func() {
		for _, s := range samplers {
			s.Close()
		}
	}()
	var got [][]*pipeline.Batch // the first Compare batches of each output
	defer func() {
		for _, l := range got {
			for _, b := range l {
				b.Release()
			}
		}
	}()
	for _, out := range []Output{OutputDevice, OutputHost} {
		t0 := time.Now()
		s, err := NewSampler(dev, p, req, SamplerOptions{Output: out, Placement: where})
		if err != nil {
			return res, err
		}
		samplers = append(samplers, s)
		if out == OutputDevice {
			res.UploadSeconds = time.Since(t0).Seconds()
		}
		pl, err := pipeline.New(s, p, nil, seeds, opt, nil)
		if err != nil {
			return res, err
		}
		// Warm the pools and the JIT-compiled module on a first epoch of a
		// few batches, then time epoch 1.
		if err := pl.Start(0); err != nil {
			pl.Close()
			return res, err
		}
		for range min(2*max(1, len(seeds)/cfg.BatchSize), 8) {
			b, err := pl.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pl.Close()
				return res, err
			}
			b.Release()
		}
		syncs0 := totalSyncs(s)
		t0 = time.Now()
		keep, edges, batches, err := timeEpoch(pl, cfg.Compare)
		secs := time.Since(t0).Seconds()
		stats := pl.Stats()
		pl.Close()
		got = append(got, keep)
		if err != nil {
			return res, err
		}
		if out == OutputDevice {
			res.Seconds, res.SampledEdges, res.Batches = secs, edges, batches
			res.EdgesPerSecond = float64(edges) / secs
			res.SyncsPerBatch = float64(totalSyncs(s)-syncs0) / float64(max(1, batches))
			res.Workers = stats.Workers
			w, bytes, copied := s.Placement()
			res.Placement, res.TopologyBytes, res.TopologyCopied = w.String(), bytes, copied
			res.PoolBytes = totalPoolBytes(s)
		} else {
			res.HostSeconds = secs
			if edges != res.SampledEdges || batches != res.Batches {
				return res, fmt.Errorf("cuda: the epoch copied to the host has %d batches, %d edges; in device memory %d, %d", batches, edges, res.Batches, res.SampledEdges)
			}
		}
	}
	if n := len(got[0]); n > 0 {
		rt, err := sample.NewRuntime(p, comm.NewLocal(1), sample.RuntimeOptions{Threads: cfg.CPUThreads})
		if err != nil {
			return res, err
		}
		cpu, err := rt.Bind(req)
		if err != nil {
			return res, err
		}
		t0 := time.Now()
		want, err := pipeline.New(cpu, p, nil, seeds, opt, nil)
		if err != nil {
			return res, err
		}
		defer want.Close()
		st, err := dev.NewStream()
		if err != nil {
			return res, err
		}
		defer st.Close()
		if err := want.Start(1); err != nil {
			return res, err
		}
		res.Identical = true
		for i := range n {
			w, err := want.Next(context.Background())
			if err != nil {
				return res, err
			}
			for o, l := range got {
				if err := EqualBatches(st, w, l[i]); err != nil {
					res.Identical = false
					w.Release()
					return res, fmt.Errorf("cuda: batch %d (%s output) differs from the CPU engine's: %w", i, []string{"device", "host"}[o], err)
				}
			}
			w.Release()
		}
		res.CPUSeconds = time.Since(t0).Seconds()
		res.ComparedBatches = n
	}
	if cfg.GatherRows > 0 {
		feat, ok := ds.NodeData[dataset.FeatKey]
		if !ok {
			return res, errors.New("cuda: the dataset has no features to gather")
		}
		g, err := MeasureGather(dev, feat, p.Graph.Indptr, cfg.GatherRows, cfg.Seed)
		if err != nil {
			return res, err
		}
		res.Gather = &g
	}
	return res, nil
}

// timeEpoch takes an epoch's batches, releasing all but the first keep,
// which it returns; and counts their edges.
func timeEpoch(pl *pipeline.Pipeline, keep int) (kept []*pipeline.Batch, edges int64, batches int, err error) {
	if err := pl.Start(1); err != nil {
		return nil, 0, 0, err
	}
	for {
		b, err := pl.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return kept, edges, batches, nil
		}
		if err != nil {
			return kept, edges, batches, err
		}
		batches++
		for _, blk := range b.Blocks {
			edges += blk.Indices.Shape[0]
		}
		if len(kept) < keep {
			kept = append(kept, b)
		} else {
			b.Release()
		}
	}
}

// totalSyncs and totalPoolBytes sum over s and its forks.
func totalSyncs(s *Sampler) (n int64) {
	for _, f := range s.forks() {
		n += f.Syncs()
	}
	return n
}

func totalPoolBytes(s *Sampler) (n int64) {
	for _, f := range s.forks() {
		n += f.PoolBytes()
	}
	return n
}

// forks returns s and every fork of its topology.
func (s *Sampler) forks() []*Sampler {
	s.sh.mu.Lock()
	defer s.sh.mu.Unlock()
	return append([]*Sampler(nil), s.sh.forks...)
}

// MeasureGather measures the gather kernel's bandwidth into device memory
// per tier on node data feat (a tiered Gatherer, the degree policy over
// indptr's in-degrees, half of the nodes hot): rows random rows of the hot
// tier, of the cold tier (pinned host memory read in place) and of both;
// and, in the same run, device-to-device and pinned host-to-device copies
// of as many bytes. Each is the best of a few repetitions, timed on the
// host around the stream's synchronisation.
func MeasureGather(dev Device, feat mem.Tensor, indptr []int64, rows int, seed uint64) (GatherResult, error) {
	var res GatherResult
	n := feat.Shape[0]
	store := feature.NewStore(n)
	if err := store.Set("feat", feat, nil); err != nil {
		return res, err
	}
	deg := make([]int64, n)
	for v := range deg {
		deg[v] = indptr[v+1] - indptr[v]
	}
	g, err := NewGatherer(dev, store, GatherOptions{Names: []string{"feat"}, Policy: "presample", Scores: deg, Size: cache.Size{Fraction: 0.5}})
	if err != nil {
		return res, err
	}
	defer g.Close()
	tr := g.tiers["feat"]
	res.RowBytes, res.Rows = tr.rowBytes, rows
	st, err := dev.NewStream()
	if err != nil {
		return res, err
	}
	defer st.Close()
	pool := NewPool(dev, st)
	defer pool.Close()
	bytes := int64(rows) * tr.rowBytes
	out, err := pool.Get(bytes)
	if err != nil {
		return res, err
	}
	ids, err := pool.Get(int64(rows+3) * 8)
	if err != nil {
		return res, err
	}
	res.Width = gatherWidth(tr.rowBytes, tr.hot, tr.cold, out)
	r := rand.New(rand.NewPCG(seed, 3))
	var hot, cold []int64
	for v := range n {
		if g.slotHost[v] >= 0 {
			hot = append(hot, v)
		} else {
			cold = append(cold, v)
		}
	}
	draw := func(from []int64) []int64 {
		if len(from) == 0 {
			from = []int64{0}
		}
		l := make([]int64, rows)
		for i := range l {
			l[i] = from[r.IntN(len(from))]
		}
		return l
	}
	const reps = 5
	best := func(run func() error) (float64, error) {
		if err := run(); err != nil { // warm-up
			return 0, err
		}
		if err := st.Sync(); err != nil {
			return 0, err
		}
		t := time.Duration(1<<63 - 1)
		for range reps {
			t0 := time.Now()
			if err := run(); err != nil {
				return 0, err
			}
			if err := st.Sync(); err != nil {
				return 0, err
			}
			t = min(t, time.Since(t0))
		}
		return float64(bytes) / t.Seconds(), nil
	}
	every := make([]int64, n)
	for v := range every {
		every[v] = int64(v)
	}
	for _, c := range []struct {
		ids []int64
		out *float64
	}{{draw(hot), &res.HotBytesPerSecond}, {draw(cold), &res.ColdBytesPerSecond}, {draw(every), &res.MixedBytesPerSecond}} {
		if err := st.CopyIn(ids, int64Bytes(append([]int64{int64(rows), 0, 0}, c.ids...))); err != nil {
			return res, err
		}
		if *c.out, err = best(func() error { return g.gatherOn(st, tr, ids+24, ids, int64(rows), out, ids+8) }); err != nil {
			return res, err
		}
	}
	src, err := pool.Get(bytes)
	if err != nil {
		return res, err
	}
	if res.D2DBytesPerSecond, err = best(func() error { return st.CopyDev(out, src, bytes) }); err != nil {
		return res, err
	}
	h, err := dev.AllocHost(bytes)
	if err != nil {
		return res, err
	}
	defer dev.FreeHost(h)
	if res.H2DBytesPerSecond, err = best(func() error { return st.CopyIn(out, h.Bytes) }); err != nil {
		return res, err
	}
	res.HotOfD2D = res.HotBytesPerSecond / res.D2DBytesPerSecond
	res.ColdOfH2D = res.ColdBytesPerSecond / res.H2DBytesPerSecond
	res.ColdCopied = tr.coldCopied
	return res, nil
}

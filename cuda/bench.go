package cuda

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/dataset"
	"github.com/graphferry/graphferry/engine/partition"
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
}

// EpochResult is EpochBench's measurement.
type EpochResult struct {
	Device         string  `json:"device"`
	Batches        int     `json:"batches"`
	Seconds        float64 `json:"seconds"` // results copied to the host
	SampledEdges   int64   `json:"sampled_edges"`
	EdgesPerSecond float64 `json:"edges_per_second"`
	// The same epoch with the results left on the device (SampleSizes).
	DeviceSeconds        float64 `json:"device_only_seconds"`
	DeviceEdgesPerSecond float64 `json:"device_only_edges_per_second"`
	ComparedBatches      int     `json:"compared_batches"`
	Identical            bool    `json:"identical"`
	CPUSeconds           float64 `json:"cpu_seconds_compared_batches"`
	PoolBytes            int64   `json:"pool_bytes"`
	UploadSeconds        float64 `json:"graph_upload_seconds"`
}

// EpochBench samples an epoch of the dataset's train seeds (shuffled, in
// batches) on dev, node-wise uniform without replacement, FrontierAll (DGL
// blocks), twice: results left on the device (SampleSizes), then copied back
// to the host (SampleBatches). The first Compare batches are also sampled
// by the CPU engine and must be identical.
func EpochBench(dev Device, cfg EpochConfig) (EpochResult, error) {
	var res EpochResult
	if cfg.BatchSize <= 0 {
		return res, fmt.Errorf("cuda: batch size %d", cfg.BatchSize)
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
	r := rand.New(rand.NewPCG(cfg.Seed, 1))
	r.Shuffle(len(seeds), func(i, j int) { seeds[i], seeds[j] = seeds[j], seeds[i] })
	var batches [][]int64
	var keys []uint64
	for i := 0; i < len(seeds); i += cfg.BatchSize {
		if cfg.MaxBatches > 0 && len(batches) == cfg.MaxBatches {
			break
		}
		batches = append(batches, seeds[i:min(i+cfg.BatchSize, len(seeds))])
		keys = append(keys, uint64(len(batches)-1))
	}
	p, err := partition.Build(ds.Graph, partition.Options{Method: partition.Range, NumPatches: 1})
	if err != nil {
		return res, err
	}
	req := sample.Request{Fanouts: cfg.Fanouts, Frontier: sample.FrontierAll, Seed: cfg.Seed}
	t0 := time.Now()
	s, err := NewSampler(dev, p, req)
	if err != nil {
		return res, err
	}
	defer s.Close()
	res.UploadSeconds = time.Since(t0).Seconds()
	if n, ok := dev.(interface{ Name() string }); ok {
		res.Device = n.Name()
	}
	// Warm the pool and the JIT-compiled module on one batch.
	if _, err := s.SampleBatches(cfg.Seed, batches[:1], keys[:1]); err != nil {
		return res, err
	}
	t0 = time.Now()
	var deviceEdges int64
	for b := range batches {
		e, err := s.SampleSizes(cfg.Seed, batches[b:b+1], keys[b:b+1])
		if err != nil {
			return res, err
		}
		deviceEdges += e[0]
	}
	res.DeviceSeconds = time.Since(t0).Seconds()
	res.DeviceEdgesPerSecond = float64(deviceEdges) / res.DeviceSeconds
	t0 = time.Now()
	got := make([]*sample.Result, 0, min(cfg.Compare, len(batches)))
	for b := range batches {
		out, err := s.SampleBatches(cfg.Seed, batches[b:b+1], keys[b:b+1])
		if err != nil {
			return res, err
		}
		for _, blk := range out[0].Blocks {
			res.SampledEdges += int64(len(blk.Indices))
		}
		if b < cfg.Compare {
			got = append(got, out[0])
		}
	}
	res.Seconds = time.Since(t0).Seconds()
	res.Batches = len(batches)
	res.EdgesPerSecond = float64(res.SampledEdges) / res.Seconds
	if deviceEdges != res.SampledEdges {
		return res, fmt.Errorf("cuda: the epoch sampled %d edges left on the device but %d copied back", deviceEdges, res.SampledEdges)
	}
	res.PoolBytes = s.PoolBytes()
	if len(got) > 0 {
		cpu, err := sample.NewRuntime(p, comm.NewLocal(1), sample.RuntimeOptions{Threads: cfg.CPUThreads})
		if err != nil {
			return res, err
		}
		t0 = time.Now()
		want, err := cpu.Sample(context.Background(), req, batches[:len(got)], keys[:len(got)])
		if err != nil {
			return res, err
		}
		res.CPUSeconds = time.Since(t0).Seconds()
		res.ComparedBatches = len(got)
		res.Identical = true
		for b := range got {
			if err := EqualResults(want[b], got[b]); err != nil {
				res.Identical = false
				return res, fmt.Errorf("cuda: batch %d differs from the CPU engine's: %w", b, err)
			}
		}
	}
	return res, nil
}

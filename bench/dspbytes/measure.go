package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/graphferry/graphferry/bench/pull"
	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// hopBytes is one hop's traffic in one epoch (mean over the timed epochs),
// bytes sent to other ranks: Request is CSP's shuffle (tasks) or pull's
// request (node ids), Answer CSP's reshuffle (sampled neighbours) or
// pull's answer (whole lists).
type hopBytes struct {
	Hop          int   `json:"hop"`
	Request      int64 `json:"request_bytes"`
	Answer       int64 `json:"answer_bytes"`
	SelfRequest  int64 `json:"self_request_bytes"`
	SelfAnswer   int64 `json:"self_answer_bytes"`
	Messages     int64 `json:"messages"`
	TotalRemote  int64 `json:"total_bytes"`
	epochsSummed int
}

// row is one (ranks, method, layout, sampler) measurement.
type row struct {
	Ranks   int    `json:"ranks"`
	Method  string `json:"method"`
	Layout  string `json:"layout"`
	Sampler string `json:"sampler"`
	// Batches and Waves per epoch (a wave: every rank samples one batch,
	// or takes part with none).
	Batches int `json:"batches"`
	Waves   int `json:"waves"`
	// EpochSeconds: the sampling time of each timed epoch (all ranks).
	EpochSeconds []float64 `json:"epoch_seconds"`
	Median       float64   `json:"epoch_seconds_median"`
	// Hops and SamplingBytes: what the sampling exchanges moved per epoch.
	Hops          []hopBytes `json:"hops,omitempty"`
	SamplingBytes int64      `json:"sampling_bytes"`
	// The feature exchange round: rows of the batches' nodes held by other
	// ranks, their bytes, and the bytes of the ids asking for them.
	FeatureRows    int64 `json:"feature_rows"`
	FeatureBytes   int64 `json:"feature_bytes"`
	FeatureIDBytes int64 `json:"feature_id_bytes"`
	// What each rank stores (topology as partition folders store it).
	TopologyNodes []int64 `json:"topology_nodes_per_rank"`
	TopologyEdges []int64 `json:"topology_edges_per_rank"`
	TopologyBytes []int64 `json:"topology_bytes_per_rank"`
	FeatureStore  []int64 `json:"feature_bytes_per_rank"`
	// SampledNodes per epoch (sum over batches; the first timed epoch).
	SampledNodes int64  `json:"sampled_nodes"`
	Note         string `json:"note,omitempty"`
}

// epochPlan is the batches of one configuration: rank r's seeds are the
// chosen seeds it owns, in the chosen order, cut into batches; wave w runs
// batch w of every rank (an empty batch for a rank that has run out).
type epochPlan struct {
	waves   [][][]int64 // [wave][rank] internal ids
	orig    [][][]int64 // the same in original ids
	batches int
}

func planEpoch(pt *partition.Partitioned, seeds []int64, p, batchSize int) (*epochPlan, error) {
	internal := make([]int64, len(seeds))
	if err := pt.ToNew(seeds, internal); err != nil {
		return nil, err
	}
	perRank := make([][]int64, p)
	for _, v := range internal {
		r := pt.Owner(v)
		perRank[r] = append(perRank[r], v)
	}
	plan := &epochPlan{}
	for {
		wave := make([][]int64, p)
		any := false
		for r := range p {
			n := min(batchSize, len(perRank[r]))
			wave[r], perRank[r] = perRank[r][:n:n], perRank[r][n:]
			if n > 0 {
				any = true
				plan.batches++
			}
		}
		if !any {
			break
		}
		o := make([][]int64, p)
		for r, b := range wave {
			o[r] = make([]int64, len(b))
			if err := pt.ToOld(b, o[r]); err != nil {
				return nil, err
			}
		}
		plan.waves = append(plan.waves, wave)
		plan.orig = append(plan.orig, o)
	}
	return plan, nil
}

// keysOf are the batch keys of one wave: epoch<<32 | global batch index.
func keysOf(epoch, wave, p int) []uint64 {
	k := make([]uint64, p)
	for r := range k {
		k[r] = uint64(epoch)<<32 | uint64(wave*p+r)
	}
	return k
}

// hopPhase names CSP's and pull's collectives: two per hop, request then
// answer, every wave.
func hopPhase(hops int) comm.PhaseFunc {
	return func(_ int, call int64) string {
		k := call % int64(2*hops)
		return fmt.Sprintf("%d/%d", k/2, k%2)
	}
}

func hopsOf(tr map[string]comm.Traffic, hops int, into []hopBytes) {
	for h := range hops {
		req, ans := tr[fmt.Sprintf("%d/0", h)], tr[fmt.Sprintf("%d/1", h)]
		hb := &into[h]
		hb.Hop = h
		hb.Request += req.Bytes
		hb.Answer += ans.Bytes
		hb.SelfRequest += req.SelfBytes
		hb.SelfAnswer += ans.SelfBytes
		hb.Messages += req.Messages + ans.Messages
		hb.epochsSummed++
	}
}

func meanHops(hs []hopBytes) (int64, []hopBytes) {
	var total int64
	for i := range hs {
		h := &hs[i]
		n := int64(max(h.epochsSummed, 1))
		h.Request, h.Answer, h.SelfRequest, h.SelfAnswer, h.Messages = h.Request/n, h.Answer/n, h.SelfRequest/n, h.SelfAnswer/n, h.Messages/n
		h.TotalRemote = h.Request + h.Answer
		total += h.TotalRemote
	}
	return total, hs
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// waveSampler samples one wave: batches[r] on rank r, keys[r]. It returns
// the sampled nodes of each batch in original ids' owner terms: for every
// rank, how many of its batch's nodes other ranks own, and the batch's
// node count.
type waveSampler func(ctx context.Context, wave int, batches [][]int64, keys []uint64) (remote, nodes []int64, err error)

// epochs runs warmup + timed epochs of s and returns the timed epochs'
// seconds and the first timed epoch's remote rows and nodes. before runs
// before each timed epoch, after after it (to reset and read counters).
func epochs(ctx context.Context, cfg config, plan *epochPlan, s waveSampler, useOrig bool, before, after func()) ([]float64, int64, int64, error) {
	var secs []float64
	var rows, nodes int64
	p := len(plan.waves[0])
	for e := range cfg.Warmup + cfg.Epochs {
		timed := e >= cfg.Warmup
		if timed && before != nil {
			before()
		}
		var took time.Duration
		for w := range plan.waves {
			b := plan.waves[w]
			if useOrig {
				b = plan.orig[w]
			}
			t0 := time.Now()
			remote, n, err := s(ctx, w, b, keysOf(e, w, p))
			took += time.Since(t0)
			if err != nil {
				return nil, 0, 0, err
			}
			if e == cfg.Warmup {
				for r := range remote {
					rows += remote[r]
					nodes += n[r]
				}
			}
		}
		if timed {
			secs = append(secs, took.Seconds())
			if after != nil {
				after()
			}
		}
	}
	return secs, rows, nodes, nil
}

// measure runs the layouts of one partition.
func measure(ctx context.Context, cfg config, g *graph.CSC, whole, pt *partition.Partitioned, seeds []int64, p int, method string, wholeTopo int64) ([]row, error) {
	plan, err := planEpoch(pt, seeds, p, cfg.BatchSize)
	if err != nil {
		return nil, err
	}
	hops := len(cfg.Fanouts)
	base := row{Ranks: p, Method: method, Batches: plan.batches, Waves: len(plan.waves)}
	owner := pt.Owner
	// remoteOf counts the nodes (internal ids) of res not owned by rank.
	remoteOf := func(res []*sample.Result, internal bool) ([]int64, []int64) {
		remote, nodes := make([]int64, len(res)), make([]int64, len(res))
		for r, x := range res {
			if x == nil {
				continue
			}
			nodes[r] = int64(len(x.Nodes))
			for _, v := range x.Nodes {
				if !internal && pt.OldToNew != nil {
					v = pt.OldToNew[v]
				}
				if owner(v) != r {
					remote[r]++
				}
			}
		}
		return remote, nodes
	}
	var rows []row

	// DSP, CSP's task push.
	{
		cc, err := comm.NewCounting(comm.NewLocal(p), hopPhase(hops))
		if err != nil {
			return nil, err
		}
		rt, err := sample.NewRuntime(pt, cc, sample.RuntimeOptions{Threads: cfg.Threads})
		if err != nil {
			return nil, err
		}
		req := sample.Request{Fanouts: cfg.Fanouts, Frontier: sample.FrontierAll, Seed: cfg.Seed}
		hb := make([]hopBytes, hops)
		s := func(ctx context.Context, _ int, b [][]int64, keys []uint64) ([]int64, []int64, error) {
			res, err := rt.Sample(ctx, req, b, keys)
			if err != nil {
				return nil, nil, err
			}
			remote, n := remoteOf(res, true)
			rt.Recycle(res...)
			return remote, n, nil
		}
		secs, frows, nodes, err := epochs(ctx, cfg, plan, s, false, cc.Reset, func() { hopsOf(cc.Traffic(), hops, hb) })
		if err != nil {
			return nil, fmt.Errorf("%d ranks, %s, push: %w", p, method, err)
		}
		r := base
		r.Layout, r.Sampler = "dsp", "push (CSP)"
		r.EpochSeconds, r.Median = secs, median(secs)
		r.SamplingBytes, r.Hops = meanHops(hb)
		r.FeatureRows, r.FeatureBytes, r.FeatureIDBytes = frows, frows*int64(cfg.RowBytes), frows*8
		r.SampledNodes = nodes
		for q := range p {
			lo, hi := pt.PatchRange(q)
			e := pt.Graph.Indptr[hi] - pt.Graph.Indptr[lo]
			r.TopologyNodes = append(r.TopologyNodes, hi-lo)
			r.TopologyEdges = append(r.TopologyEdges, e)
			r.TopologyBytes = append(r.TopologyBytes, topologyBytes(hi-lo, e, pt.Graph.IsCompact()))
			r.FeatureStore = append(r.FeatureStore, (hi-lo)*int64(cfg.RowBytes))
		}
		r.Note = "topology per rank: owned nodes' in-edges (halo node ids not counted)"
		rows = append(rows, r)
		logf("%d ranks, %s, dsp push: %.2f s/epoch, %.1f MB sampling, %.1f MB features", p, method, r.Median, mb(r.SamplingBytes), mb(r.FeatureBytes))
	}

	// DSP, the adjacency pull baseline, without and with its per-batch
	// list cache.
	for _, cache := range []bool{false, true} {
		cc, err := comm.NewCounting(comm.NewLocal(p), hopPhase(hops))
		if err != nil {
			return nil, err
		}
		ps, err := pull.New(pt, cc, pull.Options{CacheLists: cache})
		if err != nil {
			return nil, err
		}
		hb := make([]hopBytes, hops)
		s := func(ctx context.Context, _ int, b [][]int64, keys []uint64) ([]int64, []int64, error) {
			res, err := ps.Sample(ctx, cfg.Fanouts, cfg.Seed, b, keys)
			if err != nil {
				return nil, nil, err
			}
			remote, n := remoteOf(res, true)
			return remote, n, nil
		}
		secs, frows, nodes, err := epochs(ctx, cfg, plan, s, false, cc.Reset, func() { hopsOf(cc.Traffic(), hops, hb) })
		if err != nil {
			return nil, fmt.Errorf("%d ranks, %s, pull: %w", p, method, err)
		}
		r := base
		r.Layout, r.Sampler = "dsp", "pull (baseline)"
		if cache {
			r.Sampler = "pull, lists cached per batch"
		}
		r.EpochSeconds, r.Median = secs, median(secs)
		r.SamplingBytes, r.Hops = meanHops(hb)
		r.FeatureRows, r.FeatureBytes, r.FeatureIDBytes = frows, frows*int64(cfg.RowBytes), frows*8
		r.SampledNodes = nodes
		r.TopologyNodes, r.TopologyEdges, r.TopologyBytes, r.FeatureStore = rows[0].TopologyNodes, rows[0].TopologyEdges, rows[0].TopologyBytes, rows[0].FeatureStore
		r.Note = "one goroutine per rank (CSP's owner stage uses the threads); draws differ from CSP's, same distribution"
		if cache {
			r.Note = "each node's list crosses at most once per batch (hop h asks only for the nodes hop h-1 added); same samples as the uncached pull"
			if prev := rows[len(rows)-1]; prev.SampledNodes != r.SampledNodes || prev.FeatureRows != r.FeatureRows {
				r.Note = fmt.Sprintf("MISMATCH: %d sampled nodes against the uncached pull's %d", r.SampledNodes, prev.SampledNodes)
			}
		}
		rows = append(rows, r)
		logf("%d ranks, %s, dsp %s: %.2f s/epoch, %.1f MB sampling", p, method, r.Sampler, r.Median, mb(r.SamplingBytes))
	}

	// Hybrid: every rank samples its batches on its replicated graph
	// (original ids), concurrently; features are fetched from their owners.
	{
		rts := make([]*sample.Runtime, p)
		for q := range rts {
			rt, err := sample.NewRuntime(whole, comm.NewLocal(1), sample.RuntimeOptions{Threads: max(1, cfg.Threads/p)})
			if err != nil {
				return nil, err
			}
			rts[q] = rt
		}
		req := sample.Request{Fanouts: cfg.Fanouts, Frontier: sample.FrontierAll, Seed: cfg.Seed}
		s := func(ctx context.Context, _ int, b [][]int64, keys []uint64) ([]int64, []int64, error) {
			res := make([]*sample.Result, p)
			errs := make([]error, p)
			var wg sync.WaitGroup
			for q := range p {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := rts[q].Sample(ctx, req, b[q:q+1], keys[q:q+1])
					if err == nil {
						res[q] = out[0]
					}
					errs[q] = err
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return nil, nil, err
				}
			}
			remote, n := remoteOf(res, false)
			for q := range p {
				rts[q].Recycle(res[q])
			}
			return remote, n, nil
		}
		secs, frows, nodes, err := epochs(ctx, cfg, plan, s, true, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%d ranks, %s, hybrid: %w", p, method, err)
		}
		r := base
		r.Layout, r.Sampler = "hybrid", "local (no sampling exchange)"
		r.EpochSeconds, r.Median = secs, median(secs)
		r.Hops = nil
		r.FeatureRows, r.FeatureBytes, r.FeatureIDBytes = frows, frows*int64(cfg.RowBytes), frows*8
		r.SampledNodes = nodes
		for q := range p {
			lo, hi := pt.PatchRange(q)
			r.TopologyNodes = append(r.TopologyNodes, g.NumNodes)
			r.TopologyEdges = append(r.TopologyEdges, g.NumEdges())
			r.TopologyBytes = append(r.TopologyBytes, wholeTopo)
			r.FeatureStore = append(r.FeatureStore, (hi-lo)*int64(cfg.RowBytes))
		}
		if nodes != rows[0].SampledNodes {
			r.Note = fmt.Sprintf("MISMATCH: %d sampled nodes against CSP's %d on the same batches", nodes, rows[0].SampledNodes)
		} else {
			r.Note = "same samples as CSP push (checked: equal node counts); topology replicated"
		}
		rows = append(rows, r)
		logf("%d ranks, %s, hybrid: %.2f s/epoch, %.1f MB features (%s)", p, method, r.Median, mb(r.FeatureBytes), r.Note)
	}

	// Self-reliant: no exchange at all; what each rank must store instead.
	{
		r := base
		r.Layout, r.Sampler = "self-reliant", "local (no exchange)"
		perRank := make([][]int64, p)
		for _, wave := range plan.waves {
			for q, b := range wave {
				perRank[q] = append(perRank[q], b...)
			}
		}
		for q := range p {
			nodes, edges := neighbourhood(pt, q, perRank[q], hops)
			r.TopologyNodes = append(r.TopologyNodes, nodes)
			r.TopologyEdges = append(r.TopologyEdges, edges)
			r.TopologyBytes = append(r.TopologyBytes, topologyBytes(nodes, edges, pt.Graph.IsCompact()))
			r.FeatureStore = append(r.FeatureStore, nodes*int64(cfg.RowBytes))
		}
		r.Note = fmt.Sprintf("no sampling time of its own: a rank samples locally as hybrid does; stored: owned nodes + the %d-hop in-neighbourhood of the rank's epoch seeds", hops)
		rows = append(rows, r)
		logf("%d ranks, %s, self-reliant: topology per rank %v MB", p, method, mbs(r.TopologyBytes))
	}
	return rows, nil
}

// neighbourhood is PaGraph's self-reliant share of rank q: its owned nodes
// and every node within hops in-hops of its seeds (internal ids), with
// every in-edge of the nodes closer than hops to a seed.
func neighbourhood(pt *partition.Partitioned, q int, seeds []int64, hops int) (nodes, edges int64) {
	g := pt.Graph
	lo, hi := pt.PatchRange(q)
	seen := make([]bool, g.NumNodes)
	frontier := slices.Clone(seeds)
	for _, v := range seeds {
		seen[v] = true
	}
	var local int64 = int64(len(seeds))
	var next []int64
	for range hops {
		next = next[:0]
		for _, v := range frontier {
			edges += g.InDegree(v)
			for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
				if u := g.Source(pos); !seen[u] {
					seen[u] = true
					next = append(next, u)
				}
			}
		}
		local += int64(len(next))
		frontier, next = next, frontier
	}
	for v := lo; v < hi; v++ {
		if !seen[v] {
			local++
		}
	}
	return local, edges
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func mbs(bs []int64) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = fmt.Sprintf("%.0f", mb(b))
	}
	return out
}

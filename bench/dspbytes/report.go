package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

type edgeCutRow struct {
	Parts    int            `json:"parts"`
	Method   string         `json:"method"`
	Cut      int64          `json:"edge_cut"`
	Fraction float64        `json:"fraction"`
	Extra    map[string]any `json:"extra,omitempty"`
}

type report struct {
	Config   config       `json:"config"`
	Started  string       `json:"started"`
	Machine  string       `json:"machine"`
	NumNodes int64        `json:"num_nodes"`
	NumEdges int64        `json:"num_edges"`
	NumSeeds int          `json:"num_seeds"`
	EdgeCuts []edgeCutRow `json:"edge_cuts"`
	Rows     []row        `json:"rows"`
	Notes    []string     `json:"notes,omitempty"`
}

func (rep *report) write(dir, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "dsp_bytes.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "dsp_bytes.md"), []byte(md), 0o644)
}

func ratio(a, b int64) string {
	if b == 0 {
		if a == 0 {
			return "—"
		}
		return "∞"
	}
	return fmt.Sprintf("%.1f×", float64(a)/float64(b))
}

func (rep *report) markdown() string {
	c := rep.Config
	var b strings.Builder
	w := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	w("# Distributed sampling: bytes exchanged, epoch time, edge cut (issue 11)\n\n")
	w("%s, %s. Preset %s (engine/gen): %d nodes, %d edges. Per epoch: %d seeds (a seeded random subset of the nodes, as `bench --full` bounds its seeds to 30 batches of 1024), batches of %d, fan-outs %v from the seeds, DGL frontier (every node sampled so far), uniform without replacement; %d timed epochs after %d warm-up, times are medians. Features: %d bytes a row (float32, dim %d).\n\n",
		rep.Started, rep.Machine, c.Preset, rep.NumNodes, rep.NumEdges, rep.NumSeeds, c.BatchSize, c.Fanouts, c.Epochs, c.Warmup, c.RowBytes, c.RowBytes/4)
	w("Ranks are goroutines of one process over comm.Local, each owning one patch; comm.Counting counts what each rank sends to the OTHER ranks (what a process-per-rank run puts on the wire; a rank's messages to itself are left out). Every rank samples the seeds it owns (co-partitioned), one batch per wave. Times are all ranks together on this machine's cores: they compare work, not a distributed speed-up. MB = 10^6 bytes.\n\n")

	w("## CSP task push against adjacency pull, bytes per hop per epoch (DSP layout)\n\n")
	w("Push (engine/sample, CSP): a rank sends [batch key, frontier nodes] to each owner, the owner answers the sampled neighbours (count, ids, edge ids). Pull (bench/pull, the baseline of DSP's Figures 1 and 11): a rank sends the frontier nodes, the owner answers their WHOLE in-neighbour lists (degree, ids, edge ids) and the rank samples them; \"cached\" keeps the lists pulled for the rest of the batch, so each list crosses at most once per batch (DGL's frontier resamples every node sampled so far in every hop, which makes the plain pull fetch the seeds' lists in every hop). All values int64; the seeds' own hop is local (seeds live with their owner). Request = tasks or node ids sent, answer = what comes back; the JSON splits every column by request and answer.\n\n")
	w("| ranks | method | hop | push request MB | push answer MB | push MB | pull MB | pull / push | cached pull MB | cached pull / push |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	find := func(p int, m, sampler string) *row {
		for i := range rep.Rows {
			r := &rep.Rows[i]
			if r.Ranks == p && r.Method == m && strings.HasPrefix(r.Sampler, sampler) {
				return r
			}
		}
		return nil
	}
	for _, r := range rep.Rows {
		if !strings.HasPrefix(r.Sampler, "push") || r.Ranks == 1 {
			continue
		}
		pl, pc := find(r.Ranks, r.Method, "pull ("), find(r.Ranks, r.Method, "pull, lists cached")
		if pl == nil || pc == nil {
			continue
		}
		for h, ph := range r.Hops {
			q, qc := pl.Hops[h], pc.Hops[h]
			w("| %d | %s | %d | %.1f | %.1f | %.1f | %.1f | %s | %.1f | %s |\n", r.Ranks, r.Method, h,
				mb(ph.Request), mb(ph.Answer), mb(ph.TotalRemote), mb(q.TotalRemote), ratio(q.TotalRemote, ph.TotalRemote),
				mb(qc.TotalRemote), ratio(qc.TotalRemote, ph.TotalRemote))
		}
		w("| %d | %s | all | | | **%.1f** | **%.1f** | **%s** | **%.1f** | **%s** |\n", r.Ranks, r.Method, mb(r.SamplingBytes),
			mb(pl.SamplingBytes), ratio(pl.SamplingBytes, r.SamplingBytes), mb(pc.SamplingBytes), ratio(pc.SamplingBytes, r.SamplingBytes))
	}
	w("\nWith 1 rank nothing leaves the rank (push and pull: 0 bytes).\n\n")

	w("## Per epoch, by ranks and layout\n\n")
	w("Sampling MB: exchanged by sampling. Feature MB: the one feature round per batch, rows of the batch's nodes owned by another rank × row bytes (the ids asking for them add 8 bytes a row, in the JSON). Topology / rank: what a rank stores (int64 offsets, int32 sources, int64 edge ids), mean over ranks; features / rank likewise.\n\n")
	w("| ranks | method | layout | sampler | batches (waves) | epoch s (min–max) | sampling MB | feature rows | feature MB | total MB | topology / rank MB | features / rank MB |\n|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.Rows {
		t := "—"
		if len(r.EpochSeconds) > 0 {
			lo, hi := r.EpochSeconds[0], r.EpochSeconds[0]
			for _, s := range r.EpochSeconds {
				lo, hi = min(lo, s), max(hi, s)
			}
			t = fmt.Sprintf("%.2f (%.2f–%.2f)", r.Median, lo, hi)
		}
		feat := r.FeatureBytes
		rowsS, featS := fmt.Sprint(r.FeatureRows), fmt.Sprintf("%.1f", mb(feat))
		if r.Layout == "self-reliant" {
			feat, rowsS, featS = 0, "0", "0"
		}
		w("| %d | %s | %s | %s | %d (%d) | %s | %.1f | %s | %s | %.1f | %.0f | %.0f |\n", r.Ranks, r.Method, r.Layout, r.Sampler, r.Batches, r.Waves, t,
			mb(r.SamplingBytes), rowsS, featS, mb(r.SamplingBytes+feat), mb(mean(r.TopologyBytes)), mb(mean(r.FeatureStore)))
	}
	w("\n")
	for _, r := range rep.Rows {
		if r.Note != "" && (r.Ranks == rep.Config.Ranks[len(rep.Config.Ranks)-1] || strings.HasPrefix(r.Note, "MISMATCH")) && r.Method == rep.Rows[len(rep.Rows)-1].Method {
			w("- %s (%s): %s\n", r.Layout, r.Sampler, r.Note)
		}
	}

	w("\n## Edge cut\n\nStored (directed) edges whose endpoints lie in different patches; the presets store every edge both ways, so an undirected edge cut counts twice (METIS reports it once).\n\n")
	w("| parts | method | edge cut | fraction of edges | METIS seconds |\n|---:|---|---:|---:|---:|\n")
	for _, e := range rep.EdgeCuts {
		secs := "—"
		if js, ok := e.Extra["metis"].(string); ok {
			var m struct{ Seconds float64 }
			if json.Unmarshal([]byte(js), &m) == nil && m.Seconds > 0 {
				secs = fmt.Sprintf("%.0f", m.Seconds)
			}
		}
		w("| %d | %s | %d | %.1f%% | %s |\n", e.Parts, e.Method, e.Cut, 100*e.Fraction, secs)
	}
	if len(rep.Notes) > 0 {
		w("\n## Notes\n\n")
		for _, n := range rep.Notes {
			w("- %s\n", n)
		}
	}
	return b.String()
}

func mean(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	var s int64
	for _, x := range xs {
		s += x
	}
	return s / int64(len(xs))
}

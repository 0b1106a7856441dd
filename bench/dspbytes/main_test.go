package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunTiny runs the whole benchmark on the tiny preset (range and
// random; METIS needs Python) and checks what the tables rest on.
func TestRunTiny(t *testing.T) {
	cfg := config{Preset: "tiny", Ranks: []int{1, 2, 3}, Methods: []string{"range", "random"}, Fanouts: []int{5, 3, 2},
		BatchSize: 64, MaxSeeds: 400, Epochs: 2, Warmup: 1, Seed: 1, Threads: 2}
	rep, err := run(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, 400, rep.NumSeeds)
	require.Len(t, rep.Rows, 5+2*2*5)
	require.Len(t, rep.EdgeCuts, 4)
	for _, e := range rep.EdgeCuts {
		require.Positive(t, e.Cut)
		require.Less(t, e.Cut, rep.NumEdges)
	}
	type key struct {
		p      int
		m, lay string
	}
	rows := map[key]row{}
	for _, r := range rep.Rows {
		rows[key{r.Ranks, r.Method, r.Layout + "/" + r.Sampler[:6]}] = r
		require.NotContains(t, r.Note, "MISMATCH")
		if r.Layout != "self-reliant" {
			require.Len(t, r.EpochSeconds, 2)
		}
		require.Len(t, r.TopologyBytes, r.Ranks, "%+v", r)
		if r.Ranks == 1 {
			require.Zero(t, r.SamplingBytes)
			require.Zero(t, r.FeatureBytes)
		}
	}
	for _, p := range []int{2, 3} {
		for _, m := range cfg.Methods {
			push, pull, cached := rows[key{p, m, "dsp/push ("}], rows[key{p, m, "dsp/pull ("}], rows[key{p, m, "dsp/pull, "}]
			hyb := rows[key{p, m, "hybrid/local "}]
			require.Len(t, push.Hops, 3)
			// Seeds live with their owner: the first hop never leaves it.
			require.Zero(t, push.Hops[0].TotalRemote)
			require.Zero(t, pull.Hops[0].TotalRemote)
			require.Positive(t, push.Hops[1].TotalRemote)
			require.Greater(t, pull.SamplingBytes, push.SamplingBytes)
			require.Greater(t, pull.Hops[1].Answer, push.Hops[1].Answer)
			// The cache saves bytes but samples the same.
			require.Less(t, cached.SamplingBytes, pull.SamplingBytes)
			require.Greater(t, cached.SamplingBytes, push.SamplingBytes)
			require.Equal(t, pull.SampledNodes, cached.SampledNodes)
			// Hybrid samples the same batches as CSP: same feature rows.
			require.Equal(t, push.FeatureRows, hyb.FeatureRows)
			require.Equal(t, push.SampledNodes, hyb.SampledNodes)
			require.Positive(t, hyb.FeatureBytes)
			require.Equal(t, hyb.FeatureRows*int64(rep.Config.RowBytes), hyb.FeatureBytes)
		}
	}
	md := rep.markdown()
	require.Contains(t, md, "pull / push")
	require.Contains(t, md, "| 3 | random | all |")
	dir := t.TempDir()
	require.NoError(t, rep.write(dir, md))
	b, err := os.ReadFile(filepath.Join(dir, "dsp_bytes.json"))
	require.NoError(t, err)
	var back report
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, len(rep.Rows), len(back.Rows))
	b, err = os.ReadFile(filepath.Join(dir, "dsp_bytes.md"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), "# Distributed sampling"))

	// -from-json rewrites both files with the notes added, measuring nothing.
	out := t.TempDir()
	require.NoError(t, rewrite(filepath.Join(dir, "dsp_bytes.json"), out, []string{"a note"}))
	b, err = os.ReadFile(filepath.Join(out, "dsp_bytes.md"))
	require.NoError(t, err)
	require.Equal(t, strings.TrimSuffix(md, "\n")+"\n\n## Notes\n\n- a note\n", string(b))
}

func TestChooseSeeds(t *testing.T) {
	s := chooseSeeds(100, 30, 7)
	require.Len(t, s, 30)
	seen := map[int64]bool{}
	for _, v := range s {
		require.GreaterOrEqual(t, v, int64(0))
		require.Less(t, v, int64(100))
		require.False(t, seen[v])
		seen[v] = true
	}
	require.Equal(t, s, chooseSeeds(100, 30, 7))
	require.Len(t, chooseSeeds(10, 0, 7), 10)
	require.Len(t, chooseSeeds(10, 50, 7), 10)
}

package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/graphferry/graphferry/engine/sample"
)

// CheckConfig sizes SelfCheck's graphs and batches.
type CheckConfig struct {
	Nodes     int64  // nodes of the generated graph
	AvgDegree int    // mean in-degree of the ordinary nodes
	Hubs      int    // nodes with 1100..2600 in-neighbours (Floyd's large cases)
	Patches   int    // patches of the CPU engine's partition (random assignment)
	Batches   int    // batches per scheme
	BatchSize int    // seeds per batch
	Seed      uint64 // graph, seeds and sampling seed
	// Placement of the topology (PlaceAuto: device memory when it fits).
	Placement Placement
}

// CheckReport is what SelfCheck compared.
type CheckReport struct {
	Schemes, Batches int
	Edges            int64 // sampled edges compared
}

// checkSchemes is every scheme the GPU offers, with fanouts that reach the
// CPU engine's Floyd variants (bitset, sorted, large) and fan-out -1.
func checkSchemes() []sample.Request {
	var out []sample.Request
	for _, fan := range [][]int{{4, 3}, {-1, 2}, {40, 2}} {
		for _, replace := range []bool{false, true} {
			for _, biased := range []bool{false, true} {
				for _, excl := range []bool{false, true} {
					for _, fr := range []sample.Frontier{sample.FrontierAll, sample.FrontierNew} {
						o := sample.Request{Fanouts: fan, Replace: replace, Biased: biased, Frontier: fr}
						if excl {
							o.ExcludeEdges = []int64{-1} // filled in per graph
						}
						out = append(out, o)
					}
				}
			}
		}
	}
	return out
}

// checkGraph generates a graph with random edge ids, weights (a tenth of
// them 0) and a few hubs.
func checkGraph(cfg CheckConfig, r *rand.Rand) (*graph.CSC, error) {
	n := cfg.Nodes
	deg := make([]int64, n)
	for v := range deg {
		deg[v] = int64(r.IntN(2*cfg.AvgDegree + 1))
	}
	for i := 0; i < cfg.Hubs && n > 0; i++ {
		deg[r.Int64N(n)] = 1100 + r.Int64N(1500)
	}
	indptr := make([]int64, n+1)
	for v := int64(0); v < n; v++ {
		indptr[v+1] = indptr[v] + deg[v]
	}
	e := indptr[n]
	indices := make([]int64, e)
	for i := range indices {
		indices[i] = r.Int64N(n)
	}
	ids := make([]int64, e)
	for i, p := range r.Perm(int(e)) {
		ids[i] = int64(p) * 3 // sparse ids: not positions
	}
	w := make([]float32, e)
	for i := range w {
		if r.IntN(10) > 0 {
			w[i] = r.Float32()*4 + 0.01
		}
	}
	return graph.FromCSC(n, indptr, indices, ids, w)
}

// checkLayouts generates cfg's graph and returns it in the three layouts
// the checks compare: int32 sources through a random partition into
// cfg.Patches patches (renumbered); int64 sources on one patch; the same
// without edge ids (id = position).
func checkLayouts(cfg CheckConfig, r *rand.Rand) (*graph.CSC, []*partition.Partitioned, error) {
	g, err := checkGraph(cfg, r)
	if err != nil {
		return nil, nil, err
	}
	parted, err := partition.Build(g, partition.Options{Method: partition.Random, NumPatches: max(1, cfg.Patches), Seed: cfg.Seed})
	if err != nil {
		return nil, nil, err
	}
	wide := &partition.Partitioned{Graph: g.Wide(), Offsets: []int64{0, g.NumNodes}}
	noIDs := *g.Wide()
	noIDs.EdgeIDs = nil
	positional := &partition.Partitioned{Graph: &noIDs, Offsets: []int64{0, g.NumNodes}}
	return g, []*partition.Partitioned{parted, wide, positional}, nil
}

// excludedThird returns the ids of a third of layout's edges (every third
// position): the excluded edges of the schemes that exclude.
func excludedThird(layout *partition.Partitioned) []int64 {
	var excluded []int64
	for p := int64(0); p < layout.Graph.NumEdges(); p += 3 {
		excluded = append(excluded, layout.Graph.EdgeID(p))
	}
	return excluded
}

// SelfCheck samples batches of generated graphs on dev and with the CPU
// engine, for every scheme the GPU offers and three layouts (int32 sources
// through a partition into cfg.Patches patches; int64 sources on one patch;
// the same without edge ids, id = position), and
// returns an error naming the first difference. It is the evidence that the
// kernels reproduce the CPU engine: the tests run it on the emulated device,
// tests/gpu/run.sh on the GPU (gf_cuda_selfcheck).
func SelfCheck(dev Device, cfg CheckConfig) (CheckReport, error) {
	var rep CheckReport
	r := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	g, layouts, err := checkLayouts(cfg, r)
	if err != nil {
		return rep, err
	}
	batches := make([][]int64, cfg.Batches)
	keys := make([]uint64, cfg.Batches)
	for b := range batches {
		size := min(int64(cfg.BatchSize), g.NumNodes)
		perm := r.Perm(int(g.NumNodes))[:size]
		batches[b] = make([]int64, size)
		for i, v := range perm {
			batches[b][i] = int64(v)
		}
		keys[b] = uint64(b)<<32 | uint64(r.Uint32())
	}
	for _, layout := range layouts {
		excluded := excludedThird(layout)
		for _, req := range checkSchemes() {
			if req.ExcludeEdges != nil {
				req.ExcludeEdges = excluded
			}
			name := fmt.Sprintf("fanouts %v replace=%v biased=%v exclude=%v frontier=%v int32=%v edge-ids=%v patches=%d",
				req.Fanouts, req.Replace, req.Biased, req.ExcludeEdges != nil, req.Frontier, layout.Graph.IsCompact(),
				layout.Graph.EdgeIDs != nil, layout.NumPatches())
			// Batches in internal ids of this layout.
			in := make([][]int64, len(batches))
			for b, seeds := range batches {
				in[b] = make([]int64, len(seeds))
				if layout.OldToNew == nil {
					copy(in[b], seeds)
				} else if err := layout.ToNew(seeds, in[b]); err != nil {
					return rep, err
				}
			}
			cpu, err := sample.NewRuntime(layout, comm.NewLocal(layout.NumPatches()), sample.RuntimeOptions{Threads: 2})
			if err != nil {
				return rep, fmt.Errorf("%s: CPU sampler: %w", name, err)
			}
			req.Seed = cfg.Seed
			want, err := cpu.Sample(context.Background(), req, in, keys)
			if err != nil {
				return rep, fmt.Errorf("%s: CPU engine: %w", name, err)
			}
			gs, err := NewSampler(dev, layout, req, SamplerOptions{Placement: cfg.Placement})
			if err != nil {
				return rep, fmt.Errorf("%s: device sampler: %w", name, err)
			}
			got, err := gs.SampleBatches(context.Background(), in, keys)
			cerr := gs.Close()
			if err != nil {
				return rep, fmt.Errorf("%s: device: %w", name, err)
			}
			if cerr != nil {
				return rep, fmt.Errorf("%s: device: %w", name, cerr)
			}
			for b := range want {
				if err := EqualResults(want[b], got[b]); err != nil {
					return rep, fmt.Errorf("%s: batch %d: %w", name, b, err)
				}
				for _, blk := range want[b].Blocks {
					rep.Edges += int64(len(blk.Indices))
				}
			}
			rep.Schemes++
			rep.Batches += len(want)
		}
	}
	return rep, nil
}

// EqualResults returns nil when a and b are the same batch (empty and nil
// slices are equal), else an error naming the first difference.
func EqualResults(a, b *sample.Result) error {
	if !slices.Equal(a.Nodes, b.Nodes) {
		return fmt.Errorf("nodes differ: %s", firstDiff(a.Nodes, b.Nodes))
	}
	if !slices.Equal(a.HopCounts, b.HopCounts) {
		return fmt.Errorf("hop counts differ: %v vs %v", a.HopCounts, b.HopCounts)
	}
	if len(a.Blocks) != len(b.Blocks) {
		return fmt.Errorf("%d vs %d blocks", len(a.Blocks), len(b.Blocks))
	}
	for h := range a.Blocks {
		x, y := &a.Blocks[h], &b.Blocks[h]
		if err := blockShape(h, [3]int64{x.NumDst, x.NumSrc, x.DstOffset}, [3]int64{y.NumDst, y.NumSrc, y.DstOffset}); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			a, b []int64
		}{{"indptr", x.Indptr, y.Indptr}, {"indices", x.Indices, y.Indices}, {"edge ids", x.EdgeIDs, y.EdgeIDs}} {
			if !slices.Equal(f.a, f.b) {
				return fmt.Errorf("block %d: %s differ: %s", h, f.name, firstDiff(f.a, f.b))
			}
		}
	}
	return nil
}

// blockShape compares block h's shapes (dst nodes, src nodes, dst offset).
func blockShape(h int, a, b [3]int64) error {
	if a != b {
		return fmt.Errorf("block %d: shape (dst %d, src %d, offset %d) vs (dst %d, src %d, offset %d)", h, a[0], a[1], a[2], b[0], b[1], b[2])
	}
	return nil
}

func firstDiff(a, b []int64) string {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			return fmt.Sprintf("first at [%d]: %d vs %d (lengths %d, %d)", i, a[i], b[i], len(a), len(b))
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(a), len(b))
}

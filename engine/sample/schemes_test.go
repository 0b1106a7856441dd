package sample

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/partition"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edgeIndex maps the original edge ids of g to their endpoints, list
// positions and whether they may be sampled under opt.
type einfo struct {
	src, dst, pos int64
	ok            bool // not excluded, and positive weight when biased
}

func edgeIndex(g *graph.CSC, opt options) (map[int64]einfo, []int64) {
	excl := map[int64]bool{}
	for _, e := range opt.ExcludeEdges {
		excl[e] = true
	}
	byID := map[int64]einfo{}
	deg := make([]int64, g.NumNodes) // candidate degrees
	for v := int64(0); v < g.NumNodes; v++ {
		for pos := g.Indptr[v]; pos < g.Indptr[v+1]; pos++ {
			id := g.EdgeID(pos)
			ok := !excl[id] && (!opt.Biased || g.Weights[pos] > 0)
			byID[id] = einfo{g.Source(pos), v, pos - g.Indptr[v], ok}
			if ok {
				deg[v]++
			}
		}
	}
	return byID, deg
}

// checkScheme checks every structural invariant of res (Nodes in original
// ids) against the original graph g for any scheme: the shape and chaining
// of the blocks, append-unique order, that every sampled edge exists, has
// the right endpoints, is neither excluded nor of weight 0 when biased, the
// row sizes the scheme implies, and no duplicates / ascending list order
// without replacement.
func checkScheme(g *graph.CSC, seeds []int64, res *Result, opt options) error {
	byID, deg := edgeIndex(g, opt)
	L := len(opt.Fanouts)
	if len(res.HopCounts) != L+1 || len(res.Blocks) != L {
		return fmt.Errorf("len(HopCounts) = %d, len(Blocks) = %d, want %d, %d", len(res.HopCounts), len(res.Blocks), L+1, L)
	}
	if res.HopCounts[0] != int64(len(seeds)) || !slices.Equal(res.Nodes[:len(seeds)], seeds) {
		return fmt.Errorf("seeds not first in order")
	}
	var sum int64
	for _, c := range res.HopCounts {
		sum += c
	}
	if sum != int64(len(res.Nodes)) {
		return fmt.Errorf("sum(HopCounts) = %d, len(Nodes) = %d", sum, len(res.Nodes))
	}
	seen := map[int64]bool{}
	for _, v := range res.Nodes {
		if seen[v] {
			return fmt.Errorf("node %d appears twice in Nodes", v)
		}
		seen[v] = true
	}
	layer := opt.Scheme == LayerWise
	prev := int64(0)
	for h, b := range res.Blocks {
		start := prev
		prev += res.HopCounts[h]
		wantOff, wantDst := int64(0), prev
		if opt.Frontier == FrontierNew {
			wantOff, wantDst = start, res.HopCounts[h]
		}
		if b.DstOffset != wantOff || b.NumDst != wantDst || b.NumSrc != prev+res.HopCounts[h+1] {
			return fmt.Errorf("block %d: DstOffset/NumDst/NumSrc = %d/%d/%d, want %d/%d/%d", h, b.DstOffset, b.NumDst, b.NumSrc, wantOff, wantDst, prev+res.HopCounts[h+1])
		}
		if h > 0 && opt.Frontier == FrontierAll && b.NumDst != res.Blocks[h-1].NumSrc {
			return fmt.Errorf("block %d dst count %d != block %d src count %d", h, b.NumDst, h-1, res.Blocks[h-1].NumSrc)
		}
		if int64(len(b.Indptr)) != b.NumDst+1 || b.Indptr[0] != 0 || b.Indptr[b.NumDst] != int64(len(b.Indices)) || len(b.EdgeIDs) != len(b.Indices) {
			return fmt.Errorf("block %d: malformed indptr/indices", h)
		}
		f := int64(opt.Fanouts[h])
		nextNew := prev
		var total, sumDeg, positive int64
		for i := int64(0); i < b.NumDst; i++ {
			v := res.Nodes[b.DstOffset+i]
			lo, hi := b.Indptr[i], b.Indptr[i+1]
			if hi < lo {
				return fmt.Errorf("block %d: indptr decreases at %d", h, i)
			}
			c, d := hi-lo, deg[v]
			total += c
			sumDeg += d
			if d > 0 {
				positive++
			}
			distinct := !opt.Replace || f < 0
			switch {
			case f == 0 && c != 0:
				return fmt.Errorf("block %d: node %d got %d neighbours with fanout 0", h, v, c)
			case f < 0 && c != d:
				return fmt.Errorf("block %d: node %d (degree %d) got %d neighbours with fanout -1", h, v, d, c)
			case !layer && f > 0 && opt.Replace && c != min(d, 1)*f:
				return fmt.Errorf("block %d: node %d (degree %d) got %d neighbours, want %d", h, v, d, c, min(d, 1)*f)
			case !layer && f > 0 && !opt.Replace && c != min(d, f):
				return fmt.Errorf("block %d: node %d (degree %d) got %d neighbours, want %d", h, v, d, c, min(d, f))
			case layer && d == 0 && c != 0:
				return fmt.Errorf("block %d: node %d without candidates got %d neighbours", h, v, c)
			case layer && opt.LayerWithoutReplacement && f > 0 && c > 1:
				return fmt.Errorf("block %d: node %d got %d neighbours (want at most 1)", h, v, c)
			case layer && !opt.Replace && c > d:
				return fmt.Errorf("block %d: node %d (degree %d) got %d neighbours without replacement", h, v, d, c)
			}
			lastPos := int64(-1)
			picked := map[int64]bool{}
			for k := lo; k < hi; k++ {
				idx := b.Indices[k]
				if idx < 0 || idx >= b.NumSrc {
					return fmt.Errorf("block %d: index %d out of [0, %d)", h, idx, b.NumSrc)
				}
				if idx >= prev {
					if idx > nextNew {
						return fmt.Errorf("block %d: new node at position %d before position %d", h, idx, nextNew)
					}
					if idx == nextNew {
						nextNew++
					}
				}
				u := res.Nodes[idx]
				e, ok := byID[b.EdgeIDs[k]]
				if !ok || e.src != u || e.dst != v {
					return fmt.Errorf("block %d: edge id %d is not %d -> %d", h, b.EdgeIDs[k], u, v)
				}
				if !e.ok {
					return fmt.Errorf("block %d: edge %d is excluded or has weight 0", h, b.EdgeIDs[k])
				}
				if distinct {
					if picked[b.EdgeIDs[k]] {
						return fmt.Errorf("block %d: node %d picked edge %d twice", h, v, b.EdgeIDs[k])
					}
					picked[b.EdgeIDs[k]] = true
					if e.pos <= lastPos {
						return fmt.Errorf("block %d: node %d's picks not in ascending list order", h, v)
					}
					lastPos = e.pos
				}
			}
		}
		if nextNew != prev+res.HopCounts[h+1] {
			return fmt.Errorf("block %d: %d new nodes referenced, HopCounts says %d", h, nextNew-prev, res.HopCounts[h+1])
		}
		if layer && f > 0 {
			switch {
			case opt.LayerWithoutReplacement:
				if total != min(f, positive) {
					return fmt.Errorf("block %d: %d nodes picked, want min(%d, %d)", h, total, f, positive)
				}
			case opt.Replace:
				if total != min(positive, 1)*f {
					return fmt.Errorf("block %d: %d draws, want %d", h, total, min(positive, 1)*f)
				}
			default:
				if total > f || total > sumDeg || (positive > 0 && total == 0) {
					return fmt.Errorf("block %d: %d neighbours for fanout %d (frontier degree %d)", h, total, f, sumDeg)
				}
			}
		}
	}
	return nil
}

// checkWalks checks walks (Traces in original ids) against g: every step is
// an allowed edge from trace[t] to an in-neighbour, or a restart (edge -1,
// back to the seed), and -1 is absorbing.
func checkWalks(g *graph.CSC, seeds []int64, w *WalkResult, length int, opt options) error {
	byID, _ := edgeIndex(g, opt)
	if len(w.Traces) != len(seeds)*(length+1) || len(w.EdgeIDs) != len(seeds)*length {
		return fmt.Errorf("walk shape %d/%d for %d seeds of length %d", len(w.Traces), len(w.EdgeIDs), len(seeds), length)
	}
	for i, s := range seeds {
		tr := w.Traces[i*(length+1) : (i+1)*(length+1)]
		es := w.EdgeIDs[i*length : (i+1)*length]
		if tr[0] != s {
			return fmt.Errorf("walker %d starts at %d, not its seed %d", i, tr[0], s)
		}
		for t := 0; t < length; t++ {
			switch {
			case tr[t] == -1:
				if tr[t+1] != -1 || es[t] != -1 {
					return fmt.Errorf("walker %d moves after a dead end", i)
				}
			case tr[t+1] == -1:
				if es[t] != -1 {
					return fmt.Errorf("walker %d: dead end with edge %d", i, es[t])
				}
				for pos := g.Indptr[tr[t]]; pos < g.Indptr[tr[t]+1]; pos++ {
					if byID[g.EdgeID(pos)].ok {
						return fmt.Errorf("walker %d: dead end at %d, which has a candidate edge", i, tr[t])
					}
				}
			case es[t] == -1:
				if tr[t+1] != s {
					return fmt.Errorf("walker %d: edge -1 but not back to the seed", i)
				}
			default:
				e, ok := byID[es[t]]
				if !ok || !e.ok || e.dst != tr[t] || e.src != tr[t+1] {
					return fmt.Errorf("walker %d step %d: edge %d is not an allowed %d -> %d", i, t, es[t], tr[t+1], tr[t])
				}
			}
		}
	}
	return nil
}

func walksToOriginal(p *partition.Partitioned, ws []*WalkResult) []*WalkResult {
	out := make([]*WalkResult, len(ws))
	for i, w := range ws {
		c := &WalkResult{Traces: slices.Clone(w.Traces), EdgeIDs: w.EdgeIDs}
		if p.NewToOld != nil {
			for j, v := range c.Traces {
				if v >= 0 {
					c.Traces[j] = p.NewToOld[v]
				}
			}
		}
		out[i] = c
	}
	return out
}

type schemeConfig struct {
	name string
	opt  options
	walk bool // RandomWalk (length walkLen, restart walkRestart) instead
}

const (
	walkLen     = 5
	walkRestart = 0.2
)

// schemeConfigs covers every scheme beyond the default uniform node-wise
// one (which configs() covers), on a weighted graph whose edge ids are in
// [0, e) (exclude lists some of them).
func schemeConfigs(exclude []int64) []schemeConfig {
	var out []schemeConfig
	add := func(name string, o options) {
		o.Seed = 42
		out = append(out, schemeConfig{name: name, opt: o})
	}
	for _, fr := range []Frontier{FrontierAll, FrontierNew} {
		for _, rep := range []bool{false, true} {
			for _, f := range [][]int{{4, 3}, {-1, 2}, {3, 0, 2}} {
				add(fmt.Sprintf("biased/%v/replace=%v/%v", fr, rep, f), options{Fanouts: f, Replace: rep, Frontier: fr, Biased: true})
			}
			add(fmt.Sprintf("exclude/%v/replace=%v", fr, rep), options{Fanouts: []int{3, 2}, Replace: rep, Frontier: fr, ExcludeEdges: exclude})
			add(fmt.Sprintf("exclude-fanout0/%v/replace=%v", fr, rep), options{Fanouts: []int{3, 0, 2}, Replace: rep, Frontier: fr, ExcludeEdges: exclude})
			add(fmt.Sprintf("biased+exclude/%v/replace=%v", fr, rep), options{Fanouts: []int{2, 3}, Replace: rep, Frontier: fr, Biased: true, ExcludeEdges: exclude})
			for _, biased := range []bool{false, true} {
				for _, f := range [][]int{{30, 60}, {-1, 25}, {25, 0, 40}} {
					add(fmt.Sprintf("layer/biased=%v/%v/replace=%v/%v", biased, fr, rep, f), options{Fanouts: f, Replace: rep, Frontier: fr, Biased: biased, Scheme: LayerWise})
				}
				add(fmt.Sprintf("layer-wor/biased=%v/%v/replace=%v", biased, fr, rep), options{Fanouts: []int{20, 40}, Replace: rep, Frontier: fr, Biased: biased, Scheme: LayerWise, LayerWithoutReplacement: true, ExcludeEdges: exclude})
			}
		}
	}
	add("layer/exclude", options{Fanouts: []int{50, 50}, Scheme: LayerWise, ExcludeEdges: exclude, Replace: true})
	for _, biased := range []bool{false, true} {
		for _, ex := range [][]int64{nil, exclude} {
			out = append(out, schemeConfig{
				name: fmt.Sprintf("walk/biased=%v/exclude=%v", biased, ex != nil),
				opt:  options{Fanouts: []int{1}, Biased: biased, ExcludeEdges: ex, Seed: 43},
				walk: true,
			})
		}
	}
	return out
}

// runScheme runs c on part (batches in original ids) and returns the results
// in original ids: []*Result or []*WalkResult.
func runScheme(t testing.TB, part *partition.Partitioned, c schemeConfig, opt options, batches [][]int64, keys []uint64, hash bool) any {
	t.Helper()
	s := mustSampler(t, part, opt)
	if hash {
		s.rt.dense = false
	}
	if c.walk {
		w, err := walk(t.Context(), s, toInternal(part, batches), keys, walkLen, walkRestart)
		require.NoError(t, err)
		return walksToOriginal(part, w)
	}
	return toOriginal(part, sampleAll(t, s, toInternal(part, batches), keys))
}

func checkSchemeRun(t testing.TB, g *graph.CSC, c schemeConfig, batches [][]int64, got any) {
	t.Helper()
	if c.walk {
		for i, w := range got.([]*WalkResult) {
			require.NoError(t, checkWalks(g, batches[i], w, walkLen, c.opt), "batch %d", i)
		}
		return
	}
	for i, r := range got.([]*Result) {
		require.NoError(t, checkScheme(g, batches[i], r, c.opt), "batch %d", i)
	}
}

func schemeFixture() (*graph.CSC, [][]int64, []uint64, []int64) {
	r := rand.New(rand.NewPCG(11, 12))
	g := withWeights(r, randomGraph(r, 400, 5000, true))
	batches, keys := randomBatches(r, g.NumNodes, 5, 25)
	var exclude []int64
	for id := int64(0); id < g.NumEdges(); id++ {
		if r.IntN(4) == 0 {
			exclude = append(exclude, id)
		}
	}
	r.Shuffle(len(exclude), func(i, j int) { exclude[i], exclude[j] = exclude[j], exclude[i] })
	return g, batches, keys, exclude
}

// Every scheme: the result depends only on (Seed, key, seeds, graph), not on
// the number of patches, the numbering, the threads, GOMAXPROCS or the
// append-unique table.
func TestSchemesDeterministicAcrossPatchesAndThreads(t *testing.T) {
	withGrains(t, 5, 2)
	g, batches, keys, exclude := schemeFixture()
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range schemeConfigs(exclude) {
		t.Run(c.name, func(t *testing.T) {
			ref := runScheme(t, rangePartition(g, 1), c, c.opt, batches, keys, false)
			checkSchemeRun(t, g, c, batches, ref)
			for _, p := range []int{1, 2, 3, 8} {
				for _, th := range []int{1, 2, 8} {
					opt := c.opt
					opt.Threads = th
					got := runScheme(t, rangePartition(g, p), c, opt, batches, keys, false)
					require.Equal(t, ref, got, "P=%d threads=%d", p, th)
				}
			}
			for _, p := range []int{3, 5} {
				assign := make([]int, g.NumNodes)
				for v := range assign {
					assign[v] = r.IntN(p)
				}
				part := renumbered(g, assign, p)
				opt := c.opt
				opt.Threads = 4
				got := runScheme(t, part, c, opt, batches, keys, p == 5)
				require.Equal(t, ref, got, "renumbered P=%d", p)
			}
		})
	}
}

func TestSchemesDeterministicAcrossGOMAXPROCS(t *testing.T) {
	withGrains(t, 5, 2)
	g, batches, keys, exclude := schemeFixture()
	cs := schemeConfigs(exclude)
	refs := make([]any, len(cs))
	for i, c := range cs {
		refs[i] = runScheme(t, rangePartition(g, 1), c, c.opt, batches, keys, false)
	}
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		for i, c := range cs {
			opt := c.opt
			opt.Threads = 0 // GOMAXPROCS
			for _, p := range []int{2, 3} {
				got := runScheme(t, rangePartition(g, p), c, opt, batches, keys, false)
				require.Equal(t, refs[i], got, "%s: GOMAXPROCS=%d P=%d", c.name, procs, p)
			}
		}
	}
}

// Recycled results and one-batch-at-a-time calls give the same samples.
func TestSchemesRecycleAndWaves(t *testing.T) {
	g, batches, keys, exclude := schemeFixture()
	for _, c := range schemeConfigs(exclude) {
		if c.walk {
			continue
		}
		ref := runScheme(t, rangePartition(g, 1), c, c.opt, batches, keys, false).([]*Result)
		s := mustSampler(t, rangePartition(g, 2), c.opt)
		for i := range batches {
			got := sampleAll(t, s, batches[i:i+1], keys[i:i+1])
			require.Equal(t, ref[i], got[0], c.name)
			s.Recycle(got...)
		}
	}
}

var fuzzSchemeFanouts = [...]int{-1, 1, 2, 3, 5, 8}

// FuzzSchemes decodes a small weighted graph, an exclusion list and a scheme
// (biased or not, node-wise, layer-wise with or without replacement, random
// walk) from the input, checks the structural invariants and checks that
// the patch layout does not change the result.
func FuzzSchemes(f *testing.F) {
	f.Add([]byte{1, 0, 2, 0, 3, 0, 4, 1, 5, 1, 0, 2, 3, 2, 5, 3}, []byte{0, 3, 9}, uint8(6), uint8(1), uint16(0x0123), uint64(3))
	f.Add([]byte{0, 0, 1, 1, 2, 2, 1, 0, 0, 1}, []byte{1}, uint8(3), uint8(0), uint16(0x7fff), uint64(9))
	f.Add([]byte{}, []byte{}, uint8(1), uint8(3), uint16(0xffff), uint64(0))
	f.Fuzz(func(t *testing.T, eb, wb []byte, n8, f12 uint8, flags uint16, seed uint64) {
		withGrains(t, 3, 2)
		n := int64(n8%24) + 1
		if len(eb) > 400 {
			eb = eb[:400]
		}
		var edges []edge
		for i := 0; i+1 < len(eb); i += 2 {
			edges = append(edges, edge{src: int64(eb[i]) % n, dst: int64(eb[i+1]) % n})
		}
		g := buildCSC(n, edges, false)
		if flags&0x80 != 0 { // explicit (reversed) edge ids
			ids := make([]int64, g.NumEdges())
			for i := range ids {
				ids[i] = int64(len(ids) - 1 - i)
			}
			g.EdgeIDs = ids
		}
		// Weights: wb cycled, 0..3 (a quarter of zeros).
		g.Weights = make([]float32, g.NumEdges())
		var exclude []int64
		for i := range g.Weights {
			if len(wb) > 0 {
				x := wb[i%len(wb)]
				g.Weights[i] = float32(x % 4)
				if x&0x40 != 0 && flags&0x200 != 0 {
					exclude = append(exclude, g.EdgeID(int64(i)))
				}
			} else {
				g.Weights[i] = 1
			}
		}
		fan := []int{fuzzSchemeFanouts[f12%6], fuzzSchemeFanouts[(f12>>3)%6], fuzzSchemeFanouts[(f12>>5)%6]}[:1+int(flags%3)]
		opt := options{
			Fanouts:      fan,
			Replace:      flags&4 != 0,
			Frontier:     Frontier(flags >> 3 & 1),
			Seed:         seed,
			Threads:      1 + int(seed%3),
			Biased:       flags&0x100 != 0,
			ExcludeEdges: exclude,
		}
		c := schemeConfig{name: "fuzz"}
		switch (flags >> 10) % 4 {
		case 1:
			opt.Scheme = LayerWise
		case 2:
			opt.Scheme = LayerWise
			opt.LayerWithoutReplacement = true
		case 3:
			c.walk = true
		}
		c.opt = opt
		r := rand.New(rand.NewPCG(seed, uint64(flags)))
		batches, keys := randomBatches(r, n, 1+int(seed%3), 1+int(seed%7))
		ref := runScheme(t, rangePartition(g, 1), c, opt, batches, keys, false)
		checkSchemeRun(t, g, c, batches, ref)
		p := 1 + int(flags>>4)%4
		part := rangePartition(g, p)
		if flags&0x40 != 0 {
			assign := make([]int, n)
			for v := range assign {
				assign[v] = r.IntN(p)
			}
			part = renumbered(g, assign, p)
		}
		if seed&0x200 != 0 { // int32 sources must sample identically
			part.Graph = part.Graph.Compact()
		}
		got := runScheme(t, part, c, opt, batches, keys, seed&0x100 != 0)
		require.Equal(t, ref, got, "P=%d renumbered=%v", p, part.NewToOld != nil)
	})
}

// Forks of a sampler, each sampling some of the batches at the same time
// (one batch per call, round robin), give the batches the sampler gives, for
// every scheme, with one and with several patches.
func TestForksSampleConcurrently(t *testing.T) {
	withGrains(t, 5, 2)
	g, batches, keys, exclude := schemeFixture()
	for _, c := range schemeConfigs(exclude) {
		if c.walk {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			ref := runScheme(t, rangePartition(g, 1), c, c.opt, batches, keys, false)
			for _, p := range []int{1, 3} {
				part := rangePartition(g, p)
				s := mustSampler(t, part, c.opt)
				const workers = 3
				forks := []*Sampler{s}
				for len(forks) < workers {
					f, err := s.Fork(1)
					require.NoError(t, err)
					forks = append(forks, f)
				}
				in := toInternal(part, batches)
				got := make([]*Result, len(in))
				var wg sync.WaitGroup
				for w, f := range forks {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := w; i < len(in); i += workers {
							res, err := f.SampleBatches(context.Background(), in[i:i+1], keys[i:i+1])
							if !assert.NoError(t, err) {
								return
							}
							got[i] = res[0]
						}
					}()
				}
				wg.Wait()
				require.Equal(t, ref, toOriginal(part, got), "P=%d", p)
			}
		})
	}
}

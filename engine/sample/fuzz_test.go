package sample

import (
	"math/rand/v2"
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
)

var fuzzFanouts = [...]int{-1, 1, 2, 3, 4, 5}

// FuzzSample samples a small graph decoded from the input with fanouts,
// replacement, frontier mode, patch count and (optionally) a renumbering
// chosen by the input, checks every invariant, and checks that the patch
// layout does not change the sample.
func FuzzSample(f *testing.F) {
	f.Add([]byte{1, 0, 2, 0, 3, 0, 4, 1, 5, 1, 0, 2, 3, 2, 5, 3}, uint8(6), uint8(1), uint8(2), uint8(0x11), uint64(3))
	f.Add([]byte{0, 0, 1, 1, 2, 2, 1, 0, 0, 1}, uint8(3), uint8(0), uint8(5), uint8(0x7f), uint64(9))
	f.Add([]byte{}, uint8(1), uint8(3), uint8(3), uint8(0xff), uint64(0))
	f.Fuzz(func(t *testing.T, eb []byte, n8, f1, f2, flags uint8, seed uint64) {
		withGrains(t, 3, 2)
		n := int64(n8%24) + 1
		if len(eb) > 400 {
			eb = eb[:400]
		}
		var edges []edge
		for i := 0; i+1 < len(eb); i += 2 {
			edges = append(edges, edge{src: int64(eb[i]) % n, dst: int64(eb[i+1]) % n})
		}
		// Edge ids: CSC positions, or their reverse (explicit ids).
		explicit := flags&0x80 != 0
		g0 := buildCSC(n, edges, false)
		g := g0
		if explicit {
			ids := make([]int64, g0.NumEdges())
			for i := range ids {
				ids[i] = int64(len(ids) - 1 - i)
			}
			g = &graph.CSC{NumNodes: n, Indptr: g0.Indptr, Indices: g0.Indices, EdgeIDs: ids}
		}
		fan := []int{fuzzFanouts[f1%6], fuzzFanouts[f2%6], fuzzFanouts[(f1^f2)%6]}[:1+flags%3]
		opt := options{
			Fanouts:  fan,
			Replace:  flags&4 != 0,
			Frontier: Frontier(flags >> 3 & 1),
			Seed:     seed,
			Threads:  1 + int(seed%3),
		}
		r := rand.New(rand.NewPCG(seed, uint64(flags)))
		nb := 1 + int(seed%3)
		batches, keys := randomBatches(r, n, nb, 1+int(seed%7))

		ref := sampleAll(t, mustSampler(t, rangePartition(g, 1), opt), batches, keys)
		for i := range ref {
			if err := checkResult(g, batches[i], ref[i], opt); err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
		}
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
		sp := mustSampler(t, part, opt)
		if seed&0x100 != 0 {
			sp.rt.dense = false // the hash table must give the same samples
		}
		got := toOriginal(part, sampleAll(t, sp, toInternal(part, batches), keys))
		for i := range ref {
			if err := equalResults(ref[i], got[i]); err != nil {
				t.Fatalf("P=%d renumbered=%v batch %d: %v", p, part.NewToOld != nil, i, err)
			}
		}
	})
}

func equalResults(a, b *Result) error {
	if !eq(a.Nodes, b.Nodes) || !eq(a.HopCounts, b.HopCounts) || len(a.Blocks) != len(b.Blocks) {
		return errf("nodes/hop counts differ: %v %v vs %v %v", a.Nodes, a.HopCounts, b.Nodes, b.HopCounts)
	}
	for h := range a.Blocks {
		x, y := a.Blocks[h], b.Blocks[h]
		if !eq(x.Indptr, y.Indptr) || !eq(x.Indices, y.Indices) || !eq(x.EdgeIDs, y.EdgeIDs) ||
			x.NumDst != y.NumDst || x.NumSrc != y.NumSrc || x.DstOffset != y.DstOffset {
			return errf("block %d differs: %+v vs %+v", h, x, y)
		}
	}
	return nil
}

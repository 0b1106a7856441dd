package pipeline

import (
	"testing"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/mem"
)

// BenchmarkSetTyped: the typed view of a batch the size of the hetero
// bench's (about 50k nodes of 4 types, 170k edges of 8 relations over 2
// hops), which the sampler workers now compute per batch.
func BenchmarkSetTyped(b *testing.B) {
	const T, R, n, perDst = 4, 8, 50_000, 6
	ty := &graph.Types{NodeOffsets: []int64{0, 100_000, 150_000, 151_000, 160_000}, RelSrc: make([]int32, R), RelDst: make([]int32, R)}
	ty.EdgeOffsets = make([]int64, R+1)
	for r := range R {
		ty.EdgeOffsets[r+1] = int64(r+1) * 200_000
		ty.RelSrc[r], ty.RelDst[r] = int32(r%T), int32((r/2)%T)
	}
	x := uint64(7)
	rnd := func(k int64) int64 { x = x*6364136223846793005 + 1442695040888963407; return int64(x>>33) % k }
	nodes := make([]int64, n)
	for i := range nodes {
		t := rnd(T)
		nodes[i] = ty.NodeOffsets[t] + rnd(ty.NodeOffsets[t+1]-ty.NodeOffsets[t])
	}
	hops := []int64{1024, 9000, n - 10024}
	block := func(numDst, dstOff, numSrc int64) Block {
		var indptr, indices, eids []int64
		indptr = append(indptr, 0)
		for j := range numDst {
			dt := ty.NodeType(nodes[dstOff+j])
			for r := range R {
				if ty.RelDst[r] != dt {
					continue
				}
				for range perDst {
					indices = append(indices, rnd(numSrc))
					eids = append(eids, ty.EdgeOffsets[r]+rnd(200_000))
				}
			}
			indptr = append(indptr, int64(len(indices)))
		}
		t := func(s []int64) mem.Tensor {
			return mem.Tensor{DType: mem.Int64, Shape: []int64{int64(len(s))}, Data: mem.Bytes(s)}
		}
		return Block{Indptr: t(indptr), Indices: t(indices), EdgeIDs: t(eids), NumDst: numDst, NumSrc: numSrc, DstOffset: dstOff}
	}
	bt := &Batch{
		Nodes:     mem.Tensor{DType: mem.Int64, Shape: []int64{n}, Data: mem.Bytes(nodes)},
		HopCounts: mem.Tensor{DType: mem.Int64, Shape: []int64{3}, Data: mem.Bytes(hops)},
		Blocks:    []Block{block(1024, 0, 10024), block(10024, 0, n)},
		alloc:     mem.Heap{},
	}
	edges := 0
	for _, blk := range bt.Blocks {
		edges += int(blk.Indices.Shape[0])
	}
	b.ResetTimer()
	for range b.N {
		bt.Typed = nil
		if err := bt.SetTyped(ty); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(edges), "edges/batch")
}

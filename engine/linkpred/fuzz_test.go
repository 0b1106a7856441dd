package linkpred

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// ids decodes b as little-endian int16 values (small, possibly negative or
// out of range: the interesting cases for validation).
func ids(b []byte) []int64 {
	out := make([]int64, len(b)/2)
	for i := range out {
		out[i] = int64(int16(binary.LittleEndian.Uint16(b[2*i:])))
	}
	return out
}

// halves splits b's ids into two lists of about equal length (the second
// one longer by one when odd, to reach the length checks).
func halves(b []byte) Pairs {
	v := ids(b)
	return Pairs{Src: v[:len(v)/2], Dst: v[len(v)/2:]}
}

// FuzzSamplers feeds arbitrary parameters to every sampler: none may panic,
// and whatever succeeds returns ids in range and the promised counts.
func FuzzSamplers(f *testing.F) {
	f.Add(int64(10), 2, 1.5, 3, []byte{1, 0, 2, 0, 9, 0})
	f.Add(int64(0), 0, 0.0, -1, []byte{0xff, 0xff})
	f.Add(int64(3), -5, math.NaN(), 100, []byte{})
	f.Add(int64(-7), 1, math.Inf(1), 0, []byte{3, 0})
	f.Fuzz(func(t *testing.T, numNodes int64, k int, amount float64, numPos int, b []byte) {
		// Keep the outputs small; the limits themselves are unit-tested.
		if k > 64 || numPos > 4096 || amount > 64 || numNodes > 1<<20 {
			t.Skip()
		}
		s := Stream{Seed: uint64(numNodes), Key: uint64(k)}
		src := ids(b)
		if p, err := (PerSourceUniform{K: k}).Sample(src, numNodes, s, 2); err == nil {
			require.Equal(t, len(src)*k, p.Len())
			requireNodes(t, p.Src, numNodes)
			requireNodes(t, p.Dst, numNodes)
		}
		if p, err := (Binary{Amount: amount}).Sample(numPos, numNodes, s, 2); err == nil {
			require.EqualValues(t, math.Ceil(float64(numPos)*amount), p.Len())
			requireNodes(t, p.Src, numNodes)
			requireNodes(t, p.Dst, numNodes)
		}
		if d, err := (Triplet{Amount: k}).Sample(numPos, numNodes, s, 2); err == nil {
			require.Len(t, d, numPos*k)
			requireNodes(t, d, numNodes)
		}
		if numNodes > 0 && numNodes <= 64 {
			idx := randomIndex(t, numNodes, len(b))
			if p, err := (GlobalUniform{K: k, ExcludeSelfLoops: amount > 1}).Sample(idx, numPos, s, 2); err == nil {
				require.LessOrEqual(t, p.Len(), numPos*k)
				for i := range p.Src {
					require.False(t, idx.HasEdge(p.Src[i], p.Dst[i]))
				}
			}
			if p, err := idx.Endpoints(src); err == nil {
				require.Equal(t, len(src), p.Len())
			}
			d := DGLEdgeSampler{Negative: PerSourceUniform{K: k}, Exclude: Exclude(numPos % 4), Reverse: Reverse{Half: int64(len(b) / 2)}}
			if c, err := d.Batch(idx, src, s, 2); err == nil {
				require.Equal(t, len(src), c.Pos.Len())
				require.Equal(t, len(src)*k, c.Neg.Len())
			}
			pos := halves(b)
			ps := PyGLinkSampler{Mode: PyGMode(k % 4), Amount: amount, Disjoint: numPos%2 == 0}
			if c, err := ps.Batch(pos, numNodes, s, 2); err == nil {
				require.Equal(t, pos.Len(), c.NumPos)
			}
		}
	})
}

func requireNodes(t *testing.T, v []int64, n int64) {
	t.Helper()
	for i, x := range v {
		require.True(t, x >= 0 && x < n, "id[%d] = %d outside [0, %d)", i, x, n)
	}
}

// FuzzSeeds feeds arbitrary pairs to the seed builders: none may panic, and
// on success every relabelled index points back at its original id.
func FuzzSeeds(f *testing.F) {
	f.Add(int64(12), []byte{7, 0, 3, 0, 2, 0, 9, 0}, []byte{1, 0, 4, 0}, 2, false)
	f.Add(int64(5), []byte{1, 0, 0xfe, 0xff}, []byte{}, 0, true)
	f.Fuzz(func(t *testing.T, numNodes int64, pb, nb []byte, amount int, disjoint bool) {
		pos, neg := halves(pb), halves(nb)
		back := func(nodes, index, orig []int64) {
			require.Len(t, index, len(orig))
			for i, l := range index {
				require.Equal(t, orig[i], nodes[l])
			}
		}
		if c, err := CompactDGL(pos, neg, numNodes); err == nil {
			back(c.Nodes, c.Pos.Src, pos.Src)
			back(c.Nodes, c.Pos.Dst, pos.Dst)
			back(c.Nodes, c.Neg.Src, neg.Src)
			back(c.Nodes, c.Neg.Dst, neg.Dst)
		}
		if s, err := PyGBinarySeeds(pos, neg, numNodes, disjoint); err == nil {
			back(s.Nodes, s.Index.Src, append(append([]int64{}, pos.Src...), neg.Src...))
			back(s.Nodes, s.Index.Dst, append(append([]int64{}, pos.Dst...), neg.Dst...))
		}
		negDst := ids(nb)
		if s, err := PyGTripletSeeds(pos, negDst, amount, numNodes, disjoint); err == nil {
			back(s.Nodes, s.SrcIndex, pos.Src)
			back(s.Nodes, s.DstPosIndex, pos.Dst)
			for f, l := range s.DstNegIndex {
				i, j := f/amount, f%amount
				want := negDst[f]
				if disjoint {
					want = negDst[j*s.NumPos+i]
				}
				require.Equal(t, want, s.Nodes[l])
			}
		}
	})
}

// FuzzExclude feeds arbitrary seeds and reverse maps to ExcludeReverseID.
func FuzzExclude(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0}, []byte{3, 0, 4, 0, 5, 0, 0, 0, 1, 0, 2, 0}, int64(0))
	f.Add([]byte{1, 0}, []byte{}, int64(3))
	f.Add([]byte{1, 0}, []byte{1, 0}, int64(-1))
	f.Fuzz(func(t *testing.T, sb, mb []byte, half int64) {
		seeds := ids(sb)
		rev := Reverse{Half: half}
		if len(mb) > 0 {
			rev.Map = ids(mb)
		}
		out, err := ExcludeReverseID(seeds, rev)
		if err != nil {
			return
		}
		require.Len(t, out, 2*len(seeds))
		require.Equal(t, seeds, out[:len(seeds)])
		for i, e := range seeds {
			r := out[len(seeds)+i]
			if rev.Map != nil {
				require.Equal(t, rev.Map[e], r)
			} else {
				require.Equal(t, e, rev.of(r), "the half swap is an involution")
			}
		}
	})
}

package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/mem"
)

// genDigest hashes the edges of two small R-MAT graphs (permuted, one
// undirected, one with rejection) and two feature matrices with labels.
func genDigest(t testing.TB) string {
	h := sha256.New()
	for _, r := range []RMAT{
		{Scale: 10, EdgeFactor: 8, A: DefaultA, B: DefaultB, C: DefaultC, Seed: 5, Permute: true, Undirected: true},
		{NumNodes: 1500, EdgeFactor: 6, A: DefaultA, B: DefaultB, C: DefaultC, Seed: 6, Permute: true},
	} {
		src, dst, err := r.Edges()
		if err != nil {
			t.Fatal(err)
		}
		h.Write(mem.Bytes(src))
		h.Write(mem.Bytes(dst))
	}
	for _, dt := range []mem.DType{mem.Float32, mem.BFloat16} {
		feat, labels, err := Features{Dim: 7, NumClasses: 5, DType: dt, Seed: 8}.Generate(700)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(feat.Data)
		h.Write(mem.Bytes(labels))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The generators' outputs are pinned: presets promise the same dataset for
// the same seed on every machine, so a change to the streams must be seen.
func TestOutputsPinned(t *testing.T) {
	require.Equal(t, "d1df06c6ec69177248ad31f4a8f6286d8106bbb9d873a1107b0a2958399921d3", genDigest(t))
}

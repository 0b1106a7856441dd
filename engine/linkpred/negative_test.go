package linkpred

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleAll runs every sampler once on a fixed input and returns the
// results, so that runs under different thread counts and chunkings can be
// compared whole.
func sampleAll(t *testing.T, idx *EdgeIndex, s Stream, threads int) []any {
	t.Helper()
	src := make([]int64, 2000)
	for i := range src {
		src[i] = int64(i*7) % idx.NumNodes()
	}
	w := make([]float64, idx.NumNodes())
	for i := range w {
		w[i] = float64(i%5) + 0.5
	}
	nw, err := NewNodeWeights(w)
	require.NoError(t, err)
	var out []any
	ps, err := PerSourceUniform{K: 3}.Sample(src, idx.NumNodes(), s, threads)
	require.NoError(t, err)
	gl, err := GlobalUniform{K: 2, ExcludeSelfLoops: true}.Sample(idx, 3000, s, threads)
	require.NoError(t, err)
	gr, err := GlobalUniform{K: 2, Replace: true}.Sample(idx, 3000, s, threads)
	require.NoError(t, err)
	bi, err := Binary{Amount: 1.7}.Sample(5000, idx.NumNodes(), s, threads)
	require.NoError(t, err)
	bw, err := Binary{Amount: 1, Weights: nw}.Sample(5000, idx.NumNodes(), s, threads)
	require.NoError(t, err)
	tr, err := Triplet{Amount: 4}.Sample(2000, idx.NumNodes(), s, threads)
	require.NoError(t, err)
	tw, err := Triplet{Amount: 2, Weights: nw}.Sample(2000, idx.NumNodes(), s, threads)
	require.NoError(t, err)
	return append(out, ps, gl, gr, bi, bw, tr, tw)
}

// Results depend only on (seed, batch key, position): not on threads nor
// on how positions are chunked.
func TestNegativesIndependentOfThreadsAndChunking(t *testing.T) {
	idx := randomIndex(t, 500, 8000)
	s := Stream{Seed: 42, Key: 7}
	want := sampleAll(t, idx, s, 1)
	for _, g := range []int{1, 3, 64, 1 << 20} {
		for _, threads := range []int{1, 2, 5, 16} {
			restore := setGrain(g)
			got := sampleAll(t, idx, s, threads)
			restore()
			require.Equal(t, want, got, "grain %d threads %d", g, threads)
		}
	}
	// Another seed or batch key gives other negatives.
	for _, o := range []Stream{{Seed: 43, Key: 7}, {Seed: 42, Key: 8}} {
		got := sampleAll(t, idx, o, 0)
		for i := range want {
			require.NotEqual(t, want[i], got[i], "stream %+v result %d", o, i)
		}
	}
}

// A prefix of the positives gets a prefix of the negatives: each draw is
// tied to its position, so a batch does not depend on what follows it.
func TestNegativesArePrefixStable(t *testing.T) {
	s := Stream{Seed: 1, Key: 2}
	src := []int64{4, 8, 15, 16, 23, 42}
	long, err := PerSourceUniform{K: 2}.Sample(src, 50, s, 0)
	require.NoError(t, err)
	short, err := PerSourceUniform{K: 2}.Sample(src[:3], 50, s, 0)
	require.NoError(t, err)
	require.Equal(t, long.Dst[:6], short.Dst)
	require.Equal(t, []int64{4, 4, 8, 8, 15, 15, 16, 16, 23, 23, 42, 42}, long.Src, "DGL repeats each source k times")

	bl, err := Binary{Amount: 2}.Sample(10, 50, s, 0)
	require.NoError(t, err)
	bs, err := Binary{Amount: 2}.Sample(4, 50, s, 0)
	require.NoError(t, err)
	require.Equal(t, bl.Src[:8], bs.Src)
	require.Equal(t, bl.Dst[:8], bs.Dst)
}

func TestGlobalUniformDGLSemantics(t *testing.T) {
	idx := randomIndex(t, 200, 3000)
	s := Stream{Seed: 3, Key: 4}
	for _, replace := range []bool{false, true} {
		for _, self := range []bool{false, true} {
			g, err := GlobalUniform{K: 3, ExcludeSelfLoops: self, Replace: replace}.Sample(idx, 500, s, 0)
			require.NoError(t, err)
			require.LessOrEqual(t, g.Len(), 1500)
			require.Greater(t, g.Len(), 1400, "a sparse graph gives (almost) all negatives")
			seen := map[[2]int64]bool{}
			for i := range g.Src {
				u, v := g.Src[i], g.Dst[i]
				require.False(t, idx.HasEdge(u, v), "negative %d (%d->%d) is an edge", i, u, v)
				if self {
					require.NotEqual(t, u, v, "negative %d is a self-loop", i)
				}
				if !replace {
					require.False(t, seen[[2]int64{u, v}], "negative %d (%d->%d) repeats", i, u, v)
					seen[[2]int64{u, v}] = true
				}
			}
			if !replace {
				require.True(t, slices.IsSortedFunc(indexes(g.Len()), func(a, b int) int {
					if c := cmp.Compare(g.Src[a], g.Src[b]); c != 0 {
						return c
					}
					return cmp.Compare(g.Dst[a], g.Dst[b])
				}), "without replacement DGL returns the pairs sorted")
			}
		}
	}
	// A complete graph (with self-loops) has no negative at all.
	var src, dst []int64
	for u := range int64(4) {
		for v := range int64(4) {
			src, dst = append(src, u), append(dst, v)
		}
	}
	g, err := GlobalUniform{K: 2}.Sample(mustIndex(t, src, dst, 4), 5, s, 0)
	require.NoError(t, err)
	require.Zero(t, g.Len())
	// Nothing asked, nothing drawn.
	g, err = GlobalUniform{K: 2}.Sample(idx, 0, s, 0)
	require.NoError(t, err)
	require.Zero(t, g.Len())
}

// SampleAsking (all trials drawn up front, asked in one call) keeps
// Sample's pairs bit for bit: sparse and dense graphs (where slots fail
// and later trials matter), with and without self-loops and replacement,
// under any thread count; it asks once, not the rejected self-loops, and
// even when the batch draws nothing.
func TestGlobalUniformSampleAskingEqualsSample(t *testing.T) {
	for _, tc := range []struct {
		n int64
		e int
	}{{200, 3000}, {30, 600}, {12, 140}} {
		idx := randomIndex(t, tc.n, tc.e)
		for _, replace := range []bool{false, true} {
			for _, self := range []bool{false, true} {
				for _, numPos := range []int{0, 1, 37, 400} {
					n := GlobalUniform{K: 3, ExcludeSelfLoops: self, Replace: replace}
					s := Stream{Seed: 8, Key: uint64(numPos)}
					want, err := n.Sample(idx, numPos, s, 3)
					require.NoError(t, err)
					calls := 0
					got, err := n.SampleAsking(idx.NumNodes(), idx.NumEdges(), numPos, s, 2, func(c Pairs) ([]bool, error) {
						calls++
						out := make([]bool, c.Len())
						for i := range out {
							require.False(t, self && c.Src[i] == c.Dst[i], "a rejected self-loop is asked")
							out[i] = idx.HasEdge(c.Src[i], c.Dst[i])
						}
						return out, nil
					})
					require.NoError(t, err)
					require.Equal(t, 1, calls)
					require.Equal(t, want, got, "n=%d e=%d replace=%v self=%v pos=%d", tc.n, tc.e, replace, self, numPos)
				}
			}
		}
	}
	idx := randomIndex(t, 30, 100)
	n := GlobalUniform{K: 2}
	_, err := n.SampleAsking(30, 100, 5, Stream{}, 0, func(c Pairs) ([]bool, error) { return make([]bool, c.Len()-1), nil })
	require.ErrorContains(t, err, "answered")
	_, err = n.SampleAsking(30, 100, 5, Stream{}, 0, nil)
	require.ErrorContains(t, err, "edge query is nil")
	_, err = n.SampleAsking(0, 100, 5, Stream{}, 0, func(Pairs) ([]bool, error) { return nil, nil })
	require.ErrorContains(t, err, "no nodes")
	_, err = GlobalUniform{}.SampleAsking(idx.NumNodes(), idx.NumEdges(), 5, Stream{}, 0, func(Pairs) ([]bool, error) { return nil, nil })
	require.ErrorContains(t, err, "k = 0")
}

func indexes(n int) []int {
	x := make([]int, n)
	for i := range x {
		x[i] = i
	}
	return x
}

// globalSlots follows DGL's _calc_redundancy: values from DGL 2.1
// (int(num_samples * (1 + redundancy))).
func TestGlobalSlotsMatchesDGL(t *testing.T) {
	cases := []struct {
		want, edges int64
		pairs       float64
		slots       int64
	}{
		{100, 6, 100, 114},
		{6, 6, 100, 8},
		{1000, 3000, 40000, 1109},
	}
	for _, c := range cases {
		require.Equal(t, c.slots, globalSlots(c.want, c.edges, c.pairs), "%+v", c)
	}
	require.Equal(t, int64(7), globalSlots(7, 10, 10))
	require.Greater(t, globalSlots(1<<33, 1<<40-1, 1<<40), int64(4*maxNegatives))
}

func TestNegativeErrorsNameTheInput(t *testing.T) {
	s := Stream{}
	idx := mustIndex(t, dglSrc, dglDst, 10)
	cases := []struct {
		err  error
		want string
	}{
		{second(PerSourceUniform{K: 0}.Sample([]int64{1}, 10, s, 0)), "k = 0, must be positive"},
		{second(PerSourceUniform{K: 1}.Sample([]int64{1, 10}, 10, s, 0)), "src[1] = 10 is not a node id (graph has 10 nodes)"},
		{second(PerSourceUniform{K: 1}.Sample([]int64{1}, 0, s, 0)), "num_nodes = 0"},
		{second(PerSourceUniform{K: 1 << 40}.Sample([]int64{1}, 10, s, 0)), "too many negatives"},
		{second(GlobalUniform{K: -1}.Sample(idx, 1, s, 0)), "k = -1"},
		{second(GlobalUniform{K: 1}.Sample(nil, 1, s, 0)), "adjacency is nil"},
		{second(GlobalUniform{K: 1}.Sample(idx, -4, s, 0)), "number of positive edges = -4"},
		{second(Binary{Amount: 0}.Sample(1, 10, s, 0)), "amount = 0, must be positive"},
		{second(Binary{Amount: math.NaN()}.Sample(1, 10, s, 0)), "amount = NaN"},
		{second(Binary{Amount: math.Inf(1)}.Sample(1, 10, s, 0)), "amount = +Inf"},
		{second(Binary{Amount: 1e30}.Sample(1, 10, s, 0)), "too many negatives"},
		{second(Binary{Amount: 1}.Sample(-1, 10, s, 0)), "number of positive edges = -1"},
		{second(Binary{Amount: 1, Weights: mustWeights(t, 1, 2)}.Sample(1, 10, s, 0)), "the weight vector has 2 entries for 10 nodes"},
		{second(Triplet{Amount: 0}.Sample(1, 10, s, 0)), "amount = 0"},
		{second(Triplet{Amount: 1}.Sample(1, -3, s, 0)), "num_nodes = -3"},
		{second(Triplet{Amount: 1 << 40}.Sample(1, 10, s, 0)), "too many negatives"},
		// A product that overflows int64 is still too many.
		{second(Triplet{Amount: 1 << 34}.Sample(1<<31, 10, s, 0)), "too many negatives"},
		{second(GlobalUniform{K: 1 << 34}.Sample(idx, 1<<31, s, 0)), "too many negatives"},
	}
	for _, c := range cases {
		require.ErrorContains(t, c.err, c.want)
	}
	for _, w := range []struct {
		w    []float64
		want string
	}{
		{nil, "node weights are empty"},
		{[]float64{1, -1}, "node weight[1] = -1"},
		{[]float64{math.NaN()}, "node weight[0] = NaN"},
		{[]float64{math.Inf(1)}, "node weight[0] = +Inf"},
		{[]float64{0, 0}, "node weights sum to 0"},
		{[]float64{math.MaxFloat64, math.MaxFloat64}, "node weights sum to +Inf"},
	} {
		_, err := NewNodeWeights(w.w)
		require.ErrorContains(t, err, w.want)
	}
}

func second[T any](_ T, err error) error { return err }

func mustWeights(t testing.TB, w ...float64) *NodeWeights {
	t.Helper()
	nw, err := NewNodeWeights(w)
	require.NoError(t, err)
	return nw
}

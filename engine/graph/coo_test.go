package graph

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// pieces is an edge list as uneven batches, each loaded as several pieces,
// counting how often each batch is loaded.
type pieces struct {
	src, dst []int64
	w        []float32
	bounds   []int64 // batch i is [bounds[i], bounds[i+1])
	loads    []int
}

func newPieces(src, dst []int64, w []float32, rng *rand.Rand) *pieces {
	p := &pieces{src: src, dst: dst, w: w, bounds: []int64{0}}
	for p.bounds[len(p.bounds)-1] < int64(len(src)) {
		p.bounds = append(p.bounds, min(p.bounds[len(p.bounds)-1]+1+rng.Int64N(40), int64(len(src))))
	}
	p.loads = make([]int, len(p.bounds)-1)
	return p
}

func (p *pieces) NumBatches() int       { return len(p.bounds) - 1 }
func (p *pieces) BatchRows(i int) int64 { return p.bounds[i+1] - p.bounds[i] }
func (p *pieces) Weighted() bool        { return p.w != nil }

func (p *pieces) Load(i int, fn func(EdgePiece) error) error {
	p.loads[i]++ // each batch is loaded by one goroutine at a time
	lo, hi := p.bounds[i], p.bounds[i+1]
	for lo < hi { // in pieces of up to 7 edges
		end := min(lo+7, hi)
		e := EdgePiece{Src: p.src[lo:end], Dst: p.dst[lo:end]}
		if p.w != nil {
			e.Weights = p.w[lo:end]
		}
		if err := fn(e); err != nil {
			return err
		}
		lo = end
	}
	return nil
}

// A list read in uneven batches of several pieces, by groups on several
// threads, builds the CSC FromCOO builds (the reference's), for every
// option; each batch is read twice, three times without a node count.
func TestBuildCOOFromBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sorted := range []bool{false, true} {
		n := int64(50)
		e := 2000
		src, dst, w := make([]int64, e), make([]int64, e), make([]float32, e)
		for i := range src {
			src[i], dst[i], w[i] = rng.Int64N(n), rng.Int64N(n), float32(i)
		}
		if sorted {
			for i := range dst {
				dst[i] = int64(i) * n / int64(e)
			}
		}
		for _, opt := range []COOOptions{
			{}, {NumNodes: n + 3}, {RemoveSelfLoops: true}, {RemoveDuplicates: true, Threads: 3},
			{NumNodes: n, RemoveSelfLoops: true, RemoveDuplicates: true, Threads: 1}, {Threads: 5},
		} {
			for _, weights := range [][]float32{nil, w} {
				want := naiveCOO(src, dst, weights, opt)
				p := newPieces(src, dst, weights, rng)
				got, err := BuildCOO(p, opt, nil)
				require.NoError(t, err)
				requireSameCSC(t, want, got)
				reads := 2
				if opt.NumNodes <= 0 {
					reads = 3
				}
				for i, l := range p.loads {
					require.Equal(t, reads, l, "batch %d", i)
				}
				// Sorted and nothing dropped: edge ids are the positions.
				require.Equal(t, sorted && !opt.RemoveSelfLoops && !opt.RemoveDuplicates, got.EdgeIDs == nil, "%+v", opt)
			}
		}
	}
}

// reserve is told the counters' bytes, then the counters' and the CSC's,
// before each is allocated; its error stops the build.
func TestBuildCOOReserve(t *testing.T) {
	src, dst := []int64{0, 1, 2, 3, 1}, []int64{1, 1, 2, 0, 3}
	var calls [][3]int64
	g, err := BuildCOO(newPieces(src, dst, nil, rand.New(rand.NewPCG(1, 1))), COOOptions{NumNodes: 4, Threads: 1},
		func(n, e, bytes int64) error {
			calls = append(calls, [3]int64{n, e, bytes})
			return nil
		})
	require.NoError(t, err)
	counters := int64(8 * 4)
	// Unsorted: edge ids stored; compact sources.
	require.Equal(t, [][3]int64{{4, 5, counters}, {4, 5, counters + 8*5 + 4*5 + 8*5}}, calls)
	require.NotNil(t, g.EdgeIDs)

	stop := errors.New("no room")
	for step := range 2 {
		calls := 0
		_, err := BuildCOO(newPieces(src, dst, nil, rand.New(rand.NewPCG(1, 1))), COOOptions{NumNodes: 4, Threads: 1},
			func(_, _, _ int64) error {
				calls++
				if calls > step {
					return stop
				}
				return nil
			})
		require.ErrorIs(t, err, stop)
		require.Equal(t, step+1, calls)
	}
}

// An edge's error names its position in the whole list, whichever batch
// and group hold it; the first bad edge in list order is the one named;
// an error of a batch's loading is returned as it is.
func TestBuildCOOErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src, dst := make([]int64, 500), make([]int64, 500)
	for i := range src {
		src[i], dst[i] = rng.Int64N(10), rng.Int64N(10)
	}
	src[321], dst[460] = 12, -1
	for _, threads := range []int{1, 4} {
		_, err := BuildCOO(newPieces(src, dst, nil, rng), COOOptions{NumNodes: 10, Threads: threads}, nil)
		require.EqualError(t, err, "graph: src[321]=12 is out of range [0, 10) (NumNodes=10)")
		_, err = BuildCOO(newPieces(src, dst, nil, rng), COOOptions{Threads: threads}, nil)
		require.EqualError(t, err, "graph: dst[460]=-1 is negative")
	}
	src[321], dst[460] = 1, 1
	p := newPieces(src, dst, nil, rng)
	last := p.NumBatches() - 1
	_, err := BuildCOO(lying{p}, COOOptions{NumNodes: 10}, nil) // the last batch holds fewer edges than it said
	require.EqualError(t, err, fmt.Sprintf("graph: edge batch %d has %d edges, %d expected", last, p.BatchRows(last), p.BatchRows(last)+1))

	bad := errors.New("batch 2 is damaged")
	_, err = BuildCOO(failing{newPieces(src, dst, nil, rng), 2, bad}, COOOptions{NumNodes: 10, Threads: 2}, nil)
	require.ErrorIs(t, err, bad)
}

// lying says its last batch holds one edge more than it does.
type lying struct{ *pieces }

func (l lying) BatchRows(i int) int64 {
	if i == l.NumBatches()-1 {
		return l.pieces.BatchRows(i) + 1
	}
	return l.pieces.BatchRows(i)
}

// failing fails loading batch i.
type failing struct {
	*pieces
	i   int
	err error
}

func (f failing) Load(i int, fn func(EdgePiece) error) error {
	if i == f.i {
		return f.err
	}
	return f.pieces.Load(i, fn)
}

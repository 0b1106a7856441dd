package sample

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/graphferry/graphferry/engine/comm"
	"github.com/graphferry/graphferry/engine/mem"
	"github.com/graphferry/graphferry/engine/partition"
)

func mustRuntime(t testing.TB, p *partition.Partitioned, threads int) *Runtime {
	t.Helper()
	rt, err := NewRuntime(p, comm.NewLocal(p.NumPatches()), RuntimeOptions{Threads: threads})
	require.NoError(t, err)
	return rt
}

// walkRequest returns the WalkRequest of a walk config of schemeConfigs.
func walkRequest(o options) WalkRequest {
	return WalkRequest{Length: walkLen, RestartProb: walkRestart, Biased: o.Biased, ExcludeEdges: o.ExcludeEdges, Seed: o.Seed}
}

// One runtime serves every request, walks included (with no fan-outs), and
// gives what a Sampler bound to each request gives, the seed included.
func TestRuntimeServesEveryRequest(t *testing.T) {
	g, batches, keys, exclude := schemeFixture()
	part := rangePartition(g, 3)
	in := toInternal(part, batches)
	rt := mustRuntime(t, part, 2)
	for _, c := range schemeConfigs(exclude) {
		t.Run(c.name, func(t *testing.T) {
			want := runScheme(t, part, c, c.opt, batches, keys, false)
			if c.walk {
				w, err := rt.RandomWalk(t.Context(), walkRequest(c.opt), in, keys)
				require.NoError(t, err)
				require.Equal(t, want, walksToOriginal(part, w))
				return
			}
			res, err := rt.Sample(t.Context(), c.opt.request(), in, keys)
			require.NoError(t, err)
			require.Equal(t, want, toOriginal(part, res))
			rt.Recycle(res...)
		})
	}
}

func TestRequestErrorsNameTheField(t *testing.T) {
	cases := []struct {
		req  Request
		want string
	}{
		{Request{}, "sample: Request.Fanouts is empty (want one fan-out per hop)"},
		{Request{Fanouts: []int{3, 0, -2}}, "sample: Request.Fanouts[2] = -2 is invalid (want >= 0, or -1 for all neighbours)"},
		{Request{Fanouts: []int{1}, Frontier: 9}, "sample: Request.Frontier = 9 is invalid (want FrontierAll (0) or FrontierNew (1))"},
		{Request{Fanouts: []int{1}, Scheme: 4}, "sample: Request.Scheme = 4 is invalid (want NodeWise (0), LayerWise (1) or Labor (2))"},
		{Request{Fanouts: []int{1}, LayerWithoutReplacement: true}, "sample: Request.LayerWithoutReplacement needs Request.Scheme = LayerWise"},
	}
	rt := mustRuntime(t, rangePartition(tinyGraph(), 2), 1)
	for _, c := range cases {
		assert.EqualError(t, c.req.Validate(), c.want)
		_, err := rt.Sample(t.Context(), c.req, [][]int64{{0}}, []uint64{0})
		assert.EqualError(t, err, c.want)
		_, err = rt.Bind(c.req)
		assert.EqualError(t, err, c.want)
	}
	assert.NoError(t, Request{Fanouts: []int{0, -1, 5}}.Validate())

	// Biased needs weights (tinyGraph has none), for sampling and walks.
	_, err := rt.Sample(t.Context(), Request{Fanouts: []int{1}, Biased: true}, [][]int64{{0}}, []uint64{0})
	assert.EqualError(t, err, "sample: Request.Biased needs edge weights, but partition.Graph.Weights is nil")
	_, err = rt.Bind(Request{Fanouts: []int{1}, Biased: true})
	assert.EqualError(t, err, "sample: Request.Biased needs edge weights, but partition.Graph.Weights is nil")
	_, err = rt.RandomWalk(t.Context(), WalkRequest{Length: 2, Biased: true}, [][]int64{{0}}, []uint64{0})
	assert.EqualError(t, err, "sample: WalkRequest.Biased needs edge weights, but partition.Graph.Weights is nil")
	_, err = rt.RandomWalk(t.Context(), WalkRequest{Length: -3}, [][]int64{{0}}, []uint64{0})
	assert.EqualError(t, err, "sample: WalkRequest.Length = -3 is negative")
	_, err = rt.RandomWalk(t.Context(), WalkRequest{Length: 1, RestartProb: -0.5}, [][]int64{{0}}, []uint64{0})
	assert.EqualError(t, err, "sample: WalkRequest.RestartProb = -0.5 is not in [0, 1]")

	var nilRT *Runtime
	_, err = nilRT.Sample(context.Background(), Request{Fanouts: []int{1}}, nil, nil)
	assert.Error(t, err)
	_, err = nilRT.RandomWalk(context.Background(), WalkRequest{}, nil, nil)
	assert.Error(t, err)
	_, err = nilRT.Fork(1)
	assert.Error(t, err)
}

// Fan-out 0 samples no neighbour: the hop's block has its dst nodes and no
// edge, and the next hop's frontier follows the usual rules (FrontierAll:
// every node so far; FrontierNew: the nodes the empty hop added, none).
func TestFanoutZero(t *testing.T) {
	for _, p := range []int{1, 3} {
		rt := mustRuntime(t, rangePartition(tinyGraph(), p), 2)
		res, err := rt.Sample(t.Context(), Request{Fanouts: []int{0, -1}}, [][]int64{{2, 0}}, []uint64{7})
		require.NoError(t, err)
		r := res[0]
		assert.Equal(t, []int64{2, 0, 3, 1}, r.Nodes)
		assert.Equal(t, []int64{2, 0, 2}, r.HopCounts)
		assert.Equal(t, []Block{
			{Indptr: []int64{0, 0, 0}, Indices: []int64{}, EdgeIDs: []int64{}, NumDst: 2, NumSrc: 2},
			{Indptr: []int64{0, 2, 5}, Indices: []int64{1, 2, 3, 0, 2}, EdgeIDs: []int64{105, 106, 100, 101, 102}, NumDst: 2, NumSrc: 4},
		}, r.Blocks, "P=%d", p)

		res, err = rt.Sample(t.Context(), Request{Fanouts: []int{-1, 0, 5}, Frontier: FrontierNew}, [][]int64{{2, 0}}, []uint64{7})
		require.NoError(t, err)
		r = res[0]
		assert.Equal(t, []int64{2, 0, 3, 1}, r.Nodes)
		assert.Equal(t, []int64{2, 2, 0, 0}, r.HopCounts)
		assert.Equal(t, Block{Indptr: []int64{0, 0, 0}, Indices: []int64{}, EdgeIDs: []int64{}, NumDst: 2, NumSrc: 4, DstOffset: 2}, r.Blocks[1])
		assert.Equal(t, Block{Indptr: []int64{0}, Indices: []int64{}, EdgeIDs: []int64{}, NumDst: 0, NumSrc: 4, DstOffset: 4}, r.Blocks[2])

		// Every scheme: a 0 hop is empty (checked by checkScheme's
		// fan-out 0 rule for every config of schemeConfigs, and here for
		// layer-wise without replacement, whose draw keeps a heap of 0).
		res, err = rt.Sample(t.Context(), Request{Fanouts: []int{0, 0}, Scheme: LayerWise, LayerWithoutReplacement: true, Replace: true},
			[][]int64{{2, 0}}, []uint64{7})
		require.NoError(t, err)
		assert.Equal(t, []int64{2, 0}, res[0].Nodes)
		assert.Equal(t, []int64{0, 0, 0}, res[0].Blocks[1].Indptr)
	}
}

// The filter state of a request (excluded-edge bitmap, layer-wise weights)
// is built once and shared by the runtime's forks; a few distinct filters
// are kept, the least recently used dropped.
func TestFilterCache(t *testing.T) {
	g, _, _, exclude := schemeFixture()
	rt := mustRuntime(t, rangePartition(g, 2), 2)
	fork, err := rt.Fork(1)
	require.NoError(t, err)
	a := rt.filterFor(false, exclude, 1)
	require.Same(t, a, fork.filterFor(false, exclude, 1))
	require.NotSame(t, a, rt.filterFor(true, exclude, 1), "biased is part of the key")
	lists := [][]int64{{1}, {2}, {3}, {4}}
	for _, l := range lists {
		rt.filterFor(false, l, 1)
	}
	require.Len(t, rt.filters, maxFilters)
	require.NotSame(t, a, rt.filterFor(false, exclude, 1), "evicted, then rebuilt")

	// Layer-wise weights are computed once per filter.
	c1, err := rt.begin(Request{Fanouts: []int{3}, Scheme: LayerWise, ExcludeEdges: exclude}, true, "Request")
	require.NoError(t, err)
	c2, err := fork.begin(Request{Fanouts: []int{5}, Scheme: LayerWise, ExcludeEdges: exclude, Seed: 9}, true, "Request")
	require.NoError(t, err)
	require.Equal(t, &c1.nodeW[0], &c2.nodeW[0])
	require.NotNil(t, c1.excl)
}

// rankView is one process's view of a process-per-rank communicator: it
// runs only its own rank over a shared in-process exchange, as a rank over
// torch.distributed would.
type rankView struct {
	*comm.Local
	rank int
}

func (v rankView) LocalRanks() []int { return []int{v.rank} }

func (v rankView) Dup() (comm.Comm, error) { return nil, errors.New("not supported") }

// With one rank per "process", each process samples its own batches, one
// per wave, and gets what a single process running every rank gets.
func TestOneRankPerProcess(t *testing.T) {
	g, batches, keys, exclude := schemeFixture()
	const ranks = 3
	part := renumbered(g, func() []int {
		a := make([]int, g.NumNodes)
		for v := range a {
			a[v] = v % ranks
		}
		return a
	}(), ranks)
	in := toInternal(part, batches)
	for _, req := range []Request{
		{Fanouts: []int{4, 3}, Seed: 5},
		{Fanouts: []int{30, 0, 20}, Scheme: LayerWise, ExcludeEdges: exclude, Seed: 6},
	} {
		single := mustRuntime(t, part, 2)
		want, err := single.Sample(t.Context(), req, in, keys)
		require.NoError(t, err)
		// Batch b goes to process b % ranks; every process runs the same
		// number of waves (here 2 batches each for 5 batches: the last
		// process gets one, then joins a wave with none).
		shared := comm.NewLocal(ranks)
		got := make([]*Result, len(in))
		var wg sync.WaitGroup
		errs := make([]error, ranks)
		for r := range ranks {
			var mine [][]int64
			var myKeys []uint64
			var idx []int
			for b := r; b < len(in); b += ranks {
				mine, myKeys, idx = append(mine, in[b]), append(myKeys, keys[b]), append(idx, b)
			}
			rt, err := NewRuntime(part, rankView{shared, r}, RuntimeOptions{Threads: 1})
			require.NoError(t, err)
			require.Equal(t, []int{r}, rt.LocalRanks())
			wg.Add(1)
			go func() {
				defer wg.Done()
				if len(mine) < 2 { // keep the waves paired: an empty wave
					var res []*Result
					res, errs[r] = rt.Sample(t.Context(), req, mine, myKeys)
					if errs[r] == nil {
						for i, x := range res {
							got[idx[i]] = x
						}
						_, errs[r] = rt.Sample(t.Context(), req, [][]int64{{}}, []uint64{0})
					}
					return
				}
				res, err := rt.Sample(t.Context(), req, mine, myKeys)
				errs[r] = err
				for i, x := range res {
					got[idx[i]] = x
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, want, got)
	}
}

// A comm whose process runs no rank, or ranks out of range, is refused.
type badRanks struct {
	*comm.Local
	ranks []int
}

func (b badRanks) LocalRanks() []int { return b.ranks }

func TestLocalRanksChecked(t *testing.T) {
	p := rangePartition(tinyGraph(), 2)
	for _, ranks := range [][]int{nil, {2}, {0, 0}, {-1}} {
		_, err := NewRuntime(p, badRanks{comm.NewLocal(2), ranks}, RuntimeOptions{})
		assert.Error(t, err, "%v", ranks)
	}
}

// Messages in memory the host cannot read are refused by the host stages
// (a device backend reads its own).
func TestDeviceMessageRefused(t *testing.T) {
	_, err := messageInt64s(mem.DeviceBuffer(0x1000, 16, 0))
	assert.EqualError(t, err, "mem: the message is device:0 memory, which the host cannot read in place")
	m, err := messageInt64s(mem.PinnedBuffer(int64Bytes([]int64{4, 5})))
	require.NoError(t, err)
	assert.Equal(t, []int64{4, 5}, m)
}

// Exchange runs one all-to-all of the runtime's one rank, paired with the
// other ranks' calls; a runtime over several local ranks, or messages for
// the wrong number of ranks, are refused.
func TestExchange(t *testing.T) {
	p := rangePartition(tinyGraph(), 2)
	shared := comm.NewLocal(2)
	got := make([][]int64, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		rt, err := NewRuntime(p, rankView{shared, r}, RuntimeOptions{Threads: 1})
		require.NoError(t, err)
		_, err = rt.Exchange(t.Context(), []mem.Buffer{message([]int64{1})})
		require.ErrorContains(t, err, "1 messages for 2 ranks")
		wg.Add(1)
		go func() {
			defer wg.Done()
			send := []mem.Buffer{message([]int64{int64(10*r + 0)}), message([]int64{int64(10*r + 1)})}
			recv, err := rt.Exchange(t.Context(), send)
			if errs[r] = err; err == nil {
				for _, b := range recv {
					v, err := messageInt64s(b)
					errs[r] = errors.Join(errs[r], err)
					got[r] = append(got[r], v...)
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Equal(t, [][]int64{{0, 10}, {1, 11}}, got)
	local, err := NewRuntime(p, comm.NewLocal(2), RuntimeOptions{})
	require.NoError(t, err)
	_, err = local.Exchange(t.Context(), make([]mem.Buffer, 2))
	require.ErrorContains(t, err, "one local rank")
}

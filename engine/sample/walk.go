package sample

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/graphferry/graphferry/engine/bounds"
	"github.com/graphferry/graphferry/engine/feature"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/mem"
)

// WalkResult is the random walks of one batch, one walker per seed.
type WalkResult struct {
	// Traces is len(seeds) x (length+1), row-major, internal node ids: row i
	// starts with seed i, then the node after each step; -1 after a dead
	// end (a node with no neighbour to step to).
	Traces []int64
	// EdgeIDs is len(seeds) x length: the original id of the edge each step
	// took (u -> v stepping from v to its in-neighbour u), -1 for a restart
	// or after a dead end.
	EdgeIDs []int64
}

// walkHop is the hop field of step t's stream state: sampling hops are small,
// so walk streams never collide with sampling streams.
func walkHop(t int) uint64 { return 1<<63 | uint64(t) }

// walkScratch is one rank's memory for RandomWalk.
type walkScratch struct {
	cur, tasks, widx []int64
}

// RandomWalk runs one walker from every seed of every batch for
// req.Length steps along in-edges (from v to one of its in-neighbours, the
// direction Sample samples), up to len(LocalRanks()) batches at a time like
// Sample (batch start+i on local rank i). Each step is one CSP round: the
// shuffle sends every live walker's current node (and the walker's index)
// to the node's owner, the owner draws ONE neighbour (uniformly, or by
// weight when req.Biased; excluded edges are never taken), and the
// reshuffle carries back only the next node and its edge id.
//
// Restart: before each step a live walker goes back to its seed with
// probability req.RestartProb instead of stepping; the step's EdgeIDs entry
// is then -1. The coin is the first output of the stream keyed by
// (req.Seed, key, step, walker index), drawn on the requesting rank; the
// owner draws the neighbour from the same stream's later outputs. A walker
// at a node without candidate neighbours dies: the rest of its trace and
// edge ids are -1 (a dead walker does not restart).
//
// Seeds are internal ids; unlike Sample, a batch may repeat a seed (its
// walkers are independent). The result depends only on (req, keys[i], the
// seeds, the graph), never on the number of patches or threads.
func (rt *Runtime) RandomWalk(ctx context.Context, req WalkRequest, batches [][]int64, keys []uint64) ([]*WalkResult, error) {
	if rt == nil {
		return nil, errors.New("sample: RandomWalk on a nil *Runtime")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if len(keys) != len(batches) {
		return nil, fmt.Errorf("sample: len(keys) = %d does not match len(batches) = %d", len(keys), len(batches))
	}
	length, restartProb := req.Length, req.RestartProb
	n := rt.g.NumNodes
	// The traces and edge ids: B x (length+1) and B x length int64s, here
	// and in the caller's copy.
	var walkers uint64
	for _, seeds := range batches {
		walkers += uint64(len(seeds))
	}
	if err := bounds.Alloc(bounds.Mul(walkers, bounds.Mul(uint64(length)*2+1, 16)),
		fmt.Sprintf("sample: %d walks of length %d (their traces and edge ids)", walkers, length)); err != nil {
		return nil, err
	}
	for b, seeds := range batches {
		if int64(len(seeds))*int64(length+1) > math.MaxInt32 {
			return nil, fmt.Errorf("sample: batches[%d]: %d walks of length %d are too many", b, len(seeds), length)
		}
		for i, v := range seeds {
			if v < 0 || v >= n {
				return nil, fmt.Errorf("sample: batches[%d][%d] = %d is out of range [0, %d)", b, i, v, n)
			}
		}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := rt.begin(Request{Biased: req.Biased, ExcludeEdges: req.ExcludeEdges, Seed: req.Seed}, false, "WalkRequest")
	if err != nil {
		return nil, err
	}
	s.watch(ctx)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]*WalkResult, len(batches))
	size := len(rt.ranks)
	for start := 0; start < len(batches); start += size {
		end := min(start+size, len(batches))
		if err := s.walkWave(ctx, batches[start:end], keys[start:end], out[start:end], length, restartProb); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *call) walkWave(ctx context.Context, batches [][]int64, keys []uint64, out []*WalkResult, length int, restartProb float64) error {
	return runRanks(ctx, s.ranks, batches, keys, out,
		func(ctx context.Context, rank int, seeds []int64, key uint64, has bool) (res *WalkResult, err error) {
			// A fault reading the mapped CSC files is an error (runRank).
			if fault := feature.Guard(func() { res, err = s.walkRank(ctx, rank, seeds, key, has, length, restartProb) }); fault != nil {
				return nil, fault
			}
			return res, err
		})
}

// walkRank is one rank's part of one wave of walks: length rounds of
// shuffle -> step -> reshuffle, whether or not it has a batch.
func (s *call) walkRank(ctx context.Context, rank int, seeds []int64, key uint64, has bool, length int, restartProb float64) (*WalkResult, error) {
	ws := s.ws[rank]
	wk := &ws.wks
	nw := len(seeds)
	var res *WalkResult
	cur := wk.cur[:0]
	if has {
		res = &WalkResult{Traces: make([]int64, nw*(length+1)), EdgeIDs: make([]int64, nw*length)}
		for i := range res.Traces {
			res.Traces[i] = -1
		}
		for i := range res.EdgeIDs {
			res.EdgeIDs[i] = -1
		}
		for i, v := range seeds {
			res.Traces[i*(length+1)] = v
		}
		cur = append(cur, seeds...)
	}
	wk.cur = cur
	for t := 0; t < length; t++ {
		tasks, widx := wk.tasks[:0], wk.widx[:0]
		for i, v := range cur {
			if i%stopEvery == stopEvery-1 && s.stopped() {
				return nil, s.stopErr(fmt.Sprintf("walk step %d", t))
			}
			if v < 0 {
				continue // dead
			}
			if restartProb > 0 {
				r := taskStream(s.seed, key, walkHop(t), uint64(i))
				if r.Unit() < restartProb {
					cur[i] = seeds[i]
					res.Traces[i*(length+1)+t+1] = seeds[i]
					continue
				}
			}
			tasks = append(tasks, v)
			widx = append(widx, int64(i))
		}
		wk.tasks, wk.widx = tasks, widx
		send, owners := s.shuffleMessages(ws, tasks, key, widx)
		recv, err := s.c.AllToAll(ctx, rank, send, mem.NoStream)
		if err != nil {
			return nil, fmt.Errorf("sample: walk step %d shuffle: %w", t, err)
		}
		back, err := s.walkStage(ws, rank, recv, t)
		if err != nil {
			return nil, err
		}
		recv, err = s.c.AllToAll(ctx, rank, back, mem.NoStream)
		if err != nil {
			return nil, fmt.Errorf("sample: walk step %d reshuffle: %w", t, err)
		}
		if !has || len(tasks) == 0 {
			continue
		}
		// Answers per owner: [next_0..next_{k-1}, eid_0..eid_{k-1}].
		sent := ws.sent
		clear(sent)
		if owners == nil {
			sent[0] = int64(len(tasks))
		} else {
			for _, o := range owners {
				sent[o]++
			}
		}
		ans := ws.ans
		for o, b := range recv {
			m, err := messageInt64s(b)
			if err != nil {
				return nil, fmt.Errorf("sample: walk step %d: from rank %d: %w", t, o, err)
			}
			if int64(len(m)) != 2*sent[o] {
				return nil, fmt.Errorf("sample: walk step %d: rank %d answered %d walkers with %d values", t, o, sent[o], len(m))
			}
			ans[o] = answer{nbrs: m[:sent[o]], eids: m[sent[o]:]}
		}
		for k, i := range widx {
			if k%stopEvery == stopEvery-1 && s.stopped() {
				clear(ans)
				return nil, s.stopErr(fmt.Sprintf("walk step %d", t))
			}
			o := 0
			if owners != nil {
				o = int(owners[k])
			}
			a := &ans[o]
			next, e := a.nbrs[a.task], a.eids[a.task]
			a.task++
			if next < -1 || next >= s.g.NumNodes {
				clear(ans)
				return nil, fmt.Errorf("sample: walk step %d: a rank answered node %d, out of range [-1, %d)", t, next, s.g.NumNodes)
			}
			cur[i] = next
			res.Traces[int(i)*(length+1)+t+1] = next
			res.EdgeIDs[int(i)*length+t] = e
		}
		clear(ans)
	}
	return res, nil
}

// walkStage steps every walker rank received (recv[j]: [key, nodes...,
// walker indices...]) and returns the reshuffle messages, in ws.
func (s *call) walkStage(ws *workspace, rank int, recv []mem.Buffer, step int) ([]mem.Buffer, error) {
	lo, hi := s.p.Offsets[rank], s.p.Offsets[rank+1]
	in := ws.in
	total, err := readInboxes(in, recv, layout{fans: true}, fmt.Sprintf("walk step %d", step), "a walk")
	if err != nil {
		return nil, err
	}
	for j := range in {
		for _, v := range in[j].tasks {
			if v < lo || v >= hi {
				return nil, fmt.Errorf("sample: walk step %d: rank %d received node %d from rank %d, outside its patch [%d, %d)", step, rank, v, j, lo, hi)
			}
		}
	}
	back := ws.backSend
	clear(back)
	if total == 0 {
		return back, nil
	}
	outs := ws.outs
	for j := range in {
		k := len(in[j].tasks)
		if k == 0 {
			continue
		}
		out := grow64(outs[j], 2*k)
		outs[j] = out
		back[j] = message(out)
	}
	g := s.g
	par.ForStop(total, sampleGrain, s.rankThreads(), s.stopped, func(_, a, b int) {
		j := 0
		for t := a; t < b; t++ {
			j = inboxOf(in, j, t)
			i := t - in[j].base
			k := len(in[j].tasks)
			v := in[j].tasks[i]
			r := taskStream(s.seed, in[j].key, walkHop(step), uint64(in[j].fans[i]))
			r.Next() // the requester's restart coin
			out := outs[j]
			if p := s.chooseOne(v, &r); p >= 0 {
				out[i] = g.Source(p)
				out[k+i] = g.EdgeID(p)
			} else {
				out[i], out[k+i] = -1, -1
			}
		}
	})
	if s.stopped() {
		return nil, s.stopErr(fmt.Sprintf("walk step %d", step))
	}
	return back, nil
}

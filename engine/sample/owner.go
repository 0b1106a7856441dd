package sample

import (
	"fmt"
	"math"
	"sync"

	"github.com/graphferry/graphferry/engine/graph"
	"github.com/graphferry/graphferry/engine/internal/par"
	"github.com/graphferry/graphferry/engine/mem"
)

// The owner stage: a rank samples the tasks it received in a shuffle, for
// every requester at once, and writes the reshuffle answers (wire.go).

// Chunk sizes of the sample stage's parallel passes (variables so that tests
// can force many chunks on small graphs).
var (
	countGrain  = 8192 // tasks per chunk when counting
	sampleGrain = 512  // tasks per chunk when sampling
)

// sampleStage samples every task rank received (recv[j] from rank j) and
// returns the reshuffle messages (back[j] answers recv[j]), which live in ws.
func (s *call) sampleStage(ws *workspace, rank int, recv []mem.Buffer, hop, fanout int) ([]mem.Buffer, error) {
	lo, hi := s.p.Offsets[rank], s.p.Offsets[rank+1]
	in := ws.in
	total, err := readInboxes(in, recv, s.lay, fmt.Sprintf("hop %d", hop), "a task")
	if err != nil {
		return nil, err
	}
	back := ws.backSend
	clear(back)
	if total == 0 {
		return back, nil
	}

	// Pass 1: how many neighbours each task yields (a function of degree and
	// fanout only), and the range check of the received tasks.
	g := s.g
	counts := grow64(ws.counts, total)
	ws.counts = counts
	// Pass 2 of unfiltered tasks reads each task's neighbour list bounds
	// from here, in order, rather than from Indptr a second time.
	var bases, degs []int64
	if !s.filtered && !s.general {
		bases, degs = grow64(ws.bases, total), grow64(ws.degs, total)
		ws.bases, ws.degs = bases, degs
	}
	// Typed tasks keep their segment bounds from pass 1 to pass 2.
	var bounds []int64
	if s.typed {
		bounds = grow64(ws.bounds, total*s.boundsStride)
		ws.bounds = bounds
	}
	var badMu sync.Mutex
	var bad error
	// Labor counts depend on the variates: see labor.go.
	labor := s.req.Scheme == Labor
	par.ForStop(total, countGrain, s.rankThreads(), s.stopped, func(_, a, b int) {
		if bounds != nil {
			// Typed tasks: every list's bounds first, in a loop whose
			// loads do not wait for each other, then the searches of
			// their edge ids (generalTask), each waiting for one load.
			k := s.boundsStride
			j := 0
			for t := a; t < b; t++ {
				j = inboxOf(in, j, t)
				if v := in[j].tasks[t-in[j].base]; v >= lo && v < hi {
					bounds[t*k], bounds[t*k+k-1] = g.Span(v)
				}
			}
		}
		j := 0
		for t := a; t < b; t++ {
			j = inboxOf(in, j, t)
			v := in[j].tasks[t-in[j].base]
			if v < lo || v >= hi {
				badMu.Lock()
				if bad == nil {
					bad = fmt.Errorf("sample: hop %d: rank %d received node %d from rank %d, outside its patch [%d, %d)", hop, rank, v, j, lo, hi)
				}
				badMu.Unlock()
				return
			}
			base, end := g.Span(v)
			f, deg := fanout, end-base
			if in[j].fans != nil {
				c := in[j].fans[t-in[j].base]
				if c == 0 || c < -1 || c > math.MaxInt32 {
					badMu.Lock()
					if bad == nil {
						bad = fmt.Errorf("sample: hop %d: rank %d received the invalid count %d from rank %d", hop, rank, c, j)
					}
					badMu.Unlock()
					return
				}
				f = int(c)
			}
			if s.general {
				counts[t] = s.generalTask(in[j].gtaskOf(t, fanout), hop, s.taskBounds(bounds, t), nil, nil, nil, nil)
				continue
			}
			if labor {
				counts[t] = s.laborTask(in[j].key, hop, v, f, nil, nil)
				continue
			}
			if s.filtered {
				deg = s.effDegree(v)
			} else {
				bases[t], degs[t] = base, deg
			}
			counts[t] = s.taskCount(deg, f)
		}
	})
	if bad != nil {
		return nil, bad
	}
	if s.stopped() {
		return nil, s.stopErr(fmt.Sprintf("hop %d", hop))
	}

	// Lay out the answers: counts, then neighbours, then edge ids; offs[t]
	// is task t's first slot among its requester's neighbours.
	offs := grow64(ws.offs, total)
	ws.offs = offs
	outs := ws.outs
	for j := range in {
		n := len(in[j].tasks)
		if n == 0 {
			continue
		}
		var m int64
		for i := 0; i < n; i++ {
			offs[in[j].base+i] = m
			m += counts[in[j].base+i]
		}
		out := grow64(outs[j], int(int64(n)+2*m))
		outs[j] = out
		copy(out, counts[in[j].base:in[j].base+n])
		back[j] = message(out)
	}

	// Pass 2: sample. Every slot of the answers is written.
	threads := s.rankThreads()
	if len(ws.scratch) < threads {
		ws.scratch = append(ws.scratch, make([][]uint64, threads-len(ws.scratch))...)
	}
	scratch := ws.scratch
	if (s.filtered || s.general) && len(ws.fscratch) < threads {
		ws.fscratch = append(ws.fscratch, make([]filterScratch, threads-len(ws.fscratch))...)
	}
	fscratch := ws.fscratch
	par.ForStop(total, sampleGrain, threads, s.stopped, func(w, a, b int) {
		if s.general {
			s.generalChunk(in, outs, counts, offs, bounds, a, b, hop, fanout, &fscratch[w], &scratch[w])
			return
		}
		if labor {
			s.laborChunk(in, outs, counts, offs, a, b, hop, fanout)
			return
		}
		if !s.filtered {
			s.sampleChunk(in, outs, counts, offs, bases, degs, a, b, hop, fanout, &scratch[w])
			return
		}
		j := 0
		for t := a; t < b; t++ {
			j = inboxOf(in, j, t)
			c := counts[t]
			if c == 0 {
				continue
			}
			nb, eb := answerSlots(outs[j], len(in[j].tasks), offs[t], c)
			v, f := in[j].task(t, fanout)
			s.sampleFiltered(in[j].key, uint64(hop), v, f, nb, eb, &fscratch[w], &scratch[w])
		}
	})
	if s.stopped() {
		return nil, s.stopErr(fmt.Sprintf("hop %d", hop))
	}
	return back, nil
}

// grow64 returns a slice of length n, reusing s's memory when it is large
// enough (its contents are then stale), never nil.
func grow64(s []int64, n int) []int64 {
	if s == nil || cap(s) < n {
		return make([]int64, n)
	}
	return s[:n]
}

// taskCount is the number of neighbours a task with in-degree deg yields.
func (s *call) taskCount(deg int64, fanout int) int64 {
	switch {
	case fanout < 0:
		return deg
	case s.req.Replace:
		if deg == 0 {
			return 0
		}
		return int64(fanout)
	default:
		return min(deg, int64(fanout))
	}
}

// sampleChunk samples the unfiltered tasks [a, b) of the sample stage (see
// sampleStage for the layout of in, outs, counts and offs) in two passes:
// first every task's edge positions (absolute CSC positions) are drawn into
// its neighbour slots, then one tight loop turns all of the chunk's
// positions into source ids and edge ids. The second loop's loads are
// independent of each other, so the core keeps many cache misses in flight
// (on large graphs nearly every sampled edge is one), where interleaving
// them with the draws would leave the misses to be waited for a few at a
// time.
func (s *call) sampleChunk(in []inbox, outs [][]int64, counts, offs, bases, degs []int64, a, b, hop, fanout int, scratch *[]uint64) {
	g := s.g
	j := 0
	for t := a; t < b; t++ {
		j = inboxOf(in, j, t)
		c := counts[t]
		if c == 0 {
			continue
		}
		nb, _ := answerSlots(outs[j], len(in[j].tasks), offs[t], c)
		v, f := in[j].task(t, fanout)
		base, deg := bases[t], degs[t]
		if f < 0 || (!s.req.Replace && c == deg) {
			for i := range nb {
				nb[i] = base + int64(i)
			}
			continue
		}
		r := taskStream(s.seed, in[j].key, uint64(hop), uint64(s.orig(v)))
		drawPositions(&r, deg, nb, s.req.Replace, scratch)
		for i := range nb {
			nb[i] += base
		}
	}
	// The chunk's neighbour slots form one run per requester.
	j = 0
	for t := a; t < b; {
		j = inboxOf(in, j, t)
		end := min(b, in[j].base+len(in[j].tasks))
		lo := offs[t]
		nb, eb := answerSlots(outs[j], len(in[j].tasks), lo, offs[end-1]+counts[end-1]-lo)
		resolvePositions(g, nb, eb)
		t = end
	}
}

// resolvePositions turns nb, absolute CSC positions, into source ids in
// place and writes the ids of those edges into eb[:len(nb)].
func resolvePositions(g *graph.CSC, nb, eb []int64) {
	eb = eb[:len(nb)]
	if ids := g.EdgeIDs; ids != nil {
		for i, p := range nb {
			eb[i] = ids[p]
		}
	} else {
		copy(eb, nb)
	}
	g.Sources(0, nb, nb)
}

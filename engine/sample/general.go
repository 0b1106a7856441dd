package sample

import (
	"fmt"

	"github.com/graphferry/graphferry/engine/rng"
)

// The general owner path: tasks of typed (RelationFanouts), disjoint and
// temporal requests. A task may carry its own stream key (its subgraph's,
// Disjoint) and cutoff time (Temporal), and samples either its whole list
// or, per relation into its node's type, that relation's segment of the
// list with the relation's fan-out and stream. Each segment is sampled as
// a filtered task samples a list (sampleSegment, laborSegment), and the
// task's answer is its segments' samples in relation order. Requests
// without these options never come here: the homogeneous paths
// (sampleChunk, sampleFiltered, laborTask) are unchanged.

// resolveGeneral checks the typed, disjoint and temporal fields of c's
// request against the runtime and sets c's flags and message layout.
func (c *call) resolveGeneral(what string) error {
	req := c.req
	c.lay = layout{fans: req.Scheme == LayerWise}
	if req.RelationFanouts != nil {
		if c.types == nil {
			return fmt.Errorf("sample: %s.RelationFanouts needs a typed graph (RuntimeOptions.Types), but the graph is untyped", what)
		}
		if nr := c.types.NumRelations(); len(req.RelationFanouts[0]) != nr {
			return fmt.Errorf("sample: %s.RelationFanouts has %d fan-outs per hop, but the graph has %d relations", what, len(req.RelationFanouts[0]), nr)
		}
		c.typed = true
	}
	switch req.Temporal {
	case TemporalNode:
		if c.nodeTime == nil {
			return fmt.Errorf("sample: %s.Temporal = TemporalNode needs node times (RuntimeOptions.NodeTime)", what)
		}
	case TemporalEdge:
		if c.edgeTime == nil {
			return fmt.Errorf("sample: %s.Temporal = TemporalEdge needs edge times (RuntimeOptions.EdgeTime)", what)
		}
	}
	c.disjoint = req.Disjoint
	c.temporal = req.Temporal != TemporalNone
	c.general = c.typed || c.disjoint || c.temporal
	c.lay.subs, c.lay.cuts = c.disjoint, c.temporal
	return nil
}

// subKey is the stream key of subgraph sub (the position of its seed) of
// the batch with key key (Disjoint).
func subKey(key uint64, sub int64) uint64 {
	return rng.Mix(key ^ rng.Mix(uint64(sub)+0x510e527fade682d1))
}

// relState is the stream state of relation rel of the task whose stream
// state is st: every relation draws from a stream of its own.
func relState(st uint64, rel int) uint64 {
	return rng.Mix(st ^ ((uint64(rel) + 1) * 0x9b05688c2b3e6c1f))
}

// gtask is one task of the general path.
type gtask struct {
	v   int64  // internal id
	f   int    // the hop's fan-out
	key uint64 // stream key: the batch's, or its subgraph's (Disjoint)
	cut int64  // cutoff time (Temporal)
}

// gtaskOf returns task t of ib (t indexes the flattened task list).
func (ib *inbox) gtaskOf(t, fanout int) gtask {
	i := t - ib.base
	g := gtask{v: ib.tasks[i], f: fanout, key: ib.key}
	if ib.fans != nil {
		g.f = int(ib.fans[i])
	}
	if ib.subs != nil {
		g.key = subKey(ib.key, ib.subs[i])
	}
	if ib.cuts != nil {
		g.cut = ib.cuts[i]
	}
	return g
}

// generalTask samples task g of hop hop: with nb == nil it only returns
// the number of neighbours the task yields; otherwise it also writes them
// to nb and their edge ids to eb (both that long) — for Labor; the other
// schemes write CSC positions to nb, which generalChunk resolves. sc and scratch are the
// thread's memory (unused when counting). For typed requests, bounds
// (boundsStride entries) holds the task's segment bounds: the counting
// pass (nb == nil) finds them from the list's bounds, which it finds in
// bounds[0] and bounds[boundsStride-1], and writes them; the sampling pass
// reads them, so that the edge ids of the task's list are searched once.
func (s *call) generalTask(g gtask, hop int, bounds, nb, eb []int64, sc *filterScratch, scratch *[]uint64) int64 {
	gr := s.g
	if !s.typed {
		lo, hi := gr.Span(g.v)
		return s.segmentTask(g, hop, lo, hi, g.f, -1, nb, eb, sc, scratch)
	}
	rels := s.relsByDst[s.types.NodeType(s.orig(g.v))]
	if nb == nil {
		s.types.Ends(gr, bounds[0], bounds[len(bounds)-1], rels, bounds[1:])
	}
	row := s.req.RelationFanouts[hop]
	var n int64
	for i, r := range rels {
		// Only relations into v's type occur in v's list (Types.Validate),
		// in order: their segments partition it.
		f, lo, hi := row[r], bounds[i], bounds[i+1]
		if f == 0 || lo == hi {
			continue
		}
		var nbr, ebr []int64
		if nb != nil {
			nbr, ebr = nb[n:], eb[n:]
		}
		n += s.segmentTask(g, hop, lo, hi, f, int(r), nbr, ebr, sc, scratch)
	}
	return n
}

// segmentTask samples the positions [lo, hi) for task g with fan-out f;
// rel is the segment's relation (-1: the whole list of an untyped
// request). See generalTask for nb and eb.
func (s *call) segmentTask(g gtask, hop int, lo, hi int64, f, rel int, nb, eb []int64, sc *filterScratch, scratch *[]uint64) int64 {
	if s.req.Scheme == Labor {
		// The variates depend on the neighbour, not on the relation: a
		// node reached through two relations compares the same r_t.
		return s.laborSegment(laborPrefix(s.seed, g.key, s.laborHop(hop)), lo, hi, f, g.cut, nb, eb)
	}
	if nb == nil {
		return s.taskCount(s.candidatesIn(lo, hi, g.cut), f)
	}
	st := streamState(s.seed, g.key, uint64(hop), uint64(s.orig(g.v)))
	if rel >= 0 {
		st = relState(st, rel)
	}
	return s.sampleSegment(st, lo, hi, f, g.cut, nb, eb, false, sc, scratch)
}

// taskBounds returns task t's bounds in bounds (nil for untyped requests).
func (s *call) taskBounds(bounds []int64, t int) []int64 {
	if bounds == nil {
		return nil
	}
	k := s.boundsStride
	return bounds[t*k : (t+1)*k]
}

// generalChunk samples the tasks [a, b) of the general path (see
// sampleStage for the layout of in, outs, counts and offs) and, unless
// Labor already wrote ids, resolves the chunk's positions in one tight
// loop per requester, as sampleChunk does.
func (s *call) generalChunk(in []inbox, outs [][]int64, counts, offs, bounds []int64, a, b, hop, fanout int, sc *filterScratch, scratch *[]uint64) {
	j := 0
	for t := a; t < b; t++ {
		j = inboxOf(in, j, t)
		c := counts[t]
		if c == 0 {
			continue
		}
		nb, eb := answerSlots(outs[j], len(in[j].tasks), offs[t], c)
		s.generalTask(in[j].gtaskOf(t, fanout), hop, s.taskBounds(bounds, t), nb, eb, sc, scratch)
	}
	if s.req.Scheme == Labor {
		return
	}
	j = 0
	for t := a; t < b; {
		j = inboxOf(in, j, t)
		end := min(b, in[j].base+len(in[j].tasks))
		lo := offs[t]
		nb, eb := answerSlots(outs[j], len(in[j].tasks), lo, offs[end-1]+counts[end-1]-lo)
		resolvePositions(s.g, nb, eb)
		t = end
	}
}
